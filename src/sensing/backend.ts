import { CogmeshError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { BackendUnavailableError, checkDetectArgs, cpuBackend, thresholdSum, type EnergyBackend, type EnergyCounts } from './energy.js';
import { wasmBackend } from './wasm.js';

/** Which backend a node asks for (sensing.backend): `auto` probes them all at start. */
export type BackendPreference = 'auto' | 'cpu' | 'wasm' | 'gpu';

// The part of gpu.js this module uses. gpu.js is an optional dependency and is
// imported by a computed specifier, so nothing here depends on its typings.
interface GpuJsKernel {
  (data: Float32Array): ArrayLike<number>;
  destroy?(): unknown;
}
interface GpuJsInstance {
  readonly mode: string;
  /** The kernel class gpu.js picked; its `mode` names the engine (`headlessgl`, `webasm`, `cpu`). */
  readonly Kernel?: { readonly mode?: string } | null;
  createKernel(source: string, settings: Record<string, unknown>): GpuJsKernel;
  destroy?(): unknown;
}
type GpuJsConstructor = new (settings?: Record<string, unknown>) => GpuJsInstance;

/**
 * One thread per window: the sum of I^2 + Q^2 over its `step` floats. Given to
 * gpu.js as source text so that no transpiler between this file and gpu.js's
 * parser can change what it reads. The sum is in single precision on every
 * gpu.js backend, where the CPU loop sums in double: a window within about
 * 1e-6 (relative) of the threshold may be judged differently.
 */
const WINDOW_POWER_KERNEL = `function (data) {
  const base = this.thread.x * this.constants.step;
  let s = 0;
  for (let j = 0; j < this.constants.step; j++) {
    const v = data[base + j];
    s += v * v;
  }
  return s;
}`;

/** Kernels kept per gpu backend (one per (windowSamples, windows) shape); the least recently used goes first. */
const KERNEL_CACHE_SIZE = 8;

export interface GpuBackendOptions {
  /** Loads the gpu.js module; tests replace it. Default: `import('gpu.js')`. */
  importGpu?: () => Promise<unknown>;
  /** A gpu.js mode (`headlessgl`, `webasm`, `cpu`, ...); default: gpu.js picks the best it can run (headless GL, then WebAssembly, then plain JS). */
  mode?: string;
}

/**
 * The energy detector on gpu.js: a kernel computes every window's power sum
 * (one thread per window), and the host compares the sums with the threshold
 * and accumulates the totals. Kernels are built per (windowSamples, windows)
 * shape and cached. Throws BackendUnavailableError (SENSING_BACKEND_UNAVAILABLE)
 * when gpu.js cannot be imported or a kernel cannot be built; a small kernel
 * is built and run here, so that failure shows at construction.
 *
 * Without a GPU, gpu.js falls back to WebAssembly or plain JS; `engine` says
 * which (`gpu.js webasm`), and `chooseBackend('auto')` then normally keeps cpu.
 */
export async function gpuBackend(opts: GpuBackendOptions = {}): Promise<EnergyBackend> {
  const importGpu = opts.importGpu ?? (() => import(GPU_JS_MODULE));
  let GPU: GpuJsConstructor;
  try {
    const mod = (await importGpu()) as { GPU?: unknown; default?: { GPU?: unknown } } | undefined;
    const ctor = mod?.GPU ?? mod?.default?.GPU;
    if (typeof ctor !== 'function') throw new Error('the module has no GPU class');
    GPU = ctor as GpuJsConstructor;
  } catch (e) {
    throw new BackendUnavailableError(`gpu.js cannot be imported (${messageOf(e)})`, { cause: e });
  }
  let gpu: GpuJsInstance;
  try {
    gpu = new GPU(opts.mode === undefined ? {} : { mode: opts.mode });
  } catch (e) {
    throw new BackendUnavailableError(`gpu.js cannot start (${messageOf(e)})`, { cause: e });
  }
  const backend = new GpuJsBackend(gpu);
  try {
    // Two windows of two samples: 1+4 and 9+16+25+36 (the second is busy for a threshold of 10).
    const c = backend.detect(new Float32Array([1, 0, 0, 2, 3, 4, 5, 6]), 4, 2, 10);
    if (c.windows !== 2 || c.busyWindows !== 1 || c.sumPower !== 91) {
      throw new Error(`a test kernel returned ${JSON.stringify(c)}`);
    }
  } catch (e) {
    await backend.close();
    throw e instanceof BackendUnavailableError ? e : new BackendUnavailableError(messageOf(e), { cause: e });
  }
  return backend;
}

// A variable, so that TypeScript does not resolve the optional dependency.
const GPU_JS_MODULE: string = 'gpu.js';

class GpuJsBackend implements EnergyBackend {
  readonly name = 'gpu' as const;
  readonly engine: string;
  private readonly kernels = new Map<string, GpuJsKernel>();

  constructor(private readonly gpu: GpuJsInstance) {
    this.engine = `gpu.js ${gpu.Kernel?.mode ?? gpu.mode}`;
  }

  detect(data: Float32Array, count: number, windowSamples: number, threshold: number): EnergyCounts {
    checkDetectArgs(data, count, windowSamples, threshold);
    const windows = Math.floor(count / windowSamples);
    const leftover = count - windows * windowSamples;
    if (windows === 0) return { windows, busyWindows: 0, sumPower: 0, busySumPower: 0, leftover };
    const step = 2 * windowSamples;
    const sums = this.kernel(windowSamples, windows)(data.subarray(0, windows * step));
    if (sums.length !== windows) {
      throw new CogmeshError('SENSING_BACKEND_FAILED', `${this.engine} returned ${sums.length} window sums for ${windows} windows`);
    }
    let busyWindows = 0;
    let sumPower = 0;
    let busySumPower = 0;
    for (let k = 0; k < windows; k++) {
      const s = sums[k]!;
      sumPower += s;
      if (s > threshold) {
        busyWindows++;
        busySumPower += s;
      }
    }
    return { windows, busyWindows, sumPower, busySumPower, leftover };
  }

  private kernel(windowSamples: number, windows: number): GpuJsKernel {
    const key = `${windowSamples}x${windows}`;
    const hit = this.kernels.get(key);
    if (hit) {
      this.kernels.delete(key);
      this.kernels.set(key, hit);
      return hit;
    }
    let k: GpuJsKernel;
    try {
      k = this.gpu.createKernel(WINDOW_POWER_KERNEL, {
        output: [windows],
        constants: { step: 2 * windowSamples },
        precision: 'single',
        tactic: 'precision',
        loopMaxIterations: 2 * windowSamples,
      });
    } catch (e) {
      throw new BackendUnavailableError(`${this.engine} cannot build a kernel for ${windows} windows of ${windowSamples} samples (${messageOf(e)})`, {
        cause: e,
      });
    }
    if (this.kernels.size >= KERNEL_CACHE_SIZE) {
      const [oldest, old] = this.kernels.entries().next().value as [string, GpuJsKernel];
      this.kernels.delete(oldest);
      destroyQuietly(old);
    }
    this.kernels.set(key, k);
    return k;
  }

  async close(): Promise<void> {
    for (const k of this.kernels.values()) destroyQuietly(k);
    this.kernels.clear();
    try {
      await this.gpu.destroy?.();
    } catch {
      // Nothing more can be released.
    }
  }
}

function destroyQuietly(k: GpuJsKernel): void {
  try {
    const p = k.destroy?.();
    if (p instanceof Promise) p.catch(() => undefined);
  } catch {
    // A kernel that cannot be destroyed is left to the garbage collector.
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A deterministic IQ buffer whose busy windows are known: the `auto` probe's input. */
export interface ProbeBlock {
  data: Float32Array;
  count: number;
  windowSamples: number;
  thresholdSum: number;
  /** Windows built 20 dB over the threshold (the others are 30 dB under it). */
  busyWindows: number;
}

/**
 * Builds the probe block: `count` complex samples (default 256 Ki) in windows
 * of `windowSamples`, about 30% of them (drawn from a fixed seed) complex
 * Gaussian noise 20 dB over a -62 dBm threshold, the rest 30 dB under it, at a
 * calibration of 0 dB. No window comes near the threshold, so a single
 * precision backend must find exactly `busyWindows`.
 */
export function probeBlock(count = 1 << 18, windowSamples = 16): ProbeBlock {
  const rng = Rng.fromSeed(0x5e45).fork('sensing/probe');
  const thresholdDbm = -62;
  const windows = Math.floor(count / windowSamples);
  const data = new Float32Array(2 * count);
  // Per-component sigma of complex noise of mean power p (full scale) is sqrt(p / 2).
  const sigma = (dbm: number): number => Math.sqrt(10 ** (dbm / 10) / 2);
  const busySigma = sigma(thresholdDbm + 20);
  const idleSigma = sigma(thresholdDbm - 30);
  let busyWindows = 0;
  for (let w = 0; w < windows; w++) {
    const busy = rng.next() < 0.3;
    if (busy) busyWindows++;
    rng.fillNormal(data, busy ? busySigma : idleSigma, 2 * w * windowSamples, 2 * windowSamples);
  }
  rng.fillNormal(data, idleSigma, 2 * windows * windowSamples, 2 * (count - windows * windowSamples));
  return { data, count, windowSamples, thresholdSum: thresholdSum(thresholdDbm, 0, windowSamples), busyWindows };
}

/** Speed of a backend on the probe block, in megasamples (complex) per second. */
export type Measure = (backend: EnergyBackend, probe: ProbeBlock) => number;

/**
 * The default Measure: the best of repeated runs within `budgetMs` (at least
 * one run) on the monotonic clock. The caller has run the backend once before,
 * so compilation is not timed.
 */
export function timeBackend(budgetMs = 120, maxRuns = 40): Measure {
  return (backend, probe) => {
    const start = performance.now();
    let best = Infinity;
    for (let run = 0; run < maxRuns; run++) {
      const t0 = performance.now();
      backend.detect(probe.data, probe.count, probe.windowSamples, probe.thresholdSum);
      const t1 = performance.now();
      best = Math.min(best, t1 - t0);
      if (t1 - start >= budgetMs) break;
    }
    return probe.count / (Math.max(best, 1e-6) * 1e3);
  };
}

/** What the `auto` probe measured. */
export interface ProbeFigures {
  cpuMsps: number;
  /** Absent when the gpu backend could not be built or failed on the probe. */
  gpuMsps?: number;
  /** Why the gpu backend was not measured or not trusted. */
  gpuError?: string;
  /** Absent when the wasm backend could not be built, failed on the probe, or was left out. */
  wasmMsps?: number;
  /** Why the wasm backend was not measured or not trusted. */
  wasmError?: string;
}

export interface BackendChoice {
  backend: EnergyBackend;
  /** One human line: what was chosen and why. */
  reason: string;
  /** The probe's figures; undefined when the backend was forced (no probe ran). */
  probe: ProbeFigures | undefined;
}

export interface ChooseBackendOptions {
  /** Builds the gpu backend. Default: `gpuBackend()`. */
  gpu?: () => Promise<EnergyBackend>;
  /** Builds the wasm backend. Default: `wasmBackend()`. `false` leaves wasm out of the `auto` probe. */
  wasm?: (() => EnergyBackend | Promise<EnergyBackend>) | false;
  /** Times a backend on the probe block. Default: `timeBackend()` (about 0.12 s each). */
  measure?: Measure;
  /** The probe's input. Default: `probeBlock()` (256 Ki samples in windows of 16). */
  probe?: ProbeBlock;
}

/** A backend with an arena of its own (the wasm one): data allocated there is read in place. */
interface ArenaBackend extends EnergyBackend {
  allocate(count: number): Float32Array;
  reset(): void;
  readonly used: number;
}

function hasArena(b: EnergyBackend): b is ArenaBackend {
  const a = b as Partial<ArenaBackend>;
  return typeof a.allocate === 'function' && typeof a.reset === 'function' && typeof a.used === 'number';
}

/**
 * The probe block as the backend will be fed in the product: copied into its
 * arena when it has one (and room), so that the in-place path is what is
 * timed. `release` frees the copy again when the arena was empty before.
 */
function probeFor(b: EnergyBackend, probe: ProbeBlock): { input: ProbeBlock; release: () => void } {
  if (!hasArena(b)) return { input: probe, release: () => undefined };
  const wasEmpty = b.used === 0;
  let view: Float32Array;
  try {
    view = b.allocate(probe.count);
  } catch {
    return { input: probe, release: () => undefined };
  }
  view.set(probe.data.subarray(0, 2 * probe.count));
  return { input: { ...probe, data: view }, release: () => (wasEmpty ? b.reset() : undefined) };
}

/**
 * Picks the energy-detector backend for the configured preference: `cpu`
 * takes the CPU loop; `wasm` and `gpu` take that backend or throw
 * BackendUnavailableError with the reason; `auto` runs cpu, wasm and gpu on a
 * fixed probe block (wasm with the block in its arena, as the product feeds
 * it) and takes the fastest of those that found the same busy count as the
 * CPU, cpu on a tie. The backends not taken are closed. The reason lists one
 * clause per candidate (its figure against cpu's, or why it was not
 * measured). The whole probe normally takes a few tenths of a second (gpu.js
 * import and kernel build included).
 */
export async function chooseBackend(pref: BackendPreference, opts: ChooseBackendOptions = {}): Promise<BackendChoice> {
  const loadGpu = opts.gpu ?? (() => gpuBackend());
  const loadWasm = opts.wasm === false || opts.wasm === undefined ? () => wasmBackend() : opts.wasm;
  if (pref === 'cpu') return { backend: cpuBackend, reason: `cpu backend configured (${cpuBackend.engine})`, probe: undefined };
  if (pref === 'gpu') {
    const gpu = await loadGpu();
    return { backend: gpu, reason: `gpu backend configured (${gpu.engine})`, probe: undefined };
  }
  if (pref === 'wasm') {
    const wasm = await loadWasm();
    return { backend: wasm, reason: `wasm backend configured (${wasm.engine})`, probe: undefined };
  }

  const probe = opts.probe ?? probeBlock();
  const measure = opts.measure ?? timeBackend();
  const run = (b: EnergyBackend, p: ProbeBlock): EnergyCounts => b.detect(p.data, p.count, p.windowSamples, p.thresholdSum);
  const ref = run(cpuBackend, probe);
  const cpuMsps = measure(cpuBackend, probe);
  const cpuFigure = `cpu ${msps(cpuMsps)} Msps`;
  const figures: ProbeFigures = { cpuMsps };
  const clauses: string[] = [];
  let best: { backend: EnergyBackend; msps: number } = { backend: cpuBackend, msps: cpuMsps };
  const unused: EnergyBackend[] = [];

  const candidates: Array<['wasm' | 'gpu', () => EnergyBackend | Promise<EnergyBackend>]> = [];
  if (opts.wasm !== false) candidates.push(['wasm', loadWasm]);
  candidates.push(['gpu', loadGpu]);

  for (const [kind, load] of candidates) {
    let b: EnergyBackend;
    try {
      b = await load();
    } catch (e) {
      const why = e instanceof BackendUnavailableError ? e.reason : messageOf(e);
      figures[`${kind}Error`] = why;
      clauses.push(`${kind} unavailable (${why})`);
      continue;
    }
    const { input, release } = probeFor(b, probe);
    const refuse = (why: string): void => {
      release();
      figures[`${kind}Error`] = why;
      clauses.push(why);
      unused.push(b);
    };
    let got: EnergyCounts;
    try {
      got = run(b, input);
    } catch (e) {
      refuse(`${b.engine} failed on the probe block (${messageOf(e)})`);
      continue;
    }
    if (got.windows !== ref.windows || got.busyWindows !== ref.busyWindows) {
      refuse(`${b.engine} found ${got.busyWindows} busy of ${got.windows} windows where cpu found ${ref.busyWindows} of ${ref.windows}`);
      continue;
    }
    const bMsps = measure(b, input);
    release();
    figures[`${kind}Msps`] = bMsps;
    clauses.push(`${b.engine} ${msps(bMsps)} Msps ${bMsps > cpuMsps ? '>' : bMsps < cpuMsps ? '<' : '='} ${cpuFigure}`);
    if (bMsps > best.msps) {
      if (best.backend !== cpuBackend) unused.push(best.backend);
      best = { backend: b, msps: bMsps };
    } else {
      unused.push(b);
    }
  }
  for (const b of unused) await b.close?.();
  return { backend: best.backend, reason: `${clauses.join('; ')}: using ${best.backend.name}`, probe: figures };
}

/** Three significant digits, no exponent. */
function msps(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return x >= 100 ? x.toFixed(0) : Number(x.toPrecision(3)).toString();
}
