/**
 * An ideal-timing receiver for the 802.11b DSSS PHY at 1 and 2 Mb/s
 * (IEEE 802.11-2016 16.2): it assumes the transmitter's carrier and sample
 * clock equal its own (no frequency offset, no drift) and that a frame's
 * chips fall on whole samples. Within that it finds frames anywhere in a
 * buffer, at any sample offset, among noise.
 *
 * For each stretch of samples it correlates with the Barker sequence at every
 * sample offset within a symbol and picks the offset whose correlation energy
 * stands out over a window of symbols (packet detection). From there it
 * despreads one symbol at a time, detects the phase change differentially,
 * descrambles, and looks for the SFD behind at least 8 descrambled SYNC ones
 * (16.2.3.2, 16.2.3.3). The header is parsed with its CRC-16 (16.2.3.7), then
 * the PSDU is read at the header's rate and length and its FCS checked.
 *
 * A malformed or undecodable burst is counted by cause, never thrown. Per
 * frame it allocates the PSDU's bytes and the frame record; its work buffers
 * are made once.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { fcsMatches, FCS_BYTES } from './crc.js';
import { CHIPS_PER_SYMBOL, DQPSK_DIBIT_BY_QUARTERS, type SamplesPerChip } from './modem.js';
import { HEADER_BITS, parsePlcpHeader, SFD, SFD_BITS, SYNC_BITS, type DsssRate, type HeaderFault } from './plcp.js';
import { Descrambler } from './scrambler.js';

export interface DsssRxFrame {
  /** The PSDU: the MAC frame with its FCS as the last 4 bytes. */
  psdu: Uint8Array;
  /** The MAC frame without its FCS (a view into `psdu`). */
  frame: Uint8Array;
  rateMbps: DsssRate;
  fcsOk: boolean;
  /**
   * The sample where the PPDU's first SYNC symbol began, reckoned back from
   * the SFD; negative when the buffer starts inside the preamble.
   */
  startSample: number;
  /** Mean power of the frame's samples, dB relative to a unit-power sample. */
  levelDb: number;
  /** Signal to noise ratio per sample, estimated from the despread symbols, dB. */
  snrDb: number;
  /** The carrier frequency offset the receiver estimated and took out, Hz (the signal's minus the receiver's). */
  cfoHz: number;
}

/** What the receiver saw, by cause. Every field only grows. */
export interface DsssRxCounters {
  /** Windows where the Barker correlation stood out (packet detections). */
  detections: number;
  /** Frames returned, FCS good or not. */
  frames: number;
  /** A detected burst where no SFD followed the SYNC (counted once per burst). */
  noSfd: number;
  headerCrc: number;
  badSignal: number;
  badLength: number;
  /** A header was read but the buffer ended before the PSDU did. */
  truncated: number;
  /** Frames returned whose FCS did not match. */
  fcs: number;
}

/** Counters with nothing seen yet. */
export function zeroDsssRxCounters(): DsssRxCounters {
  return { detections: 0, frames: 0, noSfd: 0, headerCrc: 0, badSignal: 0, badLength: 0, truncated: 0, fcs: 0 };
}

export interface DsssRxOptions {
  samplesPerChip: SamplesPerChip;
}

/** Symbols over which the detector sums correlation energy. */
const DETECT_SYMBOLS = 32;
/**
 * Ratio of the best offset's energy to the mean over all offsets that counts
 * as a detection. Over noise alone the ratio of 32-symbol sums stays near 1
 * (about 1.5 at most); a Barker signal at the Eb/N0 this PHY works at gives 3
 * or more.
 */
const DETECT_RATIO = 2;
/** Descrambled SYNC ones required right before the SFD. */
const SYNC_ONES_BEFORE_SFD = 8;
const PATTERN_BITS = SYNC_ONES_BEFORE_SFD + SFD_BITS;
const PATTERN_MASK = 2 ** PATTERN_BITS - 1;
/**
 * The last PATTERN_BITS descrambled bits as `(reg << 1) | bit` holds them when
 * the SFD has just ended: 8 ones, then 0xF3A0 LSB first.
 */
