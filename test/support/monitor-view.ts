import { ism2g4, maskPsd } from '../../radio/channels.js';
import { configVersion, defaultNodeConfig, parseNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import type { LiveChange } from '../../src/config/live.js';
import { Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import { GatewayRole, type GatewayConfig, type GatewayState } from '../../src/gateway/role.js';
import type { FlowView, PsdView, QueueView, RouterStatus, RouterView, SpectrumChannel, SpectrumView, Telemetry } from '../../src/router/view.js';
import type { NeighbourView, RouteView } from '../../src/routing/aodv.js';
import { newVnfInfo, type FlowPattern, type VnfInfo } from '../../src/vnf/types.js';

const PLAN = ism2g4(11);
const C_BPS = 2e6;
const NOISE_DBM = -95;
const CCA_DBM = -62;
const R3 = 3;
/** Primary nodes: each phase lasts PHASE_ROUNDS rounds (config/examples/demo.json moves them the same way). */
const PHASES: TestPrimary[][] = [
  [
    { channel: 1, busy: 0.8, powerDbm: -48 },
    { channel: 6, busy: 0.6, powerDbm: -58 },
  ],
  [
    { channel: 11, busy: 0.9, powerDbm: -50 },
    { channel: 1, busy: 0.4, powerDbm: -66 },
  ],
  [{ channel: 6, busy: 0.85, powerDbm: -52 }],
  [
    { channel: 3, busy: 0.5, powerDbm: -70 },
    { channel: 9, busy: 0.7, powerDbm: -55 },
  ],
];
const PHASE_ROUNDS = 15;
/** The PSDs' capture: complex samples a second and bins, as a 20 MHz front end would give. */
const PSD_RATE_HZ = 20e6;
const PSD_BINS = 256;
const PSD_SEGMENTS = 16;
/** Thermal noise, -174 dBm/Hz, and a 10 dB noise figure. */
const PSD_FLOOR_DBM_HZ = -164;
/** The bandwidth a primary node's power spreads over (802.11 DSSS). */
const PN_WIDTH_HZ = 22e6;

/**
 * A gateway section for MonitorTestView: two clients behind router 2 (so
 * dependent, same-ap) and one behind router 4, computed slices of a 100 ms
 * frame at line rate.
 */
export function testGatewayConfig(): GatewayConfig {
  return parseNodeConfig({
    node: { id: 1 },
    gateway: {
      enabled: true,
      clients: [
        { id: 'sta1', prefix: '10.0.2.0/25', router: 2 },
        { id: 'sta2', prefix: '10.0.2.128/25', router: 2 },
        { id: 'sta3', prefix: '10.0.4.0/24', router: 4 },
      ],
      rate: { rateMbps: 0 },
    },
  }).gateway;
}

/** A primary node of the test band. */
export interface TestPrimary {
  channel: number;
  busy: number;
  powerDbm: number;
}

/**
 * A RouterView for the monitor's tests: one router on an 11-channel band
 * whose primary nodes move every 15 rounds, three neighbours, multipath
 * routes, queues, two flows and a VNF. Nothing runs by itself: `pushRound()`
 * makes the next sensing round (and the R1 decision after it) and tells the
 * subscribers; `emit()` sends any telemetry. With `psd: true` each round
 * also brings one PSD per channel, before the round's spectrum. With a
 * `gateway` section the router has the gateway role (a real GatewayRole,
 * `gatewayRole`, that a test offers packets and polls).
 */
export class MonitorTestView implements RouterView {
  readonly id = 1;
  readonly name = 'rooftop-1';
  private t: Micros;
  private readonly t0: Micros;
  private round = 0;
  private latest: SpectrumView | undefined;
  private r1: number | undefined;
  private r1Since: Micros | undefined;
  private r1Reason: string | undefined;
  private r2 = 6;
  private switches = 0;
  private readonly rng = Rng.fromSeed(7).fork('monitor-view');
  /** The PSDs' own stream, so that turning them on leaves the rest of the rounds as they were. */
  private readonly psdRng = Rng.fromSeed(7).fork('monitor-view-psd');
  private readonly psd: boolean;
  private readonly listeners = new Set<(e: Telemetry) => void>();
  private cfg: NodeConfig;
  private readonly vnfList: VnfInfo[];
  private readonly queueLen = new Map<number, number>();
  private packets = 0;
  /** How many `state` reads the monitor made (status() calls). */
  statusReads = 0;
  /** The gateway role, when the view was made with a `gateway` section. */
  readonly gatewayRole: GatewayRole<number> | undefined;

  constructor(opts: { startUs?: Micros; psd?: boolean; gateway?: GatewayConfig } = {}) {
    this.t0 = opts.startUs ?? Date.now() * 1000;
    this.psd = opts.psd ?? false;
    this.t = this.t0;
    const cfg = defaultNodeConfig(1);
    cfg.node.name = this.name;
    if (opts.gateway) cfg.gateway = structuredClone(opts.gateway);
    this.cfg = cfg;
    this.gatewayRole = opts.gateway ? new GatewayRole<number>(cfg.gateway, this.t0) : undefined;
    this.vnfList = [
      {
        id: 1,
        type: 'tcp-acc',
        flow: { proto: 'tcp', srcIp: '10.0.0.1', dstIp: '10.0.4.1', dstPort: 5001 },
        params: { mode: 'split' },
        state: 'running',
        startedAtUs: this.t0,
        endedAtUs: null,
        reason: null,
        packetsTaken: 0,
        packetsForwarded: 0,
        packetsSent: 0,
        counters: { acksSent: 0, retransmits: 0, sessions: 0, activeSessions: 0, sessionsClosed: 0, sessionsReset: 0, bytesUp: 0, bytesDown: 0 },
      },
    ];
  }

  /** Listeners subscribed now. */
  get subscribers(): number {
    return this.listeners.size;
  }

  now(): Micros {
    return this.t;
  }

  status(): RouterStatus {
    this.statusReads++;
    return {
      node: { id: this.id, name: this.name },
      atUs: this.t,
      uptimeS: (this.t - this.t0) / 1e6 + 3725,
      configVersion: this.configVersion(),
      mesh: true,
      r1: { channel: this.r1, since: this.r1Since, reason: this.r1Reason, moves: this.r1Moves },
      r2: { channel: this.r2, dwellEndUs: this.t + 12_000, switches: this.switches },
      r3: { channel: R3 },
      sensing: { rounds: this.round, durationMs: 70, periodMs: 1000, ccaThresholdDbm: CCA_DBM, transmitPaused: false },
      counters: { roundsSensed: this.round, helloSent: 3 * this.round, helloReceived: 8 * this.round, packetsForwarded: this.packets, r1Moves: this.r1Moves },
      drops: { queueFull: Math.floor(this.round / 40), noRoute: 0, ttlExpired: 0 },
      routing: { discoveriesStarted: 2 + Math.floor(this.round / 10), discoveriesFound: 1 + Math.floor(this.round / 10), discoveriesFailed: 1, rreqSent: 5 },
      log: { dropped: 7 },
    };
  }

  private r1Moves = 0;

  config(): NodeConfig {
    return structuredClone(this.cfg);
  }

  runningConfig(): Readonly<NodeConfig> {
    return this.cfg;
  }

  configVersion(): string {
    return configVersion(this.cfg);
  }

  reconfigure(change: LiveChange): string {
    this.cfg = structuredClone(change.checked);
    const version = this.configVersion();
    this.emit({ kind: 'config', atUs: this.t, version, changed: [] });
    return version;
  }

  neighbours(): NeighbourView[] {
    return [
      { addr: 2, lastHeardUs: this.t - 180_000, r1Channel: 11, lostAtUs: this.t + 2_820_000 },
      { addr: 4, lastHeardUs: this.t - 650_000, r1Channel: 6, lostAtUs: this.t + 2_350_000 },
      { addr: 5, lastHeardUs: this.t - 1_400_000, r1Channel: 1, lostAtUs: this.t + 1_600_000 },
    ];
  }

  routes(): RouteView[] {
    const exp = this.t + 3_000_000;
    const twoWays = this.round % 30 < 15;
    return [
      {
        dst: 2,
        seq: 12 + this.round,
        state: 'valid',
        advertisedHops: 1,
        paths: [{ nextHop: 2, hopCount: 1, pathCost: 1.08, lastHop: 1, expiresUs: exp, chosen: true }],
        chosen: 2,
        precursors: [],
        deleteAtUs: undefined,
      },
      {
        dst: 4,
        seq: 40,
        state: 'valid',
        advertisedHops: 2,
        paths: [
          { nextHop: 2, hopCount: 2, pathCost: 2.31, lastHop: 2, expiresUs: exp, chosen: twoWays },
          { nextHop: 5, hopCount: 3, pathCost: 3.47, lastHop: 6, expiresUs: exp, chosen: !twoWays },
        ],
        chosen: twoWays ? 2 : 5,
        precursors: [5],
        deleteAtUs: undefined,
      },
      {
        dst: 5,
        seq: 7,
        state: 'valid',
        advertisedHops: 1,
        paths: [{ nextHop: 5, hopCount: 1, pathCost: 1.22, lastHop: 1, expiresUs: exp, chosen: true }],
        chosen: 5,
        precursors: [],
        deleteAtUs: undefined,
      },
      { dst: 9, seq: 3, state: 'invalid', advertisedHops: undefined, paths: [], chosen: undefined, precursors: [], deleteAtUs: this.t + 9_000_000 },
    ];
  }

  queues(): QueueView[] {
    return [11, 6, 1].map((channel) => {
      const packets = this.queueLen.get(channel) ?? 0;
      return { channel, packets, bytes: packets * 1052, classes: [{ queue: 0, name: 'best-effort', packets, bytes: packets * 1052 }] };
    });
  }

  gateway(): GatewayState | undefined {
    return this.gatewayRole?.state();
  }

  flows(): FlowView[] {
    return [
      {
        proto: 'tcp',
        src: 1,
        dst: 4,
        flow: 1,
        role: 'source',
        packets: this.packets,
        bytes: this.packets * 1460,
        nextHop: this.round % 30 < 15 ? 2 : 5,
        lastUs: this.t - 4_000,
        label: 0,
      },
      {
        proto: 'udp',
        src: 5,
        dst: 2,
        flow: 2,
        role: 'relay',
        packets: 3 * this.round,
        bytes: 3000 * this.round,
        nextHop: 2,
        lastUs: this.t - 21_000,
        label: 0x100,
      },
    ];
  }

  spectrum(): SpectrumView | undefined {
    return this.latest;
  }

  vnfs(): VnfInfo[] {
    return structuredClone(this.vnfList);
  }

  async startVnf(type: string, flow: FlowPattern, params: unknown): Promise<VnfInfo> {
    const v = newVnfInfo(this.vnfList.length + 1, type, flow, (params ?? {}) as Record<string, unknown>, this.t);
    this.vnfList.push(v);
    this.emit({ kind: 'vnf', atUs: this.t, event: { kind: 'started', id: v.id, type, atUs: this.t } });
    return structuredClone(v);
  }

  controller(): undefined {
    return undefined;
  }

  async stopVnf(id: number): Promise<VnfInfo> {
    const v = this.vnfList.find((x) => x.id === id);
    if (!v) throw new Error(`no VNF ${id}`);
    v.state = 'stopped';
    v.endedAtUs = this.t;
    v.reason = 'terminated';
    this.emit({ kind: 'vnf', atUs: this.t, event: { kind: 'stopped', id, type: v.type, atUs: this.t, reason: 'terminated' } });
    return structuredClone(v);
  }

  subscribe(fn: (e: Telemetry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  emit(e: Telemetry): void {
    for (const fn of this.listeners) fn(e);
  }

  /**
   * The next sensing round, one second after the last: spectrum telemetry,
   * then the R1 decision (and an R2 switch, traffic, a neighbour event now
   * and then). Returns the round.
   */
  pushRound(): SpectrumView {
    this.round++;
    this.t += 1_000_000;
    if (this.psd) {
      PLAN.channels.forEach((c, k) => {
        const startUs = this.t - 70_000 + k * 6_000;
        this.emit({ kind: 'psd', atUs: startUs + 5_000, psd: this.psdOf(this.round, c.number, startUs) });
      });
    }
    const s = this.sense(this.round, this.t - 70_000, this.t);
    this.latest = s;
    this.emit({ kind: 'spectrum', atUs: this.t, spectrum: s });
    this.decide(s);

    this.packets += 40 + this.rng.int(0, 20);
    const v = this.vnfList[0]!;
    v.packetsTaken += 12;
    v.packetsForwarded += 11;
    v.packetsSent += 13;
    v.counters.acksSent = (v.counters.acksSent ?? 0) + 6;
    // A TCP connection split every 5 rounds, closed 3 rounds later; 1460 bytes down and 40 up a round.
    if (this.round % 5 === 1) v.counters.sessions = (v.counters.sessions ?? 0) + 1;
    if (this.round % 5 === 4) v.counters.sessionsClosed = (v.counters.sessionsClosed ?? 0) + 1;
    v.counters.activeSessions = (v.counters.sessions ?? 0) - (v.counters.sessionsClosed ?? 0);
    v.counters.bytesDown = (v.counters.bytesDown ?? 0) + 1460;
    v.counters.bytesUp = (v.counters.bytesUp ?? 0) + 40;
    for (const ch of [11, 6, 1]) this.queueLen.set(ch, this.rng.int(0, 24));
    const r2 = [11, 6, 1][this.round % 3]!;
    if (r2 !== this.r2) {
      this.r2 = r2;
      this.switches++;
      this.emit({ kind: 'r2', atUs: this.t, channel: r2 });
    }
    if (this.round % 20 === 10) this.emit({ kind: 'neighbour', atUs: this.t, addr: 7, up: this.round % 40 === 10 });
    return s;
  }

  /** The primary nodes active in `round` (the latest round when not given). */
  primaries(round = this.round): TestPrimary[] {
    return PHASES[Math.floor((Math.max(1, round) - 1) / PHASE_ROUNDS) % PHASES.length]!.map((p) => ({ ...p }));
  }

  /**
   * The PSD of one visit, computed from the primary nodes: the noise floor,
   * plus each PN's power spread over 22 MHz with the DSSS mask's shape
   * (radio/channels.ts), plus a little noise (about +-0.5 dB).
   */
  private psdOf(round: number, channel: number, startUs: Micros): PsdView {
    const centerHz = PLAN.get(channel).centerHz;
    const pns = this.primaries(round).map((p) => ({ centerHz: PLAN.get(p.channel).centerHz, mwPerHz: (p.busy * 10 ** (p.powerDbm / 10)) / PN_WIDTH_HZ }));
    const floor = 10 ** (PSD_FLOOR_DBM_HZ / 10);
    const dbmPerHz = new Float32Array(PSD_BINS);
    for (let i = 0; i < PSD_BINS; i++) {
      const f = centerHz + ((i - PSD_BINS / 2) * PSD_RATE_HZ) / PSD_BINS;
      let mw = floor;
      for (const p of pns) mw += p.mwPerHz * maskPsd(f - p.centerHz, PN_WIDTH_HZ);
      dbmPerHz[i] = 10 * Math.log10(mw) + (this.psdRng.next() - 0.5);
    }
    return { round, channel, centerHz, sampleRateHz: PSD_RATE_HZ, startUs, durationUs: 4_000, segments: PSD_SEGMENTS, dbmPerHz };
  }

  /** The spectrum of one round: each PN's energy leaks onto the channels its mask overlaps. */
  private sense(round: number, startUs: Micros, endUs: Micros): SpectrumView {
    const pns = this.primaries(round);
    const skipped = round % 9 === 0 ? (round % 11) + 1 : undefined;
    const channels: SpectrumChannel[] = PLAN.channels.map((c) => {
      let mw = 10 ** (NOISE_DBM / 10) * (1 + 0.3 * this.rng.next());
      let free = 1;
      for (const p of pns) {
        const busy = p.busy * (0.85 + 0.3 * this.rng.next());
        const leakDbm = p.powerDbm + 10 * Math.log10(Math.max(1e-9, PLAN.overlapFactor(p.channel, c.number)));
        mw += busy * 10 ** (leakDbm / 10);
        // The energy detector calls a window busy when it sees more than the CCA threshold: surely well above it, rarely well below.
        const detected = 1 / (1 + Math.exp(-(leakDbm - CCA_DBM) / 2));
        free *= 1 - Math.min(1, busy) * detected;
      }
      const w = clamp01(1 - free + (this.rng.next() - 0.5) * 0.04);
      const sensed = c.number !== skipped;
      return {
        channel: c.number,
        centerMHz: c.centerHz / 1e6,
        w,
        ownW: sensed ? clamp01(w + (this.rng.next() - 0.5) * 0.04) : undefined,
        rcBps: (1 - w) * C_BPS,
        powerDbm: sensed ? 10 * Math.log10(mw) + (this.rng.next() - 0.5) : undefined,
      };
    });
    return { round, startUs, endUs, channels };
  }

  private decide(s: SpectrumView): void {
    const candidates = s.channels.filter((c) => c.channel !== R3);
    const best = candidates.reduce((a, b) => (b.rcBps > a.rcBps ? b : a));
    const current = s.channels.find((c) => c.channel === this.r1);
    let reason: string;
    let changed = false;
    if (current === undefined) {
      reason = 'initial';
      changed = true;
    } else if (best.rcBps > current.rcBps + 0.1 * C_BPS) {
      reason = 'better';
      changed = best.channel !== this.r1;
    } else reason = 'within-hysteresis';
    if (changed) {
      this.r1 = best.channel;
      this.r1Since = this.t;
      this.r1Moves++;
    }
    this.r1Reason = reason;
    this.emit({ kind: 'r1', atUs: this.t, channel: this.r1, changed, reason });
  }
}

function clamp01(v: number): number {
  return Math.min(1, Math.max(0, v));
}
