import type { EmulatedBand } from '../../radio/sim/band.js';
import type { NodeConfig, TrafficFlowConfig } from '../config/types.js';
import { ConfigError } from '../core/errors.js';
import { PacedEngine } from '../core/paced.js';
import { Rng } from '../core/rng.js';
import { ScaledClock, seconds, US_PER_MS, US_PER_S, type Micros } from '../core/time.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import { chooseBackend } from '../sensing/backend.js';
import { cpuBackend } from '../sensing/energy.js';
import { EnergyDetector } from '../sensing/detector.js';
import type { TcpConnection } from '../tcp/connection.js';
import { CbrSource, FlowSink, runCbr, type FlowRecord } from '../traffic/cbr.js';
import { tcpFlowSpec } from '../config/scenario.js';
import { BulkTcp, type TcpFlowRecord } from '../traffic/bulk-tcp.js';
import { parseFlow } from '../vnf/flow.js';
import { VNF_TYPES } from '../vnf/index.js';
import { SandboxPool } from '../vnf/pool.js';
import { startOpenFlow, type OpenFlowRouter, type OpenFlowSide } from './openflow.js';
import type { AgentVnfs } from '../openflow/agent.js';
import type { FlowPattern, VnfInfo } from '../vnf/types.js';
import { logEvent } from './node.js';
import { joinMedium, openPhyAir, type MeshAir } from './mesh-air.js';
import type { Logger } from '../core/log.js';
import { MeshRouter, type RouterEvent } from '../router/router.js';
import { queueName, spectrumView, type FlowView, type QueueView, type RouterStatus, type RouterView, type SpectrumView } from '../router/view.js';
import { meshSwitchState } from '../router/openflow.js';
import { monitorTaps } from './monitor-taps.js';
import { LiveConfigView } from './live-view.js';
import { GatewayScanListener } from './gateway-scan.js';
import { IpSide } from './ip-side.js';
import { loadR3Keys } from '../config/r3-keys.js';
import { keysShown, R3Auth, type R3Keys } from '../wire/r3-auth.js';
import { describeKeys, reloadR3Keys } from './r3-keys-reload.js';
import type { GatewayState } from '../gateway/role.js';

/** What a router's test traffic did, as its status shows it. */
export interface TrafficView {
  id: number;
  kind: TrafficFlowConfig['kind'];
  role: 'source' | 'sink';
  src: number;
  dst: number;
  /** Packets sent (UDP source) or segments carrying data (TCP). */
  sent: number;
  /** Packets received (UDP sink). */
  received: number;
  /** Payload bytes sent (UDP source) or that arrived (UDP sink); TCP: bytes the sink acknowledged (source) or read in order and checked (sink). */
  bytes: number;
  /** The rate of `bytes` over the last few seconds, Mbps: sent (UDP source), acknowledged (TCP source) or received (sink). */
  recentMbps: number;
  /** TCP: bytes that did not match the source's stream. */
  corruptBytes?: number;
  state?: string;
}

/**
 * A router daemon on the emulated air medium: it joins the medium process,
 * senses the same PN bursts the medium runs (shared seed and epoch), and
 * runs the whole router (sensing, the R1 decision, multipath AODV on R3,
 * R2's channel scheduler, sandboxed VNFs, test traffic) in real time on a
 * paced event engine: the very composition the simulator runs in virtual
 * time. It is the RouterView the control API and the monitor read.
 */
export class MeshNode extends LiveConfigView implements RouterView {
  readonly id: number;
  readonly name: string;
  protected readonly startedUs: Micros;
  private r2Switches = 0;
  private lastR1: { atUs: Micros; reason: string } | undefined;
  private readonly udpSources = new Map<number, CbrSource>();
  private readonly udpSinks = new Map<number, FlowSink>();
  private readonly tcpFlows = new Map<number, TcpFlowRecord>();
  private readonly rate = new Map<number, Array<{ atUs: Micros; bytes: number }>>();
  private readonly refresher: NodeJS.Timeout;
  private stopped = false;

