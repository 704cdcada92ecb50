import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseScenario } from '../../src/config/scenario.js';
import { US_PER_MS, seconds, type Micros } from '../../src/core/time.js';
import type { EventEngine } from '../../src/core/engine.js';
import type { MeshRouter } from '../../src/router/router.js';
import { runScenario, type RunOptions } from '../../src/sim/run.js';
import { encodeControl } from '../../src/wire/codec.js';
import { BROADCAST } from '../../src/wire/mesh.js';
import type { AirMedium } from '../../radio/medium/index.js';

/** The rogue's own address: it joined the medium, holding no key. */
const ROGUE = 9;
/** When the rogue starts (the flow starts at 3 s and has its route by then). */
const ATTACK_S = 5;

/**
 * A 3-hop chain (routers 0-3, 200 m apart) with no PN traffic and a light
 * UDP flow from 0 to 3; `auth` undefined leaves the scenario's default.
 */
function chain(auth?: boolean) {
  return parseScenario({
    name: 'rogue',
    durationS: 15,
    topology: { kind: 'chain', nodes: 4 },
    medium: { controlChannelPn: false },
    node: { sensing: { durationMs: 20, periodMs: 1000 } },
    flows: [{ kind: 'udp-cbr', src: 0, dst: 3, rateMbps: 0.2, packetBytes: 500, startS: 3 }],
    ...(auth === undefined ? {} : { auth: { enabled: auth } }),
  });
}

interface Rogue {
  rrepsSent: number;
  hellosSent: number;
  /** Data frames its R1 took (acknowledged and swallowed). */
  swallowed: number;
  /** Router 0's chosen next hop to router 3 just before the end. */
  nextHopAtEnd: number | undefined;
}

/**
 * A station near router 0 and router 1 (out of router 2's range) holding no
 * key. From ATTACK_S on, every 500 ms it sends router 0 an unsolicited RREP
 * for router 3 with sequence number 0x7ffffff0, one hop, as itself, and
 * HELLOs as itself (its R1 channel, so that data comes to it) and as live
 * router 1 (claiming router 1 has no R1 channel). Its R1 takes and
 * acknowledges every data frame sent to it.
 */
function rogue(out: Rogue): NonNullable<RunOptions['attach']> {
  return ({ engine, medium, routers }: { engine: EventEngine; medium: AirMedium; routers: readonly MeshRouter[] }) => {
    const r3Channel = routers[0]!.config.radios.R3.channel;
    const position = { xM: 100, yM: 30 };
    const r1Channel = 6;
    medium.addStation(
      { id: 'rogue/R1', node: ROGUE, position, acceptsUnicast: true, acceptsBroadcast: false, channel: r1Channel },
      { onReceive: () => void out.swallowed++, onSent: () => undefined },
    );
    const r3 = medium.addStation(
      { id: 'rogue/R3', node: ROGUE, position, acceptsUnicast: true, acceptsBroadcast: true, channel: r3Channel, pnAffected: false },
      { onReceive: () => undefined, onSent: () => undefined },
    );
    const attack = (now: Micros): void => {
      const rrep = {
        type: 'rrep',
        repair: false,
        ackRequired: false,
        hopCount: 1,
        dst: 3,
        dstSeq: 0x7ffffff0,
        orig: 0,
        lifetimeMs: 60_000,
        lastHop: ROGUE,
        pathCost: 1,
      } as const;
      r3.send({ src: ROGUE, dst: 0, payload: encodeControl(rrep) });
      out.rrepsSent++;
      r3.send({ src: ROGUE, dst: BROADCAST, payload: encodeControl({ type: 'hello', src: ROGUE, seq: 0x7ffffff0, r1Channel, workload: [], neighbours: [] }) });
      r3.send({ src: 1, dst: BROADCAST, payload: encodeControl({ type: 'hello', src: 1, seq: 0x7ffffff0, r1Channel: 0, workload: [], neighbours: [] }) });
      out.hellosSent += 2;
      engine.at(now + 500 * US_PER_MS, attack);
    };
    engine.at(seconds(ATTACK_S), attack);
    engine.at(seconds(14.9), (now) => {
      out.nextHopAtEnd = routers[0]!.aodv.routes(now).find((r) => r.dst === 3)?.chosen;
    });
  };
}

