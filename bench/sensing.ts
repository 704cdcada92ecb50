/**
 * Energy-detector benchmark: the TypeScript CPU loop against the same loop in
 * C (bench/native/energy.c, gcc -O3) on the same deterministic IQ buffer, the
 * WebAssembly SIMD backend with the buffer in its arena (read in place, as the
 * product feeds it), and gpu.js when it loads.
 *
 *   node --import tsx bench/sensing.ts [--samples 4194304] [--window 10] [--runs 10] [--no-gpu]
 *
 * Prints one key=value line per figure; last, the fastest in-product backend
 * (`fast_path=`: cpu, wasm or gpu) and its ratio to C (`ratio_vs_native=`).
 * Exits 1 when any backend's busy count differs from C's, 2 when the
 * native baseline cannot be built or run (gcc missing, for one).
 *
 * The C baseline runs in a child process, which the OS may place on another
 * core than this one: on a machine whose cores run at different speeds (a
 * shared or throttled vCPU), pin both to one core (`taskset -c N node ...`)
 * for a ratio that compares code rather than cores.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../src/core/rng.js';
import { gpuBackend } from '../src/sensing/backend.js';
import { cpuBackend, type EnergyBackend } from '../src/sensing/energy.js';
import { thresholdSum, type EnergyCounts } from '../src/sensing/energy.js';
import { wasmBackend } from '../src/sensing/wasm.js';

const SEED = 2024;
const CCA_THRESHOLD_DBM = -62;
const CALIBRATION_DB = -10;
const BUSY_FRACTION = 0.3;

class BenchFailure extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

function positiveInt(name: string, s: string): number {
  const v = Number(s);
  if (!Number.isSafeInteger(v) || v < 1) throw new BenchFailure(2, `--${name} must be a positive integer, got ${s}`);
  return v;
}

/**
 * `count` complex samples, windows of `window`: each window (drawn from a
 * fixed seed, independently) is busy with probability 0.3, complex Gaussian
 * noise 20 dB over the threshold, otherwise 30 dB under it. The busy windows
 * come in no pattern a branch predictor could learn: the worst case for a
 * loop that branches on the busy test.
 */
function makeIq(count: number, window: number): Float32Array {
  const rng = Rng.fromSeed(SEED).fork('bench/sensing');
  const data = new Float32Array(2 * count);
  const sigma = (dbm: number): number => Math.sqrt(10 ** ((dbm - CALIBRATION_DB) / 10) / 2);
  const busy = sigma(CCA_THRESHOLD_DBM + 20);
  const idle = sigma(CCA_THRESHOLD_DBM - 30);
  const windows = Math.floor(count / window);
  for (let w = 0; w < windows; w++) {
    rng.fillNormal(data, rng.next() < BUSY_FRACTION ? busy : idle, 2 * w * window, 2 * window);
  }
  rng.fillNormal(data, idle, 2 * windows * window, 2 * (count - windows * window));
  return data;
}

/** Best of `runs` timed runs after `warmup` untimed ones, in complex megasamples per second. */
function bestMsps(
  backend: EnergyBackend,
  data: Float32Array,
  count: number,
  window: number,
  thr: number,
  warmup: number,
  runs: number,
): { msps: number; counts: EnergyCounts } {
  let counts = backend.detect(data, count, window, thr);
  for (let i = 1; i < warmup; i++) counts = backend.detect(data, count, window, thr);
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    counts = backend.detect(data, count, window, thr);
    best = Math.min(best, performance.now() - t0);
  }
  return { msps: count / (best * 1e3), counts };
}

