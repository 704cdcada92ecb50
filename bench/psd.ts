/**
 * Which FFT the spectrum monitor's PSD (src/sensing/psd.ts) should use:
 * fft.js through ComplexFft (src/core/fft.ts, what the product runs) against
 * PFFFT compiled to WebAssembly (@echogarden/pffft-wasm, a devDependency),
 * with and without SIMD, measured in the same run on the same data.
 *
 *   node --import tsx bench/psd.ts [--rounds 30] [--ms 10]
 *
 * At 64, 256 and 1024 points it times one complex forward transform of each,
 * PFFFT behind ComplexFft's method (Float64Array in and out) so that its
 * figure includes the copies into and out of the WebAssembly heap that the
 * product would need, and the transform alone on data already in the heap
 * for comparison; then a whole WelchPsd.estimate of a 32-segment visit with
 * each transform, and with PFFFT SIMD the same estimate written around the
 * heap (windowed into it, summed out of it: the best a PFFFT-based PSD could
 * do). Each WelchPsd runs from its own copy of the module, so that its call
 * to the transform sees one class, as the product's does (one shared copy
 * would see two, and V8 would optimise it for neither). Each figure is the
 * lowest of `--rounds` rounds of about `--ms` milliseconds, the candidates
 * taking turns within a round: on a shared machine, many short rounds leave
 * each candidate some that no other process interrupted. Prints key=value lines: microseconds per transform or
 * estimate, each candidate's speed-up over fft.js (its time over theirs, > 1
 * is faster), and the estimate's cost as a share of the time its samples
 * last at 1 MHz and at 20 MHz. Exits 1 when a PFFFT estimate differs from
 * fft.js's by more than 0.01 dB in a bin, 2 on a bad argument.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import PffftPlain from '@echogarden/pffft-wasm';
import PffftSimd from '@echogarden/pffft-wasm/simd';
import { ComplexFft } from '../src/core/fft.js';
import { Rng } from '../src/core/rng.js';
import { PSD_FLOOR_DBM_PER_HZ, type SegmentFft, type WelchPsd } from '../src/sensing/psd.js';

const SIZES = [64, 256, 1024];
const SEGMENTS = 32;
const SEED = 2024;
const CALIBRATION_DB = -10;
const PFFFT_COMPLEX = 1;
const PFFFT_FORWARD = 0;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' }, ms: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
const roundMs = Number(values.ms);
if (!Number.isInteger(rounds) || rounds < 1 || !Number.isFinite(roundMs) || roundMs < 1) {
  process.stderr.write(`bench/psd.ts: --rounds must be an integer >= 1 and --ms a number >= 1, got ${values.rounds} and ${values.ms}\n`);
  process.exit(2);
}

/**
 * PFFFT's ordered complex transform behind ComplexFft's `forward`: the input
 * doubles are written into the heap as float32, transformed there, and read
 * back into the output doubles (PFFFT computes in float32, fft.js in double).
 */
class PffftForward implements SegmentFft {
  private readonly setup: number;
  readonly inPtr: number;
  readonly outPtr: number;
  private readonly workPtr: number;

  constructor(
    private readonly m: PffftModule,
    readonly size: number,
  ) {
    this.setup = m._pffft_new_setup(size, PFFFT_COMPLEX);
    if (this.setup === 0) throw new Error(`pffft refused a complex transform of ${size} points`);
    this.inPtr = m._pffft_aligned_malloc(8 * size);
    this.outPtr = m._pffft_aligned_malloc(8 * size);
    this.workPtr = m._pffft_aligned_malloc(8 * size);
  }

  forward(input: Float64Array, out: Float64Array): void {
    // The heap is read after the allocations, which may have grown it.
    const heap = this.m.HEAPF32;
    heap.set(input.subarray(0, 2 * this.size), this.inPtr >>> 2);
    this.inHeap();
    out.set(heap.subarray(this.outPtr >>> 2, (this.outPtr >>> 2) + 2 * this.size));
  }

  /** The transform alone, on whatever the input buffer in the heap holds. */
  inHeap(): void {
    this.m._pffft_transform_ordered(this.setup, this.inPtr, this.outPtr, this.workPtr, PFFFT_FORWARD);
  }

  dispose(): void {
    for (const p of [this.inPtr, this.outPtr, this.workPtr]) this.m._pffft_aligned_free(p);
    this.m._pffft_destroy_setup(this.setup);
  }
}

/**
 * The estimate as a PSD written around PFFFT would do it, for the best case
 * of the library: each segment windowed straight into the heap and |X|^2
 * summed straight out of it, so the only copies are the writes and reads the
 * windowing and the sums make anyway. The same arithmetic as WelchPsd's
 * (checked against it bin by bin before it is timed).
 */
