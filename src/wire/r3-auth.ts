import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { err, ok, type Result } from '../core/result.js';
import { allocBytes } from './bytes.js';
import type { NodeAddr } from './mesh.js';

/**
 * The authentication trailer of the control messages on R3, after Babel's
 * MAC authentication (RFC 8967): every HELLO, RREQ, RREP, RERR and PREFIX a
 * router sends ends with a key id, the sender's index and packet counter,
 * and an HMAC-SHA-256 over the message, the frame's source and destination
 * addresses and those fields. A receiver drops what it cannot verify with
 * one of the keys in force, and what is not newer (index, then counter)
 * than the last message it accepted from that sender. Authentication is hop
 * by hop, as in RFC 8967: each router signs what it sends, relayed copies
 * included, so a router holding a key is trusted and one without cannot
 * take part in the routing at all. docs/wire.md gives the layout.
 *
 * The index is the sender's boot time in seconds (the host passes it in),
 * not a random value confirmed by a challenge round trip (RFC 8967's
 * Challenge Request and Reply): a router that restarts comes back with a larger index, which every
 * neighbour that kept its state takes at once as newer, and messages of its
 * earlier boots stay refused. What this leaves open is a receiver that has
 * itself restarted: it holds no state, so it would take one replayed message
 * from a sender's earlier boot before the sender's next real one; RFC 8967's
 * challenge closes that and is not done here.
 */

/** The last byte of an authenticated control message. */
export const AUTH_TRAILER_TAG = 0xa8;
/** HMAC-SHA-256 (RFC 2104), untruncated. */
export const AUTH_MAC_BYTES = 32;
/** key id u16, index u32, packet counter u32, the MAC, the tag. */
export const AUTH_TRAILER_BYTES = 2 + 4 + 4 + AUTH_MAC_BYTES + 1;
/** A trailer follows at least a message's type and version bytes. */
const MIN_BODY_BYTES = 2;

/** Why a control message was dropped before it was parsed. */
export type AuthFailure = 'no-trailer' | 'malformed-trailer' | 'unknown-key' | 'bad-mac' | 'replay';

/** The keys in force: a key id (1-65535) to its bytes, and the one this router signs with. */
export interface R3Keys {
  keys: ReadonlyMap<number, Uint8Array>;
  sendKeyId: number;
}

/** A key set as it may be shown: the ids in order and the send key's, never a key's bytes. */
export function keysShown(k: R3Keys): { sendKeyId: number; ids: number[] } {
  return { sendKeyId: k.sendKeyId, ids: [...k.keys.keys()].sort((a, b) => a - b) };
}

export interface AuthCounters {
  [name: string]: number;
  /** Messages signed and sent. */
  signed: number;
  /** Messages that passed. */
  verified: number;
  noTrailer: number;
  malformedTrailer: number;
  unknownKey: number;
  badMac: number;
  replay: number;
}

const COUNTER_OF: Record<AuthFailure, 'noTrailer' | 'malformedTrailer' | 'unknownKey' | 'badMac' | 'replay'> = {
  'no-trailer': 'noTrailer',
  'malformed-trailer': 'malformedTrailer',
  'unknown-key': 'unknownKey',
  'bad-mac': 'badMac',
  replay: 'replay',
};

/**
 * One router's signing and checking of R3's control messages. Sans-IO: the
 * index comes in, nothing reads a clock; HMAC from node:crypto.
 */
export class R3Auth {
  readonly counters: AuthCounters = { signed: 0, verified: 0, noTrailer: 0, malformedTrailer: 0, unknownKey: 0, badMac: 0, replay: 0 };
  private index: number;
  private pc = 0;
  /** Per sender: the (index, packet counter) of the last message accepted from it. */
  private readonly last = new Map<NodeAddr, { index: number; pc: number }>();
  private readonly scratch = new Uint8Array(4);

