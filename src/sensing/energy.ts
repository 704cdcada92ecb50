import { CogmeshError, RangeArgumentError } from '../core/errors.js';

/**
 * The energy detector's loop (eq. 1's busy windows) and what runs it: the
 * typed-array loop on the CPU is the reference every other backend
 * (WebAssembly SIMD in wasm.ts, gpu.js in backend.ts) must match count for
 * count.
 */

/**
 * What the energy detector found in one run over a buffer. Powers are in
 * full-scale units (|x|^2 of a full-scale sample is 1), summed over samples.
 */
export interface EnergyCounts {
  /** Whole windows (sensing samples) examined. */
  windows: number;
  /** Of those, the windows whose power sum exceeded the threshold sum. */
  busyWindows: number;
  /** Sum of I^2 + Q^2 over the samples of every counted window. */
  sumPower: number;
  /** The same sum over the busy windows only. */
  busySumPower: number;
  /** Complex samples after the last whole window, not examined. */
  leftover: number;
}

/**
 * Checks the arguments every backend takes, outside any loop: `count` complex
 * samples must fit in `data`, and a window holds at least one sample.
 */
export function checkDetectArgs(data: Float32Array, count: number, windowSamples: number, thresholdSum: number): void {
  if (!Number.isSafeInteger(count) || count < 0 || 2 * count > data.length) {
    throw new RangeArgumentError('count', count, `an integer in [0, ${data.length >>> 1}] (complex samples in data)`);
  }
  if (!Number.isSafeInteger(windowSamples) || windowSamples < 1) {
    throw new RangeArgumentError('windowSamples', windowSamples, 'an integer >= 1');
  }
  if (Number.isNaN(thresholdSum)) throw new RangeArgumentError('thresholdSum', thresholdSum, 'a number');
}

/**
 * The energy detector of the Urban-X paper (seeds/000, eq. 1) over interleaved
 * fc32 IQ: a sensing sample is a window of `windowSamples` complex samples,
 * busy when the sum of I^2 + Q^2 over it exceeds `thresholdSum` (the CCA
 * threshold as a mean power, times `windowSamples`; see `thresholdSum`). A
 * trailing partial window is not counted: its sample count is `leftover`.
 *
 * One fused pass: each window's sum is compared and added to the totals as
 * soon as it is complete, with no division or logarithm in the loop. The
 * accumulators are doubles (float32 reads widen exactly). Each window is
 * summed over four accumulators, complex samples 0,4,8.. into the first,
 * 1,5,9.. into the second and so on (a tail of 1-3 samples goes to the
 * first), then added as (s0 + s1) + (s2 + s3); bench/native/energy.c sums in
 * the same order, so both find the same busy count. The busy test is
 * arithmetic, not a branch, so a random mix of busy and idle windows costs no
 * mispredictions. Measured on Node 20 (bench/sensing.ts data, 30% busy):
 * windows of 10 samples, branching on the busy test ~680 Msps whatever the
 * accumulators, arithmetic with 1, 2, 4 accumulators ~940, ~1000, ~1050;
 * windows of 80, two accumulators ~1200, four ~1400.
 */
export function detectEnergy(data: Float32Array, count: number, windowSamples: number, thresholdSum: number): EnergyCounts {
  checkDetectArgs(data, count, windowSamples, thresholdSum);
  const windows = Math.floor(count / windowSamples);
  const step = 2 * windowSamples; // floats per window
  const body = step - (step & 7); // floats read four complex samples at a time
  const tail = step - body;
  let busyWindows = 0;
  let sumPower = 0;
  let busySumPower = 0;
  let i = 0;
  for (let w = 0; w < windows; w++) {
    const end4 = i + body;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    while (i < end4) {
      const a = data[i++]!;
      const b = data[i++]!;
      const c = data[i++]!;
      const d = data[i++]!;
      const e = data[i++]!;
      const f = data[i++]!;
      const g = data[i++]!;
      const h = data[i++]!;
      s0 += a * a + b * b;
      s1 += c * c + d * d;
      s2 += e * e + f * f;
      s3 += g * g + h * h;
    }
    const end = end4 + tail;
    while (i < end) {
      const a = data[i++]!;
      const b = data[i++]!;
      s0 += a * a + b * b;
    }
    const s = s0 + s1 + (s2 + s3);
    sumPower += s;
    const busy = +(s > thresholdSum);
    busyWindows += busy;
    busySumPower += busy * s;
  }
  return { windows, busyWindows, sumPower, busySumPower, leftover: count - windows * windowSamples };
}

