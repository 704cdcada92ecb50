import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import { HEADER_BYTES, Off, ProducerState, readConstants, SAMPLE_BYTES, TuneStatus, type RingConstants, type SampleFormat } from './layout.js';
import { openRingMemory, type MapOptions, type RingAccess, type RingMemory, type WordAccess } from './memory.js';

export interface SampleRingOptions extends MapOptions {
  /** Where reading starts: at the newest sample (`latest`, default) or the oldest still in the ring. */
  start?: 'latest' | 'oldest';
}

/** What a ring is and how this process reaches it. */
export interface RingInfo extends RingConstants {
  readonly path: string;
  /** `mmap`: samples are read in place (zero-copy). `fs`: every read is a copy by read(2). */
  readonly access: RingAccess;
  readonly wordAccess: WordAccess;
  /** Why this access, in words (e.g. that koffi was missing and samples are copied). */
  readonly accessNote: string;
  /** Whether this consumer can send tune requests and publish its read index. */
  readonly writable: boolean;
  readonly sampleBytes: number;
}

/** The outcome of `readInto`: `count` is 0 when fewer samples than asked are ready (nothing was consumed). */
export interface RingRead {
  readonly count: number;
  /** Index of the first sample read (samples ever written before it). */
  readonly index: number;
  /** Samples lost to overruns between the previous read and this one. */
  readonly dropped: number;
}

/** Samples seen in place, in the ring's own memory; valid only if `commit` says so. */
export type RingPeek = {
  readonly count: number;
  readonly index: number;
  readonly dropped: number;
} & ({ readonly format: 'cf32'; readonly data: Float32Array } | { readonly format: 'ci16'; readonly data: Int16Array });

/** The centre frequency in force, read consistently; `settled` is false during a retune. */
export type TuneState =
  | { readonly settled: true; readonly centerHz: number; readonly generation: bigint; readonly tuneIndex: number }
  | { readonly settled: false; readonly generation: bigint };

/** Named counters, for logs and the control API. */
export interface RingStats {
  /** Samples handed to the caller. */
  delivered: number;
  /** Samples lost to overruns (the producer lapped this consumer). */
  dropped: number;
  /** Samples skipped because they were taken before a retune ended. */
  discardedForRetune: number;
  /** Copies or peeks found overwritten by the producer while they were read, and redone or refused. */
  tornReads: number;
}

const TORN_RETRIES = 8;
const I16_SCALE = 1 / 32768;

/**
 * The consumer side of a SORA-like sample ring (layout and protocol in
 * native/sora-ring/ring.h and docs/sora-ring.md). The file is mapped into
 * this process with koffi (libc open, mmap, close; munmap once the mapping
 * is unreachable), and header words and samples are read in place: typed
 * arrays over the mapping, 64-bit indices through Atomics. Without koffi the
 * file is read with read(2) instead, which copies; `info.access` says which.
 *
 * Single consumer: the read position is this object's, published in the
 * header so that the producer can count overruns. When the producer laps it,
 * the next read skips to the oldest sample still valid and reports how many
 * were lost; a copy that the producer overwrote while it was being taken is
 * detected afterwards (claim_index) and redone from valid data.
 */
export class SampleRing {
  readonly info: RingInfo;
  readonly stats: RingStats = { delivered: 0, dropped: 0, discardedForRetune: 0, tornReads: 0 };
  private readonly capacity: number;
  private readonly mask: number;
  private readonly f32: Float32Array | undefined;
  private readonly i16: Int16Array | undefined;
  /** Next sample to read. Numbers are exact to 2^53 samples (104 days at 1 Gsps). */
  private r = 0;
  /** Overrun losses not yet reported with a read. */
  private pendingDropped = 0;
  /** Tune generation the read position is valid for. */
  private generation = -1n;
  private closed = false;

  private constructor(
    private readonly mem: RingMemory,
    path: string,
    start: 'latest' | 'oldest',
  ) {
    const c = readConstants(mem.header());
    this.info = {
      ...c,
      path,
      access: mem.access,
      wordAccess: mem.wordAccess,
      accessNote: mem.note,
      writable: mem.writable,
      sampleBytes: SAMPLE_BYTES[c.format],
    };
    this.capacity = c.capacity;
    this.mask = c.capacity - 1;
    const buf = mem.buffer;
    if (buf !== undefined) {
      if (c.format === 'cf32') this.f32 = new Float32Array(buf, HEADER_BYTES, 2 * c.capacity);
      else this.i16 = new Int16Array(buf, HEADER_BYTES, 2 * c.capacity);
    }
    const w = this.load(Off.writeIndex);
    if (start === 'latest') this.r = w;
    else this.r = Math.max(0, this.load(Off.claimIndex) - c.capacity);
    this.generation = this.mem.load(Off.tuneGeneration);
    if ((this.generation & 1n) === 0n) this.r = Math.max(this.r, this.load(Off.tuneIndex));
    if (mem.writable) {
      mem.store(Off.readIndex, BigInt(this.r));
      mem.store(Off.consumerPid, BigInt(process.pid));
    }
  }

