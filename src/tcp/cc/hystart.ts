/**
 * HyStart++ (RFC 9406): slow start that watches the RTT. Rounds are the
 * time for the data sent at a round's start to be acknowledged; when a
 * round's smallest RTT has grown by a threshold over the last one's, slow
 * start gives way to Conservative Slow Start (CSS), which grows a quarter as
 * fast, goes back to slow start if the RTT falls back below the baseline,
 * and after CSS_ROUNDS rounds (the one it began in counts as the first)
 * ends in congestion avoidance. It runs in the first slow start only
 * (RFC 9406 4.3: later ones have the ssthresh a loss left): any congestion
 * event ends it for good.
 */

/** RFC 9406 4.3's constants (times in microseconds). */
export const HYSTART = Object.freeze({
  MIN_RTT_THRESH_US: 4_000,
  MAX_RTT_THRESH_US: 16_000,
  MIN_RTT_DIVISOR: 8,
  N_RTT_SAMPLE: 8,
  CSS_GROWTH_DIVISOR: 4,
  CSS_ROUNDS: 5,
  /** L for a sender that does not pace (ours): at most 8 SMSS of growth per ACK. */
  L: 8,
});

export type HyStartPhase = 'slow-start' | 'css' | 'done';

export class HyStartPlusPlus {
  phase: HyStartPhase = 'slow-start';
  /** End of the current round: it is over when the cumulative ACK reaches it (undefined: no round yet). */
  private windowEnd: number | undefined;
  private lastRoundMinRttUs = Infinity;
  private currentRoundMinRttUs = Infinity;
  private rttSampleCount = 0;
  private cssBaselineMinRttUs = Infinity;
  private cssRounds = 0;
  /** The RTT sample of the ACK being processed (the connection passes it before the ACK itself). */
  private pendingRttUs: number | undefined;

  /** Slow start or CSS still governs growth. */
  get active(): boolean {
    return this.phase !== 'done';
  }

  onRtt(rttUs: number): void {
    if (rttUs > 0) this.pendingRttUs = rttUs;
  }

  /** A congestion event (loss, timeout): RFC 9406 4.2 hands over to congestion avoidance, and HyStart++ is done. */
  end(): void {
    this.phase = 'done';
    this.pendingRttUs = undefined;
  }

  /**
   * An ACK of `acked` new bytes while cwnd < ssthresh, with `max` the
   * highest offset sent: returns the growth in bytes, and `toCa` when CSS
   * has run its rounds (the caller sets ssthresh = cwnd).
   */
  onAck(ack: number, acked: number, max: number, mss: number): { increase: number; toCa: boolean } {
    const rtt = this.pendingRttUs;
    this.pendingRttUs = undefined;
    if (this.phase === 'done') return { increase: Math.min(acked, mss), toCa: false };
    let toCa = false;
    if (this.windowEnd === undefined || ack >= this.windowEnd) {
      // A new round (RFC 9406 4.2).
      if (this.windowEnd !== undefined && this.phase === 'css' && ++this.cssRounds >= HYSTART.CSS_ROUNDS) toCa = true;
      this.lastRoundMinRttUs = this.currentRoundMinRttUs;
      this.currentRoundMinRttUs = Infinity;
      this.rttSampleCount = 0;
      this.windowEnd = max;
    }
    if (rtt !== undefined) {
      this.currentRoundMinRttUs = Math.min(this.currentRoundMinRttUs, rtt);
      this.rttSampleCount++;
    }
    const step = Math.min(acked, HYSTART.L * mss);
    if (toCa) {
      this.phase = 'done';
      return { increase: 0, toCa: true };
    }
    if (this.phase === 'slow-start') {
      if (this.rttSampleCount >= HYSTART.N_RTT_SAMPLE && Number.isFinite(this.currentRoundMinRttUs) && Number.isFinite(this.lastRoundMinRttUs)) {
        const thresh = Math.max(HYSTART.MIN_RTT_THRESH_US, Math.min(this.lastRoundMinRttUs / HYSTART.MIN_RTT_DIVISOR, HYSTART.MAX_RTT_THRESH_US));
        if (this.currentRoundMinRttUs >= this.lastRoundMinRttUs + thresh) {
          this.cssBaselineMinRttUs = this.currentRoundMinRttUs;
          this.cssRounds = 0;
          this.phase = 'css';
        }
      }
      // The ACK that ends slow start still grows as slow start does (RFC 9406 4.2 updates cwnd first).
      return { increase: step, toCa: false };
    }
    // CSS grows a quarter as fast, and goes back to slow start if the delay increase was spurious.
    if (this.rttSampleCount >= HYSTART.N_RTT_SAMPLE && this.currentRoundMinRttUs < this.cssBaselineMinRttUs) {
      this.cssBaselineMinRttUs = Infinity;
      this.phase = 'slow-start';
    }
    return { increase: Math.floor(step / HYSTART.CSS_GROWTH_DIVISOR), toCa: false };
  }
}
