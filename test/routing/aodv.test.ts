import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import { aodvTimes, DEFAULT_AODV_PARAMS, MultipathAodv, seqNewer, seqNext, type AodvAction, type AodvParams } from '../../src/routing/aodv.js';
import { BROADCAST, type ControlMsg, type Hello, type Rerr, type Rrep, type Rreq } from '../../src/wire/mesh.js';

/** One core driven by hand, HELLOs and forwarding without jitter unless asked. */
function single(self: number, params: Partial<AodvParams> = {}, startUs: Micros = 0) {
  const costs = new Map<number, number>();
  const core = new MultipathAodv(
    {
      self,
      rng: Rng.fromSeed(self).fork('test'),
      startUs,
      hello: () => ({ r1Channel: 6, workload: [{ channel: 6, w: 0.25, windows: 100 }] }),
      linkCost: (j) => costs.get(j) ?? 1,
    },
    { broadcastJitterUs: 0, ...params },
  );
  return { core, costs };
}

type Send = Extract<AodvAction, { kind: 'send' }>;
const sends = (a: AodvAction[]): Send[] => a.filter((x): x is Send => x.kind === 'send');
const msgs = <T extends ControlMsg['type']>(a: AodvAction[], type: T): Array<Extract<ControlMsg, { type: T }>> =>
  sends(a)
    .map((s) => s.msg)
    .filter((m): m is Extract<ControlMsg, { type: T }> => m.type === type);
const kinds = (a: AodvAction[]): string[] => a.map((x) => (x.kind === 'send' ? `send:${x.msg.type}` : x.kind));

const rreq = (o: Partial<Rreq> = {}): Rreq => ({
  type: 'rreq',
  join: false,
  repair: false,
  gratuitous: false,
  destinationOnly: false,
  unknownSeq: false,
  hopCount: 0,
  rreqId: 1,
  dst: 9,
  dstSeq: 0,
  orig: 1,
  origSeq: 1,
  ttl: 10,
  firstHop: 1,
  pathCost: 0,
  ...o,
});
const rrep = (o: Partial<Rrep> = {}): Rrep => ({
  type: 'rrep',
  repair: false,
  ackRequired: false,
  hopCount: 0,
  dst: 9,
  dstSeq: 1,
  orig: 1,
  lifetimeMs: 6000,
  lastHop: 9,
  pathCost: 0,
  ...o,
});
const hello = (src: number, seq: number, r1Channel = 3): Hello => ({ type: 'hello', src, seq, r1Channel, workload: [], neighbours: [] });
const route = (c: MultipathAodv, dst: number, now: Micros) => c.routes(now).find((r) => r.dst === dst);

const MS = 1_000;
const T = aodvTimes(DEFAULT_AODV_PARAMS);

test('RFC 3561 defaults and derived times', () => {
  assert.equal(DEFAULT_AODV_PARAMS.myRouteTimeoutUs, 2 * DEFAULT_AODV_PARAMS.activeRouteTimeoutUs);
  assert.equal(T.netTraversalUs, 2800 * MS);
  assert.equal(T.pathDiscoveryUs, 5600 * MS);
  assert.equal(T.deletePeriodUs, 15_000 * MS);
  assert.equal(T.neighbourLossUs, 2000 * MS);
  assert.equal(T.ringTraversalUs(1), 240 * MS);
  assert.equal(T.ringTraversalUs(7), 720 * MS);
});

test('parameters out of range are refused with a stable code; MY_ROUTE_TIMEOUT follows ACTIVE_ROUTE_TIMEOUT', () => {
  assert.throws(() => single(1, { maxPaths: 0 }), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => single(1, { netDiameter: 256 }), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => single(1, { pathHysteresis: -0.1 }), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => single(1, { helloIntervalUs: 1.5 }), { code: 'CORE_OUT_OF_RANGE' });
  assert.equal(single(1, { activeRouteTimeoutUs: 1_000_000 }).core.params.myRouteTimeoutUs, 2_000_000);
  const { core } = single(1);
  assert.throws(() => core.setParams({ rreqRetries: -1 }, 0), { code: 'CORE_OUT_OF_RANGE' });
  assert.equal(core.params.rreqRetries, 2);
});

test('sequence numbers compare across the 32-bit rollover and skip 0', () => {
  assert.ok(seqNewer(2, 1));
  assert.ok(!seqNewer(1, 1));
  assert.ok(seqNewer(1, 0xffffffff));
  assert.ok(!seqNewer(0xffffffff, 1));
  assert.equal(seqNext(0xffffffff), 1);
  assert.equal(seqNext(41), 42);
});

