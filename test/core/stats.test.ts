import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { gammaCdf, kolmogorovQ, ksCriticalValue, ksOneSample, ksPValue, ksTwoSample, lnGamma } from '../support/stats.js';

const near = (actual: number, expected: number, tol: number, what = 'value'): void =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);

describe('stats: the Kolmogorov-Smirnov tests', () => {
  test('the Kolmogorov distribution gives the tabulated critical values 1.224, 1.358 and 1.628', () => {
    near(kolmogorovQ(1.224), 0.1, 1e-3, 'Q(1.224)');
    near(kolmogorovQ(1.358), 0.05, 1e-3, 'Q(1.358)');
    near(kolmogorovQ(1.628), 0.01, 1e-3, 'Q(1.628)');
    near(kolmogorovQ(1), 0.27, 1e-3, 'Q(1)');
    // Both series meet where the function switches from one to the other.
    near(kolmogorovQ(1.18 - 1e-9), kolmogorovQ(1.18), 1e-9, 'Q at the switch');
    assert.equal(kolmogorovQ(0), 1);
    assert.ok(kolmogorovQ(5) < 1e-20);
  });

  test('two-sample D: equal samples 0, disjoint ones 1, ties stepped over together', () => {
    assert.equal(ksTwoSample([1, 2, 3], [3, 2, 1]).statistic, 0);
    assert.equal(ksTwoSample([1, 2, 3], [3, 2, 1]).pValue, 1);
    assert.equal(ksTwoSample([1, 2], [3, 4]).statistic, 1);
    // F_a jumps to 1/2 at 0 and to 1 at 1; F_b to 1/4 at 0, 3/4 at 1 and 1 at 2.
    assert.equal(ksTwoSample([0, 1], [0, 1, 1, 2]).statistic, 0.25);
    assert.equal(ksTwoSample([0, 0, 0, 1], [0, 1, 1, 1]).statistic, 0.5);
    assert.equal(ksTwoSample([5], [5, 5, 5]).statistic, 0);
  });

  test('the effective size and p-value of a two-sample test; the critical value is c(alpha) sqrt((n + m) / nm)', () => {
    const r = ksTwoSample([1, 2, 3, 4], [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5]);
    near(r.effectiveN, 32 / 12, 1e-12);
    near(r.pValue, ksPValue(r.statistic, 32 / 12), 1e-15);
    near(ksCriticalValue(0.05, 100, 100), 1.3581 * Math.sqrt(2 / 100), 1e-4);
    near(ksCriticalValue(0.01, 1000, 4000), 1.6276 * Math.sqrt(5000 / 4e6), 1e-4);
  });

  test('one-sample D against a distribution function, on both sides of each step', () => {
    // Uniform(0, 1): the sample {0.5} has D = 0.5 (F jumps from 0 to 1 where the CDF is 0.5).
    assert.equal(ksOneSample([0.5], (x) => x).statistic, 0.5);
    near(ksOneSample([0.1, 0.2], (x) => x).statistic, 0.8, 1e-15);
  });

  test('empty samples and NaN are refused', () => {
    assert.throws(() => ksTwoSample([], [1]), RangeArgumentError);
    assert.throws(() => ksTwoSample([1, Number.NaN], [1]), RangeArgumentError);
    assert.throws(() => ksPValue(1.5, 10), RangeArgumentError);
  });

  test('the test does not reject samples of one distribution, and does reject a scale 10% off', () => {
    const rng = Rng.fromSeed(11).fork('stats/ks');
    const a = Float64Array.from({ length: 5000 }, () => rng.exponential(1));
    const b = Float64Array.from({ length: 5000 }, () => rng.exponential(1));
    const c = Float64Array.from({ length: 5000 }, () => rng.exponential(1.1));
    assert.ok(ksTwoSample(a, b).pValue > 0.01, `same distribution: p = ${ksTwoSample(a, b).pValue}`);
    assert.ok(ksTwoSample(a, c).pValue < 1e-4, `scale 1.1: p = ${ksTwoSample(a, c).pValue}`);
    assert.ok(ksTwoSample(a, c).statistic > ksCriticalValue(0.01, 5000, 5000));
  });
});

