import { RangeArgumentError } from '../core/errors.js';
import { ms, type Micros } from '../core/time.js';
import { formatPrefix, parsePrefix, prefixContains, type Prefix } from '../wire/ip.js';
import { DependenceTracker, type DependenceConfig, type DependenceKind, type ScanReport } from './dependence.js';
import type { RateAdaptParams } from './rate.js';
import { GatewayShaper, type ShaperClientState, type SliceLayout } from './shaper.js';
import type { GatewayScanView } from './scan-reports.js';
import { computeSlices } from './slices.js';

/**
 * The gateway role of a router (docs/gateway.md): the configuration's
 * clients, their dependence graph (same router, Type II from the
 * configuration, Type III from scan reports or a graph given whole), the
 * slices on it (computed, or the configuration's static ones) and the
 * shaper that serves the clients' virtual queues in them. Sans-IO like the
 * shaper: the router classifies a packet entering the mesh, offers it, and
 * drives `poll` at `nextDeadline()`.
 */

/** The node configuration's gateway section (config/node.schema.json has its defaults and bounds). */
export interface GatewayConfig {
  enabled: boolean;
  /** Each client: its name, its hosts' prefix (CIDR) and the mesh router (AP) they are behind. */
  clients: Array<{ id: string; prefix: string; router: number }>;
  slicing: {
    periodMs: number;
    /** computed: from the dependence graph (computeSlices); static: `static`. */
    mode: 'computed' | 'static';
    /** Sets of client ids served in turn from the frame's start, each with its share of the period. */
    static: Array<{ clients: string[]; share: number }>;
  };
  rate: {
    adapt: boolean;
    /** v_j, or the start of adaptation (Mbps); 0: line rate. */
    rateMbps: number;
    intervalMs: number;
    qLbKB: number;
    epsilonMbps: number;
    lambda: number;
    beta: number;
    minRateMbps: number;
    /** 0: no cap. */
    maxRateMbps: number;
  };
  /** Each virtual queue's drop-tail limit (bytes). */
  queueBytes: number;
  /** Type II: router pairs that interfere. */
  interferingAps: Array<[number, number]>;
  /** Type II from geometry: router positions (m) and the interference range. */
  apPositions: Array<{ router: number; x: number; y: number }>;
  interferenceRangeM: number;
  /** The clients' scan reports over UDP (the daemon's listener, src/daemon/gateway-scan.ts). */
  scan: {
    enabled: boolean;
    /** Empty: every address. */
    listen: string;
    port: number;
    /** Hex; empty: reports are taken unsealed. */
    key: string;
    minIntervalMs: number;
    /** AP names that stand for routers besides rN and N. */
    aps: Array<{ name: string; router: number }>;
  };
}

/** A router's name as an AP of the dependence tracker. */
const apName = (router: number): string => `r${router}`;

/** What the control API and the monitor show of the gateway. */
export interface GatewayState {
  enabled: boolean;
  periodMs: number;
  mode: 'computed' | 'static';
  /** Packets entering the mesh here for no client (forwarded unshaped). */
  unshaped: number;
  /** How often the slices were computed (the first time included). */
  sliceChanges: number;
  clients: GatewayClientView[];
  /** The slices of the frame, in order: the clients served together and their share. */
  slices: Array<{ clients: string[]; share: number }>;
  /** The dependence graph's edges, by client id. */
  graph: Array<{ a: string; b: string; kind: DependenceKind | 'given' }>;
  /** The scan reports' listener, in the daemon (gateway.scan.enabled): where, its counters by cause, each client's latest report. */
  scan?: GatewayScanView;
}

/** A client as the control API shows it: its configuration and its queue's counters. */
export type GatewayClientView = { id: string; prefix: string; router: number } & ShaperClientState;

export class GatewayRole<P> {
  readonly shaper: GatewayShaper<P>;
  private readonly prefixes: Prefix[];
  /** Undefined with no clients. */
  private readonly tracker: DependenceTracker | undefined;
  /** A graph given whole (setGraph), which stands until a scan report changes the tracker's. */
  private given: Array<{ a: number; b: number; kind: DependenceKind | 'given' }> | undefined;
  private layout: SliceLayout;
  private unshapedCount = 0;
  private changes = 0;

