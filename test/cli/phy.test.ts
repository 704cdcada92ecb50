import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cogmesh } from '../support/cli.js';
import { hasTshark, MALFORMED, tsharkFields } from '../support/tshark.js';

/**
 * `cogmesh phy`: frames the DSSS transmitter writes into a SigMF recording
 * come back out of it through the receiver, byte for byte, and as a pcapng
 * that Wireshark dissects as 802.11 with good FCSs.
 */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-phy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Decoded {
  frames: Array<{ atUs: number; centerHz: number; rateMbps: number; bytes: number; fcsOk: boolean; cfoHz: number; psduHex: string }>;
  counters: Record<string, number>;
}

for (const [rate, sps] of [
  [1, 1],
  [2, 2],
] as const) {
  test(`phy tx then phy decode: 12 frames at ${rate} Mb/s, ${sps} sample(s) per chip, a carrier offset and a sample clock offset, every one back byte for byte, and tshark reads them`, async () => {
    const base = join(dir, `r${rate}s${sps}`);
    // Two radios' carriers apart: +40 kHz, -60 kHz.
    const cfo = rate === 1 ? '40000' : '-60000';
    // And their sample clocks: +-20 ppm.
    const ppm = rate === 1 ? '20' : '-20';
    const args = ['--frames', '12', '--bytes', '300', '--rate', String(rate), '--sps', String(sps), '--channel', '11', '--cfo-hz', cfo, '--ppm', ppm, '--json'];
    const tx = cogmesh('phy', 'tx', '--out', base, ...args);
    assert.equal(tx.code, 0, tx.err);
    const sent = JSON.parse(tx.out) as { frames: number; sampleRateHz: number; centerHz: number; frameBytes: number };
    assert.deepEqual([sent.frames, sent.sampleRateHz, sent.centerHz, sent.frameBytes], [12, 11e6 * sps, 2462e6, 24 + 8 + 300]);

    const pcap = join(dir, `r${rate}s${sps}.pcapng`);
    const dec = cogmesh('phy', 'decode', `${base}.sigmf-meta`, '--pcap', pcap, '--json');
    assert.equal(dec.code, 0, dec.err);
    const r = JSON.parse(dec.out) as Decoded;
    assert.equal(r.frames.length, 12);
    r.frames.forEach((f, k) => {
      assert.equal(f.fcsOk, true);
      assert.equal(f.rateMbps, rate);
      assert.equal(f.centerHz, 2462e6);
      assert.equal(f.bytes, 332 + 4, 'the MAC frame and its FCS');
      assert.ok(Math.abs(f.cfoHz - Number(cfo)) < 2000, `the carrier offset estimated: ${f.cfoHz} Hz`);
      // The pattern: after the 802.11 header (24) and LLC/SNAP (8), the frame number as 4 bytes, then a counter.
      const payload = f.psduHex.slice(64, 64 + 2 * 300);
      assert.equal(payload.slice(0, 8), k.toString(16).padStart(8, '0'), `frame ${k} in order`);
      assert.equal(payload.slice(8, 10), ((k + 4) & 0xff).toString(16).padStart(2, '0'));
    });
    assert.ok(r.frames.every((f, k) => k === 0 || f.atUs > r.frames[k - 1]!.atUs));
    assert.equal(r.counters.fcs, 0);

    if (!hasTshark) return;
    const rows = tsharkFields(
      pcap,
      ['wlan.fc.type_subtype', 'wlan.sa', 'wlan.da', 'wlan.fcs.status', 'llc.type', 'wlan_radio.data_rate', 'wlan_radio.frequency'],
      undefined,
      ['wlan.check_checksum:TRUE'],
    );
    assert.equal(rows.length, 12);
    for (const row of rows) assert.deepEqual(row, ['0x0020', '02:00:00:00:00:01', 'ff:ff:ff:ff:ff:ff', '1', '0x88b6', String(rate), '2462']);
    assert.deepEqual(tsharkFields(pcap, ['frame.number'], MALFORMED), [], 'nothing malformed');
  });
}

