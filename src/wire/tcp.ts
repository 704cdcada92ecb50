import { RangeArgumentError } from '../core/errors.js';
import { fold, sumWords } from './checksum.js';
import { err, ok, type Result } from '../core/result.js';
import { allocBytes, get16, get32, isUint, put16, put32, u16, u32, u8 } from './bytes.js';
import { WireError } from './codec.js';

/**
 * Bytes of a TCP segment (RFC 9293 section 3.1) and back, with the options a
 * modern stack negotiates: MSS, window scale and timestamps (RFC 7323), SACK
 * (RFC 2018). Sans-IO: no sockets, no state; the connection logic lives
 * elsewhere and sees only `TcpSegment` values. Big-endian, like the mesh
 * codec; docs/wire.md has the same tables.
 *
 *   0  srcPort    u16
 *   2  dstPort    u16
 *   4  seq        u32
 *   8  ack        u32
 *  12  offset     u4   header length in 32-bit words, 5-15 (high nibble);
 *                      the low nibble (reserved, and the historic NS bit) is
 *                      sent as 0 and ignored on parse, as RFC 9293 says
 *  13  flags      u8   CWR 0x80, ECE 0x40, URG 0x20, ACK 0x10, PSH 0x08,
 *                      RST 0x04, SYN 0x02, FIN 0x01
 *  14  window     u16  as sent, not scaled
 *  16  checksum   u16  RFC 1071 over the pseudo-header and the whole segment
 *  18  urgent     u16
 *  20  options    0-40 bytes, up to offset * 4
 *   n  payload    to the end of the bytes (TCP has no length field: the IP
 *                 header says where the segment ends)
 *
 * Options (kind, length in bytes including kind and length):
 *
 *   0  EOL             1   ends the option list; what follows is padding
 *   1  NOP             1
 *   2  MSS             4   u16
 *   3  window scale    3   u8 shift (RFC 7323: 0-14)
 *   4  SACK-permitted  2
 *   5  SACK            2 + 8n, n = 1-4 blocks of { left u32, right u32 }
 *   8  timestamps      10  value u32, echo u32
 *
 * encodeTcp writes them in this order and layout, which is the one Linux
 * uses with window scale moved up: every 4-byte group is aligned, and the
 * u32 fields of TS and SACK land on 4-byte boundaries:
 *
 *   MSS                    02 04 mm mm
 *   window scale           01 03 03 ss
 *   SACK-permitted and TS  04 02 08 0a vv vv vv vv ee ee ee ee
 *   TS alone               01 01 08 0a vv vv vv vv ee ee ee ee
 *   SACK-permitted alone   01 01 04 02
 *   SACK, n blocks         01 01 05 (2+8n) then n x (left, right)
 *
 * Each group is a multiple of 4 bytes, so the option area never needs
 * trailing padding. The whole area is at most 40 bytes (offset 15): with
 * timestamps, that leaves room for 3 SACK blocks; without, 4. Choosing how
 * many blocks to send is the caller's job; encodeTcp refuses more.
 *
 * parseTcp is lenient where RFC 9293 asks a receiver to be (any option
 * order and padding, unknown kinds skipped by their length, reserved bits
 * ignored) and strict about lengths (an option that cannot be delimited, or
 * a known option of the wrong length, is WIRE_BAD_FIELD). So it is not the
 * exact inverse of encodeTcp the way the mesh codec is: it accepts segments
 * laid out by any stack. What holds is that parseTcp(encodeTcp(s)) equals s
 * (up to `sackPermitted: false` and `sack: []`, which send nothing and so
 * come back as missing keys), and that encodeTcp(parseTcp(b)) is b for any
 * b that encodeTcp produced. Some accepted segments cannot be sent back as
 * they are: a window scale above 14, or options that fit in 40 bytes packed
 * but not in the aligned layout (MSS, TS and 3 SACK blocks: 40 packed, 44
 * aligned). Neither is something this stack sends.
 */

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;
export const TCP_URG = 0x20;
export const TCP_ECE = 0x40;
export const TCP_CWR = 0x80;

/** The fixed header, without options. */
export const TCP_HEADER_BYTES = 20;
/** Most option bytes a header can carry: data offset 15 words is 60 bytes, less the fixed 20. */
export const TCP_MAX_OPTION_BYTES = 40;

