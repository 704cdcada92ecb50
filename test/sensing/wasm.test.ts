import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { chooseBackend, probeBlock, type Measure } from '../../src/sensing/backend.js';
import { BackendUnavailableError, cpuBackend, type EnergyBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { type EnergyCounts } from '../../src/sensing/energy.js';
import { compileEnergyModule, energyModuleBytes, sleb, uleb, wasmBackend, WasmEnergyBackend, type WasmApi } from '../../src/sensing/wasm.js';

/** The parts of the WebAssembly JS API the tests use (the project's lib does not declare it). */
interface WasmReflect extends WasmApi {
  Module: WasmApi['Module'] & {
    exports(m: unknown): Array<{ kind: string; name: string }>;
    imports(m: unknown): Array<{ kind: string; module: string; name: string }>;
  };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmReflect }).WebAssembly;

/**
 * Random IQ whose window powers straddle the threshold used below: the scale
 * of each run of five samples is drawn from a wide range, so many windows land
 * near the threshold and a difference in rounding could show in the busy count.
 */
function randomIq(count: number, seed: number): Float32Array {
  const rng = Rng.fromSeed(seed).fork('wasm/random');
  const data = new Float32Array(2 * count);
  for (let k = 0; k < count; k += 5) {
    const n = Math.min(5, count - k);
    rng.fillNormal(data, 0.05 + 0.2 * rng.next(), 2 * k, 2 * n);
  }
  return data;
}

/** Equal counts; sums within 1e-9 relative. */
function assertSame(got: EnergyCounts, want: EnergyCounts, what: string): void {
  assert.equal(got.windows, want.windows, `${what}: windows`);
  assert.equal(got.busyWindows, want.busyWindows, `${what}: busy windows`);
  assert.equal(got.leftover, want.leftover, `${what}: leftover`);
  for (const k of ['sumPower', 'busySumPower'] as const) {
    assert.ok(Math.abs(got[k] - want[k]) <= 1e-9 * Math.abs(want[k]), `${what}: ${k} ${got[k]} vs ${want[k]}`);
  }
}

/** The threshold sum of a window of `ws` samples at mean power 0.048 (near the median of randomIq's windows). */
const thr = (ws: number): number => 0.048 * ws;

const WINDOWS = [1, 3, 4, 10, 17, 80];

test('LEB128 encodings', () => {
  assert.deepEqual(uleb(0), [0]);
  assert.deepEqual(uleb(127), [0x7f]);
  assert.deepEqual(uleb(128), [0x80, 0x01]);
  assert.deepEqual(uleb(624485), [0xe5, 0x8e, 0x26]);
  assert.deepEqual(sleb(0), [0]);
  assert.deepEqual(sleb(-1), [0x7f]);
  assert.deepEqual(sleb(63), [0x3f]);
  assert.deepEqual(sleb(64), [0xc0, 0x00]);
  assert.deepEqual(sleb(-64), [0x40]);
  assert.deepEqual(sleb(-123456), [0xc0, 0xbb, 0x78]);
  assert.throws(() => uleb(-1), RangeArgumentError);
});

