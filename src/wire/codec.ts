import { CogmeshError, RangeArgumentError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { allocBytes, withFront, get16, get32, isUint, put16, put32, u16, u32, u8 } from './bytes.js';
import {
  MAX_PATH_COST,
  type ControlMsg,
  type DataHeader,
  type DataProto,
  type AnnouncedPrefix,
  type Hello,
  type PrefixAnnouncement,
  type HelloNeighbour,
  type HelloWorkload,
  type Rerr,
  type Rrep,
  type Rreq,
} from './mesh.js';

/**
 * Bytes of the mesh messages in `mesh.ts`, and back. Big-endian (network
 * order), no padding, no length fields: every length follows from the type
 * and, for RERR and HELLO, an entry count. docs/wire.md has the same tables.
 *
 * Every packet starts with the same two bytes:
 *
 *   0  type     u8   1 RREQ, 2 RREP, 3 RERR, 0x10 HELLO, 0x11 PREFIX, 0x20 DATA
 *   1  version  u8   WIRE_VERSION (1); any other value is WIRE_BAD_VERSION
 *
 * RREQ (type 1), 27 bytes. RFC 3561 5.1 order, 16-bit addresses, then the
 * AOMDV/cost fields.
 *
 *   2  flags     u8   J 0x80, R 0x40, G 0x20, D 0x10, U 0x08; 0x07 reserved
 *   3  hopCount  u8
 *   4  rreqId    u32
 *   8  dst       u16
 *  10  dstSeq    u32
 *  14  orig      u16
 *  16  origSeq   u32
 *  20  ttl       u8
 *  21  firstHop  u16
 *  23  pathCost  u32  thousandths, rounded to nearest
 *
 * RREP (type 2), 22 bytes. RFC 3561 5.2 order (no prefix size: addresses
 * are node ids, not subnets).
 *
 *   2  flags      u8   R 0x80, A 0x40; 0x3f reserved
 *   3  hopCount   u8
 *   4  dst        u16
 *   6  dstSeq     u32
 *  10  orig       u16
 *  12  lifetimeMs u32
 *  16  lastHop    u16
 *  18  pathCost   u32  thousandths, rounded to nearest
 *
 * RERR (type 3), 4 + 6 per destination (10 to 1534 bytes). RFC 3561 5.3.
 *
 *   2  flags      u8   N 0x80; 0x7f reserved
 *   3  destCount  u8   1-255; 0 is WIRE_BAD_LENGTH
 *   4  destCount x { dst u16, dstSeq u32 }
 *
 * HELLO (type 0x10), 11 + 7 per workload entry + 3 per neighbour (11 to 2561 bytes).
 *
 *   2  src        u16
 *   4  seq        u32
 *   8  r1Channel  u8   0 = R1 has no channel yet
 *   9  count      u8   0-255
 *  10  count x { channel u8 (1-255), w u16 (round(w * 65535)), windows u32 }
 *   n  ncount     u8   0-255 (n = 10 + 7 * count)
 * n+1  ncount x { addr u16, r1Channel u8 (1-255) }
 *
 * PREFIX (type 0x11), 13 + per prefix 2 + 4 (IPv4) or 2 + 16 (IPv6) bytes.
 *
 *   2  orig       u16
 *   4  seq        u32
 *   8  hopCount   u8
 *   9  ttl        u8
 *  10  lifetimeS  u16
 *  12  count      u8   0-255
 *  13  count x { version u8 (4 or 6), length u8 (0-32 or 0-128), address (4 or 16 bytes, host bits zero) }
 *
 * DATA (type 0x20), DATA_HEADER_BYTES = 14, then the payload to the end of
 * the packet (so a data packet has no trailing-bytes check).
 *
 *   2  ttl    u8
 *   3  proto  u8   17 udp, 6 tcp, 0 raw, 4 ip4, 41 ip6; any other is WIRE_BAD_FIELD
 *   4  src    u16
 *   6  dst    u16
 *   8  flow   u16
 *  10  seq    u32
 *
 * DATA with a flow label (type 0x21), DATA_LABELLED_HEADER_BYTES = 17: the
 * DATA header, then
 *
 *  14  label  u24  high 4 bits reserved (zero); low 20 bits the IPv6 flow
 *                  label (the QoS tag of seeds/002), 1-0xfffff
 *
 * An unlabelled packet (label absent or 0) is always sent as type 0x20, so a
 * type 0x21 packet with label 0 is WIRE_BAD_FIELD.
 *
 * Reserved flag bits are sent as zero and a packet with any set is refused
 * (WIRE_BAD_FIELD): with the version byte there to mark a new layout, this
 * keeps parsing the exact inverse of encoding (an accepted packet re-encodes
 * to the same bytes). Parsers check, in order: the type, the version, the
 * fixed length, the count, the full length, the field values, then trailing
 * bytes; so any proper prefix of a valid packet is WIRE_TRUNCATED.
 */

export const WIRE_VERSION = 1;

export const TYPE_RREQ = 1;
export const TYPE_RREP = 2;
export const TYPE_RERR = 3;
export const TYPE_HELLO = 0x10;
export const TYPE_PREFIX = 0x11;
export const TYPE_DATA = 0x20;
export const TYPE_DATA_LABELLED = 0x21;

export const RREQ_BYTES = 27;
export const RREP_BYTES = 22;
export const RERR_FIXED_BYTES = 4;
export const RERR_ENTRY_BYTES = 6;
export const HELLO_FIXED_BYTES = 11;
export const HELLO_ENTRY_BYTES = 7;
export const HELLO_NEIGHBOUR_BYTES = 3;
/** Where a HELLO's workload entries start (the neighbour count follows them). */
const HELLO_ENTRIES_AT = 10;
export const PREFIX_FIXED_BYTES = 13;
export const DATA_HEADER_BYTES = 14;
export const DATA_LABELLED_HEADER_BYTES = 17;
/** The largest IPv6 flow label (20 bits). */
export const MAX_FLOW_LABEL = 0xfffff;

/** Most destinations one RERR carries, and most workload entries one HELLO carries. */
export const MAX_ENTRIES = 255;

export type WireErrorCode =
  'WIRE_TRUNCATED' | 'WIRE_UNKNOWN_TYPE' | 'WIRE_BAD_VERSION' | 'WIRE_BAD_LENGTH' | 'WIRE_BAD_FIELD' | 'WIRE_TRAILING_BYTES' | 'WIRE_BAD_CHECKSUM';

/** Bytes that are not a packet this stack accepts; `what` is the message kind ('RREQ', ..., or 'packet'). */
export class WireError extends CogmeshError {
  declare readonly code: WireErrorCode;

  constructor(
    code: WireErrorCode,
    readonly what: string,
    message: string,
  ) {
    super(code, message);
  }
}

// ---------------------------------------------------------------------------
// Packet kind

/** Whether a packet is control (R3) or data, from its first byte only; undefined for an unknown type or no bytes. */
export function packetKind(b: Uint8Array): 'control' | 'data' | undefined {
  switch (b[0]) {
    case TYPE_RREQ:
    case TYPE_RREP:
    case TYPE_RERR:
    case TYPE_HELLO:
    case TYPE_PREFIX:
      return 'control';
    case TYPE_DATA:
    case TYPE_DATA_LABELLED:
      return 'data';
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Control messages: encode

/** Bytes `m` takes on the wire. Throws RangeArgumentError when `m` cannot be encoded. */
export function controlLength(m: ControlMsg): number {
  switch (m.type) {
    case 'rreq':
      return RREQ_BYTES;
    case 'rrep':
      return RREP_BYTES;
    case 'rerr':
      checkCount('rerr.unreachable.length', m.unreachable, 1);
      return RERR_FIXED_BYTES + RERR_ENTRY_BYTES * m.unreachable.length;
    case 'hello':
      checkCount('hello.workload.length', m.workload, 0);
      checkCount('hello.neighbours.length', m.neighbours, 0);
      return HELLO_FIXED_BYTES + HELLO_ENTRY_BYTES * m.workload.length + HELLO_NEIGHBOUR_BYTES * m.neighbours.length;
    case 'prefix':
      checkCount('prefix.prefixes.length', m.prefixes, 0);
      return m.prefixes.reduce((n, p) => n + 2 + (p.version === 6 ? 16 : 4), PREFIX_FIXED_BYTES);
    default:
      return badType(m);
  }
}

/** `m` as a new packet. Throws RangeArgumentError naming the field that is out of range. */
export function encodeControl(m: ControlMsg): Uint8Array {
  const out = allocBytes(controlLength(m));
  emitControl(m, out, 0);
  return out;
}

/**
 * Writes `m` into `out` at `offset` and returns the bytes written. Every
 * field is checked before the first byte is written, so a refused message
 * leaves `out` as it was.
 */
export function emitControl(m: ControlMsg, out: Uint8Array, offset = 0): number {
  const n = controlLength(m);
  checkRoom(out, offset, n);
  switch (m.type) {
    case 'rreq':
      checkRreq(m);
      writeRreq(m, out, offset);
      break;
    case 'rrep':
      checkRrep(m);
      writeRrep(m, out, offset);
      break;
    case 'rerr':
      checkRerr(m);
      writeRerr(m, out, offset);
      break;
    case 'hello':
      checkHello(m);
      writeHello(m, out, offset);
      break;
    case 'prefix':
      checkPrefix(m);
      writePrefix(m, out, offset);
      break;
    default:
      return badType(m);
  }
  return n;
}

function checkRreq(m: Rreq): void {
  u8('rreq.hopCount', m.hopCount);
  u32('rreq.rreqId', m.rreqId);
  u16('rreq.dst', m.dst);
  u32('rreq.dstSeq', m.dstSeq);
  u16('rreq.orig', m.orig);
  u32('rreq.origSeq', m.origSeq);
  u8('rreq.ttl', m.ttl);
  u16('rreq.firstHop', m.firstHop);
  pathCost('rreq.pathCost', m.pathCost);
}

function writeRreq(m: Rreq, b: Uint8Array, o: number): void {
  b[o] = TYPE_RREQ;
  b[o + 1] = WIRE_VERSION;
  b[o + 2] = (m.join ? 0x80 : 0) | (m.repair ? 0x40 : 0) | (m.gratuitous ? 0x20 : 0) | (m.destinationOnly ? 0x10 : 0) | (m.unknownSeq ? 0x08 : 0);
  b[o + 3] = m.hopCount;
  put32(b, o + 4, m.rreqId);
  put16(b, o + 8, m.dst);
  put32(b, o + 10, m.dstSeq);
  put16(b, o + 14, m.orig);
  put32(b, o + 16, m.origSeq);
  b[o + 20] = m.ttl;
  put16(b, o + 21, m.firstHop);
  put32(b, o + 23, costToWire(m.pathCost));
}

function checkRrep(m: Rrep): void {
  u8('rrep.hopCount', m.hopCount);
  u16('rrep.dst', m.dst);
  u32('rrep.dstSeq', m.dstSeq);
  u16('rrep.orig', m.orig);
  u32('rrep.lifetimeMs', m.lifetimeMs);
  u16('rrep.lastHop', m.lastHop);
  pathCost('rrep.pathCost', m.pathCost);
}

function writeRrep(m: Rrep, b: Uint8Array, o: number): void {
  b[o] = TYPE_RREP;
  b[o + 1] = WIRE_VERSION;
  b[o + 2] = (m.repair ? 0x80 : 0) | (m.ackRequired ? 0x40 : 0);
  b[o + 3] = m.hopCount;
  put16(b, o + 4, m.dst);
  put32(b, o + 6, m.dstSeq);
  put16(b, o + 10, m.orig);
  put32(b, o + 12, m.lifetimeMs);
  put16(b, o + 16, m.lastHop);
  put32(b, o + 18, costToWire(m.pathCost));
}

function checkRerr(m: Rerr): void {
  const list = m.unreachable;
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (e === undefined || typeof e !== 'object') {
      throw new RangeArgumentError(`rerr.unreachable[${i}]`, e, 'an object { dst, dstSeq }');
    }
    if (!isUint(e.dst, 0xffff)) u16(`rerr.unreachable[${i}].dst`, e.dst);
    if (!isUint(e.dstSeq, 0xffffffff)) u32(`rerr.unreachable[${i}].dstSeq`, e.dstSeq);
  }
}

function writeRerr(m: Rerr, b: Uint8Array, o: number): void {
  const list = m.unreachable;
  b[o] = TYPE_RERR;
  b[o + 1] = WIRE_VERSION;
  b[o + 2] = m.noDelete ? 0x80 : 0;
  b[o + 3] = list.length;
  let p = o + RERR_FIXED_BYTES;
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    put16(b, p, e.dst);
    put32(b, p + 2, e.dstSeq);
    p += RERR_ENTRY_BYTES;
  }
}

function checkHello(m: Hello): void {
  u16('hello.src', m.src);
  u32('hello.seq', m.seq);
  u8('hello.r1Channel', m.r1Channel);
  const list = m.workload;
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (e === undefined || typeof e !== 'object') {
      throw new RangeArgumentError(`hello.workload[${i}]`, e, 'an object { channel, w, windows }');
    }
    if (!isUint(e.channel, 0xff) || e.channel === 0) {
      throw new RangeArgumentError(`hello.workload[${i}].channel`, e.channel, 'an integer in [1, 255]');
    }
    if (!(e.w >= 0 && e.w <= 1)) {
      throw new RangeArgumentError(`hello.workload[${i}].w`, e.w, 'a number in [0, 1]');
    }
    if (!isUint(e.windows, 0xffffffff)) u32(`hello.workload[${i}].windows`, e.windows);
  }
  m.neighbours.forEach((nb, i) => {
    if (nb === undefined || typeof nb !== 'object') {
      throw new RangeArgumentError(`hello.neighbours[${i}]`, nb, 'an object { addr, r1Channel }');
    }
    u16(`hello.neighbours[${i}].addr`, nb.addr);
    if (!isUint(nb.r1Channel, 0xff) || nb.r1Channel === 0) {
      throw new RangeArgumentError(`hello.neighbours[${i}].r1Channel`, nb.r1Channel, 'an integer in [1, 255]');
    }
  });
}

