import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CooperativeSensing } from '../../src/sensing/cooperative.js';
import { WorkloadEstimator, type ChannelObservation } from '../../src/sensing/workload.js';

const obs = (channel: number, windows: number, busy: number, atUs = 0): ChannelObservation => ({
  channel,
  windows,
  busyWindows: busy,
  meanPowerDbm: -80,
  busyMeanPowerDbm: undefined,
  atUs,
});

test('w is busy samples over samples monitored (equation 1)', () => {
  const e = new WorkloadEstimator(0);
  e.observe(obs(3, 1000, 300));
  assert.equal(e.get(3)!.w, 0.3);
  assert.equal(e.get(4), undefined, 'an unseen channel has no estimate, not w = 0');
});

test('memory 0 keeps the last round; memory 1 pools every sample; in between ages old rounds', () => {
  const last = new WorkloadEstimator(0);
  const all = new WorkloadEstimator(1);
  const half = new WorkloadEstimator(0.5);
  for (const e of [last, all, half]) {
    e.observe(obs(1, 1000, 1000));
    e.observe(obs(1, 1000, 0));
  }
  assert.equal(last.get(1)!.w, 0);
  assert.equal(all.get(1)!.w, 0.5);
  assert.equal(half.get(1)!.w, 500 / 1500);
  assert.equal(half.get(1)!.windows, 1500);
});

test('an empty observation changes nothing', () => {
  const e = new WorkloadEstimator(0);
  e.observe(obs(1, 100, 50));
  e.observe(obs(1, 0, 0));
  assert.equal(e.get(1)!.w, 0.5);
});

const coop = () => new CooperativeSensing({ halfLifeUs: 1_000_000, maxAgeUs: 3_000_000, neighbourWeight: 1 });

test('cooperative merge weighs own and neighbours’ estimates by their windows', () => {
  const c = coop();
  c.receive('n2', 0, [{ channel: 1, w: 1, windows: 1000 }]);
  const merged = c.merge([{ channel: 1, w: 0, windows: 1000, meanPowerDbm: -90, updatedUs: 0 }], 0, [1, 2]);
  assert.equal(merged.length, 1, 'a channel nobody measured is left out');
  assert.equal(merged[0]!.w, 0.5);
  assert.equal(merged[0]!.ownW, 0);
  assert.equal(merged[0]!.neighbours, 1);
});

test('a neighbour report fills a channel this node has not sensed', () => {
  const c = coop();
  c.receive('n2', 0, [{ channel: 7, w: 0.4, windows: 10 }]);
  const m = c.merge([], 0, [7]);
  assert.equal(m[0]!.w, 0.4);
  assert.equal(m[0]!.ownW, undefined);
});

test('reports age: half weight after a half-life, gone after maxAge', () => {
  const c = coop();
  c.receive('n2', 0, [{ channel: 1, w: 1, windows: 1000 }]);
  const own = [{ channel: 1, w: 0, windows: 1000, meanPowerDbm: -90, updatedUs: 0 }];
  const atHalfLife = c.merge(own, 1_000_000, [1])[0]!;
  assert.ok(Math.abs(atHalfLife.w - 500 / 1500) < 1e-12);
  assert.ok(Math.abs(c.merge(own, 3_000_000, [1])[0]!.w - 125 / 1125) < 1e-12, 'still counted, at an eighth, at exactly maxAge');
  const later = c.merge(own, 3_000_001, [1])[0]!;
  assert.equal(later.w, 0);
  assert.equal(later.neighbours, 0);
  assert.equal(c.neighbourCount, 0);
});

test('a newer report from the same neighbour replaces the older one', () => {
  const c = coop();
  c.receive('n2', 0, [{ channel: 1, w: 1, windows: 100 }]);
  c.receive('n2', 0, [{ channel: 1, w: 0.2, windows: 100 }]);
  assert.equal(c.merge([], 0, [1])[0]!.w, 0.2);
});

test('malformed shared entries are counted and ignored', () => {
  const c = coop();
  const r = c.receive('n2', 0, [
    { channel: 1, w: 1.5, windows: 10 },
    { channel: 2, w: Number.NaN, windows: 10 },
    { channel: 3, w: 0.5, windows: -1 },
    { channel: 4, w: 0.5, windows: 10 },
    { channel: 256, w: 0.5, windows: 10 },
    { channel: -1, w: 0.5, windows: 10 },
    { channel: 2.5, w: 0.5, windows: 10 },
    // A second entry for one channel replaces the first, and is not counted twice.
    { channel: 5, w: 0.1, windows: 10 },
    { channel: 5, w: 0.3, windows: 10 },
  ]);
  assert.deepEqual(r, { accepted: 2, rejected: 6 });
  assert.deepEqual(
    c.merge([], 0, [1, 2, 3, 4, 5, 256]).map((m) => [m.channel, m.w]),
    [
      [4, 0.5],
      [5, 0.3],
    ],
  );
});

test('with cooperation off, own estimates stand alone and neighbour reports are kept for later', () => {
  const c = coop();
  c.receive('n2', 0, [{ channel: 1, w: 1, windows: 1000 }]);
  const own = [{ channel: 1, w: 0.2, windows: 100, meanPowerDbm: -90, updatedUs: 0 }];
  const alone = c.merge(own, 0, [1, 7], false);
  assert.deepEqual(alone, [{ channel: 1, w: 0.2, ownW: 0.2, neighbours: 0, weight: 100 }]);
  assert.equal(c.merge(own, 0, [1], true)[0]!.neighbours, 1);
});
