import type { Micros } from '../core/time.js';
import type { VnfEvent, VnfPacket } from './types.js';

/**
 * The records a VNF sandbox's host and worker exchange through their rings
 * (src/core/ring.ts): a call host to worker, its reply worker to host.
 * Packets are binary; the rare parts (lifecycle events, a listing) are
 * JSON inside the reply. All numbers little-endian.
 *
 *     call     u8 op | u8 flags (1: spin for the next call) | 2 pad | u32 id | f64 now
 *              | packet (intercept only)
 *     reply    u32 id | u8 result | u8 has deadline | 2 pad | f64 deadline
 *              | u32 packets | u32 events' JSON length | u32 result's JSON length | 4 pad
 *              | packets | events' JSON | result's JSON
 *     packet   u8 proto (0 tcp, 1 udp) | u8 has (1 tag, 2 hops) | u8 src length | u8 dst length
 *              | u32 bytes' length | f64 tag | f64 hops | src | dst | bytes
 *
 * A reply's result is 0 none, 1 false, 2 true, 3 the JSON that follows.
 */

export type SandboxOp = 'intercept' | 'tick' | 'list' | 'stop';

export type SandboxCall =
  | { id: number; op: 'intercept'; pkt: VnfPacket; now: Micros }
  | { id: number; op: 'tick'; now: Micros }
  | { id: number; op: 'list' }
  | { id: number; op: 'stop'; now: Micros };

/** A call without its id (which the host gives it). */
export type SandboxRequest = SandboxCall extends infer C ? (C extends unknown ? Omit<C, 'id'> : never) : never;

export interface SandboxReply {
  id: number;
  result?: unknown;
  error?: string;
  packets: VnfPacket[];
  events: VnfEvent[];
  nextDeadline: Micros | undefined;
}

const OPS: readonly SandboxOp[] = ['intercept', 'tick', 'list', 'stop'];
const CALL_HEAD = 16;
const REPLY_HEAD = 32;
const PACKET_HEAD = 24;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Builds records in a buffer it reuses (grown as needed): a record is valid until the next one. */
export class RecordWriter {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);

  /** Call `id`; `spin`: the worker may spin for the next one (else it sleeps at once). */
  call(c: SandboxRequest, id: number, spin = true): Uint8Array {
    const size = CALL_HEAD + (c.op === 'intercept' ? packetSize(c.pkt) : 0);
    this.fit(size);
    const v = this.view;
    v.setUint8(0, OPS.indexOf(c.op));
    v.setUint8(1, spin ? 1 : 0);
    v.setUint16(2, 0);
    v.setUint32(4, id, true);
    v.setFloat64(8, 'now' in c ? c.now : 0, true);
    if (c.op === 'intercept') this.packet(c.pkt, CALL_HEAD);
    return this.buf.subarray(0, size);
  }

  reply(r: SandboxReply): Uint8Array {
    const events = r.events.length > 0 ? utf8.encode(JSON.stringify(r.events)) : undefined;
    const kind = r.result === undefined ? 0 : r.result === false ? 1 : r.result === true ? 2 : 3;
    const result = kind === 3 ? utf8.encode(JSON.stringify(r.result)) : undefined;
    let size = REPLY_HEAD + (events?.length ?? 0) + (result?.length ?? 0);
    for (const p of r.packets) size += packetSize(p);
    this.fit(size);
    const v = this.view;
    v.setUint32(0, r.id, true);
    v.setUint8(4, kind);
    v.setUint8(5, r.nextDeadline === undefined ? 0 : 1);
    v.setUint16(6, 0);
    v.setFloat64(8, r.nextDeadline ?? 0, true);
    v.setUint32(16, r.packets.length, true);
    v.setUint32(20, events?.length ?? 0, true);
    v.setUint32(24, result?.length ?? 0, true);
    v.setUint32(28, 0);
    let at = REPLY_HEAD;
    for (const p of r.packets) at = this.packet(p, at);
    if (events) this.buf.set(events, at);
    at += events?.length ?? 0;
    if (result) this.buf.set(result, at);
    return this.buf.subarray(0, size);
  }

  private packet(p: VnfPacket, at: number): number {
    if (p.src.length > 255 || p.dst.length > 255) throw new RangeError(`sandbox: an address of ${Math.max(p.src.length, p.dst.length)} bytes`);
    const v = this.view;
    v.setUint8(at, p.proto === 'udp' ? 1 : 0);
    v.setUint8(at + 1, (p.tag === undefined ? 0 : 1) | (p.hops === undefined ? 0 : 2));
    v.setUint8(at + 2, p.src.length);
    v.setUint8(at + 3, p.dst.length);
    v.setUint32(at + 4, p.bytes.length, true);
    v.setFloat64(at + 8, p.tag ?? 0, true);
    v.setFloat64(at + 16, p.hops ?? 0, true);
    at += PACKET_HEAD;
    this.buf.set(p.src, at);
    at += p.src.length;
    this.buf.set(p.dst, at);
    at += p.dst.length;
    this.buf.set(p.bytes, at);
    return at + p.bytes.length;
  }

  private fit(size: number): void {
    if (size <= this.buf.length) return;
    let n = this.buf.length;
    while (n < size) n *= 2;
    this.buf = new Uint8Array(n);
    this.view = new DataView(this.buf.buffer);
  }
}

