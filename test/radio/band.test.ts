import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BandConfig, PnConfig } from '../../src/config/types.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { ism2g4 } from '../../radio/channels.js';
import type { ReceivedFrame } from '../../radio/frontend.js';
import { dbmToMw, EmulatedBand, mwToDbm } from '../../radio/sim/band.js';

/** Whether two sample arrays hold the same bytes. */
function sameBytes(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

const S = 1_000_000;
const plan = ism2g4(11);
const ch = (n: number): number => plan.get(n).centerHz;
const NF = 5;
const FLOOR_DBM = -174 + 10 * Math.log10(22e6) + NF;
const CAL = -30;

function makeBand(cfg: Partial<BandConfig>, seed = 1, opts = {}): EmulatedBand {
  return new EmulatedBand(plan, { noiseFigureDb: NF, pn: [], phases: [], repeat: false, ...cfg }, Rng.fromSeed(seed), opts);
}

/** |actual - expected| < tol, with a message that says both. */
function near(actual: number, expected: number, tol: number, what = 'value'): void {
  assert.ok(Math.abs(actual - expected) < tol, `${what}: ${actual} is not within ${tol} of ${expected}`);
}

const alwaysOn = (channel: number, powerDbm: number): PnConfig => ({ channel, powerDbm, pattern: { kind: 'fraction', busy: 1, meanBurstMs: 1 } });

/** Mean power of samples [k0, k1) of a block, in dBm. */
function measuredDbm(out: Float32Array, k0: number, k1: number, cal = CAL): number {
  let sum = 0;
  for (let k = k0; k < k1; k++) sum += out[2 * k]! ** 2 + out[2 * k + 1]! ** 2;
  return 10 * Math.log10(sum / (k1 - k0)) + cal;
}

function capture(band: EmulatedBand, channel: number, startUs: number, count: number, label = 'rx', fs = 1e6): Float32Array {
  const out = new Float32Array(2 * count);
  band.synthesize(ch(channel), startUs, count, fs, CAL, out, label);
  return out;
}

test('noise alone: kTB over 22 MHz plus the noise figure, in powerDbm and in samples', () => {
  const band = makeBand({});
  near(band.noiseFloorDbm(ch(3)), FLOOR_DBM, 1e-9);
  near(FLOOR_DBM, -95.58, 0.01);
  for (const n of [1, 6, 11]) {
    near(band.powerDbm(ch(n), 1000), FLOOR_DBM, 1e-9);
    const out = capture(band, n, 0, 200_000);
    const m = measuredDbm(out, 0, 200_000);
    near(m, FLOOR_DBM, 0.2, `channel ${n}: ${m.toFixed(3)} dBm`);
  }
  // I and Q each carry half the power.
  const out = capture(band, 1, 0, 200_000);
  let i2 = 0;
  let q2 = 0;
  for (let k = 0; k < 200_000; k++) {
    i2 += out[2 * k]! ** 2;
    q2 += out[2 * k + 1]! ** 2;
  }
  near(10 * Math.log10(i2 / q2), 0, 0.1, 'I/Q power ratio in dB');
});

test('a busy PN adds its power on its channel and leaks into neighbours per overlapFactor', () => {
  const band = makeBand({ pn: [alwaysOn(6, -60)] });
  for (let n = 1; n <= 11; n++) {
    const expected = mwToDbm(dbmToMw(FLOOR_DBM) + dbmToMw(-60) * plan.overlapFactor(6, n));
    near(band.powerDbm(ch(n), 5000), expected, 1e-9, `powerDbm on channel ${n}`);
    const out = capture(band, n, 0, 100_000, `rx${n}`);
    const m = measuredDbm(out, 0, 100_000);
    near(m, expected, 0.2, `channel ${n}: measured ${m.toFixed(2)}, expected ${expected.toFixed(2)} dBm`);
  }
  // The adjacent channel sees the PN above a -62 dBm CCA threshold: about 1 dB under the PN itself.
  assert.ok(band.powerDbm(ch(7), 0) > -62, 'adjacent channel over CCA');
  // Five channels away it is more than 30 dB down: below CCA by far.
  assert.ok(band.powerDbm(ch(11), 0) < -90, 'five channels away, under -90 dBm');
  assert.ok(band.powerDbm(ch(1), 0) - -60 < -30, 'five channels away, 30 dB down');
});

test('nothing leaks meaningfully into a channel 5 away', () => {
  const band = makeBand({ pn: [alwaysOn(1, -80)] });
  const rise = band.powerDbm(ch(6), 0) - FLOOR_DBM;
  assert.ok(rise >= 0 && rise < 0.1, `noise rise ${rise.toFixed(3)} dB`);
  const m = measuredDbm(capture(band, 6, 0, 200_000), 0, 200_000);
  near(m, FLOOR_DBM, 0.2);
  // while the PN's own channel is 15 dB over the floor
  assert.ok(band.powerDbm(ch(1), 0) > FLOOR_DBM + 15, 'the PN channel is 15 dB over the floor');
});

test('sample power follows an on/off PN change point by change point', () => {
  const pn: PnConfig = { channel: 3, powerDbm: -50, pattern: { kind: 'onoff', idleMs: 1.3, busyMs: 0.7, distribution: 'fixed' } };
  const band = makeBand({ pn: [pn] });
  const n = 400_000;
  // 2.5 MS/s: sample times are fractional microseconds.
  const fs = 2.5e6;
  const out = capture(band, 3, 10, n, 'rx', fs);
  let busySum = 0;
  let busyN = 0;
  let idleSum = 0;
  let idleN = 0;
  const truth = makeBand({ pn: [pn] });
  const iv = truth.pnBusyFraction(3, 10, 10 + n / 2.5);
  near(iv, 0.35, 0.01);
  // Classify every sample by the ground truth at its (fractional) time.
  for (let k = 0; k < n; k++) {
    const t = 10 + k / 2.5;
    const p = out[2 * k]! ** 2 + out[2 * k + 1]! ** 2;
    if (truth.activePn(Math.floor(t)).length > 0) {
      busySum += p;
      busyN++;
    } else {
      idleSum += p;
      idleN++;
    }
  }
  near(busyN / n, 0.35, 0.01);
  const busyDbm = 10 * Math.log10(busySum / busyN) + CAL;
  const idleDbm = 10 * Math.log10(idleSum / idleN) + CAL;
  near(busyDbm, mwToDbm(dbmToMw(-50) + dbmToMw(FLOOR_DBM)), 0.2, `busy ${busyDbm}`);
  near(idleDbm, FLOOR_DBM, 0.2, `idle ${idleDbm}`);
});

test('phases switch the PN load at the right times and repeat', () => {
  const phases = [
    { durationS: 0.5, pn: [alwaysOn(1, -50)] },
    { durationS: 0.25, pn: [alwaysOn(6, -50)] },
  ];
  const rep = makeBand({ phases, repeat: true, pn: [alwaysOn(11, -50)] });
  const once = makeBand({ phases, repeat: false });
  for (const b of [rep, once]) {
    assert.equal(b.pnBusyFraction(1, 0, 500_000), 1);
    assert.equal(b.pnBusyFraction(6, 0, 500_000), 0);
    assert.equal(b.pnBusyFraction(1, 500_000, 750_000), 0);
    assert.equal(b.pnBusyFraction(6, 500_000, 750_000), 1);
    assert.equal(b.pnBusyFraction(11, 0, 750_000), 0, 'cfg.pn is ignored while phases are given');
    assert.deepEqual(
      b.activePn(499_999).map((p) => p.channel),
      [1],
    );
    assert.deepEqual(
      b.activePn(500_000).map((p) => p.channel),
      [6],
    );
  }
  // Repeating: the cycle of 0.75 s starts over.
  assert.equal(rep.pnBusyFraction(1, 750_000, 1_250_000), 1);
  assert.equal(rep.pnBusyFraction(6, 1_250_000, 1_500_000), 1);
  assert.deepEqual(
    rep.activePn(100 * 750_000 + 10).map((p) => p.label),
    ['pn/cycle100/phase0/0'],
  );
  // Not repeating: the last phase holds forever.
  assert.equal(once.pnBusyFraction(6, 750_000, 5 * S), 1);
  assert.equal(once.pnBusyFraction(1, 750_000, 5 * S), 0);
  // A block across the phase switch: PN power on channel 1 before; after it, noise and the leak of the PN 5 channels away.
  const out = capture(once, 1, 400_000, 200_000);
  near(measuredDbm(out, 0, 100_000), mwToDbm(dbmToMw(-50) + dbmToMw(FLOOR_DBM)), 0.2, 'phase 0');
  near(measuredDbm(out, 100_000, 200_000), mwToDbm(dbmToMw(-50) * plan.overlapFactor(6, 1) + dbmToMw(FLOOR_DBM)), 0.2, 'phase 1');
});

test('without phases, cfg.pn holds for the whole run from the band start', () => {
  const band = makeBand({ pn: [alwaysOn(4, -40)] }, 1, { startUs: 1000 });
  assert.equal(band.pnBusyFraction(4, 0, 1000), 0);
  assert.equal(band.pnBusyFraction(4, 1000, 3600 * S), 1);
});

test('each PN has its own stream: adding one changes no other', () => {
  const pns: PnConfig[] = [
    { channel: 1, powerDbm: -60, pattern: { kind: 'fraction', busy: 0.3, meanBurstMs: 2 } },
    { channel: 6, powerDbm: -60, pattern: { kind: 'onoff', idleMs: 3, busyMs: 1, distribution: 'exponential' } },
  ];
  const more = [...pns, { channel: 11, powerDbm: -60, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 1 } } as PnConfig];
  for (const cfg of [{ pn: pns }, { phases: [{ durationS: 1, pn: pns }], repeat: true }]) {
    const a = makeBand(cfg);
    const b = makeBand(cfg.pn ? { pn: more } : { phases: [{ durationS: 1, pn: more }], repeat: true });
    for (const n of [1, 6]) {
      for (let t = 0; t < 3 * S; t += 100_000) assert.equal(a.pnBusyTime(n, t, t + 100_000), b.pnBusyTime(n, t, t + 100_000));
    }
    assert.ok(b.pnBusyFraction(11, 0, 3 * S) > 0.4, 'the added PN is on');
  }
  // Two cycles of a repeating phase draw different patterns.
  const r = makeBand({ phases: [{ durationS: 1, pn: pns }], repeat: true });
  assert.notEqual(r.pnBusyTime(1, 0, S), r.pnBusyTime(1, S, 2 * S));
});

