/**
 * The DSSS PHY's packet error rate against Eb/N0 over AWGN, next to the
 * theory of differential detection (radio/phy/dsss/theory.ts): the table and
 * the figure of docs/phy.md.
 *
 *   node --import tsx bench/phy-per.ts [--frames 1000] [--bytes 100] [--sps 1|2|both] [--cfo-hz 50000] [--ppm 20]
 *                                      [--seed 7] [--plots DIR | --update-docs] [--json]
 *
 * For each rate, samples per chip and channel, frames of `bytes` random bytes
 * go through the transmitter, ten to a buffer with noise between them and
 * random offsets, at the Eb/N0 where theory gives a PER of 0.5, 0.1 and 0.01;
 * a frame counts when the receiver returns it with its FCS good and its bytes
 * those sent. The receiver takes each point's buffers as one stream. Two
 * channels: ideal (AWGN alone), and impaired: a carrier offset of `--cfo-hz`
 * and a receiver sample clock `--ppm` off (radio/phy/dsss/channel.ts), their
 * signs taking the four combinations in turn from buffer to buffer. The
 * clock's drift applies to the transmitted signal, the noise comes after it
 * (as a receiver's own noise does).
 *
 * Eb is per PSDU bit, the Barker spreading inside it (noise per sample from
 * Eb/N0, 11 chips a symbol and the samples per chip). "From theory" is the
 * measured PER's distance from theory in dB, read off the theory curve: the
 * Eb/N0 theory needs for the PER measured, less the Eb/N0 used (positive: the
 * receiver does better than theory).
 *
 * The table goes to stdout; a plot of PER against Eb/N0 (SVG) into --plots
 * (default out/figures; '' writes none). --update-docs writes the plot into
 * docs/figures and the table into docs/phy.md between its phy-per markers.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DsssReceiver, driftSampleClock, modulateFrame, turnCarrier, type DsssRate, type SamplesPerChip } from '../radio/phy/dsss/index.js';
import { ebN0DbForPer, perTheory } from '../radio/phy/dsss/theory.js';
import { Rng } from '../src/core/rng.js';
import { lineChart, writeChart, type Series } from './repro/plot.js';

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '1000' },
    bytes: { type: 'string', default: '100' },
    sps: { type: 'string', default: 'both' },
    'cfo-hz': { type: 'string', default: '50000' },
    ppm: { type: 'string', default: '20' },
    seed: { type: 'string', default: '7' },
    plots: { type: 'string' },
    'update-docs': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const fail = (what: string): never => {
  process.stderr.write(`bench/phy-per.ts: ${what}\n`);
  process.exit(2);
};
const frames = Number(values.frames);
if (!(Number.isInteger(frames) && frames >= 40 && frames % 40 === 0)) fail(`--frames: "${values.frames}" is not a multiple of 40, at least 40`);
const bytes = Number(values.bytes);
if (!(Number.isInteger(bytes) && bytes >= 1 && bytes <= 2300)) fail(`--bytes: "${values.bytes}" is not a frame length in [1, 2300]`);
const spsList: SamplesPerChip[] =
  values.sps === 'both' ? [1, 2] : values.sps === '1' ? [1] : values.sps === '2' ? [2] : fail(`--sps: "${values.sps}" is not 1, 2 or both`);
const cfoHz = Number(values['cfo-hz']);
if (!(Number.isFinite(cfoHz) && Math.abs(cfoHz) <= 250e3)) fail(`--cfo-hz: "${values['cfo-hz']}" is not a carrier offset in [-250000, 250000] Hz`);
const ppm = Number(values.ppm);
if (!(Number.isFinite(ppm) && Math.abs(ppm) <= 100)) fail(`--ppm: "${values.ppm}" is not a clock offset in [-100, 100] ppm`);
const seed = Number(values.seed);
if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) fail(`--seed: "${values.seed}" is not an integer seed`);
if (values['update-docs'] && values.plots !== undefined) fail('--update-docs writes docs/figures: give it or --plots DIR, not both');
const plotDir = values['update-docs']
  ? fileURLToPath(new URL('../docs/figures', import.meta.url))
  : (values.plots ?? fileURLToPath(new URL('../out/figures', import.meta.url)));
const DOC = fileURLToPath(new URL('../docs/phy.md', import.meta.url));
const FIGURE = 'phy-per.svg';

const TARGETS = [0.5, 0.1, 0.01];
const FRAMES_PER_BUFFER = 10;
/** The impaired channel's signs of (carrier offset, clock offset), buffer by buffer. */
const SIGNS: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [-1, -1],
  [1, -1],
  [-1, 1],
];

