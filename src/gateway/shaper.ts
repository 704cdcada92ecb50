import { ClockRegressionError, RangeArgumentError } from '../core/errors.js';
import { assertMicros, earlierOf, type Micros } from '../core/time.js';
import { RateAdapter, type RateAdaptParams, type RateDecision } from './rate.js';

/**
 * ADWISER v2's virtual queues and time slices (seeds/003, Sections 3 and
 * 5) as a sans-IO core: the gateway puts each packet for a client into that
 * client's virtual queue, and serves the queues in a repeating frame of
 * period T in which each independent set S of clients has its slice of
 * α_S·T. During the slices of the sets that hold client j, its queue is
 * served at rate v_j (a token bucket filling at v_j, bytes, only while j is
 * on); outside them, not at all. With rate adaptation, a RateAdapter
 * (Algorithm 2) per client sets v_j every t_interval from the queue's length
 * after service. Time is an argument: the caller drives `poll` at
 * `nextDeadline()`; nothing here keeps a timer.
 *
 * The frame starts at `startUs` and repeats every T; the sets take their
 * slices in the order given, from the frame's start, with boundaries at
 * whole µs; what the shares leave of T (their sum below 1) is idle.
 */

/** The slice schedule: independent sets (client indices) and their shares of the frame. */
export interface SliceLayout {
  sets: readonly (readonly number[])[];
  /** α_S, each in [0, 1], summing to at most 1. */
  shares: readonly number[];
}

export interface ShaperParams {
  /** How many clients (virtual queues), indexed 0..n-1. */
  clients: number;
  /** The frame's period T (µs). */
  periodUs: Micros;
  /** Each virtual queue's drop-tail limit (bytes): a packet that would take it past this is dropped. */
  queueBytes: number;
  /**
   * The service rate v_j (Mbps), the start of adaptation when `adapt`; 0:
   * line rate (during its slices a queue is served at once).
   */
  rateMbps: number;
  /** Rate adaptation (Algorithm 2) per client; its parameters (initialRateMbps is `rateMbps`). */
  adapt: boolean;
  adaptParams?: Partial<RateAdaptParams>;
  /** The token bucket's depth (bytes): what a queue may send at once after it was idle. Default 1500. */
  burstBytes?: number;
}

/** One client's counters and state. */
export interface ShaperClientState {
  enqueued: number;
  sent: number;
  dropped: number;
  /** Bytes sent. */
  bytes: number;
  /** Bytes dropped. */
  droppedBytes: number;
  queuePackets: number;
  queueBytes: number;
  /** v_j now (Mbps); 0: line rate. */
  rateMbps: number;
  /** x_j: the client's share of the frame. */
  share: number;
  /** The latest run of Algorithm 2, when adaptation is on and it has run. */
  lastDecision: RateDecision | undefined;
}

interface ClientQueue<P> {
  /** The packets from `head` on, oldest first, and their sizes (two arrays: no object per packet). */
  packets: (P | undefined)[];
  sizes: number[];
  head: number;
  bytes: number;
  /** Token bucket credit (bytes) as of `creditAt`; may go below 0 after a packet larger than the depth. */
  credit: number;
  creditAt: Micros;
  rateMbps: number;
  adapter: RateAdapter | undefined;
  /** When the head packet leaves (computed when the head, the rate or the slices change), undefined: empty or never on. */
  due: Micros | undefined;
  /** On-intervals of the client within a frame, [start, end) µs from the frame's start, merged and ordered. */
  on: number[];
  /** Its on-time per frame (µs). */
  onPerFrame: number;
  share: number;
  state: ShaperClientState;
}

export const SHAPER_BURST_BYTES = 1500;

export class GatewayShaper<P> {
  private readonly queues: ClientQueue<P>[];
  private readonly origin: Micros;
  private readonly periodUs: Micros;
  private readonly limitBytes: number;
  private readonly burst: number;
  private lastUs: Micros;

