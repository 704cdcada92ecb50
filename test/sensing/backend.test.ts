import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { chooseBackend, gpuBackend, probeBlock, timeBackend, type Measure } from '../../src/sensing/backend.js';
import { BackendUnavailableError, cpuBackend, type EnergyBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { detectEnergy } from '../../src/sensing/energy.js';

const UNAVAILABLE = { code: 'SENSING_BACKEND_UNAVAILABLE' };

/** A small probe, so the decision tests stay fast; their timings are injected. */
const smallProbe = probeBlock(4096, 16);

/** A stand-in gpu backend: right (the CPU loop) or wrong (one busy window too many). */
function fakeGpu(kind: 'right' | 'wrong' | 'throws' = 'right'): EnergyBackend & { closed: number } {
  const b = {
    name: 'gpu' as const,
    engine: 'fake gpu',
    closed: 0,
    detect(data: Float32Array, count: number, ws: number, thr: number) {
      if (kind === 'throws') throw new Error('context lost');
      const c = detectEnergy(data, count, ws, thr);
      return kind === 'right' ? c : { ...c, busyWindows: c.busyWindows + 1 };
    },
    async close() {
      b.closed++;
    },
  };
  return b;
}

/** Injected timings: megasamples per second by backend name. */
const speeds =
  (cpu: number, gpu: number): Measure =>
  (backend) =>
    backend.name === 'cpu' ? cpu : gpu;

const failingImport = () => gpuBackend({ importGpu: () => Promise.reject(new Error("Cannot find package 'gpu.js'")) });

/** Random IQ with windows well clear of the threshold, so single and double precision agree. */
function randomIq(count: number, ws: number, seed: number): Float32Array {
  const rng = Rng.fromSeed(seed).fork('backend/random');
  const data = new Float32Array(2 * count);
  for (let w = 0; w * ws < count; w++) {
    const n = Math.min(ws, count - w * ws);
    rng.fillNormal(data, rng.next() < 0.4 ? 0.1 : 0.001, 2 * w * ws, 2 * n);
  }
  return data;
}

test('the cpu backend is the detector loop', () => {
  assert.equal(cpuBackend.name, 'cpu');
  const data = randomIq(1000, 10, 1);
  assert.deepEqual(cpuBackend.detect(data, 1000, 10, 0.02), detectEnergy(data, 1000, 10, 0.02));
});

test('the probe block has the busy windows it was built with', () => {
  const p = probeBlock();
  assert.equal(p.count, 1 << 18);
  const c = cpuBackend.detect(p.data, p.count, p.windowSamples, p.thresholdSum);
  assert.equal(c.windows, p.count / p.windowSamples);
  assert.equal(c.busyWindows, p.busyWindows);
  assert.ok(Math.abs(p.busyWindows / c.windows - 0.3) < 0.02);
  assert.deepEqual(probeBlock().data, p.data, 'deterministic');
});

test('gpu.js, when it loads, finds the same busy windows as the cpu', async (t) => {
  let gpu: EnergyBackend;
  try {
    gpu = await gpuBackend();
  } catch (e) {
    t.skip(`gpu.js unavailable here: ${(e as Error).message}`);
    return;
  }
  try {
    assert.equal(gpu.name, 'gpu');
    assert.match(gpu.engine, /^gpu\.js /);
    for (const [count, ws, seed] of [
      [100_003, 10, 1],
      [65_536, 16, 2],
      [4_099, 7, 3],
      [100_003, 10, 4], // the first shape again, from the kernel cache
    ] as const) {
      const data = randomIq(count, ws, seed);
      const want = cpuBackend.detect(data, count, ws, 0.02 * ws);
      const got = gpu.detect(data, count, ws, 0.02 * ws);
      assert.equal(got.windows, want.windows);
      assert.equal(got.busyWindows, want.busyWindows, `busy windows, ${count} samples in windows of ${ws}`);
      assert.equal(got.leftover, want.leftover);
      assert.ok(Math.abs(got.sumPower - want.sumPower) < 1e-5 * want.sumPower);
      assert.ok(Math.abs(got.busySumPower - want.busySumPower) < 1e-5 * want.busySumPower);
    }
    const longer = randomIq(2000, 10, 5);
    assert.deepEqual(
      { ...gpu.detect(longer, 1000, 10, 0.2), sumPower: 0, busySumPower: 0 },
      { ...cpuBackend.detect(longer, 1000, 10, 0.2), sumPower: 0, busySumPower: 0 },
      'count below the data length',
    );
    assert.deepEqual(gpu.detect(new Float32Array(0), 0, 10, 1), { windows: 0, busyWindows: 0, sumPower: 0, busySumPower: 0, leftover: 0 });
    const det = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -62 }, gpu);
    const p = probeBlock(1 << 14, 10);
    const d = det.detect({ data: p.data, count: p.count, startUs: 0, sampleRateHz: 1e6, centerHz: 2.412e9, calibrationDb: 0, droppedSamples: 0 });
    assert.equal(d.busyWindows, p.busyWindows);
  } finally {
    await gpu.close?.();
  }
});

