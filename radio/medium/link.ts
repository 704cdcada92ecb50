import { err, ok, type Result } from '../../src/core/result.js';
import type { BandConfig } from '../sim/band.js';
import type { Micros } from '../../src/core/time.js';
import type { MediumParams, PhyParams, Position, SendOutcome, StationCounters, StationSpec } from './types.js';

/**
 * The link between a router process and the air medium process
 * (`cogmesh medium`), over a stream socket (transport.ts). The medium runs every station's 802.11 MAC; a router's
 * radios are proxies that send, retune and detach, and hear back what was
 * received and how each send ended. A link message carries a batch of
 * them (framing below): the per-frame ones in binary, the rare
 * control ones as JSON. Layout in docs/testbed.md.
 */
export const LINK_VERSION = 3;

/** What the medium tells a router when it joins: all it needs to sense the same band and use the same channels. */
export interface Welcome {
  t: 'welcome';
  version: number;
  /** Time origin of the PN processes (epoch µs): the router generates the same bursts from it. */
  epochUs: Micros;
  bandSeed: number;
  band: BandConfig;
  channels: 11 | 13;
  /** Channels do not overlap (no adjacent-channel interference). */
  orthogonal: boolean;
  controlChannelPn: boolean;
  medium: MediumParams;
  phy: PhyParams;
}

export type StationDecl = Omit<StationSpec, 'node' | 'position'>;

/** Router to medium. */
export type UpMessage =
  /**
   * `key` and `proof` over CURVE: the router's public key and its proof
   * that it holds the secret half (curve-link.ts `curveJoinProof`), so the
   * medium can hold the key to the addresses it may join as.
   */
  | { t: 'join'; version: number; node: number; name: string; position: Position; key?: string; proof?: string }
  | { t: 'station'; spec: StationDecl }
  | { t: 'send'; st: string; seq: number; src: number; dst: number; payload: Uint8Array }
  | { t: 'retune'; st: string; channel: number | null; overheadUs: Micros }
  | { t: 'hold'; st: string }
  | { t: 'detach'; st: string }
  | { t: 'beat' }
  | { t: 'leave' };

/** Medium to router. */
export type DownMessage =
  | Welcome
  | { t: 'refused'; reason: string }
  | { t: 'rx'; st: string; src: number; dst: number; atUs: Micros; payload: Uint8Array }
  | { t: 'sent'; st: string; seq: number; outcome: SendOutcome }
  | { t: 'attempt'; st: string; seq: number; attempts: number }
  | { t: 'counters'; st: string; counters: StationCounters };

export type LinkMessage = UpMessage | DownMessage;

/** A link message that could not be read: what was wrong, for the counter and the log. */
export interface LinkError {
  code: 'LINK_MALFORMED' | 'LINK_UNKNOWN_TYPE' | 'LINK_BAD_FIELD';
  message: string;
}

/** What one link message held: its messages in order, and those that could not be read. */
export interface LinkBatch<M> {
  messages: M[];
  errors: LinkError[];
}

/*
 * Framing. On the stream, a link message is its 32-bit big-endian length and
 * its bytes: the magic byte 0xCB, the link version, then records back to back, each a type byte, a 32-bit
 * big-endian body length and the body. A record of type CONTROL holds a
 * message as JSON (the rare ones: join, station, retune, welcome, ...);
 * the per-frame messages are binary (all integers big-endian):
 *
 *   SEND    st | seq u48 | src u16 | dst u16 | packet
 *   RX      st | src u16 | dst u16 | atUs u64 | packet
 *   SENT    st | seq u48 | result u8 (0 ok, 1 retry-limit, 2 aborted) | attempts u16 | atUs u64
 *   ATTEMPT st | seq u48 | attempts u16
 *
 * where st is a length byte and the station id in UTF-8. A sender batches
 * what it has to say in one turn of its event loop into one link message;
 * an ATTEMPT directly followed by the SENT of the same frame is left out.
 */
const MAGIC = 0xcb;
const HEADER = 2;
const REC = 5;
const enum Rec {
  CONTROL = 0,
  SEND = 1,
  RX = 2,
  SENT = 3,
  ATTEMPT = 4,
}
const RESULTS = ['ok', 'retry-limit', 'aborted'] as const;
/** The longest station id the link carries (bytes of UTF-8). */
const MAX_ID = 80;
/** Sequence numbers are 48-bit. */
export const MAX_LINK_SEQ = 2 ** 48 - 1;

