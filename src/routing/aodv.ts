import { RangeArgumentError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import { US_PER_MS, US_PER_S, type Micros } from '../core/time.js';
import {
  BROADCAST,
  MAX_PATH_COST,
  type ControlMsg,
  type Hello,
  type HelloNeighbour,
  type HelloWorkload,
  type NodeAddr,
  type Rerr,
  type Rrep,
  type Rreq,
} from '../wire/mesh.js';
import { choosePath, comparePaths, type PathCandidate } from './path.js';

/**
 * Multipath AODV as a sans-IO core: RFC 3561 (route discovery by expanding
 * ring, sequence numbers, lifetimes, precursors, RERR, HELLO) with the AOMDV
 * extensions of Marina and Das (several link-disjoint paths per destination
 * under one sequence number and an advertised hop count, which keeps every
 * path loop-free). Messages heard on R3 go in through `handle`, time through
 * `tick`; everything to do comes back as actions. Nothing here reads a clock,
 * draws from Math.random or sends a frame.
 *
 * The file follows the RFC: parameters, sequence numbers, the route table
 * (AOMDV's update rules), then RREQ, RREP, RERR, HELLO and timers.
 */

// ---------------------------------------------------------------------------
// Parameters (RFC 3561 section 10)

export interface AodvParams {
  /** HELLO_INTERVAL. */
  helloIntervalUs: Micros;
  /** ALLOWED_HELLO_LOSS: a neighbour silent this many HELLO intervals is lost. */
  allowedHelloLoss: number;
  /** ACTIVE_ROUTE_TIMEOUT. */
  activeRouteTimeoutUs: Micros;
  /** MY_ROUTE_TIMEOUT: the lifetime a destination puts in its RREPs (2 * ACTIVE_ROUTE_TIMEOUT). */
  myRouteTimeoutUs: Micros;
  /** NODE_TRAVERSAL_TIME. */
  nodeTraversalUs: Micros;
  /** NET_DIAMETER, in hops. */
  netDiameter: number;
  /** RREQ_RETRIES: RREQs sent again at NET_DIAMETER before a discovery gives up. */
  rreqRetries: number;
  /** TTL_START. */
  ttlStart: number;
  /** TTL_INCREMENT. */
  ttlIncrement: number;
  /** TTL_THRESHOLD. */
  ttlThreshold: number;
  /** TIMEOUT_BUFFER. */
  timeoutBuffer: number;
  /** Link-disjoint paths kept per destination (AOMDV). */
  maxPaths: number;
  /** RREQ_RATELIMIT: RREQs this node may originate per second. */
  rreqRateLimit: number;
  /** RERR_RATELIMIT: RERRs this node may originate per second. */
  rerrRateLimit: number;
  /** A forwarded RREQ and each HELLO wait a random 0..this first, so that neighbours do not collide. */
  broadcastJitterUs: Micros;
  /** Intermediate nodes never reply from their table (the D flag on every RREQ this node sends). */
  destinationOnly: boolean;
  /** Keep the current path unless another is cheaper by more than this fraction of its cost. */
  pathHysteresis: number;
}

export const DEFAULT_AODV_PARAMS: AodvParams = Object.freeze({
  helloIntervalUs: 1_000_000,
  allowedHelloLoss: 2,
  activeRouteTimeoutUs: 3_000_000,
  myRouteTimeoutUs: 6_000_000,
  nodeTraversalUs: 40_000,
  netDiameter: 35,
  rreqRetries: 2,
  ttlStart: 1,
  ttlIncrement: 2,
  ttlThreshold: 7,
  timeoutBuffer: 2,
  maxPaths: 3,
  rreqRateLimit: 10,
  rerrRateLimit: 10,
  broadcastJitterUs: 10_000,
  destinationOnly: false,
  pathHysteresis: 0.1,
});

/** RFC 3561 section 10: DELETE_PERIOD = K * max(ACTIVE_ROUTE_TIMEOUT, HELLO_INTERVAL), K = 5. */
export const DELETE_PERIOD_K = 5;

/** RERRs that wait for the rate limit, one per neighbour at most: beyond this many the oldest is dropped. */
export const MAX_QUEUED_RERR = 64;

/** The times RFC 3561 derives from the parameters. */
export interface AodvTimes {
  /** NET_TRAVERSAL_TIME = 2 * NODE_TRAVERSAL_TIME * NET_DIAMETER. */
  netTraversalUs: Micros;
  /** PATH_DISCOVERY_TIME = 2 * NET_TRAVERSAL_TIME: how long a RREQ is remembered. */
  pathDiscoveryUs: Micros;
  /** DELETE_PERIOD: how long an invalid route is remembered before it is forgotten. */
  deletePeriodUs: Micros;
  /** ALLOWED_HELLO_LOSS * HELLO_INTERVAL: silence after which a neighbour is lost. */
  neighbourLossUs: Micros;
  /** RING_TRAVERSAL_TIME = 2 * NODE_TRAVERSAL_TIME * (TTL + TIMEOUT_BUFFER). */
  ringTraversalUs: (ttl: number) => Micros;
}

export function aodvTimes(p: AodvParams): AodvTimes {
  const netTraversalUs = 2 * p.nodeTraversalUs * p.netDiameter;
  return {
    netTraversalUs,
    pathDiscoveryUs: 2 * netTraversalUs,
    deletePeriodUs: DELETE_PERIOD_K * Math.max(p.activeRouteTimeoutUs, p.helloIntervalUs),
    neighbourLossUs: p.allowedHelloLoss * p.helloIntervalUs,
    ringTraversalUs: (ttl) => 2 * p.nodeTraversalUs * (ttl + p.timeoutBuffer),
  };
}

/**
 * Fills in a partial set of parameters over `base` and checks every range.
 * When only ACTIVE_ROUTE_TIMEOUT is given, MY_ROUTE_TIMEOUT follows it (2x).
 */
export function resolveAodvParams(p: Partial<AodvParams> = {}, base: AodvParams = DEFAULT_AODV_PARAMS): AodvParams {
  const r: AodvParams = { ...base, ...p };
  if (p.myRouteTimeoutUs === undefined && p.activeRouteTimeoutUs !== undefined) r.myRouteTimeoutUs = 2 * p.activeRouteTimeoutUs;
  const int = (k: keyof AodvParams, min: number, max = Number.MAX_SAFE_INTEGER): void => {
    const v = r[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
      throw new RangeArgumentError(`aodv.${k}`, v, `an integer in [${min}, ${max}]`);
    }
  };
  int('helloIntervalUs', 1);
  int('allowedHelloLoss', 1);
  int('activeRouteTimeoutUs', 1);
  int('myRouteTimeoutUs', 1);
  int('nodeTraversalUs', 1);
  int('netDiameter', 1, 255);
  int('rreqRetries', 0);
  int('ttlStart', 1, 255);
  int('ttlIncrement', 1, 255);
  int('ttlThreshold', 1, 255);
  int('timeoutBuffer', 0);
  int('maxPaths', 1);
  int('rreqRateLimit', 1);
  int('rerrRateLimit', 1);
  int('broadcastJitterUs', 0);
  if (typeof r.destinationOnly !== 'boolean') throw new RangeArgumentError('aodv.destinationOnly', r.destinationOnly, 'a boolean');
  if (!(Number.isFinite(r.pathHysteresis) && r.pathHysteresis >= 0)) {
    throw new RangeArgumentError('aodv.pathHysteresis', r.pathHysteresis, 'a finite number >= 0');
  }
  return r;
}

// ---------------------------------------------------------------------------
// Interface

export interface AodvParts {
  self: NodeAddr;
  rng: Rng;
  startUs: Micros;
  /** Current HELLO content, asked each time a HELLO goes out. */
  hello: () => { r1Channel: number; workload: HelloWorkload[]; neighbours?: HelloNeighbour[] };
  /** Cost (>= 1) of sending to this neighbour: 1 on a PN-free link, more when the neighbour's R1 channel is busy with PN traffic. */
  linkCost: (neighbour: NodeAddr) => number;
}

export type AodvAction =
  | { kind: 'send'; to: NodeAddr /* BROADCAST to broadcast */; msg: ControlMsg }
  /** Packets buffered for dst may go now. */
  | { kind: 'route-found'; dst: NodeAddr }
  /** Discovery gave up after its retries. */
  | { kind: 'route-failed'; dst: NodeAddr }
  /** An active route lost its last path. */
  | { kind: 'route-lost'; dst: NodeAddr }
  | { kind: 'hello-heard'; from: NodeAddr; hello: Hello }
  | { kind: 'neighbour-up'; addr: NodeAddr }
  | { kind: 'neighbour-lost'; addr: NodeAddr };

/** What `lookup` returns: the next hop the path decision chose. */
export interface NextHop {
  nextHop: NodeAddr;
  hopCount: number;
  pathCost: number;
}

export interface PathView {
  nextHop: NodeAddr;
  hopCount: number;
  /** Whole-path cost with the first link's cost as it is now. */
  pathCost: number;
  /** The destination's neighbour on this path (AOMDV last hop; first hop for reverse routes); this node on a direct path. */
  lastHop: NodeAddr;
  expiresUs: Micros;
  chosen: boolean;
}

export interface RouteView {
  dst: NodeAddr;
  /** Destination sequence number; undefined while unknown (a neighbour heard only through RREQ/RREP/RERR). */
  seq: number | undefined;
  state: 'valid' | 'invalid';
  /** AOMDV advertised hop count for `seq`; undefined until this node first advertises the route. */
  advertisedHops: number | undefined;
  /** Valid paths, best first. */
  paths: PathView[];
  /** The next hop the path decision would use now. */
  chosen: NodeAddr | undefined;
  precursors: NodeAddr[];
  /** When an invalid route is forgotten. */
  deleteAtUs: Micros | undefined;
}

export interface NeighbourView {
  addr: NodeAddr;
  lastHeardUs: Micros;
  /** R1 channel from its last HELLO; undefined before one is heard. */
  r1Channel: number | undefined;
  /** When it is lost unless heard again. */
  lostAtUs: Micros;
}

export interface AodvCounters {
  [name: string]: number;
  rreqSent: number;
  rreqForwarded: number;
  rreqReceived: number;
  rrepSent: number;
  rrepForwarded: number;
  rrepReceived: number;
  rrepDropped: number;
  intermediateReplies: number;
  rerrSent: number;
  rerrReceived: number;
  helloSent: number;
  helloReceived: number;
  duplicatesDropped: number;
  ttlExpired: number;
  loopsRejected: number;
  staleRejected: number;
  notDisjointRejected: number;
  pathsFullRejected: number;
  discoveriesStarted: number;
  discoveriesFound: number;
  discoveriesFailed: number;
  failovers: number;
  routesLost: number;
  routesExpired: number;
  neighboursLost: number;
  rreqRateLimited: number;
  rerrRateLimited: number;
  /** RERRs (or destinations in them) dropped because the rate-limit queue was full. */
  rerrDropped: number;
}

function newCounters(): AodvCounters {
  return {
    rreqSent: 0,
    rreqForwarded: 0,
    rreqReceived: 0,
    rrepSent: 0,
    rrepForwarded: 0,
    rrepReceived: 0,
    rrepDropped: 0,
    intermediateReplies: 0,
    rerrSent: 0,
    rerrReceived: 0,
    helloSent: 0,
    helloReceived: 0,
    duplicatesDropped: 0,
    ttlExpired: 0,
    loopsRejected: 0,
    staleRejected: 0,
    notDisjointRejected: 0,
    pathsFullRejected: 0,
    discoveriesStarted: 0,
    discoveriesFound: 0,
    discoveriesFailed: 0,
    failovers: 0,
    routesLost: 0,
    routesExpired: 0,
    neighboursLost: 0,
    rreqRateLimited: 0,
    rerrRateLimited: 0,
    rerrDropped: 0,
  };
}

// ---------------------------------------------------------------------------
// Sequence numbers (RFC 3561 section 6.1): 32 bits, compared in signed arithmetic

/** `a` is newer than `b` (rollover-safe). */
export function seqNewer(a: number, b: number): boolean {
  return ((a - b) | 0) > 0;
}

/** The next sequence number; 0 is skipped, it stands for "unknown" in a RERR. */
export function seqNext(s: number): number {
  const n = (s + 1) >>> 0;
  return n === 0 ? 1 : n;
}

/** The largest number of unreachable destinations one RERR carries. */
const RERR_MAX_DESTINATIONS = 255;

// ---------------------------------------------------------------------------
// The route table

interface Path {
  nextHop: NodeAddr;
  hopCount: number;
  /** The destination's neighbour on this path; `self` on a direct path (next hop = destination). */
  lastHop: NodeAddr;
  /** Cost the next hop advertised for the rest of the path; the first link's cost is asked live. */
  restCost: number;
  expiresUs: Micros;
}

interface RouteEntry {
  dst: NodeAddr;
  seq: number;
  seqKnown: boolean;
  /** AOMDV advertised hop count for `seq`; undefined (infinity) until first advertised. */
  advertisedHops: number | undefined;
  paths: Path[];
  precursors: Set<NodeAddr>;
  /** Next hop of the path last chosen by `lookup` (stickiness). */
  chosen: NodeAddr | undefined;
  /** Hop count when the route was last valid, for the TTL of a new discovery (RFC 6.4). */
  lastHopCount: number | undefined;
  /** Set while invalid: when the entry is forgotten. */
  deleteAtUs: Micros | undefined;
  /** While invalid: when each neighbour (BROADCAST: all) was last sent a RERR for it. */
  told: Map<NodeAddr, Micros>;
}

interface Neighbour {
  addr: NodeAddr;
  lastHeardUs: Micros;
  r1Channel: number | undefined;
}

interface Discovery {
  dst: NodeAddr;
  ttl: number;
  /** RREQs sent with TTL = NET_DIAMETER so far. */
  diameterAttempts: number;
  /** When the RREP wait ends, or (while `waitingToSend`) when the rate limit lets the RREQ go. */
  deadlineUs: Micros;
  waitingToSend: boolean;
}

interface SeenRreq {
  expiresUs: Micros;
  /** Replies the destination sent for this RREQ, and through which neighbours and first hops. */
  replies: number;
  repliedVia: Set<NodeAddr>;
  repliedFirstHop: Set<NodeAddr>;
}

type Offer = 'added' | 'refreshed' | 'self' | 'loop' | 'stale' | 'not-disjoint' | 'full';

/** A path offered to the table. */
interface PathOffer {
  nextHop: NodeAddr;
  hopCount: number;
  lastHop: NodeAddr;
  restCost: number;
  expiresUs: Micros;
}

// ---------------------------------------------------------------------------
// The core

export class MultipathAodv {
  readonly self: NodeAddr;
  readonly counters: AodvCounters = newCounters();
  private p: AodvParams;
  private t: AodvTimes;
  private readonly rng: Rng;
  private ownSeqValue = 1;
  private rreqIdValue = 0;
  private readonly table = new Map<NodeAddr, RouteEntry>();
  private readonly nbrs = new Map<NodeAddr, Neighbour>();
  private readonly discoveries = new Map<NodeAddr, Discovery>();
  private readonly seen = new Map<string, SeenRreq>();
  /** Reverse next hops a RREP for (orig, dst, dstSeq, orig's seq) already went along. */
  private readonly rrepUsed = new Map<string, { expiresUs: Micros; via: Set<NodeAddr> }>();
  /** No path, route, RREQ or RREP remembered expires before this (see sweep). */
  private sweepDueUs: Micros = Infinity;
  /** The earliest lastHeardUs of the neighbours, when known (see oldestHeard). */
  private oldestHeardUs: Micros | undefined;
  /** Jittered broadcasts, in order of their time. */
  private readonly delayed: Array<{ atUs: Micros; to: NodeAddr; msg: ControlMsg }> = [];
  private readonly rreqTimes: Micros[] = [];
  private readonly rerrTimes: Micros[] = [];
  private readonly rerrQueue: Array<{ to: NodeAddr; msg: Rerr }> = [];
  private helloBaseUs: Micros;
  private nextHelloUs: Micros;

  constructor(
    private readonly parts: AodvParts,
    params: Partial<AodvParams> = {},
  ) {
    this.self = parts.self;
    this.rng = parts.rng;
    this.p = resolveAodvParams(params);
    this.t = aodvTimes(this.p);
    this.helloBaseUs = parts.startUs;
    this.nextHelloUs = parts.startUs + this.jitter();
  }

  get params(): Readonly<AodvParams> {
    return this.p;
  }

  /** This node's own destination sequence number. */
  get ownSeq(): number {
    return this.ownSeqValue;
  }

  /** Destinations with a discovery under way. */
  get discovering(): NodeAddr[] {
    return [...this.discoveries.keys()];
  }

  setParams(p: Partial<AodvParams>, now: Micros): void {
    this.sweep(now);
    this.p = resolveAodvParams(p, this.p);
    this.t = aodvTimes(this.p);
    if (this.nextHelloUs > now + this.p.helloIntervalUs) {
      this.helloBaseUs = now;
      this.nextHelloUs = now + this.p.helloIntervalUs;
    }
  }

  // -------------------------------------------------------------------------
  // Inputs

  /** A control message heard on R3 from neighbour `from`. */
  handle(msg: ControlMsg, from: NodeAddr, now: Micros): AodvAction[] {
    const out: AodvAction[] = [];
    if (from === this.self || from === BROADCAST) return out;
    this.sweep(now);
    this.heard(from, now, out);
    switch (msg.type) {
      case 'hello':
        this.onHello(msg, from, out);
        break;
      case 'rreq':
        this.onRreq(msg, from, now, out);
        break;
      case 'rrep':
        this.onRrep(msg, from, now, out);
        break;
      case 'rerr':
        this.onRerr(msg, from, now, out);
        break;
    }
    this.settleDiscoveries(out);
    return out;
  }

  /** Timers due at `now`. */
  tick(now: Micros): AodvAction[] {
    const out: AodvAction[] = [];
    this.sweep(now);
    while (this.delayed.length > 0 && this.delayed[0]!.atUs <= now) {
      const d = this.delayed.shift()!;
      out.push({ kind: 'send', to: d.to, msg: d.msg });
    }
    for (const n of [...this.nbrs.values()]) {
      if (n.lastHeardUs + this.t.neighbourLossUs <= now) this.loseNeighbour(n.addr, now, out);
    }
    for (const d of [...this.discoveries.values()]) {
      if (d.deadlineUs <= now) this.discoveryDue(d, now, out);
    }
    this.drainRerr(now, out);
    if (this.nextHelloUs <= now) {
      out.push(this.helloAction());
      this.helloBaseUs = Math.max(this.helloBaseUs + this.p.helloIntervalUs, now);
      this.nextHelloUs = this.helloBaseUs + this.jitter();
    }
    return out;
  }

  /** When `tick` next has something to do. */
  nextDeadline(): Micros | undefined {
    let m = this.nextHelloUs;
    const first = this.delayed[0];
    if (first && first.atUs < m) m = first.atUs;
    const oldest = this.oldestHeard();
    if (oldest !== undefined && oldest + this.t.neighbourLossUs < m) m = oldest + this.t.neighbourLossUs;
    if (this.discoveries.size > 0) for (const d of this.discoveries.values()) if (d.deadlineUs < m) m = d.deadlineUs;
    if (this.rerrQueue.length > 0) {
      const w = this.rateFreeAt(this.rerrTimes, this.p.rerrRateLimit);
      if (w < m) m = w;
    }
    return m;
  }

  /** When the neighbour heard longest ago was last heard (undefined: no neighbour); kept, and found again only when it moved. */
  private oldestHeard(): Micros | undefined {
    if (this.oldestHeardUs === undefined && this.nbrs.size > 0) {
      let m = Infinity;
      for (const n of this.nbrs.values()) if (n.lastHeardUs < m) m = n.lastHeardUs;
      this.oldestHeardUs = m;
    }
    return this.nbrs.size > 0 ? this.oldestHeardUs : undefined;
  }

  /** Sends a HELLO now (for example when R1 moved to another channel) and restarts the HELLO interval. */
  announce(now: Micros): AodvAction[] {
    this.sweep(now);
    this.helloBaseUs = now;
    this.nextHelloUs = now + this.p.helloIntervalUs + this.jitter();
    return [this.helloAction()];
  }

  /** The path decision among the valid paths to `dst`; never starts a discovery. */
  lookup(dst: NodeAddr, now: Micros): NextHop | undefined {
    const e = this.table.get(dst);
    if (!e) return undefined;
    this.sweepEntry(e, now);
    if (e.paths.length === 1) {
      // One path (nearly every route, and a lookup for every packet): the answer without a candidate first.
      const path = e.paths[0]!;
      e.chosen = path.nextHop;
      return { nextHop: path.nextHop, hopCount: path.hopCount, pathCost: path.restCost + this.linkCost(path.nextHop) };
    }
    const c = this.choose(e);
    if (!c) return undefined;
    e.chosen = c.nextHop;
    return { nextHop: c.nextHop, hopCount: c.hopCount, pathCost: c.cost };
  }

  /**
   * Data for `dst` went to `nextHop` (RFC 3561 6.2): the path and the routes to
   * both neighbours live on for ACTIVE_ROUTE_TIMEOUT more, and `prevHop` becomes
   * a precursor of the route.
   */
  forwarding(dst: NodeAddr, prevHop: NodeAddr | undefined, nextHop: NodeAddr, now: Micros): void {
    const until = now + this.p.activeRouteTimeoutUs;
    this.refresh(dst, nextHop, now, until);
    // The route is active: its alternates stay ready for failover as long as
    // their first hop is a live neighbour (a break further on comes back as a
    // RERR, or as a MAC failure once the alternate is used).
    const active = this.table.get(dst);
    if (active) {
      for (const q of active.paths) {
        const nb = this.nbrs.get(q.nextHop);
        if (q.nextHop !== nextHop && nb && nb.lastHeardUs + this.t.neighbourLossUs > now) q.expiresUs = Math.max(q.expiresUs, until);
      }
    }
    this.refresh(nextHop, nextHop, now, until);
    if (prevHop !== undefined && prevHop !== this.self) {
      this.refresh(prevHop, prevHop, now, until);
      const e = this.table.get(dst);
      if (e && e.paths.length > 0 && prevHop !== nextHop) e.precursors.add(prevHop);
    }
  }

  /** The path to `d` via `via` lives on until at least `until` (for `forwarding`). */
  private refresh(d: NodeAddr, via: NodeAddr, now: Micros, until: Micros): void {
    const e = this.table.get(d);
    if (!e) return;
    this.sweepEntry(e, now);
    const paths = e.paths;
    for (let i = 0; i < paths.length; i++) {
      const q = paths[i]!;
      if (q.nextHop === via) {
        q.expiresUs = Math.max(q.expiresUs, until);
        return;
      }
    }
  }

  /** Starts a route discovery for `dst` unless one is under way; a valid route is found at once. */
  discover(dst: NodeAddr, now: Micros): AodvAction[] {
    const out: AodvAction[] = [];
    if (dst === this.self || dst === BROADCAST) return out;
    this.sweep(now);
    if (this.discoveries.has(dst)) return out;
    const e = this.table.get(dst);
    if (e && e.paths.length > 0) {
      out.push({ kind: 'route-found', dst });
      return out;
    }
    // RFC 6.4: a route known before starts the ring at its last hop count plus TTL_INCREMENT.
    const start = e?.lastHopCount !== undefined ? Math.max(this.p.ttlStart, e.lastHopCount + this.p.ttlIncrement) : this.p.ttlStart;
    const d: Discovery = { dst, ttl: Math.min(start, this.p.netDiameter), diameterAttempts: 0, deadlineUs: now, waitingToSend: true };
    this.discoveries.set(dst, d);
    this.counters.discoveriesStarted++;
    this.sendRreq(d, now, out);
    return out;
  }

  /** The MAC gave up on a frame to `neighbour`: the link is broken. */
  linkFailed(neighbour: NodeAddr, now: Micros): AodvAction[] {
    const out: AodvAction[] = [];
    this.sweep(now);
    this.loseNeighbour(neighbour, now, out);
    return out;
  }

  /** Data to relay for `dst` arrived from `prevHop` and there is no route: RERR to it (RFC 3561 6.11 (ii)). */
  noRoute(dst: NodeAddr, prevHop: NodeAddr, now: Micros): AodvAction[] {
    const out: AodvAction[] = [];
    this.sweep(now);
    const e = this.table.get(dst);
    if (e && e.paths.length > 0) return out;
    if (e) {
      // Packets still in flight when the route broke need no RERR each: one per rate slot will do.
      const hold = US_PER_S / this.p.rerrRateLimit;
      const last = Math.max(e.told.get(prevHop) ?? -Infinity, e.told.get(BROADCAST) ?? -Infinity);
      if (now - last < hold) return out;
      e.told.set(prevHop, now);
      e.precursors.delete(prevHop);
    }
    const msg: Rerr = { type: 'rerr', noDelete: false, unreachable: [{ dst, dstSeq: e?.seqKnown ? e.seq : 0 }] };
    this.sendRerr(prevHop, msg, now, out);
    return out;
  }

  // -------------------------------------------------------------------------
  // Views

  routes(now: Micros): RouteView[] {
    this.sweep(now);
    const out: RouteView[] = [];
    for (const e of [...this.table.values()].sort((a, b) => a.dst - b.dst)) {
      const cands = this.candidates(e);
      const chosen = choosePath(cands, e.chosen, this.p.pathHysteresis)?.path.nextHop;
      const ranked = cands.sort(comparePaths);
      out.push({
        dst: e.dst,
        seq: e.seqKnown ? e.seq : undefined,
        state: e.paths.length > 0 ? 'valid' : 'invalid',
        advertisedHops: e.advertisedHops,
        paths: ranked.map((c) => ({
          nextHop: c.nextHop,
          hopCount: c.hopCount,
          pathCost: c.cost,
          lastHop: c.path.lastHop,
          expiresUs: c.path.expiresUs,
          chosen: c.nextHop === chosen,
        })),
        chosen,
        precursors: [...e.precursors].sort((a, b) => a - b),
        deleteAtUs: e.deleteAtUs,
      });
    }
    return out;
  }

  neighbours(_now: Micros): NeighbourView[] {
    return [...this.nbrs.values()]
      .sort((a, b) => a.addr - b.addr)
      .map((n) => ({ addr: n.addr, lastHeardUs: n.lastHeardUs, r1Channel: n.r1Channel, lostAtUs: n.lastHeardUs + this.t.neighbourLossUs }));
  }

  // -------------------------------------------------------------------------
  // Route table: AOMDV's update rules

  private linkCost(j: NodeAddr): number {
    const c = this.parts.linkCost(j);
    if (!(Number.isFinite(c) && c >= 1)) throw new RangeArgumentError('linkCost', c, 'a finite number >= 1');
    return c;
  }

  private candidates(e: RouteEntry): Array<PathCandidate & { path: Path }> {
    return e.paths.map((path) => ({ nextHop: path.nextHop, hopCount: path.hopCount, cost: path.restCost + this.linkCost(path.nextHop), path }));
  }

  /** The path decision for `e` with its current stickiness, without recording it. */
  private choose(e: RouteEntry): (PathCandidate & { path: Path }) | undefined {
    // One path (a chain, nearly every route): the choice whatever the stickiness, made without the list.
    if (e.paths.length === 1) {
      const path = e.paths[0]!;
      return { nextHop: path.nextHop, hopCount: path.hopCount, cost: path.restCost + this.linkCost(path.nextHop), path };
    }
    const cands = this.candidates(e);
    const c = choosePath(cands, e.chosen, this.p.pathHysteresis);
    return c ? cands.find((x) => x.nextHop === c.path.nextHop) : undefined;
  }

  private entry(dst: NodeAddr): RouteEntry {
    let e = this.table.get(dst);
    if (!e) {
      e = {
        dst,
        seq: 0,
        seqKnown: false,
        advertisedHops: undefined,
        paths: [],
        precursors: new Set(),
        chosen: undefined,
        lastHopCount: undefined,
        deleteAtUs: undefined,
        told: new Map(),
      };
      this.table.set(dst, e);
    }
    return e;
  }

  /**
   * Offers a path to `dst` under sequence number `seq` (AOMDV route update
   * rules). A newer sequence number replaces every path (a direct path to a
   * neighbour stays: its next hop is the destination, so it cannot loop); the
   * same one adds a path only if the neighbour's advertised hop count is below
   * this node's advertised hop count, and only if it is link-disjoint from the
   * paths held (a different next hop and a different last hop).
   */
  private offer(dst: NodeAddr, seq: number, o: PathOffer, now: Micros): Offer {
    if (dst === this.self || o.nextHop === this.self) return 'self';
    const direct = o.nextHop === dst;
    if (!direct && o.lastHop === this.self) {
      this.counters.loopsRejected++;
      return 'loop';
    }
    const e = this.entry(dst);
    this.sweepEntry(e, now);
    if (!e.seqKnown || seqNewer(seq, e.seq)) {
      e.seq = seq;
      e.seqKnown = true;
      e.advertisedHops = undefined;
      e.paths = e.paths.filter((q) => q.nextHop === dst);
      const kept = direct ? e.paths[0] : undefined;
      if (kept) kept.expiresUs = Math.max(kept.expiresUs, o.expiresUs);
      else if (e.paths.length >= this.p.maxPaths) {
        this.counters.pathsFullRejected++;
        return 'full';
      } else this.insert(e, o);
      return 'added';
    }
    if (seqNewer(e.seq, seq)) {
      this.counters.staleRejected++;
      return 'stale';
    }
    const same = e.paths.find((q) => q.nextHop === o.nextHop);
    if (same && same.lastHop === o.lastHop) {
      same.expiresUs = Math.max(same.expiresUs, o.expiresUs);
      same.restCost = o.restCost;
      return 'refreshed';
    }
    if (!direct && e.advertisedHops !== undefined && !(o.hopCount - 1 < e.advertisedHops)) {
      this.counters.loopsRejected++;
      return 'loop';
    }
    if (same || e.paths.some((q) => q.lastHop === o.lastHop)) {
      this.counters.notDisjointRejected++;
      return 'not-disjoint';
    }
    if (e.paths.length >= this.p.maxPaths) {
      this.counters.pathsFullRejected++;
      return 'full';
    }
    this.insert(e, o);
    return 'added';
  }

  private insert(e: RouteEntry, o: PathOffer): void {
    e.paths.push({ nextHop: o.nextHop, hopCount: o.hopCount, lastHop: o.lastHop, restCost: o.restCost, expiresUs: o.expiresUs });
    this.expiresBy(o.expiresUs);
    e.deleteAtUs = undefined;
    e.told.clear();
  }

  /** A direct path to neighbour `j`, created or refreshed; it needs no sequence number. */
  private offerDirect(j: NodeAddr, expiresUs: Micros, now: Micros): void {
    const e = this.entry(j);
    this.sweepEntry(e, now);
    const d = e.paths.find((q) => q.nextHop === j);
    if (d) {
      d.expiresUs = Math.max(d.expiresUs, expiresUs);
      d.restCost = 0;
      return;
    }
    if (e.paths.length >= this.p.maxPaths) {
      // The direct path beats any other to a neighbour: the longest one makes room.
      const worst = e.paths.reduce((a, b) => (b.hopCount > a.hopCount ? b : a));
      e.paths = e.paths.filter((q) => q !== worst);
    }
    this.insert(e, { nextHop: j, hopCount: 1, lastHop: this.self, restCost: 0, expiresUs });
  }

  /**
   * Fixes the advertised hop count when the route is first advertised under
   * its sequence number (AOMDV): the longest of its paths. From then on only
   * shorter paths join under this sequence number.
   */
  private advertise(e: RouteEntry): number {
    if (e.advertisedHops === undefined) e.advertisedHops = e.paths.reduce((m, q) => Math.max(m, q.hopCount), 0);
    return e.advertisedHops;
  }

  /**
   * The route lost its last path: it turns invalid (RFC 3561 6.11) with its
   * sequence number incremented, or raised to the one a RERR carried; it is
   * forgotten DELETE_PERIOD later. Returns its precursors, now cleared.
   */
  private invalidate(e: RouteEntry, lastHopCount: number, atUs: Micros, rerrSeq?: number): Set<NodeAddr> {
    e.paths = [];
    e.lastHopCount = lastHopCount;
    if (e.seqKnown) e.seq = seqNext(e.seq);
    if (rerrSeq !== undefined && rerrSeq !== 0 && (!e.seqKnown || seqNewer(rerrSeq, e.seq))) {
      e.seq = rerrSeq;
      e.seqKnown = true;
    }
    e.advertisedHops = undefined;
    e.chosen = undefined;
    e.deleteAtUs = atUs + this.t.deletePeriodUs;
    this.expiresBy(e.deleteAtUs);
    const pre = e.precursors;
    e.precursors = new Set();
    return pre;
  }

  /** Expired paths leave; a route left without paths turns invalid; invalid routes past DELETE_PERIOD are forgotten. */
  private sweepEntry(e: RouteEntry, now: Micros): void {
    // Nearly always nothing expired: then nothing is made.
    let expired = false;
    const paths = e.paths;
    for (let i = 0; i < paths.length; i++) if (!(paths[i]!.expiresUs > now)) expired = true;
    if (expired) this.dropExpired(e, now);
    if (e.paths.length === 0 && e.deleteAtUs !== undefined && e.deleteAtUs <= now) this.table.delete(e.dst);
  }

  /** `sweepEntry` when a path of `e` has expired. */
  private dropExpired(e: RouteEntry, now: Micros): void {
    let lastExpiry = -1;
    let hops = Infinity;
    const live: Path[] = [];
    for (const q of e.paths) {
      if (q.expiresUs > now) live.push(q);
      else {
        lastExpiry = Math.max(lastExpiry, q.expiresUs);
        hops = Math.min(hops, q.hopCount);
      }
    }
    if (live.length === e.paths.length) return;
    if (live.length > 0) {
      e.paths = live;
      if (e.chosen !== undefined && !live.some((q) => q.nextHop === e.chosen)) e.chosen = undefined;
    } else {
      this.counters.routesExpired++;
      this.invalidate(e, hops, lastExpiry);
    }
  }

  /**
   * Drops what expired by `now`: paths, routes past their delete time, and
   * the RREQs and RREPs remembered. Nothing can have expired before
   * `sweepDueUs`, the earliest of those times at the last sweep or set
   * since (a time only moves later otherwise), so until then a sweep costs
   * one comparison instead of a pass over the whole table.
   */
  private sweep(now: Micros): void {
    if (now < this.sweepDueUs) return;
    let due = Infinity;
    for (const e of [...this.table.values()]) {
      this.sweepEntry(e, now);
      if (e.paths.length > 0) for (const q of e.paths) due = Math.min(due, q.expiresUs);
      else if (e.deleteAtUs !== undefined && this.table.has(e.dst)) due = Math.min(due, e.deleteAtUs);
    }
    for (const [k, s] of this.seen) {
      if (s.expiresUs <= now) this.seen.delete(k);
      else due = Math.min(due, s.expiresUs);
    }
    for (const [k, s] of this.rrepUsed) {
      if (s.expiresUs <= now) this.rrepUsed.delete(k);
      else due = Math.min(due, s.expiresUs);
    }
    this.sweepDueUs = due;
  }

  /** Something now expires at `t`: the next sweep is due by then. */
  private expiresBy(t: Micros): void {
    if (t < this.sweepDueUs) this.sweepDueUs = t;
  }

  /** A discovery whose destination now has a valid route is done. */
  private settleDiscoveries(out: AodvAction[]): void {
    for (const d of [...this.discoveries.values()]) {
      const e = this.table.get(d.dst);
      if (e && e.paths.length > 0) {
        this.discoveries.delete(d.dst);
        this.counters.discoveriesFound++;
        out.push({ kind: 'route-found', dst: d.dst });
      }
    }
  }

  // -------------------------------------------------------------------------
  // Neighbours and link breaks

  /** Anything heard from `from` proves the link: the neighbour lives on and so does the direct path to it. */
  private heard(from: NodeAddr, now: Micros, out: AodvAction[]): void {
    let n = this.nbrs.get(from);
    if (!n) {
      n = { addr: from, lastHeardUs: now, r1Channel: undefined };
      this.nbrs.set(from, n);
      if (this.oldestHeardUs !== undefined && now < this.oldestHeardUs) this.oldestHeardUs = now;
      out.push({ kind: 'neighbour-up', addr: from });
      this.retryDiscoveries(now);
    }
    if (now > n.lastHeardUs) {
      // The neighbour heard longest ago is heard again: which one that is now is found when next asked.
      if (n.lastHeardUs === this.oldestHeardUs) this.oldestHeardUs = undefined;
      n.lastHeardUs = now;
    }
    this.offerDirect(from, now + Math.max(this.p.activeRouteTimeoutUs, this.t.neighbourLossUs), now);
  }

  /**
   * A neighbour came up (a router started again, or came into range): a
   * discovery that found nothing with the expanding ring and waits at
   * NET_DIAMETER (RFC 3561 6.3's binary exponential backoff, 2.8, 5.6,
   * 11.2 s with the defaults) sends its RREQ again at once, rate limit
   * permitting, its retries starting over. The backoff keeps a node from
   * flooding for a destination that is unreachable; a new neighbour is news
   * that it may not be any more, and the wait would otherwise hold the flow
   * for seconds after the path is back.
   */
  private retryDiscoveries(now: Micros): void {
    for (const d of this.discoveries.values()) {
      if (d.waitingToSend || d.ttl < this.p.netDiameter) continue;
      d.diameterAttempts = 0;
      d.waitingToSend = true;
      d.deadlineUs = now;
    }
  }

  private loseNeighbour(j: NodeAddr, now: Micros, out: AodvAction[]): void {
    const n = this.nbrs.get(j);
    if (n) {
      this.nbrs.delete(j);
      if (n.lastHeardUs === this.oldestHeardUs) this.oldestHeardUs = undefined;
      this.counters.neighboursLost++;
      out.push({ kind: 'neighbour-lost', addr: j });
    }
    this.breakLink(j, now, out);
  }

  /**
   * Every path through `j` goes. A destination with a path left fails over to
   * it silently; one with none is invalidated, reported as lost, and a RERR
   * goes to its precursors.
   */
  private breakLink(j: NodeAddr, now: Micros, out: AodvAction[]): void {
    const lost: Array<{ e: RouteEntry; pre: Set<NodeAddr> }> = [];
    for (const e of this.table.values()) {
      e.precursors.delete(j);
      const via = e.paths.filter((q) => q.nextHop === j);
      if (via.length === 0) continue;
      e.paths = e.paths.filter((q) => q.nextHop !== j);
      if (e.chosen === j) e.chosen = undefined;
      if (e.paths.length > 0) this.counters.failovers++;
      else lost.push({ e, pre: this.invalidate(e, Math.min(...via.map((q) => q.hopCount)), now) });
    }
    this.reportLost(lost, j, now, out);
  }

  private reportLost(lost: Array<{ e: RouteEntry; pre: Set<NodeAddr> }>, exclude: NodeAddr, now: Micros, out: AodvAction[]): void {
    const to = new Set<NodeAddr>();
    const unreachable: Rerr['unreachable'] = [];
    for (const { e, pre } of lost) {
      this.counters.routesLost++;
      out.push({ kind: 'route-lost', dst: e.dst });
      pre.delete(exclude);
      pre.delete(this.self);
      if (pre.size === 0) continue;
      for (const x of pre) to.add(x);
      unreachable.push({ dst: e.dst, dstSeq: e.seqKnown ? e.seq : 0 });
    }
    if (to.size === 0) return;
    // RFC 3561 6.11: unicast when a single neighbour needs it, broadcast otherwise.
    const dest = to.size === 1 ? [...to][0]! : BROADCAST;
    for (const { e, pre } of lost) if (pre.size > 0) e.told.set(dest, now);
    for (let i = 0; i < unreachable.length; i += RERR_MAX_DESTINATIONS) {
      this.sendRerr(dest, { type: 'rerr', noDelete: false, unreachable: unreachable.slice(i, i + RERR_MAX_DESTINATIONS) }, now, out);
    }
  }

  // -------------------------------------------------------------------------
  // Rate limits (RREQ_RATELIMIT, RERR_RATELIMIT): a sliding window of one second

  private rateOk(times: Micros[], limit: number, now: Micros): boolean {
    while (times.length > 0 && times[0]! + US_PER_S <= now) times.shift();
    return times.length < limit;
  }

  /** When the window has room again: one second after the limit-th most recent use. */
  private rateFreeAt(times: Micros[], limit: number): Micros {
    const k = times[Math.max(0, times.length - limit)];
    return k === undefined ? 0 : k + US_PER_S;
  }

  private sendRerr(to: NodeAddr, msg: Rerr, now: Micros, out: AodvAction[]): void {
    if (this.rerrQueue.length === 0 && this.rateOk(this.rerrTimes, this.p.rerrRateLimit, now)) {
      this.rerrTimes.push(now);
      this.counters.rerrSent++;
      out.push({ kind: 'send', to, msg });
      return;
    }
    this.counters.rerrRateLimited++;
    // A RERR waiting for the same neighbour takes these destinations too (newest
    // sequence number per destination, 255 at most), so a burst of breaks queues
    // one message per neighbour rather than one per packet.
    const waiting = this.rerrQueue.find((r) => r.to === to && r.msg.noDelete === msg.noDelete);
    if (waiting) {
      for (const u of msg.unreachable) {
        const have = waiting.msg.unreachable.find((x) => x.dst === u.dst);
        if (have) {
          if (u.dstSeq === 0 || (have.dstSeq !== 0 && seqNewer(u.dstSeq, have.dstSeq))) have.dstSeq = u.dstSeq === 0 ? have.dstSeq : u.dstSeq;
        } else if (waiting.msg.unreachable.length < 255) waiting.msg.unreachable.push({ ...u });
        else this.counters.rerrDropped++;
      }
      return;
    }
    if (this.rerrQueue.length >= MAX_QUEUED_RERR) {
      this.rerrQueue.shift();
      this.counters.rerrDropped++;
    }
    this.rerrQueue.push({ to, msg: { ...msg, unreachable: msg.unreachable.map((u) => ({ ...u })) } });
  }

  private drainRerr(now: Micros, out: AodvAction[]): void {
    while (this.rerrQueue.length > 0 && this.rateOk(this.rerrTimes, this.p.rerrRateLimit, now)) {
      const r = this.rerrQueue.shift()!;
      this.rerrTimes.push(now);
      this.counters.rerrSent++;
      out.push({ kind: 'send', to: r.to, msg: r.msg });
    }
  }

  private jitter(): Micros {
    return this.p.broadcastJitterUs > 0 ? this.rng.int(0, this.p.broadcastJitterUs) : 0;
  }

  /** Broadcasts `msg` after a random jitter; returns when it goes out. */
  private broadcastLater(msg: ControlMsg, now: Micros, out: AodvAction[]): Micros {
    const atUs = now + this.jitter();
    if (atUs <= now) {
      out.push({ kind: 'send', to: BROADCAST, msg });
      return now;
    }
    let i = this.delayed.length;
    while (i > 0 && this.delayed[i - 1]!.atUs > atUs) i--;
    this.delayed.splice(i, 0, { atUs, to: BROADCAST, msg });
    return atUs;
  }

  // -------------------------------------------------------------------------
  // Route discovery (RFC 3561 6.3, 6.4): expanding ring, then NET_DIAMETER with backoff

  private sendRreq(d: Discovery, now: Micros, out: AodvAction[]): void {
    if (!this.rateOk(this.rreqTimes, this.p.rreqRateLimit, now)) {
      this.counters.rreqRateLimited++;
      d.waitingToSend = true;
      d.deadlineUs = this.rateFreeAt(this.rreqTimes, this.p.rreqRateLimit);
      return;
    }
    this.rreqTimes.push(now);
    this.ownSeqValue = seqNext(this.ownSeqValue);
    this.rreqIdValue = (this.rreqIdValue + 1) >>> 0;
    const id = this.rreqIdValue;
    this.seen.set(`${this.self}/${id}`, { expiresUs: now + this.t.pathDiscoveryUs, replies: 0, repliedVia: new Set(), repliedFirstHop: new Set() });
    this.expiresBy(now + this.t.pathDiscoveryUs);
    const e = this.table.get(d.dst);
    const known = e !== undefined && e.seqKnown;
    const msg: Rreq = {
      type: 'rreq',
      join: false,
      repair: false,
      gratuitous: false,
      destinationOnly: this.p.destinationOnly,
      unknownSeq: !known,
      hopCount: 0,
      rreqId: id,
      dst: d.dst,
      dstSeq: known ? e.seq : 0,
      orig: this.self,
      origSeq: this.ownSeqValue,
      ttl: d.ttl,
      firstHop: this.self,
      pathCost: 0,
    };
    this.counters.rreqSent++;
    // Jittered like every broadcast: routers that start discoveries at the same
    // instant would otherwise collide on R3, and their retries again.
    const sentUs = this.broadcastLater(msg, now, out);
    d.waitingToSend = false;
    if (d.ttl >= this.p.netDiameter) {
      // RFC 6.3: binary exponential backoff of the wait at the full diameter.
      d.deadlineUs = sentUs + this.t.netTraversalUs * 2 ** d.diameterAttempts;
      d.diameterAttempts++;
    } else {
      d.deadlineUs = sentUs + this.t.ringTraversalUs(d.ttl);
    }
  }

  private discoveryDue(d: Discovery, now: Micros, out: AodvAction[]): void {
    if (d.waitingToSend) {
      this.sendRreq(d, now, out);
      return;
    }
    if (d.ttl >= this.p.netDiameter && d.diameterAttempts > this.p.rreqRetries) {
      this.discoveries.delete(d.dst);
      this.counters.discoveriesFailed++;
      out.push({ kind: 'route-failed', dst: d.dst });
      return;
    }
    if (d.ttl < this.p.netDiameter) {
      const next = d.ttl + this.p.ttlIncrement;
      d.ttl = next > this.p.ttlThreshold ? this.p.netDiameter : Math.min(next, this.p.netDiameter);
    }
    this.sendRreq(d, now, out);
  }

  // -------------------------------------------------------------------------
  // RREQ (RFC 3561 6.5, 6.6)

  private onRreq(q: Rreq, from: NodeAddr, now: Micros, out: AodvAction[]): void {
    this.counters.rreqReceived++;
    if (q.orig === this.self) {
      this.counters.duplicatesDropped++;
      return;
    }
    // The originator's neighbour on the path this copy took (AOMDV first hop).
    const firstHop = from === q.orig ? this.self : q.firstHop;
    const hopCount = q.hopCount + 1;
    const lifetime = Math.max(this.p.nodeTraversalUs, 2 * this.t.netTraversalUs - 2 * hopCount * this.p.nodeTraversalUs);
    const res = this.offer(q.orig, q.origSeq, { nextHop: from, hopCount, lastHop: firstHop, restCost: q.pathCost, expiresUs: now + lifetime }, now);

    const key = `${q.orig}/${q.rreqId}`;
    let seen = this.seen.get(key);
    const first = seen === undefined;
    if (!seen) {
      seen = { expiresUs: now + this.t.pathDiscoveryUs, replies: 0, repliedVia: new Set(), repliedFirstHop: new Set() };
      this.seen.set(key, seen);
      this.expiresBy(seen.expiresUs);
    }
    const oe = this.table.get(q.orig);
    const reverse = res === 'added' || res === 'refreshed' ? oe?.paths.find((x) => x.nextHop === from && x.lastHop === firstHop) : undefined;

    if (q.dst === this.self) {
      // The destination answers every copy that came through a new neighbour and a new first hop.
      if (!first) this.counters.duplicatesDropped++;
      if (!reverse || seen.replies >= this.p.maxPaths || seen.repliedVia.has(from) || seen.repliedFirstHop.has(firstHop)) return;
      seen.replies++;
      seen.repliedVia.add(from);
      seen.repliedFirstHop.add(firstHop);
      // RFC 6.6.1: the destination takes the requested number when it is newer than its own (own + 1 after a break).
      if (!q.unknownSeq && seqNewer(q.dstSeq, this.ownSeqValue)) this.ownSeqValue = q.dstSeq >>> 0 || 1;
      const rrep: Rrep = {
        type: 'rrep',
        repair: false,
        ackRequired: false,
        hopCount: 0,
        dst: this.self,
        dstSeq: this.ownSeqValue,
        orig: q.orig,
        lifetimeMs: Math.floor(this.p.myRouteTimeoutUs / US_PER_MS),
        lastHop: this.self,
        pathCost: 0,
      };
      this.counters.rrepSent++;
      out.push({ kind: 'send', to: from, msg: rrep });
      return;
    }

    if (!first) {
      this.counters.duplicatesDropped++;
      return;
    }
    // Only a copy that left this node a valid reverse route under the RREQ's sequence number goes on.
    if (!oe || oe.paths.length === 0 || oe.seq !== q.origSeq || res === 'self') return;

    const de = this.table.get(q.dst);
    if (de && de.paths.length > 0 && de.seqKnown && !this.p.destinationOnly && !q.destinationOnly && (q.unknownSeq || !seqNewer(q.dstSeq, de.seq))) {
      // RFC 6.6.2: an intermediate node with a fresh enough route answers instead of forwarding.
      const best = this.choose(de)!;
      const rrep: Rrep = {
        type: 'rrep',
        repair: false,
        ackRequired: false,
        hopCount: this.advertise(de),
        dst: q.dst,
        dstSeq: de.seq,
        orig: q.orig,
        lifetimeMs: Math.max(0, Math.floor((best.path.expiresUs - now) / US_PER_MS)),
        lastHop: best.path.lastHop,
        pathCost: Math.min(best.cost, MAX_PATH_COST),
      };
      de.precursors.add(from);
      oe.precursors.add(best.nextHop);
      this.counters.rrepSent++;
      this.counters.intermediateReplies++;
      out.push({ kind: 'send', to: from, msg: rrep });
      return;
    }

    if (q.ttl <= 1) {
      this.counters.ttlExpired++;
      return;
    }
    // Advertise the reverse route: its hop count is fixed now, and the copy names the path it took.
    const via = reverse ?? this.choose(oe)!.path;
    const fwd: Rreq = {
      ...q,
      hopCount: this.advertise(oe),
      ttl: q.ttl - 1,
      firstHop: via.lastHop,
      pathCost: Math.min(via.restCost + this.linkCost(via.nextHop), MAX_PATH_COST),
    };
    // RFC 6.5: the copy asks for at least the destination sequence number this node knows.
    if (de && de.seqKnown && (q.unknownSeq || seqNewer(de.seq, q.dstSeq))) {
      fwd.dstSeq = de.seq;
      fwd.unknownSeq = false;
    }
    this.counters.rreqForwarded++;
    this.broadcastLater(fwd, now, out);
  }

  // -------------------------------------------------------------------------
  // RREP (RFC 3561 6.7)

  private onRrep(r: Rrep, from: NodeAddr, now: Micros, out: AodvAction[]): void {
    this.counters.rrepReceived++;
    if (r.dst === this.self) return;
    // The destination's neighbour on this path (AOMDV last hop).
    const lastHop = from === r.dst ? this.self : r.lastHop;
    const res = this.offer(
      r.dst,
      r.dstSeq,
      { nextHop: from, hopCount: r.hopCount + 1, lastHop, restCost: r.pathCost, expiresUs: now + Math.max(0, r.lifetimeMs) * US_PER_MS },
      now,
    );
    if (r.orig === this.self) return;
    if (res !== 'added' && res !== 'refreshed') return;
    const de = this.table.get(r.dst)!;
    const path = de.paths.find((q) => q.nextHop === from)!;
    const oe = this.table.get(r.orig);
    if (!oe || oe.paths.length === 0) {
      this.counters.rrepDropped++;
      return;
    }
    // Each accepted RREP goes back along a reverse path not used yet for this discovery.
    const key = `${r.orig}/${r.dst}/${r.dstSeq}/${oe.seq}`;
    let used = this.rrepUsed.get(key);
    if (!used) {
      used = { expiresUs: now + this.t.pathDiscoveryUs, via: new Set() };
      this.rrepUsed.set(key, used);
      this.expiresBy(used.expiresUs);
    }
    // A refreshed path is news only to the first RREP of a discovery (a retried RREQ's answer).
    if (res === 'refreshed' && used.via.size > 0) return;
    const back = this.candidates(oe)
      .filter((c) => !used.via.has(c.nextHop) && c.nextHop !== from)
      .sort(comparePaths)[0];
    if (!back) {
      this.counters.rrepDropped++;
      return;
    }
    used.via.add(back.nextHop);
    back.path.expiresUs = Math.max(back.path.expiresUs, now + this.p.activeRouteTimeoutUs);
    de.precursors.add(back.nextHop);
    oe.precursors.add(from);
    const fwd: Rrep = {
      type: 'rrep',
      repair: r.repair,
      ackRequired: false,
      hopCount: this.advertise(de),
      dst: r.dst,
      dstSeq: de.seq,
      orig: r.orig,
      lifetimeMs: Math.max(0, Math.floor((path.expiresUs - now) / US_PER_MS)),
      lastHop: path.lastHop,
      pathCost: Math.min(path.restCost + this.linkCost(from), MAX_PATH_COST),
    };
    this.counters.rrepForwarded++;
    out.push({ kind: 'send', to: back.nextHop, msg: fwd });
  }

  // -------------------------------------------------------------------------
  // RERR (RFC 3561 6.11)

  private onRerr(r: Rerr, from: NodeAddr, now: Micros, out: AodvAction[]): void {
    this.counters.rerrReceived++;
    const lost: Array<{ e: RouteEntry; pre: Set<NodeAddr> }> = [];
    for (const u of r.unreachable) {
      if (u.dst === this.self || u.dst === from) continue;
      const e = this.table.get(u.dst);
      if (!e) continue;
      const via = e.paths.filter((q) => q.nextHop === from);
      if (via.length === 0) continue;
      // A RERR older than the route (0: unknown) does not touch it.
      if (u.dstSeq !== 0 && e.seqKnown && seqNewer(e.seq, u.dstSeq)) {
        this.counters.staleRejected++;
        continue;
      }
      e.paths = e.paths.filter((q) => q.nextHop !== from);
      if (e.chosen === from) e.chosen = undefined;
      if (e.paths.length > 0) this.counters.failovers++;
      else lost.push({ e, pre: this.invalidate(e, Math.min(...via.map((q) => q.hopCount)), now, u.dstSeq) });
    }
    this.reportLost(lost, from, now, out);
  }

  // -------------------------------------------------------------------------
  // HELLO (RFC 3561 6.9)

  private onHello(h: Hello, from: NodeAddr, out: AodvAction[]): void {
    this.counters.helloReceived++;
    const n = this.nbrs.get(from);
    if (n) n.r1Channel = h.r1Channel;
    const e = this.entry(from);
    if (!e.seqKnown || seqNewer(h.seq, e.seq)) {
      e.seq = h.seq >>> 0;
      e.seqKnown = true;
      e.advertisedHops = undefined;
      e.paths = e.paths.filter((q) => q.nextHop === from);
    }
    out.push({ kind: 'hello-heard', from, hello: h });
  }

  private helloAction(): AodvAction {
    const c = this.parts.hello();
    this.counters.helloSent++;
    const msg: Hello = { type: 'hello', src: this.self, seq: this.ownSeqValue, r1Channel: c.r1Channel, workload: c.workload, neighbours: c.neighbours ?? [] };
    return { kind: 'send', to: BROADCAST, msg };
  }
}
