/**
 * The receiver of the 802.11b DSSS PHY at 1 and 2 Mb/s (IEEE 802.11-2016
 * 16.2), for a stream of samples at 1 or 2 samples per chip handed over in
 * buffers of any length. It finds frames at any sample offset among noise,
 * under a carrier frequency offset and a sample clock that drifts against
 * the transmitter's.
 *
 * For each stretch of samples it correlates with the Barker sequence at every
 * sample offset within a symbol and picks the offset whose correlation energy
 * stands out over a window of symbols (packet detection). From there it
 * despreads one symbol at a time at a fractional sample position that an
 * early-late gate on the Barker correlation keeps on the peak (chip timing
 * recovery), detects the phase change differentially, descrambles, and looks
 * for the SFD behind at least 8 descrambled SYNC ones (16.2.3.2, 16.2.3.3).
 * The carrier's turn per symbol is estimated over SYNC and SFD and tracked on
 * through the header and PSDU by a decision-directed loop. The header is
 * parsed with its CRC-16 (16.2.3.7), then the PSDU is read at the header's
 * rate and length and its FCS checked.
 *
 * Samples are kept across `receive` calls until what they may hold has been
 * decided, so a frame split over several buffers is decoded as if it came in
 * one; `flush` ends the stream. A malformed or undecodable burst is counted
 * by cause, never thrown. Per frame it allocates the PSDU's bytes and the
 * frame record; its work buffers are made once (the stream buffer grows to
 * the longest frame and stays).
 *
 * The despreading, and within a frame the interpolation, run in WebAssembly
 * SIMD when the engine has it (despread-wasm.ts, on the stream buffer in the
 * module's memory), with the same arithmetic in the same order as the
 * TypeScript here, so the results are the same bit for bit.
 */
import { RangeArgumentError } from '../../../src/core/errors.js';
import { WASM_PAGE, wasmApi, type WasmMemory } from '../../../src/core/wasm-emit.js';
import { fcsMatches, FCS_BYTES } from './crc.js';
import { despreadModule } from './despread-wasm.js';
import { polyphaseTable } from './fractional.js';
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
   * The sample of the stream (counted from the first sample given to
   * `receive` since the receiver was made or last flushed) where the PPDU's
   * first SYNC symbol began, reckoned back from the SFD at the nominal
   * symbol length; negative when the stream starts inside the preamble.
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
  /** A header was read but the stream ended (`flush`) before the PSDU did. */
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
  /**
   * The despreader's kernel: 'wasm' (WebAssembly SIMD, despread-wasm.ts),
   * 'ts' (TypeScript), or 'auto' (the default): WebAssembly SIMD when the
   * engine has it. Both give the same frames and counters, bit for bit.
   */
  kernel?: 'auto' | 'wasm' | 'ts';
}

interface DespreadExports {
  detect(src: number, count: number, sps: number, energy: number, symBytes: number, half: number, wide: number): number;
  // prettier-ignore
  symbol(src: number, count: number, sps: number, wide: number, z: number, out: number, taps: number,
    zEarly: number, tEarly: number, zLate: number, tLate: number, zOn: number, tOn: number): void;
}

