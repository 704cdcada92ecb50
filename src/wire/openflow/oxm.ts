import { RangeArgumentError } from '../../core/errors.js';
import { isUint } from '../bytes.js';
import type { Masked, OfMatch } from './match.js';
import { fail, roundUp8, type Reader, type Writer } from './buffer.js';
import { OFPBAC, OFPBMC, OFPET, OFPMT_OXM, OFPXMC } from './constants.js';
import type { OfErrorAnswer } from './errors.js';
import type { OxmId } from './types.js';

/**
 * OfMatch <-> ofp_match with OXM TLVs (OpenFlow 1.3.5 section 7.2.3).
 *
 *   ofp_match:  type u16 (OFPMT_OXM = 1), length u16 (4 + the TLVs, without
 *               padding), the TLVs, then zeros to a multiple of 8
 *   OXM TLV:    class u16, field u7 | hasmask u1, length u8 (of the payload),
 *               value, then the mask if hasmask (same width as the value)
 *
 * Only the OPENFLOW_BASIC class fields of `OfMatch` are read. Anything else
 * (other classes, other basic fields, the deprecated STANDARD match type)
 * is refused with the ERROR the agent sends: OFPBMC_BAD_FIELD /
 * OFPBMC_BAD_TYPE. Also refused: a field twice (OFPBMC_DUP_FIELD), a mask
 * on a field that has none (OFPBMC_BAD_MASK), a payload of the wrong length
 * (OFPBMC_BAD_LEN), a value wider than its field (OFPBMC_BAD_VALUE; a mask,
 * OFPBMC_BAD_MASK), a value with bits set outside its mask
 * (OFPBMC_BAD_WILDCARDS), a missing prerequisite (OFPBMC_BAD_PREREQ;
 * presence only, the order of the TLVs is not checked).
 *
 * Encoding writes the fields in one canonical order, the one Open vSwitch
 * uses (prerequisites first): in_port, eth_src, eth_dst, eth_type,
 * vlan_vid, ipv4_src, ipv4_dst, ipv6_src, ipv6_dst, ipv6_flabel, ip_dscp,
 * ip_proto, tcp_src, tcp_dst, udp_src, udp_dst. So a match parsed from TLVs
 * in that order re-encodes to the same bytes; one in another order
 * re-encodes to the canonical order. A mask is written when the value has
 * one, even an all-ones mask (so it survives a round trip).
 * Prerequisites are checked when parsing, not when encoding.
 */

interface FieldSpec {
  key: keyof OfMatch;
  field: number;
  /** Width of the value (and of the mask). */
  bytes: number;
  maskable: boolean;
  /** Numbers: the largest value; byte strings: undefined. */
  max: number | undefined;
}

const spec = (key: keyof OfMatch, field: number, bytes: number, maskable: boolean, max?: number): FieldSpec => ({
  key,
  field,
  bytes,
  maskable,
  max,
});

/** The fields in canonical (encoding) order. */
export const OXM_FIELD_SPECS: readonly FieldSpec[] = Object.freeze([
  spec('inPort', 0, 4, false, 0xffffffff),
  spec('ethSrc', 4, 6, true),
  spec('ethDst', 3, 6, true),
  spec('ethType', 5, 2, false, 0xffff),
  spec('vlanVid', 6, 2, true, 0x1fff),
  spec('ipv4Src', 11, 4, true, 0xffffffff),
  spec('ipv4Dst', 12, 4, true, 0xffffffff),
  spec('ipv6Src', 26, 16, true),
  spec('ipv6Dst', 27, 16, true),
  spec('ipv6Flabel', 28, 4, true, 0xfffff),
  spec('ipDscp', 8, 1, false, 63),
  spec('ipProto', 10, 1, false, 0xff),
  spec('tcpSrc', 13, 2, false, 0xffff),
  spec('tcpDst', 14, 2, false, 0xffff),
  spec('udpSrc', 15, 2, false, 0xffff),
  spec('udpDst', 16, 2, false, 0xffff),
]);

