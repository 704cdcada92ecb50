/**
 * The OpenFlow 1.3 match as cogmesh's flow table understands it: the OXM
 * fields of the OpenFlow basic class that a mesh router can match on
 * (OpenFlow 1.3.5 section 7.2.3.7). A field absent from the object is a
 * wildcard; a masked field carries its mask (bits set in the mask must
 * equal the value's). It is the codec's own type (oxm.ts turns OXM TLVs
 * into it and back); the flow table matches packets against it.
 */

/** A field value with an optional mask (no mask: exact). */
export interface Masked<T> {
  value: T;
  mask?: T;
}

/** Byte-string fields (MAC and IPv6 addresses) are Uint8Array; numbers are unsigned integers. */
export interface OfMatch {
  /** OXM_OF_IN_PORT (0): ingress port number (32 bits). */
  inPort?: number;
  /** OXM_OF_ETH_DST (3), maskable: 6 bytes. */
  ethDst?: Masked<Uint8Array>;
  /** OXM_OF_ETH_SRC (4), maskable: 6 bytes. */
  ethSrc?: Masked<Uint8Array>;
  /** OXM_OF_ETH_TYPE (5): 16 bits. */
  ethType?: number;
  /** OXM_OF_VLAN_VID (6), maskable: 13 bits (OFPVID_PRESENT 0x1000 | vid). */
  vlanVid?: Masked<number>;
  /** OXM_OF_IP_DSCP (8): 6 bits. Prerequisite ETH_TYPE 0x0800 or 0x86dd. */
  ipDscp?: number;
  /** OXM_OF_IP_PROTO (10): 8 bits. Prerequisite ETH_TYPE 0x0800 or 0x86dd. */
  ipProto?: number;
  /** OXM_OF_IPV4_SRC (11), maskable: 32 bits. Prerequisite ETH_TYPE 0x0800. */
  ipv4Src?: Masked<number>;
  /** OXM_OF_IPV4_DST (12), maskable: 32 bits. */
  ipv4Dst?: Masked<number>;
  /** OXM_OF_TCP_SRC (13): 16 bits. Prerequisite IP_PROTO 6. */
  tcpSrc?: number;
  /** OXM_OF_TCP_DST (14): 16 bits. */
  tcpDst?: number;
  /** OXM_OF_UDP_SRC (15): 16 bits. Prerequisite IP_PROTO 17. */
  udpSrc?: number;
  /** OXM_OF_UDP_DST (16): 16 bits. */
  udpDst?: number;
  /** OXM_OF_IPV6_SRC (26), maskable: 16 bytes. Prerequisite ETH_TYPE 0x86dd. */
  ipv6Src?: Masked<Uint8Array>;
  /** OXM_OF_IPV6_DST (27), maskable: 16 bytes. */
  ipv6Dst?: Masked<Uint8Array>;
  /** OXM_OF_IPV6_FLABEL (28), maskable: 20 bits. Carries seeds/002's QoS tag. */
  ipv6Flabel?: Masked<number>;
}

/** The OXM field numbers (class OFPXMC_OPENFLOW_BASIC 0x8000) of the fields above. */
export const OXM_FIELDS = Object.freeze({
  inPort: 0,
  ethDst: 3,
  ethSrc: 4,
  ethType: 5,
  vlanVid: 6,
  ipDscp: 8,
  ipProto: 10,
  ipv4Src: 11,
  ipv4Dst: 12,
  tcpSrc: 13,
  tcpDst: 14,
  udpSrc: 15,
  udpDst: 16,
  ipv6Src: 26,
  ipv6Dst: 27,
  ipv6Flabel: 28,
} as const satisfies Record<keyof OfMatch, number>);

/** What a packet offers to the flow table: the same fields, each exact or absent (not present in the packet). */
export type PacketFields = { [K in keyof OfMatch]?: OfMatch[K] extends Masked<infer T> | undefined ? T : OfMatch[K] };
