import type { Micros } from '../core/time.js';
import type { Result } from '../core/result.js';
import { err, ok } from '../core/result.js';
import { formatFlow } from '../vnf/flow.js';
import { meshIp6, meshIpv4 } from '../wire/addresses.js';
import { checkSpec, sameTraffic, type FlowSpec } from './flow-spec.js';
import type { OfAction, OfInstruction } from '../wire/openflow/actions.js';
import { flowMod as addFlowMod, OFPP, OFPTT_ALL } from '../wire/openflow/actions.js';
import type { OfMatch } from '../wire/openflow/match.js';
import type { OfMessage, OfPort } from '../wire/openflow/types.js';

/**
 * The controller / VIM core of seeds/000 section 4 (Fig. 4), sans-IO: it
 * speaks OfMessage values with any number of switch sessions (one per
 * router), keeps the directed graph of links with their remaining capacity
 * (a link port's curr_speed, kbps), installs every flow along its minimum
 * CETT path and places TCP-ACC VNFs on the path's relays through an
 * experimenter message. A driver (TCP, or a test) carries the messages.
 *
 * Sessions: `open(key)` gives HELLO, FEATURES_REQUEST and a PORT_DESC
 * multipart request. FEATURES_REPLY names the router: its mesh address is
 * datapathId & 0xffff (as `datapathIdOf` makes it). PORT_DESC and
 * PORT_STATUS give its links: port p (1..0xffff) is the link to neighbour
 * p - 1, its curr_speed the link's RC; a port whose config has PORT_DOWN or
 * whose state has LINK_DOWN is no link. LOCAL and other reserved ports are
 * not links.
 *
 * CETT: a link's ETT is packetBits / RC seconds (RC in bit/s); a path's CETT
 * the sum over its links. A link a -> b is usable when RC_ab > 0, both
 * routers have a session, and b has a port back to a with RC > 0 (the
 * reverse direction carries the flow's ACKs); its cost is the forward ETT.
 * The best path is found by Dijkstra over (CETT, hops, the addresses along
 * the path): equal costs (within a relative 1e-9) go to fewer hops, then to
 * the path whose addresses are lower, first difference first.
 *
 * Flows: each router on the path gets two FLOW_MOD adds, priority
 * `priority` (1000), cookie = the flow id, no timeouts, table 0:
 *   forward  eth_type=0x0800, ip_proto, ipv4_src=src, ipv4_dst=dst[, tcp_dst|udp_dst=dstPort]
 *            -> output:(next router + 1), LOCAL at the destination
 *   reverse  eth_type=0x0800, ip_proto, ipv4_src=dst, ipv4_dst=src[, tcp_src|udp_src=dstPort]
 *            -> output:(previous router + 1), LOCAL at the source
 * Addresses are the routers' 10.hi.lo.1. Removal is a DELETE on table
 * OFPTT_ALL with cookie = id and cookie_mask all ones.
 *
 * Re-routing, after every change of the topology: a flow whose path lost a
 * link (or a router) moves to the best path; a flow whose path's CETT is
 * more than `hysteresis` (0.2) above the best path's moves to it. The new
 * path's entries are added first (an ADD with the same match and priority
 * replaces a router's old entry), then routers no longer on the path get the
 * cookie delete. A flow with no path is `pending` (its entries deleted,
 * its VNFs stopped) until one appears.
 *
 * VNF placement (the experimenter message; CETT_VNF_EXPERIMENTER):
 *
 *   OFPT_EXPERIMENTER, experimenter = 0x00c06e54, controller -> switch
 *     exp_type 1 (CETT_EXP_START_VNF): start a VNF instance
 *     exp_type 2 (CETT_EXP_STOP_VNF):  stop the instance(s) with this ref
 *     data: UTF-8 JSON, no NUL, no padding:
 *       start: {"type":"tcp-acc","flow":"tcp:10.0.0.1-10.0.4.1:5001","params":{"mode":"split"},"ref":7}
 *       stop:  {"type":"tcp-acc","flow":"tcp:10.0.0.1-10.0.4.1:5001","ref":7}
 *     type:   a registered VNF type (tcp-acc)
 *     flow:   the flow pattern, as `formatFlow` writes it (src/vnf/flow.ts); "*" for any field
 *     params: the VNF type's parameters (tcp-acc: mode, bufferBytes)
 *     ref:    the controller's flow id (the FLOW_MODs' cookie); a switch keeps
 *             one instance per (type, ref) and a stop of an unknown ref is not an error
 *   A switch that does not know the experimenter answers OFPET_BAD_REQUEST /
 *   OFPBRC_BAD_EXPERIMENTER (the controller counts it, as every ERROR).
 *
 * A VNF is placed on relays only (never the flow's end routers): relay i
 * (hops from the source, 1..n-1) when i % everyHops == 0.
 */

