import type { Micros } from '../core/time.js';
import { flowMatcher, inFlow, type FlowMatcher } from './flow.js';
import { VnfError } from './manager.js';
import { VnfSandbox, type SandboxLimits } from './sandbox.js';
import type { SandboxInit } from './sandbox-worker.js';
import { newVnfInfo, type FlowPattern, type VnfEvent, type VnfInfo, type VnfPacket, type VnfType } from './types.js';

/** What a router's data path asks of its VNFs (the in-process VnfManager and the daemon's SandboxPool both are one). */
export interface VnfHost {
  /**
   * A transport packet crossing the router: true when a VNF takes it (or it
   * went to a sandbox, which calls `decline` if its VNF lets it go on after
   * all); false forwards it now.
   */
  intercept(pkt: VnfPacket, now: Micros, decline?: () => void): boolean;
  tick(now: Micros): void;
  nextDeadline(): Micros | undefined;
  poll(now: Micros): { packets: VnfPacket[]; events: VnfEvent[] };
  list(): VnfInfo[];
}

interface Member {
  id: number;
  sandbox: VnfSandbox;
  info: VnfInfo;
  match: FlowMatcher;
  /** A tick is in flight: its deadline is being served (its answer brings the next one). */
  ticking: boolean;
}

/**
 * The router daemon's VNF manager: every instance in its own sandbox (a
 * worker thread with a heap limit and a watchdog on each call). Calls are
 * asynchronous: a packet of an instance's flow goes to its sandbox, and
 * what the VNF emits comes back through `onOutput`; a VNF that lets a
 * packet go, fails or is stopped has the router forward it plainly. A
 * failed VNF is reported and its flow falls back to plain forwarding; the
 * router and the other sandboxes go on.
 */
export class SandboxPool implements VnfHost {
  private readonly types = new Map<string, VnfType>();
  private readonly members = new Map<number, Member>();
  private readonly ended: VnfInfo[] = [];
  private readonly packets: VnfPacket[] = [];
  private readonly events: VnfEvent[] = [];
  private nextId = 1;
  /** Called when VNF output or events wait to be polled (from a sandbox's answer). */
  onOutput: () => void = () => undefined;
  /** How a sandbox's answer enters the router (the daemon: through its paced engine, at the time it arrives). */
  enter: (fn: () => void) => void = (fn) => fn();

  constructor(
    types: readonly VnfType[],
    private readonly seed: number,
    private readonly limits: SandboxLimits,
    /** Modules with VNF types beyond cogmesh's own, loaded into each sandbox (their types are in `types` too). */
    private readonly modules: SandboxInit['modules'] = [],
  ) {
    for (const t of types) this.types.set(t.name, t);
  }

  get typeNames(): string[] {
    return [...this.types.keys()];
  }

  /** Starts a VNF in a new sandbox; its parameters are checked first (ConfigError naming the field). Resolves once it runs. */
  async instantiate(type: string, flow: FlowPattern, params: unknown, now: Micros): Promise<VnfInfo> {
    const t = this.types.get(type);
    if (!t) throw new VnfError('VNF_UNKNOWN_TYPE', `vnf: no type "${type}" (known: ${this.typeNames.join(', ') || 'none'})`);
    const p = t.params(params ?? {});
    const id = this.nextId++;
    const sandbox = new VnfSandbox({ type, flow, params: p, seed: (this.seed * 7919 + id) >>> 0, now, modules: this.modules }, this.limits);
    const info = newVnfInfo(id, type, flow, p, now);
    const m: Member = { id, sandbox, info, match: flowMatcher(flow), ticking: false };
    this.members.set(id, m);
    await sandbox.ready();
    this.collect(m, now);
    if (sandbox.state === 'failed') throw new VnfError('VNF_FAILED', `vnf ${id} (${type}) failed to start: ${sandbox.reason ?? 'unknown'}`);
    this.events.push({ kind: 'started', id, type, atUs: now });
    this.onOutput();
    return { ...m.info };
  }