  /** Opens the ring at `path`: RADIO_NO_DEVICE when there is none, RADIO_BAD_RING when the file is not a ring. */
  static async open(path: string, opts: SampleRingOptions = {}): Promise<SampleRing> {
    const mem = await openRingMemory(path, opts);
    return new SampleRing(mem, path, opts.start ?? 'latest');
  }

  /** The mapping itself (every peek's `data.buffer` is this), or undefined with fs access. */
  get buffer(): ArrayBuffer | undefined {
    return this.mem.buffer;
  }

  /** Index of the next sample this consumer reads. */
  get readIndex(): number {
    return this.r;
  }

  /** Samples the producer has published (write_index). */
  writeIndex(): number {
    return this.load(Off.writeIndex);
  }

  /** The producer's count of samples it overwrote before this consumer read them (diagnostic; `stats.dropped` is exact). */
  producerOverruns(): number {
    return this.load(Off.overruns);
  }

  producerPid(): number {
    return this.load(Off.producerPid);
  }

  producerState(): 'starting' | 'running' | 'stopped' {
    const s = this.mem.load(Off.producerState);
    return s === ProducerState.running ? 'running' : s === ProducerState.stopped ? 'stopped' : 'starting';
  }

  /** Milliseconds since the producer's last heartbeat (both on CLOCK_MONOTONIC). */
  heartbeatAgeMs(): number {
    const hb = this.mem.load(Off.heartbeatNs);
    return Number(process.hrtime.bigint() - hb) / 1e6;
  }

  /** Start time of sample `index`, from the producer's start time and the sample rate. */
  timeOfSampleUs(index: number): Micros {
    return this.info.startTimeUs + Math.floor((index * 1e6) / this.info.sampleRateHz);
  }

  /** The centre frequency in force and its generation, read as a seqlock (generation, fields, generation again). */
  tuneState(): TuneState {
    const g1 = this.mem.load(Off.tuneGeneration);
    if ((g1 & 1n) === 1n) return { settled: false, generation: g1 };
    const centerHz = this.load(Off.centerHz);
    const tuneIndex = this.load(Off.tuneIndex);
    const g2 = this.mem.load(Off.tuneGeneration);
    if (g1 !== g2) return { settled: false, generation: g2 };
    return { settled: true, centerHz, generation: g1, tuneIndex };
  }

  /**
   * Samples ready to read now at the current centre, after skipping what an
   * overrun or a retune made invalid; 0 during a retune.
   */
  available(): number {
    this.checkOpen();
    const w = this.sync();
    return w === undefined ? 0 : w - this.r;
  }

  /**
   * Reads the next `count` complex samples into `dst` (interleaved I, Q: a
   * Float32Array, or for a ci16 ring an Int16Array of raw samples; ci16 into
   * Float32Array is scaled by 1/32768). All or nothing: when fewer than
   * `count` samples are ready, nothing is consumed and `count` is 0.
   *
   * If `dst` is itself a view into the ring at the next sample (a `peek`'s
   * data), nothing is copied: the samples are checked and consumed in place.
   */
  readInto(dst: Float32Array | Int16Array, count: number): RingRead {
    this.checkOpen();
    this.checkCount(count);
    if (dst.length < 2 * count) throw new RangeArgumentError('dst', dst.length, `a buffer of at least ${2 * count} elements (2 per complex sample)`);
    if (dst instanceof Int16Array && this.info.format !== 'ci16') throw new RangeArgumentError('dst', 'Int16Array', 'a Float32Array for a cf32 ring');
    const buf = this.mem.buffer;
    if (buf !== undefined && dst.buffer === buf) return this.readInPlace(dst, count);
    for (let attempt = 0; attempt < TORN_RETRIES; attempt++) {
      const w = this.sync();
      const r = this.r;
      if (w === undefined || w - r < count) return { count: 0, index: r, dropped: this.pendingDropped };
      this.copy(r, count, dst);
      if (this.intact(r, count)) return this.consume(r, count);
      this.stats.tornReads++;
    }
    return { count: 0, index: this.r, dropped: this.pendingDropped };
  }

