import { RangeArgumentError } from '../core/errors.js';

/**
 * Big-endian field access for the codecs. Direct byte access rather than a
 * DataView: reading `.buffer` of a small typed array makes V8 move its bytes
 * off the heap, which costs more than a whole encode. Callers check lengths.
 */

export function put16(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 8;
  b[o + 1] = v;
}

export function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

export function get16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

export function get32(b: Uint8Array, o: number): number {
  return b[o]! * 0x1000000 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!);
}

export function isUint(v: number, max: number): boolean {
  return Number.isInteger(v) && v >= 0 && v <= max;
}

/** Encode-side range checks: a field that does not fit is a caller's error, named. */
export function u8(field: string, v: number): void {
  if (!isUint(v, 0xff)) throw new RangeArgumentError(field, v, 'an integer in [0, 255]');
}

export function u16(field: string, v: number): void {
  if (!isUint(v, 0xffff)) throw new RangeArgumentError(field, v, 'an integer in [0, 65535]');
}

export function u32(field: string, v: number): void {
  if (!isUint(v, 0xffffffff)) throw new RangeArgumentError(field, v, 'an integer in [0, 4294967295]');
}
