import { EventEngine, type EventId } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import { MultipathAodv, type AodvAction, type AodvParams } from '../../src/routing/aodv.js';
import { BROADCAST, type ControlMsg, type NodeAddr } from '../../src/wire/mesh.js';

/**
 * A test network of multipath AODV cores in virtual time: an adjacency the
 * test may change at any moment (who hears whom on R3), control messages
 * delivered after a random delay (so copies overtake each other), optional
 * loss, unicasts to a node no longer adjacent reported back to the sender as
 * a link failure (as a MAC that ran out of retries would), and a toy data
 * plane that relays packets hop by hop with lookup/forwarding/noRoute.
 */

export interface NetOptions {
  /** Node addresses; `n` nodes numbered 1..n when a number. */
  nodes: number | NodeAddr[];
  links?: Array<[NodeAddr, NodeAddr]>;
  seed?: number;
  params?: Partial<AodvParams>;
  /** Per-node parameter overrides. */
  nodeParams?: (addr: NodeAddr) => Partial<AodvParams>;
  /** Delivery delay, uniform in [min, max] us (default 1-3 ms). */
  delayUs?: [Micros, Micros];
  /** Probability that one copy of a broadcast is lost. */
  loss?: number;
  /** Probability that a unicast control message is lost silently. */
  unicastLoss?: number;
  /** Time a MAC spends before it reports a unicast to a non-neighbour as failed. */
  macFailUs?: Micros;
  /** Start time of each core (default 0). */
  startUs?: (addr: NodeAddr) => Micros;
}

export interface LoggedAction {
  atUs: Micros;
  node: NodeAddr;
  action: AodvAction;
}

export interface Transmission {
  atUs: Micros;
  from: NodeAddr;
  to: NodeAddr;
  msg: ControlMsg;
}

export interface DataPacket {
  id: number;
  src: NodeAddr;
  dst: NodeAddr;
  ttl: number;
  /** Nodes the packet went through, source first. */
  path: NodeAddr[];
}

export type DataDrop = 'no-route' | 'link' | 'ttl' | 'discovery-failed';

export const linkKey = (a: NodeAddr, b: NodeAddr): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

export class TestNet {
  readonly engine = new EventEngine(0);
  readonly nodes = new Map<NodeAddr, MultipathAodv>();
  readonly addrs: NodeAddr[];
  readonly log: LoggedAction[] = [];
  readonly sent: Transmission[] = [];
  readonly delivered: Array<{ atUs: Micros; pkt: DataPacket }> = [];
  readonly dropped: Array<{ atUs: Micros; node: NodeAddr; pkt: DataPacket; reason: DataDrop }> = [];
  /** Called after every event, for invariant checks. */
  afterEvent: (() => void) | undefined;
  /** Data packets a node relays keep this TTL (hops). */
  dataTtl = 64;
  private readonly adj = new Map<NodeAddr, Set<NodeAddr>>();
  private readonly costs = new Map<string, number>();
  private readonly rng: Rng;
  private readonly alarms = new Map<NodeAddr, { id: EventId; at: Micros }>();
  private readonly buffers = new Map<string, DataPacket[]>();
  private packetIds = 0;
  private readonly delay: [Micros, Micros];

  constructor(private readonly opts: NetOptions) {
    const seed = opts.seed ?? 1;
    this.rng = Rng.fromSeed(seed).fork('net');
    this.delay = opts.delayUs ?? [1_000, 3_000];
    this.addrs = typeof opts.nodes === 'number' ? Array.from({ length: opts.nodes }, (_, i) => i + 1) : [...opts.nodes];
    for (const a of this.addrs) {
      this.adj.set(a, new Set());
      const core = new MultipathAodv(
        {
          self: a,
          rng: Rng.fromSeed(seed).fork(`aodv-${a}`),
          startUs: opts.startUs?.(a) ?? 0,
          hello: () => ({ r1Channel: (a % 11) + 1, workload: [] }),
          linkCost: (j) => this.costs.get(`${a}>${j}`) ?? 1,
        },
        { ...opts.params, ...opts.nodeParams?.(a) },
      );
      this.nodes.set(a, core);
    }
    for (const [a, b] of opts.links ?? []) this.connect(a, b);
    for (const a of this.addrs) this.rearm(a);
  }