/** One record, staged: its type, body length, and what writes the body. */
interface Staged {
  type: Rec;
  len: number;
  m: LinkMessage;
  json?: Buffer;
  idLen: number;
}

/**
 * Messages for one peer, staged until the sender flushes them into one
 * ZeroMQ message (`take`). Encoding errors (an id too long, a sequence
 * number out of range) throw at `add`, in the caller's hands.
 */
export class LinkWriter {
  private staged: Staged[] = [];
  private bytes = HEADER;

  get size(): number {
    return this.staged.length;
  }

  add(m: LinkMessage): void {
    let s: Staged;
    switch (m.t) {
      case 'send':
        s = this.binary(Rec.SEND, m, m.st, 6 + 2 + 2 + m.payload.byteLength, m.seq);
        break;
      case 'rx':
        s = this.binary(Rec.RX, m, m.st, 2 + 2 + 8 + m.payload.byteLength);
        break;
      case 'sent':
        s = this.binary(Rec.SENT, m, m.st, 6 + 1 + 2 + 8, m.seq);
        this.dropAttemptOf(m.st, m.seq);
        break;
      case 'attempt':
        s = this.binary(Rec.ATTEMPT, m, m.st, 6 + 2, m.seq);
        break;
      default: {
        const json = Buffer.from(JSON.stringify(m, infinityOut));
        s = { type: Rec.CONTROL, len: json.byteLength, m, json, idLen: 0 };
      }
    }
    this.staged.push(s);
    this.bytes += REC + s.len;
  }

