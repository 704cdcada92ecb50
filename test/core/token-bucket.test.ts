import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidTimeError, RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { TokenBucket } from '../../src/core/token-bucket.js';

const T0 = 5_000_000;

describe('TokenBucket', () => {
  test('starts full: burst tokens at once, then none', () => {
    const b = new TokenBucket(10, 5, T0);
    for (let i = 0; i < 5; i++) assert.equal(b.take(T0), true, `token ${i + 1}`);
    assert.equal(b.take(T0), false);
    assert.equal(b.available(T0), 0);
  });

  test('refills at the rate, to the microsecond', () => {
    const b = new TokenBucket(1000, 1, T0); // one token per 1000 us
    assert.equal(b.take(T0), true);
    assert.equal(b.take(T0 + 999), false);
    assert.equal(b.take(T0 + 1000), true);
    assert.equal(b.take(T0 + 1500), false);
    assert.equal(b.take(T0 + 2000), true);
  });

  test('never holds more than burst, however long it idles', () => {
    const b = new TokenBucket(1000, 3, T0);
    for (let i = 0; i < 3; i++) b.take(T0);
    const later = T0 + 3_600_000_000;
    assert.equal(b.available(later), 3);
    assert.equal(b.take(later, 3), true);
    assert.equal(b.take(later), false);
  });

  test('take(n): several at once, a refusal takes nothing, 0 always succeeds, more than burst never', () => {
    const b = new TokenBucket(100, 10, T0);
    assert.equal(b.take(T0, 7), true);
    assert.equal(b.take(T0, 4), false);
    assert.equal(b.available(T0), 3, 'the refusal took nothing');
    assert.equal(b.take(T0, 3), true);
    assert.equal(b.take(T0, 0), true);
    assert.equal(b.take(T0 + 3_600_000_000, 11), false);
    assert.equal(b.take(T0 + 3_600_000_000, 10), true);
    assert.equal(b.take(T0 + 3_600_000_000, 2.5), false);
  });

  test('fractional tokens (a byte-rate bucket)', () => {
    const b = new TokenBucket(1_000_000, 1500, T0); // 1 MB/s, 1500-byte burst: 1 byte a microsecond
    assert.equal(b.take(T0, 1500), true);
    assert.equal(b.take(T0 + 499, 500), false);
    assert.equal(b.take(T0 + 500, 500), true);
    assert.equal(b.available(T0 + 500), 0);
    assert.equal(b.take(T0 + 500, 0.5), false);
    assert.equal(b.take(T0 + 501, 0.5), true);
    assert.equal(b.available(T0 + 501), 0.5);
  });

  test('time that goes back adds nothing and is not remembered', () => {
    const b = new TokenBucket(1000, 1, T0);
    assert.equal(b.take(T0 + 10_000), true);
    assert.equal(b.take(T0), false, 'earlier: no refill');
    assert.equal(b.take(T0 + 10_999), false, 'measured from the latest time seen, not the earlier one');
    assert.equal(b.take(T0 + 11_000), true);
    assert.equal(b.take(Number.NaN), false);
    assert.equal(b.take(Infinity), false);
    assert.equal(b.take(T0 + 12_000), true, 'NaN and Infinity did not break it');
  });

  test('the long-run rate is exact with integer inputs', () => {
    const b = new TokenBucket(100, 1, 0);
    let passed = 0;
    for (let t = 0; t <= 10_000_000; t += 1000) if (b.take(t)) passed++;
    assert.equal(passed, 1 + 1000, 'the initial token, then one per 10 ms for 10 s');
  });

  test('readyAt: the exact next time a take succeeds, undefined past the burst', () => {
    const b = new TokenBucket(3, 2, T0); // a token every 333333.3 us
    assert.equal(b.readyAt(2), T0);
    b.take(T0, 2);
    const at = b.readyAt(1)!;
    assert.equal(at, T0 + 333_334);
    assert.equal(b.take(at - 1), false);
    assert.equal(b.take(at), true);
    assert.equal(b.readyAt(3), undefined);
    const two = b.readyAt(2)!;
    assert.equal(b.take(two - 1, 2), false);
    assert.equal(b.take(two, 2), true);
  });

  test('readyAt never answers early, for random rates and takes (seeded)', () => {
    const rng = Rng.fromSeed(2697);
    for (let k = 0; k < 500; k++) {
      const rate = rng.next() < 0.5 ? rng.int(1, 100_000) : 0.01 + rng.next() * 1000;
      const burst = rng.int(1, 50);
      const b = new TokenBucket(rate, burst, 0);
      let now = 0;
      for (let j = 0; j < 20; j++) {
        const n = rng.int(1, burst);
        const at = b.readyAt(n)!;
        const where = `rate ${rate} burst ${burst} n ${n}`;
        // An integer rate is exact arithmetic, so a refused probe a microsecond early does not disturb the answer.
        if (at > now && Number.isInteger(rate)) assert.equal(b.take(at - 1, n), false, where);
        assert.equal(b.take(Math.max(at, now), n), true, where);
        now = Math.max(at, now) + rng.int(0, 1000);
      }
    }
  });

  test('deterministic: the same inputs give the same answers', () => {
    const run = () => {
      const rng = Rng.fromSeed(4115);
      const b = new TokenBucket(333.3, 7, 0);
      const out: boolean[] = [];
      let t = 0;
      for (let i = 0; i < 2000; i++) out.push(b.take((t += rng.int(0, 5000)), rng.int(0, 3)));
      return out;
    };
    assert.deepEqual(run(), run());
  });

  test('refuses bad rates, bursts, times and counts', () => {
    for (const rate of [0, -1, Number.NaN, Infinity]) assert.throws(() => new TokenBucket(rate, 1, 0), RangeArgumentError, `rate ${rate}`);
    for (const burst of [0, 0.5, -1, Number.NaN, Infinity]) assert.throws(() => new TokenBucket(1, burst, 0), RangeArgumentError, `burst ${burst}`);
    for (const now of [-1, 1.5, Number.NaN]) assert.throws(() => new TokenBucket(1, 1, now), InvalidTimeError, `now ${now}`);
    const b = new TokenBucket(1, 1, 0);
    for (const n of [-1, Number.NaN, Infinity]) {
      assert.throws(() => b.take(1, n), RangeArgumentError, `n ${n}`);
      assert.throws(() => b.readyAt(n), RangeArgumentError, `n ${n}`);
    }
    const e = (() => {
      try {
        new TokenBucket(0, 1, 0);
      } catch (x) {
        return x as RangeArgumentError;
      }
      assert.fail('no throw');
    })();
    assert.equal(e.code, 'CORE_OUT_OF_RANGE');
    assert.equal(e.field, 'ratePerS');
  });
});