function runNative(dir: string, file: string, count: number, window: number, thr: number, runs: number): Record<string, string> {
  const src = fileURLToPath(new URL('./native/energy.c', import.meta.url));
  const exe = join(dir, 'energy');
  const cc = spawnSync('gcc', ['-O3', '-ffp-contract=off', '-o', exe, src], { encoding: 'utf8' });
  if (cc.error) {
    const missing = (cc.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new BenchFailure(2, missing ? 'gcc not found: cannot build the native baseline (install gcc)' : `gcc failed to start: ${cc.error.message}`);
  }
  if (cc.status !== 0) throw new BenchFailure(2, `gcc could not build bench/native/energy.c:\n${cc.stderr}`);
  const run = spawnSync(exe, [file, String(count), String(window), String(thr), String(runs)], { encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    throw new BenchFailure(2, `the native baseline failed: ${run.error?.message ?? run.stderr.trim()}`);
  }
  const out: Record<string, string> = {};
  for (const line of run.stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

function gccVersion(): string {
  try {
    return execFileSync('gcc', ['-dumpfullversion'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const fmt = (x: number): string => x.toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: String(1 << 22) },
      window: { type: 'string', default: '10' },
      runs: { type: 'string', default: '10' },
      'no-gpu': { type: 'boolean', default: false },
    },
  });
  const count = positiveInt('samples', values.samples!);
  const window = positiveInt('window', values.window!);
  const runs = positiveInt('runs', values.runs!);
  const thr = thresholdSum(CCA_THRESHOLD_DBM, CALIBRATION_DB, window);

  const data = makeIq(count, window);
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-bench-'));
  try {
    const file = join(dir, 'iq.f32');
    writeFileSync(file, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    const native = runNative(dir, file, count, window, thr, runs);
    const ts = bestMsps(cpuBackend, data, count, window, thr, 5, runs);

    const nativeBusy = Number(native.busy);
    const nativeMsps = Number(native.msps);
    if (nativeBusy !== ts.counts.busyWindows || Number(native.windows) !== ts.counts.windows) {
      throw new BenchFailure(
        1,
        `busy counts differ: TypeScript ${ts.counts.busyWindows} of ${ts.counts.windows} windows, C ${native.busy} of ${native.windows}`,
      );
    }

    const lines: string[] = [
      `node=${process.version}`,
      `gcc=${gccVersion()}`,
      `samples=${count}`,
      `window=${window}`,
      `windows=${ts.counts.windows}`,
      `busy=${ts.counts.busyWindows}`,
      `busy_fraction=${(ts.counts.busyWindows / ts.counts.windows).toFixed(4)}`,
      `runs=${runs}`,
      `ts_cpu_msps=${fmt(ts.msps)}`,
      `native_c_msps=${fmt(nativeMsps)}`,
    ];

    const fastest = { name: 'cpu', msps: ts.msps };
    try {
      const wasm = wasmBackend({ capacity: count });
      const inArena = wasm.allocate(count);
      inArena.set(data.subarray(0, 2 * count));
      const w = bestMsps(wasm, inArena, count, window, thr, 5, runs);
      if (w.counts.busyWindows !== nativeBusy || w.counts.windows !== Number(native.windows)) {
        throw new BenchFailure(1, `busy counts differ: wasm ${w.counts.busyWindows} of ${w.counts.windows} windows, C ${native.busy} of ${native.windows}`);
      }
      lines.push(`wasm_simd_msps=${fmt(w.msps)}`);
      if (w.msps > fastest.msps) Object.assign(fastest, { name: 'wasm', msps: w.msps });
    } catch (e) {
      if (e instanceof BenchFailure) throw e;
      lines.push(`wasm_simd=unavailable (${e instanceof Error ? e.message : String(e)})`);
    }

    if (values['no-gpu']) {
      lines.push('gpujs=skipped (--no-gpu)');
    } else {
      try {
        const gpu = await gpuBackend();
        try {
          const g = bestMsps(gpu, data, count, window, thr, 2, Math.min(runs, 5));
          const match = g.counts.busyWindows === nativeBusy && g.counts.windows === Number(native.windows);
          if (!match) {
            throw new BenchFailure(
              1,
              `busy counts differ: ${gpu.engine} ${g.counts.busyWindows} of ${g.counts.windows} windows, C ${native.busy} of ${native.windows}`,
            );
          }
          lines.push(`gpujs_engine=${gpu.engine}`, `gpujs_msps=${fmt(g.msps)}`, `gpujs_busy_match=${match}`);
          if (g.msps > fastest.msps) Object.assign(fastest, { name: 'gpu', msps: g.msps });
        } finally {
          await gpu.close?.();
        }
      } catch (e) {
        if (e instanceof BenchFailure) throw e;
        lines.push(`gpujs=unavailable (${e instanceof Error ? e.message : String(e)})`);
      }
    }

    lines.push(`fast_path=${fastest.name}`, `ratio_vs_native=${(fastest.msps / nativeMsps).toFixed(2)}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  if (e instanceof BenchFailure) {
    process.stderr.write(`bench:sensing: ${e.message}\n`);
    process.exitCode = e.exitCode;
  } else {
    process.stderr.write(`bench:sensing: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  }
});
