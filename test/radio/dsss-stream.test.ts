import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftSampleClock, turnCarrier } from '../../radio/phy/dsss/channel.js';
import { CHIPS_PER_SYMBOL, modulateFrame, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { DsssReceiver, type DsssRxFrame } from '../../radio/phy/dsss/receiver.js';
import { ebN0DbForPer } from '../../radio/phy/dsss/theory.js';
import { Rng } from '../../src/core/rng.js';

/**
 * The receiver against a drifting sample clock and a carrier offset, and as
 * a stream: chip timing and carrier tracking over the longest frames, frames
 * split over buffers anywhere, and PER near theory with both impairments.
 */

const RATES: DsssRate[] = [1, 2];
const SPCS: SamplesPerChip[] = [1, 2];
/** Sample clock (ppm) and carrier (Hz) offsets: every combination of signs of 20 ppm and 50 kHz, two radios' worst. */
const IMPAIRMENTS: ReadonlyArray<readonly [number, number]> = [
  [20, 50e3],
  [-20, -50e3],
  [20, -50e3],
  [-20, 50e3],
];

function randomBytes(rng: Rng, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => rng.int(0, 255));
}

/**
 * `frames` sent one after another with `gap` samples of silence around each,
 * sampled by a receiver `ppm` off at a random phase, with noise of `sigma`
 * per component after that, turned by `cfoHz`. Returns the stream and where
 * each frame starts in it.
 */
function channel(
  rng: Rng,
  frames: Uint8Array[],
  o: { rateMbps: DsssRate; samplesPerChip: SamplesPerChip; ppm: number; cfoHz: number; sigma: number; gap: number },
) {
  const signals = frames.map((f) => modulateFrame(f, { rateMbps: o.rateMbps, samplesPerChip: o.samplesPerChip }));
  const clean = new Float32Array(signals.reduce((n, iq) => n + iq.length + 2 * o.gap, 2 * o.gap));
  const starts: number[] = [];
  let at = o.gap;
  for (const iq of signals) {
    starts.push(at);
    clean.set(iq, 2 * at);
    at += iq.length / 2 + o.gap;
  }
  const phase = rng.next();
  const stream = driftSampleClock(clean, o.ppm, phase);
  const noise = new Float32Array(stream.length);
  rng.fillNormal(noise, o.sigma);
  for (let i = 0; i < stream.length; i++) stream[i]! += noise[i]!;
  turnCarrier(stream, o.cfoHz, 11e6 * o.samplesPerChip);
  // Transmitter sample s is at receiver sample (s - phase) (1 + ppm 1e-6).
  return { stream, starts: starts.map((s) => (s - phase) * (1 + o.ppm * 1e-6)) };
}

function decodeAll(rx: DsssReceiver, buffers: Float32Array[]): DsssRxFrame[] {
  const got: DsssRxFrame[] = [];
  for (const b of buffers) got.push(...rx.receive(b));
  got.push(...rx.flush());
  return got;
}

test('chip timing and carrier tracking: frames up to 4091 bytes byte for byte at +-20 ppm and +-50 kHz, both rates, 1 and 2 samples per chip', () => {
  const rng = Rng.fromSeed(31);
  for (const samplesPerChip of SPCS) {
    for (const rateMbps of RATES) {
      for (const [ppm, cfoHz] of IMPAIRMENTS) {
        // The longest frame (a 4095-byte PSDU: 33 ms at 1 Mb/s, 7 chips of slip at 20 ppm) once per
        // combination of rate and samples per chip, shorter ones otherwise.
        const longest = ppm === 20 && cfoHz === 50e3;
        const frames = [randomBytes(rng, longest ? 4091 : 1500), randomBytes(rng, 14), randomBytes(rng, 0)];
        const { stream, starts } = channel(rng, frames, { rateMbps, samplesPerChip, ppm, cfoHz, sigma: 0.1, gap: 500 * samplesPerChip });
        const rx = new DsssReceiver({ samplesPerChip });
        const got = decodeAll(rx, [stream]);
        const what = `${rateMbps} Mb/s, ${samplesPerChip} samples per chip, ${ppm} ppm, ${cfoHz / 1e3} kHz`;
        assert.equal(got.length, frames.length, what);
        got.forEach((f, k) => {
          assert.ok(f.fcsOk, `${what}: frame ${k}`);
          assert.deepEqual(f.frame, frames[k], `${what}: frame ${k}`);
          assert.ok(Math.abs(f.startSample - starts[k]!) <= 1, `${what}: frame ${k} at ${f.startSample}, sent at ${starts[k]!.toFixed(2)}`);
          assert.ok(Math.abs(f.cfoHz - cfoHz) < 3e3, `${what}: estimated ${f.cfoHz.toFixed(0)} Hz`);
        });
        assert.equal(rx.counters.noSfd + rx.counters.headerCrc + rx.counters.fcs + rx.counters.truncated, 0, what);
      }
    }
  }
});

test('the most two radios 25 ppm off each may be apart: +-50 ppm and +-100 kHz over a 4091-byte frame at 1 Mb/s', () => {
  const rng = Rng.fromSeed(34);
  for (const samplesPerChip of SPCS) {
    for (const [ppm, cfoHz] of [
      [50, 100e3],
      [-50, -100e3],
    ] as const) {
      const frames = [randomBytes(rng, 4091)];
      const { stream } = channel(rng, frames, { rateMbps: 1, samplesPerChip, ppm, cfoHz, sigma: 0.1, gap: 500 * samplesPerChip });
      const got = decodeAll(new DsssReceiver({ samplesPerChip }), [stream]);
      assert.equal(got.length, 1);
      assert.deepEqual(got[0]!.frame, frames[0], `${samplesPerChip} samples per chip, ${ppm} ppm`);
    }
  }
});

