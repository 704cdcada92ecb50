import { err, ok, type Result } from '../core/result.js';
import { badMatch, type OfError } from './errors.js';
import { OXM_FIELDS, type OfMatch, type PacketFields } from '../wire/openflow/match.js';

/**
 * Match structures as the flow table uses them (OpenFlow 1.3.5 sections
 * 7.2.3.5-7.2.3.8): a FLOW_MOD's or stats request's `OfMatch` is checked
 * and normalised once (`compileMatch`) into a `CompiledMatch`, against which
 * packets are matched and other matches compared (strict identity, loose
 * coverage, overlap).
 *
 * Normalisation follows 7.2.3.5: an all-ones mask is the same as no mask
 * (exact), an all-zeros mask the same as omitting the field. So two matches
 * that differ only that way are identical for strict commands, and the
 * match the table reports (stats, FLOW_REMOVED) is the normalised one.
 */

type Key = keyof OfMatch;

type Spec = { kind: 'num'; bits: number; maskable: boolean } | { kind: 'bytes'; length: number };

const SPECS: Readonly<Record<Key, Spec>> = Object.freeze({
  inPort: { kind: 'num', bits: 32, maskable: false },
  ethDst: { kind: 'bytes', length: 6 },
  ethSrc: { kind: 'bytes', length: 6 },
  ethType: { kind: 'num', bits: 16, maskable: false },
  vlanVid: { kind: 'num', bits: 13, maskable: true },
  ipDscp: { kind: 'num', bits: 6, maskable: false },
  ipProto: { kind: 'num', bits: 8, maskable: false },
  ipv4Src: { kind: 'num', bits: 32, maskable: true },
  ipv4Dst: { kind: 'num', bits: 32, maskable: true },
  tcpSrc: { kind: 'num', bits: 16, maskable: false },
  tcpDst: { kind: 'num', bits: 16, maskable: false },
  udpSrc: { kind: 'num', bits: 16, maskable: false },
  udpDst: { kind: 'num', bits: 16, maskable: false },
  ipv6Src: { kind: 'bytes', length: 16 },
  ipv6Dst: { kind: 'bytes', length: 16 },
  ipv6Flabel: { kind: 'num', bits: 20, maskable: true },
});

/** The match fields in OXM field order (the order of every iteration here, so results are deterministic). */
export const MATCH_FIELDS: readonly Key[] = Object.freeze((Object.keys(OXM_FIELDS) as Key[]).sort((a, b) => OXM_FIELDS[a] - OXM_FIELDS[b]));

export const ETH_TYPE_IPV4 = 0x0800;
export const ETH_TYPE_IPV6 = 0x86dd;
export const IP_PROTO_TCP = 6;
export const IP_PROTO_UDP = 17;

/** Prerequisites (7.2.3.8, table 12): the field named must be present, exact, with one of the values. */
const PREREQS: Readonly<Partial<Record<Key, { field: 'ethType' | 'ipProto'; values: readonly number[] }>>> = Object.freeze({
  ipDscp: { field: 'ethType', values: [ETH_TYPE_IPV4, ETH_TYPE_IPV6] },
  ipProto: { field: 'ethType', values: [ETH_TYPE_IPV4, ETH_TYPE_IPV6] },
  ipv4Src: { field: 'ethType', values: [ETH_TYPE_IPV4] },
  ipv4Dst: { field: 'ethType', values: [ETH_TYPE_IPV4] },
  tcpSrc: { field: 'ipProto', values: [IP_PROTO_TCP] },
  tcpDst: { field: 'ipProto', values: [IP_PROTO_TCP] },
  udpSrc: { field: 'ipProto', values: [IP_PROTO_UDP] },
  udpDst: { field: 'ipProto', values: [IP_PROTO_UDP] },
  ipv6Src: { field: 'ethType', values: [ETH_TYPE_IPV6] },
  ipv6Dst: { field: 'ethType', values: [ETH_TYPE_IPV6] },
  ipv6Flabel: { field: 'ethType', values: [ETH_TYPE_IPV6] },
});

/** One field's constraint after normalisation: numbers carry a mask (all ones when exact); byte strings a mask or none (exact). */
export type Constraint =
  { key: Key; kind: 'num'; value: number; mask: number; exact: boolean } | { key: Key; kind: 'bytes'; value: Uint8Array; mask: Uint8Array | undefined };