const OPT_EOL = 0;
const OPT_NOP = 1;
const OPT_MSS = 2;
const OPT_WS = 3;
const OPT_SACK_PERMITTED = 4;
const OPT_SACK = 5;
const OPT_TS = 8;

/** RFC 7323 2.3: a larger shift would let the window pass 2^30, half the sequence space. */
const MAX_WINDOW_SCALE = 14;
/** A SACK option of 5 blocks is 42 bytes, more than the option area holds. */
const MAX_SACK_BLOCKS = 4;
const PROTO_TCP = 6;

/** A SACK block (RFC 2018): the sequence numbers of the first byte received and of the byte after the last. */
export interface SackBlock {
  left: number;
  right: number;
}

/**
 * The options of one segment. A missing key is an option not sent (or not
 * received). Parsing sets only the keys it saw; when an option appears more
 * than once, the last one counts.
 */
export interface TcpOptions {
  /** Kind 2: the largest segment the sender can receive, 0-65535. */
  mss?: number;
  /**
   * Kind 3: the window shift. encodeTcp takes 0-14. parseTcp keeps the raw
   * byte (0-255), because RFC 7323 2.3 has the connection log and clamp a
   * value above 14 rather than drop the SYN.
   */
  windowScale?: number;
  /** Kind 4. `false` sends nothing, like a missing key; parseTcp only ever sets `true`. */
  sackPermitted?: boolean;
  /** Kind 5: 1-4 blocks. An empty array sends no SACK option; parseTcp never returns one. */
  sack?: SackBlock[];
  /** Kind 8 (RFC 7323 3): TSval and TSecr, u32 each. */
  timestamp?: { value: number; echo: number };
}

export interface TcpSegment {
  srcPort: number;
  dstPort: number;
  /** u32, unsigned. */
  seq: number;
  /** u32, unsigned; meaningful only with TCP_ACK, but carried either way. */
  ack: number;
  /** The 8 flag bits of byte 13 (TCP_FIN ... TCP_CWR). */
  flags: number;
  /** u16 as on the wire; the connection applies the window scale. */
  window: number;
  /** u16; meaningful only with TCP_URG, but carried either way. */
  urgent: number;
  options: TcpOptions;
  /**
   * The data. From parseTcp, a view into the parsed bytes (`subarray`, no
   * copy): it changes if they do, and keeps their whole buffer alive. Copy it
   * before holding on to it past the receive buffer's lifetime. No data: one
   * empty array shared by every such parsed segment.
   */
  payload: Uint8Array;
}

/**
 * Source and destination IP addresses for the pseudo-header: 4 bytes each
 * (IPv4, RFC 9293 3.1) or 16 each (IPv6, RFC 8200 8.1).
 */
export interface IpPair {
  src: Uint8Array;
  dst: Uint8Array;
}

// ---------------------------------------------------------------------------
// Checksum

/**
 * RFC 1071: the one's complement of the one's complement sum of the 16-bit
 * big-endian words of `parts` taken as one byte string. A part may have an
 * odd length anywhere: its last byte pairs with the first byte of the next
 * part, as if the parts were concatenated; only the very last byte of all is
 * padded with a zero. The RFC 1071 section 3 example, bytes
 * 00 01 f2 03 f4 f5 f6 f7, sums to 0xddf2 and gives 0x220d.
 */
export function internetChecksum(...parts: Uint8Array[]): number {
  let sum = 0;
  let odd = false;
  for (const p of parts) {
    let i = 0;
    if (odd && p.length > 0) {
      // The previous part added its last byte as the high half of a word.
      sum += p[0]!;
      i = 1;
      odd = false;
    }
    const end = p.length - ((p.length - i) & 1);
    sum = sumWords(p, i, end, sum);
    if (end < p.length) {
      sum += p[end]! << 8;
      odd = true;
    }
  }
  return ~fold(sum) & 0xffff;
}

/**
 * The RFC 1071 checksum of the pseudo-header for `ip` and `bytes` as they are.
 * Over a segment that carries its checksum this is 0 when the checksum is
 * right; over a segment with the checksum field zeroed it is the value to
 * put there. Throws RangeArgumentError when `ip` is not two IPv4 or two IPv6
 * addresses, or when an IPv4 segment is longer than 65535 bytes (the IPv4
 * pseudo-header length field is 16 bits).
 */