const SFD_PATTERN = ((): number => {
  let reg = 0;
  for (let k = 0; k < SYNC_ONES_BEFORE_SFD; k++) reg = ((reg << 1) | 1) & PATTERN_MASK;
  for (let k = 0; k < SFD_BITS; k++) reg = ((reg << 1) | ((SFD >>> k) & 1)) & PATTERN_MASK;
  return reg;
})();
/**
 * Symbols searched for the SFD after a detection: the detection window, all
 * of SYNC and SFD, and the pattern once more, so an SFD anywhere in a burst
 * detected early is still reached.
 */
const SFD_SEARCH_SYMBOLS = DETECT_SYMBOLS + SYNC_BITS + SFD_BITS + PATTERN_BITS;
/**
 * The carrier's turn per symbol (radians, within +-pi/2: +-250 kHz at
 * 1 Msymbol/s, five times the +-50 kHz two 802.11b radios may be apart) from
 * the sum of the squared differential products of DBPSK symbols: a product
 * is A e^(j(m pi + w)) for data m and turn w, its square A^2 e^(2jw), so the
 * sum's angle halved is w, the data gone (the squaring of M-PSK carrier
 * recovery, Proakis 6.2.4, on the differential products).
 */
function carrierTurn(sqr: number, sqi: number): number {
  return sqr === 0 && sqi === 0 ? 0 : Math.atan2(sqi, sqr) / 2;
}

/** Highest SNR reported, for a noiseless signal. */
const SNR_CAP_DB = 120;

export class DsssReceiver {
  readonly counters: DsssRxCounters = zeroDsssRxCounters();
  private readonly sps: SamplesPerChip;
  /** Samples per symbol. */
  private readonly sym: number;
  private readonly header = new Uint8Array(HEADER_BITS);
  private readonly descrambler = new Descrambler();
  /** The last despread symbol, written by `despread`. */
  private zr = 0;
  private zi = 0;
  /** Set within a burst already counted (or decoded), cleared by a quiet window. */
  private busy = false;

  constructor(options: DsssRxOptions) {
    if (options.samplesPerChip !== 1 && options.samplesPerChip !== 2) {
      throw new RangeArgumentError('samplesPerChip', options.samplesPerChip, '1 or 2');
    }
    this.sps = options.samplesPerChip;
    this.sym = CHIPS_PER_SYMBOL * this.sps;
  }

  /**
   * The frames in `iq` (interleaved I and Q at the configured samples per
   * chip), in order. Each call stands alone: a frame cut by the buffer's end
   * is lost (counted `truncated` if its header was read).
   */
  receive(iq: Float32Array): DsssRxFrame[] {
    const frames: DsssRxFrame[] = [];
    const n = iq.length >>> 1;
    const sym = this.sym;
    this.busy = false;
    let p = 0;
    while (p + (DETECT_SYMBOLS + 1) * sym <= n) {
      const offset = this.detect(iq, p);
      if (offset < 0) {
        this.busy = false;
        // Windows do not overlap: a frame that starts late in this one fills
        // the next with SYNC, and its SFD is still within the search from there.
        p += DETECT_SYMBOLS * sym;
        continue;
      }
      this.counters.detections++;
      p = this.tryFrame(iq, n, p + offset, frames);
      if (p < 0) break;
    }
    return frames;
  }

