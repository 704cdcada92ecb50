import type { Micros } from '../../core/time.js';
import { Prr } from './prr.js';
import { newData, Reno } from './reno.js';
import type { AckEvent, CcName, NextSegment, SendView } from './types.js';

/**
 * NewReno (RFC 6582): fast recovery lasts until everything outstanding at
 * its start is acknowledged. A partial ACK retransmits the next hole at once
 * and deflates the window by what it acknowledged; the full ACK sets cwnd to
 * min(ssthresh, FlightSize + SMSS).
 *
 * With `prr`, Proportional Rate Reduction (RFC 6937) replaces window
 * inflation and deflation: without SACK, each duplicate ACK stands for one
 * segment delivered, and a partial ACK for what it acknowledged beyond the
 * segments its duplicates already stood for (RFC 6937 3). No ACK of a
 * recovery without SACK is a SafeACK (a partial ACK reveals the next hole),
 * so the reduction bound is the conserving one. Recovery ends with cwnd =
 * ssthresh.
 */
export class NewReno extends Reno {
  override readonly name: CcName = 'newreno';
  private readonly prr = this.p.prr === true ? new Prr() : undefined;
  /** Bytes the duplicate ACKs of this recovery stand for and the cumulative ACK has not covered yet (what SACK blocks would report). */
  private dupBytes = 0;

  protected override enterRecovery(a: AckEvent, v: SendView): void {
    super.enterRecovery(a, v);
    if (!this.prr) return;
    this.prr.start(v.max - v.una);
    this.dupBytes = Math.min(this.p.dupThresh * v.mss, v.max - v.una);
    this.prrAck(v.mss, v);
  }

  protected override recoveryDup(a: AckEvent, v: SendView): void {
    if (!this.prr) {
      super.recoveryDup(a, v);
      return;
    }
    this.dupBytes = Math.min(this.dupBytes + v.mss, v.max - v.una);
    this.prrAck(v.mss, v);
  }

  protected override recoveryAck(a: AckEvent, v: SendView): void {
    if (a.ack >= this.recover) {
      const flight = v.max - a.ack;
      this.cwnd = this.prr ? this.ssthresh : Math.min(this.ssthresh, Math.max(flight, v.mss) + v.mss);
      this.inRecovery = false;
      this.dupBytes = 0;
      return;
    }
    this.retransmitHead = true;
    if (!this.prr) {
      this.cwnd = Math.max(v.mss, this.cwnd - a.acked + (a.acked >= v.mss ? v.mss : 0));
      return;
    }
    // The retransmitted hole itself was not among what the duplicates stood for.
    const covered = Math.min(Math.max(0, a.acked - v.mss), this.dupBytes);
    this.dupBytes -= covered;
    this.prrAck(a.acked - covered, v);
  }

  /** PRR's step on an ACK; cwnd shows the flight plus what may be sent on it. */
  private prrAck(delivered: number, v: SendView): void {
    const prr = this.prr!;
    const holeUnsent = this.retransmitHead ? Math.min(v.mss, v.max - v.una) : 0;
    const pipe = Math.max(0, v.max - v.una - this.dupBytes - holeUnsent);
    prr.onAck(delivered, pipe, this.ssthresh, v.mss, false);
    this.cwnd = pipe + prr.quota;
  }

  override next(v: SendView): NextSegment | undefined {
    if (!this.prr || !this.inRecovery) return super.next(v);
    const seg = this.retransmitHead && v.una < v.max ? { seq: v.una, len: Math.min(v.mss, v.max - v.una) } : newData(v, 0, this.prr.quota);
    return seg && this.prr.allows(seg.len) ? seg : undefined;
  }

  override sent(seg: NextSegment, v: SendView): void {
    super.sent(seg, v);
    if (this.prr && this.inRecovery) this.prr.sent(seg.len);
  }

  override onTimeout(v: SendView, now: Micros): void {
    super.onTimeout(v, now);
    this.dupBytes = 0;
  }
}
