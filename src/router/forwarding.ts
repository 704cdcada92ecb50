import type { SendOutcome } from '../../radio/medium/types.js';
import type { NodeConfig } from '../config/types.js';
import type { Rng } from '../core/rng.js';
import type { Micros } from '../core/time.js';
import type { Forwarder } from '../openflow/forwarder.js';
import type { AodvAction, MultipathAodv } from '../routing/aodv.js';
import type { ChannelScheduler } from '../sched/channel-scheduler.js';
import { BEST_EFFORT_QUEUE } from '../sched/classes.js';
import type { DropReason, QueuedPacket, SchedAction } from '../sched/types.js';
import { dataHeaderBytes, encodeData, parseData } from '../wire/codec.js';
import type { DataHeader, DataProto, NodeAddr } from '../wire/mesh.js';

/**
 * The router's data plane: what happens to a data packet between an
 * application (or the radio) and R2's channel queues. A packet is parsed
 * once, where it arrives, and carries its header from then on: the flow
 * table, AODV, the queues and every drop report read it, never the bytes.
 */

/** A data packet on its way out: its header, and the bytes that go on the air. */
export interface DataPacket {
  header: DataHeader;
  bytes: Uint8Array;
}

/** A packet entering the mesh at this router, as the gateway holds it: the packet, its payload (a view into it) and its line of the flow table. */
export interface EnteringPacket {
  packet: DataPacket;
  payload: Uint8Array;
  entry: FlowEntry;
}

export type RouterDrop = DropReason | 'buffer-full' | 'discovery-failed' | 'router-down' | 'impaired' | 'flow-table';

/** One line of the router's flow table: traffic seen per (protocol, source, destination, flow id). */
export interface FlowEntry {
  proto: DataProto;
  src: NodeAddr;
  dst: NodeAddr;
  flow: number;
  role: 'source' | 'relay' | 'sink';
  packets: number;
  bytes: number;
  nextHop: NodeAddr | undefined;
  lastUs: Micros;
  /** The flow label of its last packet (0: none); a VNF answering for the flow sends with it. */
  label: number;
}

/** Data traffic on one neighbour link, and per QoS queue (the OpenFlow agent's port and queue counters). */
export interface LinkCounters {
  rxPackets: number;
  rxBytes: number;
  txPackets: number;
  txBytes: number;
  txDropped: number;
  /** Per queue id: packets and bytes sent, and packets lost (queue overrun or the MAC giving up). */
  queues: Map<number, { txPackets: number; txBytes: number; txErrors: number }>;
}

/** Loss and reordering added to the data packets a router receives from one neighbour (an experiment's knob, not a radio effect). */
export interface LinkImpairment {
  from: NodeAddr;
  lossProbability: number;
  reorderProbability: number;
  reorderDelayUs: Micros;
}

/** The data plane's share of the router's counters. */
export interface ForwardingCounters {
  byFlowTable: number;
  vnfTaken: number;
  originated: number;
  delivered: number;
  forwarded: number;
  malformedData: number;
  rerouted: number;
  followedMove: number;
}

