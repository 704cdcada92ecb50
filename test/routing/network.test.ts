import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BROADCAST, type NodeAddr } from '../../src/wire/mesh.js';
import { chainLinks, TestNet } from './harness.js';

const MS = 1_000;
const S = 1_000_000;

const route = (net: TestNet, at: NodeAddr, dst: NodeAddr) =>
  net
    .node(at)
    .routes(net.now)
    .find((r) => r.dst === dst);
const rreqTtls = (net: TestNet, a: NodeAddr, since = 0) =>
  net
    .sentBy(a, 'rreq')
    .filter((s) => s.msg.orig === a && s.atUs >= since)
    .map((s) => s.msg.ttl);
const rreqCount = (net: TestNet, since: number) => net.sent.filter((s) => s.msg.type === 'rreq' && s.atUs >= since).length;

test('discovery on a chain of 5 with destination-only RREQs: the ring grows 1, 3, 5; routes both ways with hop counts', () => {
  const net = new TestNet({ nodes: 5, links: chainLinks(5), seed: 3, params: { destinationOnly: true } });
  net.run(100 * MS);
  net.discover(1, 5);
  net.runFor(2 * S);
  assert.deepEqual(rreqTtls(net, 1), [1, 3, 5]);
  assert.equal(net.actionsOf(1, 'route-found').length, 1);
  assert.deepEqual(net.pathOf(1, 5), [1, 2, 3, 4, 5]);
  assert.deepEqual(net.pathOf(5, 1), [5, 4, 3, 2, 1]);
  assert.equal(net.node(1).lookup(5, net.now)?.hopCount, 4);
  assert.equal(net.node(5).lookup(1, net.now)?.hopCount, 4);
  assert.deepEqual(
    [2, 3, 4].map((x) => [net.node(x).lookup(5, net.now)?.hopCount, net.node(x).lookup(1, net.now)?.hopCount]),
    [
      [3, 1],
      [2, 2],
      [1, 3],
    ],
  );
  // The RREQ TTL 3 ring does not reach 5; only the TTL 5 one does, and 5 answers once.
  assert.equal(net.sentBy(5, 'rrep').length, 1);
  net.sendData(1, 5);
  net.runFor(100 * MS);
  assert.deepEqual(net.delivered[0]!.pkt.path, [1, 2, 3, 4, 5]);
});

test('discovery on a chain of 5: a relay that knows the destination answers from its table', () => {
  const net = new TestNet({ nodes: 5, links: chainLinks(5), seed: 4 });
  net.run(100 * MS); // HELLOs: 4 now has a route to its neighbour 5 with 5's sequence number
  net.discover(1, 5);
  net.runFor(2 * S);
  assert.deepEqual(rreqTtls(net, 1), [1, 3]);
  assert.equal(net.node(4).counters.intermediateReplies, 1);
  assert.equal(net.sentBy(5, 'rrep').length, 0);
  assert.deepEqual(net.pathOf(1, 5), [1, 2, 3, 4, 5]);
  assert.equal(net.node(1).lookup(5, net.now)?.hopCount, 4);
  assert.equal(net.node(5).lookup(1, net.now), undefined, 'the destination did not see the RREQ');
});

test('RREQ retried after RING_TRAVERSAL_TIME and not before; route-failed after the retries when the destination is absent', () => {
  const net = new TestNet({ nodes: 4, links: chainLinks(4), seed: 5 });
  net.run(100 * MS);
  const t0 = net.now;
  net.discover(1, 42);
  net.runFor(30 * S);
  const times = net
    .sentBy(1, 'rreq')
    .filter((s) => s.msg.orig === 1)
    .map((s) => (s.atUs - t0) / MS);
  // Each RREQ leaves 0-10 ms (broadcast jitter) after its turn, and the wait runs from when it left:
  // ring waits of 240, 400, 560, 720 ms (TTL 1, 3, 5, 7), then 2.8 and 5.6 s at NET_DIAMETER.
  assert.equal(times.length, 7);
  assert.ok(times[0]! >= 0 && times[0]! <= 10, `first at ${times[0]} ms`);
  const waits = [240, 400, 560, 720, 2800, 5600];
  waits.forEach((w, i) => {
    const gap = times[i + 1]! - times[i]!;
    assert.ok(gap >= w && gap <= w + 10, `gap ${i}: ${gap} ms, expected ${w}-${w + 10}`);
  });
  const failed = net.actionsOf(1, 'route-failed');
  assert.equal(failed.length, 1);
  assert.equal((failed[0]!.atUs - t0) / MS, times[6]! + 11200, 'route-failed 11.2 s after the last RREQ');
  assert.equal(net.node(1).counters.discoveriesFailed, 1);
});

