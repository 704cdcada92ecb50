import { RangeArgumentError } from './errors.js';
import { assertMicros, type Micros } from './time.js';

/** What a LogBudget says about one event. */
export type LogVerdict =
  | {
      log: true;
      /** Events since the last line logged that were not logged. */
      notLogged: number;
      /** This line is the window's last: the events after it are counted, not logged, until `quietUntilUs`. */
      last: boolean;
      quietUntilUs: Micros;
    }
  | { log: false };

/**
 * A budget of log lines for an event that anyone who can reach the router
 * may repeat at will (a refused CURVE handshake, a refused monitor stream):
 * at most `lines` lines in a window of `windowUs`, the window starting at
 * the first line after the last window ended. The events beyond are only
 * counted, and the next line logged says how many there were, so a flood
 * costs a few lines a window and loses no count.
 *
 * Time is an input: the caller passes its clock's `now`. A `now` before the
 * window's start stays in the window (a clock that steps back opens none).
 */
export class LogBudget {
  private startUs: Micros | undefined;
  private used = 0;
  private held = 0;

  constructor(
    readonly lines: number,
    readonly windowUs: Micros,
  ) {
    if (!(Number.isSafeInteger(lines) && lines >= 1)) throw new RangeArgumentError('lines', lines, 'an integer >= 1');
    if (!(Number.isSafeInteger(windowUs) && windowUs >= 1)) throw new RangeArgumentError('windowUs', windowUs, 'an integer number of microseconds >= 1');
  }

  /** One event at `nowUs`: whether to log it. */
  admit(nowUs: Micros): LogVerdict {
    assertMicros('nowUs', nowUs);
    if (this.startUs === undefined || nowUs >= this.startUs + this.windowUs) {
      this.startUs = nowUs;
      this.used = 0;
    }
    if (this.used >= this.lines) {
      this.held++;
      return { log: false };
    }
    this.used++;
    const notLogged = this.held;
    this.held = 0;
    return { log: true, notLogged, last: this.used === this.lines, quietUntilUs: this.startUs + this.windowUs };
  }

  /** Events counted but not logged since the last line. */
  get notLogged(): number {
    return this.held;
  }
}

/**
 * What a line admitted by a LogBudget adds to its message: how many were
 * not logged before it, and whether the next ones will not be, for how
 * long (`what`: the events, plural, e.g. `refused handshakes`).
 */
export function budgetNote(v: Extract<LogVerdict, { log: true }>, nowUs: Micros, what: string): string {
  const notes: string[] = [];
  if (v.notLogged > 0) notes.push(`${v.notLogged} more ${what} before this one were not logged`);
  if (v.last) notes.push(`further ${what} in the next ${Math.ceil((v.quietUntilUs - nowUs) / 1e6)} s are counted, not logged`);
  return notes.length > 0 ? ` (${notes.join('; ')})` : '';
}