test('expanding ring: TTL 1, 3, 5, 7, then NET_DIAMETER with binary backoff; route-failed after RREQ_RETRIES', () => {
  const { core } = single(1);
  core.tick(0); // the first HELLO
  const t0 = 50 * MS;
  const first = core.discover(99, t0);
  const sentAt: Array<{ at: Micros; q: Rreq }> = msgs(first, 'rreq').map((q) => ({ at: t0, q }));
  let failedAt: Micros | undefined;
  let now = t0;
  while (failedAt === undefined) {
    const due = core.nextDeadline()!;
    assert.ok(due >= now);
    // Nothing happens before a deadline.
    if (due - 1 >= now) assert.deepEqual(core.tick(due - 1), []);
    now = due;
    const acts = core.tick(due);
    assert.ok(acts.length > 0, `the deadline at ${due} had something to do`);
    for (const q of msgs(acts, 'rreq')) sentAt.push({ at: due, q });
    if (acts.some((a) => a.kind === 'route-failed' && a.dst === 99)) failedAt = due;
  }
  assert.deepEqual(
    sentAt.map((s) => s.q.ttl),
    [1, 3, 5, 7, 35, 35, 35],
  );
  const gaps = sentAt.slice(1).map((s, i) => (s.at - sentAt[i]!.at) / MS);
  assert.deepEqual(gaps, [240, 400, 560, 720, 2800, 5600]);
  assert.equal((failedAt - sentAt[6]!.at) / MS, 11200);
  assert.equal((failedAt - t0) / MS, 240 + 400 + 560 + 720 + 2800 + 5600 + 11200);
  // Each RREQ carries a new RREQ ID and a sequence number incremented before it went out.
  assert.deepEqual(
    sentAt.map((s) => s.q.rreqId),
    [1, 2, 3, 4, 5, 6, 7],
  );
  assert.deepEqual(
    sentAt.map((s) => s.q.origSeq),
    [2, 3, 4, 5, 6, 7, 8],
  );
  for (const { q } of sentAt) {
    assert.equal(q.unknownSeq, true);
    assert.equal(q.hopCount, 0);
    assert.equal(q.firstHop, 1);
    assert.equal(q.orig, 1);
    assert.equal(q.destinationOnly, false);
  }
  assert.equal(core.counters.discoveriesFailed, 1);
  assert.equal(core.counters.rreqSent, 7);
  assert.deepEqual(core.discovering, []);
});

test('a new neighbour sends a discovery waiting at NET_DIAMETER its RREQ again at once, its retries starting over; one in the ring goes on as it was', () => {
  const { core } = single(1);
  core.tick(0);
  core.discover(99, 0);
  // Through the ring (TTL 1, 3, 5, 7) to the first RREQ at NET_DIAMETER, sent at 1920 ms; the next waits 2.8 s.
  let now = 0;
  while (core.counters.rreqSent < 5) {
    now = core.nextDeadline()!;
    core.tick(now);
  }
  assert.equal(now, 1920 * MS);
  const heardAt = now + 1000 * MS;
  // Nothing but HELLOs until then.
  while (core.nextDeadline()! < heardAt) assert.deepEqual(msgs(core.tick(core.nextDeadline()!), 'rreq'), []);
  // A router comes up (a relay restarted): its HELLO.
  const up = core.handle(hello(7, 1), 7, heardAt);
  assert.ok(
    up.some((a) => a.kind === 'neighbour-up' && a.addr === 7),
    kinds(up).join(),
  );
  assert.equal(core.nextDeadline(), heardAt, 'the RREQ is due at once');
  const again = msgs(core.tick(heardAt), 'rreq');
  assert.deepEqual(
    again.map((q) => [q.dst, q.ttl]),
    [[99, 35]],
  );
  // Its retries start over: 2.8 s, then 5.6 s, then 11.2 s before route-failed.
  const sent: Micros[] = [heardAt];
  let failedAt: Micros | undefined;
  while (failedAt === undefined) {
    now = core.nextDeadline()!;
    const acts = core.tick(now);
    if (msgs(acts, 'rreq').length > 0) sent.push(now);
    if (acts.some((a) => a.kind === 'route-failed')) failedAt = now;
  }
  assert.deepEqual(
    sent.map((t) => (t - heardAt) / MS),
    [0, 2800, 8400],
  );
  assert.equal((failedAt - heardAt) / MS, 2800 + 5600 + 11200);

  // A neighbour heard again while a discovery is still in its ring changes nothing: the ring goes on.
  const b = single(2).core;
  b.tick(0);
  b.discover(99, 0);
  assert.equal(b.nextDeadline(), 0 + T.ringTraversalUs(1));
  b.handle(hello(8, 1), 8, 100 * MS);
  assert.equal(b.nextDeadline(), T.ringTraversalUs(1), 'the ring wait stands');
  assert.deepEqual(msgs(b.tick(100 * MS), 'rreq'), []);
  // And a neighbour heard again (already known) sends nothing either.
  const c = single(3).core;
  c.tick(0);
  c.handle(hello(8, 1), 8, 0);
  c.discover(99, 0);
  while (c.counters.rreqSent < 5) {
    const t = c.nextDeadline()!;
    c.handle(hello(8, 1), 8, t); // heard all along
    c.tick(t);
  }
  const due = c.nextDeadline()!;
  c.handle(hello(8, 2), 8, due - 500 * MS);
  assert.deepEqual(msgs(c.tick(due - 500 * MS), 'rreq'), [], 'a known neighbour is no news');
});