const BY_FIELD = new Map<number, FieldSpec>(OXM_FIELD_SPECS.map((s) => [s.field, s]));
const BY_KEY = new Map<string, FieldSpec>(OXM_FIELD_SPECS.map((s) => [s.key, s]));

const MATCH_LEN: OfErrorAnswer = { type: OFPET.BAD_MATCH, code: OFPBMC.BAD_LEN };
const bm = (code: number): OfErrorAnswer => ({ type: OFPET.BAD_MATCH, code });

/** The 32-bit OXM header of a basic-class field of `OfMatch`. */
export function oxmHeader(key: keyof OfMatch, hasMask = false): number {
  const s = BY_KEY.get(key);
  if (s === undefined) throw new RangeArgumentError('key', key, 'an OfMatch field');
  return OFPXMC.OPENFLOW_BASIC * 0x10000 + ((s.field << 1) | (hasMask ? 1 : 0)) * 0x100 + s.bytes * (hasMask ? 2 : 1);
}

/** The OXM id (table-feature property entry) of a field of `OfMatch`. */
export function oxmIdOf(key: keyof OfMatch, hasMask = false): OxmId {
  const s = BY_KEY.get(key);
  if (s === undefined) throw new RangeArgumentError('key', key, 'an OfMatch field');
  return { oxmClass: OFPXMC.OPENFLOW_BASIC, field: s.field, hasMask, length: s.bytes * (hasMask ? 2 : 1) };
}

/** Whether an OfMatch field can carry a mask. */
export function isMaskable(key: keyof OfMatch): boolean {
  return BY_KEY.get(key)?.maskable ?? false;
}

// ---------------------------------------------------------------------------
// Encode

/** Writes ofp_match for `m`, padding included (a multiple of 8, at least 8). */
export function writeMatch(w: Writer, m: OfMatch, field: string): void {
  if (m === null || typeof m !== 'object') throw new RangeArgumentError(field, m, 'an OfMatch object');
  for (const k of Object.keys(m)) {
    if (!BY_KEY.has(k)) throw new RangeArgumentError(`${field}.${k}`, (m as Record<string, unknown>)[k], 'absent (not an OfMatch field)');
  }
  const start = w.length;
  w.u16(OFPMT_OXM, `${field}.type`);
  w.u16(0, `${field}.length`);
  for (const s of OXM_FIELD_SPECS) {
    const v = m[s.key];
    if (v === undefined) continue;
    writeTlv(w, s, v, `${field}.${s.key}`, true);
  }
  const len = w.length - start;
  w.set16(start + 2, len, `${field}.length`);
  w.padTo8(start);
}

type FieldValue = OfMatch[keyof OfMatch];

function writeTlv(w: Writer, s: FieldSpec, v: FieldValue, field: string, allowMask: boolean): void {
  let value: number | Uint8Array;
  let mask: number | Uint8Array | undefined;
  if (s.maskable) {
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array) {
      throw new RangeArgumentError(field, v, 'an object { value, mask? }');
    }
    const mv = v as Masked<number | Uint8Array>;
    value = mv.value;
    mask = mv.mask;
    if (mask !== undefined && !allowMask) throw new RangeArgumentError(`${field}.mask`, mask, 'absent (set-field takes an exact value)');
  } else {
    value = v as number;
  }
  checkValue(s, value, s.maskable ? `${field}.value` : field);
  if (mask !== undefined) {
    checkValue(s, mask, `${field}.mask`);
    if (!withinMask(value, mask)) {
      throw new RangeArgumentError(`${field}.value`, showValue(value), 'no bits set outside the mask');
    }
  }
  w.u16(OFPXMC.OPENFLOW_BASIC, `${field} class`);
  w.u8((s.field << 1) | (mask === undefined ? 0 : 1), `${field} field`);
  w.u8(s.bytes * (mask === undefined ? 1 : 2), `${field} length`);
  writeValue(w, s, value, field);
  if (mask !== undefined) writeValue(w, s, mask, field);
}

