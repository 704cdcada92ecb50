/**
 * The energy detector's loop as a WebAssembly SIMD (simd128) function. The
 * module is emitted here, byte by byte, by a small binary emitter: no
 * toolchain, no package. It imports its memory, so one compiled module serves
 * every backend, each with its own fixed-size `WebAssembly.Memory` arena.
 *
 * The arithmetic is that of `detectEnergy` (src/sensing/detector.ts) and
 * bench/native/energy.c, operation for operation: float32 samples widened to
 * double (exact), squares and sums in double, four accumulators per window
 * (complex samples 0,4,8.. into s0, 1,5,9.. into s1, ...; a tail of 1-3
 * samples into s0), the window sum as (s0 + s1) + (s2 + s3), the busy test as
 * arithmetic. The four accumulators live in two f64x2 vectors [s0, s1] and
 * [s2, s3]: each group of four complex samples [a b c d e f g h] is read as
 * two v128, four single-operand shuffles bring [a c], [b d], [e g], [f h] to
 * the low lanes for f64x2.promote_low_f32x4, and
 * [s0, s1] += [a, c]^2 + [b, d]^2, [s2, s3] += [e, g]^2 + [f, h]^2 adds in
 * each lane exactly what the scalar loop adds. So the sums, and the busy
 * count, are the same bit for bit.
 */
import { RangeArgumentError } from '../core/errors.js';
import {
  compileWasm,
  f32Lanes,
  mem,
  oneFunctionModule,
  op,
  S,
  simd,
  sleb,
  T,
  uleb,
  V128_ZERO,
  vec,
  wasmApi,
  WASM_PAGE,
  type WasmApi,
  type WasmGlobal,
  type WasmMemory,
  type WasmModule,
} from '../core/wasm-emit.js';
import { BackendUnavailableError, checkDetectArgs, detectEnergy, type EnergyBackend, type EnergyCounts } from './energy.js';

// Parameters and locals of `detect`, by index.
const P = { ptr: 0, windows: 1, bodyBytes: 2, tailBytes: 3, thr: 4, sum: 5, busySum: 6 } as const;
const L = { end: 7, busy: 8, m: 9, acc01: 10, acc23: 11, x: 12, y: 13, w: 14, s0: 15, a: 16, b: 17, s: 18 } as const;

/**
 * `detect(ptr, windows, bodyBytes, tailBytes, thr, sum, busySum) -> busy`:
 * `windows` windows of interleaved fc32 from byte `ptr`, each `bodyBytes` read
 * 32 bytes (four complex samples) at a time and then `tailBytes` (0-24) read
 * one complex sample at a time. `sum` and `busySum` are the running totals the
 * windows' sums are added to, in order (so that a run in chunks rounds as one
 * run); the new totals are left in the exported globals `sum` and `busySum`,
 * and the number of busy windows is returned.
 */
