import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseFrameSources } from '../../src/cli/record.js';
import { UsageError } from '../../src/core/errors.js';
import { cogmesh } from '../support/cli.js';
import { hasTshark, MALFORMED, tsharkFields } from '../support/tshark.js';

/**
 * `cogmesh record --frames`: a mesh station sends DSSS frames on the emulated
 * band as IQ while the band is recorded; `cogmesh phy decode` finds them in
 * the recording, and tshark dissects every one as 802.11.
 */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-record-frames-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Decoded {
  frames: Array<{ atUs: number; centerHz: number; rateMbps: number; bytes: number; fcsOk: boolean; psduHex: string }>;
  counters: Record<string, number>;
}

test('frames sent on the band while it is recorded decode from the recording, and tshark dissects them', () => {
  const base = join(dir, 'band');
  // 0.1 s on channel 6 with a frame every 5 ms from 1 ms on: 20 frames; channel 1 carries frames too, which this recording does not hear.
  const rec = cogmesh(
    'record',
    '--out',
    base,
    '--seconds',
    '0.1',
    '--channels',
    '6',
    '--sample-rate',
    '11e6',
    '--frames',
    '6:5:300:2,1:5:100:1',
    '--frame-dbm',
    '-70',
    '--json',
  );
  assert.equal(rec.code, 0, rec.err);
  const r = JSON.parse(rec.out) as { sampleRateHz: number; framesSent: number };
  assert.equal(r.sampleRateHz, 11e6);
  assert.equal(r.framesSent, 40);

  const pcap = join(dir, 'band.pcapng');
  const dec = cogmesh('phy', 'decode', `${base}.sigmf-meta`, '--pcap', pcap, '--json');
  assert.equal(dec.code, 0, dec.err);
  const d = JSON.parse(dec.out) as Decoded;
  assert.equal(d.frames.length, 20, 'the frames on channel 6, and none of channel 1');
  for (const f of d.frames) {
    assert.equal(f.fcsOk, true);
    assert.equal(f.rateMbps, 2);
    assert.equal(f.centerHz, 2437e6);
    assert.equal(f.bytes, 24 + 8 + 300 + 4);
  }
  // Sent every 5 ms from 1 ms on (the channel-6 station is the first): the receiver places each within a microsecond.
  d.frames.forEach((f, k) => assert.ok(Math.abs(f.atUs - (1000 + 5000 * k)) <= 1, `frame ${k} at ${f.atUs} us`));

  if (!hasTshark) return;
  const rows = tsharkFields(pcap, ['wlan.fc.type_subtype', 'wlan.sa', 'wlan.da', 'wlan.fcs.status'], undefined, ['wlan.check_checksum:TRUE']);
  assert.equal(rows.length, 20);
  for (const row of rows) {
    assert.equal(row[0], '0x0020', 'data');
    assert.equal(row[1], '02:00:00:00:00:01');
    assert.equal(row[2], 'ff:ff:ff:ff:ff:ff');
    assert.match(row[3]!, /^(1|Good)$/);
  }
  assert.equal(tsharkFields(pcap, ['frame.number'], MALFORMED).length, 0, 'nothing malformed');
});

test('--frames is refused whole with the part that is wrong named', () => {
  assert.throws(
    () => parseFrameSources('6:5:300:3', 11),
    (e: unknown) => e instanceof UsageError && /rate 3/.test(e.message),
  );
  assert.throws(() => parseFrameSources('14:5', 11), /channel 14/);
  assert.throws(() => parseFrameSources('6:0.5', 11), /ms between frames/);
  assert.throws(() => parseFrameSources('6:5:3', 11), /payload of 3 bytes/);
  assert.throws(() => parseFrameSources('6', 11), /CH:EVERY_MS/);
  assert.deepEqual(parseFrameSources('6:5', 11), [{ channel: 6, everyMs: 5, bytes: 100, rateMbps: 2 }]);
  const bad = cogmesh('record', '--out', join(dir, 'x'), '--frames', '6:5', '--seconds', '0.01');
  assert.equal(bad.code, 2, bad.err);
  assert.match(bad.err, /--frames: DSSS frames are sent at 1 or 2 samples per chip: record at 11e6 or 22e6/);
});
