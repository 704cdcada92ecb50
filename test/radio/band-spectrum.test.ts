import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BandConfig, PnConfig } from '../../src/config/types.js';
import { EventEngine } from '../../src/core/engine.js';
import { ComplexFft } from '../../src/core/fft.js';
import { Rng } from '../../src/core/rng.js';
import { ism2g4 } from '../../radio/channels.js';
import { dbmToMw, EmulatedBand, SimFrontend } from '../../radio/sim/index.js';

/**
 * The band's IQ spectrum: white wherever every emitter's mask is flat over
 * the sampled band (bit for bit the samples it always gave), each emitter's
 * DSSS mask where it is not. 25 Msps is the wide rate: its band, +-12.5 MHz,
 * holds a co-channel emitter's whole 22 MHz flat top and 1.5 MHz of skirt on
 * either side, so even the co-channel case is shaped (at 22 Msps it would be
 * flat, and white).
 */

const plan = ism2g4(11);
const ch = (n: number): number => plan.get(n).centerHz;
const NF = 5;
const CAL = -20;
const FLOOR_MW = dbmToMw(-174 + 10 * Math.log10(22e6) + NF);
const WIDE = 25e6;

const alwaysOn = (channel: number, powerDbm: number): PnConfig => ({ channel, powerDbm, pattern: { kind: 'fraction', busy: 1, meanBurstMs: 1 } });

function makeBand(cfg: Partial<BandConfig>, opts = {}): EmulatedBand {
  return new EmulatedBand(plan, { noiseFigureDb: NF, pn: [], phases: [], repeat: false, ...cfg }, Rng.fromSeed(3), opts);
}

/** |actual - expected| <= tol, with a message that says both. */
function near(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);
}

/** Mean |x|^2 of `count` samples, in mW. */
function meanMw(iq: Float32Array, count: number): number {
  let s = 0;
  for (let i = 0; i < 2 * count; i++) s += iq[i]! ** 2;
  return (s / count) * dbmToMw(CAL);
}

const NFFT = 256;

/**
 * Welch's averaged periodogram: Hann-windowed, non-overlapping segments of
 * NFFT samples, in mW per bin, scaled so that the bins' mean is the mean
 * power. Bin m is at m * fs / NFFT, less fs from NFFT / 2 on.
 */
function welch(iq: Float32Array, count: number): Float64Array {
  const fft = new ComplexFft(NFFT);
  const win = Float64Array.from({ length: NFFT }, (_, k) => 0.5 - 0.5 * Math.cos((2 * Math.PI * k) / NFFT));
  const winEnergy = win.reduce((a, w) => a + w * w, 0);
  const x = new Float64Array(2 * NFFT);
  const X = new Float64Array(2 * NFFT);
  const psd = new Float64Array(NFFT);
  const segments = Math.floor(count / NFFT);
  for (let s = 0; s < segments; s++) {
    for (let k = 0; k < NFFT; k++) {
      x[2 * k] = iq[2 * (s * NFFT + k)]! * win[k]!;
      x[2 * k + 1] = iq[2 * (s * NFFT + k) + 1]! * win[k]!;
    }
    fft.forward(x, X);
    for (let m = 0; m < NFFT; m++) psd[m] = psd[m]! + (X[2 * m]! ** 2 + X[2 * m + 1]! ** 2) / winEnergy;
  }
  const scale = dbmToMw(CAL) / segments;
  return psd.map((p) => p * scale);
}

/** The bins whose frequency (Hz from the centre, at WIDE) lies in [lo, hi]: their mean and their extremes, in mW per bin. */
function band(psd: Float64Array, lo: number, hi: number): { mean: number; min: number; max: number } {
  let sum = 0;
  let n = 0;
  let min = Infinity;
  let max = 0;
  for (let m = 0; m < NFFT; m++) {
    const f = ((m < NFFT / 2 ? m : m - NFFT) * WIDE) / NFFT;
    if (f < lo || f > hi) continue;
    sum += psd[m]!;
    n++;
    min = Math.min(min, psd[m]!);
    max = Math.max(max, psd[m]!);
  }
  return { mean: sum / n, min, max };
}