  /**
   * The staged messages as one link message with its 32-bit length in
   * front (what goes on the stream), or undefined when none is staged; the
   * writer starts empty again.
   */
  take(): Uint8Array | undefined {
    if (this.staged.length === 0) return undefined;
    const buf = Buffer.allocUnsafe(4 + this.bytes);
    buf.writeUInt32BE(this.bytes, 0);
    buf[4] = MAGIC;
    buf[5] = LINK_VERSION;
    let o = 4 + HEADER;
    for (const s of this.staged) {
      buf[o] = s.type;
      buf.writeUInt32BE(s.len, o + 1);
      o += REC;
      if (s.json) {
        buf.set(s.json, o);
        o += s.json.byteLength;
      } else o = writeBody(buf, o, s);
    }
    this.staged = [];
    this.bytes = HEADER;
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * An ATTEMPT of a frame staged just before its SENT says nothing the
   * outcome does not (the router counts the head frame's attempts until its
   * outcome, which carries them): it goes, one record fewer per frame when a
   * whole exchange runs within one batch, as it does at the medium.
   */
  private dropAttemptOf(st: string, seq: number): void {
    const last = this.staged[this.staged.length - 1];
    if (last?.type !== Rec.ATTEMPT) return;
    const a = last.m as Extract<LinkMessage, { t: 'attempt' }>;
    if (a.st !== st || a.seq !== seq) return;
    this.staged.pop();
    this.bytes -= REC + last.len;
  }

  private binary(type: Rec, m: LinkMessage, st: string, rest: number, seq?: number): Staged {
    const idLen = idBytes(st).byteLength;
    if (idLen === 0 || idLen > MAX_ID) throw new RangeError(`station id ${JSON.stringify(st)}: 1 to ${MAX_ID} bytes of UTF-8`);
    if (seq !== undefined && !(Number.isSafeInteger(seq) && seq >= 0 && seq <= MAX_LINK_SEQ)) throw new RangeError(`seq ${seq}: 0..2^48-1`);
    return { type, len: 1 + idLen + rest, m, idLen };
  }
}

/** Writes a binary record's body at `o`; returns the offset after it. */
function writeBody(buf: Buffer, o: number, s: Staged): number {
  const m = s.m as Extract<LinkMessage, { st: string }>;
  buf[o] = s.idLen;
  buf.set(idBytes(m.st), o + 1);
  o += 1 + s.idLen;
  switch (m.t) {
    case 'send':
      buf.writeUIntBE(m.seq, o, 6);
      buf.writeUInt16BE(m.src, o + 6);
      buf.writeUInt16BE(m.dst, o + 8);
      buf.set(m.payload, o + 10);
      return o + 10 + m.payload.byteLength;
    case 'rx':
      buf.writeUInt16BE(m.src, o);
      buf.writeUInt16BE(m.dst, o + 2);
      writeU64(buf, o + 4, m.atUs);
      buf.set(m.payload, o + 12);
      return o + 12 + m.payload.byteLength;
    case 'sent':
      buf.writeUIntBE(m.seq, o, 6);
      buf[o + 6] = m.outcome.ok ? 0 : RESULTS.indexOf(m.outcome.reason);
      buf.writeUInt16BE(m.outcome.attempts, o + 7);
      writeU64(buf, o + 9, m.outcome.atUs);
      return o + 17;
    case 'attempt':
      buf.writeUIntBE(m.seq, o, 6);
      buf.writeUInt16BE(m.attempts, o + 6);
      return o + 8;
    default:
      throw new Error(`no binary record for ${m.t}`);
  }
}

const writeU64 = (buf: Buffer, o: number, v: number): void => {
  buf.writeUInt32BE(Math.floor(v / 2 ** 32), o);
  buf.writeUInt32BE(v >>> 0, o + 4);
};
const readU64 = (buf: Buffer, o: number): number => buf.readUInt32BE(o) * 2 ** 32 + buf.readUInt32BE(o + 4);

/** Messages as one link message, without the length in front (what `parseUp`/`parseDown` read). */
export function encodeLink(...messages: LinkMessage[]): Uint8Array {
  const w = new LinkWriter();
  for (const m of messages) w.add(m);
  return w.take()?.subarray(4) ?? Uint8Array.of(MAGIC, LINK_VERSION);
}

/** JSON has no Infinity (a PHY without RTS/CTS has an infinite threshold): it travels as the string "Infinity". */
const infinityOut = (_k: string, v: unknown): unknown => (v === Infinity ? 'Infinity' : v);
const infinityIn = (_k: string, v: unknown): unknown => (v === 'Infinity' ? Infinity : v);

const UP = new Set(['join', 'station', 'send', 'retune', 'hold', 'detach', 'beat', 'leave']);
const DOWN = new Set(['welcome', 'refused', 'rx', 'sent', 'attempt', 'counters']);

/** Reads a link message a router sent the medium (without its length). Never throws. */
export function parseUp(message: ArrayBufferView): LinkBatch<UpMessage> {
  return parse(message, UP) as LinkBatch<UpMessage>;
}

/** Reads a link message the medium sent a router (without its length). Never throws. */
export function parseDown(message: ArrayBufferView): LinkBatch<DownMessage> {
  return parse(message, DOWN) as LinkBatch<DownMessage>;
}

function parse(f: ArrayBufferView, types: ReadonlySet<string>): LinkBatch<LinkMessage> {
  const out: LinkBatch<LinkMessage> = { messages: [], errors: [] };
  const buf = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
  if (buf.byteLength < HEADER || buf[0] !== MAGIC) {
    const first = buf.byteLength > 0 ? `0x${buf[0]!.toString(16).padStart(2, '0')}` : 'nothing';
    return fail(out, 'LINK_MALFORMED', `not a cogmesh link message (first byte ${first}, expected 0xcb${buf[0] === 0x7b ? '; JSON is link version 1' : ''})`);
  }
  if (buf[1] !== LINK_VERSION) return fail(out, 'LINK_MALFORMED', `link version ${buf[1]}, this process speaks ${LINK_VERSION}`);
  let o = HEADER;
  while (o < buf.byteLength) {
    if (buf.byteLength - o < REC) return fail(out, 'LINK_MALFORMED', `a record header cut short at byte ${o}`);
    const type = buf[o]!;
    const len = buf.readUInt32BE(o + 1);
    const body = o + REC;
    if (len > buf.byteLength - body) return fail(out, 'LINK_MALFORMED', `a record of ${len} bytes at byte ${o}, only ${buf.byteLength - body} left`);
    o = body + len;
    const r = type === Rec.CONTROL ? control(buf.subarray(body, o)) : binary(type, buf, body, o);
    if (!r.ok) out.errors.push(r.error);
    else if (!types.has(r.value.t)) out.errors.push({ code: 'LINK_UNKNOWN_TYPE', message: `unknown message type ${JSON.stringify(r.value.t)}` });
    else out.messages.push(r.value);
  }
  return out;
}

function fail(out: LinkBatch<LinkMessage>, code: LinkError['code'], message: string): LinkBatch<LinkMessage> {
  out.errors.push({ code, message });
  return out;
}

/** A JSON record: a control message. */
function control(body: Buffer): Result<LinkMessage, LinkError> {
  let m: unknown;
  try {
    m = JSON.parse(body.toString('utf8'), infinityIn);
  } catch (e) {
    return bad('LINK_MALFORMED', `a control record is not JSON (${(e as Error).message})`);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return bad('LINK_MALFORMED', 'a control record is not a JSON object');
  const o = m as Record<string, unknown>;
  if (typeof o.t !== 'string' || !CONTROL_TYPES.has(o.t)) return bad('LINK_UNKNOWN_TYPE', `unknown control message type ${JSON.stringify(o.t)}`);
  const problem = check(o);
  if (problem !== undefined) return bad('LINK_BAD_FIELD', `${o.t}: ${problem}`);
  return ok(o as unknown as LinkMessage);
}

const CONTROL_TYPES = new Set(['join', 'station', 'retune', 'hold', 'detach', 'beat', 'leave', 'welcome', 'refused', 'counters']);
const FIXED: Record<number, [string, number]> = {
  [Rec.SEND]: ['send', 10],
  [Rec.RX]: ['rx', 12],
  [Rec.SENT]: ['sent', 17],
  [Rec.ATTEMPT]: ['attempt', 8],
};

/** A binary record in buf[body, end). */
function binary(type: number, buf: Buffer, body: number, end: number): Result<LinkMessage, LinkError> {
  const kind = FIXED[type];
  if (kind === undefined) return bad('LINK_UNKNOWN_TYPE', `unknown record type ${type}`);
  const [t, fixed] = kind;
  const idLen = body < end ? buf[body]! : 0;
  if (idLen === 0 || idLen > MAX_ID) return bad('LINK_BAD_FIELD', `${t}: a station id of ${idLen} bytes, expected 1..${MAX_ID}`);
  const o = body + 1 + idLen;
  if (end - o < fixed) return bad('LINK_MALFORMED', `${t}: ${end - body} bytes, too short for its fields`);
  const st = idOf(buf, body + 1, o);
  switch (type) {
    case Rec.SEND: {
      if (end - o === fixed) return bad('LINK_BAD_FIELD', 'send: an empty packet');
      return ok({ t: 'send', st, seq: buf.readUIntBE(o, 6), src: buf.readUInt16BE(o + 6), dst: buf.readUInt16BE(o + 8), payload: packet(buf, o + 10, end) });
    }
    case Rec.RX: {
      if (end - o === fixed) return bad('LINK_BAD_FIELD', 'rx: an empty packet');
      const atUs = readU64(buf, o + 4);
      if (!Number.isSafeInteger(atUs)) return bad('LINK_BAD_FIELD', `rx: atUs ${atUs} is not a time`);
      return ok({ t: 'rx', st, src: buf.readUInt16BE(o), dst: buf.readUInt16BE(o + 2), atUs, payload: packet(buf, o + 12, end) });
    }
    case Rec.SENT: {
      if (end - o !== fixed) return bad('LINK_MALFORMED', `sent: ${end - o - fixed} bytes too many`);
      const result = buf[o + 6]!;
      const attempts = buf.readUInt16BE(o + 7);
      const atUs = readU64(buf, o + 9);
      if (result >= RESULTS.length) return bad('LINK_BAD_FIELD', `sent: result ${result}, expected 0 (ok), 1 (retry-limit) or 2 (aborted)`);
      if (!Number.isSafeInteger(atUs)) return bad('LINK_BAD_FIELD', `sent: atUs ${atUs} is not a time`);
      const seq = buf.readUIntBE(o, 6);
      const outcome: SendOutcome =
        result === 0 ? { ok: true, attempts, atUs } : { ok: false, reason: RESULTS[result] as 'retry-limit' | 'aborted', attempts, atUs };
      return ok({ t: 'sent', st, seq, outcome });
    }
    default: {
      if (end - o !== fixed) return bad('LINK_MALFORMED', `attempt: ${end - o - fixed} bytes too many`);
      return ok({ t: 'attempt', st, seq: buf.readUIntBE(o, 6), attempts: buf.readUInt16BE(o + 6) });
    }
  }
}

/**
 * A packet's bytes, a view into the message, not a copy. A packet may be kept
 * (queued, changed in place) after the rest of its batch is read: that is
 * safe because every message a reader hands out lies in memory of its own
 * (Node allocates each read's buffer afresh, and the reader's joins of
 * chunks are new buffers too), which nothing writes again. Keeping one
 * packet keeps the read it came in (tens of kB at most) alive with it.
 */
const packet = (buf: Buffer, from: number, to: number): Uint8Array => new Uint8Array(buf.buffer, buf.byteOffset + from, to - from);

/*
 * Station ids, a few per router and on every record: their UTF-8 bytes and
 * their strings are kept rather than encoded and decoded each time (a
 * bounded cache: ids a process no longer sees are forgotten when it fills).
 */
const ID_CACHE = 256;
const idBytesOf = new Map<string, Uint8Array>();
const idStrings: Array<{ bytes: Uint8Array; id: string }> = [];

function idBytes(st: string): Uint8Array {
  const known = idBytesOf.get(st);
  if (known !== undefined) return known;
  if (idBytesOf.size >= ID_CACHE) idBytesOf.clear();
  const b = new TextEncoder().encode(st);
  idBytesOf.set(st, b);
  return b;
}

/** The id in buf[from, to), as a string. */
function idOf(buf: Buffer, from: number, to: number): string {
  const n = to - from;
  for (let i = 0; i < idStrings.length; i++) {
    const c = idStrings[i]!;
    const b = c.bytes;
    if (b.byteLength !== n) continue;
    let k = 0;
    while (k < n && b[k] === buf[from + k]) k++;
    if (k === n) {
      // Most recently seen first: a run of records for one station finds it at once.
      if (i > 0) {
        idStrings.splice(i, 1);
        idStrings.unshift(c);
      }
      return c.id;
    }
  }
  const id = buf.toString('utf8', from, to);
  if (idStrings.length >= 16) idStrings.pop();
  idStrings.unshift({ bytes: Uint8Array.prototype.slice.call(buf, from, to), id });
  return id;
}

const isInt = (v: unknown, lo: number, hi: number): boolean => Number.isSafeInteger(v) && (v as number) >= lo && (v as number) <= hi;
const isId = (v: unknown): boolean => typeof v === 'string' && v.length > 0 && v.length <= 80;

/** The first field of `o` that is missing or out of range, described; undefined when all are fine. */
function check(o: Record<string, unknown>): string | undefined {
  const need = (ok: boolean, field: string, expected: string): string | undefined =>
    ok ? undefined : `${field} is ${JSON.stringify(o[field]) ?? 'missing'}, expected ${expected}`;
  switch (o.t) {
    case 'join': {
      const p = o.position as Record<string, unknown> | undefined;
      return (
        need(o.version === LINK_VERSION, 'version', `${LINK_VERSION}`) ??
        need(isInt(o.node, 0, 0xfffe), 'node', 'a mesh address 0..65534') ??
        need(typeof o.name === 'string' && o.name.length <= 64, 'name', 'a name of up to 64 characters') ??
        need(typeof p === 'object' && p !== null && Number.isFinite(p.xM) && Number.isFinite(p.yM), 'position', '{xM, yM} in metres') ??
        need(o.key === undefined || (typeof o.key === 'string' && o.key.length === 40), 'key', 'a CURVE public key (40 characters of Z85)') ??
        need(o.proof === undefined || (typeof o.proof === 'string' && /^[0-9a-f]{64}$/.test(o.proof)), 'proof', '64 hex digits')
      );
    }
    case 'station': {
      const s = o.spec as Record<string, unknown> | undefined;
      if (typeof s !== 'object' || s === null) return need(false, 'spec', 'a station spec');
      if (!isId(s.id)) return `spec.id is ${JSON.stringify(s.id)}, expected a station id`;
      if (typeof s.acceptsUnicast !== 'boolean' || typeof s.acceptsBroadcast !== 'boolean')
        return 'spec.acceptsUnicast and spec.acceptsBroadcast must be true or false';
      if (s.channel !== undefined && !isInt(s.channel, 1, 14)) return `spec.channel is ${JSON.stringify(s.channel)}, expected a channel number`;
      if (s.pnAffected !== undefined && typeof s.pnAffected !== 'boolean') return 'spec.pnAffected must be true or false';
      if (s.queueLimit !== undefined && !isInt(s.queueLimit, 0, 65536)) return `spec.queueLimit is ${JSON.stringify(s.queueLimit)}, expected 0..65536`;
      return undefined;
    }
    case 'retune':
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(o.channel === null || isInt(o.channel, 1, 14), 'channel', 'a channel number or null') ??
        need(isInt(o.overheadUs, 0, 10_000_000), 'overheadUs', '0..10000000 µs')
      );
    case 'detach':
    case 'hold':
      return need(isId(o.st), 'st', 'a station id');
    case 'welcome':
      return (
        need(o.version === LINK_VERSION, 'version', `${LINK_VERSION} (this router speaks link version ${LINK_VERSION})`) ??
        need(isInt(o.epochUs, 0, Number.MAX_SAFE_INTEGER), 'epochUs', 'a time')
      );
    default:
      return undefined;
  }
}

function bad(code: LinkError['code'], message: string): { ok: false; error: LinkError } {
  return err({ code, message });
}
