import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import type { EventId } from '../../src/core/engine.js';
import type { Rng } from '../../src/core/rng.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import { assertMicros, US_PER_S, type Micros } from '../../src/core/time.js';
import type { Frontend, FrontendCapabilities, IqBlock, ReceivedFrame, TuneResult, TxBurst, TxReport } from '../frontend.js';
import type { Airtime, BandReceiver, EmulatedBand } from './band.js';

export interface SimFrontendOptions {
  /** Tells this radio apart on the band (unique per band); frames it sends are not delivered back to it. */
  id: string;
  /** Complex samples per second (default 1e6). */
  sampleRateHz?: number;
  /** Initial receive gain (default 0). */
  gainDb?: number;
  /** dBm of a full-scale signal at 0 dB gain (default -10). */
  calibrationDb?: number;
  /** Deaf time after a tune (default 1000 µs). */
  retuneUs?: Micros;
  gainRangeDb?: readonly [number, number];
  tuneRangeHz?: readonly [number, number];
  /** Power of sent frames as receivers see it (default 15 dBm). */
  txPowerDbm?: number;
  /** PHY rate of sent frames (default 2 Mbps, the seeds' channel capacity). */
  rateBps?: number;
  /** Whether `send` is available (default true). */
  canTransmit?: boolean;
  /** Whether `transmitIq` is available (default true): bursts go on the band at txPowerDbm for full scale. */
  canTransmitIq?: boolean;
  /**
   * A block is handed over this long after its last sample (default 0), as
   * a host-based SDR's samples reach the host after the bus and its buffers;
   * a reader that keeps up still gets one contiguous stream. On a band linked
   * to other processes (a band hub) it is the time their bursts have to
   * arrive before the samples they fall in are made.
   */
  readLatencyUs?: Micros;
  /**
   * What the device buffers for a reader that falls behind (default 0): a
   * read asked within this long after the stream's end goes on from it, as
   * a late reader of a real SDR gets the samples its buffers kept; a read
   * asked later starts afresh (an overrun), at now.
   */
  bufferUs?: Micros;
  /** Noise stream of this receiver (default: the band's stream for `id`). */
  rng?: Rng;
}

interface PendingRead {
  readonly centerHz: number;
  readonly startUs: number;
  readonly count: number;
  readonly calibrationDb: number;
  readonly dueUs: Micros;
  /** The caller's buffer, when it gave one. */
  readonly into: Float32Array | undefined;
  event: EventId | undefined;
  readonly resolve: (b: IqBlock) => void;
  readonly reject: (e: unknown) => void;
}

interface TuneWaiter {
  readonly askedUs: Micros;
  readonly resolve: (r: TuneResult) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * A front-end on the emulated band. It behaves like a radio in time: a tune
 * leaves it deaf for `retuneUs`, a block of samples is handed over once the
 * scheduler reaches the block's end, a frame takes its airtime. With an
 * `EventEngine` as scheduler that is virtual time; with a `RealTimeScheduler`
 * it paces like hardware. `captureAt` is the synchronous path for
 * virtual-time drivers that keep time themselves.
 */
export class SimFrontend implements Frontend {
  readonly kind = 'sim' as const;
  readonly id: string;
  readonly capabilities: FrontendCapabilities;
  private readonly baseCalibrationDb: number;
  private readonly txPowerDbm: number;
  private readonly readLatencyUs: Micros;
  private readonly bufferUs: Micros;
  private readonly rateBps: number;
  private readonly noise: Rng;
  private readonly receiver: BandReceiver;
  private readonly listeners = new Set<(frame: ReceivedFrame) => void>();
  private readonly reads = new Set<PendingRead>();
  private readonly tuneWaiters: TuneWaiter[] = [];
  private tuneEvent: EventId | undefined;
  private center: number | undefined;
  private gain: number;
  /** Samples are valid from this time on (end of the last retune). */
  private readyAtUs: Micros = 0;
  /** End of the last block handed out or pending, where a contiguous stream goes on. */
  private streamEndUs = 0;
  /** The transmitter is busy until then. */
  private txFreeAtUs: Micros = 0;
  private closed = false;

