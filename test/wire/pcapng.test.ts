import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LINKTYPE_IEEE802_11_RADIOTAP, PcapngWriter } from '../../src/wire/pcapng.js';
import { CAPTURE_ETHERTYPE, meshMac, radiotapFrame } from '../../src/wire/radiotap.js';

const u32 = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const u16 = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset).getUint16(at, true);

describe('PcapngWriter', () => {
  test('writes a section header, an interface per addInterface and an enhanced packet block per packet', () => {
    const blocks: Uint8Array[] = [];
    const w = new PcapngWriter((b) => void blocks.push(b));
    assert.equal(w.addInterface({ name: 'r0/R1', linkType: LINKTYPE_IEEE802_11_RADIOTAP }), 0);
    assert.equal(w.addInterface({ name: 'r0/R3', description: 'router 0, radio R3', linkType: LINKTYPE_IEEE802_11_RADIOTAP }), 1);
    const t = 2 ** 32 + 5; // above 32 bits: the timestamp's high word counts
    w.packet(1, t, Uint8Array.from([1, 2, 3, 4, 5]));
    assert.equal(blocks.length, 4);
    for (const b of blocks) {
      assert.equal(b.length % 4, 0, 'blocks are 32-bit aligned');
      assert.equal(u32(b, 4), b.length, 'total length at the start');
      assert.equal(u32(b, b.length - 4), b.length, 'and at the end');
    }
    const [shb, idb0, , epb] = blocks as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    assert.equal(u32(shb, 0), 0x0a0d0d0a);
    assert.equal(u32(shb, 8), 0x1a2b3c4d, 'byte-order magic');
    assert.deepEqual([u16(shb, 12), u16(shb, 14)], [1, 0], 'version 1.0');
    assert.equal(u32(idb0, 0), 1);
    assert.equal(u16(idb0, 8), 127);
    // if_name (code 2, 5 bytes, padded to 8), then opt_endofopt.
    assert.deepEqual([u16(idb0, 16), u16(idb0, 18)], [2, 5]);
    assert.equal(new TextDecoder().decode(idb0.subarray(20, 25)), 'r0/R1');
    assert.equal(u32(epb, 0), 6);
    assert.equal(u32(epb, 8), 1, 'interface id');
    assert.deepEqual([u32(epb, 12), u32(epb, 16)], [1, 5], 'timestamp high and low words, µs');
    assert.deepEqual([u32(epb, 20), u32(epb, 24)], [5, 5], 'captured and original length');
    assert.deepEqual([...epb.subarray(28, 33)], [1, 2, 3, 4, 5]);
    assert.equal(epb.length, 28 + 8 + 4, 'packet padded to 8 bytes, no options');
  });

  test('refuses a packet on an interface not declared, and a negative time', () => {
    const w = new PcapngWriter(() => undefined);
    assert.throws(() => w.packet(0, 0, new Uint8Array(1)), /interfaceId/);
    w.addInterface({ name: 'x', linkType: 127 });
    assert.throws(() => w.packet(0, -1, new Uint8Array(1)), /timeUs/);
  });
});

describe('radiotapFrame', () => {
  test('radiotap (flags, rate, channel, signal), 802.11 data header, LLC/SNAP with the ethertype, then the packet', () => {
    const pkt = Uint8Array.from([0x10, 1, 0xaa]);
    const f = radiotapFrame({ freqMHz: 2412, rateBps: 2e6, ofdm: false, signalDbm: -64.4 }, 0x0102, 0xffff, pkt);
    assert.deepEqual([f[0], f[1], u16(f, 2)], [0, 0, 15]);
    assert.equal(u32(f, 4), 0x2e, 'Flags, Rate, Channel, dBm antenna signal');
    assert.deepEqual([f[8], f[9], u16(f, 10), u16(f, 12), (f[14]! << 24) >> 24], [0, 4, 2412, 0x00a0, -64]);
    const h = f.subarray(15);
    assert.deepEqual([h[0], h[1]], [0x08, 0], 'data frame, no DS bits');
    assert.deepEqual([...h.subarray(4, 10)], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert.deepEqual([...h.subarray(10, 16)], [2, 0, 0, 0, 1, 2]);
    assert.deepEqual([...h.subarray(24, 30)], [0xaa, 0xaa, 3, 0, 0, 0]);
    assert.equal((h[30]! << 8) | h[31]!, CAPTURE_ETHERTYPE);
    assert.deepEqual([...h.subarray(32)], [...pkt]);
  });

  test('a sent frame has no signal field; OFDM and the Retry flag show', () => {
    const f = radiotapFrame({ freqMHz: 2462, rateBps: 54e6, ofdm: true, retry: true }, 1, 2, new Uint8Array(0));
    assert.equal(u16(f, 2), 14);
    assert.equal(u32(f, 4), 0x0e);
    assert.deepEqual([f[9], u16(f, 12)], [108, 0x00c0]);
    assert.equal(f[14 + 1], 0x08, 'Retry');
  });

  test('maps mesh addresses to locally administered MACs and refuses what is not an address or a rate', () => {
    assert.deepEqual(meshMac(0), [2, 0, 0, 0, 0, 0]);
    assert.throws(() => meshMac(0x10000), /address/);
    assert.throws(() => radiotapFrame({ freqMHz: 2412, rateBps: 5.6e6, ofdm: false }, 1, 2, new Uint8Array(0)), /rateBps/);
  });
});
