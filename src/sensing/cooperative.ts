import type { Micros } from '../core/time.js';
import type { ChannelWorkload } from './workload.js';

/** The w a neighbour shared on R3 for one channel. */
export interface SharedWorkload {
  channel: number;
  w: number;
  /** Sensing samples behind the neighbour's estimate. */
  windows: number;
}

export interface CooperativeParams {
  /** A report loses half its weight every half-life. */
  halfLifeUs: Micros;
  /** Reports older than this are dropped. */
  maxAgeUs: Micros;
  /** Weight of one neighbour window relative to one of our own. */
  neighbourWeight: number;
}

/** The merged w of one channel and what went into it. */
export interface MergedWorkload {
  channel: number;
  w: number;
  /** This node's own w, when it has one. */
  ownW: number | undefined;
  /** Neighbours whose reports counted. */
  neighbours: number;
  /** Total weight behind the merge (in own-window equivalents). */
  weight: number;
}

/**
 * Cooperative sensing: neighbours broadcast their w vectors on R3, and each
 * node merges them with its own as a weighted mean, weights being the
 * windows behind each estimate, a neighbour factor, and an exponential ageing
 * by the report's age. A node that has not sensed a channel recently can so
 * still rank it, which lets sensing rounds stay short.
 */
/** The highest channel number a report can carry (HELLO's one byte). */
const MAX_CHANNEL = 255;

export class CooperativeSensing {
  /** Each neighbour's last report: its entries by channel number (a sparse array; channels are 0-255, as HELLO carries them). */
  private readonly reports = new Map<string, { atUs: Micros; entries: Array<SharedWorkload | undefined> }>();

  constructor(private params: CooperativeParams) {}

  setParams(p: CooperativeParams): void {
    this.params = p;
  }

  /**
   * Records a neighbour's report (replacing its previous one). Entries with a
   * w outside [0, 1], a negative window count or a channel number outside
   * 0-255 are ignored and counted; of two entries for one channel the later
   * stands.
   */
  receive(from: string, atUs: Micros, entries: readonly SharedWorkload[]): { accepted: number; rejected: number } {
    const byChannel: Array<SharedWorkload | undefined> = [];
    let accepted = 0;
    let rejected = 0;
    for (const e of entries) {
      const ch = e.channel;
      if (!(e.w >= 0 && e.w <= 1) || !(e.windows >= 0) || !Number.isInteger(ch) || ch < 0 || ch > MAX_CHANNEL) {
        rejected++;
        continue;
      }
      if (byChannel[ch] === undefined) accepted++;
      byChannel[ch] = e;
    }
    this.reports.set(from, { atUs, entries: byChannel });
    return { accepted, rejected };
  }

  /** Forgets reports older than maxAge. */
  expire(now: Micros): string[] {
    const gone: string[] = [];
    for (const [from, r] of this.reports) {
      if (now - r.atUs > this.params.maxAgeUs) {
        this.reports.delete(from);
        gone.push(from);
      }
    }
    return gone;
  }

  get neighbourCount(): number {
    return this.reports.size;
  }

  /**
   * Merges own estimates with the neighbours' current reports at time `now`;
   * with `withNeighbours` false (cooperation off) own estimates stand alone.
   */
  merge(own: readonly ChannelWorkload[], now: Micros, channels: readonly number[], withNeighbours = true): MergedWorkload[] {
    this.expire(now);
    const reports = withNeighbours ? [...this.reports.values()] : [];
    // A report's ageing is the same on every channel: worked out once per report.
    const ageing = reports.map((r) => Math.pow(2, -Math.max(0, now - r.atUs) / this.params.halfLifeUs));
    const mineByChannel = new Map<number, ChannelWorkload>();
    for (const o of own) if (!mineByChannel.has(o.channel)) mineByChannel.set(o.channel, o);
    const out: MergedWorkload[] = [];
    for (const ch of channels) {
      let weight = 0;
      let sum = 0;
      let neighbours = 0;
      const mine = mineByChannel.get(ch);
      if (mine) {
        weight += mine.windows;
        sum += mine.windows * mine.w;
      }
      for (let i = 0; i < reports.length; i++) {
        const e = ch >= 0 && ch <= MAX_CHANNEL ? reports[i]!.entries[ch] : undefined;
        if (!e || e.windows <= 0) continue;
        const wt = this.params.neighbourWeight * e.windows * ageing[i]!;
        if (wt <= 0) continue;
        weight += wt;
        sum += wt * e.w;
        neighbours++;
      }
      if (weight > 0) out.push({ channel: ch, w: sum / weight, ownW: mine?.w, neighbours, weight });
    }
    return out;
  }
}
