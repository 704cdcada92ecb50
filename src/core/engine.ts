import { RangeArgumentError } from './errors.js';
import { assertMicros, VirtualClock, type Micros } from './time.js';

/** A handle to a scheduled event, for cancellation. */
export type EventId = number;

interface Ev {
  at: Micros;
  seq: number;
  fire: (now: Micros) => void;
  cancelled: boolean;
}

/**
 * The discrete-event engine: a heap of events ordered by time and then by
 * insertion, driving a virtual clock. Events at equal times run in the order
 * they were scheduled, so a run is reproducible from its inputs alone.
 */
export class EventEngine {
  readonly clock: VirtualClock;
  /** A binary min-heap by (at, seq), its order written out rather than passed in: this is the loop every event goes through. */
  private readonly q: Ev[] = [];
  private readonly live = new Map<EventId, Ev>();
  private seq = 0;
  private fired = 0;

  constructor(start: Micros = 0) {
    this.clock = new VirtualClock(start);
  }

  now(): Micros {
    return this.clock.now();
  }

  /** Schedules `fire` at absolute time `at` (not before now). */
  at(at: Micros, fire: (now: Micros) => void): EventId {
    assertMicros('event time', at);
    if (at < this.clock.now()) {
      throw new RangeArgumentError('event time', at, `a time at or after now (${this.clock.now()} us)`);
    }
    const ev: Ev = { at, seq: this.seq++, fire, cancelled: false };
    this.push(ev);
    this.live.set(ev.seq, ev);
    return ev.seq;
  }

  /** Schedules `fire` after `delay` microseconds. */
  after(delay: Micros, fire: (now: Micros) => void): EventId {
    return this.at(this.clock.now() + assertMicros('delay', delay), fire);
  }

  /** Cancels a pending event; returns whether it was still pending. */
  cancel(id: EventId): boolean {
    const ev = this.live.get(id);
    if (!ev) return false;
    ev.cancelled = true;
    this.live.delete(id);
    return true;
  }

  /** Time of the next pending event. */
  nextAt(): Micros | undefined {
    this.dropCancelled();
    return this.q[0]?.at;
  }

  get pending(): number {
    return this.live.size;
  }

  get eventsFired(): number {
    return this.fired;
  }

  /** Runs the next event; returns false when none is left. */
  step(): boolean {
    this.dropCancelled();
    const ev = this.pop();
    if (!ev) return false;
    this.live.delete(ev.seq);
    this.clock.advanceTo(ev.at);
    this.fired++;
    ev.fire(ev.at);
    return true;
  }

  /**
   * Runs events up to and including time `until` (all of them when omitted),
   * then leaves the clock at `until`.
   */
  run(until?: Micros): void {
    for (;;) {
      const next = this.nextAt();
      if (next === undefined || (until !== undefined && next > until)) break;
      this.step();
    }
    if (until !== undefined && until > this.clock.now()) this.clock.advanceTo(until);
  }

  private dropCancelled(): void {
    while (this.q[0]?.cancelled) this.pop();
  }

  private push(ev: Ev): void {
    const a = this.q;
    let i = a.length;
    a.push(ev);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const up = a[p]!;
      if (up.at < ev.at || (up.at === ev.at && up.seq < ev.seq)) break;
      a[i] = up;
      i = p;
    }
    a[i] = ev;
  }

  private pop(): Ev | undefined {
    const a = this.q;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    const n = a.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let c = l;
      let ce = a[l]!;
      if (l + 1 < n) {
        const re = a[l + 1]!;
        if (re.at < ce.at || (re.at === ce.at && re.seq < ce.seq)) {
          c = l + 1;
          ce = re;
        }
      }
      if (last.at < ce.at || (last.at === ce.at && last.seq < ce.seq)) break;
      a[i] = ce;
      i = c;
    }
    a[i] = last;
    return top;
  }
}