type Channel = 'ideal' | 'impaired';
type DsssRxCounters = DsssReceiver['counters'];

interface Point {
  rateMbps: DsssRate;
  samplesPerChip: SamplesPerChip;
  channel: Channel;
  ebN0Db: number;
  theory: number;
  measured: number;
  /** dB along the theory curve (positive: better than theory); null for a PER of 0 or 1. */
  gapDb: number | null;
  counters: DsssRxCounters;
}

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** The PER measured over `frames` frames at `ebN0Db`, and the receiver's counters. */
function measure(rng: Rng, rate: DsssRate, sps: SamplesPerChip, channel: Channel, ebN0Db: number): { per: number; counters: DsssRxCounters } {
  const sigma = Math.sqrt((11 * sps) / (rate * 2 * 10 ** (ebN0Db / 10)));
  const rx = new DsssReceiver({ samplesPerChip: sps });
  const gap = 400 * sps;
  let good = 0;
  const check = (got: ReturnType<DsssReceiver['receive']>, sent: Set<string>): void => {
    for (const fr of got) if (fr.fcsOk && sent.has(hex(fr.frame))) good++;
  };
  let sent = new Set<string>();
  for (let b = 0; b < frames / FRAMES_PER_BUFFER; b++) {
    const txs: Float32Array[] = [];
    // Frames of the buffer before are still wanted: the last may be decoded with this buffer.
    const now = new Set<string>();
    for (let k = 0; k < FRAMES_PER_BUFFER; k++) {
      const f = new Uint8Array(bytes);
      for (let i = 0; i < bytes; i++) f[i] = rng.int(0, 255);
      now.add(hex(f));
      txs.push(modulateFrame(f, { rateMbps: rate, samplesPerChip: sps }));
    }
    sent = new Set([...sent, ...now]);
    const total = txs.reduce((s, t) => s + t.length / 2 + gap + 7, gap + 21);
    let buf: Float32Array = new Float32Array(2 * total);
    let at = gap + rng.int(0, 21);
    for (const t of txs) {
      buf.set(t, 2 * at);
      at += t.length / 2 + gap + rng.int(0, 7);
    }
    const [cfoSign, ppmSign] = SIGNS[b % SIGNS.length]!;
    // The receiver's clock samples the transmitted signal at a random phase; its own noise comes after.
    if (channel === 'impaired') buf = driftSampleClock(buf, ppmSign * ppm, rng.next());
    const noise = new Float32Array(buf.length);
    rng.fillNormal(noise, sigma);
    for (let i = 0; i < buf.length; i++) buf[i] = buf[i]! + noise[i]!;
    if (channel === 'impaired') turnCarrier(buf, cfoSign * cfoHz, 11e6 * sps);
    check(rx.receive(buf), sent);
    sent = now;
  }
  check(rx.flush(), sent);
  return { per: 1 - good / frames, counters: { ...rx.counters } };
}

const rng = Rng.fromSeed(seed).fork('phy-per');
const points: Point[] = [];
const t0 = performance.now();
for (const channel of ['ideal', 'impaired'] as const) {
  for (const sps of spsList) {
    for (const rate of [1, 2] as const) {
      for (const target of TARGETS) {
        const ebN0Db = ebN0DbForPer(target, rate, bytes);
        const m = measure(rng.fork(`${channel}/${sps}/${rate}/${target}`), rate, sps, channel, ebN0Db);
        // Where theory reaches the PER measured (none for 0 or 1).
        const gapDb = m.per > 0 && m.per < 1 ? ebN0DbForPer(m.per, rate, bytes) - ebN0Db : null;
        points.push({
          rateMbps: rate,
          samplesPerChip: sps,
          channel,
          ebN0Db,
          theory: perTheory(10 ** (ebN0Db / 10), rate, bytes),
          measured: m.per,
          gapDb,
          counters: m.counters,
        });
      }
    }
  }
}
const wallS = (performance.now() - t0) / 1000;

