import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { PSD_FLOOR_DBM_PER_HZ, WelchPsd } from '../../src/sensing/psd.js';

const FS = 1e6;
const CAL = -10;

/** `count` complex samples of white Gaussian noise of mean |x|^2 = `power` (full scale). */
function noise(seed: number, count: number, power: number): Float32Array {
  const d = new Float32Array(2 * count);
  Rng.fromSeed(seed)
    .fork('psd/noise')
    .fillNormal(d, Math.sqrt(power / 2));
  return d;
}

/** Adds a complex tone of mean |x|^2 = `power` at `cycles` cycles per `bins` samples (a bin index when whole). */
function addTone(d: Float32Array, power: number, cycles: number, bins: number): Float32Array {
  const a = Math.sqrt(power);
  for (let n = 0; 2 * n < d.length; n++) {
    const ph = (2 * Math.PI * cycles * n) / bins;
    d[2 * n] = d[2 * n]! + a * Math.cos(ph);
    d[2 * n + 1] = d[2 * n + 1]! + a * Math.sin(ph);
  }
  return d;
}

/** Sum of 10^(out / 10) * fs / bins: the power the bins describe, mW. */
function parsevalMw(out: Float32Array, fs: number): number {
  let s = 0;
  for (const v of out) s += 10 ** (v / 10);
  return (s * fs) / out.length;
}

/** Mean of the bins in linear units, back in dB (an average of dB values is biased low). */
function meanDb(out: Float32Array): number {
  return 10 * Math.log10(parsevalMw(out, 1));
}

const refused = (field: string) => (e: unknown) => e instanceof RangeArgumentError && e.field === field;

test('white noise reads flat at 10 log10(P / fs) + calibration, each bin within the spread 256 segments leave', () => {
  const psd = new WelchPsd({ bins: 256, maxSegments: 256 });
  const power = 1e-5; // -50 dB full scale
  const iq = noise(1, psd.maxSamples, power);
  const out = new Float32Array(256);
  assert.equal(psd.estimate(iq, 0, psd.maxSamples, FS, CAL, out), 256);
  const expected = 10 * Math.log10(power) + CAL - 10 * Math.log10(FS);
  assert.ok(Math.abs(meanDb(out) - expected) < 0.3, `mean ${meanDb(out)} dBm/Hz, expected ${expected}`);
  // 256 segments overlapping by half: a bin's relative standard deviation is
  // about sqrt((1 + 2/9) / 256) = 0.069, so every bin of 256 stays within 2 dB.
  let sum = 0;
  let sumSq = 0;
  for (const v of out) {
    assert.ok(Math.abs(v - expected) < 2, `bin at ${v} dBm/Hz, expected ${expected} +- 2`);
    const r = 10 ** ((v - expected) / 10);
    sum += r;
    sumSq += r * r;
  }
  const sd = Math.sqrt(sumSq / 256 - (sum / 256) ** 2);
  assert.ok(sd > 0.05 && sd < 0.09, `relative spread ${sd}, expected about 0.069`);
});

test('a tone at +f and one at -f land in their own bins, lowest frequency first', () => {
  const bins = 64;
  const psd = new WelchPsd({ bins, maxSegments: 16 });
  const iq = new Float32Array(2 * psd.maxSamples);
  // +5 bins at -40 dB full scale, -5 bins at -60: the levels tell them apart.
  addTone(iq, 1e-4, 5, bins);
  addTone(iq, 1e-6, -5, bins);
  const out = new Float32Array(bins);
  psd.estimate(iq, 0, psd.maxSamples, FS, CAL, out);
  // A tone centred on a bin reads its power over Hann's 1.5-bin noise bandwidth.
  const enbwDb = 10 * Math.log10((1.5 * FS) / bins);
  const up = bins / 2 + 5;
  const down = bins / 2 - 5;
  assert.ok(Math.abs(out[up]! - (-40 + CAL - enbwDb)) < 0.01, `+f bin ${out[up]}`);
  assert.ok(Math.abs(out[down]! - (-60 + CAL - enbwDb)) < 0.01, `-f bin ${out[down]}`);
  // Hann spreads a bin-centred tone over its bin and the two next to it (a quarter of the power each).
  for (const peak of [up, down]) {
    assert.ok(Math.abs(out[peak - 1]! - out[peak]! + 6.0206) < 0.01);
    assert.ok(Math.abs(out[peak + 1]! - out[peak]! + 6.0206) < 0.01);
  }
  for (let i = 0; i < bins; i++) {
    if (Math.abs(i - up) > 1 && Math.abs(i - down) > 1) assert.ok(out[i]! < out[down]! - 80, `bin ${i} at ${out[i]} dBm/Hz`);
  }
});

