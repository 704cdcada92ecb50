import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import { AirMedium } from '../../radio/medium/index.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import { MeshRouter } from '../../src/node/router.js';
import { cpuBackend } from '../../src/sensing/backend.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { airOf, bandConfig, parseScenario, routerConfig } from '../../src/sim/scenario.js';
import type { VnfHost } from '../../src/vnf/pool.js';

test("a relay's flow table gives each flow its own next hop, also for packets a sandboxed VNF lets go later", () => {
  // A star around relay 0: router 1 sends flow 7 to router 2 and flow 8 to router 3, both through 0,
  // whose VNF host takes flow 7's packets and lets each go 2 ms later (as a sandbox answers).
  const raw = JSON.parse(readFileSync(new URL('../../config/scenarios/testbed-chain.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  raw.pn = { sources: [] };
  raw.flows = [];
  const sc = parseScenario(raw, 'star', { hops: 3 });
  const engine = new EventEngine(0);
  const rng = Rng.fromSeed(1);
  const cfgs = [0, 1, 2, 3].map((i) => routerConfig(sc, i, 1));
  const plan = ism2g4(cfgs[0]!.channelPlan.channels).asOrthogonal();
  const band = new EmulatedBand(plan, bandConfig(sc, plan.channels.length), rng.fork('band'), { startUs: 0, historyUs: seconds(100) });
  const air = airOf(sc);
  const medium = new AirMedium({ scheduler: engine, plan, rng: rng.fork('medium'), pn: band }, air.params, air.phy);
  const pos = [{ xM: 0, yM: 0 }, { xM: -200, yM: 0 }, { xM: 200, yM: 0 }, { xM: 0, yM: 200 }];
  let declined = 0;
  const vnf: VnfHost = {
    intercept: (pkt, _now, decline) => {
      if (pkt.tag !== 7) return false;
      engine.after(2 * US_PER_MS, () => {
        declined++;
        decline!();
      });
      return true;
    },
    tick: () => undefined,
    nextDeadline: () => undefined,
    poll: () => ({ packets: [], events: [] }),
    list: () => [],
  };
  const delivered = new Map<number, number>();
  const routers = cfgs.map(
    (cfg, i) =>
      new MeshRouter(cfg, {
        engine,
        medium,
        band,
        plan,
        detector: new EnergyDetector(cfg.sensing, cpuBackend),
        rng: rng.fork(`r${i}`),
        position: pos[i]!,
        controlChannelPn: false,
        startUs: 1000 * i,
        deliver: (h) => delivered.set(h.flow, (delivered.get(h.flow) ?? 0) + 1),
        ...(i === 0 ? { vnf } : {}),
      }),
  );
  let seq = 0;
  const send = (now: number): void => {
    routers[1]!.originate(2, 'tcp', 7, seq, new Uint8Array(200), now);
    routers[1]!.originate(3, 'tcp', 8, seq++, new Uint8Array(200), now);
    if (now < seconds(12)) engine.at(now + 50 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  let wrong = 0;
  let samples = 0;
  const probe = (): void => {
    const t = routers[0]!.flows();
    const f7 = t.find((f) => f.flow === 7);
    const f8 = t.find((f) => f.flow === 8);
    samples++;
    if ((f7?.nextHop !== undefined && f7.nextHop !== 2) || (f8?.nextHop !== undefined && f8.nextHop !== 3)) wrong++;
    if (engine.now() < seconds(12)) engine.after(US_PER_MS, probe);
  };
  engine.at(seconds(3), probe);
  engine.run(seconds(13));
  assert.ok(declined > 50 && (delivered.get(7) ?? 0) > 50 && (delivered.get(8) ?? 0) > 50, `both flows ran: ${JSON.stringify([...delivered])}, ${declined} declined`);
  assert.equal(wrong, 0, `${wrong} of ${samples} samples showed a flow with another flow's next hop`);
  const t = routers[0]!.flows();
  assert.equal(t.find((f) => f.flow === 7)?.nextHop, 2);
  assert.equal(t.find((f) => f.flow === 8)?.nextHop, 3);
});