test('RREQ_RETRIES = 0 gives up after the first RREQ at NET_DIAMETER', () => {
  const { core } = single(1, { rreqRetries: 0, ttlStart: 35 });
  core.discover(99, 0);
  assert.equal(core.nextDeadline(), 0); // the first HELLO
  core.tick(0);
  assert.equal(core.nextDeadline(), 1_000_000); // next HELLO before the 2.8 s wait ends
  const at = T.netTraversalUs;
  let now = 0;
  const kindsSeen: string[] = [];
  while (now < at) {
    now = core.nextDeadline()!;
    kindsSeen.push(...kinds(core.tick(now)));
  }
  assert.equal(now, at);
  assert.deepEqual(
    kindsSeen.filter((k) => k !== 'send:hello'),
    ['route-failed'],
  );
});

test('a discovery stops when a route turns up; discover() with a valid route reports it at once', () => {
  const { core } = single(1);
  core.tick(0);
  core.discover(9, 0);
  const acts = core.handle(rrep({ dst: 9, dstSeq: 5, orig: 1, hopCount: 1, lastHop: 9 }), 2, 100 * MS);
  assert.ok(acts.some((a) => a.kind === 'route-found' && a.dst === 9));
  assert.deepEqual(core.discovering, []);
  assert.ok(core.nextDeadline()! > 240 * MS, 'no retry scheduled');
  assert.deepEqual(core.tick(240 * MS), []);
  assert.deepEqual(core.discover(9, 300 * MS), [{ kind: 'route-found', dst: 9 }]);
  // A discovery under way is not started twice.
  const { core: c2 } = single(1);
  assert.equal(msgs(c2.discover(9, 0), 'rreq').length, 1);
  assert.deepEqual(c2.discover(9, 10), []);
  assert.deepEqual(c2.discover(1, 10), [], 'never for itself');
});

test('a route known before starts the ring at its hop count + TTL_INCREMENT and asks for a newer sequence number', () => {
  const { core } = single(1);
  core.handle(rrep({ dst: 9, dstSeq: 5, orig: 1, hopCount: 3, lastHop: 7 }), 2, 0);
  assert.equal(core.lookup(9, 0)?.hopCount, 4);
  core.linkFailed(2, 10);
  const q = msgs(core.discover(9, 20), 'rreq')[0]!;
  assert.equal(q.ttl, 6);
  assert.equal(q.dstSeq, 6);
  assert.equal(q.unknownSeq, false);
  // 6 + 2 is past TTL_THRESHOLD: the next try covers the network.
  const next = msgs(core.tick(20 + T.ringTraversalUs(6)), 'rreq')[0]!;
  assert.equal(next.ttl, 35);
});

test('RREQ_RATELIMIT: at most 10 RREQs originated in any second, the rest wait for room', () => {
  const { core } = single(1);
  let sent = 0;
  for (let d = 100; d < 112; d++) sent += msgs(core.discover(d, 0), 'rreq').length;
  assert.equal(sent, 10);
  assert.equal(core.counters.rreqRateLimited, 2);
  const times: Micros[] = [];
  let now = 0;
  while (now < 2_000_000) {
    now = core.nextDeadline()!;
    for (const _ of msgs(core.tick(now), 'rreq')) times.push(now);
  }
  assert.ok(
    times.every((t) => t >= 1_000_000),
    'none before the window has room',
  );
  const window = (t: Micros) => times.filter((x) => x > t - 1_000_000 && x <= t).length;
  assert.ok(times.every((t) => window(t) <= 10));
});

