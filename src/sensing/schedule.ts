import { RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';

export interface SensingScheduleParams {
  /** T_s: the whole round, retunes included. */
  durationUs: Micros;
  /** A round starts every period. */
  periodUs: Micros;
  /** Channels visited per round, in turn; 0 or more than there are means all. */
  channelsPerRound: number;
  /** The channels to sense, in visiting order. */
  channels: readonly number[];
  /** The sensing front-end's retune time, spent at the start of each visit. */
  retuneUs: Micros;
}

/** One channel visit: tune, let the retune settle, capture `captureUs` of samples. */
export interface Visit {
  round: number;
  channel: number;
  startUs: Micros;
  captureUs: Micros;
  /**
   * When the visit should be over, on the round's own plan (round start +
   * its share of T_s for each visit so far). A real-time driver whose timers
   * ran late captures less so that the round still fits in T_s.
   */
  endUs: Micros;
}

export type SensingAction =
  | { kind: 'pause-tx'; round: number }
  | { kind: 'visit'; visit: Visit }
  | { kind: 'resume-tx'; round: number }
  | { kind: 'round-done'; round: number; startUs: Micros; endUs: Micros; channels: number[] };

/**
 * When to sense what. Every `periodUs` a round of length T_s starts: data
 * transmission on the sensing radio pauses, the radio visits
 * `channelsPerRound` channels in turn (the rotation carries on from round to
 * round, so every channel is seen even when a round covers a few), each for an
 * equal share of T_s, then transmission resumes. Sans-IO: `tick(now)` when
 * `nextDeadline()` is due, and `visitDone(now)` when the driver has finished
 * the visit it was given.
 */
export class SensingSchedule {
  private params: SensingScheduleParams;
  private nextRoundUs: Micros;
  private round = 0;
  private cursor = 0;
  /** The round in progress: its channels, which visit is out, when it started. */
  private current: { round: number; channels: number[]; index: number; startUs: Micros; dwellUs: Micros } | undefined;

  constructor(params: SensingScheduleParams, firstRoundUs: Micros) {
    this.params = SensingSchedule.check(params);
    this.nextRoundUs = firstRoundUs;
  }

  static check(p: SensingScheduleParams): SensingScheduleParams {
    if (p.channels.length === 0) throw new RangeArgumentError('sensing.channels', p.channels, 'at least one channel');
    if (!(p.periodUs > 0)) throw new RangeArgumentError('sensing.periodUs', p.periodUs, 'a period > 0');
    if (!(p.durationUs > 0 && p.durationUs <= p.periodUs)) {
      throw new RangeArgumentError('sensing.durationUs', p.durationUs, `> 0 and <= the period (${p.periodUs} us)`);
    }
    const k = SensingSchedule.perRound(p);
    if (Math.floor(p.durationUs / k) <= p.retuneUs) {
      throw new RangeArgumentError(
        'sensing.durationUs',
        p.durationUs,
        `long enough to visit ${k} channel(s) with a ${p.retuneUs} us retune each (> ${k * p.retuneUs} us)`,
      );
    }
    return p;
  }

  private static perRound(p: SensingScheduleParams): number {
    return p.channelsPerRound <= 0 || p.channelsPerRound > p.channels.length ? p.channels.length : p.channelsPerRound;
  }

  /** New parameters take effect from the next round; the round in progress finishes as planned. */
  reconfigure(p: SensingScheduleParams, now: Micros): void {
    this.params = SensingSchedule.check(p);
    this.cursor %= p.channels.length;
    if (!this.current) this.nextRoundUs = Math.min(this.nextRoundUs, now + p.periodUs);
  }

  get sensing(): boolean {
    return this.current !== undefined;
  }

  get rounds(): number {
    return this.round;
  }

  /** When `tick` next has something to do; undefined while a visit is out (the driver reports back). */
  nextDeadline(): Micros | undefined {
    return this.current ? undefined : this.nextRoundUs;
  }

  tick(now: Micros): SensingAction[] {
    if (this.current || now < this.nextRoundUs) return [];
    const p = this.params;
    const k = SensingSchedule.perRound(p);
    const channels: number[] = [];
    for (let i = 0; i < k; i++) channels.push(p.channels[(this.cursor + i) % p.channels.length]!);
    this.cursor = (this.cursor + k) % p.channels.length;
    const round = this.round++;
    // Rounds keep their cadence from the schedule, not from when the driver got round to them.
    this.nextRoundUs += p.periodUs;
    if (this.nextRoundUs <= now) this.nextRoundUs = now + p.periodUs;
    this.current = { round, channels, index: 0, startUs: now, dwellUs: Math.floor(p.durationUs / k) };
    return [
      { kind: 'pause-tx', round },
      { kind: 'visit', visit: this.visitAt(now) },
    ];
  }

  /** The driver finished the visit it was handed. */
  visitDone(now: Micros): SensingAction[] {
    const c = this.current;
    if (!c) return [];
    c.index++;
    if (c.index < c.channels.length) return [{ kind: 'visit', visit: this.visitAt(now) }];
    this.current = undefined;
    return [
      { kind: 'resume-tx', round: c.round },
      { kind: 'round-done', round: c.round, startUs: c.startUs, endUs: now, channels: c.channels },
    ];
  }

  private visitAt(now: Micros): Visit {
    const c = this.current!;
    return {
      round: c.round,
      channel: c.channels[c.index]!,
      startUs: now,
      captureUs: c.dwellUs - this.params.retuneUs,
      endUs: c.startUs + (c.index + 1) * c.dwellUs,
    };
  }
}
