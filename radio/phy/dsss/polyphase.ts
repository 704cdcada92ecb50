/**
 * A streaming polyphase FIR for complex interleaved Float32Array: upsample by
 * `up`, filter with a prototype FIR at up times the input rate, keep every
 * `down`-th sample; the work done is only that of the outputs kept (each
 * output is one phase's K taps against the last K inputs). The pulse shaper
 * (shaping.ts: up = samples per chip, down = 1) and the rational resampler
 * (resample.ts) are both this filter with their own prototypes.
 *
 * Time: output k is the filter's value at input time k down / up (in input
 * samples from the stream's first), the prototype's `delay` taken out, so a
 * linear-phase prototype of odd length centred on `delay` moves nothing: a
 * chip that sat on input sample i sits on output sample i up / down. The
 * filter reads `delay / up` inputs ahead; the outputs for the last inputs
 * of a stream come out once that many more (zeros, say) have gone in.
 *
 * State carries across `process` calls (the last K - 1 inputs, the phase),
 * and after construction a call allocates nothing: the input is copied, a
 * block at a time, into a buffer behind those K - 1 inputs. Two kernels run
 * the inner loop, with the same layout and the same order of operations: a
 * plain TypeScript reference in float64, and WebAssembly SIMD in float32
 * (fir-wasm.ts); they agree to float32 rounding. `kernel: 'auto'` takes
 * WebAssembly SIMD when the engine has it and TypeScript otherwise.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { WASM_PAGE, wasmApi, type WasmGlobal } from '../../../src/core/wasm-emit.js';
import { firModule } from './fir-wasm.js';

export type FirKernel = 'auto' | 'wasm' | 'ts';

export interface PolyphaseOptions {
  /** Upsampling factor L, an integer in [1, 4096]. */
  up: number;
  /** Downsampling factor M, an integer in [1, 4096]. */
  down: number;
  /** The prototype filter at up times the input rate (gain included: up for unit gain in the passband). */
  taps: ArrayLike<number>;
  /** Where the prototype's centre is, in taps (its group delay; (length - 1) / 2 for a symmetric one). */
  delay: number;
  /** Input samples copied in per inner run; default 4096. */
  blockSamples?: number;
  /** Default 'auto'. */
  kernel?: FirKernel;
}

interface FirExports {
  run(buf: number, taps: number, out: number, n: number, p: number, avail: number, up: number, down: number, kBytes: number): number;
  n: WasmGlobal;
  p: WasmGlobal;
}

/** Is WebAssembly SIMD there for the FIR kernel? The reason when not. */
export function firWasmUnavailable(): string | undefined {
  const m = firModule();
  return typeof m === 'string' ? m : undefined;
}

export class PolyphaseFir {
  readonly up: number;
  readonly down: number;
  /** Taps per phase (the prototype's length over up, rounded up to a multiple of 4, zero-padded). */
  readonly tapsPerPhase: number;
  readonly delay: number;
  readonly kernel: 'wasm' | 'ts';
  readonly blockSamples: number;
  /** Phase p's taps, last first (they meet the inputs oldest first), each twice: h, h (the SIMD lanes' layout). */
  private readonly taps2: Float32Array;
  /** Phase p's taps, last first, once each (the TypeScript kernel's). */
  private readonly taps1: Float64Array;
  /** K - 1 inputs of history, then a block. */
  private readonly buf: Float32Array;
  /** The WebAssembly kernel's output region (a view of its memory). */
  private readonly outWasm: Float32Array | undefined;
  private readonly wasm: FirExports | undefined;
  private readonly tapsByte: number;
  private readonly bufByte: number;
  private readonly outByte: number;
  /** Index in buf of the newest input the next output reads, and its phase. */
  private n = 0;
  private p = 0;