function writeHello(m: Hello, b: Uint8Array, o: number): void {
  const list = m.workload;
  b[o] = TYPE_HELLO;
  b[o + 1] = WIRE_VERSION;
  put16(b, o + 2, m.src);
  put32(b, o + 4, m.seq);
  b[o + 8] = m.r1Channel;
  b[o + 9] = list.length;
  let p = o + HELLO_ENTRIES_AT;
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    b[p] = e.channel;
    put16(b, p + 1, Math.round(e.w * 0xffff));
    put32(b, p + 3, e.windows);
    p += HELLO_ENTRY_BYTES;
  }
  b[p++] = m.neighbours.length;
  for (const nb of m.neighbours) {
    put16(b, p, nb.addr);
    b[p + 2] = nb.r1Channel;
    p += HELLO_NEIGHBOUR_BYTES;
  }
}

function checkPrefix(m: PrefixAnnouncement): void {
  u16('prefix.orig', m.orig);
  u32('prefix.seq', m.seq);
  u8('prefix.hopCount', m.hopCount);
  u8('prefix.ttl', m.ttl);
  u16('prefix.lifetimeS', m.lifetimeS);
  m.prefixes.forEach((p, i) => {
    if (p === undefined || typeof p !== 'object' || (p.version !== 4 && p.version !== 6)) {
      throw new RangeArgumentError(`prefix.prefixes[${i}]`, p, 'an object { version: 4 | 6, bytes, length }');
    }
    const size = p.version === 6 ? 16 : 4;
    if (!(p.bytes instanceof Uint8Array) || p.bytes.length !== size) {
      throw new RangeArgumentError(`prefix.prefixes[${i}].bytes`, p.bytes, `${size} bytes (IPv${p.version})`);
    }
    if (!isUint(p.length, size * 8)) throw new RangeArgumentError(`prefix.prefixes[${i}].length`, p.length, `an integer in [0, ${size * 8}]`);
    if (hostBits(p)) throw new RangeArgumentError(`prefix.prefixes[${i}].bytes`, p.bytes, `an address with no bits set beyond its /${p.length}`);
  });
}