  constructor(
    readonly band: EmulatedBand,
    private readonly scheduler: Scheduler,
    opts: SimFrontendOptions,
  ) {
    this.id = opts.id;
    const sampleRateHz = opts.sampleRateHz ?? 1e6;
    if (!(sampleRateHz > 0) || !Number.isFinite(sampleRateHz)) {
      throw new RangeArgumentError('sampleRateHz', sampleRateHz, 'a finite number > 0');
    }
    const gainRangeDb = opts.gainRangeDb ?? [0, 60];
    const tuneRangeHz = opts.tuneRangeHz ?? [2.4e9, 2.5e9];
    if (!(gainRangeDb[0] <= gainRangeDb[1])) throw new RangeArgumentError('gainRangeDb', gainRangeDb, '[low, high] with low <= high');
    if (!(tuneRangeHz[0] <= tuneRangeHz[1])) throw new RangeArgumentError('tuneRangeHz', tuneRangeHz, '[low, high] with low <= high');
    this.capabilities = {
      sampleRateHz,
      tuneRangeHz: [tuneRangeHz[0], tuneRangeHz[1]],
      gainRangeDb: [gainRangeDb[0], gainRangeDb[1]],
      retuneUs: assertMicros('retuneUs', opts.retuneUs ?? 1000),
      canTransmit: opts.canTransmit ?? true,
      canTransmitIq: opts.canTransmitIq ?? true,
    };
    this.baseCalibrationDb = opts.calibrationDb ?? -10;
    this.txPowerDbm = opts.txPowerDbm ?? 15;
    this.readLatencyUs = assertMicros('readLatencyUs', opts.readLatencyUs ?? 0);
    this.bufferUs = assertMicros('bufferUs', opts.bufferUs ?? 0);
    this.rateBps = opts.rateBps ?? 2e6;
    if (!(this.rateBps > 0)) throw new RangeArgumentError('rateBps', this.rateBps, 'a number > 0');
    this.gain = opts.gainDb ?? 0;
    this.checkGain(this.gain);
    this.noise = opts.rng ?? band.noiseRng(this.id);
    this.receiver = band.attach({
      id: this.id,
      scheduler,
      onFrame: (frame) => {
        for (const l of [...this.listeners]) l(frame);
      },
    });
  }

  /** The centre tuned to, or being tuned to; undefined before the first tune. */
  get centerHz(): number | undefined {
    return this.center;
  }

  get gainDb(): number {
    return this.gain;
  }

  /** Whether a retune is in progress (the radio is deaf). */
  get retuning(): boolean {
    return this.center !== undefined && this.scheduler.now() < this.readyAtUs;
  }

  calibrationDb(): number {
    return this.baseCalibrationDb - this.gain;
  }

  /**
   * Starts a retune; resolves once it is done. A tune during a retune starts
   * over, and every waiting tune resolves with where the radio ends up. Reads
   * still in flight that the tune cuts short are refused with
   * `RADIO_RETUNED`.
   */
  tune(centerHz: number): Promise<TuneResult> {
    if (this.closed) return Promise.reject(this.closedError());
    const [lo, hi] = this.capabilities.tuneRangeHz;
    if (!(centerHz >= lo && centerHz <= hi)) {
      return Promise.reject(new FrontendError('RADIO_TUNE_RANGE', `${this.id}: ${centerHz} Hz is outside the tuning range [${lo}, ${hi}] Hz`));
    }
    if (!this.band.isChannelCenter(centerHz)) {
      return Promise.reject(new FrontendError('RADIO_NOT_A_CHANNEL', `${this.id}: ${centerHz} Hz is not a channel centre of plan ${this.band.plan.name}`));
    }
    const now = this.scheduler.now();
    this.interruptReads(now);
    this.center = centerHz;
    this.readyAtUs = now + this.capabilities.retuneUs;
    this.streamEndUs = 0;
    this.receiver.listen(undefined, now);
    if (this.tuneEvent !== undefined) this.scheduler.cancel(this.tuneEvent);
    const readyAt = this.readyAtUs;
    this.tuneEvent = this.scheduler.at(readyAt, () => {
      this.tuneEvent = undefined;
      this.receiver.listen(centerHz, readyAt);
      for (const w of this.tuneWaiters.splice(0)) w.resolve({ centerHz, retuneUs: readyAt - w.askedUs });
    });
    return new Promise((resolve, reject) => this.tuneWaiters.push({ askedUs: now, resolve, reject }));
  }