  constructor(o: PolyphaseOptions) {
    const intIn = (what: string, v: number, lo: number, hi: number): void => {
      if (!Number.isSafeInteger(v) || v < lo || v > hi) throw new RangeArgumentError(what, v, `an integer in [${lo}, ${hi}]`);
    };
    intIn('up', o.up, 1, 4096);
    intIn('down', o.down, 1, 4096);
    intIn('taps length', o.taps.length, 1, 1 << 20);
    intIn('delay', o.delay, 0, o.taps.length - 1);
    const block = o.blockSamples ?? 4096;
    intIn('blockSamples', block, 16, 1 << 20);
    for (let i = 0; i < o.taps.length; i++) {
      if (!Number.isFinite(o.taps[i])) throw new RangeArgumentError(`taps[${i}]`, o.taps[i], 'a finite number');
    }
    const kernel = o.kernel ?? 'auto';
    if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'ts') throw new RangeArgumentError('kernel', kernel, "'auto', 'wasm' or 'ts'");
    const module = kernel === 'ts' ? 'not asked for' : firModule();
    if (kernel === 'wasm' && typeof module === 'string') throw new RangeArgumentError('kernel', kernel, `'ts' or 'auto': ${module}`);
    this.kernel = typeof module === 'string' ? 'ts' : 'wasm';
    this.up = o.up;
    this.down = o.down;
    this.delay = o.delay;
    this.blockSamples = block;
    const K = Math.ceil(Math.ceil(o.taps.length / o.up) / 4) * 4;
    this.tapsPerPhase = K;
    const maxOut = Math.ceil((block * o.up) / o.down) + 2;
    this.tapsByte = 0;
    this.bufByte = align16(8 * o.up * K);
    this.outByte = align16(this.bufByte + 8 * (K - 1 + block));
    const bytes = this.outByte + 8 * maxOut;
    let buffer: ArrayBuffer;
    if (typeof module !== 'string') {
      const api = wasmApi()!;
      const pages = Math.ceil(bytes / WASM_PAGE);
      // initial = maximum: the memory never grows, so views of it stay valid.
      const memory = new api.Memory({ initial: pages, maximum: pages });
      this.wasm = new api.Instance(module, { env: { memory } }).exports as unknown as FirExports;
      buffer = memory.buffer;
      this.outWasm = new Float32Array(buffer, this.outByte, 2 * maxOut);
    } else buffer = new ArrayBuffer(bytes);
    this.taps2 = new Float32Array(buffer, this.tapsByte, 2 * o.up * K);
    this.taps1 = new Float64Array(o.up * K);
    this.buf = new Float32Array(buffer, this.bufByte, 2 * (K - 1 + block));
    for (let p = 0; p < o.up; p++) {
      for (let j = 0; j < K; j++) {
        // Tap p + j up meets input n - j; stored at K - 1 - j.
        const i = p + j * o.up;
        const h = i < o.taps.length ? o.taps[i]! : 0;
        const at = p * K + K - 1 - j;
        this.taps1[at] = h;
        this.taps2[2 * at] = h;
        this.taps2[2 * at + 1] = h;
      }
    }
    this.reset();
  }

  /** Back to the start of a stream: history zeros, output 0 at input time 0. */
  reset(): void {
    this.buf.fill(0);
    this.n = this.tapsPerPhase - 1 + Math.floor(this.delay / this.up);
    this.p = this.delay % this.up;
  }

  /** Exactly how many outputs `process` gives for `inputs` more complex samples, from the present state. */
  outputsFor(inputs: number): number {
    if (!Number.isSafeInteger(inputs) || inputs < 0) throw new RangeArgumentError('inputs', inputs, 'a non-negative integer of complex samples');
    // Outputs k >= 0 with n + floor((p + k down) / up) < K - 1 + inputs.
    const r = this.tapsPerPhase - 1 + inputs - this.n;
    return r <= 0 ? 0 : Math.ceil((r * this.up - this.p) / this.down);
  }

  /**
   * Filters `input` (interleaved I, Q; the stream's next samples) into `out`
   * from its start; returns the complex samples written, outputsFor(input
   * samples). `out` must hold them.
   */
  process(input: Float32Array, out: Float32Array): number {
    if ((input.length & 1) !== 0) throw new RangeArgumentError('input length', input.length, 'an even number of floats (I, Q pairs)');
    const inputs = input.length >>> 1;
    const want = this.outputsFor(inputs);
    if (out.length < 2 * want) throw new RangeArgumentError('out length', out.length, `at least ${2 * want} floats for ${want} complex outputs`);
    const K = this.tapsPerPhase;
    const buf = this.buf;
    const hist = 2 * (K - 1);
    let written = 0;
    for (let at = 0; at < inputs;) {
      const take = Math.min(this.blockSamples, inputs - at);
      const src = 2 * at;
      for (let i = 0; i < 2 * take; i++) buf[hist + i] = input[src + i]!;
      const avail = K - 1 + take;
      written += this.wasm === undefined ? this.runTs(avail, out, written) : this.runWasm(avail, out, written);
      buf.copyWithin(0, 2 * take, 2 * take + hist);
      this.n -= take;
      at += take;
    }
    return written;
  }

  /**
   * The whole of `input` as one stream from a fresh state: the outputs at
   * input times 0 .. inputs - 1 (floor((inputs - 1) up / down) + 1 of them),
   * the filter's look-ahead filled with zeros. Allocates its result; resets.
   */
  filterAll(input: Float32Array): Float32Array {
    const inputs = input.length >>> 1;
    this.reset();
    const count = inputs === 0 ? 0 : Math.floor(((inputs - 1) * this.up) / this.down) + 1;
    const tail = new Float32Array(2 * (Math.ceil(this.delay / this.up) + 1));
    const out = new Float32Array(2 * (this.outputsFor(inputs) + Math.ceil((tail.length / 2) * (this.up / this.down)) + 2));
    let n = this.process(input, out);
    n += this.process(tail, out.subarray(2 * n));
    this.reset();
    if (n < count) throw new RangeError(`polyphase filterAll: ${n} outputs, ${count} expected`);
    return out.slice(0, 2 * count);
  }

  private runWasm(avail: number, out: Float32Array, outAt: number): number {
    const x = this.wasm!;
    const count = x.run(this.bufByte, this.tapsByte, this.outByte, this.n, this.p, avail, this.up, this.down, 8 * this.tapsPerPhase);
    this.n = x.n.value as number;
    this.p = x.p.value as number;
    const src = this.outWasm!;
    const o = 2 * outAt;
    for (let i = 0; i < 2 * count; i++) out[o + i] = src[i]!;
    return count;
  }

  /** The reference kernel: what the WebAssembly one computes, in float64, in the same order. */
  private runTs(avail: number, out: Float32Array, outAt: number): number {
    const K = this.tapsPerPhase;
    const buf = this.buf;
    const taps = this.taps1;
    const up = this.up;
    const down = this.down;
    let n = this.n;
    let p = this.p;
    let o = 2 * outAt;
    let count = 0;
    while (n < avail) {
      let x = 2 * (n + 1 - K);
      let h = p * K;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      let b0 = 0;
      let b1 = 0;
      let b2 = 0;
      let b3 = 0;
      for (let j = 0; j < K; j += 4) {
        const h0 = taps[h]!;
        const h1 = taps[h + 1]!;
        const h2 = taps[h + 2]!;
        const h3 = taps[h + 3]!;
        a0 += buf[x]! * h0;
        a1 += buf[x + 1]! * h0;
        a2 += buf[x + 2]! * h1;
        a3 += buf[x + 3]! * h1;
        b0 += buf[x + 4]! * h2;
        b1 += buf[x + 5]! * h2;
        b2 += buf[x + 6]! * h3;
        b3 += buf[x + 7]! * h3;
        x += 8;
        h += 4;
      }
      out[o++] = a0 + b0 + (a2 + b2);
      out[o++] = a1 + b1 + (a3 + b3);
      count++;
      p += down;
      n += Math.floor(p / up);
      p %= up;
    }
    this.n = n;
    this.p = p;
    return count;
  }
}

function align16(n: number): number {
  return Math.ceil(n / 16) * 16;
}
