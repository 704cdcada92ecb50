import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendFcs, crc16PlcpBits, crc32, fcsMatches } from '../../radio/phy/dsss/crc.js';
import { HEADER_BITS, lengthMicros, parsePlcpHeader, ppduBits, SYNC_BITS } from '../../radio/phy/dsss/plcp.js';
import { Descrambler, Scrambler } from '../../radio/phy/dsss/scrambler.js';
import { Rng } from '../../src/core/rng.js';

const bitsOf = (s: string): Uint8Array => Uint8Array.from(s.replaceAll(' ', ''), (c) => Number(c));
const stringOf = (bits: Uint8Array): string => Array.from(bits).join('');

/**
 * The standard's worked example (IEEE 802.11-2016 16.2.3.7): SIGNAL, SERVICE
 * and LENGTH of a 1 Mb/s DBPSK PPDU of 192 us (24 octets), leftmost bit first
 * in time, and the CRC-16 it gives.
 */
const EXAMPLE_FIELDS = '0101 0000 0000 0000 0000 0011 0000 0000';
const EXAMPLE_CRC = '0101 1011 0101 0111';

test('CRC-16 of the standard example header', () => {
  const crc = crc16PlcpBits(bitsOf(EXAMPLE_FIELDS), 0, 32);
  const sent = Array.from({ length: 16 }, (_, k) => (crc >>> (15 - k)) & 1).join('');
  assert.equal(sent, EXAMPLE_CRC.replaceAll(' ', ''));
});

test('CRC-32 check value and the FCS little-endian at the end', () => {
  const msg = new TextEncoder().encode('123456789');
  assert.equal(crc32(msg), 0xcbf43926);
  const psdu = appendFcs(msg);
  assert.deepEqual(Array.from(psdu.subarray(9)), [0x26, 0x39, 0xf4, 0xcb]);
  assert.ok(fcsMatches(psdu));
  psdu[3]! ^= 0x10;
  assert.ok(!fcsMatches(psdu));
  assert.ok(!fcsMatches(new Uint8Array(3)));
  assert.ok(fcsMatches(appendFcs(new Uint8Array(0))));
});

test('the long preamble seed: the first scrambled SYNC bits, and a period of 127', () => {
  const s = new Scrambler();
  const sync = new Uint8Array(2 * 127).fill(1);
  s.bits(sync);
  // By hand from 16.2.4: Z1..Z7 = 1101100, s = 1 ^ Z4 ^ Z7 shifting into Z1.
  assert.equal(stringOf(sync.subarray(0, 7)), '0111111');
  // x^7 + x^4 + 1 is primitive: the scrambled ones repeat after 127 bits, not before.
  assert.deepEqual(sync.subarray(127), sync.subarray(0, 127));
  for (let period = 1; period < 127; period++) {
    if (127 % period === 0) assert.notDeepEqual(sync.subarray(period, period + 127 - period), sync.subarray(0, 127 - period));
  }
});

test('scrambler and descrambler round trip, in pieces, from any seed', () => {
  const rng = Rng.fromSeed(3);
  for (const seed of [0, 0x1b, 0x7f, 0x55]) {
    const data = Uint8Array.from({ length: 1000 }, () => rng.int(0, 1));
    const air = data.slice();
    const s = new Scrambler(seed);
    s.bits(air.subarray(0, 333));
    s.bits(air.subarray(333));
    const d = new Descrambler();
    const back = air.map((b) => d.bit(b));
    // Self-synchronising: right from the 8th bit whatever the seed was.
    assert.deepEqual(back.subarray(7), data.subarray(7));
  }
});

test('descrambler resynchronises 7 bits after a channel error, with 3 errors out', () => {
  const rng = Rng.fromSeed(4);
  const data = Uint8Array.from({ length: 200 }, () => rng.int(0, 1));
  const air = data.slice();
  new Scrambler().bits(air);
  air[100]! ^= 1;
  const d = new Descrambler();
  const back = air.map((b) => d.bit(b));
  const wrong = [...back.keys()].filter((i) => i >= 7 && back[i] !== data[i]);
  assert.deepEqual(wrong, [100, 104, 107]);
});

