import type { ChannelPlan } from '../../radio/channels.js';
import type { Station, StationHost } from '../../radio/medium/index.js';
import type { MacFrame, Position, SendOutcome } from '../../radio/medium/types.js';
import type { EmulatedBand } from '../../radio/sim/band.js';
import type { NodeConfig } from '../config/types.js';
import type { EventEngine, EventId } from '../core/engine.js';
import type { Rng } from '../core/rng.js';
import type { Micros } from '../core/time.js';
import { aodvParams, NodeCore, qosQueues, schedulerParams, type NodeAction, type NodeEvent } from './core.js';
import { MultipathAodv, type AodvAction } from '../routing/aodv.js';
import { ChannelScheduler, noDrops } from '../sched/channel-scheduler.js';
import { BEST_EFFORT_QUEUE } from '../sched/classes.js';
import type { DropReason, QueuedPacket, SchedAction } from '../sched/types.js';
import type { EnergyDetector } from '../sensing/detector.js';
import { VisitTally, type ChannelObservation } from '../sensing/workload.js';
import { encodeControl, encodeData, packetKind, parseControl, parseData } from '../wire/codec.js';
import type { DataHeader, DataProto, HelloNeighbour, HelloWorkload, NodeAddr } from '../wire/mesh.js';
import type { VnfHost } from '../vnf/pool.js';
import type { VnfEvent, VnfInfo, VnfPacket } from '../vnf/types.js';
import { meshAddr, meshIp } from '../sim/addresses.js';

/** What a router needs from the simulation around it. */
export interface RouterParts {
  engine: EventEngine;
  medium: StationHost;
  /** The band its energy detector senses (PN traffic). */
  band: EmulatedBand;
  plan: ChannelPlan;
  detector: EnergyDetector;
  rng: Rng;
  position: Position;
  /** Whether PN bursts hit R3's channel (false: a dedicated control channel). */
  controlChannelPn: boolean;
  /** When its first sensing round starts (routers do not boot in step). */
  startUs: Micros;
  /** A data packet addressed to this router arrived. */
  deliver: (header: DataHeader, payload: Uint8Array, now: Micros) => void;
  /** A data packet was lost here (for per-flow loss accounting). */
  onDrop?: (header: DataHeader, reason: RouterDrop) => void;
  /** The router's VNF manager, if it runs VNFs: TCP packets it forwards go through it first. */
  vnf?: VnfHost;
  /** Every event of the router's cores and radios (the daemon's log, telemetry and monitor). */
  onEvent?: (e: RouterEvent) => void;
  /** A flow table that decides ahead of AODV (the OpenFlow agent's): undefined lets AODV route the packet. */
  forwarder?: Forwarder;
  /** Impairments of the links into this router. */
  impairments?: readonly LinkImpairment[];
}

/** A packet on its way through R2: the bytes and the channel queue it was in. */
interface InFlight {
  packet: QueuedPacket<Uint8Array>;
  channel: number;
}

/** A move of R1, as the report lists them. */
export interface R1Change {
  atUs: Micros;
  channel: number;
}

/** What a flow table decides for a data packet ahead of AODV. */
export type ForwardDecision =
  /** `queue`: the QoS queue an OpenFlow set_queue put it in (absent: its flow label's class). */
  | { kind: 'next-hop'; nextHop: NodeAddr; queue?: number }
  | { kind: 'deliver' }
  | { kind: 'drop' };

export interface Forwarder {
  /** `inFrom`: the neighbour it came from (undefined: originated here). Undefined: no entry, AODV routes it. */
  decide(header: DataHeader, payload: Uint8Array, inFrom: NodeAddr | undefined, now: Micros): ForwardDecision | undefined;
}

/** What a router reports as it runs, beyond its counters. */
export type RouterEvent =
  | NodeEvent
  | { kind: 'r1-tuned'; channel: number; atUs: Micros }
  | { kind: 'r2-tuned'; channel: number | undefined; atUs: Micros }
  | { kind: 'reconfigured'; changed: string[]; atUs: Micros }
  | { kind: 'neighbour'; addr: NodeAddr; up: boolean; atUs: Micros }
  | { kind: 'vnf'; event: VnfEvent };

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

const flowKey = (h: DataHeader): string => `${h.proto} ${h.src} ${h.dst} ${h.flow}`;

export type RouterDrop = DropReason | 'buffer-full' | 'discovery-failed' | 'router-down' | 'impaired' | 'flow-table';

/** Loss and reordering added to the data packets a router receives from one neighbour (an experiment's knob, not a radio effect). */
export interface LinkImpairment {
  from: NodeAddr;
  lossProbability: number;
  reorderProbability: number;
  reorderDelayUs: Micros;
}

