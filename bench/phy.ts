/**
 * The DSSS PHY's throughput on one core, against what real time needs, and
 * the WebAssembly SIMD kernels (FIR, receiver's despreader) against the
 * TypeScript ones, measured in the same run (docs/phy.md):
 *
 *   node --import tsx bench/phy.ts [--frames 20] [--bytes 500] [--seconds 1] [--seed 7] [--json]
 *
 * TX: a stream of frames (random bytes, 1 and 2 Mb/s alternately) modulated
 * at 1 sample per chip, through the raised-cosine shaper to 1 or 2 samples
 * per chip, and for a front-end at 20 or 25 Msample/s on through the
 * resampler from 22, or shaped straight to that rate in one filter
 * (shaperToRate, what `cogmesh phy tx --sample-rate` does); Msample/s of
 * output. RX: the same frames with noise (Eb/N0
 * 15 dB, gaps between them) at 11 or 22 Msample/s into DsssReceiver.receive,
 * or at 20 or 25 Msample/s resampled to 22 first, a block of 4096 at a time;
 * and as much noise alone (what a listening radio mostly hears) at 11 and
 * 22 Msample/s; Msample/s of input. "x RT" is that over what real time
 * needs (the chip rate times the samples per chip, or the front-end's rate);
 * each row runs with its filters and the receiver's despreader on the
 * TypeScript kernels and on WebAssembly SIMD, and the last column is their
 * ratio. Each figure is the total samples over the total time of repeated
 * runs for at least --seconds, after a quarter of that warming up.
 */
import { parseArgs } from 'node:util';
import {
  ChipShaper,
  DsssReceiver,
  despreadWasmUnavailable,
  firWasmUnavailable,
  modulateFrame,
  Resampler,
  shaperToRate,
  type FirKernel,
  type SamplesPerChip,
} from '../radio/phy/dsss/index.js';
import { Rng } from '../src/core/rng.js';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '20' },
    bytes: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '1' },
    seed: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
  },
});
const fail = (what: string): never => {
  process.stderr.write(`bench/phy.ts: ${what}\n`);
  process.exit(2);
};
const frames = Number(values.frames);
if (!(Number.isInteger(frames) && frames >= 1 && frames <= 1000)) fail(`--frames: "${values.frames}" is not a number of frames in [1, 1000]`);
const bytes = Number(values.bytes);
if (!(Number.isInteger(bytes) && bytes >= 0 && bytes <= 2300)) fail(`--bytes: "${values.bytes}" is not a frame length in [0, 2300]`);
const seconds = Number(values.seconds);
if (!(seconds > 0 && seconds <= 60)) fail(`--seconds: "${values.seconds}" is not a time in (0, 60]`);
const seed = Number(values.seed);
if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) fail(`--seed: "${values.seed}" is not an integer seed`);
const wasmMissing = firWasmUnavailable() ?? despreadWasmUnavailable();

const CHIP_RATE = 11e6;
const BLOCK = 4096;
const EBN0_DB = 15;
const rng = Rng.fromSeed(seed).fork('bench-phy');
const payloads = Array.from({ length: frames }, () => Uint8Array.from({ length: bytes }, () => rng.int(0, 255)));
const rateOf = (k: number): 1 | 2 => (k % 2 === 0 ? 1 : 2);
/** The frames' chips, made once: TX runs modulate them again each time. */
const chipsOf = payloads.map((f, k) => modulateFrame(f, { rateMbps: rateOf(k), samplesPerChip: 1 }));

/** Samples made or taken per second, in Msample/s: `run` returns the samples it did. */
function measure(run: () => number): number {
  // Warm up for a quarter of the time: the compiler settles the loops first.
  const w0 = performance.now();
  do run();
  while (performance.now() - w0 < seconds * 250);
  let samples = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < seconds * 1000) {
    samples += run();
    t = performance.now();
  }
  return samples / (t - t0) / 1e3;
}

/** TX: modulate, shape to `sps`, and resample to `deviceHz` when given. */
function txRun(sps: SamplesPerChip, deviceHz: number | undefined, kernel: FirKernel): () => number {
  const shaper = new ChipShaper(sps, { kernel });
  const rs = deviceHz === undefined ? undefined : new Resampler({ inRateHz: CHIP_RATE * sps, outRateHz: deviceHz, kernel });
  const longest = Math.max(...chipsOf.map((c) => c.length / 2));
  const shaped = new Float32Array(2 * (longest * sps + 8));
  const out = new Float32Array(rs === undefined ? 2 : 2 * (rs.outputsFor(longest * sps + 8) + 8));
  return () => {
    let n = 0;
    payloads.forEach((f, k) => {
      const chips = modulateFrame(f, { rateMbps: rateOf(k), samplesPerChip: 1 });
      const m = shaper.process(chips, shaped);
      n += rs === undefined ? m : rs.process(shaped.subarray(0, 2 * m), out);
    });
    return n;
  };
}