test('DC lands in the middle bin and -fs/2 in the first', () => {
  const bins = 128;
  const psd = new WelchPsd({ bins, maxSegments: 4 });
  const out = new Float32Array(bins);
  const argmax = (): number => out.indexOf(Math.max(...out));
  psd.estimate(addTone(new Float32Array(2 * psd.maxSamples), 1, 0, bins), 0, psd.maxSamples, FS, CAL, out);
  assert.equal(argmax(), bins / 2);
  psd.estimate(addTone(new Float32Array(2 * psd.maxSamples), 1, -bins / 2, bins), 0, psd.maxSamples, FS, CAL, out);
  assert.equal(argmax(), 0);
  psd.estimate(addTone(new Float32Array(2 * psd.maxSamples), 1, bins / 2 - 1, bins), 0, psd.maxSamples, FS, CAL, out);
  assert.equal(argmax(), bins - 1);
});

test('Parseval: the bins add up to the mean power of the samples read', () => {
  const psd = new WelchPsd({ bins: 512, maxSegments: 32 });
  const count = psd.maxSamples;
  const iq = noise(2, count, 3e-3);
  let sum = 0;
  for (let i = 0; i < 2 * count; i++) sum += iq[i]! ** 2;
  const meanMw = (sum / count) * 10 ** (CAL / 10);
  const out = new Float32Array(512);
  psd.estimate(iq, 0, count, FS, CAL, out);
  const got = parsevalMw(out, FS);
  assert.ok(Math.abs(got / meanMw - 1) < 0.01, `bins give ${got} mW, samples ${meanMw} mW`);

  // A tone between bins has the same |x|^2 in every sample, so every window weighting gives it exactly.
  const t = addTone(new Float32Array(2 * count), 2e-2, 37.3, 512);
  psd.estimate(t, 0, count, FS, CAL, out);
  assert.ok(Math.abs(parsevalMw(out, FS) / (2e-2 * 10 ** (CAL / 10)) - 1) < 1e-4);
});

test('segments: none below one segment, one at exactly bins, one more per half segment, capped at maxSegments', () => {
  const psd = new WelchPsd({ bins: 64, maxSegments: 8 });
  assert.equal(psd.bins, 64);
  assert.equal(psd.samplesFor(1), 64);
  assert.equal(psd.samplesFor(2), 96);
  assert.equal(psd.maxSamples, 64 + 7 * 32);
  const cases: [number, number][] = [
    [0, 0],
    [63, 0],
    [64, 1],
    [95, 1],
    [96, 2],
    [127, 2],
    [128, 3],
    [psd.maxSamples - 1, 7],
    [psd.maxSamples, 8],
    [10_000, 8],
  ];
  const out = new Float32Array(64);
  const iq = noise(3, 10_000, 1e-3);
  for (const [count, segments] of cases) {
    assert.equal(psd.segmentsIn(count), segments, `segmentsIn(${count})`);
    assert.equal(psd.estimate(iq, 0, count, FS, CAL, out), segments, `estimate over ${count}`);
  }
  assert.throws(() => psd.samplesFor(0), refused('segments'));
  assert.throws(() => psd.samplesFor(9), refused('segments'));
  assert.throws(() => psd.segmentsIn(-1), refused('count'));
});

test('samples past the cap are not read, and offset starts the first segment', () => {
  const psd = new WelchPsd({ bins: 64, maxSegments: 4 });
  const n = psd.maxSamples;
  const iq = noise(4, 3 * n, 1e-3);
  const a = new Float32Array(64);
  const b = new Float32Array(64);
  psd.estimate(iq, n, n, FS, CAL, a);
  const loud = iq.slice(n * 2);
  for (let i = 2 * n; i < loud.length; i++) loud[i] = 1e3; // past the cap: must not count
  psd.estimate(loud, 0, 2 * n, FS, CAL, b);
  assert.deepEqual(b, a);
});