test('the destination replies with max(own, requested) sequence number, incremented to own + 1 when asked', () => {
  const { core } = single(9);
  assert.equal(core.ownSeq, 1);
  let r = msgs(core.handle(rreq({ rreqId: 1, dstSeq: 2 }), 1, 0), 'rrep')[0]!;
  assert.equal(r.dstSeq, 2);
  assert.equal(core.ownSeq, 2);
  assert.deepEqual(
    { hop: r.hopCount, lastHop: r.lastHop, life: r.lifetimeMs, orig: r.orig, cost: r.pathCost },
    { hop: 0, lastHop: 9, life: 6000, orig: 1, cost: 0 },
  );
  r = msgs(core.handle(rreq({ rreqId: 2, origSeq: 2, dstSeq: 1 }), 1, 10), 'rrep')[0]!;
  assert.equal(r.dstSeq, 2, 'an older request does not lower it');
  r = msgs(core.handle(rreq({ rreqId: 3, origSeq: 3, dstSeq: 7 }), 1, 20), 'rrep')[0]!;
  assert.equal(r.dstSeq, 7);
  r = msgs(core.handle(rreq({ rreqId: 4, origSeq: 4, dstSeq: 100, unknownSeq: true }), 1, 30), 'rrep')[0]!;
  assert.equal(r.dstSeq, 7, 'an unknown number is not taken');
  assert.equal(core.counters.rrepSent, 4);
});

test('the destination answers each copy through a new neighbour with a new first hop, up to maxPaths', () => {
  const { core } = single(9);
  const copy = (from: number, firstHop: number, hopCount = 2) =>
    sends(core.handle(rreq({ firstHop, hopCount }), from, 0))
      .filter((s) => s.msg.type === 'rrep')
      .map((s) => s.to);
  assert.deepEqual(copy(5, 2), [5]);
  assert.deepEqual(copy(6, 3), [6]);
  assert.deepEqual(copy(7, 3), [], 'same first hop');
  assert.deepEqual(copy(5, 4), [], 'same neighbour');
  assert.deepEqual(copy(8, 4), [8]);
  assert.deepEqual(copy(10, 11), [], 'maxPaths replies already');
  const r = route(core, 1, 0)!;
  assert.deepEqual(r.paths.map((p) => [p.nextHop, p.lastHop]).sort(), [
    [5, 2],
    [6, 3],
    [8, 4],
  ]);
});

test('an intermediate node forwards the first copy only, adds reverse paths from the others, and keeps them loop-free', () => {
  const { core, costs } = single(5);
  costs.set(2, 1.5);
  // First copy: from 2, which heard it from the originator 1.
  let acts = core.handle(rreq({ ttl: 3, hopCount: 1, firstHop: 2, pathCost: 1 }), 2, 0);
  const f = msgs(acts, 'rreq')[0]!;
  assert.deepEqual(
    { ttl: f.ttl, hop: f.hopCount, firstHop: f.firstHop, cost: f.pathCost, id: f.rreqId, orig: f.orig },
    { ttl: 2, hop: 2, firstHop: 2, cost: 2.5, id: 1, orig: 1 },
  );
  assert.equal(sends(acts)[0]!.to, BROADCAST);
  assert.equal(route(core, 1, 0)!.advertisedHops, 2);
  // A second copy through 3 (first hop 3, 1 hop away) adds a reverse path but is not forwarded.
  acts = core.handle(rreq({ ttl: 3, hopCount: 1, firstHop: 3 }), 3, 1);
  assert.deepEqual(msgs(acts, 'rreq'), []);
  assert.equal(core.counters.duplicatesDropped, 1);
  assert.equal(route(core, 1, 1)!.paths.length, 2);
  // The route to 1 was advertised with 2 hops: a copy whose sender is 2 hops away cannot join.
  core.handle(rreq({ ttl: 3, hopCount: 2, firstHop: 4 }), 6, 2);
  assert.equal(core.counters.loopsRejected, 1);
  // A copy that went through this node already is a loop.
  core.handle(rreq({ ttl: 3, hopCount: 1, firstHop: 5 }), 4, 3);
  assert.equal(core.counters.loopsRejected, 2);
  // Not link-disjoint: same first hop as the path through 2.
  core.handle(rreq({ ttl: 3, hopCount: 1, firstHop: 2 }), 7, 3);
  assert.equal(core.counters.notDisjointRejected, 1);
  assert.deepEqual(
    route(core, 1, 3)!
      .paths.map((p) => [p.nextHop, p.lastHop])
      .sort(),
    [
      [2, 2],
      [3, 3],
    ],
  );
  // Heard straight from the originator: a direct path (its first hop is this node) always joins.
  core.handle(rreq({ ttl: 3, hopCount: 0, firstHop: 1 }), 1, 3);
  assert.equal(route(core, 1, 3)!.paths.length, 3);
  assert.equal(core.counters.rreqForwarded, 1);
  // TTL 1 stops here.
  assert.deepEqual(msgs(core.handle(rreq({ rreqId: 2, origSeq: 2, ttl: 1 }), 1, 4), 'rreq'), []);
  assert.equal(core.counters.ttlExpired, 1);
  // The node's own RREQ heard back is a duplicate.
  assert.deepEqual(core.handle(rreq({ orig: 5, rreqId: 1 }), 1, 5), []);
});

