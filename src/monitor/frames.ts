import { CogmeshError, RangeArgumentError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { PsdView, SpectrumChannel, SpectrumView } from '../router/view.js';

/**
 * The monitor's binary spectrum frame: one sensing round, as the WebSocket
 * stream sends it (docs/monitor-protocol.md has the same table). Little-endian
 * (what browsers' typed arrays and every common host use), fixed layout, no
 * padding beyond the reserved field; the length follows from the channel count.
 *
 * Header, FRAME_HEADER_BYTES = 24:
 *
 *   0  type      u8   FRAME_TYPE_SPECTRUM (0x53, 'S')
 *   1  version   u8   FRAME_VERSION (1)
 *   2  count     u16  channels in the frame
 *   4  round     u32  sensing round number
 *   8  startUs   u64  round start, microseconds (the router's clock)
 *  16  endUs     u64  round end, microseconds; never before startUs
 *
 * Then `count` channels, FRAME_CHANNEL_BYTES = 24 each, at 24 + 24 * i:
 *
 *   0  channel   u16  channel number, 1-65535, each at most once a frame
 *   2  reserved  u16  0
 *   4  centerMHz f32  centre frequency, > 0
 *   8  w         f32  merged workload (own and neighbours'), 0-1
 *  12  ownW      f32  this router's own w, 0-1; NaN when it did not sense the channel
 *  16  rcBps     f32  remaining capacity RC = (1 - w) * C, bits per second, >= 0
 *  20  powerDbm  f32  mean power the energy detector measured, dBm; NaN when not visited
 *
 * Times are whole microseconds below 2^53 (so a JavaScript number holds them
 * exactly). The floats are IEEE 754 single precision: a parsed frame carries
 * the encoded values rounded to float32 (`Math.fround`), and re-encodes to the
 * same bytes. Writers write NaN as 0x7FC00000; readers take any NaN as absent.
 *
 * The parser never throws: it checks, in order, the type, the version, the
 * header length, the full length (a proper prefix of a frame is always
 * FRAME_TRUNCATED, bytes past its end FRAME_BAD_LENGTH), then the fields.
 */

export const FRAME_TYPE_SPECTRUM = 0x53;
export const FRAME_VERSION = 1;
export const FRAME_HEADER_BYTES = 24;
export const FRAME_CHANNEL_BYTES = 24;
/** Most channels one frame carries (the count is a u16). */
export const FRAME_MAX_CHANNELS = 0xffff;

/** Largest time a frame carries: 2^53 - 1 us (the u64's high word below 2^21). */
const MAX_TIME_US = Number.MAX_SAFE_INTEGER;
const TWO_32 = 0x1_0000_0000;

export type FrameErrorCode = 'FRAME_TRUNCATED' | 'FRAME_UNKNOWN_TYPE' | 'FRAME_BAD_VERSION' | 'FRAME_BAD_LENGTH' | 'FRAME_BAD_FIELD';

/** Bytes that are not a spectrum frame this monitor accepts; `at` is the byte offset of the fault. */
export class FrameError extends CogmeshError {
  declare readonly code: FrameErrorCode;

  constructor(
    code: FrameErrorCode,
    readonly at: number,
    message: string,
  ) {
    super(code, message);
  }
}

/** Bytes of a frame of `count` channels. */
export function frameLength(count: number): number {
  return FRAME_HEADER_BYTES + FRAME_CHANNEL_BYTES * count;
}

/**
 * The frame of one sensing round. Refuses (RangeArgumentError naming the
 * field) what the layout cannot carry: a time that is not a whole number of
 * microseconds below 2^53 or ends before it starts, a round beyond u32, a
 * channel number outside 1-65535 or repeated, a w outside 0-1, a value that
 * float32 cannot hold.
 */
export function encodeFrame(s: SpectrumView): Uint8Array {
  checkUint('spectrum.round', s.round, 0xffff_ffff);
  checkUint('spectrum.startUs', s.startUs, MAX_TIME_US);
  checkUint('spectrum.endUs', s.endUs, MAX_TIME_US);
  if (s.endUs < s.startUs) throw new RangeArgumentError('spectrum.endUs', s.endUs, `at least spectrum.startUs (${s.startUs})`);
  const n = s.channels.length;
  if (n > FRAME_MAX_CHANNELS) throw new RangeArgumentError('spectrum.channels', n, `at most ${FRAME_MAX_CHANNELS} channels`);
  const seen = new Set<number>();
  s.channels.forEach((c, i) => {
    const at = `spectrum.channels[${i}]`;
    checkUint(`${at}.channel`, c.channel, 0xffff);
    if (c.channel === 0) throw new RangeArgumentError(`${at}.channel`, c.channel, 'a channel number in [1, 65535]');
    if (seen.has(c.channel)) throw new RangeArgumentError(`${at}.channel`, c.channel, 'a channel not already in the frame');
    seen.add(c.channel);
    checkFloat(`${at}.centerMHz`, c.centerMHz, 'a frequency > 0 MHz', (v) => v > 0);
    checkFloat(`${at}.w`, c.w, 'a workload in [0, 1]', isWorkload);
    if (c.ownW !== undefined) checkFloat(`${at}.ownW`, c.ownW, 'a workload in [0, 1], or undefined', isWorkload);
    checkFloat(`${at}.rcBps`, c.rcBps, 'a capacity >= 0 bps', (v) => v >= 0);
    if (c.powerDbm !== undefined) checkFloat(`${at}.powerDbm`, c.powerDbm, 'a finite power in dBm, or undefined', () => true);
  });

  const out = new Uint8Array(frameLength(n));
  const dv = new DataView(out.buffer);
  out[0] = FRAME_TYPE_SPECTRUM;
  out[1] = FRAME_VERSION;
  dv.setUint16(2, n, true);
  dv.setUint32(4, s.round, true);
  putTime(dv, 8, s.startUs);
  putTime(dv, 16, s.endUs);
  s.channels.forEach((c, i) => {
    const o = FRAME_HEADER_BYTES + FRAME_CHANNEL_BYTES * i;
    dv.setUint16(o, c.channel, true);
    dv.setUint16(o + 2, 0, true);
    dv.setFloat32(o + 4, c.centerMHz, true);
    dv.setFloat32(o + 8, c.w, true);
    dv.setFloat32(o + 12, c.ownW ?? Number.NaN, true);
    dv.setFloat32(o + 16, c.rcBps, true);
    dv.setFloat32(o + 20, c.powerDbm ?? Number.NaN, true);
  });
  return out;
}

/** The sensing round in `b`, or why `b` is not a spectrum frame. Never throws. */
export function parseFrame(b: Uint8Array): Result<SpectrumView, FrameError> {
  if (b.length < 1) return err(truncated(0, 1));
  if (b[0] !== FRAME_TYPE_SPECTRUM)
    return err(new FrameError('FRAME_UNKNOWN_TYPE', 0, `frame type 0x${b[0]!.toString(16).padStart(2, '0')} is not a spectrum frame (0x53)`));
  if (b.length < 2) return err(truncated(b.length, FRAME_HEADER_BYTES));
  if (b[1] !== FRAME_VERSION) return err(new FrameError('FRAME_BAD_VERSION', 1, `frame version ${b[1]!} is not ${FRAME_VERSION}`));
  if (b.length < FRAME_HEADER_BYTES) return err(truncated(b.length, FRAME_HEADER_BYTES));
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = dv.getUint16(2, true);
  const want = frameLength(n);
  if (b.length < want) return err(truncated(b.length, want));
  if (b.length > want) return err(new FrameError('FRAME_BAD_LENGTH', want, `${b.length} bytes, but a frame of ${n} channels is ${want}`));

  const round = dv.getUint32(4, true);
  const startUs = getTime(dv, 8);
  const endUs = getTime(dv, 16);
  if (startUs === undefined) return err(badField(8, `startUs is beyond 2^53 us`));
  if (endUs === undefined) return err(badField(16, `endUs is beyond 2^53 us`));
  if (endUs < startUs) return err(badField(16, `endUs ${endUs} is before startUs ${startUs}`));

  const channels: SpectrumChannel[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < n; i++) {
    const o = FRAME_HEADER_BYTES + FRAME_CHANNEL_BYTES * i;
    const channel = dv.getUint16(o, true);
    if (channel === 0) return err(badField(o, `channel ${i}: number 0`));
    if (seen.has(channel)) return err(badField(o, `channel ${i}: ${channel} is already in the frame`));
    seen.add(channel);
    const reserved = dv.getUint16(o + 2, true);
    if (reserved !== 0) return err(badField(o + 2, `channel ${channel}: reserved field is 0x${reserved.toString(16)}, not 0`));
    const centerMHz = dv.getFloat32(o + 4, true);
    if (!(centerMHz > 0 && Number.isFinite(centerMHz))) return err(badField(o + 4, `channel ${channel}: centre ${centerMHz} MHz`));
    const w = dv.getFloat32(o + 8, true);
    if (!isWorkload(w)) return err(badField(o + 8, `channel ${channel}: w ${w} is not in [0, 1]`));
    const ownW = dv.getFloat32(o + 12, true);
    if (!Number.isNaN(ownW) && !isWorkload(ownW)) return err(badField(o + 12, `channel ${channel}: own w ${ownW} is not in [0, 1] or NaN`));
    const rcBps = dv.getFloat32(o + 16, true);
    if (!(rcBps >= 0 && Number.isFinite(rcBps))) return err(badField(o + 16, `channel ${channel}: RC ${rcBps} bps`));
    const powerDbm = dv.getFloat32(o + 20, true);
    if (!Number.isNaN(powerDbm) && !Number.isFinite(powerDbm)) return err(badField(o + 20, `channel ${channel}: power ${powerDbm} dBm`));
    channels.push({
      channel,
      centerMHz,
      w,
      ownW: Number.isNaN(ownW) ? undefined : ownW,
      rcBps,
      powerDbm: Number.isNaN(powerDbm) ? undefined : powerDbm,
    });
  }
  return ok({ round, startUs, endUs, channels });
}

function isWorkload(v: number): boolean {
  return v >= 0 && v <= 1;
}

function checkUint(field: string, v: number, max: number): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeArgumentError(field, v, `an integer in [0, ${max}]`);
}

