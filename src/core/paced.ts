import { EventEngine } from './engine.js';
import { RealClock, type Clock, type Micros } from './time.js';

/**
 * The event engine paced by a real clock: events run at their own times (so
 * an event-driven model such as the 802.11 MAC sees consistent time, however
 * late Node's timers fire), never before the real clock reaches them. Inputs
 * from outside (a frame from a socket, a command) enter through `inject`, at
 * the real time they arrive, after every event due by then.
 *
 * The engine's time is the real clock's (epoch microseconds), so that
 * processes on one machine share a time base: the medium and the routers
 * generate the same PN bursts from a shared seed and epoch.
 */
export class PacedEngine {
  readonly engine: EventEngine;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** How far behind the real clock an event ran, at worst and in sum (µs), and how many ran. */
  readonly lag = { maxUs: 0, sumUs: 0, events: 0 };

  constructor(readonly clock: Clock = new RealClock()) {
    this.engine = new EventEngine(clock.now());
  }

  now(): Micros {
    return this.engine.now();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.pump();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Runs `fn` at the current real time, after every event due by then; the
   * engine then waits for whatever `fn` scheduled. Called from inside an
   * event (or another inject), `fn` runs at once at that event's time: later
   * events never run in the middle of an earlier one.
   */
  inject<T>(fn: (now: Micros) => T): T {
    if (this.depth > 0) return fn(this.engine.now());
    this.depth++;
    try {
      this.catchUp();
      return fn(this.engine.now());
    } finally {
      this.depth--;
      this.reschedule();
    }
  }

  private depth = 0;

  private readonly pump = (): void => {
    this.timer = undefined;
    if (!this.running) return;
    this.depth++;
    try {
      this.catchUp();
    } finally {
      this.depth--;
      this.reschedule();
    }
  };

  /** Events run in one go at most; beyond, the engine yields to I/O (sockets, timers) before it goes on. */
  static readonly SLICE = 20_000;

  private catchUp(): void {
    const e = this.engine;
    const wall = this.clock.now();
    for (let n = 0; n < PacedEngine.SLICE; n++) {
      const next = e.nextAt();
      if (next === undefined || next > wall) break;
      const late = wall - next;
      if (late > this.lag.maxUs) this.lag.maxUs = late;
      this.lag.sumUs += late;
      this.lag.events++;
      e.step();
    }
    // The clock reaches the wall only once nothing due is left (a slice may have run out).
    const left = e.nextAt();
    if (wall > e.now() && (left === undefined || left > wall)) e.clock.advanceTo(wall);
  }

  private reschedule(): void {
    if (!this.running) return;
    const next = this.engine.nextAt();
    if (next === undefined) return;
    // A wake-up already set for this time or earlier stands (a pump that finds nothing due sets the next):
    // most inputs schedule nothing earlier, and a timer per input would cost the medium more than its events.
    if (this.timer !== undefined && this.timerAt <= next) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    // Node timers have millisecond resolution: wake at or just after the event, never before it.
    // Events already due (a slice ran out) run after pending I/O, not in a tight loop that starves it.
    const waitMs = Math.max(0, Math.ceil((next - this.clock.now()) / 1000));
    this.timerAt = next;
    this.timer = setTimeout(this.pump, waitMs);
  }

  /** When the pending wake-up is for (engine time). */
  private timerAt = 0;
}
