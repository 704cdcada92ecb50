import { ism2g4, type ChannelPlan } from '../../radio/channels.js';
import type { Frontend } from '../../radio/frontend.js';
import { EmulatedBand } from '../../radio/sim/index.js';
import type { BandHubLink } from '../../radio/sim/hub.js';
import { UsageError } from '../core/errors.js';
import type { NodeConfig, RadioConfig } from '../config/types.js';
import { Rng } from '../core/rng.js';
import type { Scheduler } from '../core/scheduler.js';
import { chooseBackend } from '../sensing/backend.js';
import { EnergyDetector } from '../sensing/detector.js';
import type { IqTap } from '../sensing/iq-tap.js';
import { NodeCore } from '../router/node-core.js';
import { startFrontendSensing, type DriverEvent, type FrontendSensing, type SensingDriver } from '../router/sensing.js';
import { linkBandHub, openDeviceRadio, simRadio } from './radios.js';
import type { Logger } from '../core/log.js';
import { decisionRecord, roundRecord } from './log-records.js';

export function channelPlanOf(cfg: NodeConfig): ChannelPlan {
  return ism2g4(cfg.channelPlan.channels);
}

/** A running node: its core, driver and radios. */
export interface RunningNode {
  core: NodeCore;
  driver: SensingDriver;
  /** The sensing radios: whether a round holds transmission. */
  sensing: FrontendSensing;
  radios: { R1: Frontend; R2: Frontend; R3: Frontend };
  band: EmulatedBand | undefined;
  /** The band's link to the band hub (`sim.band.hub`), when there is one. */
  hub: BandHubLink | undefined;
  detector: EnergyDetector;
  stop(): Promise<void>;
}

export interface StartOptions {
  scheduler: Scheduler;
  log: Logger;
  /** Virtual time: leave wall-clock figures out of the log, so that runs compare byte for byte. */
  reproducible?: boolean;
  /** Extra listener for every driver event (tests, the monitor). */
  onEvent?: (e: DriverEvent) => void;
  /** Reads the IQ the detector reads (the monitor's PSD and recordings). */
  iqTap?: IqTap;
}

/**
 * The composition root of one router: radios from the configuration (the
 * `sim` ones on an emulated band of the node's own), the energy detector on
 * the backend the start-up probe picks, the cognitive core, and a driver on
 * the given scheduler.
 */
