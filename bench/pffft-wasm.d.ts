/** The parts of the Emscripten module bench/psd.ts uses (the package ships no types). */
interface PffftModule {
  HEAPF32: Float32Array;
  _pffft_new_setup(n: number, transform: number): number;
  _pffft_destroy_setup(setup: number): void;
  _pffft_transform_ordered(setup: number, input: number, output: number, work: number, direction: number): void;
  _pffft_aligned_malloc(bytes: number): number;
  _pffft_aligned_free(ptr: number): void;
  _pffft_simd_size(): number;
}

declare module '@echogarden/pffft-wasm' {
  export default function PFFFT(): Promise<PffftModule>;
}

declare module '@echogarden/pffft-wasm/simd' {
  export default function PFFFT(): Promise<PffftModule>;
}
