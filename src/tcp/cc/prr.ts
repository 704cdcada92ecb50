/**
 * Proportional Rate Reduction (RFC 6937) for one fast recovery: instead of
 * cutting the window at once (RFC 6675 falls silent for half a window, then
 * may burst), it spreads the reduction to ssthresh over the ACKs of the
 * round trip, in proportion to the data the receiver reports delivered.
 * When losses have already taken the flight below ssthresh, the reduction
 * bound lets it grow back by slow start at most.
 *
 * The bound is Linux's (tcp_cwnd_reduction), which is also the one the
 * standards-track revision of PRR (RFC 9937) settled on: PRR-CRB's
 * conservation, MAX(prr_delivered - prr_out, DeliveredData), plus one SMSS
 * (PRR-SSRB) only on an ACK that advances SND.UNA and reports no new loss.
 * RFC 6937's SSRB grants that SMSS on every ACK; on a burst of losses the
 * SACKs that only report more of them would then grow the flight by slow
 * start into what may still be a queue. `ssrbAlways` gives RFC 6937's.
 *
 * Units are bytes, but the proportional part rounds up to whole segments
 * and a segment goes out only when the quota covers it: Linux counts
 * packets, and the sender does not split segments for PRR (a byte-exact
 * CEIL would bank half segments and send each one an ACK late).
 */
export class Prr {
  private delivered = 0;
  private out = 0;
  private recoverFs = 1;
  /** Bytes that may still go out on the last ACK's account (sndcnt, less what was sent since). */
  quota = 0;

  constructor(private readonly ssrbAlways = false) {}

  /** Entering recovery with `recoverFs` bytes outstanding (RFC 6937's RecoverFS = snd.nxt - snd.una). */
  start(recoverFs: number): void {
    this.delivered = 0;
    this.out = 0;
    this.recoverFs = Math.max(1, recoverFs);
    this.quota = 0;
  }

  /**
   * An ACK in recovery: `deliveredData` bytes newly delivered (cumulatively
   * acknowledged or SACKed), `pipe` the bytes in flight after it, and
   * whether it was a SafeACK (SND.UNA advanced, no new loss reported).
   */
  onAck(deliveredData: number, pipe: number, ssthresh: number, mss: number, safeAck: boolean): void {
    // An ACK that delivers nothing grants nothing (Linux, RFC 9937 6.2).
    if (deliveredData <= 0) return;
    this.delivered += deliveredData;
    let sndcnt: number;
    if (pipe > ssthresh) {
      // Proportional Rate Reduction, rounded up to whole segments.
      sndcnt = Math.ceil((this.delivered * ssthresh) / this.recoverFs / mss) * mss - this.out;
    } else {
      let limit = Math.max(this.delivered - this.out, deliveredData);
      if (safeAck || this.ssrbAlways) limit += mss;
      sndcnt = Math.min(ssthresh - pipe, limit);
    }
    // The fast retransmit goes out on entering recovery whatever the arithmetic says (Linux does the same).
    if (this.out === 0) sndcnt = Math.max(sndcnt, mss);
    this.quota = Math.max(0, sndcnt);
  }

  /** Whether a segment of `len` bytes may go out now. */
  allows(len: number): boolean {
    return this.quota >= len;
  }

  /** A segment went out during recovery (prr_out). */
  sent(len: number): void {
    this.out += len;
    this.quota = Math.max(0, this.quota - len);
  }
}
