import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeControl } from '../../src/wire/codec.js';
import { BROADCAST, type Hello, type Rrep } from '../../src/wire/mesh.js';
import { AUTH_TRAILER_BYTES, AUTH_TRAILER_TAG, keysFromSeed, R3Auth, type R3Keys } from '../../src/wire/r3-auth.js';

const hello: Hello = { type: 'hello', src: 1, seq: 7, r1Channel: 6, workload: [{ channel: 6, w: 0.5, windows: 3 }], neighbours: [] };
const rrep: Rrep = { type: 'rrep', repair: false, ackRequired: false, hopCount: 1, dst: 3, dstSeq: 9, orig: 0, lifetimeMs: 3000, lastHop: 3, pathCost: 1 };

const both = keysFromSeed(1);
const only = (keys: R3Keys, id: number, sendKeyId = id): R3Keys => ({ keys: new Map([[id, keys.keys.get(id)!]]), sendKeyId });

describe('R3 authentication trailer', () => {
  test('a sealed message opens to the very bytes sent, once', () => {
    const a = new R3Auth(both, 100);
    const b = new R3Auth(both, 200);
    const body = encodeControl(hello);
    const packet = a.seal(body, 1, BROADCAST);
    assert.equal(packet.length, body.length + AUTH_TRAILER_BYTES);
    assert.equal(packet.at(-1), AUTH_TRAILER_TAG);
    const r = b.open(packet, 1, BROADCAST);
    assert.ok(r.ok);
    assert.deepEqual(r.value, body);
    assert.deepEqual(b.open(packet, 1, BROADCAST), { ok: false, error: 'replay' }, 'the same message again');
    assert.equal(a.counters.signed, 1);
    assert.equal(b.counters.verified, 1);
    assert.equal(b.counters.replay, 1);
  });

  test('each failure is dropped and counted under its reason', () => {
    const a = new R3Auth(both, 1);
    const b = new R3Auth(only(both, 1), 1);
    const body = encodeControl(rrep);
    assert.deepEqual(b.open(body, 9, 0), { ok: false, error: 'no-trailer' }, 'a message without a trailer');
    assert.deepEqual(b.open(Uint8Array.of(2, 1, AUTH_TRAILER_TAG), 9, 0), { ok: false, error: 'malformed-trailer' }, 'too short for a trailer');
    const zeroKey = a.seal(body, 2, 0);
    zeroKey.fill(0, body.length, body.length + 2);
    assert.deepEqual(b.open(zeroKey, 2, 0), { ok: false, error: 'malformed-trailer' }, 'key id 0');
    const c = new R3Auth(both, 1);
    c.setKeys({ keys: both.keys, sendKeyId: 2 });
    assert.deepEqual(b.open(c.seal(body, 2, 0), 2, 0), { ok: false, error: 'unknown-key' }, 'signed with a key the receiver does not hold');
    const flipped = a.seal(body, 2, 0);
    flipped[6]! ^= 0x01;
    assert.deepEqual(b.open(flipped, 2, 0), { ok: false, error: 'bad-mac' }, 'one bit of the message changed');
    assert.deepEqual(b.open(a.seal(body, 2, 0), 5, 0), { ok: false, error: 'bad-mac' }, 'replayed under another source address');
    assert.deepEqual(b.open(a.seal(body, 2, 0), 2, BROADCAST), { ok: false, error: 'bad-mac' }, 'sent unicast, replayed as a broadcast');
    const forger = new R3Auth(keysFromSeed(2), 1);
    assert.deepEqual(b.open(forger.seal(body, 2, 0), 2, 0), { ok: false, error: 'bad-mac' }, 'signed with another key under the same id');
    assert.deepEqual(
      {
        noTrailer: b.counters.noTrailer,
        malformed: b.counters.malformedTrailer,
        unknown: b.counters.unknownKey,
        bad: b.counters.badMac,
        verified: b.counters.verified,
      },
      { noTrailer: 1, malformed: 2, unknown: 1, bad: 4, verified: 0 },
    );
  });

  test('replay protection: per sender, by index then packet counter; a restarted sender comes back with a larger index', () => {
    const rx = new R3Auth(both, 1);
    const body = encodeControl(hello);
    const s1 = new R3Auth(both, 1000);
    const first = s1.seal(body, 1, BROADCAST);
    const second = s1.seal(body, 1, BROADCAST);
    assert.ok(rx.open(second, 1, BROADCAST).ok);
    assert.deepEqual(rx.open(first, 1, BROADCAST), { ok: false, error: 'replay' }, 'an older counter after a newer one');
    // Another sender's counters are its own.
    assert.ok(rx.open(new R3Auth(both, 5).seal(body, 2, BROADCAST), 2, BROADCAST).ok);
    // Router 1 restarts: a later boot time, its counter from 1 again.
    const s1again = new R3Auth(both, 1010);
    assert.ok(rx.open(s1again.seal(body, 1, BROADCAST), 1, BROADCAST).ok, 'the restarted sender is taken at once');
    assert.deepEqual(rx.open(s1.seal(body, 1, BROADCAST), 1, BROADCAST), { ok: false, error: 'replay' }, 'the earlier boot is over');
  });

  test('a forgery does not move the replay state, so honest messages keep passing', () => {
    const rx = new R3Auth(both, 1);
    const honest = new R3Auth(both, 50);
    const body = encodeControl(hello);
    const forged = new R3Auth(keysFromSeed(3), 0xffffffff).seal(body, 1, BROADCAST);
    assert.deepEqual(rx.open(forged, 1, BROADCAST), { ok: false, error: 'bad-mac' });
    assert.ok(rx.open(honest.seal(body, 1, BROADCAST), 1, BROADCAST).ok);
  });

  test('rotation: with two keys in force either signs, and a key taken out of force is refused', () => {
    const body = encodeControl(rrep);
    const old = new R3Auth({ keys: both.keys, sendKeyId: 1 }, 1);
    const renewed = new R3Auth({ keys: both.keys, sendKeyId: 2 }, 1);
    const rx = new R3Auth(both, 1);
    assert.ok(rx.open(old.seal(body, 4, 0), 4, 0).ok);
    assert.ok(rx.open(renewed.seal(body, 5, 0), 5, 0).ok);
    rx.setKeys(only(both, 2));
    assert.deepEqual(rx.open(old.seal(body, 4, 0), 4, 0), { ok: false, error: 'unknown-key' });
    assert.ok(rx.open(renewed.seal(body, 5, 0), 5, 0).ok);
    assert.throws(() => rx.setKeys({ keys: both.keys, sendKeyId: 3 }), /send key id 3 is not among the keys/);
  });

  test('the counter running out moves to the next index, still newer', () => {
    const s = new R3Auth(both, 7);
    const rx = new R3Auth(both, 1);
    const body = encodeControl(hello);
    (s as unknown as { pc: number }).pc = 0xfffffffe;
    assert.ok(rx.open(s.seal(body, 1, BROADCAST), 1, BROADCAST).ok);
    const next = s.seal(body, 1, BROADCAST);
    const t = new DataView(next.buffer, next.byteOffset + next.length - AUTH_TRAILER_BYTES, AUTH_TRAILER_BYTES);
    assert.deepEqual([t.getUint32(2), t.getUint32(6)], [8, 1]);
    assert.ok(rx.open(next, 1, BROADCAST).ok);
  });

  test('keys made from a seed are the same for the same seed, and differ for another', () => {
    assert.deepEqual(keysFromSeed(4), keysFromSeed(4));
    assert.notDeepEqual(keysFromSeed(4).keys.get(1), keysFromSeed(5).keys.get(1));
    assert.notDeepEqual(keysFromSeed(4).keys.get(1), keysFromSeed(4).keys.get(2));
  });
  test('routers sharing a key set check a message each, and a change to its bytes or addresses still fails', () => {
    const a = new R3Auth(both, 5);
    const body = encodeControl(hello);
    const packet = a.seal(body, 1, BROADCAST);
    for (let i = 0; i < 3; i++) assert.ok(new R3Auth(both, 5).open(packet, 1, BROADCAST).ok, `neighbour ${i}`);
    const flipped = packet.slice();
    flipped[3] = flipped[3]! ^ 1;
    assert.deepEqual(new R3Auth(both, 5).open(flipped, 1, BROADCAST), { ok: false, error: 'bad-mac' }, 'one bit of the body changed');
    assert.deepEqual(new R3Auth(both, 5).open(packet, 2, BROADCAST), { ok: false, error: 'bad-mac' }, 'another source');
    assert.deepEqual(new R3Auth(both, 5).open(packet, 1, 4), { ok: false, error: 'bad-mac' }, 'another destination');
    const other = keysFromSeed(2);
    assert.deepEqual(new R3Auth(other, 5).open(packet, 1, BROADCAST), { ok: false, error: 'bad-mac' }, 'another key');
    assert.ok(new R3Auth(both, 5).open(packet, 1, BROADCAST).ok, 'the message itself, after the failures');
  });
});
