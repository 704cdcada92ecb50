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
import { BackendUnavailableError, checkDetectArgs, detectEnergy, type EnergyBackend, type EnergyCounts } from './energy.js';

// ---------------------------------------------------------------------------
// Binary emitter

/** Unsigned LEB128. */
export function uleb(n: number): number[] {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeArgumentError('n', n, 'a non-negative safe integer');
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (for i32.const). */
export function sleb(n: number): number[] {
  if (!Number.isSafeInteger(n)) throw new RangeArgumentError('n', n, 'a safe integer');
  const out: number[] = [];
  for (;;) {
    const byte = ((n % 128) + 128) % 128;
    n = Math.floor(n / 128);
    const done = (n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

function name(s: string): number[] {
  const b = [...new TextEncoder().encode(s)];
  return [...uleb(b.length), ...b];
}

/** A vector: its length, then its items. */
function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function f64Bytes(x: number): number[] {
  return [...new Uint8Array(new Float64Array([x]).buffer)];
}

const T = { i32: 0x7f, f64: 0x7c, v128: 0x7b } as const;

/** The opcodes used here (core and the 0xfd SIMD prefix). */
const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  brIf: 0x0d,
  void: 0x40,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  globalSet: 0x24,
  f32Load: 0x2a,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Ne: 0x47,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  f64Gt: 0x64,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  f64Add: 0xa0,
  f64Mul: 0xa2,
  f64ConvertI32U: 0xb8,
  f64PromoteF32: 0xbb,
  simd: 0xfd,
} as const;

const simd = {
  v128Load: 0x00,
  v128Const: 0x0c,
  i8x16Shuffle: 0x0d,
  f64x2ExtractLane: 0x21,
  f64x2PromoteLowF32x4: 0x5f,
  f64x2Add: 0xf0,
  f64x2Mul: 0xf2,
} as const;

const S = (code: number, ...imm: number[]): number[] => [op.simd, ...uleb(code), ...imm];
/** memarg: log2 alignment (a hint), offset. */
const mem = (align: number, offset: number): number[] => [...uleb(align), ...uleb(offset)];

/** Byte lanes of an i8x16.shuffle taking the given f32 lanes (0-3 first operand, 4-7 second). */
function f32Lanes(...lanes: number[]): number[] {
  return lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]);
}

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
  const zero = S(simd.v128Const, ...new Array<number>(16).fill(0));
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
  const funcType = [0x60, ...vec([[T.i32], [T.i32], [T.i32], [T.i32], [T.f64], [T.f64], [T.f64]]), ...vec([[T.i32]])];
  const f64Global = [T.f64, 0x01, 0x44, ...f64Bytes(0), op.end];
  // prettier-ignore
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // \0asm, version 1
    ...section(1, vec([funcType])),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vec([uleb(0)])),
    ...section(6, vec([f64Global, f64Global])),
    ...section(7, vec([
      [...name('detect'), 0x00, ...uleb(0)],
      [...name('sum'), 0x03, ...uleb(0)],
      [...name('busySum'), 0x03, ...uleb(1)],
    ])),
    ...section(10, vec([detectBody()])),
  ];
  return new Uint8Array(bytes);
}

// ---------------------------------------------------------------------------
// The backend

// The part of the WebAssembly JS API used here. The project's lib (ES2023)
// and @types/node 20.9 do not declare it.
/** A compiled module (opaque). */
export interface WasmModule {
  readonly __wasmModule?: never;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmGlobal {
  value: unknown;
}
export interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (desc: { initial: number; maximum?: number }) => WasmMemory;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
}
/** The engine's WebAssembly object, or undefined. A function, so that tests can see a missing one. */
function wasmApi(): WasmApi | undefined {
  const api = (globalThis as { WebAssembly?: Partial<WasmApi> }).WebAssembly;
  return api !== undefined && typeof api.validate === 'function' && typeof api.Module === 'function' ? (api as WasmApi) : undefined;
}

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
  const WebAssembly = api;
  if (WebAssembly === undefined) {
    return new BackendUnavailableError('this engine has no WebAssembly', { backend: 'wasm' });
  }
  const bytes = energyModuleBytes();
  if (!WebAssembly.validate(bytes)) {
    return new BackendUnavailableError('this engine does not validate the simd128 module (no WebAssembly SIMD)', { backend: 'wasm' });
  }
  try {
    return new WebAssembly.Module(bytes);
  } catch (e) {
    return new BackendUnavailableError(`the simd128 module does not compile (${e instanceof Error ? e.message : String(e)})`, { backend: 'wasm', cause: e });
  }
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

const PAGE = 65536;
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
    const pages = Math.max(1, Math.ceil((this.base + 8 * capacity + ALIGN) / PAGE));
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