/** What the data plane needs of the router around it. */
export interface ForwardingParts {
  readonly addr: NodeAddr;
  /** The configuration in force (routing.netDiameter and bufferPackets). */
  config(): NodeConfig;
  now(): Micros;
  at(at: Micros, fn: (now: Micros) => void): void;
  /** Draws of the link impairments. */
  rng: Rng;
  aodv: MultipathAodv;
  sched: ChannelScheduler<DataPacket>;
  /** Each neighbour's R1 channel, from its HELLOs. */
  neighbourR1: ReadonlyMap<NodeAddr, number>;
  counters: ForwardingCounters;
  drops: Record<RouterDrop, number>;
  /** A data packet addressed to this router arrived. */
  deliver(header: DataHeader, payload: Uint8Array, now: Micros): void;
  /** A data packet was lost here (for per-flow loss accounting). */
  onDrop?: (header: DataHeader, reason: RouterDrop) => void;
  impairments?: readonly LinkImpairment[];
  /** The flow table that decides ahead of AODV, when there is one. */
  forwarder(): Forwarder | undefined;
  /** A VNF takes a TCP packet this router relays (true); a sandboxed one calls `decline` if it lets the packet go on after all. */
  intercept?(header: DataHeader, payload: Uint8Array, now: Micros, decline: () => void): boolean;
  /**
   * The gateway (docs/gateway.md): a packet entering the mesh at this router
   * (from its hosts, its wired link or its VNFs, after the VNFs) is held in a
   * client's virtual queue (true) until `enter` sends it on.
   */
  admit?(packet: DataPacket, payload: Uint8Array, entry: FlowEntry, now: Micros): boolean;
  /**
   * The IP plane, for hosts' packets (proto ip4 and ip6): a relay's TTL or
   * hop limit and the mesh MTU (undefined: the packet goes on), and
   * Destination Unreachable for one the mesh cannot deliver.
   */
  ip?: {
    relay(header: DataHeader, payload: Uint8Array, now: Micros): 'malformed' | 'ttl-expired' | 'handled' | undefined;
    unreachable(header: DataHeader, payload: Uint8Array, now: Micros): void;
  };
  /**
   * Static routes to hosts beyond the mesh (a far host behind a wired
   * link): the host's address and the router it hangs off (its gateway).
   * A packet for such a host is routed through the mesh to the gateway, as
   * a packet for the gateway itself would be; at the gateway it leaves on
   * the wire. Undefined: no such hosts.
   */
  hostRoutes?: ReadonlyMap<NodeAddr, NodeAddr>;
  /** At a gateway: a packet onto the wired link of the host `header.dst`; false if the link's queue refused it. */
  toWire?(header: DataHeader, payload: Uint8Array, bytes: number, now: Micros): boolean;
  runAodv(actions: AodvAction[], now: Micros): void;
  runSched(actions: SchedAction<DataPacket>[], now: Micros): void;
  isDown(): boolean;
}

const isIp = (proto: DataProto): boolean => proto === 'ip4' || proto === 'ip6';

const flowKey = (h: DataHeader): string => `${h.proto} ${h.src} ${h.dst} ${h.flow}`;

/** Whether flow-table entry `e` is the one of the packet with header `h`. */
const isEntryOf = (e: FlowEntry, h: DataHeader): boolean => e.flow === h.flow && e.src === h.src && e.dst === h.dst && e.proto === h.proto;

/** A packet that waits for its next hop's R1 channel (see `awaitChannel`). */
interface AwaitingChannel {
  packet: DataPacket;
  prevHop: NodeAddr | undefined;
  queue: number;
  entry: FlowEntry | undefined;
  sinceUs: Micros;
}

/** Originates, receives, forwards and reroutes data packets (see the file's comment). */
export class Forwarding {
  /** The flow table's entries `note` took last and the one before (entries are never removed): a TCP flow's data and its ACKs cross a router in turn. */
  private lastEntry: FlowEntry | undefined;
  private prevEntry: FlowEntry | undefined;
  /** Packets this router originated while their route is being discovered. */
  private readonly pending = new Map<NodeAddr, Array<{ packet: DataPacket; entry: FlowEntry | undefined; queue: number }>>();
  /** Packets for a next hop whose R1 channel is not known yet, by next hop, and whether a timer will expire them. */
  private readonly awaiting = new Map<NodeAddr, { held: AwaitingChannel[]; timerSet: boolean }>();
  /** Traffic per flow, as the control API and the monitor show it. */
  private readonly flowTable = new Map<string, FlowEntry>();
  /** Data traffic per neighbour link (the OpenFlow agent's port and queue counters). */
  readonly links = new Map<NodeAddr, LinkCounters>();
  /** Flow label to QoS queue, from `qos.classes`. */
  private labelQueue = new Map<number, number>();
  private impairRng: Rng | undefined;

  constructor(private readonly p: ForwardingParts) {
    this.learnLabels(p.config());
  }

  learnLabels(cfg: NodeConfig): void {
    this.labelQueue = new Map(cfg.qos.classes.map((c) => [c.label, c.queue]));
  }

