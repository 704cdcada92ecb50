import type { Micros } from '../core/time.js';

/** R2 away for a sensing round, or retuning as the round ends. */
export const R2_SENSING = -1;
/** R2 retuning from one channel to another (the switch overhead). */
export const R2_TUNING = -2;
/** R2 on no channel: before its first tune, and after a sensing round that found every queue empty. */
export const R2_UNTUNED = -3;

/** Where a packet's time in a channel queue went, by what R2 was doing meanwhile. */
export interface QueueWait {
  /** R2 away sensing (the pause, and the retune that ends it). */
  sensingUs: Micros;
  /** R2 on another channel (its dwell there, or the tail of that dwell while its MAC finished), retuning, or untuned. */
  switchingUs: Micros;
  /** R2 on the packet's own channel: the packets ahead of it and the MAC's own work. */
  onChannelUs: Micros;
}

/**
 * What R2 did over time at one router, as the channel scheduler decided it:
 * a step function whose value is R2_SENSING, R2_TUNING, R2_UNTUNED, or the
 * channel R2 is tuned to and usable on (dwelling there, or idle). A packet's
 * wait in the queue of channel c over [a, b] is split by this function's
 * values over [a, b]: sensing, anything but c (switching), and c itself.
 *
 * The retune that ends a sensing round counts as sensing: without the round
 * R2 would not have left its channel. Every other retune counts as
 * switching. Fed by the router's R2Observer calls, in time order.
 */
export class R2Timeline {
  private readonly times: Micros[] = [0];
  private readonly states: number[] = [R2_UNTUNED];
  private resumedAt: Micros | undefined;

  /** The scheduler retuned R2 at `now`, usable on `channel` from `readyUs`. */
  tuned(channel: number, readyUs: Micros, now: Micros): void {
    this.set(now, this.resumedAt === now ? R2_SENSING : R2_TUNING);
    this.resumedAt = undefined;
    this.set(readyUs, channel);
  }

  paused(now: Micros): void {
    this.set(now, R2_SENSING);
  }

  /** Sensing over: R2 is untuned unless a retune follows at the same instant (then that retune is sensing's). */
  resumed(now: Micros): void {
    this.set(now, R2_UNTUNED);
    this.resumedAt = now;
  }

  /**
   * Splits a wait in the queue of `channel` over [fromUs, toUs]; each piece
   * spent away sensing or switching also goes to `onPiece` (for the union of
   * a leg's stalled time).
   */
  split(channel: number, fromUs: Micros, toUs: Micros, onPiece?: (cause: 'sensing' | 'switching', fromUs: Micros, toUs: Micros) => void): QueueWait {
    const w: QueueWait = { sensingUs: 0, switchingUs: 0, onChannelUs: 0 };
    if (!(toUs > fromUs)) return w;
    for (let i = this.indexAt(fromUs); i < this.times.length && this.times[i]! < toUs; i++) {
      const a = Math.max(fromUs, this.times[i]!);
      const b = Math.min(toUs, this.times[i + 1] ?? toUs);
      if (b <= a) continue;
      const s = this.states[i]!;
      if (s === channel) w.onChannelUs += b - a;
      else if (s === R2_SENSING) {
        w.sensingUs += b - a;
        onPiece?.('sensing', a, b);
      } else {
        w.switchingUs += b - a;
        onPiece?.('switching', a, b);
      }
    }
    return w;
  }

  /** Time R2 spent in each kind of state over [0, untilUs]: sensing, tuning, untuned, on some channel. */
  totals(untilUs: Micros): { sensingUs: Micros; tuningUs: Micros; untunedUs: Micros; usableUs: Micros; tunes: number } {
    const t = { sensingUs: 0, tuningUs: 0, untunedUs: 0, usableUs: 0, tunes: 0 };
    for (let i = 0; i < this.times.length && this.times[i]! < untilUs; i++) {
      const d = Math.min(untilUs, this.times[i + 1] ?? untilUs) - this.times[i]!;
      const s = this.states[i]!;
      if (s === R2_SENSING) t.sensingUs += d;
      else if (s === R2_TUNING) {
        t.tuningUs += d;
        t.tunes++;
      } else if (s === R2_UNTUNED) t.untunedUs += d;
      else t.usableUs += d;
    }
    return t;
  }

  /** From `t` on, R2 is in `state`; a step already set past `t` (a retune's ready time) is undone. */
  private set(t: Micros, state: number): void {
    while (this.times.length > 1 && this.times[this.times.length - 1]! > t) {
      this.times.pop();
      this.states.pop();
    }
    const last = this.times.length - 1;
    if (this.times[last] === t) this.states[last] = state;
    else if (this.states[last] !== state) {
      this.times.push(t);
      this.states.push(state);
    }
  }

  /** The last step at or before `t`. */
  private indexAt(t: Micros): number {
    let lo = 0;
    let hi = this.times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.times[mid]! <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
