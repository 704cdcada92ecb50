import { RangeArgumentError } from '../core/errors.js';

/**
 * Big-endian field access for the codecs. Direct byte access rather than a
 * DataView: reading `.buffer` of a small typed array makes V8 move its bytes
 * off the heap, which costs more than a whole encode. Callers check lengths.
 */

/**
 * Small per-packet arrays come from shared slabs, as Node's Buffer pool does:
 * a typed array with a backing store of its own costs a call into the runtime
 * (1-2 us, and external memory the GC tracks), several times the copy that
 * fills it. Larger ones get their own store.
 *
 * The smallest ones too: V8 keeps the bytes of a typed array of up to 64
 * bytes in the object itself, but the first `subarray` or `.buffer` of such
 * an array moves them into a backing store of their own, that same runtime
 * call. A packet's bytes are viewed that way as it goes (its payload past a
 * header), so a TCP ACK made on the heap paid it at every router it entered
 * (about a third of the time of the router's `originate`, and more work for
 * the collector); a view of a slab is a plain object from the start.
 */
const SLAB_BYTES = 64 * 1024;
const POOLED_MAX_BYTES = 4096;
let slab = new ArrayBuffer(SLAB_BYTES);
let slabUsed = 0;

/**
 * A new zero-filled array of `n` bytes, and `room` more in front of it (zero
 * as well, not part of the array) that belong to it: a layer below can
 * write its header there (`withFront`). It may share its ArrayBuffer with
 * other arrays from this function: read and write it through itself (its
 * `byteOffset` and `byteLength` when making another view), never through its
 * whole `.buffer`, and never transfer that buffer. Each part of a slab is
 * handed out once, so nothing written to one array shows in another.
 */
export function allocBytes(n: number, room = 0): Uint8Array {
  const whole = room + n;
  if (whole > POOLED_MAX_BYTES) return room === 0 ? new Uint8Array(n) : new Uint8Array(whole).subarray(room);
  if (slabUsed + whole > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const b = new Uint8Array(slab, slabUsed + room, n);
  // Each whole (room and array) starts 8-byte aligned: an array without room does, so a Float64Array over its bytes stays possible.
  slabUsed += (whole + 7) & ~7;
  return b;
}

/**
 * The `n` bytes in front of `b` and `b` itself, as one view: for a header
 * written in front of a packet without copying it. Only where those bytes
 * are `b`'s own: `b` came from `allocBytes(len, room)` with `room >= n`, and
 * its owner gave it up.
 */
export function withFront(b: Uint8Array, n: number): Uint8Array {
  return new Uint8Array(bufferOf.call(b), byteOffsetOf.call(b) - n, n + b.length);
}

/**
 * A typed array's `buffer` and `byteOffset` getters, called as functions:
 * V8 (Node 20) reads `b.buffer` or `b.byteOffset` of a Uint8Array with a
 * generic property lookup, a call into its inline-cache code, where a call
 * of the getter itself compiles to a field load (about 36 against 26 ns for
 * `withFront`, on every segment a router sends).
 */
const TYPED_ARRAY_PROTO = Object.getPrototypeOf(Uint8Array.prototype) as object;
const bufferOf = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTO, 'buffer')!.get as (this: Uint8Array) => ArrayBufferLike;
const byteOffsetOf = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTO, 'byteOffset')!.get as (this: Uint8Array) => number;

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

/** Whether two byte arrays hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
