import type { NodeConfig } from '../config/types.js';
import { TokenBucket } from '../core/token-bucket.js';
import type { Micros } from '../core/time.js';
import type { PrefixRoutes } from '../routing/prefixes.js';
import { meshIp, meshIp6 } from '../wire/addresses.js';
import {
  clampMss,
  decrementTtl,
  flowHash,
  fragmentIpv4,
  icmpError,
  parseIp,
  parseIpAddress,
  parsePrefix,
  type IcmpErrorKind,
  type IpInfo,
  type Prefix,
} from '../wire/ip.js';
import type { DataHeader, DataProto, NodeAddr } from '../wire/mesh.js';

/**
 * The router's IP plane (docs/ip.md): whole IPv4 and IPv6 packets of the
 * hosts it serves, carried across the mesh in DATA packets of proto ip4 and
 * ip6. A packet from the host side (the daemon's TUN) goes to the router
 * that announced the longest prefix holding its destination; every relay
 * decrements its TTL or hop limit; the last router hands it to its host
 * side. The router answers as an IP router does, with ICMP and ICMPv6
 * errors from its own address, rate-limited: Time Exceeded, Destination
 * Unreachable, Fragmentation Needed and Packet Too Big. No I/O here: the
 * host side is a callback, and the mesh is the data plane's `originate`.
 */

/** What became of IP packets at this router. */
export interface IpCounters {
  /** Packets from the host side sent into the mesh (fragments counted one by one). */
  fromHost: number;
  /** Packets handed to the host side. */
  toHost: number;
  /** Packets relayed (TTL or hop limit decremented). */
  relayed: number;
  /** Packets that are not well-formed IP, from the host side or the air. */
  malformed: number;
  /** Packets to no announced prefix. */
  noPrefix: number;
  /** Packets the host side sent to this router's own prefixes (its kernel should have kept them). */
  looped: number;
  /** Multicast and broadcast packets, which the mesh does not carry. */
  multicast: number;
  /** Packets for a host here while the router has no host side. */
  noHost: number;
  /** Packets whose TTL or hop limit ran out here. */
  ttlExpired: number;
  /** Packets larger than the mesh MTU: refused with an ICMP error, or fragmented. */
  tooBig: number;
  /** IPv4 fragments made of packets larger than the MTU. */
  fragmentsMade: number;
  /** TCP SYNs whose MSS option was lowered to fit the mesh MTU (as routers clamp it). */
  mssClamped: number;
  /** ICMP errors sent, and those the rate limit held back. */
  icmpSent: number;
  icmpLimited: number;
}

/** What the IP plane needs of the router around it. */
export interface IpParts {
  readonly addr: NodeAddr;
  config(): NodeConfig;
  prefixes: PrefixRoutes;
  /** Sends an IP packet into the mesh to router `dst` (the data plane's originate). */
  originate(dst: NodeAddr, proto: DataProto, flow: number, seq: number, payload: Uint8Array, now: Micros, opts: { label?: number; vnf?: boolean }): void;
  /** The host side (the daemon's TUN); undefined: this router serves no hosts. */
  toHost: ((packet: Uint8Array, now: Micros) => void) | undefined;
}

/** A router's own addresses and the prefixes it serves, from its ip section. */
export interface IpAddressing {
  ipv4: Uint8Array;
  ipv6: Uint8Array;
  /** Its own addresses as /32 and /128, then its LAN prefixes. */
  served: Prefix[];
}

/** The ip section's addresses and prefixes (the loader has checked them). */
export function ipAddressing(cfg: NodeConfig): IpAddressing {
  const addr = cfg.node.id;
  const ipv4 = (cfg.ip.ipv4 && parseIpAddress(cfg.ip.ipv4)) || meshIp(addr);
  const ipv6 = (cfg.ip.ipv6 && parseIpAddress(cfg.ip.ipv6)) || meshIp6(addr);
  const served: Prefix[] = [
    { version: 4, bytes: ipv4, length: 32 },
    { version: 6, bytes: ipv6, length: 128 },
  ];
  for (const text of cfg.ip.prefixes) {
    const p = parsePrefix(text);
    if (p.ok) served.push(p.value);
  }
  return { ipv4, ipv6, served };
}

