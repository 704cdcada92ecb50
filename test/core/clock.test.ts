import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClockRegressionError, InvalidTimeError } from '../../src/core/errors.js';
import { RealClock, VirtualClock, ms, seconds } from '../../src/core/time.js';

const regression = (nowUs: number, requestedUs: number) => (e: unknown) => {
  assert.ok(e instanceof ClockRegressionError);
  assert.equal(e.code, 'CORE_CLOCK_REGRESSION');
  assert.equal(e.nowUs, nowUs);
  assert.equal(e.requestedUs, requestedUs);
  return true;
};

const invalidTime = (e: unknown) => {
  assert.ok(e instanceof InvalidTimeError);
  assert.equal(e.code, 'CORE_INVALID_TIME');
  return true;
};

describe('VirtualClock', () => {
  test('starts where told and moves only when told', () => {
    assert.equal(new VirtualClock().now(), 0);
    const c = new VirtualClock(500);
    assert.equal(c.now(), 500);
    assert.equal(c.now(), 500);
    c.advanceTo(800);
    assert.equal(c.now(), 800);
    c.advanceBy(200);
    assert.equal(c.now(), 1000);
    c.advanceTo(1000); // staying put is not going back
    c.advanceBy(0);
    assert.equal(c.now(), 1000);
  });

  test('never goes back: ClockRegressionError, and the time stays', () => {
    const c = new VirtualClock(1000);
    assert.throws(() => c.advanceTo(999), regression(1000, 999));
    assert.throws(() => c.advanceTo(0), regression(1000, 0));
    assert.equal(c.now(), 1000);
  });

  test('a negative step is refused', () => {
    const c = new VirtualClock(1000);
    assert.throws(() => c.advanceBy(-1), invalidTime);
    assert.equal(c.now(), 1000);
  });

  test('rejects times that are not non-negative integers of microseconds', () => {
    for (const bad of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.throws(() => new VirtualClock(bad), invalidTime, `start ${bad}`);
      const c = new VirtualClock(10);
      assert.throws(() => c.advanceTo(bad), invalidTime, `advanceTo ${bad}`);
      assert.throws(() => c.advanceBy(bad), invalidTime, `advanceBy ${bad}`);
      assert.equal(c.now(), 10);
    }
  });
});

describe('RealClock', () => {
  test('is monotonic over many reads, in integer microseconds near the wall clock', () => {
    const c = new RealClock();
    const wallUs = Date.now() * 1000;
    let prev = c.now();
    assert.ok(Math.abs(prev - wallUs) < 1_000_000, `${prev} vs ${wallUs}`);
    for (let i = 0; i < 200_000; i++) {
      const t = c.now();
      assert.ok(Number.isSafeInteger(t));
      if (t < prev) assert.fail(`read ${i} went back from ${prev} to ${t}`);
      prev = t;
    }
  });

  test('advances with real time', async () => {
    const c = new RealClock();
    const t0 = c.now();
    await new Promise((r) => setTimeout(r, 20));
    const dt = c.now() - t0;
    assert.ok(dt >= 15_000 && dt < 5_000_000, `advanced ${dt} us over a 20 ms wait`);
  });
});

describe('time units', () => {
  test('ms and seconds give integer microseconds', () => {
    assert.equal(ms(70), 70_000);
    assert.equal(ms(0.0015), 2);
    assert.equal(seconds(1.5), 1_500_000);
  });
});
