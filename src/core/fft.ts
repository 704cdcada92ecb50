import FFT from 'fft.js';
import { RangeArgumentError } from './errors.js';

/**
 * A complex FFT of one power-of-two size over interleaved (re, im) doubles:
 * element 2k is the real part of point k, 2k + 1 its imaginary part. The
 * forward transform is X[m] = sum_k x[k] e^(-2 pi i k m / N), unscaled; the
 * inverse is the forward's exact inverse (scaled by 1 / N). Bin m is the
 * frequency m * fs / N for m < N / 2 and (m - N) * fs / N above.
 *
 * The transform is fft.js (radix-4, plain JavaScript, synchronous). PFFFT's
 * WebAssembly SIMD build is faster per transform (2x at 256 points, with the
 * copies in and out of its heap), but on the monitor's whole Welch estimate
 * only 1.4x at its default 256 bins and 1.75x at 1024 (`npm run bench:psd`),
 * for an asynchronous start-up and a heap to manage; at one estimate per
 * channel visit that is not worth it. This class is the one place that names
 * the library, so that another can take its place behind the same methods.
 */
export class ComplexFft {
  private readonly fft: FFT;

  constructor(readonly size: number) {
    if (!isPowerOfTwo(size) || size < 4) throw new RangeArgumentError('fft size', size, 'a power of two >= 4');
    this.fft = new FFT(size);
  }

  /** X = FFT(x); `input` and `out` are 2 * size long and distinct. */
  forward(input: Float64Array, out: Float64Array): void {
    this.check(input, out);
    this.fft.transform(out, input);
  }

  /** x = IFFT(X), scaled by 1 / size; `input` and `out` are 2 * size long and distinct. */
  inverse(input: Float64Array, out: Float64Array): void {
    this.check(input, out);
    this.fft.inverseTransform(out, input);
  }

  private check(input: Float64Array, out: Float64Array): void {
    if (input === out) throw new RangeArgumentError('fft output', 'the input array', 'an array other than the input');
    const n = 2 * this.size;
    if (input.length < n) throw new RangeArgumentError('fft input length', input.length, `at least ${n}`);
    if (out.length < n) throw new RangeArgumentError('fft output length', out.length, `at least ${n}`);
  }
}

export function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;
}