  /**
   * An application on this router sends `payload` to `dst`; a VNF speaking
   * for another end gives that end's address as `from` (the header's source).
   * `label`: the IPv6 flow label it marks the packets with (its QoS class).
   * `vnf`: a host's packet entering the mesh here, which this router's VNFs
   * see first, as they see the packets it relays (TCP-ACC splits a host's
   * connection on the router it enters by).
   * `room`: the caller gives `payload` up, and the `room` bytes in front of
   * it are the payload's own (`allocBytes`): the header goes there and the
   * payload is not copied. Otherwise the packet is a copy, and the caller
   * may reuse its buffer (a TUN batch).
   */
  originate(
    dst: NodeAddr,
    proto: DataProto,
    flow: number,
    seq: number,
    payload: Uint8Array,
    now: Micros,
    opts: { from?: NodeAddr; label?: number; vnf?: boolean; room?: number } = {},
  ): void {
    const p = this.p;
    p.counters.originated++;
    const from = opts.from ?? p.addr;
    const header: DataHeader = { src: from, dst, ttl: p.config().routing.netDiameter, proto, flow, seq };
    if (opts.label) header.label = opts.label;
    const entry = this.note(header, from === p.addr ? 'source' : 'relay', payload.length, now);
    if (p.isDown()) {
      this.drop('router-down', header);
      return;
    }
    const packet: DataPacket = { header, bytes: encodeData(header, payload, opts.room) };
    // From here on the packet's own bytes: the payload itself when its header went in front of it (in its room), else the copy.
    const hdr = dataHeaderBytes(header);
    const own = (opts.room ?? 0) >= hdr ? payload : packet.bytes.subarray(hdr);
    if (dst === p.addr) {
      p.counters.delivered++;
      p.deliver(header, own, now);
      return;
    }
    if (opts.vnf && p.intercept?.(header, own, now, () => this.admitted(packet, own, p.now(), entry))) return;
    this.admitted(packet, own, now, entry);
  }

  /** A packet entering the mesh at this router, past the VNFs: the gateway's virtual queue, or on at once. */
  private admitted(packet: DataPacket, payload: Uint8Array, now: Micros, entry: FlowEntry): void {
    if (this.p.admit?.(packet, payload, entry, now)) return;
    this.enter(packet, payload, entry, now);
  }

  /** A packet entering the mesh at this router (the gateway lets it go): the flow table's way, or AODV's. */
  enter(packet: DataPacket, payload: Uint8Array, entry: FlowEntry, now: Micros): void {
    if (this.p.isDown()) {
      this.drop('router-down', packet.header);
      return;
    }
    if (this.byFlowTable(packet, payload, undefined, now, entry)) return;
    this.route(packet, undefined, now, this.queueOf(packet.header), entry);
  }

  /** A data frame from neighbour `from` (`isData`: its type byte says data): parsed once, then impaired, delivered or forwarded. */
  receive(from: NodeAddr, bytes: Uint8Array, isData: boolean, now: Micros): void {
    const d = isData ? parseData(bytes) : undefined;
    if (!d || !d.ok) {
      this.p.counters.malformedData++;
      this.drop('malformed');
      return;
    }
    const { header, payload } = d.value;
    const imp = this.p.impairments?.find((i) => i.from === from);
    if (imp) {
      const rng = (this.impairRng ??= this.p.rng.fork('impairments'));
      if (rng.next() < imp.lossProbability) {
        this.drop('impaired', header);
        return;
      }
      if (rng.next() < imp.reorderProbability) {
        // Held back: the packets behind it overtake it.
        this.p.at(now + imp.reorderDelayUs, (t) => this.arrived(from, header, payload, bytes.length, t));
        return;
      }
    }
    this.arrived(from, header, payload, bytes.length, now);
  }

  private arrived(from: NodeAddr, header: DataHeader, payload: Uint8Array, size: number, now: Micros): void {
    if (this.p.isDown()) return;
    const lk = this.link(from);
    lk.rxPackets++;
    lk.rxBytes += size;
    this.take(header, payload, from, now);
  }

  /**
   * A data packet from a host on this router's wired link (this router is
   * its gateway). It enters the mesh here, so while a route to its
   * destination is being discovered it waits, as this router's own packets do.
   */
  fromWire(header: DataHeader, payload: Uint8Array, now: Micros): void {
    if (this.p.isDown()) this.drop('router-down', header);
    else this.take(header, payload, undefined, now);
  }

