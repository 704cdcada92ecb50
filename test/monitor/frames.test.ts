import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import type { Result } from '../../src/core/result.js';
import { Rng } from '../../src/core/rng.js';
import {
  FRAME_CHANNEL_BYTES,
  FRAME_HEADER_BYTES,
  FRAME_TYPE_PSD,
  FRAME_TYPE_SPECTRUM,
  FRAME_VERSION,
  FrameError,
  PSD_HEADER_BYTES,
  PSD_VERSION,
  encodeFrame,
  encodePsdFrame,
  frameLength,
  parseFrame,
  parseMonitorFrame,
  parsePsdFrame,
  psdFrameLength,
  type FrameErrorCode,
} from '../../src/monitor/frames.js';
import type { PsdView, SpectrumChannel, SpectrumView, Telemetry } from '../../src/router/view.js';
import { mutate, refused } from '../support/bytes.js';
import { MonitorTestView } from '../support/monitor-view.js';

/** `s` with every float rounded to float32, as a frame carries it. */
function asFloat32(s: SpectrumView): SpectrumView {
  const f = (v: number | undefined): number | undefined => (v === undefined ? undefined : Math.fround(v));
  return {
    ...s,
    channels: s.channels.map((c) => ({
      channel: c.channel,
      centerMHz: Math.fround(c.centerMHz),
      w: Math.fround(c.w),
      ownW: f(c.ownW),
      rcBps: Math.fround(c.rcBps),
      powerDbm: f(c.powerDbm),
    })),
  };
}

function rounds(n: number): SpectrumView[] {
  const v = new MonitorTestView({ startUs: 1_760_000_000_000_000 });
  return Array.from({ length: n }, () => v.pushRound());
}

const ch = (o: Partial<SpectrumChannel> = {}): SpectrumChannel => ({ channel: 6, centerMHz: 2437, w: 0.25, ownW: 0.2, rcBps: 1.5e6, powerDbm: -71.5, ...o });
const frame = (o: Partial<SpectrumView> = {}): SpectrumView => ({
  round: 9,
  startUs: 1_000,
  endUs: 71_000,
  channels: [ch({ channel: 1, centerMHz: 2412 }), ch()],
  ...o,
});

function code(b: Uint8Array): FrameErrorCode | 'ok' {
  const r = parseFrame(b);
  return r.ok ? 'ok' : r.error.code;
}

/** A copy of `b` with `f` applied to a DataView over it. */
function patched(b: Uint8Array, f: (dv: DataView) => void): Uint8Array {
  const c = Uint8Array.from(b);
  f(new DataView(c.buffer));
  return c;
}

/**
 * The refusals every kind of frame shares, as tests: each proper prefix of
 * `good` is FRAME_TRUNCATED; each of `fields` (a patch of `good`) is
 * FRAME_BAD_FIELD at its offset; mutated frames never throw, and what parses
 * re-encodes and parses the same.
 */
function sharedRefusals<T>(
  parse: (b: Uint8Array) => Result<T, FrameError>,
  encode: (v: T) => Uint8Array,
  good: Uint8Array,
  fields: Array<[string, number, (d: DataView) => void]>,
  fuzz: { seeds: Uint8Array[]; rng: Rng; cases: number; reach: string[] },
): void {
  test('every proper prefix of a frame is FRAME_TRUNCATED', () => {
    for (let n = 0; n < good.length; n++) {
      const r = parse(good.subarray(0, n));
      assert.ok(!r.ok, `a ${n}-byte prefix is refused`);
      assert.ok(r.error instanceof FrameError, 'a FrameError');
      assert.equal(r.error.code, 'FRAME_TRUNCATED', `${n} bytes: ${r.error.message}`);
    }
  });

  for (const [what, at, f] of fields) {
    test(`FRAME_BAD_FIELD at byte ${at}: ${what}`, () => {
      const r = parse(patched(good, f));
      assert.ok(!r.ok, `${what} is refused`);
      assert.equal(r.error.code, 'FRAME_BAD_FIELD', r.error.message);
      assert.equal(r.error.at, at, r.error.message);
    });
  }

  test('fuzz: mutated frames never throw; what parses re-encodes and parses the same', () => {
    const seen = new Set<string>();
    for (let i = 0; i < fuzz.cases; i++) {
      const { bytes } = mutate(fuzz.seeds[i % fuzz.seeds.length]!, fuzz.rng);
      const r = parse(bytes);
      seen.add(r.ok ? 'ok' : r.error.code);
      if (r.ok) assert.deepEqual(parse(encode(r.value)), r, `re-encoding an accepted frame loses nothing (case ${i})`);
      else
        assert.ok(
          r.error instanceof FrameError && r.error.at >= 0 && r.error.at <= bytes.length,
          `a refusal names an offset in the bytes (case ${i}: ${r.error.message})`,
        );
    }
    for (const c of fuzz.reach) assert.ok(seen.has(c), `the fuzz reached ${c} (saw ${[...seen].join(', ')})`);
  });
}

