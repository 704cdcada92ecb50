import type { Micros } from '../../core/time.js';
import { NewReno } from './newreno.js';
import { cwndLimited } from './reno.js';
import type { AckEvent, CcName, CcParams, SendView } from './types.js';

/** RFC 9438 5's constants. */
export const CUBIC_C = 0.4;
export const CUBIC_BETA = 0.7;
/** RFC 9438 4.3: the additive increase that makes AIMD(α, β) as fast as Reno on average. */
export const CUBIC_ALPHA = (3 * (1 - CUBIC_BETA)) / (1 + CUBIC_BETA);

/** K of RFC 9438 Figure 2, in seconds: when W_cubic is back at W_max, from a window of `cwndEpoch` (both in segments). */
export function cubicK(wMaxSegments: number, cwndEpochSegments: number): number {
  return Math.cbrt(Math.max(0, wMaxSegments - cwndEpochSegments) / CUBIC_C);
}

/** W_cubic(t) of RFC 9438 Figure 1, in segments, t and K in seconds. */
export function wCubic(t: number, k: number, wMaxSegments: number): number {
  return CUBIC_C * (t - k) ** 3 + wMaxSegments;
}

/** What a congestion event changed, kept so that an undo (RFC 9438 4.9) can put it back. */
interface CubicState {
  wMax: number;
  k: number;
  epochStart: Micros | undefined;
  cwndEpoch: number;
  wEst: number;
  cwndPrior: number;
  afterTimeout: boolean;
}

/**
 * CUBIC (RFC 9438) window growth and reduction, with NewReno's loss
 * recovery (RFC 6582) when SACK is not negotiated; with SACK, the factory
 * puts it under SackRecovery (RFC 6675), as Linux recovers. Congestion
 * avoidance follows the cubic W_cubic(t) = C(t - K)^3 + W_max from the
 * start of each avoidance stage (the epoch), unless the Reno-friendly
 * estimate W_est is ahead of it (4.3); below and above W_max (concave and
 * convex regions, 4.4-4.5) cwnd grows towards W_cubic(t + RTT), at most
 * half of itself per RTT. A congestion event cuts ssthresh to β = 0.7 of
 * the flight (4.6), lowering W_max further when it came before the last
 * maximum (fast convergence, 4.7); a timeout starts the next avoidance
 * stage with K = 0 from the window it reaches (4.8). Windows are bytes
 * here, segments in the RFC's formulas.
 */
export class Cubic extends NewReno {
  override readonly name: CcName = 'cubic';
  /** W_max in bytes: the window before the last reduction (0: none yet). */
  wMax = 0;
  /** K in seconds for the current epoch. */
  k = 0;
  /** Start of the current congestion avoidance stage (undefined: not in one). */
  epochStart: Micros | undefined;
  /** cwnd when the epoch began, bytes. */
  cwndEpoch = 0;
  /** The Reno-friendly estimate W_est, bytes (fractional). */
  wEst = 0;
  /** cwnd before the last reduction (cwnd_prior), bytes: past it, W_est grows as Reno does (α = 1). */
  cwndPrior = 0;
  /** Smoothed RTT (RFC 6298's weights) for W_cubic(t + RTT), microseconds. */
  srttUs: number | undefined;
  private afterTimeout = false;
  /** Growth below one byte, carried to the next ACK. */
  private carry = 0;
  private saved: CubicState | undefined;

  constructor(p: CcParams) {
    super(p);
  }

  override onRtt(rttUs: number, now: Micros): void {
    super.onRtt(rttUs, now);
    if (rttUs <= 0) return;
    this.srttUs = this.srttUs === undefined ? rttUs : (7 * this.srttUs + rttUs) / 8;
  }

  protected override grow(a: AckEvent, v: SendView): void {
    if (this.cwnd < this.ssthresh) {
      super.grow(a, v);
      return;
    }
    if (!cwndLimited(a, v, this.cwnd)) return;
    this.avoid(a, v);
  }