  /** A packet that reached this router (from neighbour `prevHop`, or undefined: from the wire): delivered, taken by a VNF, or forwarded. */
  private take(header: DataHeader, payload: Uint8Array, prevHop: NodeAddr | undefined, now: Micros): void {
    const p = this.p;
    const entry = this.note(header, header.dst === p.addr ? 'sink' : 'relay', payload.length, now);
    if (header.dst === p.addr) {
      // A host's packet leaving the mesh here: the VNFs see it first (the other end of a connection they split here).
      if (isIp(header.proto) && p.intercept?.(header, payload, now, () => this.deliverHere(header, payload, p.now()))) return;
      this.deliverHere(header, payload, now);
      return;
    }
    // A sandboxed VNF answers later: if it lets the packet go, it is forwarded then.
    if ((header.proto === 'tcp' || isIp(header.proto)) && p.intercept?.(header, payload, now, () => this.forward(header, payload, prevHop, p.now(), entry)))
      return;
    this.forward(header, payload, prevHop, now, entry);
  }

  private deliverHere(header: DataHeader, payload: Uint8Array, now: Micros): void {
    this.p.counters.delivered++;
    this.p.deliver(header, payload, now);
  }

  /** `prevHop` undefined: the packet came from this router's wired link. */
  private forward(header: DataHeader, payload: Uint8Array, prevHop: NodeAddr | undefined, now: Micros, entry: FlowEntry): void {
    if (this.p.isDown()) {
      this.drop('router-down', header);
      return;
    }
    if (header.ttl <= 1) {
      this.drop('ttl-expired', header);
      return;
    }
    const out = { ...header, ttl: header.ttl - 1 };
    const packet: DataPacket = { header: out, bytes: encodeData(out, payload) };
    if (isIp(header.proto) && this.p.ip) {
      // The hosts' packet is decremented in this router's copy of it.
      const why = this.p.ip.relay(out, packet.bytes.subarray(dataHeaderBytes(out)), now);
      if (why !== undefined) {
        if (why !== 'handled') this.drop(why, header);
        return;
      }
    }
    this.p.counters.forwarded++;
    if (prevHop === undefined) {
      // From the wired link: it enters the mesh here (the gateway may hold it: its own copy, not the caller's bytes).
      this.admitted(packet, packet.bytes.subarray(dataHeaderBytes(out)), now, entry);
      return;
    }
    if (this.byFlowTable(packet, payload, prevHop, now, entry)) return;
    this.route(packet, prevHop, now, this.queueOf(header), entry);
  }

  /** The flow table's decision, carried out; false when it has none (AODV routes the packet). */
  private byFlowTable(packet: DataPacket, payload: Uint8Array, inFrom: NodeAddr | undefined, now: Micros, entry: FlowEntry): boolean {
    const { header } = packet;
    const d = this.p.forwarder()?.decide(header, payload, inFrom, now);
    if (d === undefined) return false;
    this.p.counters.byFlowTable++;
    switch (d.kind) {
      case 'drop':
        this.drop('flow-table', header);
        return true;
      case 'deliver':
        this.p.counters.delivered++;
        this.p.deliver(header, payload, now);
        return true;
      case 'next-hop': {
        const channel = this.p.neighbourR1.get(d.nextHop);
        if (channel === undefined) {
          this.drop('no-channel', header);
          return true;
        }
        entry.nextHop = d.nextHop;
        this.enqueue(channel, d.nextHop, packet, this.queueOf(header, d.queue), now);
        return true;
      }
    }
  }

