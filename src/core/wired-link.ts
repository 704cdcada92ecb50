import { RangeArgumentError } from './errors.js';
import { US_PER_MS, type Micros } from './time.js';

/** One direction of a wired link: its rate, its one-way propagation delay and its drop-tail queue. */
export interface WiredLinkParams {
  rateMbps: number;
  delayMs: number;
  /** Packets the queue holds besides the one on the wire (0: no packet limit). */
  queuePackets: number;
  /** Bytes the queue holds besides the packet on the wire (0: no byte limit). */
  queueBytes: number;
}

export type WiredEnqueued = { ok: true } | { ok: false; reason: 'queue-full' };

interface Waiting {
  /** When its first bit goes on the wire. */
  startUs: number;
  bytes: number;
}

interface InFlight<T> {
  arriveUs: Micros;
  item: T;
}

/**
 * One direction of a point-to-point wired link (a WAN or an Ethernet
 * segment), sans-IO: packets go in with a time, come out at the far end
 * with `tick`, and `nextDeadline` says when the next one arrives. The
 * transmitter sends one packet at a time at the link's rate, in FIFO order;
 * a packet waits in a drop-tail queue while the one before it is on the
 * wire, and one that finds the queue full is refused (a value, not an
 * exception: the caller counts the drop). A packet arrives one propagation
 * delay after its last bit left. Nothing is random, so a run is the same
 * every time.
 *
 * Each packet's start and end of transmission are known the moment it is
 * queued (the transmitter serves a FIFO at a fixed rate), so no event is
 * needed while it waits: the queue's occupancy at a time is the packets
 * whose transmission has not started by then. The transmitter's clock is
 * kept as the bits sent since it last started from idle (a 1040-byte
 * packet at 3 Mbps takes 2773.33 us) and only arrival times are rounded,
 * up, to whole microseconds, so rounding never adds up over a long run.
 */
export class WiredLinkDirection<T> {
  /** Packets queued (not yet on the wire), oldest first, from `waitingHead` on. */
  private waiting: Waiting[] = [];
  private waitingHead = 0;
  private waitingBytes = 0;
  /** Packets on the wire or propagating, oldest first, from `flightHead` on. */
  private flight: Array<InFlight<T>> = [];
  private flightHead = 0;
  /**
   * When the transmitter is free again: `busyBaseUs` (when it last started
   * from idle) plus `busyBits` sent since at the link's rate. One division
   * per packet and no running sum of fractions, so a long busy period does
   * not drift.
   */
  private busyBaseUs = 0;
  private busyBits = 0;
  private readonly delayUs: Micros;
  readonly counters = { sent: 0, sentBytes: 0, delivered: 0, drops: 0, maxQueuePackets: 0 };

  constructor(readonly params: WiredLinkParams) {
    if (!(params.rateMbps > 0 && Number.isFinite(params.rateMbps))) throw new RangeArgumentError('wired link rateMbps', params.rateMbps, 'a rate above 0 Mbps');
    if (!(params.delayMs >= 0 && Number.isFinite(params.delayMs)))
      throw new RangeArgumentError('wired link delayMs', params.delayMs, 'a delay of 0 ms or more');
    for (const k of ['queuePackets', 'queueBytes'] as const) {
      if (!(Number.isInteger(params[k]) && params[k] >= 0)) throw new RangeArgumentError(`wired link ${k}`, params[k], 'an integer of 0 or more');
    }
    this.delayUs = Math.round(params.delayMs * US_PER_MS);
  }

  /** Queues `item` of `bytes` bytes at `now` (times never go back), or refuses it if the queue is full. */
  send(item: T, bytes: number, now: Micros): WiredEnqueued {
    this.settle(now);
    const p = this.params;
    const queued = this.waiting.length - this.waitingHead;
    const busyUntilUs = this.busyUntilUs();
    const startUs = Math.max(now, busyUntilUs);
    // A packet that goes on the wire at once does not wait in the queue.
    if (startUs > now) {
      if ((p.queuePackets > 0 && queued >= p.queuePackets) || (p.queueBytes > 0 && this.waitingBytes + bytes > p.queueBytes)) {
        this.counters.drops++;
        return { ok: false, reason: 'queue-full' };
      }
      this.waiting.push({ startUs, bytes });
      this.waitingBytes += bytes;
      this.counters.maxQueuePackets = Math.max(this.counters.maxQueuePackets, queued + 1);
    }
    if (startUs > busyUntilUs || this.busyBits === 0) {
      this.busyBaseUs = startUs;
      this.busyBits = 0;
    }
    this.busyBits += 8 * bytes;
    // Arrival rounds up to a whole microsecond (the tolerance keeps an exact quotient exact).
    this.flight.push({ arriveUs: Math.ceil(this.busyUntilUs() - 1e-6) + this.delayUs, item });
    this.counters.sent++;
    this.counters.sentBytes += bytes;
    return { ok: true };
  }

  private busyUntilUs(): number {
    return this.busyBaseUs + this.busyBits / this.params.rateMbps;
  }

  /** Packets queued and not yet on the wire at `now`. */
  queueLength(now: Micros): number {
    this.settle(now);
    return this.waiting.length - this.waitingHead;
  }

  /** The packets that have reached the far end by `now`, in the order they were sent. */
  tick(now: Micros): T[] {
    const out: T[] = [];
    while (this.flightHead < this.flight.length && this.flight[this.flightHead]!.arriveUs <= now) out.push(this.flight[this.flightHead++]!.item);
    if (this.flightHead > 64 && this.flightHead * 2 > this.flight.length) {
      this.flight = this.flight.slice(this.flightHead);
      this.flightHead = 0;
    }
    this.counters.delivered += out.length;
    return out;
  }

  /** When the next packet reaches the far end (undefined: none on the way). */
  nextDeadline(): Micros | undefined {
    return this.flight[this.flightHead]?.arriveUs;
  }

  /** Packets whose transmission has started by `now` leave the queue. */
  private settle(now: Micros): void {
    while (this.waitingHead < this.waiting.length && this.waiting[this.waitingHead]!.startUs <= now) {
      this.waitingBytes -= this.waiting[this.waitingHead]!.bytes;
      this.waitingHead++;
    }
    if (this.waitingHead > 64 && this.waitingHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitingHead);
      this.waitingHead = 0;
    }
  }
}

/** A full-duplex point-to-point link: two independent directions with the same parameters. */
export class WiredLink<T> {
  /** From the host to the router it hangs off, and back. */
  readonly up: WiredLinkDirection<T>;
  readonly down: WiredLinkDirection<T>;

  constructor(params: WiredLinkParams) {
    this.up = new WiredLinkDirection<T>(params);
    this.down = new WiredLinkDirection<T>(params);
  }
}
