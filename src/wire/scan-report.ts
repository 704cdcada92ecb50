import { createHmac, timingSafeEqual } from 'node:crypto';
import { RangeArgumentError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { get16, get32, put16, put32 } from './bytes.js';
import { WireError } from './codec.js';

/**
 * A client's scan report to its gateway (seeds/003's Type III inference,
 * docs/gateway.md): the beacon strength of every AP (mesh router) it heard,
 * sent over UDP by `cogmesh gateway scan-report`.
 *
 * ```
 *  0  "CMSR"            magic
 *  4  version u8 = 1
 *  5  flags u8          bit 0: a MAC trailer follows; the other bits are 0
 *  6  boot u32          when the client started (its clock's seconds): a restart counts as newer
 * 10  seq u32           the client's report count since it started
 * 14  idLen u8, id      the client's name, UTF-8, 1-64 bytes
 *  .  count u8          APs heard, 0-64
 *  .  count x { apLen u8, ap (UTF-8, 1-32 bytes), centi-dBm i16 (-150.00 to +30.00) }
 *  .  [MAC 16 bytes]    HMAC-SHA-256 over everything before it, truncated, with the key shared by clients and gateway
 * ```
 */
export interface ScanReportMsg {
  client: string;
  boot: number;
  seq: number;
  /** AP name to beacon strength (dBm, to 0.01 dB), in the order sent. */
  aps: Map<string, number>;
  /** Whether the report carried a MAC (checked by `parseScanReport` when it was given the key). */
  authenticated: boolean;
}

export const SCAN_REPORT_MAGIC = 'CMSR';
export const SCAN_REPORT_VERSION = 1;
export const SCAN_REPORT_MAX_ID_BYTES = 64;
export const SCAN_REPORT_MAX_APS = 64;
export const SCAN_REPORT_MAX_AP_BYTES = 32;
export const SCAN_REPORT_MAC_BYTES = 16;
/** The beacon strengths a report may carry (dBm). */
export const SCAN_REPORT_MIN_DBM = -150;
export const SCAN_REPORT_MAX_DBM = 30;
/** A report's size at most: the UDP payload a receiver reads. */
export const SCAN_REPORT_MAX_BYTES = 14 + 1 + SCAN_REPORT_MAX_ID_BYTES + 1 + SCAN_REPORT_MAX_APS * (1 + SCAN_REPORT_MAX_AP_BYTES + 2) + SCAN_REPORT_MAC_BYTES;

const FLAG_MAC = 0x01;
const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

function nameBytes(what: string, s: string, max: number): Uint8Array {
  const b = utf8.encode(s);
  if (b.length === 0 || b.length > max) throw new RangeArgumentError(what, s, `a name of 1-${max} UTF-8 bytes`);
  return b;
}

function mac(key: Uint8Array, body: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac('sha256', key).update(body).digest().subarray(0, SCAN_REPORT_MAC_BYTES));
}

/** The report's bytes; with `key`, sealed with its MAC. Throws RangeArgumentError naming a field that cannot be sent. */
export function encodeScanReport(m: Omit<ScanReportMsg, 'authenticated'>, key?: Uint8Array): Uint8Array {
  for (const [k, v] of [
    ['boot', m.boot],
    ['seq', m.seq],
  ] as const)
    if (!(Number.isInteger(v) && v >= 0 && v <= 0xffffffff)) throw new RangeArgumentError(`scan report ${k}`, v, 'an integer of 0 to 2^32 - 1');
  const id = nameBytes('scan report client', m.client, SCAN_REPORT_MAX_ID_BYTES);
  if (m.aps.size > SCAN_REPORT_MAX_APS) throw new RangeArgumentError('scan report APs', m.aps.size, `at most ${SCAN_REPORT_MAX_APS} APs`);
  const aps = [...m.aps].map(([ap, dbm]) => {
    if (!(Number.isFinite(dbm) && dbm >= SCAN_REPORT_MIN_DBM && dbm <= SCAN_REPORT_MAX_DBM))
      throw new RangeArgumentError(`scan report AP ${ap}`, dbm, `a beacon strength of ${SCAN_REPORT_MIN_DBM} to ${SCAN_REPORT_MAX_DBM} dBm`);
    return { name: nameBytes('scan report AP', ap, SCAN_REPORT_MAX_AP_BYTES), centi: Math.round(dbm * 100) };
  });
  const body = 14 + 1 + id.length + 1 + aps.reduce((n, a) => n + 1 + a.name.length + 2, 0);
  const out = new Uint8Array(body + (key ? SCAN_REPORT_MAC_BYTES : 0));
  out.set(utf8.encode(SCAN_REPORT_MAGIC), 0);
  out[4] = SCAN_REPORT_VERSION;
  out[5] = key ? FLAG_MAC : 0;
  put32(out, 6, m.boot);
  put32(out, 10, m.seq);
  let o = 14;
  out[o++] = id.length;
  out.set(id, o);
  o += id.length;
  out[o++] = aps.length;
  for (const a of aps) {
    out[o++] = a.name.length;
    out.set(a.name, o);
    o += a.name.length;
    put16(out, o, a.centi & 0xffff);
    o += 2;
  }
  if (key) out.set(mac(key, out.subarray(0, body)), body);
  return out;
}

