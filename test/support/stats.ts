import { RangeArgumentError } from '../../src/core/errors.js';

/**
 * Small statistics for checking that two ways of drawing a quantity agree:
 * the Kolmogorov-Smirnov tests (two samples, or one sample against a
 * distribution function), the Kolmogorov distribution behind their p-values,
 * and the Gamma distribution function that a window's energy follows.
 */

/** A Kolmogorov-Smirnov test's outcome. */
export interface KsResult {
  /** D: the largest distance between the two distribution functions. */
  statistic: number;
  /** Probability of a D at least this large when both sides follow one distribution (asymptotic, Stephens' small-sample correction). */
  pValue: number;
  /** Effective sample size: n for one sample, n m / (n + m) for two. */
  effectiveN: number;
}

/**
 * Two-sample Kolmogorov-Smirnov test: D = sup |F_a(x) - F_b(x)| over the
 * empirical distribution functions. Tied values are stepped over together,
 * so a value present in both samples moves both functions at once. For
 * discrete data (a workload w is busy / windows) the p-value is
 * conservative: it overstates the probability, so a test that rejects
 * still means what it says.
 */
export function ksTwoSample(a: ArrayLike<number>, b: ArrayLike<number>): KsResult {
  const x = sortedCopy(a, 'a');
  const y = sortedCopy(b, 'b');
  const n = x.length;
  const m = y.length;
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < n && j < m) {
    const v = x[i]! <= y[j]! ? x[i]! : y[j]!;
    while (i < n && x[i] === v) i++;
    while (j < m && y[j] === v) j++;
    const gap = Math.abs(i / n - j / m);
    if (gap > d) d = gap;
  }
  const effectiveN = (n * m) / (n + m);
  return { statistic: d, pValue: ksPValue(d, effectiveN), effectiveN };
}

/**
 * One-sample Kolmogorov-Smirnov test of `sample` against the continuous
 * distribution function `cdf`: D = sup |F_n(x) - F(x)|, taken on both sides
 * of each step of the empirical function.
 */
export function ksOneSample(sample: ArrayLike<number>, cdf: (x: number) => number): KsResult {
  const x = sortedCopy(sample, 'sample');
  const n = x.length;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = cdf(x[i]!);
    d = Math.max(d, (i + 1) / n - f, f - i / n);
  }
  return { statistic: d, pValue: ksPValue(d, n), effectiveN: n };
}

/** P(D >= d) for effective sample size `ne`, from the Kolmogorov distribution with Stephens' correction. */
export function ksPValue(d: number, ne: number): number {
  if (!(d >= 0 && d <= 1)) throw new RangeArgumentError('d', d, 'a distance in [0, 1]');
  if (!(ne > 0)) throw new RangeArgumentError('ne', ne, 'an effective sample size > 0');
  const s = Math.sqrt(ne);
  return kolmogorovQ((s + 0.12 + 0.11 / s) * d);
}

/**
 * The largest D that a two-sample test of sizes n and m passes at
 * significance `alpha`: c(alpha) * sqrt((n + m) / (n m)) with
 * c(alpha) = sqrt(-ln(alpha / 2) / 2), the usual large-sample bound.
 */
export function ksCriticalValue(alpha: number, n: number, m: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeArgumentError('alpha', alpha, 'a significance in (0, 1)');
  return Math.sqrt(-Math.log(alpha / 2) / 2) * Math.sqrt((n + m) / (n * m));
}

/**
 * Q(lambda) = P(K > lambda) for the Kolmogorov distribution K. Two series:
 * 2 sum (-1)^(k-1) exp(-2 k^2 lambda^2) converges fast for large lambda;
 * for small lambda its complement, sqrt(2 pi) / lambda times
 * sum exp(-(2k - 1)^2 pi^2 / (8 lambda^2)), does.
 */
export function kolmogorovQ(lambda: number): number {
  if (Number.isNaN(lambda)) throw new RangeArgumentError('lambda', lambda, 'a number');
  if (lambda <= 0.05) return 1;
  if (lambda < 1.18) {
    const t = (Math.PI * Math.PI) / (8 * lambda * lambda);
    let sum = 0;
    for (let k = 1; k <= 50; k++) {
      const term = Math.exp(-(2 * k - 1) * (2 * k - 1) * t);
      sum += term;
      if (term < 1e-17 * sum) break;
    }
    return clamp01(1 - (Math.sqrt(2 * Math.PI) / lambda) * sum);
  }
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += k % 2 === 1 ? term : -term;
    if (term < 1e-17) break;
  }
  return clamp01(2 * sum);
}

/** P(X <= x) for X ~ Gamma(shape, scale) (mean shape * scale): the regularized lower incomplete gamma function. */
export function gammaCdf(x: number, shape: number, scale = 1): number {
  if (!(shape > 0) || !Number.isFinite(shape)) throw new RangeArgumentError('shape', shape, 'a finite number > 0');
  if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeArgumentError('scale', scale, 'a finite number > 0');
  if (!(x > 0)) return 0;
  if (x === Infinity) return 1;
  return regularizedGammaP(shape, x / scale);
}

/** ln Gamma(x) for x > 0: Stirling's series once x >= 10, with the recurrence Gamma(x + 1) = x Gamma(x) below that. */
export function lnGamma(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeArgumentError('x', x, 'a finite number > 0');
  let shift = 0;
  while (x < 10) {
    shift += Math.log(x);
    x += 1;
  }
  const r = 1 / x;
  const r2 = r * r;
  // Stirling's series to x^-9: the next term, 691 / (360360 x^11), is under 2e-12 at x = 10.
  const series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188))));
  return (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + series - shift;
}

/** P(a, x) = gamma(a, x) / Gamma(a): the power series below x = a + 1, a continued fraction for Q = 1 - P above. */
function regularizedGammaP(a: number, x: number): number {
  const logPrefactor = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    // sum over n of x^n / ((a + 1) ... (a + n)), times x^a e^-x / Gamma(a + 1).
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 1_000_000; n++) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return clamp01(sum * Math.exp(logPrefactor));
  }
  // Q(a, x) = e^-x x^a / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), by the modified Lentz method.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1_000_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return clamp01(1 - Math.exp(logPrefactor) * h);
}

function sortedCopy(v: ArrayLike<number>, name: string): Float64Array {
  if (v.length === 0) throw new RangeArgumentError(name, v.length, 'a sample of at least one value');
  const out = Float64Array.from(v);
  for (const x of out) if (Number.isNaN(x)) throw new RangeArgumentError(name, x, 'values that are numbers');
  return out.sort();
}

function clamp01(p: number): number {
  return p < 0 ? 0 : p > 1 ? 1 : p;
}
