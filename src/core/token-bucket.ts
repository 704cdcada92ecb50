import { RangeArgumentError } from './errors.js';
import { assertMicros, type Micros } from './time.js';

/** Credit units per token: the credit is tokens x 1e6, so one microsecond at `ratePerS` adds exactly `ratePerS` units. */
const UNITS = 1_000_000;

/**
 * A token bucket (RFC 2697's and RFC 4115's meter, and the rate limiter of
 * RFC 4443 2.4(f) for ICMPv6 errors): tokens arrive at `ratePerS` a second,
 * the bucket holds at most `burst`, and it starts full.
 *
 * Time is an input, as everywhere in cogmesh: the caller passes its clock's
 * `now` in microseconds; nothing here reads a clock. The state is kept in
 * millionths of a token, so with an integer rate and integer times every
 * step is exact integer arithmetic and two runs with the same inputs agree
 * to the bit.
 *
 * A `now` earlier than one seen before (or not a finite number) adds no tokens and
 * does not move the bucket's idea of the time back: a clock that steps back
 * cannot mint tokens twice.
 */
export class TokenBucket {
  /** Tokens x UNITS, 0 to capacity. */
  private credit: number;
  private readonly capacity: number;
  /** The latest time seen. */
  private lastUs: Micros;

  /**
   * Throws RangeArgumentError for a rate that is not a finite number > 0, a
   * burst that is not a finite number >= 1 (a bucket that can never hold a
   * whole token passes nothing), and InvalidTimeError for a `nowUs` that is
   * not a non-negative integer.
   */
  constructor(
    readonly ratePerS: number,
    readonly burst: number,
    nowUs: Micros,
  ) {
    if (!(Number.isFinite(ratePerS) && ratePerS > 0)) throw new RangeArgumentError('ratePerS', ratePerS, 'a finite number > 0');
    if (!(Number.isFinite(burst) && burst >= 1)) throw new RangeArgumentError('burst', burst, 'a finite number >= 1');
    this.lastUs = assertMicros('nowUs', nowUs);
    this.capacity = burst * UNITS;
    this.credit = this.capacity;
  }

  /**
   * Takes `n` tokens at `nowUs` if the bucket holds them, and says whether it
   * did; a refusal takes nothing. `n` may be fractional (bytes of a rate in
   * bytes, say); 0 always succeeds; more than `burst` never does. Throws
   * RangeArgumentError for a negative or non-finite `n`.
   */
  take(nowUs: Micros, n = 1): boolean {
    if (!(n >= 0 && n !== Infinity)) throw new RangeArgumentError('n', n, 'a finite number >= 0');
    this.refill(nowUs);
    const need = n * UNITS;
    if (this.credit < need) return false;
    this.credit -= need;
    return true;
  }

  /** Tokens in the bucket at `nowUs` (possibly fractional), without taking any. */
  available(nowUs: Micros): number {
    this.refill(nowUs);
    return this.credit / UNITS;
  }

  /**
   * The earliest time at which `take(t, n)` succeeds if the bucket is not
   * called in between: the latest time seen when the tokens are there
   * already (which may be before the caller's now); undefined when `n`
   * exceeds `burst` (it never will). For a sender's next deadline. Exact for
   * an integer rate; with a fractional one, calls in between (a refused take
   * at an earlier time, say) add the same tokens in other steps, and
   * floating-point rounding of those sums can leave the bucket a hair short
   * at the answer given before them: ask again after such a call.
   */
  readyAt(n = 1): Micros | undefined {
    if (!(n >= 0 && n !== Infinity)) throw new RangeArgumentError('n', n, 'a finite number >= 0');
    if (n > this.burst) return undefined;
    const short = n * UNITS - this.credit;
    if (short <= 0) return this.lastUs;
    let wait = Math.ceil(short / this.ratePerS);
    // A fractional rate can round the division a hair low: step on until refill's own sum reaches the need.
    while (this.credit + wait * this.ratePerS < n * UNITS) wait++;
    return this.lastUs + wait;
  }

  private refill(nowUs: Micros): void {
    // `!(a > b)` also catches NaN: such a time (or an infinite one) adds nothing and is not remembered.
    if (!(nowUs > this.lastUs) || nowUs === Infinity) return;
    const gain = (nowUs - this.lastUs) * this.ratePerS;
    this.credit = Math.min(this.capacity, this.credit + gain);
    this.lastUs = nowUs;
  }
}
