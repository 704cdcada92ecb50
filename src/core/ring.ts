/**
 * A byte ring in a SharedArrayBuffer between two threads: one producer, one
 * consumer, records of any length, in order, none lost or cut, and a full
 * ring makes the producer wait (backpressure) instead of dropping.
 *
 * Layout of the buffer (byte offsets; all words are Int32, little-endian as
 * the platform's typed arrays are):
 *
 *     0   HEAD          bytes ever written, mod 2^32 (only the producer stores it)
 *     32  HEAD_WAITERS  threads waiting for HEAD to move (the consumer's, at most one)
 *     64  TAIL          bytes ever read, mod 2^32 (only the consumer stores it)
 *     96  TAIL_WAITERS  threads waiting for TAIL to move (the producer's, at most one)
 *     128 data          `capacity` bytes, a power of two, at least 64
 *
 * HEAD and TAIL sit on separate cache lines so that the two threads do not
 * write the same line (a waiter count is written only around a wait). Both count bytes and run freely, wrapping at 2^32:
 * the bytes waiting are `HEAD - TAIL` (mod 2^32), a position in the data is
 * the count mod `capacity`.
 *
 * A record is one or more fragments. A fragment is an 8-byte header, its
 * payload, and padding to a multiple of 8 bytes; the header's first word
 * holds the payload's length in bits 0-30 and, in bit 31, "more fragments
 * of this record follow" (its second word is 0). Every fragment starts
 * 8-byte aligned, so a header never straddles the end of the data; a
 * payload may, and is copied in two parts. Payloads are copied eight bytes
 * at a time where both ends are 8-byte aligned (V8 copies a shared buffer's
 * bytes one element at a time: Float64Array's `set`, which keeps every bit,
 * is several times faster than Uint8Array's).
 * A record of up to `maxFragment` bytes (half the ring, less a header) is
 * one fragment, written only once there is room for all of it; a longer one
 * is cut into fragments of `maxFragment` bytes, each written when there is
 * room, and the consumer puts it together again. So a record of any length
 * gets through, however small the ring.
 *
 * Data is written with plain stores before HEAD is published with
 * `Atomics.store` (and read after `Atomics.load` of HEAD), so the consumer
 * never sees a fragment before its bytes; likewise TAIL hands space back.
 * A publication is followed by `Atomics.notify` on its word when a thread
 * waits on it, so a thread asleep in `Atomics.wait` (a worker) or
 * `Atomics.waitAsync` (the main thread) on HEAD (for data) or TAIL (for
 * space) wakes up. A waiter counts itself in its word's waiter count before
 * it waits (and out after), and the publisher reads that count after it
 * stores the word: both are sequentially consistent atomics, so either the
 * publisher sees the waiter, or the waiter's wait sees the word moved and
 * does not sleep. A notify costs a lock shared by every thread of the
 * process, a system call to wake a sleeping thread (and a task for the main
 * thread's `waitAsync`); with both sides spinning, nobody waits and none is
 * made. A producer that writes records in a burst may also store HEAD
 * without the notify (`write(…, false)`) and call `notify()` once after the
 * burst, before it waits itself: the same check, made later, is as sound.
 */

import { performance } from 'node:perf_hooks';

/** `Atomics.waitAsync`, which Node 20 has and the ES2023 library this project compiles against does not declare. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync: (a: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

/** A gap this long between two looks at the clock while spinning: the thread was descheduled, no core is to spare. */
const DESCHEDULED_MS = 0.2;
/** At most this many waits in a row skip spinning after spins went to waste. */
const MAX_SKIP = 64;

/** What the consumer cuts records from. */
const SLAB_BYTES = 64 * 1024;

const HEAD = 0;
const HEAD_WAITERS = 8;
const TAIL = 16;
const TAIL_WAITERS = 24;
const DATA_OFFSET = 128;
const MORE = 0x8000_0000;
const LENGTH_MASK = 0x7fff_ffff;