export function tcpChecksum(bytes: Uint8Array, ip: IpPair): number {
  checkIp(ip);
  if (ip.src.length === 4 && bytes.length > 0xffff) tooLongForIpv4(bytes.length);
  return checksumOf(bytes, ip);
}

/** The checksum over pseudo-header and `bytes`; `ip` checked, and an IPv4 length that fits, by the caller. */
function checksumOf(bytes: Uint8Array, ip: IpPair): number {
  const n = bytes.length;
  // Pseudo-header. IPv4: src, dst, zero, protocol 6, TCP length (u16).
  // IPv6: src, dst, length (u32), three zero bytes, next header 6. Summed
  // word by word the zeros drop out, so both are src + dst + 6 + length
  // (as one u16 for IPv4; as two for IPv6, whose high word is 0 unless the
  // segment is a jumbogram).
  let sum = sumWords(ip.src, 0, ip.src.length, 0);
  sum = sumWords(ip.dst, 0, ip.dst.length, sum);
  sum += PROTO_TCP + (n >>> 16) + (n & 0xffff);
  const end = n - (n & 1);
  sum = sumWords(bytes, 0, end, sum);
  if (end < n) sum += bytes[end]! << 8;
  return ~fold(sum) & 0xffff;
}

// ---------------------------------------------------------------------------
// Encode

/**
 * Bytes the options of `o` take in encodeTcp's layout (see the file header),
 * always a multiple of 4. It may exceed TCP_MAX_OPTION_BYTES: encodeTcp
 * refuses such options, and a caller can use this to decide how many SACK
 * blocks fit. Does not check the option values.
 */
export function optionBytes(o: TcpOptions): number {
  let n = 0;
  if (o.mss !== undefined) n += 4;
  if (o.windowScale !== undefined) n += 4;
  const ts = o.timestamp !== undefined;
  // SACK-permitted fills the two bytes before TS that would otherwise be NOPs.
  if (ts) n += 12;
  else if (o.sackPermitted === true) n += 4;
  const blocks = o.sack?.length ?? 0;
  if (blocks > 0) n += 4 + 8 * blocks;
  return n;
}

/**
 * `seg` as a new segment for the pseudo-header of `ip`, checksum filled in.
 * One allocation: header, options and a copy of the payload. Throws
 * RangeArgumentError naming the field when a field is out of range, the
 * options take more than 40 bytes, `ip` is not a pair of IPv4 or IPv6
 * addresses, or an IPv4 segment would be longer than 65535 bytes. Everything
 * is checked before the buffer is allocated. `room`: bytes to keep free in
 * front of the segment, its own, for the header of the layer below
 * (`allocBytes`). `checksum` false leaves the checksum field 0, for a link
 * that is trusted with it (see TcpStack's `checksums`); the pseudo-header's
 * addresses are checked all the same.
 */