  constructor(
    readonly cfg: Readonly<GatewayConfig>,
    startUs: Micros,
  ) {
    this.prefixes = cfg.clients.map((c, i) => {
      const p = parsePrefix(c.prefix);
      if (!p.ok) throw new RangeArgumentError(`gateway.clients[${i}].prefix`, c.prefix, `a prefix in CIDR notation (${p.error})`);
      return p.value;
    });
    this.tracker = cfg.clients.length > 0 ? new DependenceTracker(dependenceConfig(cfg)) : undefined;
    this.layout = this.slices(this.graph);
    this.changes = 1;
    const r = cfg.rate;
    const adaptParams: Partial<RateAdaptParams> = {
      intervalUs: ms(r.intervalMs),
      queueLowBytes: r.qLbKB * 1000,
      epsMbps: r.epsilonMbps,
      lambda: r.lambda,
      beta: r.beta,
      minRateMbps: r.minRateMbps,
      maxRateMbps: r.maxRateMbps > 0 ? r.maxRateMbps : Infinity,
    };
    this.shaper = new GatewayShaper<P>(
      {
        clients: Math.max(1, cfg.clients.length),
        periodUs: ms(cfg.slicing.periodMs),
        queueBytes: cfg.queueBytes,
        rateMbps: r.rateMbps,
        adapt: r.adapt,
        adaptParams,
      },
      this.layout,
      startUs,
    );
  }

  /** The client whose prefix (the longest) holds `dst`, or -1: the packet passes unshaped (counted). */
  classify(dst: Uint8Array): number {
    let best = -1;
    let len = -1;
    for (let j = 0; j < this.prefixes.length; j++) {
      const p = this.prefixes[j]!;
      if (p.length > len && prefixContains(p, dst)) {
        best = j;
        len = p.length;
      }
    }
    if (best < 0) this.unshapedCount++;
    return best;
  }

  /** A packet for client j into its virtual queue; false: dropped (queue full). */
  offer(j: number, packet: P, bytes: number, now: Micros): boolean {
    return this.shaper.enqueue(j, packet, bytes, now);
  }

  poll(now: Micros, emit: (packet: P, now: Micros) => void): void {
    this.shaper.poll(now, emit);
  }

  nextDeadline(): Micros | undefined {
    return this.shaper.nextDeadline();
  }

  /**
   * A client's scan report (beacon strengths by router, dBm): the tracker
   * infers Type III from it; the slices are computed again when the graph
   * changed (computed mode). Returns whether the graph changed.
   */
  report(clientId: string, scan: ReadonlyMap<number, number>, now: Micros): boolean {
    const byAp: ScanReport = new Map([...scan].map(([router, dbm]) => [apName(router), dbm]));
    if (!this.tracker) throw new RangeArgumentError('client', clientId, 'a client of gateway.clients (it has none)');
    const before = this.tracker.reportOf(clientId);
    const changed = this.tracker.report(clientId, byAp);
    if (!changed) return false;
    try {
      this.resliced(now, this.tracker.graph.edges);
    } catch (e) {
      // A graph computeSlices refuses (too many independent sets) is not taken: the report, the graph and the slices stay as they were.
      this.tracker.restore(clientId, before);
      throw e;
    }
    this.given = undefined;
    return true;
  }

  /**
   * A dependence graph given whole (client ids, edges between them), in
   * place of the tracker's until the next report that changes it; the
   * slices are computed again (computed mode). Unknown ids are refused.
   */
  setGraph(graph: { edges: ReadonlyArray<{ a: string; b: string }> }, now: Micros): void {
    const index = new Map(this.cfg.clients.map((c, i) => [c.id, i]));
    const edges = graph.edges.map((e, i) => {
      const a = index.get(e.a);
      const b = index.get(e.b);
      if (a === undefined || b === undefined || a === b)
        throw new RangeArgumentError(`edges[${i}]`, [e.a, e.b], `two different client ids of gateway.clients (${[...index.keys()].join(', ')})`);
      return a < b ? { a, b, kind: 'given' as const } : { a: b, b: a, kind: 'given' as const };
    });
    // Computed first: a graph refused (more maximal independent sets than computeSlices takes) changes nothing.
    this.resliced(now, edges);
    this.given = edges;
  }