export const CETT_VNF_EXPERIMENTER = 0x00c06e54;
export const CETT_EXP_START_VNF = 1;
export const CETT_EXP_STOP_VNF = 2;

/** OFPPC_PORT_DOWN and OFPPS_LINK_DOWN. */
const PORT_DOWN = 1;
const LINK_DOWN = 1;
const OF13 = 0x04;
const ALL_ONES = 0xffff_ffff_ffff_ffffn;

export interface ControllerOptions {
  /** Bits of the packet a link's ETT is computed for. Default 8000 (1000 bytes). */
  packetBits?: number;
  /** A flow moves when its path's CETT exceeds the best one's by more than this fraction. Default 0.2. */
  hysteresis?: number;
  /** The flow entries' priority. Default 1000. */
  priority?: number;
}

/** A message for a session. */
export interface Send<K> {
  to: K;
  msg: OfMessage;
}

export type FlowState = 'installed' | 'pending';

export interface FlowOutcome<K> {
  state: FlowState;
  /** The routers of the path, source first (empty when pending). */
  routers: number[];
  cett: number;
  /** What to send, in order; a router's messages are contiguous within each phase (adds, VNF starts, deletes, VNF stops). */
  out: Send<K>[];
}

export type FlowRefusal =
  | { reason: 'duplicate-id'; detail: string }
  | { reason: 'duplicate-flow'; detail: string }
  | { reason: 'bad-spec'; detail: string }
  | { reason: 'unknown-flow'; detail: string };

export interface PathInfo {
  id: number;
  state: FlowState;
  routers: number[];
  /** Seconds per packet along the path, at the current RCs (Infinity: broken; NaN: pending). */
  cett: number;
  /** Routers running the flow's VNF. */
  vnfs: number[];
}

export interface LinkInfo {
  from: number;
  to: number;
  portNo: number;
  rcKbps: number;
  /** Seconds per packet; Infinity when RC is 0. */
  ett: number;
}

export interface Topology<K> {
  routers: Array<{ addr: number; datapathId: bigint; key: K }>;
  links: LinkInfo[];
}

interface Session<K> {
  key: K;
  helloDone: boolean;
  datapathId: bigint | undefined;
  addr: number | undefined;
  /** Link ports by number: neighbour and RC. */
  ports: Map<number, { neighbour: number; rcKbps: number }>;
  /** PORT_DESC parts while REPLY_MORE. */
  partial: OfPort[];
}

interface Flow {
  spec: FlowSpec;
  routers: number[];
  vnfs: number[];
}

const RELATIVE_EPS = 1e-9;

const dotted = (addr: number): string => `10.${(addr >> 8) & 0xff}.${addr & 0xff}.1`;

export class CettController<K = string> {
  readonly counters = {
    sessions: 0,
    messages: 0,
    flowModsSent: 0,
    experimenterSent: 0,
    portStatus: 0,
    reroutes: 0,
    errors: 0,
    flowsAdded: 0,
    flowsRemoved: 0,
    ignored: 0,
  };
  private readonly sessions = new Map<K, Session<K>>();
  /** Router address -> its session key. */
  private readonly byAddr = new Map<number, K>();
  private readonly flows = new Map<number, Flow>();
  /**
   * Flows removed, newest last (at most ENDED_KEPT): a router that was away
   * when one was removed still has its entries and VNFs, so each router that
   * joins is told to delete and stop them.
   */
  private readonly ended = new Map<number, FlowSpec>();
  private xid = 1;
  private readonly packetBits: number;
  private readonly hysteresis: number;
  private readonly priority: number;

