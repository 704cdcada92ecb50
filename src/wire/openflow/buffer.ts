import { RangeArgumentError } from '../../core/errors.js';
import { get16, get32, put16, put32, u16, u32, u8 } from '../bytes.js';
import { OfParseError, type OfErrorAnswer } from './errors.js';

/**
 * The codec's cursor over bytes being read and its growing buffer for bytes
 * being written. Internal to `src/wire/openflow/`.
 *
 * A `Reader` covers [pos, end) of one structure and knows which ERROR a
 * length problem inside that structure calls for: reading past `end` is
 * OF_BAD_LENGTH with that answer, a non-zero padding byte OF_BAD_PADDING.
 * Parsers throw OfParseError from deep inside; `parseOf` is the one place
 * that catches it and returns it as a value.
 */

const U64_MAX = (1n << 64n) - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

export function get64(b: Uint8Array, o: number): bigint {
  return (BigInt(get32(b, o)) << 32n) | BigInt(get32(b, o + 4));
}

export function put64(b: Uint8Array, o: number, v: bigint): void {
  put32(b, o, Number(v >> 32n));
  put32(b, o + 4, Number(v & 0xffffffffn));
}

export const roundUp8 = (n: number): number => (n + 7) & ~7;

export function fail(code: OfParseError['code'], what: string, message: string, answer: OfErrorAnswer): never {
  throw new OfParseError(code, what, message, answer);
}

export class Reader {
  constructor(
    readonly b: Uint8Array,
    public pos: number,
    readonly end: number,
    /** The structure read, for messages: 'FLOW_MOD', 'match', ... */
    readonly what: string,
    /** The ERROR a length problem in this structure is answered with. */
    readonly lenAnswer: OfErrorAnswer,
  ) {}

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Throws OF_BAD_LENGTH unless `n` more bytes are there. */
  need(n: number, why = ''): void {
    if (this.pos + n > this.end) {
      const tail = why === '' ? '' : ` for ${why}`;
      fail('OF_BAD_LENGTH', this.what, `${this.what}: ${this.remaining} bytes left at offset ${this.pos}, needs ${n}${tail}`, this.lenAnswer);
    }
  }

  u8(): number {
    this.need(1);
    return this.b[this.pos++]!;
  }