  /** The graph in force: the one given whole, or the tracker's. */
  get graph(): ReadonlyArray<{ a: number; b: number; kind: DependenceKind | 'given' }> {
    return this.given ?? this.tracker?.graph.edges ?? [];
  }

  state(): GatewayState {
    const ids = this.cfg.clients.map((c) => c.id);
    return {
      enabled: this.cfg.enabled,
      periodMs: this.cfg.slicing.periodMs,
      mode: this.cfg.slicing.mode,
      unshaped: this.unshapedCount,
      sliceChanges: this.changes,
      clients: this.cfg.clients.map((c, j) => {
        const s = this.shaper.client(j);
        return { id: c.id, prefix: formatPrefix(this.prefixes[j]!), router: c.router, ...s };
      }),
      slices: this.layout.sets.map((set, i) => ({ clients: set.map((j) => ids[j]!), share: this.layout.shares[i]! })),
      graph: this.graph.map((e) => ({ a: ids[e.a]!, b: ids[e.b]!, kind: e.kind })),
    };
  }

  /**
   * This role replaces `old` (a live change): each client that keeps its id
   * keeps its counts (less the packets `old` still holds, which the caller
   * offers here again), and the unshaped packets and slice computations
   * add up. Call it before `old.drain()`.
   */
  carryFrom(old: GatewayRole<P>): void {
    const before = new Map(old.cfg.clients.map((c, i) => [c.id, i]));
    this.cfg.clients.forEach((c, j) => {
      const i = before.get(c.id);
      if (i === undefined) return;
      const s = old.shaper.client(i);
      this.shaper.carryCounts(j, s, s.queuePackets);
    });
    this.unshapedCount += old.unshapedCount;
    this.changes += old.changes;
  }

  /** Every packet still queued (the role is being replaced). */
  drain(): P[] {
    return this.shaper.drain();
  }

  /** New slices on `edges` (computed mode), taken by the shaper from `now`. */
  private resliced(now: Micros, edges: ReadonlyArray<{ a: number; b: number }>): void {
    if (this.cfg.slicing.mode !== 'computed') return;
    const layout = this.slices(edges);
    this.layout = layout;
    this.changes++;
    this.shaper.setLayout(layout, now);
  }

  /** The slices: the static ones, or those computeSlices finds on `edges`. */
  private slices(edges: ReadonlyArray<{ a: number; b: number }>): SliceLayout {
    const cfg = this.cfg;
    const n = cfg.clients.length;
    if (n === 0) return { sets: [], shares: [] };
    if (cfg.slicing.mode === 'static') {
      const index = new Map(cfg.clients.map((c, i) => [c.id, i]));
      return { sets: cfg.slicing.static.map((s) => s.clients.map((id) => index.get(id)!)), shares: cfg.slicing.static.map((s) => s.share) };
    }
    const s = computeSlices(
      n,
      edges.map((e) => [e.a, e.b] as const),
    );
    return { sets: s.sets, shares: s.setShares };
  }
}

/** The tracker's configuration: each client on its router, Type II from the pairs or the positions. */
export function dependenceConfig(cfg: Readonly<GatewayConfig>): DependenceConfig {
  return {
    clients: cfg.clients.map((c) => ({ id: c.id, ap: apName(c.router) })),
    interferingAps: cfg.interferingAps.map(([a, b]) => [apName(a), apName(b)] as const),
    ...(cfg.apPositions.length > 0 && cfg.interferenceRangeM > 0
      ? { apPositions: cfg.apPositions.map((p) => ({ ap: apName(p.router), x: p.x, y: p.y })), interferenceRangeM: cfg.interferenceRangeM }
      : {}),
  };
}
