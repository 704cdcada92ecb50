import type { ChannelPlan } from '../../radio/channels.js';
import type { Frontend } from '../../radio/frontend.js';
import type { Station, StationHost } from '../../radio/medium/index.js';
import type { MacFrame, Position, SendOutcome } from '../../radio/medium/types.js';
import type { EmulatedBand } from '../../radio/sim/band.js';
import type { NodeConfig } from '../config/types.js';
import { Alarm } from '../core/alarm.js';
import type { EventEngine } from '../core/engine.js';
import type { Rng } from '../core/rng.js';
import { US_PER_S, type Micros } from '../core/time.js';
import type { Forwarder } from '../openflow/forwarder.js';
import { MultipathAodv, type AodvAction } from '../routing/aodv.js';
import { PrefixRoutes, type PrefixAction } from '../routing/prefixes.js';
import { ChannelScheduler, noDrops } from '../sched/channel-scheduler.js';
import type { QueuedPacket, SchedAction } from '../sched/types.js';
import type { EnergyDetector } from '../sensing/detector.js';
import type { IqTap } from '../sensing/iq-tap.js';
import type { Visit } from '../sensing/schedule.js';
import type { ChannelObservation } from '../sensing/workload.js';
import type { VnfHost } from '../vnf/pool.js';
import type { VnfEvent, VnfInfo } from '../vnf/types.js';
import { encodeControl, packetKind, parseControlShared } from '../wire/codec.js';
import type { ControlMsg, DataHeader, DataProto, HelloNeighbour, HelloWorkload, NodeAddr } from '../wire/mesh.js';
import type { R3Auth } from '../wire/r3-auth.js';
import { Forwarding, type DataPacket, type FlowEntry, type LinkCounters, type LinkImpairment, type RouterDrop } from './forwarding.js';
import { NodeCore, type NodeEvent } from './node-core.js';
import { aodvParams, prefixParams, qosQueues, schedulerParams } from './params.js';
import { GatewaySide } from './gateway.js';
import { IpPlane } from './ip.js';
import { captureVisit, SENSE_BLOCK_SAMPLES, senseBand, senseBandStatistical, SensingDriver, type SensingModel, type SensingRadios } from './sensing.js';
import { VnfSide } from './vnfs.js';

/** What a router needs from the host around it (the simulator, or the daemon on the medium process). */
export interface RouterParts {
  engine: EventEngine;
  medium: StationHost;
  /** The band its energy detector senses (PN traffic). */
  band: EmulatedBand;
  plan: ChannelPlan;
  detector: EnergyDetector;
  /** How its detector sees the band: synthesised IQ (the default) or window energies drawn from their distribution. */
  sensingModel?: SensingModel;
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
  /** The host side of the IP plane (the daemon's TUN): IP packets for the hosts this router serves. Settable later with `setHostSide`. */
  toHost?: (packet: Uint8Array, now: Micros) => void;
  /** Watches R2 for a trace (the simulator's --trace); absent, R2's path pays one null check. */
  r2Observer?: R2Observer;
  /** Static routes to hosts beyond the mesh: each wired host's address and its gateway router (see forwarding.ts). */
  hostRoutes?: ReadonlyMap<NodeAddr, NodeAddr>;
  /** At a gateway: sends a packet onto the wired link of the host `header.dst`; false if the link's queue refused it. */
  toWire?: (header: DataHeader, payload: Uint8Array, bytes: number, now: Micros) => boolean;
  /** Signs every control message it sends on R3 and drops every one it receives that fails (src/wire/r3-auth.ts); absent, R3 goes unauthenticated. */
  auth?: R3Auth;
  /** Reads the IQ its detector reads (the monitor's spectrum and recordings); the statistical model has no IQ to show it. */
  iqTap?: IqTap;
  /**
   * Its radios' own front-ends, when its stations run a PHY over them
   * (`PhyHost`) rather than join the air medium: sensing then reads the
   * sensing radio's front-end, which it shares with that radio's station.
   * A round takes the front-end from the station once the station lets go
   * of it (an exchange in progress ends first), tunes it to each channel in
   * turn at the front-end's own retune cost, and the station tunes it back
   * after. Absent, the router senses `band` at once.
   */
  radioFrontends?: Readonly<Record<'R1' | 'R2' | 'R3', Frontend>>;
  /**
   * Runs what follows a front-end's promise (a visit's samples read) inside
   * the host's event loop: the daemon's paced engine's `inject`, so that
   * what the router schedules then wakes the engine.
   */
  enter?<T>(fn: () => T): T;
}

