import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IqBlock } from '../../radio/frontend.js';
import { Rng } from '../../src/core/rng.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { detectEnergy, thresholdSum, windowSamplesFor } from '../../src/sensing/energy.js';

const block = (data: Float32Array, opts: { count?: number; sampleRateHz?: number; calibrationDb?: number } = {}): IqBlock => ({
  data,
  count: opts.count ?? data.length >>> 1,
  startUs: 0,
  sampleRateHz: opts.sampleRateHz ?? 1e6,
  centerHz: 2.412e9,
  calibrationDb: opts.calibrationDb ?? -10,
  droppedSamples: 0,
});

/** Per-component sigma of complex Gaussian noise of `dbm` at calibration `cal`. */
const sigma = (dbm: number, cal: number): number => Math.sqrt(10 ** ((dbm - cal) / 10) / 2);

/** A complex tone of constant power `dbm` (every sample has the same |x|^2). */
function tone(count: number, dbm: number, cal: number): Float32Array {
  const a = Math.sqrt(10 ** ((dbm - cal) / 10));
  const d = new Float32Array(2 * count);
  for (let n = 0; n < count; n++) {
    d[2 * n] = a * Math.cos(0.3 * n);
    d[2 * n + 1] = a * Math.sin(0.3 * n);
  }
  return d;
}

/** The detector written plainly, one sample at a time, for comparison. */
function reference(data: Float32Array, count: number, ws: number, thr: number): { windows: number; busy: number; sum: number } {
  const windows = Math.floor(count / ws);
  let busy = 0;
  let sum = 0;
  for (let w = 0; w < windows; w++) {
    let s = 0;
    for (let n = w * ws; n < (w + 1) * ws; n++) s += data[2 * n]! ** 2 + data[2 * n + 1]! ** 2;
    sum += s;
    if (s > thr) busy++;
  }
  return { windows, busy, sum };
}

const detector = (ccaThresholdDbm = -62, windowUs = 10) => new EnergyDetector({ windowUs, ccaThresholdDbm }, cpuBackend);

test('w = busy / windows follows the share of windows carrying a signal (equation 1)', () => {
  const rng = Rng.fromSeed(7).fork('detector/fraction');
  const cal = -10;
  const windows = 10_000;
  const ws = 10; // 10 us at 1 Msps
  const data = new Float32Array(2 * windows * ws);
  let carried = 0;
  for (let w = 0; w < windows; w++) {
    const busy = rng.next() < 0.3;
    if (busy) carried++;
    // 20 dB over a -62 dBm threshold, or thermal noise 30 dB under it.
    rng.fillNormal(data, sigma(busy ? -42 : -92, cal), 2 * w * ws, 2 * ws);
  }
  const d = detector(-62).detect(block(data, { calibrationDb: cal }));
  assert.equal(d.windows, windows);
  assert.equal(d.busyWindows, carried, 'every window with the signal, and no other, is busy');
  assert.ok(Math.abs(d.busyWindows / d.windows - 0.3) < 0.02, `w = ${d.busyWindows / d.windows}`);
  assert.ok(Math.abs(d.busyMeanPowerDbm! - -42) < 0.1, `busy mean ${d.busyMeanPowerDbm} dBm`);
  const expectedMean = 10 * Math.log10((carried * 10 ** -4.2 + (windows - carried) * 10 ** -9.2) / windows);
  assert.ok(Math.abs(d.meanPowerDbm - expectedMean) < 0.1, `mean ${d.meanPowerDbm} dBm, expected ${expectedMean}`);
});

test('a -60 dBm signal is busy for a -62 dBm threshold and idle for -58 dBm', () => {
  const b = block(tone(1000, -60, -10), { calibrationDb: -10 });
  const busy = detector(-62).detect(b);
  assert.equal(busy.windows, 100);
  assert.equal(busy.busyWindows, 100);
  const idle = detector(-58).detect(b);
  assert.equal(idle.busyWindows, 0);
  assert.equal(idle.busyMeanPowerDbm, undefined);
});

test('the calibration moves the decision: the same samples read 10 dB higher at calibrationDb + 10', () => {
  const data = tone(1000, -60, -10); // -60 dBm at a calibration of -10 dB
  const higher = block(data, { calibrationDb: 0 }); // the same samples now mean -50 dBm
  const lower = block(data, { calibrationDb: -20 }); // and here -70 dBm
  assert.equal(detector(-58).detect(higher).busyWindows, 100, 'busy at -50 dBm for -58');
  assert.equal(detector(-62).detect(lower).busyWindows, 0, 'idle at -70 dBm for -62');
  assert.ok(Math.abs(detector().detect(higher).meanPowerDbm - -50) < 0.01);
  assert.ok(Math.abs(detector().detect(lower).meanPowerDbm - -70) < 0.01);
});

test('meanPowerDbm is within 0.1 dB of the synthesised power', () => {
  const cal = -10;
  const t = detector().detect(block(tone(4000, -60, cal), { calibrationDb: cal }));
  assert.ok(Math.abs(t.meanPowerDbm - -60) < 0.1, `tone: ${t.meanPowerDbm}`);
  assert.ok(Math.abs(t.busyMeanPowerDbm! - -60) < 0.1);

  const rng = Rng.fromSeed(3).fork('detector/noise');
  const noise = new Float32Array(2 * 100_000);
  rng.fillNormal(noise, sigma(-75, cal));
  const n = detector().detect(block(noise, { calibrationDb: cal }));
  assert.ok(Math.abs(n.meanPowerDbm - -75) < 0.1, `noise: ${n.meanPowerDbm}`);
  assert.equal(n.busyWindows, 0);
});

