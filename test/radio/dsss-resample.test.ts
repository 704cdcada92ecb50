import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { compileWasm } from '../../src/core/wasm-emit.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { firModuleBytes } from '../../radio/phy/dsss/fir-wasm.js';
import { modulateFrame, shapedLeadSamples } from '../../radio/phy/dsss/modem.js';
import { firWasmUnavailable, PolyphaseFir, type FirKernel } from '../../radio/phy/dsss/polyphase.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { besselI0, kaiserLowpass, Resampler } from '../../radio/phy/dsss/resample.js';
import { ChipShaper, shaperToRate } from '../../radio/phy/dsss/shaping.js';

const KERNELS: FirKernel[] = firWasmUnavailable() === undefined ? ['ts', 'wasm'] : ['ts'];

function randomIq(rng: Rng, n: number): Float32Array {
  const x = new Float32Array(2 * n);
  rng.fillNormal(x, 0.7);
  return x;
}

/** |H(f)| of real taps at f cycles per sample. */
function gainAt(h: Float64Array, f: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < h.length; i++) {
    re += h[i]! * Math.cos(2 * Math.PI * f * i);
    im -= h[i]! * Math.sin(2 * Math.PI * f * i);
  }
  return Math.hypot(re, im);
}

test('this engine has WebAssembly SIMD, and the FIR module validates (the TypeScript kernel is the fallback)', () => {
  assert.equal(firWasmUnavailable(), undefined);
  assert.equal(compileWasm(undefined, firModuleBytes()), 'this engine has no WebAssembly');
});

