import type { NodeAddr } from '../wire/mesh.js';

/**
 * The mesh carries transport segments without an IP header; where an IP
 * address is needed (TCP's pseudo-header, a VNF's flow pattern) a router's
 * mesh address maps to 10.hi.lo.1, and back.
 */
export function meshIp(addr: NodeAddr): Uint8Array {
  return Uint8Array.of(10, (addr >> 8) & 0xff, addr & 0xff, 1);
}

export function meshAddr(ip: Uint8Array): NodeAddr {
  return ((ip[1] ?? 0) << 8) | (ip[2] ?? 0);
}