class HeapWelch {
  private readonly window: Float64Array;
  private readonly power: Float64Array;
  private readonly scale: number;

  constructor(
    private readonly fft: PffftForward,
    private readonly m: PffftModule,
    private readonly segments: number,
  ) {
    const n = fft.size;
    this.window = Float64Array.from({ length: n }, (_, k) => Math.sin((Math.PI * k) / n) ** 2);
    this.power = new Float64Array(n);
    this.scale = this.window.reduce((a, w) => a + w * w, 0) * segments;
  }

  estimate(iq: Float32Array, sampleRateHz: number, calibrationDb: number, out: Float32Array): void {
    const n = this.fft.size;
    const heap = this.m.HEAPF32;
    const src = this.fft.inPtr >>> 2;
    const dst = this.fft.outPtr >>> 2;
    const { window: w, power } = this;
    power.fill(0);
    for (let s = 0; s < this.segments; s++) {
      const base = s * n; // segments start half a segment apart: 2 * (n / 2) floats
      for (let k = 0; k < 2 * n; k += 2) {
        heap[src + k] = iq[base + k]! * w[k >>> 1]!;
        heap[src + k + 1] = iq[base + k + 1]! * w[k >>> 1]!;
      }
      this.fft.inHeap();
      for (let k = 0; k < 2 * n; k += 2) power[k >>> 1] = power[k >>> 1]! + heap[dst + k]! ** 2 + heap[dst + k + 1]! ** 2;
    }
    const db0 = calibrationDb - 10 * Math.log10(this.scale * sampleRateHz);
    for (let i = 0; i < n; i++) out[i] = Math.max(PSD_FLOOR_DBM_PER_HZ, 10 * Math.log10(power[(i + n / 2) % n]!) + db0);
  }
}

/** A copy of the PSD module of its own (the loader keys modules by URL, query included). */
async function freshPsd(copy: string): Promise<typeof WelchPsd> {
  const m = (await import(`../src/sensing/psd.js?copy=${copy}`)) as { WelchPsd: typeof WelchPsd };
  return m.WelchPsd;
}

let sink = 0;

/** Microseconds per call of `f`: repeated until about `roundMs` have passed. */
function timeRound(f: () => void, iters: number): number {
  const t = performance.now();
  for (let i = 0; i < iters; i++) f();
  return ((performance.now() - t) * 1e3) / iters;
}

/** The lowest microseconds per call of each candidate over `rounds` rounds, the candidates taking turns. */
function race(candidates: Record<string, () => void>): Record<string, number> {
  const names = Object.keys(candidates);
  const iters: Record<string, number> = {};
  const best: Record<string, number> = {};
  for (const n of names) {
    const f = candidates[n]!;
    for (let i = 0; i < 200; i++) f(); // warm-up, and a first guess of the speed
    const us = Math.max(timeRound(f, 200), 1e-3);
    iters[n] = Math.max(10, Math.round((roundMs * 1e3) / us));
    best[n] = Infinity;
  }
  for (let r = 0; r < rounds; r++) {
    for (const n of names) best[n] = Math.min(best[n]!, timeRound(candidates[n]!, iters[n]!));
  }
  return best;
}

const fmt = (us: number): string => (us < 10 ? us.toFixed(3) : us.toFixed(1));
const ratio = (ref: number, us: number): string => (ref / us).toFixed(2);

