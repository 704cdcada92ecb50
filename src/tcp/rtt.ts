import type { Micros } from '../core/time.js';

export interface RtoParams {
  initialUs: Micros;
  minUs: Micros;
  maxUs: Micros;
  /** Clock granularity G of RFC 6298 (the timer's tick). */
  granularityUs: Micros;
}

/**
 * The retransmission timeout of RFC 6298: SRTT and RTTVAR from samples
 * (alpha 1/8, beta 1/4), RTO = SRTT + max(G, 4 RTTVAR) clamped to [min, max],
 * doubled on each expiry (5.5) until a new sample arrives.
 */
export class RttEstimator {
  private srttUs: number | undefined;
  private rttvarUs = 0;
  private baseRtoUs: Micros;
  private shift = 0;
  samples = 0;
  sumUs = 0;
  minSampleUs = Infinity;
  maxSampleUs = 0;

  constructor(private readonly p: RtoParams) {
    this.baseRtoUs = p.initialUs;
  }

  /** A valid round-trip sample (Karn's algorithm is the caller's: never from a retransmitted segment without timestamps). */
  sample(rUs: number): void {
    const r = Math.max(0, rUs);
    this.samples++;
    this.sumUs += r;
    this.minSampleUs = Math.min(this.minSampleUs, r);
    this.maxSampleUs = Math.max(this.maxSampleUs, r);
    if (this.srttUs === undefined) {
      this.srttUs = r;
      this.rttvarUs = r / 2;
    } else {
      this.rttvarUs = 0.75 * this.rttvarUs + 0.25 * Math.abs(this.srttUs - r);
      this.srttUs = 0.875 * this.srttUs + 0.125 * r;
    }
    this.baseRtoUs = this.srttUs + Math.max(this.p.granularityUs, 4 * this.rttvarUs);
    this.shift = 0;
  }

  /**
   * What RFC 4015 3.2 keeps (its step 0) when a retransmission starts a loss
   * episode: SRTT_prev = SRTT + 2G and RTTVAR_prev = RTTVAR (undefined
   * before the first sample).
   */
  beforeRetransmit(): { srttUs: number; rttvarUs: number } | undefined {
    if (this.srttUs === undefined) return undefined;
    return { srttUs: this.srttUs + 2 * this.p.granularityUs, rttvarUs: this.rttvarUs };
  }

  /**
   * The first round-trip sample after a timeout found spurious (RFC 4015
   * 3.2, the adaptation of the retransmission timer): the estimator starts again from the sample, but no lower than
   * it stood before the timeout (`prev`, from beforeRetransmit), so that the
   * delay that fooled the timer once does not fool it again; the backoff
   * ends as with any sample.
   */
  sampleAfterSpurious(rUs: number, prev: { srttUs: number; rttvarUs: number }): void {
    const r = Math.max(0, rUs);
    this.samples++;
    this.sumUs += r;
    this.minSampleUs = Math.min(this.minSampleUs, r);
    this.maxSampleUs = Math.max(this.maxSampleUs, r);
    this.srttUs = Math.max(prev.srttUs, r);
    this.rttvarUs = Math.max(prev.rttvarUs, r / 2);
    this.baseRtoUs = this.srttUs + Math.max(this.p.granularityUs, 4 * this.rttvarUs);
    this.shift = 0;
  }

  /** The timer expired: the next RTO is twice this one (capped at the maximum). */
  backoff(): void {
    if (this.rtoUs < this.p.maxUs) this.shift++;
  }

  /**
   * RFC 6298 5.7: the SYN's timer expired and no sample exists, so data
   * transmission starts from an RTO of (at least) 3 s, not the backed-off one.
   */
  restartAfterSynTimeout(): void {
    if (this.srttUs !== undefined) return;
    this.baseRtoUs = Math.max(this.baseRtoUs, 3_000_000);
    this.shift = 0;
  }

  get backoffs(): number {
    return this.shift;
  }

  /**
   * The RTO in use. The minimum applies to the computed value (RFC 6298 2.4)
   * and backoff doubles what is in use (5.5): with a computed 6 ms and a
   * 200 ms floor the timeouts go 200, 400, 800 ms, not 200 ms until 6 ms
   * has doubled past the floor.
   */
  get rtoUs(): Micros {
    const raw = Math.max(this.p.minUs, this.baseRtoUs) * 2 ** this.shift;
    return Math.round(Math.min(this.p.maxUs, raw));
  }

  get srtt(): number | undefined {
    return this.srttUs;
  }

  get rttvar(): number {
    return this.rttvarUs;
  }
}
