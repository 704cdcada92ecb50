import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHIPS_PER_SYMBOL, modulateFrame, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { Rng } from '../../src/core/rng.js';
import { ebN0DbForPer, perTheory } from '../../radio/phy/dsss/theory.js';
import { turnCarrier } from '../../radio/phy/dsss/channel.js';

const FRAME_BYTES = 100;
const FRAMES_PER_BUFFER = 10;

/**
 * Noise per I and Q component for a PSDU Eb/N0 of `ebN0Db` under the
 * transmitter's unit-power samples. A bit spans 11 * samplesPerChip / rate
 * samples of unit energy, so Eb = 11 * samplesPerChip / rate; N0 is the
 * complex noise power per sample, 2 sigma^2, since the noise fills the whole
 * sampled band. The Barker despreading gain (10 log10 11) is inside Eb.
 */
function sigmaFor(ebN0Db: number, rateMbps: DsssRate, samplesPerChip: SamplesPerChip): number {
  const ebN0 = 10 ** (ebN0Db / 10);
  return Math.sqrt((CHIPS_PER_SYMBOL * samplesPerChip) / (rateMbps * 2 * ebN0));
}

/** Sends `frames` random frames of FRAME_BYTES through AWGN (and a carrier offset); the fraction not received intact. */
function measurePer(rng: Rng, rateMbps: DsssRate, samplesPerChip: SamplesPerChip, ebN0Db: number, frames: number, cfoHz = 0): number {
  const sigma = sigmaFor(ebN0Db, rateMbps, samplesPerChip);
  const rx = new DsssReceiver({ samplesPerChip });
  let intact = 0;
  // The receiver takes the buffers as one stream: where this buffer starts in it.
  let streamAt = 0;
  for (let sent = 0; sent < frames; sent += FRAMES_PER_BUFFER) {
    const payloads: Uint8Array[] = [];
    const starts: number[] = [];
    const signals: Float32Array[] = [];
    let at = rng.int(100, 400) * samplesPerChip;
    for (let k = 0; k < FRAMES_PER_BUFFER; k++) {
      const frame = Uint8Array.from({ length: FRAME_BYTES }, () => rng.int(0, 255));
      const iq = modulateFrame(frame, { rateMbps, samplesPerChip });
      payloads.push(frame);
      starts.push(at);
      signals.push(iq);
      at += iq.length / 2 + rng.int(100, 400) * samplesPerChip;
    }
    const buf = new Float32Array(2 * at);
    rng.fillNormal(buf, sigma);
    signals.forEach((iq, k) => {
      const o = 2 * starts[k]!;
      for (let i = 0; i < iq.length; i++) buf[o + i]! += iq[i]!;
    });
    if (cfoHz !== 0) turnCarrier(buf, cfoHz, 11e6 * samplesPerChip);
    for (const f of rx.receive(buf)) {
      const k = starts.indexOf(f.startSample - streamAt);
      if (k >= 0 && f.fcsOk && f.frame.every((b, i) => b === payloads[k]![i])) intact++;
    }
    streamAt += buf.length / 2;
  }
  return 1 - intact / frames;
}

test('AWGN, high Eb/N0: 100 frames of 100 bytes all decode at both rates', () => {
  const rng = Rng.fromSeed(21);
  // At 12 dB theory gives PER 6e-5 at 1 Mb/s but 8e-3 at 2 Mb/s (DQPSK needs
  // about 2 dB more per bit than DBPSK), so 2 Mb/s is held to 14 dB: 3e-5.
  assert.ok(perTheory(10 ** 1.2, 1, FRAME_BYTES) < 1e-4);
  assert.ok(perTheory(10 ** 1.4, 2, FRAME_BYTES) < 1e-4);
  for (const samplesPerChip of [1, 2] as const) {
    assert.equal(measurePer(rng, 1, samplesPerChip, 12, 100), 0);
    assert.equal(measurePer(rng, 2, samplesPerChip, 14, 100), 0);
  }
});

test('AWGN: PER against Eb/N0 follows differential detection theory within 1 dB at PER 0.1', () => {
  const rng = Rng.fromSeed(22);
  const frames = 200;
  for (const rateMbps of [1, 2] as const) {
    const at = ebN0DbForPer(0.1, rateMbps, FRAME_BYTES);
    const per = measurePer(rng, rateMbps, 1, at, frames);
    const below = measurePer(rng, rateMbps, 1, at - 1, frames);
    const above = measurePer(rng, rateMbps, 1, at + 1, frames);
    const what = `${rateMbps} Mb/s at ${at.toFixed(2)} dB: PER ${below} / ${per} / ${above} at -1 / 0 / +1 dB`;
    assert.ok(per >= 0.03 && per <= 0.3, what);
    // Within 1 dB of theory: 1 dB worse is already above PER 0.1, 1 dB better below it.
    assert.ok(below > 0.1, what);
    assert.ok(above < 0.1, what);
  }
});

test('AWGN with a carrier offset of +-50 kHz (+-20 ppm at 2.4 GHz): still within 1 dB of theory at PER 0.1', () => {
  const rng = Rng.fromSeed(23);
  const frames = 200;
  for (const rateMbps of [1, 2] as const) {
    for (const cfoHz of [50e3, -50e3]) {
      const at = ebN0DbForPer(0.1, rateMbps, FRAME_BYTES);
      const below = measurePer(rng, rateMbps, 1, at - 1, frames, cfoHz);
      const above = measurePer(rng, rateMbps, 1, at + 1, frames, cfoHz);
      const what = `${rateMbps} Mb/s, ${cfoHz / 1e3} kHz off, around ${at.toFixed(2)} dB: PER ${below} / ${above} at -1 / +1 dB`;
      assert.ok(below > 0.1, what);
      assert.ok(above < 0.1, what);
    }
  }
});
