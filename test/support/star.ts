import { readFileSync } from 'node:fs';
import { ism2g4 } from '../../radio/channels.js';
import { AirMedium } from '../../radio/medium/index.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { seconds } from '../../src/core/time.js';
import { MeshRouter, type RouterParts } from '../../src/router/router.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { airOf, bandConfig, parseScenario, routerConfig } from '../../src/config/scenario.js';

/**
 * Four routers in virtual time, a star around relay 0 (1 west, 2 east, 3
 * north, 200 m out), no PNs: flows from 1 to 2 and to 3 cross relay 0.
 * `extra(i)` adds parts to router i (a VNF host, a forwarder).
 */
export function star(extra: (i: number) => Partial<RouterParts> = () => ({})): { engine: EventEngine; routers: MeshRouter[]; delivered: Map<number, number> } {
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
  const pos = [
    { xM: 0, yM: 0 },
    { xM: -200, yM: 0 },
    { xM: 200, yM: 0 },
    { xM: 0, yM: 200 },
  ];
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
        ...extra(i),
      }),
  );
  return { engine, routers, delivered };
}
