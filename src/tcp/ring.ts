import { allocBytes } from '../wire/bytes.js';

/**
 * A byte ring of fixed capacity: appended at the tail, consumed from the
 * head, readable at any offset in between. The send buffer (bytes written and
 * not yet acknowledged) and the receive buffer (bytes in order, not yet read)
 * are both one.
 */
export class ByteRing {
  private readonly buf: Uint8Array;
  private head = 0;
  private len = 0;

  constructor(readonly capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  get length(): number {
    return this.len;
  }

  get free(): number {
    return this.capacity - this.len;
  }

  /** Appends as much of `data` as fits; returns how much did. */
  push(data: Uint8Array): number {
    const n = Math.min(data.length, this.free);
    let tail = (this.head + this.len) % this.capacity;
    if (n === data.length && n <= this.capacity - tail) {
      // All of it in one run: copied without a view of it.
      this.buf.set(data, tail);
      this.len += n;
      return n;
    }
    let done = 0;
    while (done < n) {
      const run = Math.min(n - done, this.capacity - tail);
      this.buf.set(data.subarray(done, done + run), tail);
      done += run;
      tail = (tail + run) % this.capacity;
    }
    this.len += n;
    return n;
  }

  /** Copies `n` bytes starting `offset` bytes after the head. */
  peek(offset: number, n: number): Uint8Array {
    const out = allocBytes(n);
    let from = (this.head + offset) % this.capacity;
    let done = 0;
    while (done < n) {
      const run = Math.min(n - done, this.capacity - from);
      out.set(this.buf.subarray(from, from + run), done);
      done += run;
      from = (from + run) % this.capacity;
    }
    return out;
  }

  /**
   * `n` bytes starting `offset` bytes after the head, as `peek` gives them,
   * but when they lie in one run as a view into the ring, with nothing
   * allocated or copied (when they wrap, a copy). The view shows what the
   * ring holds there: it stays right until those bytes are consumed and the
   * space is written again. For a caller that uses the bytes at once.
   */
  view(offset: number, n: number): Uint8Array {
    const from = (this.head + offset) % this.capacity;
    if (from + n <= this.capacity) return this.buf.subarray(from, from + n);
    return this.peek(offset, n);
  }

  /** Drops `n` bytes from the head. */
  consume(n: number): void {
    const k = Math.min(n, this.len);
    this.head = (this.head + k) % this.capacity;
    this.len -= k;
  }
}
