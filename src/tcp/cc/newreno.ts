import type { AckEvent, CcName, SendView } from './types.js';
import { Reno } from './reno.js';

/**
 * NewReno (RFC 6582): fast recovery lasts until everything outstanding at
 * its start is acknowledged. A partial ACK retransmits the next hole at once
 * and deflates the window by what it acknowledged; the full ACK sets cwnd to
 * min(ssthresh, FlightSize + SMSS).
 */
export class NewReno extends Reno {
  override readonly name: CcName = 'newreno';

  protected override recoveryAck(a: AckEvent, v: SendView): void {
    if (a.ack >= this.recover) {
      const flight = v.max - a.ack;
      this.cwnd = Math.min(this.ssthresh, Math.max(flight, v.mss) + v.mss);
      this.inRecovery = false;
      return;
    }
    this.retransmitHead = true;
    this.cwnd = Math.max(v.mss, this.cwnd - a.acked + (a.acked >= v.mss ? v.mss : 0));
  }
}
