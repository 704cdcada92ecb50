import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import { remainingCapacity } from '../../src/channel/capacity.js';
import { ChannelDecision, type DecisionParams } from '../../src/channel/decision.js';

const plan = ism2g4(11);
const C = 2e6;
const P: DecisionParams = { capacityBps: C, hysteresis: 0.1, minDwellUs: 3_000_000, loadBps: 0, allowed: plan.numbers, contendedMoveProbability: 0.5 };
const none = new Map<string, number>();
/** Workload map: every channel at `rest` except the ones named. */
const wl = (named: Record<number, number>, rest = 0.5): Map<number, number> => new Map(plan.numbers.map((c) => [c, named[c] ?? rest]));

test('RC = (1 - w) * C (equation 2), w clamped to [0, 1]', () => {
  assert.equal(remainingCapacity(0.3, C), 0.7 * C);
  assert.equal(remainingCapacity(0, C), C);
  assert.equal(remainingCapacity(1, C), 0);
  assert.equal(remainingCapacity(1.2, C), 0);
  assert.equal(remainingCapacity(-0.1, C), C);
});

test('the first decision takes the channel with the most RC', () => {
  const d = new ChannelDecision(plan, P);
  const r = d.decide(wl({ 4: 0.05 }), none, 0);
  assert.equal(r.channel, 4);
  assert.equal(r.reason, 'initial');
  assert.equal(r.changed, true);
  assert.equal(r.scores[0]!.rc, 0.95 * C);
});

test('no measurement, no decision', () => {
  const d = new ChannelDecision(plan, P);
  const r = d.decide(new Map(), none, 0);
  assert.equal(r.channel, undefined);
  assert.equal(r.reason, 'no-measurement');
});

test('hysteresis: a small gain does not move R1, a large one does', () => {
  const d = new ChannelDecision(plan, P, 4, 0);
  const small = d.decide(wl({ 4: 0.3, 9: 0.22 }), none, 10_000_000);
  assert.equal(small.channel, 4);
  assert.equal(small.reason, 'within-hysteresis');
  const large = d.decide(wl({ 4: 0.3, 9: 0.15 }), none, 10_000_000);
  assert.equal(large.channel, 9);
  assert.equal(large.previous, 4);
  assert.equal(large.reason, 'better');
});

test('noise around equal loads never makes R1 flap', () => {
  const d = new ChannelDecision(plan, P, 1, 0);
  let moves = 0;
  let t = 0;
  // Two channels whose estimates wander by +-0.04 around the same load.
  for (let i = 0; i < 200; i++) {
    t += 1_000_000;
    const jitter = ((i * 7919) % 9) / 100 - 0.04;
    const r = d.decide(wl({ 1: 0.3 + jitter, 11: 0.3 - jitter }, 0.9), none, t);
    if (r.changed) moves++;
  }
  assert.equal(moves, 0);
});

test('minimum dwell holds R1 even for a large gain', () => {
  const d = new ChannelDecision(plan, P, 4, 0);
  const early = d.decide(wl({ 4: 0.9, 9: 0 }), none, 2_999_999);
  assert.equal(early.channel, 4);
  assert.equal(early.reason, 'min-dwell');
  assert.equal(d.decide(wl({ 4: 0.9, 9: 0 }), none, 3_000_000).channel, 9);
});

test('a channel that cannot carry the load is left for one that can, even within hysteresis', () => {
  const d = new ChannelDecision(plan, { ...P, loadBps: 1.5e6 }, 4, 0);
  // Current: RC 1.44 Mbps < 1.5 Mbps; best: 1.56 Mbps, a gain of 0.06 C only.
  const r = d.decide(wl({ 4: 0.28, 9: 0.22 }), none, 10_000_000);
  assert.equal(r.channel, 9);
  assert.equal(r.reason, 'load-unmet');
  // When no channel can carry it, only the hysteresis rule applies.
  const d2 = new ChannelDecision(plan, { ...P, loadBps: 1.9e6 }, 4, 0);
  assert.equal(d2.decide(wl({ 4: 0.28, 9: 0.22 }), none, 10_000_000).reason, 'within-hysteresis');
});

test("neighbours' announced R1 channels share a channel's RC", () => {
  const d = new ChannelDecision(plan, P);
  // Channel 1 and 11 equally free, but two neighbours receive on 11.
  const r = d.decide(
    wl({ 1: 0, 11: 0 }, 1),
    new Map([
      ['n2', 11],
      ['n3', 11],
    ]),
    0,
  );
  assert.equal(r.channel, 1);
  const s11 = r.scores.find((s) => s.channel === 11)!;
  assert.equal(s11.sharers, 2);
  assert.equal(s11.score, C / 3);
  // A neighbour on an overlapping channel counts by the overlap factor.
  const s = d.score(wl({ 1: 0, 11: 0 }, 1), new Map([['n2', 10]]));
  const ov = s.find((x) => x.channel === 11)!;
  assert.ok(ov.sharers > 0.7 && ov.sharers < 0.8);
});

test('equal RC goes to the quieter vicinity, then to the lower channel', () => {
  const d = new ChannelDecision(plan, P);
  // 6 busy; 9, 10, 11 free: 11 is furthest from the busy channel's leakage.
  const w = wl({ 6: 0.8, 7: 0.8, 8: 0.8, 9: 0, 10: 0, 11: 0 }, 1);
  assert.equal(d.decide(w, none, 0).channel, 11);
  const d2 = new ChannelDecision(plan, { ...P, allowed: [3, 8] });
  assert.equal(
    d2.decide(
      new Map([
        [3, 0],
        [8, 0],
      ]),
      none,
      0,
    ).channel,
    3,
  );
});

test('a channel no longer allowed is left at once', () => {
  const d = new ChannelDecision(plan, P, 4, 0);
  d.setParams({ ...P, allowed: [1, 6, 11] });
  const r = d.decide(wl({ 1: 0.5, 6: 0.2, 11: 0.5 }), none, 1);
  assert.equal(r.channel, 6);
  assert.equal(r.reason, 'not-allowed');
});

test('a router on a shared channel leaves it for a better one only with the contended-move probability', () => {
  const d = new ChannelDecision(plan, P, 6, 0);
  const w = wl({ 6: 0, 11: 0 }, 0.9);
  const sharing = new Map([['7', 6]]); // a neighbour's R1 on our channel 6
  const t = 5_000_000;
  const stay = d.decide(w, sharing, t, 0.7);
  assert.equal(stay.reason, 'yielded');
  assert.equal(stay.channel, 6);
  assert.equal(d.current, 6);
  const go = d.decide(w, sharing, t + 1, 0.2);
  assert.equal(go.reason, 'better');
  assert.equal(go.channel, 11);
});

test('a move away from PN load on an unshared channel is never yielded', () => {
  const d = new ChannelDecision(plan, P, 6, 0);
  const moved = d.decide(wl({ 6: 0.9, 11: 0 }, 0.9), none, 5_000_000, 0.99);
  assert.equal(moved.reason, 'better');
  assert.equal(moved.channel, 11);
});
