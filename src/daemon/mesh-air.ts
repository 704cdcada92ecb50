import { ism2g4, type ChannelPlan } from '../../radio/channels.js';
import type { Frontend } from '../../radio/frontend.js';
import { CaptureHost, captureRadio } from '../../radio/medium/capture.js';
import type { StationHost } from '../../radio/medium/index.js';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { PhyHost, type RadioRole } from '../../radio/phy/host.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { linkBandHub, openDeviceRadio, simRadio } from './radios.js';
import { sharedClockUs } from '../../radio/sim/hub.js';
import type { NodeConfig } from '../config/types.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { PacedEngine } from '../core/paced.js';
import { Rng } from '../core/rng.js';
import { US_PER_S } from '../core/time.js';

/**
 * Where a router's radios meet the others': the stations its router adds,
 * the band its sensing reads, the channel plan, and how to leave.
 */
export interface MeshAir {
  readonly host: StationHost;
  readonly band: EmulatedBand;
  readonly plan: ChannelPlan;
  /** Whether PN emitters also occupy the control channel. */
  readonly controlChannelPn: boolean;
  /** For the start-up log: "the medium at ENDPOINT" or "its radios' PHY". */
  readonly describe: string;
  /** What the status shows of the air: the medium link's counters, or each PHY station's. */
  counters(): Record<string, unknown>;
  /** The radios' own front-ends, under a PHY: the router senses through its sensing radio's (RouterParts.radioFrontends). */
  readonly radioFrontends?: Readonly<Record<RadioRole, Frontend>>;
  close(): Promise<void>;
}

/**
 * Joins the air medium process at `cfg.sim.medium.endpoint`: its welcome
 * gives the plan, the PHY and the band's seed and epoch, so that the router
 * senses the same PN bursts the medium runs. With `pcap`, what its radios
 * hear and send goes there as pcapng.
 */
export async function joinMedium(cfg: NodeConfig, log: Logger, paced: PacedEngine, pcap: ((bytes: Uint8Array) => void) | undefined): Promise<MeshAir> {
  const m = cfg.sim.medium;
  const medium = await RemoteMedium.connect({
    endpoint: m.endpoint,
    node: cfg.node.id,
    name: cfg.node.name,
    position: { xM: m.xM, yM: m.yM },
    paced,
    log,
    sendWindow: m.sendWindow,
    ...(m.curve.serverKey !== '' ? { curve: m.curve } : {}),
  });
  const w = medium.welcome;
  if (w.channels !== cfg.channelPlan.channels) {
    medium.close();
    throw new ConfigError([
      { path: '/channelPlan/channels', value: cfg.channelPlan.channels, expected: `${w.channels}, the plan of the medium at ${m.endpoint}` },
    ]);
  }
  const full = ism2g4(w.channels);
  const plan = w.orthogonal ? full.asOrthogonal() : full;
  const host = pcap
    ? new CaptureHost(medium, {
        now: () => paced.now(),
        // The paced engine's time is already the epoch's.
        epochUs: 0,
        ...captureRadio(w.phy, plan),
        sink: () => pcap,
      })
    : medium;
  const band = new EmulatedBand(plan, w.band, Rng.fromSeed(w.bandSeed).fork('band'), { startUs: w.epochUs, historyUs: 60 * US_PER_S });
  return {
    host,
    band,
    plan,
    controlChannelPn: w.controlChannelPn,
    describe: `the medium at ${m.endpoint}`,
    counters: () => ({ ...medium.counters }),
    close: () => {
      medium.close();
      return Promise.resolve();
    },
  };
}

const ROLES = ['R1', 'R2', 'R3'] as const;

/** Samples a sim radio under a PHY keeps for a receive loop that falls behind (µs). */
const PHY_RADIO_BUFFER_US = 200_000;

/**
 * The router's own radios running the DSSS PHY and its DCF (`PhyHost`),
 * each on a front-end: a `sim` front-end on an emulated band of the
 * router's, or a device (`uhd`, `sora`). Frames go out as samples and come
 * in only as what the receiver decodes from the samples a radio reads. The
 * router senses through its sensing radio's front-end, which it shares with
 * that radio's station (RouterParts.radioFrontends).
 */