test('duplicate RREQs are suppressed: each node forwards a RREQ once however many copies it hears', () => {
  // 1 reaches 4 through 2 and through 3; 4 hears every RREQ twice.
  const net = new TestNet({
    nodes: 5,
    links: [
      [1, 2],
      [1, 3],
      [2, 4],
      [3, 4],
      [4, 5],
    ],
    seed: 6,
    params: { destinationOnly: true },
  });
  net.run(100 * MS);
  net.discover(1, 42);
  net.runFor(25 * S);
  for (const x of [2, 3, 4, 5]) {
    const ids = net.sentBy(x, 'rreq').map((s) => s.msg.rreqId);
    assert.equal(new Set(ids).size, ids.length, `node ${x} forwarded a RREQ twice`);
  }
  // TTL >= 3 RREQs reach 4 through both 2 and 3.
  assert.equal(net.sentBy(4, 'rreq').length, 6);
  assert.ok(net.node(4).counters.duplicatesDropped >= 6);
});

/** 1 to 6 over two link-disjoint 3-hop paths: 1-2-4-6 and 1-3-5-6. */
function ladder(seed: number) {
  const net = new TestNet({
    nodes: 6,
    links: [
      [1, 2],
      [2, 4],
      [4, 6],
      [1, 3],
      [3, 5],
      [5, 6],
    ],
    seed,
    params: { destinationOnly: true },
  });
  net.run(100 * MS);
  net.discover(1, 6);
  net.runFor(1 * S);
  return net;
}

test('multipath: the source keeps two link-disjoint paths to the destination, the destination two back', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const net = ladder(seed);
    const r = route(net, 1, 6)!;
    assert.equal(r.paths.length, 2, `seed ${seed}`);
    assert.deepEqual(r.paths.map((p) => p.nextHop).sort(), [2, 3]);
    assert.deepEqual(r.paths.map((p) => p.lastHop).sort(), [4, 5]);
    assert.ok(r.paths.every((p) => p.hopCount === 3));
    assert.equal(net.sentBy(6, 'rrep').length, 2, 'the destination answered both copies');
    const back = route(net, 6, 1)!;
    assert.deepEqual(back.paths.map((p) => p.nextHop).sort(), [4, 5]);
    assert.deepEqual(back.paths.map((p) => p.lastHop).sort(), [2, 3]);
  }
});

test('failover: the chosen next hop breaks, traffic takes the alternate with no RREQ and no RERR', () => {
  const net = ladder(7);
  for (let i = 0; i < 5; i++) {
    net.sendData(1, 6);
    net.runFor(50 * MS);
  }
  const first = net.node(1).lookup(6, net.now)!.nextHop;
  const other = first === 2 ? 3 : 2;
  const since = net.now;
  net.disconnect(1, first);
  for (let i = 0; i < 5; i++) {
    net.sendData(1, 6);
    net.runFor(50 * MS);
  }
  assert.equal(net.delivered.length, 10, 'nothing lost');
  assert.ok(net.delivered.slice(5).every((d) => d.pkt.path[1] === other));
  assert.equal(rreqCount(net, since), 0);
  assert.equal(net.sent.filter((s) => s.msg.type === 'rerr' && s.atUs >= since).length, 0);
  assert.equal(net.node(1).counters.failovers, 1);
  assert.deepEqual(
    net.actionsOf(1, 'route-lost').map((l) => l.action),
    [{ kind: 'route-lost', dst: first }],
    'only the route to the lost neighbour itself',
  );
});

test('an active route keeps its alternates at the source; one gone stale downstream costs a packet and a rediscovery', () => {
  const net = ladder(8);
  // Traffic for far longer than ACTIVE_ROUTE_TIMEOUT: only one path is used.
  for (let i = 0; i < 200; i++) {
    net.sendData(1, 6);
    net.runFor(50 * MS);
  }
  const r = route(net, 1, 6)!;
  assert.equal(r.paths.length, 2, 'the unused alternate is still there after 10 s of traffic');
  const first = net.node(1).lookup(6, net.now)!.nextHop;
  const since = net.now;
  net.disconnect(1, first);
  for (let i = 0; i < 10; i++) {
    net.sendData(1, 6);
    net.runFor(100 * MS);
  }
  // The alternate's relay forgot its route meanwhile (nothing used it): it drops the
  // packet, answers with a RERR, and the source finds the route again.
  assert.ok(net.dropped.length <= 1, JSON.stringify(net.dropped.map((d) => [d.node, d.reason])));
  assert.ok(net.dropped.every((d) => d.reason === 'no-route' && d.node !== 1));
  assert.ok(net.delivered.length >= 209, `delivered ${net.delivered.length}`);
  assert.ok(rreqCount(net, since) > 0 ? net.node(1).counters.discoveriesFound >= 2 : true);
});