  private constructor(
    cfg: NodeConfig,
    log: Logger,
    private readonly paced: PacedEngine,
    private readonly air: MeshAir,
    readonly router: MeshRouter,
    private readonly pool: SandboxPool,
    private readonly tcp: BulkTcp,
    private readonly band: EmulatedBand,
  ) {
    super(cfg, log);
    this.id = cfg.node.id;
    this.name = cfg.node.name;
    this.startedUs = paced.now();
    let tick = 0;
    this.refresher = setInterval(() => {
      void this.pool.refreshAll();
      this.sampleRates();
      if (++tick % 5 === 0) this.logTraffic();
    }, 1000);
  }

  /**
   * Joins the medium at `cfg.sim.medium.endpoint` and starts the router.
   * With `pcap`, what its radios hear and send goes there as pcapng
   * (docs/pcap.md), stamped with the router's clock; the medium does not
   * say the signal, so the radiotap headers carry none.
   */
  static async start(cfg: NodeConfig, log: Logger, opts: { pcap?: (bytes: Uint8Array) => void } = {}): Promise<MeshNode> {
    // The backend probe keeps the CPU busy for a while: done before joining, so that the medium never waits on it.
    // Without the capability a TUN needs, refuse before anything starts.
    IpSide.check(cfg);
    // R3's keys are read before the router joins the medium: a missing or bad key file stops it here (the error quotes no key).
    const keys = cfg.routing.auth.keyFile !== '' ? loadR3Keys(cfg.routing.auth) : undefined;
    // A router that does not sense (channel.cognitive false) runs no detector: no probe for one either.
    const choice = cfg.channel.cognitive
      ? await chooseBackend(cfg.sensing.backend)
      : { backend: cpuBackend, reason: 'none probed: this router does not sense (channel.cognitive false)', probe: undefined };
    log.info({ event: 'sensing-backend', backend: choice.backend.name, probe: choice.probe }, `energy detector: ${choice.reason}`);
    // A router over an emulated PHY may run in slow motion (phy.timeScale): its whole clock does.
    const paced = new PacedEngine(cfg.phy.enabled && cfg.phy.timeScale !== 1 ? new ScaledClock(cfg.phy.timeScale) : undefined);
    const air = cfg.sim.medium.endpoint !== '' ? await joinMedium(cfg, log, paced, opts.pcap) : await openPhyAir(cfg, log, paced);
    const { host, band, plan } = air;
    const m = cfg.sim.medium;
    const detector = new EnergyDetector(cfg.sensing, choice.backend);
    // The paced engine's time is the epoch's: the recordings' datetimes need no offset.
    const taps = monitorTaps(cfg, { now: () => paced.now(), epochUs: 0, log, emit: (t) => nodeRef.node?.emitTelemetry(t) });
    const pool = new SandboxPool(VNF_TYPES, cfg.node.seed, { memoryMb: cfg.vnf.memoryMb, callBudgetMs: cfg.vnf.callBudgetMs });
    const rng = Rng.fromSeed(cfg.node.seed);
    paced.start();
    // The router reports from its construction on: events before the node exists wait for it.
    const nodeRef: { node?: MeshNode } = {};
    const early: RouterEvent[] = [];
    const routerRef: { r?: MeshRouter } = {};
    const labels = new Map(cfg.traffic.flows.map((f) => [f.id, f.label]));
    const tcp = new BulkTcp({
      engine: paced.engine,
      rng: rng.fork('tcp'),
      // Both directions of a TCP flow carry its label.
      originate: (from, to, flow, seq, bytes, now, room) => routerRef.r!.originate(to, 'tcp', flow, seq, bytes, now, { label: labels.get(flow) ?? 0, room }),
      local: (addr) => addr === cfg.node.id,
    });
    const router = paced.inject(
      (now) =>
        new MeshRouter(cfg, {
          engine: paced.engine,
          medium: host,
          band,
          plan,
          detector,
          rng: rng.fork('router'),
          position: { xM: m.xM, yM: m.yM },
          controlChannelPn: air.controlChannelPn,
          // The index is the boot time in seconds: a restarted router's messages are newer than any it sent before.
          ...(keys ? { auth: new R3Auth(keys, Math.floor(now / US_PER_S)) } : {}),
          startUs: now + 100 * US_PER_MS,
          deliver: (h, payload, at) => nodeRef.node?.deliver(h.proto, h.src, h.flow, h, payload, at),
          vnf: pool,
          onEvent: (e) => (nodeRef.node ? nodeRef.node.onRouterEvent(e) : early.push(e)),
          ...(taps.tap ? { iqTap: taps.tap } : {}),
          ...(air.radioFrontends ? { radioFrontends: air.radioFrontends } : {}),
          enter: (fn) => paced.inject(fn),
        }),
    );
    routerRef.r = router;
    const node = new MeshNode(cfg, log, paced, air, router, pool, tcp, band);
    node.taps = taps;
    nodeRef.node = node;
    pool.enter = (fn) => paced.inject(() => fn());
    pool.onOutput = () => paced.inject((now) => router.vnfOutput(now));
    for (const e of early) node.onRouterEvent(e);
    log.info(
      { event: 'node-start', node: cfg.node, medium: m.endpoint, position: { xM: m.xM, yM: m.yM }, plan: plan.name },
      `router ${cfg.node.name} (id ${cfg.node.id}) up on ${air.describe}, at (${m.xM}, ${m.yM}) m: sensing ${cfg.sensing.durationMs} ms every ${cfg.sensing.periodMs} ms, R3 on channel ${cfg.radios.R3.channel}${keys ? `, its messages authenticated (signed with key ${keys.sendKeyId} of ${keys.keys.size})` : ''}`,
    );
    if (!keys)
      log.warn(
        { event: 'r3-unauthenticated' },
        'R3 is not authenticated: any station on the air can forge its routes. `cogmesh keygen --r3-key 1 --out FILE` makes a key file for routing.auth.keyFile (docs/wire.md); the testbed makes one for its run',
      );
    try {
      for (const [i, v] of cfg.vnf.instances.entries()) await node.startVnf(v.type, parseFlow(v.flow, `/vnf/instances/${i}/flow`), v.params);
    } catch (e) {
      await node.stop();
      throw e;
    }
    if (cfg.ip.enabled) {
      try {
        node.ipSide = await IpSide.open(cfg, router, paced, log);
      } catch (e) {
        await node.stop();
        throw e;
      }
    }
    try {
      node.gatewayScan = await GatewayScanListener.open(cfg, router, paced, log);
    } catch (e) {
      await node.stop();
      throw e;
    }
    try {
      // The controller role first: this router's own agent may be one of the routers connecting to it.
      await node.startController();
    } catch (e) {
      await node.stop();
      throw e;
    }
    if (cfg.openflow.mode !== 'off') {
      try {
        node.openflow = await startOpenFlow(cfg, node.openFlowRouter(), log, process.env.npm_package_version ?? '0.1.0', node.controllerVnfs());
        router.forwarder = node.openflow.forwarder;
      } catch (e) {
        await node.stop();
        throw e;
      }
    }
    node.startTraffic();
    return node;
  }

