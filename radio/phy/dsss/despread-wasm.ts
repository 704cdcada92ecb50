/**
 * The DSSS receiver's innermost loops (radio/phy/dsss/receiver.ts) as
 * WebAssembly SIMD (simd128) functions, emitted byte by byte with
 * src/core/wasm-emit.ts. The module imports its memory, so one compiled
 * module serves every receiver, each with its own memory, which holds the
 * receiver's stream buffer itself: the kernels read the samples where they
 * are, no copy.
 *
 * `detect(src, count, sps, energy, symBytes, half) -> firstHalf` is the
 * packet detector's window in one call: the Barker despread of the `count`
 * symbols starting at the complex float32 samples from byte `src` on,
 * energy[r] = sum over j of |z[r + j sym]|^2 for the sym offsets (sym =
 * symBytes / 8, f64 at byte `energy`), and returns the sum of |z[k]|^2 over
 * k < half. `despread(src, count, sps, re, im)` is the despread alone into
 * re[k], im[k] (f64 at bytes `re`, `im`), for the symbols of a frame.
 *
 * The arithmetic is the receiver's TypeScript, operation for operation, so
 * the results are the same bit for bit: a complex sample [re, im] is loaded
 * (v128.load64_zero) and widened, exactly, to f64x2 (promote_low), and each
 * despread is the same signed sums of the receiver's `despreadRun`, in its
 * order and grouping, in both lanes at once; |z|^2 is re * re + im * im (an
 * f64x2 multiply, then its lanes added) and the sums run in index order.
 * WAYS despreads are interleaved, each its own chain of additions, so that
 * the processor overlaps them.
 */
import { compileWasm, funcBody, functionsModule, mem, op, S, simd, sleb, T, wasmApi, type WasmFunction, type WasmModule } from '../../../src/core/wasm-emit.js';
import { BARKER_11, type SamplesPerChip } from './modem.js';

/** Despreads computed side by side per pass of the loop. */
const WAYS = 4;
/**
 * Where despreadRun's sums are split (samples of a symbol): each part is
 * summed on its own, left to right, then added to the sum of the parts
 * before, as its TypeScript lines do.
 */
const PARTS: Record<SamplesPerChip, readonly number[]> = { 1: [6, 11], 2: [8, 16, 22] };

// Parameters and locals of `detect`, by index.
const D = { src: 0, count: 1, sps: 2, energy: 3, symBytes: 4, half: 5, k: 6, r: 7, first: 8, p: 9, sq: 10, z: 11 } as const;
// Parameters and locals of `despread`, by index.
const R = { src: 0, count: 1, sps: 2, re: 3, im: 4, k: 5, z: 6 } as const;

const get = (i: number): number[] => [op.localGet, i];
const set = (i: number): number[] => [op.localSet, i];
const i32 = (v: number): number[] => [op.i32Const, ...sleb(v)];

/**
 * `ways` despreads side by side into the v128 locals z .. z + ways - 1 (and
 * their part sums in z + ways ..): the symbols at samples 0 .. ways - 1 from
 * byte address local `src`.
 */
function despreadCode(sps: SamplesPerChip, ways: number, src: number, z: number): number[] {
  const code: number[] = [];
  const load = (j: number): number[] => [...get(src), ...S(simd.v128Load64Zero, ...mem(3, 8 * j)), ...S(simd.f64x2PromoteLowF32x4)];
  let from = 0;
  for (const [part, to] of PARTS[sps].entries()) {
    for (let j = from; j < to; j++) {
      const sign = BARKER_11[Math.floor(j / sps)]!;
      for (let w = 0; w < ways; w++) {
        // The first part sums into z itself, the others into their own sum.
        const acc = part === 0 ? z + w : z + ways + w;
        if (j === from) code.push(...load(j + w), ...(sign < 0 ? S(simd.f64x2Neg) : []), ...set(acc));
        else code.push(...get(acc), ...load(j + w), ...S(sign < 0 ? simd.f64x2Sub : simd.f64x2Add), ...set(acc));
      }
    }
    if (part > 0) for (let w = 0; w < ways; w++) code.push(...get(z + w), ...get(z + ways + w), ...S(simd.f64x2Add), ...set(z + w));
    from = to;
  }
  return code;
}

/**
 * A loop over the symbols, `ways` at a time while that many are left:
 * `each(w)` uses despread w of the pass (k + w), then src and k move on.
 */
// prettier-ignore
function symbolLoop(sps: SamplesPerChip, ways: number, src: number, count: number, k: number, z: number, each: (w: number) => number[]): number[] {
  const code: number[] = [
    op.block, op.void,
    op.loop, op.void,
    // if (count < k + ways) stop
    ...get(count), ...get(k), ...i32(ways), op.i32Add, op.i32LtU, op.brIf, 1,
    ...despreadCode(sps, ways, src, z),
  ];
  for (let w = 0; w < ways; w++) code.push(...each(w));
  code.push(
    ...get(src), ...i32(8 * ways), op.i32Add, ...set(src),
    ...get(k), ...i32(ways), op.i32Add, ...set(k),
    op.br, 0,
    op.end,
    op.end,
  );
  return code;
}