  constructor(params: ShaperParams, layout: SliceLayout, startUs: Micros) {
    assertMicros('startUs', startUs);
    const n = params.clients;
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeArgumentError('clients', n, 'an integer number of clients >= 1');
    if (!Number.isSafeInteger(params.periodUs) || params.periodUs <= 0)
      throw new RangeArgumentError('periodUs', params.periodUs, 'an integer number of µs > 0');
    if (!(Number.isSafeInteger(params.queueBytes) && params.queueBytes > 0))
      throw new RangeArgumentError('queueBytes', params.queueBytes, 'an integer number of bytes > 0');
    if (!(Number.isFinite(params.rateMbps) && params.rateMbps >= 0))
      throw new RangeArgumentError('rateMbps', params.rateMbps, 'a rate in Mbps >= 0 (0: line rate)');
    if (params.adapt && params.rateMbps === 0) throw new RangeArgumentError('rateMbps', 0, 'a rate in Mbps > 0 to start rate adaptation from');
    const burst = params.burstBytes ?? SHAPER_BURST_BYTES;
    if (!(Number.isFinite(burst) && burst > 0)) throw new RangeArgumentError('burstBytes', burst, 'a number of bytes > 0');
    this.origin = startUs;
    this.lastUs = startUs;
    this.periodUs = params.periodUs;
    this.limitBytes = params.queueBytes;
    this.burst = burst;
    this.queues = Array.from({ length: n }, () => {
      const adapter = params.adapt ? new RateAdapter(startUs, { ...params.adaptParams, initialRateMbps: params.rateMbps }) : undefined;
      return {
        packets: [],
        sizes: [],
        head: 0,
        bytes: 0,
        credit: burst,
        creditAt: startUs,
        rateMbps: params.rateMbps,
        adapter,
        due: undefined,
        on: [],
        onPerFrame: 0,
        share: 0,
        state: {
          enqueued: 0,
          sent: 0,
          dropped: 0,
          bytes: 0,
          droppedBytes: 0,
          queuePackets: 0,
          queueBytes: 0,
          rateMbps: params.rateMbps,
          share: 0,
          lastDecision: undefined,
        },
      };
    });
    this.applyLayout(layout);
  }

  /** Client j's counters (a live view: copy what you keep). */
  client(j: number): Readonly<ShaperClientState> {
    return this.queueOf(j).state;
  }

  /** Client j's on-intervals within a frame, [start, end) µs from the frame's start. */
  slicesOf(j: number): Array<[number, number]> {
    const on = this.queueOf(j).on;
    const out: Array<[number, number]> = [];
    for (let i = 0; i < on.length; i += 2) out.push([on[i]!, on[i + 1]!]);
    return out;
  }

  /** Whether client j is in a slice at `t`. */
  isOn(j: number, t: Micros): boolean {
    const q = this.queueOf(j);
    const off = this.offset(t);
    for (let i = 0; i < q.on.length; i += 2) if (off >= q.on[i]! && off < q.on[i + 1]!) return true;
    return false;
  }

  /**
   * A packet of `bytes` for client j at `now`: into its virtual queue, or
   * dropped (drop-tail) when the queue would pass its limit. Returns whether
   * it was queued. Call `poll` first when time has passed a deadline.
   */
  enqueue(j: number, packet: P, bytes: number, now: Micros): boolean {
    this.checkTime(now);
    const q = this.queueOf(j);
    const s = q.state;
    if (q.bytes + bytes > this.limitBytes) {
      s.dropped++;
      s.droppedBytes += bytes;
      return false;
    }
    s.enqueued++;
    q.packets.push(packet);
    q.sizes.push(bytes);
    q.bytes += bytes;
    s.queuePackets++;
    s.queueBytes = q.bytes;
    if (q.packets.length - q.head === 1) {
      this.refill(q, now);
      q.due = this.departure(q, now);
    }
    return true;
  }

  /**
   * Runs everything due at or before `now`, in time order: the rate
   * adapters' runs and the departures, each packet leaving through `emit`.
   */
  poll(now: Micros, emit: (packet: P, now: Micros) => void): void {
    this.checkTime(now);
    for (;;) {
      let best = -1;
      let at = Infinity;
      let isRun = false;
      for (let j = 0; j < this.queues.length; j++) {
        const q = this.queues[j]!;
        const run = q.adapter?.nextRunAtUs ?? Infinity;
        if (run < at) {
          at = run;
          best = j;
          isRun = true;
        }
        if (q.due !== undefined && q.due < at) {
          at = q.due;
          best = j;
          isRun = false;
        }
      }
      if (best < 0 || at > now) return;
      const q = this.queues[best]!;
      if (isRun) this.runAdapter(q, at);
      else this.depart(q, at, emit);
    }
  }

