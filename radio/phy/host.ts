import { RangeArgumentError } from '../../src/core/errors.js';
import type { Rng } from '../../src/core/rng.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import type { ChannelPlan } from '../channels.js';
import type { Frontend } from '../frontend.js';
import type { Station, StationHandlers, StationHost, StationSpec } from '../medium/types.js';
import type { DsssRate } from './dsss/plcp.js';
import { PhyStation } from './station.js';
import { checkMacTiming, MAC_TIMING, type MacTiming } from './timing.js';

export type RadioRole = 'R1' | 'R2' | 'R3';

export interface PhyHostOptions {
  /** The router's radios, each a front-end of its own. */
  frontends: Readonly<Record<RadioRole, Frontend>>;
  plan: ChannelPlan;
  scheduler: Scheduler;
  rng: Rng;
  rateMbps: DsssRate;
  /** Fields that replace the front-end kind's timing profile (MAC_TIMING); a 0 keeps the profile's. */
  timing?: Partial<MacTiming>;
  ccaDbm?: number;
  /** Samples per block read, as a time (default 1000 µs). */
  blockUs?: number;
  onError?: (where: string, error: unknown) => void;
}

/**
 * Where a router's radios attach when they are real (or emulated) radios
 * rather than stations of the air medium: each station the router adds runs
 * the DCF over the DSSS PHY on the front-end of its role (the last part of
 * its id: `name/R1`, `name/R2`, `name/R3`). The router cannot tell this host
 * from the medium: it is the same `StationHost` contract.
 */
export class PhyHost implements StationHost {
  readonly sendWindow = 1;
  readonly stations: PhyStation[] = [];

  constructor(private readonly o: PhyHostOptions) {
    for (const role of ['R1', 'R2', 'R3'] as const) this.timingOf(role);
  }

  /** The timing profile of the radio `role`: its front-end kind's, with the overrides. */
  timingOf(role: RadioRole): MacTiming {
    const fe = this.o.frontends[role];
    const set = Object.fromEntries(Object.entries(this.o.timing ?? {}).filter(([, v]) => v !== 0 && v !== undefined));
    return checkMacTiming({ ...MAC_TIMING[fe.kind], ...set }, `phy.timing (${role}, a ${fe.kind} front-end)`);
  }

  addStation(spec: StationSpec, handlers: StationHandlers): Station {
    const role = spec.id.slice(spec.id.lastIndexOf('/') + 1);
    if (role !== 'R1' && role !== 'R2' && role !== 'R3') throw new RangeArgumentError('station id', spec.id, 'NAME/R1, NAME/R2 or NAME/R3');
    const fe = this.o.frontends[role];
    const st = new PhyStation({
      spec,
      handlers,
      frontend: fe,
      plan: this.o.plan,
      scheduler: this.o.scheduler,
      rng: this.o.rng.fork(`phy/${role}`),
      timing: this.timingOf(role),
      rateMbps: this.o.rateMbps,
      blockSamples: Math.max(64, Math.round((fe.capabilities.sampleRateHz * (this.o.blockUs ?? 1000)) / 1e6)),
      ...(this.o.ccaDbm !== undefined ? { ccaDbm: this.o.ccaDbm } : {}),
      ...(this.o.onError ? { onError: this.o.onError } : {}),
    });
    this.stations.push(st);
    return st;
  }

  /** Detaches every station (their receive loops end). */
  close(): void {
    for (const s of this.stations) s.detach();
  }
}