/**
 * What a trace learns of R2: when the scheduler retunes it, when sensing
 * takes it away and gives it back, and each packet it hands to the MAC. From
 * these alone a packet's time in a channel queue can be split by what R2 was
 * doing meanwhile (src/sim/trace.ts). Called only for sensing on R2.
 */
export interface R2Observer {
  /** The scheduler retunes R2 to `channel`, usable from `readyUs`. */
  tuned(channel: number, readyUs: Micros, now: Micros): void;
  /** A sensing round takes R2 away: nothing is handed out until `resumed`. */
  paused(now: Micros): void;
  resumed(now: Micros): void;
  /** `packet`, queued on `channel`, goes to R2's MAC (again, if the MAC gave it back before). */
  handedOut(packet: QueuedPacket<DataPacket>, channel: number, now: Micros): void;
}

/** A packet on its way through R2: the packet and the channel queue it was in. */
interface InFlight {
  packet: QueuedPacket<DataPacket>;
  channel: number;
}

/** A move of R1, as the report lists them. */
export interface R1Change {
  atUs: Micros;
  channel: number;
}

/** What a router reports as it runs, beyond its counters. */
export type RouterEvent =
  | NodeEvent
  | { kind: 'r1-tuned'; channel: number; atUs: Micros }
  | { kind: 'r2-tuned'; channel: number | undefined; atUs: Micros }
  | { kind: 'reconfigured'; changed: string[]; atUs: Micros }
  | { kind: 'neighbour'; addr: NodeAddr; up: boolean; atUs: Micros }
  | { kind: 'vnf'; event: VnfEvent };

type AlarmName = 'core' | 'aodv' | 'prefix' | 'sched' | 'preempt' | 'vnf' | 'gateway';

/**
 * One Urban-X mesh router: the node core (sensing and the R1 channel
 * decision) under its sensing driver, multipath AODV on R3, the channel
 * scheduler of R2, the data plane (forwarding.ts), the VNFs (vnfs.ts) and
 * three MAC stations on the air medium. This class is the control plane
 * and the glue: it runs each core's actions and keeps one engine event per
 * core at that core's next deadline. The simulator runs it in virtual time,
 * the daemon in real time on a paced engine.
 */
export class MeshRouter {
  readonly addr: NodeAddr;
  readonly core: NodeCore;
  readonly aodv: MultipathAodv;
  /** Which router serves which IP prefix (PREFIX announcements on R3). */
  readonly prefixes: PrefixRoutes;
  /** Hosts' IPv4 and IPv6 packets over the mesh. */
  readonly ip: IpPlane;
  /** The gateway role (docs/gateway.md): clients' virtual queues in time slices, when gateway.enabled. */
  readonly gateway: GatewaySide;
  readonly sched: ChannelScheduler<DataPacket>;
  readonly sensing: SensingDriver;
  readonly r1: Station;
  readonly r2: Station;
  readonly r3: Station;
  /** R3's message authentication, when on: its counters are the routing's drops by reason. */
  readonly auth: R3Auth | undefined;

  /** Each neighbour's R1 channel, from its HELLOs. */
  private readonly neighbourR1 = new Map<NodeAddr, number>();
  private readonly alarms: Record<AlarmName, Alarm>;
  /** The sensing block: IQ samples in the iq model, window energies in the statistical one. */
  private iq: Float32Array | undefined;
  /** Where blocks read through a front-end go (the detector's own memory when it has some). */
  private blockBuffer: Float32Array | undefined;
  private energies: Float64Array | undefined;
  private readonly noise: Rng;
  private retuneUs: Micros;
  private readonly sensingOnR1: boolean;
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
  readonly counters = {
    byFlowTable: 0,
    vnfTaken: 0,
    originated: 0,
    delivered: 0,
    forwarded: 0,
    controlReceived: 0,
    malformedControl: 0,
    malformedData: 0,
    rerouted: 0,
    followedMove: 0,
    preempted: 0,
    sensingRounds: 0,
  };
  readonly r1History: R1Change[] = [];
  private readonly queueAverages = new QueueAverages();