  /** When `poll` has something to do next; undefined: nothing until a packet comes. */
  nextDeadline(): Micros | undefined {
    let at: Micros | undefined;
    for (const q of this.queues) {
      at = earlierOf(earlierOf(at, q.due), q.adapter?.nextRunAtUs);
    }
    return at;
  }

  /**
   * New slices from `now` on (the dependence graph changed, or the
   * configuration): the frame keeps its phase; credit earned under the old
   * slices stays.
   */
  setLayout(layout: SliceLayout, now: Micros): void {
    this.checkTime(now);
    for (const q of this.queues) this.refill(q, now);
    this.applyLayout(layout);
    for (const q of this.queues) q.due = this.departure(q, now);
  }

  /**
   * Client j goes on with another shaper's counts for it (a live change of
   * the gateway section makes a new shaper): what that one sent and dropped,
   * and what it enqueued less the `held` packets still in its queue, which
   * are offered here again and counted as they are taken or dropped.
   */
  carryCounts(j: number, from: Readonly<ShaperClientState>, held: number): void {
    const s = this.queueOf(j).state;
    s.enqueued += from.enqueued - held;
    s.sent += from.sent;
    s.dropped += from.dropped;
    s.bytes += from.bytes;
    s.droppedBytes += from.droppedBytes;
  }

  /** Every queued packet, oldest first per client, and empties the queues (the role is being replaced). */
  drain(): P[] {
    const out: P[] = [];
    for (const q of this.queues) {
      for (let i = q.head; i < q.packets.length; i++) out.push(q.packets[i]!);
      q.packets = [];
      q.sizes = [];
      q.head = 0;
      q.bytes = 0;
      q.due = undefined;
      q.state.queuePackets = 0;
      q.state.queueBytes = 0;
    }
    return out;
  }

  // ---------------------------------------------------------------------------

  private queueOf(j: number): ClientQueue<P> {
    const q = this.queues[j];
    if (!q) throw new RangeArgumentError('client', j, `a client index in [0, ${this.queues.length - 1}]`);
    return q;
  }

  private checkTime(now: Micros): void {
    assertMicros('now', now);
    if (now < this.lastUs) throw new ClockRegressionError(this.lastUs, now);
    this.lastUs = now;
  }

  private applyLayout(layout: SliceLayout): void {
    const { sets, shares } = layout;
    if (sets.length !== shares.length) throw new RangeArgumentError('shares', shares.length, `one share per set (${sets.length})`);
    let total = 0;
    shares.forEach((a, i) => {
      if (!(Number.isFinite(a) && a >= 0)) throw new RangeArgumentError(`shares[${i}]`, a, 'a share in [0, 1]');
      total += a;
    });
    if (total > 1 + 1e-9) throw new RangeArgumentError('shares', total, 'shares summing to at most 1');
    const T = this.periodUs;
    for (const q of this.queues) {
      q.on = [];
      q.onPerFrame = 0;
    }
    let cum = 0;
    let start = 0;
    sets.forEach((set, i) => {
      cum += shares[i]!;
      const end = Math.min(T, Math.round(Math.min(1, cum) * T));
      set.forEach((j, k) => {
        const q = this.queues[j];
        if (!q) throw new RangeArgumentError(`sets[${i}][${k}]`, j, `a client index in [0, ${this.queues.length - 1}]`);
        if (end <= start) return;
        const on = q.on;
        // Consecutive slices of the same client are one interval.
        if (on.length > 0 && on[on.length - 1] === start) on[on.length - 1] = end;
        else on.push(start, end);
      });
      start = end;
    });
    for (const q of this.queues) {
      for (let i = 0; i < q.on.length; i += 2) q.onPerFrame += q.on[i + 1]! - q.on[i]!;
      q.share = q.onPerFrame / T;
      q.state.share = q.share;
    }
  }

  /** Where `t` falls in its frame (µs from the frame's start). */
  private offset(t: Micros): number {
    const d = (t - this.origin) % this.periodUs;
    return d < 0 ? d + this.periodUs : d;
  }