/** A ring's shared memory: hand the same buffer to `RingProducer` on one side and `RingConsumer` on the other. */
export function createRing(capacity: number, origin = 0): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 64 || capacity > 2 ** 30 || (capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`ring: capacity ${capacity} is not a power of two in [64, 2^30]`);
  }
  const sab = new SharedArrayBuffer(DATA_OFFSET + capacity);
  // Where the counts start (only tests choose: the counts' own wrap at 2^32); 8-byte aligned like every fragment.
  const start = (origin & ~7) | 0;
  const words = new Int32Array(sab, 0, DATA_OFFSET / 4);
  words[HEAD] = start;
  words[TAIL] = start;
  return sab;
}

const pad8 = (n: number): number => (n + 7) & ~7;

/** The word that counts the threads waiting on `word` (HEAD or TAIL). */
const waitersOf = (word: number): number => (word === HEAD ? HEAD_WAITERS : TAIL_WAITERS);

/**
 * Copies `n` bytes of `src` from `srcAt` to `dst` at `dstAt`, eight at a
 * time where it can. Short copies go byte by byte: they are cheap, and
 * asking a small array for its buffer makes V8 move it off the heap.
 */
function copy(dst: Uint8Array, dstAt: number, src: Uint8Array, srcAt: number, n: number): void {
  const a = dst.byteOffset + dstAt;
  const b = src.byteOffset + srcAt;
  if (n >= 128 && ((a | b) & 7) === 0) {
    const words = n >>> 3;
    new Float64Array(dst.buffer, a, words).set(new Float64Array(src.buffer, b, words));
    const done = words << 3;
    if (done < n) dst.set(src.subarray(srcAt + done, srcAt + n), dstAt + done);
  } else dst.set(src.subarray(srcAt, srcAt + n), dstAt);
}

class RingSide {
  protected readonly words: Int32Array;
  protected readonly data: Uint8Array;
  /** The data as 32-bit words, for fragment headers. */
  protected readonly headers: Uint32Array;
  readonly capacity: number;
  protected readonly mask: number;

  constructor(sab: SharedArrayBuffer) {
    this.capacity = sab.byteLength - DATA_OFFSET;
    if (this.capacity < 64 || (this.capacity & (this.capacity - 1)) !== 0) throw new RangeError('ring: not a ring buffer (see createRing)');
    this.words = new Int32Array(sab, 0, DATA_OFFSET / 4);
    this.data = new Uint8Array(sab, DATA_OFFSET, this.capacity);
    this.headers = new Uint32Array(sab, DATA_OFFSET, this.capacity / 4);
    this.mask = this.capacity - 1;
  }

  /** The longest payload written as one fragment. */
  get maxFragment(): number {
    return this.capacity / 2 - 8;
  }

  /** Bytes waiting in the ring (headers and padding included). */
  used(): number {
    return (Atomics.load(this.words, HEAD) - Atomics.load(this.words, TAIL)) >>> 0;
  }

  /** Moves this side's word (HEAD for the producer, TAIL for the consumer) and, if `wake`, wakes whoever waits on it. */
  protected publish(word: number, value: number, wake = true): void {
    Atomics.store(this.words, word, value);
    if (wake) this.wake(word);
  }

  /** Wakes whoever waits on `word`, if anyone does. */
  protected wake(word: number): void {
    if (Atomics.load(this.words, waitersOf(word)) !== 0) Atomics.notify(this.words, word);
  }

  /** Blocks (a worker thread only) while `word` still holds `seen`, at most `timeoutMs`. */
  protected block(word: number, seen: number, timeoutMs: number): void {
    const waiters = waitersOf(word);
    Atomics.add(this.words, waiters, 1);
    try {
      Atomics.wait(this.words, word, seen, timeoutMs);
    } finally {
      Atomics.sub(this.words, waiters, 1);
    }
  }