function checkValue(s: FieldSpec, v: number | Uint8Array, field: string): void {
  if (s.max === undefined) {
    if (!(v instanceof Uint8Array) || v.length !== s.bytes) {
      throw new RangeArgumentError(field, v instanceof Uint8Array ? `${v.length} bytes` : v, `a Uint8Array of ${s.bytes} bytes`);
    }
  } else if (typeof v !== 'number' || !isUint(v, s.max)) {
    throw new RangeArgumentError(field, v, `an integer in [0, ${s.max}]`);
  }
}

function writeValue(w: Writer, s: FieldSpec, v: number | Uint8Array, field: string): void {
  if (v instanceof Uint8Array) w.bytes(v, field);
  else if (s.bytes === 1) w.u8(v, field);
  else if (s.bytes === 2) w.u16(v, field);
  else w.u32(v, field);
}

function withinMask(value: number | Uint8Array, mask: number | Uint8Array): boolean {
  if (typeof value === 'number' && typeof mask === 'number') return (value & ~mask) >>> 0 === 0;
  if (value instanceof Uint8Array && mask instanceof Uint8Array) {
    for (let i = 0; i < value.length; i++) if ((value[i]! & ~mask[i]!) !== 0) return false;
    return true;
  }
  return false;
}

function showValue(v: number | Uint8Array): string | number {
  return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v;
}

// ---------------------------------------------------------------------------
// Parse

/** Reads one ofp_match, padding included, from `r` (whose length problems answer BAD_REQUEST / BAD_LEN). */
export function readMatch(r: Reader): OfMatch {
  r.need(4, 'the match header');
  const type = (r.b[r.pos]! << 8) | r.b[r.pos + 1]!;
  const length = (r.b[r.pos + 2]! << 8) | r.b[r.pos + 3]!;
  if (type !== OFPMT_OXM) {
    fail('OF_UNSUPPORTED', 'match', `match type: ${type}, only OFPMT_OXM (1) is supported`, bm(OFPBMC.BAD_TYPE));
  }
  if (length < 4) fail('OF_BAD_LENGTH', 'match', `match length: ${length}, at least 4`, MATCH_LEN);
  const padded = roundUp8(length);
  if (padded > r.remaining) {
    fail('OF_BAD_LENGTH', 'match', `match length: ${length} (${padded} padded), only ${r.remaining} bytes left`, MATCH_LEN);
  }
  const mr = r.sub(padded, 'match', MATCH_LEN);
  mr.pos += 4;
  const body = mr.sub(length - 4, 'match', MATCH_LEN);
  const m: OfMatch = {};
  while (body.remaining > 0) readTlv(body, m);
  mr.pad(padded - length);
  const bad = prerequisiteProblem(m);
  if (bad !== undefined) fail('OF_BAD_PREREQ', 'match', bad, bm(OFPBMC.BAD_PREREQ));
  return m;
}