  constructor(o: ControllerOptions = {}) {
    this.packetBits = o.packetBits ?? 8 * 1000;
    this.hysteresis = o.hysteresis ?? 0.2;
    this.priority = o.priority ?? 1000;
  }

  /** The controller has no timers of its own (echo keep-alive is the transport's). */
  nextDeadline(): Micros | undefined {
    return undefined;
  }

  /** A new switch session: HELLO, FEATURES_REQUEST, PORT_DESC request. */
  open(key: K): OfMessage[] {
    if (this.sessions.has(key)) this.close(key);
    this.sessions.set(key, { key, helloDone: false, datapathId: undefined, addr: undefined, ports: new Map(), partial: [] });
    this.counters.sessions++;
    return [
      { type: 'hello', version: OF13, xid: this.nextXid(), elements: [{ type: 'version-bitmap', bitmaps: [1 << OF13] }] },
      { type: 'features-request', xid: this.nextXid() },
      { type: 'multipart-request', xid: this.nextXid(), flags: 0, body: { type: 'port-desc' } },
    ];
  }

  /** A session went: its router and its links leave the topology; flows through it move. */
  close(key: K, now: Micros = 0): Send<K>[] {
    const s = this.sessions.get(key);
    if (!s) return [];
    this.sessions.delete(key);
    if (s.addr !== undefined && this.byAddr.get(s.addr) === key) this.byAddr.delete(s.addr);
    return this.reconsider(now);
  }

  /** One message from a session; returns what to send (to that session or others). */
  receive(key: K, msg: OfMessage, now: Micros): Send<K>[] {
    const s = this.sessions.get(key);
    if (!s) {
      this.counters.ignored++;
      return [];
    }
    this.counters.messages++;
    switch (msg.type) {
      case 'hello':
        s.helloDone = true;
        return [];
      case 'echo-request':
        return [{ to: key, msg: { type: 'echo-reply', xid: msg.xid, data: msg.data } }];
      case 'error':
      case 'error-experimenter':
        this.counters.errors++;
        return [];
      case 'features-reply': {
        const addr = Number(msg.datapathId & 0xffffn);
        if (s.addr !== undefined && this.byAddr.get(s.addr) === key) this.byAddr.delete(s.addr);
        const prev = this.byAddr.get(addr);
        if (prev !== undefined && prev !== key) {
          // The same router on a new connection: the old session is stale.
          this.sessions.delete(prev);
        }
        s.datapathId = msg.datapathId;
        s.addr = addr;
        this.byAddr.set(addr, key);
        // What it may still hold of flows that ended while it was away goes first.
        const owed: Send<K>[] = [];
        for (const spec of this.ended.values()) {
          owed.push({ to: key, msg: this.flowMod(spec, 'delete', {}, 0) });
          if (spec.acc) owed.push({ to: key, msg: this.vnfMessage(spec, CETT_EXP_STOP_VNF) });
        }
        return [...owed, ...this.reconsider(now)];
      }
      case 'multipart-reply': {
        if (msg.body.type !== 'port-desc') return [];
        s.partial.push(...msg.body.ports);
        if (msg.flags & 1) return [];
        s.ports.clear();
        for (const p of s.partial) this.setPort(s, p);
        s.partial = [];
        return this.reconsider(now);
      }
      case 'port-status': {
        this.counters.portStatus++;
        if (msg.reason === 'delete') s.ports.delete(msg.port.portNo);
        else this.setPort(s, msg.port);
        return this.reconsider(now);
      }
      default:
        this.counters.ignored++;
        return [];
    }
  }