const bad = (code: 'WIRE_TRUNCATED' | 'WIRE_BAD_VERSION' | 'WIRE_BAD_FIELD' | 'WIRE_TRAILING_BYTES' | 'WIRE_BAD_CHECKSUM', message: string) =>
  err(new WireError(code, 'scan report', `scan report: ${message}`));

/**
 * A report from bytes received, never throwing: an error value names what
 * was wrong. With `key`, a report must carry a MAC that checks
 * (WIRE_BAD_CHECKSUM otherwise); without one, a MAC is not checked.
 */
export function parseScanReport(b: Uint8Array, key?: Uint8Array): Result<ScanReportMsg, WireError> {
  if (b.length < 16) return bad('WIRE_TRUNCATED', `${b.length} bytes, under the 16 of the smallest report`);
  if (b[0] !== 0x43 || b[1] !== 0x4d || b[2] !== 0x53 || b[3] !== 0x52) return bad('WIRE_BAD_FIELD', 'no "CMSR" magic');
  if (b[4] !== SCAN_REPORT_VERSION) return bad('WIRE_BAD_VERSION', `version ${b[4]}, not ${SCAN_REPORT_VERSION}`);
  const flags = b[5]!;
  if ((flags & ~FLAG_MAC) !== 0) return bad('WIRE_BAD_FIELD', `flags 0x${flags.toString(16)} with unknown bits`);
  const hasMac = (flags & FLAG_MAC) !== 0;
  const end = b.length - (hasMac ? SCAN_REPORT_MAC_BYTES : 0);
  if (key && !hasMac) return bad('WIRE_BAD_CHECKSUM', 'no MAC, and this gateway takes authenticated reports only');
  if (end < 16) return bad('WIRE_TRUNCATED', `${b.length} bytes, too few for a report with a MAC`);
  if (key && !timingSafeEqual(mac(key, b.subarray(0, end)), b.subarray(end))) return bad('WIRE_BAD_CHECKSUM', 'the MAC does not check');
  const boot = get32(b, 6);
  const seq = get32(b, 10);
  let o = 14;
  const name = (what: string, max: number): Result<string, WireError> => {
    if (o >= end) return bad('WIRE_TRUNCATED', `ends before the ${what}'s length`);
    const n = b[o++]!;
    if (n === 0 || n > max) return bad('WIRE_BAD_FIELD', `a ${what} of ${n} bytes, not 1-${max}`);
    if (o + n > end) return bad('WIRE_TRUNCATED', `ends inside the ${what}`);
    let s: string;
    try {
      s = utf8Strict.decode(b.subarray(o, o + n));
    } catch {
      return bad('WIRE_BAD_FIELD', `a ${what} that is not UTF-8`);
    }
    o += n;
    return ok(s);
  };
  const client = name('client name', SCAN_REPORT_MAX_ID_BYTES);
  if (!client.ok) return client;
  if (o >= end) return bad('WIRE_TRUNCATED', 'ends before the AP count');
  const count = b[o++]!;
  if (count > SCAN_REPORT_MAX_APS) return bad('WIRE_BAD_FIELD', `${count} APs, over ${SCAN_REPORT_MAX_APS}`);
  const aps = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const ap = name('AP name', SCAN_REPORT_MAX_AP_BYTES);
    if (!ap.ok) return ap;
    if (o + 2 > end) return bad('WIRE_TRUNCATED', `ends inside AP ${ap.value}'s strength`);
    const raw = get16(b, o);
    o += 2;
    const dbm = (raw >= 0x8000 ? raw - 0x10000 : raw) / 100;
    if (dbm < SCAN_REPORT_MIN_DBM || dbm > SCAN_REPORT_MAX_DBM)
      return bad('WIRE_BAD_FIELD', `AP ${ap.value} at ${dbm} dBm, outside ${SCAN_REPORT_MIN_DBM} to ${SCAN_REPORT_MAX_DBM}`);
    if (aps.has(ap.value)) return bad('WIRE_BAD_FIELD', `AP ${ap.value} listed twice`);
    aps.set(ap.value, dbm);
  }
  if (o !== end) return bad('WIRE_TRAILING_BYTES', `${end - o} bytes after the last AP`);
  return ok({ client: client.value, boot, seq, aps, authenticated: hasMac && key !== undefined });
}

/** The UDP port a gateway takes scan reports on unless configured otherwise. */
export const SCAN_REPORT_PORT = 7046;
