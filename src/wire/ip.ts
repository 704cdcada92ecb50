import { RangeArgumentError } from '../core/errors.js';
import { fold, sumWords } from './checksum.js';
import { err, ok, type Result } from '../core/result.js';
import { allocBytes, get16, put16, put32, sameBytes } from './bytes.js';
import { WireError } from './codec.js';

/**
 * What a router reads and writes of IP itself: the IPv4 (RFC 791) and IPv6
 * (RFC 8200) headers as a forwarding decision needs them, the TTL decrement
 * with its incremental checksum (RFC 1624), the ICMP errors a router
 * originates (RFC 792, RFC 1812, RFC 1191; RFC 4443), IPv4 fragmentation,
 * and addresses and prefixes with a longest-prefix-match table. Pure
 * functions over bytes: no I/O, no clock, no randomness.
 *
 * IPv4 header (IHL x 4 bytes, 20-60):
 *
 *   0  version u4 (4), IHL u4 (header length in 32-bit words, 5-15)
 *   1  TOS (DSCP, ECN)
 *   2  total length u16   header and data, bytes
 *   4  identification u16
 *   6  flags u3 (reserved, DF 0x4000, MF 0x2000), fragment offset u13 (8-byte units)
 *   8  TTL u8
 *   9  protocol u8
 *  10  header checksum u16 (RFC 1071 over the header only)
 *  12  source, 16 destination; 20 options to IHL x 4
 *
 * IPv6 header (40 bytes), then extension headers, then the upper layer:
 *
 *   0  version u4 (6), traffic class u8, flow label u20
 *   4  payload length u16   bytes after the 40-byte header
 *   6  next header u8
 *   7  hop limit u8
 *   8  source, 24 destination
 *
 * parseIp checks in this order, so that any proper prefix of a valid packet
 * is WIRE_TRUNCATED and a corrupted IPv4 header is WIRE_BAD_CHECKSUM rather
 * than whatever its damaged fields look like: the version (WIRE_BAD_VERSION);
 * for IPv4 the IHL (WIRE_BAD_LENGTH under 5), the header's bytes
 * (WIRE_TRUNCATED), the checksum (WIRE_BAD_CHECKSUM), the total length
 * (WIRE_BAD_LENGTH under the header, WIRE_TRUNCATED past the bytes); for IPv6
 * the 40 bytes (WIRE_TRUNCATED), the payload length (WIRE_BAD_LENGTH for 0,
 * WIRE_TRUNCATED past the bytes), then each extension header (WIRE_TRUNCATED
 * when one runs past the payload). A fragment whose data would reassemble
 * past 65535 bytes (the "ping of death") is WIRE_BAD_LENGTH, as RFC 8200 4.5
 * has it for IPv6. Bytes after the packet's length (link padding) are
 * allowed and ignored. The `what` of every refusal is 'IPv4', 'IPv6' or 'IP'.
 */

export const IPV4_HEADER_BYTES = 20;
export const IPV6_HEADER_BYTES = 40;
/** RFC 791: every IPv4 module must forward a 68-byte datagram without fragmenting it. */
export const IPV4_MIN_MTU = 68;
/** RFC 8200 5: every IPv6 link carries 1280 bytes. Also the size bound of an ICMPv6 error (RFC 4443 2.4(c)). */
export const IPV6_MIN_MTU = 1280;
/** RFC 1812 4.3.2.3: an ICMP error, IP header included, stays within 576 bytes. */
export const ICMPV4_ERROR_MAX_BYTES = 576;

export const PROTO_ICMP = 1;
export const PROTO_TCP = 6;
export const PROTO_UDP = 17;
export const PROTO_ICMPV6 = 58;
export const PROTO_SCTP = 132;
export const PROTO_UDPLITE = 136;

const DF = 0x4000;
const MF = 0x2000;
const OFFSET_MASK = 0x1fff;
const MAX_PACKET = 0xffff;

/** IPv6 extension headers parseIp walks, by next-header value (RFC 7045 2's list, less ESP, which cannot be walked). */
const EXT_NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'hop-by-hop options'],
  [43, 'routing'],
  [44, 'fragment'],
  [51, 'authentication'],
  [60, 'destination options'],
  [135, 'mobility'],
  [139, 'HIP'],
  [140, 'shim6'],
]);
const EXT_FRAGMENT = 44;
const EXT_AH = 51;

/** What a router needs of one IP packet. Addresses are views into the parsed bytes, not copies. */
export interface IpInfo {
  version: 4 | 6;
  /** IPv4: IHL x 4. IPv6: 40 plus the extension headers walked, so the offset of the upper-layer header (or, in a non-first fragment, of the fragment's data). */
  headerBytes: number;
  /** The packet's own length, from its header: IPv4 total length, IPv6 40 + payload length. Bytes after it are ignored. */
  totalBytes: number;
  /** TTL (IPv4) or hop limit (IPv6), as in the bytes when parsed. */
  ttl: number;
  /** IPv4 protocol; IPv6 the next header after the extension headers walked (59 for none, 50 for ESP, which stops the walk). */
  proto: number;
  /** 4 or 16 bytes, a view. */
  src: Uint8Array;
  dst: Uint8Array;
  /** IPv4 DF; always true for IPv6, which routers never fragment. */
  dontFragment: boolean;
  /** False for an IPv4 packet with fragment offset != 0, or an IPv6 packet whose fragment header has offset != 0. */
  firstFragment: boolean;
  /** IPv4 MF, or the M flag of an IPv6 fragment header. */
  moreFragments: boolean;
  /** Fragment offset in bytes (IPv4 header, or IPv6 fragment header); 0 for a whole packet. */
  fragmentOffset: number;
  /** IPv6 flow label (20 bits); 0 for IPv4. */
  flowLabel: number;
  /** Where the upper-layer header starts (equal to headerBytes). */
  transportOffset: number;
  /** The first two u16 of TCP, UDP, SCTP or UDP-Lite, when the packet holds them (never in a non-first fragment). */
  srcPort?: number;
  dstPort?: number;
}