describe('spectrum frames: round trip', () => {
  test('rounds of an 11-channel plan parse back to what was encoded (float32) and re-encode to the same bytes', () => {
    for (const s of rounds(40)) {
      const b = encodeFrame(s);
      assert.equal(b.length, FRAME_HEADER_BYTES + 11 * FRAME_CHANNEL_BYTES, 'an 11-channel frame is 288 bytes');
      const r = parseFrame(b);
      assert.ok(r.ok, `round ${s.round} parses: ${r.ok ? '' : r.error.message}`);
      assert.deepEqual(r.value, asFloat32(s));
      assert.deepEqual(encodeFrame(r.value), b, 'a parsed frame re-encodes to the same bytes');
    }
  });

  test('a channel not sensed or not visited travels as NaN and comes back undefined', () => {
    const b = encodeFrame(frame({ channels: [ch({ ownW: undefined, powerDbm: undefined })] }));
    const dv = new DataView(b.buffer);
    assert.equal(dv.getUint32(FRAME_HEADER_BYTES + 12, true), 0x7fc00000, 'own w is the canonical quiet NaN');
    assert.equal(dv.getUint32(FRAME_HEADER_BYTES + 20, true), 0x7fc00000, 'power is the canonical quiet NaN');
    const r = parseFrame(b);
    assert.ok(r.ok, 'parses');
    assert.equal(r.value.channels[0]!.ownW, undefined);
    assert.equal(r.value.channels[0]!.powerDbm, undefined);
    assert.equal(r.value.channels[0]!.w, 0.25);
  });

  test('the layout, byte by byte: little-endian, u64 times beyond 2^32', () => {
    const startUs = 1_760_000_123_456_789; // epoch microseconds: above 2^32
    const b = encodeFrame({
      round: 0x01020304,
      startUs,
      endUs: startUs + 70_000,
      channels: [ch({ channel: 0x0b0a, centerMHz: 2462, w: 0.5, ownW: 0.75, rcBps: 1e6, powerDbm: -50 })],
    });
    assert.equal(b.length, frameLength(1));
    assert.deepEqual([...b.subarray(0, 8)], [FRAME_TYPE_SPECTRUM, FRAME_VERSION, 1, 0, 4, 3, 2, 1]);
    const dv = new DataView(b.buffer);
    assert.equal(dv.getBigUint64(8, true), BigInt(startUs));
    assert.equal(dv.getBigUint64(16, true), BigInt(startUs + 70_000));
    assert.deepEqual([...b.subarray(24, 28)], [0x0a, 0x0b, 0, 0], 'channel u16 LE, reserved 0');
    assert.equal(dv.getFloat32(28, true), 2462);
    assert.equal(dv.getFloat32(32, true), 0.5);
    assert.equal(dv.getFloat32(36, true), 0.75);
    assert.equal(dv.getFloat32(40, true), 1e6);
    assert.equal(dv.getFloat32(44, true), -50);
  });

  test('a frame of no channels and the largest time are accepted', () => {
    const s = { round: 0xffff_ffff, startUs: Number.MAX_SAFE_INTEGER - 5, endUs: Number.MAX_SAFE_INTEGER, channels: [] };
    const b = encodeFrame(s);
    assert.equal(b.length, FRAME_HEADER_BYTES);
    assert.deepEqual(parseFrame(b), { ok: true, value: s });
  });

  test('parses a frame in the middle of a larger buffer (a view, as ws hands them)', () => {
    const b = encodeFrame(frame());
    const big = new Uint8Array(b.length + 13);
    big.set(b, 7);
    const r = parseFrame(big.subarray(7, 7 + b.length));
    assert.ok(r.ok, 'parses at an odd offset');
    assert.equal(r.value.round, 9);
  });
});