  /** Sends a packet on toward its destination in QoS queue `queue`; `entry` is its line of the flow table, which learns the next hop taken. */
  private route(packet: DataPacket, prevHop: NodeAddr | undefined, now: Micros, queue: number, entry?: FlowEntry): void {
    const p = this.p;
    // A host beyond the mesh is reached through its gateway (and from the gateway, over the wire).
    const gateway = p.hostRoutes?.get(packet.header.dst);
    if (gateway === p.addr) {
      this.wire(packet, entry);
      return;
    }
    const dst = gateway ?? packet.header.dst;
    const hop = p.aodv.lookup(dst, now);
    if (!hop) {
      if (prevHop === undefined) this.hold(packet, dst, now, queue, entry);
      else {
        this.drop('no-route', packet.header);
        this.unreachable(packet);
        p.runAodv(p.aodv.noRoute(dst, prevHop, now), now);
      }
      return;
    }
    const channel = p.neighbourR1.get(hop.nextHop);
    if (channel === undefined) {
      this.awaitChannel(hop.nextHop, { packet, prevHop, queue, entry, sinceUs: now }, now);
      return;
    }
    p.aodv.forwarding(dst, prevHop, hop.nextHop, now);
    if (entry) entry.nextHop = hop.nextHop;
    this.enqueue(channel, hop.nextHop, packet, queue, now);
  }

  /** At a gateway: a packet for a host on its wired link leaves on the wire (a full link queue drops it). */
  private wire(packet: DataPacket, entry: FlowEntry | undefined): void {
    const h = packet.header;
    if (entry) entry.nextHop = h.dst;
    const ok = this.p.toWire?.(h, packet.bytes.subarray(dataHeaderBytes(h)), packet.bytes.length, this.p.now()) ?? false;
    if (!ok) this.drop('queue-full', h);
  }

  /** Holds a packet while a route to `dst` (its destination, or the gateway of the host it is for) is being discovered. */
  private hold(packet: DataPacket, dst: NodeAddr, now: Micros, queue: number, entry: FlowEntry | undefined): void {
    let q = this.pending.get(dst);
    if (!q) this.pending.set(dst, (q = []));
    if (q.length >= this.p.config().routing.bufferPackets) this.drop('buffer-full', packet.header);
    else q.push({ packet, entry, queue });
    // Discovery starts whether or not the packet could be held (a buffer of 0 holds none).
    this.p.runAodv(this.p.aodv.discover(dst, now), now);
  }

  /**
   * A packet whose next hop's R1 channel this router has not heard yet waits
   * for that neighbour's HELLO: at most ALLOWED_HELLO_LOSS HELLO intervals
   * (the time after which a silent neighbour is lost) and
   * `routing.bufferPackets` packets per neighbour; beyond either it is
   * dropped `no-channel`. A router that has just started (a relay that
   * restarted) knows no neighbour's R1 until it hears each one's HELLO, up
   * to a HELLO interval later, while packets reach it as soon as a route
   * through it is found: dropped, the first of them, often a TCP
   * retransmission held while the route was discovered, would cost its flow
   * a backed-off retransmission timeout.
   */
  private awaitChannel(nextHop: NodeAddr, held: AwaitingChannel, now: Micros): void {
    let w = this.awaiting.get(nextHop);
    if (!w) this.awaiting.set(nextHop, (w = { held: [], timerSet: false }));
    if (w.held.length >= this.p.config().routing.bufferPackets) {
      this.drop('no-channel', held.packet.header);
      return;
    }
    w.held.push(held);
    if (!w.timerSet) this.expireAt(nextHop, w, now + this.channelWaitUs());
  }

  private channelWaitUs(): Micros {
    const a = this.p.aodv.params;
    return a.allowedHelloLoss * a.helloIntervalUs;
  }

  private expireAt(nextHop: NodeAddr, w: { held: AwaitingChannel[]; timerSet: boolean }, at: Micros): void {
    w.timerSet = true;
    this.p.at(at, (now) => {
      w.timerSet = false;
      if (this.awaiting.get(nextHop) !== w) return;
      const limit = this.channelWaitUs();
      while (w.held.length > 0 && w.held[0]!.sinceUs + limit <= now) this.drop('no-channel', w.held.shift()!.packet.header);
      if (w.held.length === 0) this.awaiting.delete(nextHop);
      else this.expireAt(nextHop, w, w.held[0]!.sinceUs + limit);
    });
  }

  /**
   * Neighbour `nb`'s R1 channel is known now (its HELLO), or `nb` was lost:
   * the packets that waited for its channel are routed afresh (to it, or by
   * another path, or held or dropped as any packet without a route).
   */
  channelKnown(nb: NodeAddr, now: Micros): void {
    const w = this.awaiting.get(nb);
    if (!w) return;
    this.awaiting.delete(nb);
    for (const h of w.held) this.route(h.packet, h.prevHop, now, h.queue, h.entry);
  }