  /**
   * Despreads the symbol whose first sample is `t` into zr, zi: the samples
   * of each chip summed, times the Barker chip, summed. The signs are
   * written out (+-++-+++---), once per sample at 2 samples per chip: the
   * receiver's innermost loop, several times faster than a loop over chips.
   */
  private despread(iq: Float32Array, t: number): void {
    let a = 2 * t;
    let re: number;
    let im: number;
    if (this.sps === 1) {
      re = iq[a]! - iq[a + 2]! + iq[a + 4]! + iq[a + 6]! - iq[a + 8]! + iq[a + 10]!;
      re += iq[a + 12]! + iq[a + 14]! - iq[a + 16]! - iq[a + 18]! - iq[a + 20]!;
      a++;
      im = iq[a]! - iq[a + 2]! + iq[a + 4]! + iq[a + 6]! - iq[a + 8]! + iq[a + 10]!;
      im += iq[a + 12]! + iq[a + 14]! - iq[a + 16]! - iq[a + 18]! - iq[a + 20]!;
    } else {
      re = iq[a]! + iq[a + 2]! - iq[a + 4]! - iq[a + 6]! + iq[a + 8]! + iq[a + 10]! + iq[a + 12]! + iq[a + 14]!;
      re += -iq[a + 16]! - iq[a + 18]! + iq[a + 20]! + iq[a + 22]! + iq[a + 24]! + iq[a + 26]! + iq[a + 28]! + iq[a + 30]!;
      re += -iq[a + 32]! - iq[a + 34]! - iq[a + 36]! - iq[a + 38]! - iq[a + 40]! - iq[a + 42]!;
      a++;
      im = iq[a]! + iq[a + 2]! - iq[a + 4]! - iq[a + 6]! + iq[a + 8]! + iq[a + 10]! + iq[a + 12]! + iq[a + 14]!;
      im += -iq[a + 16]! - iq[a + 18]! + iq[a + 20]! + iq[a + 22]! + iq[a + 24]! + iq[a + 26]! + iq[a + 28]! + iq[a + 30]!;
      im += -iq[a + 32]! - iq[a + 34]! - iq[a + 36]! - iq[a + 38]! - iq[a + 40]! - iq[a + 42]!;
    }
    this.zr = re;
    this.zi = im;
  }

  /**
   * The sample offset in [0, samples per symbol) from `p` where the Barker
   * correlation energy over DETECT_SYMBOLS symbols stands out, or -1.
   */
  private detect(iq: Float32Array, p: number): number {
    const sym = this.sym;
    let total = 0;
    let best = -1;
    let bestEnergy = 0;
    for (let r = 0; r < sym; r++) {
      let e = 0;
      for (let j = 0; j < DETECT_SYMBOLS; j++) {
        this.despread(iq, p + r + j * sym);
        e += this.zr * this.zr + this.zi * this.zi;
      }
      total += e;
      if (e > bestEnergy) {
        bestEnergy = e;
        best = r;
      }
    }
    if (!(total > 0) || !(bestEnergy * sym > DETECT_RATIO * total)) return -1;
    return best;
  }