// ---------------------------------------------------------------------------
// Parse

/** Parses an IPv4 or IPv6 header (see the file header for what is refused, and in what order). Never throws. */
export function parseIp(b: Uint8Array): Result<IpInfo, WireError> {
  if (b.length === 0) return err(new WireError('WIRE_TRUNCATED', 'IP', 'IP packet truncated: 0 bytes, needs at least the version'));
  const version = b[0]! >>> 4;
  if (version === 4) return parseIpv4(b);
  if (version === 6) return parseIpv6(b);
  return err(new WireError('WIRE_BAD_VERSION', 'IP', `IP version ${version} is neither 4 nor 6`));
}

/** Whether the bytes start like an IPv4 packet (version nibble 4); says nothing about the rest. */
export function isIpv4(b: Uint8Array): boolean {
  return b.length > 0 && b[0]! >>> 4 === 4;
}

/** Whether the bytes start like an IPv6 packet (version nibble 6); says nothing about the rest. */
export function isIpv6(b: Uint8Array): boolean {
  return b.length > 0 && b[0]! >>> 4 === 6;
}

function parseIpv4(b: Uint8Array): Result<IpInfo, WireError> {
  const ihl = b[0]! & 0x0f;
  if (ihl < 5) return err(v4Error('WIRE_BAD_LENGTH', `IPv4 header length (IHL) ${ihl} words is under the minimum of 5`));
  const hdr = ihl * 4;
  if (b.length < hdr) return err(v4Error('WIRE_TRUNCATED', `IPv4 truncated: ${b.length} bytes, the header alone is ${hdr} (IHL ${ihl})`));
  if (ipChecksum(b, 0, hdr) !== 0) {
    const should = ipChecksum(b, 12, hdr, onesComplementSum(b, 0, 10));
    return err(v4Error('WIRE_BAD_CHECKSUM', `IPv4 header checksum ${hex16(get16(b, 10))} is wrong: the header sums to ${hex16(should)}`));
  }
  const total = get16(b, 2);
  if (total < hdr) return err(v4Error('WIRE_BAD_LENGTH', `IPv4 total length ${total} is less than its ${hdr}-byte header`));
  if (total > b.length) return err(v4Error('WIRE_TRUNCATED', `IPv4 total length ${total} exceeds the packet's ${b.length} bytes`));
  const frag = get16(b, 6);
  const offset = (frag & OFFSET_MASK) * 8;
  if (offset + total - hdr + IPV4_HEADER_BYTES > MAX_PACKET) {
    return err(v4Error('WIRE_BAD_LENGTH', `IPv4 fragment offset ${offset} with ${total - hdr} data bytes reassembles past ${MAX_PACKET} bytes`));
  }
  const proto = b[9]!;
  const info: IpInfo = {
    version: 4,
    headerBytes: hdr,
    totalBytes: total,
    ttl: b[8]!,
    proto,
    src: b.subarray(12, 16),
    dst: b.subarray(16, 20),
    dontFragment: (frag & DF) !== 0,
    firstFragment: offset === 0,
    moreFragments: (frag & MF) !== 0,
    fragmentOffset: offset,
    flowLabel: 0,
    transportOffset: hdr,
  };
  if (offset === 0) addPorts(b, info);
  return ok(info);
}

function parseIpv6(b: Uint8Array): Result<IpInfo, WireError> {
  if (b.length < IPV6_HEADER_BYTES) return err(v6Error('WIRE_TRUNCATED', `IPv6 truncated: ${b.length} bytes, needs ${IPV6_HEADER_BYTES}`));
  const payload = get16(b, 4);
  if (payload === 0) return err(v6Error('WIRE_BAD_LENGTH', 'IPv6 payload length 0 (a jumbogram, RFC 2675) is not supported'));
  const total = IPV6_HEADER_BYTES + payload;
  if (total > b.length) {
    return err(v6Error('WIRE_TRUNCATED', `IPv6 payload length ${payload} (${total} bytes with the header) exceeds the packet's ${b.length} bytes`));
  }
  let next = b[6]!;
  let at = IPV6_HEADER_BYTES;
  let first = true;
  let more = false;
  let fragOffset = 0;
  for (;;) {
    const name = EXT_NAMES.get(next);
    if (name === undefined) break;
    if (next === EXT_FRAGMENT) {
      if (at + 8 > total) return err(extTruncated(name, at, 8, total));
      const fo = get16(b, at + 2);
      fragOffset = fo & 0xfff8;
      more = (fo & 1) !== 0;
      // RFC 8200 4.5: the unfragmentable part, the offset and this fragment's data must reassemble within 65535 bytes of payload.
      if (at - IPV6_HEADER_BYTES + fragOffset + (total - at - 8) > MAX_PACKET) {
        return err(
          v6Error('WIRE_BAD_LENGTH', `IPv6 fragment offset ${fragOffset} with ${total - at - 8} data bytes reassembles past ${MAX_PACKET} bytes of payload`),
        );
      }
      next = b[at]!;
      at += 8;
      // What follows in a non-first fragment is data from the middle of the upper layer.
      if (fragOffset !== 0) {
        first = false;
        break;
      }
      continue;
    }
    if (at + 2 > total) return err(extTruncated(name, at, 2, total));
    const len = next === EXT_AH ? (b[at + 1]! + 2) * 4 : (b[at + 1]! + 1) * 8;
    if (at + len > total) return err(extTruncated(name, at, len, total));
    next = b[at]!;
    at += len;
  }
  const info: IpInfo = {
    version: 6,
    headerBytes: at,
    totalBytes: total,
    ttl: b[7]!,
    proto: next,
    src: b.subarray(8, 24),
    dst: b.subarray(24, 40),
    dontFragment: true,
    firstFragment: first,
    moreFragments: more,
    fragmentOffset: fragOffset,
    flowLabel: ((b[1]! & 0x0f) << 16) | (b[2]! << 8) | b[3]!,
    transportOffset: at,
  };
  if (first) addPorts(b, info);
  return ok(info);
}