  /** AODV found a route to `dst`: the packets held for it go. */
  release(dst: NodeAddr, now: Micros): void {
    const q = this.pending.get(dst);
    this.pending.delete(dst);
    for (const held of q ?? []) this.route(held.packet, undefined, now, held.queue, held.entry);
  }

  /** Discovery of a route to `dst` failed: the packets held for it are lost. */
  discard(dst: NodeAddr): void {
    const q = this.pending.get(dst);
    this.pending.delete(dst);
    for (const held of q ?? []) {
      this.drop('discovery-failed', held.packet.header);
      this.unreachable(held.packet);
    }
  }

  /** A hosts' IP packet the mesh cannot deliver: its source hears Destination Unreachable. */
  private unreachable(packet: DataPacket): void {
    const h = packet.header;
    if (isIp(h.proto)) this.p.ip?.unreachable(h, packet.bytes.subarray(dataHeaderBytes(h)), this.p.now());
  }

  /** Hands a packet to R2's queue of `channel`, in QoS queue `queue`; a refusal or a push-out is counted on its link's queue. */
  private enqueue(channel: number, nextHop: NodeAddr, packet: DataPacket, queue: number, now: Micros): void {
    const queued: QueuedPacket<DataPacket> = { nextHop, bytes: packet.bytes.length, enqueuedUs: now, item: packet, queue };
    const r = this.p.sched.enqueue(channel, queued, now);
    if (r.ok) this.p.runSched(this.p.sched.tick(now), now);
    // The channel queue set its queue to the class it took (best effort for one that is no class, e.g. gone in a live change).
    else this.refused(r.reason, nextHop, queued.queue, packet.header);
  }

  /** R2's queue refused a packet (counted there): the flow hears of it, and a full queue counts on its link's queue. */
  private refused(reason: 'queue-full' | 'no-channel', nextHop: NodeAddr, queue: number | undefined, header: DataHeader): void {
    if (reason === 'queue-full') this.linkQueue(nextHop, queue).txErrors++;
    this.tellDrop(reason, header);
  }

  /** The scheduler dropped a packet it held (counted there). */
  dropped(packet: QueuedPacket<DataPacket>, reason: DropReason): void {
    if (reason === 'queue-full') this.linkQueue(packet.nextHop, packet.queue).txErrors++;
    this.tellDrop(reason, packet.item.header);
  }

  /**
   * R2's MAC is done with a data frame it tried on `channel`. False when the
   * next hop moved its R1 meanwhile and the packet followed it to the new
   * channel's queue (not a broken link); otherwise the link's counters
   * take the outcome, and a frame the MAC gave up on fails over.
   */
  sent(packet: QueuedPacket<DataPacket>, channel: number, outcome: SendOutcome, now: Micros): boolean {
    const p = this.p;
    const moved = p.neighbourR1.get(packet.nextHop);
    if (!outcome.ok && moved !== undefined && moved !== channel) {
      p.sched.requeueFront(moved, packet);
      p.counters.followedMove++;
      return false;
    }
    const lk = this.link(packet.nextHop);
    const lq = this.linkQueue(packet.nextHop, packet.queue);
    if (outcome.ok) {
      lk.txPackets++;
      lk.txBytes += packet.bytes;
      lq.txPackets++;
      lq.txBytes += packet.bytes;
    } else {
      lk.txDropped++;
      lq.txErrors++;
    }
    if (!outcome.ok) {
      // The MAC gave up on the next hop: AODV fails over to an alternate path
      // or reports the break; what was queued for that neighbour is rerouted.
      const lost = packet.nextHop;
      p.runAodv(p.aodv.linkFailed(lost, now), now);
      this.reroute([packet], 'retry-limit', now);
      this.reroute(p.sched.removeNextHop(lost, now), 'route-broken', now);
    }
    return true;
  }