/**
 * One Urban-X mesh router in virtual time: the node core (sensing and the R1
 * channel decision), multipath AODV on R3, the channel scheduler of R2, and
 * three MAC stations on the air medium, composed by a thin synchronous
 * driver. Each core says when it next needs to run; the driver keeps one
 * engine event per core at that deadline.
 */
export class MeshRouter {
  readonly addr: NodeAddr;
  readonly core: NodeCore;
  readonly aodv: MultipathAodv;
  readonly sched: ChannelScheduler<Uint8Array>;
  readonly r1: Station;
  readonly r2: Station;
  readonly r3: Station;

  /** Each neighbour's R1 channel, from its HELLOs. */
  private readonly neighbourR1 = new Map<NodeAddr, number>();
  /** Packets this router originated while their route is being discovered. */
  private readonly pending = new Map<NodeAddr, Array<{ bytes: Uint8Array; entry: FlowEntry | undefined; queue: number }>>();
  private readonly alarms: Record<'core' | 'aodv' | 'sched' | 'preempt' | 'vnf', { id: EventId | undefined; at: Micros | undefined }> = {
    vnf: { id: undefined, at: undefined },
    core: { id: undefined, at: undefined },
    aodv: { id: undefined, at: undefined },
    sched: { id: undefined, at: undefined },
    preempt: { id: undefined, at: undefined },
  };
  private readonly iq: Float32Array;
  private readonly noise: Rng;
  private retuneUs: Micros;
  private readonly sensingOnR1: boolean;
  private visitOut = false;
  /** Between pause-tx and resume-tx: the sensing radio is away. */
  private sensingRound = false;
  private failed = false;
  /** R2 leaves for sensing once the exchange in progress is over. */
  private leaveAfterExchange = false;
  /** The dwell end whose preemption check has run (once per dwell). */
  private preemptCheckedFor: Micros | undefined;

  readonly drops: Record<RouterDrop, number> = {
    ...noDrops(),
    'buffer-full': 0,
    'discovery-failed': 0,
    'router-down': 0,
    impaired: 0,
    'flow-table': 0,
  };
  private vnfSeq = 0;
  readonly counters = { byFlowTable: 0, vnfTaken: 0, originated: 0, delivered: 0, forwarded: 0, controlReceived: 0, malformedControl: 0, malformedData: 0, rerouted: 0, followedMove: 0, preempted: 0, sensingRounds: 0 };
  readonly r1History: R1Change[] = [];
  private readonly queueSum = new Map<number, number>();
  private readonly queueMax = new Map<number, number>();
  private queueSamples = 0;

  /** Traffic per flow, as the control API and the monitor show it. */
  private readonly flowTable = new Map<string, FlowEntry>();
  /** A flow table set after construction (the daemon's OpenFlow agent starts once the router runs). */
  forwarder: Forwarder | undefined;
  /** Data traffic per neighbour link (the OpenFlow agent's port and queue counters). */
  readonly links = new Map<NodeAddr, LinkCounters>();
  /** Flow label to QoS queue, from `qos.classes`. */
  private labelQueue = new Map<number, number>();

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

  /**
   * The QoS queue asked for a packet at R2: the one an OpenFlow set_queue
   * named, else its flow label's class (R2's queue makes a queue that is no
   * class best effort).
   */
  private queueOf(h: DataHeader, setQueue?: number): number {
    return setQueue ?? this.labelQueue.get(h.label ?? 0) ?? BEST_EFFORT_QUEUE;
  }

  private learnLabels(cfg: NodeConfig): void {
    this.labelQueue = new Map(cfg.qos.classes.map((c) => [c.label, c.queue]));
  }