  /** Installs a flow on its min-CETT path (or keeps it pending until a path exists). */
  addFlow(spec: FlowSpec, now: Micros): Result<FlowOutcome<K>, FlowRefusal> {
    void now;
    const bad = checkSpec(spec);
    if (bad) return err({ reason: 'bad-spec', detail: bad });
    if (this.flows.has(spec.id)) return err({ reason: 'duplicate-id', detail: `flow ${spec.id} exists` });
    const same = [...this.flows.values()].find((f) => sameTraffic(f.spec, spec));
    // Two flows with one match would replace each other's entries (and run two TCP-ACCs on one connection).
    if (same) return err({ reason: 'duplicate-flow', detail: `flow ${same.spec.id} already places this traffic` });
    this.ended.delete(spec.id);
    const f: Flow = { spec: { ...spec, ...(spec.acc ? { acc: { ...spec.acc } } : {}) }, routers: [], vnfs: [] };
    this.flows.set(spec.id, f);
    this.counters.flowsAdded++;
    const best = this.bestPath(spec.srcAddr, spec.dstAddr);
    const out = best ? this.moveTo(f, best.routers) : [];
    return ok({ state: f.routers.length > 0 ? 'installed' : 'pending', routers: [...f.routers], cett: best?.cost ?? NaN, out });
  }

  /** Deletes a flow's entries everywhere (cookie) and stops its VNFs. */
  removeFlow(id: number, now: Micros): Result<Send<K>[], FlowRefusal> {
    void now;
    const f = this.flows.get(id);
    if (!f) return err({ reason: 'unknown-flow', detail: `no flow ${id}` });
    const out = this.moveTo(f, []);
    this.flows.delete(id);
    this.ended.delete(id);
    this.ended.set(id, f.spec);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
    this.counters.flowsRemoved++;
    return ok(out);
  }

  topology(): Topology<K> {
    const routers: Topology<K>['routers'] = [];
    const links: LinkInfo[] = [];
    for (const [addr, key] of [...this.byAddr].sort((a, b) => a[0] - b[0])) {
      const s = this.sessions.get(key);
      if (!s || s.datapathId === undefined) continue;
      routers.push({ addr, datapathId: s.datapathId, key });
      for (const [portNo, p] of [...s.ports].sort((a, b) => a[0] - b[0]))
        links.push({ from: addr, to: p.neighbour, portNo, rcKbps: p.rcKbps, ett: this.ett(p.rcKbps) });
    }
    return { routers, links };
  }

  paths(): PathInfo[] {
    return [...this.flows.values()]
      .sort((a, b) => a.spec.id - b.spec.id)
      .map((f) => ({
        id: f.spec.id,
        state: f.routers.length > 0 ? 'installed' : 'pending',
        routers: [...f.routers],
        cett: f.routers.length > 0 ? this.pathCost(f.routers) : NaN,
        vnfs: [...f.vnfs],
      }));
  }

  /** The min-CETT path between two routers now, or undefined. */
  bestPath(src: number, dst: number): { routers: number[]; cost: number } | undefined {
    if (!this.known(src) || !this.known(dst) || src === dst) return undefined;
    interface Label {
      cost: number;
      path: number[];
    }
    const better = (a: Label, b: Label): boolean => {
      const tol = RELATIVE_EPS * Math.max(Math.abs(a.cost), Math.abs(b.cost));
      if (a.cost < b.cost - tol) return true;
      if (a.cost > b.cost + tol) return false;
      if (a.path.length !== b.path.length) return a.path.length < b.path.length;
      for (let i = 0; i < a.path.length; i++) {
        const x = a.path[i]!;
        const y = b.path[i]!;
        if (x !== y) return x < y;
      }
      return false;
    };
    const labels = new Map<number, Label>([[src, { cost: 0, path: [src] }]]);
    const done = new Set<number>();
    for (;;) {
      let u: number | undefined;
      let lu: Label | undefined;
      for (const [n, l] of labels) {
        if (done.has(n)) continue;
        if (!lu || better(l, lu)) {
          u = n;
          lu = l;
        }
      }
      if (u === undefined || !lu) return undefined;
      if (u === dst) return { routers: lu.path, cost: lu.cost };
      done.add(u);
      for (const [v, rc] of this.usableOut(u)) {
        if (done.has(v)) continue;
        const cand: Label = { cost: lu.cost + this.ett(rc), path: [...lu.path, v] };
        const cur = labels.get(v);
        if (!cur || better(cand, cur)) labels.set(v, cand);
      }
    }
  }

  // ---------------------------------------------------------------------------