  /** Stops an instance and its worker; its flow goes back to plain forwarding. */
  async terminate(id: number, now: Micros): Promise<VnfInfo> {
    const m = this.members.get(id);
    if (!m) throw new VnfError('VNF_UNKNOWN_INSTANCE', `vnf: no running instance ${id}`);
    await this.refresh(m);
    await m.sandbox.stop(now);
    this.collect(m, now);
    if (this.members.has(id)) this.end(m, now, 'stopped', 'terminated');
    this.onOutput();
    return { ...m.info };
  }

  /** Stops every sandbox (router shutdown). */
  async close(now: Micros): Promise<void> {
    await Promise.all([...this.members.values()].map((m) => m.sandbox.stop(now).catch(() => undefined)));
    this.members.clear();
  }

  intercept(pkt: VnfPacket, now: Micros, decline?: () => void): boolean {
    if (this.members.size === 0) return false;
    for (const m of this.members.values()) {
      if (!inFlow(m.match, pkt.proto, pkt.src, pkt.dst, pkt.bytes)) continue;
      if (m.sandbox.state !== 'running' && m.sandbox.state !== 'starting') return false;
      void m.sandbox.intercept(pkt, now).then((taken) =>
        this.enter(() => {
          if (taken) m.info.packetsTaken++;
          else {
            m.info.packetsForwarded++;
            decline?.();
          }
          this.collect(m, now);
          this.onOutput();
        }),
      );
      return true;
    }
    return false;
  }

  tick(now: Micros): void {
    for (const m of this.members.values()) {
      const due = m.sandbox.nextDeadline();
      if (m.ticking || due === undefined || due > now) continue;
      m.ticking = true;
      void m.sandbox.tick(now).then(() => {
        m.ticking = false;
        this.collect(m, now);
        this.onOutput();
      });
    }
  }

  nextDeadline(): Micros | undefined {
    let best: Micros | undefined;
    for (const m of this.members.values()) {
      // A deadline being served is not due again until its answer comes (asynchronous: the router must not spin on it).
      if (m.ticking) continue;
      const d = m.sandbox.nextDeadline();
      if (d !== undefined && (best === undefined || d < best)) best = d;
    }
    return best;
  }

  poll(_now: Micros): { packets: VnfPacket[]; events: VnfEvent[] } {
    return { packets: this.packets.splice(0), events: this.events.splice(0) };
  }

  /** Running instances (counters as of their last refresh), then ended ones. */
  list(): VnfInfo[] {
    return [...[...this.members.values()].map((m) => ({ ...m.info })), ...this.ended.map((i) => ({ ...i }))];
  }

  /** Asks every running sandbox for its counters (the list shows them). */
  async refreshAll(): Promise<void> {
    await Promise.all([...this.members.values()].map((m) => this.refresh(m)));
  }

  private async refresh(m: Member): Promise<void> {
    const i = await m.sandbox.info();
    if (i) m.info = { ...m.info, counters: i.counters, packetsSent: i.packetsSent };
  }

  /** Takes what a sandbox emitted; a failed sandbox ends its instance. */
  private collect(m: Member, now: Micros): void {
    const out = m.sandbox.poll();
    m.info.packetsSent += out.packets.length;
    this.packets.push(...out.packets);
    for (const e of out.events) {
      if (e.kind === 'failed' && this.members.has(m.id)) {
        this.end(m, now, 'failed', e.error);
        this.events.push({ kind: 'failed', id: m.id, type: m.info.type, atUs: now, error: e.error });
      }
    }
    if (m.sandbox.state === 'failed' && this.members.has(m.id)) {
      const why = m.sandbox.reason ?? 'failed';
      this.end(m, now, 'failed', why);
      this.events.push({ kind: 'failed', id: m.id, type: m.info.type, atUs: now, error: why });
    }
  }

  private end(m: Member, now: Micros, state: 'stopped' | 'failed', reason: string): void {
    this.members.delete(m.id);
    m.info = { ...m.info, state, endedAtUs: now, reason };
    this.ended.push(m.info);
    if (state === 'stopped') this.events.push({ kind: 'stopped', id: m.id, type: m.info.type, atUs: now, reason });
  }
}