function addPorts(b: Uint8Array, info: IpInfo): void {
  const p = info.proto;
  const at = info.transportOffset;
  if ((p === PROTO_TCP || p === PROTO_UDP || p === PROTO_SCTP || p === PROTO_UDPLITE) && at + 4 <= info.totalBytes) {
    info.srcPort = get16(b, at);
    info.dstPort = get16(b, at + 2);
  }
}

function v4Error(code: WireError['code'], message: string): WireError {
  return new WireError(code, 'IPv4', message);
}

function v6Error(code: WireError['code'], message: string): WireError {
  return new WireError(code, 'IPv6', message);
}

function extTruncated(name: string, at: number, needs: number, total: number): WireError {
  return v6Error('WIRE_TRUNCATED', `IPv6 ${name} header at byte ${at} needs ${needs} bytes, but the payload ends at byte ${total}`);
}

const hex16 = (v: number) => `0x${v.toString(16).padStart(4, '0')}`;

// ---------------------------------------------------------------------------
// Checksum and TTL

/**
 * The one's complement sum (RFC 1071) of the big-endian 16-bit words of
 * b[start, end), added to `initial`, folded to 16 bits, not complemented. An
 * odd last byte is padded with a zero. For a pseudo-header, or any part
 * summed before the rest: pass it as ipChecksum's `initial`.
 */
export function onesComplementSum(b: Uint8Array, start: number, end: number, initial = 0): number {
  const even = end - ((end - start) & 1);
  let sum = sumWords(b, start, even, initial);
  if (even < end) sum += b[even]! << 8;
  return fold(sum);
}

/**
 * The RFC 1071 checksum of b[start, end): the one's complement of the one's
 * complement sum, with `initial` (a sum from onesComplementSum, such as a
 * pseudo-header's) added in. Over bytes whose checksum field holds the right
 * value this is 0; over bytes with the field zeroed it is the value to put
 * there. The RFC 1071 section 3 example, bytes 00 01 f2 03 f4 f5 f6 f7, gives
 * 0x220d.
 */
export function ipChecksum(b: Uint8Array, start: number, end: number, initial = 0): number {
  return ~onesComplementSum(b, start, end, initial) & 0xffff;
}

/**
 * Decrements the TTL (IPv4) or hop limit (IPv6) of the packet in place and
 * returns the new value. For IPv4 the header checksum is updated from the
 * changed word alone, RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), which gives
 * the same field as summing the whole header again. `info` only says the
 * family; the value is read from the bytes (so two calls decrement twice),
 * and `info.ttl` is left as parsed. The caller checks ttl > 1 first (a
 * router drops the packet and sends time-exceeded otherwise); a value of 0
 * throws RangeArgumentError rather than wrapping to 255.
 */
export function decrementTtl(b: Uint8Array, info: IpInfo): number {
  if (info.version === 6) {
    const hop = b[7]!;
    if (hop === 0) throw new RangeArgumentError('hop limit', hop, 'at least 1');
    b[7] = hop - 1;
    return hop - 1;
  }
  const ttl = b[8]!;
  if (ttl === 0) throw new RangeArgumentError('ttl', ttl, 'at least 1');
  const m = (ttl << 8) | b[9]!;
  const sum = (~get16(b, 10) & 0xffff) + (~m & 0xffff) + (m - 0x100);
  put16(b, 10, ~fold(sum) & 0xffff);
  b[8] = ttl - 1;
  return ttl - 1;
}

// ---------------------------------------------------------------------------
// ICMP errors

/**
 * The errors a router originates. 'frag-needed' (IPv4, RFC 1191) and
 * 'packet-too-big' (IPv6, RFC 4443 3.2) are the same event; either name
 * gives the right message for the offending packet's family.
 */
export type IcmpErrorKind = 'time-exceeded' | 'net-unreachable' | 'host-unreachable' | 'frag-needed' | 'packet-too-big';

export interface IcmpErrorOptions {
  /** The next-hop MTU, required for 'frag-needed' / 'packet-too-big': 68-65535 for IPv4, 1280-4294967295 for IPv6. */
  mtu?: number;
  /** TTL or hop limit of the error, 1-255; default 64. */
  ttl?: number;
}

/** ICMPv4 (RFC 792) error types that must not provoke another error (RFC 1812 4.3.2.7). */
const ICMP4_ERRORS = new Set([3, 4, 5, 11, 12]);
/** ICMPv6 Redirect (RFC 4861): informational, but RFC 4443 2.4(e.2) forbids errors about it too. */
const ICMP6_REDIRECT = 137;