  /** A flow table set after construction (the daemon's OpenFlow agent starts once the router runs). */
  forwarder: Forwarder | undefined;
  private readonly data: Forwarding;
  private readonly vnfs: VnfSide | undefined;

  constructor(
    private cfg: NodeConfig,
    private readonly p: RouterParts,
  ) {
    this.addr = cfg.node.id;
    this.auth = p.auth;
    const alarm = (): Alarm => new Alarm(p.engine);
    this.alarms = { vnf: alarm(), core: alarm(), aodv: alarm(), prefix: alarm(), sched: alarm(), preempt: alarm(), gateway: alarm() };
    this.retuneUs = cfg.switching.overheadUs;
    this.sensingOnR1 = cfg.sensing.radio === 'R1';
    this.core = new NodeCore(cfg, p.plan, this.retuneUs, p.startUs);
    this.sensing = new SensingDriver(this.core, this.sensingRadios());
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
    // A daemon's first sequence number is its clock's seconds: a router that restarts announces newer than before.
    this.prefixes = new PrefixRoutes(this.addr, p.rng.fork('prefixes'), prefixParams(cfg), Math.floor(p.engine.now() / US_PER_S));
    this.sched = new ChannelScheduler<DataPacket>(schedulerParams(cfg, p.plan.numbers, p.medium.sendWindow), p.engine.now());
    let toHost = p.toHost;
    this.setHostSide = (fn) => {
      toHost = fn;
    };
    this.ip = new IpPlane(
      {
        addr: this.addr,
        config: () => this.cfg,
        prefixes: this.prefixes,
        originate: (...a) => this.data.originate(...a),
        get toHost() {
          return toHost;
        },
      },
      p.engine.now(),
    );
    this.gateway = new GatewaySide(cfg.gateway, p.engine.now(), { enter: (...a) => this.data.enter(...a) });
    this.data = new Forwarding({
      addr: this.addr,
      config: () => this.cfg,
      now: () => p.engine.now(),
      at: (at, fn) => p.engine.at(at, fn),
      rng: p.rng,
      aodv: this.aodv,
      sched: this.sched,
      neighbourR1: this.neighbourR1,
      counters: this.counters,
      drops: this.drops,
      deliver: (h, payload, now) => (h.proto === 'ip4' || h.proto === 'ip6' ? this.ip.deliver(h, payload, now) : p.deliver(h, payload, now)),
      ip: this.ip,
      ...(p.onDrop ? { onDrop: p.onDrop } : {}),
      ...(p.impairments ? { impairments: p.impairments } : {}),
      ...(p.hostRoutes ? { hostRoutes: p.hostRoutes } : {}),
      ...(p.toWire ? { toWire: p.toWire } : {}),
      forwarder: () => this.forwarder ?? p.forwarder,
      ...(p.vnf ? { intercept: (h: DataHeader, payload: Uint8Array, now: Micros, decline: () => void) => this.vnfs!.intercept(h, payload, now, decline) } : {}),
      runAodv: (actions, now) => this.runAodv(actions, now),
      runSched: (actions, now) => this.runSched(actions, now),
      isDown: () => this.failed,
      admit: (...a) => this.gateway.admit(...a),
    });
    if (p.vnf) {
      const onEvent = p.onEvent;
      this.vnfs = new VnfSide({
        addr: this.addr,
        host: p.vnf,
        ip: {
          routerOf: (a) => this.prefixes.lookup(a),
          mtu: () => this.cfg.ip.mtu,
          toHost: (packet, now) => (toHost ? toHost(packet, now) : undefined),
        },
        netDiameter: () => this.cfg.routing.netDiameter,
        originate: (...a) => this.data.originate(...a),
        flowLabel: (...a) => this.data.flowLabel(...a),
        counters: this.counters,
        ...(onEvent ? { onEvent: (event: VnfEvent) => onEvent({ kind: 'vnf', event }) } : {}),
        rearm: () => this.rearm(),
      });
    }
    const at = p.position;
    const id = cfg.node.name;
    this.r1 = p.medium.addStation(
      { id: `${id}/R1`, node: this.addr, position: at, acceptsUnicast: true, acceptsBroadcast: false },
      { onReceive: (f, now) => this.receive(f, now), onSent: () => undefined },
    );
    // R2's station holds the scheduler's MAC window: the frame in service and those queued behind it.
    const r2Queue = Math.max(1, (p.medium.sendWindow ?? 1) - 1);
    this.r2 = p.medium.addStation(
      { id: `${id}/R2`, node: this.addr, position: at, acceptsUnicast: false, acceptsBroadcast: false, queueLimit: r2Queue },
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
    this.sensing.start(p.startUs);
    this.rearm();
  }

  // -------------------------------------------------------------------------
  // Data plane (forwarding.ts)

  /**
   * An application on this router sends `payload` to `dst`; a VNF speaking
   * for another end gives that end's address as `from` (the header's source).
   * `label`: the IPv6 flow label it marks the packets with (its QoS class).
   */
  originate(dst: NodeAddr, proto: DataProto, flow: number, seq: number, payload: Uint8Array, now: Micros, opts?: Parameters<Forwarding['originate']>[6]): void {
    // Passed on by name, not as a spread list: the arguments of every packet this router sends.
    this.data.originate(dst, proto, flow, seq, payload, now, opts);
  }

  /** Sets (or clears) the host side of the IP plane: the daemon's TUN, once it is open. */
  readonly setHostSide: (toHost: ((packet: Uint8Array, now: Micros) => void) | undefined) => void;

  /** An IP packet from the hosts this router serves (the TUN): into the mesh. `packet` may be a reused view; it is copied. */
  fromHost(packet: Uint8Array, now: Micros): void {
    if (this.failed) return;
    this.ip.fromHost(packet, now);
    this.rearm();
  }

  /** A data packet from a host on this router's wired link (this router is its gateway). */
  fromWire(header: DataHeader, payload: Uint8Array, now: Micros): void {
    if (this.failed) return;
    this.data.fromWire(header, payload, now);
    this.rearm();
  }

  /**
   * A gateway client's scan report (beacon strengths by router, dBm): the
   * dependence graph takes it, and the slices are computed again when it
   * changed. Returns whether it changed; false when the gateway is off.
   */
  gatewayReport(client: string, scan: ReadonlyMap<number, number>, now: Micros): boolean {
    const role = this.gateway.active;
    if (!role) return false;
    const changed = role.report(client, scan, now);
    this.rearm();
    return changed;
  }

  /** A dependence graph given whole to the gateway (edges between client ids): the slices are computed again. */
  gatewaySetGraph(graph: { edges: ReadonlyArray<{ a: string; b: string }> }, now: Micros): void {
    this.gateway.active?.setGraph(graph, now);
    this.rearm();
  }

  /** The flow table, most recently active first. */
  flows(): FlowEntry[] {
    return this.data.flows();
  }

  /** Data traffic per neighbour link (the OpenFlow agent's port and queue counters). */
  get links(): ReadonlyMap<NodeAddr, LinkCounters> {
    return this.data.links;
  }

  /** The VNFs of this router, running and ended, with their counters. */
  get vnfList(): VnfInfo[] | undefined {
    return this.vnfs?.list();
  }

  /** Sends what the VNFs emitted, each packet with the source address it speaks for (a sandbox's answer calls this). */
  vnfOutput(now: Micros): void {
    this.vnfs?.output(now);
  }

  private receive(frame: MacFrame, now: Micros): void {
    if (this.failed) return;
    const kind = packetKind(frame.payload);
    if (kind !== 'control') {
      this.data.receive(frame.src, frame.payload, kind === 'data', now);
      return;
    }
    let body = frame.payload;
    if (this.auth) {
      // Checked before parsing, so nothing of an unauthenticated message reaches a core (it is counted by reason).
      const opened = this.auth.open(body, frame.src, frame.dst);
      if (!opened.ok) return;
      body = opened.value;
    }
    const m = parseControlShared(body);
    if (!m.ok) {
      this.counters.malformedControl++;
      return;
    }
    this.counters.controlReceived++;
    // Any message from a neighbour tells AODV it is alive; a PREFIX is for the prefix routes.
    this.runAodv(this.aodv.handle(m.value, frame.src, now), now);
    if (m.value.type === 'prefix') this.runPrefixes(this.prefixes.handle(m.value, frame.src, now));
  }

  private runPrefixes(actions: PrefixAction[]): void {
    for (const a of actions) this.sendControl(a.to, a.msg);
    this.rearm();
  }

  /** Sends a control message on R3, with its authentication trailer when that is on. */
  private sendControl(to: NodeAddr, msg: ControlMsg): void {
    const body = encodeControl(msg);
    this.r3.send({ src: this.addr, dst: to, payload: this.auth ? this.auth.seal(body, this.addr, to) : body });
  }

  private r2Sent(frame: MacFrame, outcome: SendOutcome): void {
    const now = this.p.engine.now();
    const f = frame.tag as InFlight;
    if (!outcome.ok && outcome.reason === 'aborted') {
      // Aborted (a retune or a hold cut it): if a sensing round waited for R2's exchange to end, R2 leaves once it holds nothing.
      if (this.leaveAfterExchange && this.r2.idle) {
        this.leaveAfterExchange = false;
        this.r2.retune(undefined, 0);
      }
      this.sched.requeueFront(f.channel, f.packet);
      this.rearm();
      return;
    }
    const next = this.data.sent(f.packet, f.channel, outcome, now);
    if (next) this.runSched(this.sched.txDone(now, f.packet), now);
    this.exchangeOver(!next);
  }

  /**
   * One of R2's exchanges ended: if a sensing round waits for them, R2 leaves
   * once it holds nothing. Then the alarms are set again, unless `runSched`
   * has just done it and nothing changed since (a third of all rearms were
   * that one, each finding every alarm where it was).
   */
  private exchangeOver(rearm: boolean): void {
    if (this.leaveAfterExchange && this.r2.idle) {
      this.leaveAfterExchange = false;
      this.r2.retune(undefined, 0);
      rearm = true;
    }
    if (rearm) this.rearm();
  }

  // -------------------------------------------------------------------------
  // Cores' actions

  private runAodv(actions: AodvAction[], now: Micros): void {
    for (let i = 0; i < actions.length; i++) {
      const a = actions[i]!;
      switch (a.kind) {
        case 'send':
          this.sendControl(a.to, a.msg);
          break;
        case 'route-found':
          this.data.release(a.dst, now);
          break;
        case 'route-failed':
          this.data.discard(a.dst);
          break;
        case 'hello-heard': {
          const ch = a.hello.r1Channel;
          const before = this.neighbourR1.get(a.from);
          if (ch > 0 && this.p.plan.has(ch)) {
            this.neighbourR1.set(a.from, ch);
            this.core.neighbourChannel(String(a.from), ch);
            if (before !== ch) this.runSched(this.sched.rechannel(a.from, ch, now), now);
            // Packets that waited to learn its channel go now.
            this.data.channelKnown(a.from, now);
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
          this.data.reroute(this.sched.removeNextHop(a.addr, now), 'route-broken', now);
          // Packets that waited for its channel take another path, or none.
          this.data.channelKnown(a.addr, now);
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

  private runSched(actions: SchedAction<DataPacket>[], _now: Micros): void {
    for (let i = 0; i < actions.length; i++) {
      const a = actions[i]!;
      switch (a.kind) {
        case 'tune':
          this.p.r2Observer?.tuned(a.channel, a.readyUs, this.p.engine.now());
          this.r2.retune(a.channel, this.retuneUs);
          this.p.onEvent?.({ kind: 'r2-tuned', channel: a.channel, atUs: this.p.engine.now() });
          break;
        case 'transmit': {
          // The action carries the packet and its channel: it is the frame's tag (no object of its own).
          const tag: InFlight = a;
          this.p.r2Observer?.handedOut(a.packet, a.channel, this.p.engine.now());
          if (!this.r2.send({ src: this.addr, dst: a.packet.nextHop, payload: a.packet.item.bytes, tag })) {
            // The radio refused it (its queue is full; the MAC window is meant to keep it from that):
            // a drop, and the packet's place in the window is free again.
            this.data.dropped(a.packet, 'queue-full');
            this.runSched(this.sched.txDone(this.p.engine.now(), a.packet), this.p.engine.now());
          }
          break;
        }
        case 'drop':
          // Counted by the scheduler itself; the link's queue and the flow hear of it.
          this.data.dropped(a.packet, a.reason);
          break;
      }
    }
    this.rearm();
  }

  /** The node core's radios on the air medium: R2 (or R1) leaves its channel for a round, and senses the band at once. */
  private sensingRadios(): SensingRadios {
    return {
      now: () => this.p.engine.now(),
      at: (at, fn) => {
        this.p.engine.at(at, (now) => {
          fn(now);
          this.rearm();
        });
      },
      pauseTx: (_round, now) => {
        // The sensing radio leaves its data channel for the round. Sensing on
        // R2 (the seeds' way) stops data transmission; sensing on R1 stops reception.
        this.sensingRound = true;
        if (this.sensingOnR1) this.r1.retune(undefined, 0);
        else {
          this.p.r2Observer?.paused(now);
          this.runSched(this.sched.pause(now), now);
          // A frame already on the air (or awaiting its ACK) finishes its
          // exchange first: cutting it would send it again later under a new
          // MAC sequence number, and the receiver would take it twice. The
          // frames queued behind it (a MAC window) come back at once.
          if ((this.r2.serviceAttempts ?? 0) > 0) {
            this.leaveAfterExchange = true;
            this.r2.hold();
          } else this.r2.retune(undefined, 0);
        }
      },
      resumeTx: (_round, now) => {
        this.sensingRound = false;
        this.leaveAfterExchange = false;
        if (this.sensingOnR1) {
          if (this.core.r1 !== undefined) this.r1.retune(this.core.r1, this.retuneUs);
        } else {
          this.p.r2Observer?.resumed(now);
          this.runSched(this.sched.resume(now), now);
        }
      },
      capture: (v) => {
        const fe = this.p.radioFrontends?.[this.sensingOnR1 ? 'R1' : 'R2'];
        return fe ? this.senseThrough(fe, v) : this.sense(v);
      },
      enter: <T>(fn: () => T): T => {
        const run = (): T => {
          const r = fn();
          this.rearm();
          return r;
        };
        return this.p.enter ? this.p.enter(run) : run();
      },
      tuneR1: (channel, now) => this.tuneR1(channel, now),
      event: (e) => {
        if (e.kind === 'sensing-round') this.counters.sensingRounds++;
        this.p.onEvent?.(e);
      },
    };
  }

  get config(): NodeConfig {
    return this.cfg;
  }

  /**
   * Takes a new configuration live: the sensing schedule, the channel
   * decision, AODV's timers, R2's switching, the detector's threshold and
   * the gateway role (a new one when its section changed).
   * The caller has validated it (schema, and only fields a running router
   * takes: the schema's x-live fields).
   */
  reconfigure(cfg: NodeConfig, changed: string[], now: Micros): void {
    this.core.reconfigure(cfg, now);
    this.aodv.setParams(aodvParams(cfg), now);
    this.prefixes.setParams(prefixParams(cfg), now);
    this.p.detector.setThreshold(cfg.sensing.ccaThresholdDbm);
    this.retuneUs = cfg.switching.overheadUs;
    this.cfg = cfg;
    this.runSched(this.sched.setParams(schedulerParams(cfg, this.p.plan.numbers, this.p.medium.sendWindow), now), now);
    this.data.learnLabels(cfg);
    if (changed.some((c) => c === 'gateway' || c.startsWith('gateway.'))) this.gateway.reconfigure(cfg.gateway, now);
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

  /** A visit of the energy detector, taken at once: the band's IQ over the capture, after the retune. */
  private sense(v: Visit): ChannelObservation {
    const radio = this.sensingOnR1 ? this.cfg.radios.R1 : this.cfg.radios.R2;
    const centerHz = this.p.plan.get(v.channel).centerHz;
    const fromUs = v.startUs + this.retuneUs;
    if (this.p.sensingModel === 'statistical') {
      const windows = Math.floor(SENSE_BLOCK_SAMPLES / this.p.detector.windowSamples(radio.sampleRateHz));
      if (!this.energies || this.energies.length < windows) this.energies = new Float64Array(windows);
      const tally = senseBandStatistical(this.p.band, this.p.detector, radio, centerHz, fromUs, v.captureUs, SENSE_BLOCK_SAMPLES, this.energies, this.noise);
      return tally.observation(v.channel, v.endUs);
    }
    this.iq ??= new Float32Array(2 * SENSE_BLOCK_SAMPLES);
    const tap = this.p.iqTap;
    const seen = senseBand(this.p.band, this.p.detector, radio, centerHz, fromUs, v.captureUs, this.iq, this.noise, tap && ((b) => tap.block(v, b)));
    tap?.visitEnd(v, v.endUs);
    return seen.observation(v.channel, v.endUs);
  }

  /**
   * A visit through the sensing radio's own front-end (see
   * `RouterParts.radioFrontends`), once the station on it has let go of it.
   */
  private async senseThrough(fe: Frontend, v: Visit): Promise<ChannelObservation> {
    await (this.sensingOnR1 ? this.r1 : this.r2).released?.();
    this.blockBuffer ??= this.p.detector.allocateBlock(SENSE_BLOCK_SAMPLES) ?? new Float32Array(2 * SENSE_BLOCK_SAMPLES);
    return captureVisit(fe, v, {
      plan: this.p.plan,
      scheduler: this.p.engine,
      detector: this.p.detector,
      maxBlock: SENSE_BLOCK_SAMPLES,
      buffer: this.blockBuffer,
      tap: this.p.iqTap,
    });
  }

  // -------------------------------------------------------------------------
  // What the cores ask of the router

  private helloContent(): { r1Channel: number; workload: HelloWorkload[]; neighbours: HelloNeighbour[] } {
    return {
      r1Channel: this.core.r1 ?? 0,
      neighbours: this.neighbourChannels()
        .slice(0, 255)
        .map((n) => ({ addr: n.addr, r1Channel: n.r1Channel })),
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
    const a = this.alarms;
    const run = this.alarmRuns;
    if (this.vnfs) a.vnf.set(this.vnfs.nextDeadline(), run.vnf);
    a.core.set(this.sensing.nextDeadline(), run.core);
    a.aodv.set(this.aodv.nextDeadline(), run.aodv);
    a.prefix.set(this.prefixes.nextDeadline(), run.prefix);
    a.sched.set(this.sched.nextDeadline(), run.sched);
    a.gateway.set(this.gateway.nextDeadline(), run.gateway);
    const s = this.sched;
    const end = s.dwellEndUs;
    const check = s.handedOut && end !== undefined && end !== this.preemptCheckedFor && s.othersWaiting();
    // The check remembers the dwell end it was armed for (an alarm left in place keeps its own).
    if (a.preempt.set(check ? end : undefined, run.preempt)) this.preemptArmedFor = end;
  }

  /** What each alarm runs (made once: rearm runs after every input), each followed by a rearm. */
  private readonly alarmRuns: Record<AlarmName, (t: Micros) => void> = {
    vnf: (t) => {
      this.vnfs?.tick(t);
      this.rearm();
    },
    core: (t) => {
      void this.sensing.tick(t);
      this.rearm();
    },
    // runAodv, runPrefixes and runSched set the alarms again themselves.
    aodv: (t) => this.runAodv(this.aodv.tick(t), t),
    prefix: (t) => this.runPrefixes(this.prefixes.tick(t)),
    sched: (t) => this.runSched(this.sched.tick(t), t),
    gateway: (t) => {
      this.gateway.tick(t);
      this.rearm();
    },
    preempt: () => {
      this.preemptCheckedFor = this.preemptArmedFor;
      this.preempt();
      this.rearm();
    },
  };
  private preemptArmedFor: Micros | undefined;

  /**
   * The dwell is over, other channels wait, and R2's MAC has not yet started
   * the packet it holds: its channel is held busy (a PN burst that the MAC's
   * carrier sense defers to). The packet goes back to its queue so that R2 can
   * serve the others instead of waiting out the burst. When the MAC holds a
   * window of packets and has started the first, the ones behind it go back
   * (a hold): the switch then waits for one exchange only.
   */
  private preempt(): void {
    const s = this.sched;
    if (!s.handedOut || !s.othersWaiting()) return;
    const attempts = this.r2.serviceAttempts;
    if (attempts === 0) {
      this.counters.preempted++;
      this.r2.retune(this.r2.channel, 0);
    } else if (attempts !== undefined && s.inFlight > 1) this.r2.hold();
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
    void this.sensing.stop();
    for (const a of Object.values(this.alarms)) a.cancel();
    for (const st of [this.r1, this.r2, this.r3]) st.retune(undefined, 0);
    this.data.failAll(now);
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
    this.queueAverages.sample(this.sched);
  }

  queueStats(): Array<{ channel: number; meanPackets: number; maxPackets: number }> {
    return this.queueAverages.stats();
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

/**
 * Time averages of R2's channel queues, sampled on a fixed period. The
 * queues can only have changed when the scheduler took an input: until then
 * a sample only counts one more period of the lengths last read, and the sums
 * take them in one step when they change or are read. Sums and maxima are
 * kept per channel, also for channels the scheduler no longer has.
 */
class QueueAverages {
  private samples = 0;
  private channels: readonly number[] = [];
  private lengths = new Int32Array(0);
  private sums = new Float64Array(0);
  private maxes = new Int32Array(0);
  /** Channels of an earlier channel list: their sums and maxima. */
  private readonly retired = new Map<number, { sum: number; max: number }>();
  /** The scheduler's input count at the last read, and the periods the lengths read then have stood. */
  private inputs = -1;
  private periods = 0;

  sample(sched: ChannelScheduler<DataPacket>): void {
    this.samples++;
    const inputs = sched.inputs;
    if (inputs === this.inputs) {
      this.periods++;
      return;
    }
    this.settle();
    if (sched.queueChannels !== this.channels) this.relist(sched.queueChannels);
    sched.readQueueLengths(this.lengths);
    for (let i = 0; i < this.lengths.length; i++) if (this.lengths[i]! > this.maxes[i]!) this.maxes[i] = this.lengths[i]!;
    this.inputs = inputs;
    this.periods = 1;
  }

  stats(): Array<{ channel: number; meanPackets: number; maxPackets: number }> {
    this.settle();
    const all = new Map(this.retired);
    this.channels.forEach((channel, i) => all.set(channel, { sum: this.sums[i]!, max: this.maxes[i]! }));
    return [...all]
      .sort((a, b) => a[0] - b[0])
      .filter(([, a]) => a.max > 0)
      .map(([channel, a]) => ({ channel, meanPackets: a.sum / Math.max(1, this.samples), maxPackets: a.max }));
  }

  private settle(): void {
    if (this.periods === 0) return;
    for (let i = 0; i < this.lengths.length; i++) this.sums[i]! += this.lengths[i]! * this.periods;
    this.periods = 0;
  }

  /** The scheduler's channels changed: what was kept per channel follows its channel. */
  private relist(channels: readonly number[]): void {
    this.channels.forEach((channel, i) => this.retired.set(channel, { sum: this.sums[i]!, max: this.maxes[i]! }));
    this.channels = channels;
    this.lengths = new Int32Array(channels.length);
    this.sums = new Float64Array(channels.length);
    this.maxes = new Int32Array(channels.length);
    channels.forEach((channel, i) => {
      const kept = this.retired.get(channel);
      if (!kept) return;
      this.sums[i] = kept.sum;
      this.maxes[i] = kept.max;
      this.retired.delete(channel);
    });
  }
}