  /** Resolves once `word` no longer holds `seen` (at once if it already does not). */
  protected moved(word: number, seen: number): Promise<unknown> {
    const waiters = waitersOf(word);
    Atomics.add(this.words, waiters, 1);
    const r = waitAsync(this.words, word, seen);
    if (!r.async) {
      Atomics.sub(this.words, waiters, 1);
      return Promise.resolve(r.value);
    }
    return r.value.finally(() => Atomics.sub(this.words, waiters, 1));
  }

  /** Wakes whoever waits on this ring (on either word), so that nothing is left waiting on a ring no longer in use. */
  wakeAll(): void {
    Atomics.notify(this.words, HEAD);
    Atomics.notify(this.words, TAIL);
  }
}

/** The writing end. One thread only. */
export class RingProducer extends RingSide {
  /** TAIL as last seen, for `waitForSpace`. */
  private seenTail: number;
  private head: number;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.head = Atomics.load(this.words, HEAD);
    this.seenTail = Atomics.load(this.words, TAIL);
  }

  /**
   * Writes as much of `payload`, from byte `from`, as there is room for,
   * in whole fragments, and wakes the consumer (unless `wake` is false:
   * then `notify()` must follow, before this side waits or stops writing
   * for a while). Returns where the rest
   * starts: `payload.length` once the record is all written. Call it again
   * with that offset (after `waitForSpace`) to go on; nothing else may be
   * written meanwhile. An empty payload is refused (it would have no rest to
   * tell done from not).
   */
  write(payload: Uint8Array, from = 0, wake = true): number {
    if (payload.length === 0) throw new RangeError('ring: an empty record');
    const max = this.maxFragment;
    let off = from;
    let head = this.head;
    this.seenTail = Atomics.load(this.words, TAIL);
    let free = this.capacity - ((head - this.seenTail) >>> 0);
    while (off < payload.length) {
      const n = Math.min(payload.length - off, max);
      const size = 8 + pad8(n);
      if (size > free) break;
      const at = head & this.mask;
      this.headers[at >>> 2] = (n | (off + n < payload.length ? MORE : 0)) >>> 0;
      this.headers[(at >>> 2) + 1] = 0;
      const body = (at + 8) & this.mask;
      const first = Math.min(n, this.capacity - body);
      copy(this.data, body, payload, off, first);
      if (first < n) copy(this.data, 0, payload, off + first, n - first);
      head = (head + size) | 0;
      free -= size;
      off += n;
    }
    if (off !== from) {
      this.head = head;
      this.publish(HEAD, head, wake);
    }
    return off;
  }

  /** Wakes the consumer if it waits for data (after writes made with `wake` false). */
  notify(): void {
    this.wake(HEAD);
  }

  /** Blocks (a worker thread only) until the consumer frees space, or `timeoutMs` passes. */
  waitForSpace(timeoutMs = Infinity): void {
    this.block(TAIL, this.seenTail, timeoutMs);
  }

  /** Resolves once the consumer freed space since the last `write` (at once if it already has). */
  waitForSpaceAsync(): Promise<unknown> {
    return this.moved(TAIL, this.seenTail);
  }
}