/** TX: modulate, and shape straight to `deviceHz` in one filter. */
function txDirectRun(deviceHz: number, kernel: FirKernel): () => number {
  const shaper = shaperToRate(deviceHz, { kernel });
  const longest = Math.max(...chipsOf.map((c) => c.length / 2));
  // Room for the most any frame gives, whatever the phase the last one left.
  const out = new Float32Array(2 * (Math.ceil((longest * deviceHz) / CHIP_RATE) + 16));
  return () => {
    let n = 0;
    payloads.forEach((f, k) => {
      n += shaper.process(modulateFrame(f, { rateMbps: rateOf(k), samplesPerChip: 1 }), out);
    });
    return n;
  };
}

/** TX with rectangular chips at `sps`: the modulator alone. */
function txRectRun(sps: SamplesPerChip): () => number {
  return () => payloads.reduce((n, f, k) => n + modulateFrame(f, { rateMbps: rateOf(k), samplesPerChip: sps }).length / 2, 0);
}

/** The frames with gaps and noise at `rateHz`: shaped and resampled from 22 Msample/s when it is not 11 or 22. */
function rxStream(rateHz: number): Float32Array {
  const sps: SamplesPerChip = rateHz === CHIP_RATE ? 1 : 2;
  const parts: Float32Array[] = [];
  for (const [k, f] of payloads.entries()) {
    parts.push(new Float32Array(2 * 400 * sps + 2 * rng.int(0, 21)));
    parts.push(modulateFrame(f, { rateMbps: rateOf(k), samplesPerChip: sps, shape: rateHz !== CHIP_RATE * sps }));
  }
  parts.push(new Float32Array(2 * 400 * sps));
  let at = 0;
  const made = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  for (const p of parts) {
    made.set(p, at);
    at += p.length;
  }
  const iq = rateHz === CHIP_RATE * sps ? made : new Resampler({ inRateHz: CHIP_RATE * sps, outRateHz: rateHz }).resampleAll(made);
  // Eb/N0 for the 2 Mb/s frames: a bit lasts rateHz / 2e6 samples.
  const noise = new Float32Array(iq.length);
  rng.fillNormal(noise, Math.sqrt(rateHz / 2e6 / 10 ** (EBN0_DB / 10) / 2));
  for (let i = 0; i < iq.length; i++) noise[i] = noise[i]! + iq[i]!;
  return noise;
}

/** Noise alone, as long as the frames' stream at `rateHz`. */
function noiseStream(like: Float32Array): Float32Array {
  const noise = new Float32Array(like.length);
  rng.fillNormal(noise, Math.sqrt(0.5));
  return noise;
}

/** RX: resample (when the stream is not at 11 or 22) a block at a time, then the receiver (filters and despreader on `kernel`); counts the frames found. */
function rxRun(stream: Float32Array, rateHz: number, kernel: FirKernel, found: { frames: number }): () => number {
  const direct = rateHz === CHIP_RATE || rateHz === 2 * CHIP_RATE;
  const rx = new DsssReceiver({ samplesPerChip: direct ? ((rateHz / CHIP_RATE) as SamplesPerChip) : 2, kernel });
  const rs = direct ? undefined : new Resampler({ inRateHz: rateHz, outRateHz: 2 * CHIP_RATE, kernel });
  const out = new Float32Array(rs === undefined ? 2 : 2 * (rs.outputsFor(stream.length / 2) + 8));
  const blocks: Float32Array[] = [];
  for (let at = 0; at < stream.length; at += 2 * BLOCK) blocks.push(stream.subarray(at, Math.min(stream.length, at + 2 * BLOCK)));
  return () => {
    let iq = stream;
    if (rs !== undefined) {
      rs.reset();
      let n = 0;
      for (const b of blocks) n += rs.process(b, out.subarray(2 * n));
      iq = out.subarray(0, 2 * n);
    }
    found.frames = rx.receive(iq).filter((f) => f.fcsOk).length;
    return stream.length / 2;
  };
}

interface Row {
  path: 'tx' | 'rx';
  what: string;
  samplesPerChip: SamplesPerChip;
  deviceHz: number | null;
  /** Msample/s real time needs. */
  needMsps: number;
  tsMsps: number;
  wasmMsps: number | null;
  /** Frames with a good FCS of those sent (RX). */
  framesFound?: number;
  framesSent?: number;
}

