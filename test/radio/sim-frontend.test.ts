import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BandConfig } from '../../src/config/types.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { RealTimeScheduler } from '../../src/core/scheduler.js';
import { ism2g4 } from '../../radio/channels.js';
import type { IqBlock, ReceivedFrame } from '../../radio/frontend.js';
import { EmulatedBand, SimFrontend, type SimFrontendOptions } from '../../radio/sim/index.js';

/** Whether two sample arrays hold the same bytes. */
function sameBytes(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

const plan = ism2g4(11);
const ch = (n: number): number => plan.get(n).centerHz;

function makeBand(cfg: Partial<BandConfig> = {}, seed = 1): EmulatedBand {
  return new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false, ...cfg }, Rng.fromSeed(seed));
}

function rig(cfg: Partial<BandConfig> = {}) {
  const engine = new EventEngine();
  const band = makeBand(cfg);
  const radio = (id: string, o: Partial<SimFrontendOptions> = {}): SimFrontend => new SimFrontend(band, engine, { id, ...o });
  return { engine, band, radio };
}

/** Watches a promise without awaiting it. */
function track<T>(p: Promise<T>): { done: boolean; value?: T; error?: unknown } {
  const s: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (v) => Object.assign(s, { done: true, value: v }),
    (e: unknown) => Object.assign(s, { done: true, error: e }),
  );
  return s;
}

/** Lets settled promises run their callbacks. */
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

const meanSquare = (b: IqBlock): number => {
  let s = 0;
  for (let i = 0; i < 2 * b.count; i++) s += b.data[i]! ** 2;
  return s / b.count;
};

test('capabilities and defaults', () => {
  const { radio } = rig();
  const r = radio('a');
  assert.equal(r.kind, 'sim');
  assert.equal(r.id, 'a');
  assert.deepEqual(r.capabilities, {
    sampleRateHz: 1e6,
    tuneRangeHz: [2.4e9, 2.5e9],
    gainRangeDb: [0, 60],
    retuneUs: 1000,
    canTransmit: true,
    canTransmitIq: true,
  });
  assert.equal(r.centerHz, undefined);
  assert.equal(r.gainDb, 0);
  assert.equal(r.calibrationDb(), -10);
});

test('tune and gain refuse what the radio cannot do, with stable codes', async () => {
  const { radio, engine } = rig();
  const r = radio('a', { tuneRangeHz: [2.41e9, 2.44e9], gainRangeDb: [0, 30] });
  await assert.rejects(r.tune(2.3e9), { code: 'RADIO_TUNE_RANGE' });
  await assert.rejects(r.tune(ch(11)), { code: 'RADIO_TUNE_RANGE', message: /2462000000 Hz.*\[2410000000, 2440000000\]/ });
  await assert.rejects(r.tune(2_413e6), { code: 'RADIO_NOT_A_CHANNEL' });
  await assert.rejects(r.tune(Number.NaN), { code: 'RADIO_TUNE_RANGE' });
  await assert.rejects(r.setGain(31), { code: 'RADIO_GAIN_RANGE', message: /31 dB.*\[0, 30\]/ });
  await assert.rejects(r.setGain(-0.5), { code: 'RADIO_GAIN_RANGE', message: /-0\.5/ });
  await assert.rejects(r.setGain(Number.NaN), { code: 'RADIO_GAIN_RANGE' });
  assert.equal(r.gainDb, 0, 'a refused gain changes nothing');
  assert.equal(r.centerHz, undefined, 'a refused tune changes nothing');
  await assert.rejects(r.readIq(100), { code: 'RADIO_NOT_TUNED' });
  assert.throws(() => r.captureAt(0, 100), { code: 'RADIO_NOT_TUNED' });
  await assert.rejects(r.send(new Uint8Array(10)), { code: 'RADIO_NOT_TUNED' });
  assert.throws(() => radio('b', { gainDb: 99 }), { code: 'RADIO_GAIN_RANGE' });
  assert.equal(engine.pending, 0, 'nothing scheduled by refused calls');
});