/** Whether a prefix has bits set beyond its length. */
function hostBits(p: AnnouncedPrefix): boolean {
  for (let i = 0; i < p.bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, p.length - 8 * i));
    if (p.bytes[i]! & (0xff >> keep)) return true;
  }
  return false;
}

function writePrefix(m: PrefixAnnouncement, b: Uint8Array, o: number): void {
  b[o] = TYPE_PREFIX;
  b[o + 1] = WIRE_VERSION;
  put16(b, o + 2, m.orig);
  put32(b, o + 4, m.seq);
  b[o + 8] = m.hopCount;
  b[o + 9] = m.ttl;
  put16(b, o + 10, m.lifetimeS);
  b[o + 12] = m.prefixes.length;
  let p = o + PREFIX_FIXED_BYTES;
  for (const e of m.prefixes) {
    b[p] = e.version;
    b[p + 1] = e.length;
    b.set(e.bytes, p + 2);
    p += 2 + e.bytes.length;
  }
}

// ---------------------------------------------------------------------------
// Control messages: parse

/** The control message in `b`, which must hold exactly one. Never throws. */
export function parseControl(b: Uint8Array): Result<ControlMsg, WireError> {
  if (b.length === 0) return err(truncated('packet', 0, 1));
  const t = b[0]!;
  switch (t) {
    case TYPE_RREQ:
      return parseRreq(b);
    case TYPE_RREP:
      return parseRrep(b);
    case TYPE_RERR:
      return parseRerr(b);
    case TYPE_HELLO:
      return parseHello(b);
    case TYPE_PREFIX:
      return parsePrefixAnnouncement(b);
    case TYPE_DATA:
    case TYPE_DATA_LABELLED:
      return err(new WireError('WIRE_UNKNOWN_TYPE', 'DATA', `DATA (type ${hex(t)}) is not a control message`));
    default:
      return err(unknownType(t));
  }
}