test('same seed gives byte-identical samples, another seed different ones', () => {
  const cfg = { pn: [{ channel: 2, powerDbm: -55, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 0.5 } } as PnConfig] };
  const x = capture(makeBand(cfg, 7), 2, 0, 50_000);
  const y = capture(makeBand(cfg, 7), 2, 0, 50_000);
  const z = capture(makeBand(cfg, 8), 2, 0, 50_000);
  assert.ok(sameBytes(x, y), 'same seed, same bytes');
  assert.ok(!sameBytes(x, z), 'another seed, other bytes');
  // How the stream is cut into blocks does not matter.
  const cut = makeBand(cfg, 7);
  const parts = [capture(cut, 2, 0, 12_000), capture(cut, 2, 12_000, 30_000), capture(cut, 2, 42_000, 8_000)];
  const joined = new Float32Array(100_000);
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  assert.ok(sameBytes(joined, x), 'blocks joined equal one block');
});

test('receivers have their own noise streams and do not perturb each other', () => {
  const alone = makeBand({});
  const a1 = capture(alone, 1, 0, 10_000, 'A');
  const a2 = capture(alone, 1, 10_000, 10_000, 'A');
  const shared = makeBand({});
  const b1 = capture(shared, 1, 0, 10_000, 'A');
  capture(shared, 6, 0, 10_000, 'B');
  const b2 = capture(shared, 1, 10_000, 10_000, 'A');
  assert.ok(sameBytes(a1, b1), 'first block of A unchanged by B');
  assert.ok(sameBytes(a2, b2), 'second block of A unchanged by B');
  const other = capture(makeBand({}), 1, 0, 10_000, 'B');
  assert.ok(!sameBytes(other, a1), 'receivers A and B draw different noise');
});

