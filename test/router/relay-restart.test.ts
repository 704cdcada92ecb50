import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AirMedium } from '../../radio/medium/index.js';
import type { Station, StationHost } from '../../radio/medium/types.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { Rng } from '../../src/core/rng.js';
import { seconds, US_PER_MS, type Micros } from '../../src/core/time.js';
import type { NodeConfig } from '../../src/config/types.js';
import { aodvTimes } from '../../src/routing/aodv.js';
import { MeshRouter, type RouterParts } from '../../src/router/router.js';
import { routersAt } from '../support/star.js';

/**
 * A relay that restarts, in virtual time: router 1 of the chain 0 - 1 - 2
 * fails, and a new router 1 (fresh state: no routes, no neighbours, its
 * sequence numbers from 1, no neighbour's R1 channel known) joins the air
 * later, as a restarted router process joins the medium. Traffic from 0 to
 * 2 flows again within two HELLO intervals plus one route discovery.
 */

const POSITIONS = [
  { xM: 0, yM: 0 },
  { xM: 200, yM: 0 },
  { xM: 400, yM: 0 },
];

/** The air as routers attach to it, each run of a router under ids of its own (as the medium process names them), with a way to take a run's radios off it. */
function incarnations(medium: AirMedium): { host: (i: number) => StationHost; detach: (i: number) => void } {
  const runs = new Map<number, number>();
  const stations = new Map<number, Station[]>();
  return {
    host: (i) => {
      const run = (runs.get(i) ?? 0) + 1;
      runs.set(i, run);
      stations.set(i, []);
      return {
        addStation: (spec, handlers) => {
          const st = medium.addStation({ ...spec, id: `${spec.id}#${run}` }, handlers);
          stations.get(i)!.push(st);
          return st;
        },
      };
    },
    detach: (i) => {
      for (const st of stations.get(i) ?? []) st.detach();
      stations.set(i, []);
    },
  };
}