test('gpu.js that cannot be imported is unavailable, with the reason', async () => {
  await assert.rejects(failingImport(), (e: unknown) => {
    assert.ok(e instanceof BackendUnavailableError);
    assert.equal(e.code, 'SENSING_BACKEND_UNAVAILABLE');
    assert.match(e.message, /gpu\.js cannot be imported \(Cannot find package 'gpu\.js'\)/);
    return true;
  });
  await assert.rejects(gpuBackend({ importGpu: async () => ({ notGpu: 1 }) }), UNAVAILABLE);
});

test('a kernel that cannot be built makes the gpu backend unavailable', async () => {
  class BrokenGpu {
    readonly mode = 'gpu';
    readonly Kernel = { mode: 'headlessgl' };
    createKernel(): never {
      throw new Error('shader compile failed');
    }
  }
  await assert.rejects(gpuBackend({ importGpu: async () => ({ GPU: BrokenGpu }) }), (e: unknown) => {
    assert.ok(e instanceof BackendUnavailableError);
    assert.match(e.reason, /gpu\.js headlessgl cannot build a kernel .*shader compile failed/);
    return true;
  });
});

test('the gpu backend keeps one kernel per shape, the eight most recent', async () => {
  const built: string[] = [];
  const destroyed: string[] = [];
  // A gpu.js stand-in that runs the kernel's contract in JS: one power sum per window.
  class JsGpu {
    readonly mode = 'gpu';
    readonly Kernel = { mode: 'js' };
    createKernel(_src: string, s: { output: [number]; constants: { step: number } }) {
      const shape = `${s.constants.step / 2}x${s.output[0]}`;
      built.push(shape);
      const k = (data: Float32Array) => {
        const out = new Float32Array(s.output[0]);
        for (let w = 0; w < out.length; w++) {
          let sum = 0;
          for (let j = 0; j < s.constants.step; j++) sum += data[w * s.constants.step + j]! ** 2;
          out[w] = sum;
        }
        return out;
      };
      return Object.assign(k, { destroy: () => destroyed.push(shape) });
    }
  }
  const gpu = await gpuBackend({ importGpu: async () => ({ default: { GPU: JsGpu } }) });
  assert.equal(gpu.engine, 'gpu.js js');
  assert.deepEqual(built, ['2x2'], 'the self-test kernel');
  const data = randomIq(1000, 10, 9);
  const want = cpuBackend.detect(data, 1000, 10, 0.2);
  const got = gpu.detect(data, 1000, 10, 0.2);
  assert.equal(got.busyWindows, want.busyWindows);
  gpu.detect(data, 1000, 10, 0.3);
  assert.deepEqual(built, ['2x2', '10x100'], 'same shape, same kernel');
  for (let ws = 1; ws <= 7; ws++) gpu.detect(data, 1000, ws, 0.2);
  assert.equal(built.length, 9);
  assert.deepEqual(destroyed, ['2x2'], 'the least recently used went first');
  gpu.detect(data, 1000, 10, 0.2);
  assert.equal(built.length, 9, '10x100 was used recently and is still cached');
  await gpu.close?.();
  assert.equal(destroyed.length, 9, 'close releases every kernel');
});

test("'cpu' takes the cpu loop without probing or loading gpu.js", async () => {
  let loads = 0;
  const c = await chooseBackend('cpu', { gpu: async () => (loads++, fakeGpu()), measure: speeds(1, 1000) });
  assert.equal(c.backend, cpuBackend);
  assert.equal(c.probe, undefined);
  assert.equal(loads, 0);
});

test("'gpu' takes gpu.js, or fails with SENSING_BACKEND_UNAVAILABLE and the reason", async () => {
  const g = fakeGpu();
  const c = await chooseBackend('gpu', { gpu: async () => g });
  assert.equal(c.backend, g);
  assert.match(c.reason, /fake gpu/);
  await assert.rejects(chooseBackend('gpu', { gpu: failingImport }), (e: unknown) => {
    assert.ok(e instanceof BackendUnavailableError);
    assert.equal(e.code, 'SENSING_BACKEND_UNAVAILABLE');
    assert.match(e.message, /Cannot find package 'gpu\.js'/);
    return true;
  });
});