  /** Packets whose next hop went away: through another path if AODV has one, else dropped. */
  reroute(packets: ReadonlyArray<QueuedPacket<DataPacket>>, reason: DropReason, now: Micros): void {
    const p = this.p;
    for (const pkt of packets) {
      const h = pkt.item.header;
      const dst = p.hostRoutes?.get(h.dst) ?? h.dst;
      const hop = p.aodv.lookup(dst, now);
      const channel = hop ? p.neighbourR1.get(hop.nextHop) : undefined;
      if (!hop || channel === undefined || hop.nextHop === pkt.nextHop) {
        this.drop(reason, h);
        continue;
      }
      p.counters.rerouted++;
      const entry = this.flowTable.get(flowKey(h));
      if (entry) entry.nextHop = hop.nextHop;
      p.aodv.forwarding(dst, undefined, hop.nextHop, now);
      const r = p.sched.enqueue(channel, { ...pkt, nextHop: hop.nextHop }, now);
      if (!r.ok) this.refused(r.reason, hop.nextHop, pkt.queue, h);
    }
  }

  /** The router went down: everything it held is lost. */
  failAll(now: Micros): void {
    for (const q of this.pending.values()) for (const held of q) this.drop('router-down', held.packet.header);
    this.pending.clear();
    for (const w of this.awaiting.values()) for (const held of w.held) this.drop('router-down', held.packet.header);
    this.awaiting.clear();
    for (const p of this.p.sched.removeAll(now)) this.drop('router-down', p.item.header);
  }

  /** The flow table, most recently active first. */
  flows(): FlowEntry[] {
    return [...this.flowTable.values()].sort((a, b) => b.lastUs - a.lastUs).map((e) => ({ ...e }));
  }

  /** The label a flow's last packet carried, in either direction (undefined: none). */
  flowLabel(proto: DataProto, src: NodeAddr, dst: NodeAddr, flow: number): number | undefined {
    return this.flowTable.get(`${proto} ${src} ${dst} ${flow}`)?.label || this.flowTable.get(`${proto} ${dst} ${src} ${flow}`)?.label;
  }

  /** The flow-table entry of a packet seen here, counted; `route` notes the next hop it takes. */
  private note(h: DataHeader, role: FlowEntry['role'], bytes: number, now: Micros): FlowEntry {
    // Packets come in runs of one flow, or of a flow's two directions in turn: the last two entries are checked before a key is built.
    let e = this.lastEntry;
    if (e === undefined || !isEntryOf(e, h)) {
      const prev = this.prevEntry;
      if (prev !== undefined && isEntryOf(prev, h)) e = prev;
      else {
        e = this.flowTable.get(flowKey(h));
        if (!e) {
          e = { proto: h.proto, src: h.src, dst: h.dst, flow: h.flow, role, packets: 0, bytes: 0, nextHop: undefined, lastUs: now, label: 0 };
          this.flowTable.set(flowKey(h), e);
        }
      }
      this.prevEntry = this.lastEntry;
      this.lastEntry = e;
    }
    e.label = h.label ?? 0;
    e.packets++;
    e.bytes += bytes;
    e.lastUs = now;
    return e;
  }

  /**
   * The QoS queue asked for a packet at R2: the one an OpenFlow set_queue
   * named, else its flow label's class (R2's queue makes a queue that is no
   * class best effort).
   */
  private queueOf(h: DataHeader, setQueue?: number): number {
    return setQueue ?? this.labelQueue.get(h.label ?? 0) ?? BEST_EFFORT_QUEUE;
  }

  private link(addr: NodeAddr): LinkCounters {
    let l = this.links.get(addr);
    if (!l) this.links.set(addr, (l = { rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, txDropped: 0, queues: new Map() }));
    return l;
  }

  /** A link's counters of one queue. */
  private linkQueue(addr: NodeAddr, queue: number | undefined): { txPackets: number; txBytes: number; txErrors: number } {
    const qs = this.link(addr).queues;
    const id = queue ?? BEST_EFFORT_QUEUE;
    let c = qs.get(id);
    if (!c) qs.set(id, (c = { txPackets: 0, txBytes: 0, txErrors: 0 }));
    return c;
  }

  private drop(reason: RouterDrop, header?: DataHeader): void {
    this.p.drops[reason]++;
    this.tellDrop(reason, header);
  }

  private tellDrop(reason: RouterDrop, header: DataHeader | undefined): void {
    if (header !== undefined) this.p.onDrop?.(header, reason);
  }
}
