import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftSampleClock, turnCarrier } from '../../radio/phy/dsss/channel.js';
import { despreadModuleBytes } from '../../radio/phy/dsss/despread-wasm.js';
import { modulateFrame, type SamplesPerChip } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { despreadWasmUnavailable, DsssReceiver, type DsssRxCounters, type DsssRxFrame } from '../../radio/phy/dsss/receiver.js';
import { compileWasm, wasmApi } from '../../src/core/wasm-emit.js';
import { Rng } from '../../src/core/rng.js';

/**
 * The receiver's WebAssembly SIMD despreader against its TypeScript one:
 * the same frames (every field, bit for bit) and the same counters, over
 * noise alone, over frames at both rates and 1 and 2 samples per chip with a
 * carrier offset and a drifting sample clock, in buffers split anywhere.
 */

const SPCS: SamplesPerChip[] = [1, 2];

/** The frames sent back to back with `gap` samples around each, sampled `ppm` off, noise of `sigma`, turned by `cfoHz`. */
function channel(rng: Rng, frames: Array<{ bytes: Uint8Array; rateMbps: DsssRate }>, sps: SamplesPerChip, ppm: number, cfoHz: number, sigma: number) {
  const gap = 700 * sps;
  const signals = frames.map((f) => modulateFrame(f.bytes, { rateMbps: f.rateMbps, samplesPerChip: sps }));
  const clean = new Float32Array(signals.reduce((n, iq) => n + iq.length + 2 * gap, 2 * gap));
  let at = gap;
  for (const iq of signals) {
    clean.set(iq, 2 * at);
    at += iq.length / 2 + gap;
  }
  const stream = driftSampleClock(clean, ppm, rng.next());
  const noise = new Float32Array(stream.length);
  rng.fillNormal(noise, sigma);
  for (let i = 0; i < stream.length; i++) stream[i]! += noise[i]!;
  turnCarrier(stream, cfoHz, 11e6 * sps);
  return stream;
}

/** Buffers of random lengths (odd ones too) that cover `stream`. */
function split(rng: Rng, stream: Float32Array, most: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let at = 0; at < stream.length;) {
    const n = Math.min(stream.length - at, rng.int(1, most));
    out.push(stream.subarray(at, at + n));
    at += n;
  }
  return out;
}

function decode(kernel: 'ts' | 'wasm', sps: SamplesPerChip, buffers: Float32Array[]): { frames: DsssRxFrame[]; counters: DsssRxCounters } {
  const rx = new DsssReceiver({ samplesPerChip: sps, kernel });
  assert.equal(rx.kernel, kernel);
  const frames: DsssRxFrame[] = [];
  for (const b of buffers) frames.push(...rx.receive(b));
  frames.push(...rx.flush());
  return { frames, counters: { ...rx.counters } };
}

/** Decodes `buffers` with both kernels and requires the same result; returns it. */
function same(sps: SamplesPerChip, buffers: Float32Array[], what: string): { frames: DsssRxFrame[]; counters: DsssRxCounters } {
  const ts = decode('ts', sps, buffers);
  const wasm = decode('wasm', sps, buffers);
  // deepEqual compares numbers with Object.is: every SNR, level and offset bit for bit.
  assert.deepEqual(wasm.counters, ts.counters, what);
  assert.deepEqual(wasm.frames, ts.frames, what);
  return ts;
}

test('the engine has WebAssembly SIMD, the despreader module validates, and the receiver takes it by default', () => {
  assert.equal(despreadWasmUnavailable(), undefined);
  assert.notEqual(typeof compileWasm(wasmApi(), despreadModuleBytes()), 'string');
  // Without WebAssembly, or with an engine that does not validate simd128, the reason in words (the receiver then runs TypeScript).
  assert.match(String(compileWasm(undefined, despreadModuleBytes())), /no WebAssembly/);
  const noSimd = { ...wasmApi()!, validate: () => false };
  assert.match(String(compileWasm(noSimd, despreadModuleBytes())), /SIMD/);
  assert.equal(new DsssReceiver({ samplesPerChip: 2 }).kernel, 'wasm');
  assert.equal(new DsssReceiver({ samplesPerChip: 2, kernel: 'ts' }).kernel, 'ts');
  assert.throws(() => new DsssReceiver({ samplesPerChip: 1, kernel: 'simd' as never }), /kernel/);
});

test('over noise alone, and noise into silence, both kernels count the same, at 1 and 2 samples per chip', () => {
  const rng = Rng.fromSeed(41);
  for (const sps of SPCS) {
    const noise = new Float32Array(2 * 60_000 * sps);
    rng.fillNormal(noise, 1);
    const quiet = new Float32Array(noise.length + 2 * 5000 * sps);
    quiet.set(noise.subarray(0, 2 * 3000 * sps));
    const a = same(sps, [noise], `noise, ${sps} samples per chip`);
    assert.equal(a.frames.length, 0);
    same(sps, split(rng, noise, 5000), `noise in pieces, ${sps} samples per chip`);
    same(sps, [quiet], `noise then silence, ${sps} samples per chip`);
  }
});

test('frames at both rates with a carrier offset and clock drift, whole and split anywhere, are the same bit for bit on both kernels', () => {
  const rng = Rng.fromSeed(43);
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => rng.int(0, 255));
  for (const sps of SPCS) {
    for (const [ppm, cfoHz, sigma] of [
      [20, 50e3, 0.1],
      [-20, -40e3, 0.6],
      // Near the sensitivity limit: decisions, SFD searches and header checks that go either way.
      [-20, 50e3, 1.1],
    ] as const) {
      const frames = [
        { bytes: bytes(1500), rateMbps: 1 as const },
        { bytes: bytes(14), rateMbps: 2 as const },
        { bytes: bytes(600), rateMbps: 2 as const },
        { bytes: bytes(0), rateMbps: 1 as const },
      ];
      const stream = channel(rng, frames, sps, ppm, cfoHz, sigma);
      const what = `${sps} samples per chip, ${ppm} ppm, ${cfoHz / 1e3} kHz, noise ${sigma}`;
      const whole = same(sps, [stream], what);
      assert.ok(whole.frames.filter((f) => f.fcsOk).length >= (sigma < 0.5 ? 4 : sigma < 1 ? 1 : 0), what);
      same(sps, split(rng, stream, 3001), `${what}, split`);
      // Cut inside the first frame's PSDU: counted truncated on both.
      const cut = same(sps, [stream.subarray(0, Math.floor(stream.length * 0.6))], `${what}, cut`);
      if (sigma < 1) assert.equal(cut.counters.truncated, 1, what);
    }
  }
});