/**
 * Whether a router may send an ICMP error about `offending` (RFC 1812
 * 4.3.2.7; RFC 4443 2.4(e)). Not about:
 *
 * - an ICMP error (IPv4 types 3, 4, 5, 11, 12; IPv6 types < 128, and
 *   Redirect, found past the extension headers);
 * - a non-first fragment (for IPv6 packet-too-big is still sent: the source
 *   needs it whatever piece was too big, and RFC 4443 does not forbid it);
 * - a packet to a multicast or broadcast address (224/4, 255.255.255.255;
 *   ff00::/8), except IPv6 packet-too-big, which RFC 4443 2.4(e.3) allows so
 *   that path MTU discovery works for multicast. A directed broadcast cannot
 *   be told from its address alone and is not caught here;
 * - a packet from an address that is not one host: IPv4 0/8, 127/8, 224/4 and
 *   240/4 (multicast, class E, limited broadcast); IPv6 ::, ::1, ff00::/8.
 */
export function icmpErrorAllowed(kind: IcmpErrorKind, offending: Uint8Array, info: IpInfo): boolean {
  const tooBig = kind === 'frag-needed' || kind === 'packet-too-big';
  if (info.version === 4) {
    if (!info.firstFragment) return false;
    const d0 = info.dst[0]!;
    if ((d0 & 0xf0) === 0xe0 || info.dst.every((x) => x === 0xff)) return false;
    const s0 = info.src[0]!;
    if (s0 === 0 || s0 === 127 || s0 >= 0xe0) return false;
    const at = info.transportOffset;
    if (info.proto === PROTO_ICMP && at < info.totalBytes && ICMP4_ERRORS.has(offending[at]!)) return false;
    return true;
  }
  if (!info.firstFragment && !tooBig) return false;
  if (info.dst[0] === 0xff && !tooBig) return false;
  if (info.src[0] === 0xff || isZeroTo(info.src, 15)) return false; // multicast; :: and ::1
  const at = info.transportOffset;
  if (info.proto === PROTO_ICMPV6 && info.firstFragment && at < info.totalBytes) {
    const type = offending[at]!;
    if (type < 128 || type === ICMP6_REDIRECT) return false;
  }
  return true;
}

/** Whether a[0, n) are all zero and a[n] is 0 or 1 (for ::/128 and ::1/128). */
function isZeroTo(a: Uint8Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== 0) return false;
  return a[n]! <= 1;
}

/**
 * The whole IP packet of an ICMP error about `offending` (parsed as `info`,
 * as it arrived: for time-exceeded, before any TTL decrement), from the
 * router's address `from` back to the offending source; undefined where
 * icmpErrorAllowed says no error may be sent.
 *
 * IPv4: header with TOS 0xc0 (precedence 6, RFC 1812 4.3.2.5), ID 0, DF 0,
 * protocol 1; then ICMP time exceeded (type 11 code 0) or destination
 * unreachable (type 3: code 0 net, 1 host, 4 fragmentation needed with the
 * next-hop MTU in bytes 6-7, RFC 1191), quoting as much of the offending
 * packet (up to its total length) as keeps the error within 576 bytes
 * (RFC 1812 4.3.2.3).
 *
 * IPv6: header with traffic class 0, flow label 0, next header 58; then
 * ICMPv6 time exceeded (type 3 code 0), destination unreachable (type 1:
 * code 0 no route for net-unreachable, 3 address unreachable for
 * host-unreachable) or packet too big (type 2, MTU u32 in bytes 4-7),
 * quoting as much as keeps the error within 1280 bytes (RFC 4443 2.4(c)),
 * checksummed with the pseudo-header (RFC 8200 8.1).
 *
 * Throws RangeArgumentError when `from` is not of the offending packet's
 * family, for a missing or out-of-range `mtu` with a too-big kind, and for
 * a `ttl` outside 1-255.
 */
export function icmpError(kind: IcmpErrorKind, offending: Uint8Array, info: IpInfo, from: Uint8Array, opts: IcmpErrorOptions = {}): Uint8Array | undefined {
  const v4 = info.version === 4;
  if (from.length !== (v4 ? 4 : 16))
    throw new RangeArgumentError('from.length', from.length, `${v4 ? 4 : 16}, an IPv${info.version} address like the offending packet's`);
  const ttl = opts.ttl ?? 64;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 255) throw new RangeArgumentError('ttl', ttl, 'an integer in [1, 255]');
  const tooBig = kind === 'frag-needed' || kind === 'packet-too-big';
  const mtu = opts.mtu;
  if (tooBig) {
    const [lo, hi] = v4 ? [IPV4_MIN_MTU, MAX_PACKET] : [IPV6_MIN_MTU, 0xffff_ffff];
    if (mtu === undefined || !Number.isInteger(mtu) || mtu < lo || mtu > hi)
      throw new RangeArgumentError('mtu', mtu, `an integer in [${lo}, ${hi}] for ${kind}`);
  }
  if (!icmpErrorAllowed(kind, offending, info)) return undefined;
  const [type, code] = icmpTypeCode(kind, v4);
  return v4 ? icmp4(type, code, offending, info, from, ttl, tooBig ? mtu! : 0) : icmp6(type, code, offending, info, from, ttl, tooBig ? mtu! : 0);
}

function icmpTypeCode(kind: IcmpErrorKind, v4: boolean): [number, number] {
  switch (kind) {
    case 'time-exceeded':
      return v4 ? [11, 0] : [3, 0];
    case 'net-unreachable':
      return v4 ? [3, 0] : [1, 0];
    case 'host-unreachable':
      return v4 ? [3, 1] : [1, 3];
    case 'frag-needed':
    case 'packet-too-big':
      return v4 ? [3, 4] : [2, 0];
    default:
      throw new RangeArgumentError('kind', kind as unknown, 'an IcmpErrorKind');
  }
}