  /** The router's OpenFlow side, when openflow.mode is not off. */
  openflow: OpenFlowSide | undefined;
  /** The TUN to the router PC's kernel, when ip.enabled. */
  ipSide: IpSide | undefined;
  /** The listener for the gateway clients' scan reports (gateway.scan.enabled). */
  gatewayScan: GatewayScanListener | undefined;

  /**
   * The VNFs a controller places through the OpenFlow agent: one instance
   * per (type, flow ref). A start for a ref that runs on another flow (a
   * controller that started over and numbers its flows again) replaces it.
   */
  private controllerVnfs(): AgentVnfs {
    const placed = new Map<string, { id: number; flow: string }>();
    const stop = async (key: string): Promise<void> => {
      const was = placed.get(key);
      placed.delete(key);
      if (was !== undefined) await this.stopVnf(was.id).catch(() => undefined);
    };
    return {
      start: async (type, flow, params, ref) => {
        const key = `${type}/${ref}`;
        if (placed.get(key)?.flow === flow) return;
        await stop(key);
        const info = await this.startVnf(type, parseFlow(flow, '/flow'), params);
        placed.set(key, { id: info.id, flow });
      },
      stop: async (type, ref) => stop(`${type}/${ref}`),
    };
  }

  /** What the OpenFlow agent reads of this router, at the router's time. */
  private openFlowRouter(): OpenFlowRouter {
    return { ...meshSwitchState(this.router), now: () => this.paced.now(), enter: (fn) => this.paced.inject(fn) };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.refresher);
    await this.stopTaps();
    await this.ipSide?.close();
    this.gatewayScan?.close();
    await this.openflow?.stop();
    await this.stopController();
    await this.pool.close(this.paced.now());
    this.paced.stop();
    await this.air.close();
    this.hub.clear();
  }

  // ---------------------------------------------------------------------------
  // Traffic

  private startTraffic(): void {
    const at0 = this.startedUs;
    // Start-up (VNFs, the medium) may take longer than a flow's start time: a flow never starts in the past.
    const now = this.paced.now();
    for (const f of this.cfg.traffic.flows) {
      const startUs = Math.max(now, at0 + seconds(f.startS));
      const endUs = f.stopS > 0 ? at0 + seconds(f.stopS) : Number.MAX_SAFE_INTEGER;
      if (endUs <= startUs) continue;
      if (f.kind === 'udp-cbr') {
        const rec: FlowRecord = {
          flow: f.id,
          src: f.src,
          dst: f.dst,
          kind: 'udp-cbr',
          offeredMbps: f.rateMbps,
          startUs,
          endUs,
          sent: 0,
          received: 0,
          duplicates: 0,
          receivedBytes: 0,
          delaysUs: [],
        };
        // A daemon runs until stopped: its sinks remember a window of packets, not all of them.
        if (f.dst === this.id) this.udpSinks.set(f.id, new FlowSink({ ...rec }, 8192));
        if (f.src !== this.id) continue;
        const src = new CbrSource(rec, f.packetBytes, (flow, seq, payload, now) =>
          this.router.originate(f.dst, 'udp', flow, seq, payload, now, { label: f.label }),
        );
        this.udpSources.set(f.id, src);
        this.paced.inject(() => runCbr(this.paced.engine, src, startUs, () => this.stopped));
      } else if (f.src === this.id || f.dst === this.id) {
        this.paced.inject(() => this.tcpFlows.set(f.id, this.tcp.addFlow(f.id, tcpFlowSpec(f.variant, f.port), f.src, f.dst, startUs, endUs)));
      }
    }
  }

  private deliver(proto: string, _src: number, flow: number, h: Parameters<FlowSink['receive']>[0], payload: Uint8Array, now: Micros): void {
    if (proto === 'tcp') this.tcp.deliver(this.id, h, payload, now);
    else this.udpSinks.get(flow)?.receive(h, payload, now);
  }

  /** Keeps a few seconds of byte counts per flow for the recent rate. */
  private sampleRates(): void {
    const now = this.paced.now();
    for (const t of this.traffic()) {
      let s = this.rate.get(t.id);
      if (!s) this.rate.set(t.id, (s = []));
      s.push({ atUs: now, bytes: t.bytes });
      while (s.length > 6) s.shift();
    }
  }

  /** One log line per flow this router sources or sinks, every few seconds. */
  private logTraffic(): void {
    for (const t of this.traffic()) this.log.info({ event: 'traffic', flow: t }, trafficLine(t));
  }

  private traffic(): TrafficView[] {
    const out: TrafficView[] = [];
    for (const f of this.cfg.traffic.flows) {
      if (f.src !== this.id && f.dst !== this.id) continue;
      const role = f.src === this.id ? 'source' : 'sink';
      const base = { id: f.id, kind: f.kind, role, src: f.src, dst: f.dst } as const;
      if (f.kind === 'udp-cbr') {
        const src = this.udpSources.get(f.id)?.record;
        const sink = this.udpSinks.get(f.id)?.record;
        const bytes = role === 'source' ? (src?.sent ?? 0) * f.packetBytes : (sink?.receivedBytes ?? 0);
        out.push({ ...base, sent: src?.sent ?? 0, received: sink?.received ?? 0, bytes, recentMbps: this.recentMbps(f.id) });
      } else {
        const r = this.tcpFlows.get(f.id);
        const conn = role === 'source' ? r?.sender : r?.receiver;
        out.push({
          ...base,
          sent: r?.dataPackets ?? 0,
          received: 0,
          // The sink's goodput is counted where it reads; the source sees its progress in what the sink acknowledged.
          bytes: role === 'source' ? ackedBytes(conn) : (r?.goodputBytes ?? 0),
          recentMbps: this.recentMbps(f.id),
          corruptBytes: r?.corruptBytes ?? 0,
          state: conn?.state ?? 'waiting',
        });
      }
    }
    return out;
  }

  private recentMbps(id: number): number {
    const s = this.rate.get(id);
    if (!s || s.length < 2) return 0;
    const a = s[0]!;
    const b = s[s.length - 1]!;
    return b.atUs > a.atUs ? ((b.bytes - a.bytes) * 8) / (b.atUs - a.atUs) : 0;
  }

  // ---------------------------------------------------------------------------
  // Events

  private onRouterEvent(e: RouterEvent): void {
    const now = this.paced.now();
    switch (e.kind) {
      case 'sensing-round':
        logEvent(this.log, e);
        this.hub.emit({ kind: 'spectrum', atUs: e.endUs, spectrum: spectrumView(this.router.core.plan, e) });
        return;
      case 'r1-decision':
        logEvent(this.log, e);
        if (e.decision.changed) this.lastR1 = { atUs: e.decision.atUs, reason: e.decision.reason };
        this.hub.emit({ kind: 'r1', atUs: e.decision.atUs, channel: e.decision.channel, changed: e.decision.changed, reason: e.decision.reason });
        return;
      case 'r1-tuned':
        this.log.debug({ event: 'r1-tuned', channel: e.channel }, `R1 tuned to channel ${e.channel}`);
        return;
      case 'r2-tuned':
        this.r2Switches++;
        this.hub.emit({ kind: 'r2', atUs: e.atUs, channel: e.channel });
        return;
      case 'reconfigured':
        // The view itself reports the new configuration and its version.
        return;
      case 'neighbour':
        this.log.info({ event: e.up ? 'neighbour-up' : 'neighbour-lost', addr: e.addr }, `neighbour ${e.addr} ${e.up ? 'heard' : 'lost'}`);
        this.hub.emit({ kind: 'neighbour', atUs: e.atUs, addr: e.addr, up: e.up });
        return;
      case 'vnf':
        this.log.info(
          { event: `vnf-${e.event.kind}`, vnf: e.event },
          `VNF ${e.event.id} (${e.event.type}) ${e.event.kind}${e.event.kind === 'failed' ? `: ${e.event.error}` : ''}`,
        );
        this.hub.emit({ kind: 'vnf', atUs: now, event: e.event });
        return;
    }
  }

  // ---------------------------------------------------------------------------
  // RouterView

  now(): Micros {
    return this.paced.now();
  }

  status(): RouterStatus & { pid: number; traffic: TrafficView[]; medium: Record<string, unknown>; lagMaxMs: number; ip: Record<string, unknown> } {
    const r = this.router;
    const now = this.paced.now();
    const latest = r.core.latestDecision;
    return {
      ...this.statusHead(now),
      mesh: true,
      r1: { channel: r.core.r1, since: this.lastR1?.atUs ?? r.r1History.at(-1)?.atUs, reason: latest?.reason, moves: r.r1History.length },
      r2: { channel: r.r2.channel, dwellEndUs: r.sched.dwellEndUs, switches: this.r2Switches },
      r3: { channel: this.cfg.radios.R3.channel, ...(r.auth ? { auth: { ...r.auth.counters }, keys: r.auth.keysInForce } : {}) },
      sensing: {
        rounds: r.counters.sensingRounds,
        durationMs: this.cfg.sensing.durationMs,
        periodMs: this.cfg.sensing.periodMs,
        ccaThresholdDbm: this.cfg.sensing.ccaThresholdDbm,
        transmitPaused: r.transmitPaused,
      },
      counters: { ...r.counters },
      drops: { ...r.drops },
      routing: { ...r.aodv.counters },
      ip: {
        tun: this.ipSide ? { name: this.ipSide.name, ...this.ipSide.counters } : undefined,
        wan: this.ipSide?.wan?.counters,
        ...r.ip.counters,
        prefixes: r.prefixes.entries().map((e) => ({ ...e, expiresUs: e.router === this.id ? undefined : e.expiresUs })),
      },
      traffic: this.traffic(),
      medium: this.air.counters(),
      lagMaxMs: this.paced.lag.maxUs / 1000,
    };
  }

  /**
   * A set of routing.auth (the key file or the send key id) reads the key
   * file first: one that is refused (ConfigError) refuses the whole set, and
   * nothing changes. Turning authentication on or off never gets here
   * (restartOnlyIssues refuses it).
   */
  protected applyLive(checked: NodeConfig, changed: string[]): void {
    const auth = this.router.auth;
    let keys: R3Keys | undefined;
    try {
      if (auth && changed.some((p) => p.startsWith('routing.auth.'))) keys = loadR3Keys(checked.routing.auth);
    } catch (e) {
      throw e instanceof ConfigError ? new ConfigError(e.issues, 'set') : e;
    }
    this.paced.inject((now) => {
      if (keys && auth) {
        auth.setKeys(keys);
        this.log.info(
          { event: 'r3-keys-reloaded', why: 'set', keyFile: checked.routing.auth.keyFile, inForce: keysShown(keys) },
          `set: R3 keys from ${checked.routing.auth.keyFile} in force: signing with ${describeKeys(keysShown(keys))}`,
        );
      }
      this.router.reconfigure(checked, changed, now);
      if (changed.some((c) => c === 'gateway' || c.startsWith('gateway.'))) this.gatewayScan?.reconfigure(checked, now);
    });
  }

  /**
   * Reads the key file again and puts it in force (SIGHUP: a key rotation
   * without a restart), or refuses it whole, logged, keeping the keys in
   * force. Returns whether the new keys were taken.
   */
  reloadKeys(why = 'SIGHUP'): boolean {
    const auth = this.router.auth;
    if (!auth) {
      this.log.warn({ event: 'r3-keys-refused', why }, `${why}: R3 authentication is off (routing.auth.keyFile is empty): no keys to reload`);
      return false;
    }
    return reloadR3Keys(this.cfg.routing.auth, auth, this.log, (keys) => this.paced.inject(() => auth.setKeys(keys)), why);
  }

  neighbours(): NeighbourView[] {
    return this.router.aodv.neighbours(this.paced.now());
  }

  routes(): RouteView[] {
    return this.router.aodv.routes(this.paced.now());
  }

  queues(): QueueView[] {
    return this.router.sched.queues().map((q) => ({ ...q, classes: q.classes.map((c) => ({ ...c, name: queueName(this.cfg, c.queue) })) }));
  }

  flows(): FlowView[] {
    return this.router.flows().map((f) => ({ ...f, proto: f.proto }));
  }

  gateway(): GatewayState | undefined {
    const state = this.router.gateway.state();
    return state && this.gatewayScan ? { ...state, scan: this.gatewayScan.view } : state;
  }

  spectrum(): SpectrumView | undefined {
    const e = this.router.core.latestRound;
    return e ? spectrumView(this.router.core.plan, e) : undefined;
  }

  vnfs(): VnfInfo[] {
    return this.pool.list();
  }

  async startVnf(type: string, flow: FlowPattern, params: unknown): Promise<VnfInfo> {
    return this.pool.instantiate(type, flow, params, this.paced.now());
  }

  async stopVnf(id: number): Promise<VnfInfo> {
    return this.pool.terminate(id, this.paced.now());
  }

  /** The PN bursts this router senses (the same the medium runs). */
  get emulatedBand(): EmulatedBand {
    return this.band;
  }
}