function detectBody(): number[] {
  const get = (i: number): number[] => [op.localGet, i];
  const set = (i: number): number[] => [op.localSet, i];
  // [v[l0], v[l1]] widened to f64x2 and squared: one single-operand shuffle
  // brings the two f32 lanes low, promote_low widens them (exactly).
  // prettier-ignore
  const sqPair = (v: number, l0: number, l1: number): number[] => [
    ...get(v), ...get(v), ...S(simd.i8x16Shuffle, ...f32Lanes(l0, l1, l0, l1)),
    ...S(simd.f64x2PromoteLowF32x4), op.localTee, L.w, ...get(L.w), ...S(simd.f64x2Mul),
  ];
  const zero = V128_ZERO;
  const lane = (v: number, l: number): number[] => [...get(v), ...S(simd.f64x2ExtractLane, l)];

  // One line per instruction group, as the comments read it: keep the layout.
  // prettier-ignore
  const code: number[] = [
    // if (windows == 0) skip everything
    op.block, op.void,
    ...get(P.windows), op.i32Eqz, op.brIf, 0,
    op.loop, op.void, // per window
    ...zero, ...set(L.acc01),
    ...zero, ...set(L.acc23),
    // end = ptr + bodyBytes
    ...get(P.ptr), ...get(P.bodyBytes), op.i32Add, ...set(L.end),
    op.block, op.void,
    ...get(P.ptr), ...get(L.end), op.i32GeU, op.brIf, 0,
    op.loop, op.void, // per group of four complex samples
    // x = [a b c d], y = [e f g h]
    ...get(P.ptr), ...S(simd.v128Load, ...mem(2, 0)), ...set(L.x),
    ...get(P.ptr), ...S(simd.v128Load, ...mem(2, 16)), ...set(L.y),
    // acc01 += [a c]^2 + [b d]^2
    ...get(L.acc01), ...sqPair(L.x, 0, 2), ...sqPair(L.x, 1, 3), ...S(simd.f64x2Add), ...S(simd.f64x2Add), ...set(L.acc01),
    // acc23 += [e g]^2 + [f h]^2
    ...get(L.acc23), ...sqPair(L.y, 0, 2), ...sqPair(L.y, 1, 3), ...S(simd.f64x2Add), ...S(simd.f64x2Add), ...set(L.acc23),
    // ptr += 32; continue while ptr < end
    ...get(P.ptr), op.i32Const, ...sleb(32), op.i32Add, op.localTee, P.ptr,
    ...get(L.end), op.i32LtU, op.brIf, 0,
    op.end,
    op.end,
    // s0 = acc01[0]; the tail goes into it
    ...lane(L.acc01, 0), ...set(L.s0),
    ...get(P.ptr), ...get(P.tailBytes), op.i32Add, ...set(L.end),
    op.block, op.void,
    ...get(P.ptr), ...get(L.end), op.i32GeU, op.brIf, 0,
    op.loop, op.void,
    ...get(P.ptr), op.f32Load, ...mem(2, 0), op.f64PromoteF32, ...set(L.a),
    ...get(P.ptr), op.f32Load, ...mem(2, 4), op.f64PromoteF32, ...set(L.b),
    // s0 = s0 + (a*a + b*b)
    ...get(L.s0), ...get(L.a), ...get(L.a), op.f64Mul, ...get(L.b), ...get(L.b), op.f64Mul, op.f64Add, op.f64Add, ...set(L.s0),
    ...get(P.ptr), op.i32Const, ...sleb(8), op.i32Add, op.localTee, P.ptr,
    ...get(L.end), op.i32LtU, op.brIf, 0,
    op.end,
    op.end,
    // s = (s0 + s1) + (s2 + s3)
    ...get(L.s0), ...lane(L.acc01, 1), op.f64Add,
    ...lane(L.acc23, 0), ...lane(L.acc23, 1), op.f64Add,
    op.f64Add, ...set(L.s),
    // sum += s; m = s > thr; busy += m; busySum += m * s
    ...get(P.sum), ...get(L.s), op.f64Add, ...set(P.sum),
    ...get(L.s), ...get(P.thr), op.f64Gt, op.localTee, L.m,
    ...get(L.busy), op.i32Add, ...set(L.busy),
    ...get(P.busySum), ...get(L.m), op.f64ConvertI32U, ...get(L.s), op.f64Mul, op.f64Add, ...set(P.busySum),
    // continue while --windows != 0
    ...get(P.windows), op.i32Const, ...sleb(1), op.i32Sub, op.localTee, P.windows,
    op.i32Const, ...sleb(0), op.i32Ne, op.brIf, 0,
    op.end,
    op.end,
    ...get(P.sum), op.globalSet, 0,
    ...get(P.busySum), op.globalSet, 1,
    ...get(L.busy),
    op.end,
  ];
  // Locals after the parameters, as (count, type) runs in index order.
  const locals = vec([
    [1, T.i32], // end
    [2, T.i32], // busy, m
    [5, T.v128], // acc01, acc23, x, y, w
    [4, T.f64], // s0, a, b, s
  ]);
  const body = [...locals, ...code];
  return [...uleb(body.length), ...body];
}

/** The whole module: imports `env.memory`, exports `detect` and the globals `sum` and `busySum`. */
export function energyModuleBytes(): Uint8Array {
  return oneFunctionModule({
    params: [T.i32, T.i32, T.i32, T.i32, T.f64, T.f64, T.f64],
    results: [T.i32],
    name: 'detect',
    body: detectBody(),
    globals: [
      { name: 'sum', type: T.f64 },
      { name: 'busySum', type: T.f64 },
    ],
  });
}

// ---------------------------------------------------------------------------
// The backend

export { sleb, uleb, type WasmApi, type WasmMemory, type WasmModule };

let compiled: WasmModule | BackendUnavailableError | undefined;

/** The compiled module, built on first use; or why it cannot be (no WebAssembly, no SIMD). */
function energyModule(): WasmModule {
  if (compiled === undefined) {
    compiled = compileEnergyModule(wasmApi());
  }
  if (compiled instanceof BackendUnavailableError) throw compiled;
  return compiled;
}

/**
 * Validates and compiles the module with `api` (the engine's WebAssembly
 * object, undefined when it has none), or says why it cannot: no WebAssembly, or one that does not
 * validate simd128. Exported for tests; the backend compiles once and caches.
 */
export function compileEnergyModule(api: WasmApi | undefined): WasmModule | BackendUnavailableError {
  const m = compileWasm(api, energyModuleBytes());
  return typeof m === 'string' ? new BackendUnavailableError(m, { backend: 'wasm' }) : m;
}

interface EnergyExports {
  detect(ptr: number, windows: number, bodyBytes: number, tailBytes: number, thr: number, sum: number, busySum: number): number;
  sum: WasmGlobal;
  busySum: WasmGlobal;
}

export interface WasmBackendOptions {
  /** Complex samples `allocate` can hand out in all. Default 1 Mi (8 MiB). */
  capacity?: number;
  /** Complex samples of the scratch region that data outside the arena is copied through. Default 64 Ki (512 KiB). */
  scratch?: number;
}

/** Allocations start on 16 bytes (two complex samples). */
const ALIGN = 16;