/** Both samples-per-chip cases: `perSps(2)` if sps == 2, else `perSps(1)`. */
function bySps(sps: number, perSps: (s: SamplesPerChip) => number[]): number[] {
  // prettier-ignore
  return [
    ...get(sps), ...i32(2), op.i32Eq,
    0x04, op.void, // if
    ...perSps(2),
    0x05, // else
    ...perSps(1),
    op.end,
  ];
}

function detectFunction(): WasmFunction {
  // |z|^2 of despread w into p; energy[r] += p; first += p while k + w < half; r moves on a symbol's offsets.
  // prettier-ignore
  const each = (w: number): number[] => [
    ...get(D.z + w), ...get(D.z + w), ...S(simd.f64x2Mul), op.localTee, D.sq,
    ...S(simd.f64x2ExtractLane, 0), ...get(D.sq), ...S(simd.f64x2ExtractLane, 1), op.f64Add, ...set(D.p),
    ...get(D.energy), ...get(D.r), op.i32Add,
    ...get(D.energy), ...get(D.r), op.i32Add, op.f64Load, ...mem(3, 0), ...get(D.p), op.f64Add,
    op.f64Store, ...mem(3, 0),
    ...get(D.first), ...get(D.p), op.f64Add, ...get(D.first),
    ...get(D.k), ...i32(w), op.i32Add, ...get(D.half), op.i32LtU, op.select, ...set(D.first),
    ...i32(0), ...get(D.r), ...i32(8), op.i32Add, op.localTee, D.r,
    ...get(D.r), ...get(D.symBytes), op.i32Eq, op.select, ...set(D.r),
  ];
  const loops = (s: SamplesPerChip): number[] => [...symbolLoop(s, WAYS, D.src, D.count, D.k, D.z, each), ...symbolLoop(s, 1, D.src, D.count, D.k, D.z, each)];
  // prettier-ignore
  const code = [
    // energy[0 .. sym) = 0
    op.loop, op.void,
    ...get(D.energy), ...get(D.r), op.i32Add, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, op.f64Store, ...mem(3, 0),
    ...get(D.r), ...i32(8), op.i32Add, op.localTee, D.r,
    ...get(D.symBytes), op.i32LtU, op.brIf, 0,
    op.end,
    ...i32(0), ...set(D.r),
    ...bySps(D.sps, loops),
    ...get(D.first),
    op.end,
  ];
  return {
    params: new Array<number>(6).fill(T.i32),
    results: [T.f64],
    name: 'detect',
    body: funcBody(
      [
        [2, T.i32], // k, r
        [2, T.f64], // first, p
        [1 + 2 * WAYS, T.v128], // sq, z.., part sums..
      ],
      code,
    ),
  };
}

function despreadFunction(): WasmFunction {
  // re[k + w], im[k + w] = despread w; re and im move on with src.
  // prettier-ignore
  const each = (w: number): number[] => [
    ...get(R.re), ...get(R.z + w), ...S(simd.f64x2ExtractLane, 0), op.f64Store, ...mem(3, 8 * w),
    ...get(R.im), ...get(R.z + w), ...S(simd.f64x2ExtractLane, 1), op.f64Store, ...mem(3, 8 * w),
  ];
  // prettier-ignore
  const advance = (ways: number): number[] => [
    ...get(R.re), ...i32(8 * ways), op.i32Add, ...set(R.re),
    ...get(R.im), ...i32(8 * ways), op.i32Add, ...set(R.im),
  ];
  const loops = (s: SamplesPerChip): number[] => [
    ...symbolLoop(s, WAYS, R.src, R.count, R.k, R.z, (w) => [...each(w), ...(w === WAYS - 1 ? advance(WAYS) : [])]),
    ...symbolLoop(s, 1, R.src, R.count, R.k, R.z, (w) => [...each(w), ...advance(1)]),
  ];
  return {
    params: new Array<number>(5).fill(T.i32),
    results: [],
    name: 'despread',
    body: funcBody(
      [
        [1, T.i32], // k
        [2 * WAYS, T.v128], // z.., part sums..
      ],
      [...bySps(R.sps, loops), op.end],
    ),
  };
}

/** The whole module: imports `env.memory`, exports `detect` and `despread`. */
export function despreadModuleBytes(): Uint8Array {
  return functionsModule([detectFunction(), despreadFunction()]);
}

let compiled: WasmModule | string | undefined;

/** The compiled module, built on first use, or why it cannot be (no WebAssembly, no SIMD). */
export function despreadModule(): WasmModule | string {
  compiled ??= compileWasm(wasmApi(), despreadModuleBytes());
  return compiled;
}
