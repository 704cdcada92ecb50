import { CogmeshError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import { flowMatcher, inFlow, type FlowMatcher } from './flow.js';
import { newVnfInfo, type FlowPattern, type Vnf, type VnfEvent, type VnfInfo, type VnfPacket, type VnfType } from './types.js';

/** A request the manager refuses: unknown type, unknown instance. */
export class VnfError extends CogmeshError {}

interface Instance {
  info: VnfInfo;
  vnf: Vnf;
  match: FlowMatcher;
}

/**
 * The VNF manager of one router (ETSI's VNFM role): a registry of VNF types,
 * instances per flow pattern with their lifecycle (started, stopped, failed)
 * and counters, and the hook the data path calls for every transport packet
 * that crosses the router. Sans-IO like the VNFs it runs.
 *
 * A VNF that throws is stopped and reported (`failed`), the packet in hand
 * goes on unchanged and so does the rest of its flow: the router falls back
 * to plain forwarding and keeps forwarding everything else. (In the router
 * daemon each instance also runs in a sandbox with memory and CPU limits;
 * here, in virtual time, the same code runs in-process.)
 */
export class VnfManager {
  private readonly types = new Map<string, VnfType>();
  private readonly instances = new Map<number, Instance>();
  private readonly ended: VnfInfo[] = [];
  private readonly pendingEvents: VnfEvent[] = [];
  /** What ended instances emitted on their way out (resets of the connections they held). */
  private readonly lastWords: VnfPacket[] = [];
  private nextId = 1;
  private watcher: ((vnf: Vnf, info: Readonly<VnfInfo>) => void) | undefined;

  constructor(
    types: readonly VnfType[],
    /** Seeds for the instances' randomness (initial sequence numbers and the like). */
    private readonly seed: number,
  ) {
    for (const t of types) this.types.set(t.name, t);
  }

  /** The registered type names. */
  get typeNames(): string[] {
    return [...this.types.keys()];
  }

  /** Starts a VNF of `type` for `flow`; its parameters are checked first (ConfigError naming the field). */
  instantiate(type: string, flow: FlowPattern, params: unknown, now: Micros): VnfInfo {
    const t = this.types.get(type);
    if (!t) throw new VnfError('VNF_UNKNOWN_TYPE', `vnf: no type "${type}" (known: ${this.typeNames.join(', ') || 'none'})`);
    const p = t.params(params ?? {});
    const id = this.nextId++;
    const vnf = t.create(p, { flow, seed: (this.seed * 7919 + id) >>> 0 });
    const info = newVnfInfo(id, type, flow, p, now);
    this.instances.set(id, { info, vnf, match: flowMatcher(flow) });
    this.pendingEvents.push({ kind: 'started', id, type, atUs: now });
    this.watcher?.(vnf, info);
    return { ...info };
  }

  /**
   * Hands `fn` every instance, those running now and each one started
   * later, for observation (a trace reads a TCP-ACC's connections). One
   * watcher at a time.
   */
  watch(fn: (vnf: Vnf, info: Readonly<VnfInfo>) => void): void {
    this.watcher = fn;
    for (const inst of this.instances.values()) fn(inst.vnf, inst.info);
  }

  /** Stops an instance; its flow goes back to plain forwarding. */
  terminate(id: number, now: Micros, reason = 'terminated'): VnfInfo {
    const inst = this.instances.get(id);
    if (!inst) throw new VnfError('VNF_UNKNOWN_INSTANCE', `vnf: no running instance ${id}`);
    this.guard(inst, now, () => inst.vnf.stop(now));
    if (this.instances.has(id)) this.end(inst, now, 'stopped', reason);
    return { ...inst.info };
  }

  /** Running instances, then ended ones, each with its counters. */
  list(): VnfInfo[] {
    const running = [...this.instances.values()].map((i) => ({ ...i.info, counters: this.countersOf(i) }));
    return [...running, ...this.ended.map((i) => ({ ...i }))];
  }

  /**
   * A transport packet is crossing the router. Returns true when an instance
   * took it; false sends it on unchanged.
   */
  intercept(pkt: VnfPacket, now: Micros): boolean {
    for (const inst of this.instances.values()) {
      if (!inFlow(inst.match, pkt.proto, pkt.src, pkt.dst, pkt.bytes)) continue;
      // Every packet of a flow comes here: no closure per call (guard's is for the rarer calls).
      let taken = false;
      try {
        taken = inst.vnf.handle(pkt, now);
      } catch (e) {
        this.failed(inst, now, e);
      }
      if (taken === true) {
        inst.info.packetsTaken++;
        return true;
      }
      inst.info.packetsForwarded++;
      return false;
    }
    return false;
  }

  tick(now: Micros): void {
    for (const inst of [...this.instances.values()]) {
      const d = this.guard(inst, now, () => inst.vnf.nextDeadline());
      if (d !== undefined && d !== null && d <= now) this.guard(inst, now, () => inst.vnf.tick(now));
    }
  }

  nextDeadline(): Micros | undefined {
    let t: Micros | undefined;
    for (const inst of this.instances.values()) {
      let d: Micros | undefined;
      try {
        d = inst.vnf.nextDeadline();
      } catch {
        // Reported at the next tick or packet, through guard().
        d = undefined;
      }
      if (d !== undefined && (t === undefined || d < t)) t = d;
    }
    return t;
  }

  /** Packets the instances emitted, and lifecycle events, since the last poll. */
  poll(now: Micros): { packets: VnfPacket[]; events: VnfEvent[] } {
    const packets: VnfPacket[] = [];
    // An instance that fails here is taken out of the map as it is walked, which a Map's iteration allows.
    for (const inst of this.instances.values()) {
      let out: VnfPacket[];
      try {
        out = inst.vnf.poll();
      } catch (e) {
        this.failed(inst, now, e);
        continue;
      }
      if (Array.isArray(out) && out.length > 0) {
        inst.info.packetsSent += out.length;
        for (const p of out) packets.push(p);
      }
    }
    if (this.lastWords.length > 0) packets.unshift(...this.lastWords.splice(0));
    return { packets, events: this.pendingEvents.length === 0 ? [] : this.pendingEvents.splice(0) };
  }

  /** Runs a call into a VNF; if it throws, the instance is failed and removed, and undefined comes back. */
  private guard<T>(inst: Instance, now: Micros, call: () => T): T | undefined {
    try {
      return call();
    } catch (e) {
      this.failed(inst, now, e);
      return undefined;
    }
  }

  /** A call into a VNF threw: the instance is failed and removed. */
  private failed(inst: Instance, now: Micros, e: unknown): void {
    const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    // What it held cannot go on as plain forwarding (a split connection has two
    // sequence spaces): it is asked, best effort, to reset what it holds.
    try {
      inst.vnf.stop(now);
    } catch {
      // It failed again: nothing more to ask of it.
    }
    this.end(inst, now, 'failed', error);
    this.pendingEvents.push({ kind: 'failed', id: inst.info.id, type: inst.info.type, atUs: now, error });
  }

  private end(inst: Instance, now: Micros, state: 'stopped' | 'failed', reason: string): void {
    if (!this.instances.delete(inst.info.id)) return;
    try {
      const out = inst.vnf.poll();
      if (Array.isArray(out)) {
        inst.info.packetsSent += out.length;
        this.lastWords.push(...out);
      }
    } catch {
      // Nothing more from it.
    }
    inst.info.counters = this.countersOf(inst);
    inst.info.state = state;
    inst.info.endedAtUs = now;
    inst.info.reason = reason;
    this.ended.push(inst.info);
    if (state === 'stopped') this.pendingEvents.push({ kind: 'stopped', id: inst.info.id, type: inst.info.type, atUs: now, reason });
  }

  private countersOf(inst: Instance): Record<string, number> {
    try {
      return { ...inst.vnf.counters() };
    } catch {
      return { ...inst.info.counters };
    }
  }
}
