/**
 * The typed values of cogmesh's mesh messages: what travels on the control
 * radio R3 (HELLO, RREQ, RREP, RERR) and the header in front of every data
 * packet on R2/R1. `codec.ts` turns them into bytes and back; nothing else
 * in the stack looks at the bytes.
 */

/** A router's address on the mesh: its node id, 0-65534. */
export type NodeAddr = number;

/** Link-layer and mesh broadcast address. */
export const BROADCAST: NodeAddr = 0xffff;

/** One channel's shared workload, as cooperative sensing exchanges it. */
export interface HelloWorkload {
  channel: number;
  /** w in [0, 1] (carried with a resolution of 1/65535). */
  w: number;
  /** Sensing windows behind w (0-2^32-1). */
  windows: number;
}

/** A neighbour of a HELLO's sender and the channel its R1 listens on. */
export interface HelloNeighbour {
  addr: NodeAddr;
  /** 1-255. */
  r1Channel: number;
}

/**
 * HELLO (RFC 3561 section 6.9, carried as a message of its own on R3): tells
 * neighbours the sender is alive, its destination sequence number, the
 * channel its receive radio R1 listens on, its own w per channel, and the R1
 * channels of its own neighbours (so that the channel decision knows which
 * channels receivers two hops away use).
 */
export interface Hello {
  type: 'hello';
  src: NodeAddr;
  /** The sender's own destination sequence number. */
  seq: number;
  /** The sender's R1 channel; 0 while R1 has no channel yet. */
  r1Channel: number;
  workload: HelloWorkload[];
  /** The sender's neighbours with a known R1 channel (at most 255). */
  neighbours: HelloNeighbour[];
}

/** RREQ (RFC 3561 section 5.1) with the fields multipath AODV adds. */
export interface Rreq {
  type: 'rreq';
  /** J, R, G, D, U flags of RFC 3561. */
  join: boolean;
  repair: boolean;
  gratuitous: boolean;
  destinationOnly: boolean;
  unknownSeq: boolean;
  /** Hops from the originator to the node handling this copy. */
  hopCount: number;
  /** RREQ ID, 32 bits, per originator. */
  rreqId: number;
  dst: NodeAddr;
  dstSeq: number;
  orig: NodeAddr;
  origSeq: number;
  /** Remaining IP TTL of this copy (the ring size while expanding). */
  ttl: number;
  /**
   * AOMDV's first hop: the originator's neighbour this copy went through
   * (the originator's own address in the copy the originator sends), so that
   * the destination can tell link-disjoint copies apart.
   */
  firstHop: NodeAddr;
  /** Path cost from the originator to the node handling this copy (sum of link costs, see path decision). */
  pathCost: number;
}

/** RREP (RFC 3561 section 5.2) with the fields multipath AODV adds. */
export interface Rrep {
  type: 'rrep';
  repair: boolean;
  /** A flag: acknowledgment (RREP-ACK) required. */
  ackRequired: boolean;
  /** Hops from the node handling this copy to the destination. */
  hopCount: number;
  dst: NodeAddr;
  dstSeq: number;
  orig: NodeAddr;
  /** Lifetime of the route, in milliseconds (32 bits). */
  lifetimeMs: number;
  /** AOMDV's last hop: the destination's neighbour on this path (the destination itself when it replies). */
  lastHop: NodeAddr;
  /** Path cost from the node handling this copy to the destination. */
  pathCost: number;
}

/** RERR (RFC 3561 section 5.3). */
export interface Rerr {
  type: 'rerr';
  /** N flag: a local repair is under way, do not delete the route. */
  noDelete: boolean;
  /** At least one, at most 255 destinations. */
  unreachable: Array<{ dst: NodeAddr; dstSeq: number }>;
}

/** One IP prefix a router serves, as a PREFIX announcement carries it. */
export interface AnnouncedPrefix {
  version: 4 | 6;
  /** The network address: 4 or 16 bytes, host bits zero. */
  bytes: Uint8Array;
  /** Prefix length in bits (0-32 or 0-128). */
  length: number;
}

/**
 * PREFIX (type 0x11): a router announces the IP prefixes it serves (its own
 * addresses and its LANs), flooded on R3 to every router (like OLSR's HNA,
 * RFC 7181 section 12 / RFC 3626 section 12), so that a router finds the
 * mesh address behind which a destination host lives before AODV finds the
 * route to that router.
 */
export interface PrefixAnnouncement {
  type: 'prefix';
  orig: NodeAddr;
  /** Per originator, 32 bits; a newer one replaces what a router knew of `orig`. */
  seq: number;
  /** Hops from the originator to the node handling this copy. */
  hopCount: number;
  /** Hops this copy may still travel. */
  ttl: number;
  /** How long a router keeps the announcement, in seconds (16 bits). */
  lifetimeS: number;
  /** At most 255. */
  prefixes: AnnouncedPrefix[];
}

export type ControlMsg = Hello | Rreq | Rrep | Rerr | PrefixAnnouncement;

/**
 * What a data packet carries on top of the mesh: a transport segment of the
 * router's own test traffic (udp, tcp, raw), or a whole IPv4 or IPv6 packet
 * of the hosts it serves (ip4, ip6: IP in the mesh, IP protocol numbers 4
 * and 41).
 */
export type DataProto = 'udp' | 'tcp' | 'raw' | 'ip4' | 'ip6';

/**
 * The mesh header in front of each data packet (R2 to R1): the mesh's own
 * source, destination and hop limit, so that a relay forwards without looking
 * into what it carries.
 */
export interface DataHeader {
  src: NodeAddr;
  dst: NodeAddr;
  /** Hops left; a relay that would send it with 0 drops it. */
  ttl: number;
  proto: DataProto;
  /** Flow identifier chosen by the source (16 bits). */
  flow: number;
  /** Per-flow sequence number (32 bits). */
  seq: number;
  /**
   * The IPv6 flow label the source set (20 bits): the QoS tag of seeds/002
   * (0x00100 high, 0x00200 low); absent or 0 for none (best effort).
   */
  label?: number;
}

/** Pathcost values are carried in thousandths, 32 bits: at most this. */
export const MAX_PATH_COST = 0xffffffff / 1000;