test('a tune resolves after retuneUs of scheduler time, and the radio is deaf meanwhile', async () => {
  const { radio, engine } = rig();
  const r = radio('a', { retuneUs: 250 });
  engine.run(1000);
  const t = track(r.tune(ch(3)));
  assert.equal(r.centerHz, ch(3));
  assert.equal(r.retuning, true);
  assert.throws(() => r.captureAt(1100, 10), { code: 'RADIO_RETUNING' });
  engine.run(1249);
  await flush();
  assert.equal(t.done, false);
  engine.run(1250);
  await flush();
  assert.deepEqual(t.value, { centerHz: ch(3), retuneUs: 250 });
  assert.equal(r.retuning, false);
  assert.equal(r.captureAt(1250, 10).count, 10);
  // A tune during a retune starts over; both callers learn where the radio ended up.
  const a = track(r.tune(ch(4)));
  engine.run(1300);
  const b = track(r.tune(ch(5)));
  engine.run(1549);
  await flush();
  assert.equal(a.done || b.done, false);
  engine.run(1550);
  await flush();
  assert.deepEqual(a.value, { centerHz: ch(5), retuneUs: 300 });
  assert.deepEqual(b.value, { centerHz: ch(5), retuneUs: 250 });
});

test('readIq in virtual time: resolves when the scheduler reaches the block end, blocks stream contiguously', async () => {
  const { radio, engine } = rig();
  const r = radio('a');
  void r.tune(ch(6));
  // Asked for during the retune: the block starts when samples are valid.
  const first = track(r.readIq(5000));
  const second = track(r.readIq(3000));
  engine.run(5999);
  await flush();
  assert.equal(first.done, false, 'not before the block end');
  engine.run(6000);
  await flush();
  assert.ok(first.value, 'resolved at the block end');
  assert.equal(first.value.startUs, 1000);
  assert.equal(first.value.count, 5000);
  assert.equal(first.value.data.length, 10_000);
  assert.equal(first.value.centerHz, ch(6));
  assert.equal(first.value.sampleRateHz, 1e6);
  assert.equal(first.value.calibrationDb, -10);
  assert.equal(first.value.droppedSamples, 0);
  assert.equal(second.done, false);
  engine.run(8999);
  await flush();
  assert.equal(second.done, false);
  engine.run(9000);
  await flush();
  assert.equal(second.value?.startUs, 6000, 'back to back');
  // Asked for later than the stream end: starts now.
  engine.run(20_000);
  const third = track(r.readIq(100));
  engine.run();
  await flush();
  assert.equal(third.value?.startUs, 20_000);
  assert.equal(engine.now(), 20_100);
});

test('readIq samples are those of captureAt for the same window, at 2 MS/s too', async () => {
  const mk = (): { engine: EventEngine; r: SimFrontend } => {
    const engine = new EventEngine();
    const band = makeBand({ pn: [{ channel: 2, powerDbm: -60, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 0.2 } }] });
    return { engine, r: new SimFrontend(band, engine, { id: 'a', sampleRateHz: 2e6 }) };
  };
  const x = mk();
  void x.r.tune(ch(2));
  const p = x.r.readIq(4000);
  x.engine.run();
  const viaRead = await p;
  assert.equal(x.engine.now(), 3000);
  const y = mk();
  void y.r.tune(ch(2));
  y.engine.run();
  const viaCapture = y.r.captureAt(1000, 4000);
  assert.ok(sameBytes(viaRead.data, viaCapture.data), 'identical samples');
});

test('gain shifts the measured full-scale power by exactly the gain; dBm stay right', () => {
  const pn = [{ channel: 6, powerDbm: -70, pattern: { kind: 'fraction' as const, busy: 1, meanBurstMs: 1 } }];
  const a = rig({ pn });
  const b = rig({ pn });
  const ra = a.radio('r', { gainDb: 0, calibrationDb: -20 });
  const rb = b.radio('r', { gainDb: 25, calibrationDb: -20 });
  for (const x of [ra, rb]) void x.tune(ch(6));
  a.engine.run();
  b.engine.run();
  assert.equal(ra.calibrationDb(), -20);
  assert.equal(rb.calibrationDb(), -45);
  const ba = ra.captureAt(5000, 100_000);
  const bb = rb.captureAt(5000, 100_000);
  assert.equal(bb.calibrationDb, -45);
  // Same noise stream, same window: the samples differ by the gain alone.
  const shift = 10 * Math.log10(meanSquare(bb) / meanSquare(ba));
  assert.ok(Math.abs(shift - 25) < 1e-4, `shift ${shift} dB`);
  for (const blk of [ba, bb]) {
    const dbm = 10 * Math.log10(meanSquare(blk)) + blk.calibrationDb;
    assert.ok(Math.abs(dbm - -70) < 0.2, `${dbm} dBm`);
  }
});