export interface CompiledMatch {
  /** The normalised match (fresh objects; masks only where they are neither all ones nor all zeros). */
  readonly match: OfMatch;
  /** The constraints in OXM field order; none: the match is empty (matches every packet). */
  readonly constraints: readonly Constraint[];
  readonly byKey: Readonly<Partial<Record<Key, Constraint>>>;
  /** A canonical text of the normalised match: equal keys, identical matches. */
  readonly key: string;
}

const fullMask = (bits: number): number => (bits === 32 ? 0xffff_ffff : 2 ** bits - 1);
const isUint = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/**
 * Checks and normalises a match. Refusals (OFPET_BAD_MATCH): a field cogmesh
 * does not know, BAD_FIELD; a value wider than its field or of the wrong
 * kind, BAD_VALUE; a byte string of the wrong length, BAD_LEN; a mask wider
 * than its field, BAD_MASK; a value with a 1-bit where its mask has a 0-bit,
 * BAD_WILDCARDS (7.2.3.5); a field without its prerequisite (7.2.3.6),
 * BAD_PREREQ.
 */
export function compileMatch(m: OfMatch): Result<CompiledMatch, OfError> {
  if (typeof m !== 'object' || m === null) return err(badMatch('BAD_TYPE', 'the match is not an object'));
  for (const k of Object.keys(m)) {
    if (!Object.hasOwn(SPECS, k)) return err(badMatch('BAD_FIELD', `field ${k} is not supported`));
  }
  const raw = m as Record<string, unknown>;
  const match: Record<string, unknown> = {};
  const constraints: Constraint[] = [];
  const byKey: Partial<Record<Key, Constraint>> = {};
  let key = '';
  for (const k of MATCH_FIELDS) {
    const r = raw[k];
    if (r === undefined) continue;
    const spec = SPECS[k];
    if (spec.kind === 'num') {
      const full = fullMask(spec.bits);
      let value: unknown = r;
      let mask: unknown;
      if (spec.maskable) {
        if (typeof r !== 'object' || r === null) return err(badMatch('BAD_VALUE', `${k} must be {value, mask?}`));
        value = (r as { value?: unknown }).value;
        mask = (r as { mask?: unknown }).mask;
      }
      if (!isUint(value, full)) return err(badMatch('BAD_VALUE', `${k}: ${String(value)} does not fit ${spec.bits} bits`));
      if (mask !== undefined && !isUint(mask, full)) return err(badMatch('BAD_MASK', `${k}: mask ${String(mask)} does not fit ${spec.bits} bits`));
      const msk = mask ?? full;
      if ((value & ~msk) >>> 0 !== 0) return err(badMatch('BAD_WILDCARDS', `${k}: value 0x${value.toString(16)} has bits outside mask 0x${msk.toString(16)}`));
      if (msk === 0) continue;
      const c: Constraint = { key: k, kind: 'num', value, mask: msk, exact: msk === full };
      constraints.push(c);
      byKey[k] = c;
      match[k] = spec.maskable ? (c.exact ? { value } : { value, mask: msk }) : value;
      key += c.exact ? `${k}=${value.toString(16)};` : `${k}=${value.toString(16)}/${msk.toString(16)};`;
    } else {
      if (typeof r !== 'object' || r === null) return err(badMatch('BAD_VALUE', `${k} must be {value, mask?}`));
      const value = (r as { value?: unknown }).value;
      const mask = (r as { mask?: unknown }).mask;
      if (!(value instanceof Uint8Array)) return err(badMatch('BAD_VALUE', `${k}: value must be a Uint8Array`));
      if (value.length !== spec.length) return err(badMatch('BAD_LEN', `${k}: value of ${value.length} bytes, expected ${spec.length}`));
      if (mask !== undefined) {
        if (!(mask instanceof Uint8Array)) return err(badMatch('BAD_MASK', `${k}: mask must be a Uint8Array`));
        if (mask.length !== spec.length) return err(badMatch('BAD_LEN', `${k}: mask of ${mask.length} bytes, expected ${spec.length}`));
        for (let i = 0; i < value.length; i++) {
          if ((value[i]! & ~mask[i]!) !== 0) return err(badMatch('BAD_WILDCARDS', `${k}: value ${hex(value)} has bits outside mask ${hex(mask)}`));
        }
      }
      const allOnes = mask === undefined || mask.every((b) => b === 0xff);
      if (!allOnes && mask.every((b) => b === 0)) continue;
      const c: Constraint = { key: k, kind: 'bytes', value: value.slice(), mask: allOnes ? undefined : mask.slice() };
      constraints.push(c);
      byKey[k] = c;
      match[k] = c.mask === undefined ? { value: c.value } : { value: c.value, mask: c.mask };
      key += c.mask === undefined ? `${k}=${hex(c.value)};` : `${k}=${hex(c.value)}/${hex(c.mask)};`;
    }
  }
  for (const c of constraints) {
    const pre = PREREQS[c.key];
    if (pre === undefined) continue;
    const p = byKey[pre.field];
    if (p === undefined || p.kind !== 'num' || !p.exact || !pre.values.includes(p.value)) {
      const want = pre.values.map((v) => `0x${v.toString(16)}`).join(' or ');
      return err(badMatch('BAD_PREREQ', `${c.key} needs ${pre.field} ${want}`));
    }
  }
  return ok({ match: match as OfMatch, constraints, byKey, key });
}