test('calibrationDb shifts every bin by itself; doubling the sample rate halves the density', () => {
  const psd = new WelchPsd({ bins: 128, maxSegments: 16 });
  const iq = noise(5, psd.maxSamples, 1e-4);
  const base = new Float32Array(128);
  const cal = new Float32Array(128);
  const fast = new Float32Array(128);
  psd.estimate(iq, 0, psd.maxSamples, FS, CAL, base);
  psd.estimate(iq, 0, psd.maxSamples, FS, CAL + 7, cal);
  psd.estimate(iq, 0, psd.maxSamples, 2 * FS, CAL, fast);
  for (let i = 0; i < 128; i++) {
    assert.ok(Math.abs(cal[i]! - base[i]! - 7) < 1e-4);
    assert.ok(Math.abs(fast[i]! - base[i]! + 10 * Math.log10(2)) < 1e-4);
  }
  // The power over the band is the same at either rate.
  assert.ok(Math.abs(parsevalMw(fast, 2 * FS) / parsevalMw(base, FS) - 1) < 1e-5);
});

test('a silent block reads the floor, never -Infinity; full-scale extremes stay finite', () => {
  const psd = new WelchPsd({ bins: 64, maxSegments: 2 });
  const out = new Float32Array(64);
  psd.estimate(new Float32Array(2 * psd.maxSamples), 0, psd.maxSamples, FS, CAL, out);
  assert.ok(out.every((v) => v === PSD_FLOOR_DBM_PER_HZ));
  const huge = new Float32Array(2 * psd.maxSamples).fill(3.4e38);
  psd.estimate(huge, 0, psd.maxSamples, FS, CAL, out);
  assert.ok(out.every((v) => Number.isFinite(v) && v >= PSD_FLOOR_DBM_PER_HZ));
});

test('a block shorter than one segment leaves out untouched and returns 0', () => {
  const psd = new WelchPsd({ bins: 256, maxSegments: 4 });
  const out = new Float32Array(256).fill(42);
  assert.equal(psd.estimate(noise(6, 255, 1), 0, 255, FS, CAL, out), 0);
  assert.ok(out.every((v) => v === 42));
});

test('bad parameters are refused, naming the field', () => {
  for (const bins of [0, 32, 63, 100, 2048, 64.5, NaN, Infinity]) {
    assert.throws(() => new WelchPsd({ bins, maxSegments: 4 }), refused('bins'), `bins ${bins}`);
  }
  for (const maxSegments of [0, -1, 257, 1.5, NaN]) {
    assert.throws(() => new WelchPsd({ bins: 64, maxSegments }), refused('maxSegments'), `maxSegments ${maxSegments}`);
  }
  assert.doesNotThrow(() => new WelchPsd({ bins: 1024, maxSegments: 256 }));

  const psd = new WelchPsd({ bins: 64, maxSegments: 4 });
  const iq = new Float32Array(2 * 200);
  const out = new Float32Array(64);
  assert.throws(() => psd.estimate(iq, 0, 200, FS, CAL, new Float32Array(63)), refused('out length'));
  assert.throws(() => psd.estimate(iq, -1, 100, FS, CAL, out), refused('offset'));
  assert.throws(() => psd.estimate(iq, 201, 0, FS, CAL, out), refused('offset'));
  assert.throws(() => psd.estimate(iq, 0.5, 100, FS, CAL, out), refused('offset'));
  assert.throws(() => psd.estimate(iq, 0, 201, FS, CAL, out), refused('count'));
  assert.throws(() => psd.estimate(iq, 150, 51, FS, CAL, out), refused('count'));
  assert.throws(() => psd.estimate(iq, 0, -1, FS, CAL, out), refused('count'));
  for (const fs of [0, -1e6, NaN, Infinity]) assert.throws(() => psd.estimate(iq, 0, 200, fs, CAL, out), refused('sampleRateHz'));
  assert.throws(() => psd.estimate(iq, 0, 200, FS, NaN, out), refused('calibrationDb'));
  // The checks come first, even for a block too short to estimate.
  assert.throws(() => psd.estimate(iq, 0, 10, 0, CAL, out), refused('sampleRateHz'));
  assert.equal(psd.estimate(iq, 150, 50, FS, CAL, out), 0);
});