  u16(): number {
    this.need(2);
    const v = get16(this.b, this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = get32(this.b, this.pos);
    this.pos += 4;
    return v;
  }

  u64(): bigint {
    this.need(8);
    const v = get64(this.b, this.pos);
    this.pos += 8;
    return v;
  }

  /** The next `n` bytes as a view (no copy). */
  view(n: number): Uint8Array {
    this.need(n);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** The next `n` bytes as a copy. */
  copy(n: number): Uint8Array {
    return this.view(n).slice();
  }

  /** The rest of the structure as a view. */
  rest(): Uint8Array {
    return this.view(this.remaining);
  }

  /** Skips `n` padding bytes; any non-zero is OF_BAD_PADDING. */
  pad(n: number, answer: OfErrorAnswer = this.lenAnswer): void {
    this.need(n, 'padding');
    for (let i = 0; i < n; i++) {
      if (this.b[this.pos + i] !== 0) {
        fail(
          'OF_BAD_PADDING',
          this.what,
          `${this.what}: padding byte at offset ${this.pos + i} is 0x${this.b[this.pos + i]!.toString(16).padStart(2, '0')}, must be 0`,
          answer,
        );
      }
    }
    this.pos += n;
  }

  /** A reader over the next `n` bytes (a nested structure), which this one skips. */
  sub(n: number, what: string, lenAnswer: OfErrorAnswer): Reader {
    this.need(n, what);
    const r = new Reader(this.b, this.pos, this.pos + n, what, lenAnswer);
    this.pos += n;
    return r;
  }

  /** Throws OF_BAD_LENGTH if any bytes are left. */
  done(): void {
    if (this.pos !== this.end) {
      fail('OF_BAD_LENGTH', this.what, `${this.what}: ${this.end - this.pos} bytes left over at offset ${this.pos}`, this.lenAnswer);
    }
  }

  /**
   * A NUL-terminated string in a fixed field of `width` bytes: UTF-8 up to the
   * first NUL, zeros after it. No NUL, or bytes that are not UTF-8, is
   * OF_BAD_FIELD with `answer`; a non-zero byte after the NUL, OF_BAD_PADDING.
   */
  fixedString(width: number, field: string, answer: OfErrorAnswer): string {
    const bytes = this.view(width);
    const nul = bytes.indexOf(0);
    if (nul < 0) fail('OF_BAD_FIELD', this.what, `${this.what} ${field}: no NUL in its ${width} bytes`, answer);
    for (let i = nul + 1; i < width; i++) {
      if (bytes[i] !== 0) {
        fail('OF_BAD_PADDING', this.what, `${this.what} ${field}: byte ${i} after the NUL is not 0`, answer);
      }
    }
    try {
      return utf8.decode(bytes.subarray(0, nul));
    } catch {
      return fail('OF_BAD_FIELD', this.what, `${this.what} ${field}: not UTF-8`, answer);
    }
  }
}

/** Growing output buffer. Every write checks its value's range and names the field when it throws RangeArgumentError. */
export class Writer {
  private b = new Uint8Array(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.b.length) return;
    let size = this.b.length * 2;
    while (size < this.length + n) size *= 2;
    const nb = new Uint8Array(size);
    nb.set(this.b.subarray(0, this.length));
    this.b = nb;
  }

  u8(v: number, field: string): void {
    u8(field, v);
    this.room(1);
    this.b[this.length++] = v;
  }

  u16(v: number, field: string): void {
    u16(field, v);
    this.room(2);
    put16(this.b, this.length, v);
    this.length += 2;
  }

  u32(v: number, field: string): void {
    u32(field, v);
    this.room(4);
    put32(this.b, this.length, v);
    this.length += 4;
  }

  u64(v: bigint, field: string): void {
    if (typeof v !== 'bigint' || v < 0n || v > U64_MAX) {
      throw new RangeArgumentError(field, typeof v === 'bigint' ? v.toString() : v, 'a bigint in [0, 2^64 - 1]');
    }
    this.room(8);
    put64(this.b, this.length, v);
    this.length += 8;
  }

  bytes(v: Uint8Array, field: string): void {
    if (!(v instanceof Uint8Array)) throw new RangeArgumentError(field, v, 'a Uint8Array');
    this.room(v.length);
    this.b.set(v, this.length);
    this.length += v.length;
  }

  /** Exactly `n` bytes of `v` (a MAC address: 6). */
  fixedBytes(v: Uint8Array, n: number, field: string): void {
    if (!(v instanceof Uint8Array) || v.length !== n) {
      throw new RangeArgumentError(field, v instanceof Uint8Array ? `${v.length} bytes` : v, `a Uint8Array of ${n} bytes`);
    }
    this.bytes(v, field);
  }

  zeros(n: number): void {
    this.room(n);
    this.b.fill(0, this.length, this.length + n);
    this.length += n;
  }

  /** Zeros up to the next multiple of 8 counted from `start`. */
  padTo8(start: number): void {
    this.zeros(roundUp8(this.length - start) - (this.length - start));
  }

  /** Overwrites the u16 at `at` (a length field written before its structure). */
  set16(at: number, v: number, field: string): void {
    u16(field, v);
    put16(this.b, at, v);
  }

  /** `s` as UTF-8 in a field of `width` bytes, NUL-terminated and zero-filled. */
  fixedString(s: string, width: number, field: string): void {
    if (typeof s !== 'string') throw new RangeArgumentError(field, s, 'a string');
    const bytes = utf8Encoder.encode(s);
    if (bytes.length > width - 1 || bytes.includes(0)) {
      throw new RangeArgumentError(field, s, `a string of at most ${width - 1} UTF-8 bytes without NUL`);
    }
    this.room(width);
    this.b.set(bytes, this.length);
    this.b.fill(0, this.length + bytes.length, this.length + width);
    this.length += width;
  }

  finish(): Uint8Array {
    return this.b.slice(0, this.length);
  }
}
