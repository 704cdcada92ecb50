import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { ism2g4 } from '../../radio/channels.js';
import type { IqBlock } from '../../radio/frontend.js';
import { modulateFrame, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { burstView, Dft } from '../../radio/sim/burst.js';
import { EmulatedBand, SimFrontend, type SimFrontendOptions } from '../../radio/sim/index.js';

const plan = ism2g4(11);
const ch = (n: number): number => plan.get(n).centerHz;

function rig(seed = 1) {
  const engine = new EventEngine();
  const band = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, Rng.fromSeed(seed));
  const radio = (id: string, o: Partial<SimFrontendOptions> = {}): SimFrontend => new SimFrontend(band, engine, { id, ...o });
  return { engine, band, radio };
}

/** Lets settled promises run their callbacks. */
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Reads `blocks` blocks of `count` samples through readIq, pumping the engine, and joins them. */
async function readBlocks(engine: EventEngine, r: SimFrontend, blocks: number, count: number): Promise<{ iq: Float32Array; got: IqBlock[] }> {
  const got: IqBlock[] = [];
  const iq = new Float32Array(2 * blocks * count);
  for (let b = 0; b < blocks; b++) {
    let blk: IqBlock | undefined;
    void r.readIq(count).then((x) => (blk = x));
    while (blk === undefined) {
      assert.ok(engine.step(), 'the read is scheduled');
      await flush();
    }
    iq.set(blk.data.subarray(0, 2 * count), 2 * b * count);
    got.push(blk);
  }
  return { iq, got };
}

function sameBytes(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

const FRAME = Uint8Array.from({ length: 60 }, (_, i) => (i * 37 + 11) & 255);

/** Radio A sends a DSSS frame at `spc` samples per chip on channel `txCh`; radio B on `rxCh` reads from before it to after it. */
async function sendAndRead(spc: SamplesPerChip, txCh: number, rxCh: number, o: { send?: boolean; seed?: number; rxRate?: number } = {}) {
  const { engine, band, radio } = rig(o.seed ?? 1);
  const rate = 11e6 * spc;
  const a = radio('a', { sampleRateHz: rate, txPowerDbm: -60 });
  const b = radio('b', { sampleRateHz: o.rxRate ?? rate });
  void a.tune(ch(txCh));
  void b.tune(ch(rxCh));
  engine.run(1000);
  await flush();
  const burst = modulateFrame(FRAME, { rateMbps: 2, samplesPerChip: spc });
  const report = o.send === false ? undefined : a.transmitIq({ data: burst, count: burst.length / 2, atUs: 1500 });
  const blockSamples = Math.round((o.rxRate ?? rate) / 1000); // 1 ms blocks
  const { iq, got } = await readBlocks(engine, b, 8, blockSamples);
  return { iq, got, band, report, burst };
}

test('a DSSS burst sent by one radio is decoded byte for byte from another radio’s readIq blocks, at 11 and 22 Msps', async () => {
  for (const spc of [1, 2] as const) {
    const { iq, got, report } = await sendAndRead(spc, 6, 6);
    assert.equal(got[0]!.startUs, 1000);
    const rx = new DsssReceiver({ samplesPerChip: spc });
    const frames = rx.receive(iq);
    assert.equal(frames.length, 1, `one frame at ${spc} samples per chip`);
    assert.equal(frames[0]!.fcsOk, true);
    assert.deepEqual(frames[0]!.frame, FRAME);
    // 0.5 ms into the capture.
    assert.equal(frames[0]!.startSample, 550 * spc * 10);
    assert.ok(frames[0]!.snrDb > 20, `SNR ${frames[0]!.snrDb} dB`);
    const r = await report!;
    assert.equal(r.startUs, 1500);
    assert.equal(r.late, false);
    assert.equal(r.sent, modulateFrame(FRAME, { rateMbps: 2, samplesPerChip: spc }).length / 2);
  }
});

test('a burst 25 MHz away is not seen: the samples are those of a band that carried none', async () => {
  const sent = await sendAndRead(1, 1, 6);
  const quiet = await sendAndRead(1, 1, 6, { send: false });
  assert.ok(sameBytes(sent.iq, quiet.iq));
  assert.equal(sent.band.iqCounters.local, 1);
  // And within reach (5 MHz away at 22 Msps) it is.
  const near = await sendAndRead(2, 5, 6);
  const nearQuiet = await sendAndRead(2, 5, 6, { send: false });
  assert.ok(!sameBytes(near.iq, nearQuiet.iq));
});

test('same seed, same bursts: the same samples; a receiver reading outside the burst gets the samples of a quiet band', async () => {
  const x = await sendAndRead(2, 6, 6);
  const y = await sendAndRead(2, 6, 6);
  assert.ok(sameBytes(x.iq, y.iq));
  const z = await sendAndRead(2, 6, 6, { seed: 2 });
  assert.ok(!sameBytes(x.iq, z.iq));
  // The sender does not hear itself; its own reads are those of a quiet band.
  const { engine, radio } = rig();
  const a = radio('a', { sampleRateHz: 11e6, txPowerDbm: -60 });
  void a.tune(ch(6));
  engine.run(1000);
  await flush();
  const burst = modulateFrame(FRAME, { rateMbps: 1, samplesPerChip: 1 });
  void a.transmitIq({ data: burst, count: burst.length / 2, atUs: 1000 });
  const own = a.captureAt(1000, 5000);
  const q = rig();
  const a2 = q.radio('a', { sampleRateHz: 11e6 });
  void a2.tune(ch(6));
  q.engine.run(1000);
  await flush();
  assert.ok(sameBytes(own.data, a2.captureAt(1000, 5000).data));
});

test('the energy detector sees a burst as busy, at the sensing rate of 1 Msps', async () => {
  const det = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -82 }, cpuBackend);
  const sent = await sendAndRead(1, 6, 6, { rxRate: 1e6 });
  const quiet = await sendAndRead(1, 6, 6, { rxRate: 1e6, send: false });
  const busy = (blocks: IqBlock[]): number => blocks.reduce((s, b) => s + det.detect(b).busyWindows, 0);
  assert.equal(busy(quiet.got), 0);
  // The burst lasts 192 + 256 = 448 µs of its 8 ms: 44 or 45 windows of 10 µs.
  const n = busy(sent.got);
  assert.ok(n >= 43 && n <= 46, `${n} busy windows`);
  const p = det.detect(sent.got[0]!).busyMeanPowerDbm!;
  // A 1 MHz slice of an 11 Mchip/s Barker spectrum at -60 dBm: some -70 dBm.
  assert.ok(p > -75 && p < -65, `busy mean ${p} dBm`);
});