export async function startNode(cfg: NodeConfig, o: StartOptions): Promise<RunningNode> {
  const plan = channelPlanOf(cfg);
  const rng = Rng.fromSeed(cfg.node.seed);
  const needsBand = (['R1', 'R2', 'R3'] as const).some((r) => cfg.radios[r].frontend === 'sim');
  const band = needsBand ? new EmulatedBand(plan, cfg.sim.band, rng.fork('band'), o.scheduler) : undefined;
  const hubEndpoint = cfg.sim.band.hub;
  if (band && hubEndpoint !== '' && o.reproducible) {
    throw new UsageError(`sim.band.hub (${hubEndpoint}): the band hub links bands on the machine's wall clock, and this node runs in virtual time`);
  }
  const radio = async (name: 'R1' | 'R2' | 'R3', r: RadioConfig): Promise<Frontend> => {
    const id = `${cfg.node.name}/${name}`;
    if (r.frontend !== 'sim') return openDeviceRadio(`radios.${name}`, r, { id, syncReads: o.reproducible });
    return simRadio(cfg, name, band!, o.scheduler, rng);
  };
  // Other node processes' bursts join this band's air through the hub, and its radios' bursts go out to them.
  const hub = band ? linkBandHub(cfg, band, o.scheduler, o.log) : undefined;
  if (hub) o.log.info({ event: 'band-hub', endpoint: hubEndpoint }, `emulated band linked to the band hub at ${hubEndpoint}`);
  // A radio that fails to open leaves none open behind it (a USRP handle, a mapped ring).
  const opened: Frontend[] = [];
  const open = async (name: 'R1' | 'R2' | 'R3'): Promise<Frontend> => {
    const fe = await radio(name, cfg.radios[name]);
    opened.push(fe);
    return fe;
  };
  let radios: Record<'R1' | 'R2' | 'R3', Frontend>;
  let choice: Awaited<ReturnType<typeof chooseBackend>>;
  try {
    radios = { R1: await open('R1'), R2: await open('R2'), R3: await open('R3') };
    choice = await chooseBackend(cfg.sensing.backend);
  } catch (e) {
    await Promise.allSettled(opened.map((fe) => fe.close()));
    await hub?.close();
    throw e;
  }
  // R3 sits on the common control channel for good. Tunes complete in scheduler time, which in
  // virtual time only runs once the caller pumps the engine: start it, do not wait for it here.
  const r3Channel = cfg.radios.R3.channel;
  // Set once stop() begins: closing the radios refuses a tune still in flight, which is the stop
  // itself (say a monitor that could not bind stops the node at once), not a fault of R3.
  let stopping = false;
  radios.R3.tune(plan.get(r3Channel).centerHz).then(
    (r) => o.log.debug({ event: 'r3-tuned', channel: r3Channel, retuneUs: r.retuneUs }, `R3 on control channel ${r3Channel}`),
    (error: unknown) => {
      if (stopping) o.log.debug({ event: 'r3-tune-cancelled', channel: r3Channel }, `R3's tune to channel ${r3Channel} cancelled: the node is stopping`);
      else o.log.error({ event: 'driver-error', where: 'tuning R3', err: error }, `tuning R3 to channel ${r3Channel} failed`);
    },
  );

  if (o.reproducible) {
    // Probe timings are wall-clock figures: keep them out of a log that must compare byte for byte.
    o.log.info({ event: 'sensing-backend', backend: choice.backend.name }, `energy detector: ${choice.backend.name} backend`);
  } else {
    o.log.info({ event: 'sensing-backend', backend: choice.backend.name, probe: choice.probe }, `energy detector: ${choice.reason}`);
  }
  const detector = new EnergyDetector({ windowUs: cfg.sensing.windowUs, ccaThresholdDbm: cfg.sensing.ccaThresholdDbm }, choice.backend);

  const sensing = radios[cfg.sensing.radio];
  const core = new NodeCore(cfg, plan, sensing.capabilities.retuneUs, o.scheduler.now());
  const onEvent = (e: DriverEvent): void => {
    logEvent(o.log, e);
    o.onEvent?.(e);
  };
  o.log.info(
    {
      event: 'node-start',
      node: cfg.node,
      plan: plan.name,
      sensing: { radio: cfg.sensing.radio, durationMs: cfg.sensing.durationMs, periodMs: cfg.sensing.periodMs },
    },
    `node ${cfg.node.name} (id ${cfg.node.id}) up: ${plan.name}, sensing ${cfg.sensing.durationMs} ms every ${cfg.sensing.periodMs} ms on ${cfg.sensing.radio}, R3 on channel ${cfg.radios.R3.channel}`,
  );
  const { driver, radios: sensingRadios } = startFrontendSensing(core, {
    plan,
    scheduler: o.scheduler,
    sensing,
    r1: radios.R1,
    detector,
    onEvent,
    ...(o.iqTap ? { iqTap: o.iqTap } : {}),
  });
  return {
    core,
    driver,
    sensing: sensingRadios,
    radios,
    band,
    hub,
    detector,
    async stop() {
      stopping = true;
      // Stop scheduling, then close the radios: that refuses the read or tune in flight
      // (which in virtual time would otherwise wait for an engine nobody pumps any more).
      const idle = driver.stop();
      await Promise.all([radios.R1.close(), radios.R2.close(), radios.R3.close()]);
      await idle;
      if (hub && band) {
        await hub.close();
        o.log.info(
          { event: 'band-hub-stop', link: hub.counters, band: band.iqCounters },
          `band hub link closed: ${hub.counters.sent} bursts sent, ${hub.counters.received} received (${hub.counters.late} late, ${hub.counters.malformed} malformed)`,
        );
      }
    },
  };
}

/** Every driver event as one structured log record. */
export function logEvent(log: Logger, e: DriverEvent): void {
  switch (e.kind) {
    case 'sensing-round': {
      const r = roundRecord(e);
      log.info(r.fields, r.msg);
      break;
    }
    case 'r1-decision': {
      const r = decisionRecord(e.decision);
      log.info(r.fields, r.msg);
      break;
    }
    case 'r1-tuned':
      log.debug({ event: 'r1-tuned', channel: e.channel, retuneUs: e.retuneUs }, `R1 tuned to channel ${e.channel} in ${e.retuneUs} us`);
      break;
    case 'tx-paused':
    case 'tx-resumed':
      log.debug({ event: e.kind, round: e.round }, `data transmission ${e.kind === 'tx-paused' ? 'paused' : 'resumed'} (round ${e.round})`);
      break;
    case 'driver-error':
      log.error({ event: 'driver-error', where: e.where, err: e.error }, `${e.where}: ${e.error instanceof Error ? e.error.message : String(e.error)}`);
      break;
  }
}
