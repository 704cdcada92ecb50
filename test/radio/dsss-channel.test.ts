import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftSampleClock } from '../../radio/phy/dsss/channel.js';
import { blackmanSinc, polyphaseTable } from '../../radio/phy/dsss/fractional.js';

/** Complex tones at `freqs` (cycles per sample) sampled at times start + n * step, n < count. */
function tones(freqs: number[], count: number, start = 0, step = 1): Float32Array {
  const iq = new Float32Array(2 * count);
  for (let n = 0; n < count; n++) {
    const t = start + n * step;
    for (const [k, f] of freqs.entries()) {
      iq[2 * n]! += Math.cos(2 * Math.PI * f * t + k) / freqs.length;
      iq[2 * n + 1]! += Math.sin(2 * Math.PI * f * t + k) / freqs.length;
    }
  }
  return iq;
}

test('sample clock drift: a band-limited signal resampled within -50 dB of the signal at the drifted times', () => {
  // Tones up to 0.8 of Nyquist (0.4 cycles per sample), both signs of frequency.
  const freqs = [0.01, -0.07, 0.13, -0.22, 0.31, -0.4];
  for (const ppm of [20, -20, 1000, -1000]) {
    for (const start of [0, 0.3, 0.77]) {
      const n = 4000;
      const out = driftSampleClock(tones(freqs, n), ppm, start);
      const step = 1 / (1 + ppm * 1e-6);
      assert.equal(out.length / 2, Math.floor((n - 1 - start) / step) + 1);
      const want = tones(freqs, out.length / 2, start, step);
      // Away from the ends, where the kernel runs off the input.
      let err = 0;
      let power = 0;
      for (let i = 2 * 40; i < out.length - 2 * 40; i++) {
        err += (out[i]! - want[i]!) ** 2;
        power += want[i]! ** 2;
      }
      const db = 10 * Math.log10(err / power);
      assert.ok(db < -50, `${ppm} ppm from ${start}: error ${db.toFixed(1)} dB`);
    }
  }
});

test('sample clock drift: 0 ppm is a copy, a stream stretches by ppm, deterministic, bad arguments refused', () => {
  const iq = tones([0.1, -0.3], 1000);
  assert.deepEqual(driftSampleClock(iq, 0), iq);
  // A 1e6-sample stream, 20 ppm fast or slow: 999999 sample intervals become 999999 * (1 +- 2e-5).
  assert.equal(driftSampleClock(new Float32Array(2e6), 20).length / 2, 1e6 + 19);
  assert.equal(driftSampleClock(new Float32Array(2e6), -20).length / 2, 1e6 - 20);
  assert.deepEqual(driftSampleClock(iq, 37, 0.25), driftSampleClock(iq, 37, 0.25));
  assert.equal(driftSampleClock(new Float32Array(0), 20).length, 0);
  assert.throws(() => driftSampleClock(iq, Number.NaN), /ppm/);
  assert.throws(() => driftSampleClock(iq, 5000), /ppm/);
  assert.throws(() => driftSampleClock(iq, 1, -1), /start/);
  assert.throws(() => driftSampleClock(iq, 1, 0, 1), /halfLength/);
});

test('the interpolation kernel: unit impulse at whole samples, rows sum to one, closed form equals the kernel', () => {
  const table = polyphaseTable(8, 4);
  assert.equal(table.length, 9 * 8);
  const near = (got: Float64Array, want: number[]): boolean => want.every((w, j) => Math.abs(got[j]! - w) < 1e-15);
  assert.ok(near(table.subarray(0, 8), [0, 0, 0, 1, 0, 0, 0, 0]));
  assert.ok(near(table.subarray(64, 72), [0, 0, 0, 0, 1, 0, 0, 0]));
  for (let f = 0; f <= 8; f++) assert.ok(Math.abs(table.subarray(8 * f, 8 * f + 8).reduce((a, b) => a + b, 0) - 1) < 1e-12);
  assert.ok(Math.abs(blackmanSinc(0, 8) - 1) < 1e-15);
  assert.equal(blackmanSinc(8, 8), 0);
  // driftSampleClock's closed form against the kernel at one fractional point.
  const iq = tones([0.05, 0.21], 64);
  const out = driftSampleClock(iq, 0, 20.375);
  let re = 0;
  let sum = 0;
  for (let k = -15; k <= 16; k++) {
    const w = blackmanSinc(0.375 - k, 16);
    sum += w;
    re += w * iq[2 * (20 + k)]!;
  }
  assert.ok(Math.abs(out[0]! - re / sum) < 1e-6);
});