test('setGain applies to later blocks and moves calibrationDb by the gain', async () => {
  const { radio, engine } = rig();
  const r = radio('a');
  void r.tune(ch(1));
  engine.run();
  const before = r.captureAt(1000, 50_000);
  await r.setGain(40);
  assert.equal(r.gainDb, 40);
  assert.equal(r.calibrationDb(), -50);
  const after = r.captureAt(51_000, 50_000);
  assert.equal(before.calibrationDb - after.calibrationDb, 40);
  const shift = 10 * Math.log10(meanSquare(after) / meanSquare(before));
  assert.ok(Math.abs(shift - 40) < 0.1, `shift ${shift} dB`);
});

test('frames reach only receivers on the same channel, after the airtime, never while retuning', async () => {
  const { radio, engine } = rig();
  const tx = radio('tx');
  const same = radio('same');
  const other = radio('other');
  const late = radio('late');
  const deafened = radio('deafened');
  const leaves = radio('leaves');
  const got = new Map<string, ReceivedFrame[]>();
  for (const r of [tx, same, other, late, deafened, leaves]) {
    got.set(r.id, []);
    r.onFrame((f) => got.get(r.id)!.push(f));
  }
  for (const r of [tx, same, deafened, leaves]) void r.tune(ch(6));
  void other.tune(ch(1));
  engine.run(1500);
  void late.tune(ch(6)); // listening from 2500 on: after the frame started
  engine.run(2000);
  const sent = track(tx.send(new Uint8Array([1, 2, 3, ...new Array(247).fill(9)])));
  engine.run(2400);
  void deafened.tune(ch(6)); // a retune to the same channel still leaves it deaf for a while
  void leaves.tune(ch(1));
  engine.run(2999);
  await flush();
  assert.equal(got.get('same')!.length, 0, 'nothing during the airtime');
  assert.equal(sent.done, false);
  engine.run(3000);
  await flush();
  assert.equal(sent.done, true, 'send resolves at the end of the airtime');
  const f = got.get('same')![0];
  assert.ok(f, 'delivered at the end of the airtime');
  assert.deepEqual([...f.bytes.slice(0, 3)], [1, 2, 3]);
  assert.equal(f.bytes.length, 250);
  assert.equal(f.atUs, 3000);
  assert.equal(f.rssiDbm, 15);
  assert.equal(f.centerHz, ch(6));
  for (const id of ['tx', 'other', 'late', 'deafened', 'leaves']) assert.equal(got.get(id)!.length, 0, `${id} got nothing`);
  // Once every retune is over, a frame reaches every radio settled on channel 6.
  engine.run(3400);
  void tx.send(new Uint8Array(10));
  engine.run();
  assert.deepEqual(
    [...got].filter(([, fs]) => fs.length > 0).map(([id, fs]) => [id, fs.length]),
    [
      ['same', 2],
      ['late', 1],
      ['deafened', 1],
    ],
  );
});

test('frames from one radio go out one after another; a radio that cannot transmit refuses', async () => {
  const { radio, engine, band } = rig();
  const tx = radio('tx', { rateBps: 1e6, txPowerDbm: 0 });
  const rx = radio('rx');
  const times: number[] = [];
  rx.onFrame((f) => times.push(f.atUs));
  void tx.tune(ch(3));
  void rx.tune(ch(3));
  engine.run();
  void tx.send(new Uint8Array(100));
  void tx.send(new Uint8Array(100));
  // While the first is in the air the channel carries its power.
  assert.ok(band.powerDbm(ch(3), 1500) > -1, 'frame power on the channel');
  engine.run();
  assert.deepEqual(times, [1800, 2600]);
  const mute = radio('mute', { canTransmit: false });
  void mute.tune(ch(3));
  engine.run();
  await assert.rejects(mute.send(new Uint8Array(1)), { code: 'RADIO_CANNOT_TRANSMIT' });
});

