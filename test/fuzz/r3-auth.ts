import type { Rng } from '../../src/core/rng.js';
import { parseControl } from '../../src/wire/codec.js';
import { BROADCAST, type NodeAddr } from '../../src/wire/mesh.js';
import { AUTH_MAC_BYTES, AUTH_TRAILER_BYTES, R3Auth, type AuthFailure, type R3Keys } from '../../src/wire/r3-auth.js';
import { concat } from '../wire/openflow/helpers.js';
import { mutateBytes } from './mutate.js';
import type { FuzzTarget } from './targets.js';

/**
 * The `r3-auth` fuzz target: R3's authentication trailer (src/wire/r3-auth.ts)
 * as a router meets it, R3Auth.open on what the radio received, then
 * parseControl on what passed (src/router/router.ts, receive).
 *
 * Every input is opened by a fresh receiver that first accepted one message
 * of the sender's current boot, so that the replay rule has something to
 * refuse. Besides the harness's rule (nothing throws), three invariants make
 * the target able to fail:
 * - a message that verifies is byte for byte one the sender sealed for this
 *   source and destination: no mutation forges a message;
 * - opening the same input again gives the same refusal, or `replay` after
 *   it passed;
 * - every open is counted once, under `verified` or one failure reason, and
 *   the verdict is one of the counted AuthFailure reasons.
 * A breach throws, which the harness reports as an escape.
 */

/** What the target opens with: R3Auth, or (in the target's own test) a receiver broken on purpose. */
export type Receiver = Pick<R3Auth, 'open' | 'counters'>;

const FAILURES: ReadonlySet<string> = new Set<AuthFailure>(['no-trailer', 'malformed-trailer', 'unknown-key', 'bad-mac', 'replay']);
/** The counters an open moves: all but `signed`. */
const OPEN_COUNTERS = ['verified', 'noTrailer', 'malformedTrailer', 'unknownKey', 'badMac', 'replay'] as const;

const SRC: NodeAddr = 7;
const DST: NodeAddr = BROADCAST;
/** The sender's current boot (index); it sealed the priming message at counter PRIMING_PC. */
const BOOT = 1000;

const fixedKey = (id: number): Uint8Array => Uint8Array.from({ length: 32 }, (_x, i) => (id * 37 + i * 11) & 0xff);
const keySet = (ids: number[], sendKeyId: number): R3Keys => ({ keys: new Map(ids.map((id) => [id, fixedKey(id)])), sendKeyId });

/** The receiver holds a key (3) that no seed is signed with; the senders' key 4 it does not hold. */
const RECEIVER_KEYS = keySet([1, 2, 3], 1);

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/**
 * The target over `bodies` (encoded control messages). `receiver` makes the
 * receiver each input is opened by (R3Auth by default).
 */
export function r3AuthTarget(bodies: readonly Uint8Array[], receiver: (keys: R3Keys) => Receiver = (keys) => new R3Auth(keys, 0)): FuzzTarget<Uint8Array> {
  const sealAll = (auth: R3Auth, src: NodeAddr, dst: NodeAddr): Uint8Array[] => bodies.map((b) => auth.seal(b, src, dst));
  const now = new R3Auth(keySet([1, 2], 1), BOOT);
  // The current boot: key 1 before the priming message (replays once it is accepted), key 2 after it (newer).
  const older = sealAll(now, SRC, DST);
  const priming = now.seal(bodies[0]!, SRC, DST);
  now.setKeys(keySet([1, 2], 2));
  const newer = sealAll(now, SRC, DST);
  // An earlier boot (replays) and a later one (newer).
  const earlierBoot = sealAll(new R3Auth(keySet([1], 1), BOOT - 1), SRC, DST);
  const laterBoot = sealAll(new R3Auth(keySet([1], 1), BOOT + 1), SRC, DST);
  /** Every message sealed for SRC to DST: the only ones that may verify. */
  const genuine = new Set([...older, priming, ...newer, ...earlierBoot, ...laterBoot].map(hex));
  // Sealed right, but for other addresses (refused: the MAC covers them), or with a key the receiver lacks.
  const other = new R3Auth(keySet([1, 4], 1), BOOT);
  const elsewhere = [...sealAll(other, SRC + 1, DST), ...sealAll(other, SRC, 3)];
  other.setKeys(keySet([1, 4], 4));
  const unknownKey = sealAll(other, SRC, DST);
  const seeds = [...older, ...newer, ...earlierBoot, ...laterBoot, ...elsewhere, ...unknownKey];

  const opens = (rx: Receiver): number => OPEN_COUNTERS.reduce((s, k) => s + rx.counters[k]!, 0);

  return {
    name: 'r3-auth',
    kind: 'bytes',
    doc:
      'R3Auth.open (src/wire/r3-auth.ts), then parseControl on what passes, as a router receives R3 control messages; seeds sealed under fixed keys ' +
      '(older, newer, other boots, other addresses, a key the receiver lacks), half of the mutations aimed at the trailer. Never throws: a refusal ' +
      'is a counted AuthFailure reason or a parse error (WireError). Escapes too: a message that verifies without being one sealed (a forgery), a ' +
      'verdict that changes when the input is opened again, counters that do not add up.',
    seeds: () => [...seeds],
    mutate: (rng, seed, other) => {
      const b = mutateTrailer(rng, seed, other);
      return rng.next() < 0.25 ? mutateBytes(rng, b, other) : b;
    },
    feed(b) {
      const rx = receiver(RECEIVER_KEYS);
      if (!rx.open(priming, SRC, DST).ok) throw new Error('r3-auth: the priming message did not verify');
      const first = rx.open(b, SRC, DST);
      const again = rx.open(b, SRC, DST);
      if (opens(rx) !== 3 || rx.counters.signed !== 0) throw new Error(`r3-auth: 3 opens counted as ${JSON.stringify(rx.counters)}`);
      if (!first.ok) {
        if (!FAILURES.has(first.error)) throw new Error(`r3-auth: the verdict "${String(first.error)}" is no counted reason`);
        if (again.ok || again.error !== first.error) throw new Error(`r3-auth: refused as ${first.error}, then ${again.ok ? 'verified' : again.error}`);
        return first.error;
      }
      if (!genuine.has(hex(b))) throw new Error('r3-auth: a message that was never sealed verified (a forgery)');
      if (again.ok || again.error !== 'replay')
        throw new Error(`r3-auth: a verified message opened again gave ${again.ok ? 'verified' : again.error}, not replay`);
      const m = parseControl(first.value);
      return m.ok ? undefined : m.error.code;
    },
  };
}