test('without WebAssembly (node --jitless) the filters fall back to the TypeScript kernel and say why', () => {
  const code = [
    "import { firWasmUnavailable, PolyphaseFir } from './radio/phy/dsss/polyphase.ts';",
    "import { Resampler } from './radio/phy/dsss/resample.ts';",
    'const r = new Resampler({ inRateHz: 20e6, outRateHz: 22e6 });',
    'const y = r.resampleAll(new Float32Array(2000).fill(1));',
    "let k = 'ok'; try { new PolyphaseFir({ up: 1, down: 1, taps: [1], delay: 0, kernel: 'wasm' }); } catch (e) { k = e.message; }",
    'console.log(JSON.stringify({ why: firWasmUnavailable(), kernel: r.kernel, mid: y[1000], wasm: k }));',
  ].join('\n');
  const root = new URL('../..', import.meta.url).pathname;
  const r = spawnSync(process.execPath, ['--jitless', '--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { why: string; kernel: string; mid: number; wasm: string };
  assert.equal(got.why, 'this engine has no WebAssembly');
  assert.equal(got.kernel, 'ts');
  assert.ok(Math.abs(got.mid - 1) < 1e-3, `DC through the TypeScript kernel: ${got.mid}`);
  assert.match(got.wasm, /kernel.*no WebAssembly/);
});

test('Kaiser low-pass: I0, odd length, the passband ripple and stopband attenuation designed', () => {
  assert.ok(Math.abs(besselI0(0) - 1) < 1e-15);
  assert.ok(Math.abs(besselI0(1) - 1.2660658777520082) < 1e-14);
  for (const db of [60, 70, 90]) {
    const h = kaiserLowpass({ pass: 0.1, stop: 0.15, stopbandDb: db, gain: 1 });
    assert.equal(h.length % 2, 1);
    for (let i = 0; i < h.length; i++) assert.equal(h[i], h[h.length - 1 - i]);
    const delta = 10 ** (-db / 20);
    let worstPass = 0;
    for (let f = 0; f <= 0.1; f += 0.001) worstPass = Math.max(worstPass, Math.abs(gainAt(h, f) - 1));
    let worstStop = 0;
    for (let f = 0.15; f <= 0.5; f += 0.0007) worstStop = Math.max(worstStop, gainAt(h, f));
    // Kaiser's formulas are estimates: within a dB of the design.
    assert.ok(worstPass < 1.2 * delta, `${db} dB: passband ripple ${worstPass} against ${delta}`);
    assert.ok(20 * Math.log10(worstStop) < -db + 1, `${db} dB: stopband ${20 * Math.log10(worstStop)} dB`);
  }
  assert.throws(() => kaiserLowpass({ pass: 0.2, stop: 0.1, stopbandDb: 60, gain: 1 }), RangeArgumentError);
});

test('resampler: ratio in lowest terms, impulse response is the prototype at the output times', () => {
  for (const kernel of KERNELS) {
    const r = new Resampler({ inRateHz: 20e6, outRateHz: 22e6, kernel });
    assert.deepEqual([r.up, r.down, r.kernel], [11, 10, kernel]);
    const n = 200;
    const x = new Float32Array(2 * n);
    const at = 50;
    x[2 * at] = 1;
    x[2 * at + 1] = -0.5;
    const y = r.resampleAll(x);
    const D = (r.taps.length - 1) / 2;
    for (let k = 0; k < y.length / 2; k++) {
      const i = k * r.down + D - at * r.up;
      const h = i >= 0 && i < r.taps.length ? r.taps[i]! : 0;
      assert.ok(Math.abs(y[2 * k]! - h) < 1e-6 && Math.abs(y[2 * k + 1]! + 0.5 * h) < 1e-6, `${kernel}: output ${k}`);
    }
  }
  assert.throws(() => new Resampler({ inRateHz: 10e6, outRateHz: 22e6 }), /passbandHz.*more than twice/);
  assert.throws(() => new Resampler({ inRateHz: 22e6, outRateHz: 22e6 + 1 }), /lowest terms/);
  assert.throws(() => new Resampler({ inRateHz: 2.5, outRateHz: 22e6 }), /inRateHz/);
});

test('resampler: a tone in the passband comes out at the new rate, unmoved in time; one past the stopband edge is gone', () => {
  for (const kernel of KERNELS) {
    for (const [fin, fout] of [
      [20e6, 22e6],
      [22e6, 20e6],
      [25e6, 22e6],
      [22e6, 25e6],
    ] as const) {
      const r = new Resampler({ inRateHz: fin, outRateHz: fout, kernel });
      const n = 8000;
      for (const f of [-7e6, 1.3e6, 8e6]) {
        const x = new Float32Array(2 * n);
        for (let i = 0; i < n; i++) {
          x[2 * i] = Math.cos((2 * Math.PI * f * i) / fin);
          x[2 * i + 1] = Math.sin((2 * Math.PI * f * i) / fin);
        }
        const y = r.resampleAll(x);
        assert.equal(y.length / 2, Math.floor(((n - 1) * fout) / fin) + 1);
        let err = 0;
        // Away from the ends, where the filter meets the stream's edges.
        for (let k = 400; k < y.length / 2 - 400; k++) {
          const t = k / fout;
          err = Math.max(err, Math.hypot(y[2 * k]! - Math.cos(2 * Math.PI * f * t), y[2 * k + 1]! - Math.sin(2 * Math.PI * f * t)));
        }
        assert.ok(err < 1e-3, `${kernel} ${fin} -> ${fout}, tone at ${f}: error ${err}`);
      }
    }
    // 40 -> 20 Msample/s: stopband from 11.75 MHz; a tone at 15 MHz would fold to -5 MHz.
    const r = new Resampler({ inRateHz: 40e6, outRateHz: 20e6, kernel });
    const n = 8000;
    const x = new Float32Array(2 * n);
    for (let i = 0; i < n; i++) {
      x[2 * i] = Math.cos((2 * Math.PI * 15e6 * i) / 40e6);
      x[2 * i + 1] = Math.sin((2 * Math.PI * 15e6 * i) / 40e6);
    }
    const y = r.resampleAll(x);
    let peak = 0;
    for (let k = 400; k < y.length / 2 - 400; k++) peak = Math.max(peak, Math.hypot(y[2 * k]!, y[2 * k + 1]!));
    assert.ok(20 * Math.log10(peak) < -68, `${kernel}: a stopband tone at ${20 * Math.log10(peak)} dB`);
  }
});

test('streaming: any cut of the input into calls gives the one-shot output bit for bit, with no more than outputsFor says', () => {
  const rng = Rng.fromSeed(5);
  for (const kernel of KERNELS) {
    for (const [fin, fout] of [
      [22e6, 25e6],
      [25e6, 22e6],
      [30.72e6, 22e6],
    ] as const) {
      const x = randomIq(rng, 20000);
      const want = new Resampler({ inRateHz: fin, outRateHz: fout, kernel, blockSamples: 1000 }).resampleAll(x);
      const r = new Resampler({ inRateHz: fin, outRateHz: fout, kernel, blockSamples: 1000 });
      const out = new Float32Array(2 * (r.outputsFor(20000) + 8));
      let got = 0;
      for (let at = 0; at < 20000;) {
        const take = Math.min(20000 - at, rng.int(0, 3000));
        const expect = r.outputsFor(take);
        const n = r.process(x.subarray(2 * at, 2 * (at + take)), out.subarray(2 * got));
        assert.equal(n, expect);
        got += n;
        at += take;
      }
      const m = Math.min(got, want.length / 2);
      assert.ok(m > (want.length / 2) * 0.99, `${fin} -> ${fout}: ${got} of ${want.length / 2}`);
      assert.deepEqual(out.subarray(0, 2 * m), want.subarray(0, 2 * m), `${kernel} ${fin} -> ${fout}`);
    }
  }
  const r = new Resampler({ inRateHz: 20e6, outRateHz: 22e6 });
  assert.throws(() => r.process(new Float32Array(3), new Float32Array(10)), /even number/);
  assert.throws(() => r.process(new Float32Array(2000), new Float32Array(10)), /out length/);
});

test('the WebAssembly SIMD kernel matches the TypeScript reference to float32 rounding', { skip: KERNELS.length < 2 }, () => {
  const rng = Rng.fromSeed(9);
  for (const [up, down, len] of [
    [11, 10, 273],
    [10, 11, 301],
    [2, 1, 9],
    [25, 22, 433],
    [1, 1, 5],
    [3, 7, 64],
  ] as const) {
    const taps = new Float64Array(len);
    for (let i = 0; i < len; i++) taps[i] = rng.normal();
    const x = randomIq(rng, 5000);
    const opts = { up, down, taps, delay: (len - 1) >> 1 };
    const a = new PolyphaseFir({ ...opts, kernel: 'ts' }).filterAll(x);
    const b = new PolyphaseFir({ ...opts, kernel: 'wasm' }).filterAll(x);
    assert.equal(a.length, b.length);
    let scale = 0;
    for (let i = 0; i < len; i++) scale += Math.abs(taps[i]!);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
    assert.ok(worst < 2e-6 * scale, `${up}/${down}, ${len} taps: ${worst}`);
  }
  // The shaper too.
  const chips = modulateFrame(new Uint8Array(300), { rateMbps: 2, samplesPerChip: 1 });
  const a = new ChipShaper(2, { kernel: 'ts' }).shapeBurst(chips);
  const b = new ChipShaper(2, { kernel: 'wasm' }).shapeBurst(chips);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 1e-5);
});

/**
 * Frames shaped at 2 samples per chip, resampled to `rate` as a stream in
 * pieces, back to 22 Msample/s in other pieces, then the receiver: every
 * frame byte for byte, in order, within a symbol of where it was sent.
 */
function loopback(rate: number, kernel: FirKernel): void {
  const rng = Rng.fromSeed(rate);
  const frames: Uint8Array[] = [];
  const starts: number[] = [];
  const chunks: Float32Array[] = [];
  let at = 0;
  for (let k = 0; k < 6; k++) {
    const gap = rng.int(200, 900);
    const f = Uint8Array.from({ length: [0, 14, 100, 300, 1500, 40][k]! }, () => rng.int(0, 255));
    frames.push(f);
    const iq = modulateFrame(f, { rateMbps: k % 2 === 0 ? 1 : 2, samplesPerChip: 2, shape: true });
    chunks.push(new Float32Array(2 * gap), iq);
    starts.push(at + gap + shapedLeadSamples(2));
    at += gap + iq.length / 2;
  }
  chunks.push(new Float32Array(2 * 1000));
  at += 1000;
  const tx = new Resampler({ inRateHz: 22e6, outRateHz: rate, kernel });
  const air = new Float32Array(2 * (tx.outputsFor(at) + 1));
  let n = 0;
  for (const c of chunks) n += tx.process(c, air.subarray(2 * n));
  const rx = new Resampler({ inRateHz: rate, outRateHz: 22e6, kernel });
  const back = new Float32Array(2 * (rx.outputsFor(n) + 1));
  let m = 0;
  for (let i = 0; i < n;) {
    const take = Math.min(n - i, rng.int(1, 5000));
    m += rx.process(air.subarray(2 * i, 2 * (i + take)), back.subarray(2 * m));
    i += take;
  }
  const got = new DsssReceiver({ samplesPerChip: 2 }).receive(back.subarray(0, 2 * m));
  assert.equal(got.length, frames.length, `${rate}: ${got.length} frames`);
  got.forEach((g, k) => {
    assert.ok(g.fcsOk);
    assert.deepEqual(g.frame, frames[k], `${rate}: frame ${k}`);
    console.log(rate, k, g.startSample - starts[k]!, g.snrDb);
    // Within a symbol: the receiver's start (and its SNR) assume rectangular chips; with shaped ones its
    // timing can sit a sample either side of the chip centre, and now and then a few more (docs/phy.md).
    assert.ok(Math.abs(g.startSample - starts[k]!) < 22, `${rate}: frame ${k} at ${g.startSample}, sent at ${starts[k]}`);
  });
}

for (const rate of [20e6, 25e6]) {
  for (const kernel of KERNELS) {
    test(`loopback at ${rate / 1e6} Msample/s (${kernel}): shaped, resampled there and back, every frame byte for byte`, () => loopback(rate, kernel));
  }
}

test('shaping straight to 20 and 25 Msample/s is shaping to 22 and resampling, in one filter, and loops back byte for byte', () => {
  const rng = Rng.fromSeed(33);
  for (const rate of [20e6, 25e6]) {
    const frames = [0, 300, 40].map((n) => Uint8Array.from({ length: n }, () => rng.int(0, 255)));
    // The chips with 300 chips of silence around each frame.
    const parts = frames.flatMap((f, k) => [new Float32Array(600), modulateFrame(f, { rateMbps: k % 2 === 0 ? 1 : 2, samplesPerChip: 1 })]);
    parts.push(new Float32Array(600));
    const chips = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of parts) {
      chips.set(p, at);
      at += p.length;
    }
    const one = shaperToRate(rate).filterAll(chips);
    const two = new Resampler({ inRateHz: 22e6, outRateHz: rate }).resampleAll(new ChipShaper(2).fir.filterAll(chips));
    const n = Math.min(one.length, two.length) / 2;
    assert.ok(n > ((chips.length / 2) * rate) / 11e6 - 30);
    let worst = 0;
    for (let k = 0; k < 2 * (n - 40); k++) worst = Math.max(worst, Math.abs(one[k]! - two[k]!));
    assert.ok(worst < 2e-3, `${rate}: one filter and two differ by ${worst}`);
    const back = new Resampler({ inRateHz: rate, outRateHz: 22e6 }).resampleAll(one);
    const got = new DsssReceiver({ samplesPerChip: 2 }).receive(back);
    assert.deepEqual(
      got.map((g) => g.frame),
      frames,
    );
  }
  assert.throws(() => shaperToRate(10e6), /outRateHz/);
});
