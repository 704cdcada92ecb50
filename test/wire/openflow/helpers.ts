import assert from 'node:assert/strict';
import { OfParseError, type OfErrorCode } from '../../../src/wire/openflow/errors.js';
import { encodeOf, parseOf } from '../../../src/wire/openflow/codec.js';
import type { OfMessage } from '../../../src/wire/openflow/types.js';
import { FLOW_MOD } from './samples.js';

/** Byte builders for malformed-input tests. */

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const u16be = (v: number): Uint8Array => Uint8Array.of(v >>> 8, v & 0xff);
export const u32be = (v: number): Uint8Array => Uint8Array.of(v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
export const zeros = (n: number): Uint8Array => new Uint8Array(n);

/** Sets the header's length field to the bytes' length. */
export function fixLength(b: Uint8Array): Uint8Array {
  b[2] = b.length >>> 8;
  b[3] = b.length & 0xff;
  return b;
}

/** An OXM TLV: class, field, hasmask, the payload (value and mask together), length = payload length unless given. */
export function oxm(field: number, payload: Uint8Array, hasMask = false, cls = 0x8000, len = payload.length): Uint8Array {
  return concat(u16be(cls), Uint8Array.of((field << 1) | (hasMask ? 1 : 0), len), payload);
}

/** An ofp_match of these TLVs (type OXM, padded with `pad` bytes or zeros to 8). */
export function rawMatch(tlvs: Uint8Array[], opts: { type?: number; length?: number; pad?: Uint8Array } = {}): Uint8Array {
  const body = concat(...tlvs);
  const length = opts.length ?? 4 + body.length;
  const padLen = ((4 + body.length + 7) & ~7) - (4 + body.length);
  return concat(u16be(opts.type ?? 1), u16be(length), body, opts.pad ?? zeros(padLen));
}

const BARE_FLOW_MOD = encodeOf({ type: 'flow-mod', xid: 0x77, mod: { ...FLOW_MOD, match: {}, instructions: [] } });

/** A FLOW_MOD (xid 0x77) whose match and instructions are these raw bytes. */
export function flowModWith(match: Uint8Array, instructions: Uint8Array = new Uint8Array(0)): Uint8Array {
  return fixLength(concat(BARE_FLOW_MOD.subarray(0, 48), match, instructions));
}

/** An APPLY_ACTIONS instruction around raw action bytes (its len counts them as given). */
export function applyActions(actions: Uint8Array, len = 8 + actions.length): Uint8Array {
  return concat(u16be(4), u16be(len), zeros(4), actions);
}

/** Asserts that parseOf refuses `b` with `code` and, if given, the ERROR type/code to answer with. */
export function refusedAs(b: Uint8Array, code: OfErrorCode, answer?: [number, number], xid?: number): OfParseError {
  const r = parseOf(b);
  assert.ok(!r.ok, `expected ${code}, got a message: ${r.ok ? JSON.stringify(r.value, big) : ''}`);
  assert.ok(r.error instanceof OfParseError, 'an OfParseError');
  assert.equal(r.error.code, code, r.error.message);
  if (answer !== undefined) assert.deepEqual([r.error.answer.type, r.error.answer.code], answer, `answer for: ${r.error.message}`);
  if (xid !== undefined) assert.equal(r.error.xid, xid, 'the xid of the refused message');
  return r.error;
}

/** Encodes, parses back, and checks the value and that it re-encodes to the same bytes. */
export function roundTrip(m: OfMessage): Uint8Array {
  const b = encodeOf(m);
  const r = parseOf(b);
  assert.ok(r.ok, `parse of ${m.type}: ${r.ok ? '' : `${r.error.code} ${r.error.message}`}`);
  assert.deepStrictEqual(r.value, m, `round trip of ${m.type}`);
  assert.deepStrictEqual(encodeOf(r.value), b, `re-encode of ${m.type}`);
  return b;
}

/** JSON.stringify replacer for bigints and byte arrays. */
export const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v);
