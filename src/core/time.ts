import { ClockRegressionError, InvalidTimeError } from './errors.js';

/** Time and durations are integer microseconds everywhere in cogmesh. */
export type Micros = number;

export const US_PER_MS = 1_000;
export const US_PER_S = 1_000_000;

export const ms = (n: number): Micros => Math.round(n * US_PER_MS);
export const seconds = (n: number): Micros => Math.round(n * US_PER_S);

export function assertMicros(what: string, t: number): Micros {
  if (!Number.isSafeInteger(t) || t < 0) throw new InvalidTimeError(what, t);
  return t;
}

/** Cores never read a clock themselves; drivers hold one and pass `now` in. */
export interface Clock {
  now(): Micros;
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
