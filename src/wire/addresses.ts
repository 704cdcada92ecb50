import type { NodeAddr } from './mesh.js';

/**
 * The mesh carries transport segments without an IP header; where an IP
 * address is needed (TCP's pseudo-header, a VNF's flow pattern) a router's
 * mesh address maps to 10.hi.lo.1, and back.
 */
export function meshIp(addr: NodeAddr): Uint8Array {
  return Uint8Array.of(10, (addr >> 8) & 0xff, addr & 0xff, 1);
}

/** The same address as an IPv4 number (10.hi.lo.1), as OpenFlow matches carry it. */
export function meshIpv4(addr: NodeAddr): number {
  // Without the array meshIp makes: the flow table asks this of every packet it looks up.
  return ((10 << 24) | (((addr >> 8) & 0xff) << 16) | ((addr & 0xff) << 8) | 1) >>> 0;
}

/**
 * The same address as IPv6 (a labelled packet is IPv6 to the flow table and
 * in a PACKET_IN): fd00::10.hi.lo.1, the IPv4 address in the low 32 bits of
 * the unique-local prefix fd00::/64 (router 4 is fd00::a00:401).
 */
export function meshIp6(addr: NodeAddr): Uint8Array {
  const ip = new Uint8Array(16);
  ip[0] = 0xfd;
  ip.set(meshIp(addr), 12);
  return ip;
}

export function meshAddr(ip: Uint8Array): NodeAddr {
  return ((ip[1] ?? 0) << 8) | (ip[2] ?? 0);
}

/**
 * The LAN a router serves by default (Urban-X routers are access points
 * for client hosts): 10.hi.lo.0/24, whose .1 is the router's own address
 * and its hosts' gateway. Router 4 serves 10.0.4.0/24.
 */
export function lanPrefix4(addr: NodeAddr): string {
  return `10.${(addr >> 8) & 0xff}.${addr & 0xff}.0/24`;
}

/** The IPv6 LAN a router serves by default: fd00:1:0:N::/64, N its address in hex (router 4: fd00:1:0:4::/64; the router is ::1). */
export function lanPrefix6(addr: NodeAddr): string {
  return `fd00:1:0:${addr.toString(16)}::/64`;
}

/** The router's own IPv6 address in text (fd00::a00:401 for router 4). */
export function meshIp6Text(addr: NodeAddr): string {
  const ip = meshIp(addr);
  return `fd00::${((ip[0]! << 8) | ip[1]!).toString(16)}:${((ip[2]! << 8) | ip[3]!).toString(16)}`;
}

/** The router's own IPv4 address in text (10.0.4.1 for router 4). */
export function meshIpText(addr: NodeAddr): string {
  return meshIp(addr).join('.');
}
