import { ClockRegressionError, RangeArgumentError } from '../core/errors.js';
import { assertMicros, seconds, type Micros } from '../core/time.js';

/**
 * ADWISER v2's rate adaptation (seeds/003, Algorithm 2) for one client's
 * virtual queue: every t_interval the gateway averages the queue length left
 * after service and adapts the rate v_j(t) at which the queue is served
 * during its time slices. A pure core: the caller gives the queue lengths
 * and the time; no timer, no I/O.
 *
 * The pseudo-code of Algorithm 2 did not survive in the seed's text; this is
 * the algorithm as its prose states it (docs/gateway.md quotes the prose):
 *
 *   every t_interval:
 *     q̄ ← β·q + (1 − β)·q̄                 ("if β is large, then less importance is given
 *                                            to the history of the queue")
 *     if q̄ < q_lb:            v ← λ·v       ("if q̄ falls below q_lb ... reduce the service rate";
 *                                            λ ∈ (0, 1) is the factor)
 *     else if q̄ > q̄_prev:     v ← v + ε·q̄  ("if q̄ starts to increase ... we increase the service
 *                                            rate in proportion to the average queue length")
 *     else:                   v unchanged
 *
 * Readings where the prose leaves a choice (each documented in docs/gateway.md):
 * - q is the last queue length observed "immediately after service" before the
 *   interval ends; with none observed since the last interval the previous one
 *   stands (the queue was not served, so its length after service is unchanged).
 * - q̄ starts at 0 (an empty queue before any traffic).
 * - ε·q̄ takes q̄ in KBytes (the unit the paper gives q in) and ε in Mbps, so the
 *   paper's ε = 0.05 Mbps adds 0.05 Mbps per KByte of average queue. 1 KByte = 1000 bytes.
 * - The rate is clamped to [minRateMbps, maxRateMbps]: the paper names no bound; a
 *   floor keeps a queue that empties from decaying to nothing, and the cap is the
 *   link's capacity when known (default: none).
 */

/** Algorithm 2's parameters. Rates in Mbps, queue lengths in bytes, times in µs. */
export interface RateAdaptParams {
  /** How often the algorithm runs, t_interval (µs). Paper: 3 s. */
  intervalUs: Micros;
  /** Lower bound of the average queue length, q_lb (bytes). Paper: 7.5 KBytes. */
  queueLowBytes: number;
  /** Step ε (Mbps per KByte of average queue), > 0. Paper: 0.05 Mbps. */
  epsMbps: number;
  /** Decrease factor λ, in (0, 1). Paper: 0.9. */
  lambda: number;
  /** Weight β of the newest queue length in the average, in [0, 1]. Paper: 0.8. */
  beta: number;
  /** v_j at the start (Mbps), > 0. Default 22 Mbps, the virtual server rate C of the paper's Section 3. */
  initialRateMbps: number;
  /** Floor of v_j (Mbps), > 0. Not in the paper; default 0.1 Mbps. */
  minRateMbps: number;
  /** Cap of v_j (Mbps): the link capacity when known. Not in the paper; default Infinity (none). */
  maxRateMbps: number;
}

/** The paper's values (seeds/003, Section 6) and this module's bounds. */
export const ADWISER_RATE_DEFAULTS: Readonly<RateAdaptParams> = Object.freeze({
  intervalUs: seconds(3),
  queueLowBytes: 7_500,
  epsMbps: 0.05,
  lambda: 0.9,
  beta: 0.8,
  initialRateMbps: 22,
  minRateMbps: 0.1,
  maxRateMbps: Infinity,
});

/** Bytes in the KByte of the paper's q and ε. */
export const BYTES_PER_KBYTE = 1_000;

/** Why a run of the algorithm left the rate where it is. */
export type RateReason = 'decrease' | 'increase' | 'hold';

/** One run of Algorithm 2, at the end of an interval. */
export interface RateDecision {
  /** The interval's end (µs). */
  atUs: Micros;
  /** The queue length the run used (bytes). */
  queueBytes: number;
  /** The average queue length after the run, q̄ (bytes). */
  avgQueueBytes: number;
  /** The new service rate v_j(t) (Mbps). */
  rateMbps: number;
  reason: RateReason;
  /** The rule's rate was clamped by minRateMbps or maxRateMbps. */
  clamped: boolean;
}

