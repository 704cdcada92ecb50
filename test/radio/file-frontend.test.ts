import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileFrontend, SigmfWriter } from '../../radio/file/index.js';
import type { IqBlock } from '../../radio/frontend.js';
import { runRecord } from '../../src/cli/record.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-file-fe-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const F1 = 2_412_000_000;
const F6 = 2_437_000_000;
const F11 = 2_462_000_000;

/** Samples that say which they are: I = index / 1024 (exact in float32), Q = -I. */
function ramp(first: number, count: number, centerHz: number, calibrationDb = -10): IqBlock {
  const data = new Float32Array(2 * count);
  for (let k = 0; k < count; k++) {
    data[2 * k] = (first + k) / 1024;
    data[2 * k + 1] = -(first + k) / 1024;
  }
  // One sample a microsecond: the block's time is its first index.
  return { data, count, startUs: first, sampleRateHz: 1e6, centerHz, calibrationDb, droppedSamples: 0 };
}

const indices = (b: IqBlock): number[] => Array.from({ length: b.count }, (_, k) => Math.round(b.data[2 * k]! * 1024));
const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, k) => a + k);

/** A sweep: channel 1 [0,100), 6 [100,250), 11 [250,300), 1 [300,350), 6 [350,400). */
async function sweep(name: string): Promise<string> {
  const w = await SigmfWriter.create(join(dir, name));
  for (const [a, b, f] of [
    [0, 100, F1],
    [100, 250, F6],
    [250, 300, F11],
    [300, 350, F1],
    [350, 400, F6],
  ] as const) {
    await w.write(ramp(a, b - a, f));
  }
  await w.close();
  return join(dir, `${name}.sigmf-meta`);
}

test('a sweep tunes per segment: each frequency reads its own segments in order and keeps its place', async () => {
  const fe = await FileFrontend.open(await sweep('sweep'));
  try {
    assert.deepEqual(fe.frequencies, [F1, F6, F11]);
    assert.equal(fe.samplesAt(F1), 150);
    assert.equal(fe.samplesAt(F6), 200);
    assert.deepEqual(fe.capabilities.tuneRangeHz, [F1, F11]);
    assert.equal(fe.capabilities.sampleRateHz, 1e6);
    assert.equal(fe.capabilities.canTransmit, false);
    assert.equal(fe.kind, 'file');
    assert.equal(fe.centerHz, undefined);
    await assert.rejects(fe.readIq(10), { code: 'RADIO_NOT_TUNED' });

    assert.deepEqual(await fe.tune(F1), { centerHz: F1, retuneUs: 0 });
    const a = await fe.readIq(120);
    assert.deepEqual(indices(a), [...range(0, 100), ...range(300, 320)], 'across the segments at 2412 MHz');
    assert.equal(a.startUs, 0);
    assert.equal(a.centerHz, F1);
    assert.equal(a.calibrationDb, -10);

    await fe.tune(F6);
    const b = await fe.readIq(10);
    assert.deepEqual(indices(b), range(100, 110));
    assert.equal(b.startUs, 100, 'time is the sample index over the rate');

    await fe.tune(F1);
    const c = await fe.readIq(40);
    assert.deepEqual(indices(c), [...range(320, 350), ...range(0, 10)], 'back where 2412 MHz was left, then around again');
    assert.equal(c.startUs, 320);
    const d = await fe.readIq(5);
    assert.equal(d.startUs, 400 + 10, 'after a wrap, one recording length later');

    await fe.tune(F6);
    assert.deepEqual(indices(await fe.readIq(5)), range(110, 115), '2437 MHz kept its place meanwhile');

    await assert.rejects(fe.tune(2_452_000_000), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'RADIO_NOT_IN_CAPTURE');
      assert.match(e.message, /2452 MHz is not in the capture, which holds 2412, 2437, 2462 MHz/);
      return true;
    });
    assert.equal(fe.centerHz, F6, 'a refused tune leaves the radio where it was');
    fe.rewind();
    assert.deepEqual(indices(await fe.readIq(3)), range(100, 103), 'rewind: every frequency from its start');
  } finally {
    await fe.close();
  }
});

test('without loop, the last samples come as a short block and then RADIO_END_OF_CAPTURE', async () => {
  const fe = await FileFrontend.open(await sweep('noloop'), { loop: false });
  try {
    await fe.tune(F11);
    const a = await fe.readIq(40);
    assert.equal(a.count, 40);
    const b = await fe.readIq(40);
    assert.equal(b.count, 10, 'what was left');
    assert.deepEqual(indices(b), range(290, 300));
    await assert.rejects(fe.readIq(1), { code: 'RADIO_END_OF_CAPTURE', message: /all 50 samples at 2462 MHz/ });
    await fe.tune(F1);
    assert.equal((await fe.readIq(150)).count, 150, 'other frequencies are not exhausted');
  } finally {
    await fe.close();
  }
});

