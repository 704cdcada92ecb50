/**
 * The polyphase FIR's inner loops (radio/phy/dsss/polyphase.ts) as a
 * WebAssembly SIMD (simd128) function, emitted byte by byte with
 * src/core/wasm-emit.ts. The module imports its memory, so one compiled
 * module serves every filter, each with its own memory.
 *
 * `run(buf, taps, out, n, p, avail, up, down, kBytes) -> count` computes the
 * outputs the buffered input allows: while n < avail, output = the dot
 * product of the K complex samples buf[n - K + 1 .. n] with phase p's K taps,
 * then p += down, n += p / up, p %= up. Each tap is stored twice (h, h), so
 * one f32x4 multiply takes two complex samples [re0 im0 re1 im1] times
 * [h0 h0 h1 h1]. Two f32x4 accumulators take alternate pairs (K is a multiple
 * of 4); at the end re = (a0 + b0) + (a2 + b2), im = (a1 + b1) + (a3 + b3),
 * in that order, in float32. The new n and p are left in the exported
 * globals `n` and `p`.
 */
import { compileWasm, funcBody, mem, op, oneFunctionModule, S, simd, sleb, T, V128_ZERO, wasmApi, type WasmModule } from '../../../src/core/wasm-emit.js';

// Parameters and locals of `run`, by index.
const P = { buf: 0, taps: 1, out: 2, n: 3, p: 4, avail: 5, up: 6, down: 7, kBytes: 8 } as const;
const L = { count: 9, xp: 10, hp: 11, hend: 12, a: 13, b: 14 } as const;

function runBody(): number[] {
  const get = (i: number): number[] => [op.localGet, i];
  const set = (i: number): number[] => [op.localSet, i];
  const i32 = (v: number): number[] => [op.i32Const, ...sleb(v)];
  // acc += load(xp + off) * load(hp + off)
  // prettier-ignore
  const mac = (acc: number, off: number): number[] => [
    ...get(acc),
    ...get(L.xp), ...S(simd.v128Load, ...mem(2, off)),
    ...get(L.hp), ...S(simd.v128Load, ...mem(2, off)),
    ...S(simd.f32x4Mul), ...S(simd.f32x4Add), ...set(acc),
  ];
  const lane = (v: number, l: number): number[] => [...get(v), ...S(simd.f32x4ExtractLane, l)];
  // One line per instruction group, as the comments read it: keep the layout.
  // prettier-ignore
  const code: number[] = [
    op.block, op.void,
    op.loop, op.void, // per output
    // if (n >= avail) stop
    ...get(P.n), ...get(P.avail), op.i32GeU, op.brIf, 1,
    // xp = buf + 8 (n + 1) - kBytes; hp = taps + p kBytes; hend = hp + kBytes
    ...get(P.buf), ...get(P.n), ...i32(1), op.i32Add, ...i32(8), op.i32Mul, op.i32Add, ...get(P.kBytes), op.i32Sub, ...set(L.xp),
    ...get(P.taps), ...get(P.p), ...get(P.kBytes), op.i32Mul, op.i32Add, op.localTee, L.hp,
    ...get(P.kBytes), op.i32Add, ...set(L.hend),
    ...V128_ZERO, ...set(L.a),
    ...V128_ZERO, ...set(L.b),
    op.loop, op.void, // per four taps
    ...mac(L.a, 0),
    ...mac(L.b, 16),
    ...get(L.xp), ...i32(32), op.i32Add, ...set(L.xp),
    ...get(L.hp), ...i32(32), op.i32Add, op.localTee, L.hp,
    ...get(L.hend), op.i32LtU, op.brIf, 0,
    op.end,
    // a = a + b; out[0] = a0 + a2; out[1] = a1 + a3
    ...get(L.a), ...get(L.b), ...S(simd.f32x4Add), ...set(L.a),
    ...get(P.out), ...lane(L.a, 0), ...lane(L.a, 2), op.f32Add, op.f32Store, ...mem(2, 0),
    ...get(P.out), ...lane(L.a, 1), ...lane(L.a, 3), op.f32Add, op.f32Store, ...mem(2, 4),
    ...get(P.out), ...i32(8), op.i32Add, ...set(P.out),
    ...get(L.count), ...i32(1), op.i32Add, ...set(L.count),
    // p += down; n += p / up; p %= up
    ...get(P.p), ...get(P.down), op.i32Add, ...set(P.p),
    ...get(P.n), ...get(P.p), ...get(P.up), op.i32DivU, op.i32Add, ...set(P.n),
    ...get(P.p), ...get(P.up), op.i32RemU, ...set(P.p),
    op.br, 0,
    op.end,
    op.end,
    ...get(P.n), op.globalSet, 0,
    ...get(P.p), op.globalSet, 1,
    ...get(L.count),
    op.end,
  ];
  return funcBody(
    [
      [4, T.i32], // count, xp, hp, hend
      [2, T.v128], // a, b
    ],
    code,
  );
}

/** The whole module: imports `env.memory`, exports `run` and the globals `n` and `p`. */
export function firModuleBytes(): Uint8Array {
  return oneFunctionModule({
    params: new Array<number>(9).fill(T.i32),
    results: [T.i32],
    name: 'run',
    body: runBody(),
    globals: [
      { name: 'n', type: T.i32 },
      { name: 'p', type: T.i32 },
    ],
  });
}

let compiled: WasmModule | string | undefined;

/** The compiled module, built on first use, or why it cannot be (no WebAssembly, no SIMD). */
export function firModule(): WasmModule | string {
  compiled ??= compileWasm(wasmApi(), firModuleBytes());
  return compiled;
}
