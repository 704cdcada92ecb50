import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import { assertMicros, RealClock, type Clock } from '../../src/core/time.js';
import type { Frontend, FrontendCapabilities, IqBlock, ReceivedFrame, TuneResult, TxBurst, TxReport } from '../frontend.js';
import { existsSync } from 'node:fs';
import { SampleRing, type RingPeek, type SampleRingOptions } from './ring.js';
import { TxRing } from './tx-ring.js';

export interface SoraFrontendOptions extends SampleRingOptions {
  /** The ring file the board's driver (or native/sora-ring's producer) fills, e.g. /dev/shm/sora0. */
  path: string;
  /** Tells this front-end apart (default: the ring path). */
  id?: string;
  /** Poll period while waiting for samples or a tune, in ms (default 1; waits are timers, never a busy loop). */
  pollMs?: number;
  /** How long a tune may take before RADIO_TUNE_TIMEOUT, in ms (default 2000). */
  tuneTimeoutMs?: number;
  /** How long `readIq` waits beyond the block's own duration before RADIO_READ_TIMEOUT, in ms (default 2000). */
  readTimeoutMs?: number;
  /** The board's receive gain, fixed: the ring's full_scale_dbm already accounts for it (default 0). */
  gainDb?: number;
  /** Measures retune times (default: the real clock). */
  clock?: Clock;
  /**
   * The TX ring the board's driver (or native/sora-ring's consumer) serves:
   * default `<path>.tx` when that file exists (else receive-only), false for
   * receive-only; a path given must be a TX ring.
   */
  txPath?: string | false;
  /** How long `transmitIq` waits for ring space or the board's outcome beyond the burst's own time, in ms (default 2000). */
  txTimeoutMs?: number;
}

/** A block read in place from the ring; call `commit` once done with it, and discard what was computed if it returns false. */
export interface InPlaceBlock {
  readonly block: IqBlock;
  /** Whether `block.data` is a view into the ring (false: a copy, when the block wrapped or the ring is not mapped). */
  readonly zeroCopy: boolean;
  commit(): boolean;
}

/**
 * A front-end over a SORA-like sample ring (native/sora-ring/ring.h). The
 * ring has one producer, the board's DMA (or the producer program standing in
 * for it), and this is its one consumer. Samples are read from the shared
 * mapping; `readIqInPlace` hands them out without a copy.
 *
 * Tuning is a request the producer serves: `tune` writes tune_request_hz and
 * bumps tune_request_seq, then waits (polling on a timer) until the producer
 * acknowledges it and the header's centre frequency and generation show the
 * new centre. Samples taken before the retune ended are skipped. The board's
 * gain is fixed (`gainRangeDb` is one value).
 *
 * Transmitting goes through a second ring, the TX ring (ring.h, struct
 * sora_tx_header), whose producer this front-end is: `transmitIq` queues the
 * burst's record, writes its samples as the board frees slots (waiting on a
 * timer while the ring is full: nothing is dropped), and resolves with the
 * board's outcome. Bursts go one at a time, in order, independently of reads.
 */
export class SoraFrontend implements Frontend {
  readonly kind = 'sora' as const;
  readonly id: string;
  readonly capabilities: FrontendCapabilities;
  /** Retune time of the last tune, measured from request to acknowledgement. */
  lastRetuneUs: number | undefined;
  private readonly pollMs: number;
  private readonly tuneTimeoutMs: number;
  private readonly readTimeoutMs: number;
  private readonly gain: number;
  private readonly clock: Clock;
  /** Operations run one after another: reads consume the stream in order, a tune waits for the reads before it. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Bursts, one after another (apart from reads and tunes). */
  private txQueue: Promise<unknown> = Promise.resolve();
  private readonly txTimeoutMs: number;
  /** Why the TX ring can no longer be used (a burst left half written), once it cannot. */
  private txBroken: string | undefined;
  /** Bumped by every tune: reads asked for before it are refused with RADIO_RETUNED. */
  private epoch = 0;
  private closed = false;
  /** A zero-copy block was handed out and not committed yet. */
  private peekPending = false;
  private readonly timers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();

