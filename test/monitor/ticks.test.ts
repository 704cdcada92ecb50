import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fmtAgo, niceStep, ticksIn, timeTicks } from '../../src/monitor/ticks.js';

test('niceStep: 1, 2 or 5 times a power of ten, the smallest that keeps ticks minPx apart', () => {
  // The 2.4 GHz band (about 78 MHz) on a wide and a narrow plot, ticks at least 64 px apart.
  assert.equal(niceStep(78, 1300, 64), 5);
  assert.equal(niceStep(78, 700, 64), 10);
  assert.equal(niceStep(78, 300, 64), 20);
  assert.equal(niceStep(60, 200, 26), 10, 'a 60 dB axis 200 px high');
  assert.equal(niceStep(0.3, 500, 50), 0.05);
  assert.equal(niceStep(10, 100, 10), 1, 'exactly minPx apart is enough');
  assert.equal(niceStep(0, 100, 10), 1, 'an empty span');
  assert.equal(niceStep(10, 0, 10), 1, 'no room');
});

test('ticksIn: the multiples of the step within the range, without float noise', () => {
  assert.deepEqual(ticksIn(2402, 2471.9, 5), [2405, 2410, 2415, 2420, 2425, 2430, 2435, 2440, 2445, 2450, 2455, 2460, 2465, 2470]);
  assert.deepEqual(ticksIn(-170, -110, 10), [-170, -160, -150, -140, -130, -120, -110], 'both ends when they are multiples');
  assert.deepEqual(ticksIn(0.1, 0.35, 0.05), [0.1, 0.15, 0.2, 0.25, 0.3, 0.35]);
  assert.deepEqual(ticksIn(3, 4, 5), [], 'none in range');
});

test('fmtAgo: seconds, minutes, minutes and seconds, hours', () => {
  assert.deepEqual([0, 5, 30, 60, 90, 120, 600, 3600, 7200].map(fmtAgo), ['now', '-5 s', '-30 s', '-1 min', '-1:30', '-2 min', '-10 min', '-1 h', '-2 h']);
});

test('timeTicks: a round a second, 2 px a round: every 30 s (60 px), on the rows', () => {
  const ages = Array.from({ length: 124 }, (_, i) => i);
  const t = timeTicks(ages, 2);
  assert.deepEqual(
    t.map((x) => [x.label, x.y]),
    [
      ['now', 0],
      ['-30 s', 60],
      ['-1 min', 120],
      ['-1:30', 180],
      ['-2 min', 240],
    ],
  );
});

test('timeTicks: the step follows the rounds period; labels stay at least minPx apart', () => {
  const every = (periodS: number, n = 300): number[] => Array.from({ length: n }, (_, i) => i * periodS);
  const step = (ages: number[], minPx?: number): number => timeTicks(ages, 2, minPx)[1]!.ageS;
  assert.equal(step(every(0.2)), 5, '5 rounds a second: 10 px a second, every 5 s');
  assert.equal(step(every(1)), 30);
  assert.equal(step(every(5)), 120, 'a round every 5 s: 0.4 px a second, every 2 min');
  assert.equal(step(every(1), 20), 10);
  for (const p of [0.05, 0.2, 1, 2, 5, 30]) {
    const t = timeTicks(every(p), 2);
    for (let i = 1; i < t.length; i++)
      assert.ok(t[i]!.y - t[i - 1]!.y >= 40 - 1e-9, `period ${p} s: ticks ${t[i - 1]!.label} and ${t[i]!.label} are 40 px apart or more`);
  }
});

test('timeTicks: irregular rows place each tick between the two rows its age falls between', () => {
  // Rows at 0, 1, 2, then a pause of 20 s, then every second again.
  const ages = [0, 1, 2, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32];
  const t = timeTicks(ages, 2, 1.5); // every 2 s
  const at = (s: number): number => t.find((x) => x.ageS === s)!.y;
  assert.equal(at(0), 0);
  assert.equal(at(12), 4 + (10 / 20) * 2, 'halfway through the pause: halfway between rows 2 and 3');
  assert.equal(at(30), 22, 'on the row 30 s old');
  assert.deepEqual(timeTicks([], 2), [], 'no rows, no ticks');
  assert.deepEqual(timeTicks([0], 2), [{ ageS: 0, y: 0, label: 'now' }], 'one row: now');
});