  setGain(gainDb: number): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    try {
      this.checkGain(gainDb);
    } catch (e) {
      return Promise.reject(e);
    }
    this.gain = gainDb;
    return Promise.resolve();
  }

  /**
   * The next `count` samples: they cover [s, s + count / fs) with s the
   * latest of now, the end of the retune and the end of the previous block
   * (so back-to-back reads stream without gaps), and the promise resolves
   * when the scheduler reaches the end of the block. The block keeps the
   * centre and gain in force when it was asked for.
   */
  readIq(count: number, into?: Float32Array): Promise<IqBlock> {
    if (this.closed) return Promise.reject(this.closedError());
    const centerHz = this.center;
    if (centerHz === undefined) return Promise.reject(this.notTuned());
    if (!Number.isSafeInteger(count) || count <= 0) {
      return Promise.reject(new RangeArgumentError('count', count, 'an integer > 0'));
    }
    if (into !== undefined && into.length < 2 * count) {
      return Promise.reject(new RangeArgumentError('into', into.length, `a buffer of at least ${2 * count} floats (2 per complex sample)`));
    }
    // A reader that asks again as soon as a block is handed over goes on where it ended; a reader back after a pause starts at now.
    const fresh = this.scheduler.now() - this.readLatencyUs;
    const startUs = Math.max(fresh - this.bufferUs <= this.streamEndUs ? this.streamEndUs : fresh, this.readyAtUs);
    const endUs = startUs + (count * US_PER_S) / this.capabilities.sampleRateHz;
    this.streamEndUs = endUs;
    return new Promise((resolve, reject) => {
      const read: PendingRead = {
        centerHz,
        startUs,
        count,
        calibrationDb: this.calibrationDb(),
        // A reader behind its stream (the buffered samples) gets its block at once.
        dueUs: Math.max(Math.ceil(endUs) + this.readLatencyUs, this.scheduler.now()),
        into,
        event: undefined,
        resolve,
        reject,
      };
      this.reads.add(read);
      read.event = this.scheduler.at(read.dueUs, () => {
        read.event = undefined;
        this.finishRead(read);
      });
    });
  }

  /**
   * Synchronous capture of `count` samples from `startUs` at the current
   * centre and gain, for drivers that keep virtual time themselves. Refused
   * before the first tune and for a start within a retune.
   */
  captureAt(startUs: number, count: number): IqBlock {
    this.checkOpen();
    if (this.center === undefined) throw this.notTuned();
    if (startUs < this.readyAtUs) {
      throw new FrontendError('RADIO_RETUNING', `${this.id}: no valid samples at ${startUs} us, retuning until ${this.readyAtUs} us`);
    }
    if (!Number.isSafeInteger(count) || count <= 0) throw new RangeArgumentError('count', count, 'an integer > 0');
    return this.capture(this.center, startUs, count, this.calibrationDb());
  }

