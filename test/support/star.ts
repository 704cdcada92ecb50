import { readFileSync } from 'node:fs';
import { ism2g4, type ChannelPlan } from '../../radio/channels.js';
import { AirMedium, type StationHost } from '../../radio/medium/index.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { seconds } from '../../src/core/time.js';
import { MeshRouter, type RouterParts } from '../../src/router/router.js';
import type { NodeConfig } from '../../src/config/types.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { airOf, bandConfig, parseScenario, routerConfig } from '../../src/config/scenario.js';

/**
 * Four routers in virtual time, a star around relay 0 (1 west, 2 east, 3
 * north, 200 m out), no PNs: flows from 1 to 2 and to 3 cross relay 0.
 * `extra(i)` adds parts to router i (a VNF host, a forwarder).
 */
export function star(extra: (i: number) => Partial<RouterParts> = () => ({})): { engine: EventEngine; routers: MeshRouter[]; delivered: Map<number, number> } {
  const pos = [
    { xM: 0, yM: 0 },
    { xM: -200, yM: 0 },
    { xM: 200, yM: 0 },
    { xM: 0, yM: 200 },
  ];
  return routersAt(pos, { seed: 1, extra });
}

/**
 * Routers at `positions` in virtual time on the chain scenario's medium and
 * node parameters, no PNs and no test traffic. `config(cfg, i)` changes
 * router i's configuration; `extra(i)` adds parts to it.
 */
export function routersAt(
  positions: ReadonlyArray<{ xM: number; yM: number }>,
  o: {
    seed: number;
    config?: (cfg: NodeConfig, i: number) => NodeConfig;
    extra?: (i: number) => Partial<RouterParts>;
    /** What router i's radios attach to (default: the medium itself). */
    host?: (medium: AirMedium, i: number) => StationHost;
  },
): { engine: EventEngine; routers: MeshRouter[]; delivered: Map<number, number>; band: EmulatedBand; plan: ChannelPlan } {
  const raw = JSON.parse(readFileSync(new URL('../../config/scenarios/testbed-chain.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  raw.pn = { sources: [] };
  raw.flows = [];
  const sc = parseScenario(raw, 'routers', { hops: positions.length - 1 });
  const engine = new EventEngine(0);
  const rng = Rng.fromSeed(o.seed);
  const cfgs = positions.map((_, i) => (o.config ?? ((c) => c))(routerConfig(sc, i, 1), i));
  const plan = ism2g4(cfgs[0]!.channelPlan.channels).asOrthogonal();
  const band = new EmulatedBand(plan, bandConfig(sc, plan.channels.length), rng.fork('band'), { startUs: 0, historyUs: seconds(100) });
  const air = airOf(sc);
  const medium = new AirMedium({ scheduler: engine, plan, rng: rng.fork('medium'), pn: band }, air.params, air.phy);
  const delivered = new Map<number, number>();
  const routers = cfgs.map(
    (cfg, i) =>
      new MeshRouter(cfg, {
        engine,
        medium: o.host?.(medium, i) ?? medium,
        band,
        plan,
        detector: new EnergyDetector(cfg.sensing, cpuBackend),
        rng: rng.fork(`r${i}`),
        position: positions[i]!,
        controlChannelPn: false,
        startUs: 1000 * i,
        deliver: (h) => delivered.set(h.flow, (delivered.get(h.flow) ?? 0) + 1),
        ...(o.extra?.(i) ?? {}),
      }),
  );
  return { engine, routers, delivered, band, plan };
}
