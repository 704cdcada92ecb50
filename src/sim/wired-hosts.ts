import { Alarm } from '../core/alarm.js';
import type { EventEngine } from '../core/engine.js';
import type { Micros } from '../core/time.js';
import type { WiredHost } from '../config/scenario.js';
import type { MeshRouter } from '../router/router.js';
import { dataHeaderBytes } from '../wire/codec.js';
import type { DataHeader, DataProto, NodeAddr } from '../wire/mesh.js';
import type { HostResult } from './report.js';
import { WiredLink, type WiredLinkDirection } from '../core/wired-link.js';

/** A packet on a wired link: the mesh header it travels with and its payload. */
interface WiredPacket {
  header: DataHeader;
  payload: Uint8Array;
}

export interface WiredHostsParts {
  engine: EventEngine;
  /** The routers, by address (filled in before the first packet moves). */
  routers: readonly MeshRouter[];
  /** A packet reached host `host`. */
  deliver(host: NodeAddr, header: DataHeader, payload: Uint8Array, now: Micros): void;
  /** A host's packet found its link's queue full. */
  dropped(header: DataHeader, reason: 'queue-full'): void;
}

interface Attached {
  addr: NodeAddr;
  gateway: NodeAddr;
  link: WiredLink<WiredPacket>;
  seq: number;
}

/**
 * The scenario's wired hosts on the event engine: each host (node N + k)
 * is a TCP or UDP end with one wired link to its gateway router, and no
 * radio. A packet a host sends crosses the link and enters the mesh at the
 * gateway (`MeshRouter.fromWire`); a packet for a host reaches its gateway
 * through the mesh (the routers' static `routes`) and crosses the link back.
 */
export class WiredHosts {
  private readonly hosts = new Map<NodeAddr, Attached>();
  /** Each host's address and its gateway: the routers' static routes to the hosts. */
  readonly routes: ReadonlyMap<NodeAddr, NodeAddr>;

  constructor(
    specs: readonly WiredHost[],
    routerCount: number,
    private readonly p: WiredHostsParts,
  ) {
    const routes = new Map<NodeAddr, NodeAddr>();
    specs.forEach((h, k) => {
      const addr = routerCount + k;
      const link = new WiredLink<WiredPacket>(h);
      const host: Attached = { addr, gateway: h.router, link, seq: 0 };
      this.hosts.set(addr, host);
      routes.set(addr, h.router);
      this.drive(link.up, (pkt, now) => p.routers[host.gateway]!.fromWire(pkt.header, pkt.payload, now));
      this.drive(link.down, (pkt, now) => p.deliver(addr, pkt.header, pkt.payload, now));
    });
    this.routes = routes;
  }

  /** Whether `addr` is a wired host's. */
  has(addr: NodeAddr): boolean {
    return this.hosts.has(addr);
  }

  /** Host `from` sends `payload` to `dst`: onto its link to the gateway (dropped if the link's queue is full). */
  send(from: NodeAddr, dst: NodeAddr, proto: DataProto, flow: number, payload: Uint8Array, now: Micros, label = 0): void {
    const h = this.hosts.get(from)!;
    const ttl = this.p.routers[h.gateway]!.config.routing.netDiameter;
    const header: DataHeader = { src: from, dst, ttl, proto, flow, seq: h.seq++ >>> 0 };
    if (label) header.label = label;
    // The link keeps the packet while it waits: the caller may reuse its buffer.
    this.put(h.link.up, { header, payload: payload.slice() }, now);
  }

  /** The gateway sends a packet onto the link of host `header.dst`; false if the link's queue refused it. */
  toWire(header: DataHeader, payload: Uint8Array, bytes: number, now: Micros): boolean {
    const h = this.hosts.get(header.dst);
    if (!h || !h.link.down.send({ header, payload }, bytes, now).ok) return false;
    this.rearm(h.link.down);
    return true;
  }

  /** Each host's link counters, both directions. */
  counters(): HostResult[] {
    return [...this.hosts.values()].map((h) => ({ host: h.addr, gateway: h.gateway, up: { ...h.link.up.counters }, down: { ...h.link.down.counters } }));
  }

  private put(dir: WiredLinkDirection<WiredPacket>, pkt: WiredPacket, now: Micros): void {
    if (dir.send(pkt, dataHeaderBytes(pkt.header) + pkt.payload.length, now).ok) this.rearm(dir);
    else this.p.dropped(pkt.header, 'queue-full');
  }

  private readonly alarms = new Map<WiredLinkDirection<WiredPacket>, { alarm: Alarm; fire: (now: Micros) => void }>();

  /** One engine event per direction, at its next arrival. */
  private drive(dir: WiredLinkDirection<WiredPacket>, arrive: (pkt: WiredPacket, now: Micros) => void): void {
    const alarm = new Alarm(this.p.engine);
    const fire = (now: Micros): void => {
      for (const pkt of dir.tick(now)) arrive(pkt, now);
      alarm.set(dir.nextDeadline(), fire);
    };
    this.alarms.set(dir, { alarm, fire });
  }

  private rearm(dir: WiredLinkDirection<WiredPacket>): void {
    const a = this.alarms.get(dir)!;
    a.alarm.set(dir.nextDeadline(), a.fire);
  }
}