/**
 * The energy detector on WebAssembly SIMD, with a fixed arena of its own
 * memory. `allocate(count)` returns a view of `count` complex samples inside
 * the arena: data there is read in place. Any other Float32Array is copied
 * through a scratch region, whole windows at a time (same results, slower; a
 * window larger than the scratch region is run by the CPU loop, which rounds
 * the same). The arena is a bump allocator: allocations live until `reset()`.
 */
export class WasmEnergyBackend implements EnergyBackend {
  readonly name = 'wasm' as const;
  readonly engine = 'wasm simd128';
  /** Complex samples `allocate` can hand out in all. */
  readonly capacity: number;
  readonly memory: WasmMemory;
  private readonly exports: EnergyExports;
  private readonly scratchSamples: number;
  /** Byte offset of the allocation region (after the scratch region). */
  private readonly base: number;
  /** Bytes allocated so far, from `base`. */
  private usedBytes = 0;

  constructor(opts: WasmBackendOptions = {}) {
    const capacity = opts.capacity ?? 1 << 20;
    const scratch = opts.scratch ?? 1 << 16;
    if (!Number.isSafeInteger(capacity) || capacity < 0 || capacity > 1 << 26) {
      throw new RangeArgumentError('capacity', capacity, 'an integer in [0, 2^26] complex samples');
    }
    if (!Number.isSafeInteger(scratch) || scratch < 1 || scratch > 1 << 24) {
      throw new RangeArgumentError('scratch', scratch, 'an integer in [1, 2^24] complex samples');
    }
    const module = energyModule();
    const WebAssembly = wasmApi()!;
    this.capacity = capacity;
    this.scratchSamples = scratch;
    this.base = Math.ceil((8 * scratch) / ALIGN) * ALIGN;
    const pages = Math.max(1, Math.ceil((this.base + 8 * capacity + ALIGN) / WASM_PAGE));
    // initial = maximum: the memory never grows, so views of it stay valid.
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.exports = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports as unknown as EnergyExports;
  }

  /** Complex samples allocated so far (rounded up to whole 16-byte units). */
  get used(): number {
    return this.usedBytes / 8;
  }

  /**
   * A view of `count` complex samples (2 * count floats) in the arena, zeroed
   * on first use. Throws RangeArgumentError when the arena has no room left.
   */
  allocate(count: number): Float32Array {
    const free = Math.floor((8 * this.capacity - this.usedBytes) / 8);
    if (!Number.isSafeInteger(count) || count < 0 || count > free) {
      throw new RangeArgumentError('count', count, `an integer in [0, ${free}] (complex samples left in the wasm arena of ${this.capacity})`);
    }
    const offset = this.base + this.usedBytes;
    this.usedBytes += Math.ceil((8 * count) / ALIGN) * ALIGN;
    return new Float32Array(this.memory.buffer, offset, 2 * count);
  }

  /** Frees every allocation; views handed out before now alias new ones. */
  reset(): void {
    this.usedBytes = 0;
  }

  /** True when `data` is a view of this backend's arena (and so is read in place). */
  owns(data: Float32Array): boolean {
    return data.buffer === this.memory.buffer;
  }

  detect(data: Float32Array, count: number, windowSamples: number, thresholdSum: number): EnergyCounts {
    checkDetectArgs(data, count, windowSamples, thresholdSum);
    const windows = Math.floor(count / windowSamples);
    const leftover = count - windows * windowSamples;
    const step = 2 * windowSamples;
    const bodyBytes = 4 * (step - (step & 7));
    const tailBytes = 4 * (step & 7);
    const x = this.exports;
    if (this.owns(data)) {
      const busy = x.detect(data.byteOffset, windows, bodyBytes, tailBytes, thresholdSum, 0, 0);
      return { windows, busyWindows: busy, sumPower: x.sum.value as number, busySumPower: x.busySum.value as number, leftover };
    }
    const perChunk = Math.floor(this.scratchSamples / windowSamples);
    if (perChunk === 0) return detectEnergy(data, count, windowSamples, thresholdSum);
    const scratch = new Float32Array(this.memory.buffer, 0, 2 * perChunk * windowSamples);
    let busyWindows = 0;
    let sumPower = 0;
    let busySumPower = 0;
    for (let w = 0; w < windows; w += perChunk) {
      const n = Math.min(perChunk, windows - w);
      scratch.set(data.subarray(w * step, (w + n) * step));
      busyWindows += x.detect(0, n, bodyBytes, tailBytes, thresholdSum, sumPower, busySumPower);
      sumPower = x.sum.value as number;
      busySumPower = x.busySum.value as number;
    }
    return { windows, busyWindows, sumPower, busySumPower, leftover };
  }
}

/**
 * Builds the wasm backend, or throws BackendUnavailableError
 * (SENSING_BACKEND_UNAVAILABLE) with the reason when this engine has no
 * WebAssembly SIMD.
 */
export function wasmBackend(opts: WasmBackendOptions = {}): WasmEnergyBackend {
  return new WasmEnergyBackend(opts);
}