test('a forwarded RREQ asks for the freshest destination sequence number the relay knows', () => {
  const { core } = single(5);
  core.handle(hello(9, 12), 9, 0);
  core.linkFailed(9, 1); // route to 9 invalid, its number now 13
  const f = msgs(core.handle(rreq({ unknownSeq: true }), 1, 2), 'rreq')[0]!;
  assert.equal(f.dstSeq, 13);
  assert.equal(f.unknownSeq, false);
});

test('forwarded RREQs wait a random 0..broadcastJitterUs', () => {
  const { core } = single(5, { broadcastJitterUs: 10 * MS });
  core.tick(core.nextDeadline()!); // first HELLO
  const acts = core.handle(rreq({ ttl: 3 }), 1, 20 * MS);
  assert.deepEqual(msgs(acts, 'rreq'), []);
  const due = core.nextDeadline()!;
  assert.ok(due >= 20 * MS && due <= 30 * MS);
  if (due > 20 * MS) assert.deepEqual(core.tick(due - 1), []);
  assert.equal(msgs(core.tick(due), 'rreq').length, 1);
});

test('an intermediate node with a fresh route answers for the destination unless D is set', () => {
  const mk = (params: Partial<AodvParams> = {}) => {
    const { core } = single(5, params);
    core.handle(rreq({ rreqId: 1, orig: 2, origSeq: 1, dst: 1 }), 2, 0); // a reverse route to 2 ...
    core.handle(rrep({ dst: 9, dstSeq: 4, orig: 2, hopCount: 1, lastHop: 8 }), 6, 1); // ... and a route to 9 via 6
    return core;
  };
  let core = mk();
  const acts = core.handle(rreq({ rreqId: 7, dstSeq: 3 }), 1, 10);
  const r = msgs(acts, 'rrep')[0]!;
  assert.deepEqual({ dst: r.dst, seq: r.dstSeq, hop: r.hopCount, lastHop: r.lastHop, orig: r.orig }, { dst: 9, seq: 4, hop: 2, lastHop: 8, orig: 1 });
  assert.deepEqual(msgs(acts, 'rreq'), [], 'it does not forward');
  assert.equal(core.counters.intermediateReplies, 1);
  assert.deepEqual(route(core, 9, 10)!.precursors, [1, 2]);
  // Asked for a newer number than it has: forward instead.
  core = mk();
  assert.deepEqual(kinds(core.handle(rreq({ rreqId: 7, dstSeq: 5 }), 1, 10)), ['neighbour-up', 'send:rreq']);
  // The D flag, or destinationOnly on this node: forward instead.
  core = mk();
  assert.equal(msgs(core.handle(rreq({ rreqId: 7, destinationOnly: true }), 1, 10), 'rreq').length, 1);
  core = mk({ destinationOnly: true });
  assert.equal(msgs(core.handle(rreq({ rreqId: 7 }), 1, 10), 'rreq').length, 1);
  // ... and it sets D on its own RREQs.
  assert.equal(msgs(core.discover(77, 20), 'rreq')[0]!.destinationOnly, true);
});

test('RREPs: AOMDV update rules, forwarding each accepted copy along an unused reverse path', () => {
  const { core } = single(5);
  core.handle(rreq({ orig: 1, origSeq: 3, dst: 9 }), 1, 0); // reverse route to 1, direct
  // Accepted, then forwarded to 1 with the advertised hop count (the longest path, 3).
  let acts = core.handle(rrep({ dstSeq: 3, hopCount: 2, lastHop: 8, pathCost: 2 }), 6, 10);
  let f = sends(acts).find((s) => s.msg.type === 'rrep')!;
  assert.equal(f.to, 1);
  assert.deepEqual(
    { hop: (f.msg as Rrep).hopCount, lastHop: (f.msg as Rrep).lastHop, cost: (f.msg as Rrep).pathCost, life: (f.msg as Rrep).lifetimeMs },
    { hop: 3, lastHop: 8, cost: 3, life: 6000 },
  );
  assert.equal(route(core, 9, 10)!.advertisedHops, 3);
  // Same sequence number, neighbour 3 hops away: not below the advertised 3, rejected.
  acts = core.handle(rrep({ dstSeq: 3, hopCount: 3, lastHop: 10 }), 7, 20);
  assert.equal(core.counters.loopsRejected, 1);
  assert.deepEqual(msgs(acts, 'rrep'), []);
  // 2 hops away and disjoint: accepted; the only reverse path is used already, so not forwarded.
  acts = core.handle(rrep({ dstSeq: 3, hopCount: 2, lastHop: 10 }), 7, 30);
  assert.deepEqual(msgs(acts, 'rrep'), []);
  assert.equal(core.counters.rrepDropped, 1);
  assert.equal(route(core, 9, 30)!.paths.length, 2);
  // Sharing a last hop is not link-disjoint.
  core.handle(rrep({ dstSeq: 3, hopCount: 1, lastHop: 8 }), 11, 40);
  assert.equal(core.counters.notDisjointRejected, 1);
  // Older: stale. Newer: replaces every path, whatever its length.
  core.handle(rrep({ dstSeq: 2, hopCount: 0, lastHop: 9 }), 9, 50);
  assert.equal(core.counters.staleRejected, 1);
  assert.deepEqual(
    route(core, 9, 50)!
      .paths.map((p) => p.nextHop)
      .sort(),
    [6, 7, 9], // 6, 7 and the direct path from hearing 9
  );
  acts = core.handle(rrep({ dstSeq: 4, hopCount: 6, lastHop: 12 }), 7, 60);
  const r = route(core, 9, 60)!;
  assert.equal(r.seq, 4);
  assert.deepEqual(r.paths.map((p) => p.nextHop).sort(), [7, 9], 'the newer path, and the direct one');
  assert.equal(r.advertisedHops, 7, 'advertised afresh for the new number when forwarded');
  f = sends(acts).find((s) => s.msg.type === 'rrep')!;
  assert.equal((f.msg as Rrep).hopCount, 7);
});