  /**
   * Searches for the SFD from the symbol at `t0`, then reads the header and
   * the PSDU. Returns where to look next, or -1 when the buffer is spent.
   */
  private tryFrame(iq: Float32Array, n: number, t0: number, frames: DsssRxFrame[]): number {
    const sym = this.sym;
    const counters = this.counters;
    const descrambler = this.descrambler;
    descrambler.reset();
    this.despread(iq, t0);
    let pr = this.zr;
    let pi = this.zi;
    let reg = 0;
    let t = t0 + sym;
    let found = false;
    // The carrier offset turns each differential product by the same angle per symbol; squared,
    // DBPSK's 0 or pi drops out, leaving twice that angle (see `carrierTurn`).
    let sqr = 0;
    let sqi = 0;
    for (let k = 1; k < SFD_SEARCH_SYMBOLS; k++, t += sym) {
      if (t + sym > n) return -1;
      this.despread(iq, t);
      const dr0 = this.zr * pr + this.zi * pi;
      const di0 = this.zi * pr - this.zr * pi;
      sqr += dr0 * dr0 - di0 * di0;
      sqi += 2 * dr0 * di0;
      const bit = dr0 < 0 ? 1 : 0;
      pr = this.zr;
      pi = this.zi;
      reg = ((reg << 1) | descrambler.bit(bit)) & PATTERN_MASK;
      if (k >= PATTERN_BITS && reg === SFD_PATTERN) {
        found = true;
        t += sym;
        break;
      }
    }
    if (!found) {
      if (!this.busy) counters.noSfd++;
      this.busy = true;
      return t - (PATTERN_BITS + 8) * sym;
    }
    const headerStart = t;
    const turn = carrierTurn(sqr, sqi);
    const cos = Math.cos(turn);
    const sin = Math.sin(turn);
    // Energy of the despread symbols and of the samples, for level and SNR.
    let symbolEnergy = 0;
    let symbols = 0;
    const header = this.header;
    for (let k = 0; k < HEADER_BITS; k++, t += sym) {
      if (t + sym > n) {
        counters.truncated++;
        return -1;
      }
      this.despread(iq, t);
      // The differential product turned back by the carrier's turn per symbol.
      header[k] = descrambler.bit((this.zr * pr + this.zi * pi) * cos + (this.zi * pr - this.zr * pi) * sin < 0 ? 1 : 0);
      pr = this.zr;
      pi = this.zi;
      symbolEnergy += pr * pr + pi * pi;
      symbols++;
    }
    const parsed = parsePlcpHeader(header, 0);
    if (!parsed.ok) {
      this.countFault(parsed.fault);
      this.busy = true;
      return t;
    }
    const { rateMbps, psduBytes } = parsed.header;
    const psduSymbols = (8 * psduBytes) / rateMbps;
    if (t + psduSymbols * sym > n) {
      counters.truncated++;
      this.busy = true;
      return -1;
    }
    const psdu = new Uint8Array(psduBytes);
    let bitIndex = 0;
    const put = (bit: number): void => {
      psdu[bitIndex >>> 3]! |= bit << (bitIndex & 7);
      bitIndex++;
    };
    for (let k = 0; k < psduSymbols; k++, t += sym) {
      this.despread(iq, t);
      const ur = this.zr * pr + this.zi * pi;
      const ui = this.zi * pr - this.zr * pi;
      const dr = ur * cos + ui * sin;
      const di = ui * cos - ur * sin;
      pr = this.zr;
      pi = this.zi;
      symbolEnergy += pr * pr + pi * pi;
      symbols++;
      if (rateMbps === 1) {
        put(descrambler.bit(dr < 0 ? 1 : 0));
      } else {
        const quarters = Math.abs(dr) >= Math.abs(di) ? (dr >= 0 ? 0 : 2) : di > 0 ? 1 : 3;
        const dibit = DQPSK_DIBIT_BY_QUARTERS[quarters]!;
        put(descrambler.bit(dibit >>> 1));
        put(descrambler.bit(dibit & 1));
      }
    }
    let samplePower = 0;
    for (let i = 2 * headerStart; i < 2 * t; i++) samplePower += iq[i]! * iq[i]!;
    samplePower /= t - headerStart;
    const fcsOk = fcsMatches(psdu);
    counters.frames++;
    if (!fcsOk) counters.fcs++;
    this.busy = false;
    frames.push({
      psdu,
      frame: psdu.subarray(0, psdu.length - FCS_BYTES),
      rateMbps,
      fcsOk,
      startSample: headerStart - (SYNC_BITS + SFD_BITS) * sym,
      levelDb: 10 * Math.log10(samplePower),
      snrDb: this.snrDb(symbolEnergy / symbols, samplePower),
      // A symbol lasts 1 µs at either rate.
      cfoHz: (turn * 1e6) / (2 * Math.PI),
    });
    return t;
  }

  /**
   * SNR per sample from the mean despread symbol energy and the mean sample
   * power. With L samples per symbol, signal power S and noise power N per
   * sample: E|z|^2 = L^2 S + L N and P = S + N, so
   * S = (E|z|^2 / L^2 - P / L) / (1 - 1 / L).
   */
  private snrDb(meanSymbolEnergy: number, samplePower: number): number {
    const l = this.sym;
    const s = (meanSymbolEnergy / (l * l) - samplePower / l) / (1 - 1 / l);
    const noise = samplePower - s;
    if (!(s > 0)) return -SNR_CAP_DB;
    if (!(noise > 0)) return SNR_CAP_DB;
    return Math.min(SNR_CAP_DB, 10 * Math.log10(s / noise));
  }

  private countFault(fault: HeaderFault): void {
    this.counters[fault]++;
  }
}