  /** Congestion avoidance on an ACK of new data (RFC 9438 4.2-4.5). */
  private avoid(a: AckEvent, v: SendView): void {
    const mss = v.mss;
    if (this.epochStart === undefined) this.startEpoch(a.now, mss);
    const t = (a.now - this.epochStart!) / 1e6;
    const rtt = (this.srttUs ?? 0) / 1e6;
    // W_est grows by α segments per window of segments acknowledged (4.3).
    const alpha = this.wEst >= this.cwndPrior ? 1 : CUBIC_ALPHA;
    this.wEst += (alpha * a.acked * mss) / this.cwnd;
    const wMaxSeg = this.wMax / mss;
    if (wCubic(t, this.k, wMaxSeg) * mss < this.wEst) {
      // Reno-friendly region.
      this.cwnd = Math.max(this.cwnd, Math.floor(this.wEst));
      return;
    }
    // Concave (cwnd < W_max) or convex region: towards the target one RTT ahead (4.4, 4.5).
    const w = wCubic(t + rtt, this.k, wMaxSeg) * mss;
    const target = Math.min(Math.max(w, this.cwnd), 1.5 * this.cwnd);
    this.carry += ((target - this.cwnd) * a.acked) / this.cwnd;
    const whole = Math.floor(this.carry);
    this.cwnd += whole;
    this.carry -= whole;
  }

  /**
   * A congestion avoidance stage begins (RFC 9438 4.2). After a timeout
   * (4.8), or with no maximum above the window (no reduction yet, as after
   * HyStart++ ended slow start: Linux does the same), W_max is this window
   * and K = 0: the convex region at once.
   */
  private startEpoch(now: Micros, mss: number): void {
    this.epochStart = now;
    this.cwndEpoch = this.cwnd;
    this.wEst = this.cwnd;
    this.carry = 0;
    if (this.afterTimeout || this.wMax <= this.cwnd) {
      this.wMax = this.cwnd;
      this.k = 0;
    } else this.k = cubicK(this.wMax / mss, this.cwndEpoch / mss);
    this.afterTimeout = false;
  }

  /**
   * Multiplicative decrease (RFC 9438 4.6) with fast convergence (4.7):
   * ssthresh = β × FlightSize, and W_max is the window at the event, or
   * (1 + β)/2 of it when the event came before the last maximum was
   * reached. What it changes is kept for an undo.
   */
  protected override reducedSsthresh(flight: number, v: SendView, _now: Micros): number {
    this.saved = {
      wMax: this.wMax,
      k: this.k,
      epochStart: this.epochStart,
      cwndEpoch: this.cwndEpoch,
      wEst: this.wEst,
      cwndPrior: this.cwndPrior,
      afterTimeout: this.afterTimeout,
    };
    this.wMax = this.cwnd < this.wMax ? (this.cwnd * (1 + CUBIC_BETA)) / 2 : this.cwnd;
    this.cwndPrior = this.cwnd;
    this.epochStart = undefined;
    return Math.max(Math.floor(flight * CUBIC_BETA), 2 * v.mss);
  }

  /** RFC 9438 4.8: cwnd to one segment as Reno, ssthresh by β; the next avoidance stage starts with K = 0. */
  override onTimeout(v: SendView, now: Micros): void {
    super.onTimeout(v, now);
    this.afterTimeout = true;
  }

  /**
   * RFC 9438 4.9: the last congestion event was spurious. W_max, K, the
   * epoch, W_est and cwnd_prior go back to what they were before it; cwnd,
   * ssthresh and the recovery state as for Reno (the connection computes
   * `prior`).
   */
  override undo(prior: { cwnd: number; ssthresh: number }, v: SendView, now: Micros): void {
    const s = this.saved;
    if (s) {
      this.wMax = s.wMax;
      this.k = s.k;
      this.epochStart = s.epochStart;
      this.cwndEpoch = s.cwndEpoch;
      this.wEst = s.wEst;
      this.cwndPrior = s.cwndPrior;
      this.afterTimeout = s.afterTimeout;
      this.saved = undefined;
    }
    super.undo(prior, v, now);
  }
}