/** The reading end. One thread only. */
export class RingConsumer extends RingSide {
  /** HEAD as last seen, for the waits. */
  private seenHead: number;
  private tail: number;
  /** A record whose first fragments have come, and how much of it. */
  private partial: Uint8Array | undefined;
  private partialLength = 0;
  private slab = new Uint8Array(SLAB_BYTES);
  private slabUsed = 0;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.tail = Atomics.load(this.words, TAIL);
    this.seenHead = Atomics.load(this.words, HEAD);
  }

  /** True when a fragment waits (a record may still be incomplete). */
  readable(): boolean {
    return Atomics.load(this.words, HEAD) !== this.tail;
  }

  /**
   * The next whole record (a copy no one else writes), or undefined when there is none
   * yet. The fragments of a record that has not all come are taken in and
   * kept (their space goes back to the producer) until its last one comes.
   */
  read(): Uint8Array | undefined {
    this.seenHead = Atomics.load(this.words, HEAD);
    let tail = this.tail;
    let out: Uint8Array | undefined;
    while (out === undefined && tail !== this.seenHead) {
      const at = tail & this.mask;
      const header = this.headers[at >>> 2]!;
      const n = header & LENGTH_MASK;
      const more = (header & MORE) !== 0;
      const body = (at + 8) & this.mask;
      let dst: Uint8Array;
      let dstAt: number;
      if (!more && this.partial === undefined) {
        out = dst = this.allocate(n);
        dstAt = 0;
      } else {
        this.reserve(this.partialLength + n);
        dst = this.partial!;
        dstAt = this.partialLength;
        this.partialLength += n;
      }
      const first = Math.min(n, this.capacity - body);
      copy(dst, dstAt, this.data, body, first);
      if (first < n) copy(dst, dstAt + first, this.data, 0, n - first);
      tail = (tail + 8 + pad8(n)) | 0;
      if (!more && out === undefined) {
        out = this.partial!.slice(0, this.partialLength);
        this.partial = undefined;
        this.partialLength = 0;
      }
    }
    if (tail !== this.tail) {
      this.tail = tail;
      this.publish(TAIL, tail);
    }
    return out;
  }

  /** Blocks (a worker thread only) until data comes after what the last `read` saw, or `timeoutMs` passes. */
  waitForData(timeoutMs = Infinity): void {
    this.block(HEAD, this.seenHead, timeoutMs);
  }

  /** Resolves once data came after what the last `read` saw (at once if it already has). */
  waitForDataAsync(): Promise<unknown> {
    return this.moved(HEAD, this.seenHead);
  }

  /**
   * A record's own bytes, cut from a slab shared with the records read
   * before and after it (a fresh buffer each costs more than the copy),
   * 8-byte aligned; a long one gets a buffer of its own. A slab lives until
   * no record cut from it is left.
   */
  private allocate(n: number): Uint8Array {
    if (n > SLAB_BYTES / 4) return new Uint8Array(n);
    if (this.slabUsed + n > SLAB_BYTES) {
      this.slab = new Uint8Array(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const out = this.slab.subarray(this.slabUsed, this.slabUsed + n);
    this.slabUsed += pad8(n);
    return out;
  }

  private reserve(n: number): void {
    if (this.partial === undefined) this.partial = new Uint8Array(Math.max(n, this.capacity));
    else if (this.partial.length < n) {
      const grown = new Uint8Array(Math.max(n, this.partial.length * 2));
      grown.set(this.partial.subarray(0, this.partialLength));
      this.partial = grown;
    }
  }
}

/**
 * Spinning before a blocking wait, kept to where it pays. Spinning saves the
 * wake-up of a sleeping thread (tens of µs) when the other side answers
 * within the budget and has a core of its own to do it on. A spin that runs
 * out of budget, or that finds its thread was descheduled meanwhile (a
 * machine with no core to spare, where a spinning thread only takes CPU from
 * the one it waits for), makes the next waits skip spinning: 1, then 2, 4,
 * up to 64 in a row while spins keep going to waste; one that ends with what
 * it waited for spins fully next time.
 */
export class SpinPolicy {
  private skip = 0;
  private backoff = 0;

  constructor(readonly budgetUs: number) {}

  /** Spins until `ready()` or the budget is spent (or spinning is skipped this time); returns `ready()`. */
  spin(ready: () => boolean): boolean {
    if (ready()) return true;
    if (this.budgetUs <= 0) return false;
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    const start = performance.now();
    const end = start + this.budgetUs / 1000;
    let last = start;
    for (;;) {
      if (ready()) {
        this.backoff = 0;
        return true;
      }
      const now = performance.now();
      if (now >= end || now - last >= DESCHEDULED_MS) break;
      last = now;
    }
    this.backoff = Math.min(this.backoff * 2 || 1, MAX_SKIP);
    this.skip = this.backoff;
    return ready();
  }
}