function readTlv(r: Reader, m: OfMatch): void {
  if (r.remaining < 4) fail('OF_BAD_LENGTH', 'match', `match: ${r.remaining} bytes left, an OXM header needs 4`, MATCH_LEN);
  const at = r.pos;
  const oxmClass = r.u16();
  const fh = r.u8();
  const len = r.u8();
  if (len > r.remaining) {
    fail('OF_BAD_LENGTH', 'match', `OXM at offset ${at}: payload length ${len}, only ${r.remaining} bytes left in the match`, MATCH_LEN);
  }
  const field = fh >> 1;
  const hasMask = (fh & 1) === 1;
  const s = oxmClass === OFPXMC.OPENFLOW_BASIC ? BY_FIELD.get(field) : undefined;
  if (s === undefined) {
    const name = oxmClass === OFPXMC.OPENFLOW_BASIC ? `OPENFLOW_BASIC field ${field}` : `class 0x${oxmClass.toString(16).padStart(4, '0')} field ${field}`;
    fail('OF_UNSUPPORTED', 'match', `OXM at offset ${at}: ${name} is not supported`, bm(OFPBMC.BAD_FIELD));
  }
  if (hasMask && !s.maskable) fail('OF_BAD_FIELD', 'match', `OXM ${s.key}: has a mask, the field takes none`, bm(OFPBMC.BAD_MASK));
  const want = s.bytes * (hasMask ? 2 : 1);
  if (len !== want) fail('OF_BAD_LENGTH', 'match', `OXM ${s.key}: payload length ${len}, needs ${want}`, MATCH_LEN);
  if (m[s.key] !== undefined) fail('OF_DUP_FIELD', 'match', `OXM ${s.key}: appears twice`, bm(OFPBMC.DUP_FIELD));
  const value = readValue(r, s);
  if (!fits(s, value)) fail('OF_BAD_FIELD', 'match', `OXM ${s.key}: value ${String(value)} wider than the field`, bm(OFPBMC.BAD_VALUE));
  if (!hasMask) {
    setField(m, s, s.maskable ? { value } : value);
    return;
  }
  const mask = readValue(r, s);
  if (!fits(s, mask)) fail('OF_BAD_FIELD', 'match', `OXM ${s.key}: mask ${String(mask)} wider than the field`, bm(OFPBMC.BAD_MASK));
  if (!withinMask(value, mask)) {
    fail('OF_BAD_FIELD', 'match', `OXM ${s.key}: value has bits set outside its mask`, bm(OFPBMC.BAD_WILDCARDS));
  }
  setField(m, s, { value, mask });
}

function readValue(r: Reader, s: FieldSpec): number | Uint8Array {
  if (s.max === undefined) return r.copy(s.bytes);
  return s.bytes === 1 ? r.u8() : s.bytes === 2 ? r.u16() : r.u32();
}

function fits(s: FieldSpec, v: number | Uint8Array): boolean {
  return s.max === undefined || (typeof v === 'number' && v <= s.max);
}

function setField(m: OfMatch, s: FieldSpec, v: unknown): void {
  (m as Record<string, unknown>)[s.key] = v;
}

/** Why `m` lacks a prerequisite (OpenFlow 1.3.5 table 12), or undefined when it has them all. */
export function prerequisiteProblem(m: OfMatch): string | undefined {
  const ip = m.ethType === 0x0800 || m.ethType === 0x86dd;
  if ((m.ipDscp !== undefined || m.ipProto !== undefined) && !ip) {
    return `${m.ipDscp !== undefined ? 'ipDscp' : 'ipProto'} needs ethType 0x0800 or 0x86dd`;
  }
  if ((m.ipv4Src !== undefined || m.ipv4Dst !== undefined) && m.ethType !== 0x0800) return 'ipv4Src/ipv4Dst need ethType 0x0800';
  if ((m.ipv6Src !== undefined || m.ipv6Dst !== undefined || m.ipv6Flabel !== undefined) && m.ethType !== 0x86dd) {
    return 'ipv6Src/ipv6Dst/ipv6Flabel need ethType 0x86dd';
  }
  if ((m.tcpSrc !== undefined || m.tcpDst !== undefined) && m.ipProto !== 6) return 'tcpSrc/tcpDst need ipProto 6';
  if ((m.udpSrc !== undefined || m.udpDst !== undefined) && m.ipProto !== 17) return 'udpSrc/udpDst need ipProto 17';
  return undefined;
}

// ---------------------------------------------------------------------------
// Set-field (OFPAT_SET_FIELD carries one exact OXM TLV)

const ba = (code: number): OfErrorAnswer => ({ type: OFPET.BAD_ACTION, code });

