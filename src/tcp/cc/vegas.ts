import type { Micros } from '../../core/time.js';
import type { AckEvent, CcName, CcParams, SendView } from './types.js';
import { NewReno } from './newreno.js';
import { cwndLimited } from './reno.js';

/**
 * TCP Vegas (Brakmo and Peterson, 1995), with ns-2's thresholds: once per
 * round trip it compares the expected rate cwnd/BaseRTT with the actual
 * cwnd/RTT (RTT the smallest sample of that round) and keeps between alpha
 * and beta segments queued in the network; slow start ends as soon as more
 * than gamma are. Slow start grows on every ACK as in Linux (the original
 * doubles every other round trip). Loss recovery is NewReno's.
 */
export class Vegas extends NewReno {
  override readonly name: CcName = 'vegas';
  private baseRttUs = Infinity;
  private roundMinUs = Infinity;
  private roundEnd = 0;

  constructor(p: CcParams) {
    super(p);
  }

  override onRtt(rttUs: number, now: Micros): void {
    super.onRtt(rttUs, now);
    if (rttUs <= 0) return;
    this.baseRttUs = Math.min(this.baseRttUs, rttUs);
    this.roundMinUs = Math.min(this.roundMinUs, rttUs);
  }

  protected override grow(a: AckEvent, v: SendView): void {
    if (a.ack < this.roundEnd) {
      if (this.cwnd < this.ssthresh) super.grow(a, v);
      return;
    }
    // A round trip is over: the data sent when it began is acknowledged.
    this.roundEnd = v.max;
    const rtt = this.roundMinUs;
    this.roundMinUs = Infinity;
    if (!Number.isFinite(rtt) || !Number.isFinite(this.baseRttUs)) {
      super.grow(a, v);
      return;
    }
    const segments = this.cwnd / v.mss;
    const diff = (segments * (rtt - this.baseRttUs)) / rtt;
    const { alpha, beta, gamma } = this.p.vegas;
    if (this.cwnd < this.ssthresh) {
      if (diff > gamma) {
        // Queues are building: leave slow start at the window the path holds.
        const target = Math.max(2, Math.floor((segments * this.baseRttUs) / rtt) + 1);
        this.cwnd = Math.min(this.cwnd, target * v.mss);
        this.ssthresh = Math.max(2 * v.mss, this.cwnd - v.mss);
      } else super.grow(a, v);
      return;
    }
    if (diff > beta) {
      // Too fast: one segment less, with ssthresh below the new window, or
      // the next round would be slow start again and grow it straight back
      // (Linux tcp_vegas: snd_ssthresh = min(snd_ssthresh, snd_cwnd - 1)).
      this.cwnd = Math.max(2 * v.mss, this.cwnd - v.mss);
      this.ssthresh = Math.min(this.ssthresh, this.cwnd - v.mss);
    } else if (diff < alpha && cwndLimited(a, v, this.cwnd)) this.cwnd += v.mss;
  }

  override onTimeout(v: SendView, now: Micros): void {
    super.onTimeout(v, now);
    this.roundEnd = v.max;
    this.roundMinUs = Infinity;
  }
}