  /**
   * The next `count` samples as a view into the ring (no copy), or undefined
   * when they are not all ready, would wrap around the end of the ring, or the
   * ring is not mapped (fs access). The producer may overwrite them while
   * they are used: hand the peek to `commit` afterwards, and drop whatever was
   * computed from it if `commit` says it was not intact.
   */
  peek(count: number): RingPeek | undefined {
    this.checkOpen();
    this.checkCount(count);
    if (this.f32 === undefined && this.i16 === undefined) return undefined;
    const w = this.sync();
    const r = this.r;
    if (w === undefined || w - r < count) return undefined;
    const slot = r & this.mask;
    if (slot + count > this.capacity) return undefined;
    const base = { count, index: r, dropped: this.pendingDropped };
    return this.f32 !== undefined
      ? { ...base, format: 'cf32', data: this.f32.subarray(2 * slot, 2 * (slot + count)) }
      : { ...base, format: 'ci16', data: this.i16!.subarray(2 * slot, 2 * (slot + count)) };
  }

  /**
   * Consumes a peek: true when the producer did not touch its samples before
   * now (the read position moves past them), false when it may have (nothing
   * is consumed; the next read skips to valid data and counts the loss).
   */
  commit(p: RingPeek): boolean {
    this.checkOpen();
    if (p.index !== this.r) throw new RangeArgumentError('peek', p.index, `the peek at the read position ${this.r} (peeks are committed in order, once)`);
    if (this.intact(p.index, p.count)) {
      this.consume(p.index, p.count);
      return true;
    }
    this.stats.tornReads++;
    return false;
  }

  /**
   * Moves the read position to `index`, clamped to the samples still valid at
   * the current centre (from the oldest one in the ring, or the end of the
   * last retune, to the write index). Going back replays samples; going
   * forward skips them without counting them as dropped. Returns the new
   * position.
   */
  seek(index: number): number {
    this.checkOpen();
    if (!Number.isSafeInteger(index) || index < 0) throw new RangeArgumentError('index', index, 'a non-negative integer sample index');
    const w = this.sync();
    if (w === undefined) return this.r;
    const tuneIndex = this.load(Off.tuneIndex);
    const oldest = Math.max(0, this.load(Off.claimIndex) - this.capacity, tuneIndex);
    this.r = Math.min(w, Math.max(oldest, index));
    if (this.mem.writable) this.mem.store(Off.readIndex, BigInt(this.r));
    return this.r;
  }

  /** Moves the read position to the newest sample, dropping what was unread (counted as dropped). */
  skipToLatest(): void {
    this.checkOpen();
    const w = this.sync();
    if (w !== undefined && w > this.r) {
      this.pendingDropped += w - this.r;
      this.stats.dropped += w - this.r;
      this.r = w;
    }
  }