/** A finite number that stays finite in float32 and passes `test`. */
function checkFloat(field: string, v: number, expected: string, test: (v: number) => boolean): void {
  if (typeof v !== 'number' || !Number.isFinite(Math.fround(v)) || !test(v)) throw new RangeArgumentError(field, v, expected);
}

function putTime(dv: DataView, o: number, t: number): void {
  dv.setUint32(o, t % TWO_32, true);
  dv.setUint32(o + 4, Math.floor(t / TWO_32), true);
}

/** A u64 time, or undefined beyond 2^53 - 1. */
function getTime(dv: DataView, o: number): number | undefined {
  const t = dv.getUint32(o + 4, true) * TWO_32 + dv.getUint32(o, true);
  return t <= MAX_TIME_US ? t : undefined;
}

function truncated(have: number, need: number): FrameError {
  return new FrameError('FRAME_TRUNCATED', have, `frame truncated: ${have} bytes, need ${need}`);
}

function badField(at: number, what: string): FrameError {
  return new FrameError('FRAME_BAD_FIELD', at, `bad frame field at byte ${at}: ${what}`);
}

// ---------------------------------------------------------------------------
// The PSD frame

/**
 * The monitor's binary PSD frame: the power spectral density of one channel
 * visit (docs/monitor-protocol.md has the same table). Little-endian, fixed
 * layout, no padding; its length is PSD_HEADER_BYTES + 4 * bins.
 *
 *   0  type          u8   FRAME_TYPE_PSD (0x50, 'P')
 *   1  version       u8   PSD_VERSION (1)
 *   2  bins          u16  bins in the frame, at least 1
 *   4  round         u32  the sensing round of the visit
 *   8  startUs       u64  first sample the estimate used, microseconds (router clock)
 *  16  durationUs    u32  span of the samples it used, microseconds
 *  20  channel       u16  channel number, 1-65535
 *  22  segments      u16  segments averaged (Welch), at least 1
 *  24  centerHz      f64  centre frequency of the capture, Hz, > 0
 *  32  sampleRateHz  f64  complex samples per second, > 0: the bins' span
 *  40  bins × f32        dBm/Hz, lowest frequency first, finite: bin i is
 *                         centred on centerHz + (i - bins / 2) * sampleRateHz / bins
 */
