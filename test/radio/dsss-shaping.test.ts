import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { WelchPsd } from '../../src/sensing/psd.js';
import { modulateFrame, ppduSamples, shapedLeadSamples } from '../../radio/phy/dsss/modem.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { Resampler } from '../../radio/phy/dsss/resample.js';
import { ChipShaper, raisedCosine, SHAPING_HALF_SPAN_CHIPS, shapingTaps } from '../../radio/phy/dsss/shaping.js';

const rng = Rng.fromSeed(21);
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => rng.int(0, 255));

/**
 * The worst PSD bin, in dB relative to the peak bin, beyond 11 MHz and beyond
 * 22 MHz from the centre (802.11-2016 16.3.7.5 measures with a 100 kHz
 * resolution bandwidth; Welch's 1024 bins at 88 Msample/s are 86 kHz).
 */
function maskMargins(iq: Float32Array, rateHz: number): { beyond11: number; beyond22: number } {
  const psd = new WelchPsd({ bins: 1024, maxSegments: 256 });
  const out = new Float32Array(1024);
  assert.ok(psd.estimate(iq, 0, iq.length / 2, rateHz, 0, out) > 100);
  let peak = -Infinity;
  for (const v of out) peak = Math.max(peak, v);
  let beyond11 = -Infinity;
  let beyond22 = -Infinity;
  for (let i = 0; i < 1024; i++) {
    const f = Math.abs(((i - 512) * rateHz) / 1024);
    if (f > 11e6) beyond11 = Math.max(beyond11, out[i]! - peak);
    if (f > 22e6) beyond22 = Math.max(beyond22, out[i]! - peak);
  }
  return { beyond11, beyond22 };
}

test('the raised cosine is 1 at 0 and 0 at every other chip; the taps are symmetric and scaled to unit power', () => {
  assert.equal(raisedCosine(0, 0.5), 1);
  for (let k = 1; k <= 6; k++) assert.equal(raisedCosine(k, 0.5), 0);
  assert.ok(Math.abs(raisedCosine(1, 0.5) - raisedCosine(1 + 1e-9, 0.5)) < 1e-6);
  for (const sps of [1, 2, 8]) {
    const h = shapingTaps(sps);
    assert.equal(h.length, 2 * SHAPING_HALF_SPAN_CHIPS * sps + 1);
    let p = 0;
    for (let i = 0; i < h.length; i++) {
      assert.equal(h[i], h[h.length - 1 - i]);
      p += h[i]! ** 2;
    }
    assert.ok(Math.abs(p / sps - 1) < 1e-12);
  }
  assert.throws(() => shapingTaps(0), /samplesPerChip/);
});

test('transmit spectrum mask: shaped chips meet -30 dBr beyond 11 MHz and -50 dBr beyond 22 MHz; rectangular ones do not', () => {
  const chips = modulateFrame(bytes(1500), { rateMbps: 2, samplesPerChip: 1 });
  // 8 samples per chip, 88 Msample/s: the spectrum out to +-44 MHz.
  const shaped = new ChipShaper(8).shapeBurst(chips);
  const m = maskMargins(shaped, 88e6);
  assert.ok(m.beyond11 < -30 - 20 && m.beyond22 < -50 - 20, `shaped: ${m.beyond11.toFixed(1)}, ${m.beyond22.toFixed(1)} dBr`);
  const rect = new Float32Array(chips.length * 8);
  for (let c = 0; c < chips.length / 2; c++) {
    for (let s = 0; s < 8; s++) {
      rect[2 * (8 * c + s)] = chips[2 * c]!;
      rect[2 * (8 * c + s) + 1] = chips[2 * c + 1]!;
    }
  }
  const r = maskMargins(rect, 88e6);
  assert.ok(r.beyond11 > -30, `rectangular: ${r.beyond11.toFixed(1)} dBr beyond 11 MHz`);
  // At a front-end's 25 Msample/s, after the resampler, the band edges stay under the mask too.
  const at22 = modulateFrame(bytes(1500), { rateMbps: 1, samplesPerChip: 2, shape: true });
  const at25 = new Resampler({ inRateHz: 22e6, outRateHz: 25e6 }).resampleAll(at22);
  assert.ok(maskMargins(at25, 25e6).beyond11 < -50);
});

test('shaped transmitter: the chip centres carry the chips (a Nyquist pulse), unit power, the burst longer by the pulse reach', () => {
  for (const sps of [1, 2] as const) {
    const frame = bytes(200);
    const rect = modulateFrame(frame, { rateMbps: 2, samplesPerChip: 1 });
    const iq = modulateFrame(frame, { rateMbps: 2, samplesPerChip: sps, shape: true });
    const lead = shapedLeadSamples(sps);
    assert.equal(iq.length / 2, ppduSamples(204, 2, sps) + 2 * lead);
    let power = 0;
    for (let i = 0; i < iq.length; i++) power += iq[i]! ** 2;
    power /= iq.length / 2 - 2 * lead;
    assert.ok(Math.abs(power - 1) < 0.05, `power ${power}`);
    // Chip c's centre is sample lead + c * sps; the pulse is zero at every other chip, so it is the chip times the scale.
    const scale = shapingTaps(sps)[SHAPING_HALF_SPAN_CHIPS * sps]!;
    for (let c = 0; c < rect.length / 2; c++) {
      const at = 2 * (lead + c * sps);
      assert.ok(Math.abs(iq[at]! - scale * rect[2 * c]!) < 1e-5 && Math.abs(iq[at + 1]! - scale * rect[2 * c + 1]!) < 1e-5, `sps ${sps}, chip ${c}`);
    }
  }
});

test('shaped loopback: 1 and 2 Mb/s at 1 and 2 samples per chip, byte for byte', () => {
  for (const sps of [1, 2] as const) {
    for (const rateMbps of [1, 2] as const) {
      for (const len of [0, 100, 1500]) {
        const frame = bytes(len);
        const iq = modulateFrame(frame, { rateMbps, samplesPerChip: sps, shape: true });
        const buf = new Float32Array(iq.length + 2 * 800 * sps);
        rng.fillNormal(buf, 0.05);
        for (let i = 0; i < iq.length; i++) buf[2 * 300 * sps + i]! += iq[i]!;
        const got = new DsssReceiver({ samplesPerChip: sps }).receive(buf);
        const what = `${sps} sps, ${rateMbps} Mb/s, ${len} bytes`;
        assert.equal(got.length, 1, what);
        assert.ok(got[0]!.fcsOk, what);
        assert.deepEqual(got[0]!.frame, frame, what);
      }
    }
  }
});