for (const rate of [20e6, 25e6]) {
  test(`phy tx --sample-rate ${rate} then phy decode: shaped straight to a front-end's rate and resampled back, every frame byte for byte`, () => {
    const base = join(dir, `at${rate}`);
    const tx = cogmesh('phy', 'tx', '--out', base, '--frames', '5', '--bytes', '200', '--rate', '2', '--sample-rate', String(rate), '--ebn0', '20', '--json');
    assert.equal(tx.code, 0, tx.err);
    const sent = JSON.parse(tx.out) as { sampleRateHz: number; shape: string; resampledFromHz: number };
    assert.deepEqual([sent.sampleRateHz, sent.shape, sent.resampledFromHz], [rate, 'rc', 11e6], 'the chips shaped straight to the rate');
    const dec = cogmesh('phy', 'decode', `${base}.sigmf-meta`, '--json');
    assert.equal(dec.code, 0, dec.err);
    const r = JSON.parse(dec.out) as Decoded & { sampleRateHz: number; resampledToHz: number };
    assert.deepEqual([r.sampleRateHz, r.resampledToHz], [rate, 22e6]);
    assert.equal(r.frames.length, 5);
    r.frames.forEach((f, k) => {
      assert.equal(f.fcsOk, true);
      assert.equal(f.psduHex.slice(64, 72), k.toString(16).padStart(8, '0'), `frame ${k} in order`);
    });
    assert.match(cogmesh('phy', 'decode', `${base}.sigmf-meta`).out, /resampled to 22/);
    // Rectangular chips: made at 22 Msample/s and resampled.
    const rect = cogmesh('phy', 'tx', '--out', `${base}r`, '--frames', '3', '--sample-rate', String(rate), '--shape', 'rect', '--ebn0', '20', '--json');
    assert.equal(rect.code, 0, rect.err);
    assert.equal((JSON.parse(rect.out) as { resampledFromHz: number }).resampledFromHz, 22e6);
    const back = JSON.parse(cogmesh('phy', 'decode', `${base}r.sigmf-meta`, '--json').out) as Decoded;
    assert.deepEqual(
      back.frames.map((f) => f.fcsOk),
      [true, true, true],
    );
  });
}

test('phy decode reports what it could not decode by cause, and frames whose FCS failed', () => {
  const base = join(dir, 'noisy');
  // At an Eb/N0 of 8 dB (DBPSK: a bit error in about 1100) most headers pass their CRC and most 1500-byte PSDUs fail their FCS.
  const tx = cogmesh('phy', 'tx', '--out', base, '--frames', '6', '--bytes', '1500', '--rate', '1', '--sps', '1', '--ebn0', '8', '--json');
  assert.equal(tx.code, 0, tx.err);
  const dec = cogmesh('phy', 'decode', `${base}.sigmf-meta`);
  assert.equal(dec.code, 0, dec.err);
  assert.match(dec.out, /detections \d+; not decoded: no SFD \d+, header CRC \d+, bad SIGNAL \d+, bad LENGTH \d+, truncated \d+; FCS failed \d+/);
  const json = JSON.parse(cogmesh('phy', 'decode', `${base}.sigmf-meta`, '--json').out) as Decoded;
  assert.equal(json.counters.fcs, json.frames.filter((f) => !f.fcsOk).length, 'each frame with a bad FCS is counted');
  assert.ok(json.counters.fcs > 0, 'at 8 dB some frames fail their FCS');
  const theory = (JSON.parse(tx.out) as { perTheory: number }).perTheory;
  assert.ok(theory > 0.9, `theory agrees: PER ${theory} for 1532-byte frames at 8 dB`);
});

test('phy refuses what it cannot do with one line and exit code 2', () => {
  const rec = join(dir, 'band');
  assert.equal(cogmesh('record', '--out', rec, '--pn', '6:0.5', '--seconds', '0.05').code, 0);
  for (const [args, says] of [
    [['phy', 'decode', `${rec}.sigmf-meta`], /11 or 22 Msample\/s/],
    [['phy', 'decode', join(dir, 'nothing.sigmf-meta')], /nothing/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--rate', '5.5'], /--rate: "5.5" is not 1 or 2/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--sps', '4'], /--sps/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--ppm', '2000'], /--ppm/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--sample-rate', '10000000'], /--sample-rate: .*above 16.5 MHz/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--sample-rate', '22000001'], /--sample-rate: no resampler/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--shape', 'gauss'], /--shape/],
    [['phy', 'tx', '--out', join(dir, 'x'), '--bytes', '3000'], /--bytes/],
    [['phy', 'tx', '--out', join(dir, 'no', 'such', 'x')], /--out/],
  ] as const) {
    const r = cogmesh(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, says);
    assert.equal(r.err.trim().split('\n').length, 1, `one line: ${r.err}`);
    assert.match(r.err, /^cogmesh: /);
  }
});