export const FRAME_TYPE_PSD = 0x50;
export const PSD_VERSION = 1;
export const PSD_HEADER_BYTES = 40;
/** Most bins one PSD frame carries (the count is a u16). */
export const PSD_MAX_BINS = 0xffff;

/** Bytes of a PSD frame of `bins` bins. */
export function psdFrameLength(bins: number): number {
  return PSD_HEADER_BYTES + 4 * bins;
}

/** The frame of one visit's PSD; refuses (RangeArgumentError naming the field) what the layout cannot carry. */
export function encodePsdFrame(p: PsdView): Uint8Array {
  const n = p.dbmPerHz.length;
  checkUint('psd.bins', n, PSD_MAX_BINS);
  if (n === 0) throw new RangeArgumentError('psd.bins', n, 'at least 1 bin');
  checkUint('psd.round', p.round, 0xffff_ffff);
  checkUint('psd.startUs', p.startUs, MAX_TIME_US);
  checkUint('psd.durationUs', p.durationUs, 0xffff_ffff);
  checkUint('psd.channel', p.channel, 0xffff);
  if (p.channel === 0) throw new RangeArgumentError('psd.channel', p.channel, 'a channel number in [1, 65535]');
  checkUint('psd.segments', p.segments, 0xffff);
  if (p.segments === 0) throw new RangeArgumentError('psd.segments', p.segments, 'at least 1 segment');
  if (!(p.centerHz > 0 && Number.isFinite(p.centerHz))) throw new RangeArgumentError('psd.centerHz', p.centerHz, 'a finite frequency > 0 Hz');
  if (!(p.sampleRateHz > 0 && Number.isFinite(p.sampleRateHz))) throw new RangeArgumentError('psd.sampleRateHz', p.sampleRateHz, 'a finite rate > 0');
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(p.dbmPerHz[i]!)) throw new RangeArgumentError(`psd.dbmPerHz[${i}]`, p.dbmPerHz[i], 'a finite density in dBm/Hz');
  }
  const out = new Uint8Array(psdFrameLength(n));
  const dv = new DataView(out.buffer);
  out[0] = FRAME_TYPE_PSD;
  out[1] = PSD_VERSION;
  dv.setUint16(2, n, true);
  dv.setUint32(4, p.round, true);
  putTime(dv, 8, p.startUs);
  dv.setUint32(16, p.durationUs, true);
  dv.setUint16(20, p.channel, true);
  dv.setUint16(22, p.segments, true);
  dv.setFloat64(24, p.centerHz, true);
  dv.setFloat64(32, p.sampleRateHz, true);
  // Little-endian hosts (every common one) take the bins in one copy.
  const bins = new Float32Array(out.buffer, PSD_HEADER_BYTES, n);
  if (LITTLE_ENDIAN) bins.set(p.dbmPerHz);
  else for (let i = 0; i < n; i++) dv.setFloat32(PSD_HEADER_BYTES + 4 * i, p.dbmPerHz[i]!, true);
  return out;
}