test('the emitted module validates and exports detect, sum and busySum', () => {
  const bytes = energyModuleBytes();
  assert.deepEqual([...bytes.subarray(0, 8)], [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  assert.equal(WebAssembly.validate(bytes), true);
  const m = new WebAssembly.Module(bytes);
  assert.deepEqual(
    WebAssembly.Module.exports(m).map((e) => `${e.kind}:${e.name}`),
    ['function:detect', 'global:sum', 'global:busySum'],
  );
  assert.deepEqual(
    WebAssembly.Module.imports(m).map((e) => `${e.kind}:${e.module}.${e.name}`),
    ['memory:env.memory'],
  );
});

test('wasm finds exactly what the cpu loop finds, window sizes 1 to 80, in the arena', () => {
  const count = 20_011;
  const data = randomIq(count, 1);
  const wasm = wasmBackend({ capacity: count });
  const inArena = wasm.allocate(count);
  inArena.set(data);
  assert.ok(wasm.owns(inArena));
  for (const ws of WINDOWS) {
    const want = cpuBackend.detect(data, count, ws, thr(ws));
    assert.ok(want.busyWindows > 0 && want.busyWindows < want.windows, 'the threshold splits the windows');
    const got = wasm.detect(inArena, count, ws, thr(ws));
    assertSame(got, want, `window ${ws}`);
    assert.deepEqual(got, want, `window ${ws}: bit for bit`);
  }
});

test('wasm and cpu agree on counts smaller than the data, zero count, and a count under one window', () => {
  const data = randomIq(5000, 2);
  const wasm = wasmBackend({ capacity: 5000 });
  const inArena = wasm.allocate(5000);
  inArena.set(data);
  for (const ws of WINDOWS) {
    for (const count of [4321, 4999, ws - 1, 0]) {
      if (count < 0) continue;
      const want = cpuBackend.detect(data, count, ws, thr(ws));
      assertSame(wasm.detect(inArena, count, ws, thr(ws)), want, `in arena, ${count} samples, window ${ws}`);
      assertSame(wasm.detect(data, count, ws, thr(ws)), want, `copied, ${count} samples, window ${ws}`);
    }
  }
  assert.deepEqual(wasm.detect(new Float32Array(0), 0, 10, 1), { windows: 0, busyWindows: 0, sumPower: 0, busySumPower: 0, leftover: 0 });
  assert.throws(() => wasm.detect(data, 5001, 10, 1), RangeArgumentError);
  assert.throws(() => wasm.detect(data, 10, 0, 1), RangeArgumentError);
});

test('the in-place and the copied paths agree, in one chunk or many, and past the scratch region', () => {
  const count = 30_000;
  const data = randomIq(count, 3);
  // A scratch region of 1000 samples: 30 chunks of windows of 10, windows of 1500 do not fit.
  const wasm = wasmBackend({ capacity: count, scratch: 1000 });
  const inArena = wasm.allocate(count);
  inArena.set(data);
  for (const ws of [...WINDOWS, 999, 1000, 1001, 1500]) {
    const inPlace = wasm.detect(inArena, count, ws, thr(ws));
    const copied = wasm.detect(data, count, ws, thr(ws));
    assert.deepEqual(copied, inPlace, `window ${ws}`);
    assertSame(inPlace, cpuBackend.detect(data, count, ws, thr(ws)), `window ${ws} against cpu`);
  }
  // Data in another backend's arena is copied too.
  const other = wasmBackend({ capacity: count });
  const theirs = other.allocate(count);
  theirs.set(data);
  assert.equal(wasm.owns(theirs), false);
  assert.deepEqual(wasm.detect(theirs, count, 10, thr(10)), wasm.detect(inArena, count, 10, thr(10)));
});

test('a view into the middle of the arena is read from its own offset', () => {
  const wasm = wasmBackend({ capacity: 3000 });
  const first = wasm.allocate(1000);
  first.fill(1);
  const second = wasm.allocate(1999);
  const data = randomIq(1999, 4);
  second.set(data);
  assert.equal(second.byteOffset % 16, 0, 'allocations are 16-byte aligned');
  assertSame(wasm.detect(second, 1999, 17, thr(17)), cpuBackend.detect(data, 1999, 17, thr(17)), 'second allocation');
  const sub = second.subarray(6, 2 * 1999); // three complex samples in: not 16-byte aligned
  assertSame(wasm.detect(sub, 1996, 10, thr(10)), cpuBackend.detect(data.subarray(6), 1996, 10, thr(10)), 'unaligned view');
});

test('allocate hands out views of the arena until it is full, then refuses', () => {
  const wasm = wasmBackend({ capacity: 1000 });
  assert.equal(wasm.capacity, 1000);
  const a = wasm.allocate(600);
  assert.equal(a.length, 1200);
  assert.equal(a.buffer, wasm.memory.buffer);
  assert.equal(wasm.used, 600);
  assert.throws(
    () => wasm.allocate(401),
    (e: unknown) => e instanceof RangeArgumentError && e.code === 'CORE_OUT_OF_RANGE' && /\[0, 400\]/.test(e.message),
  );
  assert.equal(wasm.allocate(400).length, 800);
  assert.throws(() => wasm.allocate(1), RangeArgumentError);
  assert.equal(wasm.allocate(0).length, 0);
  assert.throws(() => wasm.allocate(-1), RangeArgumentError);
  assert.throws(() => wasm.allocate(1.5), RangeArgumentError);
  wasm.reset();
  assert.equal(wasm.used, 0);
  assert.equal(wasm.allocate(1000).length, 2000);
  assert.throws(() => wasmBackend({ capacity: -1 }), RangeArgumentError);
  assert.throws(() => wasmBackend({ scratch: 0 }), RangeArgumentError);
  assert.equal(wasmBackend().capacity, 1 << 20, 'default: 1 Mi complex samples');
});

test('without WebAssembly SIMD the backend is unavailable, with the reason', () => {
  const noSimd = { ...(WebAssembly as unknown as WasmApi), validate: () => false } as WasmApi;
  const e = compileEnergyModule(noSimd);
  assert.ok(e instanceof BackendUnavailableError);
  assert.equal(e.code, 'SENSING_BACKEND_UNAVAILABLE');
  assert.equal(e.backend, 'wasm');
  assert.match(e.message, /^energy-detector wasm backend unavailable: .*simd128/);
  const none = compileEnergyModule(undefined);
  assert.ok(none instanceof BackendUnavailableError);
  assert.match(none.reason, /no WebAssembly/);
  assert.ok(!(compileEnergyModule(WebAssembly) instanceof BackendUnavailableError), 'this engine has it');
});

test('the detector runs on the wasm backend', () => {
  const wasm = wasmBackend({ capacity: 1 << 14 });
  const p = probeBlock(1 << 14, 10);
  const data = wasm.allocate(p.count);
  data.set(p.data);
  const det = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -62 }, wasm);
  const d = det.detect({ data, count: p.count, startUs: 0, sampleRateHz: 1e6, centerHz: 2.412e9, calibrationDb: 0, droppedSamples: 0 });
  assert.equal(d.busyWindows, p.busyWindows);
});