/** Is WebAssembly SIMD there for the receiver's despreader? The reason when not. */
export function despreadWasmUnavailable(): string | undefined {
  const m = despreadModule();
  return typeof m === 'string' ? m : undefined;
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
/**
 * The least share of a detection window's correlation energy each half of
 * it must hold: a window of noise then silence (a recording's padding) has
 * sums over a few symbols only, whose best offset stands out by chance. A
 * burst that starts late in a window is detected in the next.
 */
const BALANCE = 0.2;
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

/**
 * Chip timing: the despread symbol at a fractional sample position is
 * interpolated between the despread symbols at whole sample offsets (the
 * despreader is linear, so this equals despreading interpolated samples) by
 * the windowed sinc of fractional.ts, its fraction rounded to
 * 1 / INTERP_PHASES of a sample (a timing error of at most 1 / 128 sample).
 * INTERP_HALF taps a side by samples per chip: at 1, rectangular chips fill
 * the band to Nyquist and 8 taps keep it flat (0.03 dB) to 0.7 of Nyquist;
 * at 2 their spectrum falls to a null at Nyquist, four fifths of their power
 * lies below half of it, where 4 taps lose 0.2 dB at most, and a symbol
 * costs 10 whole-sample despreads instead of 18.
 */
const INTERP_HALF = { 1: 8, 2: 4 } as const;
const INTERP_PHASES = 64;
const INTERP_TABLE = { 1: polyphaseTable(INTERP_PHASES, INTERP_HALF[1]), 2: polyphaseTable(INTERP_PHASES, INTERP_HALF[2]) } as const;
/** Whole-sample despreads a symbol needs at most: early, on time and late, each 2 INTERP_HALF wide, half a chip (1 or 2 samples) apart. */
const SPAN_MAX = 2 * INTERP_HALF[1] + 3;
/**
 * Samples kept before the next position to look at, and zeros put before the
 * stream's first sample: what the interpolator reads before a symbol.
 */
const HISTORY = INTERP_HALF[1] + 8;
/**
 * The early-late gate's loop gain: the fraction of the timing error taken
 * out per symbol, larger over the first ACQUIRE_SYMBOLS after a detection
 * (the detector's timing is within half a sample; the loop settles in a few
 * tens of symbols) and smaller after (less jitter from noise). A clock 20 ppm
 * off slips 0.0002 to 0.0004 samples a symbol, which the tracking gain
 * follows within 0.01 sample.
 */
const TIMING_GAIN_ACQUIRE = 0.2;
const TIMING_GAIN_TRACK = 0.05;
const ACQUIRE_SYMBOLS = 48;
/**
 * The carrier loop's gain: the fraction of each decision's phase error added
 * to the turn per symbol (a first-order loop on the turn; with the 0.3 rad of
 * noise on a differential product at PER 0.1 it jitters by about 0.02 rad).
 */
const CARRIER_GAIN = 0.01;
/** What tryFrame returns when the stream does not reach far enough yet. */
const NEED_MORE = -1;

/**
 * Despreads the `count` symbols that start at samples t, t + 1, ...,
 * t + count - 1 of `iq` into re[k], im[k]: the samples of each chip summed,
 * times the Barker chip, summed. The signs are written out (+-++-+++---),
 * once per sample at 2 samples per chip: the receiver's innermost loop,
 * several times faster than a loop over chips.
 */
function despreadRun(iq: Float32Array, t: number, count: number, sps: SamplesPerChip, re: Float64Array, im: Float64Array): void {
  if (sps === 1) {
    for (let k = 0, a = 2 * t; k < count; k++, a += 2) {
      let r = iq[a]! - iq[a + 2]! + iq[a + 4]! + iq[a + 6]! - iq[a + 8]! + iq[a + 10]!;
      r += iq[a + 12]! + iq[a + 14]! - iq[a + 16]! - iq[a + 18]! - iq[a + 20]!;
      let i = iq[a + 1]! - iq[a + 3]! + iq[a + 5]! + iq[a + 7]! - iq[a + 9]! + iq[a + 11]!;
      i += iq[a + 13]! + iq[a + 15]! - iq[a + 17]! - iq[a + 19]! - iq[a + 21]!;
      re[k] = r;
      im[k] = i;
    }
  } else {
    for (let k = 0, a = 2 * t; k < count; k++, a += 2) {
      let r = iq[a]! + iq[a + 2]! - iq[a + 4]! - iq[a + 6]! + iq[a + 8]! + iq[a + 10]! + iq[a + 12]! + iq[a + 14]!;
      r += -iq[a + 16]! - iq[a + 18]! + iq[a + 20]! + iq[a + 22]! + iq[a + 24]! + iq[a + 26]! + iq[a + 28]! + iq[a + 30]!;
      r += -iq[a + 32]! - iq[a + 34]! - iq[a + 36]! - iq[a + 38]! - iq[a + 40]! - iq[a + 42]!;
      const b = a + 1;
      let i = iq[b]! + iq[b + 2]! - iq[b + 4]! - iq[b + 6]! + iq[b + 8]! + iq[b + 10]! + iq[b + 12]! + iq[b + 14]!;
      i += -iq[b + 16]! - iq[b + 18]! + iq[b + 20]! + iq[b + 22]! + iq[b + 24]! + iq[b + 26]! + iq[b + 28]! + iq[b + 30]!;
      i += -iq[b + 32]! - iq[b + 34]! - iq[b + 36]! - iq[b + 38]! - iq[b + 40]! - iq[b + 42]!;
      re[k] = r;
      im[k] = i;
    }
  }
}

/**
 * The windowed-sinc interpolation of re, im at fractional index `pos` into
 * out[0], out[1] by `table` (polyphaseTable with `half` taps a side): taps at
 * floor(pos) - half + 1 .. floor(pos) + half, which the caller keeps within
 * the arrays.
 */
function interpolate(table: Float64Array, half: number, re: Float64Array, im: Float64Array, pos: number, out: Float64Array): void {
  const taps = 2 * half;
  const row = tapRow(half, pos);
  const first = tapFirst(half, pos);
  let r = 0;
  let m = 0;
  for (let j = 0; j < taps; j++) {
    const w = table[row + j]!;
    r += w * re[first + j]!;
    m += w * im[first + j]!;
  }
  out[0] = r;
  out[1] = m;
}

/** The interpolator's first tap at fractional index `pos`. */
function tapFirst(half: number, pos: number): number {
  return Math.floor(pos) - half + 1;
}

/** Where the interpolator's table row for fractional index `pos` starts (its fraction rounded to 1 / INTERP_PHASES). */
function tapRow(half: number, pos: number): number {
  const i = Math.floor(pos);
  return Math.round((pos - i) * INTERP_PHASES) * 2 * half;
}

/** Sums |z|^2 over `symbols` symbols `sym` apart, for each of the `sym` offsets: energy[r] = sum_j |z[r + j sym]|^2. */
function energyByOffset(re: Float64Array, im: Float64Array, sym: number, symbols: number, energy: Float64Array): void {
  for (let r = 0; r < sym; r++) {
    let e = 0;
    for (let j = 0, k = r; j < symbols; j++, k += sym) e += re[k]! * re[k]! + im[k]! * im[k]!;
    energy[r] = e;
  }
}

/** The sum of re[k]^2 + im[k]^2 over k < count. */
function sumSquares(re: Float64Array, im: Float64Array, count: number): number {
  let e = 0;
  for (let k = 0; k < count; k++) e += re[k]! * re[k]! + im[k]! * im[k]!;
  return e;
}

export class DsssReceiver {
  readonly counters: DsssRxCounters = zeroDsssRxCounters();
  private readonly sps: SamplesPerChip;
  /** Samples per symbol. */
  private readonly sym: number;
  /** Half a chip, in samples: the early and late gates' distance from on time. */
  private readonly halfChip: number;
  /** The interpolator: taps a side and its polyphase table. */
  private readonly half: number;
  private readonly table: Float64Array;
  private readonly header = new Uint8Array(HEADER_BITS);
  private readonly descrambler = new Descrambler();
  /** Which despreader runs: WebAssembly SIMD or TypeScript. */
  readonly kernel: 'wasm' | 'ts';
  private readonly wasm: DespreadExports | undefined;
  /**
   * With WebAssembly, its memory holds the work buffers and the stream
   * buffer, in that order from `energyByte` (energy per offset), `outByte`
   * (early, late, on time), `tableByte` (the interpolator's table, each tap
   * twice), `zByte` (a symbol's despreads), `wideByte` (samples widened to
   * f64), `bufByte`; the stream buffer grows with the memory, and the views
   * are made again.
   */
  private readonly memory: WasmMemory | undefined;
  private readonly energyByte = 0;
  private readonly outByte: number;
  private readonly tableByte: number;
  private readonly zByte: number;
  private readonly wideByte: number;
  private readonly bufByte: number;
  /** Work buffers: whole-sample despreads (detection window or one symbol's span; TypeScript), energy per offset, one interpolated value. */
  private readonly zRe: Float64Array;
  private readonly zIm: Float64Array;
  private energy: Float64Array;
  private readonly point = new Float64Array(2);
  /** WebAssembly's early, late and on-time interpolated values, [re, im] each. */
  private out = new Float64Array(0);
  /** The last symbol despread by `symbolAt`, on time, and its timing error (late minus early energy over their sum). */
  private zr = 0;
  private zi = 0;
  private timingError = 0;
  /** Within the header and PSDU (`differential`): the symbol before, the last differential product, the despread energy so far. */
  private pr = 0;
  private pi = 0;
  private dr = 0;
  private di = 0;
  private symbolEnergy = 0;

  /** The stream: `used` floats of `buf`, whose first complex sample is the stream's sample `base`. */
  private buf = new Float32Array(0);
  private used = 0;
  private base = 0;
  /** The stream sample where the next detection window starts. */
  private next = 0;
  /** Nothing is tried until the stream holds this many samples (from its start). */
  private need = 0;
  /** The stream sample of the last detection counted, so a detection tried again on more samples is counted once. */
  private lastDetection = Number.NEGATIVE_INFINITY;
  /** Set within a burst already counted (or decoded), cleared by a quiet window. */
  private busy = false;

  constructor(options: DsssRxOptions) {
    if (options.samplesPerChip !== 1 && options.samplesPerChip !== 2) {
      throw new RangeArgumentError('samplesPerChip', options.samplesPerChip, '1 or 2');
    }
    const kernel = options.kernel ?? 'auto';
    if (kernel !== 'auto' && kernel !== 'wasm' && kernel !== 'ts') throw new RangeArgumentError('kernel', kernel, "'auto', 'wasm' or 'ts'");
    const module = kernel === 'ts' ? 'not asked for' : despreadModule();
    if (kernel === 'wasm' && typeof module === 'string') throw new RangeArgumentError('kernel', kernel, `'ts' or 'auto': ${module}`);
    this.kernel = typeof module === 'string' ? 'ts' : 'wasm';
    this.sps = options.samplesPerChip;
    this.sym = CHIPS_PER_SYMBOL * this.sps;
    this.halfChip = this.sps / 2;
    this.half = INTERP_HALF[this.sps];
    this.table = INTERP_TABLE[this.sps];
    const zLength = Math.max(DETECT_SYMBOLS * this.sym, SPAN_MAX);
    this.zRe = new Float64Array(zLength);
    this.zIm = new Float64Array(zLength);
    this.outByte = align16(this.energyByte + 8 * this.sym);
    this.tableByte = this.outByte + 48;
    this.zByte = this.tableByte + 16 * this.table.length;
    this.wideByte = this.zByte + 16 * SPAN_MAX;
    this.bufByte = this.wideByte + 16 * (zLength + this.sym);
    if (typeof module !== 'string') {
      const api = wasmApi()!;
      this.memory = new api.Memory({ initial: Math.ceil((this.bufByte + 8 * HISTORY) / WASM_PAGE) });
      this.wasm = new api.Instance(module, { env: { memory: this.memory } }).exports as unknown as DespreadExports;
      const table = new Float64Array(this.memory.buffer, this.tableByte, 2 * this.table.length);
      this.table.forEach((w, j) => table.fill(w, 2 * j, 2 * j + 2));
    }
    // With WebAssembly, `resize` (from startStream) makes it a view of the memory.
    this.energy = new Float64Array(this.sym);
    this.startStream();
  }

  /**
   * Takes the next `iq` of the stream (interleaved I and Q at the configured
   * samples per chip; a buffer of odd length leaves its last value to pair
   * with the next buffer's first) and returns the frames it completed, in
   * order. A frame whose end has not come yet is kept for a later call.
   */
  receive(iq: Float32Array): DsssRxFrame[] {
    this.append(iq);
    if (this.base + (this.used >>> 1) < this.need) return [];
    return this.run(false);
  }

  /**
   * Ends the stream: decodes what the samples held so far allow, counts a
   * frame cut short `truncated`, and starts a new stream (the next sample
   * given is sample 0 again). Returns the frames found.
   */
  flush(): DsssRxFrame[] {
    const frames = this.run(true);
    this.startStream();
    return frames;
  }

  /**
   * Drops the stream in progress (its radio retuned): what it held is neither
   * decoded nor counted, and the next `receive` starts a new stream. The
   * counters and the buffers stay.
   */
  reset(): void {
    this.startStream();
  }

  /** An empty stream, with HISTORY zeros before its first sample. */
  private startStream(): void {
    if (this.buf.length < 2 * HISTORY) this.resize(2 * HISTORY);
    this.buf.fill(0, 0, 2 * HISTORY);
    this.used = 2 * HISTORY;
    this.base = -HISTORY;
    this.next = 0;
    this.need = 0;
    this.lastDetection = Number.NEGATIVE_INFINITY;
    this.busy = false;
  }

  /** Appends `iq`, first dropping the samples before HISTORY of `next` if the buffer is full, and growing it if that is not enough. */
  private append(iq: Float32Array): void {
    if (this.used + iq.length > this.buf.length) {
      const drop = Math.max(0, this.next - HISTORY - this.base);
      if (drop > 0) {
        this.buf.copyWithin(0, 2 * drop, this.used);
        this.used -= 2 * drop;
        this.base += drop;
      }
      if (this.used + iq.length > this.buf.length) this.resize(Math.max(2 * this.buf.length, this.used + iq.length));
    }
    this.buf.set(iq, this.used);
    this.used += iq.length;
  }

  /** Makes the stream buffer `floats` long, its first `used` kept: a new array, or with WebAssembly its memory grown and viewed again. */
  private resize(floats: number): void {
    const memory = this.memory;
    if (memory === undefined) {
      const grown = new Float32Array(floats);
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
      return;
    }
    const bytes = this.bufByte + 4 * floats;
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / WASM_PAGE));
    const buffer = memory.buffer;
    this.buf = new Float32Array(buffer, this.bufByte, floats);
    this.energy = new Float64Array(buffer, this.energyByte, this.sym);
    this.out = new Float64Array(buffer, this.outByte, 6);
  }

  /** Detects and decodes from `next` as far as the samples go; `final`: the stream ends there. */
  private run(final: boolean): DsssRxFrame[] {
    const frames: DsssRxFrame[] = [];
    const iq = this.buf;
    const n = this.used >>> 1;
    const sym = this.sym;
    for (;;) {
      const p = this.next - this.base;
      if (p + (DETECT_SYMBOLS + 1) * sym > n) {
        this.need = this.next + (DETECT_SYMBOLS + 1) * sym;
        break;
      }
      const offset = this.detect(iq, p);
      if (Number.isNaN(offset)) {
        this.busy = false;
        // Windows do not overlap: a frame that starts late in this one fills
        // the next with SYNC, and its SFD is still within the search from there.
        this.next += DETECT_SYMBOLS * sym;
        continue;
      }
      const at = this.next + Math.floor(offset);
      if (at !== this.lastDetection) {
        this.counters.detections++;
        this.lastDetection = at;
      }
      const end = this.tryFrame(iq, n, p + offset, final, frames);
      // Not enough samples yet: the same window is detected again when more come.
      if (end === NEED_MORE) break;
      this.next = this.base + end;
    }
    return frames;
  }

  /**
   * The fractional sample offset in (-0.5, sym - 0.5) from `p` where the
   * Barker correlation energy over DETECT_SYMBOLS symbols stands out, or NaN:
   * the best whole offset and a parabola through its energy and its
   * neighbours'.
   */
  private detect(iq: Float32Array, p: number): number {
    const sym = this.sym;
    const wasm = this.wasm;
    const halfCount = (DETECT_SYMBOLS / 2) * sym;
    // WebAssembly despreads, sums the energies and the first half's in one call.
    let firstHalf = Number.NaN;
    if (wasm === undefined) {
      despreadRun(iq, p, DETECT_SYMBOLS * sym, this.sps, this.zRe, this.zIm);
      energyByOffset(this.zRe, this.zIm, sym, DETECT_SYMBOLS, this.energy);
    } else firstHalf = wasm.detect(this.bufByte + 8 * p, DETECT_SYMBOLS * sym, this.sps, this.energyByte, 8 * sym, halfCount, this.wideByte);
    const energy = this.energy;
    let total = 0;
    let best = -1;
    let bestEnergy = 0;
    for (let r = 0; r < sym; r++) {
      total += energy[r]!;
      if (energy[r]! > bestEnergy) {
        bestEnergy = energy[r]!;
        best = r;
      }
    }
    if (!(total > 0) || !(bestEnergy * sym > DETECT_RATIO * total)) return Number.NaN;
    // A window that is mostly silence has too few symbols behind its sums for the ratio to mean
    // anything (noise running into digital silence): both halves must carry a share of the energy.
    if (wasm === undefined) firstHalf = sumSquares(this.zRe, this.zIm, halfCount);
    if (!(firstHalf > total * BALANCE && firstHalf < total * (1 - BALANCE))) return Number.NaN;
    const before = energy[(best + sym - 1) % sym]!;
    const after = energy[(best + 1) % sym]!;
    const curve = before - 2 * bestEnergy + after;
    const shift = curve < 0 ? (0.5 * (before - after)) / curve : 0;
    return best + Math.max(-0.49, Math.min(0.49, shift));
  }

  /** Whether the symbol at fractional sample `tau` and its gates lie within the n samples. */
  private fits(tau: number, n: number): boolean {
    return Math.floor(tau + this.halfChip) + this.half + this.sym <= n;
  }

  /**
   * Despreads the symbol that starts at fractional sample `tau`: on time into
   * zr, zi and the early-late timing error, from the despreads at the whole
   * offsets around it.
   */
  private symbolAt(iq: Float32Array, tau: number): void {
    const h = this.halfChip;
    const first = Math.floor(tau - h) - this.half + 1;
    const count = Math.floor(tau + h) + this.half - first + 1;
    let early: number;
    let late: number;
    if (this.wasm === undefined) {
      despreadRun(iq, first, count, this.sps, this.zRe, this.zIm);
      const pt = this.point;
      interpolate(this.table, this.half, this.zRe, this.zIm, tau - h - first, pt);
      early = pt[0]! * pt[0]! + pt[1]! * pt[1]!;
      interpolate(this.table, this.half, this.zRe, this.zIm, tau + h - first, pt);
      late = pt[0]! * pt[0]! + pt[1]! * pt[1]!;
      interpolate(this.table, this.half, this.zRe, this.zIm, tau - first, pt);
      this.zr = pt[0]!;
      this.zi = pt[1]!;
    } else {
      // The same in one call: the table and z hold [re, im] pairs, 16 bytes each.
      const half = this.half;
      const pe = tau - h - first;
      const pl = tau + h - first;
      const po = tau - first;
      const zb = this.zByte;
      const tb = this.tableByte;
      // prettier-ignore
      this.wasm.symbol(this.bufByte + 8 * first, count, this.sps, this.wideByte, zb, this.outByte, 2 * half,
        zb + 16 * tapFirst(half, pe), tb + 16 * tapRow(half, pe),
        zb + 16 * tapFirst(half, pl), tb + 16 * tapRow(half, pl),
        zb + 16 * tapFirst(half, po), tb + 16 * tapRow(half, po));
      const out = this.out;
      early = out[0]! * out[0]! + out[1]! * out[1]!;
      late = out[2]! * out[2]! + out[3]! * out[3]!;
      this.zr = out[4]!;
      this.zi = out[5]!;
    }
    const e = (late - early) / (late + early);
    this.timingError = Math.abs(e) <= 1 ? e : 0;
  }

  /**
   * The next symbol's position after the one `symbolAt` read at `tau`: a
   * symbol on, moved towards the correlation peak. For chips whose
   * correlation is a triangle of one chip a side, the error is 4 x / chip
   * near x = 0 for a timing x early, so gain g takes out g x.
   */
  private advance(tau: number, gain: number): number {
    return tau + this.sym + (gain * this.timingError * this.sps) / 4;
  }

  /**
   * Searches for the SFD from the symbol at `t0`, then reads the header and
   * the PSDU. Returns where to look next, or NEED_MORE when the samples do
   * not reach far enough (on the last call, `final`, that ends the attempt,
   * counted `truncated` once a header was read).
   */
  private tryFrame(iq: Float32Array, n: number, t0: number, final: boolean, frames: DsssRxFrame[]): number {
    const sym = this.sym;
    const counters = this.counters;
    const descrambler = this.descrambler;
    const wantUntil = (samples: number): number => {
      this.need = this.base + Math.ceil(samples) + HISTORY + sym;
      return NEED_MORE;
    };
    descrambler.reset();
    let tau = t0;
    if (!this.fits(tau, n)) return wantUntil(t0 + (SFD_SEARCH_SYMBOLS + HEADER_BITS) * sym);
    this.symbolAt(iq, tau);
    tau = this.advance(tau, TIMING_GAIN_ACQUIRE);
    let pr = this.zr;
    let pi = this.zi;
    let reg = 0;
    let found = false;
    // The carrier offset turns each differential product by the same angle per symbol; squared,
    // DBPSK's 0 or pi drops out, leaving twice that angle (see `carrierTurn`).
    let sqr = 0;
    let sqi = 0;
    for (let k = 1; k < SFD_SEARCH_SYMBOLS; k++) {
      if (!this.fits(tau, n)) return wantUntil(t0 + (SFD_SEARCH_SYMBOLS + HEADER_BITS) * sym);
      this.symbolAt(iq, tau);
      tau = this.advance(tau, k < ACQUIRE_SYMBOLS ? TIMING_GAIN_ACQUIRE : TIMING_GAIN_TRACK);
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
        break;
      }
    }
    if (!found) {
      if (!this.busy) counters.noSfd++;
      this.busy = true;
      return Math.floor(tau) - (PATTERN_BITS + 8) * sym;
    }
    const headerStart = tau;
    const estimated = carrierTurn(sqr, sqi);
    let turn = estimated;
    this.pr = pr;
    this.pi = pi;
    this.symbolEnergy = 0;
    const header = this.header;
    for (let k = 0; k < HEADER_BITS; k++) {
      if (!this.fits(tau, n)) {
        if (!final) return wantUntil(headerStart + HEADER_BITS * sym);
        counters.truncated++;
        return NEED_MORE;
      }
      this.differential(iq, tau, turn);
      tau = this.advance(tau, TIMING_GAIN_TRACK);
      const dr = this.dr;
      header[k] = descrambler.bit(dr < 0 ? 1 : 0);
      turn += CARRIER_GAIN * phaseError(dr, this.di, dr < 0 ? 2 : 0);
    }
    const parsed = parsePlcpHeader(header, 0);
    if (!parsed.ok) {
      this.countFault(parsed.fault);
      this.busy = true;
      return Math.floor(tau);
    }
    const { rateMbps, psduBytes } = parsed.header;
    const psduSymbols = (8 * psduBytes) / rateMbps;
    // The drift the timing loop follows moves the end by far less than a symbol.
    const psduEnd = tau + (psduSymbols + 1) * sym;
    if (psduEnd + HISTORY > n) {
      if (!final) return wantUntil(psduEnd);
      counters.truncated++;
      this.busy = true;
      return NEED_MORE;
    }
    const psdu = new Uint8Array(psduBytes);
    let bitIndex = 0;
    const put = (bit: number): void => {
      psdu[bitIndex >>> 3]! |= bit << (bitIndex & 7);
      bitIndex++;
    };
    for (let k = 0; k < psduSymbols; k++) {
      this.differential(iq, tau, turn);
      tau = this.advance(tau, TIMING_GAIN_TRACK);
      const dr = this.dr;
      const di = this.di;
      let quarters: number;
      if (rateMbps === 1) {
        quarters = dr < 0 ? 2 : 0;
        put(descrambler.bit(quarters >>> 1));
      } else {
        quarters = Math.abs(dr) >= Math.abs(di) ? (dr >= 0 ? 0 : 2) : di > 0 ? 1 : 3;
        const dibit = DQPSK_DIBIT_BY_QUARTERS[quarters]!;
        put(descrambler.bit(dibit >>> 1));
        put(descrambler.bit(dibit & 1));
      }
      turn += CARRIER_GAIN * phaseError(dr, di, quarters);
    }
    const from = Math.round(headerStart);
    const to = Math.round(tau);
    let samplePower = 0;
    for (let i = 2 * from; i < 2 * to; i++) samplePower += iq[i]! * iq[i]!;
    samplePower /= to - from;
    const fcsOk = fcsMatches(psdu);
    counters.frames++;
    if (!fcsOk) counters.fcs++;
    this.busy = false;
    frames.push({
      psdu,
      frame: psdu.subarray(0, psdu.length - FCS_BYTES),
      rateMbps,
      fcsOk,
      startSample: this.base + from - (SYNC_BITS + SFD_BITS) * sym,
      levelDb: 10 * Math.log10(samplePower),
      snrDb: this.snrDb(this.symbolEnergy / (HEADER_BITS + psduSymbols), samplePower),
      // A symbol lasts 1 µs at either rate.
      cfoHz: (estimated * 1e6) / (2 * Math.PI),
    });
    return to;
  }

  /**
   * Reads the symbol at `tau` (symbolAt) and its differential product with
   * the symbol before, turned back by the carrier's `turn` per symbol, into
   * dr, di; the symbol becomes the one before and adds to symbolEnergy.
   */
  private differential(iq: Float32Array, tau: number, turn: number): void {
    this.symbolAt(iq, tau);
    const { zr, zi, pr, pi } = this;
    const ur = zr * pr + zi * pi;
    const ui = zi * pr - zr * pi;
    const c = Math.cos(turn);
    const s = Math.sin(turn);
    this.dr = ur * c + ui * s;
    this.di = ui * c - ur * s;
    this.pr = zr;
    this.pi = zi;
    this.symbolEnergy += zr * zr + zi * zi;
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

/**
 * The angle of the differential product (dr, di) from the decision of
 * `quarters` quarter turns, for the carrier loop: the product turned back
 * by the decision, its angle within +-pi/4 (DQPSK) or +-pi/2 (DBPSK); 0 for
 * a product that is not a number.
 */
function phaseError(dr: number, di: number, quarters: number): number {
  let x = dr;
  let y = di;
  if (quarters === 1) {
    x = di;
    y = -dr;
  } else if (quarters === 2) {
    x = -dr;
    y = -di;
  } else if (quarters === 3) {
    x = -di;
    y = dr;
  }
  const e = Math.atan2(y, x);
  return Number.isFinite(e) ? e : 0;
}

function align16(n: number): number {
  return Math.ceil(n / 16) * 16;
}
