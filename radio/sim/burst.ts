import { RangeArgumentError } from '../../src/core/errors.js';
import { ComplexFft } from '../../src/core/fft.js';

/**
 * An IQ burst as a receiver sees it, before its power scaling: the burst's
 * samples moved by the centre difference, limited to the receiver's sampled
 * band and at the receiver's sample rate, interleaved I and Q. Full scale is
 * the burst's own (a tone of mean |x|^2 = 1 wholly in band stays so).
 * Sample m of it is at `startUs + m * 1e6 / rxRateHz`.
 */
export interface BurstView {
  readonly data: Float32Array;
  readonly count: number;
}

/** out[k] = x[k] * w[k] for k < n, complex, with x conjugated when sign is -1; out may be x. */
function multiply(out: Float64Array, x: Float64Array, sign: 1 | -1, w: Float64Array, n: number): void {
  for (let k = 0; k < n; k++) {
    const xr = x[2 * k]!;
    const xi = sign * x[2 * k + 1]!;
    const wr = w[2 * k]!;
    const wi = w[2 * k + 1]!;
    out[2 * k] = xr * wr - xi * wi;
    out[2 * k + 1] = xr * wi + xi * wr;
  }
}

/** Greatest common divisor of two whole numbers >= 0. */
function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** A burst's length with burstView's zero padding: an eighth more, at least 64 samples. */
export function burstPadded(count: number): number {
  return count + Math.max(64, Math.ceil(count / 8));
}

/**
 * The length of burstView's DFT of a burst of `count` samples, in burst
 * samples (the view spans that much time): the padded length rounded up to
 * a whole number of the grid's periods. Rates and offset are whole Hz.
 */
export function burstViewSpan(txRateHz: number, rxRateHz: number, offsetHz: number, count: number): number {
  if (txRateHz === rxRateHz && offsetHz === 0) return count;
  const bins = txRateHz / gcd(gcd(txRateHz, rxRateHz), Math.abs(offsetHz));
  return bins * Math.ceil(burstPadded(count) / bins);
}

/**
 * How a burst sent at `txRateHz`, centred `offsetHz` (its centre minus the
 * receiver's) from a receiver sampling at `rxRateHz`, reaches that receiver:
 *
 * - not at all (undefined) when the burst's band [offset - txRate / 2,
 *   offset + txRate / 2] and the sampled band [-rxRate / 2, rxRate / 2] do
 *   not overlap;
 * - as the burst's own samples when rates are equal and the offset is 0;
 * - otherwise through the frequency domain: a DFT of the burst, zero-padded
 *   by an eighth (at least 64 samples), on a bin grid that divides both
 *   rates and the offset, each bin moved by the offset, the bins that land
 *   outside the sampled band dropped, and an inverse DFT at the receiver's
 *   rate over the same span of time. That is an ideal (brick-wall) filter
 *   and resampler; the filtering is circular over the padded span, so the
 *   ringing of a burst cut at a band edge lands in the padding, and the
 *   view is the padded length. Rates and offset must be whole Hz (sample
 *   rates and channel centres are); the DFT has any length (Bluestein's
 *   algorithm on power-of-two FFTs).
 */
export function burstView(
  data: Float32Array,
  count: number,
  txRateHz: number,
  rxRateHz: number,
  offsetHz: number,
  spectra?: Map<number, Float64Array>,
): BurstView | undefined {
  if (offsetHz - txRateHz / 2 >= rxRateHz / 2 || offsetHz + txRateHz / 2 <= -rxRateHz / 2) return undefined;
  if (txRateHz === rxRateHz && offsetHz === 0) return { data, count };
  for (const [what, v] of [
    ['burst sample rate', txRateHz],
    ['receiver sample rate', rxRateHz],
    ['centre offset', offsetHz],
  ] as const) {
    if (!Number.isSafeInteger(v)) throw new RangeArgumentError(what, v, 'a whole number of Hz (to carry an IQ burst between rates or centres)');
  }
  // Bin width fs / n: a divisor of both rates and the offset, fine enough for the padded burst.
  const n = burstViewSpan(txRateHz, rxRateHz, offsetHz, count);
  const binHz = txRateHz / n;
  const m = Math.round(rxRateHz / binHz);
  const shift = Math.round(offsetHz / binHz);

  // The burst's spectrum on an n-bin grid serves every view on that grid (most centres share one).
  let spectrum = spectra?.get(n);
  if (spectrum === undefined) {
    const x = new Float64Array(2 * n);
    for (let i = 0; i < 2 * count; i++) x[i] = data[i]!;
    spectrum = new Float64Array(2 * n);
    dftOf(n).forward(x, spectrum);
    spectra?.set(n, spectrum);
  }
  // Receiver bin j (frequency j' = j or j - m, |j'| < m / 2) takes burst bin j' - shift, if within the burst's band.
  const y = new Float64Array(2 * m);
  const scale = m / n;
  for (let j = 0; j < m; j++) {
    const f = j < m / 2 ? j : j - m;
    const src = f - shift;
    if (src < -n / 2 || src >= n / 2) continue;
    const b = src < 0 ? src + n : src;
    y[2 * j] = spectrum[2 * b]! * scale;
    y[2 * j + 1] = spectrum[2 * b + 1]! * scale;
  }
  const t = new Float64Array(2 * m);
  dftOf(m).inverse(y, t);
  const out = new Float32Array(2 * m);
  for (let i = 0; i < 2 * m; i++) out[i] = t[i]!;
  return { data: out, count: m };
}