test('transmitIq: at atUs or as soon as possible, busy for the burst, late when asked for a past time', async () => {
  const { engine, radio } = rig();
  const a = radio('a', { sampleRateHz: 11e6 });
  const data = new Float32Array(2 * 1100).fill(0.5);
  await assert.rejects(a.transmitIq({ data, count: 1100 }), { code: 'RADIO_NOT_TUNED' });
  void a.tune(ch(6));
  engine.run(1000);
  await flush();
  const first = a.transmitIq({ data, count: 1100, atUs: 2000 });
  const second = a.transmitIq({ data, count: 1100 });
  const third = a.transmitIq({ data, count: 1100, atUs: 500 });
  engine.run(10_000);
  assert.deepEqual(await first, { startUs: 2000, endUs: 2100, late: false, sent: 1100 });
  assert.deepEqual(await second, { startUs: 2100, endUs: 2200, late: false, sent: 1100 });
  assert.deepEqual(await third, { startUs: 2200, endUs: 2300, late: true, sent: 1100 });
  await assert.rejects(a.transmitIq({ data, count: 2000 }), { code: 'CORE_OUT_OF_RANGE', message: /burst data length/ });
  await assert.rejects(a.transmitIq({ data, count: 10, atUs: 1.5 }), /burst atUs/);
  const nan = new Float32Array(20);
  nan[7] = Number.NaN;
  await assert.rejects(a.transmitIq({ data: nan, count: 10 }), /sample 3/);
  const mute = radio('m', { canTransmitIq: false });
  void mute.tune(ch(6));
  await assert.rejects(mute.transmitIq({ data, count: 10 }), { code: 'RADIO_CANNOT_TRANSMIT' });
});

test('Dft of any length matches the definition; burstView moves, limits and resamples', () => {
  const n = 77;
  const x = Float64Array.from({ length: 2 * n }, (_, i) => Math.sin(i * 1.3) + (i % 5));
  const got = new Float64Array(2 * n);
  new Dft(n).forward(x, got);
  for (let k = 0; k < n; k++) {
    let re = 0;
    let im = 0;
    for (let t = 0; t < n; t++) {
      const a = (-2 * Math.PI * k * t) / n;
      re += x[2 * t]! * Math.cos(a) - x[2 * t + 1]! * Math.sin(a);
      im += x[2 * t]! * Math.sin(a) + x[2 * t + 1]! * Math.cos(a);
    }
    assert.ok(Math.abs(re - got[2 * k]!) < 1e-9 && Math.abs(im - got[2 * k + 1]!) < 1e-9);
  }
  const back = new Float64Array(2 * n);
  new Dft(n).inverse(got, back);
  for (let i = 0; i < 2 * n; i++) assert.ok(Math.abs(back[i]! - x[i]!) < 1e-12);

  // A tone at +1 MHz of an 11 Msps burst, seen from 5 MHz below at 22 Msps: a unit tone at +6 MHz.
  const c = 1100;
  const tone = new Float32Array(2 * c);
  for (let i = 0; i < c; i++) {
    const a = (2 * Math.PI * 1e6 * i) / 11e6;
    tone[2 * i] = Math.cos(a);
    tone[2 * i + 1] = Math.sin(a);
  }
  const v = burstView(tone, c, 11e6, 22e6, 5e6)!;
  let p = 0;
  for (let i = 100; i < 2000; i++) p += v.data[2 * i]! ** 2 + v.data[2 * i + 1]! ** 2;
  assert.ok(Math.abs(p / 1900 - 1) < 1e-3);
  const i0 = 500;
  const [ar, ai, br, bi] = [v.data[2 * i0]!, v.data[2 * i0 + 1]!, v.data[2 * i0 + 2]!, v.data[2 * i0 + 3]!];
  const turn = Math.atan2(bi * ar - br * ai, br * ar + bi * ai);
  assert.ok(Math.abs((turn / (2 * Math.PI)) * 22e6 - 6e6) < 1e4);
  // Out of the sampled band: not seen; the tone is 1 MHz off centre, outside a 1 Msps receiver's band.
  assert.equal(burstView(tone, c, 11e6, 1e6, 25e6), undefined);
  const narrow = burstView(tone, c, 11e6, 1e6, 0)!;
  let q = 0;
  for (let i = 0; i < narrow.count; i++) q += narrow.data[2 * i]! ** 2 + narrow.data[2 * i + 1]! ** 2;
  assert.ok(q / narrow.count < 0.01, `${q / narrow.count}`);
  // Same rate and centre: the samples themselves.
  assert.equal(burstView(tone, c, 11e6, 11e6, 0)!.data, tone);
});