describe('stats: the Gamma distribution', () => {
  test('ln Gamma at known points', () => {
    near(lnGamma(0.5), 0.5 * Math.log(Math.PI), 1e-12);
    near(lnGamma(1), 0, 1e-12);
    near(lnGamma(5), Math.log(24), 1e-12);
    near(lnGamma(20), Math.log(121645100408832000), 1e-12);
  });

  test('the distribution function in closed forms: shape 1 is exponential, shape 2 is 1 - e^-x (1 + x)', () => {
    for (const x of [0.01, 0.5, 1, 3, 10, 40]) {
      near(gammaCdf(x, 1), 1 - Math.exp(-x), 1e-13, `P(1, ${x})`);
      near(gammaCdf(2 * x, 2, 2), 1 - Math.exp(-x) * (1 + x), 1e-13, `P(2, ${x}) at scale 2`);
    }
    assert.equal(gammaCdf(0, 3), 0);
    assert.equal(gammaCdf(-1, 3), 0);
    // Chi-square with 2 degrees of freedom is Gamma(1, 2); with 10, Gamma(5, 2): P(X <= 18.307) = 0.95.
    near(gammaCdf(18.307, 5, 2), 0.95, 1e-4);
    // A large shape: nearly normal, median just under the mean.
    near(gammaCdf(1e5, 1e5), 0.5 + 1 / (3 * Math.sqrt(2 * Math.PI * 1e5)), 1e-6);
  });
});

describe('rng: Gamma deviates', () => {
  // Shapes of a part window (1 sample), of the configs' windows (10 at 1 Msps, 80), of long windows, and below 1.
  const shapes = [0.3, 1, 2.5, 10, 80, 1000, 1e6];

  test('each shape passes a one-sample KS test against the exact distribution (20000 draws, alpha 0.01)', () => {
    for (const shape of shapes) {
      const rng = Rng.fromSeed(5).fork(`gamma/${shape}`);
      const draws = Float64Array.from({ length: 20_000 }, () => rng.gamma(shape, 3e-7));
      const ks = ksOneSample(draws, (x) => gammaCdf(x, shape, 3e-7));
      assert.ok(ks.pValue > 0.01, `shape ${shape}: D = ${ks.statistic}, p = ${ks.pValue}`);
      // The negative control: the same draws against a scale 10% off are rejected.
      const off = ksOneSample(draws, (x) => gammaCdf(x, shape, 3.3e-7));
      if (shape >= 2.5) assert.ok(off.pValue < 1e-6, `shape ${shape}, scale 10% off: p = ${off.pValue}`);
    }
  });

  test('mean shape * scale and variance shape * scale^2', () => {
    const rng = Rng.fromSeed(6).fork('gamma/moments');
    const n = 100_000;
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const x = rng.gamma(10, 2);
      s += x;
      s2 += x * x;
    }
    const mean = s / n;
    near(mean, 20, 0.1, 'mean');
    near(s2 / n - mean * mean, 40, 1, 'variance');
  });

  test('fillGamma gives what as many gamma calls give, and a seed gives the same numbers', () => {
    const a = Rng.fromSeed(9).fork('g');
    const b = Rng.fromSeed(9).fork('g');
    const out = new Float64Array(300);
    a.fillGamma(out, 10, 0.5, 100, 150);
    for (let i = 100; i < 250; i++) assert.equal(out[i], b.gamma(10, 0.5));
    assert.equal(out[99], 0);
    assert.equal(out[250], 0);
    assert.equal(a.nextU32(), b.nextU32());
  });

  test('a shape or scale that is not a finite positive number is refused', () => {
    const rng = Rng.fromSeed(1);
    for (const bad of [0, -1, Number.NaN, Infinity]) {
      assert.throws(() => rng.gamma(bad), RangeArgumentError);
      assert.throws(() => rng.gamma(1, bad), RangeArgumentError);
    }
  });
});
