import type { Micros } from '../core/time.js';
import type { VnfHost } from '../vnf/pool.js';
import type { VnfEvent, VnfInfo, VnfPacket } from '../vnf/types.js';
import { meshAddr, meshIp } from '../wire/addresses.js';
import type { DataHeader, DataProto, NodeAddr } from '../wire/mesh.js';

/** What the VNF side needs of the router around it. */
export interface VnfSideParts {
  host: VnfHost;
  /** routing.netDiameter: a packet's hops so far are read from its TTL. */
  netDiameter(): number;
  originate(dst: NodeAddr, proto: DataProto, flow: number, seq: number, payload: Uint8Array, now: Micros, opts: { from?: NodeAddr; label?: number }): void;
  /** The label a flow's last packet carried, in either direction. */
  flowLabel(proto: DataProto, src: NodeAddr, dst: NodeAddr, flow: number): number | undefined;
  counters: { vnfTaken: number };
  /** Lifecycle events stay with the manager (its list() says what started, stopped or failed); the router's host hears them. */
  onEvent?: (e: VnfEvent) => void;
  rearm(): void;
}

/**
 * The router's VNFs (seeds/000's VNF manager): TCP packets the router relays
 * go through them first, and what they emit leaves as the router's own
 * packets, each with the source address and the flow label of the flow it
 * speaks for.
 */
export class VnfSide {
  private seq = 0;

  constructor(private readonly p: VnfSideParts) {}

  /** A TCP packet this router relays: true when a VNF takes it (`decline` forwards it if a sandboxed one lets it go later). */
  intercept(header: DataHeader, payload: Uint8Array, now: Micros, decline: () => void): boolean {
    const hops = this.p.netDiameter() - header.ttl + 1;
    const pkt: VnfPacket = { proto: 'tcp', src: meshIp(header.src), dst: meshIp(header.dst), bytes: payload, tag: header.flow, hops };
    if (!this.p.host.intercept(pkt, now, decline)) return false;
    this.p.counters.vnfTaken++;
    this.output(now);
    return true;
  }

  /** Sends what the VNFs emitted (a sandbox's answer calls this too). */
  output(now: Micros): void {
    const { packets, events } = this.p.host.poll(now);
    if (this.p.onEvent) for (const event of events) this.p.onEvent(event);
    for (const p of packets) {
      const src = meshAddr(p.src);
      const dst = meshAddr(p.dst);
      const flow = p.tag ?? 0xffff;
      // The VNF speaks for the flow: its packets keep the flow's label (its QoS class), as seen in either direction.
      const label = this.p.flowLabel(p.proto, src, dst, flow);
      this.p.originate(dst, p.proto, flow, this.seq++ >>> 0, p.bytes, now, { from: src, label });
    }
    this.p.rearm();
  }

  nextDeadline(): Micros | undefined {
    return this.p.host.nextDeadline();
  }

  tick(now: Micros): void {
    this.p.host.tick(now);
    this.output(now);
  }

  /** The VNFs, running and ended, with their counters. */
  list(): VnfInfo[] {
    return this.p.host.list();
  }
}