  private constructor(
    readonly ring: SampleRing,
    /** The TX ring, undefined for a receive-only front-end. */
    readonly txRing: TxRing | undefined,
    opts: SoraFrontendOptions,
  ) {
    this.id = opts.id ?? opts.path;
    this.pollMs = positive('pollMs', opts.pollMs ?? 1);
    this.tuneTimeoutMs = positive('tuneTimeoutMs', opts.tuneTimeoutMs ?? 2000);
    this.readTimeoutMs = positive('readTimeoutMs', opts.readTimeoutMs ?? 2000);
    this.txTimeoutMs = positive('txTimeoutMs', opts.txTimeoutMs ?? 2000);
    this.gain = opts.gainDb ?? 0;
    this.clock = opts.clock ?? new RealClock();
    const i = ring.info;
    this.capabilities = {
      sampleRateHz: i.sampleRateHz,
      tuneRangeHz: [i.tuneRangeHz[0], i.tuneRangeHz[1]],
      gainRangeDb: [this.gain, this.gain],
      retuneUs: i.retuneUs,
      canTransmit: false,
      canTransmitIq: txRing !== undefined,
    };
    if (txRing !== undefined && txRing.info.sampleRateHz !== i.sampleRateHz) {
      throw new FrontendError(
        'RADIO_BAD_RING',
        `${txRing.info.path}: the TX ring runs at ${txRing.info.sampleRateHz} S/s, the receive ring ${opts.path} at ${i.sampleRateHz} S/s`,
      );
    }
  }

  /**
   * Opens the ring at `opts.path`. RADIO_NO_DEVICE when there is no file
   * there, RADIO_BAD_RING when its magic, version or sizes are wrong.
   */
  static async open(opts: SoraFrontendOptions): Promise<SoraFrontend> {
    const ring = await SampleRing.open(opts.path, opts);
    let tx: TxRing | undefined;
    try {
      const txPath = opts.txPath ?? (existsSync(`${opts.path}.tx`) ? `${opts.path}.tx` : false);
      if (txPath !== false) tx = await TxRing.open(txPath, opts);
      return new SoraFrontend(ring, tx, opts);
    } catch (e) {
      tx?.close();
      ring.close();
      throw e;
    }
  }

  /** The producer's centre frequency (undefined while it retunes). */
  get centerHz(): number | undefined {
    if (this.closed) return undefined;
    const t = this.ring.tuneState();
    return t.settled ? t.centerHz : undefined;
  }

  get gainDb(): number {
    return this.gain;
  }

  calibrationDb(): number {
    return this.ring.info.fullScaleDbm;
  }

  /**
   * Asks the producer for `centerHz` and resolves when it is served, with the
   * retune time measured from the request. Reads still waiting are refused
   * with RADIO_RETUNED. RADIO_TUNE_RANGE outside the producer's range (or when
   * it refuses), RADIO_TUNE_TIMEOUT when it does not answer in time.
   */
  tune(centerHz: number): Promise<TuneResult> {
    if (this.closed) return Promise.reject(this.closedError());
    const [lo, hi] = this.capabilities.tuneRangeHz;
    if (!Number.isFinite(centerHz) || centerHz < lo || centerHz > hi) {
      return Promise.reject(new FrontendError('RADIO_TUNE_RANGE', `${this.id}: ${centerHz} Hz is outside the producer's range [${lo}, ${hi}] Hz`));
    }
    const hz = Math.round(centerHz); // the ring carries whole Hz
    this.epoch++;
    return this.enqueue(() => this.serveTune(hz));
  }