/** Bytes a TCP sender has had acknowledged (absolute offsets: data byte k is k + 1; an acknowledged FIN adds one). */
/**
 * One flow's traffic log line. Each end names what its count and rate measure: a TCP source
 * cannot see what its sink read, so its rate is of the bytes the sink acknowledged; a UDP
 * source's is of what it sent; a sink's is of what it received.
 */
export function trafficLine(t: TrafficView): string {
  const udp = t.kind === 'udp-cbr';
  const counted = t.role === 'sink' ? 'received' : udp ? 'sent' : 'acknowledged';
  const what =
    t.role === 'source'
      ? `${t.sent} ${udp ? 'packets sent' : `data segments sent, ${t.bytes} bytes acknowledged`}`
      : `${udp ? `${t.received} packets, ` : ''}${t.bytes} bytes received${t.corruptBytes ? `, ${t.corruptBytes} corrupt` : ''}`;
  return `flow ${t.id} (${t.kind} ${t.src} -> ${t.dst}) ${t.role}: ${what}, ${(t.recentMbps * 1000).toFixed(0)} kbps ${counted} lately${t.state ? `, ${t.state}` : ''}`;
}

function ackedBytes(conn: TcpConnection | undefined): number {
  return conn ? Math.max(0, conn.seq.una - 1) : 0;
}
