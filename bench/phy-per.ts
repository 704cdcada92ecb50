/**
 * The DSSS PHY's packet error rate against Eb/N0 over AWGN, next to the
 * theory of differential detection (radio/phy/dsss/theory.ts), the table of
 * docs/phy.md:
 *
 *   node --import tsx bench/phy-per.ts [--frames 1000] [--bytes 100] [--sps 1] [--cfo-hz 0] [--seed 7] [--json]
 *
 * For each rate, frames of `bytes` random bytes go through the transmitter,
 * ten to a buffer with noise between them and random offsets, at the Eb/N0
 * where theory gives a PER of 0.5, 0.1 and 0.01; a frame counts when the
 * receiver returns it with its FCS good and its bytes those sent. Eb is per
 * PSDU bit, the Barker spreading inside it (noise per sample from Eb/N0, 11
 * chips a symbol and the samples per chip). The last column is the measured
 * PER's distance from theory in dB, read off the theory curve: the Eb/N0
 * theory needs for the PER measured, less the Eb/N0 used (positive: the
 * receiver does better than theory). `--cfo-hz` turns every buffer by a
 * carrier offset, which the receiver must estimate and take out.
 */
import { parseArgs } from 'node:util';
import { DsssReceiver, modulateFrame, turnCarrier, type DsssRate, type SamplesPerChip } from '../radio/phy/dsss/index.js';
import { ebN0DbForPer, perTheory } from '../radio/phy/dsss/theory.js';
import { Rng } from '../src/core/rng.js';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '1000' },
    bytes: { type: 'string', default: '100' },
    sps: { type: 'string', default: '1' },
    'cfo-hz': { type: 'string', default: '0' },
    seed: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
  },
});
const fail = (what: string): never => {
  process.stderr.write(`bench/phy-per.ts: ${what}\n`);
  process.exit(2);
};
const frames = Number(values.frames);
if (!(Number.isInteger(frames) && frames >= 10 && frames % 10 === 0)) fail(`--frames: "${values.frames}" is not a multiple of 10, at least 10`);
const bytes = Number(values.bytes);
if (!(Number.isInteger(bytes) && bytes >= 1 && bytes <= 2300)) fail(`--bytes: "${values.bytes}" is not a frame length in [1, 2300]`);
const sps = Number(values.sps);
if (sps !== 1 && sps !== 2) fail(`--sps: "${values.sps}" is not 1 or 2`);
const cfoHz = Number(values['cfo-hz']);
if (!(Number.isFinite(cfoHz) && Math.abs(cfoHz) <= 250e3)) fail(`--cfo-hz: "${values['cfo-hz']}" is not a carrier offset in [-250000, 250000] Hz`);
const seed = Number(values.seed);
if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) fail(`--seed: "${values.seed}" is not an integer seed`);

const rng = Rng.fromSeed(seed).fork('phy-per');
const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** The PER measured over `frames` frames at `ebN0Db`, and the receiver's counters. */
function measure(rate: DsssRate, ebN0Db: number): { per: number; counters: DsssRxCounters } {
  const sigma = Math.sqrt((11 * sps) / (rate * 2 * 10 ** (ebN0Db / 10)));
  const rx = new DsssReceiver({ samplesPerChip: sps as SamplesPerChip });
  const gap = 400 * sps;
  let good = 0;
  for (let b = 0; b < frames / 10; b++) {
    const sent = new Set<string>();
    const txs: Float32Array[] = [];
    for (let k = 0; k < 10; k++) {
      const f = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i++) f[i] = rng.int(0, 255);
      sent.add(hex(f));
      txs.push(modulateFrame(f, { rateMbps: rate, samplesPerChip: sps as SamplesPerChip }));
    }
    const total = txs.reduce((s, t) => s + t.length / 2 + gap + 7, gap + 21);
    const buf = new Float32Array(2 * total);
    rng.fillNormal(buf, sigma);
    let at = gap + rng.int(0, 21);
    for (const t of txs) {
      for (let i = 0; i < t.length; i++) buf[2 * at + i] = buf[2 * at + i]! + t[i]!;
      at += t.length / 2 + gap + rng.int(0, 7);
    }
    turnCarrier(buf, cfoHz, 11e6 * sps);
    for (const fr of rx.receive(buf)) if (fr.fcsOk && sent.has(hex(fr.frame))) good++;
  }
  return { per: 1 - good / frames, counters: { ...rx.counters } };
}

type DsssRxCounters = DsssReceiver['counters'];

const rows: Array<{ rateMbps: DsssRate; ebN0Db: number; theory: number; measured: number; gapDb: number | null; counters: DsssRxCounters }> = [];
const t0 = performance.now();
for (const rate of [1, 2] as const) {
  for (const target of [0.5, 0.1, 0.01]) {
    const ebN0Db = ebN0DbForPer(target, rate, bytes);
    const m = measure(rate, ebN0Db);
    // Where theory reaches the PER measured (none for 0 or 1).
    const gapDb = m.per > 0 && m.per < 1 ? ebN0DbForPer(m.per, rate, bytes) - ebN0Db : null;
    rows.push({ rateMbps: rate, ebN0Db, theory: perTheory(10 ** (ebN0Db / 10), rate, bytes), measured: m.per, gapDb, counters: m.counters });
  }
}
const wallS = (performance.now() - t0) / 1000;

if (values.json) {
  process.stdout.write(`${JSON.stringify({ frames, bytes, samplesPerChip: sps, cfoHz, seed, wallS, rows }, null, 2)}\n`);
} else {
  process.stdout.write(
    `DSSS PER over AWGN: ${frames} frames of ${bytes} bytes per point, ${sps} sample(s) per chip, carrier offset ${cfoHz} Hz, seed ${seed} (${wallS.toFixed(1)} s)\n\n`,
  );
  process.stdout.write('| rate | Eb/N0 (dB) | PER, theory | PER, measured | from theory (dB) |\n|---|---:|---:|---:|---:|\n');
  for (const r of rows) {
    const gap = r.gapDb === null ? '-' : `${r.gapDb >= 0 ? '+' : ''}${r.gapDb.toFixed(2)}`;
    process.stdout.write(`| ${r.rateMbps} Mb/s | ${r.ebN0Db.toFixed(2)} | ${r.theory.toPrecision(2)} | ${r.measured.toFixed(3)} | ${gap} |\n`);
  }
}