const impairment = `${cfoHz / 1e3} kHz, +-${ppm} ppm`;
const columns = (['ideal', 'impaired'] as const).flatMap((channel) => spsList.map((sps) => ({ channel, sps })));
const columnName = (c: { channel: Channel; sps: SamplesPerChip }): string =>
  `${c.channel === 'ideal' ? 'AWGN' : `+-${impairment}`}, ${c.sps} sample${c.sps === 1 ? '' : 's'}/chip`;

/** The Markdown table: one row per rate and target PER, one column per channel and samples per chip, "PER (dB from theory)". */
function table(): string {
  const lines = [`| rate | Eb/N0 (dB) | PER, theory | ${columns.map(columnName).join(' | ')} |`, `|---|---:|---:|${columns.map(() => '---:').join('|')}|`];
  for (const rate of [1, 2] as const) {
    for (const target of TARGETS) {
      const row = points.filter((p) => p.rateMbps === rate && Math.abs(p.theory - target) < target / 100);
      const cells = columns.map((c) => {
        const p = row.find((q) => q.channel === c.channel && q.samplesPerChip === c.sps)!;
        const gap = p.gapDb === null ? '-' : `${p.gapDb >= 0 ? '+' : ''}${p.gapDb.toFixed(2)}`;
        return `${p.measured.toFixed(3)} (${gap})`;
      });
      lines.push(`| ${rate} Mb/s | ${row[0]!.ebN0Db.toFixed(2)} | ${row[0]!.theory.toPrecision(2)} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

/** PER against Eb/N0: theory as lines, measured points per rate, samples per chip and channel (PER 0 left out of the log scale). */
async function plot(): Promise<string> {
  const series: Series[] = [];
  for (const rate of [1, 2] as const) {
    const lo = Math.floor(ebN0DbForPer(0.7, rate, bytes) * 2) / 2;
    const hi = Math.ceil(ebN0DbForPer(0.005, rate, bytes) * 2) / 2;
    const pts = [];
    for (let x = lo; x <= hi + 1e-9; x += 0.5) pts.push({ x, y: perTheory(10 ** (x / 10), rate, bytes) });
    series.push({ name: `${rate} Mb/s, theory`, points: pts });
  }
  for (const c of columns) {
    for (const rate of [1, 2] as const) {
      const pts = points
        .filter((p) => p.rateMbps === rate && p.channel === c.channel && p.samplesPerChip === c.sps && p.measured > 0)
        .map((p) => ({ x: Number(p.ebN0Db.toFixed(2)), y: p.measured }));
      series.push({ name: `${rate} Mb/s, ${columnName(c)}`, points: pts });
    }
  }
  return lineChart({
    title: `DSSS PER over AWGN, ${bytes}-byte frames, ${frames} a point`,
    xLabel: 'Eb/N0 (dB)',
    yLabel: 'packet error rate',
    series,
    yLog: true,
    height: 360,
  });
}

const header = `DSSS PER over AWGN: ${frames} frames of ${bytes} bytes per point, impaired: +-${cfoHz} Hz and +-${ppm} ppm, seed ${seed} (${wallS.toFixed(1)} s)`;
if (values.json) {
  process.stdout.write(`${JSON.stringify({ frames, bytes, cfoHz, ppm, seed, wallS, points }, null, 2)}\n`);
} else {
  process.stdout.write(`${header}\n\nPER measured (dB from theory)\n\n${table()}\n`);
}
if (plotDir !== '') {
  const svg = await plot();
  await writeChart(`${plotDir}/${FIGURE}`, svg);
  process.stderr.write(`wrote ${plotDir}/${FIGURE}\n`);
}
if (values['update-docs']) {
  const begin = '<!-- phy-per table: npm run bench:phy-per -- --update-docs -->';
  const end = '<!-- end of phy-per table -->';
  const doc = await readFile(DOC, 'utf8');
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) fail(`${DOC}: no "${begin}" ... "${end}" markers to put the table between`);
  const note = `${frames} frames of ${bytes} bytes a point, impaired: the four sign combinations of +-${cfoHz / 1e3} kHz and +-${ppm} ppm, seed ${seed}.`;
  await writeFile(DOC, `${doc.slice(0, from + begin.length)}\n\n${note}\n\n${table()}\n\n${doc.slice(to)}`, 'utf8');
  process.stderr.write(`rewrote the table in ${DOC}\n`);
}