  constructor(
    private cfg: NodeConfig,
    private readonly p: RouterParts,
  ) {
    this.addr = cfg.node.id;
    this.retuneUs = cfg.switching.overheadUs;
    this.sensingOnR1 = cfg.sensing.radio === 'R1';
    this.core = new NodeCore(cfg, p.plan, this.retuneUs, p.startUs);
    this.aodv = new MultipathAodv(
      {
        self: this.addr,
        rng: p.rng.fork('aodv'),
        startUs: p.engine.now(),
        hello: () => this.helloContent(),
        linkCost: (j) => this.linkCost(j),
      },
      aodvParams(cfg),
    );
    this.sched = new ChannelScheduler<Uint8Array>(schedulerParams(cfg, p.plan.numbers), p.engine.now());
    this.learnLabels(cfg);
    const at = p.position;
    const id = cfg.node.name;
    this.r1 = p.medium.addStation(
      { id: `${id}/R1`, node: this.addr, position: at, acceptsUnicast: true, acceptsBroadcast: false },
      { onReceive: (f, now) => this.receive(f, now), onSent: () => undefined },
    );
    this.r2 = p.medium.addStation(
      { id: `${id}/R2`, node: this.addr, position: at, acceptsUnicast: false, acceptsBroadcast: false, queueLimit: 1 },
      { onReceive: () => undefined, onSent: (f, o) => this.r2Sent(f, o) },
    );
    this.r3 = p.medium.addStation(
      {
        id: `${id}/R3`,
        node: this.addr,
        position: at,
        acceptsUnicast: true,
        acceptsBroadcast: true,
        channel: cfg.radios.R3.channel,
        pnAffected: p.controlChannelPn,
        queueLimit: 256,
      },
      { onReceive: (f, now) => this.receive(f, now), onSent: () => undefined },
    );
    this.noise = p.rng.fork('sensing-noise');
    this.iq = new Float32Array(2 * 65536);
    const r1 = this.core.r1;
    if (r1 !== undefined) this.tuneR1(r1, p.startUs);
    this.rearm();
  }

  // -------------------------------------------------------------------------
  // Data plane

  /**
   * An application on this router sends `payload` to `dst`; a VNF speaking
   * for another end gives that end's address as `from` (the header's source).
   * `label`: the IPv6 flow label it marks the packets with (its QoS class).
   */
  originate(dst: NodeAddr, proto: DataProto, flow: number, seq: number, payload: Uint8Array, now: Micros, opts: { from?: NodeAddr; label?: number } = {}): void {
    this.counters.originated++;
    const from = opts.from ?? this.addr;
    const header: DataHeader = { src: from, dst, ttl: this.cfg.routing.netDiameter, proto, flow, seq };
    if (opts.label) header.label = opts.label;
    const entry = this.note(header, from === this.addr ? 'source' : 'relay', payload.length, now);
    if (this.failed) {
      this.drop('router-down', header);
      return;
    }
    const bytes = encodeData(header, payload);
    if (dst === this.addr) {
      this.counters.delivered++;
      this.p.deliver(header, payload, now);
      return;
    }
    if (this.byFlowTable(header, payload, bytes, undefined, now, entry)) return;
    this.route(bytes, dst, undefined, now, this.queueOf(header), entry);
  }

  /** The flow table's decision, carried out; false when it has none (AODV routes the packet). */
  private byFlowTable(header: DataHeader, payload: Uint8Array, bytes: Uint8Array, inFrom: NodeAddr | undefined, now: Micros, entry: FlowEntry): boolean {
    const d = (this.forwarder ?? this.p.forwarder)?.decide(header, payload, inFrom, now);
    if (d === undefined) return false;
    this.counters.byFlowTable++;
    switch (d.kind) {
      case 'drop':
        this.drop('flow-table', header);
        return true;
      case 'deliver':
        this.counters.delivered++;
        this.p.deliver(header, payload, now);
        return true;
      case 'next-hop': {
        const channel = this.neighbourR1.get(d.nextHop);
        if (channel === undefined) {
          this.drop('no-channel', header);
          return true;
        }
        entry.nextHop = d.nextHop;
        this.enqueue(channel, d.nextHop, bytes, this.queueOf(header, d.queue), now);
        return true;
      }
    }
  }

  /** Hands a packet to R2's queue of `channel`, in QoS queue `queue`; a refusal or a push-out is counted on its link's queue. */
  private enqueue(channel: number, nextHop: NodeAddr, bytes: Uint8Array, queue: number, now: Micros): void {
    const packet: QueuedPacket<Uint8Array> = { nextHop, bytes: bytes.length, enqueuedUs: now, item: bytes, queue };
    const r = this.sched.enqueue(channel, packet, now);
    if (r.ok) this.runSched(this.sched.tick(now), now);
    // The channel queue set its queue to the class it took (best effort for one that is no class, e.g. gone in a live change).
    else this.refused(r.reason, nextHop, packet.queue, bytes);
  }

  /** R2's queue refused a packet (counted there): the flow hears of it, and a full queue counts on its link's queue. */
  private refused(reason: 'queue-full' | 'no-channel', nextHop: NodeAddr, queue: number | undefined, bytes: Uint8Array): void {
    if (reason === 'queue-full') this.linkQueue(nextHop, queue).txErrors++;
    this.tellDrop(reason, bytes);
  }

