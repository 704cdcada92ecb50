import { RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import { PacketQueue } from './queue.js';
import type { QosClass, QueuedPacket } from './types.js';

/** The default queue, best effort: the one queue of a router without QoS classes. */
export const BEST_EFFORT_QUEUE = 0;

/** One queue and no guarantee: a channel queue without QoS is a plain FIFO. */
export const NO_QOS: readonly QosClass[] = [{ queue: BEST_EFFORT_QUEUE, minKbps: 0, burstUs: 0 }];

/** Checks a class list: distinct queue ids in 0..2^32-2, queue 0 among them, rates and depths non-negative. */
export function checkClasses(classes: readonly QosClass[], field = 'scheduler.classes'): QosClass[] {
  const ids = new Set<number>();
  classes.forEach((c, i) => {
    if (!Number.isSafeInteger(c.queue) || c.queue < 0 || c.queue > 0xfffffffe || ids.has(c.queue)) {
      throw new RangeArgumentError(`${field}[${i}].queue`, c.queue, 'a distinct integer queue id in 0-4294967294');
    }
    ids.add(c.queue);
    if (!(Number.isFinite(c.minKbps) && c.minKbps >= 0)) throw new RangeArgumentError(`${field}[${i}].minKbps`, c.minKbps, 'a rate >= 0 kbps');
    if (!(Number.isSafeInteger(c.burstUs) && c.burstUs >= 0)) throw new RangeArgumentError(`${field}[${i}].burstUs`, c.burstUs, 'an integer number of us >= 0');
  });
  if (!ids.has(BEST_EFFORT_QUEUE))
    throw new RangeArgumentError(
      field,
      classes.map((c) => c.queue),
      `a class for queue ${BEST_EFFORT_QUEUE} (best effort)`,
    );
  return classes.map((c) => ({ ...c }));
}

interface ClassState<T> {
  cls: QosClass;
  q: PacketQueue<T>;
  /** Bytes the class may still send within its guaranteed rate; may go below zero by one packet. */
  tokens: number;
  /** When `tokens` was last brought up to date. */
  atUs: Micros;
}

/** Bytes a rate of `kbps` earns in `us` microseconds. */
const bytesIn = (kbps: number, us: number): number => (kbps * us) / 8000;

/** `admit`'s answer for a packet taken without pushing another out: made once (one a packet otherwise). */
const ADMITTED: { ok: true } = Object.freeze({ ok: true });

/**
 * One channel queue of R2 with a queue per QoS class inside it (seeds/002 on
 * the Urban-X scheduler), bounded as a whole by `capacity` packets.
 *
 * Classes are in priority order, highest first. Each has a token bucket that
 * fills at its guaranteed rate `minKbps` up to `minKbps` over `burstUs`.
 *
 * - **Service** (`shift`): the highest-priority class whose bucket is not
 *   below zero and that has a packet sends first, and pays its bytes; when
 *   no class is within its guarantee, the highest-priority class with a
 *   packet sends without paying (what is left over the guarantees goes by
 *   priority). Within a class, first in first out.
 * - **Admission** (`admit`): a packet joins its class while the channel
 *   queue has room. When it is full, the tail of the lowest-priority class
 *   below the packet's own that has packets is pushed out to make room (a
 *   drop the owner reports); with nothing below, the packet is refused.
 *
 * With the one class of NO_QOS this is exactly a bounded FIFO.
 */
export class ClassedQueue<T = unknown> {
  private states: ClassState<T>[] = [];
  private readonly byQueue = new Map<number, number>();
  /** The packet `shift` last charged to a bucket, refunded if the MAC gives it back. */
  private charged: { p: QueuedPacket<T>; at: number } | undefined;
  /** Packets in all classes, kept as they come and go: R2 reads every queue's length after every input and every 10 ms. */
  private count = 0;

  /**
   * `tally`, when given, counts the packets of every queue that shares it
   * (R2's channel queues): whether any queue but one has packets is then a
   * subtraction, not a pass over the queues.
   */
  constructor(
    public capacity: number,
    classes: readonly QosClass[],
    nowUs: Micros,
    private readonly tally: { packets: number } = { packets: 0 },
  ) {
    this.setClasses(classes, nowUs);
  }

  /** Sets the count, and the tally by as much. */
  private setCount(n: number): void {
    this.tally.packets += n - this.count;
    this.count = n;
  }

  get length(): number {
    return this.count;
  }

  get bytes(): number {
    let n = 0;
    for (const s of this.states) n += s.q.bytes;
    return n;
  }

  /** The class index a packet waits in: its queue's, or best effort's for a queue with no class. */
  private indexOf(p: QueuedPacket<T>): number {
    return this.byQueue.get(p.queue ?? BEST_EFFORT_QUEUE) ?? this.byQueue.get(BEST_EFFORT_QUEUE)!;
  }

  /** Adds `p` (see the class comment); `pushedOut` is the packet dropped to make room for it. */
  admit(p: QueuedPacket<T>): { ok: true; pushedOut?: QueuedPacket<T> } | { ok: false } {
    const i = this.indexOf(p);
    this.settle(p, i);
    if (this.count < this.capacity) {
      this.states[i]!.q.push(p);
      this.setCount(this.count + 1);
      return ADMITTED;
    }
    for (let j = this.states.length - 1; j > i; j--) {
      const victim = this.states[j]!.q.pop();
      if (victim === undefined) continue;
      this.states[i]!.q.push(p);
      return { ok: true, pushedOut: victim };
    }
    return { ok: false };
  }

  /** The oldest packet waiting in any class (where an untuned R2 goes). */
  peek(): QueuedPacket<T> | undefined {
    let best: QueuedPacket<T> | undefined;
    for (const s of this.states) {
      const h = s.q.peek();
      if (h && (!best || h.enqueuedUs < best.enqueuedUs)) best = h;
    }
    return best;
  }

  /** The next packet to send at `now` (see the class comment). */
  shift(now: Micros): QueuedPacket<T> | undefined {
    let within = -1;
    let first = -1;
    for (let i = 0; i < this.states.length; i++) {
      const s = this.states[i]!;
      if (s.q.length === 0) continue;
      if (first < 0) first = i;
      if (s.cls.minKbps > 0) {
        this.refill(s, now);
        if (s.tokens >= 0) {
          within = i;
          break;
        }
      }
    }
    const i = within >= 0 ? within : first;
    if (i < 0) return undefined;
    const s = this.states[i]!;
    const p = s.q.shift()!;
    this.setCount(this.count - 1);
    if (within >= 0) {
      s.tokens -= p.bytes;
      this.charged = { p, at: i };
    } else this.charged = undefined;
    return p;
  }

  /** Puts a packet back at the head of its class (the MAC aborted it); its bytes go back to the bucket they were charged to. */
  unshift(p: QueuedPacket<T>): void {
    const i = this.indexOf(p);
    this.settle(p, i);
    this.states[i]!.q.unshift(p);
    this.setCount(this.count + 1);
    this.refund(p);
  }

  /** The packet this queue handed out came back, here or to another channel's queue: its bytes go back to its bucket. */
  refund(p: QueuedPacket<T>): void {
    if (this.charged?.p === p) {
      const s = this.states[this.charged.at];
      if (s) s.tokens = Math.min(this.depth(s.cls), s.tokens + p.bytes);
    }
    this.charged = undefined;
  }

  /** A packet waits as the class it is in: one for a queue with no class is best effort's from now on. */
  private settle(p: QueuedPacket<T>, i: number): void {
    const queue = this.states[i]!.cls.queue;
    if ((p.queue ?? BEST_EFFORT_QUEUE) !== queue) p.queue = queue;
  }

  /** Takes the newest packet of the lowest-priority class that has one (trimming to capacity). */
  pop(): QueuedPacket<T> | undefined {
    for (let j = this.states.length - 1; j >= 0; j--) {
      const p = this.states[j]!.q.pop();
      if (p) {
        this.setCount(this.count - 1);
        return p;
      }
    }
    return undefined;
  }

  /** Takes out every packet `match` accepts, oldest first; the others keep their places. */
  takeWhere(match: (p: QueuedPacket<T>) => boolean): QueuedPacket<T>[] {
    const taken = byAge(this.states.map((s) => s.q.takeWhere(match)));
    this.setCount(this.count - taken.length);
    return taken;
  }

  /** Empties the queue, oldest first. */
  drain(): QueuedPacket<T>[] {
    this.setCount(0);
    return byAge(this.states.map((s) => s.q.drain()));
  }

  /** Every class's queue, in priority order. */
  classes(): Array<{ queue: number; packets: number; bytes: number }> {
    return this.states.map((s) => ({ queue: s.cls.queue, packets: s.q.length, bytes: s.q.bytes }));
  }

  /**
   * New classes (checked by the caller), live: a class that stays keeps its
   * packets and its bucket (capped at the new depth); packets of a class
   * that goes join best effort, oldest first.
   */
  setClasses(classes: readonly QosClass[], now: Micros): void {
    const old = this.states;
    this.states = classes.map((cls) => {
      const was = old.find((s) => s.cls.queue === cls.queue);
      if (was) this.refill(was, now);
      const tokens = was ? Math.min(was.tokens, this.depth(cls)) : this.depth(cls);
      return { cls: { ...cls }, q: was?.q ?? new PacketQueue<T>(Infinity), tokens, atUs: now };
    });
    this.byQueue.clear();
    this.states.forEach((s, i) => this.byQueue.set(s.cls.queue, i));
    const orphans = byAge(old.filter((s) => !this.byQueue.has(s.cls.queue)).map((s) => s.q.drain()));
    // They are best effort's now, on the link counters too.
    for (const p of orphans) p.queue = BEST_EFFORT_QUEUE;
    const be = this.states[this.byQueue.get(BEST_EFFORT_QUEUE)!]!.q;
    if (orphans.length > 0) for (const p of byAge([be.drain(), orphans])) be.push(p);
    let n = 0;
    for (const s of this.states) n += s.q.length;
    this.setCount(n);
    this.charged = undefined;
  }

  private depth(cls: QosClass): number {
    return bytesIn(cls.minKbps, cls.burstUs);
  }

  private refill(s: ClassState<T>, now: Micros): void {
    if (now > s.atUs) {
      s.tokens = Math.min(this.depth(s.cls), s.tokens + bytesIn(s.cls.minKbps, now - s.atUs));
      s.atUs = now;
    }
  }
}

/** Packets of several queues, oldest first (stable: equal times keep the lists' order). */
function byAge<T>(lists: QueuedPacket<T>[][]): QueuedPacket<T>[] {
  const nonEmpty = lists.filter((l) => l.length > 0);
  if (nonEmpty.length <= 1) return nonEmpty[0] ?? [];
  return nonEmpty.flat().sort((a, b) => a.enqueuedUs - b.enqueuedUs);
}
