import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modulateFrame, ppduSamples, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { DsssReceiver, zeroDsssRxCounters } from '../../radio/phy/dsss/receiver.js';
import { Rng } from '../../src/core/rng.js';
import { turnCarrier } from '../../radio/phy/dsss/channel.js';

const RATES: DsssRate[] = [1, 2];
const SPCS: SamplesPerChip[] = [1, 2];
/** Noise per I and Q component under the unit-power signal: 17 dB SNR per sample. */
const SIGMA = 0.1;

function randomBytes(rng: Rng, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => rng.int(0, 255));
}

/** `frames` at the given sample offsets in a noise buffer of `total` complex samples. */
function buffer(rng: Rng, total: number, placed: { at: number; iq: Float32Array }[], sigma = SIGMA): Float32Array {
  const buf = new Float32Array(2 * total);
  rng.fillNormal(buf, sigma);
  for (const { at, iq } of placed) for (let i = 0; i < iq.length; i++) buf[2 * at + i]! += iq[i]!;
  return buf;
}

const ZERO_COUNTERS = zeroDsssRxCounters();

test('transmitter: unit power, length, Barker chips at 1 and 2 samples per chip', () => {
  for (const rateMbps of RATES) {
    for (const samplesPerChip of SPCS) {
      const iq = modulateFrame(new Uint8Array(10), { rateMbps, samplesPerChip });
      assert.equal(iq.length, 2 * ppduSamples(14, rateMbps, samplesPerChip));
      // 192 symbols of preamble and header, then 8 * 14 / rate.
      assert.equal(iq.length / 2, (192 + (8 * 14) / rateMbps) * 11 * samplesPerChip);
      for (let i = 0; i < iq.length; i += 2) assert.equal(iq[i]! ** 2 + iq[i + 1]! ** 2, 1);
      // The first symbol: phase 0 turned by the first scrambled SYNC bit (0), Barker chips.
      const chips = Array.from({ length: 11 }, (_, c) => iq[2 * c * samplesPerChip]);
      assert.deepEqual(chips, [1, -1, 1, 1, -1, 1, 1, 1, -1, -1, -1]);
    }
  }
  assert.throws(() => modulateFrame(new Uint8Array(4092), { rateMbps: 1, samplesPerChip: 1 }), /frame length/);
  assert.throws(() => modulateFrame(new Uint8Array(1), { rateMbps: 3 as DsssRate, samplesPerChip: 1 }), /rateMbps/);
  assert.throws(() => new DsssReceiver({ samplesPerChip: 4 as SamplesPerChip }), /samplesPerChip/);
});

test('loopback byte for byte: 1 and 2 Mb/s, 0 to 2304 bytes, 1 and 2 samples per chip, unknown offset', () => {
  const rng = Rng.fromSeed(11);
  for (const samplesPerChip of SPCS) {
    for (const rateMbps of RATES) {
      for (const len of [0, 1, 14, 100, 1500, 2304]) {
        const frame = randomBytes(rng, len);
        const iq = modulateFrame(frame, { rateMbps, samplesPerChip });
        const lead = rng.int(300, 3000);
        const rx = new DsssReceiver({ samplesPerChip });
        const got = rx.receive(buffer(rng, lead + iq.length / 2 + 500, [{ at: lead, iq }]));
        const what = `${rateMbps} Mb/s, ${len} bytes, ${samplesPerChip} samples per chip, at ${lead}`;
        assert.equal(got.length, 1, what);
        const f = got[0]!;
        assert.deepEqual(f.frame, frame, what);
        assert.equal(f.psdu.length, len + 4);
        assert.equal(f.fcsOk, true, what);
        assert.equal(f.rateMbps, rateMbps);
        assert.equal(f.startSample, lead, what);
        // Unit power over 2 * 0.01 of noise: 17 dB per sample, level 0.09 dB.
        assert.ok(Math.abs(f.snrDb - 17) < 1.5, `${what}: snr ${f.snrDb}`);
        assert.ok(Math.abs(f.levelDb - 10 * Math.log10(1.02)) < 0.3, `${what}: level ${f.levelDb}`);
        assert.deepEqual(rx.counters, { ...ZERO_COUNTERS, detections: 1, frames: 1 }, what);
      }
    }
  }
});

test('a carrier offset up to +-100 kHz is estimated and taken out: frames byte for byte at both rates', () => {
  const rng = Rng.fromSeed(12);
  for (const samplesPerChip of SPCS) {
    for (const rateMbps of RATES) {
      for (const cfoHz of [100e3, 50e3, -20e3, -50e3, -100e3]) {
        const frame = randomBytes(rng, 500);
        const iq = modulateFrame(frame, { rateMbps, samplesPerChip });
        const buf = buffer(rng, 1000 + iq.length / 2, [{ at: 700, iq }]);
        turnCarrier(buf, cfoHz, 11e6 * samplesPerChip);
        const got = new DsssReceiver({ samplesPerChip }).receive(buf);
        const what = `${rateMbps} Mb/s, ${samplesPerChip} samples per chip, ${cfoHz / 1e3} kHz`;
        assert.equal(got.length, 1, what);
        assert.deepEqual(got[0]!.frame, frame, what);
        assert.ok(Math.abs(got[0]!.cfoHz - cfoHz) < 2e3, `${what}: estimated ${got[0]!.cfoHz.toFixed(0)} Hz`);
      }
    }
  }
});