  /** `index`: this boot's index, u32 (a daemon's boot time in seconds). */
  constructor(
    private keys: R3Keys,
    index: number,
  ) {
    if (!keys.keys.has(keys.sendKeyId)) throw new RangeError(`R3 authentication: the send key id ${keys.sendKeyId} is not among the keys`);
    this.index = index >>> 0;
  }

  /** Takes a new key set (rotation): the sender's index and counter and the replay state stay. */
  setKeys(keys: R3Keys): void {
    if (!keys.keys.has(keys.sendKeyId)) throw new RangeError(`R3 authentication: the send key id ${keys.sendKeyId} is not among the keys`);
    this.keys = keys;
  }

  /** Which keys are in force (their ids, never their bytes) and the one this router signs with. */
  get keysInForce(): { sendKeyId: number; ids: number[] } {
    return keysShown(this.keys);
  }

  /** `body` (an encoded control message) with its trailer, as `src` sends it to `dst`. */
  seal(body: Uint8Array, src: NodeAddr, dst: NodeAddr): Uint8Array {
    if (this.pc === 0xffffffff) {
      // The counter is spent: a larger index makes the next messages newer all the same.
      this.index = (this.index + 1) >>> 0;
      this.pc = 0;
    }
    this.pc++;
    // From the slabs (wire/bytes.ts), as every packet: no backing store of its own to make.
    const out = allocBytes(body.length + AUTH_TRAILER_BYTES);
    out.set(body);
    const t = new DataView(out.buffer, out.byteOffset + body.length, AUTH_TRAILER_BYTES);
    t.setUint16(0, this.keys.sendKeyId);
    t.setUint32(2, this.index);
    t.setUint32(6, this.pc);
    out.set(this.mac(this.keys.keys.get(this.keys.sendKeyId)!, out, body.length, src, dst), body.length + 10);
    out[out.length - 1] = AUTH_TRAILER_TAG;
    this.counters.signed++;
    return out;
  }

  /**
   * The control message inside `packet` as the frame from `src` to `dst`
   * carried it, or why it is dropped (counted). A message that passes
   * becomes the newest accepted from `src`.
   */
  open(packet: Uint8Array, src: NodeAddr, dst: NodeAddr): Result<Uint8Array, AuthFailure> {
    const r = this.check(packet, src, dst);
    if (r.ok) this.counters.verified++;
    else this.counters[COUNTER_OF[r.error]]++;
    return r;
  }

  private check(packet: Uint8Array, src: NodeAddr, dst: NodeAddr): Result<Uint8Array, AuthFailure> {
    if (packet.length === 0 || packet[packet.length - 1] !== AUTH_TRAILER_TAG) return err('no-trailer');
    if (packet.length < MIN_BODY_BYTES + AUTH_TRAILER_BYTES) return err('malformed-trailer');
    const at = packet.length - AUTH_TRAILER_BYTES;
    const t = new DataView(packet.buffer, packet.byteOffset + at, AUTH_TRAILER_BYTES);
    const keyId = t.getUint16(0);
    if (keyId === 0) return err('malformed-trailer');
    const key = this.keys.keys.get(keyId);
    if (!key) return err('unknown-key');
    const want = this.mac(key, packet, at, src, dst);
    const got = packet.subarray(at + 10, at + 10 + AUTH_MAC_BYTES);
    if (!timingSafeEqual(want, got)) return err('bad-mac');
    const index = t.getUint32(2);
    const pc = t.getUint32(6);
    const prev = this.last.get(src);
    if (prev && (index < prev.index || (index === prev.index && pc <= prev.pc))) return err('replay');
    this.last.set(src, { index, pc });
    return ok(packet.subarray(0, at));
  }