describe('spectrum frames: encode refuses what the layout cannot carry', () => {
  const cases: Array<[string, SpectrumView]> = [
    ['spectrum.round', frame({ round: -1 })],
    ['spectrum.round', frame({ round: 2 ** 32 })],
    ['spectrum.startUs', frame({ startUs: 1.5 })],
    ['spectrum.startUs', frame({ startUs: 2 ** 53 })],
    ['spectrum.endUs', frame({ startUs: 10, endUs: 9 })],
    ['spectrum.channels[0].channel', frame({ channels: [ch({ channel: 0 })] })],
    ['spectrum.channels[0].channel', frame({ channels: [ch({ channel: 70_000 })] })],
    ['spectrum.channels[1].channel', frame({ channels: [ch(), ch()] })],
    ['spectrum.channels[0].centerMHz', frame({ channels: [ch({ centerMHz: 0 })] })],
    ['spectrum.channels[0].w', frame({ channels: [ch({ w: 1.01 })] })],
    ['spectrum.channels[0].w', frame({ channels: [ch({ w: Number.NaN })] })],
    ['spectrum.channels[0].ownW', frame({ channels: [ch({ ownW: -0.1 })] })],
    ['spectrum.channels[0].ownW', frame({ channels: [ch({ ownW: Number.NaN })] })],
    ['spectrum.channels[0].rcBps', frame({ channels: [ch({ rcBps: -1 })] })],
    ['spectrum.channels[0].powerDbm', frame({ channels: [ch({ powerDbm: Number.POSITIVE_INFINITY })] })],
    ['spectrum.channels[0].powerDbm', frame({ channels: [ch({ powerDbm: 1e39 })] })],
  ];
  for (const [field, s] of cases) {
    test(`${field}: ${describeCase(s)}`, () => {
      assert.throws(() => encodeFrame(s), refused(field));
    });
  }
  test('a refusal is a RangeArgumentError with code CORE_OUT_OF_RANGE', () => {
    assert.throws(
      () => encodeFrame(frame({ round: -1 })),
      (e: unknown) => e instanceof RangeArgumentError && e.code === 'CORE_OUT_OF_RANGE',
    );
  });
});

