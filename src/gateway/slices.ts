import { RangeArgumentError } from '../core/errors.js';

/**
 * ADWISER v2's time slices (seeds/003, Section 5): the share of time α_S
 * given to each independent set S of the dependence graph (clients that may
 * be served together), chosen to maximise the aggregate utility
 *
 *   Σ_j w_j · log(x_j),   x_j = Σ_{S ∋ j} α_S,   Σ_S α_S = 1,   α ≥ 0,
 *
 * x_j being client j's share of time. With U = log, weighting x_j by the
 * client's rate r_j adds the constant Σ_j w_j·log(r_j) and moves no optimum,
 * so the shares do not depend on the rates (the utility reported with rates
 * includes that constant). The paper set every weight w_j to 1.
 *
 * The method, exact for the graphs a gateway has (a few tens of clients):
 * 1. Every maximal independent set, by Bron–Kerbosch with pivoting on the
 *    complement graph (maximal cliques there), up to `maxSets`; a graph with
 *    more is refused. Only maximal sets are needed: a set inside another gives
 *    no client more time.
 * 2. The concave program over the simplex of their weights, by the
 *    multiplicative (EM) update α_S ← α_S · g_S / W, with g_S = Σ_{j∈S} w_j/x_j
 *    and W = Σ_j w_j, which keeps α on the simplex and never lowers the utility
 *    (the update of the log-optimal portfolio).
 * 3. A certified optimality gap: by Jensen's inequality, for any feasible x*,
 *    Σ w_j log(x*_j/x_j) ≤ W·log(Σ_j (w_j/W)·x*_j/x_j) ≤ W·log(max_S g_S / W),
 *    so the optimum exceeds the reported utility by at most that; the
 *    iteration stops when it is at most `tolerance` (nats).
 *
 * Deterministic: the sets are in lexicographic order of their clients'
 * indices and the iteration has no randomness.
 */

export interface SliceOptions {
  /** Weight w_j of each client's utility, > 0; default 1 each (the paper's). */
  weights?: readonly number[];
  /** Stop when the certified gap is at most this (nats of aggregate utility), > 0. Default 1e-6. */
  tolerance?: number;
  /** Stop after this many iterations even if the gap is larger (it is reported). Default 200000. */
  maxIterations?: number;
  /** Refuse a graph with more maximal independent sets than this. Default 4096. */
  maxSets?: number;
}

export interface SliceSchedule {
  /** Maximal independent sets, each as client indices (ascending), in lexicographic order. */
  sets: readonly (readonly number[])[];
  /** α_S: each set's share of time, summing to 1. */
  setShares: readonly number[];
  /** x_j: each client's share of time. */
  clientShares: readonly number[];
  /** Σ_j w_j·log(x_j). */
  utility: number;
  /** Upper bound of (optimum − utility), nats. */
  gap: number;
  iterations: number;
  /** The gap reached `tolerance`. */
  converged: boolean;
}

export const SLICE_DEFAULTS = { tolerance: 1e-6, maxIterations: 200_000, maxSets: 4096 } as const;

/**
 * The maximal independent sets of a graph of `n` vertices (edges as index
 * pairs), each ascending, in lexicographic order; refused past `maxSets`.
 */