test('failover after a RERR: a break further down removes one path at the source, the other carries on', () => {
  const net = ladder(8);
  net.sendData(1, 6);
  net.runFor(50 * MS);
  const via = net.node(1).lookup(6, net.now)!.nextHop;
  const [mid, other] = via === 2 ? [4, 3] : [5, 2];
  const since = net.now;
  net.disconnect(mid, 6);
  for (let i = 0; i < 4; i++) {
    net.sendData(1, 6);
    net.runFor(50 * MS);
  }
  // The first packet after the break is lost at `mid`, which tells `via`, which tells 1.
  assert.equal(net.dropped.length, 1);
  assert.equal(net.delivered.length, 4);
  assert.equal(net.delivered.at(-1)!.pkt.path[1], other);
  assert.equal(rreqCount(net, since), 0);
  assert.equal(net.sentBy(mid, 'rerr').length, 1);
  assert.equal(net.sentBy(via, 'rerr').length, 1);
  assert.equal(net.node(1).counters.failovers, 1);
  assert.equal(net.actionsOf(1, 'route-lost').length, 0);
});

test('RERR and repair: the last path breaks, the RERR reaches the source, a new discovery finds the way around', () => {
  // 1-2-3-4-5, and 6 which will bridge 3 and 4.
  const net = new TestNet({ nodes: 6, links: chainLinks(5), seed: 9 });
  net.run(100 * MS);
  net.sendData(1, 5);
  net.runFor(1 * S);
  assert.equal(net.delivered.length, 1);
  net.disconnect(3, 4);
  net.connect(3, 6);
  net.connect(6, 4);
  net.runFor(1100 * MS); // HELLOs introduce 6
  const since = net.now;
  net.sendData(1, 5); // lost at 3, which reports it
  net.runFor(100 * MS);
  const lost = net.actionsOf(1, 'route-lost').filter((l) => l.action.kind === 'route-lost' && l.action.dst === 5);
  assert.equal(lost.length, 1);
  assert.ok(net.node(1).counters.rerrReceived >= 1);
  const rerr3 = net.sentBy(3, 'rerr').filter((s) => s.atUs >= since)[0]!;
  assert.equal(rerr3.to, 2, 'unicast to the single precursor');
  assert.ok(rerr3.msg.unreachable.some((u) => u.dst === 5));
  assert.equal(route(net, 1, 5)!.state, 'invalid');
  net.sendData(1, 5);
  net.runFor(2 * S);
  assert.ok(rreqCount(net, since) > 0);
  assert.deepEqual(net.pathOf(1, 5), [1, 2, 3, 6, 4, 5]);
  assert.equal(net.node(1).lookup(5, net.now)?.hopCount, 5);
  assert.deepEqual(net.delivered.at(-1)!.pkt.path, [1, 2, 3, 6, 4, 5]);
  // The repair asked for a newer number than the broken route's, and 5 took it.
  assert.equal(route(net, 1, 5)!.seq, net.node(5).ownSeq);
});

test('neighbour loss by HELLO silence, not before ALLOWED_HELLO_LOSS intervals', () => {
  for (const allowedHelloLoss of [2, 3]) {
    const net = new TestNet({ nodes: 2, links: [[1, 2]], seed: 10, params: { allowedHelloLoss } });
    net.run(10 * S);
    assert.equal(net.actionsOf(1, 'neighbour-lost').length, 0, 'jittered HELLOs keep the neighbour');
    assert.equal(net.actionsOf(1, 'neighbour-up').length, 1);
    net.disconnect(1, 2);
    const heard = net.node(1).neighbours(net.now)[0]!.lastHeardUs;
    net.runFor(5 * S);
    const lost = net.actionsOf(1, 'neighbour-lost');
    assert.equal(lost.length, 1);
    assert.equal(lost[0]!.atUs, heard + allowedHelloLoss * S);
    assert.equal(net.node(1).neighbours(net.now).length, 0);
    assert.equal(net.node(1).lookup(2, net.now), undefined);
  }
});

