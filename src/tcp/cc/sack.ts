import type { Micros } from '../../core/time.js';
import type { AckEvent, CcName, CcParams, CongestionControl, NextSegment, SendView } from './types.js';
import { newData, Reno } from './reno.js';

/**
 * SACK-based loss recovery (RFC 6675) over Reno's window growth: recovery
 * starts on DupThresh duplicate ACKs or when the scoreboard says the first
 * unacknowledged segment is lost; during it, cwnd = ssthresh and a segment
 * goes out whenever cwnd - pipe allows, chosen by NextSeg (lost holes first,
 * then new data, then other holes). It ends when the cumulative ACK passes
 * the RecoveryPoint.
 */
export class SackRecovery implements CongestionControl {
  readonly name: CcName = 'sack';
  private readonly growth: Reno;
  inRecovery = false;
  private dupAcks = 0;
  private recoveryPoint = 0;
  /** Highest offset retransmitted in this recovery, plus one (HighRxt + 1). */
  private highRxt = 0;
  private retransmitHead = false;

  constructor(private readonly p: CcParams) {
    this.growth = new Reno(p);
  }

  get cwnd(): number {
    return this.growth.cwnd;
  }

  get ssthresh(): number {
    return this.growth.ssthresh;
  }

  onAck(a: AckEvent, v: SendView): void {
    if (this.inRecovery) {
      if (a.ack >= this.recoveryPoint) {
        this.inRecovery = false;
        this.growth.cwnd = this.growth.ssthresh;
        this.dupAcks = 0;
      }
      this.highRxt = Math.max(this.highRxt, v.una);
      return;
    }
    if (a.acked > 0) {
      this.dupAcks = 0;
      this.growth.onAck({ ...a, dup: false }, v);
    }
    if (a.dup) this.dupAcks++;
    const lost = v.sackOn && v.scoreboard.isLost(v.una, v.mss);
    // As RFC 6582's `recover`: duplicates of what a timeout resent, acknowledged
    // up to the old RecoveryPoint, do not start a recovery (hence `>`).
    if ((this.dupAcks >= this.p.dupThresh || lost) && v.una < v.max && a.ack > this.recoveryPoint) this.enter(a, v);
  }

  private enter(a: AckEvent, v: SendView): void {
    this.inRecovery = true;
    this.recoveryPoint = v.max;
    const half = Math.max(Math.floor(a.flightBefore / 2), 2 * v.mss);
    this.growth.ssthresh = half;
    this.growth.cwnd = half;
    this.highRxt = v.una;
    this.retransmitHead = true;
  }

  onTimeout(v: SendView, now: Micros): void {
    this.growth.onTimeout(v, now);
    this.inRecovery = false;
    this.dupAcks = 0;
    this.retransmitHead = false;
    this.recoveryPoint = v.max;
    // RFC 2018 8: after a timeout the receiver may have reneged; SACKed bits are cleared.
    v.scoreboard.clear();
  }

  onRtt(): void {}

  /** As Reno's: recovery left, RecoveryPoint forgotten (a loss found later starts a new one), cwnd and ssthresh as given. */
  undo(prior: { cwnd: number; ssthresh: number }, v: SendView, now: Micros): void {
    this.growth.undo(prior, v, now);
    this.inRecovery = false;
    this.dupAcks = 0;
    this.retransmitHead = false;
    this.recoveryPoint = 0;
    this.highRxt = v.una;
  }

  next(v: SendView): NextSegment | undefined {
    if (!this.inRecovery) {
      const seg = newData(v, v.nxt - v.una, this.cwnd);
      return seg;
    }
    // The first segment is presumed lost, unless the receiver reports holding it (acknowledgement limits do).
    if (this.retransmitHead && v.una < v.max && !v.scoreboard.isSacked(v.una)) {
      return { seq: v.una, len: Math.min(v.mss, v.max - v.una, this.holeEnd(v, v.una)) };
    }
    this.retransmitHead = false;
    const sb = v.scoreboard;
    const pipe = sb.pipe(v.una, v.max, this.highRxt, v.mss);
    if (this.cwnd - pipe < v.mss) return undefined;
    const high = sb.highSacked ?? v.una;
    const from = Math.max(this.highRxt, v.una);
    // (1) the first lost hole above HighRxt.
    const lostEnd = Math.min(high, sb.lostBelow(v.mss));
    const hole = sb.firstHole(from, lostEnd, v.mss);
    if (hole) return { seq: hole.start, len: hole.end - hole.start };
    // (2) new data, as the receiver's window allows.
    const fresh = newData({ ...v, nxt: v.max }, 0, Number.MAX_SAFE_INTEGER);
    if (fresh) return fresh;
    // (3) any hole below the highest SACKed byte.
    const other = sb.firstHole(from, high, v.mss);
    if (other) return { seq: other.start, len: other.end - other.start };
    return undefined;
  }

  private holeEnd(v: SendView, at: number): number {
    const h = v.scoreboard.firstHole(at, v.max, v.mss);
    return h && h.start === at ? h.end - h.start : v.mss;
  }

  sent(seg: NextSegment, v: SendView): void {
    if (seg.seq === v.una) this.retransmitHead = false;
    if (this.inRecovery && seg.seq < v.max) this.highRxt = Math.max(this.highRxt, seg.seq + seg.len);
  }
}
