import { ism2g4 } from '../../radio/channels.js';
import type { Frontend } from '../../radio/frontend.js';
import { modulateFrame, shaperToRate, type DsssRate, type SamplesPerChip } from '../../radio/phy/dsss/index.js';
import type { RadioConfig } from '../config/types.js';
import { UsageError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import { openDeviceRadio } from '../daemon/radios.js';
import { testFrame, testPayload } from './phy-frames.js';
import { numberArg } from './usage.js';

export interface PhySendOptions {
  frontend: string;
  device: string;
  sampleRate: string;
  txGainDb: string;
  frames: string;
  bytes: string;
  payload?: string;
  rate: string;
  gapUs: string;
  leadUs: string;
  channel: string;
  json?: boolean;
}

export interface PhySendResult {
  frontend: string;
  id: string;
  sampleRateHz: number;
  centerHz: number;
  frames: number;
  frameBytes: number;
  rateMbps: DsssRate;
  /** Bursts the device sent late (or dropped for lateness), and samples it did not take. */
  late: number;
  unsent: number;
  /** From the first burst's start to the last one's end, on the device's clock (µs). */
  spanUs: number;
}

/** DSSS chips per second. */
const CHIP_RATE = 11e6;

/**
 * Sends `cogmesh phy tx`'s test frames through a radio front-end that can
 * transmit (uhd, sora) as timed bursts, `gapUs` apart on the device's clock,
 * for bench work on hardware: pulse-shaped at 1 or 2 samples per chip when
 * the device runs at 11 or 22 Msample/s, else shaped straight to its rate.
 */
export async function runPhySend(o: PhySendOptions): Promise<PhySendResult> {
  if (o.frontend !== 'uhd' && o.frontend !== 'sora') throw new UsageError(`--frontend: "${o.frontend}" is not uhd or sora (a front-end that transmits)`);
  const frames = numberArg('--frames', o.frames, (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000, 'a number of frames in [1, 1000000]');
  const rate = numberArg('--rate', o.rate, (n) => n === 1 || n === 2, '1 or 2 (Mb/s)') as DsssRate;
  const gapUs = numberArg('--gap-us', o.gapUs, (n) => Number.isInteger(n) && n >= 0 && n <= 10_000_000, 'a gap in whole microseconds in [0, 10000000]');
  const leadUs = numberArg('--lead-us', o.leadUs, (n) => Number.isInteger(n) && n >= 0 && n <= 10_000_000, 'a lead in whole microseconds in [0, 10000000]');
  const sampleRateHz = numberArg(
    '--sample-rate',
    o.sampleRate,
    (n) => Number.isSafeInteger(n) && n > 16.5e6 && n <= 200e6,
    'a whole rate in Hz above 16.5 MHz, at most 200 MHz',
  );
  const txGainDb = numberArg('--tx-gain-db', o.txGainDb, (n) => n >= 0 && n <= 100, 'a transmit gain in dB in [0, 100]');
  const plan = ism2g4(13);
  const channel = numberArg('--channel', o.channel, (n) => Number.isInteger(n) && plan.has(n), 'a 2.4 GHz channel number in [1, 13]');
  const { payload, bytes } = await testPayload(o);

  const radio: RadioConfig = { frontend: o.frontend, sampleRateHz, gainDb: 0, calibrationDb: 0, device: o.device, txGainDb, txChannel: 0, txAntenna: '' };
  const fe: Frontend = await openDeviceRadio('--frontend', radio, { id: 'phy-send' });
  try {
    if (!fe.capabilities.canTransmitIq) throw new UsageError(`--frontend ${o.frontend}: ${fe.id} has no transmit chain`);
    const rateHz = fe.capabilities.sampleRateHz;
    const centerHz = plan.get(channel).centerHz;
    await fe.tune(centerHz);
    const direct = rateHz === CHIP_RATE || rateHz === 2 * CHIP_RATE;
    const sps: SamplesPerChip = direct ? ((rateHz / CHIP_RATE) as SamplesPerChip) : 1;
    const shaper = direct ? undefined : shaperToRate(rateHz);
    let atUs: Micros | undefined;
    /** The device's time at the last report, and the host's then (ms): the device's clock runs with the host's. */
    let reportUs = 0;
    let reportHostMs = 0;
    let firstUs: Micros | undefined;
    let lastUs = 0;
    let late = 0;
    let unsent = 0;
    let frameBytes = 0;
    for (let k = 0; k < frames; k++) {
      const frame = testFrame(k, bytes, payload);
      frameBytes = frame.length;
      let wave = modulateFrame(frame, { rateMbps: rate, samplesPerChip: sps, shape: direct });
      if (shaper !== undefined) wave = shaper.filterAll(wave);
      const count = wave.length / 2;
      // A burst asked for a time the device has passed goes out late or not at all: no sooner than `leadUs` after the device's now.
      if (atUs !== undefined) atUs = Math.max(atUs, Math.ceil(reportUs + (performance.now() - reportHostMs) * 1000) + leadUs);
      const r = await fe.transmitIq({ data: wave, count, ...(atUs !== undefined ? { atUs } : {}) });
      if (r.late) late++;
      unsent += count - r.sent;
      firstUs ??= r.startUs;
      lastUs = r.endUs;
      reportUs = r.endUs;
      reportHostMs = performance.now();
      // The next burst a gap after this one ends, on the device's clock: timed, so that the gaps are the device's, not the host's.
      atUs = Math.ceil(r.endUs) + gapUs;
    }
    return {
      frontend: o.frontend,
      id: fe.id,
      sampleRateHz: rateHz,
      centerHz,
      frames,
      frameBytes,
      rateMbps: rate,
      late,
      unsent,
      spanUs: lastUs - (firstUs ?? 0),
    };
  } finally {
    await fe.close();
  }
}

export function formatPhySend(r: PhySendResult): string {
  return (
    `${r.id}: ${r.frames} frame(s) of ${r.frameBytes} bytes (+4 FCS) at ${r.rateMbps} Mb/s sent at ${r.centerHz / 1e6} MHz, ${r.sampleRateHz / 1e6} Msample/s, ` +
    `over ${(r.spanUs / 1000).toFixed(3)} ms of the device's clock; ${r.late} late, ${r.unsent} samples not taken\n`
  );
}
