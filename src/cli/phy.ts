import { createWriteStream } from 'node:fs';
import { Command } from 'commander';
import { ism2g4 } from '../../radio/channels.js';
import { openFileFrontend } from '../../radio/file/frontend.js';
import { readSigmf } from '../../radio/file/sigmf.js';
import { SigmfWriter } from '../../radio/file/writer.js';
import {
  DSSS_PASSBAND_HZ,
  DsssReceiver,
  driftSampleClock,
  modulateFrame,
  Resampler,
  shaperToRate,
  turnCarrier,
  type DsssRate,
  type DsssRxCounters,
  type SamplesPerChip,
} from '../../radio/phy/dsss/index.js';
import { perTheory } from '../../radio/phy/dsss/theory.js';
import { CogmeshError, UsageError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { LINKTYPE_IEEE802_11_RADIOTAP, PcapngWriter } from '../wire/pcapng.js';
import { testFrame, testPayload } from './phy-frames.js';
import { formatPhySend, runPhySend, type PhySendOptions } from './phy-send.js';
import { radiotapHeader } from '../wire/radiotap.js';
import { LISTED } from './listed.js';
import { numberArg } from './usage.js';
import { checkOutputFile } from './output-path.js';
import { recordingBase } from './record.js';

/**
 * `cogmesh phy`: the 802.11b DSSS PHY (radio/phy/dsss, docs/phy.md) on
 * recordings. `phy tx` writes frames, as the transmitter makes them, into a
 * SigMF recording (with noise at a chosen Eb/N0), for bench work and for a
 * front-end that replays recordings; `phy decode` finds the frames in a
 * recording and can write them to a pcapng file with radiotap headers. At
 * any other rate than 11 or 22 Msample/s (a front-end's own), both go
 * through a polyphase filter: tx shapes the chips straight to that rate
 * (radio/phy/dsss/shaping.ts), or with rectangular chips makes them at
 * 22 Msample/s and resamples (radio/phy/dsss/resample.ts); decode resamples
 * from it to 22 Msample/s.
 */

/** DSSS chips per second (802.11-2016 16.1). */
const CHIP_RATE = 11e6;

/** Most samples `phy decode` reads at one centre frequency (2 GiB of cf32). */
const MAX_DECODE_SAMPLES = 1 << 28;

export interface PhyTxOptions {
  out: string;
  force?: boolean;
  frames: string;
  bytes: string;
  payload?: string;
  rate: string;
  sps: string;
  /** The recording's rate, Hz, when it is not 11 or 22 Msample/s: the frames are made at 22 and resampled. */
  sampleRate?: string;
  /** 'rc' (raised-cosine pulse shaping, for the air) or 'rect' (rectangular chips). */
  shape: string;
  ebn0?: string;
  cfoHz: string;
  ppm?: string;
  gapUs: string;
  channel: string;
  seed: string;
  json?: boolean;
}

export interface PhyTxResult {
  meta: string;
  data: string;
  frames: number;
  frameBytes: number;
  rateMbps: DsssRate;
  samplesPerChip: SamplesPerChip;
  sampleRateHz: number;
  /** Whether the chips were shaped (raised cosine) or rectangular. */
  shape: 'rc' | 'rect';
  /** The rate the frames were made at and filtered from, when the recording's rate is another (else null): 11 MHz when shaped straight to it, 22 when rectangular. */
  resampledFromHz: number | null;
  centerHz: number;
  samples: number;
  ebn0Db: number | null;
  cfoHz: number;
  /** The receiver's sample clock against the transmitter's, ppm (0: the same clock). */
  ppm: number;
  /** The PER the theory of differential detection gives these frames at that Eb/N0 (docs/phy.md): what a decode should come near. */
  perTheory: number | null;
}

/**
 * Writes `frames` PPDUs into a SigMF recording at 11 Mchip/s times the
 * samples per chip, each after `gapUs` of silence, at unit power; with an
 * Eb/N0, complex white noise over the whole recording at that Eb/N0 for the
 * PSDU's rate (the header, always at 1 Mb/s, gets its bits' share: 3 dB more
 * at 2 Mb/s). The noise comes from the seed: the same arguments give the same
 * bytes.
 */
export async function runPhyTx(o: PhyTxOptions): Promise<PhyTxResult> {
  const frames = numberArg('--frames', o.frames, (n) => Number.isInteger(n) && n >= 1 && n <= 100_000, 'a number of frames in [1, 100000]');
  const rate = numberArg('--rate', o.rate, (n) => n === 1 || n === 2, '1 or 2 (Mb/s)') as DsssRate;
  const sps = numberArg('--sps', o.sps, (n) => n === 1 || n === 2, '1 or 2 (samples per chip)') as SamplesPerChip;
  const gapUs = numberArg('--gap-us', o.gapUs, (n) => Number.isInteger(n) && n >= 0 && n <= 1_000_000, 'a gap in whole microseconds in [0, 1000000]');
  const seed = numberArg('--seed', o.seed, (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff, 'an integer seed in [0, 4294967295]');
  const shape = o.shape === 'rc' || o.shape === 'rect' ? o.shape : undefined;
  if (shape === undefined) throw new UsageError(`--shape: "${o.shape}" is not rc (raised-cosine pulse shaping) or rect (rectangular chips)`);
  const sampleRateHz =
    o.sampleRate === undefined
      ? CHIP_RATE * sps
      : numberArg(
          '--sample-rate',
          o.sampleRate,
          (n) => Number.isSafeInteger(n) && n > 2 * DSSS_PASSBAND_HZ && n <= 200e6,
          "a whole rate in Hz above 16.5 MHz (twice the shaped signal's 8.25 MHz), at most 200 MHz",
        );
  const ebn0 = o.ebn0 === undefined ? undefined : numberArg('--ebn0', o.ebn0, (n) => n >= -10 && n <= 60, 'an Eb/N0 in dB in [-10, 60]');
  const cfoHz = numberArg('--cfo-hz', o.cfoHz, (n) => Math.abs(n) <= 1e6, 'a carrier offset in Hz in [-1000000, 1000000]');
  const ppm = numberArg('--ppm', o.ppm ?? '0', (n) => Math.abs(n) <= 1000, 'a sample clock offset in ppm in [-1000, 1000]');
  const plan = ism2g4(13);
  const channel = numberArg('--channel', o.channel, (n) => Number.isInteger(n) && plan.has(n), 'a 2.4 GHz channel number in [1, 13]');
  const { payload, bytes } = await testPayload(o);
  const base = await recordingBase(o.out, o.force);

  // At a front-end's own rate, frames are made at 2 samples per chip and resampled.
  // At a front-end's own rate: shaped chips go straight to it through one filter, rectangular ones are made at 22 Msample/s and resampled.
  const direct = sampleRateHz === CHIP_RATE || sampleRateHz === 2 * CHIP_RATE;
  const makeSps: SamplesPerChip = direct ? ((sampleRateHz / CHIP_RATE) as SamplesPerChip) : shape === 'rc' ? 1 : 2;
  const makeRate = makeSps * CHIP_RATE;
  const resampler = direct
    ? undefined
    : usable('--sample-rate', makeRate, sampleRateHz, () =>
        shape === 'rc' ? shaperToRate(sampleRateHz) : new Resampler({ inRateHz: makeRate, outRateHz: sampleRateHz }),
      );
  const centerHz = plan.get(channel).centerHz;
  const gap = Math.round((gapUs * makeRate) / 1e6);
  const noise = Rng.fromSeed(seed).fork('phy-tx');
  // Unit-power samples: a PSDU bit lasts sampleRateHz / (rate * 1e6) of them, Eb = that; N0 is the noise power per sample.
  const sigma = ebn0 === undefined ? 0 : Math.sqrt(sampleRateHz / 1e6 / rate / 10 ** (ebn0 / 10) / 2);
  const writer = await SigmfWriter.create(base, {
    description:
      `cogmesh phy tx: ${frames} 802.11b DSSS long-preamble PPDUs at ${rate} Mb/s, ` +
      `${resampler === undefined ? `${makeSps} sample(s) per chip` : `made at ${makeRate / 1e6} Msample/s and filtered to ${sampleRateHz} Hz`}, ` +
      `${shape === 'rc' ? 'raised-cosine pulse shaping (roll-off 0.5)' : 'rectangular chips'}, ` +
      `${gapUs} us apart, ${ebn0 === undefined ? 'no noise' : `AWGN at Eb/N0 ${ebn0} dB`}, carrier offset ${cfoHz} Hz, sample clock ${ppm} ppm, seed ${seed}; unit power`,
    recorder: 'cogmesh phy tx',
    hw: `cogmesh DSSS transmitter (radio/phy/dsss), ${shape === 'rc' ? 'raised-cosine chips' : 'rectangular chips'}`,
  });
  let samples = 0;
  let frameBytes = 0;
  // Transmitter samples so far: with a clock offset, the recording's sample n is the transmitter's at n / (1 + ppm 1e-6).
  let sent = 0;
  const put = async (made: Float32Array): Promise<void> => {
    let tx = made;
    if (resampler !== undefined) {
      tx = new Float32Array(2 * resampler.outputsFor(made.length / 2));
      resampler.process(made, tx);
    }
    let iq = tx;
    if (ppm !== 0) iq = driftSampleClock(tx, ppm, samples / (1 + ppm * 1e-6) - sent);
    sent += tx.length / 2;
    // The offset turns the signal (the noise, circularly symmetric, is the same turned or not).
    turnCarrier(iq, cfoHz, sampleRateHz, samples);
    if (sigma > 0) {
      const n = new Float32Array(iq.length);
      noise.fillNormal(n, sigma);
      for (let i = 0; i < iq.length; i++) n[i] = n[i]! + iq[i]!;
      iq = n;
    }
    const count = iq.length / 2;
    await writer.write({ data: iq, count, startUs: (samples * 1e6) / sampleRateHz, sampleRateHz, centerHz, calibrationDb: 0, droppedSamples: 0 });
    samples += count;
  };
  for (let k = 0; k < frames; k++) {
    if (gap > 0) await put(new Float32Array(2 * gap));
    const frame = testFrame(k, bytes, payload);
    frameBytes = frame.length;
    await put(modulateFrame(frame, { rateMbps: rate, samplesPerChip: makeSps, shape: shape === 'rc' && direct }));
  }
  if (gap > 0) await put(new Float32Array(2 * gap));
  await writer.close();
  return {
    meta: writer.metaPath,
    data: writer.dataPath,
    frames,
    frameBytes,
    rateMbps: rate,
    samplesPerChip: makeSps,
    sampleRateHz,
    shape,
    resampledFromHz: resampler === undefined ? null : makeRate,
    centerHz,
    samples,
    ebn0Db: ebn0 ?? null,
    cfoHz,
    ppm,
    perTheory: ebn0 === undefined ? null : perTheory(10 ** (ebn0 / 10), rate, frameBytes),
  };
}

/** make(), the filter from `inHz` to `outHz`, or a UsageError naming `what` when it cannot be made. */
function usable<T>(what: string, inHz: number, outHz: number, make: () => T): T {
  try {
    return make();
  } catch (e) {
    if (e instanceof CogmeshError) throw new UsageError(`${what}: no resampler from ${inHz} to ${outHz} Hz (${e.message})`);
    throw e;
  }
}

export interface DecodedFrame {
  /** Time of its first preamble sample from the recording's start, microseconds. */
  atUs: number;
  centerHz: number;
  rateMbps: DsssRate;
  /** The PSDU's length (the MAC frame and its FCS). */
  bytes: number;
  fcsOk: boolean;
  levelDb: number;
  snrDb: number;
  /** The carrier offset the receiver estimated, Hz. */
  cfoHz: number;
  /** The MAC frame and its FCS. */
  psdu: Uint8Array;
}

export interface PhyDecodeResult {
  recording: string;
  sampleRateHz: number;
  /** The receiver's samples per chip (2 when the recording is resampled). */
  samplesPerChip: SamplesPerChip;
  /** The rate the recording was resampled to for the receiver (22 Msample/s), or null when it was not. */
  resampledToHz: number | null;
  frames: DecodedFrame[];
  counters: DsssRxCounters;
}

/**
 * The frames in a recording: each centre frequency's samples are read whole
 * and handed to the receiver, at 11 or 22 Msample/s (1 or 2 samples per
 * chip) as they are, at any other rate above 16.5 Msample/s resampled to 22
 * (docs/phy.md).
 */
export async function runPhyDecode(path: string): Promise<PhyDecodeResult> {
  const rec = await readSigmf(path).catch((e: Error) => Promise.reject(new UsageError(`${path}: ${e.message}`)));
  const rate = rec.meta.global.sampleRateHz;
  let resampler: Resampler | undefined;
  if (rate !== CHIP_RATE && rate !== 2 * CHIP_RATE) {
    if (!(Number.isSafeInteger(rate) && rate > 2 * DSSS_PASSBAND_HZ)) {
      throw new UsageError(
        `${path}: its sample rate is ${rate} Hz; the DSSS receiver takes 11 or 22 Msample/s (1 or 2 samples per chip), ` +
          `or resamples to 22 from a whole rate above 16.5 Msample/s (twice the signal's 8.25 MHz)`,
      );
    }
    resampler = usable(path, rate, 2 * CHIP_RATE, () => new Resampler({ inRateHz: rate, outRateHz: 2 * CHIP_RATE }));
  }
  const rxRate = resampler === undefined ? rate : 2 * CHIP_RATE;
  const sps = (rxRate / CHIP_RATE) as SamplesPerChip;
  const fe = await openFileFrontend(rec.metaPath, { loop: false, reads: 'sync' });
  const rx = new DsssReceiver({ samplesPerChip: sps });
  const frames: DecodedFrame[] = [];
  try {
    for (const f of fe.frequencies) {
      await fe.tune(f);
      const n = fe.samplesAt(f);
      if (n > MAX_DECODE_SAMPLES) throw new UsageError(`${path}: ${n} samples at ${f / 1e6} MHz; decode reads at most ${MAX_DECODE_SAMPLES} at one frequency`);
      const block = fe.readIqSync(n);
      let iq = block.data.subarray(0, 2 * block.count);
      if (resampler !== undefined) {
        resampler.reset();
        iq = resampler.resampleAll(iq);
      }
      // One stream per centre frequency: its frames' start samples count from the block's start.
      for (const fr of [...rx.receive(iq), ...rx.flush()]) {
        frames.push({
          atUs: Math.round(block.startUs + (fr.startSample * 1e6) / rxRate),
          centerHz: f,
          rateMbps: fr.rateMbps,
          bytes: fr.psdu.length,
          fcsOk: fr.fcsOk,
          levelDb: fr.levelDb,
          snrDb: fr.snrDb,
          cfoHz: fr.cfoHz,
          psdu: fr.psdu,
        });
      }
    }
  } finally {
    await fe.close();
  }
  frames.sort((a, b) => a.atUs - b.atUs);
  return {
    recording: rec.metaPath,
    sampleRateHz: rate,
    samplesPerChip: sps,
    resampledToHz: resampler === undefined ? null : rxRate,
    frames,
    counters: { ...rx.counters },
  };
}

/** Writes the decoded frames as pcapng to `write`: one 802.11 interface with radiotap headers, each frame with its FCS (flagged bad when it is). */
export function writeDecodedPcap(r: PhyDecodeResult, write: (bytes: Uint8Array) => void): void {
  const w = new PcapngWriter(write, 'cogmesh phy decode');
  const ifc = w.addInterface({ name: 'dsss', description: `${r.recording}, ${r.sampleRateHz / 1e6} Msample/s`, linkType: LINKTYPE_IEEE802_11_RADIOTAP });
  for (const f of r.frames) {
    const rt = radiotapHeader({ freqMHz: Math.round(f.centerHz / 1e6), rateBps: f.rateMbps * 1e6, ofdm: false }, { fcs: true, badFcs: !f.fcsOk });
    const data = new Uint8Array(rt.length + f.psdu.length);
    data.set(rt);
    data.set(f.psdu, rt.length);
    w.packet(ifc, f.atUs, data);
  }
}

function formatDecode(r: PhyDecodeResult): string {
  const lines = [
    `${r.recording}: ${r.frames.length} frame(s) at ${r.sampleRateHz / 1e6} Msample/s${r.resampledToHz === null ? '' : ` (resampled to ${r.resampledToHz / 1e6})`}`,
  ];
  for (const f of r.frames) {
    lines.push(
      `  ${(f.atUs / 1000).toFixed(3).padStart(10)} ms  ${(f.centerHz / 1e6).toFixed(0)} MHz  ${f.rateMbps} Mb/s  ${String(f.bytes).padStart(4)} bytes  ` +
        `FCS ${f.fcsOk ? 'ok ' : 'BAD'}  level ${f.levelDb.toFixed(1)} dB  SNR ${f.snrDb.toFixed(1)} dB  CFO ${(f.cfoHz / 1e3).toFixed(1)} kHz`,
    );
  }
  const c = r.counters;
  lines.push(
    `  detections ${c.detections}; not decoded: no SFD ${c.noSfd}, header CRC ${c.headerCrc}, bad SIGNAL ${c.badSignal}, bad LENGTH ${c.badLength}, truncated ${c.truncated}; FCS failed ${c.fcs}`,
  );
  return `${lines.join('\n')}\n`;
}

/** The options that say which test frames to make (`tx` and `send`). */
function testFrameOptions(c: Command): Command {
  return c
    .option('--frames <n>', 'frames to send', '10')
    .option('--bytes <n>', 'payload bytes of each frame (a pattern: the frame number, then a counter)', '100')
    .option('--payload <file>', "each frame's payload: this file's bytes (instead of --bytes' pattern)")
    .option('--rate <mbps>', 'PSDU rate: 1 (DBPSK) or 2 (DQPSK) Mb/s', '2');
}

export function phyCommand(): Command {
  const phy = new Command('phy').description(LISTED.phy.about);
  testFrameOptions(phy.command('tx'))
    .description('write 802.11b DSSS frames into a SigMF recording (NAME.sigmf-meta + NAME.sigmf-data), with noise at an Eb/N0')
    .requiredOption('--out <path>', 'the recording: NAME, NAME.sigmf-meta or NAME.sigmf-data, or a folder')
    .option('--force', 'replace a recording already there')
    .option('--sps <n>', 'samples per chip: 1 or 2 (11 or 22 Msample/s)', '2')
    .option('--sample-rate <hz>', "the recording's rate instead, a front-end's own (e.g. 20000000 or 25000000): frames are made at 22 Msample/s and resampled")
    .option('--shape <kind>', 'rc: raised-cosine pulse shaping, within the 802.11b transmit mask (for the air); rect: rectangular chips', 'rc')
    .option('--ebn0 <db>', 'add white noise at this Eb/N0 (dB, per PSDU bit); default: no noise')
    .option('--cfo-hz <hz>', 'carrier frequency offset of the transmitter, Hz (two radios at +-20 ppm: up to +-100 kHz at 2.4 GHz)', '0')
    .option('--ppm <ppm>', "the receiver's sample clock against the transmitter's, parts per million (802.11b allows +-25 each)", '0')
    .option('--gap-us <us>', 'silence before each frame and after the last, microseconds', '100')
    .option('--channel <n>', "the recording's centre: a 2.4 GHz channel", '6')
    .option('--seed <n>', "the noise's seed (same arguments, same bytes)", '1')
    .option('--json', 'print the result as JSON')
    .action(async (o: PhyTxOptions) => {
      const r = await runPhyTx(o);
      if (o.json) process.stdout.write(`${JSON.stringify(r)}\n`);
      else
        process.stdout.write(
          `${r.meta}: ${r.frames} frame(s) of ${r.frameBytes} bytes (+4 FCS) at ${r.rateMbps} Mb/s, ${r.sampleRateHz / 1e6} Msample/s at ${r.centerHz / 1e6} MHz, ` +
            `${r.samples} samples${r.ebn0Db === null ? '' : `, Eb/N0 ${r.ebn0Db} dB (theory: PER ${r.perTheory!.toPrecision(2)})`}\n`,
        );
    });
  testFrameOptions(phy.command('send'))
    .description('send 802.11b DSSS test frames through a radio that transmits (uhd, sora) as timed bursts, for bench work on hardware')
    .requiredOption('--frontend <kind>', 'uhd or sora')
    .option('--device <args>', 'the device: UHD device arguments (e.g. type=b200) or the SORA ring path (its TX ring is PATH.tx)', '')
    .option('--sample-rate <hz>', "the radio's rate (a SORA ring's is its own): 11e6 or 22e6 as made, any whole rate above 16.5 MHz shaped to it", '22000000')
    .option('--tx-gain-db <db>', 'transmit gain (UHD; 0 is the least power)', '0')
    .option('--gap-us <us>', "silence between frames on the device's clock, microseconds", '1000')
    .option('--lead-us <us>', "each burst is timed at least this long after the device's now (as the host last learnt it), so that it is not late", '5000')
    .option('--channel <n>', 'a 2.4 GHz channel', '6')
    .option('--json', 'print the result as JSON')
    .action(async (o: PhySendOptions) => {
      const r = await runPhySend(o);
      process.stdout.write(o.json ? `${JSON.stringify(r)}\n` : formatPhySend(r));
    });
  phy
    .command('decode')
    .description('list the 802.11b DSSS frames in a SigMF recording (at any rate above 16.5 Msample/s); --pcap writes them as pcapng with radiotap headers')
    .argument('<recording>', 'NAME.sigmf-meta (or NAME)')
    .option('--pcap <file>', 'write the frames there as pcapng (802.11 with radiotap, FCS included)')
    .option('--force', 'replace the --pcap file if it exists')
    .option('--json', 'print the frames and counters as JSON')
    .action(async (path: string, o: { pcap?: string; force?: boolean; json?: boolean }) => {
      if (o.pcap !== undefined) await checkOutputFile('--pcap', o.pcap, { force: o.force === true });
      const r = await runPhyDecode(path);
      if (o.pcap !== undefined) {
        const out = createWriteStream(o.pcap);
        writeDecodedPcap(r, (b) => void out.write(b));
        await new Promise<void>((resolve, reject) => out.once('error', reject).end(resolve));
      }
      if (o.json) {
        const frames = r.frames.map(({ psdu, ...f }) => ({ ...f, psduHex: Array.from(psdu, (b) => b.toString(16).padStart(2, '0')).join('') }));
        process.stdout.write(`${JSON.stringify({ ...r, frames })}\n`);
      } else process.stdout.write(formatDecode(r));
    });
  return phy;
}