/** Writes the single OXM TLV of a set-field action for `field` (one key, exact; no padding). */
export function writeSetFieldTlv(w: Writer, field: OfMatch, name: string): void {
  if (field === null || typeof field !== 'object') throw new RangeArgumentError(name, field, 'an OfMatch with one field');
  const keys = Object.keys(field).filter((k) => (field as Record<string, unknown>)[k] !== undefined);
  const k = keys[0];
  const s = k === undefined ? undefined : BY_KEY.get(k);
  if (keys.length !== 1 || s === undefined) throw new RangeArgumentError(name, keys, 'exactly one OfMatch field');
  writeTlv(w, s, field[s.key], `${name}.${s.key}`, false);
}

/** Reads the OXM TLV of a set-field action from `r` (the action's bytes after its header), padding included. */
export function readSetFieldTlv(r: Reader): OfMatch {
  if (r.remaining < 4) fail('OF_BAD_LENGTH', 'action', `set-field: ${r.remaining} bytes, an OXM header needs 4`, ba(OFPBAC.BAD_SET_LEN));
  const oxmClass = r.u16();
  const fh = r.u8();
  const len = r.u8();
  // The action is 4 + 4 + len bytes rounded up to 8.
  if (roundUp8(8 + len) !== r.remaining + 8) {
    fail('OF_BAD_LENGTH', 'action', `set-field: OXM payload ${len} bytes does not fill the action (${r.remaining + 8} bytes)`, ba(OFPBAC.BAD_SET_LEN));
  }
  const s = oxmClass === OFPXMC.OPENFLOW_BASIC ? BY_FIELD.get(fh >> 1) : undefined;
  if (s === undefined) {
    fail('OF_UNSUPPORTED', 'action', `set-field: class 0x${oxmClass.toString(16)} field ${fh >> 1} is not supported`, ba(OFPBAC.BAD_SET_TYPE));
  }
  if (fh & 1) fail('OF_BAD_FIELD', 'action', `set-field ${s.key}: has a mask`, ba(OFPBAC.BAD_SET_ARGUMENT));
  if (len !== s.bytes) fail('OF_BAD_LENGTH', 'action', `set-field ${s.key}: payload length ${len}, needs ${s.bytes}`, ba(OFPBAC.BAD_SET_LEN));
  const value = readValue(r, s);
  if (!fits(s, value)) fail('OF_BAD_FIELD', 'action', `set-field ${s.key}: value wider than the field`, ba(OFPBAC.BAD_SET_ARGUMENT));
  r.pad(r.remaining, ba(OFPBAC.BAD_ARGUMENT));
  const m: OfMatch = {};
  setField(m, s, s.maskable ? { value } : value);
  return m;
}

// ---------------------------------------------------------------------------
// OXM ids (table features)

export function writeOxmId(w: Writer, id: OxmId, field: string): void {
  if (id === null || typeof id !== 'object') throw new RangeArgumentError(field, id, 'an OxmId');
  w.u16(id.oxmClass, `${field}.oxmClass`);
  if (!isUint(id.field, 0x7f)) throw new RangeArgumentError(`${field}.field`, id.field, 'an integer in [0, 127]');
  w.u8((id.field << 1) | (id.hasMask ? 1 : 0), `${field}.field`);
  w.u8(id.length, `${field}.length`);
  if (id.oxmClass === OFPXMC.EXPERIMENTER) {
    if (id.experimenter === undefined) throw new RangeArgumentError(`${field}.experimenter`, undefined, 'an experimenter id (class 0xffff)');
    w.u32(id.experimenter, `${field}.experimenter`);
  } else if (id.experimenter !== undefined) {
    throw new RangeArgumentError(`${field}.experimenter`, id.experimenter, 'absent unless oxmClass is 0xffff');
  }
}

export function readOxmId(r: Reader): OxmId {
  const oxmClass = r.u16();
  const fh = r.u8();
  const length = r.u8();
  const id: OxmId = { oxmClass, field: fh >> 1, hasMask: (fh & 1) === 1, length };
  if (oxmClass === OFPXMC.EXPERIMENTER) id.experimenter = r.u32();
  return id;
}
