/**
 * A rational resampler for complex baseband: from `inRateHz` to `outRateHz`
 * by up / down = outRateHz / inRateHz in lowest terms, with a Kaiser-windowed
 * sinc low-pass at up times the input rate, run as a streaming polyphase
 * filter (polyphase.ts).
 *
 * The low-pass (J. F. Kaiser, "Nonrecursive digital filter design using the
 * I0-sinh window function", 1974; Oppenheim & Schafer, Discrete-Time Signal
 * Processing, 3rd ed., 7.6): passband to `passbandHz`, stopband from
 * min(inRateHz, outRateHz) - passbandHz, attenuation `stopbandDb`. The
 * stopband begins where anything above it would fold back (on decimating) or
 * where the first image begins (on interpolating) into the passband, not at
 * half the lower rate: what lies between passband and stopband may alias, but
 * only into the transition band, never onto the signal, and the filter is
 * about half as long as one whose stopband starts at the lower Nyquist. The
 * window's ripple is the same in both bands: with A = stopbandDb the passband
 * ripple is within +-20 log10(1 + 10^(-A/20)) dB (0.0027 dB at 70 dB). The
 * length is Kaiser's estimate (A - 8) / (2.285 * 2 pi * transition / rate) + 1,
 * made odd so that the centre falls on a tap and the output is not moved in
 * time (polyphase.ts); beta = 0.1102 (A - 8.7) for A > 50.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { PolyphaseFir, type FirKernel } from './polyphase.js';

/** The DSSS signal's band, shaped (shaping.ts): a raised cosine of roll-off 0.5 at 11 Mchip/s ends at 8.25 MHz. */
export const DSSS_PASSBAND_HZ = 8.25e6;
/** The resampler's default stopband attenuation, dB. */
export const DEFAULT_STOPBAND_DB = 70;

/** The zeroth-order modified Bessel function of the first kind, by its series. */
export function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 200; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/** Kaiser's beta for a stopband attenuation of `db`. */
export function kaiserBeta(db: number): number {
  if (db > 50) return 0.1102 * (db - 8.7);
  if (db >= 21) return 0.5842 * (db - 21) ** 0.4 + 0.07886 * (db - 21);
  return 0;
}

/** The Kaiser window of `length` taps and `beta`, symmetric. */
export function kaiserWindow(length: number, beta: number): Float64Array {
  const w = new Float64Array(length);
  const c = (length - 1) / 2;
  const norm = besselI0(beta);
  for (let i = 0; i < length; i++) {
    const r = c === 0 ? 0 : (i - c) / c;
    w[i] = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / norm;
  }
  return w;
}

export interface LowpassDesign {
  /** Passband edge and stopband edge, as fractions of the sample rate (cycles per sample), 0 < pass < stop <= 0.5. */
  pass: number;
  stop: number;
  stopbandDb: number;
  /** The DC gain. */
  gain: number;
}

/** A linear-phase low-pass, Kaiser-windowed sinc, of odd length (see the module comment). */
export function kaiserLowpass(d: LowpassDesign): Float64Array {
  if (!(d.pass > 0 && d.pass < d.stop && d.stop <= 0.5)) {
    throw new RangeArgumentError('band edges', `${d.pass}, ${d.stop}`, 'a passband edge below the stopband edge, both in (0, 0.5] cycles per sample');
  }
  if (!(d.stopbandDb >= 21 && d.stopbandDb <= 150)) throw new RangeArgumentError('stopbandDb', d.stopbandDb, 'a number of dB in [21, 150]');
  const width = 2 * Math.PI * (d.stop - d.pass);
  let length = Math.ceil((d.stopbandDb - 8) / (2.285 * width)) + 1;
  if (length % 2 === 0) length++;
  if (length > 1 << 20) throw new RangeArgumentError('filter length', length, 'at most 2^20 taps (a wider transition band or less attenuation)');
  const w = kaiserWindow(length, kaiserBeta(d.stopbandDb));
  const fc = (d.pass + d.stop) / 2;
  const c = (length - 1) / 2;
  const h = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const t = i - c;
    h[i] = d.gain * w[i]! * (t === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * t) / (Math.PI * t));
  }
  return h;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** up / down = outRateHz / inRateHz in lowest terms, each at most MAX_RESAMPLE_FACTOR (else RangeArgumentError). */