function parseRreq(b: Uint8Array): Result<Rreq, WireError> {
  const bad = checkHead(b, 'RREQ', RREQ_BYTES);
  if (bad) return err(bad);
  const flags = b[2]!;
  if (flags & 0x07) return err(reservedBits('RREQ', flags & 0x07));
  if (b.length > RREQ_BYTES) return err(trailing('RREQ', b.length, RREQ_BYTES));
  return ok({
    type: 'rreq',
    join: (flags & 0x80) !== 0,
    repair: (flags & 0x40) !== 0,
    gratuitous: (flags & 0x20) !== 0,
    destinationOnly: (flags & 0x10) !== 0,
    unknownSeq: (flags & 0x08) !== 0,
    hopCount: b[3]!,
    rreqId: get32(b, 4),
    dst: get16(b, 8),
    dstSeq: get32(b, 10),
    orig: get16(b, 14),
    origSeq: get32(b, 16),
    ttl: b[20]!,
    firstHop: get16(b, 21),
    pathCost: get32(b, 23) / 1000,
  });
}

function parseRrep(b: Uint8Array): Result<Rrep, WireError> {
  const bad = checkHead(b, 'RREP', RREP_BYTES);
  if (bad) return err(bad);
  const flags = b[2]!;
  if (flags & 0x3f) return err(reservedBits('RREP', flags & 0x3f));
  if (b.length > RREP_BYTES) return err(trailing('RREP', b.length, RREP_BYTES));
  return ok({
    type: 'rrep',
    repair: (flags & 0x80) !== 0,
    ackRequired: (flags & 0x40) !== 0,
    hopCount: b[3]!,
    dst: get16(b, 4),
    dstSeq: get32(b, 6),
    orig: get16(b, 10),
    lifetimeMs: get32(b, 12),
    lastHop: get16(b, 16),
    pathCost: get32(b, 18) / 1000,
  });
}