test('a tune cuts a read short; close refuses what waits and detaches', async () => {
  const { radio, engine } = rig();
  const r = radio('a');
  const tx = radio('tx');
  void r.tune(ch(6));
  void tx.tune(ch(6));
  engine.run();
  const cut = track(r.readIq(10_000));
  engine.run(5000);
  void r.tune(ch(6));
  await flush();
  assert.equal((cut.error as { code?: string }).code, 'RADIO_RETUNED');
  engine.run();
  const pending = track(r.readIq(10_000));
  let frames = 0;
  r.onFrame(() => frames++);
  void tx.send(new Uint8Array(10));
  await r.close();
  engine.run();
  await flush();
  assert.equal((pending.error as { code?: string }).code, 'RADIO_CLOSED');
  assert.equal(frames, 0, 'a closed radio receives nothing');
  await assert.rejects(r.readIq(1), { code: 'RADIO_CLOSED' });
  // Its id is free again on the band.
  const again = radio('a');
  await again.close();
});

test('in real time, readIq paces like a radio', async () => {
  const sched = new RealTimeScheduler();
  const band = makeBand();
  const r = new SimFrontend(band, sched, { id: 'rt', retuneUs: 2000 });
  try {
    const t0 = sched.now();
    const tuned = await r.tune(ch(1));
    assert.equal(tuned.retuneUs, 2000);
    assert.ok(sched.now() - t0 >= 2000, 'the retune takes its time');
    const blk = await r.readIq(20_000);
    const end = blk.startUs + 20_000;
    assert.ok(blk.startUs >= t0 + 2000, 'starts after the retune');
    assert.ok(sched.now() >= end, `resolved at ${sched.now()}, block ends at ${end}`);
    const next = await r.readIq(1000);
    assert.ok(next.startUs >= end, 'the next block follows');
  } finally {
    await r.close();
    sched.cancelAll();
  }
});

test('readIq fills a caller-supplied buffer with the same samples it would allocate, and refuses a short one', async () => {
  const a = rig({ pn: [{ channel: 6, powerDbm: -50, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 1 } }] });
  const b = rig({ pn: [{ channel: 6, powerDbm: -50, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 1 } }] });
  const ra = a.radio('r');
  const rb = b.radio('r');
  for (const [r, e] of [
    [ra, a.engine],
    [rb, b.engine],
  ] as const) {
    const t = track(r.tune(ch(6)));
    e.run(2_000);
    await flush();
    assert.ok(t.done);
  }
  const into = new Float32Array(2 * 1000 + 6);
  const own = track(ra.readIq(1000));
  const given = track(rb.readIq(1000, into));
  a.engine.run(10_000);
  b.engine.run(10_000);
  await flush();
  assert.ok(own.done && given.done);
  assert.equal(given.value!.data, into, 'the block is the caller’s buffer');
  assert.ok(sameBytes(own.value!.data, into.subarray(0, 2000)));
  await assert.rejects(rb.readIq(1000, new Float32Array(1999)), { code: 'CORE_OUT_OF_RANGE' });
});

test('readLatencyUs hands blocks over late yet as one stream; bufferUs lets a reader that fell behind go on where it was', async () => {
  const { radio, engine } = rig();
  const r = radio('a', { readLatencyUs: 2000, bufferUs: 10_000 });
  void r.tune(ch(6));
  engine.run(1000);
  const first = track(r.readIq(1000));
  engine.run(2999);
  await flush();
  assert.equal(first.done, false, 'not at the block end: 2 ms later');
  engine.run(4000);
  await flush();
  assert.equal(first.value?.startUs, 1000);
  // Asked for 2 ms after the block was handed over: the buffered samples follow on.
  engine.run(6000);
  const late = track(r.readIq(1000));
  engine.run(6000);
  await flush();
  assert.equal(late.value?.startUs, 2000, 'contiguous, and handed over at once (its time has passed)');
  // Back after more than the buffer: the stream starts afresh, readLatencyUs before now.
  engine.run(40_000);
  const fresh = track(r.readIq(1000));
  engine.run();
  await flush();
  assert.equal(fresh.value?.startUs, 38_000);
  assert.equal(engine.now(), 41_000);
});
