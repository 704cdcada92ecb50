/**
 * The one's complement sum of RFC 1071, shared by the IP, ICMP, TCP and UDP
 * checksums (src/wire/ip.ts, src/wire/tcp.ts).
 */
import { funcBody, functionsModule, mem, op, S, simd, T, V128_ZERO, wasmApi, type WasmMemory } from '../core/wasm-emit.js';

/** Whether the machine stores a u32 low byte first (then a Uint32Array reads little-endian words). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/**
 * Spans at least this long are summed 32 bits at a time. Shorter ones may be
 * arrays whose bytes V8 keeps in the object (up to 64 bytes), and reading
 * their `.buffer` would move them off the heap.
 */
const WIDE_MIN_BYTES = 128;
/** Words summed in one go before folding: each of the four sums takes at most 2^14 halves, below 2^30. */
const WIDE_CHUNK_WORDS = 1 << 15;
/**
 * u32 views of the last two buffers summed: packets come from a few shared
 * slabs, so one of them is nearly always the one wanted (a segment made from
 * the newest slab, and one that arrived in an older one, summed in turn).
 */
let wideBuffer: ArrayBufferLike | undefined;
let wide: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
let olderBuffer: ArrayBufferLike | undefined;
let older: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

/**
 * Adds the big-endian 16-bit words of b[start, end) to `sum`; end - start
 * must be even. No carries folded here: a double holds the exact sum of 2^37
 * words, far beyond any segment. A span of 128 bytes to 64 KiB goes to the
 * SIMD kernel below where the engine has WebAssembly SIMD; otherwise (and
 * for the rest) `sumWordsLoop`. The result is the same number either way.
 */
export function sumWords(b: Uint8Array, start: number, end: number, sum: number): number {
  const n = end - start;
  if (n < WIDE_MIN_BYTES || n > SIMD_MAX_BYTES) return sumWordsLoop(b, start, end, sum);
  const kernel = simdSum ?? (simdTried ? undefined : buildKernel());
  if (kernel === undefined) return sumWordsLoop(b, start, end, sum);
  // The span copied into the kernel's memory, then zeros to the end of its last step.
  simdBytes.set(start === 0 && end === b.length ? b : b.subarray(start, end));
  if ((n & (SIMD_STEP_BYTES - 1)) !== 0) simdBytes.fill(0, n, (n + SIMD_STEP_BYTES - 1) & -SIMD_STEP_BYTES);
  const le = fold(kernel(n) >>> 0);
  return sum + (((le & 0xff) << 8) | (le >>> 8));
}

/**
 * `sumWords` in JavaScript (exported for its tests). Unrolled by four words
 * to cut the loop overhead; no per-byte allocation, no DataView. A long span
 * at an even address is summed as little-endian u32 words (RFC 1071 2(B):
 * the sum does not depend on byte order, and swaps with it), a quarter of the
 * steps; the result is the same number.
 */
export function sumWordsLoop(b: Uint8Array, start: number, end: number, sum: number): number {
  let i = start;
  if (end - i >= WIDE_MIN_BYTES && LITTLE_ENDIAN && ((b.byteOffset + i) & 1) === 0) {
    if (((b.byteOffset + i) & 3) !== 0) {
      sum += (b[i]! << 8) | b[i + 1]!;
      i += 2;
    }
    const buf = b.buffer;
    if (buf !== wideBuffer) {
      const view = buf === olderBuffer ? older : new Uint32Array(buf, 0, buf.byteLength >>> 2);
      olderBuffer = wideBuffer;
      older = wide;
      wideBuffer = buf;
      wide = view;
    }
    const w = wide;
    let k = (b.byteOffset + i) >>> 2;
    const words = (end - i) >>> 2;
    const stop = k + words;
    while (k < stop) {
      const chunkEnd = Math.min(stop, k + WIDE_CHUNK_WORDS);
      // The low and high halves apart keep the sums small integers; two
      // pairs of them, four words a step, let the additions overlap.
      let lo = 0;
      let hi = 0;
      let lo2 = 0;
      let hi2 = 0;
      for (const end4 = chunkEnd - 3; k < end4; k += 4) {
        const w0 = w[k]!;
        const w1 = w[k + 1]!;
        const w2 = w[k + 2]!;
        const w3 = w[k + 3]!;
        lo += (w0 & 0xffff) + (w1 & 0xffff);
        hi += (w0 >>> 16) + (w1 >>> 16);
        lo2 += (w2 & 0xffff) + (w3 & 0xffff);
        hi2 += (w2 >>> 16) + (w3 >>> 16);
      }
      for (; k < chunkEnd; k++) {
        const v = w[k]!;
        lo += v & 0xffff;
        hi += v >>> 16;
      }
      // Folded to 16 bits, it is the sum of the little-endian 16-bit words; swapped, of the big-endian ones.
      const le = fold(lo + hi + lo2 + hi2);
      sum += ((le & 0xff) << 8) | (le >>> 8);
    }
    i += words * 4;
  }
  return sumNarrow(b, i, end, sum);
}

