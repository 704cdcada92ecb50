/**
 * The DSSS receiver's innermost loops (radio/phy/dsss/receiver.ts) as
 * WebAssembly SIMD (simd128) functions, emitted byte by byte with
 * src/core/wasm-emit.ts. The module imports its memory, so one compiled
 * module serves every receiver, each with its own memory, which holds the
 * receiver's stream buffer itself: the kernels read the samples where they
 * are, no copy.
 *
 * `detect(src, count, sps, energy, symBytes, half, wide) -> firstHalf` is
 * the packet detector's window in one call: the Barker despread z[k] of the
 * `count` symbols that start at the complex float32 samples k = 0, 1, ...
 * from byte `src` on, energy[r] = sum over j of |z[r + j sym]|^2 for the sym
 * offsets (sym = symBytes / 8; f64 at byte `energy`), and it returns the sum
 * of |z[k]|^2 over k < half. `symbol(src, count, sps, wide, z, out, taps,
 * zEarly, tEarly, zLate, tLate, zOn, tOn)` is a symbol of a frame: the
 * despreads of the `count` whole sample offsets around it into z[k] (f64x2
 * [re, im] at byte `z`), then the interpolator's three dot products of
 * `taps` taps, table rows from bytes tEarly, tLate, tOn (each tap stored
 * twice, [h, h]) with z from bytes zEarly, zLate, zOn, into out[0], out[1],
 * out[2] (f64x2 [re, im] from byte `out`). Both first widen the samples they
 * read to f64x2 at byte `wide` (16 bytes a sample, count + a symbol of
 * them).
 *
 * The arithmetic is the receiver's TypeScript, operation for operation, so
 * the results are the same bit for bit: a complex sample [re, im] is widened
 * exactly to f64x2 (v128.load64_zero, f64x2.promote_low_f32x4), and each
 * despread is the same signed sums as the receiver's `despreadRun`, in its
 * order and grouping, in both lanes at once; |z|^2 is re * re + im * im (an
 * f64x2 multiply, then its lanes added) and the sums run in index order; the
 * interpolator's sums start from zero and add w z[j] (a multiply, then an
 * add: no fused multiply-add) for j in order, as `interpolate` does.
 */
import {
  compileWasm,
  f64Bytes,
  funcBody,
  V128_ZERO,
  functionsModule,
  mem,
  op,
  S,
  simd,
  sleb,
  T,
  wasmApi,
  type WasmFunction,
  type WasmModule,
} from '../../../src/core/wasm-emit.js';
import { BARKER_11, type SamplesPerChip } from './modem.js';

/**
 * Where despreadRun's sums are split (samples of a symbol): each part is
 * summed on its own, left to right, then added to the sum of the parts
 * before, as its TypeScript lines do.
 */
const PARTS: Record<SamplesPerChip, readonly number[]> = { 1: [6, 11], 2: [8, 16, 22] };

// Parameters and locals of `detect`, by index.
const D = { src: 0, count: 1, sps: 2, energy: 3, symBytes: 4, half: 5, wide: 6, k: 7, r: 8, first: 9, p: 10, sq: 11, z: 12, part: 13 } as const;
// Parameters and locals of `symbol`, by index.
// prettier-ignore
const Y = {
  src: 0, count: 1, sps: 2, wide: 3, z: 4, out: 5, taps: 6, zEarly: 7, tEarly: 8, zLate: 9, tLate: 10, zOn: 11, tOn: 12,
  k: 13, d: 14, part: 15, acc: 16,
} as const;

const get = (i: number): number[] => [op.localGet, i];
const set = (i: number): number[] => [op.localSet, i];
const i32 = (v: number): number[] => [op.i32Const, ...sleb(v)];

/**
 * Widens the complex float32 samples the `count` despreads read (count + a
 * symbol - 1 from byte `src` on) to f64x2 at byte `wide`, and points `src`
 * there: each sample is widened once, not once per despread it is in
 * (measured some 1.4 times as fast as widening at each load). Leaves k at 0.
 */
// prettier-ignore
function widen(sps: SamplesPerChip, src: number, count: number, wide: number, k: number): number[] {
  return [
    op.block, op.void,
    op.loop, op.void,
    // if (k >= count + 11 sps - 1) stop
    ...get(k), ...get(count), ...i32(11 * sps - 1), op.i32Add, op.i32GeU, op.brIf, 1,
    // wide[k] = promote(src[k])
    ...get(wide), ...get(k), ...i32(16), op.i32Mul, op.i32Add,
    ...get(src), ...get(k), ...i32(8), op.i32Mul, op.i32Add,
    ...S(simd.v128Load64Zero, ...mem(3, 0)), ...S(simd.f64x2PromoteLowF32x4),
    ...S(simd.v128Store, ...mem(4, 0)),
    ...get(k), ...i32(1), op.i32Add, ...set(k),
    op.br, 0,
    op.end,
    op.end,
    ...i32(0), ...set(k),
    ...get(wide), ...set(src),
  ];
}

/** The despread of the symbol at the widened samples from byte address local `src` into the v128 local `z` (`part`: a part's sum). */
function despreadCode(sps: SamplesPerChip, src: number, z: number, part: number): number[] {
  const code: number[] = [];
  const load = (j: number): number[] => [...get(src), ...S(simd.v128Load, ...mem(4, 16 * j))];
  let from = 0;
  for (const [n, to] of PARTS[sps].entries()) {
    // The first part sums into z itself, the others into their own sum, then added to z.
    const acc = n === 0 ? z : part;
    for (let j = from; j < to; j++) {
      const sign = BARKER_11[Math.floor(j / sps)]!;
      if (j === from) code.push(...load(j), ...(sign < 0 ? S(simd.f64x2Neg) : []), ...set(acc));
      else code.push(...get(acc), ...load(j), ...S(sign < 0 ? simd.f64x2Sub : simd.f64x2Add), ...set(acc));
    }
    if (n > 0) code.push(...get(z), ...get(part), ...S(simd.f64x2Add), ...set(z));
    from = to;
  }
  return code;
}