/** DFTs kept by size, the most recently used last: bursts of a kind (ACKs, HELLOs, full frames) repeat their lengths. */
const dftCache = new Map<number, Dft>();
/** Sizes kept: a Bluestein DFT of a 1500-byte frame's burst holds some 13 MB. */
const DFT_CACHE_SIZES = 8;

/** The DFT of `size`, made once while it is in use (its tables and chirp cost several transforms to make). */
function dftOf(size: number): Dft {
  let d = dftCache.get(size);
  if (d !== undefined) dftCache.delete(size);
  else {
    d = new Dft(size);
    if (dftCache.size >= DFT_CACHE_SIZES) dftCache.delete(dftCache.keys().next().value!);
  }
  dftCache.set(size, d);
  return d;
}

/**
 * A DFT of any length n over interleaved (re, im) doubles, with ComplexFft's
 * conventions (forward unscaled, inverse scaled by 1 / n): ComplexFft itself
 * for a power of two, else Bluestein's chirp-z algorithm, which writes the
 * DFT as a convolution and computes it with power-of-two FFTs.
 */
export class Dft {
  private readonly fft: ComplexFft;
  /** Bluestein only: the chirp e^(-i pi k^2 / n), and the FFT of its conjugate's extension. */
  private readonly chirp: Float64Array | undefined;
  private readonly kernel: Float64Array | undefined;
  private readonly a: Float64Array | undefined;
  private readonly b: Float64Array | undefined;

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeArgumentError('dft size', size, 'an integer >= 1');
    const pow2 = size >= 4 && (size & (size - 1)) === 0;
    if (pow2) {
      this.fft = new ComplexFft(size);
      return;
    }
    let l = 4;
    while (l < 2 * size - 1) l *= 2;
    this.fft = new ComplexFft(l);
    const chirp = new Float64Array(2 * size);
    const ext = new Float64Array(2 * l);
    for (let k = 0; k < size; k++) {
      // k^2 mod 2n keeps the angle exact for large k.
      const ang = (-Math.PI * ((k * k) % (2 * size))) / size;
      chirp[2 * k] = Math.cos(ang);
      chirp[2 * k + 1] = Math.sin(ang);
      ext[2 * k] = chirp[2 * k]!;
      ext[2 * k + 1] = -chirp[2 * k + 1]!;
      if (k > 0) {
        ext[2 * (l - k)] = chirp[2 * k]!;
        ext[2 * (l - k) + 1] = -chirp[2 * k + 1]!;
      }
    }
    this.chirp = chirp;
    this.kernel = new Float64Array(2 * l);
    this.fft.forward(ext, this.kernel);
    this.a = new Float64Array(2 * l);
    this.b = new Float64Array(2 * l);
  }

  /** X = DFT(x); `input` and `out` are 2 * size long. */
  forward(input: Float64Array, out: Float64Array): void {
    if (!this.chirp) {
      this.fft.forward(input, out);
      return;
    }
    this.bluestein(input, out, 1);
  }

  /** x = IDFT(X), scaled by 1 / size; `input` and `out` are 2 * size long. */
  inverse(input: Float64Array, out: Float64Array): void {
    if (!this.chirp) {
      this.fft.inverse(input, out);
      return;
    }
    // IDFT(X) = conj(DFT(conj(X))) / n.
    this.bluestein(input, out, -1);
    const s = 1 / this.size;
    for (let i = 0; i < 2 * this.size; i += 2) {
      out[i] = out[i]! * s;
      out[i + 1] = -out[i + 1]! * s;
    }
  }

  /** out = DFT(x), or DFT(conj(x)) with sign -1. */
  private bluestein(input: Float64Array, out: Float64Array, sign: 1 | -1): void {
    const n = this.size;
    const chirp = this.chirp!;
    const kernel = this.kernel!;
    const a = this.a!.fill(0);
    const b = this.b!;
    multiply(a, input, sign, chirp, n);
    this.fft.forward(a, b);
    multiply(b, b, 1, kernel, this.fft.size);
    this.fft.inverse(b, a);
    multiply(out, a, 1, chirp, n);
  }
}