export function encodeTcp(seg: TcpSegment, ip: IpPair, room = 0, checksum = true): Uint8Array {
  checkSegment(seg);
  checkIp(ip);
  const o = seg.options;
  const opts = optionBytes(o);
  if (opts > TCP_MAX_OPTION_BYTES) {
    throw new RangeArgumentError(
      'tcp.options',
      describeOptions(o),
      `at most ${TCP_MAX_OPTION_BYTES} bytes of options, these take ${opts} (send fewer SACK blocks: 3 with timestamps, 4 without)`,
    );
  }
  const hdr = TCP_HEADER_BYTES + opts;
  const total = hdr + seg.payload.length;
  if (ip.src.length === 4 && total > 0xffff) tooLongForIpv4(total);

  const b = allocBytes(total, room);
  put16(b, 0, seg.srcPort);
  put16(b, 2, seg.dstPort);
  put32(b, 4, seg.seq);
  put32(b, 8, seg.ack);
  b[12] = (hdr >>> 2) << 4;
  b[13] = seg.flags;
  put16(b, 14, seg.window);
  // 16-17: the checksum, zero until the sum below.
  put16(b, 18, seg.urgent);

  let p = TCP_HEADER_BYTES;
  if (o.mss !== undefined) {
    b[p] = OPT_MSS;
    b[p + 1] = 4;
    put16(b, p + 2, o.mss);
    p += 4;
  }
  if (o.windowScale !== undefined) {
    b[p] = OPT_NOP;
    b[p + 1] = OPT_WS;
    b[p + 2] = 3;
    b[p + 3] = o.windowScale;
    p += 4;
  }
  const ts = o.timestamp;
  if (ts !== undefined) {
    if (o.sackPermitted === true) {
      b[p] = OPT_SACK_PERMITTED;
      b[p + 1] = 2;
    } else {
      b[p] = OPT_NOP;
      b[p + 1] = OPT_NOP;
    }
    b[p + 2] = OPT_TS;
    b[p + 3] = 10;
    put32(b, p + 4, ts.value);
    put32(b, p + 8, ts.echo);
    p += 12;
  } else if (o.sackPermitted === true) {
    b[p] = OPT_NOP;
    b[p + 1] = OPT_NOP;
    b[p + 2] = OPT_SACK_PERMITTED;
    b[p + 3] = 2;
    p += 4;
  }
  const sack = o.sack;
  if (sack !== undefined && sack.length > 0) {
    b[p] = OPT_NOP;
    b[p + 1] = OPT_NOP;
    b[p + 2] = OPT_SACK;
    b[p + 3] = 2 + 8 * sack.length;
    p += 4;
    for (const blk of sack) {
      put32(b, p, blk.left);
      put32(b, p + 4, blk.right);
      p += 8;
    }
  }

  b.set(seg.payload, hdr);
  if (checksum) put16(b, 16, checksumOf(b, ip));
  return b;
}

/**
 * Refuses a segment with a field out of range. Every segment a connection
 * sends goes through here: the fields are checked at once, in one expression
 * (`(v >>> 0) === v` holds exactly for the integers in [0, 2^32)), and only
 * a segment that fails it is gone through field by field for the error that
 * names the first bad one. Kept small so that V8 inlines it, and what it
 * calls, into the encoder.
 */
function checkSegment(seg: TcpSegment): void {
  const { srcPort, dstPort, seq, ack, flags, window, urgent } = seg;
  const o = seg.options;
  const ok =
    srcPort >>> 0 === srcPort &&
    srcPort <= 0xffff &&
    dstPort >>> 0 === dstPort &&
    dstPort <= 0xffff &&
    seq >>> 0 === seq &&
    ack >>> 0 === ack &&
    flags >>> 0 === flags &&
    flags <= 0xff &&
    window >>> 0 === window &&
    window <= 0xffff &&
    urgent >>> 0 === urgent &&
    urgent <= 0xffff &&
    seg.payload instanceof Uint8Array &&
    typeof o === 'object' &&
    o !== null &&
    optionsInRange(o);
  if (!ok) checkFields(seg);
}

/** `checkOptions` as a yes or no, in the common cases (no SACK blocks, or a few); the rest goes to `checkOptions`. */
function optionsInRange(o: TcpOptions): boolean {
  const { mss, windowScale, sackPermitted, sack, timestamp } = o;
  if (mss !== undefined && !(mss >>> 0 === mss && mss <= 0xffff)) return false;
  if (windowScale !== undefined && !(windowScale >>> 0 === windowScale && windowScale <= MAX_WINDOW_SCALE)) return false;
  if (sackPermitted !== undefined && sackPermitted !== true && sackPermitted !== false) return false;
  if (
    timestamp !== undefined &&
    !(typeof timestamp === 'object' && timestamp !== null && timestamp.value >>> 0 === timestamp.value && timestamp.echo >>> 0 === timestamp.echo)
  )
    return false;
  return sack === undefined || (Array.isArray(sack) && sack.length === 0);
}

/**
 * The field-by-field checks behind `checkSegment`: throws RangeArgumentError
 * naming the first field out of range, and returns when none is (a segment
 * with SACK blocks, which the one expression leaves to these).
 */
function checkFields(seg: TcpSegment): void {
  u16('tcp.srcPort', seg.srcPort);
  u16('tcp.dstPort', seg.dstPort);
  u32('tcp.seq', seg.seq);
  u32('tcp.ack', seg.ack);
  if (!isUint(seg.flags, 0xff)) {
    throw new RangeArgumentError('tcp.flags', seg.flags, 'an integer in [0, 255] (the 8 flag bits)');
  }
  u16('tcp.window', seg.window);
  u16('tcp.urgent', seg.urgent);
  if (!(seg.payload instanceof Uint8Array)) {
    throw new RangeArgumentError('tcp.payload', typeof seg.payload, 'a Uint8Array');
  }
  const o: unknown = seg.options;
  if (o === null || typeof o !== 'object') throw new RangeArgumentError('tcp.options', o, 'an object');
  checkOptions(seg.options);
}