// V8 compiles a long-running loop on stack replacement (OSR) in the middle of
// a long first call, before the rest of the function has type feedback.
// Measured on Node 20: the regular optimised code then deoptimised on its
// first call, every later call entered the OSR code from the interpreter, and
// the loop ran at about 65% of its speed, in a third to a half of processes
// (in all of them with --no-concurrent-recompilation). Small calls at load,
// run in the interpreter, give the whole function (checkDetectArgs included)
// its feedback first: 16 were not enough, 64 were; 128 cost well under a
// millisecond.
warmUp(128);

/** Runs detectEnergy on small buffers: whole windows and tails, busy and idle ones. */
function warmUp(calls: number): void {
  const data = new Float32Array(2 * 37);
  for (let k = 0; k < data.length; k++) data[k] = ((k * 7) % 11) / 10 - 0.5;
  for (let k = 0; k < calls; k++) detectEnergy(data, 37 - (k % 3), 1 + (k % 9), 0.3 + (k % 5) / 10);
}

/**
 * The detector's busy test and totals over window energies that are already
 * summed (the statistical sensing model draws them without samples): the
 * first `windows` entries of `sums`, each the window's sum of I^2 + Q^2,
 * compared with `thresholdSum` as `detectEnergy` compares its own sums.
 */
export function countWindowEnergies(sums: Float64Array, windows: number, thresholdSum: number, leftover: number): EnergyCounts {
  if (!Number.isSafeInteger(windows) || windows < 0 || windows > sums.length) {
    throw new RangeArgumentError('windows', windows, `an integer in [0, ${sums.length}] (window sums given)`);
  }
  if (Number.isNaN(thresholdSum)) throw new RangeArgumentError('thresholdSum', thresholdSum, 'a number');
  let busyWindows = 0;
  let sumPower = 0;
  let busySumPower = 0;
  for (let w = 0; w < windows; w++) {
    const s = sums[w]!;
    sumPower += s;
    const busy = +(s > thresholdSum);
    busyWindows += busy;
    busySumPower += busy * s;
  }
  return { windows, busyWindows, sumPower, busySumPower, leftover };
}

/** Complex samples in one window of `windowUs` at `sampleRateHz`: at least one. */
export function windowSamplesFor(windowUs: number, sampleRateHz: number): number {
  return Math.max(1, Math.round((windowUs * sampleRateHz) / 1e6));
}

/**
 * The CCA threshold as the power sum a window must exceed: the threshold's
 * mean power in full-scale units (dBm less the block's calibration, which is
 * the dBm of a full-scale signal) times the samples in a window.
 */
export function thresholdSum(ccaThresholdDbm: number, calibrationDb: number, windowSamples: number): number {
  return 10 ** ((ccaThresholdDbm - calibrationDb) / 10) * windowSamples;
}

/** Something that runs the energy detector's loop over a buffer of fc32 IQ. */
export interface EnergyBackend {
  readonly name: 'cpu' | 'gpu' | 'wasm';
  /** What runs the loop, for logs and the probe's reason (e.g. `gpu.js webasm`). */
  readonly engine: string;
  /** Same contract and results as `detectEnergy`. */
  detect(data: Float32Array, count: number, windowSamples: number, thresholdSum: number): EnergyCounts;
  /**
   * A buffer for `count` complex samples in the backend's own memory, where
   * `detect` reads in place: front-ends fill it directly, so no block is
   * copied. Only backends with memory of their own (wasm) have it.
   */
  allocate?(count: number): Float32Array;
  /** Releases what the backend holds (kernels, contexts); the backend is unusable afterwards. */
  close?(): Promise<void>;
}

/** A backend (gpu unless `options.backend` says otherwise) was asked for and cannot run here; `reason` says why. */
export class BackendUnavailableError extends CogmeshError {
  readonly backend: string;
  constructor(
    readonly reason: string,
    options?: { cause?: unknown; backend?: string },
  ) {
    const backend = options?.backend ?? 'gpu';
    super(
      'SENSING_BACKEND_UNAVAILABLE',
      `energy-detector ${backend} backend unavailable: ${reason}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.backend = backend;
  }
}

/** The fused typed-array loop of `detectEnergy`, on the CPU. */
export const cpuBackend: EnergyBackend = {
  name: 'cpu',
  engine: 'typed-array loop',
  detect: detectEnergy,
};