/** The PSD in `b`, or why `b` is not a PSD frame. Never throws. */
export function parsePsdFrame(b: Uint8Array): Result<PsdView, FrameError> {
  if (b.length < 1) return err(truncated(0, 1));
  if (b[0] !== FRAME_TYPE_PSD)
    return err(new FrameError('FRAME_UNKNOWN_TYPE', 0, `frame type 0x${b[0]!.toString(16).padStart(2, '0')} is not a PSD frame (0x50)`));
  if (b.length < 2) return err(truncated(b.length, PSD_HEADER_BYTES));
  if (b[1] !== PSD_VERSION) return err(new FrameError('FRAME_BAD_VERSION', 1, `PSD frame version ${b[1]!} is not ${PSD_VERSION}`));
  if (b.length < PSD_HEADER_BYTES) return err(truncated(b.length, PSD_HEADER_BYTES));
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = dv.getUint16(2, true);
  if (n === 0) return err(badField(2, 'bins 0'));
  const want = psdFrameLength(n);
  if (b.length < want) return err(truncated(b.length, want));
  if (b.length > want) return err(new FrameError('FRAME_BAD_LENGTH', want, `${b.length} bytes, but a PSD frame of ${n} bins is ${want}`));
  const round = dv.getUint32(4, true);
  const startUs = getTime(dv, 8);
  if (startUs === undefined) return err(badField(8, 'startUs is beyond 2^53 us'));
  const durationUs = dv.getUint32(16, true);
  const channel = dv.getUint16(20, true);
  if (channel === 0) return err(badField(20, 'channel number 0'));
  const segments = dv.getUint16(22, true);
  if (segments === 0) return err(badField(22, 'segments 0'));
  const centerHz = dv.getFloat64(24, true);
  if (!(centerHz > 0 && Number.isFinite(centerHz))) return err(badField(24, `centre ${centerHz} Hz`));
  const sampleRateHz = dv.getFloat64(32, true);
  if (!(sampleRateHz > 0 && Number.isFinite(sampleRateHz))) return err(badField(32, `sample rate ${sampleRateHz} Hz`));
  const dbmPerHz = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = dv.getFloat32(PSD_HEADER_BYTES + 4 * i, true);
    if (!Number.isFinite(v)) return err(badField(PSD_HEADER_BYTES + 4 * i, `bin ${i}: ${v} dBm/Hz`));
    dbmPerHz[i] = v;
  }
  return ok({ round, channel, centerHz, sampleRateHz, startUs, durationUs, segments, dbmPerHz });
}

/** A frame of the monitor's stream, by its type byte. */
export type MonitorFrame = { kind: 'spectrum'; spectrum: SpectrumView } | { kind: 'psd'; psd: PsdView };

/** Any frame the stream carries (a spectrum or a PSD), or why `b` is none. Never throws. */
export function parseMonitorFrame(b: Uint8Array): Result<MonitorFrame, FrameError> {
  if (b.length > 0 && b[0] !== FRAME_TYPE_PSD && b[0] !== FRAME_TYPE_SPECTRUM) {
    return err(
      new FrameError('FRAME_UNKNOWN_TYPE', 0, `frame type 0x${b[0]!.toString(16).padStart(2, '0')} is neither a spectrum (0x53) nor a PSD frame (0x50)`),
    );
  }
  if (b[0] === FRAME_TYPE_PSD) {
    const r = parsePsdFrame(b);
    return r.ok ? ok({ kind: 'psd', psd: r.value }) : r;
  }
  const r = parseFrame(b);
  return r.ok ? ok({ kind: 'spectrum', spectrum: r.value }) : r;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