  private setPort(s: Session<K>, p: OfPort): void {
    if (p.portNo < 1 || p.portNo > 0xffff) return;
    if (p.config & PORT_DOWN || p.state & LINK_DOWN) {
      s.ports.delete(p.portNo);
      return;
    }
    s.ports.set(p.portNo, { neighbour: p.portNo - 1, rcKbps: p.currSpeed });
  }

  private known(addr: number): boolean {
    const k = this.byAddr.get(addr);
    return k !== undefined && this.sessions.get(k)?.datapathId !== undefined;
  }

  private linkRc(from: number, to: number): number | undefined {
    const k = this.byAddr.get(from);
    const s = k === undefined ? undefined : this.sessions.get(k);
    return s?.ports.get(to + 1)?.rcKbps;
  }

  /** Usable links out of a router: [neighbour, RC], neighbours in address order. */
  private usableOut(u: number): Array<[number, number]> {
    const k = this.byAddr.get(u);
    const s = k === undefined ? undefined : this.sessions.get(k);
    if (!s) return [];
    const out: Array<[number, number]> = [];
    for (const p of s.ports.values()) {
      if (p.rcKbps <= 0 || !this.known(p.neighbour)) continue;
      const back = this.linkRc(p.neighbour, u);
      if (back === undefined || back <= 0) continue;
      out.push([p.neighbour, p.rcKbps]);
    }
    return out.sort((a, b) => a[0] - b[0]);
  }

  private ett(rcKbps: number): number {
    return rcKbps > 0 ? this.packetBits / (rcKbps * 1000) : Infinity;
  }

  /** A path's CETT now; Infinity when a link or router of it is gone. */
  private pathCost(routers: readonly number[]): number {
    let c = 0;
    for (let i = 0; i + 1 < routers.length; i++) {
      const a = routers[i]!;
      const b = routers[i + 1]!;
      if (!this.known(a) || !this.known(b)) return Infinity;
      const rc = this.linkRc(a, b);
      const back = this.linkRc(b, a);
      if (rc === undefined || rc <= 0 || back === undefined || back <= 0) return Infinity;
      c += this.ett(rc);
    }
    return c;
  }

  /** After a topology change: pending flows install, broken or much worse paths move. */
  private reconsider(now: Micros): Send<K>[] {
    void now;
    const out: Send<K>[] = [];
    for (const f of [...this.flows.values()].sort((a, b) => a.spec.id - b.spec.id)) {
      const best = this.bestPath(f.spec.srcAddr, f.spec.dstAddr);
      if (f.routers.length === 0) {
        if (best) out.push(...this.moveTo(f, best.routers));
        continue;
      }
      const cur = this.pathCost(f.routers);
      if (!Number.isFinite(cur)) {
        this.counters.reroutes++;
        out.push(...this.moveTo(f, best ? best.routers : []));
        continue;
      }
      if (best && !sameRouters(best.routers, f.routers) && cur > best.cost * (1 + this.hysteresis)) {
        this.counters.reroutes++;
        out.push(...this.moveTo(f, best.routers));
      }
    }
    return out;
  }

  /** Moves a flow onto `routers` (empty: off the mesh): adds, VNF starts, deletes, VNF stops. */
  private moveTo(f: Flow, routers: number[]): Send<K>[] {
    const out: Send<K>[] = [];
    const { spec } = f;
    const n = routers.length - 1;
    for (let i = 0; i <= n && n > 0; i++) {
      const r = routers[i]!;
      const to = this.byAddr.get(r);
      if (to === undefined) continue;
      const fwdPort = i === n ? OFPP.LOCAL : routers[i + 1]! + 1;
      const revPort = i === 0 ? OFPP.LOCAL : routers[i - 1]! + 1;
      out.push({ to, msg: this.flowMod(spec, 'add', this.matchOf(spec, false), fwdPort) });
      out.push({ to, msg: this.flowMod(spec, 'add', this.matchOf(spec, true), revPort) });
    }
    const sites = spec.acc && n > 0 ? relaySites(routers, spec.acc.everyHops ?? 1) : [];
    for (const r of sites) {
      if (f.vnfs.includes(r)) continue;
      const to = this.byAddr.get(r);
      if (to !== undefined) out.push({ to, msg: this.vnfMessage(spec, CETT_EXP_START_VNF) });
    }
    for (const r of f.routers) {
      if (routers.includes(r)) continue;
      const to = this.byAddr.get(r);
      if (to !== undefined) out.push({ to, msg: this.flowMod(spec, 'delete', {}, OFPP.ANY) });
    }
    for (const r of f.vnfs) {
      if (sites.includes(r)) continue;
      const to = this.byAddr.get(r);
      if (to !== undefined) out.push({ to, msg: this.vnfMessage(spec, CETT_EXP_STOP_VNF) });
    }
    f.routers = n > 0 ? [...routers] : [];
    f.vnfs = sites;
    return out;
  }