export class IpPlane {
  readonly counters: IpCounters = {
    fromHost: 0,
    toHost: 0,
    relayed: 0,
    malformed: 0,
    noPrefix: 0,
    looped: 0,
    multicast: 0,
    noHost: 0,
    ttlExpired: 0,
    tooBig: 0,
    fragmentsMade: 0,
    mssClamped: 0,
    icmpSent: 0,
    icmpLimited: 0,
  };
  private addressing: IpAddressing;
  private icmpBucket: TokenBucket | undefined;
  private seq = 0;

  constructor(
    private readonly p: IpParts,
    now: Micros,
  ) {
    this.addressing = ipAddressing(p.config());
    this.learn(p.config(), now);
  }

  /** Takes the ip section in force: the ICMP rate limit, and the prefixes it announces when the IP side is on. */
  learn(cfg: NodeConfig, now: Micros): void {
    this.addressing = ipAddressing(cfg);
    this.icmpBucket = cfg.ip.icmpRatePerS > 0 ? new TokenBucket(cfg.ip.icmpRatePerS, cfg.ip.icmpBurst, now) : undefined;
    this.p.prefixes.serve(cfg.ip.enabled ? this.addressing.served : [], now);
  }

  get addresses(): IpAddressing {
    return this.addressing;
  }

  /**
   * A packet from the host side: to the router that serves its destination.
   * `packet` may be a view the caller reuses: it is copied before this returns.
   */
  fromHost(packet: Uint8Array, now: Micros): void {
    const r = parseIp(packet);
    if (!r.ok) {
      this.counters.malformed++;
      return;
    }
    const info = r.value;
    const bytes = info.totalBytes < packet.length ? packet.subarray(0, info.totalBytes) : packet;
    if (isMulticast(info.dst, info.version)) {
      this.counters.multicast++;
      return;
    }
    const dst = this.p.prefixes.lookup(info.dst);
    if (dst === undefined) {
      this.counters.noPrefix++;
      this.error('net-unreachable', bytes, info, undefined, now);
      return;
    }
    if (dst === this.p.addr) {
      this.counters.looped++;
      return;
    }
    if (info.proto === 6 && info.firstFragment && clampMss(bytes.subarray(info.transportOffset, info.totalBytes), maxMss(this.mtu(), info.version))) {
      this.counters.mssClamped++;
    }
    this.send(dst, bytes, info, undefined, now);
  }

  /**
   * A relay's part: the packet's TTL or hop limit, decremented in place in
   * `payload` (the relay's own copy of the packet). Undefined: it goes on;
   * otherwise why it goes no further: malformed, its TTL ran out (Time
   * Exceeded sent), or `handled` (too big for the mesh: refused with an ICMP
   * error, or cut in fragments that went on).
   */
  relay(header: DataHeader, payload: Uint8Array, now: Micros): 'malformed' | 'ttl-expired' | 'handled' | undefined {
    const r = parseIp(payload);
    if (!r.ok || r.value.version !== (header.proto === 'ip6' ? 6 : 4)) {
      this.counters.malformed++;
      return 'malformed';
    }
    const info = r.value;
    if (info.ttl <= 1) {
      this.counters.ttlExpired++;
      this.error('time-exceeded', payload, info, header.src, now);
      return 'ttl-expired';
    }
    decrementTtl(payload, info);
    if (info.totalBytes > this.mtu()) {
      // Too big for the next link (a router with a larger MTU sent it): refused, or cut in fragments that go on.
      this.send(header.dst, payload.subarray(0, info.totalBytes), { ...info, ttl: info.ttl - 1 }, header.src, now);
      return 'handled';
    }
    this.counters.relayed++;
    return undefined;
  }