function attacked(auth?: boolean) {
  const out: Rogue = { rrepsSent: 0, hellosSent: 0, swallowed: 0, nextHopAtEnd: undefined };
  const result = runScenario(chain(auth), 1, { attach: rogue(out) });
  return { out, result };
}

describe('R3 authentication against a rogue station', () => {
  test('without authentication the forged RREP takes router 0 route to router 3 and the rogue swallows the flow', () => {
    const { out, result } = attacked(false);
    const f = result.flows[0]!;
    assert.equal(out.nextHopAtEnd, ROGUE, 'router 0 routes to 3 through the rogue');
    assert.ok(out.swallowed > 100, `the rogue swallowed ${out.swallowed} data frames`);
    assert.ok(f.deliveryRatio < 0.6, `delivery ${f.deliveryRatio}`);
    assert.equal(result.nodes[0]!.routing.authNoTrailer, undefined, 'no authentication figures when it is off');
  });

  test('with the default configuration (authentication on) the routes do not move, delivery holds and every forgery is counted', () => {
    const { out, result } = attacked();
    const f = result.flows[0]!;
    assert.ok(out.rrepsSent >= 19, `rogue sent ${out.rrepsSent} RREPs`);
    assert.equal(out.nextHopAtEnd, 1, 'router 0 still routes to 3 through router 1');
    assert.equal(out.swallowed, 0, 'no data frame went to the rogue');
    assert.ok(f.deliveryRatio > 0.95, `delivery ${f.deliveryRatio}`);
    const r0 = result.nodes[0]!.routing;
    const r1 = result.nodes[1]!.routing;
    // Router 0 hears the RREPs and both HELLOs; router 1 hears both HELLOs (the RREPs are unicast to 0).
    assert.ok(r0.authNoTrailer! >= out.rrepsSent + out.hellosSent - 3, `router 0 refused ${r0.authNoTrailer}`);
    assert.ok(r1.authNoTrailer! >= out.hellosSent - 2, `router 1 refused ${r1.authNoTrailer}`);
    for (const n of result.nodes) {
      assert.equal(n.routing.authBadMac, 0);
      assert.equal(n.routing.authReplay, 0, `router ${n.node}: no honest message is taken for a replay`);
      assert.ok(n.routing.authVerified! > 10, `router ${n.node} verified ${n.routing.authVerified}`);
    }
    // The forged HELLO from router 1's address changed nothing at router 0: router 1 keeps its R1 channel there.
    const r1Channel = result.nodes[1]!.r1Channel;
    assert.deepEqual(
      result.nodes[0]!.neighbours.find((n) => n.addr === 1),
      { addr: 1, r1Channel },
    );
  });

  test('a scenario authenticates R3 unless it says otherwise', () => {
    assert.equal(parseScenario({ topology: { kind: 'chain', nodes: 2 } }).auth.enabled, true);
    const r = runScenario(parseScenario({ durationS: 3, topology: { kind: 'chain', nodes: 2 } }), 1);
    assert.ok(r.nodes.every((n) => n.routing.authVerified! > 0 && n.routing.authNoTrailer === 0));
  });

  test('with authentication and no rogue, the run carries the flow as well as without it', () => {
    const plain = runScenario(chain(false), 2).flows[0]!;
    const signed = runScenario(chain(true), 2).flows[0]!;
    assert.ok(signed.deliveryRatio > 0.95, `delivery ${signed.deliveryRatio}`);
    assert.ok(Math.abs(signed.deliveryRatio - plain.deliveryRatio) < 0.03, `${signed.deliveryRatio} against ${plain.deliveryRatio}`);
  });
});
