/**
 * The 802.11b DSSS transmitter at 1 and 2 Mb/s (IEEE 802.11-2016 16.2.5 and
 * 16.2.6): scrambled bits to differential phase changes, DBPSK for the
 * preamble and header always and for a 1 Mb/s PSDU, DQPSK for a 2 Mb/s PSDU,
 * each symbol spread by the 11-chip Barker sequence to 11 Mchip/s.
 *
 * The output is complex baseband, interleaved I and Q in a Float32Array, at
 * an integer 1 or 2 samples per chip, of unit power. By default the chips
 * are rectangular: the spectrum is sinc-shaped and wider than the standard's
 * transmit mask allows, which is fine for loopback and the emulated band.
 * With `shape` the chips go through the raised-cosine pulse of shaping.ts,
 * which meets the mask: for the air.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { appendFcs } from './crc.js';
import { PREAMBLE_AND_HEADER_BITS, PSDU_MAX_BYTES, ppduBits, SERVICE_LOCKED_CLOCKS, type DsssRate } from './plcp.js';
import { Scrambler } from './scrambler.js';
import { ChipShaper, SHAPING_HALF_SPAN_CHIPS } from './shaping.js';

/** The 11-chip Barker sequence, leftmost chip first in time (16.2.5). */
export const BARKER_11: readonly number[] = [1, -1, 1, 1, -1, 1, 1, 1, -1, -1, -1];
export const CHIPS_PER_SYMBOL = 11;
/** The chip rate, chips per microsecond. */
export const CHIPS_PER_US = 11;

export type SamplesPerChip = 1 | 2;

/**
 * DQPSK (16.2.6): the phase change, in quarter turns counterclockwise, for
 * the dibit (d0, d1) with d0 first in time, indexed by 2 * d0 + d1:
 * 00 -> 0, 01 -> pi/2, 10 -> 3pi/2, 11 -> pi.
 */
export const DQPSK_QUARTERS_BY_DIBIT: readonly number[] = [0, 1, 3, 2];
/** The inverse of DQPSK_QUARTERS_BY_DIBIT: quarter turns to 2 * d0 + d1. */
export const DQPSK_DIBIT_BY_QUARTERS: readonly number[] = [0, 1, 3, 2];

/** Unit phasors for 0, 1, 2, 3 quarter turns. */
const QUARTER_I = [1, 0, -1, 0];
const QUARTER_Q = [0, 1, 0, -1];

export interface DsssTxOptions {
  rateMbps: DsssRate;
  /** Samples per chip of the output, 1 or 2 (11 or 22 Msample/s). */
  samplesPerChip: SamplesPerChip;
  /** Set SERVICE's locked clocks bit (plcp.ts); default off, SERVICE 0x00. */
  lockedClocks?: boolean;
  /**
   * Shape the chips (shaping.ts) instead of sending them rectangular; default
   * off. The burst then has SHAPING_HALF_SPAN_CHIPS chips' worth of the
   * pulse's reach before the first chip's centre and after the last chip:
   * ppduSamples + 2 * SHAPING_HALF_SPAN_CHIPS * samplesPerChip samples, the
   * first SYNC chip's centre at sample SHAPING_HALF_SPAN_CHIPS * samplesPerChip.
   */
  shape?: boolean;
}

/** Complex samples of the shaped burst before the first chip's centre (and after the last chip), at `samplesPerChip`. */
export function shapedLeadSamples(samplesPerChip: SamplesPerChip): number {
  return SHAPING_HALF_SPAN_CHIPS * samplesPerChip;
}

/** One shaper per samples per chip, made on first use (each holds a WebAssembly memory). */
const shapers = new Map<number, ChipShaper>();

function checkOptions(options: DsssTxOptions): void {
  if (options.rateMbps !== 1 && options.rateMbps !== 2) {
    throw new RangeArgumentError('rateMbps', options.rateMbps, '1 or 2');
  }
  if (options.samplesPerChip !== 1 && options.samplesPerChip !== 2) {
    throw new RangeArgumentError('samplesPerChip', options.samplesPerChip, '1 or 2');
  }
}

/** Samples (complex) of a long PPDU with a PSDU of `psduBytes` at `rateMbps`. */
export function ppduSamples(psduBytes: number, rateMbps: DsssRate, samplesPerChip: SamplesPerChip): number {
  const symbols = PREAMBLE_AND_HEADER_BITS + (8 * psduBytes) / rateMbps;
  return symbols * CHIPS_PER_SYMBOL * samplesPerChip;
}

/**
 * The baseband of a long PPDU carrying the MAC frame `frame`, given without
 * its FCS: the FCS is computed and appended here, so the PSDU on the air is
 * `frame` plus 4 bytes. The first symbol's phase is the reference 0.
 */
export function modulateFrame(frame: Uint8Array, options: DsssTxOptions): Float32Array {
  checkOptions(options);
  if (frame.length + 4 > PSDU_MAX_BYTES) {
    throw new RangeArgumentError('frame length', frame.length, `at most ${PSDU_MAX_BYTES - 4} bytes`);
  }
  if (options.shape === true) {
    let shaper = shapers.get(options.samplesPerChip);
    if (shaper === undefined) {
      shaper = new ChipShaper(options.samplesPerChip);
      shapers.set(options.samplesPerChip, shaper);
    }
    return shaper.shapeBurst(modulateFrame(frame, { ...options, samplesPerChip: 1, shape: false }));
  }
  const { rateMbps, samplesPerChip } = options;
  const bits = ppduBits(appendFcs(frame), rateMbps, options.lockedClocks === true ? SERVICE_LOCKED_CLOCKS : 0);
  new Scrambler().bits(bits);
  const out = new Float32Array(2 * ppduSamples((bits.length - PREAMBLE_AND_HEADER_BITS) / 8, rateMbps, samplesPerChip));
  let quarters = 0;
  let at = 0;
  const emit = (): void => {
    const i = QUARTER_I[quarters]!;
    const q = QUARTER_Q[quarters]!;
    for (let c = 0; c < CHIPS_PER_SYMBOL; c++) {
      const chip = BARKER_11[c]!;
      for (let s = 0; s < samplesPerChip; s++) {
        out[at++] = chip * i;
        out[at++] = chip * q;
      }
    }
  };
  let b = 0;
  for (; b < PREAMBLE_AND_HEADER_BITS; b++) {
    quarters = (quarters + 2 * bits[b]!) & 3; // DBPSK: 1 turns by pi
    emit();
  }
  if (rateMbps === 1) {
    for (; b < bits.length; b++) {
      quarters = (quarters + 2 * bits[b]!) & 3;
      emit();
    }
  } else {
    for (; b < bits.length; b += 2) {
      quarters = (quarters + DQPSK_QUARTERS_BY_DIBIT[2 * bits[b]! + bits[b + 1]!]!) & 3;
      emit();
    }
  }
  return out;
}