export function rateRatio(inRateHz: number, outRateHz: number): { up: number; down: number } {
  const g = gcd(inRateHz, outRateHz);
  const up = outRateHz / g;
  const down = inRateHz / g;
  if (up > MAX_RESAMPLE_FACTOR || down > MAX_RESAMPLE_FACTOR) {
    throw new RangeArgumentError(
      'rates',
      `${inRateHz} -> ${outRateHz} Hz`,
      `a ratio up/down in lowest terms with both at most ${MAX_RESAMPLE_FACTOR} (here ${up}/${down})`,
    );
  }
  return { up, down };
}

export interface ResamplerOptions {
  inRateHz: number;
  outRateHz: number;
  /** The band kept, from 0, Hz; default DSSS_PASSBAND_HZ. Both rates must be more than twice it. */
  passbandHz?: number;
  /** Default DEFAULT_STOPBAND_DB. */
  stopbandDb?: number;
  blockSamples?: number;
  kernel?: FirKernel;
}

/** The largest up or down factor taken (a rate ratio that does not reduce below this is refused). */
export const MAX_RESAMPLE_FACTOR = 1024;

/**
 * A streaming rational resampler (see the module comment): `process(input,
 * out)` takes the stream's next samples at inRateHz and writes those at
 * outRateHz that they complete, state carried from call to call.
 */
export class Resampler {
  readonly inRateHz: number;
  readonly outRateHz: number;
  readonly up: number;
  readonly down: number;
  readonly passbandHz: number;
  readonly stopbandHz: number;
  readonly stopbandDb: number;
  /** The prototype low-pass at up * inRateHz, gain up. */
  readonly taps: Float64Array;
  readonly fir: PolyphaseFir;

  constructor(o: ResamplerOptions) {
    for (const [what, v] of [
      ['inRateHz', o.inRateHz],
      ['outRateHz', o.outRateHz],
    ] as const) {
      if (!Number.isSafeInteger(v) || v <= 0) throw new RangeArgumentError(what, v, 'a whole number of samples per second > 0');
    }
    const passbandHz = o.passbandHz ?? DSSS_PASSBAND_HZ;
    const lower = Math.min(o.inRateHz, o.outRateHz);
    if (!(passbandHz > 0 && 2 * passbandHz < lower)) {
      throw new RangeArgumentError('passbandHz', passbandHz, `a band in (0, ${lower / 2}) Hz: both rates must be more than twice the band kept`);
    }
    const { up, down } = rateRatio(o.inRateHz, o.outRateHz);
    this.inRateHz = o.inRateHz;
    this.outRateHz = o.outRateHz;
    this.up = up;
    this.down = down;
    this.passbandHz = passbandHz;
    this.stopbandHz = lower - passbandHz;
    this.stopbandDb = o.stopbandDb ?? DEFAULT_STOPBAND_DB;
    const high = up * o.inRateHz;
    this.taps = kaiserLowpass({ pass: passbandHz / high, stop: this.stopbandHz / high, stopbandDb: this.stopbandDb, gain: up });
    this.fir = new PolyphaseFir({
      up,
      down,
      taps: this.taps,
      delay: (this.taps.length - 1) / 2,
      blockSamples: o.blockSamples,
      kernel: o.kernel,
    });
  }

  get kernel(): 'wasm' | 'ts' {
    return this.fir.kernel;
  }

  /** Outputs `process` gives for `inputs` more samples, exactly. */
  outputsFor(inputs: number): number {
    return this.fir.outputsFor(inputs);
  }

  /** See PolyphaseFir.process: returns the complex samples written to `out`. */
  process(input: Float32Array, out: Float32Array): number {
    return this.fir.process(input, out);
  }

  /** A whole buffer as one stream (PolyphaseFir.filterAll): output k at time k / outRateHz from the first input. */
  resampleAll(input: Float32Array): Float32Array {
    return this.fir.filterAll(input);
  }

  reset(): void {
    this.fir.reset();
  }
}
