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

/**
 * The power spectral density of one channel visit (Welch's method over the
 * IQ the detector read), as PsdTap hands it out and the monitor streams it
 * (router/view.ts calls it PsdView).
 */
export interface VisitPsd {
  /** The sensing round of the visit. */
  round: number;
  channel: number;
  /** Centre frequency of the capture, Hz. */
  centerHz: number;
  /** Complex samples per second: the bins span [centerHz - rate / 2, centerHz + rate / 2). */
  sampleRateHz: number;
  /** Time of the first sample the estimate used, and the span of samples it used, µs. */
  startUs: Micros;
  durationUs: Micros;
  /** Segments averaged (Welch), at least 1. */
  segments: number;
  /** dBm/Hz, lowest frequency first: bin i is centred on centerHz + (i - n / 2) * sampleRateHz / n. */
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

/** Visits whose estimates may wait at once: a round's worth of channels, for front-ends that read a whole round in one turn of the event loop. */
const MAX_PENDING = 16;

/**
 * The monitor's spectrum: a Welch PSD of each visit (psd.ts), at a bounded
 * rate and off the detector's path. During a visit the tap only copies the
 * first `maxSamples` samples of its first contiguous run (one front-end
 * setting: the same centre, rate and calibration) into a buffer of its own;
 * at the visit's end it hands the estimate to `defer` (the host's next turn
 * of the event loop in real time), so the detector never waits for an FFT.
 * At most MAX_PENDING estimates wait at once (a front-end that synthesises or
 * reads a whole round before the event loop turns has a round's visits
 * waiting); a visit with no free buffer is skipped, and counted.
 */
export class PsdTap implements IqTap {
  readonly counters: PsdTapCounters = { estimates: 0, skippedRate: 0, skippedBusy: 0, tooShort: 0 };
  private readonly psd: WelchPsd;
  private readonly bucket: TokenBucket;
  /** Buffers free to take a visit's samples; the others hold visits waiting for their estimate. */
  private readonly free: Float32Array[] = [];
  private made = 0;
  /** The visit in progress: its buffer (undefined: none free, or not started), its first block's setting, its samples so far. */
  private fill: Float32Array | undefined;
  private first: IqBlock | undefined;
  private count = 0;
  /** The sample time just after the last copied block: a later block that does not start there ends the run. */
  private nextUs = 0;
  private runOver = false;

  constructor(
    params: PsdTapParams,
    private readonly deps: { now: Micros; defer: (fn: () => void) => void; emit: (p: VisitPsd) => void },
  ) {
    if (!(Number.isFinite(params.maxPerS) && params.maxPerS > 0)) throw new RangeArgumentError('maxPerS', params.maxPerS, 'a finite number > 0');
    this.psd = new WelchPsd(params);
    this.bucket = new TokenBucket(params.maxPerS, Math.max(1, params.maxPerS), deps.now);
  }

  block(_visit: Visit, b: IqBlock): void {
    const max = this.psd.maxSamples;
    if (this.runOver || b.count === 0) return;
    const f = this.first;
    if (f === undefined) {
      this.fill = this.takeBuffer();
      this.first = { ...b, count: 0 };
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
    const buf = this.fill;
    if (buf === undefined || this.count >= max) return;
    const n = Math.min(b.count, max - this.count);
    buf.set(b.data.subarray(0, 2 * n), 2 * this.count);
    this.count += n;
    this.nextUs = b.startUs + (b.count * 1e6) / b.sampleRateHz;
  }

  visitEnd(v: Visit, now: Micros): void {
    const f = this.first;
    const buf = this.fill;
    const count = this.count;
    this.first = undefined;
    this.fill = undefined;
    this.count = 0;
    this.runOver = false;
    if (f === undefined) return;
    if (buf === undefined) {
      this.counters.skippedBusy++;
      return;
    }
    if (count < this.psd.bins || !this.bucket.take(now)) {
      if (count < this.psd.bins) this.counters.tooShort++;
      else this.counters.skippedRate++;
      this.free.push(buf);
      return;
    }
    this.deps.defer(() => {
      const out = new Float32Array(this.psd.bins);
      const segments = this.psd.estimate(buf, 0, count, f.sampleRateHz, f.calibrationDb, out);
      this.free.push(buf);
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

  /** A free buffer for a visit's samples, or undefined when MAX_PENDING visits hold them all. */
  private takeBuffer(): Float32Array | undefined {
    const b = this.free.pop();
    if (b) return b;
    if (this.made >= MAX_PENDING) return undefined;
    this.made++;
    return new Float32Array(2 * this.psd.maxSamples);
  }
}