test("'auto' takes gpu when it is strictly faster and finds the same busy count", async () => {
  const g = fakeGpu('right');
  const c = await chooseBackend('auto', { gpu: async () => g, measure: speeds(400, 900), probe: smallProbe, wasm: false });
  assert.equal(c.backend, g);
  assert.deepEqual(c.probe, { cpuMsps: 400, gpuMsps: 900 });
  assert.equal(c.reason, 'fake gpu 900 Msps > cpu 400 Msps: using gpu');
  assert.equal(g.closed, 0);
});

test("'auto' keeps cpu when gpu is faster but wrong", async () => {
  const g = fakeGpu('wrong');
  const c = await chooseBackend('auto', { gpu: async () => g, measure: speeds(400, 900), probe: smallProbe, wasm: false });
  assert.equal(c.backend, cpuBackend);
  assert.match(c.reason, /^fake gpu found \d+ busy of 256 windows where cpu found \d+ of 256: using cpu$/);
  assert.equal(c.probe?.gpuMsps, undefined, 'a wrong backend is not timed');
  assert.match(c.probe?.gpuError ?? '', /busy/);
  assert.equal(g.closed, 1, 'the unused gpu backend is released');
});

test("'auto' keeps cpu when gpu is slower, or only as fast", async () => {
  const slow = fakeGpu();
  const c = await chooseBackend('auto', { gpu: async () => slow, measure: speeds(410, 12.345), probe: smallProbe, wasm: false });
  assert.equal(c.backend, cpuBackend);
  assert.equal(c.reason, 'fake gpu 12.3 Msps < cpu 410 Msps: using cpu');
  assert.deepEqual(c.probe, { cpuMsps: 410, gpuMsps: 12.345 });
  assert.equal(slow.closed, 1);
  const tie = await chooseBackend('auto', { gpu: async () => fakeGpu(), measure: speeds(500, 500), probe: smallProbe, wasm: false });
  assert.equal(tie.backend, cpuBackend);
  assert.match(tie.reason, /500 Msps = cpu 500 Msps: using cpu$/);
});

test("'auto' keeps cpu with the reason when gpu.js cannot be imported or fails on the probe", async () => {
  const c = await chooseBackend('auto', { gpu: failingImport, measure: speeds(400, 900), probe: smallProbe, wasm: false });
  assert.equal(c.backend, cpuBackend);
  assert.match(c.reason, /^gpu unavailable \(gpu\.js cannot be imported \(Cannot find package 'gpu\.js'\)\): using cpu$/);
  assert.equal(c.probe?.cpuMsps, 400);
  assert.match(c.probe?.gpuError ?? '', /cannot be imported/);

  const broken = fakeGpu('throws');
  const d = await chooseBackend('auto', { gpu: async () => broken, measure: speeds(400, 900), probe: smallProbe, wasm: false });
  assert.equal(d.backend, cpuBackend);
  assert.match(d.reason, /fake gpu failed on the probe block \(context lost\): using cpu/);
  assert.equal(broken.closed, 1);
});

test('the default measure runs at least once and stops at its run limit', () => {
  let runs = 0;
  const counting: EnergyBackend = { name: 'cpu', engine: 'counting', detect: (...a) => (runs++, detectEnergy(...a)) };
  assert.ok(timeBackend(0)(counting, smallProbe) > 0);
  assert.equal(runs, 1, 'a zero budget still measures one run');
  runs = 0;
  timeBackend(60_000, 3)(counting, smallProbe);
  assert.equal(runs, 3);
});

test("'auto' on this machine: gpu.js without a GPU is slower than the cpu loop, so not gpu", async (t) => {
  let engine: string;
  try {
    const g = await gpuBackend();
    engine = g.engine;
    await g.close?.();
  } catch (e) {
    t.skip(`gpu.js unavailable here: ${(e as Error).message}`);
    return;
  }
  if (!/webasm|cpu$/.test(engine)) {
    t.skip(`${engine} may run on a real GPU here; the pick is the probe's to make`);
    return;
  }
  const c = await chooseBackend('auto');
  assert.notEqual(c.backend.name, 'gpu', c.reason);
  assert.ok(c.probe!.gpuMsps! < c.probe!.cpuMsps);
  assert.match(c.reason, /(^|; )gpu\.js \w+ [\d.]+ Msps < cpu [\d.]+ Msps(;|:)/);
  assert.match(c.reason, /: using (cpu|wasm)$/);
});