test('several frames in one buffer, back to back with gaps of noise, all found in order', () => {
  const rng = Rng.fromSeed(12);
  for (const samplesPerChip of SPCS) {
    const placed: { at: number; iq: Float32Array }[] = [];
    const sent: { frame: Uint8Array; rateMbps: DsssRate }[] = [];
    let at = rng.int(0, 50);
    for (let k = 0; k < 12; k++) {
      const rateMbps = RATES[k % 2]!;
      const frame = randomBytes(rng, rng.int(0, 300));
      const iq = modulateFrame(frame, { rateMbps, samplesPerChip });
      placed.push({ at, iq });
      sent.push({ frame, rateMbps });
      // Gaps from a few symbols to a few hundred.
      at += iq.length / 2 + rng.int(20, 4000);
    }
    const rx = new DsssReceiver({ samplesPerChip });
    const got = rx.receive(buffer(rng, at, placed));
    assert.equal(got.length, sent.length);
    got.forEach((f, k) => {
      assert.deepEqual(f.frame, sent[k]!.frame);
      assert.equal(f.rateMbps, sent[k]!.rateMbps);
      assert.equal(f.startSample, placed[k]!.at);
      assert.ok(f.fcsOk);
    });
    assert.equal(rx.counters.frames, 12);
    assert.equal(rx.counters.noSfd + rx.counters.headerCrc + rx.counters.fcs, 0);
  }
});

/**
 * A buffer with one 1-sample-per-chip frame whose symbol `symbol` (0 is the
 * first SYNC symbol, 144 the first header symbol) is turned by pi: the two
 * differential decisions on either side of it flip.
 */
function withFlippedSymbol(rng: Rng, frame: Uint8Array, rateMbps: DsssRate, symbol: number): Float32Array {
  const iq = modulateFrame(frame, { rateMbps, samplesPerChip: 1 });
  for (let i = 22 * symbol; i < 22 * (symbol + 1); i++) iq[i] = -iq[i]!;
  return buffer(rng, 1000 + iq.length / 2 + 1000, [{ at: 1000, iq }]);
}

test('a flipped symbol in the header is caught by the CRC-16: counted, no frame', () => {
  const rng = Rng.fromSeed(13);
  for (const rateMbps of RATES) {
    // Header symbols are 144 to 191; the last one alone flips one bit only.
    for (const symbol of [144, 150, 160, 175, 191]) {
      const rx = new DsssReceiver({ samplesPerChip: 1 });
      const got = rx.receive(withFlippedSymbol(rng, randomBytes(rng, 60), rateMbps, symbol));
      assert.equal(got.length, 0, `symbol ${symbol}`);
      assert.equal(rx.counters.headerCrc, 1, `symbol ${symbol}`);
      assert.equal(rx.counters.frames, 0);
    }
  }
});

test('a flipped symbol in the PSDU is caught by the FCS: frame reported with fcsOk false', () => {
  const rng = Rng.fromSeed(14);
  for (const rateMbps of RATES) {
    const frame = randomBytes(rng, 100);
    const rx = new DsssReceiver({ samplesPerChip: 1 });
    const got = rx.receive(withFlippedSymbol(rng, frame, rateMbps, 192 + 37));
    assert.equal(got.length, 1);
    assert.equal(got[0]!.fcsOk, false);
    assert.notDeepEqual(got[0]!.frame, frame);
    assert.equal(rx.counters.fcs, 1);
    assert.equal(rx.counters.frames, 1);
  }
});

test('a frame cut by the end of the stream is counted truncated when the stream is flushed', () => {
  const rng = Rng.fromSeed(15);
  const iq = modulateFrame(randomBytes(rng, 200), { rateMbps: 2, samplesPerChip: 1 });
  const cut = iq.subarray(0, iq.length - 2 * 11 * 50);
  const rx = new DsssReceiver({ samplesPerChip: 1 });
  assert.deepEqual(rx.receive(buffer(rng, 500 + cut.length / 2, [{ at: 500, iq: cut }])), []);
  // The receiver waits for the rest of the frame until the stream ends.
  assert.equal(rx.counters.truncated, 0);
  assert.deepEqual(rx.flush(), []);
  assert.equal(rx.counters.truncated, 1);
});

test('noise, silence and malformed input: no frames, no throw', () => {
  const rng = Rng.fromSeed(16);
  for (const samplesPerChip of SPCS) {
    const rx = new DsssReceiver({ samplesPerChip });
    assert.deepEqual(rx.receive(buffer(rng, 200_000, [])), []);
    assert.deepEqual(rx.receive(new Float32Array(100_000)), []);
    assert.deepEqual(rx.receive(new Float32Array(0)), []);
    assert.deepEqual(rx.receive(new Float32Array(7)), []);
    assert.deepEqual(rx.receive(new Float32Array(50_001).fill(Number.NaN)), []);
    assert.deepEqual(rx.receive(new Float32Array(50_000).fill(Number.POSITIVE_INFINITY)), []);
    assert.deepEqual(rx.counters, ZERO_COUNTERS);
  }
  // Barker symbols of random signs, so no SFD: detected, counted once as noSfd.
  const rx = new DsssReceiver({ samplesPerChip: 1 });
  const chips = new Float32Array(2 * 11 * 2000);
  const barker = [1, -1, 1, 1, -1, 1, 1, 1, -1, -1, -1];
  for (let s = 0; s < 2000; s++) {
    const sign = rng.int(0, 1) * 2 - 1;
    for (let c = 0; c < 11; c++) chips[2 * (11 * s + c)] = barker[c]! * sign;
  }
  assert.deepEqual(rx.receive(buffer(rng, 30_000, [{ at: 1000, iq: chips }])), []);
  assert.equal(rx.counters.noSfd, 1);
  assert.equal(rx.counters.frames, 0);
});