/** The chain with a UDP flow from 0 to 2 (a packet every 50 ms from 3 s), and a way to restart router 1. */
function chain(seed: number, config?: (cfg: NodeConfig, i: number) => NodeConfig) {
  let air: ReturnType<typeof incarnations> | undefined;
  const arrivals: Micros[] = [];
  const { engine, routers, band, plan } = routersAt(POSITIONS, {
    seed,
    ...(config ? { config } : {}),
    host: (m, i) => {
      air ??= incarnations(m);
      return air.host(i);
    },
    extra: (i): Partial<RouterParts> => (i === 2 ? { deliver: (h, _p, at) => void (h.flow === 1 && arrivals.push(at)) } : {}),
  });
  let seq = 0;
  const send = (now: Micros): void => {
    routers[0]!.originate(2, 'udp', 1, seq++, new Uint8Array(200), now);
    engine.at(now + 50 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  const old = routers[1]!;
  /**
   * Router 1 fails at `downUs` (its radios leave the air), and a new one
   * starts, as the daemon starts one, once `upWhen` says so (asked every 10 ms).
   */
  const restartRelay = (downUs: Micros, upWhen: (now: Micros) => boolean): { relay: () => MeshRouter; upUs: () => Micros } => {
    let fresh: MeshRouter | undefined;
    let upUs: Micros | undefined;
    engine.at(downUs, (now) => {
      old.fail(now);
      air!.detach(1);
      const probe = (t: Micros): void => {
        if (upWhen(t)) start(t);
        else engine.at(t + 10 * US_PER_MS, probe);
      };
      probe(now);
    });
    const start = (now: Micros): void => {
      upUs = now;
      const cfg = old.config;
      fresh = new MeshRouter(cfg, {
        engine,
        medium: air!.host(1),
        band,
        plan,
        detector: new EnergyDetector(cfg.sensing, cpuBackend),
        rng: Rng.fromSeed(seed).fork('r1-again'),
        position: POSITIONS[1]!,
        controlChannelPn: false,
        startUs: now + 100 * US_PER_MS,
        deliver: () => undefined,
      });
    };
    return { relay: () => fresh!, upUs: () => upUs! };
  };
  return { engine, routers, arrivals, restartRelay };
}

test('after the relay restarts, packets reach the far end again within two HELLO intervals plus one route discovery, and the restarted relay drops none for not knowing a channel', () => {
  const { engine, routers, arrivals, restartRelay } = chain(4);
  // Router 0 loses the relay at once (its MAC gives up on it) and discovers a route to 2 again:
  // the ring (TTL 4, 6), then RREQs at NET_DIAMETER 2.8 s and 5.6 s apart. The new relay comes up
  // 1 s into the longest wait that follows, 11.2 s, after which the discovery would give up.
  const downUs = seconds(10);
  let rreqAt: Micros | undefined;
  let base: number | undefined;
  const { relay, upUs: up } = restartRelay(downUs, (now) => {
    const sent = routers[0]!.aodv.counters.rreqSent;
    base ??= sent;
    if (rreqAt === undefined && sent - base >= 5) rreqAt = now;
    return rreqAt !== undefined && now >= rreqAt + seconds(1);
  });
  engine.run(seconds(45));
  const upUs = up();
  assert.ok(upUs !== undefined && upUs > seconds(17) && upUs < seconds(25), `the relay came back at ${upUs / 1000} ms`);

  const p = routers[0]!.aodv.params;
  const t = aodvTimes(p);
  assert.ok(
    arrivals.some((a) => a < downUs),
    'packets arrived before the relay died',
  );
  assert.deepEqual(
    arrivals.filter((a) => a > downUs + seconds(1) && a < upUs),
    [],
    'none while it was down',
  );
  const first = arrivals.find((a) => a >= upUs);
  assert.ok(first !== undefined, 'packets arrive again');
  const bound = upUs + 100 * US_PER_MS + 2 * p.helloIntervalUs + t.netTraversalUs;
  assert.ok(first <= bound, `the first packet after the restart arrived ${(first - upUs) / 1000} ms after it (bound ${(bound - upUs) / 1000} ms)`);
  const r = relay();
  assert.equal(r.drops['no-channel'], 0, 'the new relay held what came before it knew the next hop’s channel');
  assert.ok(r.counters.forwarded > 100, `${r.counters.forwarded} packets relayed after the restart`);
  // The flow then runs as before: most packets sent after the first one through get through.
  const after = arrivals.filter((a) => a >= first).length;
  const sentAfter = Math.floor((seconds(45) - first) / (50 * US_PER_MS));
  assert.ok(after > 0.8 * sentAfter, `${after} of about ${sentAfter} packets after the restart`);
});

test('a packet for a next hop that never announces an R1 channel waits ALLOWED_HELLO_LOSS HELLO intervals at the relay, then is dropped no-channel', () => {
  // Router 2 has no R1 channel (not cognitive, no channel given): its HELLOs announce none.
  const { engine, routers, arrivals } = chain(6, (cfg, i) => (i === 2 ? { ...cfg, channel: { ...cfg.channel, cognitive: false, initialChannel: 0 } } : cfg));
  const relay = routers[1]!;
  const p = relay.aodv.params;
  const waitUs = p.allowedHelloLoss * p.helloIntervalUs;
  // The flow starts at 3 s; the first packet reaches the relay once a route to 2 is found.
  let firstHeldUs: Micros | undefined;
  const probe = (now: Micros): void => {
    if (firstHeldUs === undefined && relay.flows().some((f) => f.src === 0 && f.dst === 2)) firstHeldUs = now;
    if (now < seconds(12)) engine.at(now + 10 * US_PER_MS, probe);
  };
  engine.at(seconds(3), probe);
  engine.run(seconds(12));
  assert.ok(firstHeldUs !== undefined, 'packets reached the relay');
  assert.deepEqual(arrivals, [], 'nothing reaches router 2: it has no channel to receive on');
  const dropped = relay.drops['no-channel'];
  assert.ok(dropped > 0, 'the packets are dropped in the end');
  // None before its wait was over: run a fresh copy to just before it.
  const again = chain(6, (cfg, i) => (i === 2 ? { ...cfg, channel: { ...cfg.channel, cognitive: false, initialChannel: 0 } } : cfg));
  again.engine.run(firstHeldUs + waitUs - 20 * US_PER_MS);
  assert.equal(again.routers[1]!.drops['no-channel'], 0, 'none dropped before it waited ALLOWED_HELLO_LOSS HELLO intervals');
  again.engine.run(firstHeldUs + waitUs + 20 * US_PER_MS);
  assert.ok(again.routers[1]!.drops['no-channel'] > 0, 'the first is dropped once it has waited that long');
});
