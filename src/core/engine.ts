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
  /** Its index in the heap while pending, kept by every move: a cancelled event leaves the heap at once. */
  pos: number;
  fire: (now: Micros, arg: unknown) => void;
  /** What `atWith` gave to hand to `fire` (undefined otherwise). */
  arg: unknown;
}

/** What an event object holds while it waits for reuse (so that it keeps no callback alive). */
const noFire = (): void => {};

/** Slots for pending events: at most this many pending at once. */
const SLOT_SPAN = 2 ** 24;
/** A slot is reused this many times at most, so that a handle is never handed out twice (ids stay below 2^53). */
const MAX_GENERATION = Math.floor(Number.MAX_SAFE_INTEGER / SLOT_SPAN);

/**
 * Throws the error for an event time that is not a whole number of µs at or
 * after now. Out of line: `atWith` and `move` are on the path of every event,
 * and V8 inlines a function into its callers only while its bytecode is
 * small (and only so much of it into one caller): building the message where
 * it is checked made them several times their size.
 */
function refuseTime(at: Micros, now: Micros): never {
  assertMicros('event time', at);
  throw new RangeArgumentError('event time', at, `a time at or after now (${now} us)`);
}

/**
 * The discrete-event engine: a heap of events ordered by time and then by
 * insertion, driving a virtual clock. Events at equal times run in the order
 * they were scheduled, so a run is reproducible from its inputs alone.
 *
 * The heap knows where each event is, and a cancelled event leaves it at
 * once: the MAC's timers are cancelled about as often as they run (a
 * backoff stops on every frame heard), and left in place they would make the
 * heap twice as deep for every other event.
 */
