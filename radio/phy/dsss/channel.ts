import { RangeArgumentError } from '../../../src/core/errors.js';

/**
 * What the air and two radios do to a signal that the PHY is measured
 * against (`cogmesh phy tx`, the tests, `npm run bench:phy-per`).
 */

/**
 * Turns `iq` (interleaved I, Q at `rateHz`) in place by a carrier frequency
 * offset of `cfoHz`: sample n times e^(2 pi j cfoHz (n0 + n) / rateHz), as a
 * receiver tuned `cfoHz` below the transmitter sees it; `n0` is the index of
 * the block's first sample in the stream, so that blocks turned one after
 * another keep one phase. Two 802.11b radios may be +-25 ppm off each (802.11-2016
 * 16.3.7.5), +-60 kHz at 2.4 GHz.
 */
export function turnCarrier(iq: Float32Array, cfoHz: number, rateHz: number, n0 = 0): void {
  if (!Number.isFinite(cfoHz)) throw new RangeArgumentError('cfoHz', cfoHz, 'a finite frequency');
  if (!(rateHz > 0 && Number.isFinite(rateHz))) throw new RangeArgumentError('rateHz', rateHz, 'a finite rate > 0');
  if (cfoHz === 0) return;
  const w = (2 * Math.PI * cfoHz) / rateHz;
  for (let n = 0; n < iq.length >>> 1; n++) {
    // The angle from the stream's start each time, so that rounding does not pile up over long blocks.
    const a = w * (n0 + n);
    const c = Math.cos(a);
    const s = Math.sin(a);
    const re = iq[2 * n]!;
    const im = iq[2 * n + 1]!;
    iq[2 * n] = re * c - im * s;
    iq[2 * n + 1] = re * s + im * c;
  }
}

/**
 * The stream `iq` (interleaved I, Q) as a receiver whose sample clock runs
 * `ppm` parts per million fast against the transmitter's samples it: output
 * sample n is the input at time `start` + n / (1 + ppm 1e-6), in input
 * samples (`start` may be in (-1, 0) for a block that carries on from
 * another, its first output sample falling between the blocks), so a positive `ppm` stretches the stream (more samples for the
 * same signal) and a negative one shrinks it. The input is taken as the
 * samples of a band-limited signal (what a DAC's reconstruction filter
 * makes of them) and interpolated by the Blackman-windowed sinc of
 * fractional.ts with `halfLength` taps a side (16 by default: flat within
 * 0.01 dB to 0.8 of Nyquist, 0.7 dB down at 0.9, aliases 58 dB down; the
 * closed form here agrees with the kernel to float precision); output samples on input samples (fraction 0) are copied exactly,
 * and `ppm` 0 with `start` 0 returns a copy. Samples before the input's
 * first and after its last are zero. Deterministic: the position of each
 * output sample is computed from n, not accumulated. Two 802.11b radios'
 * clocks may be +-25 ppm off each (802.11-2016 16.3.7.5).
 */
export function driftSampleClock(iq: Float32Array, ppm: number, start = 0, halfLength = 16): Float32Array {
  if (!(Number.isFinite(ppm) && Math.abs(ppm) <= 1000)) throw new RangeArgumentError('ppm', ppm, 'a clock offset in [-1000, 1000] ppm');
  if (!(Number.isFinite(start) && start > -1)) throw new RangeArgumentError('start', start, 'a finite position > -1');
  if (!(Number.isInteger(halfLength) && halfLength >= 2 && halfLength <= 64)) {
    throw new RangeArgumentError('halfLength', halfLength, 'an integer number of taps a side in [2, 64]');
  }
  const n = iq.length >>> 1;
  const step = 1 / (1 + ppm * 1e-6);
  const count = n === 0 || start > n - 1 ? 0 : Math.floor((n - 1 - start) / step) + 1;
  const out = new Float32Array(2 * count);
  const taps = 2 * halfLength;
  // cos and sin of pi k / L and (-1)^k for the taps' offsets k = j - L + 1.
  const cosK = new Float64Array(taps);
  const sinK = new Float64Array(taps);
  const sgnK = new Float64Array(taps);
  for (let j = 0; j < taps; j++) {
    const k = j - halfLength + 1;
    cosK[j] = Math.cos((Math.PI * k) / halfLength);
    sinK[j] = Math.sin((Math.PI * k) / halfLength);
    sgnK[j] = k % 2 === 0 ? 1 : -1;
  }
  for (let m = 0; m < count; m++) {
    const t = start + m * step;
    const i = Math.floor(t);
    const mu = t - i;
    if (mu === 0) {
      out[2 * m] = iq[2 * i]!;
      out[2 * m + 1] = iq[2 * i + 1]!;
      continue;
    }
    fractionalSample(iq, n, i, mu, halfLength, cosK, sinK, sgnK, out, 2 * m);
  }
  return out;
}

/**
 * out[at], out[at + 1] = the windowed-sinc interpolation of `iq` (n complex
 * samples, zero beyond) at i + mu, 0 < mu < 1: the kernel of fractional.ts
 * evaluated in closed form. sin(pi (mu - k)) is (-1)^k sin(pi mu) and the
 * window's cosines follow from cos(pi (mu - k) / L) by the angle sum and
 * double angle formulas, so each output sample costs three sines and
 * cosines, not three per tap.
 */
function fractionalSample(
  iq: Float32Array,
  n: number,
  i: number,
  mu: number,
  halfLength: number,
  cosK: Float64Array,
  sinK: Float64Array,
  sgnK: Float64Array,
  out: Float32Array,
  at: number,
): void {
  const sinPiMu = Math.sin(Math.PI * mu);
  const cm = Math.cos((Math.PI * mu) / halfLength);
  const sm = Math.sin((Math.PI * mu) / halfLength);
  let re = 0;
  let im = 0;
  let sum = 0;
  for (let j = 0; j < 2 * halfLength; j++) {
    const k = j - halfLength + 1;
    const c1 = cm * cosK[j]! + sm * sinK[j]!;
    const w = ((sgnK[j]! * sinPiMu) / (Math.PI * (mu - k))) * (0.42 + 0.5 * c1 + 0.08 * (2 * c1 * c1 - 1));
    sum += w;
    const s = i + k;
    if (s < 0 || s >= n) continue;
    re += w * iq[2 * s]!;
    im += w * iq[2 * s + 1]!;
  }
  out[at] = re / sum;
  out[at + 1] = im / sum;
}
