import { RangeArgumentError } from '../core/errors.js';
import { ComplexFft, isPowerOfTwo } from '../core/fft.js';

/**
 * The power spectral density of a channel, for the spectrum monitor: where in
 * the channel the energy the detector counts lies (a narrow primary user, a
 * wide OFDM burst, a spur of the front-end itself), which the detector's one
 * mean power per window cannot tell apart.
 *
 * Welch's method (P. D. Welch, "The use of fast Fourier transform for the
 * estimation of power spectra", IEEE Trans. Audio Electroacoust. AU-15, 1967):
 * the block is cut into segments of `bins` samples that overlap by half, each
 * segment is windowed and transformed, and the squared magnitudes are
 * averaged. One periodogram of the whole block would have as many bins as
 * samples, each as noisy as a single exponential draw (its standard deviation
 * equals its mean, whatever the block's length); averaging K segments divides
 * the variance by about K, at the cost of a coarser resolution (fs / bins).
 *
 * The window is Hann's, periodic (w[n] = sin^2(pi n / bins)): its side lobes
 * fall fast, so a strong primary user does not bury a weak one a few bins
 * away, as a rectangular window's -13 dB side lobes would. Its equivalent
 * noise bandwidth is 1.5 bins (bins * sum w^2 / (sum w)^2 = bins * (3 bins /
 * 8) / (bins / 2)^2): the estimate divides by fs * sum w^2, so noise reads
 * at its true density, and a tone centred on a bin reads its power over 1.5
 * bins, 10*log10(1.5 fs / bins) dB below its power in dBm.
 *
 * The overlap is 50 %: the periodic Hann windows of segments half a segment
 * apart add up to a constant, so every sample of the block counts (in power,
 * w^2, each sample's weight stays within a factor of two of any other's,
 * except in the first and last half segments), and two neighbouring segments'
 * periodograms of white noise correlate by only (sum w[n] w[n + bins/2])^2 /
 * (sum w^2)^2 = 1/9. So the variance of K overlapping segments is about
 * (1 + 2/9) / K of a single periodogram's, where the same samples cut
 * without overlap give about K / 2 segments and a variance of 2 / K: 1.6
 * times the averaging from the same samples, for twice the transforms
 * (Welch 1967 weighs overlap the same way).
 */

/** The estimator's shape: its resolution and how many segments it averages at most. */
export interface PsdParams {
  /** Points per segment (FFT size), a power of two in [64, 1024]: the resolution is sampleRateHz / bins. */
  bins: number;
  /** Segments averaged at most per estimate, an integer in [1, 256]; samples beyond them are not read. */
  maxSegments: number;
}

/**
 * The value written for a bin with no power (or less than this), dBm/Hz:
 * out holds finite numbers only, so a page or a mean over bins never meets
 * -Infinity. Thermal noise at 290 K is -174 dBm/Hz, so no real
 * measurement comes near it.
 */
export const PSD_FLOOR_DBM_PER_HZ = -300;

export const PSD_MIN_BINS = 64;
export const PSD_MAX_BINS = 1024;
export const PSD_MAX_SEGMENTS = 256;

/**
 * The forward transform a segment goes through: ComplexFft's, unless a bench
 * puts another library's behind the same method to compare them on the whole
 * estimate (bench/psd.ts).
 */
export type SegmentFft = Pick<ComplexFft, 'size' | 'forward'>;

/**
 * Welch's PSD over interleaved fc32 IQ blocks (see the module comment). All
 * work arrays are made here, so `estimate` allocates nothing: the monitor
 * calls it once per channel visit.
 */
export class WelchPsd {
  readonly bins: number;
  readonly maxSegments: number;
  private readonly fft: SegmentFft;
  /** The periodic Hann window. */
  private readonly window: Float64Array;
  /** Sum of w^2 over the window (3 bins / 8, computed rather than assumed). */
  private readonly windowPower: number;
  /** One windowed segment, interleaved (re, im). */
  private readonly segment: Float64Array;
  /** Its transform. */
  private readonly spectrum: Float64Array;
  /** Sum of |X[m]|^2 over the segments, in FFT order. */
  private readonly power: Float64Array;

  constructor(p: PsdParams, fft?: SegmentFft) {
    if (!isPowerOfTwo(p.bins) || p.bins < PSD_MIN_BINS || p.bins > PSD_MAX_BINS) {
      throw new RangeArgumentError('bins', p.bins, `a power of two in [${PSD_MIN_BINS}, ${PSD_MAX_BINS}]`);
    }
    if (!Number.isSafeInteger(p.maxSegments) || p.maxSegments < 1 || p.maxSegments > PSD_MAX_SEGMENTS) {
      throw new RangeArgumentError('maxSegments', p.maxSegments, `an integer in [1, ${PSD_MAX_SEGMENTS}]`);
    }
    this.bins = p.bins;
    this.maxSegments = p.maxSegments;
    if (fft !== undefined && fft.size !== p.bins) throw new RangeArgumentError('fft size', fft.size, `${p.bins} (bins)`);
    this.fft = fft ?? new ComplexFft(p.bins);
    this.window = new Float64Array(p.bins);
    let sumSq = 0;
    for (let n = 0; n < p.bins; n++) {
      const s = Math.sin((Math.PI * n) / p.bins);
      const w = s * s;
      this.window[n] = w;
      sumSq += w * w;
    }
    this.windowPower = sumSq;
    this.segment = new Float64Array(2 * p.bins);
    this.spectrum = new Float64Array(2 * p.bins);
    this.power = new Float64Array(p.bins);
  }

