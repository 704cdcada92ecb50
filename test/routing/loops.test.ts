import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { seqNewer, type AodvParams } from '../../src/routing/aodv.js';
import type { NodeAddr } from '../../src/wire/mesh.js';
import { TestNet } from './harness.js';

/**
 * Loop freedom under churn: random topologies, random delays (copies overtake
 * each other), lost broadcasts, links that come and go, discoveries and data
 * from random sources. After every event of the simulation, for every
 * destination, the graph of next hops over all valid paths (not only the
 * chosen ones) must have no cycle; sequence numbers never go back; no node
 * routes to or through itself; a core asked to tick before its deadline does
 * nothing.
 */

const MS = 1_000;
const S = 1_000_000;
/** A longer soak: COGMESH_LOOP_SEEDS=500 node --import tsx --test test/routing/loops.test.ts */
const SEEDS = Number(process.env['COGMESH_LOOP_SEEDS'] ?? 12);
const FIRST_SEED = Number(process.env['COGMESH_LOOP_FIRST_SEED'] ?? 1);

interface Scenario {
  net: TestNet;
  events: number;
  checks: number;
}

function scenario(seed: number, durationUs: number): Scenario {
  const rng = Rng.fromSeed(seed).fork('scenario');
  const n = rng.int(5, 9);
  const pos = Array.from({ length: n }, () => [rng.next(), rng.next()] as const);
  const links: Array<[NodeAddr, NodeAddr]> = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const [xi, yi] = pos[i]!;
      const [xj, yj] = pos[j]!;
      if (Math.hypot(xi - xj, yi - yj) < 0.5) links.push([i + 1, j + 1]);
    }
  }
  const fast = rng.next() < 0.5;
  const params: Partial<AodvParams> = {
    maxPaths: rng.int(1, 4),
    destinationOnly: rng.next() < 0.3,
    pathHysteresis: rng.next() < 0.5 ? 0 : 0.1,
    // Short lifetimes half of the time, so that routes expire and are forgotten while the run goes on.
    ...(fast ? { helloIntervalUs: 300 * MS, activeRouteTimeoutUs: 800 * MS, nodeTraversalUs: 10 * MS, netDiameter: 10 } : {}),
  };
  const net = new TestNet({
    nodes: n,
    links,
    seed,
    params,
    delayUs: [200, 8 * MS],
    loss: rng.next() * 0.15,
    unicastLoss: rng.next() * 0.05,
    macFailUs: rng.int(0, 5 * MS),
    startUs: () => rng.int(0, 500 * MS),
  });
  for (let a = 1; a <= n; a++) for (let b = 1; b <= n; b++) if (a !== b && rng.next() < 0.3) net.setCost(a, b, 1 + rng.next() * 3);

  const s: Scenario = { net, events: 0, checks: 0 };
  /** Per node, per destination: the last sequence number seen and when the entry was due to be forgotten. */
  const lastSeq = new Map<NodeAddr, Map<NodeAddr, { seq: number; deleteAtUs: number | undefined }>>();
  const lastOwn = new Map<NodeAddr, number>();
  const check = (): void => {
    s.events++;
    const now = net.now;
    const next = new Map<NodeAddr, Map<NodeAddr, NodeAddr[]>>(); // dst -> node -> next hops of all valid paths
    const chosen = new Map<NodeAddr, Map<NodeAddr, NodeAddr[]>>(); // dst -> node -> the chosen next hop
    for (const a of net.addrs) {
      const core = net.node(a);
      const own = core.ownSeq;
      const prevOwn = lastOwn.get(a);
      if (prevOwn !== undefined && seqNewer(prevOwn, own)) assert.fail(`seed ${seed}: own sequence number of ${a} went back`);
      lastOwn.set(a, own);
      const seqs = lastSeq.get(a) ?? new Map<NodeAddr, { seq: number; deleteAtUs: number | undefined }>();
      const present = new Map<NodeAddr, { seq: number; deleteAtUs: number | undefined }>();
      const maxPaths = core.params.maxPaths;
      for (const r of core.routes(now)) {
        if (r.dst === a) assert.fail(`seed ${seed}: ${a} has a route to itself`);
        if (r.seq !== undefined) {
          const prev = seqs.get(r.dst);
          // An invalid route forgotten after DELETE_PERIOD may come back with any number.
          const forgotten = prev?.deleteAtUs !== undefined && prev.deleteAtUs <= now;
          if (prev !== undefined && !forgotten && seqNewer(prev.seq, r.seq)) {
            assert.fail(`seed ${seed}: ${a}'s number for ${r.dst} went back from ${prev.seq} to ${r.seq}`);
          }
          present.set(r.dst, { seq: r.seq, deleteAtUs: r.deleteAtUs });
        }
        if (r.paths.length === 0) continue;
        if (r.paths.length > maxPaths) assert.fail(`seed ${seed}: more than maxPaths paths`);
        const hops: NodeAddr[] = [];
        for (const p of r.paths) {
          if (p.nextHop === a) assert.fail(`seed ${seed}: ${a} routes through itself`);
          if (!(p.expiresUs > now)) assert.fail(`seed ${seed}: an expired path is shown as valid`);
          for (const q of r.paths) {
            if (q !== p && (q.nextHop === p.nextHop || q.lastHop === p.lastHop)) assert.fail(`seed ${seed}: paths of ${a} to ${r.dst} not link-disjoint`);
          }
          hops.push(p.nextHop);
        }
        let g = next.get(r.dst);
        if (!g) next.set(r.dst, (g = new Map()));
        g.set(a, hops);
        if (r.chosen !== undefined) {
          let c = chosen.get(r.dst);
          if (!c) chosen.set(r.dst, (c = new Map()));
          c.set(a, [r.chosen]);
        }
      }
      lastSeq.set(a, present);
      // Before its deadline a core has nothing to do.
      if ((s.events + a) % 5 === 0) {
        const due = core.nextDeadline();
        if (due !== undefined && due > now) {
          const acts = core.tick(now);
          if (acts.length > 0) assert.fail(`seed ${seed}: tick before the deadline did ${JSON.stringify(acts)}`);
        }
      }
    }
    for (const [dst, g] of next) {
      const cycle = findCycle(g);
      if (cycle) assert.fail(`seed ${seed} at ${now} us: routing loop towards ${dst}: ${cycle.join(' -> ')}`);
    }
    for (const [dst, g] of chosen) {
      if (findCycle(g)) assert.fail(`seed ${seed}: chosen next hops loop towards ${dst}`);
    }
    s.checks++;
  };
  net.afterEvent = check;

  // Churn: every 10-250 ms something happens.
  let t = 300 * MS;
  while (t < durationUs) {
    const at = t;
    const x = rng.next();
    const a = rng.int(1, n);
    let b = rng.int(1, n - 1);
    if (b >= a) b++;
    if (x < 0.25) {
      net.at(at, () => (net.adjacent(a, b) ? net.disconnect(a, b) : net.connect(a, b)));
    } else if (x < 0.4) {
      net.at(at, () => void net.discover(a, b));
    } else if (x < 0.45) {
      const c = rng.int(1, n);
      const w = 1 + rng.next() * 3;
      net.at(at, () => net.setCost(a, c, w));
    } else {
      const burst = rng.int(1, 5);
      net.at(at, () => {
        for (let i = 0; i < burst; i++) net.sendData(a, b);
      });
    }
    t += rng.int(10 * MS, 250 * MS);
  }
  net.run(durationUs);
  return s;
}

