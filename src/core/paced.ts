import { EventEngine } from './engine.js';
import { RangeArgumentError } from './errors.js';
import type { Scheduler } from './scheduler.js';
import { RealClock, type Clock, type Micros } from './time.js';

export interface PacedOptions {
  /** Run events up to this far ahead of the real clock (µs), instead of a timer each; default 0. */
  aheadUs?: Micros;
  /**
   * Called once the engine has run what was due and set its next wake-up:
   * after each timer wake-up (`fromTimer`) and each outermost `inject`.
   */
  afterRun?: (fromTimer: boolean) => void;
  /**
   * Takes what an event threw, and the engine goes on with the next one.
   * Without it, the throw leaves the engine: through `inject` to its caller,
   * or out of a timer wake-up, which ends the process. A host that must
   * outlive a fault in one event (the medium process) gives one.
   */
  onFault?: (e: unknown) => void;
}

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
 *
 * Node's timers have millisecond resolution, while a chain of dependent
 * events (an 802.11 exchange: DIFS, backoff, data, SIFS, ACK) is tens of
 * microseconds apart. Waiting for each on its own timer would stretch a
 * 300 µs exchange to several milliseconds of wall time. With `aheadUs`, the
 * engine runs events up to that far ahead of the real clock instead (at
 * their own times still): what it tells the outside, it tells up to
 * `aheadUs` early, and an input that arrives meanwhile enters at the
 * engine's time, up to `aheadUs` after the real time it arrived. The order
 * of events and inputs stays consistent; only the real-time edge moves.
 */
export class PacedEngine {
  readonly engine: EventEngine;
  /** The pending wake-up: a timer, or an immediate for events already due. */
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private timerIsImmediate = false;
  private running = false;
  /** How far behind the real clock an event ran, at worst and in sum (µs), and how many ran. */
  readonly lag = { maxUs: 0, sumUs: 0, events: 0 };

  /** How far ahead of the real clock events may run (µs); 0 runs none early. */
  readonly aheadUs: Micros;

  constructor(
    readonly clock: Clock = new RealClock(),
    options: PacedOptions = {},
  ) {
    this.engine = new EventEngine(clock.now());
    const ahead = options.aheadUs ?? 0;
    if (!Number.isSafeInteger(ahead) || ahead < 0) throw new RangeArgumentError('aheadUs', ahead, 'an integer number of µs >= 0');
    this.aheadUs = ahead;
    this.afterRun = options.afterRun;
    this.onFault = options.onFault;
  }

  private readonly afterRun: ((fromTimer: boolean) => void) | undefined;
  private readonly onFault: ((e: unknown) => void) | undefined;

  /**
   * The engine as a `Scheduler` for code that runs outside `inject` and
   * outside the engine's events, such as a promise's continuation (a radio
   * read that resolved in an event continues after the run is over): an event
   * it schedules gets its wake-up, which the engine's own `at` would only get
   * at the next run. Times are the engine's, as `inject` gives them.
   */
  readonly scheduler: Scheduler = {
    now: () => this.engine.now(),
    at: (at, fire) => this.scheduler.atWith(at, fire, undefined),
    atWith: (at, fire, arg) => {
      const id = this.engine.atWith(at, fire, arg);
      if (this.depth === 0) this.reschedule();
      return id;
    },
    after: (delay, fire) => this.scheduler.at(this.engine.now() + delay, fire),
    cancel: (id) => this.engine.cancel(id),
    move: (id, at, fire) => {
      const moved = this.engine.move(id, at, fire);
      if (this.depth === 0) this.reschedule();
      return moved;
    },
  };

  /** When (real time, µs) the engine's pending timer wakes it, or undefined when none is set. */
  get nextWakeUs(): Micros | undefined {
    return this.timer === undefined ? undefined : this.timerWallUs;
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
    this.clearWake();
  }

  /**
   * Runs `fn` at the current real time (or at the engine's, when it ran
   * ahead), after every event due by then; then whatever `fn` scheduled that
   * is due too, and the engine waits for the rest. Called from inside an
   * event (or another inject), `fn` runs at once at that event's time: later
   * events never run in the middle of an earlier one.
   */
  inject<T>(fn: (now: Micros) => T): T {
    if (this.depth > 0) return fn(this.engine.now());
    this.depth++;
    try {
      this.catchUp();
      const r = fn(this.engine.now());
      this.catchUp();
      return r;
    } finally {
      this.depth--;
      this.reschedule();
      if (this.depth === 0) this.afterRun?.(false);
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
      this.afterRun?.(true);
    }
  };

  /** Events run in one go at most; beyond, the engine yields to I/O (sockets, timers) before it goes on. */
  static readonly SLICE = 20_000;

  private catchUp(): void {
    const e = this.engine;
    const wall = this.clock.now();
    const horizon = wall + this.aheadUs;
    for (let n = 0; n < PacedEngine.SLICE; n++) {
      const next = e.nextAt();
      if (next === undefined || next > horizon) break;
      const late = next < wall ? wall - next : 0;
      if (late > this.lag.maxUs) this.lag.maxUs = late;
      this.lag.sumUs += late;
      this.lag.events++;
      if (this.onFault === undefined) e.step();
      else {
        try {
          e.step();
        } catch (err) {
          this.onFault(err);
        }
      }
    }
    // The clock reaches the wall only once nothing due is left (a slice may have run out).
    const left = e.nextAt();
    if (wall > e.now() && (left === undefined || left > horizon)) e.clock.advanceTo(wall);
  }

  private reschedule(): void {
    if (!this.running) return;
    const next = this.engine.nextAt();
    if (next === undefined) return;
    // A wake-up already set for this time or earlier stands (a pump that finds nothing due sets the next):
    // most inputs schedule nothing earlier, and a timer per input would cost the medium more than its events.
    if (this.timer !== undefined && this.timerAt <= next) return;
    this.clearWake();
    // Node timers have millisecond resolution: wake at or just after the event, never before it.
    // Events already due (a slice ran out) run after pending I/O, not in a tight loop that starves it.
    const now = this.clock.now();
    // A slow-motion clock (ScaledClock) moves `rate` µs per real µs: the real wait is longer by 1 / rate.
    const rate = this.clock.rate ?? 1;
    const waitMs = Math.max(0, Math.ceil((next - this.aheadUs - now) / 1000 / rate));
    this.timerAt = next;
    this.timerWallUs = now + waitMs * 1000 * rate;
    // A timer of 0 ms still waits a millisecond; what is due already (a radio read behind its stream, a
    // continuation's event) runs on the next turn of the event loop, after pending I/O.
    this.timerIsImmediate = waitMs === 0;
    this.timer = waitMs === 0 ? setImmediate(this.pump) : setTimeout(this.pump, waitMs);
  }

  private clearWake(): void {
    const t = this.timer;
    if (t === undefined) return;
    if (this.timerIsImmediate) clearImmediate(t as NodeJS.Immediate);
    else clearTimeout(t as NodeJS.Timeout);
    this.timer = undefined;
  }

  /** When the pending wake-up is for (engine time). */
  private timerAt = 0;
  /** When it fires (real time, at the earliest). */
  private timerWallUs = 0;
}