  get now(): Micros {
    return this.engine.now();
  }

  node(a: NodeAddr): MultipathAodv {
    const n = this.nodes.get(a);
    if (!n) throw new Error(`no node ${a}`);
    return n;
  }

  // -------------------------------------------------------------------------
  // Topology and link costs

  connect(a: NodeAddr, b: NodeAddr): void {
    this.adj.get(a)!.add(b);
    this.adj.get(b)!.add(a);
  }

  disconnect(a: NodeAddr, b: NodeAddr): void {
    this.adj.get(a)!.delete(b);
    this.adj.get(b)!.delete(a);
  }

  adjacent(a: NodeAddr, b: NodeAddr): boolean {
    return this.adj.get(a)?.has(b) ?? false;
  }

  neighboursOf(a: NodeAddr): NodeAddr[] {
    return [...this.adj.get(a)!].sort((x, y) => x - y);
  }

  links(): Array<[NodeAddr, NodeAddr]> {
    const out: Array<[NodeAddr, NodeAddr]> = [];
    for (const a of this.addrs) for (const b of this.adj.get(a)!) if (a < b) out.push([a, b]);
    return out;
  }

  /** The cost node `from` sees for sending to `to`. */
  setCost(from: NodeAddr, to: NodeAddr, cost: number): void {
    this.costs.set(`${from}>${to}`, cost);
  }

  // -------------------------------------------------------------------------
  // Running

  run(until: Micros): void {
    for (;;) {
      const t = this.engine.nextAt();
      if (t === undefined || t > until) break;
      this.engine.step();
      this.afterEvent?.();
    }
    if (until > this.engine.now()) this.engine.clock.advanceTo(until);
  }

  runFor(d: Micros): void {
    this.run(this.now + d);
  }

  /** Calls into a core now and carries out what it returns. */
  call(a: NodeAddr, f: (core: MultipathAodv, now: Micros) => AodvAction[]): AodvAction[] {
    const actions = f(this.node(a), this.now);
    this.apply(a, actions);
    return actions;
  }

  discover(a: NodeAddr, dst: NodeAddr): AodvAction[] {
    return this.call(a, (c, now) => c.discover(dst, now));
  }

  /** Schedules `f` at absolute time `at`. */
  at(at: Micros, f: () => void): void {
    this.engine.at(at, () => f());
  }

  // -------------------------------------------------------------------------
  // Data plane

  /** A data packet from `src` to `dst`, sent now. */
  sendData(src: NodeAddr, dst: NodeAddr): DataPacket {
    const pkt: DataPacket = { id: this.packetIds++, src, dst, ttl: this.dataTtl, path: [] };
    this.relay(src, pkt, undefined, false);
    return pkt;
  }

  private arrive(x: NodeAddr, pkt: DataPacket, prev: NodeAddr): void {
    if (x === pkt.dst) {
      pkt.path.push(x);
      this.delivered.push({ atUs: this.now, pkt });
      return;
    }
    if (pkt.ttl <= 0) {
      this.dropped.push({ atUs: this.now, node: x, pkt, reason: 'ttl' });
      return;
    }
    this.relay(x, pkt, prev, false);
  }

  private relay(x: NodeAddr, pkt: DataPacket, prev: NodeAddr | undefined, retried: boolean): void {
    const core = this.node(x);
    const now = this.now;
    const hop = core.lookup(pkt.dst, now);
    if (!hop) {
      if (prev === undefined) {
        const k = `${x}>${pkt.dst}`;
        const q = this.buffers.get(k) ?? [];
        q.push(pkt);
        this.buffers.set(k, q);
        this.call(x, (c, t) => c.discover(pkt.dst, t));
      } else {
        this.dropped.push({ atUs: now, node: x, pkt, reason: 'no-route' });
        this.call(x, (c, t) => c.noRoute(pkt.dst, prev, t));
      }
      return;
    }
    if (!this.adjacent(x, hop.nextHop)) {
      // The MAC gives up; the router learns of the break and tries another path once.
      this.call(x, (c, t) => c.linkFailed(hop.nextHop, t));
      if (retried) this.dropped.push({ atUs: now, node: x, pkt, reason: 'link' });
      else this.relay(x, pkt, prev, true);
      return;
    }
    core.forwarding(pkt.dst, prev, hop.nextHop, now);
    this.rearm(x);
    pkt.path.push(x);
    const next = { ...pkt, ttl: pkt.ttl - 1, path: [...pkt.path] };
    this.engine.after(this.drawDelay(), () => this.arrive(hop.nextHop, next, x));
  }