function checkOptions(o: TcpOptions): void {
  if (o.mss !== undefined) u16('tcp.options.mss', o.mss);
  if (o.windowScale !== undefined && !isUint(o.windowScale, MAX_WINDOW_SCALE)) {
    const expected = `an integer in [0, ${MAX_WINDOW_SCALE}] (RFC 7323 2.3)`;
    throw new RangeArgumentError('tcp.options.windowScale', o.windowScale, expected);
  }
  if (o.sackPermitted !== undefined && typeof o.sackPermitted !== 'boolean') {
    throw new RangeArgumentError('tcp.options.sackPermitted', o.sackPermitted, 'a boolean');
  }
  const sack: unknown = o.sack;
  if (sack !== undefined) {
    if (!Array.isArray(sack) || sack.length > MAX_SACK_BLOCKS) {
      const n = Array.isArray(sack) ? sack.length : typeof sack;
      throw new RangeArgumentError('tcp.options.sack.length', n, `an array of 0 to ${MAX_SACK_BLOCKS} blocks`);
    }
    for (let i = 0; i < sack.length; i++) {
      const blk: unknown = sack[i];
      if (blk === null || typeof blk !== 'object') {
        throw new RangeArgumentError(`tcp.options.sack[${i}]`, blk, 'an object { left, right }');
      }
      const { left, right } = blk as SackBlock;
      u32(`tcp.options.sack[${i}].left`, left);
      u32(`tcp.options.sack[${i}].right`, right);
    }
  }
  const ts: unknown = o.timestamp;
  if (ts !== undefined) {
    if (ts === null || typeof ts !== 'object') {
      throw new RangeArgumentError('tcp.options.timestamp', ts, 'an object { value, echo }');
    }
    const { value, echo } = ts as { value: number; echo: number };
    u32('tcp.options.timestamp.value', value);
    u32('tcp.options.timestamp.echo', echo);
  }
}

// ---------------------------------------------------------------------------
// Parse

/** The payload of every parsed segment that carries none. */
const NO_PAYLOAD = new Uint8Array(0);

/**
 * The segment in `bytes`, which run from the TCP header to the end of the IP
 * payload. With `ip`, the checksum is verified first (a corrupted segment is
 * WIRE_BAD_CHECKSUM rather than whatever its damaged options look like);
 * without it, the caller has verified it or trusts its link. Checks, in
 * order: WIRE_TRUNCATED under 20 bytes; WIRE_BAD_LENGTH for a data offset
 * under 5 words or past the end of `bytes` (or, for IPv4, a segment over
 * 65535 bytes); WIRE_BAD_CHECKSUM; WIRE_BAD_FIELD for a malformed option.
 * Every error's `what` is 'TCP'. The payload is a view into `bytes` (one
 * shared empty array when the segment carries none).
 *
 * Never throws for any `bytes`. A malformed `ip` (not two 4-byte or two
 * 16-byte addresses) is a programming error and throws RangeArgumentError,
 * as tcpChecksum does.
 */
