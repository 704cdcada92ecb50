import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meanWithCi, median, shortFigure, textReport, type RunResult, type SimResult, type Spread } from '../../src/sim/report.js';

const spread = (mean: number, ci95: number): Spread => ({ mean, std: 0, min: mean, max: mean, ci95 });

/** A UDP flow's summary over `seeds` runs with no routers (only the summary is printed from). */
function result(seeds: number[], ci: (x: number) => number): SimResult {
  const runs = seeds.map((seed) => ({ seed, durationS: 10, events: 0, flows: [], nodes: [] }) as unknown as RunResult);
  return {
    scenario: 's',
    durationS: 10,
    seeds,
    runs,
    summary: [
      {
        flow: 0,
        src: 0,
        dst: 4,
        kind: 'udp-cbr',
        throughputMbps: spread(0.784123, ci(0.036123)),
        deliveryRatio: spread(0.392456, ci(0.018)),
        delayMeanMs: spread(888.123, ci(31.9876)),
        jitterMs: spread(58.6886, ci(0.8)),
      },
    ],
  } as unknown as SimResult;
}

test('several seeds: the text says once what ± is, and prints the CI to 2 significant digits, the mean to match', () => {
  const lines = textReport(result([1, 2, 3, 4, 5], (x) => x)).split('\n');
  assert.equal(lines.filter((l) => l.includes('95% confidence interval')).length, 1);
  assert.match(lines[1]!, /over the 5 seeds/);
  assert.equal(lines[2], 'flow 0 (0 -> 4): throughput 0.784 ± 0.036 Mbps, delivery 39.2 ± 1.8%, delay 888 ± 32 ms, jitter 58.69 ± 0.80 ms');
});

test('one seed: 3 significant digits and no ±, nor the note about it', () => {
  const text = textReport(result([1], () => 0));
  assert.ok(!text.includes('±'), text);
  assert.match(text, /throughput 0\.784 Mbps, delivery 39\.2%, delay 888 ms, jitter 58\.7 ms/);
});

test('figures for people: 3 significant digits; a zero interval is ± 0', () => {
  assert.equal(shortFigure(569.141), '569');
  assert.equal(shortFigure(0.0012345), '0.00123');
  assert.equal(shortFigure(0), '0');
  assert.equal(meanWithCi(1.23456, 0), '1.23 ± 0');
  assert.equal(meanWithCi(1234.5, 150), '1235 ± 150');
});

test('median: the middle value, the mean of the two middle ones for an even count, NaN for none', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7]), 7);
  assert.ok(Number.isNaN(median([])));
});