test('a frame adds its power while in the air and reaches receivers on its channel at its end', () => {
  const engine = new EventEngine();
  const band = makeBand({}, 1, { scheduler: engine });
  const got: Record<string, ReceivedFrame[]> = { tx: [], same: [], next: [], far: [] };
  band.attach({ id: 'tx', centerHz: ch(6), onFrame: (f) => got.tx!.push(f) });
  band.attach({ id: 'same', centerHz: ch(6), onFrame: (f) => got.same!.push(f) });
  band.attach({ id: 'next', centerHz: ch(7), onFrame: (f) => got.next!.push(f) });
  band.attach({ id: 'far', centerHz: ch(11), onFrame: (f) => got.far!.push(f) });
  engine.run(100);
  const bytes = new Uint8Array(250).fill(7);
  const air = band.transmit('tx', ch(6), bytes, 100, -40, 2e6);
  assert.deepEqual(air, { startUs: 100, endUs: 100 + 1000 });
  bytes.fill(0); // the band keeps its own copy
  near(band.powerDbm(ch(6), 600), mwToDbm(dbmToMw(-40) + dbmToMw(FLOOR_DBM)), 1e-9);
  near(band.powerDbm(ch(7), 600), mwToDbm(dbmToMw(-40) * plan.overlapFactor(6, 7) + dbmToMw(FLOOR_DBM)), 1e-9);
  assert.equal(band.powerDbm(ch(6), 1100), FLOOR_DBM);
  const out = capture(band, 6, 0, 1200);
  near(measuredDbm(out, 100, 1100), -40, 0.5);
  assert.ok(measuredDbm(out, 1100, 1200) < -90, 'noise again after the airtime');
  // Frames scheduled ahead or out of order count in their own airtime only.
  band.transmit('far', ch(11), new Uint8Array(50), 5000, -30, 1e6);
  band.transmit('next', ch(7), new Uint8Array(50), 3000, -30, 1e6);
  assert.equal(band.powerDbm(ch(11), 4999), FLOOR_DBM);
  near(band.powerDbm(ch(11), 5000), -30, 0.01, 'future frame on 11');
  near(band.powerDbm(ch(7), 3399), -30, 0.01, 'out-of-order frame on 7');
  assert.equal(band.powerDbm(ch(7), 3400), FLOOR_DBM);
  engine.run(1099);
  assert.equal(got.same!.length, 0, 'nothing before the end of the airtime');
  engine.run();
  assert.equal(got.same!.length, 1);
  const f = got.same![0]!;
  assert.equal(f.atUs, 1100);
  assert.equal(f.rssiDbm, -40);
  assert.equal(f.centerHz, ch(6));
  assert.deepEqual([...f.bytes], new Array(250).fill(7));
  assert.equal(got.tx!.length, 0, 'not back to the sender');
  assert.equal(got.next!.length, 0, 'not to an overlapping channel');
  assert.equal(got.far!.length, 0, 'not to its own sender on 11');
});