export function parseTcp(bytes: Uint8Array, ip?: IpPair): Result<TcpSegment, WireError> {
  const b = bytes;
  const n = b.length;
  if (n < TCP_HEADER_BYTES) {
    return err(new WireError('WIRE_TRUNCATED', 'TCP', `TCP truncated: ${n} bytes, needs ${TCP_HEADER_BYTES}`));
  }
  const words = b[12]! >>> 4;
  const hdr = words * 4;
  if (words < 5) {
    return err(badLength(`TCP data offset: ${words} words (${hdr} bytes), needs at least 5 (${TCP_HEADER_BYTES} bytes)`));
  }
  if (hdr > n) {
    return err(badLength(`TCP data offset: ${words} words (${hdr} bytes), past the end of the ${n}-byte segment`));
  }
  if (ip !== undefined) {
    checkIp(ip);
    if (ip.src.length === 4 && n > 0xffff) {
      return err(badLength(`TCP segment of ${n} bytes does not fit an IPv4 packet (at most 65535 in the pseudo-header)`));
    }
    if (checksumOf(b, ip) !== 0) {
      const sent = get16(b, 16);
      const want = expectedChecksum(b, ip, sent);
      const message = `TCP checksum: ${hex16(sent)} on the wire, ${hex16(want)} computed`;
      return err(new WireError('WIRE_BAD_CHECKSUM', 'TCP', message));
    }
  }

  const options: TcpOptions = {};
  let p = TCP_HEADER_BYTES;
  while (p < hdr) {
    const kind = b[p]!;
    if (kind === OPT_EOL) break;
    if (kind === OPT_NOP) {
      p++;
      continue;
    }
    if (p + 1 >= hdr) {
      const at = `TCP option ${optionName(kind)} at byte ${p}`;
      return err(badOption(`${at}: no length byte before the end of the ${hdr}-byte header`));
    }
    const len = b[p + 1]!;
    if (len < 2) {
      return err(badOption(`TCP option ${optionName(kind)} at byte ${p}: length ${len}, needs at least 2`));
    }
    if (p + len > hdr) {
      const at = `TCP option ${optionName(kind)} at byte ${p}`;
      return err(badOption(`${at}: length ${len} runs past the end of the ${hdr}-byte header`));
    }
    switch (kind) {
      case OPT_MSS:
        if (len !== 4) return err(wrongLength(kind, p, len, '4'));
        options.mss = get16(b, p + 2);
        break;
      case OPT_WS:
        if (len !== 3) return err(wrongLength(kind, p, len, '3'));
        options.windowScale = b[p + 2]!;
        break;
      case OPT_SACK_PERMITTED:
        if (len !== 2) return err(wrongLength(kind, p, len, '2'));
        options.sackPermitted = true;
        break;
      case OPT_SACK: {
        const count = (len - 2) / 8;
        if (!Number.isInteger(count) || count < 1 || count > MAX_SACK_BLOCKS) {
          return err(wrongLength(kind, p, len, '2 + 8 per block, 1-4 blocks (10, 18, 26 or 34)'));
        }
        const sack: SackBlock[] = new Array(count);
        for (let i = 0, q = p + 2; i < count; i++, q += 8) sack[i] = { left: get32(b, q), right: get32(b, q + 4) };
        options.sack = sack;
        break;
      }
      case OPT_TS:
        if (len !== 10) return err(wrongLength(kind, p, len, '10'));
        options.timestamp = { value: get32(b, p + 2), echo: get32(b, p + 6) };
        break;
      default:
        // RFC 9293 3.1: a TCP must ignore an option it does not implement,
        // and the length byte is there so it can.
        break;
    }
    p += len;
  }

  return ok({
    srcPort: get16(b, 0),
    dstPort: get16(b, 2),
    seq: get32(b, 4),
    ack: get32(b, 8),
    flags: b[13]!,
    window: get16(b, 14),
    urgent: get16(b, 18),
    options,
    // A segment with no data (most ACKs) shares one empty array: nothing can be read or written through it.
    payload: hdr === n ? NO_PAYLOAD : b.subarray(hdr),
  });
}

/** What the checksum field should have held: take the sent value out of the sum (one's complement subtraction). */
function expectedChecksum(b: Uint8Array, ip: IpPair, sent: number): number {
  const total = ~checksumOf(b, ip) & 0xffff;
  return ~fold(total + (~sent & 0xffff)) & 0xffff;
}

function badLength(message: string): WireError {
  return new WireError('WIRE_BAD_LENGTH', 'TCP', message);
}

function badOption(message: string): WireError {
  return new WireError('WIRE_BAD_FIELD', 'TCP', message);
}

function wrongLength(kind: number, at: number, len: number, needs: string): WireError {
  return badOption(`TCP option ${optionName(kind)} at byte ${at}: length ${len}, needs ${needs}`);
}

function optionName(kind: number): string {
  switch (kind) {
    case OPT_MSS:
      return 'MSS (kind 2)';
    case OPT_WS:
      return 'window scale (kind 3)';
    case OPT_SACK_PERMITTED:
      return 'SACK-permitted (kind 4)';
    case OPT_SACK:
      return 'SACK (kind 5)';
    case OPT_TS:
      return 'timestamps (kind 8)';
    default:
      return `kind ${kind}`;
  }
}