async function main(): Promise<void> {
  const simd = await PffftSimd();
  const plain = await PffftPlain();
  const lines: string[] = [
    `node=${process.version}`,
    `pffft_simd_size=${simd._pffft_simd_size()}`,
    `pffft_plain_simd_size=${plain._pffft_simd_size()}`,
    `segments=${SEGMENTS}`,
    `rounds=${rounds}`,
  ];
  const rng = Rng.fromSeed(SEED).fork('bench/psd');

  for (const n of SIZES) {
    const noise32 = new Float32Array(2 * n);
    rng.fillNormal(noise32, Math.SQRT1_2);
    const input = Float64Array.from(noise32);
    const out = new Float64Array(2 * n);
    const fftjs = new ComplexFft(n);
    const pSimd = new PffftForward(simd, n);
    const pPlain = new PffftForward(plain, n);

    const t = race({
      fftjs: () => {
        fftjs.forward(input, out);
        sink += out[1]!;
      },
      simd: () => {
        pSimd.forward(input, out);
        sink += out[1]!;
      },
      plain: () => {
        pPlain.forward(input, out);
        sink += out[1]!;
      },
      simdInHeap: () => pSimd.inHeap(),
      plainInHeap: () => pPlain.inHeap(),
    });
    lines.push(
      `fft${n}_fftjs_us=${fmt(t.fftjs!)}`,
      `fft${n}_pffft_simd_us=${fmt(t.simd!)}`,
      `fft${n}_pffft_us=${fmt(t.plain!)}`,
      `fft${n}_pffft_simd_in_heap_us=${fmt(t.simdInHeap!)}`,
      `fft${n}_pffft_in_heap_us=${fmt(t.plainInHeap!)}`,
      `fft${n}_pffft_simd_speedup=${ratio(t.fftjs!, t.simd!)}`,
      `fft${n}_pffft_speedup=${ratio(t.fftjs!, t.plain!)}`,
      `fft${n}_pffft_simd_in_heap_speedup=${ratio(t.fftjs!, t.simdInHeap!)}`,
    );

    // A 32-segment visit: the samples it reads, at -60 dBm.
    const welch = new (await freshPsd(`fftjs${n}`))({ bins: n, maxSegments: SEGMENTS });
    const samples = welch.maxSamples;
    const iq = new Float32Array(2 * samples);
    rng.fillNormal(iq, Math.sqrt(10 ** ((-60 - CALIBRATION_DB) / 10) / 2));
    const welchSimd = new (await freshPsd(`simd${n}`))({ bins: n, maxSegments: SEGMENTS }, pSimd);
    const welchPlain = new (await freshPsd(`plain${n}`))({ bins: n, maxSegments: SEGMENTS }, pPlain);
    const psd = new Float32Array(n);
    const estimate = (w: WelchPsd) => () => {
      w.estimate(iq, 0, samples, 1e6, CALIBRATION_DB, psd);
      sink += psd[0]!;
    };
    const heapSimd = new HeapWelch(pSimd, simd, SEGMENTS);
    const ref = new Float32Array(n);
    welch.estimate(iq, 0, samples, 1e6, CALIBRATION_DB, ref);
    const candidates: [string, (out: Float32Array) => void][] = [
      ['simd', (o) => welchSimd.estimate(iq, 0, samples, 1e6, CALIBRATION_DB, o)],
      ['nonsimd', (o) => welchPlain.estimate(iq, 0, samples, 1e6, CALIBRATION_DB, o)],
      ['simd_in_heap', (o) => heapSimd.estimate(iq, 1e6, CALIBRATION_DB, o)],
    ];
    for (const [name, run] of candidates) {
      run(psd);
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(psd[i]! - ref[i]!));
      lines.push(`welch${n}_pffft_${name}_max_diff_db=${worst.toExponential(2)}`);
      if (!(worst <= 0.01)) {
        process.stdout.write(`${lines.join('\n')}\n`);
        process.stderr.write(`bench/psd.ts: the ${name} PFFFT estimate differs from fft.js's by ${worst} dB at ${n} bins\n`);
        process.exit(1);
      }
    }
    const e = race({
      fftjs: estimate(welch),
      simd: estimate(welchSimd),
      plain: estimate(welchPlain),
      simdInHeap: () => {
        heapSimd.estimate(iq, 1e6, CALIBRATION_DB, psd);
        sink += psd[0]!;
      },
    });
    // The samples of one visit last `samples` microseconds at 1 MHz, a twentieth of that at 20 MHz.
    const share = (us: number, mhz: number): string => `${((100 * us * mhz) / samples).toFixed(2)}%`;
    lines.push(
      `welch${n}_samples=${samples}`,
      `welch${n}_fftjs_us=${fmt(e.fftjs!)}`,
      `welch${n}_pffft_simd_us=${fmt(e.simd!)}`,
      `welch${n}_pffft_us=${fmt(e.plain!)}`,
      `welch${n}_pffft_simd_speedup=${ratio(e.fftjs!, e.simd!)}`,
      `welch${n}_pffft_speedup=${ratio(e.fftjs!, e.plain!)}`,
      `welch${n}_pffft_simd_in_heap_us=${fmt(e.simdInHeap!)}`,
      `welch${n}_pffft_simd_in_heap_speedup=${ratio(e.fftjs!, e.simdInHeap!)}`,
      `welch${n}_fftjs_share_of_realtime_1mhz=${share(e.fftjs!, 1)}`,
      `welch${n}_fftjs_share_of_realtime_20mhz=${share(e.fftjs!, 20)}`,
      `welch${n}_pffft_simd_share_of_realtime_20mhz=${share(e.simd!, 20)}`,
    );
    pSimd.dispose();
    pPlain.dispose();
  }
  lines.push(`sink=${sink.toFixed(3)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench/psd.ts: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
