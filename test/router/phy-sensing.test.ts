import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import type { Frontend, TuneResult } from '../../radio/frontend.js';
import { AirMedium, type StationHost } from '../../radio/medium/index.js';
import { modulateFrame } from '../../radio/phy/dsss/modem.js';
import { PhyStation } from '../../radio/phy/station.js';
import { MAC_TIMING } from '../../radio/phy/timing.js';
import { EmulatedBand, SimFrontend } from '../../radio/sim/index.js';
import { airOf, parseScenario, routerConfig } from '../../src/config/scenario.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { MeshRouter } from '../../src/router/router.js';
import { EnergyDetector } from '../../src/sensing/detector.js';
import { cpuBackend } from '../../src/sensing/energy.js';
import { encodeDot11Data } from '../../src/wire/dot11.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * A router whose R2 is a PHY station on a sim front-end senses through that
 * same front-end (RouterParts.radioFrontends): each round takes it from the
 * station, visits every channel at the front-end's own retune cost, and gives
 * it back; its detector sees frames sent as samples on the band as energy.
 * R1 and R3 stay on the air medium: the test is about R2's front-end.
 */
test('a router senses through its R2 front-end, shared with its PHY station, and sees frames on the band as energy', async (t) => {
  const raw = JSON.parse(readFileSync(new URL('../../config/scenarios/testbed-chain.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  raw.pn = { sources: [] };
  raw.flows = [];
  const sc = parseScenario(raw, 'phy-sensing', { hops: 1 });
  const cfg = routerConfig(sc, 0, 1);
  cfg.radios.R2.sampleRateHz = 11e6;
  cfg.sensing.periodMs = 300;
  const engine = new EventEngine(0);
  const rng = Rng.fromSeed(7);
  const plan = ism2g4(cfg.channelPlan.channels);
  const band = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, rng.fork('band'));
  const air = airOf(sc);
  const medium = new AirMedium({ scheduler: engine, plan, rng: rng.fork('medium'), pn: band }, air.params, air.phy);

  // R2's front-end, with every tune it is asked for.
  const r2fe = new SimFrontend(band, engine, { id: 'r0/R2', sampleRateHz: 11e6, retuneUs: 500 });
  const tunes: Array<{ atUs: number; centerHz: number }> = [];
  const tune = r2fe.tune.bind(r2fe);
  r2fe.tune = (centerHz: number): Promise<TuneResult> => {
    tunes.push({ atUs: engine.now(), centerHz });
    return tune(centerHz);
  };
  let r2: PhyStation | undefined;
  const host: StationHost = {
    sendWindow: 1,
    addStation: (spec, handlers) => {
      if (!spec.id.endsWith('/R2')) return medium.addStation(spec, handlers);
      r2 = new PhyStation({ spec, handlers, frontend: r2fe, plan, scheduler: engine, rng: rng.fork('r2'), timing: MAC_TIMING.sim, rateMbps: 2 });
      return r2;
    },
  };
  const unused = {} as Frontend;
  const router = new MeshRouter(cfg, {
    engine,
    medium: host,
    band,
    plan,
    detector: new EnergyDetector(cfg.sensing, cpuBackend),
    rng: rng.fork('router'),
    position: { xM: 0, yM: 0 },
    controlChannelPn: false,
    startUs: 10_000,
    deliver: () => undefined,
    radioFrontends: { R1: unused, R2: r2fe, R3: unused },
  });

  // Another radio on the band sends a 1500-byte frame every 7 ms on channel 6 (a 6 ms burst at 2 Mb/s):
  // most of the channel's air is busy.
  const jammer = new SimFrontend(band, engine, { id: 'other', sampleRateHz: 11e6, txPowerDbm: 0 });
  const wave = modulateFrame(encodeDot11Data({ src: 9, dst: 0xffff, payload: new Uint8Array(1500) }), {
    rateMbps: 2,
    samplesPerChip: 1,
  });
  void jammer.tune(plan.get(6).centerHz);
  const sendAt = (t: number): void => {
    engine.at(t, () => {
      void jammer.transmitIq({ data: wave, count: wave.length / 2, atUs: t });
      sendAt(t + 7000);
    });
  };
  sendAt(2000);

  while (engine.now() < 1_000_000) {
    if (!engine.step()) break;
    await flush();
  }
  router.fail(engine.now());

  assert.ok(router.counters.sensingRounds >= 3, `sensing rounds: ${router.counters.sensingRounds}`);
  const sensed = plan.numbers.filter((c) => c !== cfg.radios.R3.channel);
  for (const c of sensed) {
    assert.ok(
      tunes.some((t) => t.centerHz === plan.get(c).centerHz),
      `R2's front-end visited channel ${c}`,
    );
  }
  assert.ok(r2 !== undefined);
  const w = new Map(router.core.sharedWorkload().map((e) => [e.channel, e.w]));
  t.diagnostic(`w by channel: ${[...w].map(([c, x]) => `${c}: ${x.toFixed(2)}`).join(', ')}; R2's front-end tuned ${tunes.length} times`);
  assert.ok((w.get(6) ?? 0) > 0.5, `w on channel 6, busy with frames: ${w.get(6)}`);
  for (const c of sensed.filter((c) => Math.abs(c - 6) >= 3)) assert.ok((w.get(c) ?? 1) < 0.1, `w on quiet channel ${c}: ${w.get(c)}`);
});