  /**
   * Asks the producer for `centerHz` (integer Hz): writes tune_request_hz,
   * then increments tune_request_seq. Returns the request's sequence number;
   * the producer answers in tune_ack_seq and tune_status (see `tuneAck`).
   * One request at a time.
   */
  requestTune(centerHz: number): bigint {
    this.checkOpen();
    if (!Number.isSafeInteger(centerHz) || centerHz < 0) throw new RangeArgumentError('centerHz', centerHz, 'a non-negative integer number of Hz');
    if (!this.mem.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${this.info.path}: the ring is read-only here, tune requests cannot be written`);
    const seq = this.mem.load(Off.tuneRequestSeq) + 1n;
    this.mem.store(Off.tuneRequestHz, BigInt(centerHz));
    this.mem.store(Off.tuneRequestSeq, seq);
    return seq;
  }

  /** The last tune request the producer served and how. */
  tuneAck(): { seq: bigint; refused: boolean } {
    const seq = this.mem.load(Off.tuneAckSeq);
    return { seq, refused: this.mem.load(Off.tuneStatus) === TuneStatus.refused };
  }

  /** Detaches from the ring and unmaps it (views from `peek` read zeros afterwards). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.mem.writable) {
      try {
        this.mem.store(Off.consumerPid, 0n);
      } catch {
        // the ring may be gone already; closing goes on
      }
    }
    this.mem.close();
  }

  private load(off: number): number {
    return Number(this.mem.load(off));
  }

  /**
   * Brings the read position up to date and returns the write index, or
   * undefined during a retune. The write index is loaded first (acquire):
   * a retune marks the generation odd before it writes deaf samples, so if
   * the generation is still the one seen before, every sample below that
   * index is at the current centre. Then the claim index: samples below
   * claim - capacity may be overwritten already.
   */
  private sync(): number | undefined {
    const w = this.load(Off.writeIndex);
    const g = this.mem.load(Off.tuneGeneration);
    if ((g & 1n) === 1n) return undefined;
    if (g !== this.generation) {
      const tuneIndex = this.load(Off.tuneIndex);
      if (this.mem.load(Off.tuneGeneration) !== g) return undefined;
      this.generation = g;
      if (this.r < tuneIndex) {
        this.stats.discardedForRetune += tuneIndex - this.r;
        this.r = tuneIndex;
      }
    }
    const oldest = this.load(Off.claimIndex) - this.capacity;
    if (this.r < oldest) {
      this.pendingDropped += oldest - this.r;
      this.stats.dropped += oldest - this.r;
      this.r = oldest;
    }
    return Math.max(w, this.r);
  }

  /**
   * Whether samples [r, r + count) were still intact once read: publishes
   * the read index (a store, which orders the copy's loads before the next
   * load) and checks that the producer has not claimed their slots since.
   */
  private intact(r: number, count: number): boolean {
    if (this.mem.writable) this.mem.store(Off.readIndex, BigInt(r + count));
    return this.load(Off.claimIndex) - this.capacity <= r;
  }

  private consume(r: number, count: number): RingRead {
    this.r = r + count;
    const dropped = this.pendingDropped;
    this.pendingDropped = 0;
    this.stats.delivered += count;
    return { count, index: r, dropped };
  }

  private readInPlace(dst: Float32Array | Int16Array, count: number): RingRead {
    const w = this.sync();
    const r = this.r;
    const slot = r & this.mask;
    const at = HEADER_BYTES + slot * this.info.sampleBytes;
    const sameKind = this.info.format === 'cf32' ? dst instanceof Float32Array : dst instanceof Int16Array;
    if (!sameKind || dst.byteOffset !== at || slot + count > this.capacity) {
      throw new RangeArgumentError(
        'dst',
        `a view at byte ${dst.byteOffset} of the ring`,
        `a buffer outside the ring, or the peek of the next ${count} samples (byte ${at})`,
      );
    }
    if (w === undefined || w - r < count) return { count: 0, index: r, dropped: this.pendingDropped };
    if (this.intact(r, count)) return this.consume(r, count);
    this.stats.tornReads++;
    return { count: 0, index: this.r, dropped: this.pendingDropped };
  }

  /** Copies samples [r, r + count) into dst, in one or two runs (the ring wraps). */
  private copy(r: number, count: number, dst: Float32Array | Int16Array): void {
    const slot = r & this.mask;
    const first = Math.min(count, this.capacity - slot);
    this.copyRun(slot, first, dst, 0);
    if (first < count) this.copyRun(0, count - first, dst, 2 * first);
  }

  private copyRun(slot: number, n: number, dst: Float32Array | Int16Array, at: number): void {
    const src = this.f32 ?? this.i16;
    if (src !== undefined) {
      const run = src.subarray(2 * slot, 2 * (slot + n));
      if (dst instanceof Float32Array && run instanceof Int16Array) scaleI16(run, dst, at);
      else dst.set(run, at);
      return;
    }
    // fs access: read(2) straight into the caller's buffer when the formats match.
    const offset = HEADER_BYTES + slot * this.info.sampleBytes;
    if (this.info.format === 'ci16' && dst instanceof Float32Array) {
      const tmp = new Int16Array(2 * n);
      this.mem.copyOut(offset, new Uint8Array(tmp.buffer));
      scaleI16(tmp, dst, at);
    } else {
      this.mem.copyOut(offset, new Uint8Array(dst.buffer, dst.byteOffset + at * dst.BYTES_PER_ELEMENT, 2 * n * dst.BYTES_PER_ELEMENT));
    }
  }

  private checkCount(count: number): void {
    if (!Number.isSafeInteger(count) || count < 1 || count > this.capacity) {
      throw new RangeArgumentError('count', count, `an integer in [1, ${this.capacity}] (the ring's capacity)`);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new FrontendError('RADIO_CLOSED', `${this.info.path}: the ring is closed`);
  }
}

function scaleI16(src: Int16Array, dst: Float32Array, at: number): void {
  for (let i = 0; i < src.length; i++) dst[at + i] = src[i]! * I16_SCALE;
}

export type { SampleFormat };
