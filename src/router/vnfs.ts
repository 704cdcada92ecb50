import type { Micros } from '../core/time.js';
import type { VnfHost } from '../vnf/pool.js';
import type { VnfEvent, VnfInfo, VnfPacket } from '../vnf/types.js';
import { meshAddr, meshIp } from '../wire/addresses.js';
import { clampMss, ipPacket, parseIp } from '../wire/ip.js';
import { maxMss } from './ip.js';
import type { DataHeader, DataProto, NodeAddr } from '../wire/mesh.js';

/** What the VNF side needs of the router around it. */
export interface VnfSideParts {
  /** This router's address. */
  addr: NodeAddr;
  host: VnfHost;
  /** routing.netDiameter: a packet's hops so far are read from its TTL. */
  netDiameter(): number;
  originate(dst: NodeAddr, proto: DataProto, flow: number, seq: number, payload: Uint8Array, now: Micros, opts: { from?: NodeAddr; label?: number }): void;
  /** The label a flow's last packet carried, in either direction. */
  flowLabel(proto: DataProto, src: NodeAddr, dst: NodeAddr, flow: number): number | undefined;
  counters: { vnfTaken: number };
  /** The IP plane's view, for hosts' TCP (DATA proto ip4 and ip6): the router behind an address, the mesh MTU, and the host side here. */
  ip?: {
    routerOf(addr: Uint8Array): NodeAddr | undefined;
    mtu(): number;
    toHost(packet: Uint8Array, now: Micros): void;
  };
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
/** The carrier's tag on a host's IP packet (bit 16; the low 16 bits are its DATA flow). */
const IP_TAG = 0x10000;

export class VnfSide {
  private seq = 0;
  private ipId = 0;
  /** VNF packets for an address no router announced. */
  ipUnroutable = 0;

  constructor(private readonly p: VnfSideParts) {}

  /**
   * A TCP packet this router relays (the router's own TCP, or a host's TCP
   * inside an IP packet): true when a VNF takes it (`decline` forwards it
   * if a sandboxed one lets it go later).
   */
  intercept(header: DataHeader, payload: Uint8Array, now: Micros, decline: () => void): boolean {
    const hops = this.p.netDiameter() - header.ttl + 1;
    let pkt: VnfPacket;
    if (header.proto === 'ip4' || header.proto === 'ip6') {
      // A host's packet: the VNF sees its own addresses and segment; what it emits for it is wrapped in IP again (IP_TAG).
      const r = this.p.ip ? parseIp(payload) : undefined;
      if (!r?.ok || r.value.proto !== 6 || !r.value.firstFragment || r.value.moreFragments) return false;
      const info = r.value;
      pkt = {
        proto: 'tcp',
        src: info.src.slice(),
        dst: info.dst.slice(),
        bytes: payload.subarray(info.transportOffset, info.totalBytes),
        tag: IP_TAG | header.flow,
        hops,
      };
    } else if (header.proto === 'tcp') {
      pkt = { proto: 'tcp', src: meshIp(header.src), dst: meshIp(header.dst), bytes: payload, tag: header.flow, hops };
    } else return false;
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
      if (p.tag !== undefined && p.tag & IP_TAG) {
        this.outputIp(p, now);
        continue;
      }
      const src = meshAddr(p.src);
      const dst = meshAddr(p.dst);
      const flow = p.tag ?? 0xffff;
      // The VNF speaks for the flow: its packets keep the flow's label (its QoS class), as seen in either direction.
      const label = this.p.flowLabel(p.proto, src, dst, flow);
      this.p.originate(dst, p.proto, flow, this.seq++ >>> 0, p.bytes, now, { from: src, label });
    }
    this.p.rearm();
  }

  /** A VNF's segment for a host's flow: in an IP packet of its own, to the router behind its destination (its SYN's MSS clamped to the mesh MTU). */
  private outputIp(p: VnfPacket, now: Micros): void {
    const ip = this.p.ip;
    if (!ip || (p.src.length !== 4 && p.src.length !== 16) || p.dst.length !== p.src.length) return;
    const proto = p.proto === 'tcp' ? 6 : 17;
    const packet = ipPacket(proto, p.src, p.dst, p.bytes, { df: p.src.length === 4, id: this.ipId++ & 0xffff });
    if (proto === 6) clampMss(packet.subarray(packet.length - p.bytes.length), maxMss(ip.mtu(), p.src.length === 16 ? 6 : 4));
    const dst = ip.routerOf(p.dst);
    if (dst === undefined) {
      this.ipUnroutable++;
      return;
    }
    const src = ip.routerOf(p.src) ?? this.p.addr;
    if (dst === this.p.addr) {
      ip.toHost(packet, now);
      return;
    }
    const flow = p.tag! & 0xffff;
    const carried: DataProto = p.src.length === 16 ? 'ip6' : 'ip4';
    this.p.originate(dst, carried, flow, this.seq++ >>> 0, packet, now, { from: src, label: this.p.flowLabel(carried, src, dst, flow) });
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