/** Checks parameters, naming the first field out of range. */
export function checkRateParams(p: RateAdaptParams): RateAdaptParams {
  if (!Number.isSafeInteger(p.intervalUs) || p.intervalUs <= 0) throw new RangeArgumentError('intervalUs', p.intervalUs, 'an integer number of µs > 0');
  if (!(Number.isFinite(p.queueLowBytes) && p.queueLowBytes >= 0))
    throw new RangeArgumentError('queueLowBytes', p.queueLowBytes, 'a finite number of bytes >= 0');
  if (!(Number.isFinite(p.epsMbps) && p.epsMbps > 0)) throw new RangeArgumentError('epsMbps', p.epsMbps, 'a finite number > 0 (Mbps per KByte)');
  if (!(p.lambda > 0 && p.lambda < 1)) throw new RangeArgumentError('lambda', p.lambda, 'a number in (0, 1)');
  if (!(p.beta >= 0 && p.beta <= 1)) throw new RangeArgumentError('beta', p.beta, 'a number in [0, 1]');
  if (!(Number.isFinite(p.minRateMbps) && p.minRateMbps > 0)) throw new RangeArgumentError('minRateMbps', p.minRateMbps, 'a finite number > 0 (Mbps)');
  if (!(p.maxRateMbps >= p.minRateMbps)) throw new RangeArgumentError('maxRateMbps', p.maxRateMbps, `a number >= minRateMbps (${p.minRateMbps}), or Infinity`);
  if (!(Number.isFinite(p.initialRateMbps) && p.initialRateMbps >= p.minRateMbps && p.initialRateMbps <= p.maxRateMbps))
    throw new RangeArgumentError('initialRateMbps', p.initialRateMbps, `a finite number in [minRateMbps, maxRateMbps] = [${p.minRateMbps}, ${p.maxRateMbps}]`);
  return p;
}

/**
 * Algorithm 2 for one virtual queue. `observe` records the queue length
 * after a service; `advance(now)` runs the algorithm once for each interval
 * that ended at or before `now` and returns those runs (none before the
 * first interval ends). Intervals end at startUs + k·t_interval.
 */
export class RateAdapter {
  readonly params: Readonly<RateAdaptParams>;
  private rate: number;
  private avg = 0;
  private queue = 0;
  private nextRunUs: Micros;
  private lastUs: Micros;

  constructor(startUs: Micros, params: Partial<RateAdaptParams> = {}) {
    assertMicros('startUs', startUs);
    this.params = Object.freeze(checkRateParams({ ...ADWISER_RATE_DEFAULTS, ...params }));
    this.rate = this.params.initialRateMbps;
    this.nextRunUs = startUs + this.params.intervalUs;
    this.lastUs = startUs;
  }

  /** The current service rate v_j (Mbps). */
  get rateMbps(): number {
    return this.rate;
  }

  /** The current average queue length q̄ (bytes). */
  get avgQueueBytes(): number {
    return this.avg;
  }

  /** When the algorithm runs next (µs). */
  get nextRunAtUs(): Micros {
    return this.nextRunUs;
  }

  /**
   * The queue length right after a service of the queue (bytes) at `atUs`.
   * Runs of intervals that ended before `atUs` are the caller's to take with
   * `advance` first; an observation later than an interval's end counts in
   * the next run.
   */
  observe(atUs: Micros, queueBytes: number): void {
    this.checkTime(atUs);
    if (!(Number.isFinite(queueBytes) && queueBytes >= 0)) throw new RangeArgumentError('queueBytes', queueBytes, 'a finite number of bytes >= 0');
    this.queue = queueBytes;
  }

  /** Runs the algorithm for every interval that ended at or before `nowUs`, oldest first. */
  advance(nowUs: Micros): RateDecision[] {
    this.checkTime(nowUs);
    const out: RateDecision[] = [];
    while (this.nextRunUs <= nowUs) {
      out.push(this.run(this.nextRunUs));
      this.nextRunUs += this.params.intervalUs;
    }
    return out;
  }

  private run(atUs: Micros): RateDecision {
    const p = this.params;
    const prev = this.avg;
    this.avg = p.beta * this.queue + (1 - p.beta) * prev;
    let reason: RateReason;
    let next: number;
    if (this.avg < p.queueLowBytes) {
      reason = 'decrease';
      next = p.lambda * this.rate;
    } else if (this.avg > prev) {
      reason = 'increase';
      next = this.rate + (p.epsMbps * this.avg) / BYTES_PER_KBYTE;
    } else {
      reason = 'hold';
      next = this.rate;
    }
    const bounded = Math.min(p.maxRateMbps, Math.max(p.minRateMbps, next));
    this.rate = bounded;
    return { atUs, queueBytes: this.queue, avgQueueBytes: this.avg, rateMbps: bounded, reason, clamped: bounded !== next };
  }

  private checkTime(atUs: Micros): void {
    assertMicros('time', atUs);
    if (atUs < this.lastUs) throw new ClockRegressionError(this.lastUs, atUs);
    this.lastUs = atUs;
  }
}