function icmp4(type: number, code: number, offending: Uint8Array, info: IpInfo, from: Uint8Array, ttl: number, mtu: number): Uint8Array {
  const quote = Math.min(info.totalBytes, ICMPV4_ERROR_MAX_BYTES - IPV4_HEADER_BYTES - 8);
  const msg = new Uint8Array(8 + quote);
  msg[0] = type;
  msg[1] = code;
  if (mtu !== 0) put16(msg, 6, mtu);
  msg.set(offending.subarray(0, quote), 8);
  put16(msg, 2, ipChecksum(msg, 0, msg.length));
  return ipPacket(PROTO_ICMP, from, info.src, msg, { ttl, tos: 0xc0 });
}

function icmp6(type: number, code: number, offending: Uint8Array, info: IpInfo, from: Uint8Array, ttl: number, mtu: number): Uint8Array {
  const quote = Math.min(info.totalBytes, IPV6_MIN_MTU - IPV6_HEADER_BYTES - 8);
  const msg = new Uint8Array(8 + quote);
  msg[0] = type;
  msg[1] = code;
  if (mtu !== 0) put32(msg, 4, mtu);
  msg.set(offending.subarray(0, quote), 8);
  const out = ipPacket(PROTO_ICMPV6, from, info.src, msg, { ttl });
  // Pseudo-header: source, destination, upper-layer length (u32), next header; the zero bytes add nothing.
  const pseudo = onesComplementSum(out, 8, 40, msg.length + PROTO_ICMPV6);
  put16(out, 42, ipChecksum(out, IPV6_HEADER_BYTES, out.length, pseudo));
  return out;
}

/** What `ipPacket` puts in the header besides the addresses. */
export interface IpPacketOptions {
  /** TTL or hop limit (64). */
  ttl?: number;
  /** IPv4 type of service / IPv6 traffic class (0). */
  tos?: number;
  /** IPv4: the don't-fragment bit (false). */
  df?: boolean;
  /** IPv4: the identification (0). */
  id?: number;
}

/**
 * A new IP packet around `payload` from `src` to `dst`: IPv4 (20-byte
 * header, its checksum computed) when the addresses are 4 bytes, IPv6 (no
 * extension headers, flow label 0) when they are 16. The payload's own
 * checksum is the caller's.
 */
export function ipPacket(proto: number, src: Uint8Array, dst: Uint8Array, payload: Uint8Array, o: IpPacketOptions = {}): Uint8Array {
  const ttl = o.ttl ?? 64;
  const tos = o.tos ?? 0;
  if (src.length === 16 && dst.length === 16) {
    const out = allocBytes(IPV6_HEADER_BYTES + payload.length);
    out[0] = 0x60 | (tos >> 4);
    out[1] = (tos & 0x0f) << 4;
    put16(out, 4, payload.length);
    out[6] = proto;
    out[7] = ttl;
    out.set(src, 8);
    out.set(dst, 24);
    out.set(payload, IPV6_HEADER_BYTES);
    return out;
  }
  if (src.length !== 4 || dst.length !== 4)
    throw new RangeArgumentError('ipPacket addresses', `${src.length} and ${dst.length} bytes`, 'two IPv4 (4-byte) or two IPv6 (16-byte) addresses');
  const out = allocBytes(IPV4_HEADER_BYTES + payload.length);
  out[0] = 0x45;
  out[1] = tos;
  put16(out, 2, out.length);
  put16(out, 4, o.id ?? 0);
  if (o.df) out[6] = 0x40;
  out[8] = ttl;
  out[9] = proto;
  out.set(src, 12);
  out.set(dst, 16);
  put16(out, 10, ipChecksum(out, 0, IPV4_HEADER_BYTES));
  out.set(payload, IPV4_HEADER_BYTES);
  return out;
}

/**
 * Lowers the MSS option of a TCP SYN `segment` to `maxMss`, in place, with
 * the TCP checksum updated incrementally (RFC 1624 eq. 3; an option at an
 * odd offset enters the sum byte-swapped, RFC 1071 2(B)), as routers clamp
 * it (Linux's TCPMSS --clamp-mss-to-pmtu). True when it lowered one.
 */
export function clampMss(segment: Uint8Array, maxMss: number): boolean {
  if (segment.length < 20 || !(segment[13]! & 0x02)) return false;
  const end = Math.min(segment.length, (segment[12]! >> 4) * 4);
  for (let o = 20; o < end;) {
    const kind = segment[o]!;
    if (kind === 0) break;
    if (kind === 1) {
      o++;
      continue;
    }
    const len = segment[o + 1] ?? 0;
    if (len < 2 || o + len > end) break;
    if (kind === 2 && len === 4) {
      const old = (segment[o + 2]! << 8) | segment[o + 3]!;
      if (old <= maxMss) return false;
      segment[o + 2] = maxMss >> 8;
      segment[o + 3] = maxMss & 0xff;
      const odd = (o + 2) % 2 === 1;
      const swap = (v: number): number => ((v & 0xff) << 8) | (v >> 8);
      const [m, m2] = odd ? [swap(old), swap(maxMss)] : [old, maxMss];
      const sum = fold((~((segment[16]! << 8) | segment[17]!) & 0xffff) + (~m & 0xffff) + m2);
      put16(segment, 16, ~sum & 0xffff);
      return true;
    }
    o += len;
  }
  return false;
}

// ---------------------------------------------------------------------------
// IPv4 fragmentation