function describeCase(s: SpectrumView): string {
  const c = s.channels;
  return `round ${s.round}, ${s.startUs}-${s.endUs} us, ${c.length} channels${c[0] ? `, first ${JSON.stringify(c[0], (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}` : ''}`;
}

describe('spectrum frames: parse refuses malformed input without throwing', () => {
  const good = encodeFrame(frame());

  test('type, version, trailing bytes', () => {
    assert.equal(code(patched(good, (d) => d.setUint8(0, 0x20))), 'FRAME_UNKNOWN_TYPE');
    assert.equal(code(Uint8Array.of(0x7b)), 'FRAME_UNKNOWN_TYPE', 'a JSON text is not a frame');
    assert.equal(code(patched(good, (d) => d.setUint8(1, 2))), 'FRAME_BAD_VERSION');
    const longer = new Uint8Array(good.length + 1);
    longer.set(good);
    const r = parseFrame(longer);
    assert.ok(!r.ok, 'a trailing byte is refused');
    assert.equal(r.error.code, 'FRAME_BAD_LENGTH');
    assert.equal(r.error.at, good.length);
    assert.equal(code(patched(good, (d) => d.setUint16(2, 3, true))), 'FRAME_TRUNCATED', 'a count beyond the bytes');
    assert.equal(code(patched(good, (d) => d.setUint16(2, 1, true))), 'FRAME_BAD_LENGTH', 'a count short of the bytes');
  });

  const fields: Array<[string, number, (d: DataView) => void]> = [
    ['startUs beyond 2^53', 8, (d) => d.setUint32(12, 0x20_0000, true)],
    ['endUs beyond 2^53', 16, (d) => d.setUint32(20, 0xffff_ffff, true)],
    ['endUs before startUs', 16, (d) => d.setUint32(16, 0, true)],
    ['channel 0', 24, (d) => d.setUint16(24, 0, true)],
    ['a repeated channel', 48, (d) => d.setUint16(48, 1, true)],
    ['reserved bits', 26, (d) => d.setUint16(26, 1, true)],
    ['centre 0', 28, (d) => d.setFloat32(28, 0, true)],
    ['centre NaN', 28, (d) => d.setFloat32(28, Number.NaN, true)],
    ['w above 1', 32, (d) => d.setFloat32(32, 1.5, true)],
    ['w NaN', 32, (d) => d.setFloat32(32, Number.NaN, true)],
    ['own w negative', 36, (d) => d.setFloat32(36, -0.5, true)],
    ['RC negative', 40, (d) => d.setFloat32(40, -1, true)],
    ['RC infinite', 40, (d) => d.setFloat32(40, Number.POSITIVE_INFINITY, true)],
    ['power infinite', 44, (d) => d.setFloat32(44, Number.NEGATIVE_INFINITY, true)],
  ];
  sharedRefusals(parseFrame, encodeFrame, good, fields, {
    seeds: rounds(8).map(encodeFrame),
    rng: Rng.fromSeed(5).fork('frames-fuzz'),
    cases: 4000,
    reach: ['ok', 'FRAME_TRUNCATED', 'FRAME_BAD_LENGTH', 'FRAME_BAD_FIELD'],
  });
});

// ---------------------------------------------------------------------------
// The PSD frame

const psd = (o: Partial<PsdView> = {}): PsdView => ({
  round: 9,
  channel: 6,
  centerHz: 2437e6,
  sampleRateHz: 20e6,
  startUs: 1_000,
  durationUs: 4_096,
  segments: 16,
  dbmPerHz: Float32Array.of(-164.25, -150.5, -121.125, -163.75),
  ...o,
});

/** The PSDs a MonitorTestView with PSDs on emits over `n` rounds (11 channels a round, 256 bins each). */
function psds(n: number): PsdView[] {
  const v = new MonitorTestView({ startUs: 1_760_000_000_000_000, psd: true });
  const out: PsdView[] = [];
  v.subscribe((t: Telemetry) => {
    if (t.kind === 'psd') out.push(t.psd);
  });
  for (let i = 0; i < n; i++) v.pushRound();
  return out;
}

function psdCode(b: Uint8Array): FrameErrorCode | 'ok' {
  const r = parsePsdFrame(b);
  return r.ok ? 'ok' : r.error.code;
}

describe('PSD frames: round trip', () => {
  test('the PSDs of a test router parse back to what was encoded (bins are float32 already) and re-encode to the same bytes', () => {
    const all = psds(3);
    assert.equal(all.length, 33, 'a PSD per channel per round');
    for (const p of all) {
      const b = encodePsdFrame(p);
      assert.equal(b.length, PSD_HEADER_BYTES + 4 * 256, 'a 256-bin frame is 1064 bytes');
      const r = parsePsdFrame(b);
      assert.ok(r.ok, `round ${p.round} channel ${p.channel} parses: ${r.ok ? '' : r.error.message}`);
      assert.deepEqual(r.value, p);
      assert.deepEqual(encodePsdFrame(r.value), b, 'a parsed frame re-encodes to the same bytes');
    }
  });

  test('bins given as float64 values come back rounded to float32', () => {
    const r = parsePsdFrame(encodePsdFrame(psd({ dbmPerHz: Float32Array.of(-150.1) })));
    assert.ok(r.ok);
    assert.equal(r.value.dbmPerHz[0], Math.fround(-150.1));
    assert.notEqual(r.value.dbmPerHz[0], -150.1);
  });

  test('the layout, byte by byte: little-endian, u64 start, f64 centre and rate, f32 bins lowest first', () => {
    const startUs = 1_760_000_123_456_789;
    const b = encodePsdFrame(psd({ round: 0x01020304, startUs, durationUs: 0x0a0b0c0d, channel: 0x0b0a, segments: 0x0201 }));
    assert.equal(b.length, psdFrameLength(4));
    assert.deepEqual([...b.subarray(0, 8)], [FRAME_TYPE_PSD, PSD_VERSION, 4, 0, 4, 3, 2, 1]);
    const dv = new DataView(b.buffer);
    assert.equal(dv.getBigUint64(8, true), BigInt(startUs));
    assert.deepEqual([...b.subarray(16, 24)], [0x0d, 0x0c, 0x0b, 0x0a, 0x0a, 0x0b, 0x01, 0x02], 'durationUs u32, channel u16, segments u16');
    assert.equal(dv.getFloat64(24, true), 2437e6);
    assert.equal(dv.getFloat64(32, true), 20e6);
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => dv.getFloat32(40 + 4 * i, true)),
      [-164.25, -150.5, -121.125, -163.75],
    );
  });

  test('one bin, the largest times and counts are accepted; a frame inside a larger buffer parses', () => {
    const p = psd({
      round: 0xffff_ffff,
      startUs: Number.MAX_SAFE_INTEGER,
      durationUs: 0xffff_ffff,
      channel: 0xffff,
      segments: 0xffff,
      dbmPerHz: Float32Array.of(-100),
    });
    const b = encodePsdFrame(p);
    assert.equal(b.length, PSD_HEADER_BYTES + 4);
    assert.deepEqual(parsePsdFrame(b), { ok: true, value: p });
    const big = new Uint8Array(b.length + 11);
    big.set(b, 5);
    const r = parsePsdFrame(big.subarray(5, 5 + b.length));
    assert.ok(r.ok, 'parses at an odd offset (the bins are read unaligned)');
    assert.deepEqual(r.value, p);
  });
});