test('an RREP naming this node as the last hop is a loop; one for this node is ignored', () => {
  const { core } = single(5);
  core.handle(rrep({ dstSeq: 3, hopCount: 2, lastHop: 5 }), 6, 0);
  assert.equal(core.counters.loopsRejected, 1);
  assert.equal(route(core, 9, 0), undefined);
  core.handle(rrep({ dst: 5, dstSeq: 3, hopCount: 2, lastHop: 7 }), 6, 0);
  assert.equal(route(core, 5, 0), undefined);
});

/** Node 5 relaying for 1 -> 9 through 6, with `extra` precursors. */
function relay(extra: number[] = []) {
  const { core } = single(5);
  core.handle(rreq({ orig: 1, origSeq: 3, dst: 9 }), 1, 0);
  core.handle(rrep({ dstSeq: 3, hopCount: 1, lastHop: 8 }), 6, 10);
  for (const p of extra) core.forwarding(9, p, 6, 20);
  return core;
}

test('a broken link to the only next hop: route-lost, sequence number incremented, RERR unicast to the one precursor', () => {
  const core = relay();
  assert.deepEqual(route(core, 9, 20)!.precursors, [1]);
  const acts = core.linkFailed(6, 30);
  assert.deepEqual(kinds(acts), ['neighbour-lost', 'route-lost', 'route-lost', 'send:rerr']);
  assert.deepEqual(acts.flatMap((a) => (a.kind === 'route-lost' ? [a.dst] : [])).sort(), [6, 9]);
  const s = sends(acts)[0]!;
  assert.equal(s.to, 1);
  assert.deepEqual((s.msg as Rerr).unreachable, [{ dst: 9, dstSeq: 4 }]);
  const r = route(core, 9, 30)!;
  assert.equal(r.state, 'invalid');
  assert.equal(r.seq, 4);
  assert.equal(r.deleteAtUs, 30 + T.deletePeriodUs);
  assert.equal(core.lookup(9, 30), undefined);
  assert.equal(route(core, 9, 30 + T.deletePeriodUs), undefined, 'forgotten after DELETE_PERIOD');
});

test('several precursors: the RERR is broadcast', () => {
  const core = relay([3]);
  const acts = core.linkFailed(6, 30);
  assert.deepEqual(
    sends(acts).map((s) => s.to),
    [BROADCAST],
  );
  assert.equal(core.counters.rerrSent, 1);
});

test('a broken link with an alternate left: failover, no RERR, no discovery', () => {
  const core = relay([3]);
  core.handle(rrep({ dstSeq: 3, hopCount: 1, lastHop: 10 }), 7, 15);
  assert.equal(core.lookup(9, 20)!.nextHop, 6);
  const acts = core.linkFailed(6, 30);
  assert.deepEqual(acts, [
    { kind: 'neighbour-lost', addr: 6 },
    { kind: 'route-lost', dst: 6 }, // the neighbour itself, not 9
  ]);
  assert.equal(core.lookup(9, 30)!.nextHop, 7);
  assert.equal(core.counters.failovers, 1);
  assert.equal(route(core, 9, 30)!.seq, 3);
});