// ---------------------------------------------------------------------------
// Addresses and display

/** The 4 bytes of IPv4 address a.b.c.d. Throws RangeArgumentError for a part outside 0-255. */
export function ipv4(a: number, b: number, c: number, d: number): Uint8Array {
  u8('ipv4[0]', a);
  u8('ipv4[1]', b);
  u8('ipv4[2]', c);
  u8('ipv4[3]', d);
  return Uint8Array.of(a, b, c, d);
}

const FLAG_LETTERS: ReadonlyArray<readonly [number, string]> = [
  [TCP_FIN, 'F'],
  [TCP_SYN, 'S'],
  [TCP_RST, 'R'],
  [TCP_PSH, 'P'],
  [TCP_ACK, '.'],
  [TCP_URG, 'U'],
  [TCP_ECE, 'E'],
  [TCP_CWR, 'W'],
];

/**
 * One line in the style of `tcpdump -S` (absolute sequence numbers), for
 * logs and test failures:
 *
 *   1000 > 80 [S.] seq 1 ack 2 win 65535 <mss 1460,nop,ws 7,sackOK,TS 1 0> len 0
 *
 * Flags are tcpdump's letters in its order (F S R P . U E W, `.` for ACK,
 * `none` for no flag). `ack` shows only with ACK and `urg` only with URG, as
 * in tcpdump. The options show as encodeTcp lays them out, NOPs included,
 * SACK as `sack 2 {left:right}{left:right}`. Never throws for a parsed segment.
 */
export function formatSegment(seg: TcpSegment): string {
  let flags = '';
  for (const [bit, letter] of FLAG_LETTERS) if (seg.flags & bit) flags += letter;
  let line = `${seg.srcPort} > ${seg.dstPort} [${flags === '' ? 'none' : flags}] seq ${seg.seq}`;
  if (seg.flags & TCP_ACK) line += ` ack ${seg.ack}`;
  line += ` win ${seg.window}`;
  if (seg.flags & TCP_URG) line += ` urg ${seg.urgent}`;
  const opts = describeOptions(seg.options);
  if (opts !== '') line += ` <${opts}>`;
  return `${line} len ${seg.payload.length}`;
}

/** The options as formatSegment shows them, in encodeTcp's layout; '' for none. */
function describeOptions(o: TcpOptions): string {
  const parts: string[] = [];
  if (o.mss !== undefined) parts.push(`mss ${o.mss}`);
  if (o.windowScale !== undefined) parts.push('nop', `ws ${o.windowScale}`);
  const ts = o.timestamp;
  if (ts !== undefined) {
    if (o.sackPermitted === true) parts.push('sackOK');
    else parts.push('nop', 'nop');
    parts.push(`TS ${ts.value} ${ts.echo}`);
  } else if (o.sackPermitted === true) {
    parts.push('nop', 'nop', 'sackOK');
  }
  const sack = o.sack;
  if (sack !== undefined && sack.length > 0) {
    parts.push('nop', 'nop', `sack ${sack.length} ${sack.map((s) => `{${s.left}:${s.right}}`).join('')}`);
  }
  return parts.join(',');
}

// ---------------------------------------------------------------------------
// Helpers

function hex16(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}

function checkIp(ip: IpPair): void {
  const src: unknown = ip?.src;
  const dst: unknown = ip?.dst;
  const pair = src instanceof Uint8Array && dst instanceof Uint8Array && src.length === dst.length;
  if (!pair || (src.length !== 4 && src.length !== 16)) refuseIp(src, dst);
}

/** `checkIp`'s error, out of line (it runs for every segment encoded or parsed). */
function refuseIp(src: unknown, dst: unknown): never {
  const len = (a: unknown) => (a instanceof Uint8Array ? `${a.length} bytes` : typeof a);
  const expected = 'src and dst of 4 bytes each (IPv4) or 16 bytes each (IPv6)';
  throw new RangeArgumentError('ip', `src ${len(src)}, dst ${len(dst)}`, expected);
}

function tooLongForIpv4(n: number): never {
  throw new RangeArgumentError('tcp.length', n, 'at most 65535 bytes of TCP segment over IPv4');
}