  /**
   * Puts the burst on the band at the current centre and this radio's
   * sample rate, full scale at txPowerDbm: it leaves at `burst.atUs`, or
   * once the retune, the previous frame or burst, and now are past if that
   * is later (then `late` when an `atUs` was asked for). The radio is busy
   * for its duration, and the promise resolves at its end. Every other
   * receiver on the band sees it in its samples (EmulatedBand.transmitIq).
   */
  transmitIq(burst: TxBurst): Promise<TxReport> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.capabilities.canTransmitIq) {
      return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: this front-end has no IQ transmitter`));
    }
    const centerHz = this.center;
    if (centerHz === undefined) return Promise.reject(this.notTuned());
    const asked = burst.atUs;
    if (asked !== undefined && !(Number.isSafeInteger(asked) && asked >= 0)) {
      return Promise.reject(new RangeArgumentError('burst atUs', asked, 'a time in whole µs >= 0 on the front-end clock, or undefined'));
    }
    const earliest = Math.max(this.scheduler.now(), this.readyAtUs, this.txFreeAtUs);
    const atUs = asked === undefined ? earliest : Math.max(asked, earliest);
    let air: Airtime;
    try {
      air = this.band.transmitIq(this.id, centerHz, burst.data, burst.count, this.capabilities.sampleRateHz, atUs, this.txPowerDbm);
    } catch (e) {
      return Promise.reject(e);
    }
    this.txFreeAtUs = Math.ceil(air.endUs);
    const report: TxReport = { startUs: air.startUs, endUs: air.endUs, late: asked !== undefined && atUs > asked, sent: burst.count };
    return new Promise((resolve) => this.scheduler.at(Math.ceil(air.endUs), () => resolve(report)));
  }

  /**
   * Sends one frame at the current centre, at txPowerDbm and rateBps; it goes
   * out once the retune (if any) and the previous frame are over, and the
   * promise resolves at the end of its airtime.
   */
  send(bytes: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.capabilities.canTransmit) {
      return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: this front-end has no transmitter`));
    }
    const centerHz = this.center;
    if (centerHz === undefined) return Promise.reject(this.notTuned());
    const atUs = Math.max(this.scheduler.now(), this.readyAtUs, this.txFreeAtUs);
    let air: Airtime;
    try {
      air = this.band.transmit(this.id, centerHz, bytes, atUs, this.txPowerDbm, this.rateBps);
    } catch (e) {
      return Promise.reject(e);
    }
    this.txFreeAtUs = air.endUs;
    return new Promise((resolve) => this.scheduler.at(air.endUs, () => resolve()));
  }

  onFrame(listener: (frame: ReceivedFrame) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Detaches from the band; reads and tunes still waiting are refused with `RADIO_CLOSED`. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.receiver.detach();
    this.listeners.clear();
    if (this.tuneEvent !== undefined) this.scheduler.cancel(this.tuneEvent);
    this.tuneEvent = undefined;
    for (const w of this.tuneWaiters.splice(0)) w.reject(this.closedError());
    for (const r of this.reads) {
      if (r.event !== undefined) this.scheduler.cancel(r.event);
      r.reject(this.closedError());
    }
    this.reads.clear();
    return Promise.resolve();
  }

  private capture(centerHz: number, startUs: number, count: number, calibrationDb: number, into?: Float32Array): IqBlock {
    const sampleRateHz = this.capabilities.sampleRateHz;
    const data = into ?? new Float32Array(2 * count);
    this.band.synthesize(centerHz, startUs, count, sampleRateHz, calibrationDb, data, this.noise, this.id);
    return { data, count, startUs, sampleRateHz, centerHz, calibrationDb, droppedSamples: 0 };
  }

  private finishRead(read: PendingRead): void {
    this.reads.delete(read);
    try {
      read.resolve(this.capture(read.centerHz, read.startUs, read.count, read.calibrationDb, read.into));
    } catch (e) {
      read.reject(e);
    }
  }

  /** A tune at `now`: reads already complete are handed over, the others are cut short. */
  private interruptReads(now: Micros): void {
    for (const r of [...this.reads]) {
      if (r.event !== undefined) this.scheduler.cancel(r.event);
      r.event = undefined;
      if (r.startUs + (r.count * US_PER_S) / this.capabilities.sampleRateHz <= now) this.finishRead(r);
      else {
        this.reads.delete(r);
        r.reject(new FrontendError('RADIO_RETUNED', `${this.id}: a tune at ${now} us cut short a read of ${r.count} samples`));
      }
    }
  }

  private checkGain(gainDb: number): void {
    const [lo, hi] = this.capabilities.gainRangeDb;
    if (!(gainDb >= lo && gainDb <= hi)) {
      throw new FrontendError('RADIO_GAIN_RANGE', `${this.id}: gain ${gainDb} dB is outside the range [${lo}, ${hi}] dB`);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): FrontendError {
    return new FrontendError('RADIO_CLOSED', `${this.id}: the front-end is closed`);
  }

  private notTuned(): FrontendError {
    return new FrontendError('RADIO_NOT_TUNED', `${this.id}: tune before reading samples or sending`);
  }
}
