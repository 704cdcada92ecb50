/**
 * Transmit pulse shaping for the DSSS PHY: the chips, impulses at 11 Mchip/s,
 * through a raised-cosine pulse, windowed, at a whole number of samples per
 * chip.
 *
 * Why this pulse. The transmit spectrum mask (IEEE 802.11-2016 16.3.7.5) asks
 * for -30 dBr beyond 11 MHz from the centre and -50 dBr beyond 22 MHz, dBr
 * relative to the spectrum's peak. Rectangular chips have a sinc^2 spectrum
 * whose first side lobe, at 16.5 MHz, is only -13 dB: far outside it. A
 * raised cosine of roll-off 0.5 at T = 1/11 us has no energy beyond
 * (1 + 0.5) / 2T = 8.25 MHz at all, so the mask is met with room to spare by
 * the ideal pulse; what reaches past 8.25 MHz comes only from cutting the
 * pulse to a finite length, and a Kaiser window (beta 6) over +-4 chips keeps
 * that about 100 dB down (test/radio/dsss-shaping.test.ts measures it
 * against the mask). The raised cosine is a Nyquist pulse: it is zero at
 * every other chip's centre, so the samples at the chip centres (all of them
 * at 1 sample per chip, every other one at 2) are the chips exactly, with no
 * inter-chip interference, and the window does not move those zeros. (A root
 * raised cosine would need its twin in the receiver to be free of
 * interference; the receiver here despreads without a matched filter.)
 * 8.25 MHz also leaves a front-end at 20 Msample/s a transition band to
 * 11.75 MHz for the resampler (resample.ts), where a Gaussian pulse narrow
 * enough for the mask would smear each chip into its neighbours.
 *
 * The output is scaled to unit mean power for random chips, as the
 * rectangular chips are: sum over the taps of h^2 / samples per chip = 1.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { PolyphaseFir, type FirKernel } from './polyphase.js';
import { DSSS_PASSBAND_HZ, kaiserWindow, rateRatio } from './resample.js';

/** The raised cosine's roll-off. */
export const SHAPING_ROLLOFF = 0.5;
/** The pulse reaches this many chips either side of its centre. */
export const SHAPING_HALF_SPAN_CHIPS = 4;
/** The Kaiser window's beta over the pulse. */
export const SHAPING_WINDOW_BETA = 6;

/** The raised-cosine pulse at time t, in chips, with roll-off `beta`: 1 at 0, 0 at every other whole chip. */
export function raisedCosine(t: number, beta: number): number {
  if (t === 0) return 1;
  // Exactly 0 at the other chips (sin(pi k) is not, in floating point).
  if (Number.isInteger(t)) return 0;
  const x = Math.PI * t;
  const sinc = Math.sin(x) / x;
  const d = 1 - (2 * beta * t) ** 2;
  // At t = +-1 / (2 beta) the ratio tends to pi / 4 times the sinc.
  if (Math.abs(d) < 1e-12) return (Math.PI / 4) * sinc;
  return (sinc * Math.cos(beta * x)) / d;
}

/** The shaping filter's taps at `samplesPerChip`: the windowed pulse, scaled to unit output power. */
export function shapingTaps(samplesPerChip: number): Float64Array {
  if (!Number.isSafeInteger(samplesPerChip) || samplesPerChip < 1 || samplesPerChip > 1024) {
    throw new RangeArgumentError('samplesPerChip', samplesPerChip, 'an integer in [1, 1024]');
  }
  const half = SHAPING_HALF_SPAN_CHIPS * samplesPerChip;
  const w = kaiserWindow(2 * half + 1, SHAPING_WINDOW_BETA);
  const h = new Float64Array(2 * half + 1);
  let power = 0;
  for (let i = 0; i <= 2 * half; i++) {
    h[i] = w[i]! * raisedCosine((i - half) / samplesPerChip, SHAPING_ROLLOFF);
    power += h[i]! * h[i]!;
  }
  const g = 1 / Math.sqrt(power / samplesPerChip);
  for (let i = 0; i < h.length; i++) h[i] = h[i]! * g;
  return h;
}

/**
 * A streaming shaping filter: chips in (complex, one per chip), samples out
 * at `samplesPerChip`, output sample k at chip time k / samplesPerChip (the
 * pulse's centre on its chip: chip c's centre is output c * samplesPerChip).
 */
export class ChipShaper {
  readonly samplesPerChip: number;
  readonly fir: PolyphaseFir;

  constructor(samplesPerChip: number, opts: { kernel?: FirKernel; blockSamples?: number } = {}) {
    const taps = shapingTaps(samplesPerChip);
    this.samplesPerChip = samplesPerChip;
    this.fir = new PolyphaseFir({ up: samplesPerChip, down: 1, taps, delay: (taps.length - 1) / 2, kernel: opts.kernel, blockSamples: opts.blockSamples });
  }

  get kernel(): 'wasm' | 'ts' {
    return this.fir.kernel;
  }

  outputsFor(chips: number): number {
    return this.fir.outputsFor(chips);
  }

  /** The stream's next chips (interleaved I, Q) into `out`; returns the complex samples written. */
  process(chips: Float32Array, out: Float32Array): number {
    return this.fir.process(chips, out);
  }

  reset(): void {
    this.fir.reset();
  }

  /**
   * One burst: the chips with the pulse's whole reach either side, from a
   * fresh state. Chip 0's centre is at sample SHAPING_HALF_SPAN_CHIPS *
   * samplesPerChip and the result is (chips + 2 SHAPING_HALF_SPAN_CHIPS) *
   * samplesPerChip samples long. Allocates its result.
   */
  shapeBurst(chips: Float32Array): Float32Array {
    const lead = SHAPING_HALF_SPAN_CHIPS;
    const padded = new Float32Array(chips.length + 4 * lead);
    padded.set(chips, 2 * lead);
    // filterAll ends at the last (zero) chip's centre; the samples after it, up to the next chip, are zeros too.
    const out = new Float32Array(padded.length * this.samplesPerChip);
    out.set(this.fir.filterAll(padded));
    return out;
  }
}

/** The chip rate, Hz. */
const CHIP_RATE_HZ = 11e6;

/**
 * A shaper straight from the chips (11 Mchip/s, one complex sample each) to
 * `outRateHz`, a front-end's rate: the pulse sampled at up times the chip
 * rate (up / down = outRateHz / 11 MHz in lowest terms) is the polyphase
 * filter's prototype. The pulse is band-limited to 8.25 MHz, so it is its own
 * anti-image filter, and one filter of about 12 taps per phase does what
 * shaping to 22 Msample/s and resampling do with two (about 12 and 28 at
 * 20 Msample/s). Output k is at chip time k * down / up.
 */
export function shaperToRate(outRateHz: number, opts: { kernel?: FirKernel; blockSamples?: number } = {}): PolyphaseFir {
  if (!(Number.isSafeInteger(outRateHz) && outRateHz > 2 * DSSS_PASSBAND_HZ)) {
    throw new RangeArgumentError('outRateHz', outRateHz, `a whole rate in Hz above ${(2 * DSSS_PASSBAND_HZ) / 1e6} MHz (twice the shaped band)`);
  }
  const { up, down } = rateRatio(CHIP_RATE_HZ, outRateHz);
  const taps = shapingTaps(up);
  return new PolyphaseFir({ up, down, taps, delay: (taps.length - 1) / 2, kernel: opts.kernel, blockSamples: opts.blockSamples });
}