function sumNarrow(b: Uint8Array, start: number, end: number, sum: number): number {
  let i = start;
  for (const stop = end - 7; i < stop; i += 8) {
    sum += ((b[i]! << 8) | b[i + 1]!) + ((b[i + 2]! << 8) | b[i + 3]!) + ((b[i + 4]! << 8) | b[i + 5]!) + ((b[i + 6]! << 8) | b[i + 7]!);
  }
  for (; i < end; i += 2) sum += (b[i]! << 8) | b[i + 1]!;
  return sum;
}

/** Folds the carries of a sum back into 16 bits (end-around carry). */
export function fold(sum: number): number {
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return sum;
}

/**
 * The SIMD kernel of a long span (WebAssembly simd128, emitted with
 * src/core/wasm-emit.ts): `sum(n)` adds the little-endian 16-bit words of
 * memory[0, n) (zeros after n up to its last 32-byte step), eight at a time
 * into u32 lanes (i32x4.extadd_pairwise_i16x8_u), two vectors a step, and
 * returns the lanes' total. A 1020-byte span in about 100 ns with the copy
 * into its memory, about half of the u32 loop's time, and a 64 KiB one in a
 * fifth (`npm run bench:checksum`). Without WebAssembly SIMD, the loop does
 * it all.
 */
const SIMD_STEP_BYTES = 32;
/** A lane adds at most 2 x 65535 a vector, and each of the two accumulators takes n/32 vectors: at 64 KiB their four lanes total just under 2^31. */
const SIMD_MAX_BYTES = 65536;
let simdBytes = new Uint8Array(0);
/** Built for the first span long enough (a process that sums none compiles no module); undefined after that if the engine has no WebAssembly SIMD. */
let simdSum: ((n: number) => number) | undefined;
let simdTried = false;

function buildKernel(): ((n: number) => number) | undefined {
  simdTried = true;
  simdSum = simdKernel();
  return simdSum;
}

function simdKernel(): ((n: number) => number) | undefined {
  const api = wasmApi();
  if (api === undefined) return undefined;
  const N = 0;
  const P = 1;
  const A = 2;
  const B = 3;
  const extaddU16 = 0x7f; // i32x4.extadd_pairwise_i16x8_u
  const add = 0xae; // i32x4.add
  const lane = 0x1b; // i32x4.extract_lane
  // prettier-ignore
  const code = [
    ...V128_ZERO, op.localSet, A,
    ...V128_ZERO, op.localSet, B,
    op.block, op.void, op.loop, op.void,
    op.localGet, P, op.localGet, N, op.i32GeU, op.brIf, 1,
    op.localGet, A, op.localGet, P, ...S(simd.v128Load, ...mem(0, 0)), ...S(extaddU16), ...S(add), op.localSet, A,
    op.localGet, B, op.localGet, P, ...S(simd.v128Load, ...mem(0, 16)), ...S(extaddU16), ...S(add), op.localSet, B,
    op.localGet, P, op.i32Const, SIMD_STEP_BYTES, op.i32Add, op.localSet, P,
    op.br, 0,
    op.end, op.end,
    op.localGet, A, op.localGet, B, ...S(add), op.localTee, A, ...S(lane, 0),
    op.localGet, A, ...S(lane, 1), op.i32Add,
    op.localGet, A, ...S(lane, 2), op.i32Add,
    op.localGet, A, ...S(lane, 3), op.i32Add,
    op.end,
  ];
  const bytes = functionsModule([
    {
      name: 'sum',
      params: [T.i32],
      results: [T.i32],
      body: funcBody(
        [
          [1, T.i32],
          [2, T.v128],
        ],
        code,
      ),
    },
  ]);
  try {
    if (!api.validate(bytes)) return undefined;
    const memory: WasmMemory = new api.Memory({ initial: 2, maximum: 2 });
    const sum = new api.Instance(new api.Module(bytes), { env: { memory } }).exports.sum as (n: number) => number;
    simdBytes = new Uint8Array(memory.buffer);
    return sum;
  } catch {
    return undefined;
  }
}