  /** HMAC-SHA-256 over src, dst (u16 each), the body and the trailer's key id, index and counter (the `at` bytes and 10 after). */
  private mac(key: Uint8Array, packet: Uint8Array, at: number, src: NodeAddr, dst: NodeAddr): Uint8Array {
    const memo = macMemoOf(key);
    const len = at + 10;
    const slot = (src * 31 + packet[at + 9]! + (packet[at + 8]! << 8)) & (MAC_MEMO_SLOTS - 1);
    const known = memo.find(slot, packet, len, src, dst);
    if (known !== undefined) return known;
    const h = createHmac('sha256', key);
    const s = this.scratch;
    s[0] = src >>> 8;
    s[1] = src & 0xff;
    s[2] = dst >>> 8;
    s[3] = dst & 0xff;
    h.update(s);
    h.update(packet.subarray(0, len));
    const d = h.digest();
    const mac = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
    memo.keep(slot, packet, len, src, dst, mac);
    return mac;
  }
}

/** Slots of a MacMemo, and the most bytes a slot keeps (a longer message is not kept). */
const MAC_MEMO_SLOTS = 1024;
const MAC_MEMO_SLOT_BYTES = 512;

/**
 * MACs computed lately with one key, in slots chosen by the sender and the
 * packet counter's low bits. A message is signed once and checked by every
 * neighbour that hears it; where those routers share the key's bytes (the
 * simulator's routers share one key set) a check finds the MAC here instead
 * of computing HMAC again. A slot answers only for the same addresses and
 * the same bytes, compared in full, so what it gives is what HMAC gives.
 * The bytes are copied into one table made once (keys are never changed in
 * place: a new key set brings new arrays).
 */
class MacMemo {
  private readonly src = new Int32Array(MAC_MEMO_SLOTS).fill(-1);
  private readonly dst = new Int32Array(MAC_MEMO_SLOTS);
  private readonly len = new Int32Array(MAC_MEMO_SLOTS);
  private readonly bytes = new Uint8Array(MAC_MEMO_SLOTS * MAC_MEMO_SLOT_BYTES);
  private readonly macs: Array<Uint8Array | undefined> = new Array<Uint8Array | undefined>(MAC_MEMO_SLOTS).fill(undefined);

  find(slot: number, packet: Uint8Array, len: number, src: NodeAddr, dst: NodeAddr): Uint8Array | undefined {
    if (this.src[slot] !== src || this.dst[slot] !== dst || this.len[slot] !== len) return undefined;
    const bytes = this.bytes;
    const at = slot * MAC_MEMO_SLOT_BYTES;
    for (let i = 0; i < len; i++) if (bytes[at + i] !== packet[i]) return undefined;
    return this.macs[slot];
  }

  keep(slot: number, packet: Uint8Array, len: number, src: NodeAddr, dst: NodeAddr, mac: Uint8Array): void {
    if (len > MAC_MEMO_SLOT_BYTES) return;
    this.src[slot] = src;
    this.dst[slot] = dst;
    this.len[slot] = len;
    this.bytes.set(packet.subarray(0, len), slot * MAC_MEMO_SLOT_BYTES);
    this.macs[slot] = mac;
  }
}

const macMemos = new WeakMap<Uint8Array, MacMemo>();

function macMemoOf(key: Uint8Array): MacMemo {
  let memo = macMemos.get(key);
  if (memo === undefined) {
    memo = new MacMemo();
    macMemos.set(key, memo);
  }
  return memo;
}

/** Bytes of a key that `keysFromSeed` makes. */
const DERIVED_KEY_BYTES = 32;

/**
 * Two keys (ids 1 and 2, signing with 1) derived from `seed` by SHA-256: the
 * simulator's keys, the same for every router of a run, made without files.
 * Not secret (anyone knowing the seed has them): for simulation only.
 */
export function keysFromSeed(seed: number): R3Keys {
  const key = (id: number): Uint8Array => {
    const d = createHash('sha256').update(`cogmesh r3 key ${id} seed ${seed}`).digest();
    return new Uint8Array(d.buffer, d.byteOffset, DERIVED_KEY_BYTES);
  };
  return { keys: new Map([1, 2].map((id) => [id, key(id)])), sendKeyId: 1 };
}
