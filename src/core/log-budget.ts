import { RangeArgumentError } from './errors.js';
import { US_PER_S, type Micros } from './time.js';

/**
 * How often a process may log one kind of line (a fault of one reason, a
 * malformed message of one code): the first at once, then at most one per
 * `everyUs`. The lines held back meanwhile are counted, so the next line of
 * the kind, or `due` once the interval is over, says how many there were.
 * A process fed bad input or hitting one fault over and over then writes a
 * line every few seconds, not one per message. Time is an argument.
 */
export class LogBudget {
  private readonly kinds = new Map<string, { lastUs: Micros; held: number }>();

  constructor(readonly everyUs: Micros = 10 * US_PER_S) {
    if (!Number.isSafeInteger(everyUs) || everyUs < 0) throw new RangeArgumentError('everyUs', everyUs, 'an integer number of µs >= 0');
  }

  /**
   * A line of kind `key` at `now`: the number of lines of the kind held back
   * since the last one written (0 for the first) when this one may be
   * written, undefined when it is held back too.
   */
  take(key: string, now: Micros): number | undefined {
    const k = this.kinds.get(key);
    if (k === undefined) {
      this.kinds.set(key, { lastUs: now, held: 0 });
      return 0;
    }
    if (now - k.lastUs < this.everyUs) {
      k.held++;
      return undefined;
    }
    const held = k.held;
    k.lastUs = now;
    k.held = 0;
    return held;
  }

  /**
   * Kinds with lines held back whose interval is over at `now`, and how many
   * each: the caller writes one summary line for each, which counts as the
   * kind's line for the next interval.
   */
  due(now: Micros): Array<{ key: string; held: number }> {
    const out: Array<{ key: string; held: number }> = [];
    for (const [key, k] of this.kinds) {
      if (k.held > 0 && now - k.lastUs >= this.everyUs) {
        out.push({ key, held: k.held });
        k.lastUs = now;
        k.held = 0;
      }
    }
    return out;
  }
}