/** A cycle in a next-hop graph, or undefined. */
function findCycle(g: Map<NodeAddr, NodeAddr[]>): NodeAddr[] | undefined {
  const state = new Map<NodeAddr, 1 | 2>(); // 1 on the stack, 2 done
  const stack: NodeAddr[] = [];
  const visit = (v: NodeAddr): NodeAddr[] | undefined => {
    state.set(v, 1);
    stack.push(v);
    for (const w of g.get(v) ?? []) {
      const st = state.get(w);
      if (st === 1) return [...stack.slice(stack.indexOf(w)), w];
      if (st === undefined) {
        const c = visit(w);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(v, 2);
    return undefined;
  };
  for (const v of g.keys()) {
    if (state.get(v) === undefined) {
      const c = visit(v);
      if (c) return c;
    }
  }
  return undefined;
}

test('the cycle finder finds cycles', () => {
  assert.equal(
    findCycle(
      new Map([
        [1, [2]],
        [2, [3]],
        [3, []],
      ]),
    ),
    undefined,
  );
  assert.deepEqual(
    findCycle(
      new Map([
        [1, [2]],
        [2, [3, 4]],
        [4, [2]],
      ]),
    ),
    [2, 4, 2],
  );
});

test('loop freedom under churn: random topologies, delays, losses and link breaks, checked after every event', () => {
  let events = 0;
  let delivered = 0;
  let sent = 0;
  let failovers = 0;
  let expired = 0;
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    const s = scenario(seed, 30 * S);
    events += s.events;
    delivered += s.net.delivered.length;
    sent += s.net.delivered.length + s.net.dropped.length;
    for (const c of s.net.nodes.values()) {
      failovers += c.counters.failovers;
      expired += c.counters.routesExpired;
    }
    // A packet that ran out of TTL would have been going round in circles.
    assert.equal(s.net.dropped.filter((d) => d.reason === 'ttl').length, 0, `seed ${seed}: data looped`);
    assert.equal(s.checks, s.events);
  }
  // The runs did exercise the protocol.
  assert.ok(events > 2_000 * SEEDS, `${events} events`);
  assert.ok(delivered > sent / 3, `${delivered} of ${sent} packets delivered`);
  assert.ok(failovers > 0 && expired > 0);
});
