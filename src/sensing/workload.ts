import type { Micros } from '../core/time.js';

/** What one visit of the energy detector to a channel found. */
export interface ChannelObservation {
  channel: number;
  /** Sensing samples (detector windows) monitored. */
  windows: number;
  /** Of those, the ones whose mean power exceeded the CCA threshold. */
  busyWindows: number;
  meanPowerDbm: number;
  busyMeanPowerDbm: number | undefined;
  atUs: Micros;
}

/** This node's own estimate for one channel. */
export interface ChannelWorkload {
  channel: number;
  /** w(s,i) of equation (1): busy samples over samples monitored, past rounds weighted by `memory`. */
  w: number;
  /** Windows behind the estimate after ageing (its weight when merged with neighbours'). */
  windows: number;
  meanPowerDbm: number;
  updatedUs: Micros;
}

/**
 * The workload w(s,i) of equation (1) per channel. Counts of busy and total
 * sensing samples carry over from round to round multiplied by `memory`, so
 * w is the busy fraction of everything monitored with older rounds counting
 * less (memory 0: the last visit alone; memory 1: every sample ever seen).
 */
export class WorkloadEstimator {
  private readonly est = new Map<number, { busy: number; total: number; meanPowerDbm: number; updatedUs: Micros }>();

  constructor(private memory: number) {}

  setMemory(memory: number): void {
    this.memory = memory;
  }

  observe(o: ChannelObservation): void {
    if (o.windows <= 0) return;
    const prev = this.est.get(o.channel);
    const m = this.memory;
    this.est.set(o.channel, {
      busy: (prev ? prev.busy * m : 0) + o.busyWindows,
      total: (prev ? prev.total * m : 0) + o.windows,
      meanPowerDbm: o.meanPowerDbm,
      updatedUs: o.atUs,
    });
  }

  get(channel: number): ChannelWorkload | undefined {
    const e = this.est.get(channel);
    if (!e || e.total <= 0) return undefined;
    return { channel, w: e.busy / e.total, windows: e.total, meanPowerDbm: e.meanPowerDbm, updatedUs: e.updatedUs };
  }

  /** Every channel with an estimate, by channel number. */
  all(): ChannelWorkload[] {
    return [...this.est.keys()]
      .sort((a, b) => a - b)
      .map((c) => this.get(c))
      .filter((x): x is ChannelWorkload => x !== undefined);
  }
}

/**
 * Adds up what the energy detector found block by block during one visit,
 * powers in milliwatts so that the visit's mean is a true mean.
 */
export class VisitTally {
  private windows = 0;
  private busy = 0;
  private power = 0;
  private busyPower = 0;

  add(d: { windows: number; busyWindows: number; meanPowerDbm: number; busyMeanPowerDbm: number | undefined }): void {
    this.windows += d.windows;
    this.busy += d.busyWindows;
    if (d.windows > 0) this.power += d.windows * 10 ** (d.meanPowerDbm / 10);
    if (d.busyMeanPowerDbm !== undefined) this.busyPower += d.busyWindows * 10 ** (d.busyMeanPowerDbm / 10);
  }

  observation(channel: number, atUs: Micros): ChannelObservation {
    const { windows, busy } = this;
    return {
      channel,
      windows,
      busyWindows: busy,
      meanPowerDbm: windows > 0 ? 10 * Math.log10(this.power / windows) : -Infinity,
      busyMeanPowerDbm: busy > 0 ? 10 * Math.log10(this.busyPower / busy) : undefined,
      atUs,
    };
  }
}