/** A packet's value of a match field. A packet without a VLAN tag has VLAN_VID OFPVID_NONE (0) (7.2.3.7). */
export const packetValue = (f: PacketFields, key: Key): PacketFields[Key] => f[key] ?? (key === 'vlanVid' ? 0 : undefined);

/**
 * Does a packet match? A field the packet lacks fails every constraint on
 * it, except VLAN_VID: a packet without a VLAN tag has VLAN_VID OFPVID_NONE
 * (0) (7.2.3.7), so an exact 0 matches untagged packets.
 */
export function matchesPacket(cm: CompiledMatch, f: PacketFields): boolean {
  const cs = cm.constraints;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    const pv = packetValue(f, c.key);
    if (pv === undefined) return false;
    if (c.kind === 'num') {
      if (typeof pv !== 'number') return false;
      if (c.exact ? pv !== c.value : (pv & c.mask) >>> 0 !== c.value) return false;
    } else {
      if (!(pv instanceof Uint8Array) || pv.length !== c.value.length) return false;
      const v = c.value;
      const m = c.mask;
      if (m === undefined) {
        for (let j = 0; j < v.length; j++) if (pv[j] !== v[j]) return false;
      } else {
        for (let j = 0; j < v.length; j++) if ((pv[j]! & m[j]!) !== v[j]) return false;
      }
    }
  }
  return true;
}

/**
 * Loose matching (6.4, non-strict MODIFY and DELETE, flow and aggregate
 * stats): does `request` cover `entry`, i.e. is the entry's match the same
 * as or more specific than the request's? Every field the request
 * constrains the entry constrains too, on at least the request's mask bits,
 * to the same value there. An empty request covers everything.
 */
export function covers(request: CompiledMatch, entry: CompiledMatch): boolean {
  for (const r of request.constraints) {
    const e = entry.byKey[r.key];
    if (e === undefined) return false;
    if (r.kind === 'num' && e.kind === 'num') {
      if ((e.mask & r.mask) >>> 0 !== r.mask || (e.value & r.mask) >>> 0 !== r.value) return false;
    } else if (r.kind === 'bytes' && e.kind === 'bytes') {
      for (let j = 0; j < r.value.length; j++) {
        const rm = r.mask?.[j] ?? 0xff;
        const em = e.mask?.[j] ?? 0xff;
        if ((em & rm) !== rm || (e.value[j]! & rm) !== r.value[j]) return false;
      }
    } else return false;
  }
  return true;
}

/**
 * Could one packet match both (6.4, OFPFF_CHECK_OVERLAP)? Only if they agree
 * on every bit both of them constrain. Prerequisites are explicit fields
 * (ETH_TYPE, IP_PROTO), so two entries for different protocols are told
 * apart by those fields.
 */
export function overlaps(a: CompiledMatch, b: CompiledMatch): boolean {
  for (const x of a.constraints) {
    const y = b.byKey[x.key];
    if (y === undefined) continue;
    if (x.kind === 'num' && y.kind === 'num') {
      if (((x.value ^ y.value) & x.mask & y.mask) >>> 0 !== 0) return false;
    } else if (x.kind === 'bytes' && y.kind === 'bytes') {
      for (let j = 0; j < x.value.length; j++) {
        if (((x.value[j]! ^ y.value[j]!) & (x.mask?.[j] ?? 0xff) & (y.mask?.[j] ?? 0xff)) !== 0) return false;
      }
    }
  }
  return true;
}