/**
 * RFC 791 fragmentation of an IPv4 packet without DF into pieces of at most
 * `mtu` bytes each. Every piece but the last carries a multiple of 8 data
 * bytes; offsets count from the packet's own offset, and the last piece
 * keeps the packet's MF (so a fragment can be fragmented again); the others
 * have MF set. The first piece keeps the whole header; the others carry only
 * the options whose copied flag (0x80) is set, padded with zeros (EOL) to a
 * multiple of 4. ID, TOS, TTL and protocol are kept; DF and the reserved bit
 * are 0; each header checksum is computed afresh. Bytes after the total
 * length are dropped. A packet that fits is returned as is, as one view of
 * `b` (not a copy); otherwise each piece is new memory.
 *
 * Throws RangeArgumentError for an mtu that is not an integer >= 68, for an
 * IPv6 packet (routers do not fragment IPv6, RFC 8200 5) and for a packet
 * with DF (send 'frag-needed' instead).
 */
export function fragmentIpv4(b: Uint8Array, info: IpInfo, mtu: number): Uint8Array[] {
  if (!Number.isInteger(mtu) || mtu < IPV4_MIN_MTU) throw new RangeArgumentError('mtu', mtu, `an integer >= ${IPV4_MIN_MTU} (RFC 791)`);
  if (info.version !== 4) throw new RangeArgumentError('info.version', info.version, '4: routers do not fragment IPv6 (RFC 8200 5)');
  if (info.dontFragment) throw new RangeArgumentError('info.dontFragment', true, 'false: a DF packet is not fragmented; send frag-needed');
  const total = info.totalBytes;
  if (total <= mtu) return [b.subarray(0, total)];
  const hdr = info.headerBytes;
  const later = laterHeader(b, hdr);
  const pieces: Uint8Array[] = [];
  let at = hdr;
  let offset = info.fragmentOffset;
  while (at < total) {
    const header = pieces.length === 0 ? b.subarray(0, hdr) : later;
    const h = header.length;
    const left = total - at;
    const last = left <= mtu - h;
    const n = last ? left : ((mtu - h) >>> 3) << 3;
    const out = new Uint8Array(h + n);
    out.set(header);
    out.set(b.subarray(at, at + n), h);
    put16(out, 2, h + n);
    put16(out, 6, (last && !info.moreFragments ? 0 : MF) | (offset >>> 3));
    put16(out, 10, 0);
    put16(out, 10, ipChecksum(out, 0, h));
    pieces.push(out);
    at += n;
    offset += n;
  }
  return pieces;
}

/** The header for pieces after the first: the fixed 20 bytes and the options with the copied flag, padded to 4-byte words. */
function laterHeader(b: Uint8Array, hdr: number): Uint8Array {
  const copied: number[] = [];
  for (let i = IPV4_HEADER_BYTES; i < hdr;) {
    const kind = b[i]!;
    if (kind === 0) break; // EOL
    if (kind === 1) {
      i++; // NOP: copied flag clear
      continue;
    }
    // A malformed option cannot be delimited: copy nothing from there on (the first piece still has it all).
    if (i + 1 >= hdr) break;
    const len = b[i + 1]!;
    if (len < 2 || i + len > hdr) break;
    if (kind & 0x80) for (let k = 0; k < len; k++) copied.push(b[i + k]!);
    i += len;
  }
  const size = IPV4_HEADER_BYTES + ((copied.length + 3) & ~3);
  const out = new Uint8Array(size);
  out.set(b.subarray(0, IPV4_HEADER_BYTES));
  out.set(copied, IPV4_HEADER_BYTES);
  out[0] = 0x40 | (size >>> 2);
  return out;
}

// ---------------------------------------------------------------------------
// Addresses

const DOTTED = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/**
 * The bytes (4 or 16) of an address in text; undefined for anything else.
 * IPv4 is a strict dotted quad: four decimal parts 0-255 without leading
 * zeros (which some parsers read as octal). IPv6 is RFC 4291 2.2: eight
 * groups of 1-4 hex digits (either case), one `::` for one or more zero
 * groups, and an optional dotted-quad tail for the last 32 bits. No zone
 * (`%eth0`), no brackets, no surrounding space.
 */
export function parseIpAddress(text: string): Uint8Array | undefined {
  return text.includes(':') ? parseIpv6Address(text) : parseIpv4Address(text);
}

function parseIpv4Address(text: string): Uint8Array | undefined {
  const m = DOTTED.exec(text);
  if (!m) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const v = Number(m[i + 1]);
    if (v > 255) return undefined;
    out[i] = v;
  }
  return out;
}

function parseIpv6Address(text: string): Uint8Array | undefined {
  // The longest form: eight groups of four, or six and a dotted quad (45 characters).
  if (text.length > 45) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  let words: number[];
  if (halves.length === 1) {
    const all = groups(text, true);
    if (all === undefined || all.length !== 8) return undefined;
    words = all;
  } else {
    const head = groups(halves[0]!, false);
    const tail = groups(halves[1]!, true);
    if (head === undefined || tail === undefined || head.length + tail.length > 7) return undefined;
    words = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) put16(out, 2 * i, words[i]!);
  return out;
}

/** The 16-bit groups of a colon-separated run ('' is none); a dotted quad may end it when `last`. */
function groups(text: string, last: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const words: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (HEX_GROUP.test(p)) words.push(parseInt(p, 16));
    else if (last && i === parts.length - 1 && p.includes('.')) {
      const v4 = parseIpv4Address(p);
      if (v4 === undefined) return undefined;
      words.push(get16(v4, 0), get16(v4, 2));
    } else return undefined;
  }
  return words;
}

