import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bestPath, choosePath, comparePaths, costVia, linkCostFromBusy, rankPaths, type PathCandidate } from '../../src/routing/path.js';

const p = (nextHop: number, cost: number, hopCount = 2): PathCandidate => ({ nextHop, hopCount, cost });

test('a path costs what the rest advertised plus the first link', () => {
  assert.equal(costVia(0, 1), 1);
  assert.equal(costVia(2.5, 1.5), 4);
});

test('link cost is 1 on a PN-free link and 1 / (1 - w) on a busy one, bounded', () => {
  assert.equal(linkCostFromBusy(0), 1);
  assert.equal(linkCostFromBusy(0.5), 2);
  assert.equal(linkCostFromBusy(-0.2), 1);
  assert.ok(Math.abs(linkCostFromBusy(1) - 20) < 1e-9);
  assert.ok(Math.abs(linkCostFromBusy(Number.NaN) - 20) < 1e-9);
  assert.equal(linkCostFromBusy(0.75, 0.5), 2);
});

test('the cheapest path wins; ties go to fewer hops, then the lower next hop', () => {
  assert.equal(bestPath([p(5, 3), p(4, 2.5), p(6, 4)])!.nextHop, 4);
  assert.equal(bestPath([p(5, 3, 3), p(7, 3, 2)])!.nextHop, 7);
  assert.equal(bestPath([p(9, 3, 2), p(8, 3, 2)])!.nextHop, 8);
  // Sums taken in another order still tie.
  assert.equal(bestPath([p(9, 0.1 + 0.2, 2), p(8, 0.3, 2)])!.nextHop, 8);
  assert.equal(bestPath([]), undefined);
  assert.deepEqual(
    rankPaths([p(3, 2), p(1, 2), p(2, 1)]).map((c) => c.nextHop),
    [2, 1, 3],
  );
  assert.ok(comparePaths(p(1, 1), p(2, 1)) < 0);
});

test('with no previous choice the best path is taken', () => {
  const c = choosePath([p(5, 3), p(4, 2)], undefined, 0.1)!;
  assert.equal(c.path.nextHop, 4);
  assert.equal(c.reason, 'initial');
  assert.equal(c.switched, false);
  assert.equal(choosePath([], undefined, 0.1), undefined);
});

test('stickiness: the previous path stays until another is cheaper by more than the margin', () => {
  // 10 % of 4 is 0.4: a path at 3.7 does not take over, one at 3.5 does.
  const within = choosePath([p(5, 4), p(6, 3.7)], 5, 0.1)!;
  assert.equal(within.path.nextHop, 5);
  assert.equal(within.reason, 'sticky');
  assert.equal(within.switched, false);
  const edge = choosePath([p(5, 4), p(6, 3.6)], 5, 0.1)!;
  assert.equal(edge.path.nextHop, 5, 'exactly the margin is not more than it');
  const better = choosePath([p(5, 4), p(6, 3.5)], 5, 0.1)!;
  assert.equal(better.path.nextHop, 6);
  assert.equal(better.reason, 'better');
  assert.equal(better.switched, true);
  assert.equal(better.previous, 5);
});

test('the previous path still the best is kept; a vanished one is replaced', () => {
  assert.equal(choosePath([p(5, 2), p(6, 3)], 5, 0.1)!.reason, 'best');
  const gone = choosePath([p(6, 3), p(7, 2.5)], 5, 0.1)!;
  assert.equal(gone.path.nextHop, 7);
  assert.equal(gone.reason, 'previous-gone');
  assert.equal(gone.switched, true);
});

test('no hysteresis: any cheaper path takes over, an equal one does not', () => {
  assert.equal(choosePath([p(5, 3), p(6, 2.999)], 5, 0)!.path.nextHop, 6);
  assert.equal(choosePath([p(5, 3, 3), p(6, 3, 1)], 5, 0)!.path.nextHop, 5);
});
