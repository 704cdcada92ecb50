/**
 * The SORA-like ring's layout: byte offsets of the header fields, as in
 * native/sora-ring/ring.h (the reference, with the ordering rules) and
 * docs/sora-ring.md. Every field has a 64-byte cache line to itself; the
 * samples start at HEADER_BYTES.
 */
export const RING_MAGIC = 0x474e495241524f53n; // "SORARING", little-endian
export const RING_VERSION = 1;
export const HEADER_BYTES = 4096;

export const Off = {
  magic: 0x000,
  version: 0x040,
  format: 0x080,
  sampleRateHz: 0x0c0,
  centerHz: 0x100,
  tuneGeneration: 0x140,
  capacity: 0x180,
  writeIndex: 0x1c0,
  overruns: 0x200,
  producerPid: 0x240,
  heartbeatNs: 0x280,
  claimIndex: 0x2c0,
  tuneIndex: 0x300,
  tuneRequestHz: 0x340,
  tuneRequestSeq: 0x380,
  tuneAckSeq: 0x3c0,
  tuneStatus: 0x400,
  readIndex: 0x440,
  consumerPid: 0x480,
  producerState: 0x4c0,
  startTimeUs: 0x500,
  fullScaleDbm: 0x540,
  tuneMinHz: 0x580,
  tuneMaxHz: 0x5c0,
  retuneUs: 0x600,
} as const;

export type SampleFormat = 'cf32' | 'ci16';
export const FORMAT_CODE: Readonly<Record<SampleFormat, number>> = { cf32: 1, ci16: 2 };
export const SAMPLE_BYTES: Readonly<Record<SampleFormat, number>> = { cf32: 8, ci16: 4 };

/** Values of the producer_state field. */
export const ProducerState = { starting: 0n, running: 1n, stopped: 2n } as const;

/** Values of the tune_status field. */
export const TuneStatus = { ok: 0n, refused: 1n } as const;

/** The fields the producer writes once, before the ring file appears. */
export interface RingConstants {
  readonly version: number;
  readonly format: SampleFormat;
  readonly sampleRateHz: number;
  readonly capacity: number;
  readonly startTimeUs: number;
  readonly fullScaleDbm: number;
  readonly tuneRangeHz: readonly [number, number];
  readonly retuneUs: number;
}

/** Why a header is not a ring this code can read, or undefined when it is one. */
export function headerProblem(h: DataView, fileBytes: number): string | undefined {
  if (h.byteLength < HEADER_BYTES || fileBytes < HEADER_BYTES) return `${fileBytes} bytes, shorter than the ${HEADER_BYTES}-byte header`;
  const magic = h.getBigUint64(Off.magic, true);
  if (magic !== RING_MAGIC) return `bad magic 0x${magic.toString(16).padStart(16, '0')} (expected 0x${RING_MAGIC.toString(16)}, "SORARING")`;
  const version = h.getUint32(Off.version, true);
  if (version !== RING_VERSION) return `layout version ${version}, this code reads version ${RING_VERSION}`;
  const format = h.getUint32(Off.format, true);
  if (format !== FORMAT_CODE.cf32 && format !== FORMAT_CODE.ci16) return `unknown sample format ${format}`;
  const cap = h.getBigUint64(Off.capacity, true);
  // Slot indices are masked with JavaScript's 32-bit `&`: at most 2^30 slots (8 GiB of cf32).
  if (cap < 16n || (cap & (cap - 1n)) !== 0n || cap > 1n << 30n) return `capacity ${cap} is not a power of two in [16, 2^30]`;
  const need = HEADER_BYTES + Number(cap) * (format === FORMAT_CODE.cf32 ? 8 : 4);
  if (fileBytes < need) return `${fileBytes} bytes, but a capacity of ${cap} samples needs ${need}`;
  const rate = h.getFloat64(Off.sampleRateHz, true);
  if (!(rate > 0) || !Number.isFinite(rate)) return `sample rate ${rate} Hz`;
  return undefined;
}

/** Reads the constant fields of a header that `headerProblem` accepted. */
export function readConstants(h: DataView): RingConstants {
  const u64 = (off: number): number => Number(h.getBigUint64(off, true));
  return {
    version: h.getUint32(Off.version, true),
    format: h.getUint32(Off.format, true) === FORMAT_CODE.ci16 ? 'ci16' : 'cf32',
    sampleRateHz: h.getFloat64(Off.sampleRateHz, true),
    capacity: u64(Off.capacity),
    startTimeUs: u64(Off.startTimeUs),
    fullScaleDbm: h.getFloat64(Off.fullScaleDbm, true),
    tuneRangeHz: [u64(Off.tuneMinHz), u64(Off.tuneMaxHz)],
    retuneUs: u64(Off.retuneUs),
  };
}