test('PLCP: the header of a 24-byte PSDU at 1 Mb/s is the standard example', () => {
  const bits = ppduBits(new Uint8Array(24), 1);
  assert.equal(stringOf(bits.subarray(0, SYNC_BITS)), '1'.repeat(SYNC_BITS));
  // SFD 0xF3A0 LSB first.
  assert.equal(stringOf(bits.subarray(SYNC_BITS, SYNC_BITS + 16)), '0000010111001111');
  const header = bits.subarray(SYNC_BITS + 16, SYNC_BITS + 16 + HEADER_BITS);
  assert.equal(stringOf(header), (EXAMPLE_FIELDS + EXAMPLE_CRC).replaceAll(' ', ''));
  const parsed = parsePlcpHeader(header, 0);
  assert.deepEqual(parsed, { ok: true, header: { rateMbps: 1, service: 0, lengthUs: 192, psduBytes: 24 } });
});

test('PLCP: SIGNAL, LENGTH and the PSDU bits at 2 Mb/s', () => {
  assert.equal(lengthMicros(100, 2), 400);
  assert.equal(lengthMicros(100, 1), 800);
  const bits = ppduBits(Uint8Array.of(0x01, 0x80, 0, 0), 2, 0x04);
  const parsed = parsePlcpHeader(bits, SYNC_BITS + 16);
  assert.deepEqual(parsed, { ok: true, header: { rateMbps: 2, service: 0x04, lengthUs: 16, psduBytes: 4 } });
  // PSDU bytes LSB first.
  assert.equal(stringOf(bits.subarray(192, 208)), '1000000000000001');
});

/** Header bits with the given fields and a correct CRC-16. */
function header(signal: number, service: number, lengthUs: number): Uint8Array {
  const bits = new Uint8Array(HEADER_BITS);
  for (let k = 0; k < 8; k++) bits[k] = (signal >>> k) & 1;
  for (let k = 0; k < 8; k++) bits[8 + k] = (service >>> k) & 1;
  for (let k = 0; k < 16; k++) bits[16 + k] = (lengthUs >>> k) & 1;
  const crc = crc16PlcpBits(bits, 0, 32);
  for (let k = 0; k < 16; k++) bits[32 + k] = (crc >>> (15 - k)) & 1;
  return bits;
}

test('PLCP header faults by cause: CRC first, then SIGNAL, then LENGTH', () => {
  const good = header(0x0a, 0, 800);
  assert.equal(parsePlcpHeader(good, 0).ok, true);
  for (let k = 0; k < HEADER_BITS; k++) {
    const bad = good.slice();
    bad[k]! ^= 1;
    assert.deepEqual(parsePlcpHeader(bad, 0), { ok: false, fault: 'headerCrc' }, `bit ${k}`);
  }
  assert.deepEqual(parsePlcpHeader(header(0x37, 0, 800), 0), { ok: false, fault: 'badSignal' });
  assert.deepEqual(parsePlcpHeader(header(0x6e, 0, 800), 0), { ok: false, fault: 'badSignal' });
  // Not whole octets, shorter than the FCS, longer than aPSDUMaxLength.
  assert.deepEqual(parsePlcpHeader(header(0x0a, 0, 801), 0), { ok: false, fault: 'badLength' });
  assert.deepEqual(parsePlcpHeader(header(0x14, 0, 402), 0), { ok: false, fault: 'badLength' });
  assert.deepEqual(parsePlcpHeader(header(0x0a, 0, 24), 0), { ok: false, fault: 'badLength' });
  assert.deepEqual(parsePlcpHeader(header(0x14, 0, 4 * 4096), 0), { ok: false, fault: 'badLength' });
  assert.equal(parsePlcpHeader(header(0x14, 0, 4 * 4095), 0).ok, true);
});