test('RERR from the next hop: paths through it go, a stale RERR changes nothing, the RERR travels on', () => {
  let core = relay();
  let acts = core.handle({ type: 'rerr', noDelete: false, unreachable: [{ dst: 9, dstSeq: 2 }] }, 6, 30);
  assert.deepEqual(kinds(acts), [], 'a stale RERR: no action');
  assert.equal(core.counters.staleRejected, 1);
  assert.equal(core.lookup(9, 30)!.nextHop, 6);
  acts = core.handle({ type: 'rerr', noDelete: false, unreachable: [{ dst: 9, dstSeq: 7 }] }, 6, 40);
  assert.deepEqual(kinds(acts), ['route-lost', 'send:rerr']);
  assert.equal(route(core, 9, 40)!.seq, 7, 'the RERR number, newer than own + 1');
  assert.deepEqual((sends(acts)[0]!.msg as Rerr).unreachable, [{ dst: 9, dstSeq: 7 }]);
  // A RERR from a node that is not the next hop is ignored; an unknown number (0) applies.
  core = relay();
  core.handle({ type: 'rerr', noDelete: false, unreachable: [{ dst: 9, dstSeq: 9 }] }, 7, 30);
  assert.equal(core.lookup(9, 30)!.nextHop, 6);
  acts = core.handle({ type: 'rerr', noDelete: false, unreachable: [{ dst: 9, dstSeq: 0 }] }, 6, 40);
  assert.ok(acts.some((a) => a.kind === 'route-lost'));
  assert.equal(route(core, 9, 40)!.seq, 4);
});

test('data with no route: RERR to the previous hop (RFC 3561 6.11 (ii))', () => {
  const { core } = single(5);
  let acts = core.noRoute(9, 3, 0);
  assert.deepEqual(sends(acts), [{ kind: 'send', to: 3, msg: { type: 'rerr', noDelete: false, unreachable: [{ dst: 9, dstSeq: 0 }] } }]);
  const c2 = relay();
  c2.linkFailed(6, 30);
  acts = c2.noRoute(9, 3, 40);
  assert.deepEqual((sends(acts)[0]!.msg as Rerr).unreachable, [{ dst: 9, dstSeq: 4 }]);
  assert.deepEqual(relay().noRoute(9, 3, 40), [], 'nothing while a route is valid');
});

test('packets in flight when the route broke draw one RERR per neighbour per rate slot, not one each', () => {
  const core = relay();
  const acts = core.linkFailed(6, 30);
  assert.equal(sends(acts).filter((s) => s.to === 1).length, 1);
  assert.deepEqual(core.noRoute(9, 1, 30), [], 'just told');
  assert.deepEqual(core.noRoute(9, 1, 30 + 99_999), []);
  assert.equal(sends(core.noRoute(9, 1, 30 + 100_000)).length, 1, 'told again: the first RERR may have been lost');
  assert.equal(sends(core.noRoute(9, 2, 30 + 100_000)).length, 1, 'another neighbour is told at once');
});

test('RERR_RATELIMIT: extra RERRs wait for room in the one-second window, merged per neighbour', () => {
  const { core } = single(5);
  let now = 0;
  let immediate = 0;
  for (let d = 100; d < 115; d++) immediate += sends(core.noRoute(d, 3, now)).length;
  assert.equal(immediate, 10);
  assert.equal(core.counters.rerrRateLimited, 5);
  // The five that wait for neighbour 3 leave as one RERR naming all five destinations.
  const later: Array<{ at: Micros; dsts: number[] }> = [];
  while ((now = core.nextDeadline()!) <= 2_000_000) {
    for (const m of msgs(core.tick(now), 'rerr')) later.push({ at: now, dsts: m.unreachable.map((u) => u.dst) });
  }
  assert.deepEqual(later, [{ at: 1_000_000, dsts: [110, 111, 112, 113, 114] }]);
});

test('the RERR queue is bounded: one message per waiting neighbour, at most 255 destinations in it', () => {
  const { core } = single(5);
  for (let d = 0; d < 10; d++) core.noRoute(100 + d, 3, 0); // fills the window
  for (let d = 0; d < 300; d++) core.noRoute(1000 + d, 3, 0);
  assert.equal(core.counters.rerrDropped, 300 - 255);
  const later = msgs(core.tick(1_000_000), 'rerr');
  assert.equal(later.length, 1, 'one RERR');
  assert.equal(later[0]!.unreachable.length, 255);
});

test('HELLO: every interval with jitter, carrying the R1 channel, workload and own sequence number', () => {
  const { core } = single(5, { broadcastJitterUs: 10 * MS }, 100 * MS);
  assert.deepEqual(core.tick(100 * MS - 1), []);
  const times: Micros[] = [];
  let now = 0;
  let h: Hello | undefined;
  while (times.length < 5) {
    now = core.nextDeadline()!;
    if (now > 0) assert.deepEqual(core.tick(now - 1), []);
    for (const m of msgs(core.tick(now), 'hello')) {
      times.push(now);
      h = m;
    }
  }
  for (let i = 0; i < 5; i++) {
    const base = 100 * MS + i * 1_000_000;
    assert.ok(times[i]! >= base && times[i]! <= base + 10 * MS, `HELLO ${i} at ${times[i]}`);
  }
  assert.deepEqual(h, { type: 'hello', src: 5, seq: 1, r1Channel: 6, workload: [{ channel: 6, w: 0.25, windows: 100 }], neighbours: [] });
  assert.equal(core.counters.helloSent, 5);
  // announce() sends one at once and restarts the interval.
  const a = core.announce(now + 300 * MS);
  assert.equal(msgs(a, 'hello').length, 1);
  assert.ok(core.nextDeadline()! >= now + 1300 * MS);
});