test('reads go into the caller buffer, without a copy; sync reads are done when readIq returns', async () => {
  const path = await sweep('into');
  const backing = new Float32Array(1000);
  const into = backing.subarray(6, 6 + 2 * 50); // at an offset in a larger buffer, as a backend's arena would be
  for (const reads of ['async', 'sync'] as const) {
    const fe = await FileFrontend.open(path, { reads });
    try {
      await fe.tune(F6);
      into.fill(0);
      const p = fe.readIq(50, into);
      if (reads === 'sync') assert.equal(Math.round(into[2 * 49]! * 1024), 149, 'sync: filled before the promise is awaited');
      const blk = await p;
      assert.equal(blk.data, into, `${reads}: the block is the caller's buffer`);
      assert.deepEqual(indices(blk), range(100, 150));
      assert.equal(backing[5], 0, 'nothing written before the buffer');
      assert.equal(backing[6 + 100], 0, 'nothing written after it');
      const s = fe.readIqSync(3);
      assert.deepEqual(indices(s), range(150, 153));
      await assert.rejects(fe.readIq(51, into), { code: 'CORE_OUT_OF_RANGE' });
    } finally {
      await fe.close();
    }
  }
});

test("send is refused, gain is the recording's, a closed front-end refuses everything", async () => {
  const fe = await FileFrontend.open(await sweep('misc'));
  await fe.tune(F1);
  await assert.rejects(fe.send(new Uint8Array([1])), { code: 'RADIO_CANNOT_TRANSMIT' });
  await fe.setGain(0);
  await assert.rejects(fe.setGain(10), { code: 'RADIO_GAIN_RANGE' });
  assert.equal(fe.gainDb, 0);
  assert.equal(fe.calibrationDb(), -10, 'from cogmesh:calibration_db');
  const off = fe.onFrame(() => assert.fail('a recording has no frames'));
  off();
  await fe.close();
  await fe.close();
  await assert.rejects(fe.readIq(1), { code: 'RADIO_CLOSED' });
  await assert.rejects(fe.tune(F1), { code: 'RADIO_CLOSED' });
});

test("segments at one frequency with different calibrations are brought to the block's", async () => {
  const w = await SigmfWriter.create(join(dir, 'gains'));
  await w.write(ramp(0, 10, F1, -10));
  await w.write({ ...ramp(10, 10, F1, -20) });
  await w.close();
  const fe = await FileFrontend.open(join(dir, 'gains'));
  try {
    await fe.tune(F1);
    const b = await fe.readIq(20);
    assert.equal(b.calibrationDb, -10);
    // A sample at -20 dBm full scale is 10 dB weaker in the block's -10 dBm scale.
    const k = 15;
    assert.ok(Math.abs(b.data[2 * k]! - (k / 1024) * 10 ** (-10 / 20)) < 1e-7, `sample ${k}: ${b.data[2 * k]}`);
    assert.equal(b.data[2 * 5], 5 / 1024, 'the first segment untouched');
    assert.equal(fe.calibrationDb(), -10, 'wrapped to the first segment');
  } finally {
    await fe.close();
  }
});

/** Writes a hand-made recording: metadata for `datatype` and the raw bytes. */
function handMade(name: string, datatype: string, bytes: Uint8Array, extra: Record<string, unknown> = {}): string {
  const meta = join(dir, `${name}.sigmf-meta`);
  writeFileSync(
    meta,
    JSON.stringify({
      global: { 'core:datatype': datatype, 'core:sample_rate': 2e6, 'core:version': '1.0.0', ...extra },
      captures: [{ 'core:sample_start': 0, 'core:frequency': F6 }],
      annotations: [],
    }),
  );
  writeFileSync(join(dir, `${name}.sigmf-data`), bytes);
  return meta;
}

