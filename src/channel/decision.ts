import type { Micros } from '../core/time.js';
import type { ChannelPlan } from '../../radio/channels.js';
import { remainingCapacity } from './capacity.js';

export interface DecisionParams {
  /** C of equation (2). */
  capacityBps: number;
  /** Move only for a gain of more than this fraction of C. */
  hysteresis: number;
  /** Stay at least this long on a channel. */
  minDwellUs: Micros;
  /** Traffic the node must receive; a channel that cannot carry it is left even within hysteresis. */
  loadBps: number;
  /** Channels R1 may take. */
  allowed: readonly number[];
  /**
   * Chance of taking a better channel when the current one is shared with
   * another router: routers that decide at the same moment would otherwise
   * all leave together and collide again elsewhere (p-persistence). A move
   * away from PN load on an unshared channel is always taken.
   */
  contendedMoveProbability: number;
}

/** How one candidate channel scored. */
export interface ChannelScore {
  channel: number;
  w: number;
  /** RC of equation (2). */
  rc: number;
  /** Neighbours' R1 receivers on this channel or overlapping it, weighted by overlap. */
  sharers: number;
  /** RC / (1 + sharers): what this node can expect to get. */
  score: number;
  /** Busy energy around the channel: sum over overlapping channels of overlap * w (tie-breaker). */
  vicinity: number;
}

export type DecisionReason =
  'initial' | 'not-allowed' | 'best' | 'min-dwell' | 'load-unmet' | 'better' | 'within-hysteresis' | 'yielded' | 'no-measurement' | 'incomplete-round';

export interface Decision {
  channel: number | undefined;
  previous: number | undefined;
  changed: boolean;
  reason: DecisionReason;
  /** Candidates, best first. */
  scores: ChannelScore[];
  atUs: Micros;
}

/**
 * The channel decision block: picks R1's receive channel. Each allowed channel
 * with a workload estimate is scored by its remaining capacity (eq. 2) divided
 * among the receivers that would share it (this node plus neighbours whose
 * announced R1 is on it or overlaps it); R1 moves to the best one only when
 * it beats the current channel by more than the hysteresis margin, or when the
 * current channel cannot carry the node's load and the best one can, and never before the minimum
 * dwell has passed. Equal scores go to the channel with the quieter
 * vicinity, then to the lower channel number.
 */
export class ChannelDecision {
  private currentChannel: number | undefined;
  private sinceUs: Micros = 0;

  constructor(
    private readonly plan: ChannelPlan,
    private params: DecisionParams,
    initial?: number,
    atUs: Micros = 0,
  ) {
    if (initial !== undefined && initial > 0) {
      this.currentChannel = initial;
      this.sinceUs = atUs;
    }
  }

  get current(): number | undefined {
    return this.currentChannel;
  }

  setParams(p: DecisionParams): void {
    this.params = p;
  }

  /** Scores every allowed channel that has a workload estimate, best first. */
  score(workload: ReadonlyMap<number, number>, neighbourR1: ReadonlyMap<string, number>): ChannelScore[] {
    const C = this.params.capacityBps;
    const scores: ChannelScore[] = [];
    for (const ch of this.params.allowed) {
      const w = workload.get(ch);
      if (w === undefined) continue;
      let sharers = 0;
      for (const n of neighbourR1.values()) {
        if (this.plan.has(n) && (n === ch || this.plan.overlaps(n, ch))) sharers += this.plan.overlapFactor(n, ch);
      }
      let vicinity = 0;
      for (const o of this.plan.overlapping(ch)) {
        const wo = workload.get(o);
        if (wo !== undefined) vicinity += this.plan.overlapFactor(o, ch) * wo;
      }
      const rc = remainingCapacity(w, C);
      scores.push({ channel: ch, w, rc, sharers, score: rc / (1 + sharers), vicinity });
    }
    const eps = 1e-9 * C;
    scores.sort((a, b) =>
      Math.abs(a.score - b.score) > eps ? b.score - a.score : a.vicinity !== b.vicinity ? a.vicinity - b.vicinity : a.channel - b.channel,
    );
    return scores;
  }

  /** Decides R1's channel from the current workload estimates and the neighbours' announced R1 channels. */
  decide(workload: ReadonlyMap<number, number>, neighbourR1: ReadonlyMap<string, number>, now: Micros, draw = 0): Decision {
    const scores = this.score(workload, neighbourR1);
    const previous = this.currentChannel;
    const best = scores[0];
    const move = (reason: DecisionReason): Decision => {
      this.currentChannel = best!.channel;
      this.sinceUs = now;
      return { channel: best!.channel, previous, changed: best!.channel !== previous, reason, scores, atUs: now };
    };
    const stay = (reason: DecisionReason): Decision => ({ channel: previous, previous, changed: false, reason, scores, atUs: now });

    if (!best) return stay('no-measurement');
    if (previous === undefined) return move('initial');
    if (!this.params.allowed.includes(previous)) return move('not-allowed');
    if (best.channel === previous) return stay('best');
    if (now - this.sinceUs < this.params.minDwellUs) return stay('min-dwell');
    const mine = scores.find((s) => s.channel === previous);
    // The current channel unmeasured counts as unable to carry anything.
    const mineScore = mine ? mine.score : 0;
    const C = this.params.capacityBps;
    // Leave a channel that cannot carry the load for one that can, margin or not.
    if (this.params.loadBps > 0 && mineScore < this.params.loadBps && best.score >= this.params.loadBps) return move('load-unmet');
    if (best.score - mineScore > this.params.hysteresis * C) {
      // `draw` is uniform in [0, 1), from the caller's seeded stream.
      if (mine && mine.sharers > 0 && draw >= this.params.contendedMoveProbability) return stay('yielded');
      return move('better');
    }
    return stay('within-hysteresis');
  }
}