  /** On-time of client q from the frame origin to `t` (µs). */
  private onTime(q: ClientQueue<P>, t: Micros): number {
    const frames = Math.floor((t - this.origin) / this.periodUs);
    const off = t - this.origin - frames * this.periodUs;
    let sum = frames * q.onPerFrame;
    for (let i = 0; i < q.on.length; i += 2) {
      const s = q.on[i]!;
      if (off <= s) break;
      sum += Math.min(off, q.on[i + 1]!) - s;
    }
    return sum;
  }

  /** The earliest time at which q's on-time since the origin reaches `target` µs (q has some on-time per frame). */
  private atOnTime(q: ClientQueue<P>, target: number): number {
    const f = Math.floor(target / q.onPerFrame);
    let rem = target - f * q.onPerFrame;
    const base = this.origin + f * this.periodUs;
    for (let i = 0; i < q.on.length; i += 2) {
      const len = q.on[i + 1]! - q.on[i]!;
      if (rem <= len) return base + q.on[i]! + rem;
      rem -= len;
    }
    return base + this.periodUs + q.on[0]!;
  }

  /** The earliest time >= t at which q is on. */
  private nextOn(q: ClientQueue<P>, t: Micros): Micros {
    const off = this.offset(t);
    const base = t - off;
    for (let i = 0; i < q.on.length; i += 2) {
      if (off < q.on[i + 1]!) return off >= q.on[i]! ? t : base + q.on[i]!;
    }
    return base + this.periodUs + q.on[0]!;
  }

  /** Brings q's credit up to `now`: v_j for its on-time since, capped at the bucket's depth. */
  private refill(q: ClientQueue<P>, now: Micros): void {
    if (now <= q.creditAt) return;
    if (q.rateMbps > 0 && q.credit < this.burst && q.onPerFrame > 0) {
      const earned = ((this.onTime(q, now) - this.onTime(q, q.creditAt)) * q.rateMbps) / 8;
      q.credit = Math.min(this.burst, q.credit + earned);
    }
    q.creditAt = now;
  }

  /** When q's head packet leaves, seen from `now` (credit up to date): undefined when empty or never on. */
  private departure(q: ClientQueue<P>, now: Micros): Micros | undefined {
    if (q.head >= q.packets.length || q.onPerFrame === 0) return undefined;
    if (q.rateMbps === 0) return this.nextOn(q, now);
    const need = Math.min(q.sizes[q.head]!, this.burst);
    // Float slack of the credit arithmetic: a millionth of a byte is no byte.
    const lack = need - q.credit - 1e-6;
    if (lack <= 0) return this.nextOn(q, now);
    const onUs = (lack * 8) / q.rateMbps;
    return this.nextOn(q, Math.ceil(this.atOnTime(q, this.onTime(q, now) + onUs)));
  }

  private depart(q: ClientQueue<P>, at: Micros, emit: (packet: P, now: Micros) => void): void {
    this.refill(q, at);
    const packet = q.packets[q.head]!;
    const bytes = q.sizes[q.head]!;
    q.packets[q.head] = undefined;
    q.head++;
    if (q.head === q.packets.length) {
      q.packets.length = 0;
      q.sizes.length = 0;
      q.head = 0;
    } else if (q.head >= 1024 && q.head * 2 >= q.packets.length) {
      // Compacted once the served front is the larger half: amortised O(1) per packet.
      q.packets.splice(0, q.head);
      q.sizes.splice(0, q.head);
      q.head = 0;
    }
    if (q.rateMbps > 0) q.credit -= bytes;
    q.bytes -= bytes;
    const s = q.state;
    s.sent++;
    s.bytes += bytes;
    s.queuePackets--;
    s.queueBytes = q.bytes;
    q.adapter?.observe(at, q.bytes);
    q.due = this.departure(q, at);
    emit(packet, at);
  }

  private runAdapter(q: ClientQueue<P>, at: Micros): void {
    this.refill(q, at);
    const decisions = q.adapter!.advance(at);
    const last = decisions[decisions.length - 1];
    if (last) {
      q.rateMbps = last.rateMbps;
      q.state.rateMbps = last.rateMbps;
      q.state.lastDecision = last;
    }
    q.due = this.departure(q, at);
  }
}