function parseRerr(b: Uint8Array): Result<Rerr, WireError> {
  const bad = checkHead(b, 'RERR', RERR_FIXED_BYTES);
  if (bad) return err(bad);
  const count = b[3]!;
  if (count === 0) {
    return err(new WireError('WIRE_BAD_LENGTH', 'RERR', 'RERR destCount: 0, needs 1-255 destinations'));
  }
  const need = RERR_FIXED_BYTES + RERR_ENTRY_BYTES * count;
  if (b.length < need) return err(truncated('RERR', b.length, need, `${count} destinations`));
  const flags = b[2]!;
  if (flags & 0x7f) return err(reservedBits('RERR', flags & 0x7f));
  if (b.length > need) return err(trailing('RERR', b.length, need));
  const unreachable: Rerr['unreachable'] = new Array(count);
  let p = RERR_FIXED_BYTES;
  for (let i = 0; i < count; i++) {
    unreachable[i] = { dst: get16(b, p), dstSeq: get32(b, p + 2) };
    p += RERR_ENTRY_BYTES;
  }
  return ok({ type: 'rerr', noDelete: (flags & 0x80) !== 0, unreachable });
}

/** Slots of the HELLO memo of parseControlShared, and the most bytes a slot keeps (a longer HELLO is parsed every time). */
const HELLO_MEMO_SLOTS = 256;
const HELLO_MEMO_SLOT_BYTES = 512;

/**
 * HELLOs parsed lately, by the sender's address: a broadcast HELLO reaches
 * every neighbour with the same bytes, and in the simulator each would parse
 * them again. A slot answers only for the same bytes, compared in full; what
 * it gives is frozen, since every receiver that reads it shares it.
 */
class HelloMemo {
  private readonly len = new Int32Array(HELLO_MEMO_SLOTS);
  private readonly bytes = new Uint8Array(HELLO_MEMO_SLOTS * HELLO_MEMO_SLOT_BYTES);
  private readonly parsed: Array<Result<ControlMsg, WireError> | undefined> = new Array<Result<ControlMsg, WireError> | undefined>(HELLO_MEMO_SLOTS).fill(
    undefined,
  );

