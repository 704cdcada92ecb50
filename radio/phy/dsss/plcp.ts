/**
 * The long PLCP PPDU of the 802.11b DSSS PHY at 1 and 2 Mb/s
 * (IEEE 802.11-2016 16.2.2.2 and 16.2.3): 128 SYNC bits, the 16-bit SFD,
 * the 48-bit PLCP header (SIGNAL, SERVICE, LENGTH, CRC-16), then the PSDU.
 * Bits here are unscrambled, one 0 or 1 a byte, in the order they go on the
 * air; every field is sent least significant bit first except the CRC-16,
 * which goes from its x^15 term down (16.2.3.7).
 */
import { crc16PlcpBits, FCS_BYTES } from './crc.js';

/** The data rates of this PHY, in Mb/s. */
export type DsssRate = 1 | 2;

/** SYNC: 128 ones, scrambled on the air (16.2.3.2). */
export const SYNC_BITS = 128;
/** SFD: 0xF3A0, LSB first (16.2.3.3). */
export const SFD = 0xf3a0;
export const SFD_BITS = 16;
/** SIGNAL, SERVICE, LENGTH (8 + 8 + 16) and the CRC-16. */
export const HEADER_BITS = 48;
/** Bits from the first SYNC bit to the last header bit; all DBPSK at 1 Mb/s. */
export const PREAMBLE_AND_HEADER_BITS = SYNC_BITS + SFD_BITS + HEADER_BITS;

/** SIGNAL: the rate in units of 100 kb/s (16.2.3.4). */
const SIGNAL_BY_RATE: Record<DsssRate, number> = { 1: 0x0a, 2: 0x14 };

/**
 * SERVICE bit b2, locked clocks (16.2.3.5): set when the carrier and the
 * symbol clock come from one oscillator. The other bits (b3 modulation
 * selection, b7 length extension) only mean something at 5.5 and 11 Mb/s and
 * stay 0 here; b0, b1, b4 to b6 are reserved, 0.
 */
export const SERVICE_LOCKED_CLOCKS = 0x04;

/** aPSDUMaxLength of the HR/DSSS PHY (16.3.4), in bytes. */
export const PSDU_MAX_BYTES = 4095;

export interface PlcpHeader {
  rateMbps: DsssRate;
  /** The SERVICE byte as sent (see SERVICE_LOCKED_CLOCKS). */
  service: number;
  /** LENGTH: the PSDU's duration in microseconds (16.2.3.6). */
  lengthUs: number;
  /** PSDU bytes that LENGTH stands for, FCS included. */
  psduBytes: number;
}

/** Why a received header is refused, the receiver's counter names. */
export type HeaderFault = 'headerCrc' | 'badSignal' | 'badLength';

export type HeaderParse = { ok: true; header: PlcpHeader } | { ok: false; fault: HeaderFault };

/** LENGTH for a PSDU of `bytes` at `rateMbps`: ceil(8 * bytes / rate) microseconds (16.2.3.6). */
export function lengthMicros(bytes: number, rateMbps: DsssRate): number {
  return Math.ceil((8 * bytes) / rateMbps);
}

function putLsbFirst(out: Uint8Array, at: number, value: number, count: number): void {
  for (let k = 0; k < count; k++) out[at + k] = (value >>> k) & 1;
}

/**
 * The unscrambled bits of a long PPDU carrying `psdu` (the MAC frame with its
 * FCS already appended; see `appendFcs`) at `rateMbps`.
 */
export function ppduBits(psdu: Uint8Array, rateMbps: DsssRate, service = 0): Uint8Array {
  const bits = new Uint8Array(PREAMBLE_AND_HEADER_BITS + 8 * psdu.length);
  bits.fill(1, 0, SYNC_BITS);
  let at = SYNC_BITS;
  putLsbFirst(bits, at, SFD, SFD_BITS);
  at += SFD_BITS;
  const headerStart = at;
  putLsbFirst(bits, at, SIGNAL_BY_RATE[rateMbps], 8);
  putLsbFirst(bits, at + 8, service & 0xff, 8);
  putLsbFirst(bits, at + 16, lengthMicros(psdu.length, rateMbps), 16);
  const crc = crc16PlcpBits(bits, headerStart, 32);
  for (let k = 0; k < 16; k++) bits[headerStart + 32 + k] = (crc >>> (15 - k)) & 1;
  at += HEADER_BITS;
  for (let i = 0; i < psdu.length; i++) putLsbFirst(bits, at + 8 * i, psdu[i]!, 8);
  return bits;
}

function readLsbFirst(bits: Uint8Array, at: number, count: number): number {
  let v = 0;
  for (let k = 0; k < count; k++) v |= (bits[at + k]! & 1) << k;
  return v;
}

/**
 * Parses the 48 descrambled header bits at `bits[offset]`. The CRC-16 is
 * checked first; then SIGNAL must name 1 or 2 Mb/s; then LENGTH must be a
 * whole number of octets at that rate, for a PSDU of at least the FCS and at
 * most aPSDUMaxLength.
 */
export function parsePlcpHeader(bits: Uint8Array, offset: number): HeaderParse {
  let crc = 0;
  for (let k = 0; k < 16; k++) crc = (crc << 1) | (bits[offset + 32 + k]! & 1);
  if (crc !== crc16PlcpBits(bits, offset, 32)) return { ok: false, fault: 'headerCrc' };
  const signal = readLsbFirst(bits, offset, 8);
  const rateMbps: DsssRate | undefined = signal === SIGNAL_BY_RATE[1] ? 1 : signal === SIGNAL_BY_RATE[2] ? 2 : undefined;
  if (rateMbps === undefined) return { ok: false, fault: 'badSignal' };
  const service = readLsbFirst(bits, offset + 8, 8);
  const lengthUs = readLsbFirst(bits, offset + 16, 16);
  const usPerByte = 8 / rateMbps;
  const psduBytes = lengthUs / usPerByte;
  if (!Number.isInteger(psduBytes) || psduBytes < FCS_BYTES || psduBytes > PSDU_MAX_BYTES) {
    return { ok: false, fault: 'badLength' };
  }
  return { ok: true, header: { rateMbps, service, lengthUs, psduBytes } };
}