export async function openPhyAir(cfg: NodeConfig, log: Logger, paced: PacedEngine): Promise<MeshAir> {
  const devices = ROLES.filter((r) => cfg.radios[r].frontend !== 'sim');
  if (devices.length > 0 && cfg.phy.timeScale !== 1) {
    throw new ConfigError([
      {
        path: '/phy/timeScale',
        value: cfg.phy.timeScale,
        expected: `1 with radios on devices (${devices.map((r) => `${r}: ${cfg.radios[r].frontend}`).join(', ')}): slow motion is for the emulated band only`,
      },
    ]);
  }
  const plan = ism2g4(cfg.channelPlan.channels);
  const rng = Rng.fromSeed(cfg.node.seed);
  const band = new EmulatedBand(plan, cfg.sim.band, rng.fork('band'), { scheduler: paced.scheduler, historyUs: 60 * US_PER_S });
  // A PHY reads every sample: a receive loop that falls behind (a busy event loop) gets what it missed, as a USB SDR's buffers keep it.
  const opened: Frontend[] = [];
  const radio = async (role: RadioRole): Promise<Frontend> => {
    const r = cfg.radios[role];
    const fe =
      r.frontend === 'sim'
        ? simRadio(cfg, role, band, paced.scheduler, rng, { bufferUs: PHY_RADIO_BUFFER_US })
        : await openDeviceRadio(`radios.${role}`, r, { id: `${cfg.node.name}/${role}` });
    opened.push(fe);
    return fe;
  };
  let frontends: Record<RadioRole, Frontend>;
  try {
    frontends = { R1: await radio('R1'), R2: await radio('R2'), R3: await radio('R3') };
  } catch (e) {
    await Promise.allSettled(opened.map((fe) => fe.close()));
    throw e;
  }
  // Other routers' bursts join this band's air through the hub, and its radios' bursts go out to them. The
  // band's clock is the engine's; the shared clock (in slow motion as much as the router's) is a fixed offset from it.
  const hubEndpoint = cfg.sim.band.hub;
  const scale = paced.clock.rate ?? 1;
  const sharedOffsetUs = sharedClockUs() * scale - paced.clock.now();
  const hub = linkBandHub(cfg, band, paced.scheduler, log, () => paced.scheduler.now() + sharedOffsetUs);
  const host = new PhyHost({
    frontends,
    plan,
    // Radio reads continue in promise continuations, outside the engine's runs.
    scheduler: paced.scheduler,
    rng: rng.fork('phy'),
    rateMbps: cfg.phy.rateMbps,
    timing: cfg.phy.timing,
    ccaDbm: cfg.phy.ccaDbm,
    blockUs: cfg.phy.blockUs,
    onError: (where, err) => log.warn({ event: 'phy-error', where, err }, `${where}: ${err instanceof Error ? err.message : String(err)}`),
  });
  return {
    host,
    band,
    plan,
    radioFrontends: frontends,
    controlChannelPn: true,
    describe:
      `its radios' DSSS PHY at ${cfg.phy.rateMbps} Mb/s (${ROLES.map((r) => `${r} ${frontends[r].kind}`).join(', ')}${cfg.channel.cognitive ? `; sensing through ${cfg.sensing.radio === 'R1' ? 'R1' : 'R2'}'s front-end` : ''})` +
      (hub ? `, its band linked to the band hub at ${hubEndpoint}` : '') +
      (scale !== 1 ? `, in slow motion (${scale} of real time)` : ''),
    counters: () => ({
      ...Object.fromEntries(host.stations.map((s) => [s.id, { ...s.counters, phy: structuredClone(s.phy) }])),
      band: { ...band.iqCounters },
      ...(hub ? { hub: { ...hub.counters } } : {}),
    }),
    close: async () => {
      host.close();
      await hub?.close();
      await Promise.all(Object.values(frontends).map((fe) => fe.close()));
    },
  };
}