/**
 * The samples widened, then a loop over the `count` symbols: `each` uses
 * the despread z of symbol k, then src and k move on.
 */
// prettier-ignore
function symbolLoop(sps: SamplesPerChip, at: { src: number; count: number; wide: number; k: number; z: number; part: number }, each: number[]): number[] {
  return [
    ...widen(sps, at.src, at.count, at.wide, at.k),
    op.block, op.void,
    op.loop, op.void,
    // if (k >= count) stop
    ...get(at.k), ...get(at.count), op.i32GeU, op.brIf, 1,
    ...despreadCode(sps, at.src, at.z, at.part),
    ...each,
    ...get(at.src), ...i32(16), op.i32Add, ...set(at.src),
    ...get(at.k), ...i32(1), op.i32Add, ...set(at.k),
    op.br, 0,
    op.end,
    op.end,
  ];
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
  // p = |z|^2 (re * re + im * im); energy[r] += p; first += p while k < half; r steps through a symbol's offsets.
  // prettier-ignore
  const each = [
    ...get(D.z), ...get(D.z), ...S(simd.f64x2Mul), op.localTee, D.sq,
    ...S(simd.f64x2ExtractLane, 0), ...get(D.sq), ...S(simd.f64x2ExtractLane, 1), op.f64Add, ...set(D.p),
    ...get(D.energy), ...get(D.r), op.i32Add,
    ...get(D.energy), ...get(D.r), op.i32Add, op.f64Load, ...mem(3, 0), ...get(D.p), op.f64Add,
    op.f64Store, ...mem(3, 0),
    ...get(D.first), ...get(D.p), op.f64Add, ...get(D.first),
    ...get(D.k), ...get(D.half), op.i32LtU, op.select, ...set(D.first),
    ...i32(0), ...get(D.r), ...i32(8), op.i32Add, op.localTee, D.r,
    ...get(D.r), ...get(D.symBytes), op.i32Eq, op.select, ...set(D.r),
  ];
  // prettier-ignore
  const code = [
    // energy[0 .. sym) = 0
    op.loop, op.void,
    ...get(D.energy), ...get(D.r), op.i32Add, 0x44, ...f64Bytes(0), op.f64Store, ...mem(3, 0),
    ...get(D.r), ...i32(8), op.i32Add, op.localTee, D.r,
    ...get(D.symBytes), op.i32LtU, op.brIf, 0,
    op.end,
    ...i32(0), ...set(D.r),
    ...bySps(D.sps, (s) => symbolLoop(s, D, each)),
    ...get(D.first),
    op.end,
  ];
  return {
    params: new Array<number>(7).fill(T.i32),
    results: [T.f64],
    name: 'detect',
    body: funcBody(
      [
        [2, T.i32], // k, r
        [2, T.f64], // first, p
        [3, T.v128], // sq, z, part
      ],
      code,
    ),
  };
}

function symbolFunction(): WasmFunction {
  // z[k] = the despread; z moves on.
  // prettier-ignore
  const each = [
    ...get(Y.z), ...get(Y.d), ...S(simd.v128Store, ...mem(4, 0)),
    ...get(Y.z), ...i32(16), op.i32Add, ...set(Y.z),
  ];
  // out[at] = sum over j < taps of [h, h] table[j] * z[j], from zeros, j in order.
  // prettier-ignore
  const interpolate = (z: number, table: number, at: number): number[] => [
    ...V128_ZERO, ...set(Y.acc),
    ...i32(0), ...set(Y.k),
    op.loop, op.void,
    ...get(Y.acc),
    ...get(table), ...S(simd.v128Load, ...mem(4, 0)),
    ...get(z), ...S(simd.v128Load, ...mem(4, 0)),
    ...S(simd.f64x2Mul), ...S(simd.f64x2Add), ...set(Y.acc),
    ...get(table), ...i32(16), op.i32Add, ...set(table),
    ...get(z), ...i32(16), op.i32Add, ...set(z),
    ...get(Y.k), ...i32(1), op.i32Add, op.localTee, Y.k,
    ...get(Y.taps), op.i32LtU, op.brIf, 0,
    op.end,
    ...get(Y.out), ...get(Y.acc), ...S(simd.v128Store, ...mem(4, at)),
  ];
  // prettier-ignore
  const code = [
    ...bySps(Y.sps, (s) => symbolLoop(s, { src: Y.src, count: Y.count, wide: Y.wide, k: Y.k, z: Y.d, part: Y.part }, each)),
    ...interpolate(Y.zEarly, Y.tEarly, 0),
    ...interpolate(Y.zLate, Y.tLate, 16),
    ...interpolate(Y.zOn, Y.tOn, 32),
    op.end,
  ];
  return {
    params: new Array<number>(13).fill(T.i32),
    results: [],
    name: 'symbol',
    body: funcBody(
      [
        [1, T.i32], // k
        [3, T.v128], // d, part, acc
      ],
      code,
    ),
  };
}

/** The whole module: imports `env.memory`, exports `detect` and `symbol`. */
export function despreadModuleBytes(): Uint8Array {
  return functionsModule([detectFunction(), symbolFunction()]);
}

let compiled: WasmModule | string | undefined;

/** The compiled module, built on first use, or why it cannot be (no WebAssembly, no SIMD). */
export function despreadModule(): WasmModule | string {
  compiled ??= compileWasm(wasmApi(), despreadModuleBytes());
  return compiled;
}