test('bad input: unknown centre, PN on a channel outside the plan', () => {
  const band = makeBand({});
  assert.throws(() => band.powerDbm(2_413e6, 0), { code: 'RADIO_NOT_A_CHANNEL' });
  assert.throws(() => band.synthesize(2_413e6, 0, 10, 1e6, 0, new Float32Array(20), 'x'), { code: 'RADIO_NOT_A_CHANNEL' });
  assert.throws(() => makeBand({ pn: [alwaysOn(12, -50)] }), { code: 'CONFIG_INVALID', message: /\/pn\/0\/channel/ });
  assert.throws(() => makeBand({ phases: [{ durationS: 1, pn: [{ channel: 1, powerDbm: -50, pattern: { kind: 'fraction', busy: 2, meanBurstMs: 1 } }] }] }), {
    code: 'CONFIG_INVALID',
    message: /\/phases\/0\/pn\/0\/pattern\/busy/,
  });
  assert.throws(() => band.transmit('a', ch(1), new Uint8Array(10), 0, 0, 1e6), { code: 'RADIO_NO_SCHEDULER' });
});

test('memory stays bounded: old phases, intervals and frames are forgotten', () => {
  const engine = new EventEngine();
  const pn: PnConfig = { channel: 1, powerDbm: -50, pattern: { kind: 'fraction', busy: 0.5, meanBurstMs: 0.5 } };
  const band = makeBand(
    {
      phases: [
        { durationS: 0.1, pn: [pn] },
        { durationS: 0.1, pn: [pn, pn] },
      ],
      repeat: true,
    },
    1,
    {
      scheduler: engine,
      historyUs: 200_000,
    },
  );
  const out = new Float32Array(2 * 1000);
  for (let t = 0; t < 60 * S; t += 10_000) {
    engine.run(t);
    band.transmit('x', ch(1), new Uint8Array(100), t, 0, 2e6);
    band.synthesize(ch(1), t, 1000, 1e6, 0, out, 'r');
  }
  assert.ok(band.storedFrames < 100, `${band.storedFrames} frames held`);
  assert.throws(() => band.pnBusyTime(1, 0, 10), { code: 'CORE_OUT_OF_RANGE' });
  assert.ok(band.pnBusyFraction(1, 60 * S - 150_000, 60 * S) > 0, 'recent history still answers');
});