test('a HELLO makes a neighbour and a 1-hop route with its sequence number; silence loses it after ALLOWED_HELLO_LOSS intervals', () => {
  const { core } = single(5);
  core.tick(0);
  const acts = core.handle(hello(7, 4, 11), 7, 500 * MS);
  assert.deepEqual(kinds(acts), ['neighbour-up', 'hello-heard']);
  assert.deepEqual(core.neighbours(500 * MS), [{ addr: 7, lastHeardUs: 500 * MS, r1Channel: 11, lostAtUs: 2500 * MS }]);
  assert.deepEqual(core.lookup(7, 500 * MS), { nextHop: 7, hopCount: 1, pathCost: 1 });
  assert.equal(route(core, 7, 500 * MS)!.seq, 4);
  // Any message counts as hearing it.
  core.handle({ type: 'rerr', noDelete: false, unreachable: [{ dst: 44, dstSeq: 1 }] }, 7, 1200 * MS);
  const lost = 1200 * MS + T.neighbourLossUs;
  let now = 1200 * MS;
  const seen: string[] = [];
  while (now < lost) {
    now = core.nextDeadline()!;
    assert.ok(now <= lost);
    seen.push(...kinds(core.tick(now)).map((k) => `${now}:${k}`));
  }
  assert.deepEqual(
    seen.filter((k) => !k.endsWith('send:hello')),
    [`${lost}:neighbour-lost`, `${lost}:route-lost`],
  );
  assert.deepEqual(core.neighbours(lost), []);
  assert.equal(core.lookup(7, lost), undefined);
});

test('routes expire after their lifetime unless data refreshes them', () => {
  const { core } = single(1);
  core.handle(rrep({ dst: 9, dstSeq: 5, orig: 1, hopCount: 2, lastHop: 8, lifetimeMs: 6000 }), 2, 0);
  assert.equal(core.lookup(9, 6_000_000 - 1)?.nextHop, 2);
  assert.equal(core.lookup(9, 6_000_000), undefined);
  const r = route(core, 9, 6_000_000)!;
  assert.equal(r.state, 'invalid');
  assert.equal(r.seq, 6, 'incremented on expiry (see the AOMDV note in the report)');
  assert.equal(route(core, 2, 6_000_000)!.state, 'invalid', 'the 1-hop route to 2 expired too');
  // With data going through it every second the route lives on.
  const { core: c2 } = single(1);
  c2.handle(rrep({ dst: 9, dstSeq: 5, orig: 1, hopCount: 2, lastHop: 8, lifetimeMs: 6000 }), 2, 0);
  for (let t = 1_000_000; t <= 20_000_000; t += 1_000_000) {
    assert.equal(c2.lookup(9, t)?.nextHop, 2, `valid at ${t}`);
    c2.forwarding(9, undefined, 2, t);
  }
  assert.equal(c2.lookup(9, 20_000_000 + T.neighbourLossUs - 1)?.nextHop, 2);
  assert.equal(c2.lookup(9, 20_000_000 + DEFAULT_AODV_PARAMS.activeRouteTimeoutUs), undefined);
});

test('forwarding records the previous hop as a precursor', () => {
  const core = relay([3, 4]);
  assert.deepEqual(route(core, 9, 20)!.precursors, [1, 3, 4]);
});

test('setParams applies live', () => {
  const { core } = single(5);
  core.tick(0);
  assert.equal(core.nextDeadline(), 1_000_000);
  core.setParams({ helloIntervalUs: 200_000 }, 100_000);
  assert.equal(core.nextDeadline(), 300_000);
  core.setParams({ destinationOnly: true }, 100_000);
  assert.equal(msgs(core.discover(9, 100_000), 'rreq')[0]!.destinationOnly, true);
});

test('the node itself never appears as a destination or next hop', () => {
  const { core } = single(5);
  core.handle(rreq({ orig: 5 }), 1, 0);
  core.handle(rrep({ dst: 5 }), 1, 0);
  core.handle(hello(5, 3), 5, 0);
  for (const r of core.routes(0)) {
    assert.notEqual(r.dst, 5);
    for (const p of r.paths) assert.notEqual(p.nextHop, 5);
  }
});