  parse(b: Uint8Array): Result<ControlMsg, WireError> {
    const len = b.length;
    if (len < 4 || len > HELLO_MEMO_SLOT_BYTES) return parseHello(b);
    const slot = get16(b, 2) & (HELLO_MEMO_SLOTS - 1);
    const bytes = this.bytes;
    const at = slot * HELLO_MEMO_SLOT_BYTES;
    const known = this.parsed[slot];
    if (known !== undefined && this.len[slot] === len) {
      let i = 0;
      while (i < len && bytes[at + i] === b[i]) i++;
      if (i === len) return known;
    }
    const r = parseHello(b);
    if (r.ok) {
      const h = r.value;
      for (const w of h.workload) Object.freeze(w);
      for (const n of h.neighbours) Object.freeze(n);
      Object.freeze(h.workload);
      Object.freeze(h.neighbours);
      Object.freeze(h);
      Object.freeze(r);
      this.len[slot] = len;
      bytes.set(b, at);
      this.parsed[slot] = r;
    }
    return r;
  }
}

const helloMemo = new HelloMemo();

/**
 * parseControl for a receiver that only reads the message it gets: a HELLO
 * the same as one parsed lately (the same bytes) comes back as the same
 * frozen object, parsed once for all the neighbours that heard it.
 */
export function parseControlShared(b: Uint8Array): Result<ControlMsg, WireError> {
  return b.length > 0 && b[0] === TYPE_HELLO ? helloMemo.parse(b) : parseControl(b);
}

function parseHello(b: Uint8Array): Result<Hello, WireError> {
  const bad = checkHead(b, 'HELLO', HELLO_FIXED_BYTES);
  if (bad) return err(bad);
  const count = b[9]!;
  const base = HELLO_FIXED_BYTES + HELLO_ENTRY_BYTES * count;
  if (b.length < base) return err(truncated('HELLO', b.length, base, `${count} workload entries`));
  const ncount = b[base - 1]!;
  const need = base + HELLO_NEIGHBOUR_BYTES * ncount;
  if (b.length < need) return err(truncated('HELLO', b.length, need, `${count} workload entries and ${ncount} neighbours`));
  const workload: HelloWorkload[] = new Array(count);
  let p = HELLO_ENTRIES_AT;
  for (let i = 0; i < count; i++) {
    const channel = b[p]!;
    if (channel === 0) {
      return err(new WireError('WIRE_BAD_FIELD', 'HELLO', `HELLO workload[${i}].channel: 0, needs 1-255`));
    }
    workload[i] = { channel, w: get16(b, p + 1) / 0xffff, windows: get32(b, p + 3) };
    p += HELLO_ENTRY_BYTES;
  }
  const neighbours: HelloNeighbour[] = new Array(ncount);
  p = base;
  for (let i = 0; i < ncount; i++) {
    const r1Channel = b[p + 2]!;
    if (r1Channel === 0) {
      return err(new WireError('WIRE_BAD_FIELD', 'HELLO', `HELLO neighbours[${i}].r1Channel: 0, needs 1-255`));
    }
    neighbours[i] = { addr: get16(b, p), r1Channel };
    p += HELLO_NEIGHBOUR_BYTES;
  }
  if (b.length > need) return err(trailing('HELLO', b.length, need));
  return ok({ type: 'hello', src: get16(b, 2), seq: get32(b, 4), r1Channel: b[8]!, workload, neighbours });
}

function parsePrefixAnnouncement(b: Uint8Array): Result<PrefixAnnouncement, WireError> {
  const bad = checkHead(b, 'PREFIX', PREFIX_FIXED_BYTES);
  if (bad) return err(bad);
  const count = b[12]!;
  const prefixes: AnnouncedPrefix[] = new Array(count);
  let p = PREFIX_FIXED_BYTES;
  for (let i = 0; i < count; i++) {
    if (b.length < p + 2) return err(truncated('PREFIX', b.length, p + 2, `${count} prefixes`));
    const version = b[p]!;
    if (version !== 4 && version !== 6) return err(new WireError('WIRE_BAD_FIELD', 'PREFIX', `PREFIX prefixes[${i}].version: ${version}, needs 4 or 6`));
    const size = version === 6 ? 16 : 4;
    const length = b[p + 1]!;
    if (length > size * 8)
      return err(new WireError('WIRE_BAD_FIELD', 'PREFIX', `PREFIX prefixes[${i}].length: ${length}, needs 0-${size * 8} for IPv${version}`));
    if (b.length < p + 2 + size) return err(truncated('PREFIX', b.length, p + 2 + size, `${count} prefixes`));
    const e: AnnouncedPrefix = { version, bytes: b.slice(p + 2, p + 2 + size), length };
    if (hostBits(e)) return err(new WireError('WIRE_BAD_FIELD', 'PREFIX', `PREFIX prefixes[${i}]: host bits set beyond /${length}`));
    prefixes[i] = e;
    p += 2 + size;
  }
  if (b.length > p) return err(trailing('PREFIX', b.length, p));
  return ok({ type: 'prefix', orig: get16(b, 2), seq: get32(b, 4), hopCount: b[8]!, ttl: b[9]!, lifetimeS: get16(b, 10), prefixes });
}

