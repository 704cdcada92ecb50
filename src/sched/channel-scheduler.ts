import { ClockRegressionError, RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import { Timers } from '../core/timers.js';
import type { NodeAddr } from '../wire/mesh.js';
import { ClassedQueue, checkClasses, NO_QOS } from './classes.js';
import type { ChannelSchedulerParams, DropReason, QueuedPacket, SchedAction } from './types.js';

/**
 * Named counters for the control API. `enqueued` counts every packet offered
 * (refusals included, they are in `drops`) and `handedOut` the packets the MAC
 * kept (an aborted packet given back with `requeueFront` is taken off), so at
 * any time
 *   enqueued = handedOut + sum(drops) + removed + packets still queued.
 */
export interface ChannelSchedulerCounters {
  enqueued: number;
  handedOut: number;
  /** Tune actions issued, each costing the overhead (the first tune and the retune after sensing included). */
  switches: number;
  /** New dwells on the channel R2 is already on, without overhead. */
  stays: number;
  /**
   * Dwells ended before their time by the work-conserving rule (its queue
   * empty, another waiting); each one's tune is also in `switches`.
   */
  earlyLeaves: number;
  /** Packets taken out by `removeNextHop` for rerouting. */
  removed: number;
  drops: Record<DropReason, number>;
  /** Time R2 spent tuned to each channel and usable (from the end of the tune until it left), in us. */
  dwellUs: Record<number, number>;
}

type Phase =
  /** No channel yet: the first packet makes R2 tune. */
  | 'untuned'
  /** A tune is under way until `readyUs`. */
  | 'tuning'
  /** Serving the current channel until `dwellEnd`. */
  | 'dwell'
  /** Tuned, no dwell running: every queue was empty at the last decision. */
  | 'idle';

/** Deadlines, keyed by what they are for. `kick`: an input made something due now. */
type SchedTimer = 'ready' | 'dwell-end' | 'kick';

/** `enqueue`'s answer for a packet taken: one frozen object, not one per packet. */
const ENQUEUED: { readonly ok: true } = Object.freeze({ ok: true });

/** Every reason at zero; typed as a Record so a reason added to DropReason must be added here. */
export const noDrops = (): Record<DropReason, number> => ({
  'queue-full': 0,
  'no-route': 0,
  'ttl-expired': 0,
  'retry-limit': 0,
  'no-channel': 0,
  malformed: 0,
  'route-broken': 0,
});

/** A packet the MAC holds: the 'transmit' action that handed it out, and where it goes back to when given back. */
interface OutEntry<T> {
  readonly kind: 'transmit';
  readonly channel: number;
  readonly packet: QueuedPacket<T>;
  /** Set only when the MAC gives the packet back (rare): the action as handed out has no such field. */
  back?: number;
}

/**
 * The channel scheduler of the switchable transmit radio R2 (Urban-X).
 *
 * Each router keeps one bounded FIFO per channel; a packet for next hop j waits
 * in the queue of j's receive channel (j's R1). R2 tunes to a channel (deaf and
 * silent for `overheadUs`), then serves that channel's queue for one dwell, one
 * packet at a time: the MAC gets the next packet only when it reports the last
 * one done (`txDone`). A packet in service when the dwell ends is never
 * preempted; the end-of-dwell decision waits for its `txDone`.
 *
 * MAC window (`params.macWindow`, default 1): the MAC may hold up to that
 * many packets at once, all of the channel R2 serves, so that a MAC in
 * another process (the medium's) has the next frame at hand when one ends.
 * Packets are only handed out during a dwell, all for its channel; a tune
 * is only issued when the MAC holds none. When a dwell ends with packets in
 * flight, R2 stays (a new dwell, more packets) if its channel is the only
 * one with packets; otherwise the decision waits until the MAC has given
 * every one back (done, or aborted and requeued). Packets the MAC gives back
 * with `requeueFront` while others of the window are still out wait until
 * the last of them is back, then all return to the heads of their queues in
 * the order they were handed out; nothing is handed out meanwhile. With a
 * window of 1 all of this is the one-at-a-time rule above.
 *
 * QoS (`params.classes`): each channel queue holds one queue per class
 * (ClassedQueue, classes.ts), which decides which packet of the channel goes
 * next and which one a full queue drops (a push-out is a 'queue-full' drop
 * out of the next tick). Without classes a channel queue is a plain FIFO.
 *
 * End of a dwell: R2 takes the first non-empty queue after the current one in
 * round-robin order (channel list order, wrapping). If that is the current one
 * (the only one with packets) R2 stays: a new dwell, no overhead. If every queue
 * is empty R2 stays tuned and idle; the next packet then goes at once if it is
 * for the current channel (a new dwell, counted as a stay), or triggers a switch
 * if it is for another. While a dwell runs R2 does not leave early: an empty
 * current queue means waiting on the channel for packets until the dwell ends.
 *
 * Work-conserving dwells (`params.workConserving`, default false): a dwell
 * ends at once, before its time, when its channel's queue is empty, the MAC
 * holds none of R2's packets (with a window, the same wait for every packet
 * to be back as at the end of a dwell) and another queue has packets; R2 then
 * takes the next non-empty queue in round-robin order, with the overhead, as
 * at the end of a dwell (counted in `earlyLeaves`). That is the moment the
 * last packet is done, or a packet for another channel arrives while R2
 * waits on its empty one, or the option is turned on live. With every queue
 * empty R2 waits on its channel as above, and a dwell whose queue never
 * empties still lasts the interval (or the adaptive length). It is for a
 * relay that alternates between a data and an ACK direction: a short burst
 * of ACKs would otherwise keep R2 idle on their channel for the rest of the
 * dwell while data waits for the other.
 *
 * Adaptive dwell (`params.adaptive`): when a dwell on channel c starts (the tune
 * completes, or R2 stays), it lasts
 *   switchingIntervalUs * clamp(bytes_c / mean bytes over the non-empty queues, 0.5, 2)
 * rounded to the microsecond, so a queue holding more than its share of the
 * bytes waiting is served longer, up to twice the interval, and a light one
 * down to half of it.
 *
 * Sensing takes R2 away: `pause` stops handing out packets (one already handed
 * stays with the MAC; the driver may abort it and `requeueFront` it), `resume`
 * retunes, with the overhead, to the current channel if its queue has packets,
 * else to the next non-empty one in round-robin order, and starts a fresh dwell.
 *
 * Sans-IO: inputs carry the time, actions come out, and `nextDeadline()` says
 * when `tick` next has something to do. Inputs that return no actions
 * (`enqueue`, `requeueFront`) set a deadline at the current time when they
 * make something due (a work-conserving leave included), so a driver that
 * ticks at `nextDeadline()` after every input misses nothing.
 */
export class ChannelScheduler<T = unknown> {
  private params: ChannelSchedulerParams;
  private readonly q = new Map<number, ClassedQueue<T>>();
  /** The queues of `q` and their channels as arrays, for the scans that run on every input. */
  private qList: ClassedQueue<T>[] = [];
  private qChannels: number[] = [];
  private readonly timers = new Timers<SchedTimer>();
  private phase: Phase = 'untuned';
  private channel: number | undefined;
  private readyUs: Micros = 0;
  private dwellEnd: Micros | undefined;
  private pausedNow = false;
  /**
   * The packets the MAC holds, in the order they were handed out (at most
   * `macWindow`); `back`: given back, to this channel's queue. Each entry is
   * the 'transmit' action that handed its packet out (one object a packet).
   */
  private readonly out: Array<OutEntry<T>> = [];
  /** Entries of `out` given back (they return to their queues when every entry is back or done). */
  private returned = 0;
  private window: number;
  /** Drops made by inputs that cannot return actions, handed out by the next call that can. */
  private pendingDrops: SchedAction<T>[] = [];
  private inputCount = 0;
  /** The latest time an input carried. */
  private nowUs: Micros;
  /** Since when R2 has been usable on `channel` and not yet counted in `dwellUs`. */
  private usableSinceUs: Micros | undefined;
  readonly counters: ChannelSchedulerCounters;

  constructor(params: ChannelSchedulerParams, startUs: Micros) {
    this.params = ChannelScheduler.check(params);
    this.window = this.params.macWindow ?? 1;
    this.nowUs = startUs;
    this.counters = { enqueued: 0, handedOut: 0, switches: 0, stays: 0, earlyLeaves: 0, removed: 0, drops: noDrops(), dwellUs: {} };
    for (const c of this.params.channels) {
      this.q.set(c, new ClassedQueue<T>(this.params.queuePackets, this.params.classes ?? NO_QOS, startUs, this.tally));
      this.counters.dwellUs[c] = 0;
    }
    this.relist();
  }

  private relist(): void {
    this.qChannels = [...this.q.keys()];
    this.qList = [...this.q.values()];
    this.servedFor = -1;
  }

  static check(p: ChannelSchedulerParams): ChannelSchedulerParams {
    const distinct = new Set(p.channels);
    if (distinct.size !== p.channels.length || p.channels.some((c) => !Number.isSafeInteger(c) || c < 0)) {
      throw new RangeArgumentError('scheduler.channels', p.channels, 'distinct non-negative integer channel numbers');
    }
    if (!Number.isSafeInteger(p.queuePackets) || p.queuePackets < 1) {
      throw new RangeArgumentError('scheduler.queuePackets', p.queuePackets, 'an integer >= 1');
    }
    if (!Number.isSafeInteger(p.switchingIntervalUs) || p.switchingIntervalUs < 1) {
      throw new RangeArgumentError('scheduler.switchingIntervalUs', p.switchingIntervalUs, 'an integer number of us >= 1');
    }
    if (!Number.isSafeInteger(p.overheadUs) || p.overheadUs < 0) {
      throw new RangeArgumentError('scheduler.overheadUs', p.overheadUs, 'an integer number of us >= 0');
    }
    if (p.macWindow !== undefined && (!Number.isSafeInteger(p.macWindow) || p.macWindow < 1)) {
      throw new RangeArgumentError('scheduler.macWindow', p.macWindow, 'an integer >= 1');
    }
    return { ...p, channels: [...p.channels], classes: checkClasses(p.classes ?? NO_QOS) };
  }

  /** Where R2 is, or is going (while paused: the data channel it left for sensing). */
  get tunedChannel(): number | undefined {
    return this.channel;
  }

  /** Between `pause` and `resume`: R2 is away sensing and nothing is handed out. */
  get paused(): boolean {
    return this.pausedNow;
  }

  /** When the running dwell ends (it may be past while the MAC finishes a packet); undefined when none runs. */
  get dwellEndUs(): Micros | undefined {
    return this.dwellEnd;
  }

  /** Whether a packet is with the MAC (handed out, no txDone or requeueFront yet). */
  get handedOut(): boolean {
    return this.out.length > this.returned;
  }

  /** Packets with the MAC (handed out, no txDone or requeueFront yet): at most `macWindow`. */
  get inFlight(): number {
    return this.out.length - this.returned;
  }

  /** Whether a channel other than the one R2 serves has packets waiting. */
  othersWaiting(): boolean {
    // The router asks after every input; between two calls from outside, the
    // answer can only change with an input (every public call that may change
    // a queue counts one, see `inputs`) or the channel served.
    if (this.othersWaitingAt === this.inputCount && this.othersWaitingFor === this.channel) return this.othersWaitingWas;
    const any = this.anyOtherWaiting();
    this.othersWaitingAt = this.inputCount;
    this.othersWaitingFor = this.channel;
    this.othersWaitingWas = any;
    return any;
  }

  private anyOtherWaiting(): boolean {
    // Every queue's packets, less those of the channel served.
    const c = this.channel;
    if (this.servedFor !== c) {
      this.servedQ = c === undefined ? undefined : this.q.get(c);
      this.servedFor = c;
    }
    return this.tally.packets - (this.servedQ?.length ?? 0) > 0;
  }

  /** Packets in all the channel queues (each queue keeps it as its count changes). */
  private readonly tally = { packets: 0 };
  /** The queue of channel `servedFor` (-1: to be looked up again; the queues were made again). */
  private servedQ: ClassedQueue<T> | undefined;
  private servedFor: number | undefined = -1;

  private othersWaitingAt = -1;
  private othersWaitingFor: number | undefined;
  private othersWaitingWas = false;

  /**
   * Inputs taken so far (every call that may change a queue counts one): the
   * queue lengths can only differ from an earlier read when this moved.
   */
  get inputs(): number {
    return this.inputCount;
  }

  /** The channels with a queue, in the order `readQueueLengths` reads them; a new array whenever the channels change. */
  get queueChannels(): readonly number[] {
    return this.qChannels;
  }

  /** Writes each queue's length into `into`, in the order of `queueChannels` (nothing is allocated: it runs every 10 ms). */
  readQueueLengths(into: Int32Array): void {
    const list = this.qList;
    for (let i = 0; i < list.length; i++) into[i] = list[i]!.length;
  }

  queues(): Array<{ channel: number; packets: number; bytes: number; classes: Array<{ queue: number; packets: number; bytes: number }> }> {
    return this.params.channels.map((channel) => {
      const q = this.q.get(channel)!;
      return { channel, packets: q.length, bytes: q.bytes, classes: q.classes() };
    });
  }

  nextDeadline(): Micros | undefined {
    return this.timers.next();
  }

  /** Queues a packet on `channel` (the next hop's R1 channel). Refused packets are counted and returned as values. */
  enqueue(channel: number, packet: QueuedPacket<T>, now: Micros): { ok: true } | { ok: false; reason: 'queue-full' | 'no-channel' } {
    this.advance(now);
    this.counters.enqueued++;
    const q = this.q.get(channel);
    if (!q) {
      this.counters.drops['no-channel']++;
      return { ok: false, reason: 'no-channel' };
    }
    const r = q.admit(packet);
    if (!r.ok) {
      this.counters.drops['queue-full']++;
      return { ok: false, reason: 'queue-full' };
    }
    if (r.pushedOut) {
      // A packet of a lower class made room: its drop comes out of the next tick.
      this.drop(r.pushedOut, 'queue-full');
      this.timers.set('kick', now);
    }
    if (this.servesAtOnce(channel)) this.timers.set('kick', now);
    return ENQUEUED;
  }

  /** Actions due now or earlier (tune, transmit, drop); [] when nothing is due. */
  tick(now: Micros): SchedAction<T>[] {
    this.advance(now);
    if (!this.timers.takeDue(now)) return [];
    return this.withDrops(this.step(now));
  }

  /**
   * R2's MAC finished `packet` (acked, given up, whatever; without it: the
   * oldest it holds): another one may go.
   */
  txDone(now: Micros, packet?: QueuedPacket<T>): SchedAction<T>[] {
    this.advance(now);
    const i = this.outIndex(packet);
    if (i < 0) return [];
    // Removed in place: a splice makes an array of what it removes, and a
    // shorter length gives the list's room back (the next hand-out makes it again); a pop keeps it.
    const out = this.out;
    for (let j = i + 1; j < out.length; j++) out[j - 1] = out[j]!;
    out.pop();
    this.settleReturned();
    return this.withDrops(this.step(now));
  }

  /**
   * The MAC aborted a packet it was handed: it goes back to the head of
   * `channel`'s queue, even when that queue is full (its newest packet is then
   * dropped 'queue-full'), and no longer counts as handed out. Without a queue
   * on `channel` the packet is dropped 'no-channel'. Drops come out of the next
   * `tick`. While other packets of the window are still with the MAC, it waits
   * for them (see the class comment), so that packets given back one by one
   * keep the order they were handed out in.
   */
  requeueFront(channel: number, packet: QueuedPacket<T>): void {
    this.inputCount++;
    this.counters.handedOut--;
    const i = this.outIndex(packet);
    if (i < 0) this.putBack(channel, packet, undefined);
    else {
      this.out[i]!.back = channel;
      this.returned++;
      this.settleReturned();
    }
    if (!this.pausedNow || this.pendingDrops.length > 0) this.timers.set('kick', this.nowUs);
  }

  /** Where `packet` (or, without it, the oldest packet the MAC holds) is in `out`; -1 when the MAC does not hold it. */
  private outIndex(packet: QueuedPacket<T> | undefined): number {
    for (let i = 0; i < this.out.length; i++) {
      const e = this.out[i]!;
      if (e.back === undefined && (packet === undefined || e.packet === packet)) return i;
    }
    return -1;
  }

  /** Once every packet of the window is back or done, those given back return to their queues' heads, in hand-out order. */
  private settleReturned(): void {
    if (this.returned === 0 || this.returned < this.out.length) return;
    for (let i = this.out.length - 1; i >= 0; i--) {
      const e = this.out[i]!;
      this.putBack(e.back!, e.packet, e.channel);
    }
    this.out.length = 0;
    this.returned = 0;
  }

  private putBack(channel: number, packet: QueuedPacket<T>, from: number | undefined): void {
    // Its bytes go back to the bucket it was charged to, whichever queue it joins now.
    if (from !== undefined && from !== channel) this.q.get(from)?.refund(packet);
    const q = this.q.get(channel);
    if (!q) {
      this.drop(packet, 'no-channel');
    } else {
      q.unshift(packet);
      if (q.length > q.capacity) this.drop(q.pop()!, 'queue-full');
    }
  }

  /**
   * Next hop j moved its R1 to `channel`: its packets in other queues move to
   * the tail of that queue, in the order they were queued; those that do not
   * fit (or all of them, when `channel` has no queue) are dropped.
   */
  rechannel(nextHop: NodeAddr, channel: number, now: Micros): SchedAction<T>[] {
    this.advance(now);
    const moving = this.take((c, p) => c !== channel && p.nextHop === nextHop);
    const q = this.q.get(channel);
    for (const p of moving) {
      if (!q) {
        this.drop(p, 'no-channel');
        continue;
      }
      const r = q.admit(p);
      if (!r.ok) this.drop(p, 'queue-full');
      else if (r.pushedOut) this.drop(r.pushedOut, 'queue-full');
    }
    return [...this.flushDrops(), ...this.step(now)];
  }

  /** Takes out every packet queued for nextHop (neighbour lost), in the order they were queued, for rerouting. */
  removeNextHop(nextHop: NodeAddr, now: Micros): QueuedPacket<T>[] {
    this.advance(now);
    const out = this.take((_c, p) => p.nextHop === nextHop);
    this.counters.removed += out.length;
    return out;
  }

  /** Takes out every queued packet (the router is going down), oldest first. */
  removeAll(now: Micros): QueuedPacket<T>[] {
    this.advance(now);
    const out = this.take(() => true);
    this.counters.removed += out.length;
    return out;
  }

  /** Sensing starts: nothing is handed out until resume. */
  pause(now: Micros): SchedAction<T>[] {
    this.advance(now);
    if (this.pausedNow) return this.flushDrops();
    this.pausedNow = true;
    this.usableSinceUs = undefined;
    this.dwellEnd = undefined;
    this.timers.clear('ready');
    this.timers.clear('dwell-end');
    this.timers.clear('kick');
    return this.flushDrops();
  }

  /**
   * Sensing over: R2 retunes, with the overhead, even to the channel it left.
   * With every queue empty there is nothing to serve: R2 stays untuned and the
   * next packet makes it tune to that packet's channel (one overhead, not two).
   */
  resume(now: Micros): SchedAction<T>[] {
    this.advance(now);
    if (!this.pausedNow) return [];
    this.pausedNow = false;
    const target = this.channel === undefined ? this.oldestHead() : this.pick(this.channel, true);
    if (target === undefined) {
      this.channel = undefined;
      this.phase = 'untuned';
      return this.flushDrops();
    }
    return [...this.flushDrops(), this.tune(target, now)];
  }

  /**
   * New parameters, live. Queues of removed channels are emptied ('no-channel'
   * drops); a smaller capacity drops from the tails ('queue-full'). A new
   * interval or adaptive setting applies from the next dwell, a new overhead
   * from the next tune; turning `workConserving` on ends a dwell at once if
   * its rule says so. If R2's channel lost its queue, its dwell ends now
   * (after the packet in service, if any).
   */
  setParams(p: ChannelSchedulerParams, now: Micros): SchedAction<T>[] {
    this.advance(now);
    const next = ChannelScheduler.check(p);
    const keep = new Set(next.channels);
    for (const [c, q] of this.q) {
      if (keep.has(c)) continue;
      for (const pkt of q.drain()) this.drop(pkt, 'no-channel');
      this.q.delete(c);
    }
    for (const c of next.channels) {
      let q = this.q.get(c);
      if (!q) {
        q = new ClassedQueue<T>(next.queuePackets, next.classes ?? NO_QOS, now, this.tally);
        this.q.set(c, q);
      } else q.setClasses(next.classes ?? NO_QOS, now);
      q.capacity = next.queuePackets;
      const trimmed: QueuedPacket<T>[] = [];
      while (q.length > q.capacity) trimmed.push(q.pop()!);
      for (const pkt of trimmed.reverse()) this.drop(pkt, 'queue-full');
      this.counters.dwellUs[c] ??= 0;
    }
    this.params = next;
    this.window = next.macWindow ?? 1;
    this.relist();
    if (this.channel !== undefined && !this.q.has(this.channel) && this.phase === 'dwell' && !this.pausedNow) {
      this.dwellEnd = now;
      this.timers.clear('dwell-end');
    }
    return [...this.flushDrops(), ...this.step(now)];
  }

  // --- the state machine -------------------------------------------------------------------

  /** Everything R2 can do at `now` given its state; the one place decisions are made. */
  private step(now: Micros): SchedAction<T>[] {
    this.timers.clear('kick');
    if (this.pausedNow) return [];
    if (this.out.length > 0) return this.more(now);
    if (this.phase === 'untuned') {
      const c = this.oldestHead();
      return c === undefined ? [] : [this.tune(c, now)];
    }
    if (this.phase === 'tuning') {
      if (now < this.readyUs) return [];
      this.tuneCompleted();
    }
    if (this.phase === 'dwell') {
      if (now < this.dwellEnd!) {
        if (!this.leavesEarly()) return this.handHead(now);
        this.counters.earlyLeaves++;
      }
      return this.decide(this.pick(this.channel, false), now);
    }
    // Idle: a packet for the current channel goes first.
    return this.decide(this.pick(this.channel, true), now);
  }

  /** With packets in flight: more of the dwell's channel, if the window has room and nothing waits to go back. */
  private more(now: Micros): SchedAction<T>[] {
    if (this.returned > 0 || this.out.length >= this.window || this.phase !== 'dwell') return [];
    if (now < this.dwellEnd!) return this.handHead(now);
    // The dwell is over: staying needs no drain; a switch (or going idle) waits until the MAC holds nothing.
    if (this.pick(this.channel, false) !== this.channel) return [];
    this.counters.stays++;
    this.startDwell(now);
    return this.handHead(now);
  }

  /** Stay (new dwell, no overhead), switch, or idle. */
  private decide(next: number | undefined, now: Micros): SchedAction<T>[] {
    if (next === undefined) {
      this.goIdle();
      return [];
    }
    if (next !== this.channel) return [this.tune(next, now)];
    this.counters.stays++;
    this.startDwell(now);
    return this.handHead(now);
  }

  private tune(channel: number, now: Micros): SchedAction<T> {
    this.usableSinceUs = undefined;
    this.channel = channel;
    this.phase = 'tuning';
    this.readyUs = now + this.params.overheadUs;
    this.dwellEnd = undefined;
    this.timers.clear('dwell-end');
    this.timers.set('ready', this.readyUs);
    this.counters.switches++;
    return { kind: 'tune', channel, readyUs: this.readyUs };
  }

  private tuneCompleted(): void {
    this.timers.clear('ready');
    this.usableSinceUs = this.readyUs;
    this.accrue(this.nowUs);
    if ((this.q.get(this.channel!)?.length ?? 0) > 0) this.startDwell(this.readyUs);
    else this.phase = 'idle';
  }

  private startDwell(at: Micros): void {
    this.phase = 'dwell';
    this.dwellEnd = at + this.dwellLengthUs(this.channel!);
    this.timers.set('dwell-end', this.dwellEnd);
  }

  private goIdle(): void {
    this.dwellEnd = undefined;
    this.timers.clear('dwell-end');
    if (this.channel !== undefined && this.q.has(this.channel)) {
      this.phase = 'idle';
    } else {
      // R2's channel has no queue any more: nothing to stay for.
      this.usableSinceUs = undefined;
      this.channel = undefined;
      this.phase = 'untuned';
    }
  }

  /**
   * The work-conserving rule (see the file comment): a running dwell with an
   * empty queue and nothing at the MAC ends now when another queue waits.
   */
  private leavesEarly(): boolean {
    if (this.params.workConserving !== true || this.phase !== 'dwell' || this.pausedNow || this.out.length > 0) return false;
    return (this.q.get(this.channel!)?.length ?? 0) === 0 && this.anyOtherWaiting();
  }

  /** Hands the MAC packets of the current channel until its window is full or the queue empty. */
  private handHead(now: Micros): SchedAction<T>[] {
    const channel = this.channel!;
    const q = this.q.get(channel);
    // The action is also the packet's entry in `out`; the list is made with its first action (most hand one packet).
    let actions: SchedAction<T>[] | undefined;
    while (this.out.length < this.window) {
      const packet = q?.shift(now);
      if (!packet) break;
      const a: OutEntry<T> = { kind: 'transmit', channel, packet };
      this.out.push(a);
      this.counters.handedOut++;
      if (actions === undefined) actions = [a];
      else actions.push(a);
    }
    return actions ?? [];
  }

  /** See the file comment: the interval, scaled by the queue's share of the bytes when adaptive. */
  private dwellLengthUs(channel: number): Micros {
    const interval = this.params.switchingIntervalUs;
    if (!this.params.adaptive) return interval;
    let total = 0;
    let nonEmpty = 0;
    for (const q of this.q.values()) {
      if (q.length === 0) continue;
      total += q.bytes;
      nonEmpty++;
    }
    const mean = nonEmpty === 0 ? 0 : total / nonEmpty;
    if (!(mean > 0)) return interval;
    const share = (this.q.get(channel)?.bytes ?? 0) / mean;
    return Math.round(interval * Math.min(2, Math.max(0.5, share)));
  }

  /**
   * The first non-empty queue in round-robin order from `current`: starting
   * with it when `currentFirst`, else after it (so it comes last). A channel
   * that is not in the list any more starts the search at the list's head.
   */
  private pick(current: number | undefined, currentFirst: boolean): number | undefined {
    const ch = this.params.channels;
    const i = current === undefined ? -1 : ch.indexOf(current);
    const start = i < 0 ? 0 : currentFirst ? i : i + 1;
    for (let k = 0; k < ch.length; k++) {
      const c = ch[(start + k) % ch.length]!;
      if ((this.q.get(c)?.length ?? 0) > 0) return c;
    }
    return undefined;
  }

  /** An untuned R2 goes where the oldest waiting packet is (ties: channel list order). */
  private oldestHead(): number | undefined {
    let best: number | undefined;
    let bestUs = Infinity;
    for (const c of this.params.channels) {
      const head = this.q.get(c)?.peek();
      if (head && head.enqueuedUs < bestUs) {
        best = c;
        bestUs = head.enqueuedUs;
      }
    }
    return best;
  }

  /** Whether a packet just queued on `channel` can be acted on at once (a tune, a transmit, a decision). */
  private servesAtOnce(channel: number): boolean {
    if (this.pausedNow) return false;
    if (this.out.length > 0) return this.phase === 'dwell' && channel === this.channel && this.returned === 0 && this.out.length < this.window;
    return this.phase === 'untuned' || this.phase === 'idle' || (this.phase === 'dwell' && channel === this.channel) || this.leavesEarly();
  }

  /** Takes out the packets `match` accepts from every queue, oldest first (stable across queues). */
  private take(match: (channel: number, p: QueuedPacket<T>) => boolean): QueuedPacket<T>[] {
    const out: QueuedPacket<T>[] = [];
    let queuesHit = 0;
    for (const c of this.params.channels) {
      const got = this.q.get(c)!.takeWhere((p) => match(c, p));
      if (got.length > 0) queuesHit++;
      out.push(...got);
    }
    if (queuesHit > 1) out.sort((a, b) => a.enqueuedUs - b.enqueuedUs);
    return out;
  }

  private drop(packet: QueuedPacket<T>, reason: DropReason): void {
    this.counters.drops[reason]++;
    this.pendingDrops.push({ kind: 'drop', packet, reason });
  }

  /** The pending drops, then `actions` (the same array when there are no drops: this runs on every packet). */
  private withDrops(actions: SchedAction<T>[]): SchedAction<T>[] {
    if (this.pendingDrops.length === 0) return actions;
    const out = this.flushDrops();
    for (const a of actions) out.push(a);
    return out;
  }

  private flushDrops(): SchedAction<T>[] {
    const out = this.pendingDrops;
    this.pendingDrops = [];
    return out;
  }

  private advance(now: Micros): void {
    if (now < this.nowUs) throw new ClockRegressionError(this.nowUs, now);
    this.inputCount++;
    this.accrue(now);
    this.nowUs = now;
  }

  private accrue(now: Micros): void {
    if (this.usableSinceUs === undefined || this.channel === undefined) return;
    if (now > this.usableSinceUs) {
      this.counters.dwellUs[this.channel] = (this.counters.dwellUs[this.channel] ?? 0) + now - this.usableSinceUs;
      this.usableSinceUs = now;
    }
  }
}