const smallProbe = probeBlock(4096, 16);

/** Injected timings by backend name; records what each was timed on. */
function speeds(figures: Partial<Record<EnergyBackend['name'], number>>, seen: Array<[string, Float32Array]> = []): Measure {
  return (backend, probe) => {
    seen.push([backend.name, probe.data]);
    return figures[backend.name] ?? 1;
  };
}

function fakeGpu(): EnergyBackend & { closed: number } {
  const b = {
    name: 'gpu' as const,
    engine: 'fake gpu',
    closed: 0,
    detect: cpuBackend.detect,
    async close() {
      b.closed++;
    },
  };
  return b;
}

test("'auto' takes wasm when it is the fastest, timed in its arena, and frees the probe's block", async () => {
  const wasm = wasmBackend({ capacity: 8192 });
  const gpu = fakeGpu();
  const seen: Array<[string, Float32Array]> = [];
  const c = await chooseBackend('auto', {
    wasm: () => wasm,
    gpu: async () => gpu,
    measure: speeds({ cpu: 1000, wasm: 1900, gpu: 50 }, seen),
    probe: smallProbe,
  });
  assert.equal(c.backend, wasm);
  assert.deepEqual(c.probe, { cpuMsps: 1000, wasmMsps: 1900, gpuMsps: 50 });
  assert.equal(c.reason, 'wasm simd128 1900 Msps > cpu 1000 Msps; fake gpu 50 Msps < cpu 1000 Msps: using wasm');
  const timed = seen.find(([n]) => n === 'wasm')![1];
  assert.equal(timed.buffer, wasm.memory.buffer, 'the probe ran in place');
  assert.equal(wasm.used, 0, 'the probe block was freed');
  assert.equal(gpu.closed, 1, 'the slower gpu backend was released');
});

test("'auto' takes the fastest of wasm and gpu, cpu when neither beats it, and skips a wrong wasm", async () => {
  const gpu = fakeGpu();
  const g = await chooseBackend('auto', { gpu: async () => gpu, measure: speeds({ cpu: 1000, wasm: 1900, gpu: 2500 }), probe: smallProbe });
  assert.equal(g.backend, gpu);
  assert.match(g.reason, /: using gpu$/);

  const c = await chooseBackend('auto', { gpu: async () => fakeGpu(), measure: speeds({ cpu: 1000, wasm: 1000, gpu: 10 }), probe: smallProbe });
  assert.equal(c.backend, cpuBackend);
  assert.match(c.reason, /^wasm simd128 1000 Msps = cpu 1000 Msps; .*: using cpu$/);

  const wrong: EnergyBackend = { name: 'wasm', engine: 'bad wasm', detect: (...a) => ({ ...cpuBackend.detect(...a), busyWindows: 0 }) };
  const w = await chooseBackend('auto', {
    wasm: () => wrong,
    gpu: async () => fakeGpu(),
    measure: speeds({ cpu: 1000, wasm: 5000, gpu: 10 }),
    probe: smallProbe,
  });
  assert.equal(w.backend, cpuBackend);
  assert.equal(w.probe?.wasmMsps, undefined);
  assert.match(w.probe?.wasmError ?? '', /^bad wasm found 0 busy of 256 windows/);

  const missing = await chooseBackend('auto', {
    wasm: () => {
      throw new BackendUnavailableError('no simd128 here', { backend: 'wasm' });
    },
    gpu: async () => fakeGpu(),
    measure: speeds({ cpu: 1000, gpu: 10 }),
    probe: smallProbe,
  });
  assert.equal(missing.backend, cpuBackend);
  assert.match(missing.reason, /^wasm unavailable \(no simd128 here\); /);
  assert.equal(missing.probe?.wasmError, 'no simd128 here');
});

test("'wasm' takes the wasm backend without probing", async () => {
  let timed = 0;
  const c = await chooseBackend('wasm', { measure: () => (timed++, 1) });
  assert.ok(c.backend instanceof WasmEnergyBackend);
  assert.equal(c.backend.name, 'wasm');
  assert.equal(c.probe, undefined);
  assert.equal(timed, 0);
  assert.match(c.reason, /^wasm backend configured \(wasm simd128\)$/);
});