test('the window holds windowUs of samples at the block rate, at least one', () => {
  assert.equal(windowSamplesFor(10, 1e6), 10);
  assert.equal(windowSamplesFor(10, 20e6), 200);
  assert.equal(windowSamplesFor(1, 2.5e6), 3);
  assert.equal(windowSamplesFor(1, 1e5), 1, 'never zero samples');
  const d = detector(-62, 10);
  assert.equal(d.windowSamples(20e6), 200);
  const data = tone(1000, -60, -10);
  assert.equal(d.detect(block(data, { sampleRateHz: 1e6 })).windows, 100);
  assert.equal(d.detect(block(data, { sampleRateHz: 20e6 })).windows, 5);
  assert.equal(d.detect(block(data, { sampleRateHz: 50e3 })).windows, 1000);
});

test('a trailing partial window is left over, not counted', () => {
  const cal = -10;
  const data = tone(1005, -70, cal);
  // The 5 samples after the last whole window carry a strong signal.
  data.set(tone(5, -20, cal), 2 * 1000);
  const d = detector(-62).detect(block(data, { calibrationDb: cal }));
  assert.equal(d.windows, 100);
  assert.equal(d.leftoverSamples, 5);
  assert.equal(d.busyWindows, 0);
  assert.ok(Math.abs(d.meanPowerDbm - -70) < 0.01, 'the leftover power is not in the mean');
});

test('only the first count samples are read when data is longer', () => {
  const cal = -10;
  const data = tone(1000, -70, cal);
  data.set(tone(500, -20, cal), 2 * 500);
  const d = detector(-62).detect(block(data, { count: 500, calibrationDb: cal }));
  assert.equal(d.windows, 50);
  assert.equal(d.busyWindows, 0);
  assert.equal(d.leftoverSamples, 0);
  assert.ok(Math.abs(d.meanPowerDbm - -70) < 0.01);
});

test('an empty block, or one shorter than a window, counts nothing', () => {
  const empty = detector().detect(block(new Float32Array(0)));
  assert.deepEqual(empty, { windows: 0, busyWindows: 0, meanPowerDbm: -Infinity, busyMeanPowerDbm: undefined, leftoverSamples: 0 });
  const short = detector().detect(block(tone(7, -20, -10)));
  assert.deepEqual(short, { windows: 0, busyWindows: 0, meanPowerDbm: -Infinity, busyMeanPowerDbm: undefined, leftoverSamples: 7 });
});

test('a window is busy only when its power sum exceeds the threshold sum', () => {
  const data = new Float32Array([1, 0, 0, 1]); // one window of two samples, sum 2
  assert.equal(detectEnergy(data, 2, 2, 2).busyWindows, 0, 'equal is not over');
  assert.equal(detectEnergy(data, 2, 2, 1.999).busyWindows, 1);
  assert.equal(thresholdSum(-62, -62, 10), 10, 'a threshold at full scale is one unit per sample');
  assert.ok(Math.abs(thresholdSum(-62, -10, 10) - 10 * 10 ** -5.2) < 1e-18);
});

test('every window size, four-sample blocks and tails alike, matches the plain per-sample sum', () => {
  const rng = Rng.fromSeed(11).fork('detector/sizes');
  const count = 997;
  const data = new Float32Array(2 * count);
  for (let n = 0; n < count; n++) {
    const s = rng.next() < 0.5 ? 0.3 : 0.01;
    data[2 * n] = s * rng.normal();
    data[2 * n + 1] = s * rng.normal();
  }
  for (let ws = 1; ws <= 19; ws++) {
    const thr = 0.05 * ws;
    const ref = reference(data, count, ws, thr);
    const got = detectEnergy(data, count, ws, thr);
    assert.equal(got.windows, ref.windows, `windows at ${ws}`);
    assert.equal(got.busyWindows, ref.busy, `busy at ${ws}`);
    assert.equal(got.leftover, count - ref.windows * ws);
    assert.ok(Math.abs(got.sumPower - ref.sum) <= 1e-12 * ref.sum, `sum at ${ws}: ${got.sumPower} vs ${ref.sum}`);
    assert.ok(got.busySumPower <= got.sumPower);
  }
});

test('bad arguments are refused with a range error, before any work', () => {
  const data = new Float32Array(20);
  const code = { code: 'CORE_OUT_OF_RANGE' };
  assert.throws(() => detectEnergy(data, 11, 2, 1), code, 'count beyond data');
  assert.throws(() => detectEnergy(data, 2.5, 2, 1), code, 'fractional count');
  assert.throws(() => detectEnergy(data, -1, 2, 1), code);
  assert.throws(() => detectEnergy(data, 10, 0, 1), code, 'empty window');
  assert.throws(() => detectEnergy(data, 10, 2, Number.NaN), code);
  assert.throws(() => detector(-62, 0), code, 'windowUs 0');
  assert.throws(() => detector(Number.NaN), code);
  assert.throws(() => detector().detect(block(data, { sampleRateHz: 0 })), code);
});