// ---------------------------------------------------------------------------
// Data packets

const PROTO_NUMBER: Record<DataProto, number> = { udp: 17, tcp: 6, raw: 0, ip4: 4, ip6: 41 };

const PROTO_NAME: Array<DataProto | undefined> = [];
for (const [name, n] of Object.entries(PROTO_NUMBER)) PROTO_NAME[n] = name as DataProto;

/** The header's length on the wire: DATA_LABELLED_HEADER_BYTES with a flow label, else DATA_HEADER_BYTES. */
export function dataHeaderBytes(h: DataHeader): number {
  return h.label ? DATA_LABELLED_HEADER_BYTES : DATA_HEADER_BYTES;
}

/**
 * The header and the payload as one packet: new bytes with a copy of the
 * payload; or, when `room` says the payload has that many bytes of its own
 * in front of it (`allocBytes`) and the header fits there, the header
 * written there and the payload not copied. Throws RangeArgumentError naming
 * the field that is out of range, before anything is written.
 */
export function encodeData(h: DataHeader, payload: Uint8Array, room = 0): Uint8Array {
  const n = dataHeaderBytes(h);
  if (room >= n) {
    const out = withFront(payload, n);
    emitDataHeader(h, out, 0);
    return out;
  }
  const out = allocBytes(n + payload.length);
  emitDataHeader(h, out, 0);
  out.set(payload, n);
  return out;
}

/**
 * Writes the header of `h` into `out` at `offset` (the payload goes right
 * after) and returns its length, `dataHeaderBytes(h)`: type 0x20, or 0x21
 * with the flow label when `h.label` is set. Every field is checked before
 * the first byte is written.
 */
export function emitDataHeader(h: DataHeader, out: Uint8Array, offset = 0): number {
  u16('data.src', h.src);
  u16('data.dst', h.dst);
  u8('data.ttl', h.ttl);
  const proto = Object.hasOwn(PROTO_NUMBER, h.proto) ? PROTO_NUMBER[h.proto] : undefined;
  if (proto === undefined) throw new RangeArgumentError('data.proto', h.proto, "'udp', 'tcp', 'raw', 'ip4' or 'ip6'");
  u16('data.flow', h.flow);
  u32('data.seq', h.seq);
  const label = h.label ?? 0;
  if (!Number.isInteger(label) || label < 0 || label > MAX_FLOW_LABEL) {
    throw new RangeArgumentError('data.label', h.label, `an integer in 0-${MAX_FLOW_LABEL} (20 bits)`);
  }
  const n = dataHeaderBytes(h);
  checkRoom(out, offset, n);
  out[offset] = label ? TYPE_DATA_LABELLED : TYPE_DATA;
  out[offset + 1] = WIRE_VERSION;
  out[offset + 2] = h.ttl;
  out[offset + 3] = proto;
  put16(out, offset + 4, h.src);
  put16(out, offset + 6, h.dst);
  put16(out, offset + 8, h.flow);
  put32(out, offset + 10, h.seq);
  if (label) {
    out[offset + 14] = label >>> 16;
    put16(out, offset + 15, label & 0xffff);
  }
  return n;
}

/**
 * The header of the data packet in `b` and its payload: everything after the
 * header, as a view into `b` (no copy; it changes if `b` does). `label` is
 * present only for a labelled packet (type 0x21). Never throws.
 */
