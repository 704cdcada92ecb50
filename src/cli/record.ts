import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { ism2g4 } from '../../radio/channels.js';
import { SigmfWriter } from '../../radio/file/writer.js';
import { sigmfPaths, type SigmfWriteDatatype } from '../../radio/file/sigmf.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import { defaultNodeConfig, loadNodeConfig } from '../config/load.js';
import type { NodeConfig } from '../config/types.js';
import { UsageError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { US_PER_S } from '../core/time.js';
import { checkOutputFile } from './output-path.js';
import { parsePnList } from './sense.js';
import { LISTED } from './listed.js';
import { testFrame } from './phy-frames.js';
import { modulateFrame } from '../../radio/phy/dsss/modem.js';
import type { DsssRate } from '../../radio/phy/dsss/plcp.js';
import { numberArg } from './usage.js';

export interface RecordOptions {
  out: string;
  pn: string;
  seconds: string;
  seed: string;
  /** Channels swept, in order; default every channel of the plan. */
  channels?: string;
  plan: string;
  dwellMs: string;
  powerDbm: string;
  burstMs: string;
  datatype: string;
  annotate?: boolean;
  json?: boolean;
  config?: string;
  /** Replace a recording already at --out. */
  force?: boolean;
  /** DSSS frames a mesh station sends on the band while it is recorded: CH:EVERY_MS[:BYTES[:RATE]][,...]. */
  frames?: string;
  /** Power frames arrive with (dBm for a full-scale sample). */
  frameDbm?: string;
  /** Sample rate of the recording; default the configuration's sensing radio's. */
  sampleRate?: string;
}

/** One station sending DSSS frames on the band while it is recorded. */
export interface FrameSource {
  channel: number;
  everyMs: number;
  bytes: number;
  rateMbps: DsssRate;
}

/**
 * Parses `--frames`: CH:EVERY_MS[:BYTES[:RATE]], comma separated; BYTES is the
 * payload (default 100), RATE 1 or 2 Mb/s (default 2).
 */
export function parseFrameSources(text: string, planChannels: number): FrameSource[] {
  const out: FrameSource[] = [];
  for (const item of text.split(',')) {
    const m = /^\s*(\d+):(\d+(?:\.\d+)?)(?::(\d+))?(?::(\d+))?\s*$/.exec(item);
    if (!m) throw new UsageError(`--frames: "${item}" is not CH:EVERY_MS[:BYTES[:RATE]] (e.g. 6:5:200:2)`);
    const channel = Number(m[1]);
    if (channel < 1 || channel > planChannels)
      throw new UsageError(`--frames: channel ${channel} is not in the ${planChannels}-channel plan (1-${planChannels})`);
    const everyMs = Number(m[2]);
    if (!(everyMs >= 1 && everyMs <= 10000)) throw new UsageError(`--frames: "${m[2]}" ms between frames is not in [1, 10000]`);
    const bytes = m[3] === undefined ? 100 : Number(m[3]);
    if (!(bytes >= 4 && bytes <= 2304)) throw new UsageError(`--frames: a payload of ${bytes} bytes is not in [4, 2304]`);
    const rate = m[4] === undefined ? 2 : Number(m[4]);
    if (rate !== 1 && rate !== 2) throw new UsageError(`--frames: rate ${rate} is not 1 or 2 (Mb/s)`);
    out.push({ channel, everyMs, bytes, rateMbps: rate });
  }
  return out;
}

export interface RecordResult {
  meta: string;
  data: string;
  seconds: number;
  seed: number;
  plan: string;
  sampleRateHz: number;
  calibrationDb: number;
  datatype: SigmfWriteDatatype;
  samples: number;
  captures: number;
  annotations: number;
  dwellMs: number;
  /** Per channel swept: seconds recorded on it and the busy fraction of the PNs on exactly it over those seconds (the ground truth). */
  channels: Array<{ channel: number; centerMHz: number; seconds: number; pnBusy: number }>;
  /** DSSS frames sent on the band while it was recorded (all of them, on any channel: the recording holds those on the channel swept at the time). */
  framesSent: number;
}

/** The recording's name when --out is a folder: FOLDER/recording.sigmf-meta and FOLDER/recording.sigmf-data. */
export const DEFAULT_RECORDING_NAME = 'recording';

/**
 * Where --out puts the recording (NAME, without .sigmf-meta or .sigmf-data):
 * inside an existing folder under the default name, else the path as given.
 * Both files are checked before anything is recorded: their folder must take
 * them, and a recording already there is replaced only with `force`.
 */
export async function recordingBase(out: string, force = false): Promise<string> {
  const isDir = await stat(out).then(
    (st) => st.isDirectory(),
    () => false,
  );
  const base = isDir ? join(out, DEFAULT_RECORDING_NAME) : sigmfPaths(out).base;
  const { meta, data } = sigmfPaths(base);
  for (const p of [meta, data]) await checkOutputFile('--out', p, { force });
  return base;
}

/** Largest block synthesised and written at once, in complex samples. */
const BLOCK_SAMPLES = 1 << 16;

/** Parses `1,6,11` against a plan of `planChannels` channels. */
export function parseChannelList(text: string, planChannels: number): number[] {
  const out: number[] = [];
  for (const item of text.split(',')) {
    const m = /^\s*(\d+)\s*$/.exec(item);
    if (!m) throw new UsageError(`--channels: "${item}" is not a channel number (e.g. 1,6,11)`);
    const ch = Number(m[1]);
    if (ch < 1 || ch > planChannels) throw new UsageError(`--channels: channel ${ch} is not in the ${planChannels}-channel plan (1-${planChannels})`);
    if (out.includes(ch)) throw new UsageError(`--channels: channel ${ch} is named twice`);
    out.push(ch);
  }
  return out;
}

/**
 * Records the emulated band into a SigMF recording in virtual time: the
 * receiver sweeps the channels in turn, `dwellMs` on each, for `seconds`,
 * one capture segment per dwell. The band, its PN loads and the receiver's
 * noise come from the seed as they do for `cogmesh sense`, so the same
 * arguments give the same bytes. Sample rate and calibration are those of
 * the configuration's sensing radio.
 */
export async function runRecord(o: RecordOptions): Promise<RecordResult> {
  const secs = numberArg('--seconds', o.seconds, (n) => n > 0 && n <= 3600, 'a number of seconds in (0, 3600]');
  const seed = numberArg('--seed', o.seed, (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff, 'an integer seed in [0, 4294967295]');
  const nch = numberArg('--plan', o.plan, (n) => n === 11 || n === 13, '11 or 13') as 11 | 13;
  const power = numberArg('--power-dbm', o.powerDbm, (n) => n >= -130 && n <= 30, 'a power in dBm in [-130, 30]');
  const burst = numberArg('--burst-ms', o.burstMs, (n) => n > 0 && n <= 10000, 'a mean burst length in ms in (0, 10000]');
  const dwellMs = numberArg('--dwell-ms', o.dwellMs, (n) => n > 0 && n <= 10000, 'a dwell per channel in ms in (0, 10000]');
  if (o.datatype !== 'cf32_le' && o.datatype !== 'ci16_le') throw new UsageError(`--datatype: "${o.datatype}" is not cf32_le or ci16_le`);
  const datatype: SigmfWriteDatatype = o.datatype;
  const pn = parsePnList(o.pn, nch, power, burst);
  const plan = ism2g4(nch);
  const sweep = o.channels === undefined ? plan.numbers : parseChannelList(o.channels, nch);
  const base = await recordingBase(o.out, o.force);

  const cfg: NodeConfig = o.config ? await loadNodeConfig(o.config) : defaultNodeConfig(1);
  const radio = cfg.radios[cfg.sensing.radio];
  const rate =
    o.sampleRate === undefined
      ? radio.sampleRateHz
      : numberArg('--sample-rate', o.sampleRate, (n) => n >= 1e3 && n <= 100e6, 'a sample rate in samples per second in [1000, 100000000]');
  const sources = o.frames === undefined || o.frames === '' ? [] : parseFrameSources(o.frames, nch);
  if (sources.length > 0 && rate !== 11e6 && rate !== 22e6) {
    throw new UsageError(`--frames: DSSS frames are sent at 1 or 2 samples per chip: record at 11e6 or 22e6 samples per second (--sample-rate), not ${rate}`);
  }
  const frameDbm = numberArg('--frame-dbm', o.frameDbm ?? '-60', (n) => n >= -130 && n <= 30, 'a power in dBm in [-130, 30]');
  // What SimFrontend.calibrationDb() gives at this gain: the blocks' full scale in dBm.
  const calibrationDb = radio.calibrationDb - radio.gainDb;
  const dwellSamples = Math.round((dwellMs * 1000 * rate) / US_PER_S);
  if (dwellSamples < 1) throw new UsageError(`--dwell-ms: ${dwellMs} ms is less than one sample at ${rate} samples per second`);
  const totalSamples = Math.round(secs * rate);

  // The band's stream as startNode forks it, so a seed means the same PN timeline here and in `sense`.
  const band = new EmulatedBand(plan, { ...cfg.sim.band, pn, phases: [] }, Rng.fromSeed(seed).fork('band'), { startUs: 0 });
  const noise = band.noiseRng('record');
  const sender = sources.length === 0 ? undefined : new FrameSender(band, sources, rate, frameDbm);
  const pnText = pn.length === 0 ? 'no PN' : pn.map((p) => `${p.channel}:${p.pattern.kind === 'fraction' ? p.pattern.busy : '?'}`).join(',');
  const writer = await SigmfWriter.create(base, {
    datatype,
    description:
      `cogmesh emulated band ${plan.name}, PN busy fractions ${pnText} at ${power} dBm with ${burst} ms mean bursts, ` +
      `swept over channels ${sweep.join(',')} for ${dwellMs} ms each, seed ${seed}` +
      (sources.length > 0
        ? `; 802.11b DSSS test frames at ${frameDbm} dBm on ${sources.map((f) => `channel ${f.channel} every ${f.everyMs} ms (${f.bytes} bytes at ${f.rateMbps} Mb/s)`).join(', ')}`
        : '') +
      '; core:datetime is virtual time from the epoch',
    recorder: 'cogmesh record',
    hw: 'cogmesh emulated band (radio/sim): complex Gaussian samples at the power received',
    epochUs: 0,
  });

  const usOf = (k: number): number => (k * US_PER_S) / rate;
  const truth = new Map<number, { us: number; busyUs: number }>(sweep.map((c) => [c, { us: 0, busyUs: 0 }]));
  const buf = new Float32Array(2 * Math.min(BLOCK_SAMPLES, dwellSamples));
  let annotations = 0;
  let k = 0;
  try {
    for (let visit = 0; k < totalSamples; visit++) {
      const ch = sweep[visit % sweep.length]!;
      const c = plan.get(ch);
      const k0 = k;
      const k1 = Math.min(k0 + dwellSamples, totalSamples);
      for (; k < k1;) {
        const n = Math.min(BLOCK_SAMPLES, k1 - k);
        const startUs = usOf(k);
        sender?.sendUntil(usOf(k + n));
        band.synthesize(c.centerHz, startUs, n, rate, calibrationDb, buf, noise);
        await writer.write({ data: buf, count: n, startUs, sampleRateHz: rate, centerHz: c.centerHz, calibrationDb, droppedSamples: 0 });
        k += n;
      }
      const t0 = usOf(k0);
      const t1 = usOf(k1);
      const intervals = band.pnBusyIntervals(ch, t0, t1);
      const tr = truth.get(ch)!;
      tr.us += t1 - t0;
      for (const [s, e] of intervals) tr.busyUs += e - s;
      if (o.annotate) {
        for (const [s, e] of intervals) {
          const a = k0 + Math.ceil(((s - t0) * rate) / US_PER_S);
          const b = k0 + Math.ceil(((e - t0) * rate) / US_PER_S);
          if (b <= a) continue;
          writer.annotate({
            sampleStart: a,
            sampleCount: b - a,
            label: 'pn',
            generator: 'cogmesh record',
            comment: `primary node on channel ${ch} transmitting at ${power} dBm`,
            freqLowerEdgeHz: c.centerHz - c.widthHz / 2,
            freqUpperEdgeHz: c.centerHz + c.widthHz / 2,
          });
          annotations++;
        }
      }
    }
  } finally {
    await writer.close();
  }
  return {
    meta: writer.metaPath,
    data: writer.dataPath,
    seconds: secs,
    seed,
    plan: plan.name,
    sampleRateHz: rate,
    calibrationDb,
    datatype,
    samples: writer.samplesWritten,
    captures: writer.captureCount,
    annotations,
    dwellMs,
    framesSent: sender?.sent ?? 0,
    channels: sweep.map((ch) => {
      const tr = truth.get(ch)!;
      return {
        channel: ch,
        centerMHz: plan.get(ch).centerHz / 1e6,
        seconds: Math.round(tr.us) / US_PER_S,
        pnBusy: tr.us > 0 ? Math.round((tr.busyUs / tr.us) * 10000) / 10000 : 0,
      };
    }),
  };
}

/**
 * The stations `--frames` names, each sending a test frame (`cogmesh phy tx`'s)
 * every `everyMs` on its channel, as IQ on the band: the recording holds the
 * frames of the channel swept at the time, with the band's noise and PNs,
 * and `cogmesh phy decode` finds them there. Frames are put on the band just
 * before the samples they fall in are synthesised.
 */
class FrameSender {
  sent = 0;
  private readonly next: number[];

  constructor(
    private readonly band: EmulatedBand,
    private readonly sources: readonly FrameSource[],
    private readonly rateHz: number,
    private readonly powerDbm: number,
  ) {
    // Stations start a few milliseconds apart, so that frames on one channel do not all collide.
    this.next = sources.map((_, i) => 1000 + 700 * i);
  }

  sendUntil(untilUs: number): void {
    const sps = this.rateHz === 11e6 ? 1 : 2;
    for (const [i, src] of this.sources.entries()) {
      const centerHz = this.band.plan.get(src.channel).centerHz;
      while (this.next[i]! < untilUs) {
        const wave = modulateFrame(testFrame(this.sent, src.bytes), { rateMbps: src.rateMbps, samplesPerChip: sps });
        this.band.transmitIq(`frames/${i}`, centerHz, wave, wave.length / 2, this.rateHz, this.next[i]!, this.powerDbm);
        this.sent++;
        this.next[i]! += src.everyMs * 1000;
      }
    }
  }
}

export function formatRecord(r: RecordResult): string {
  const lines = [
    `recorded ${r.seconds} s of ${r.plan} (virtual time, seed ${r.seed}) to ${r.meta}`,
    `${r.samples} samples at ${r.sampleRateHz / 1e6} Msps, ${r.datatype}, full scale ${r.calibrationDb} dBm; ` +
      `${r.captures} capture segments of ${r.dwellMs} ms${r.annotations > 0 ? `, ${r.annotations} PN annotations` : ''}`,
    ...(r.framesSent > 0
      ? [`${r.framesSent} DSSS frames sent on the band meanwhile (those on the channel being recorded are in it: \`cogmesh phy decode ${r.meta}\`)`]
      : []),
    ' ch   MHz  recorded s  PN busy',
  ];
  for (const c of r.channels) {
    lines.push(`${String(c.channel).padStart(3)}  ${c.centerMHz.toFixed(0)}  ${c.seconds.toFixed(3).padStart(10)}  ${c.pnBusy.toFixed(3).padStart(7)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function recordCommand(): Command {
  return new Command('record')
    .description(LISTED.record.about)
    .requiredOption(
      '--out <path>',
      `the recording: NAME, NAME.sigmf-meta or NAME.sigmf-data (both files are written), or an existing folder (FOLDER/${DEFAULT_RECORDING_NAME}.sigmf-meta ...)`,
    )
    .option('--force', 'replace a recording already at --out')
    .option('--pn <list>', 'busy fraction per channel, CH:BUSY[,CH:BUSY...]; channels not named are idle', '')
    .option('--seconds <s>', 'virtual seconds to record', '5')
    .option('--seed <n>', 'random seed (same seed, same recording)', '1')
    .option('--channels <list>', 'channels to sweep, in order, e.g. 1,6,11 (default: every channel of the plan)')
    .option('--dwell-ms <ms>', 'time on each channel per sweep', '10')
    .option('--plan <n>', 'channel plan: 11 or 13 channels', '11')
    .option('--power-dbm <dbm>', 'received power of every primary node while it transmits', '-50')
    .option('--burst-ms <ms>', 'mean length of a primary-node burst', '1')
    .option('--datatype <type>', 'sample format: cf32_le (exact) or ci16_le (half the size)', 'cf32_le')
    .option('--annotate', 'add an annotation for every PN burst on the channel being recorded (the ground truth)')
    .option('--json', 'print one JSON object describing the recording')
    .option('--config <file>', 'take the sample rate, calibration and band noise figure from this configuration')
    .option('--sample-rate <hz>', "samples per second of the recording (default: the configuration's sensing radio's)")
    .option('--frames <list>', 'DSSS frames a mesh station sends while recording, CH:EVERY_MS[:BYTES[:RATE]][,...] (needs --sample-rate 11e6 or 22e6)')
    .option('--frame-dbm <dbm>', 'power the frames arrive with', '-60')
    .action(async (o: RecordOptions) => {
      const r = await runRecord(o);
      process.stdout.write(o.json ? `${JSON.stringify(r)}\n` : formatRecord(r));
    });
}