/** Edge values of the trailer's u32 fields and of a key id. */
const U32_EDGES = [0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
const KEY_IDS = [0, 1, 2, 3, 4, 0x7fff, 0x8000, 0xffff];

/** One mutation aimed at the trailer (key id u16, index u32, counter u32, MAC, tag) of a sealed message `b`. */
export function mutateTrailer(rng: Rng, b: Uint8Array, other: Uint8Array): Uint8Array {
  const out = Uint8Array.from(b);
  const at = b.length - AUTH_TRAILER_BYTES;
  if (at < 0) return out;
  const view = new DataView(out.buffer);
  const u32 = (o: number): void => {
    const v = view.getUint32(o);
    view.setUint32(o, rng.next() < 0.5 ? U32_EDGES[rng.int(0, U32_EDGES.length - 1)]! : (v + rng.int(-3, 3)) >>> 0);
  };
  const otherAt = other.length - AUTH_TRAILER_BYTES;
  switch (rng.int(0, 9)) {
    case 0: // the key id
      view.setUint16(at, rng.next() < 0.8 ? KEY_IDS[rng.int(0, KEY_IDS.length - 1)]! : rng.int(0, 0xffff));
      return out;
    case 1: // the index (boot)
      u32(at + 2);
      return out;
    case 2: // the packet counter
      u32(at + 6);
      return out;
    case 3: // one bit of the MAC
      out[at + 10 + rng.int(0, AUTH_MAC_BYTES - 1)]! ^= 1 << rng.int(0, 7);
      return out;
    case 4: {
      // a run of the MAC zeroed, set to 0xff, or copied from another message's MAC
      const o = at + 10 + rng.int(0, AUTH_MAC_BYTES - 1);
      const end = Math.min(at + 10 + AUTH_MAC_BYTES, o + rng.int(1, AUTH_MAC_BYTES));
      const how = rng.int(0, 2);
      if (how === 2 && otherAt >= 0) out.set(other.subarray(otherAt + 10 + (o - at - 10), otherAt + 10 + (end - at - 10)), o);
      else out.fill(how === 0 ? 0 : 0xff, o, end);
      return out;
    }
    case 5: // this body under another message's whole trailer
      return otherAt < 0 ? out : concat(b.subarray(0, at), other.subarray(otherAt));
    case 6: // one bit of the body, the trailer intact
      if (at > 0) out[rng.int(0, at - 1)]! ^= 1 << rng.int(0, 7);
      return out;
    case 7: // cut inside the trailer or just before or after it
      return b.slice(0, Math.max(0, b.length - rng.int(1, AUTH_TRAILER_BYTES + 2)));
    case 8: // the tag changed, or the message cut before it and a tag put back
      return rng.next() < 0.5 ? ((out[out.length - 1] = rng.int(0, 255)), out) : concat(b.subarray(0, rng.int(0, b.length - 1)), b.subarray(b.length - 1));
    default: // a second trailer after the first (a message sealed twice, or a trailer appended to a sealed one)
      return concat(b, otherAt < 0 ? other : other.subarray(otherAt));
  }
}