  /** Sends a packet on toward `dst` in QoS queue `queue`; `entry` is its line of the flow table, which learns the next hop taken. */
  private route(bytes: Uint8Array, dst: NodeAddr, prevHop: NodeAddr | undefined, now: Micros, queue: number, entry?: FlowEntry): void {
    const hop = this.aodv.lookup(dst, now);
    if (!hop) {
      if (prevHop === undefined) this.hold(bytes, dst, now, queue, entry);
      else {
        this.drop('no-route', bytes);
        this.runAodv(this.aodv.noRoute(dst, prevHop, now), now);
      }
      return;
    }
    const channel = this.neighbourR1.get(hop.nextHop);
    if (channel === undefined) {
      this.drop('no-channel', bytes);
      return;
    }
    this.aodv.forwarding(dst, prevHop, hop.nextHop, now);
    if (entry) entry.nextHop = hop.nextHop;
    this.enqueue(channel, hop.nextHop, bytes, queue, now);
  }

  private hold(bytes: Uint8Array, dst: NodeAddr, now: Micros, queue: number, entry: FlowEntry | undefined): void {
    let q = this.pending.get(dst);
    if (!q) this.pending.set(dst, (q = []));
    if (q.length >= this.cfg.routing.bufferPackets) this.drop('buffer-full', bytes);
    else q.push({ bytes, entry, queue });
    // Discovery starts whether or not the packet could be held (a buffer of 0 holds none).
    this.runAodv(this.aodv.discover(dst, now), now);
  }

  private receive(frame: MacFrame, now: Micros): void {
    if (this.failed) return;
    const bytes = frame.payload;
    const kind = packetKind(bytes);
    const imp = kind === 'data' ? this.p.impairments?.find((i) => i.from === frame.src) : undefined;
    if (imp) {
      const rng = (this.impairRng ??= this.p.rng.fork('impairments'));
      if (rng.next() < imp.lossProbability) {
        this.drop('impaired', bytes);
        return;
      }
      if (rng.next() < imp.reorderProbability) {
        // Held back: the packets behind it overtake it.
        this.p.engine.at(now + imp.reorderDelayUs, (t) => this.process(frame, t));
        return;
      }
    }
    this.process(frame, now);
  }

  private impairRng: Rng | undefined;

  private process(frame: MacFrame, now: Micros): void {
    if (this.failed) return;
    const bytes = frame.payload;
    const kind = packetKind(bytes);
    if (kind === 'control') {
      const m = parseControl(bytes);
      if (!m.ok) {
        this.counters.malformedControl++;
        return;
      }
      this.counters.controlReceived++;
      this.runAodv(this.aodv.handle(m.value, frame.src, now), now);
      return;
    }
    const d = kind === 'data' ? parseData(bytes) : undefined;
    if (!d || !d.ok) {
      this.counters.malformedData++;
      this.drop('malformed');
      return;
    }
    const { header, payload } = d.value;
    const lk = this.link(frame.src);
    lk.rxPackets++;
    lk.rxBytes += bytes.length;
    const entry = this.note(header, header.dst === this.addr ? 'sink' : 'relay', payload.length, now);
    if (header.dst === this.addr) {
      this.counters.delivered++;
      this.p.deliver(header, payload, now);
      return;
    }
    if (this.p.vnf && header.proto === 'tcp') {
      const hops = this.cfg.routing.netDiameter - header.ttl + 1;
      const pkt: VnfPacket = { proto: 'tcp', src: meshIp(header.src), dst: meshIp(header.dst), bytes: payload, tag: header.flow, hops };
      // A sandboxed VNF answers later: if it lets the packet go, it is forwarded then.
      const decline = (): void => this.forward(header, payload, frame.src, this.p.engine.now(), entry);
      if (this.p.vnf.intercept(pkt, now, decline)) {
        this.counters.vnfTaken++;
        this.runVnf(now);
        return;
      }
    }
    this.forward(header, payload, frame.src, now, entry);
  }

  private forward(header: DataHeader, payload: Uint8Array, prevHop: NodeAddr, now: Micros, entry: FlowEntry): void {
    if (this.failed) {
      this.drop('router-down', header);
      return;
    }
    if (header.ttl <= 1) {
      this.drop('ttl-expired', header);
      return;
    }
    this.counters.forwarded++;
    const out = { ...header, ttl: header.ttl - 1 };
    const bytes = encodeData(out, payload);
    if (this.byFlowTable(out, payload, bytes, prevHop, now, entry)) return;
    this.route(bytes, header.dst, prevHop, now, this.queueOf(header), entry);
  }

  /** The flow-table entry of a packet seen here, counted; `route` notes the next hop it takes. */
  private note(h: DataHeader, role: FlowEntry['role'], bytes: number, now: Micros): FlowEntry {
    const key = flowKey(h);
    let e = this.flowTable.get(key);
    if (!e) this.flowTable.set(key, (e = { proto: h.proto, src: h.src, dst: h.dst, flow: h.flow, role, packets: 0, bytes: 0, nextHop: undefined, lastUs: now, label: 0 }));
    e.label = h.label ?? 0;
    e.packets++;
    e.bytes += bytes;
    e.lastUs = now;
    return e;
  }

