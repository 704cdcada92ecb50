import { RangeArgumentError } from './errors.js';
import { assertMicros, US_PER_S, type Micros } from './time.js';

/** What a LogBudget says about one event. */
export type LogVerdict =
  | {
      log: true;
      /** Events of the kind since its last line logged that were not logged. */
      notLogged: number;
      /** This line is the window's last: the kind's events after it are counted, not logged, until `quietUntilUs`. */
      last: boolean;
      quietUntilUs: Micros;
    }
  | { log: false };

/**
 * A budget of log lines for events that anyone who can reach the process
 * may repeat at will (a refused CURVE handshake, a refused monitor stream, a
 * malformed message, a fault hit over and over): per kind of event (`key`),
 * at most `lines` lines in a window of `windowUs`, the window starting at the
 * kind's first line after its last window ended. The events beyond are only
 * counted: the kind's next line logged says how many there were, or `due`
 * hands them over once the window is over, so a flood costs a few lines a
 * window and loses no count.
 *
 * Time is an input: the caller passes its clock's `now`. A `now` before the
 * window's start stays in the window (a clock that steps back opens none).
 */
export class LogBudget {
  private readonly kinds = new Map<string, { startUs: Micros; used: number; held: number }>();

  constructor(
    readonly lines: number,
    readonly windowUs: Micros,
  ) {
    if (!(Number.isSafeInteger(lines) && lines >= 1)) throw new RangeArgumentError('lines', lines, 'an integer >= 1');
    if (!(Number.isSafeInteger(windowUs) && windowUs >= 1)) throw new RangeArgumentError('windowUs', windowUs, 'an integer number of microseconds >= 1');
  }

  /** One event of kind `key` at `nowUs`: whether to log it. */
  admit(nowUs: Micros, key = ''): LogVerdict {
    assertMicros('nowUs', nowUs);
    let k = this.kinds.get(key);
    if (k === undefined) this.kinds.set(key, (k = { startUs: nowUs, used: 0, held: 0 }));
    else if (nowUs >= k.startUs + this.windowUs) {
      k.startUs = nowUs;
      k.used = 0;
    }
    if (k.used >= this.lines) {
      k.held++;
      return { log: false };
    }
    k.used++;
    const notLogged = k.held;
    k.held = 0;
    return { log: true, notLogged, last: k.used === this.lines, quietUntilUs: k.startUs + this.windowUs };
  }

  /** Events of kind `key` counted but not logged since its last line. */
  notLogged(key = ''): number {
    return this.kinds.get(key)?.held ?? 0;
  }

  /**
   * The kinds with events not logged whose window is over at `nowUs`, and
   * how many each: the caller writes one summary line for each, which
   * counts as the first line of the kind's next window.
   */
  due(nowUs: Micros): Array<{ key: string; held: number }> {
    assertMicros('nowUs', nowUs);
    const out: Array<{ key: string; held: number }> = [];
    for (const [key, k] of this.kinds) {
      if (k.held > 0 && nowUs >= k.startUs + this.windowUs) {
        out.push({ key, held: k.held });
        k.startUs = nowUs;
        k.used = 1;
        k.held = 0;
      }
    }
    return out;
  }
}

/** Refusals anyone who reaches a port can cause (a CURVE handshake, a monitor stream, a TLS session): five lines a minute. */
export const REFUSAL_LOG_LINES = 5;
export const REFUSAL_LOG_WINDOW_US: Micros = 60 * US_PER_S;

/** A budget for such refusals: every one counted, REFUSAL_LOG_LINES lines a window logged. */
export function refusalLogBudget(): LogBudget {
  return new LogBudget(REFUSAL_LOG_LINES, REFUSAL_LOG_WINDOW_US);
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
