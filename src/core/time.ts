import { ClockRegressionError, InvalidTimeError, RangeArgumentError } from './errors.js';

/** Time and durations are integer microseconds everywhere in cogmesh. */
export type Micros = number;

export const US_PER_MS = 1_000;
export const US_PER_S = 1_000_000;

export const ms = (n: number): Micros => Math.round(n * US_PER_MS);
export const seconds = (n: number): Micros => Math.round(n * US_PER_S);

/**
 * The earlier of two optional deadlines (undefined: none). For the
 * `nextDeadline()` of the cores, asked after every input: comparisons in a
 * row rather than a loop over an array of candidates made per call.
 */
export function earlierOf(t: Micros | undefined, d: Micros | undefined): Micros | undefined {
  return d !== undefined && (t === undefined || d < t) ? d : t;
}

export function assertMicros(what: string, t: number): Micros {
  if (!Number.isSafeInteger(t) || t < 0) throw new InvalidTimeError(what, t);
  return t;
}

/** Cores never read a clock themselves; drivers hold one and pass `now` in. */
export interface Clock {
  now(): Micros;
  /** For a clock that follows real time at another pace (ScaledClock): its µs per real µs. Absent: 1. */
  readonly rate?: number;
}

/**
 * Virtual time for the simulator and tests. It only moves forward, and only
 * when told to.
 */
export class VirtualClock implements Clock {
  private t: Micros;
  constructor(start: Micros = 0) {
    this.t = assertMicros('start', start);
  }
  now(): Micros {
    return this.t;
  }
  advanceTo(t: Micros): void {
    assertMicros('time', t);
    this.advanceToKnown(t);
  }
  /** As advanceTo, for a time already checked to be whole µs (an event's, checked when it was scheduled). */
  advanceToKnown(t: Micros): void {
    if (t < this.t) throw new ClockRegressionError(this.t, t);
    this.t = t;
  }
  advanceBy(d: Micros): void {
    this.advanceTo(this.t + assertMicros('duration', d));
  }
}

/**
 * Real time: microseconds since the Unix epoch, read from the monotonic
 * high-resolution timer anchored once at construction, so it never goes back
 * even when the wall clock is stepped.
 */
export class RealClock implements Clock {
  private readonly originUs: number;
  private readonly originNs: bigint;
  constructor() {
    this.originUs = Date.now() * US_PER_MS;
    this.originNs = process.hrtime.bigint();
  }
  now(): Micros {
    return this.originUs + Number((process.hrtime.bigint() - this.originNs) / 1000n);
  }
}

/**
 * Slow-motion real time: `scale` microseconds of this clock pass per real
 * microsecond, counted from the Unix epoch (its reading is the real clock's
 * times `scale`), so that processes on one machine that use the same scale
 * agree on the time as they do in real time. For an emulated PHY heavier than
 * the machine can run in real time (docs/phy.md); `rate` tells a pacer how
 * long to wait in real time.
 */
export class ScaledClock implements Clock {
  constructor(
    readonly rate: number,
    private readonly real: Clock = new RealClock(),
  ) {
    if (!(rate > 0 && rate <= 1)) throw new RangeArgumentError('rate', rate, 'a fraction of real time in (0, 1]');
  }
  now(): Micros {
    return Math.round(this.real.now() * this.rate);
  }
}
