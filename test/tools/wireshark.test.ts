import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { encodeControl, encodeData } from '../../src/wire/codec.js';
import { ipPacket } from '../../src/wire/ip.js';
import { BROADCAST, type ControlMsg } from '../../src/wire/mesh.js';
import { LINKTYPE_IEEE802_11_RADIOTAP, PcapngWriter } from '../../src/wire/pcapng.js';
import { radiotapFrame } from '../../src/wire/radiotap.js';
import { keysFromSeed, R3Auth } from '../../src/wire/r3-auth.js';
import { hasTshark, MALFORMED, tsharkFields } from '../support/tshark.js';

const RADIO = { freqMHz: 2437, rateBps: 11e6, ofdm: false, signalDbm: -61 };
/** A UDP header alone: ports 1000 to 2000, length 8, no checksum. */
const UDP_HEADER = Uint8Array.from([0x03, 0xe8, 0x07, 0xd0, 0, 8, 0, 0]);
const v4 = (...b: number[]): Uint8Array => Uint8Array.from(b);
const v6 = (last: number): Uint8Array => Uint8Array.from([0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, last]);

/**
 * Packets the simulator's scenarios do not send (PREFIX, a host's IP
 * packets in DATA) or should never send (malformed ones), made with the
 * codec into a capture of their own, through tshark with the dissector.
 */
describe('the Wireshark dissector', { skip: hasTshark ? false : 'tshark is not installed' }, () => {
  const auth = new R3Auth(keysFromSeed(1), 7);
  const signed = (m: ControlMsg, src: number, dst: number): Uint8Array => auth.seal(encodeControl(m), src, dst);
  const prefix: ControlMsg = {
    type: 'prefix',
    orig: 3,
    seq: 12,
    hopCount: 1,
    ttl: 9,
    lifetimeS: 15,
    prefixes: [
      { version: 4, bytes: v4(10, 0, 4, 0), length: 24 },
      { version: 6, bytes: Uint8Array.from([0xfd, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0]), length: 64 },
    ],
  };
  const rerr: ControlMsg = { type: 'rerr', noDelete: true, unreachable: [{ dst: 5, dstSeq: 44 }] };
  const dataHeader = { src: 1, dst: 2, ttl: 8, flow: 99, seq: 3 } as const;
  // Frame number (1-based) to its packet: the last two are malformed.
  const packets: Array<[src: number, dst: number, bytes: Uint8Array]> = [
    [3, BROADCAST, signed(prefix, 3, BROADCAST)],
    [1, 2, encodeControl(rerr)],
    [1, 2, encodeData({ ...dataHeader, proto: 'ip4' }, ipPacket(17, v4(10, 0, 1, 1), v4(10, 0, 2, 1), UDP_HEADER))],
    [1, 2, encodeData({ ...dataHeader, proto: 'ip6', label: 0x200 }, ipPacket(59, v6(1), v6(2), new Uint8Array(4)))],
    [1, 2, encodeControl({ type: 'rerr', noDelete: false, unreachable: [{ dst: 5, dstSeq: 1 }] }).subarray(0, 8)],
    [1, 2, Uint8Array.from([0x42, 1, 0, 0])],
  ];

  test('reads PREFIX with its trailer, an unsigned RERR, a host IP packet in each DATA type, and flags the malformed ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-dissector-'));
    try {
      const chunks: Uint8Array[] = [];
      const w = new PcapngWriter((b) => void chunks.push(b));
      const ifc = w.addInterface({ name: 'r1/R3', linkType: LINKTYPE_IEEE802_11_RADIOTAP });
      packets.forEach(([src, dst, bytes], i) => w.packet(ifc, 1_000_000 * (i + 1), radiotapFrame(RADIO, src, dst, bytes)));
      const file = join(dir, 'made.pcapng');
      await writeFile(file, chunks);

      const [p] = tsharkFields(
        file,
        [
          'cogmesh.prefix.orig',
          'cogmesh.prefix.ipv4',
          'cogmesh.prefix.ipv6',
          'cogmesh.prefix.length',
          'cogmesh.auth.key_id',
          'cogmesh.auth.index',
          'cogmesh.auth.tag',
        ],
        'frame.number == 1',
      );
      assert.deepEqual(p, ['3', '10.0.4.0', 'fd00:0:0:10::', '24,64', '1', '7', '0xa8']);
      const [r] = tsharkFields(file, ['cogmesh.rerr.flags.n', 'cogmesh.rerr.dst', 'cogmesh.rerr.dst_seq', 'cogmesh.auth'], 'frame.number == 2');
      assert.deepEqual(r, ['1', '5', '44', '']);
      const [d4] = tsharkFields(file, ['cogmesh.type', 'cogmesh.data.proto', 'ip.src', 'ip.dst', 'udp.dstport'], 'frame.number == 3');
      assert.equal(d4![0], '0x20');
      assert.equal(d4![1], '4');
      assert.equal(d4![2], '10.0.1.1');
      assert.equal(d4![3], '10.0.2.1');
      assert.equal(d4![4], '2000');
      const [d6] = tsharkFields(file, ['cogmesh.type', 'cogmesh.data.label', 'ipv6.src'], 'frame.number == 4');
      assert.deepEqual(d6, ['0x21', '0x000200', 'fd00::1000:1:1']);
      const [rt] = tsharkFields(
        file,
        ['radiotap.channel.freq', 'radiotap.datarate', 'radiotap.dbm_antsignal', 'wlan.da', 'wlan.sa', 'wlan.bssid'],
        'frame.number == 1',
      );
      assert.deepEqual(rt, ['2437', '11', '-61', 'ff:ff:ff:ff:ff:ff', '02:00:00:00:00:03', '02:00:00:ff:00:00']);
      // A truncated RERR and an unknown type are marked, and only they.
      assert.deepEqual(tsharkFields(file, ['frame.number'], MALFORMED), [['5'], ['6']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
