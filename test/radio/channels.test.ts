import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';

const db = (x: number): number => 10 * Math.log10(x);

test('ISM 2.4 GHz plan: channels 1-11 at 2412..2462 MHz, 13 up to 2472 MHz, 22 MHz wide', () => {
  const p11 = ism2g4(11);
  assert.deepEqual(p11.numbers, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  assert.equal(p11.get(1).centerHz, 2412e6);
  assert.equal(p11.get(6).centerHz, 2437e6);
  assert.equal(p11.get(11).centerHz, 2462e6);
  const p13 = ism2g4(13);
  assert.deepEqual(
    p13.channels.map((c) => c.centerHz / 1e6),
    [2412, 2417, 2422, 2427, 2432, 2437, 2442, 2447, 2452, 2457, 2462, 2467, 2472],
  );
  for (const c of p13.channels) assert.equal(c.widthHz, 22e6);
  assert.equal(p11.has(12), false);
  assert.throws(() => p11.get(12), { code: 'CORE_OUT_OF_RANGE' });
});

test('channels overlap exactly when fewer than 5 channels apart', () => {
  const p = ism2g4(13);
  for (const a of p.numbers) {
    for (const b of p.numbers) assert.equal(p.overlaps(a, b), Math.abs(a - b) < 5, `channels ${a} and ${b}`);
  }
  assert.deepEqual(p.overlapping(1), [2, 3, 4, 5]);
  assert.deepEqual(p.overlapping(6), [2, 3, 4, 5, 7, 8, 9, 10]);
});

test('overlapFactor: 1 on the same channel, symmetric, falling with distance', () => {
  const p = ism2g4(13);
  for (const a of p.numbers) {
    assert.equal(p.overlapFactor(a, a), 1);
    for (const b of p.numbers) assert.equal(p.overlapFactor(a, b), p.overlapFactor(b, a), `${a}<->${b}`);
  }
  const byDistance = Array.from({ length: 13 }, (_, d) => p.overlapFactor(1, 1 + d));
  for (let d = 1; d < byDistance.length; d++) {
    const prev = byDistance[d - 1]!;
    const cur = byDistance[d]!;
    // Strictly down while the receiver still sees the mask's steps, never up after.
    if (d <= 7) assert.ok(cur < prev, `distance ${d}: ${cur} < ${prev}`);
    else assert.ok(cur <= prev, `distance ${d}: ${cur} <= ${prev}`);
    assert.ok(cur > 0, `distance ${d}: some leakage`);
  }
  // The same distance gives the same factor anywhere in the band.
  assert.equal(p.overlapFactor(3, 5), p.overlapFactor(9, 11));
});

test('non-overlapping channels leak less than -30 dB, overlapping ones more', () => {
  const p = ism2g4(13);
  for (const a of p.numbers) {
    for (const b of p.numbers) {
      if (a === b) continue;
      const f = db(p.overlapFactor(a, b));
      if (p.overlaps(a, b)) assert.ok(f > -30, `${a}->${b}: ${f.toFixed(1)} dB`);
      else assert.ok(f < -30, `${a}->${b}: ${f.toFixed(1)} dB`);
    }
  }
  // The classic 1/6/11 plan: neighbours in it are more than 30 dB apart.
  assert.ok(db(p.overlapFactor(1, 6)) < -30, '1 -> 6');
  assert.ok(db(p.overlapFactor(6, 11)) < -30, '6 -> 11');
});

test('an orthogonal plan keeps the channels and drops every overlap', () => {
  const full = ism2g4(11);
  const orth = full.asOrthogonal();
  assert.deepEqual(orth.numbers, full.numbers);
  assert.equal(orth.overlapFactor(6, 6), 1);
  assert.equal(orth.overlapFactor(6, 7), 0);
  assert.equal(orth.overlaps(6, 7), false);
  assert.deepEqual(orth.overlapping(6), []);
  assert.ok(full.overlapFactor(6, 7) > 0.5, 'the full plan still overlaps');
  assert.equal(orth.subset([1, 6]).overlapFactor(1, 6), 0);
});