test('route expiry: an unused route dies with its lifetime; one carrying data lives on', () => {
  const net = new TestNet({ nodes: 4, links: chainLinks(4), seed: 11, params: { destinationOnly: true } });
  net.run(100 * MS);
  net.discover(1, 4);
  net.runFor(500 * MS);
  const r = route(net, 1, 4)!;
  const expires = r.paths[0]!.expiresUs;
  const seq = r.seq!;
  net.run(expires - 1);
  assert.equal(net.node(1).lookup(4, net.now)?.nextHop, 2);
  net.run(expires);
  assert.equal(net.node(1).lookup(4, net.now), undefined);
  assert.equal(route(net, 1, 4)!.seq, seq + 1);
  // Data every 500 ms keeps a route alive well past MY_ROUTE_TIMEOUT.
  net.discover(1, 4);
  net.runFor(1 * S);
  const start = net.now;
  while (net.now < start + 20 * S) {
    net.sendData(1, 4);
    net.runFor(500 * MS);
  }
  assert.equal(net.dropped.length, 0);
  assert.equal(net.delivered.length, 40);
  assert.equal(net.node(1).lookup(4, net.now)?.hopCount, 3);
  assert.equal(rreqCount(net, start), 0);
});

test('path decision: the cheaper path carries the traffic and a costlier link moves it only beyond the hysteresis', () => {
  // 1 to 4 through 2 or 3; 1 sees 1.0 towards 2 and 1.2 towards 3.
  const net = new TestNet({
    nodes: 4,
    links: [
      [1, 2],
      [2, 4],
      [1, 3],
      [3, 4],
    ],
    seed: 12,
    params: { destinationOnly: true },
  });
  net.setCost(1, 3, 1.2);
  net.run(100 * MS);
  net.discover(1, 4);
  net.runFor(500 * MS);
  const r = route(net, 1, 4)!;
  assert.deepEqual(
    r.paths.map((p) => [p.nextHop, p.pathCost]),
    [
      [2, 2],
      [3, 2.2],
    ],
  );
  const hop = () => net.node(1).lookup(4, net.now)!.nextHop;
  assert.equal(hop(), 2);
  net.setCost(1, 2, 1.3); // 2.3 against 2.2: within 10 %
  assert.equal(hop(), 2);
  net.setCost(1, 2, 1.6); // 2.6 against 2.2: beyond
  assert.equal(hop(), 3);
  net.setCost(1, 2, 1.1); // 2.1 against 2.2: within, 3 stays
  assert.equal(hop(), 3);
  net.setCost(1, 2, 1);
  net.setCost(1, 3, 3);
  assert.equal(hop(), 2);
  net.sendData(1, 4);
  net.runFor(50 * MS);
  assert.deepEqual(net.delivered[0]!.pkt.path, [1, 2, 4]);
});

test('path cost adds up the links along the path, as RREQs and RREPs accumulate it', () => {
  // 1-2-4 with a busy link 2>4, 1-3-4 clean.
  const net = new TestNet({
    nodes: 4,
    links: [
      [1, 2],
      [2, 4],
      [1, 3],
      [3, 4],
    ],
    seed: 13,
    params: { destinationOnly: true },
  });
  net.setCost(2, 4, 3);
  net.setCost(4, 2, 2.5);
  net.run(100 * MS);
  net.discover(1, 4);
  net.runFor(500 * MS);
  const r = route(net, 1, 4)!;
  assert.deepEqual(
    r.paths.map((p) => [p.nextHop, p.pathCost]),
    [
      [3, 2],
      [2, 4],
    ],
  );
  assert.equal(net.node(1).lookup(4, net.now)!.nextHop, 3);
  // Reverse paths at 4 carry the costs towards 1: 4>2 is 2.5.
  const back = route(net, 4, 1)!;
  assert.deepEqual(
    back.paths.map((p) => [p.nextHop, p.pathCost]),
    [
      [3, 2],
      [2, 3.5],
    ],
  );
});

test('nothing happens when nothing should: a quiet network only says HELLO, and tick before a deadline returns []', () => {
  const net = new TestNet({ nodes: 4, links: chainLinks(4), seed: 14 });
  net.run(10 * S);
  const types = new Set(net.sent.map((s) => s.msg.type));
  assert.deepEqual([...types], ['hello']);
  assert.ok(net.sent.every((s) => s.to === BROADCAST));
  for (const a of net.addrs) {
    const c = net.node(a);
    const due = c.nextDeadline()!;
    assert.ok(due > net.now);
    assert.deepEqual(c.tick(net.now), []);
    assert.deepEqual(c.tick(due - 1), []);
    assert.equal(c.nextDeadline(), due);
  }
});
