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

// ---- the transmit direction (ring.h, struct sora_tx_header) ----

export const TX_MAGIC = 0x4752585441524f53n; // "SORATXRG", little-endian
export const TX_VERSION = 1;
/** Bytes of one burst record. */
export const TX_BURST_BYTES = 64;

export const TxOff = {
  magic: 0x000,
  version: 0x040,
  format: 0x080,
  sampleRateHz: 0x0c0,
  capacity: 0x100,
  burstSlots: 0x140,
  writeIndex: 0x180,
  burstWrite: 0x1c0,
  producerPid: 0x200,
  readIndex: 0x240,
  burstRead: 0x280,
  consumerPid: 0x2c0,
  consumerState: 0x300,
  heartbeatNs: 0x340,
  lateBursts: 0x380,
  lateSlackUs: 0x3c0,
} as const;

/** Offsets within a burst record: the node writes the first four, the board the rest. */
export const BurstOff = { index: 0, count: 8, flags: 16, atUs: 24, status: 32, startUs: 40, endUs: 48, sent: 56 } as const;
export const BURST_TIMED = 1n;
/** Values of a burst record's status. */
export const TxStatus = { queued: 0n, sent: 1n, late: 2n } as const;

/** The TX ring's constant fields. */
export interface TxRingConstants {
  readonly sampleRateHz: number;
  readonly capacity: number;
  readonly burstSlots: number;
  readonly lateSlackUs: number;
}

/** Byte offset of the sample slots: after the header and the burst records. */
export const txSamplesOffset = (burstSlots: number): number => HEADER_BYTES + burstSlots * TX_BURST_BYTES;

/** Why a header is not a TX ring this code can write, or undefined when it is one. */
export function txHeaderProblem(h: DataView, fileBytes: number): string | undefined {
  if (h.byteLength < HEADER_BYTES || fileBytes < HEADER_BYTES) return `${fileBytes} bytes, shorter than the ${HEADER_BYTES}-byte header`;
  const magic = h.getBigUint64(TxOff.magic, true);
  if (magic !== TX_MAGIC) return `bad magic 0x${magic.toString(16).padStart(16, '0')} (expected 0x${TX_MAGIC.toString(16)}, "SORATXRG")`;
  const version = h.getUint32(TxOff.version, true);
  if (version !== TX_VERSION) return `layout version ${version}, this code writes version ${TX_VERSION}`;
  const format = h.getUint32(TxOff.format, true);
  if (format !== FORMAT_CODE.cf32) return `sample format ${format}, only cf32 (1) is sent`;
  const cap = h.getBigUint64(TxOff.capacity, true);
  if (cap < 16n || (cap & (cap - 1n)) !== 0n || cap > 1n << 30n) return `capacity ${cap} is not a power of two in [16, 2^30]`;
  const slots = h.getBigUint64(TxOff.burstSlots, true);
  if (slots < 64n || (slots & (slots - 1n)) !== 0n || slots > 65536n) return `burst_slots ${slots} is not a power of two in [64, 65536]`;
  const need = txSamplesOffset(Number(slots)) + Number(cap) * SAMPLE_BYTES.cf32;
  if (fileBytes < need) return `${fileBytes} bytes, but ${slots} burst records and ${cap} samples need ${need}`;
  const rate = h.getFloat64(TxOff.sampleRateHz, true);
  if (!(rate > 0) || !Number.isFinite(rate)) return `sample rate ${rate} Hz`;
  return undefined;
}

export function readTxConstants(h: DataView): TxRingConstants {
  return {
    sampleRateHz: h.getFloat64(TxOff.sampleRateHz, true),
    capacity: Number(h.getBigUint64(TxOff.capacity, true)),
    burstSlots: Number(h.getBigUint64(TxOff.burstSlots, true)),
    lateSlackUs: Number(h.getBigUint64(TxOff.lateSlackUs, true)),
  };
}
