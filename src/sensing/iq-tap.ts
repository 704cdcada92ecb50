import type { IqBlock } from '../../radio/frontend.js';
import { RangeArgumentError } from '../core/errors.js';
import { TokenBucket } from '../core/token-bucket.js';
import type { Micros } from '../core/time.js';
import { WelchPsd, type PsdParams } from './psd.js';
import type { Visit } from './schedule.js';

/**
 * What else reads the IQ the energy detector reads while sensing: the
 * monitor's spectrum (PsdTap) and its recordings. A tap sees every block of
 * a visit as the detector takes it, then the visit's end. A block's buffer
 * is the detector's own and is reused for the next block: a tap that keeps
 * samples copies them during the call, and takes little time doing so (the
 * detector waits for it).
 */
export interface IqTap {
  block(visit: Visit, block: IqBlock): void;
  /** The visit is over: all its blocks have been offered. */
  visitEnd(visit: Visit, now: Micros): void;
}

/** Several taps as one, in order. */
export function teeTaps(taps: readonly IqTap[]): IqTap {
  return {
    block: (v, b) => taps.forEach((t) => t.block(v, b)),
    visitEnd: (v, now) => taps.forEach((t) => t.visitEnd(v, now)),
  };
}

/** The PSD of one visit, as PsdTap hands it out (router/view.ts's PsdView, without the dependency). */
export interface VisitPsd {
  round: number;
  channel: number;
  centerHz: number;
  sampleRateHz: number;
  startUs: Micros;
  durationUs: Micros;
  segments: number;
  dbmPerHz: Float32Array;
}

export interface PsdTapParams extends PsdParams {
  /** Most estimates a second (router clock): the visits beyond it are skipped, and counted. */
  maxPerS: number;
}

export interface PsdTapCounters {
  /** PSDs estimated and handed out. */
  estimates: number;
  /** Visits skipped: the rate bound, the estimate before still running, too few samples. */
  skippedRate: number;
  skippedBusy: number;
  tooShort: number;
}

/**
 * The monitor's spectrum: a Welch PSD of each visit (psd.ts), at a bounded
 * rate and off the detector's path. During a visit the tap only copies the
 * first `maxSamples` samples of its first contiguous run (one front-end
 * setting: the same centre, rate and calibration); at the visit's end it
 * hands the estimate to `defer` (the host's next turn of the event loop in
 * real time), so the detector never waits for an FFT. One estimate runs at a
 * time: a visit that ends while the one before is still pending is skipped.
 */
export class PsdTap implements IqTap {
  readonly counters: PsdTapCounters = { estimates: 0, skippedRate: 0, skippedBusy: 0, tooShort: 0 };
  private readonly psd: WelchPsd;
  private readonly bucket: TokenBucket;
  /** Samples of the visit in progress, and the one waiting for its estimate. */
  private fill: Float32Array;
  private spare: Float32Array;
  private count = 0;
  private first: IqBlock | undefined;
  /** The sample time just after the last copied block: a later block that does not start there ends the run. */
  private nextUs = 0;
  private runOver = false;
  private pending = false;

  constructor(
    params: PsdTapParams,
    private readonly deps: { now: Micros; defer: (fn: () => void) => void; emit: (p: VisitPsd) => void },
  ) {
    if (!(Number.isFinite(params.maxPerS) && params.maxPerS > 0)) throw new RangeArgumentError('maxPerS', params.maxPerS, 'a finite number > 0');
    this.psd = new WelchPsd(params);
    this.bucket = new TokenBucket(params.maxPerS, Math.max(1, params.maxPerS), deps.now);
    this.fill = new Float32Array(2 * this.psd.maxSamples);
    this.spare = new Float32Array(2 * this.psd.maxSamples);
  }

  block(_visit: Visit, b: IqBlock): void {
    const max = this.psd.maxSamples;
    if (this.runOver || this.count >= max || b.count === 0) return;
    const f = this.first;
    if (f === undefined) {
      this.first = { ...b, data: this.fill, count: 0 };
    } else if (
      b.centerHz !== f.centerHz ||
      b.sampleRateHz !== f.sampleRateHz ||
      b.calibrationDb !== f.calibrationDb ||
      b.droppedSamples > 0 ||
      Math.abs(b.startUs - this.nextUs) > 1e6 / b.sampleRateHz
    ) {
      // Another setting, or a gap: the run the estimate reads is over.
      this.runOver = true;
      return;
    }
    const n = Math.min(b.count, max - this.count);
    this.fill.set(b.data.subarray(0, 2 * n), 2 * this.count);
    this.count += n;
    this.nextUs = b.startUs + (b.count * 1e6) / b.sampleRateHz;
  }

  visitEnd(v: Visit, now: Micros): void {
    const f = this.first;
    const count = this.count;
    this.first = undefined;
    this.count = 0;
    this.runOver = false;
    if (f === undefined || count < this.psd.bins) {
      if (f !== undefined) this.counters.tooShort++;
      return;
    }
    if (this.pending) {
      this.counters.skippedBusy++;
      return;
    }
    if (!this.bucket.take(now)) {
      this.counters.skippedRate++;
      return;
    }
    // The samples go to the spare buffer's place: the next visit fills the other one meanwhile.
    const samples = this.fill;
    this.fill = this.spare;
    this.spare = samples;
    this.pending = true;
    this.deps.defer(() => {
      this.pending = false;
      const out = new Float32Array(this.psd.bins);
      const segments = this.psd.estimate(samples, 0, count, f.sampleRateHz, f.calibrationDb, out);
      const used = this.psd.samplesFor(segments);
      this.counters.estimates++;
      this.deps.emit({
        round: v.round,
        channel: v.channel,
        centerHz: f.centerHz,
        sampleRateHz: f.sampleRateHz,
        startUs: Math.round(f.startUs),
        durationUs: Math.round((used * 1e6) / f.sampleRateHz),
        segments,
        dbmPerHz: out,
      });
    });
  }
}