describe('PSD frames: encode refuses what the layout cannot carry', () => {
  const cases: Array<[string, PsdView]> = [
    ['psd.bins', psd({ dbmPerHz: new Float32Array(0) })],
    ['psd.bins', psd({ dbmPerHz: new Float32Array(0x1_0000) })],
    ['psd.round', psd({ round: -1 })],
    ['psd.round', psd({ round: 2 ** 32 })],
    ['psd.startUs', psd({ startUs: 0.5 })],
    ['psd.startUs', psd({ startUs: 2 ** 53 })],
    ['psd.durationUs', psd({ durationUs: 2 ** 32 })],
    ['psd.channel', psd({ channel: 0 })],
    ['psd.channel', psd({ channel: 0x1_0000 })],
    ['psd.segments', psd({ segments: 0 })],
    ['psd.segments', psd({ segments: 0x1_0000 })],
    ['psd.centerHz', psd({ centerHz: 0 })],
    ['psd.centerHz', psd({ centerHz: Number.POSITIVE_INFINITY })],
    ['psd.sampleRateHz', psd({ sampleRateHz: -20e6 })],
    ['psd.sampleRateHz', psd({ sampleRateHz: Number.NaN })],
    ['psd.dbmPerHz[1]', psd({ dbmPerHz: Float32Array.of(-150, Number.NaN) })],
    ['psd.dbmPerHz[0]', psd({ dbmPerHz: Float32Array.of(Number.NEGATIVE_INFINITY) })],
  ];
  for (const [field, p] of cases) {
    test(`${field}: ${JSON.stringify({ ...p, dbmPerHz: `${p.dbmPerHz.length} bins` }, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}`, () => {
      assert.throws(() => encodePsdFrame(p), refused(field));
    });
  }
});