test('streaming: frames split across buffers at any sample decode as in one buffer, with start samples over the stream', () => {
  const rng = Rng.fromSeed(32);
  for (const samplesPerChip of SPCS) {
    for (const rateMbps of RATES) {
      const frames = [randomBytes(rng, 20), randomBytes(rng, 3), randomBytes(rng, 60)];
      const { stream } = channel(rng, frames, { rateMbps, samplesPerChip, ppm: 20, cfoHz: 30e3, sigma: 0.1, gap: 40 * samplesPerChip });
      const whole = new DsssReceiver({ samplesPerChip });
      const want = decodeAll(whole, [stream]);
      assert.equal(want.length, 3);
      want.forEach((f, k) => assert.deepEqual(f.frame, frames[k]));
      const summary = (got: DsssRxFrame[]) => got.map((f) => ({ frame: Array.from(f.frame), start: f.startSample, fcsOk: f.fcsOk, cfoHz: f.cfoHz }));
      // Two buffers split at a value (I or Q, so odd splits too) stepping through the whole stream.
      const rx = new DsssReceiver({ samplesPerChip });
      for (let cut = 0; cut <= stream.length; cut += 1 + rng.int(0, 2 * 11 * samplesPerChip * 7)) {
        const got = decodeAll(rx, [stream.subarray(0, cut), stream.subarray(cut)]);
        assert.deepEqual(summary(got), summary(want), `split at value ${cut}`);
      }
      // Many buffers of random lengths, from one value to a few symbols.
      for (let round = 0; round < 5; round++) {
        const buffers: Float32Array[] = [];
        for (let i = 0; i < stream.length;) {
          const len = rng.int(1, round === 0 ? 7 : 500);
          buffers.push(stream.subarray(i, i + len));
          i += len;
        }
        assert.deepEqual(summary(decodeAll(rx, buffers)), summary(want), `round ${round}: ${buffers.length} buffers`);
      }
      // A receiver that is not flushed between streams carries on counting: a second copy of the stream starts where the first ended.
      const again = new DsssReceiver({ samplesPerChip });
      const twice = [...again.receive(stream), ...again.receive(stream), ...again.flush()];
      assert.deepEqual(
        twice.map((f) => f.startSample),
        [...want, ...want].map((f, k) => f.startSample + (k >= 3 ? stream.length / 2 : 0)),
      );
      assert.deepEqual(again.counters, { ...whole.counters, detections: 2 * whole.counters.detections, frames: 6 });
    }
  }
});

test('PER with a carrier offset and a drifting clock (+-50 kHz, +-20 ppm): within 1 dB of theory at PER 0.1, 1 sample per chip', () => {
  const rng = Rng.fromSeed(33);
  const bytes = 100;
  const per = (rateMbps: DsssRate, ebN0Db: number): number => {
    const samplesPerChip = 1;
    const sigma = Math.sqrt((CHIPS_PER_SYMBOL * samplesPerChip) / (rateMbps * 2 * 10 ** (ebN0Db / 10)));
    let intact = 0;
    let sent = 0;
    const rx = new DsssReceiver({ samplesPerChip });
    for (const [ppm, cfoHz] of IMPAIRMENTS) {
      for (let b = 0; b < 5; b++) {
        const frames = Array.from({ length: 10 }, () => randomBytes(rng, bytes));
        const { stream } = channel(rng, frames, { rateMbps, samplesPerChip, ppm, cfoHz, sigma, gap: 150 + rng.int(0, 10) });
        const want = new Set(frames.map((f) => Buffer.from(f).toString('hex')));
        for (const f of decodeAll(rx, [stream])) if (f.fcsOk && want.has(Buffer.from(f.frame).toString('hex'))) intact++;
        sent += frames.length;
      }
    }
    return 1 - intact / sent;
  };
  for (const rateMbps of RATES) {
    const at = ebN0DbForPer(0.1, rateMbps, bytes);
    const below = per(rateMbps, at - 1);
    const above = per(rateMbps, at + 1);
    const what = `${rateMbps} Mb/s around ${at.toFixed(2)} dB: PER ${below} / ${above} at -1 / +1 dB`;
    // Within 1 dB of theory: 1 dB worse is already above PER 0.1, 1 dB better below it.
    assert.ok(below > 0.1, what);
    assert.ok(above < 0.1, what);
  }
});

test('reset drops the stream in progress, uncounted, and the next stream decodes with the counters going on', () => {
  const rng = Rng.fromSeed(31);
  const psdu = [randomBytes(rng, 120), randomBytes(rng, 80)];
  const a = modulateFrame(psdu[0]!, { rateMbps: 2, samplesPerChip: 2 });
  const b = modulateFrame(psdu[1]!, { rateMbps: 2, samplesPerChip: 2 });
  const silence = new Float32Array(2 * 2000);
  const rx = new DsssReceiver({ samplesPerChip: 2 });
  // Half of frame a, then a retune: nothing of it is decoded or counted.
  assert.deepEqual(rx.receive(silence), []);
  assert.deepEqual(rx.receive(a.subarray(0, a.length / 2)), []);
  const seen = { ...rx.counters };
  rx.reset();
  assert.deepEqual(rx.flush(), [], 'nothing left of the dropped stream');
  assert.deepEqual(rx.counters, seen, 'the dropped half frame is not counted truncated');
  // The next stream: frame b whole.
  const got = [...rx.receive(silence), ...rx.receive(b), ...rx.receive(silence), ...rx.flush()];
  assert.equal(got.length, 1);
  assert.deepEqual([...got[0]!.frame], [...psdu[1]!]);
  assert.equal(rx.counters.frames, seen.frames + 1);
});