/**
 * An address in text: IPv4 dotted quad; IPv6 as RFC 5952 4 has it (lower
 * case, no leading zeros, the longest run of two or more zero groups as
 * `::`, the first such run on a tie; never the dotted-quad tail). Throws
 * RangeArgumentError for bytes that are not 4 or 16 long.
 */
export function formatIpAddress(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) throw new RangeArgumentError('address length', b.length, '4 or 16 bytes');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(get16(b, i));
  let bestAt = -1;
  let bestLen = 1; // a single zero group is not compressed (RFC 5952 4.2.2)
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hexOf = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (bestAt < 0) return hexOf(words);
  return `${hexOf(words.slice(0, bestAt))}::${hexOf(words.slice(bestAt + bestLen))}`;
}

// ---------------------------------------------------------------------------
// Prefixes

/** A CIDR prefix: `bytes` is the network address (4 or 16 bytes, host bits zero), `length` the prefix length. */
export interface Prefix {
  version: 4 | 6;
  bytes: Uint8Array;
  length: number;
}

/**
 * A prefix in text, "10.0.4.0/24" or "fd00:1:0:4::/64"; a bare address is a
 * host prefix (/32, /128). Refused, with the reason naming the text: an
 * address parseIpAddress refuses, a length that is not a decimal integer
 * (no leading zeros) within the family's bits, and host bits set, which
 * says what was probably meant: `10.0.4.1/24 has host bits set (did you
 * mean 10.0.4.0/24?)`.
 */
export function parsePrefix(text: string): Result<Prefix, string> {
  if (text === '') return err('an empty string is not a prefix');
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const bytes = parseIpAddress(addrText);
  if (bytes === undefined) return err(`${text}: ${addrText === '' ? 'the address is missing' : `${addrText} is not an IPv4 or IPv6 address`}`);
  const version = bytes.length === 4 ? 4 : 6;
  const bits = bytes.length * 8;
  let length = bits;
  if (slash >= 0) {
    const lenText = text.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(lenText) || Number(lenText) > bits) {
      return err(`${text}: the prefix length ${lenText === '' ? 'is missing' : `${lenText} is not an integer in 0-${bits}`} for IPv${version}`);
    }
    length = Number(lenText);
  }
  const p: Prefix = { version, bytes: maskBytes(bytes, length), length };
  if (!sameBytes(p.bytes, bytes)) return err(`${text} has host bits set (did you mean ${formatPrefix(p)}?)`);
  return ok(p);
}

/** "10.0.4.0/24", "fd00:1:0:4::/64": formatIpAddress and the length. */
export function formatPrefix(p: Prefix): string {
  return `${formatIpAddress(p.bytes)}/${p.length}`;
}

/** Whether `addr` is inside `p`; false when they are of different families. */
export function prefixContains(p: Prefix, addr: Uint8Array): boolean {
  if (addr.length !== p.bytes.length) return false;
  const whole = p.length >>> 3;
  for (let i = 0; i < whole; i++) if (addr[i] !== p.bytes[i]) return false;
  const rest = p.length & 7;
  if (rest === 0) return true;
  const m = (0xff << (8 - rest)) & 0xff;
  return (addr[whole]! & m) === p.bytes[whole];
}

/** A copy of `b` with the bits after the first `length` cleared. */
function maskBytes(b: Uint8Array, length: number): Uint8Array {
  const out = Uint8Array.from(b);
  for (let i = 0; i < out.length; i++) {
    const keep = length - 8 * i;
    if (keep >= 8) continue;
    out[i] = keep <= 0 ? 0 : out[i]! & (0xff << (8 - keep));
  }
  return out;
}

function checkPrefix(p: Prefix): void {
  const size = p.version === 4 ? 4 : p.version === 6 ? 16 : -1;
  if (size < 0 || p.bytes.length !== size)
    throw new RangeArgumentError('prefix', `version ${p.version}, ${p.bytes.length} bytes`, 'IPv4 with 4 bytes or IPv6 with 16');
  if (!Number.isInteger(p.length) || p.length < 0 || p.length > size * 8)
    throw new RangeArgumentError('prefix.length', p.length, `an integer in [0, ${size * 8}]`);
  if (!sameBytes(maskBytes(p.bytes, p.length), p.bytes)) throw new RangeArgumentError('prefix', formatPrefix(p), 'no host bits set');
}

/** One route of a PrefixTable. */
export interface PrefixEntry<T> {
  readonly prefix: Prefix;
  readonly value: T;
}

/** The IPv4 netmask of each length as an unsigned 32-bit number. */
const MASK4: readonly number[] = Array.from({ length: 33 }, (_, n) => (n === 0 ? 0 : (0xffff_ffff << (32 - n)) >>> 0));

/**
 * Values by prefix, with longest-prefix match. For the per-packet path: one
 * Map per prefix length present, keyed by the masked address (an IPv4
 * address as a u32; an IPv6 one as a string of its significant 16-bit
 * groups), and a lookup probes the lengths present from the longest down,
 * one Map get each, with no allocation for IPv4. An IPv4 table of routes of
 * 3 lengths is 3 probes at most whatever its size.
 *
 * Entries are kept as given (the prefix copied): lookup hands back the
 * stored entry itself, which must not be changed; set makes a new one.
 */
export class PrefixTable<T> {
  /** Per family: the lengths present, longest first, and the Map of each (same index). */
  private lens4: number[] = [];
  private maps4: Array<Map<number, PrefixEntry<T>>> = [];
  private lens6: number[] = [];
  private maps6: Array<Map<string, PrefixEntry<T>>> = [];
  private count = 0;