const rows: Row[] = [];
const kernels: FirKernel[] = wasmMissing === undefined ? ['ts', 'wasm'] : ['ts'];
const both = (make: (k: FirKernel) => () => number): [number, number | null] => {
  const got = kernels.map((k) => measure(make(k)));
  return [got[0]!, got[1] ?? null];
};
const t0 = performance.now();
for (const sps of [1, 2] as const) {
  rows.push({
    path: 'tx',
    what: 'modulate, rectangular',
    samplesPerChip: sps,
    deviceHz: null,
    needMsps: 11 * sps,
    tsMsps: measure(txRectRun(sps)),
    wasmMsps: null,
  });
  const [ts, wasm] = both((k) => txRun(sps, undefined, k));
  rows.push({ path: 'tx', what: 'modulate + shape', samplesPerChip: sps, deviceHz: null, needMsps: 11 * sps, tsMsps: ts, wasmMsps: wasm });
}
for (const device of [20e6, 25e6]) {
  const [ts, wasm] = both((k) => txRun(2, device, k));
  rows.push({ path: 'tx', what: 'modulate + shape + resample', samplesPerChip: 2, deviceHz: device, needMsps: device / 1e6, tsMsps: ts, wasmMsps: wasm });
  const [ts1, wasm1] = both((k) => txDirectRun(device, k));
  rows.push({
    path: 'tx',
    what: 'modulate + shape to the rate (one filter)',
    samplesPerChip: 1,
    deviceHz: device,
    needMsps: device / 1e6,
    tsMsps: ts1,
    wasmMsps: wasm1,
  });
}
for (const rate of [11e6, 22e6, 20e6, 25e6]) {
  const stream = rxStream(rate);
  const found = { frames: 0 };
  const [ts, wasm] = both((k) => rxRun(stream, rate, k, found));
  const direct = rate === 11e6 || rate === 22e6;
  if (direct) {
    const noise = noiseStream(stream);
    const none = { frames: 0 };
    const [tsNoise, wasmNoise] = both((k) => rxRun(noise, rate, k, none));
    rows.push({
      path: 'rx',
      what: 'receive, noise alone',
      samplesPerChip: (rate / 11e6) as SamplesPerChip,
      deviceHz: null,
      needMsps: rate / 1e6,
      tsMsps: tsNoise,
      wasmMsps: wasmNoise,
      framesFound: none.frames,
      framesSent: 0,
    });
  }
  rows.push({
    path: 'rx',
    what: direct ? 'receive (rectangular chips)' : 'resample to 22 + receive (shaped)',
    samplesPerChip: direct ? ((rate / 11e6) as SamplesPerChip) : 2,
    deviceHz: direct ? null : rate,
    needMsps: rate / 1e6,
    tsMsps: ts,
    wasmMsps: wasm,
    framesFound: found.frames,
    framesSent: frames,
  });
}
const wallS = (performance.now() - t0) / 1000;

if (values.json) {
  process.stdout.write(`${JSON.stringify({ frames, bytes, seconds, seed, ebN0Db: EBN0_DB, wasm: wasmMissing ?? 'simd128', wallS, rows }, null, 2)}\n`);
} else {
  process.stdout.write(
    `DSSS PHY throughput, one core: ${frames} frames of ${bytes} bytes (1 and 2 Mb/s), RX at Eb/N0 ${EBN0_DB} dB; ` +
      `WebAssembly SIMD: ${wasmMissing ?? 'yes'} (${wallS.toFixed(1)} s)\n\n`,
  );
  process.stdout.write(
    '| path | stage | samples/chip | device rate | real time needs (Msample/s) | TS (Msample/s) | x RT | WASM SIMD (Msample/s) | x RT | WASM / TS | frames |\n',
  );
  process.stdout.write('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n');
  for (const r of rows) {
    const w = r.wasmMsps;
    process.stdout.write(
      `| ${r.path} | ${r.what} | ${r.samplesPerChip} | ${r.deviceHz === null ? '-' : `${r.deviceHz / 1e6} M`} | ${r.needMsps} | ${r.tsMsps.toFixed(1)} | ` +
        `${(r.tsMsps / r.needMsps).toFixed(2)} | ${w === null ? '-' : w.toFixed(1)} | ${w === null ? '-' : (w / r.needMsps).toFixed(2)} | ` +
        `${w === null ? '-' : (w / r.tsMsps).toFixed(2)} | ${r.framesFound === undefined ? '-' : `${r.framesFound}/${r.framesSent}`} |\n`,
    );
  }
}
