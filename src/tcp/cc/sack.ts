import type { Micros } from '../../core/time.js';
import type { AckEvent, CcName, CcParams, CongestionControl, NextSegment, SendView } from './types.js';
import { Prr } from './prr.js';
import { newData, Reno } from './reno.js';

/**
 * SACK-based loss recovery (RFC 6675) over Reno's window growth: recovery
 * starts on DupThresh duplicate ACKs or when the scoreboard says the first
 * unacknowledged segment is lost; during it, cwnd = ssthresh and a segment
 * goes out whenever cwnd - pipe allows, chosen by NextSeg (lost holes first,
 * then new data, then other holes). It ends when the cumulative ACK passes
 * the RecoveryPoint.
 *
 * The window outside recovery, and how far a congestion event cuts it, are
 * the growth policy's: Reno's (the `sack` variant) or CUBIC's (the `cubic`
 * variant once SACK is negotiated). With `prr`, Proportional Rate Reduction
 * (RFC 6937, see prr.ts) decides how much goes out on each ACK of a
 * recovery instead of cwnd - pipe.
 */
export class SackRecovery implements CongestionControl {
  readonly name: CcName;
  readonly sackRecovery = true;
  private readonly growth: Reno;
  private readonly prr: Prr | undefined;
  /** Bytes SACKed after the last ACK, and the IsLost boundary then (PRR's DeliveredData and SafeACK). */
  private lastSacked = 0;
  private lastLost = 0;
  inRecovery = false;
  private dupAcks = 0;
  private recoveryPoint = 0;
  /** Highest offset retransmitted in this recovery, plus one (HighRxt + 1). */
  private highRxt = 0;
  private retransmitHead = false;

  constructor(
    private readonly p: CcParams,
    growth?: Reno,
  ) {
    this.growth = growth ?? new Reno(p);
    this.name = growth ? growth.name : 'sack';
    this.prr = p.prr === true ? new Prr() : undefined;
  }

  get cwnd(): number {
    return this.growth.cwnd;
  }

  get ssthresh(): number {
    return this.growth.ssthresh;
  }

  onAck(a: AckEvent, v: SendView): void {
    const delivered = this.prr ? this.delivered(a, v) : 0;
    if (this.inRecovery) {
      if (a.ack >= this.recoveryPoint) {
        this.inRecovery = false;
        this.growth.cwnd = this.growth.ssthresh;
        this.dupAcks = 0;
      }
      this.highRxt = Math.max(this.highRxt, v.una);
      if (this.inRecovery && this.prr) this.prrAck(a, v, delivered);
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
    if ((this.dupAcks >= this.p.dupThresh || lost) && v.una < v.max && a.ack > this.recoveryPoint) this.enter(a, v, delivered);
  }

  private enter(a: AckEvent, v: SendView, delivered: number): void {
    this.inRecovery = true;
    this.recoveryPoint = v.max;
    this.growth.reduce(a.flightBefore, v, a.now);
    this.growth.cwnd = this.growth.ssthresh;
    this.highRxt = v.una;
    this.retransmitHead = true;
    if (!this.prr) return;
    this.prr.start(v.max - v.una);
    this.prrAck(a, v, delivered);
  }

  /** RFC 6937's DeliveredData of this ACK: the change in SND.UNA plus the change in SACKed bytes. */
  private delivered(a: AckEvent, v: SendView): number {
    const sacked = v.scoreboard.sackedBytes;
    const d = a.acked + sacked - this.lastSacked;
    this.lastSacked = sacked;
    return Math.max(0, d);
  }

  /** PRR's step on an ACK of the recovery; cwnd shows the pipe plus what may be sent on it. */
  private prrAck(a: AckEvent, v: SendView, delivered: number): void {
    const sb = v.scoreboard;
    const lost = Math.max(v.una, Math.min(v.max, sb.lostBelow(v.mss)));
    // SafeACK (RFC 9937): SND.UNA advanced and no byte newly deemed lost.
    const safe = a.acked > 0 && sb.unsackedIn(Math.max(this.lastLost, v.una, this.highRxt), lost) === 0;
    this.lastLost = lost;
    const pipe = sb.pipe(v.una, v.max, this.highRxt, v.mss);
    this.prr!.onAck(delivered, pipe, this.growth.ssthresh, v.mss, safe);
    this.growth.cwnd = pipe + this.prr!.quota;
  }

  onTimeout(v: SendView, now: Micros): void {
    this.growth.onTimeout(v, now);
    this.inRecovery = false;
    this.dupAcks = 0;
    this.retransmitHead = false;
    this.recoveryPoint = v.max;
    // RFC 2018 8: after a timeout the receiver may have reneged; SACKed bits are cleared.
    v.scoreboard.clear();
    this.lastSacked = 0;
    this.lastLost = 0;
  }

  onRtt(rttUs: number, now: Micros): void {
    this.growth.onRtt(rttUs, now);
  }

  /** As Reno's: recovery left, RecoveryPoint forgotten (a loss found later starts a new one), cwnd and ssthresh as given. */
  undo(prior: { cwnd: number; ssthresh: number }, v: SendView, now: Micros): void {
    this.growth.undo(prior, v, now);
    this.inRecovery = false;
    this.dupAcks = 0;
    this.retransmitHead = false;
    this.recoveryPoint = 0;
    this.highRxt = v.una;
  }

  congestionEvent(flight: number, v: SendView, now: Micros): void {
    this.growth.congestionEvent(flight, v, now);
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
    // Under PRR cwnd is pipe + quota: a segment moves bytes from the quota to the pipe (next() checks cwnd - pipe).
    if (this.inRecovery && this.prr) this.prr.sent(seg.len);
  }
}