  /** The flow table, most recently active first. */
  flows(): FlowEntry[] {
    return [...this.flowTable.values()].sort((a, b) => b.lastUs - a.lastUs).map((e) => ({ ...e }));
  }

  private r2Sent(frame: MacFrame, outcome: SendOutcome): void {
    const now = this.p.engine.now();
    const f = frame.tag as InFlight;
    if (!outcome.ok && outcome.reason === 'aborted') {
      // Aborted (a retune cut it): if a sensing round waited for this exchange to end, R2 leaves now.
      if (this.leaveAfterExchange) {
        this.leaveAfterExchange = false;
        this.r2.retune(undefined, 0);
      }
      this.sched.requeueFront(f.channel, f.packet);
      this.rearm();
      return;
    }
    const moved = this.neighbourR1.get(f.packet.nextHop);
    if (!outcome.ok && moved !== undefined && moved !== f.channel) {
      // The next hop moved its R1 while this frame was trying the old
      // channel: not a broken link. The packet follows it to the new queue.
      this.sched.requeueFront(moved, f.packet);
      this.counters.followedMove++;
      this.exchangeOver();
      return;
    }
    const lk = this.link(f.packet.nextHop);
    const lq = this.linkQueue(f.packet.nextHop, f.packet.queue);
    if (outcome.ok) {
      lk.txPackets++;
      lk.txBytes += f.packet.bytes;
      lq.txPackets++;
      lq.txBytes += f.packet.bytes;
    } else {
      lk.txDropped++;
      lq.txErrors++;
    }
    if (!outcome.ok) {
      // The MAC gave up on the next hop: AODV fails over to an alternate path
      // or reports the break; what was queued for that neighbour is rerouted.
      const lost = f.packet.nextHop;
      this.runAodv(this.aodv.linkFailed(lost, now), now);
      this.reroute([f.packet], 'retry-limit', now);
      this.reroute(this.sched.removeNextHop(lost, now), 'route-broken', now);
    }
    this.runSched(this.sched.txDone(now), now);
    this.exchangeOver();
  }

  /** R2's exchange ended: if a sensing round waits for it, R2 leaves now. */
  private exchangeOver(): void {
    if (this.leaveAfterExchange) {
      this.leaveAfterExchange = false;
      this.r2.retune(undefined, 0);
    }
    this.rearm();
  }

  /** Packets whose next hop went away: through another path if AODV has one, else dropped. */
  private reroute(packets: ReadonlyArray<QueuedPacket<Uint8Array>>, reason: DropReason, now: Micros): void {
    for (const pkt of packets) {
      const d = parseData(pkt.item);
      if (!d.ok) {
        this.drop('malformed');
        continue;
      }
      const hop = this.aodv.lookup(d.value.header.dst, now);
      const channel = hop ? this.neighbourR1.get(hop.nextHop) : undefined;
      if (!hop || channel === undefined || hop.nextHop === pkt.nextHop) {
        this.drop(reason, d.value.header);
        continue;
      }
      this.counters.rerouted++;
      const entry = this.flowTable.get(flowKey(d.value.header));
      if (entry) entry.nextHop = hop.nextHop;
      this.aodv.forwarding(d.value.header.dst, undefined, hop.nextHop, now);
      const r = this.sched.enqueue(channel, { ...pkt, nextHop: hop.nextHop }, now);
      if (!r.ok) this.refused(r.reason, hop.nextHop, pkt.queue, pkt.item);
    }
  }

  private drop(reason: RouterDrop, packet?: Uint8Array | DataHeader): void {
    this.drops[reason]++;
    this.tellDrop(reason, packet);
  }

  private tellDrop(reason: RouterDrop, packet: Uint8Array | DataHeader | undefined): void {
    if (packet === undefined || !this.p.onDrop) return;
    if (!(packet instanceof Uint8Array)) this.p.onDrop(packet, reason);
    else {
      const d = parseData(packet);
      if (d.ok) this.p.onDrop(d.value.header, reason);
    }
  }

  // -------------------------------------------------------------------------
  // Cores' actions

