import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { appendFcs } from '../../radio/phy/dsss/crc.js';
import { encodeDot11Ack, encodeDot11Data, MESH_ETHERTYPE, parseDot11 } from '../../src/wire/dot11.js';
import { BROADCAST } from '../../src/wire/mesh.js';
import { LINKTYPE_IEEE802_11_RADIOTAP, PcapngWriter } from '../../src/wire/pcapng.js';
import { radiotapHeader } from '../../src/wire/radiotap.js';
import { hasTshark, tsharkFields } from '../support/tshark.js';

describe('802.11 frames of the mesh', () => {
  test('a data frame carries src, dst, sequence, retry and duration, and reads back the same', () => {
    const payload = Uint8Array.from([1, 2, 3, 250]);
    const f = encodeDot11Data({ src: 0x0102, dst: 7, payload, seq: 4095, retry: true, durationUs: 314 });
    assert.equal(f.length, 24 + 8 + 4);
    assert.deepEqual([f[0], f[1]], [0x08, 0x08], 'data, Retry');
    assert.deepEqual([...f.subarray(4, 10)], [2, 0, 0, 0, 0, 7], 'addr1: the receiver');
    assert.deepEqual([...f.subarray(10, 16)], [2, 0, 0, 0, 1, 2], 'addr2: the transmitter');
    assert.equal(f[22]! | (f[23]! << 8), 4095 << 4, 'sequence number above fragment 0');
    const r = parseDot11(f);
    assert.ok(r.ok);
    assert.deepEqual(
      { ...r.frame, payload: [...(r.frame.kind === 'data' ? r.frame.payload : [])] },
      {
        kind: 'data',
        src: 0x0102,
        dst: 7,
        seq: 4095,
        retry: true,
        durationUs: 314,
        payload: [1, 2, 3, 250],
      },
    );
    const b = parseDot11(encodeDot11Data({ src: 3, dst: BROADCAST, payload: new Uint8Array(0) }));
    assert.ok(b.ok && b.frame.kind === 'data' && b.frame.dst === BROADCAST && b.frame.payload.length === 0);
  });

  test('an ACK names its receiver', () => {
    const a = encodeDot11Ack(9, 0);
    assert.deepEqual([...a], [0xd4, 0, 0, 0, 2, 0, 0, 0, 0, 9]);
    assert.deepEqual(parseDot11(a), { ok: true, frame: { kind: 'ack', ra: 9, durationUs: 0 } });
  });

  test('refuses bad fields by name', () => {
    assert.throws(() => encodeDot11Data({ src: 1, dst: 2, payload: new Uint8Array(1), seq: 4096 }), /seq/);
    assert.throws(() => encodeDot11Data({ src: 1, dst: 2, payload: new Uint8Array(1), durationUs: 40000 }), /durationUs/);
    assert.throws(() => encodeDot11Data({ src: 1, dst: 2, payload: new Uint8Array(1), ethertype: 0x10 }), /ethertype/);
    assert.throws(() => encodeDot11Ack(0x10000), /address/);
  });

  test('a frame that is not the mesh is named by cause, never thrown', () => {
    const good = encodeDot11Data({ src: 1, dst: 2, payload: Uint8Array.from([5]) });
    const mod = (at: number, v: number): Uint8Array => {
      const c = good.slice();
      c[at] = v;
      return c;
    };
    assert.deepEqual(parseDot11(good.subarray(0, 5)), { ok: false, fault: 'short' });
    assert.deepEqual(parseDot11(good.subarray(0, 30)), { ok: false, fault: 'short' });
    assert.deepEqual(parseDot11(mod(0, 0x80)), { ok: false, fault: 'type' }, 'a beacon');
    assert.deepEqual(parseDot11(mod(1, 0x01)), { ok: false, fault: 'foreign' }, 'ToDS');
    assert.deepEqual(parseDot11(mod(10, 0x00)), { ok: false, fault: 'foreign' }, 'a universally administered sender');
    assert.deepEqual(parseDot11(mod(19, 0x01)), { ok: false, fault: 'foreign' }, 'another BSSID');
    assert.deepEqual(parseDot11(mod(22, 0x01)), { ok: false, fault: 'foreign' }, 'a fragment');
    assert.deepEqual(parseDot11(mod(24, 0x42)), { ok: false, fault: 'ethertype' }, 'no SNAP');
    assert.deepEqual(parseDot11(mod(31, 0x00)), { ok: false, fault: 'ethertype' });
    assert.deepEqual(parseDot11(good, MESH_ETHERTYPE + 1), { ok: false, fault: 'ethertype' });
    for (let i = 0; i < 2000; i++) {
      const junk = new Uint8Array((i * 7) % 60);
      for (let k = 0; k < junk.length; k++) junk[k] = (i * 31 + k * 17) & 0xff;
      assert.doesNotThrow(() => parseDot11(junk));
    }
  });

  test('tshark dissects data frames and ACKs, with their FCS, as 802.11', { skip: !hasTshark && 'tshark is not installed' }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'cm-dot11-'));
    try {
      const chunks: Uint8Array[] = [];
      const w = new PcapngWriter((b) => void chunks.push(b));
      w.addInterface({ name: 'phy', linkType: LINKTYPE_IEEE802_11_RADIOTAP });
      const rt = radiotapHeader({ freqMHz: 2437, rateBps: 2e6, ofdm: false }, { fcs: true });
      const put = (frame: Uint8Array, at: number): void => {
        const psdu = appendFcs(frame);
        const out = new Uint8Array(rt.length + psdu.length);
        out.set(rt);
        out.set(psdu, rt.length);
        w.packet(0, at, out);
      };
      put(encodeDot11Data({ src: 1, dst: 2, payload: Uint8Array.from([0x10, 0, 1]), seq: 77, retry: true, durationUs: 314 }), 1000);
      put(encodeDot11Ack(1), 2000);
      const file = join(dir, 'f.pcapng');
      writeFileSync(file, new Uint8Array(Buffer.concat(chunks)));
      const rows = tsharkFields(
        file,
        ['wlan.fc.type_subtype', 'wlan.ra', 'wlan.ta', 'wlan.seq', 'wlan.fc.retry', 'wlan.duration', 'wlan.fcs.status', 'llc.type'],
        undefined,
        ['wlan.check_checksum:TRUE'],
      );
      assert.equal(rows.length, 2);
      const [data, ack] = rows as [string[], string[]];
      assert.deepEqual([...data.slice(0, 4), data[5]], ['0x0020', '02:00:00:00:00:02', '02:00:00:00:00:01', '77', '314']);
      // tshark prints a flag as True or as 1, by version.
      assert.match(data[4]!, /^(1|True)$/, 'Retry');
      assert.match(data[6]!, /^(1|Good)$/, 'FCS checked and good');
      assert.equal(Number(data[7]), MESH_ETHERTYPE);
      assert.equal(ack[0], '0x001d', 'ACK');
      assert.equal(ack[1], '02:00:00:00:00:01');
      assert.match(ack[6]!, /^(1|Good)$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