describe('PSD frames: parse refuses malformed input without throwing', () => {
  const good = encodePsdFrame(psd());

  test('type, version, length', () => {
    assert.equal(psdCode(patched(good, (d) => d.setUint8(0, FRAME_TYPE_SPECTRUM))), 'FRAME_UNKNOWN_TYPE', 'a spectrum frame is not a PSD frame');
    assert.equal(psdCode(patched(good, (d) => d.setUint8(1, 2))), 'FRAME_BAD_VERSION');
    assert.equal(psdCode(patched(good, (d) => d.setUint8(1, 0))), 'FRAME_BAD_VERSION');
    const longer = new Uint8Array(good.length + 4);
    longer.set(good);
    const r = parsePsdFrame(longer);
    assert.ok(!r.ok, 'trailing bytes are refused');
    assert.equal(r.error.code, 'FRAME_BAD_LENGTH');
    assert.equal(r.error.at, good.length);
    assert.equal(psdCode(patched(good, (d) => d.setUint16(2, 5, true))), 'FRAME_TRUNCATED', 'more bins than the bytes');
    assert.equal(psdCode(patched(good, (d) => d.setUint16(2, 3, true))), 'FRAME_BAD_LENGTH', 'fewer bins than the bytes');
  });

  const fields: Array<[string, number, (d: DataView) => void]> = [
    ['zero bins', 2, (d) => d.setUint16(2, 0, true)],
    ['startUs beyond 2^53', 8, (d) => d.setUint32(12, 0x20_0000, true)],
    ['channel 0', 20, (d) => d.setUint16(20, 0, true)],
    ['zero segments', 22, (d) => d.setUint16(22, 0, true)],
    ['centre 0', 24, (d) => d.setFloat64(24, 0, true)],
    ['centre negative', 24, (d) => d.setFloat64(24, -2437e6, true)],
    ['centre NaN', 24, (d) => d.setFloat64(24, Number.NaN, true)],
    ['centre infinite', 24, (d) => d.setFloat64(24, Number.POSITIVE_INFINITY, true)],
    ['rate 0', 32, (d) => d.setFloat64(32, 0, true)],
    ['rate NaN', 32, (d) => d.setFloat64(32, Number.NaN, true)],
    ['rate infinite', 32, (d) => d.setFloat64(32, Number.POSITIVE_INFINITY, true)],
    ['first bin NaN', 40, (d) => d.setFloat32(40, Number.NaN, true)],
    ['last bin infinite', 52, (d) => d.setFloat32(52, Number.NEGATIVE_INFINITY, true)],
  ];
  sharedRefusals(parsePsdFrame, encodePsdFrame, good, fields, {
    seeds: [good, ...psds(1).slice(0, 3).map(encodePsdFrame)],
    rng: Rng.fromSeed(6).fork('psd-frames-fuzz'),
    cases: 2000,
    reach: ['ok', 'FRAME_TRUNCATED', 'FRAME_BAD_LENGTH'],
  });
});

describe('parseMonitorFrame: dispatch by the type byte', () => {
  test('a spectrum frame, a PSD frame', () => {
    const s = encodeFrame(frame());
    const r = parseMonitorFrame(s);
    const direct = parseFrame(s);
    assert.ok(r.ok && r.value.kind === 'spectrum' && direct.ok);
    assert.deepEqual(r.value.spectrum, direct.value);
    const p = psd();
    const q = parseMonitorFrame(encodePsdFrame(p));
    assert.ok(q.ok && q.value.kind === 'psd');
    assert.deepEqual(q.value.psd, p);
  });

  test("each kind's refusals come through as they are", () => {
    const s = encodeFrame(frame());
    const r = parseMonitorFrame(s.subarray(0, 10));
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'FRAME_TRUNCATED');
    const p = patched(encodePsdFrame(psd()), (d) => d.setUint16(20, 0, true));
    const q = parseMonitorFrame(p);
    assert.ok(!q.ok);
    assert.equal(q.error.code, 'FRAME_BAD_FIELD');
    assert.equal(q.error.at, 20);
    const none = parseMonitorFrame(new Uint8Array(0));
    assert.ok(!none.ok, 'no bytes');
    assert.equal(none.error.code, 'FRAME_TRUNCATED');
  });

  test('an unknown type byte is FRAME_UNKNOWN_TYPE at byte 0, naming both types', () => {
    for (const t of [0x00, 0x4f, 0x51, 0x52, 0x54, 0x7b, 0xff]) {
      const r = parseMonitorFrame(patched(encodePsdFrame(psd()), (d) => d.setUint8(0, t)));
      assert.ok(!r.ok, `type 0x${t.toString(16)} is refused`);
      assert.equal(r.error.code, 'FRAME_UNKNOWN_TYPE');
      assert.equal(r.error.at, 0);
      assert.match(r.error.message, /0x53.*0x50/);
    }
  });
});
