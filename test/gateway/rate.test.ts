import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClockRegressionError, RangeArgumentError } from '../../src/core/errors.js';
import { seconds } from '../../src/core/time.js';
import { ADWISER_RATE_DEFAULTS, RateAdapter } from '../../src/gateway/rate.js';

const T = seconds(3);
const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

/** One interval: the queue after service observed just before the interval ends, then the run. */
function step(r: RateAdapter, k: number, queueBytes: number) {
  r.observe(k * T - 1, queueBytes);
  const runs = r.advance(k * T);
  assert.equal(runs.length, 1);
  return runs[0]!;
}

describe('RateAdapter (seeds/003 Algorithm 2)', () => {
  test("the paper's values are the defaults", () => {
    const r = new RateAdapter(0);
    assert.equal(r.params.intervalUs, 3_000_000);
    assert.equal(r.params.queueLowBytes, 7_500);
    assert.equal(r.params.epsMbps, 0.05);
    assert.equal(r.params.lambda, 0.9);
    assert.equal(r.params.beta, 0.8);
    assert.equal(r.rateMbps, ADWISER_RATE_DEFAULTS.initialRateMbps);
  });

  test('runs once per t_interval, at start + k·t_interval, and not before', () => {
    const r = new RateAdapter(1_000);
    assert.deepEqual(r.advance(T), []);
    assert.equal(r.advance(T + 1_000).length, 1);
    // Three intervals ended at once: three runs, oldest first, on the same last observation.
    const runs = r.advance(4 * T + 1_000);
    assert.deepEqual(
      runs.map((d) => d.atUs),
      [2 * T + 1_000, 3 * T + 1_000, 4 * T + 1_000],
    );
    assert.equal(r.nextRunAtUs, 5 * T + 1_000);
  });

  test('average below q_lb: the rate is multiplied by λ', () => {
    const r = new RateAdapter(0);
    const d = step(r, 1, 5_000);
    // q̄ = 0.8·5000 + 0.2·0 = 4000 bytes < 7500
    close(d.avgQueueBytes, 4_000, 'q̄');
    assert.equal(d.reason, 'decrease');
    close(d.rateMbps, 22 * 0.9, 'v');
    const d2 = step(r, 2, 5_000);
    close(d2.avgQueueBytes, 4_800, 'q̄');
    assert.equal(d2.reason, 'decrease');
    close(d2.rateMbps, 22 * 0.81, 'v');
  });

  test('a growing average at or above q_lb: the rate grows by ε·q̄ (q̄ in KBytes)', () => {
    const r = new RateAdapter(0);
    const d1 = step(r, 1, 20_000);
    close(d1.avgQueueBytes, 16_000, 'q̄');
    assert.equal(d1.reason, 'increase');
    close(d1.rateMbps, 22 + 0.05 * 16, 'v');
    const d2 = step(r, 2, 20_000);
    close(d2.avgQueueBytes, 19_200, 'q̄');
    assert.equal(d2.reason, 'increase');
    close(d2.rateMbps, 22 + 0.05 * 16 + 0.05 * 19.2, 'v');
  });

  test('an average at or above q_lb that does not grow: the rate holds', () => {
    const r = new RateAdapter(0);
    step(r, 1, 20_000); // q̄ 16000, increase
    const v = r.rateMbps;
    const d = step(r, 2, 10_000); // q̄ = 8000 + 3200 = 11200: above q_lb, lower than before
    close(d.avgQueueBytes, 11_200, 'q̄');
    assert.equal(d.reason, 'hold');
    assert.equal(d.rateMbps, v);
    // Steady: with β = 1 the average is the queue, and the same queue again is no growth.
    const s = new RateAdapter(0, { beta: 1 });
    step(s, 1, 9_000);
    const held = step(s, 2, 9_000);
    assert.equal(held.reason, 'hold');
  });

  test('exactly q_lb is not below it', () => {
    const r = new RateAdapter(0, { beta: 1 });
    assert.equal(step(r, 1, 7_500).reason, 'increase');
    assert.equal(step(r, 2, 7_499).reason, 'decrease');
  });

  test('β weighs the newest queue length: β = 0 keeps the history alone, β = 1 the newest alone', () => {
    const none = new RateAdapter(0, { beta: 0 });
    assert.equal(step(none, 1, 50_000).avgQueueBytes, 0);
    const all = new RateAdapter(0, { beta: 1 });
    step(all, 1, 50_000);
    assert.equal(step(all, 2, 8_000).avgQueueBytes, 8_000);
  });

  test('no observation in an interval: the last one stands (the queue was not served)', () => {
    const r = new RateAdapter(0);
    step(r, 1, 20_000);
    const [d] = r.advance(2 * T);
    assert.equal(d!.queueBytes, 20_000);
    close(d!.avgQueueBytes, 19_200, 'q̄');
    // An observation after an interval's end counts in the next run.
    r.observe(2 * T + 5, 0);
    const [e] = r.advance(3 * T);
    assert.equal(e!.queueBytes, 0);
  });

  test('the rate is kept within [minRateMbps, maxRateMbps], and a clamped run says so', () => {
    const low = new RateAdapter(0, { initialRateMbps: 1, minRateMbps: 0.5 });
    const runs = low.advance(20 * T); // an empty queue: decrease every interval
    assert.ok(runs.every((d) => d.reason === 'decrease'));
    assert.equal(low.rateMbps, 0.5);
    assert.equal(runs.find((d) => d.rateMbps === 0.5)!.clamped, true);
    assert.equal(runs[0]!.clamped, false);
    const high = new RateAdapter(0, { initialRateMbps: 22, maxRateMbps: 23 });
    const d = step(high, 1, 100_000); // +0.05·80 = +4 Mbps, capped
    assert.equal(d.reason, 'increase');
    assert.equal(d.rateMbps, 23);
    assert.equal(d.clamped, true);
  });

  test('in a closed loop, the rate keeps near the capacity the medium offers', () => {
    // A toy loop, not a TCP model: each interval the gateway's queue gains 1/50 of what a 20 Mbps medium
    // would carry beyond v (and loses as much when v exceeds it: the queue shifts to the AP).
    const r = new RateAdapter(0);
    let q = 0;
    const rates: number[] = [];
    for (let k = 1; k <= 200; k++) {
      q = Math.max(0, q + ((20 - r.rateMbps) * 3e6) / 8 / 50);
      rates.push(step(r, k, q).rateMbps);
    }
    const tail = rates.slice(-100);
    const mean = tail.reduce((a, b) => a + b, 0) / tail.length;
    assert.ok(Math.min(...tail) > 16 && Math.max(...tail) < 24, `${Math.min(...tail)}..${Math.max(...tail)}`);
    assert.ok(Math.abs(mean - 20) < 1, `mean ${mean}`);
  });

  test('refuses bad parameters, naming the field', () => {
    const bad: [string, object][] = [
      ['intervalUs', { intervalUs: 0 }],
      ['queueLowBytes', { queueLowBytes: -1 }],
      ['epsMbps', { epsMbps: 0 }],
      ['lambda', { lambda: 1 }],
      ['lambda', { lambda: 0 }],
      ['beta', { beta: 1.5 }],
      ['beta', { beta: Number.NaN }],
      ['minRateMbps', { minRateMbps: 0 }],
      ['maxRateMbps', { minRateMbps: 5, maxRateMbps: 4, initialRateMbps: 4 }],
      ['initialRateMbps', { initialRateMbps: 30, maxRateMbps: 25 }],
    ];
    for (const [field, p] of bad)
      assert.throws(
        () => new RateAdapter(0, p),
        (e: unknown) => e instanceof RangeArgumentError && e.field === field && e.message.startsWith(`${field}:`),
        field,
      );
  });

  test('refuses a negative queue and time going back', () => {
    const r = new RateAdapter(0);
    assert.throws(
      () => r.observe(5, -1),
      (e: unknown) => e instanceof RangeArgumentError && e.field === 'queueBytes',
    );
    r.advance(T);
    assert.throws(() => r.observe(T - 1, 0), ClockRegressionError);
  });
});