  /** Adds `p` or replaces its value. Throws RangeArgumentError for a malformed prefix (wrong byte count, length, host bits set). */
  set(p: Prefix, v: T): void {
    checkPrefix(p);
    const entry: PrefixEntry<T> = { prefix: { version: p.version, bytes: Uint8Array.from(p.bytes), length: p.length }, value: v };
    if (p.version === 4) {
      const map = this.mapFor(this.lens4, this.maps4, p.length);
      const key = key4(u32Of(p.bytes), p.length);
      if (!map.has(key)) this.count++;
      map.set(key, entry);
    } else {
      const map = this.mapFor(this.lens6, this.maps6, p.length);
      const key = key6(p.bytes, p.length);
      if (!map.has(key)) this.count++;
      map.set(key, entry);
    }
  }

  /** Removes `p`; whether it was there. A malformed prefix is simply not there. */
  delete(p: Prefix): boolean {
    if (p.version === 4 && p.bytes.length === 4) return this.remove(this.lens4, this.maps4, p.length, key4(u32Of(p.bytes), p.length));
    if (p.version === 6 && p.bytes.length === 16) return this.remove(this.lens6, this.maps6, p.length, key6(p.bytes, p.length));
    return false;
  }

  /** The entry of the longest prefix holding `addr` (4 or 16 bytes), or undefined. */
  lookup(addr: Uint8Array): PrefixEntry<T> | undefined {
    if (addr.length === 4) {
      const a = u32Of(addr);
      const lens = this.lens4;
      for (let i = 0; i < lens.length; i++) {
        const e = this.maps4[i]!.get((a & MASK4[lens[i]!]!) >>> 0);
        if (e !== undefined) return e;
      }
      return undefined;
    }
    if (addr.length === 16) {
      const lens = this.lens6;
      for (let i = 0; i < lens.length; i++) {
        const e = this.maps6[i]!.get(key6(addr, lens[i]!));
        if (e !== undefined) return e;
      }
    }
    return undefined;
  }

  /** Every entry: IPv4 before IPv6, then by address, then shorter prefix first. */
  entries(): Array<PrefixEntry<T>> {
    const all: Array<PrefixEntry<T>> = [];
    for (const m of this.maps4) all.push(...m.values());
    for (const m of this.maps6) all.push(...m.values());
    return all.sort(comparePrefixEntries);
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.lens4 = [];
    this.maps4 = [];
    this.lens6 = [];
    this.maps6 = [];
    this.count = 0;
  }

  /** The Map for length `len`, made (and its length put in order) if there is none. */
  private mapFor<K>(lens: number[], maps: Array<Map<K, PrefixEntry<T>>>, len: number): Map<K, PrefixEntry<T>> {
    let i = 0;
    while (i < lens.length && lens[i]! > len) i++;
    if (lens[i] === len) return maps[i]!;
    const map = new Map<K, PrefixEntry<T>>();
    lens.splice(i, 0, len);
    maps.splice(i, 0, map);
    return map;
  }

  private remove<K>(lens: number[], maps: Array<Map<K, PrefixEntry<T>>>, len: number, key: K): boolean {
    const i = lens.indexOf(len);
    if (i < 0 || !maps[i]!.delete(key)) return false;
    this.count--;
    if (maps[i]!.size === 0) {
      lens.splice(i, 1);
      maps.splice(i, 1);
    }
    return true;
  }
}

function comparePrefixEntries<T>(a: PrefixEntry<T>, b: PrefixEntry<T>): number {
  const x = a.prefix;
  const y = b.prefix;
  if (x.version !== y.version) return x.version - y.version;
  for (let i = 0; i < x.bytes.length; i++) if (x.bytes[i] !== y.bytes[i]) return x.bytes[i]! - y.bytes[i]!;
  return x.length - y.length;
}

function u32Of(b: Uint8Array): number {
  return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
}

function key4(a: number, len: number): number {
  return len < 0 || len > 32 ? -1 : (a & MASK4[len]!) >>> 0;
}

/** The first ceil(len / 16) groups of `b`, the last masked to the prefix, as one string of UTF-16 units. */
function key6(b: Uint8Array, len: number): string {
  let key = '';
  for (let bit = 0, i = 0; bit < len; bit += 16, i += 2) {
    const keep = len - bit;
    const w = (b[i]! << 8) | b[i + 1]!;
    key += String.fromCharCode(keep >= 16 ? w : w & (0xffff << (16 - keep)) & 0xffff);
  }
  return key;
}

// ---------------------------------------------------------------------------
// Flow hash

/**
 * A 16-bit hash (0-65535; 0 can occur) of a packet's flow: FNV-1a (32-bit)
 * over the version, the protocol, source and destination addresses and the
 * ports (0 where absent), folded to 16 bits by xoring its halves. The same
 * on every run and every host, so all packets of a flow take the same path
 * or queue; direction matters (A to B and B to A usually differ). A
 * non-first fragment has no ports, so it hashes apart from the first.
 */
export function flowHash(info: IpInfo): number {
  let h = 0x811c9dc5;
  h = fnv(h, info.version);
  h = fnv(h, info.proto);
  for (let i = 0; i < info.src.length; i++) h = fnv(h, info.src[i]!);
  for (let i = 0; i < info.dst.length; i++) h = fnv(h, info.dst[i]!);
  const sp = info.srcPort ?? 0;
  const dp = info.dstPort ?? 0;
  h = fnv(fnv(h, sp >>> 8), sp & 0xff);
  h = fnv(fnv(h, dp >>> 8), dp & 0xff);
  return ((h >>> 16) ^ h) & 0xffff;
}

function fnv(h: number, byte: number): number {
  return Math.imul(h ^ byte, 0x01000193) >>> 0;
}