const db = (ratio: number): number => 10 * Math.log10(ratio);

test('at 1 Msps every mask is flat over the band: the samples are those white noise always gave, byte for byte', () => {
  // PNs on the channel and on both channels 10 MHz off (their mask steps 1 MHz from the centre, outside +-0.5 MHz), a frame 5 MHz off.
  const engine = new EventEngine();
  const pns = [alwaysOn(6, -60), alwaysOn(4, -45), alwaysOn(8, -50)];
  const b = makeBand({ pn: pns }, { scheduler: engine });
  const air = b.transmit('tx', ch(5), new Uint8Array(100), 300, -40, 2e6);
  assert.deepEqual(air, { startUs: 300, endUs: 700 });
  const count = 1000;
  const out = new Float32Array(2 * count);
  b.synthesize(ch(6), 0, count, 1e6, CAL, out, Rng.fromSeed(9));

  // White noise as the band drew it before it shaped anything: one fillNormal per run of constant power, the power
  // summed in the order the band's events come (the PNs on at 0 in their order, the frame on at 300 and off at 700).
  const pnMw = pns.map((p) => dbmToMw(p.powerDbm) * plan.overlapFactor(p.channel, 6));
  const frameMw = dbmToMw(-40) * plan.overlapFactor(5, 6);
  const e1 = pnMw[0]! + pnMw[1]! + pnMw[2]!;
  const e2 = e1 + frameMw;
  const runs = [
    { k0: 0, k1: 300, mw: FLOOR_MW + e1 },
    { k0: 300, k1: 700, mw: FLOOR_MW + e2 },
    { k0: 700, k1: count, mw: FLOOR_MW + (e2 - frameMw) },
  ];
  const white = new Float32Array(2 * count);
  const ref = Rng.fromSeed(9);
  for (const r of runs) ref.fillNormal(white, Math.sqrt(r.mw / dbmToMw(CAL) / 2), 2 * r.k0, 2 * (r.k1 - r.k0));
  const bytes = (x: Float32Array): Uint8Array => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  assert.deepEqual(bytes(out), bytes(white));
});

test('at 25 Msps a PN on the receiver channel is a flat top over +-11 MHz with the mask skirts, at the same power', () => {
  const b = makeBand({ pn: [alwaysOn(6, -40)] });
  const count = 1 << 20;
  const iq = new Float32Array(2 * count);
  b.synthesize(ch(6), 100, count, WIDE, CAL, iq, 'rx');
  const modelMw = dbmToMw(-40) + FLOOR_MW;
  near(meanMw(iq, count) / modelMw, 1, 0.02, 'mean power over the model');

  const psd = welch(iq, count);
  const top = band(psd, -10.5e6, 10.5e6);
  assert.ok(db(top.max / top.min) <= 1, `the top spans ${db(top.max / top.min).toFixed(2)} dB, more than 1 dB`);
  // The mask's mean over the band is (22 + 3 * 0.001) / 25 of its top: the top stands that much over the mean bin.
  const topMw = (dbmToMw(-40) * 25) / (22 + 3e-3) + FLOOR_MW;
  near(db(top.mean / topMw), 0, 0.2, 'top level against the model (dB)');
  for (const [lo, hi] of [
    [-12.4e6, -11.6e6],
    [11.6e6, 12.4e6],
  ] as const) {
    const skirt = band(psd, lo, hi);
    near(db(top.mean / skirt.mean), 30, 2, `top over the skirt in [${lo / 1e6}, ${hi / 1e6}] MHz (dB)`);
  }
});

