import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PnPatternConfig } from '../../src/config/types.js';
import { Rng } from '../../src/core/rng.js';
import { PnProcess } from '../../radio/sim/pn.js';

const S = 1_000_000;

/** Busy fraction over [t0, t1), asked in chunks as a sensing loop would (keeps memory bounded). */
function fractionInChunks(pn: PnProcess, t0: number, t1: number, chunk: number): number {
  let busy = 0;
  for (let t = t0; t < t1; t += chunk) busy += pn.busyTime(t, Math.min(t1, t + chunk));
  return busy / (t1 - t0);
}

test('fixed on/off: exact busy time over whole cycles, strict alternation', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const pn = new PnProcess({ kind: 'onoff', idleMs: 7, busyMs: 3, distribution: 'fixed' }, Rng.fromSeed(seed), { startUs: 500 });
    const cycle = 10_000;
    // Any window of whole cycles from the start on holds exactly busy * cycles.
    for (let k = 0; k < 50; k++) assert.equal(pn.busyTime(500 + k * 1234, 500 + k * 1234 + 7 * cycle), 7 * 3_000);
    const iv = pn.busyIntervals(100_000, 200_000);
    for (const [s, e] of iv.slice(1, -1)) assert.equal(e - s, 3_000);
    for (let i = 1; i < iv.length; i++) {
      const prev = iv[i - 1]!;
      const cur = iv[i]!;
      assert.equal(cur[0] - prev[0], cycle);
    }
  }
  // Idle before the start.
  const pn = new PnProcess({ kind: 'onoff', idleMs: 1, busyMs: 1, distribution: 'fixed' }, Rng.fromSeed(1), { startUs: 1000 });
  assert.equal(pn.busyTime(0, 1000), 0);
  assert.equal(pn.busyTime(0, 3000), 1000);
});

test('fixed on/off starts at a random phase of the cycle', () => {
  const starts = new Set<number>();
  let busyAtStart = 0;
  for (let seed = 0; seed < 200; seed++) {
    const pn = new PnProcess({ kind: 'onoff', idleMs: 3, busyMs: 1, distribution: 'fixed' }, Rng.fromSeed(seed));
    const first = pn.busyIntervals(0, 10_000)[0]!;
    starts.add(first[0] % 4000);
    if (pn.isBusy(0)) busyAtStart++;
  }
  assert.ok(starts.size > 100, `${starts.size} distinct phases`);
  // Busy at the start with probability busy / cycle = 1/4.
  assert.ok(busyAtStart > 30 && busyAtStart < 70, `${busyAtStart} of 200 busy at start`);
});

test('exponential on/off and fraction patterns reach their busy fraction within 0.02', () => {
  const cases: Array<[PnPatternConfig, number]> = [
    [{ kind: 'onoff', idleMs: 30, busyMs: 10, distribution: 'exponential' }, 0.25],
    [{ kind: 'onoff', idleMs: 5, busyMs: 15, distribution: 'exponential' }, 0.75],
    [{ kind: 'fraction', busy: 0.3, meanBurstMs: 5 }, 0.3],
    [{ kind: 'fraction', busy: 0.9, meanBurstMs: 20 }, 0.9],
    [{ kind: 'fraction', busy: 0.05, meanBurstMs: 2 }, 0.05],
  ];
  for (const [pattern, target] of cases) {
    const pn = new PnProcess(pattern, Rng.fromSeed(42).fork('pn'));
    const f = fractionInChunks(pn, 0, 600 * S, 70_000);
    assert.ok(Math.abs(f - target) < 0.02, `${JSON.stringify(pattern)}: ${f.toFixed(4)} vs ${target}`);
  }
});

test('exponential bursts have the configured mean length', () => {
  const pn = new PnProcess({ kind: 'fraction', busy: 0.5, meanBurstMs: 4 }, Rng.fromSeed(9));
  const iv = pn.busyIntervals(0, 400 * S).slice(1, -1);
  const mean = iv.reduce((s, [a, b]) => s + (b - a), 0) / iv.length;
  assert.ok(Math.abs(mean - 4000) < 200, `mean burst ${mean} us`);
});

