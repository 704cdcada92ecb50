import type { Micros } from '../../core/time.js';
import { HyStartPlusPlus } from './hystart.js';
import type { AckEvent, CcName, CcParams, CongestionControl, NextSegment, SendView } from './types.js';

/**
 * TCP Reno (RFC 5681): slow start and congestion avoidance, fast retransmit
 * on the third duplicate ACK, fast recovery with window inflation, left on
 * the first ACK of new data. Subclasses change what a partial ACK does
 * (NewReno), how the window grows (Vegas, CUBIC) and how far a congestion
 * event cuts it (CUBIC). With `hystart` set, the first slow start is
 * HyStart++'s (RFC 9406).
 */
export class Reno implements CongestionControl {
  readonly name: CcName = 'reno';
  cwnd: number;
  ssthresh = Number.MAX_SAFE_INTEGER;
  inRecovery = false;
  protected dupAcks = 0;
  /** Send the segment at `una` before anything else (fast retransmit, NewReno's partial ACK). */
  protected retransmitHead = false;
  /** Highest offset sent when recovery began (RFC 6582's `recover`); also guards against a false fast retransmit after a timeout. */
  protected recover = 0;
  protected readonly hystart: HyStartPlusPlus | undefined;

  constructor(protected readonly p: CcParams) {
    this.cwnd = p.initialWindow;
    this.hystart = p.hystart === true ? new HyStartPlusPlus() : undefined;
  }

  onAck(a: AckEvent, v: SendView): void {
    if (a.dup) {
      this.dupAcks++;
      if (this.inRecovery) this.recoveryDup(a, v);
      else if (this.dupAcks === this.p.dupThresh && this.mayEnterRecovery(a)) this.enterRecovery(a, v);
      return;
    }
    if (a.acked === 0) return;
    this.dupAcks = 0;
    if (this.inRecovery) {
      this.recoveryAck(a, v);
      return;
    }
    this.grow(a, v);
  }

  /** RFC 6582 4.1: after a timeout, duplicate ACKs for data sent before it do not start another recovery. */
  protected mayEnterRecovery(a: AckEvent): boolean {
    return a.ack > this.recover || this.recover === 0;
  }

  /** A duplicate ACK during fast recovery: window inflation (RFC 5681 3.2 step 4). */
  protected recoveryDup(_a: AckEvent, v: SendView): void {
    this.cwnd += v.mss;
  }

  /**
   * A congestion event (a loss detected, or a timeout) with `flight` bytes
   * outstanding: sets ssthresh, and ends HyStart++ (RFC 9406 4.2). Public
   * so that a recovery built over this window growth (SackRecovery) cuts it
   * the same way.
   */
  reduce(flight: number, v: SendView, now: Micros): void {
    this.hystart?.end();
    this.ssthresh = this.reducedSsthresh(flight, v, now);
  }

  /** RFC 5681 (4): half the flight, at least two segments. */
  protected reducedSsthresh(flight: number, v: SendView, _now: Micros): number {
    return Math.max(Math.floor(flight / 2), 2 * v.mss);
  }

  congestionEvent(flight: number, v: SendView, now: Micros): void {
    this.reduce(flight, v, now);
    this.cwnd = Math.min(this.cwnd, Math.max(v.mss, this.ssthresh));
  }

  protected enterRecovery(a: AckEvent, v: SendView): void {
    this.reduce(a.flightBefore, v, a.now);
    this.cwnd = this.ssthresh + this.p.dupThresh * v.mss;
    this.recover = v.max;
    this.inRecovery = true;
    this.retransmitHead = true;
  }

  /** New data acknowledged during fast recovery: Reno leaves it on any. */
  protected recoveryAck(_a: AckEvent, _v: SendView): void {
    this.cwnd = this.ssthresh;
    this.inRecovery = false;
  }

  /**
   * RFC 5681 3.1: slow start grows by at most one SMSS per ACK, congestion
   * avoidance by about one SMSS per RTT; only while the window is what limits
   * the sender (RFC 7661's cwnd validation, as Linux does): a sender held back
   * by the receiver's window or by its application does not inflate cwnd
   * beyond what it has shown the path can carry.
   */
  protected grow(a: AckEvent, v: SendView): void {
    if (this.hystart?.active && this.cwnd < this.ssthresh) {
      this.hystartGrow(a, v);
      return;
    }
    if (!cwndLimited(a, v, this.cwnd)) return;
    if (this.cwnd < this.ssthresh) this.cwnd += Math.min(a.acked, v.mss);
    else this.cwnd += Math.max(1, Math.floor((v.mss * v.mss) / this.cwnd));
  }

  /** Slow start under HyStart++: it tracks rounds and RTTs on every ACK; the window grows only while it limits the sender. */
  private hystartGrow(a: AckEvent, v: SendView): void {
    const h = this.hystart!;
    const { increase, toCa } = h.onAck(a.ack, a.acked, v.max, v.mss);
    // CSS ran its rounds: congestion avoidance from this window (RFC 9406 4.2).
    if (toCa) this.ssthresh = this.cwnd;
    else if (cwndLimited(a, v, this.cwnd)) this.cwnd += increase;
  }

  onTimeout(v: SendView, now: Micros): void {
    this.reduce(v.max - v.una, v, now);
    this.cwnd = v.mss;
    this.inRecovery = false;
    this.retransmitHead = false;
    this.dupAcks = 0;
    this.recover = v.max;
  }

  onRtt(rttUs: number, _now: Micros): void {
    this.hystart?.onRtt(rttUs);
  }

  /** RFC 4015 3.2 step (3) and RFC 3708 5: back to the window before the response; a later loss may start a recovery at once. */
  undo(prior: { cwnd: number; ssthresh: number }, v: SendView, _now: Micros): void {
    this.cwnd = Math.max(v.mss, prior.cwnd);
    this.ssthresh = Math.max(2 * v.mss, prior.ssthresh);
    this.inRecovery = false;
    this.retransmitHead = false;
    this.dupAcks = 0;
    this.recover = 0;
  }

  next(v: SendView): NextSegment | undefined {
    if (this.retransmitHead && v.una < v.max) {
      return { seq: v.una, len: Math.min(v.mss, v.max - v.una) };
    }
    return newData(v, v.nxt - v.una, this.cwnd);
  }

  sent(seg: NextSegment, v: SendView): void {
    if (seg.seq === v.una) this.retransmitHead = false;
  }
}

/** Whether the flight before this ACK used the congestion window (within one segment). */
export function cwndLimited(a: AckEvent, v: SendView, cwnd: number): boolean {
  return a.flightBefore + v.mss > cwnd;
}

/**
 * The next segment from `v.nxt` when `inFlight` bytes are out and the window
 * is `cwnd`: never past una + min(cwnd, rwnd) (RFC 5681 3.1), and no runt
 * while more data waits than fits (sender-side silly-window avoidance,
 * RFC 9293 3.8.6.2.1) unless half the peer's largest window fits.
 */
export function newData(v: SendView, inFlight: number, cwnd: number): NextSegment | undefined {
  const waiting = v.end - v.nxt;
  if (waiting <= 0) return undefined;
  const usable = Math.min(cwnd - inFlight, v.wndEnd - v.nxt);
  const len = Math.min(v.mss, waiting, usable);
  if (len <= 0) return undefined;
  if (len < Math.min(v.mss, waiting) && len < v.maxWnd / 2) return undefined;
  return { seq: v.nxt, len };
}
