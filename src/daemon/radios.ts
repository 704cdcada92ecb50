import type { FileFrontend } from '../../radio/file/index.js';
import type { Frontend } from '../../radio/frontend.js';
import type { EmulatedBand } from '../../radio/sim/band.js';
import { SimFrontend, type SimFrontendOptions } from '../../radio/sim/frontend.js';
import { BandHubLink } from '../../radio/sim/hub.js';
import type { NodeConfig, RadioConfig } from '../config/types.js';
import { FrontendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Rng } from '../core/rng.js';
import type { Scheduler } from '../core/scheduler.js';

/**
 * Opens a radio that is a device rather than the emulated band: a SigMF
 * recording (`file`), a USRP (`uhd`) or a SORA-like ring (`sora`), each from
 * `device`. Drivers load on demand, so a node on the emulated band never
 * loads koffi or libuhd. `where` names the radio in errors (`radios.R2`).
 */
export async function openDeviceRadio(where: string, r: RadioConfig, opts: { id: string; syncReads?: boolean }): Promise<Frontend> {
  switch (r.frontend) {
    case 'file':
      return openRecording(r, opts);
    case 'uhd': {
      const { openUhdFrontend } = await import('../../radio/uhd/index.js');
      return openUhdFrontend({
        deviceArgs: r.device,
        sampleRateHz: r.sampleRateHz,
        gainDb: r.gainDb,
        calibrationDb: r.calibrationDb,
        txGainDb: r.txGainDb,
        txChannel: r.txChannel,
        ...(r.txAntenna === '' ? {} : { txAntenna: r.txAntenna }),
      });
    }
    case 'sora': {
      const { SoraFrontend } = await import('../../radio/sora/index.js');
      return SoraFrontend.open({ path: r.device, id: opts.id });
    }
    case 'usb':
      throw new FrontendError(
        'RADIO_UNSUPPORTED',
        `${where}.frontend: "usb" names a bus, not a driver: a USRP B200/B210 is served by "uhd"; \`cogmesh devices\` says which driver serves each attached SDR`,
      );
    case 'sim':
      throw new FrontendError('RADIO_UNSUPPORTED', `${where}.frontend: "sim" needs the emulated band, not a device`);
  }
}

/**
 * Opens `r.device` as a SigMF recording. The recording's own calibration
 * wins; the radio's (at its gain) serves recordings that carry none.
 */
export async function openRecording(r: RadioConfig, opts: { id: string; syncReads?: boolean }): Promise<FileFrontend> {
  const { FileFrontend } = await import('../../radio/file/index.js');
  return FileFrontend.open(r.device, { id: opts.id, calibrationDb: r.calibrationDb - r.gainDb, reads: opts.syncReads ? 'sync' : 'async' });
}

/**
 * The router's `sim` radio `role` on `band`: its configured rate, gain and
 * calibration, the band's read latency, and a noise stream forked from `rng`
 * for it; `extra` adds options of the caller's (a PHY's buffer).
 */
export function simRadio(
  cfg: NodeConfig,
  role: 'R1' | 'R2' | 'R3',
  band: EmulatedBand,
  scheduler: Scheduler,
  rng: Rng,
  extra: Partial<SimFrontendOptions> = {},
): SimFrontend {
  const r = cfg.radios[role];
  return new SimFrontend(band, scheduler, {
    id: `${cfg.node.name}/${role}`,
    sampleRateHz: r.sampleRateHz,
    gainDb: r.gainDb,
    calibrationDb: r.calibrationDb,
    readLatencyUs: cfg.sim.band.readLatencyUs,
    rng: rng.fork(`radio/${role}`),
    ...extra,
  });
}

/**
 * Links `band` to the band hub `sim.band.hub`, when the configuration names
 * one: other processes' bursts join its air and its radios' go out to them.
 * `clock` is the shared clock as the band's scheduler sees it (the hub
 * link's default: the wall clock).
 */
export function linkBandHub(cfg: NodeConfig, band: EmulatedBand, scheduler: Scheduler, log: Logger, clock?: () => number): BandHubLink | undefined {
  const endpoint = cfg.sim.band.hub;
  if (endpoint === '') return undefined;
  return new BandHubLink({
    endpoint,
    band,
    scheduler,
    id: cfg.node.name,
    ...(clock ? { clock } : {}),
    onError: (err: unknown) => log.warn({ event: 'band-hub-error', endpoint, err }, `band hub ${endpoint}: ${String(err)}`),
  });
}