  /** A packet for a host this router serves: to the host side. */
  deliver(header: DataHeader, payload: Uint8Array, now: Micros): void {
    const r = parseIp(payload);
    if (!r.ok || r.value.version !== (header.proto === 'ip6' ? 6 : 4)) {
      this.counters.malformed++;
      return;
    }
    if (!this.p.toHost) {
      this.counters.noHost++;
      return;
    }
    this.counters.toHost++;
    this.p.toHost(payload.subarray(0, r.value.totalBytes), now);
  }

  /**
   * The mesh could not reach the router a packet was for: Destination
   * Unreachable (host) to its source. `header.src` is the router its source
   * is behind.
   */
  unreachable(header: DataHeader, payload: Uint8Array, now: Micros): void {
    const r = parseIp(payload);
    if (r.ok) this.error('host-unreachable', payload, r.value, header.src === this.p.addr ? undefined : header.src, now);
  }

  /** Sends a packet to router `dst`, fragmented or refused when it is larger than the mesh MTU. `back`: the router its source is behind (undefined: the host side here). */
  private send(dst: NodeAddr, bytes: Uint8Array, info: IpInfo, back: NodeAddr | undefined, now: Micros): void {
    const mtu = this.mtu();
    if (info.totalBytes > mtu) {
      this.counters.tooBig++;
      if (info.version === 6 || info.dontFragment) {
        this.error(info.version === 6 ? 'packet-too-big' : 'frag-needed', bytes, info, back, now);
        return;
      }
      for (const frag of fragmentIpv4(bytes, info, mtu)) {
        this.counters.fragmentsMade++;
        this.emit(dst, frag, info, back === undefined, now);
      }
      return;
    }
    this.emit(dst, bytes, info, back === undefined, now);
  }

  /** `fromHost`: the packet enters the mesh from the host side here, and this router's VNFs see it first. */
  private emit(dst: NodeAddr, bytes: Uint8Array, info: IpInfo, fromHost: boolean, now: Micros): void {
    this.counters.fromHost++;
    this.seq = (this.seq + 1) >>> 0;
    this.p.originate(dst, info.version === 6 ? 'ip6' : 'ip4', flowHash(info), this.seq, bytes, now, {
      vnf: fromHost,
      ...(info.flowLabel ? { label: info.flowLabel } : {}),
    });
  }

  /** An ICMP error about `offending` to its source, behind router `back` (undefined: the host side here), if the rate limit lets it go. */
  private error(kind: IcmpErrorKind, offending: Uint8Array, info: IpInfo, back: NodeAddr | undefined, now: Micros): void {
    const from = info.version === 6 ? this.addressing.ipv6 : this.addressing.ipv4;
    const icmp = icmpError(kind, offending, info, from, { mtu: this.mtu() });
    if (!icmp) return;
    if (!this.icmpBucket?.take(now)) {
      this.counters.icmpLimited++;
      return;
    }
    this.counters.icmpSent++;
    if (back === undefined || back === this.p.addr) {
      if (this.p.toHost) this.p.toHost(icmp, now);
      return;
    }
    const r = parseIp(icmp);
    if (r.ok) this.emit(back, icmp, r.value, false, now);
  }

  private mtu(): number {
    return this.p.config().ip.mtu;
  }
}

function isMulticast(dst: Uint8Array, version: 4 | 6): boolean {
  if (version === 6) return dst[0] === 0xff;
  return (dst[0]! & 0xf0) === 0xe0 || (dst[0] === 255 && dst[1] === 255 && dst[2] === 255 && dst[3] === 255);
}

/** The largest TCP MSS that fits a mesh MTU: the MTU less the IP and TCP headers (40 bytes over IPv4, 60 over IPv6). */
export function maxMss(mtu: number, version: 4 | 6): number {
  return mtu - (version === 6 ? 60 : 40);
}
