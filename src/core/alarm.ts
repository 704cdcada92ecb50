import type { EventId } from './engine.js';
import type { Scheduler } from './scheduler.js';
import type { Micros } from './time.js';

/**
 * One scheduler event at a core's next deadline, as a driver keeps it: `set`
 * moves the event when the deadline moved and leaves it where it is when not,
 * so that events due at the same time keep the order in which they were
 * scheduled (and a run stays reproducible).
 */
export class Alarm {
  private id: EventId | undefined;
  private at: Micros | undefined;
  private run: ((now: Micros) => void) | undefined;
  /** The one callback the scheduler gets, whatever `run` is: no closure per event. */
  private readonly fire = (now: Micros): void => {
    const run = this.run!;
    this.id = undefined;
    this.at = undefined;
    this.run = undefined;
    run(now);
  };

  constructor(private readonly scheduler: Scheduler) {}

  /**
   * `run` at `due` (never before now); undefined: no event. Returns whether
   * it (re)scheduled: false when the event stays as it was (its `run` too).
   */
  set(due: Micros | undefined, run: (now: Micros) => void): boolean {
    // The usual answer, in a few tests: a driver sets every alarm after every input, and most stay as they were.
    if (due === undefined ? this.id === undefined : due === this.at && this.id !== undefined && due >= this.scheduler.now()) return false;
    return this.reset(due, run);
  }

  private reset(due: Micros | undefined, run: (now: Micros) => void): boolean {
    const at = due === undefined ? undefined : Math.max(due, this.scheduler.now());
    if (this.at === at && this.id !== undefined) return false;
    if (at === undefined) {
      this.cancel();
      return false;
    }
    this.at = at;
    this.run = run;
    this.id = this.id === undefined ? this.scheduler.at(at, this.fire) : this.scheduler.move(this.id, at, this.fire);
    return true;
  }

  cancel(): void {
    if (this.id !== undefined) this.scheduler.cancel(this.id);
    this.id = undefined;
    this.at = undefined;
    this.run = undefined;
  }
}