  setGain(gainDb: number): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    if (gainDb !== this.gain) {
      return Promise.reject(new FrontendError('RADIO_GAIN_RANGE', `${this.id}: the SORA ring's gain is fixed at ${this.gain} dB, ${gainDb} dB asked`));
    }
    return Promise.resolve();
  }

  /**
   * The next `count` samples, waiting (on a timer) until the producer has
   * written them. With `into`, the samples are written there; if `into` is a
   * view into the ring at the next sample, nothing is copied. `droppedSamples`
   * counts samples lost to overruns since the previous block, `startUs` comes
   * from the first sample's index and the sample rate.
   */
  readIq(count: number, into?: Float32Array): Promise<IqBlock> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!Number.isSafeInteger(count) || count < 1 || count > this.ring.info.capacity) {
      return Promise.reject(new RangeArgumentError('count', count, `an integer in [1, ${this.ring.info.capacity}] (the ring's capacity)`));
    }
    if (into !== undefined && into.length < 2 * count) {
      return Promise.reject(new RangeArgumentError('into', into.length, `a buffer of at least ${2 * count} floats (2 per complex sample)`));
    }
    const epoch = this.epoch;
    return this.enqueue(async () => {
      this.checkNoPeek();
      const data = into ?? new Float32Array(2 * count);
      const got = await this.waitFor(count, epoch, () => {
        const r = this.ring.readInto(data, count);
        return r.count === count ? r : undefined;
      });
      return this.block(data, count, got.index, got.dropped);
    });
  }

  /**
   * Like `readIq`, without a copy when the block does not wrap around the end
   * of the ring (and the ring is a cf32 mapping): `block.data` is then a view
   * into the ring. The producer keeps writing meanwhile, so `commit` must be
   * called once the block has been used: false means it was overwritten in
   * the meantime and results computed from it are void.
   */
  readIqInPlace(count: number): Promise<InPlaceBlock> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!Number.isSafeInteger(count) || count < 1 || count > this.ring.info.capacity) {
      return Promise.reject(new RangeArgumentError('count', count, `an integer in [1, ${this.ring.info.capacity}] (the ring's capacity)`));
    }
    const epoch = this.epoch;
    const mapped = this.ring.buffer !== undefined && this.ring.info.format === 'cf32';
    return this.enqueue(async () => {
      this.checkNoPeek();
      if (mapped) {
        let copy: Float32Array | undefined;
        const got = await this.waitFor(count, epoch, () => {
          const p = this.ring.peek(count);
          if (p !== undefined) return p;
          if (this.ring.available() < count) return undefined;
          // Ready but wrapping: copy this one.
          copy ??= new Float32Array(2 * count);
          const r = this.ring.readInto(copy, count);
          return r.count === count ? r : undefined;
        });
        if (isPeek(got) && got.format === 'cf32') {
          // The read position moves at commit: until then another read would hand out the same samples.
          this.peekPending = true;
          let done = false;
          const commit = (): boolean => {
            if (done) return true;
            done = true;
            this.peekPending = false;
            return this.ring.commit(got);
          };
          return { block: this.block(got.data, count, got.index, got.dropped), zeroCopy: true, commit };
        }
        return { block: this.block(copy!, count, got.index, got.dropped), zeroCopy: false, commit: () => true };
      }
      const data = new Float32Array(2 * count);
      const got = await this.waitFor(count, epoch, () => {
        const r = this.ring.readInto(data, count);
        return r.count === count ? r : undefined;
      });
      return { block: this.block(data, count, got.index, got.dropped), zeroCopy: false, commit: () => true };
    });
  }

  private checkNoPeek(): void {
    if (this.peekPending) {
      throw new FrontendError('RADIO_PEEK_PENDING', `${this.id}: an in-place block is not committed yet; commit it before reading again`);
    }
  }

  send(_bytes: Uint8Array): Promise<void> {
    return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: no PHY here to make frames (transmitIq sends samples)`));
  }

  /**
   * Sends `burst` through the TX ring and resolves with the board's outcome:
   * when it started and ended, whether it was late (dropped, `sent` 0).
   * Waits while the ring is full. RADIO_TX_TIMEOUT when the board takes
   * nothing, or reports nothing, for the burst's own time plus
   * `txTimeoutMs`; RADIO_STREAM_ENDED when it stopped. After a burst left
   * half written the TX ring is refused (RADIO_TX_RING_BROKEN).
   */
  transmitIq(burst: TxBurst): Promise<TxReport> {
    if (this.closed) return Promise.reject(this.closedError());
    const tx = this.txRing;
    if (tx === undefined) {
      return Promise.reject(
        new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: receive-only (no TX ring at ${this.ring.info.path}.tx, nor one given as txPath)`),
      );
    }
    if (!Number.isSafeInteger(burst.count) || burst.count <= 0) return Promise.reject(new RangeArgumentError('burst.count', burst.count, 'an integer > 0'));
    if (!(burst.data instanceof Float32Array) || burst.data.length < 2 * burst.count) {
      return Promise.reject(
        new RangeArgumentError('burst.data', burst.data?.length, `a Float32Array of at least ${2 * burst.count} floats (2 per complex sample)`),
      );
    }
    if (burst.atUs !== undefined) {
      try {
        assertMicros('burst.atUs', burst.atUs);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const p = this.txQueue.then(() => this.transmit(tx, burst));
    this.txQueue = p.catch(() => undefined);
    return p;
  }

  private async transmit(tx: TxRing, b: TxBurst): Promise<TxReport> {
    this.checkOpen();
    if (this.txBroken !== undefined) throw new FrontendError('RADIO_TX_RING_BROKEN', `${this.id}: ${this.txBroken}`);
    const durationMs = (b.count / tx.info.sampleRateHz) * 1e3;
    const leadMs = b.atUs === undefined ? 0 : Math.max(0, (b.atUs - this.clock.now()) / 1e3);
    const deadline = performance.now() + leadMs + durationMs + this.txTimeoutMs;
    const waitOrFail = async (what: string): Promise<void> => {
      this.checkOpen();
      if (tx.consumerState() === 'stopped') throw new FrontendError('RADIO_STREAM_ENDED', `${this.id}: the TX ring's consumer stopped ${what}`);
      if (performance.now() >= deadline) {
        throw new FrontendError(
          'RADIO_TX_TIMEOUT',
          `${this.id}: ${what} after ${Math.round(leadMs + durationMs + this.txTimeoutMs)} ms (consumer pid ${tx.consumerPid()} ${tx.consumerState()}, last heartbeat ${tx.heartbeatAgeMs().toFixed(0)} ms ago)`,
        );
      }
      await this.sleep(this.pollMs);
    };
    let seq: number | undefined;
    while ((seq = tx.queue(b.count, b.atUs)) === undefined) await waitOrFail('with every burst record in use');
    let off = 0;
    try {
      while (off < b.count) {
        const n = tx.write(b.data, off, b.count - off);
        off += n;
        if (n === 0) await waitOrFail(`with ${off} of ${b.count} samples written and the ring full`);
      }
    } catch (e) {
      this.txBroken = `burst ${seq} was left with ${off} of ${b.count} samples written; reopen once the board's consumer is restarted`;
      throw e;
    }
    for (;;) {
      const o = tx.outcome(seq);
      if (o !== undefined) return { startUs: o.startUs, endUs: o.endUs, late: o.late, sent: o.sent };
      await waitOrFail(`with no outcome for burst ${seq}`);
    }
  }

  onFrame(_listener: (frame: ReceivedFrame) => void): () => void {
    return () => {};
  }

  /** Refuses waiting reads and tunes with RADIO_CLOSED and unmaps the ring. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const t of this.timers) {
      clearTimeout(t.timer);
      t.wake();
    }
    this.timers.clear();
    const done = Promise.all([this.queue, this.txQueue]).then(() => {
      this.txRing?.close();
      this.ring.close();
    });
    return done;
  }

  private async serveTune(hz: number): Promise<TuneResult> {
    this.checkOpen();
    const t0 = this.clock.now();
    const before = this.ring.tuneState().generation;
    const seq = this.ring.requestTune(hz);
    const deadline = performance.now() + this.tuneTimeoutMs;
    for (;;) {
      this.checkOpen();
      const ack = this.ring.tuneAck();
      if (ack.seq >= seq) {
        if (ack.refused) throw new FrontendError('RADIO_TUNE_RANGE', `${this.id}: the producer refused ${hz} Hz`);
        const t = this.ring.tuneState();
        if (t.settled && t.generation !== before && t.centerHz === hz) {
          const retuneUs = Math.max(0, this.clock.now() - t0);
          this.lastRetuneUs = retuneUs;
          return { centerHz: hz, retuneUs };
        }
      }
      if (performance.now() >= deadline) {
        throw new FrontendError(
          'RADIO_TUNE_TIMEOUT',
          `${this.id}: the producer did not serve a tune to ${hz} Hz within ${this.tuneTimeoutMs} ms (${this.producerHealth()})`,
        );
      }
      await this.sleep(this.pollMs);
    }
  }

  /** Polls `attempt` on a timer until it gives a value; refuses on a tune, close, end of stream or timeout. */
  private async waitFor<T>(count: number, epoch: number, attempt: () => T | undefined): Promise<T> {
    const rate = this.ring.info.sampleRateHz;
    const deadline = performance.now() + this.readTimeoutMs + (count / rate) * 1e3;
    for (;;) {
      this.checkOpen();
      if (epoch !== this.epoch) throw new FrontendError('RADIO_RETUNED', `${this.id}: a tune cut short a read of ${count} samples`);
      const got = attempt();
      if (got !== undefined) return got;
      const ready = this.ring.available();
      if (ready < count && this.ring.producerState() === 'stopped') {
        throw new FrontendError('RADIO_STREAM_ENDED', `${this.id}: the producer stopped with ${ready} of ${count} samples left to read`);
      }
      const now = performance.now();
      if (now >= deadline) {
        throw new FrontendError(
          'RADIO_READ_TIMEOUT',
          `${this.id}: ${ready} of ${count} samples after ${this.readTimeoutMs} ms beyond the block's duration (${this.producerHealth()})`,
        );
      }
      // Sleep about as long as the missing samples take to arrive, within [pollMs, 20 ms].
      const ms = Math.min(20, Math.max(this.pollMs, ((count - ready) / rate) * 1e3));
      await this.sleep(Math.min(ms, deadline - now));
    }
  }

  private block(data: Float32Array, count: number, index: number, dropped: number): IqBlock {
    const t = this.ring.tuneState();
    return {
      data,
      count,
      startUs: this.ring.timeOfSampleUs(index),
      sampleRateHz: this.ring.info.sampleRateHz,
      centerHz: t.settled ? t.centerHz : NaN,
      calibrationDb: this.calibrationDb(),
      droppedSamples: dropped,
    };
  }

  private producerHealth(): string {
    const state = this.ring.producerState();
    return `producer pid ${this.ring.producerPid()} ${state}, last heartbeat ${this.ring.heartbeatAgeMs().toFixed(0)} ms ago`;
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const p = this.queue.then(op);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(
          () => {
            this.timers.delete(entry);
            resolve();
          },
          Math.max(0, ms),
        ),
        wake: resolve,
      };
      this.timers.add(entry);
    });
  }

  private checkOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): FrontendError {
    return new FrontendError('RADIO_CLOSED', `${this.id}: the front-end is closed`);
  }
}

function isPeek(x: object): x is RingPeek {
  return 'data' in x;
}

function positive(name: string, v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new RangeArgumentError(name, v, 'a finite number > 0');
  return v;
}