  /** A labelled flow's packets are IPv6 with its label to the flow table; an unlabelled flow's are IPv4. */
  private matchOf(spec: FlowSpec, reverse: boolean): OfMatch {
    const src = reverse ? spec.dstAddr : spec.srcAddr;
    const dst = reverse ? spec.srcAddr : spec.dstAddr;
    const ipProto = spec.proto === 'tcp' ? 6 : 17;
    const m: OfMatch = spec.label
      ? { ethType: 0x86dd, ipProto, ipv6Src: { value: meshIp6(src) }, ipv6Dst: { value: meshIp6(dst) }, ipv6Flabel: { value: spec.label } }
      : { ethType: 0x0800, ipProto, ipv4Src: { value: meshIpv4(src) }, ipv4Dst: { value: meshIpv4(dst) } };
    if (spec.dstPort !== undefined) {
      if (spec.proto === 'tcp') m[reverse ? 'tcpSrc' : 'tcpDst'] = spec.dstPort;
      else m[reverse ? 'udpSrc' : 'udpDst'] = spec.dstPort;
    }
    return m;
  }

  /** An ADD with an output to `port`, or a DELETE of every entry with the flow's cookie (port ignored). */
  private flowMod(spec: FlowSpec, command: 'add' | 'delete', match: OfMatch, port: number): OfMessage {
    const output: OfAction = { type: 'output', port, maxLen: 0 };
    const actions: OfAction[] = spec.queue === undefined ? [output] : [{ type: 'set-queue', queueId: spec.queue }, output];
    const instructions: OfInstruction[] = command === 'add' ? [{ type: 'apply-actions', actions }] : [];
    const mod = addFlowMod({
      cookie: BigInt(spec.id),
      cookieMask: command === 'delete' ? ALL_ONES : 0n,
      tableId: command === 'delete' ? OFPTT_ALL : 0,
      command,
      priority: this.priority,
      match,
      instructions,
    });
    this.counters.flowModsSent++;
    return { type: 'flow-mod', xid: this.nextXid(), mod };
  }

  private vnfMessage(spec: FlowSpec, expType: number): OfMessage {
    const flow = formatFlow({
      proto: spec.proto,
      srcIp: dotted(spec.srcAddr),
      dstIp: dotted(spec.dstAddr),
      ...(spec.dstPort !== undefined ? { dstPort: spec.dstPort } : {}),
    });
    const body: Record<string, unknown> = { type: 'tcp-acc', flow };
    if (expType === CETT_EXP_START_VNF && spec.acc) {
      const params: Record<string, unknown> = { mode: spec.acc.mode };
      if (spec.acc.bufferBytes !== undefined) params.bufferBytes = spec.acc.bufferBytes;
      body.params = params;
    }
    body.ref = spec.id;
    this.counters.experimenterSent++;
    return { type: 'experimenter', xid: this.nextXid(), experimenter: CETT_VNF_EXPERIMENTER, expType, data: new TextEncoder().encode(JSON.stringify(body)) };
  }

  private nextXid(): number {
    const x = this.xid;
    this.xid = (this.xid + 1) >>> 0 || 1;
    return x;
  }
}

/** Relays (hops 1..n-1 from the source) at multiples of everyHops. */
function relaySites(routers: readonly number[], everyHops: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < routers.length - 1; i++) if (i % everyHops === 0) out.push(routers[i]!);
  return out;
}

function sameRouters(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Removed flows whose cleanup a joining router is sent. */
const ENDED_KEPT = 1024;