  private runAodv(actions: AodvAction[], now: Micros): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'send':
          this.r3.send({ src: this.addr, dst: a.to, payload: encodeControl(a.msg) });
          break;
        case 'route-found': {
          const q = this.pending.get(a.dst);
          this.pending.delete(a.dst);
          for (const held of q ?? []) this.route(held.bytes, a.dst, undefined, now, held.queue, held.entry);
          break;
        }
        case 'route-failed': {
          const q = this.pending.get(a.dst);
          this.pending.delete(a.dst);
          for (const held of q ?? []) this.drop('discovery-failed', held.bytes);
          break;
        }
        case 'hello-heard': {
          const ch = a.hello.r1Channel;
          const before = this.neighbourR1.get(a.from);
          if (ch > 0 && this.p.plan.has(ch)) {
            this.neighbourR1.set(a.from, ch);
            this.core.neighbourChannel(String(a.from), ch);
            if (before !== ch) this.runSched(this.sched.rechannel(a.from, ch, now), now);
          } else if (before !== undefined) {
            this.neighbourR1.delete(a.from);
            this.core.neighbourChannel(String(a.from), undefined);
          }
          this.core.neighbourWorkload(String(a.from), a.hello.workload, now);
          this.core.neighbourNeighbours(String(a.from), a.hello.neighbours);
          break;
        }
        case 'neighbour-lost':
          this.p.onEvent?.({ kind: 'neighbour', addr: a.addr, up: false, atUs: now });
          // The channel decision stops counting it; its last known R1 stays, so
          // that a route through it that comes back before its next HELLO works.
          this.core.neighbourChannel(String(a.addr), undefined);
          this.reroute(this.sched.removeNextHop(a.addr, now), 'route-broken', now);
          break;
        case 'neighbour-up':
          this.p.onEvent?.({ kind: 'neighbour', addr: a.addr, up: true, atUs: now });
          break;
        case 'route-lost':
          break;
      }
    }
    this.rearm();
  }

  private runSched(actions: SchedAction<Uint8Array>[], _now: Micros): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'tune':
          this.r2.retune(a.channel, this.retuneUs);
          this.p.onEvent?.({ kind: 'r2-tuned', channel: a.channel, atUs: this.p.engine.now() });
          break;
        case 'transmit': {
          const tag: InFlight = { packet: a.packet, channel: a.channel };
          this.r2.send({ src: this.addr, dst: a.packet.nextHop, payload: a.packet.item, tag });
          break;
        }
        case 'drop':
          // Counted by the scheduler itself; the link's queue and the flow hear of it.
          if (a.reason === 'queue-full') this.linkQueue(a.packet.nextHop, a.packet.queue).txErrors++;
          this.tellDrop(a.reason, a.packet.item);
          break;
      }
    }
    this.rearm();
  }

  private runCore(actions: NodeAction[], now: Micros): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'pause-tx':
          // The sensing radio leaves its data channel for the round. Sensing on
          // R2 (the seeds' way) stops data transmission; sensing on R1 stops reception.
          this.sensingRound = true;
          if (this.sensingOnR1) this.r1.retune(undefined, 0);
          else {
            this.runSched(this.sched.pause(now), now);
            // A frame already on the air (or awaiting its ACK) finishes its
            // exchange first: cutting it would send it again later under a new
            // MAC sequence number, and the receiver would take it twice.
            if ((this.r2.serviceAttempts ?? 0) > 0) this.leaveAfterExchange = true;
            else this.r2.retune(undefined, 0);
          }
          break;
        case 'resume-tx':
          this.sensingRound = false;
          this.leaveAfterExchange = false;
          if (this.sensingOnR1) {
            if (this.core.r1 !== undefined) this.r1.retune(this.core.r1, this.retuneUs);
          } else this.runSched(this.sched.resume(now), now);
          break;
        case 'visit': {
          const obs = this.sense(a.visit.channel, a.visit.startUs + this.retuneUs, a.visit.captureUs, a.visit.endUs);
          this.visitOut = true;
          this.p.engine.at(Math.max(a.visit.endUs, now), (t) => {
            if (this.failed) return;
            this.visitOut = false;
            this.runCore(this.core.visitDone(obs, t), t);
            this.rearm();
          });
          break;
        }
        case 'tune-r1':
          this.tuneR1(a.channel, now);
          break;
        case 'event':
          this.onNodeEvent(a.event);
          break;
      }
    }
    this.rearm();
  }

  /** The VNFs of this router, running and ended, with their counters. */
  get vnfList(): VnfInfo[] | undefined {
    return this.p.vnf?.list();
  }

  /** Sends what the VNFs emitted, each packet with the source address it speaks for (a sandbox's answer calls this). */
  vnfOutput(now: Micros): void {
    this.runVnf(now);
  }

  private runVnf(now: Micros): void {
    const vnf = this.p.vnf;
    if (!vnf) return;
    // Lifecycle events stay with the manager (its list() says what started, stopped or failed); the daemon hears them.
    const { packets, events } = vnf.poll(now);
    if (this.p.onEvent) for (const event of events) this.p.onEvent({ kind: 'vnf', event });
    for (const p of packets) {
      const src = meshAddr(p.src);
      const dst = meshAddr(p.dst);
      const flow = p.tag ?? 0xffff;
      // The VNF speaks for the flow: its packets keep the flow's label (its QoS class), as seen in either direction.
      const label = this.flowTable.get(`${p.proto} ${src} ${dst} ${flow}`)?.label || this.flowTable.get(`${p.proto} ${dst} ${src} ${flow}`)?.label;
      this.originate(dst, p.proto, flow, this.vnfSeq++ >>> 0, p.bytes, now, { from: src, label });
    }
    this.rearm();
  }

  private onNodeEvent(e: NodeEvent): void {
    if (e.kind === 'sensing-round') this.counters.sensingRounds++;
    this.p.onEvent?.(e);
  }

  get config(): NodeConfig {
    return this.cfg;
  }

  /**
   * Takes a new configuration live: the sensing schedule, the channel
   * decision, AODV's timers, R2's switching and the detector's threshold.
   * The caller has validated it (schema, and only fields a running router
   * takes: LIVE_FIELDS).
   */
  reconfigure(cfg: NodeConfig, changed: string[], now: Micros): void {
    this.core.reconfigure(cfg, now);
    this.aodv.setParams(aodvParams(cfg), now);
    this.p.detector.setThreshold(cfg.sensing.ccaThresholdDbm);
    this.retuneUs = cfg.switching.overheadUs;
    this.cfg = cfg;
    this.runSched(this.sched.setParams(schedulerParams(cfg, this.p.plan.numbers), now), now);
    this.learnLabels(cfg);
    this.p.onEvent?.({ kind: 'reconfigured', changed, atUs: now });
    this.rearm();
  }

  private tuneR1(channel: number, now: Micros): void {
    this.r1History.push({ atUs: now, channel });
    this.p.onEvent?.({ kind: 'r1-tuned', channel, atUs: now });
    // Sensing on R1 keeps it off its channel until the round ends.
    if (!(this.sensingOnR1 && this.sensingRound)) this.r1.retune(channel, this.retuneUs);
    // Neighbours must learn the new channel before they send to it.
    this.runAodv(this.aodv.announce(now), now);
  }

  /** The energy detector on `channel` for `captureUs` from `fromUs`: the band's IQ, synthesised and detected block by block. */
  private sense(channel: number, fromUs: Micros, captureUs: Micros, endUs: Micros): ChannelObservation {
    const radio = this.sensingOnR1 ? this.cfg.radios.R1 : this.cfg.radios.R2;
    const rate = radio.sampleRateHz;
    const centerHz = this.p.plan.get(channel).centerHz;
    const cal = radio.calibrationDb - radio.gainDb;
    let remaining = Math.round((captureUs * rate) / 1e6);
    let t = fromUs;
    const tally = new VisitTally();
    const max = this.iq.length / 2;
    while (remaining > 0) {
      const n = Math.min(remaining, max);
      this.p.band.synthesize(centerHz, t, n, rate, cal, this.iq, this.noise);
      tally.add(this.p.detector.detect({ data: this.iq, count: n, startUs: t, sampleRateHz: rate, centerHz, calibrationDb: cal, droppedSamples: 0 }));
      remaining -= n;
      t += (n * 1e6) / rate;
    }
    return tally.observation(channel, endUs);
  }

  // -------------------------------------------------------------------------
  // What the cores ask of the node

  private helloContent(): { r1Channel: number; workload: HelloWorkload[]; neighbours: HelloNeighbour[] } {
    return {
      r1Channel: this.core.r1 ?? 0,
      neighbours: this.neighbourChannels().slice(0, 255).map((n) => ({ addr: n.addr, r1Channel: n.r1Channel })),
      workload: this.core.sharedWorkload().map((e) => ({
        channel: e.channel,
        w: Math.min(1, Math.max(0, e.w)),
        windows: Math.min(0xffffffff, Math.round(e.windows)),
      })),
    };
  }

  /**
   * The path decision's link cost to neighbour j: 1 / (1 - w) of j's R1
   * channel as this router estimates it (the expected transmissions when a
   * fraction w of the air is taken by PNs), w capped at 0.95.
   */
  private linkCost(j: NodeAddr): number {
    const ch = this.neighbourR1.get(j);
    if (ch === undefined) return 1;
    const w = this.core.latestRound?.channels.find((c) => c.channel === ch)?.w ?? 0;
    return 1 / (1 - Math.min(0.95, Math.max(0, w)));
  }

  // -------------------------------------------------------------------------
  // Timers

  /** Keeps one engine event per core at that core's next deadline. */
  rearm(): void {
    if (this.failed) return;
    const vnf = this.p.vnf;
    if (vnf) {
      this.arm('vnf', vnf.nextDeadline(), (t) => {
        vnf.tick(t);
        this.runVnf(t);
      });
    }
    this.arm('core', this.visitOut ? undefined : this.core.nextDeadline(), (t) => this.runCore(this.core.tick(t), t));
    this.arm('aodv', this.aodv.nextDeadline(), (t) => this.runAodv(this.aodv.tick(t), t));
    this.arm('sched', this.sched.nextDeadline(), (t) => this.runSched(this.sched.tick(t), t));
    const s = this.sched;
    const end = s.dwellEndUs;
    const check = s.handedOut && end !== undefined && end !== this.preemptCheckedFor && s.othersWaiting();
    this.arm('preempt', check ? end : undefined, () => {
      this.preemptCheckedFor = end;
      this.preempt();
    });
  }

  /**
   * The dwell is over, other channels wait, and R2's MAC has not yet started
   * the packet it holds: its channel is held busy (a PN burst that the MAC's
   * carrier sense defers to). The packet goes back to its queue so that R2 can
   * serve the others instead of waiting out the burst.
   */
  private preempt(): void {
    const s = this.sched;
    if (!s.handedOut || !s.othersWaiting() || this.r2.serviceAttempts !== 0) return;
    this.counters.preempted++;
    this.r2.retune(this.r2.channel, 0);
  }

  private arm(which: 'core' | 'aodv' | 'sched' | 'preempt' | 'vnf', due: Micros | undefined, run: (t: Micros) => void): void {
    const a = this.alarms[which];
    const at = due === undefined ? undefined : Math.max(due, this.p.engine.now());
    if (a.at === at && a.id !== undefined) return;
    if (a.id !== undefined) this.p.engine.cancel(a.id);
    a.id = undefined;
    a.at = at;
    if (at === undefined) return;
    a.id = this.p.engine.at(at, (t) => {
      a.id = undefined;
      a.at = undefined;
      run(t);
      this.rearm();
    });
  }

  /**
   * The router fails for the rest of the run: its radios go deaf and silent,
   * its cores stop, and what it held is counted as lost (`router-down`).
   * Neighbours find out the way they would in the field: HELLOs stop and
   * frames to it go unacknowledged.
   */
  fail(now: Micros): void {
    if (this.failed) return;
    this.failed = true;
    for (const a of Object.values(this.alarms)) {
      if (a.id !== undefined) this.p.engine.cancel(a.id);
      a.id = undefined;
      a.at = undefined;
    }
    for (const st of [this.r1, this.r2, this.r3]) st.retune(undefined, 0);
    for (const q of this.pending.values()) for (const held of q) this.drop('router-down', held.bytes);
    this.pending.clear();
    for (const p of this.sched.removeAll(now)) this.drop('router-down', p.item);
  }

  /** A sensing round holds data transmission. */
  get transmitPaused(): boolean {
    return this.sensingRound;
  }

  get isDown(): boolean {
    return this.failed;
  }

  // -------------------------------------------------------------------------
  // Observation

  /** Adds the current queue lengths to the time averages (called on a fixed period). */
  sampleQueues(): void {
    this.queueSamples++;
    for (const q of this.sched.queues()) {
      this.queueSum.set(q.channel, (this.queueSum.get(q.channel) ?? 0) + q.packets);
      this.queueMax.set(q.channel, Math.max(this.queueMax.get(q.channel) ?? 0, q.packets));
    }
  }

  queueStats(): Array<{ channel: number; meanPackets: number; maxPackets: number }> {
    const out: Array<{ channel: number; meanPackets: number; maxPackets: number }> = [];
    for (const [channel, max] of [...this.queueMax].sort((a, b) => a[0] - b[0])) {
      if (max === 0) continue;
      out.push({ channel, meanPackets: (this.queueSum.get(channel) ?? 0) / Math.max(1, this.queueSamples), maxPackets: max });
    }
    return out;
  }

  /** The QoS queues of every link, highest priority first (best effort, queue 0, last), with their guaranteed rates. */
  qosQueues(): Array<{ queue: number; minKbps: number }> {
    return qosQueues(this.cfg);
  }

  /** Live neighbours (heard within the HELLO loss time) and the R1 channel each announced last. */
  neighbourChannels(): Array<{ addr: NodeAddr; r1Channel: number }> {
    const live = new Set(this.aodv.neighbours(this.p.engine.now()).map((n) => n.addr));
    return [...this.neighbourR1]
      .filter(([addr]) => live.has(addr))
      .sort((a, b) => a[0] - b[0])
      .map(([addr, r1Channel]) => ({ addr, r1Channel }));
  }

}