/** Checks a capture at 25 Msps on channel 4 of an emitter of `powerDbm` on channel 6 (10 MHz up): its flat top above 2426 MHz, its -30 dBr skirt below. */
function checkAdjacent(iq: Float32Array, count: number, powerDbm: number, calibrationDb = CAL): void {
  const fullScale = dbmToMw(calibrationDb) / dbmToMw(CAL);
  near((meanMw(iq, count) * fullScale) / (dbmToMw(powerDbm) * plan.overlapFactor(6, 4) + FLOOR_MW), 1, 0.02, 'mean power over P * overlap(6, 4) + noise');
  const psd = welch(iq, count);
  // 2427 MHz is the centre: 2426 MHz is -1 MHz; the skirt runs down to 2415 MHz (-12 MHz).
  const above = band(psd, -0.5e6, 12.4e6);
  const below = band(psd, -11.5e6, -1.5e6);
  near(db(above.mean / below.mean), 30, 2, 'above 2426 MHz over below (dB)');
  assert.ok(db(above.max / above.min) <= 1, `the part above 2426 MHz spans ${db(above.max / above.min).toFixed(2)} dB`);
}

test('at 25 Msps on channel 4, a PN on channel 6 fills the band above 2426 MHz, 30 dB over its skirt below', () => {
  const b = makeBand({ pn: [alwaysOn(6, -30)] });
  const count = 1 << 19;
  const iq = new Float32Array(2 * count);
  b.synthesize(ch(4), 100, count, WIDE, CAL, iq, 'rx');
  checkAdjacent(iq, count, -30);
});

test('a frame in the air has the shape a PN has, and a front-end at 25 Msps captures it so', async () => {
  const engine = new EventEngine();
  const b = makeBand({}, { scheduler: engine });
  const tx = new SimFrontend(b, engine, { id: 'tx', txPowerDbm: -30, rateBps: 2e6, retuneUs: 10 });
  const rx = new SimFrontend(b, engine, { id: 'rx', sampleRateHz: WIDE, retuneUs: 10 });
  void tx.tune(ch(6));
  void rx.tune(ch(4));
  engine.run(10);
  await new Promise((r) => setImmediate(r));
  // 4000 bytes at 2 Mbps: 16 ms in the air from 10 us on, and the capture (2^18 samples, 10.5 ms) within it.
  void tx.send(new Uint8Array(4000));
  const count = 1 << 18;
  const block = rx.captureAt(100, count);
  checkAdjacent(block.data, count, -30, block.calibrationDb);
  // And straight from the band, the same.
  const iq = new Float32Array(2 * count);
  b.synthesize(ch(4), 100, count, WIDE, CAL, iq, 'other');
  checkAdjacent(iq, count, -30);
});

test('shaping keeps the noise stream where white draws leave it, and runs too short for a chunk keep their power', () => {
  const b = makeBand({ pn: [alwaysOn(6, -30)] });
  const noise = Rng.fromSeed(5);
  const iq = new Float32Array(2 * 1037);
  b.synthesize(ch(4), 100, 1037, WIDE, CAL, iq, noise);
  const ref = Rng.fromSeed(5);
  ref.fillNormal(new Float32Array(2 * 1037), 1);
  assert.equal(noise.nextU32(), ref.nextU32(), 'the stream moved on by the white draws exactly');
  // Many short calls (5 to 40 samples) keep the power the model gives.
  const r = Rng.fromSeed(6);
  let sum = 0;
  let n = 0;
  let t = 200;
  while (n < 200_000) {
    const k = 5 + Math.floor(r.next() * 36);
    b.synthesize(ch(4), t, k, WIDE, CAL, iq, 'short');
    for (let i = 0; i < 2 * k; i++) sum += iq[i]! ** 2;
    n += k;
    t += k / 25;
  }
  near(((sum / n) * dbmToMw(CAL)) / (dbmToMw(-30) * plan.overlapFactor(6, 4) + FLOOR_MW), 1, 0.02, 'mean power of short calls over the model');
});
