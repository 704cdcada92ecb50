import { type EventEngine, type EventId } from './engine.js';
import { RealClock, assertMicros, type Clock, type Micros } from './time.js';

/**
 * What a driver needs from time: read it, and be called back at a time.
 * The event engine is the virtual-time scheduler; `RealTimeScheduler` is its
 * real-time twin over Node timers. Drivers take a Scheduler, never both.
 */
export interface Scheduler extends Clock {
  at(at: Micros, fire: (now: Micros) => void): EventId;
  /** `at(at, (now) => fire(now, arg))`, where the scheduler can without a closure per event (the engine). */
  atWith<T>(at: Micros, fire: (now: Micros, arg: T) => void, arg: T): EventId;
  after(delay: Micros, fire: (now: Micros) => void): EventId;
  cancel(id: EventId): boolean;
  /**
   * `cancel(id)` then `at(at, fire)`, in one step where the scheduler can
   * (the engine moves the event in its heap). Returns the event's handle,
   * which may be `id` itself: the caller keeps only the one returned.
   */
  move(id: EventId, at: Micros, fire: (now: Micros) => void): EventId;
}

// The engine already has this shape; say so to the compiler.
const _engineIsScheduler: (e: EventEngine) => Scheduler = (e) => e;
void _engineIsScheduler;

/**
 * Real time: callbacks from Node timers, times from a monotonic clock. A
 * callback never runs before its time; it may run late by the event loop's
 * latency, and gets the real time at which it runs.
 */
export class RealTimeScheduler implements Scheduler {
  private readonly timers = new Map<EventId, NodeJS.Timeout>();
  private seq = 0;

  constructor(readonly clock: Clock = new RealClock()) {}

  now(): Micros {
    return this.clock.now();
  }

  at(at: Micros, fire: (now: Micros) => void): EventId {
    assertMicros('event time', at);
    const id = this.seq++;
    const arm = (): void => {
      const wait = at - this.clock.now();
      if (wait > 0) {
        // setTimeout has millisecond resolution and may fire early by a fraction of it: re-arm until due.
        this.timers.set(id, setTimeout(arm, Math.max(1, Math.ceil(wait / 1000))));
        return;
      }
      this.timers.delete(id);
      fire(this.clock.now());
    };
    const wait = at - this.clock.now();
    this.timers.set(id, setTimeout(arm, Math.max(0, Math.ceil(wait / 1000))));
    return id;
  }

  atWith<T>(at: Micros, fire: (now: Micros, arg: T) => void, arg: T): EventId {
    return this.at(at, (now) => fire(now, arg));
  }

  after(delay: Micros, fire: (now: Micros) => void): EventId {
    return this.at(this.clock.now() + assertMicros('delay', delay), fire);
  }

  cancel(id: EventId): boolean {
    const t = this.timers.get(id);
    if (!t) return false;
    clearTimeout(t);
    this.timers.delete(id);
    return true;
  }

  move(id: EventId, at: Micros, fire: (now: Micros) => void): EventId {
    this.cancel(id);
    return this.at(at, fire);
  }

  /** Cancels everything pending (for shutdown). */
  cancelAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