test('b = 0 and off never busy; b = 1 always busy', () => {
  const never: PnPatternConfig[] = [
    { kind: 'off' },
    { kind: 'fraction', busy: 0, meanBurstMs: 5 },
    { kind: 'onoff', idleMs: 5, busyMs: 0, distribution: 'fixed' },
  ];
  for (const p of never) {
    const pn = new PnProcess(p, Rng.fromSeed(1));
    assert.equal(pn.busyTime(0, 100 * S), 0);
    assert.equal(pn.isBusy(50 * S), false);
    assert.deepEqual(pn.busyIntervals(50 * S, 60 * S), []);
  }
  const always: PnPatternConfig[] = [
    { kind: 'fraction', busy: 1, meanBurstMs: 5 },
    { kind: 'onoff', idleMs: 0, busyMs: 5, distribution: 'exponential' },
  ];
  for (const p of always) {
    const pn = new PnProcess(p, Rng.fromSeed(1), { startUs: 10 });
    assert.equal(pn.busyTime(0, 100 * S), 100 * S - 10);
    assert.equal(pn.isBusy(5), false);
    assert.equal(pn.isBusy(50 * S), true);
    assert.deepEqual(pn.busyIntervals(60 * S, 70 * S), [[60 * S, 70 * S]]);
  }
});

test('isBusy agrees with busyIntervals; intervals are clipped, ordered and disjoint', () => {
  const pn = new PnProcess({ kind: 'fraction', busy: 0.4, meanBurstMs: 1 }, Rng.fromSeed(5));
  const t0 = 1_234;
  const t1 = 51_234;
  const iv = pn.busyIntervals(t0, t1);
  assert.ok(iv.length > 5, `${iv.length} bursts`);
  assert.ok(iv[0]![0] >= t0 && iv.at(-1)![1] <= t1, 'clipped to the window');
  for (let i = 0; i < iv.length; i++) {
    const [s, e] = iv[i]!;
    assert.ok(Number.isInteger(s) && Number.isInteger(e) && e > s, `[${s}, ${e}) is whole µs and not empty`);
    if (i > 0) assert.ok(s > iv[i - 1]![1], 'a gap between bursts');
  }
  const check = new PnProcess({ kind: 'fraction', busy: 0.4, meanBurstMs: 1 }, Rng.fromSeed(5));
  for (let t = t0; t < t1; t += 37) {
    const inside = iv.some(([s, e]) => s <= t && t < e);
    assert.equal(check.isBusy(t), inside, `t=${t}`);
  }
});

test('same seed, same intervals, however the queries are cut; another seed differs', () => {
  const p: PnPatternConfig = { kind: 'onoff', idleMs: 4, busyMs: 2, distribution: 'exponential' };
  const a = new PnProcess(p, Rng.fromSeed(77).fork('x'));
  const b = new PnProcess(p, Rng.fromSeed(77).fork('x'));
  const whole = a.busyIntervals(0, 2 * S);
  const pieces: Array<readonly [number, number]> = [];
  for (let t = 0; t < 2 * S; t += 333) pieces.push(...b.busyIntervals(t, t + 333));
  // Re-join bursts cut at the query edges.
  const joined: Array<[number, number]> = [];
  for (const [s, e] of pieces) {
    const last = joined.at(-1);
    if (last && last[1] === s) last[1] = e;
    else joined.push([s, e]);
  }
  assert.deepEqual(joined, whole);
  const c = new PnProcess(p, Rng.fromSeed(78).fork('x'));
  assert.notDeepEqual(c.busyIntervals(0, 2 * S), whole);
});

test('memory stays bounded over a long run of queries', () => {
  const pn = new PnProcess({ kind: 'fraction', busy: 0.5, meanBurstMs: 1 }, Rng.fromSeed(3));
  let maxStored = 0;
  // One hour in 10 ms steps: about 1.8 million bursts in all.
  for (let t = 0; t < 3600 * S; t += 10_000) {
    pn.busyTime(t, t + 10_000);
    maxStored = Math.max(maxStored, pn.storedIntervals);
  }
  assert.ok(maxStored < 1000, `at most ${maxStored} intervals held`);
  // Forgotten history is refused, not answered wrongly.
  assert.throws(() => pn.busyTime(0, 10), { code: 'CORE_OUT_OF_RANGE' });
});

test('history keeps a window of the past answerable', () => {
  const pn = new PnProcess({ kind: 'fraction', busy: 0.5, meanBurstMs: 1 }, Rng.fromSeed(3), { historyUs: 100_000 });
  const early = pn.busyTime(950_000, 1_000_000);
  pn.busyTime(1_000_000, 1_050_000);
  assert.equal(pn.busyTime(950_000, 1_000_000), early);
  assert.throws(() => pn.busyTime(800_000, 900_000), { code: 'CORE_OUT_OF_RANGE' });
});

test('bad patterns are refused with the field named', () => {
  assert.throws(() => new PnProcess({ kind: 'fraction', busy: 1.5, meanBurstMs: 5 }, Rng.fromSeed(1)), {
    code: 'CONFIG_INVALID',
    message: /\/busy/,
  });
  assert.throws(() => new PnProcess({ kind: 'onoff', idleMs: -1, busyMs: 5, distribution: 'fixed' }, Rng.fromSeed(1)), {
    code: 'CONFIG_INVALID',
    message: /\/idleMs/,
  });
});
