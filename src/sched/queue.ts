import type { QueuedPacket } from './types.js';

/**
 * A bounded FIFO of packets for one channel, with its byte count (the adaptive
 * dwell and the control API read it). A ring buffer: R2 takes from the head,
 * arrivals join the tail, and a packet the MAC aborted goes back to the head.
 * The queue never drops by itself: `push` refuses when full and the owner
 * counts and reports the drop.
 */
export class PacketQueue<T = unknown> {
  private buf: Array<QueuedPacket<T> | undefined> = new Array(8);
  private head = 0;
  private n = 0;
  private byteCount = 0;

  constructor(public capacity: number) {}

  get length(): number {
    return this.n;
  }

  get bytes(): number {
    return this.byteCount;
  }

  peek(): QueuedPacket<T> | undefined {
    return this.n === 0 ? undefined : this.buf[this.head];
  }

  /** Appends at the tail; false, and nothing changed, when the queue is full. */
  push(p: QueuedPacket<T>): boolean {
    if (this.n >= this.capacity) return false;
    this.grow();
    this.buf[(this.head + this.n) % this.buf.length] = p;
    this.n++;
    this.byteCount += p.bytes;
    return true;
  }

  /** Puts a packet back at the head even when full; the owner trims the tail if it must. */
  unshift(p: QueuedPacket<T>): void {
    this.grow();
    this.head = (this.head - 1 + this.buf.length) % this.buf.length;
    this.buf[this.head] = p;
    this.n++;
    this.byteCount += p.bytes;
  }

  /** Takes the head packet. */
  shift(): QueuedPacket<T> | undefined {
    if (this.n === 0) return undefined;
    const p = this.buf[this.head]!;
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.n--;
    this.byteCount -= p.bytes;
    return p;
  }

  /** Takes the tail packet (the newest). */
  pop(): QueuedPacket<T> | undefined {
    if (this.n === 0) return undefined;
    const i = (this.head + this.n - 1) % this.buf.length;
    const p = this.buf[i]!;
    this.buf[i] = undefined;
    this.n--;
    this.byteCount -= p.bytes;
    return p;
  }

  /** Takes out every packet `match` accepts, in queue order; the others keep theirs. */
  takeWhere(match: (p: QueuedPacket<T>) => boolean): QueuedPacket<T>[] {
    const all = this.toArray();
    const taken: QueuedPacket<T>[] = [];
    this.clear();
    for (const p of all) {
      if (match(p)) taken.push(p);
      else this.appendUnbounded(p);
    }
    return taken;
  }

  /** Empties the queue, returning its packets in order. */
  drain(): QueuedPacket<T>[] {
    const all = this.toArray();
    this.clear();
    return all;
  }

  toArray(): QueuedPacket<T>[] {
    const out: QueuedPacket<T>[] = [];
    for (let i = 0; i < this.n; i++) out.push(this.buf[(this.head + i) % this.buf.length]!);
    return out;
  }

  private clear(): void {
    this.buf = new Array(8);
    this.head = 0;
    this.n = 0;
    this.byteCount = 0;
  }

  /** Appends regardless of capacity (re-filling a queue that held these packets already). */
  private appendUnbounded(p: QueuedPacket<T>): void {
    this.grow();
    this.buf[(this.head + this.n) % this.buf.length] = p;
    this.n++;
    this.byteCount += p.bytes;
  }

  private grow(): void {
    if (this.n < this.buf.length) return;
    const next: Array<QueuedPacket<T> | undefined> = new Array(this.buf.length * 2);
    for (let i = 0; i < this.n; i++) next[i] = this.buf[(this.head + i) % this.buf.length];
    this.buf = next;
    this.head = 0;
  }
}