export class EventEngine {
  readonly clock: VirtualClock;
  /** A binary min-heap by (at, seq) of the pending events, its order written out rather than passed in: this is the loop every event goes through. */
  private readonly q: Ev[] = [];
  /** Pending events in `q`: the heap is `q[0 .. n)`, the array never shrinks (see `spareCount`). */
  private n = 0;
  /**
   * Pending events by slot, for `cancel`: a handle names a slot and the slot's
   * generation, so a handle of an event that has run or was cancelled finds
   * nothing even once its slot holds another. Cheaper than a map by id on
   * the path every event takes.
   */
  private readonly slots: (Ev | undefined)[] = [];
  private readonly generation: number[] = [];
  /** Slots free for reuse: `freeSlots[0 .. freeCount)`. */
  private readonly freeSlots: number[] = [];
  private freeCount = 0;
  /**
   * Events that left the heap, for `at` to fill again (no new object per
   * event): `spare[0 .. spareCount)`. These stacks, and the heap, keep a count
   * of their own and store by index rather than push and pop: an array's
   * `push` or `pop` is a call that V8 inlines only while that call site has
   * never deoptimized, and one deoptimization (an event's handle outgrowing
   * a small integer, a new run's arrays) left it a call into the runtime for
   * the rest of the process, on the path every event takes.
   */
  private readonly spare: Ev[] = [];
  private spareCount = 0;
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
    return this.atWith(at, fire, undefined);
  }

  /**
   * Schedules `fire(now, arg)` at absolute time `at`: an event about one
   * object (a frame's end) with a callback made once, not a closure per
   * event.
   */
  atWith<T>(at: Micros, fire: (now: Micros, arg: T) => void, arg: T): EventId {
    if (!(at >= this.clock.now() && Number.isSafeInteger(at))) refuseTime(at, this.clock.now());
    const slot = this.freeCount > 0 ? this.freeSlots[--this.freeCount]! : this.newSlot();
    const id = slot + SLOT_SPAN * this.generation[slot]!;
    let ev: Ev;
    if (this.spareCount === 0) ev = { at, seq: this.seq++, id, slot, pos: 0, fire: fire as Ev['fire'], arg };
    else {
      ev = this.spare[--this.spareCount]!;
      ev.at = at;
      ev.seq = this.seq++;
      ev.id = id;
      ev.slot = slot;
      ev.fire = fire as Ev['fire'];
      ev.arg = arg;
    }
    this.slots[slot] = ev;
    this.live++;
    this.push(ev);
    return ev.id;
  }

  /**
   * Moves a pending event to `at` with `fire`, as cancelling it and
   * scheduling anew would (it runs after the events already scheduled for
   * the same time), and keeps its handle; a handle not pending schedules a
   * new event. Returns the event's handle. One step of the heap instead of
   * two, for the timers that move on nearly every input (a MAC's backoff).
   */
  move(id: EventId, at: Micros, fire: (now: Micros) => void): EventId {
    const slot = id - Math.floor(id / SLOT_SPAN) * SLOT_SPAN;
    const ev = this.slots[slot];
    if (ev === undefined || ev.id !== id) return this.at(at, fire);
    if (!(at >= this.clock.now() && Number.isSafeInteger(at))) refuseTime(at, this.clock.now());
    const before = ev.at;
    ev.at = at;
    ev.seq = this.seq++;
    ev.fire = fire;
    ev.arg = undefined;
    // Later than it was (a new sequence number at the same time is later too): down; earlier: up.
    if (at >= before) this.siftDown(ev.pos, ev);
    else this.siftUp(ev.pos, ev);
    return id;
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
    this.remove(ev.pos);
    this.release(slot);
    ev.fire = noFire;
    ev.arg = undefined;
    this.spare[this.spareCount++] = ev;
    return true;
  }

  /** Time of the next pending event. */
  nextAt(): Micros | undefined {
    return this.n > 0 ? this.q[0]!.at : undefined;
  }

  get pending(): number {
    return this.live;
  }

  get eventsFired(): number {
    return this.fired;
  }

  /** Runs the next event; returns false when none is left. */
  step(): boolean {
    if (this.n === 0) return false;
    const ev = this.q[0]!;
    this.remove(0);
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
    while (this.n > 0) {
      const top = q[0]!;
      if (top.at > last) break;
      this.remove(0);
      this.fireEv(top);
    }
    if (until !== undefined && until > this.clock.now()) this.clock.advanceTo(until);
  }

  /** Runs an event just taken off the heap; the event object is kept for reuse once it has run. */
  private fireEv(ev: Ev): void {
    this.release(ev.slot);
    this.clock.advanceToKnown(ev.at);
    this.fired++;
    ev.fire(ev.at, ev.arg);
    ev.fire = noFire;
    ev.arg = undefined;
    this.spare[this.spareCount++] = ev;
  }

  /** A slot never used before (none is free). */
  private newSlot(): number {
    const slot = this.slots.length;
    if (slot >= SLOT_SPAN) throw new RangeArgumentError('pending events', slot, `at most ${SLOT_SPAN}`);
    this.generation[slot] = 0;
    return slot;
  }

  private release(slot: number): void {
    this.slots[slot] = undefined;
    this.live--;
    const g = this.generation[slot]! + 1;
    this.generation[slot] = g;
    // A slot that has been through every generation is retired.
    if (g < MAX_GENERATION) this.freeSlots[this.freeCount++] = slot;
  }

  private push(ev: Ev): void {
    this.siftUp(this.n++, ev);
  }

  /** Takes the event at heap index i out of the heap: the last one takes its place and moves up or down. */
  private remove(i: number): void {
    const a = this.q;
    const n = --this.n;
    const last = a[n]!;
    if (i === n) return;
    if (i > 0 && earlier(last, a[(i - 1) >> 1]!)) this.siftUp(i, last);
    else this.siftDown(i, last);
  }

  /** Puts `ev` at index i or above it, the events it passes moving down. */
  private siftUp(i: number, ev: Ev): void {
    const a = this.q;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const up = a[p]!;
      if (earlier(up, ev)) break;
      a[i] = up;
      up.pos = i;
      i = p;
    }
    a[i] = ev;
    ev.pos = i;
  }

  /** Puts `ev` at index i or below it, the earlier of two children moving up each step. */
  private siftDown(i: number, ev: Ev): void {
    const a = this.q;
    const n = this.n;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let c = l;
      let ce = a[l]!;
      if (l + 1 < n) {
        const re = a[l + 1]!;
        if (earlier(re, ce)) {
          c = l + 1;
          ce = re;
        }
      }
      if (earlier(ev, ce)) break;
      a[i] = ce;
      ce.pos = i;
      i = c;
    }
    a[i] = ev;
    ev.pos = i;
  }
}

/** The heap's order: by time, then by when scheduled. */
function earlier(x: Ev, y: Ev): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}
