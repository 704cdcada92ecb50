import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IqBlock } from '../../radio/frontend.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { PsdTap, teeTaps, type IqTap, type VisitPsd } from '../../src/sensing/iq-tap.js';
import type { Visit } from '../../src/sensing/schedule.js';

const RATE = 1e6;

function visit(round: number, channel: number, startUs = round * 1_000_000 + channel * 1000): Visit {
  return { round, channel, startUs, captureUs: 1000, endUs: startUs + 1000 };
}

/** A block of white noise of mean |x|^2 `power` at `startUs`. */
function block(rng: Rng, count: number, startUs: number, o: Partial<IqBlock> = {}, power = 1e-6): IqBlock {
  const data = new Float32Array(2 * count);
  rng.fillNormal(data, Math.sqrt(power / 2));
  return { data, count, startUs, sampleRateHz: RATE, centerHz: 2437e6, calibrationDb: 0, droppedSamples: 0, ...o };
}

/** A tap whose deferred estimates run when `run()` is called; what it emitted. */
function tapOf(params: Partial<{ bins: number; maxSegments: number; maxPerS: number }> = {}): { tap: PsdTap; out: VisitPsd[]; run: () => void } {
  const queue: Array<() => void> = [];
  const out: VisitPsd[] = [];
  const tap = new PsdTap({ bins: 64, maxSegments: 8, maxPerS: 1000, ...params }, { now: 0, defer: (fn) => queue.push(fn), emit: (p) => out.push(p) });
  return { tap, out, run: () => queue.splice(0).forEach((fn) => fn()) };
}

test('a visit gives one PSD, estimated later, of the samples of its first blocks up to the cap', () => {
  const rng = Rng.fromSeed(1);
  const { tap, out, run } = tapOf();
  const v = visit(3, 6);
  // Two contiguous blocks of 200 samples: the cap is (8 - 1) * 32 + 64 = 288 samples.
  const b1 = block(rng, 200, v.startUs);
  tap.block(v, b1);
  // The detector reuses its buffer: what the tap keeps must be a copy.
  b1.data.fill(1000);
  tap.block(v, block(rng, 200, v.startUs + 200));
  tap.visitEnd(v, v.endUs);
  assert.equal(out.length, 0, 'nothing is estimated on the detector path');
  run();
  assert.equal(out.length, 1);
  const p = out[0]!;
  assert.deepEqual(
    { round: p.round, channel: p.channel, centerHz: p.centerHz, rate: p.sampleRateHz, start: p.startUs, segments: p.segments, bins: p.dbmPerHz.length },
    { round: 3, channel: 6, centerHz: 2437e6, rate: RATE, start: v.startUs, segments: 8, bins: 64 },
  );
  assert.equal(p.durationUs, 288, '288 samples at 1 Msps');
  // -60 dBm of white noise over 1 MHz: -120 dBm/Hz (the overwritten first block would read +60 dB).
  const mean = p.dbmPerHz.reduce((a, b) => a + b, 0) / 64;
  assert.ok(Math.abs(mean - -120) < 1.5, `mean ${mean.toFixed(2)} dBm/Hz`);
  assert.deepEqual(tap.counters, { estimates: 1, skippedRate: 0, skippedBusy: 0, tooShort: 0 });
});

test('a block of another setting, a gap or a lost stretch ends the run the estimate reads', () => {
  const rng = Rng.fromSeed(2);
  for (const [what, o, dt] of [
    ['another centre', { centerHz: 2412e6 }, 0],
    ['another gain', { calibrationDb: 10 }, 0],
    ['a gap', {}, 50],
    ['dropped samples', { droppedSamples: 5 }, 0],
  ] as const) {
    const { tap, out, run } = tapOf({ maxSegments: 16 });
    const v = visit(1, 1);
    tap.block(v, block(rng, 100, v.startUs));
    tap.block(v, block(rng, 100, v.startUs + 100 + dt, o));
    tap.block(v, block(rng, 100, v.startUs + 200 + dt));
    tap.visitEnd(v, v.endUs);
    run();
    assert.equal(out[0]?.segments, 2, `${what}: only the first 100 samples (2 segments of 64) count`);
  }
});

test('visits beyond maxPerS are skipped and counted, by the router clock', () => {
  const rng = Rng.fromSeed(3);
  const { tap, out, run } = tapOf({ maxPerS: 2 });
  for (let i = 0; i < 5; i++) {
    const v = visit(0, i + 1, 1000 * i);
    tap.block(v, block(rng, 64, v.startUs));
    tap.visitEnd(v, v.endUs);
  }
  run();
  assert.equal(out.length, 2, 'the bucket holds 2');
  assert.equal(tap.counters.skippedRate, 3);
  // A second later, two more.
  for (let i = 0; i < 3; i++) {
    const v = visit(1, i + 1, 1_000_000 + 1000 * i);
    tap.block(v, block(rng, 64, v.startUs));
    tap.visitEnd(v, v.endUs);
  }
  run();
  assert.equal(out.length, 4);
});

test('at most 16 visits wait for their estimates; one more is skipped, and buffers come back once estimated', () => {
  const rng = Rng.fromSeed(4);
  const { tap, out, run } = tapOf();
  const many = (round: number): void => {
    for (let c = 1; c <= 18; c++) {
      const v = visit(round, c);
      tap.block(v, block(rng, 64, v.startUs));
      tap.visitEnd(v, v.endUs);
    }
  };
  many(0);
  assert.equal(tap.counters.skippedBusy, 2);
  run();
  assert.equal(out.length, 16);
  many(1);
  run();
  assert.equal(out.length, 32, 'the buffers were free again');
  assert.equal(tap.counters.skippedBusy, 4);
});

test('a visit shorter than one segment gives no PSD; a visit with no block is not counted', () => {
  const rng = Rng.fromSeed(5);
  const { tap, out, run } = tapOf();
  const v = visit(0, 1);
  tap.block(v, block(rng, 63, v.startUs));
  tap.visitEnd(v, v.endUs);
  tap.visitEnd(visit(0, 2), 5000);
  run();
  assert.equal(out.length, 0);
  assert.deepEqual(tap.counters, { estimates: 0, skippedRate: 0, skippedBusy: 0, tooShort: 1 });
});

test('the PSD settings are checked', () => {
  assert.throws(
    () => tapOf({ bins: 100 }),
    (e: unknown) => e instanceof RangeArgumentError && /bins/.test(e.message),
  );
  assert.throws(
    () => tapOf({ maxPerS: 0 }),
    (e: unknown) => e instanceof RangeArgumentError && /maxPerS/.test(e.message),
  );
});

test('teeTaps hands every block and visit end to each tap, in order', () => {
  const seen: string[] = [];
  const t = (name: string): IqTap => ({ block: (v) => seen.push(`${name} block ${v.channel}`), visitEnd: (v) => seen.push(`${name} end ${v.channel}`) });
  const tee = teeTaps([t('a'), t('b')]);
  tee.block(visit(0, 4), block(Rng.fromSeed(6), 1, 0));
  tee.visitEnd(visit(0, 4), 0);
  assert.deepEqual(seen, ['a block 4', 'b block 4', 'a end 4', 'b end 4']);
});
