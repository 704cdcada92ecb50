import type { NodeAddr } from '../wire/mesh.js';

/**
 * The path decision: which of a destination's multipath entries carries the
 * next packet. A path's cost is the sum of its link costs (1 on a link free of
 * PN traffic, more on a link whose receiver's R1 channel is busy), so the
 * metric is path length weighted by PN-interference reliability. Pure
 * functions: the routing core asks them with the candidates it holds and the
 * first link's cost as it is now.
 */

/** One valid path as the decision sees it. */
export interface PathCandidate {
  nextHop: NodeAddr;
  hopCount: number;
  /** Whole-path cost: what the rest of the path advertised plus the first link's cost now. */
  cost: number;
}

/**
 * Cost of a link to a receiver whose R1 channel has a fraction `w` of its air
 * taken by PNs: the expected number of attempts, 1 / (1 - w), when each is lost
 * with probability w; `w` is clamped to [0, wMax] so the cost stays finite.
 */
export function linkCostFromBusy(w: number, wMax = 0.95): number {
  const b = Number.isFinite(w) ? Math.min(wMax, Math.max(0, w)) : wMax;
  return 1 / (1 - b);
}

/** The cost via a neighbour: the cost it advertised for the rest of the path plus the link to it. */
export function costVia(advertisedRest: number, firstLinkCost: number): number {
  return advertisedRest + firstLinkCost;
}

/** Costs this close (relative) are equal, so that sums taken in different orders tie. */
const COST_EPSILON = 1e-9;

function sameCost(a: number, b: number): boolean {
  return Math.abs(a - b) <= COST_EPSILON * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Order of preference: lower cost, then fewer hops, then the lower next-hop address. */
export function comparePaths(a: PathCandidate, b: PathCandidate): number {
  if (!sameCost(a.cost, b.cost)) return a.cost - b.cost;
  if (a.hopCount !== b.hopCount) return a.hopCount - b.hopCount;
  return a.nextHop - b.nextHop;
}

/** The candidates, best first. */
export function rankPaths(candidates: readonly PathCandidate[]): PathCandidate[] {
  return [...candidates].sort(comparePaths);
}

/** The best candidate with no stickiness. */
export function bestPath(candidates: readonly PathCandidate[]): PathCandidate | undefined {
  let best: PathCandidate | undefined;
  for (const c of candidates) if (best === undefined || comparePaths(c, best) < 0) best = c;
  return best;
}

export type PathChoiceReason =
  /** No path was chosen before. */
  | 'initial'
  /** The previous path is still the best. */
  | 'best'
  /** Another path is cheaper, but not by more than the hysteresis margin. */
  | 'sticky'
  /** Another path is cheaper by more than the margin. */
  | 'better'
  /** The previous path is no longer among the valid ones. */
  | 'previous-gone';

export interface PathChoice {
  path: PathCandidate;
  previous: NodeAddr | undefined;
  /** The next hop differs from the previous choice. */
  switched: boolean;
  reason: PathChoiceReason;
}

/**
 * Chooses among valid paths with stickiness: the previous choice (named by
 * its next hop, which is unique among link-disjoint paths) is kept while it is
 * valid and no other path is cheaper by more than `hysteresis` times its cost.
 */
export function choosePath(candidates: readonly PathCandidate[], previous: NodeAddr | undefined, hysteresis: number): PathChoice | undefined {
  const best = bestPath(candidates);
  if (best === undefined) return undefined;
  if (previous === undefined) return pick(best, previous, 'initial');
  let current: PathCandidate | undefined;
  for (const c of candidates) if (c.nextHop === previous) current = c;
  if (current === undefined) return pick(best, previous, 'previous-gone');
  if (best.nextHop === previous) return pick(current, previous, 'best');
  if (current.cost - best.cost > hysteresis * current.cost && !sameCost(current.cost - best.cost, hysteresis * current.cost)) {
    return pick(best, previous, 'better');
  }
  return pick(current, previous, 'sticky');
}

function pick(path: PathCandidate, previous: NodeAddr | undefined, reason: PathChoiceReason): PathChoice {
  return { path, previous, switched: previous !== undefined && path.nextHop !== previous, reason };
}