const packetSize = (p: VnfPacket): number => PACKET_HEAD + p.src.length + p.dst.length + p.bytes.length;

/*
 * Reading goes byte by byte, not through a DataView: a reply is often
 * smaller than 64 bytes, and asking so small an array for its buffer makes
 * V8 move it off the heap, which costs more than the decoding.
 */
const u32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) + b[o + 3]! * 0x100_0000;
const f64Scratch = new Float64Array(1);
const f64Bytes = new Uint8Array(f64Scratch.buffer);
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
function f64(b: Uint8Array, o: number): number {
  for (let i = 0; i < 8; i++) f64Bytes[LITTLE_ENDIAN ? i : 7 - i] = b[o + i]!;
  return f64Scratch[0]!;
}

/** Whether the host asks the worker to spin for the call after this one. */
export const callSpins = (rec: Uint8Array): boolean => (rec[1]! & 1) !== 0;

/** A call as the worker reads it. The packet's arrays are views of the record, which is the worker's own. */
export function readCall(rec: Uint8Array): SandboxCall {
  const op = OPS[rec[0]!];
  const id = u32(rec, 4);
  const now = f64(rec, 8);
  switch (op) {
    case 'intercept':
      return { id, op, now, pkt: readPacket(rec, CALL_HEAD).pkt };
    case 'tick':
    case 'stop':
      return { id, op, now };
    case 'list':
      return { id, op };
    default:
      throw new RangeError(`sandbox: a call with op ${rec[0]}`);
  }
}

/** A reply as the host reads it. Its packets' arrays are views of the record, which is the host's own. */
export function readReply(rec: Uint8Array): SandboxReply {
  const kind = rec[4]!;
  const count = u32(rec, 16);
  const eventsLength = u32(rec, 20);
  const resultLength = u32(rec, 24);
  const packets: VnfPacket[] = [];
  let at = REPLY_HEAD;
  for (let i = 0; i < count; i++) {
    const p = readPacket(rec, at);
    packets.push(p.pkt);
    at = p.end;
  }
  const events = eventsLength > 0 ? (JSON.parse(fromUtf8.decode(rec.subarray(at, at + eventsLength))) as VnfEvent[]) : [];
  at += eventsLength;
  const result =
    kind === 1 ? false : kind === 2 ? true : kind === 3 ? (JSON.parse(fromUtf8.decode(rec.subarray(at, at + resultLength))) as unknown) : undefined;
  return { id: u32(rec, 0), result, packets, events, nextDeadline: rec[5] === 1 ? f64(rec, 8) : undefined };
}

function readPacket(rec: Uint8Array, at: number): { pkt: VnfPacket; end: number } {
  const has = rec[at + 1]!;
  const srcLength = rec[at + 2]!;
  const dstLength = rec[at + 3]!;
  const length = u32(rec, at + 4);
  const src = at + PACKET_HEAD;
  const dst = src + srcLength;
  const bytes = dst + dstLength;
  const pkt: VnfPacket = {
    proto: rec[at] === 1 ? 'udp' : 'tcp',
    src: rec.subarray(src, dst),
    dst: rec.subarray(dst, bytes),
    bytes: rec.subarray(bytes, bytes + length),
  };
  if (has & 1) pkt.tag = f64(rec, at + 8);
  if (has & 2) pkt.hops = f64(rec, at + 16);
  return { pkt, end: bytes + length };
}
