import { RangeArgumentError } from './errors.js';
import { assertMicros, VirtualClock, type Micros } from './time.js';

/** A handle to a scheduled event, for cancellation. */
export type EventId = number;

interface Ev {
  at: Micros;
  seq: number;
  /** Its handle: `slot + SLOT_SPAN * generation` (see `EventEngine.slots`). */
  id: EventId;
  /** Its slot, kept apart: handles outgrow 32 bits, where `%` on them is a floating-point call. */
  slot: number;
  fire: (now: Micros) => void;
  cancelled: boolean;
}

/** What an event object holds while it waits for reuse (so that it keeps no callback alive). */
const noFire = (): void => {};

/** Slots for pending events: at most this many pending at once. */
const SLOT_SPAN = 2 ** 24;
/** A slot is reused this many times at most, so that a handle is never handed out twice (ids stay below 2^53). */
const MAX_GENERATION = Math.floor(Number.MAX_SAFE_INTEGER / SLOT_SPAN);

/**
 * The discrete-event engine: a heap of events ordered by time and then by
 * insertion, driving a virtual clock. Events at equal times run in the order
 * they were scheduled, so a run is reproducible from its inputs alone.
 */
export class EventEngine {
  readonly clock: VirtualClock;
  /** A binary min-heap by (at, seq), its order written out rather than passed in: this is the loop every event goes through. */
  private readonly q: Ev[] = [];
  /**
   * Pending events by slot, for `cancel`: a handle names a slot and the slot's
   * generation, so a handle of an event that has run or was cancelled finds
   * nothing even once its slot holds another. Cheaper than a map by id on
   * the path every event takes.
   */
  private readonly slots: (Ev | undefined)[] = [];
  private readonly generation: number[] = [];
  private readonly freeSlots: number[] = [];
  /** Events that left the heap, for `at` to fill again: no new object per event. */
  private readonly spare: Ev[] = [];
  private live = 0;
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
    if (!(at >= this.clock.now() && Number.isSafeInteger(at))) {
      assertMicros('event time', at);
      throw new RangeArgumentError('event time', at, `a time at or after now (${this.clock.now()} us)`);
    }
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.slots.length;
      if (slot >= SLOT_SPAN) throw new RangeArgumentError('pending events', slot, `at most ${SLOT_SPAN}`);
      this.generation.push(0);
    }
    const id = slot + SLOT_SPAN * this.generation[slot]!;
    let ev = this.spare.pop();
    if (ev === undefined) ev = { at, seq: this.seq++, id, slot, fire, cancelled: false };
    else {
      ev.at = at;
      ev.seq = this.seq++;
      ev.id = id;
      ev.slot = slot;
      ev.fire = fire;
      ev.cancelled = false;
    }
    this.slots[slot] = ev;
    this.live++;
    this.push(ev);
    return ev.id;
  }

  /** Schedules `fire` after `delay` microseconds. */
  after(delay: Micros, fire: (now: Micros) => void): EventId {
    return this.at(this.clock.now() + assertMicros('delay', delay), fire);
  }

  /** Cancels a pending event; returns whether it was still pending. */
  cancel(id: EventId): boolean {
    // The slot of a handle, as `id % SLOT_SPAN` but exact integer steps (handles outgrow 32 bits).
    const slot = id - Math.floor(id / SLOT_SPAN) * SLOT_SPAN;
    const ev = this.slots[slot];
    if (ev === undefined || ev.id !== id) return false;
    ev.cancelled = true;
    this.release(slot);
    return true;
  }

  /** Time of the next pending event. */
  nextAt(): Micros | undefined {
    this.dropCancelled();
    return this.q[0]?.at;
  }

  get pending(): number {
    return this.live;
  }

  get eventsFired(): number {
    return this.fired;
  }

  /** Runs the next event; returns false when none is left. */
  step(): boolean {
    this.dropCancelled();
    const ev = this.pop();
    if (!ev) return false;
    this.fireEv(ev);
    return true;
  }

  /**
   * Runs events up to and including time `until` (all of them when omitted),
   * then leaves the clock at `until`.
   */
  run(until?: Micros): void {
    const q = this.q;
    const last = until ?? Infinity;
    for (;;) {
      const top = q[0];
      if (top === undefined) break;
      if (top.cancelled) {
        this.spare.push(this.pop()!);
        continue;
      }
      if (top.at > last) break;
      this.pop();
      this.fireEv(top);
    }
    if (until !== undefined && until > this.clock.now()) this.clock.advanceTo(until);
  }

  /** Runs an event just taken off the heap; the event object is kept for reuse once it has run. */
  private fireEv(ev: Ev): void {
    this.release(ev.slot);
    this.clock.advanceToKnown(ev.at);
    this.fired++;
    ev.fire(ev.at);
    ev.fire = noFire;
    this.spare.push(ev);
  }

  private release(slot: number): void {
    this.slots[slot] = undefined;
    this.live--;
    const g = this.generation[slot]! + 1;
    this.generation[slot] = g;
    // A slot that has been through every generation is retired.
    if (g < MAX_GENERATION) this.freeSlots.push(slot);
  }

  private dropCancelled(): void {
    while (this.q[0]?.cancelled) this.spare.push(this.pop()!);
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
