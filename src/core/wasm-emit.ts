/**
 * A small WebAssembly binary emitter: the encodings (LEB128, vectors, names,
 * sections), the value types and the opcodes that cogmesh's hand-written
 * SIMD kernels use, and the part of the engine's WebAssembly JS API they
 * need. The sensing backend (src/sensing/wasm.ts), the DSSS PHY's FIR
 * kernel (radio/phy/dsss/fir-wasm.ts) and its receiver's despreader
 * (radio/phy/dsss/despread-wasm.ts) emit their modules with it, byte by
 * byte: no toolchain, no package.
 */
import { RangeArgumentError } from './errors.js';

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

/** A name: its UTF-8 length, then its bytes. */
export function name(s: string): number[] {
  const b = [...new TextEncoder().encode(s)];
  return [...uleb(b.length), ...b];
}

/** A vector: its length, then its items. */
export function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

/** A section: its id, its size, its body. */
export function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

/** The eight bytes of a float64, little-endian (for f64.const). */
export function f64Bytes(x: number): number[] {
  return [...new Uint8Array(new Float64Array([x]).buffer)];
}

/** The module header: \0asm, version 1. */
export const MAGIC_AND_VERSION: readonly number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** Value types. */
export const T = { i32: 0x7f, f32: 0x7d, f64: 0x7c, v128: 0x7b } as const;

/** The core opcodes used (the 0xfd prefix introduces the SIMD ones, `simd`). */
export const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  void: 0x40,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  select: 0x1b,
  globalGet: 0x23,
  globalSet: 0x24,
  f32Load: 0x2a,
  f64Load: 0x2b,
  f32Store: 0x38,
  f64Store: 0x39,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  f64Gt: 0x64,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32DivU: 0x6e,
  i32RemU: 0x70,
  f32Add: 0x92,
  f64Add: 0xa0,
  f64Mul: 0xa2,
  f64ConvertI32U: 0xb8,
  f64PromoteF32: 0xbb,
  simd: 0xfd,
} as const;

/** SIMD (simd128) opcodes, after the 0xfd prefix. */
export const simd = {
  v128Load: 0x00,
  v128Store: 0x0b,
  v128Const: 0x0c,
  i8x16Shuffle: 0x0d,
  f32x4ExtractLane: 0x1f,
  f64x2ExtractLane: 0x21,
  v128Load64Zero: 0x5d,
  f64x2PromoteLowF32x4: 0x5f,
  f32x4Add: 0xe4,
  f32x4Mul: 0xe6,
  f64x2Neg: 0xed,
  f64x2Add: 0xf0,
  f64x2Sub: 0xf1,
  f64x2Mul: 0xf2,
} as const;

/** A SIMD instruction: the prefix, the opcode, its immediates. */
export const S = (code: number, ...imm: number[]): number[] => [op.simd, ...uleb(code), ...imm];
/** memarg: log2 alignment (a hint), offset. */
export const mem = (align: number, offset: number): number[] => [...uleb(align), ...uleb(offset)];
/** v128.const of zeros. */
export const V128_ZERO: readonly number[] = S(simd.v128Const, ...new Array<number>(16).fill(0));

/** Byte lanes of an i8x16.shuffle taking the given f32 lanes (0-3 first operand, 4-7 second). */
export function f32Lanes(...lanes: number[]): number[] {
  return lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]);
}

/** A function body: its locals as (count, type) runs in index order, its code; with its size in front. */
export function funcBody(locals: Array<[number, number]>, code: number[]): number[] {
  const body = [...vec(locals.map(([n, t]) => [...uleb(n), t])), ...code];
  return [...uleb(body.length), ...body];
}

/** A mutable global of type i32 or f64, starting at zero. */
function zeroGlobal(type: number): number[] {
  const init = type === T.f64 ? [0x44, ...f64Bytes(0)] : [op.i32Const, 0];
  return [type, 0x01, ...init, op.end];
}

export interface WasmFunction {
  /** The function's parameter and result types. */
  params: number[];
  results: number[];
  /** The function's export name and its body (funcBody). */
  name: string;
  body: number[];
}

export interface OneFunctionModule extends WasmFunction {
  /** Mutable globals, exported by these names, all zero at the start (i32 or f64). */
  globals: Array<{ name: string; type: number }>;
}

/**
 * The bytes of a module of one function that imports its memory as
 * `env.memory` (at least one page) and exports the function and its globals.
 */
export function oneFunctionModule(m: OneFunctionModule): Uint8Array {
  return functionsModule([m], m.globals);
}

/**
 * The bytes of a module of `functions`, each with its own type, that imports
 * its memory as `env.memory` (at least one page) and exports the functions
 * and `globals`.
 */
export function functionsModule(functions: WasmFunction[], globals: Array<{ name: string; type: number }> = []): Uint8Array {
  const funcType = (f: WasmFunction): number[] => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))];
  // prettier-ignore
  const bytes = [
    ...MAGIC_AND_VERSION,
    ...section(1, vec(functions.map(funcType))),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...section(6, vec(globals.map((g) => zeroGlobal(g.type)))),
    ...section(7, vec([
      ...functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]),
      ...globals.map((g, i) => [...name(g.name), 0x03, ...uleb(i)]),
    ])),
    ...section(10, vec(functions.map((f) => f.body))),
  ];
  return new Uint8Array(bytes);
}

// The part of the WebAssembly JS API used here. The project's lib (ES2023)
// and @types/node 20.9 do not declare it.
/** A compiled module (opaque). */
export interface WasmModule {
  readonly __wasmModule?: never;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  /** Adds `pages` pages; the old `buffer` is detached, views of it must be made again. */
  grow(pages: number): number;
}
export interface WasmGlobal {
  value: unknown;
}
export interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (desc: { initial: number; maximum?: number }) => WasmMemory;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
}

/** The engine's WebAssembly object, or undefined. A function, so that tests can see a missing one. */
export function wasmApi(): WasmApi | undefined {
  const api = (globalThis as { WebAssembly?: Partial<WasmApi> }).WebAssembly;
  return api !== undefined && typeof api.validate === 'function' && typeof api.Module === 'function' ? (api as WasmApi) : undefined;
}

/**
 * Validates and compiles `bytes` with `api`, or returns why it cannot, in
 * words: no WebAssembly, a module that does not validate (an engine without
 * simd128), or one that does not compile.
 */
export function compileWasm(api: WasmApi | undefined, bytes: Uint8Array): WasmModule | string {
  if (api === undefined) return 'this engine has no WebAssembly';
  if (!api.validate(bytes)) return 'this engine does not validate the simd128 module (no WebAssembly SIMD)';
  try {
    return new api.Module(bytes);
  } catch (e) {
    return `the simd128 module does not compile (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** WebAssembly's page, bytes. */
export const WASM_PAGE = 65536;
