import { err, ok, type Result } from '../../src/core/result.js';
import type { BandConfig } from '../sim/band.js';
import type { Micros } from '../../src/core/time.js';
import type { MediumParams, PhyParams, Position, SendOutcome, StationCounters, StationSpec } from './types.js';

/**
 * The link between a router process and the air medium process
 * (`cogmesh medium`), over ZeroMQ: the router's DEALER socket to the
 * medium's ROUTER. A message is one JSON frame (its `t` says which), and a
 * frame that carries a mesh packet has its bytes in a second frame. The
 * medium runs every station's 802.11 MAC; a router's radios are proxies
 * that send, retune and detach, and hear back what was received and how
 * each send ended. Layout in docs/testbed.md.
 */
export const LINK_VERSION = 1;

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
  | { t: 'join'; version: number; node: number; name: string; position: Position }
  | { t: 'station'; spec: StationDecl }
  | { t: 'send'; st: string; seq: number; src: number; dst: number; payload: Uint8Array }
  | { t: 'retune'; st: string; channel: number | null; overheadUs: Micros }
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

/** The frames of a message: its JSON, and the packet bytes when it carries some. */
export function encodeLink(m: LinkMessage): Buffer[] {
  if ('payload' in m) {
    const { payload, ...head } = m;
    return [Buffer.from(JSON.stringify(head)), Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)];
  }
  return [Buffer.from(JSON.stringify(m, infinityOut))];
}

/** JSON has no Infinity (a PHY without RTS/CTS has an infinite threshold): it travels as the string "Infinity". */
const infinityOut = (_k: string, v: unknown): unknown => (v === Infinity ? 'Infinity' : v);
const infinityIn = (_k: string, v: unknown): unknown => (v === 'Infinity' ? Infinity : v);

const UP = new Set(['join', 'station', 'send', 'retune', 'detach', 'beat', 'leave']);
const DOWN = new Set(['welcome', 'refused', 'rx', 'sent', 'attempt', 'counters']);

/** Reads a message a router sent the medium. Never throws. */
export function parseUp(frames: readonly ArrayBufferView[]): Result<UpMessage, LinkError> {
  return parse(frames, UP) as Result<UpMessage, LinkError>;
}

/** Reads a message the medium sent a router. Never throws. */
export function parseDown(frames: readonly ArrayBufferView[]): Result<DownMessage, LinkError> {
  return parse(frames, DOWN) as Result<DownMessage, LinkError>;
}

function parse(frames: readonly ArrayBufferView[], types: ReadonlySet<string>): Result<LinkMessage, LinkError> {
  const first = frames[0];
  if (first === undefined || frames.length > 2) return bad('LINK_MALFORMED', `a message is 1 or 2 frames, got ${frames.length}`);
  let m: unknown;
  try {
    m = JSON.parse(Buffer.from(first.buffer, first.byteOffset, first.byteLength).toString('utf8'), infinityIn);
  } catch (e) {
    return bad('LINK_MALFORMED', `the first frame is not JSON (${(e as Error).message})`);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return bad('LINK_MALFORMED', 'the first frame is not a JSON object');
  const o = m as Record<string, unknown>;
  if (typeof o.t !== 'string' || !types.has(o.t)) return bad('LINK_UNKNOWN_TYPE', `unknown message type ${JSON.stringify(o.t)}`);
  const carries = o.t === 'send' || o.t === 'rx';
  if (carries !== (frames.length === 2)) return bad('LINK_MALFORMED', `a ${o.t} message has ${carries ? 'two frames' : 'one frame'}, got ${frames.length}`);
  const problem = check(o);
  if (problem !== undefined) return bad('LINK_BAD_FIELD', `${o.t}: ${problem}`);
  if (carries) {
    const p = frames[1]!;
    if (p.byteLength === 0) return bad('LINK_BAD_FIELD', `${o.t}: an empty packet`);
    // A copy: the socket's buffer is not the packet's to keep.
    const payload = new Uint8Array(p.buffer, p.byteOffset, p.byteLength).slice();
    return ok({ ...o, payload } as unknown as LinkMessage);
  }
  return ok(o as unknown as LinkMessage);
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
        need(typeof p === 'object' && p !== null && Number.isFinite(p.xM) && Number.isFinite(p.yM), 'position', '{xM, yM} in metres')
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
    case 'send':
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(isInt(o.seq, 0, 2 ** 48), 'seq', 'a sequence number') ??
        need(isInt(o.src, 0, 0xffff), 'src', 'a mesh address') ??
        need(isInt(o.dst, 0, 0xffff), 'dst', 'a mesh address')
      );
    case 'retune':
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(o.channel === null || isInt(o.channel, 1, 14), 'channel', 'a channel number or null') ??
        need(isInt(o.overheadUs, 0, 10_000_000), 'overheadUs', '0..10000000 µs')
      );
    case 'detach':
      return need(isId(o.st), 'st', 'a station id');
    case 'rx':
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(isInt(o.src, 0, 0xffff), 'src', 'a mesh address') ??
        need(isInt(o.dst, 0, 0xffff), 'dst', 'a mesh address') ??
        need(isInt(o.atUs, 0, Number.MAX_SAFE_INTEGER), 'atUs', 'a time')
      );
    case 'sent': {
      const oc = o.outcome as Record<string, unknown> | undefined;
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(isInt(o.seq, 0, 2 ** 48), 'seq', 'a sequence number') ??
        need(typeof oc === 'object' && oc !== null && typeof oc.ok === 'boolean', 'outcome', 'a send outcome')
      );
    }
    case 'attempt':
      return (
        need(isId(o.st), 'st', 'a station id') ??
        need(isInt(o.seq, 0, 2 ** 48), 'seq', 'a sequence number') ??
        need(isInt(o.attempts, 0, 1000), 'attempts', 'a count')
      );
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