export function parseData(b: Uint8Array): Result<{ header: DataHeader; payload: Uint8Array }, WireError> {
  if (b.length === 0) return err(truncated('packet', 0, 1));
  const t = b[0]!;
  if (t !== TYPE_DATA && t !== TYPE_DATA_LABELLED) {
    const name = controlName(t);
    return err(name === undefined ? unknownType(t) : new WireError('WIRE_UNKNOWN_TYPE', name, `${name} (type ${hex(t)}) is not a data packet`));
  }
  const labelled = t === TYPE_DATA_LABELLED;
  const n = labelled ? DATA_LABELLED_HEADER_BYTES : DATA_HEADER_BYTES;
  const bad = checkHead(b, 'DATA', n);
  if (bad) return err(bad);
  const p = b[3]!;
  const proto = PROTO_NAME[p];
  if (proto === undefined) {
    return err(new WireError('WIRE_BAD_FIELD', 'DATA', `DATA proto: ${p}, needs 17 (udp), 6 (tcp), 0 (raw), 4 (ip4) or 41 (ip6)`));
  }
  const header: DataHeader = {
    src: get16(b, 4),
    dst: get16(b, 6),
    ttl: b[2]!,
    proto,
    flow: get16(b, 8),
    seq: get32(b, 10),
  };
  if (labelled) {
    if (b[14]! & 0xf0) return err(new WireError('WIRE_BAD_FIELD', 'DATA', `DATA label: reserved bits ${hex(b[14]! & 0xf0)} set`));
    const label = (b[14]! << 16) | get16(b, 15);
    if (label === 0) return err(new WireError('WIRE_BAD_FIELD', 'DATA', 'DATA label: 0 in a labelled packet (type 0x21); an unlabelled packet is type 0x20'));
    header.label = label;
  }
  return ok({ header, payload: b.subarray(n) });
}

// ---------------------------------------------------------------------------
// Helpers

/** The two bytes every packet starts with, then the fixed part's length. */
function checkHead(b: Uint8Array, what: string, fixed: number): WireError | undefined {
  if (b.length < 2) return truncated(what, b.length, fixed);
  const version = b[1]!;
  if (version !== WIRE_VERSION) {
    return new WireError('WIRE_BAD_VERSION', what, `${what} version: ${version}, this stack speaks version ${WIRE_VERSION}`);
  }
  if (b.length < fixed) return truncated(what, b.length, fixed);
  return undefined;
}

function truncated(what: string, have: number, need: number, why?: string): WireError {
  const tail = why === undefined ? '' : ` for ${why}`;
  return new WireError('WIRE_TRUNCATED', what, `${what} truncated: ${have} bytes, needs ${need}${tail}`);
}

function trailing(what: string, have: number, need: number): WireError {
  return new WireError('WIRE_TRAILING_BYTES', what, `${what} has ${have - need} trailing bytes: ${have} bytes, message ends at ${need}`);
}

function reservedBits(what: string, bits: number): WireError {
  return new WireError('WIRE_BAD_FIELD', what, `${what} flags: reserved bits ${hex(bits)} set, must be zero`);
}

function unknownType(t: number): WireError {
  return new WireError('WIRE_UNKNOWN_TYPE', 'packet', `packet type: ${hex(t)} is not a known message type`);
}

function controlName(t: number): string | undefined {
  switch (t) {
    case TYPE_RREQ:
      return 'RREQ';
    case TYPE_RREP:
      return 'RREP';
    case TYPE_RERR:
      return 'RERR';
    case TYPE_HELLO:
      return 'HELLO';
    case TYPE_PREFIX:
      return 'PREFIX';
    default:
      return undefined;
  }
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(2, '0')}`;
}

function pathCost(field: string, v: number): void {
  if (!(v >= 0 && v <= MAX_PATH_COST)) {
    throw new RangeArgumentError(field, v, `a number in [0, ${MAX_PATH_COST}]`);
  }
}

function costToWire(c: number): number {
  return Math.min(Math.round(c * 1000), 0xffffffff);
}

function checkCount(field: string, list: unknown, min: number): void {
  const n = Array.isArray(list) ? list.length : undefined;
  if (n === undefined || n < min || n > MAX_ENTRIES) {
    throw new RangeArgumentError(field, n, `an array of ${min} to ${MAX_ENTRIES} entries`);
  }
}

function checkRoom(out: Uint8Array, offset: number, n: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + n > out.length) {
    throw new RangeArgumentError('offset', offset, `room for ${n} bytes in a buffer of ${out.length}`);
  }
}

function badType(m: never): never {
  throw new RangeArgumentError('type', (m as { type?: unknown }).type, "'hello', 'rreq', 'rrep' or 'rerr'");
}
