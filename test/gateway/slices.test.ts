import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { computeSlices, maximalIndependentSets } from '../../src/gateway/slices.js';

type Edges = [number, number][];
const path = (n: number): Edges => Array.from({ length: n - 1 }, (_, i) => [i, i + 1]);
const cycle = (n: number): Edges => [...path(n), [0, n - 1]];
const complete = (n: number): Edges => {
  const e: Edges = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) e.push([i, j]);
  return e;
};
/** A fixed irregular graph (no RNG state: the same edges every run); k of 7 pairs dependent. */
const scattered = (n: number, k: number): Edges => complete(n).filter(([i, j]) => (i * 31 + j * 17 + i * j) % 7 < k);

const TOL = 1e-6;
function near(got: readonly number[], want: readonly number[], eps: number): void {
  assert.equal(got.length, want.length);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= eps, `share ${i}: ${g} vs ${want[i]}`));
}

describe('maximal independent sets (Bron–Kerbosch on the complement)', () => {
  test('known graphs', () => {
    assert.deepEqual(maximalIndependentSets(3, []), [[0, 1, 2]]);
    assert.deepEqual(maximalIndependentSets(3, complete(3)), [[0], [1], [2]]);
    assert.deepEqual(maximalIndependentSets(4, path(4)), [
      [0, 2],
      [0, 3],
      [1, 3],
    ]);
    assert.deepEqual(maximalIndependentSets(5, cycle(5)), [
      [0, 2],
      [0, 3],
      [1, 3],
      [1, 4],
      [2, 4],
    ]);
  });

  test('a graph past the cap is refused, naming the cap', () => {
    // 12 vertices in 6 disjoint edges: 2^6 = 64 maximal independent sets.
    const e: Edges = Array.from({ length: 6 }, (_, i) => [2 * i, 2 * i + 1]);
    assert.equal(maximalIndependentSets(12, e).length, 64);
    assert.throws(
      () => maximalIndependentSets(12, e, 63),
      (x: unknown) => x instanceof RangeArgumentError && x.field === 'maxSets',
    );
  });

  test('bad edges are refused', () => {
    assert.throws(
      () => maximalIndependentSets(3, [[0, 3]]),
      (x: unknown) => x instanceof RangeArgumentError && x.field === 'edges[0]',
    );
    assert.throws(() => maximalIndependentSets(3, [[1, 1]]), RangeArgumentError);
  });
});

describe('time slices: max Σ log x_j over the independent sets', () => {
  test('independent clients: each gets all the time', () => {
    const s = computeSlices(4, []);
    near(s.clientShares, [1, 1, 1, 1], 1e-12);
    assert.equal(s.utility, 0);
  });

  test('a complete graph of n: 1/n each', () => {
    for (const n of [2, 3, 6]) {
      const s = computeSlices(n, complete(n));
      near(s.clientShares, new Array<number>(n).fill(1 / n), 1e-9);
      assert.ok(Math.abs(s.utility - n * Math.log(1 / n)) < 1e-9);
    }
  });

  test('a path of 3: the ends together 2/3, the middle 1/3', () => {
    // max 2·log α + log(1 − α): α = 2/3.
    const s = computeSlices(3, path(3));
    near(s.clientShares, [2 / 3, 1 / 3, 2 / 3], 1e-6);
  });

  test('a star of k leaves: the leaves k/(k+1), the centre 1/(k+1)', () => {
    for (const k of [2, 4, 7]) {
      const e: Edges = Array.from({ length: k }, (_, i) => [0, i + 1]);
      const s = computeSlices(k + 1, e);
      near(s.clientShares, [1 / (k + 1), ...new Array<number>(k).fill(k / (k + 1))], 1e-6);
    }
  });

  test('cycles: C4 1/2 each, C5 2/5 each', () => {
    near(computeSlices(4, cycle(4)).clientShares, [0.5, 0.5, 0.5, 0.5], 1e-9);
    near(computeSlices(5, cycle(5)).clientShares, [0.4, 0.4, 0.4, 0.4, 0.4], 1e-9);
  });

  test('a path of 4: 1/2 each, the set of the two ends unused', () => {
    // Sets {0,2}, {0,3}, {1,3} with shares p, q, r: symmetric optimum p = r = 1/2, q = 0.
    // The optimum is on the simplex's boundary, where the update converges sublinearly: shares to ~sqrt(gap).
    const s = computeSlices(4, path(4), { tolerance: 1e-8 });
    assert.ok(s.converged && s.gap <= 1e-8);
    near(s.clientShares, [0.5, 0.5, 0.5, 0.5], 1e-4);
    assert.ok(s.setShares[1]! < 1e-4, `{0,3}: ${s.setShares[1]}`);
    assert.ok(Math.abs(s.utility - 4 * Math.log(0.5)) < 1e-8);
  });

  test('two APs, one client of each dependent across: 3/4, 1/4, 3/8, 3/8', () => {
    // s1-s2 (same AP), s3-s4 (same AP), s2-s3 and s2-s4 (Type III): sets {1,3}, {1,4}, {2}.
    // max log(2a) + log(1 − 2a) + 2·log a: a = 3/8.
    const s = computeSlices(4, [
      [0, 1],
      [2, 3],
      [1, 2],
      [1, 3],
    ]);
    near(s.clientShares, [0.75, 0.25, 0.375, 0.375], 1e-6);
  });

  test('weights: a pair of dependent clients shares time in proportion to them', () => {
    near(computeSlices(2, [[0, 1]], { weights: [2, 1] }).clientShares, [2 / 3, 1 / 3], 1e-6);
  });

  test('the certified gap is below the tolerance and bounds the distance to the optimum', () => {
    for (const [n, e] of [
      [10, scattered(10, 2)], // 13 maximal sets
      [12, scattered(12, 3)], // 16
      [20, scattered(20, 3)], // 51
      [24, scattered(24, 2)], // 41
    ] as [number, Edges][]) {
      const s = computeSlices(n, e, { tolerance: TOL });
      assert.ok(s.converged && s.gap <= TOL, `n ${n}: gap ${s.gap}`);
      // A tighter solve is no better than the first one plus its gap.
      const tight = computeSlices(n, e, { tolerance: 1e-8 });
      assert.ok(tight.utility <= s.utility + s.gap + 1e-12, `n ${n}`);
      assert.ok(tight.utility >= s.utility - 1e-12);
      const sum = s.setShares.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-12);
    }
  });

  test('an iteration cap leaves the gap reported and converged false', () => {
    const s = computeSlices(4, path(4), { tolerance: 1e-12, maxIterations: 10 });
    assert.equal(s.iterations, 10);
    assert.equal(s.converged, false);
    assert.ok(s.gap > 1e-12);
  });

  test('deterministic, whatever the order of the edges', () => {
    const e = scattered(14, 2);
    const a = computeSlices(14, e);
    const b = computeSlices(
      14,
      [...e].reverse().map(([i, j]) => [j, i] as [number, number]),
    );
    assert.deepEqual(a, b);
  });

  test('bad options are refused, naming them', () => {
    const refused = (f: () => unknown, field: string): void => assert.throws(f, (x: unknown) => x instanceof RangeArgumentError && x.field === field, field);
    refused(() => computeSlices(2, [], { weights: [1] }), 'weights');
    refused(() => computeSlices(2, [], { weights: [1, 0] }), 'weights[1]');
    refused(() => computeSlices(2, [], { tolerance: 0 }), 'tolerance');
    refused(() => computeSlices(0, []), 'n');
  });
});