  // -------------------------------------------------------------------------
  // Actions

  private drawDelay(): Micros {
    return this.rng.int(this.delay[0], this.delay[1]);
  }

  private apply(a: NodeAddr, actions: AodvAction[]): void {
    const now = this.now;
    for (const action of actions) {
      this.log.push({ atUs: now, node: a, action });
      switch (action.kind) {
        case 'send':
          this.transmit(a, action.to, action.msg);
          break;
        case 'route-found': {
          const k = `${a}>${action.dst}`;
          const q = this.buffers.get(k) ?? [];
          this.buffers.delete(k);
          for (const pkt of q) this.relay(a, pkt, undefined, false);
          break;
        }
        case 'route-failed': {
          const k = `${a}>${action.dst}`;
          for (const pkt of this.buffers.get(k) ?? []) this.dropped.push({ atUs: now, node: a, pkt, reason: 'discovery-failed' });
          this.buffers.delete(k);
          break;
        }
        default:
          break;
      }
    }
    this.rearm(a);
  }

  private transmit(from: NodeAddr, to: NodeAddr, msg: ControlMsg): void {
    this.sent.push({ atUs: this.now, from, to, msg });
    if (to === BROADCAST) {
      for (const b of this.neighboursOf(from)) {
        if (this.opts.loss !== undefined && this.rng.next() < this.opts.loss) continue;
        this.deliver(from, b, msg);
      }
      return;
    }
    if (!this.adjacent(from, to)) {
      this.engine.after(this.opts.macFailUs ?? 0, () => this.call(from, (c, t) => c.linkFailed(to, t)));
      return;
    }
    if (this.opts.unicastLoss !== undefined && this.rng.next() < this.opts.unicastLoss) return;
    this.deliver(from, to, msg);
  }

  private deliver(from: NodeAddr, to: NodeAddr, msg: ControlMsg): void {
    const copy = structuredClone(msg);
    this.engine.after(this.drawDelay(), () => this.call(to, (c, t) => c.handle(copy, from, t)));
  }

  /** Keeps one engine event per core at its next deadline. */
  private rearm(a: NodeAddr): void {
    const core = this.node(a);
    const due = core.nextDeadline();
    const cur = this.alarms.get(a);
    if (due === undefined) {
      if (cur) this.engine.cancel(cur.id);
      this.alarms.delete(a);
      return;
    }
    const at = Math.max(due, this.now);
    if (cur && cur.at === at) return;
    if (cur) this.engine.cancel(cur.id);
    const id = this.engine.at(at, () => {
      this.alarms.delete(a);
      this.call(a, (c, t) => c.tick(t));
    });
    this.alarms.set(a, { id, at });
  }

  // -------------------------------------------------------------------------
  // Reading the log

  actionsOf(a: NodeAddr, kind?: AodvAction['kind']): LoggedAction[] {
    return this.log.filter((l) => l.node === a && (kind === undefined || l.action.kind === kind));
  }

  sentBy<T extends ControlMsg['type']>(a: NodeAddr, type: T): Array<Transmission & { msg: Extract<ControlMsg, { type: T }> }> {
    return this.sent.filter((s): s is Transmission & { msg: Extract<ControlMsg, { type: T }> } => s.from === a && s.msg.type === type);
  }

  /** The next hops from `src` to `dst` as the path decision picks them now (undefined on a break or a loop). */
  pathOf(src: NodeAddr, dst: NodeAddr): NodeAddr[] | undefined {
    const out = [src];
    let x = src;
    while (x !== dst) {
      const hop = this.node(x)
        .routes(this.now)
        .find((r) => r.dst === dst)?.chosen;
      if (hop === undefined || out.includes(hop)) return undefined;
      out.push(hop);
      x = hop;
    }
    return out;
  }
}

/** `n` nodes in a line: 1-2-...-n. */
export const chainLinks = (n: number): Array<[NodeAddr, NodeAddr]> => Array.from({ length: n - 1 }, (_, i) => [i + 1, i + 2]);