test('ci16, ci8 and cu8 recordings are converted to floats (full scale 32768, 128, 127.5 counts)', async () => {
  const i16 = new Int16Array([0, 1, -1, 32767, -32768, 16384, 100, -100]);
  const le = new Uint8Array(i16.length * 2);
  const view = new DataView(le.buffer);
  i16.forEach((v, i) => view.setInt16(2 * i, v, true));
  for (const reads of ['async', 'sync'] as const) {
    const fe = await FileFrontend.open(handMade('ci16', 'ci16_le', le), { reads, calibrationDb: -20 });
    try {
      await fe.tune(F6);
      const b = await fe.readIq(4);
      assert.deepEqual(
        Array.from(b.data),
        Array.from(i16, (v) => v / 32768),
        `${reads}: ci16 / 32768`,
      );
      assert.equal(b.calibrationDb, -20, 'no cogmesh:calibration_db: the option');
      assert.equal(b.sampleRateHz, 2e6);
      const wrapped = await fe.readIq(6);
      assert.deepEqual(Array.from(wrapped.data.subarray(8, 12)), [0, 1 / 32768, -1 / 32768, 32767 / 32768], 'wraps in the middle of a read');
      assert.equal(wrapped.startUs, 2, '4 samples at 2 Msps');
    } finally {
      await fe.close();
    }
  }

  const fe8 = await FileFrontend.open(handMade('ci8', 'ci8', new Uint8Array(new Int8Array([0, 127, -128, 64]).buffer)));
  await fe8.tune(F6);
  assert.deepEqual(Array.from((await fe8.readIq(2)).data), [0, 127 / 128, -1, 0.5]);
  assert.equal(fe8.calibrationDb(), 0, 'default calibration without metadata or option');
  await fe8.close();

  const feu = await FileFrontend.open(handMade('cu8', 'cu8', new Uint8Array([0, 255, 127, 128]), { 'cogmesh:calibration_db': -30 }));
  await feu.tune(F6);
  const u = await feu.readIq(2);
  assert.deepEqual(
    Array.from(u.data),
    [-1, 1, -0.5 / 127.5, 0.5 / 127.5].map((x) => Math.fround(x)),
  );
  assert.equal(u.calibrationDb, -30);
  await feu.close();
});

test('the writer records ci16 to half an LSB, clipping beyond full scale', async () => {
  const w = await SigmfWriter.create(join(dir, 'w16'), { datatype: 'ci16_le' });
  const data = new Float32Array([0.1, -0.25, 0.999, -1, 1.5, -2, 1e-6, 0.3333]);
  await w.write({ data, count: 4, startUs: 0, sampleRateHz: 1e6, centerHz: F1, calibrationDb: -10, droppedSamples: 0 });
  const meta = await w.close();
  assert.equal(meta.global.datatype, 'ci16_le');
  const fe = await FileFrontend.open(join(dir, 'w16.sigmf-meta'));
  await fe.tune(F1);
  const b = await fe.readIq(4);
  await fe.close();
  const want = [0.1, -0.25, 0.999, -1, 32767 / 32768, -1, 0, 0.3333];
  want.forEach((x, i) => assert.ok(Math.abs(b.data[i]! - x) <= 0.5 / 32768 + 1e-9, `sample ${i}: ${b.data[i]} vs ${x}`));
});

test('a recording of the emulated band replayed into the energy detector gives the recorded busy fraction', async () => {
  const out = join(dir, 'band');
  const rec = await runRecord({
    out,
    pn: '6:0.4',
    seconds: '2',
    seed: '7',
    channels: '1,6,11',
    plan: '11',
    dwellMs: '10',
    powerDbm: '-50',
    burstMs: '1',
    datatype: 'cf32_le',
  });
  assert.equal(rec.samples, 2_000_000);
  assert.equal(rec.captures, 200, 'one capture a dwell');
  const truth = rec.channels.find((c) => c.channel === 6)!.pnBusy;
  assert.ok(Math.abs(truth - 0.4) < 0.06, `the band's PN on 6 was busy ${truth} of the time recorded`);

  const fe = await FileFrontend.open(rec.meta);
  const detector = new EnergyDetector({ windowUs: 10, ccaThresholdDbm: -62 }, cpuBackend);
  const w = new Map<number, number>();
  const busyPower = new Map<number, number>();
  const into = new Float32Array(2 * 10_000);
  try {
    for (const [ch, f] of [
      [1, F1],
      [6, F6],
      [11, F11],
    ] as const) {
      await fe.tune(f);
      let windows = 0;
      let busy = 0;
      let busyMw = 0;
      for (let left = fe.samplesAt(f); left > 0;) {
        const blk = await fe.readIq(Math.min(left, 10_000), into);
        const d = detector.detect(blk);
        windows += d.windows;
        busy += d.busyWindows;
        if (d.busyMeanPowerDbm !== undefined) busyMw += d.busyWindows * 10 ** (d.busyMeanPowerDbm / 10);
        left -= blk.count;
      }
      w.set(ch, busy / windows);
      busyPower.set(ch, 10 * Math.log10(busyMw / busy));
    }
  } finally {
    await fe.close();
  }
  const w6 = w.get(6)!;
  assert.ok(Math.abs(w6 - truth) < 0.01, `w(6) replayed ${w6.toFixed(4)}, recorded truth ${truth}`);
  assert.ok(Math.abs(w6 - 0.4) < 0.06, `w(6) ${w6} near the configured 0.4`);
  assert.ok(w.get(1)! < 0.005 && w.get(11)! < 0.005, `channels 1 and 11 idle: ${w.get(1)}, ${w.get(11)}`);
  // The calibration carried in the metadata gives the PN its -50 dBm back (a window half busy reads a little less).
  assert.ok(Math.abs(busyPower.get(6)! - -50) < 0.5, `busy windows on 6 at ${busyPower.get(6)} dBm`);
});