  /** Complex samples that `segments` overlapping segments span. */
  samplesFor(segments: number): number {
    if (!Number.isSafeInteger(segments) || segments < 1 || segments > this.maxSegments) {
      throw new RangeArgumentError('segments', segments, `an integer in [1, ${this.maxSegments}]`);
    }
    return ((segments - 1) * this.bins) / 2 + this.bins;
  }

  /** The samples one estimate reads at most: a block longer than this has a tail that is not read. */
  get maxSamples(): number {
    return this.samplesFor(this.maxSegments);
  }

  /** Segments a block of `count` complex samples gives (0 when it is shorter than one segment). */
  segmentsIn(count: number): number {
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new RangeArgumentError('count', count, 'a non-negative integer of complex samples');
    }
    if (count < this.bins) return 0;
    return Math.min(this.maxSegments, Math.floor((count - this.bins) / (this.bins >>> 1)) + 1);
  }

  /**
   * Writes the PSD of the complex samples iq[2 * offset ..] (at most `count`
   * of them, from the first) into out[0 .. bins) in dBm/Hz, lowest frequency
   * first: out[i] is at centre + (i - bins / 2) * sampleRateHz / bins, so
   * out[bins / 2] is the centre (DC) and out[0] the band edge at -fs / 2.
   * White noise of mean |x|^2 = P reads 10*log10(P / sampleRateHz) +
   * calibrationDb in every bin, and the bins add up to the mean power
   * (Parseval): sum over i of 10^(out[i] / 10) * sampleRateHz / bins is the
   * power in mW of the samples read, each weighted by its window. Returns the
   * segments averaged; 0, with `out` untouched, when count < bins. Samples
   * after the last whole segment are not read.
   */
  estimate(iq: Float32Array, offset: number, count: number, sampleRateHz: number, calibrationDb: number, out: Float32Array): number {
    if (!Number.isSafeInteger(offset) || offset < 0 || 2 * offset > iq.length) {
      throw new RangeArgumentError('offset', offset, `an integer in [0, ${iq.length >>> 1}] (complex samples in iq)`);
    }
    if (!Number.isSafeInteger(count) || count < 0 || 2 * (offset + count) > iq.length) {
      throw new RangeArgumentError('count', count, `an integer in [0, ${(iq.length >>> 1) - offset}] (complex samples in iq after offset)`);
    }
    if (!Number.isFinite(sampleRateHz) || sampleRateHz <= 0) {
      throw new RangeArgumentError('sampleRateHz', sampleRateHz, 'a positive number of samples per second');
    }
    if (!Number.isFinite(calibrationDb)) throw new RangeArgumentError('calibrationDb', calibrationDb, 'a finite number of dB');
    if (out.length < this.bins) throw new RangeArgumentError('out length', out.length, `at least ${this.bins} (bins)`);

    const segments = this.segmentsIn(count);
    if (segments === 0) return 0;
    this.accumulate(iq, offset, segments);
    this.writeDb(segments * sampleRateHz * this.windowPower, calibrationDb, out);
    return segments;
  }

  // The two loops are methods of their own, each ending with its loop. V8
  // compiles the loop of a long first call while it runs (on-stack
  // replacement), before the code after the loop has ever run; with that
  // code in the same function, each of the next twenty-odd calls left the
  // compiled code there and finished in the interpreter (Node 20,
  // --trace-deopt).

  /** power[m] = sum over the segments of |X[m]|^2, FFT order. */
  private accumulate(iq: Float32Array, offset: number, segments: number): void {
    const n = this.bins;
    const hop = n >>> 1;
    const w = this.window;
    const seg = this.segment;
    const spec = this.spectrum;
    const pow = this.power;
    pow.fill(0);
    for (let s = 0; s < segments; s++) {
      const base = 2 * (offset + s * hop);
      for (let k = 0; k < n; k++) {
        const wk = w[k]!;
        seg[2 * k] = iq[base + 2 * k]! * wk;
        seg[2 * k + 1] = iq[base + 2 * k + 1]! * wk;
      }
      this.fft.forward(seg, spec);
      for (let m = 0; m < n; m++) {
        const re = spec[2 * m]!;
        const im = spec[2 * m + 1]!;
        pow[m] = pow[m]! + re * re + im * im;
      }
    }
  }

  /**
   * out[i] = 10 log10(power / divisor) + calibration in dBm/Hz, where divisor
   * is segments * fs * sum w^2, the FFT's upper half (negative frequencies)
   * first; at least the floor.
   */
  private writeDb(divisor: number, calibrationDb: number, out: Float32Array): void {
    const n = this.bins;
    const half = n >>> 1;
    const pow = this.power;
    const offsetDb = calibrationDb - 10 * Math.log10(divisor);
    for (let i = 0; i < n; i++) {
      const p = pow[(i + half) & (n - 1)]!;
      const db = p > 0 ? 10 * Math.log10(p) + offsetDb : PSD_FLOOR_DBM_PER_HZ;
      out[i] = db > PSD_FLOOR_DBM_PER_HZ ? db : PSD_FLOOR_DBM_PER_HZ;
    }
  }
}