export function maximalIndependentSets(n: number, edges: readonly (readonly [number, number])[], maxSets: number = SLICE_DEFAULTS.maxSets): number[][] {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeArgumentError('n', n, 'an integer number of clients >= 1');
  const adj: boolean[][] = Array.from({ length: n }, () => new Array<boolean>(n).fill(false));
  edges.forEach(([a, b], i) => {
    if (!(Number.isSafeInteger(a) && Number.isSafeInteger(b) && a >= 0 && b >= 0 && a < n && b < n && a !== b))
      throw new RangeArgumentError(`edges[${i}]`, [a, b], `two different client indices in [0, ${n - 1}]`);
    adj[a]![b] = true;
    adj[b]![a] = true;
  });
  // Neighbours in the complement: the clients a client may be served with.
  const compatible = (v: number, of: readonly number[]): number[] => of.filter((u) => u !== v && !adj[v]![u]);
  const out: number[][] = [];
  const expand = (r: number[], p: number[], x: number[]): void => {
    if (p.length === 0 && x.length === 0) {
      if (out.length >= maxSets)
        throw new RangeArgumentError('maxSets', maxSets, `at least the number of maximal independent sets of this dependence graph (more than ${maxSets})`);
      out.push([...r].sort((a, b) => a - b));
      return;
    }
    // Pivot: the vertex of P ∪ X with the most compatible vertices in P (first such, for determinism).
    let pivot = -1;
    let best = -1;
    for (const u of [...p, ...x]) {
      const c = compatible(u, p).length;
      if (c > best) {
        best = c;
        pivot = u;
      }
    }
    const skip = new Set(compatible(pivot, p));
    for (const v of [...p]) {
      if (skip.has(v)) continue;
      expand([...r, v], compatible(v, p), compatible(v, x));
      p = p.filter((u) => u !== v);
      x = [...x, v];
    }
  };
  expand(
    [],
    Array.from({ length: n }, (_, i) => i),
    [],
  );
  return out.sort(lexicographic);
}

function lexicographic(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The time slices that maximise Σ w_j·log(x_j) over the independent sets of the graph. */
export function computeSlices(n: number, edges: readonly (readonly [number, number])[], options: SliceOptions = {}): SliceSchedule {
  const tolerance = options.tolerance ?? SLICE_DEFAULTS.tolerance;
  const maxIterations = options.maxIterations ?? SLICE_DEFAULTS.maxIterations;
  const maxSets = options.maxSets ?? SLICE_DEFAULTS.maxSets;
  if (!(Number.isFinite(tolerance) && tolerance > 0)) throw new RangeArgumentError('tolerance', tolerance, 'a finite number > 0 (nats)');
  if (!Number.isSafeInteger(maxIterations) || maxIterations < 1) throw new RangeArgumentError('maxIterations', maxIterations, 'an integer >= 1');
  if (!Number.isSafeInteger(maxSets) || maxSets < 1) throw new RangeArgumentError('maxSets', maxSets, 'an integer >= 1');
  const w = options.weights ?? new Array<number>(n).fill(1);
  if (w.length !== n) throw new RangeArgumentError('weights', w.length, `one weight per client (${n})`);
  w.forEach((v, i) => {
    if (!(Number.isFinite(v) && v > 0)) throw new RangeArgumentError(`weights[${i}]`, v, 'a finite number > 0');
  });
  const total = w.reduce((s, v) => s + v, 0);
  const sets = maximalIndependentSets(n, edges, maxSets);
  const m = sets.length;
  const alpha = new Float64Array(m).fill(1 / m);
  const x = new Float64Array(n);
  const g = new Float64Array(m);
  // x from α; every client is in some maximal set, so x > 0 from the uniform start on.
  const shares = (): void => {
    x.fill(0);
    for (let s = 0; s < m; s++) for (const j of sets[s]!) x[j]! += alpha[s]!;
  };
  // g_S = Σ_{j∈S} w_j/x_j and the certified gap W·log(max g / W).
  const gradient = (): number => {
    let max = 0;
    for (let s = 0; s < m; s++) {
      let v = 0;
      for (const j of sets[s]!) v += w[j]! / x[j]!;
      g[s] = v;
      if (v > max) max = v;
    }
    return Math.max(0, total * Math.log(max / total));
  };
  shares();
  let gap = gradient();
  let iterations = 0;
  while (gap > tolerance && iterations < maxIterations) {
    let sum = 0;
    for (let s = 0; s < m; s++) {
      alpha[s] = (alpha[s]! * g[s]!) / total;
      sum += alpha[s]!;
    }
    // Exactly 1 in exact arithmetic; renormalised against rounding drift.
    for (let s = 0; s < m; s++) alpha[s] = alpha[s]! / sum;
    shares();
    gap = gradient();
    iterations++;
  }
  let utility = 0;
  for (let j = 0; j < n; j++) utility += w[j]! * Math.log(x[j]!);
  return { sets, setShares: [...alpha], clientShares: [...x], utility, gap, iterations, converged: gap <= tolerance };
}
