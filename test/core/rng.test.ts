import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';

const draws = (r: Rng, n: number): number[] => Array.from({ length: n }, () => r.nextU32());

function stats(xs: readonly number[]): { mean: number; variance: number } {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, variance };
}

const N = 200_000;

describe('Rng: reproducibility', () => {
  test('the same seed gives the same sequence', () => {
    assert.deepEqual(draws(Rng.fromSeed(42), 1000), draws(Rng.fromSeed(42), 1000));
    const a = Rng.fromSeed(7);
    const b = Rng.fromSeed(7);
    for (let i = 0; i < 100; i++) {
      assert.equal(a.next(), b.next());
      assert.equal(a.normal(), b.normal());
      assert.equal(a.exponential(2), b.exponential(2));
      assert.equal(a.int(1, 6), b.int(1, 6));
    }
  });

  test('different seeds give different sequences', () => {
    const seqs = [0, 1, 2, 3, 1000, 0xffff_ffff].map((s) => draws(Rng.fromSeed(s), 16).join(','));
    assert.equal(new Set(seqs).size, seqs.length);
  });

  test('outputs are 32-bit unsigned integers', () => {
    const r = Rng.fromSeed(3);
    for (const x of draws(r, 10_000)) assert.ok(Number.isInteger(x) && x >= 0 && x <= 0xffff_ffff);
  });

  test('refuses seeds outside [0, 2^32 - 1]', () => {
    for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) {
      assert.throws(
        () => Rng.fromSeed(bad),
        (e: unknown) => e instanceof RangeArgumentError && e.code === 'CORE_OUT_OF_RANGE',
        `seed ${bad}`,
      );
    }
  });
});

describe('Rng: fork', () => {
  test('a fork does not depend on what the parent has drawn so far', () => {
    const fresh = Rng.fromSeed(5);
    const used = Rng.fromSeed(5);
    draws(used, 1234);
    used.normal(); // leaves a spare deviate in the parent
    assert.deepEqual(draws(used.fork('sensing'), 100), draws(fresh.fork('sensing'), 100));
  });

  test('forking is stable and does not disturb the parent', () => {
    const r = Rng.fromSeed(5);
    const ref = Rng.fromSeed(5);
    assert.deepEqual(draws(r.fork('pn'), 50), draws(r.fork('pn'), 50));
    assert.deepEqual(draws(r, 50), draws(ref, 50));
  });

  test('forks with different labels, the parent and other seeds all differ', () => {
    const r = Rng.fromSeed(5);
    const seqs = [
      draws(Rng.fromSeed(5), 16),
      draws(r.fork('a'), 16),
      draws(r.fork('b'), 16),
      draws(r.fork('a').fork('b'), 16),
      draws(Rng.fromSeed(6).fork('a'), 16),
    ].map((s) => s.join(','));
    assert.equal(new Set(seqs).size, seqs.length);
    assert.equal(r.fork('a').fork('b').label, 'a/b');
    assert.equal(r.fork('a').seed, 5);
  });
});

describe('Rng: distributions', () => {
  test('uniform in [0, 1) with mean 1/2 and variance 1/12', () => {
    const r = Rng.fromSeed(101);
    const xs = Array.from({ length: N }, () => r.next());
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    const { mean, variance } = stats(xs);
    assert.ok(Math.abs(mean - 0.5) < 0.005, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1 / 12) < 0.002, `variance ${variance}`);
    const o = Rng.fromSeed(101);
    for (let i = 0; i < 1000; i++) {
      const x = o.nextOpen();
      assert.ok(x > 0 && x <= 1);
    }
  });

  test('int(lo, hi) covers [lo, hi] evenly and nothing else', () => {
    const r = Rng.fromSeed(102);
    const counts = new Map<number, number>();
    for (let i = 0; i < 60_000; i++) {
      const k = r.int(-2, 3);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    assert.deepEqual(
      [...counts.keys()].sort((a, b) => a - b),
      [-2, -1, 0, 1, 2, 3],
    );
    for (const c of counts.values()) assert.ok(Math.abs(c - 10_000) < 500, `count ${c}`);
  });

  test('normal has mean 0 and variance 1', () => {
    const r = Rng.fromSeed(103);
    const { mean, variance } = stats(Array.from({ length: N }, () => r.normal()));
    assert.ok(Math.abs(mean) < 0.015, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1) < 0.02, `variance ${variance}`);
  });

  test('exponential has the mean asked for', () => {
    for (const m of [0.5, 3, 2000]) {
      const r = Rng.fromSeed(104);
      const xs = Array.from({ length: N }, () => r.exponential(m));
      assert.ok(xs.every((x) => x >= 0 && Number.isFinite(x)));
      const { mean, variance } = stats(xs);
      assert.ok(Math.abs(mean / m - 1) < 0.015, `mean ${mean} for ${m}`);
      assert.ok(Math.abs(variance / (m * m) - 1) < 0.05, `variance ${variance} for ${m}`);
    }
  });

  test('fillNormal uses a spare deviate first, fills only its range, and repeats for a seed', () => {
    const a = Rng.fromSeed(105);
    const b = Rng.fromSeed(105);
    a.normal(); // leaves a spare
    b.normal();
    const spare = b.normal();
    const out = new Float32Array(8);
    a.fillNormal(out, 2, 1, 5);
    assert.equal(out[0], 0);
    assert.equal(out[1], Math.fround(2 * spare));
    assert.ok(out.slice(2, 6).every((x) => x !== 0));
    assert.equal(out[6], 0);
    const again = new Float32Array(8);
    const c = Rng.fromSeed(105);
    c.normal();
    c.fillNormal(again, 2, 1, 5);
    assert.deepEqual(again, out);
  });

  test('fillNormal has the normal tails (the ziggurat wedges and tail are exercised)', () => {
    const n = 1 << 21;
    const out = new Float32Array(n);
    Rng.fromSeed(9).fillNormal(out, 1);
    let over2 = 0;
    let over3 = 0;
    let over4 = 0;
    for (const x of out) {
      const a = Math.abs(x);
      if (a > 2) over2++;
      if (a > 3) over3++;
      if (a > 4) over4++;
    }
    // P(|x| > k) for k = 2, 3, 4, within five standard errors of a binomial count.
    for (const [count, p] of [
      [over2, 0.0455003],
      [over3, 0.0026998],
      [over4, 6.334e-5],
    ] as const) {
      const se = Math.sqrt(n * p * (1 - p));
      assert.ok(Math.abs(count - n * p) < 5 * se, `${count} deviates beyond, expected ${(n * p).toFixed(0)} ± ${se.toFixed(0)}`);
    }
  });

  test('fillNormal has standard deviation sigma', () => {
    const out = new Float32Array(N);
    Rng.fromSeed(106).fillNormal(out, 0.25);
    const { mean, variance } = stats(Array.from(out));
    assert.ok(Math.abs(mean) < 0.004, `mean ${mean}`);
    assert.ok(Math.abs(Math.sqrt(variance) - 0.25) < 0.005, `sd ${Math.sqrt(variance)}`);
  });
});
