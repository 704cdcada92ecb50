/**
 * The two checks of the 802.11b DSSS PHY: the PLCP header's CRC-16
 * (IEEE 802.11-2016 16.2.3.7) and the MAC frame's FCS, the CRC-32 of
 * IEEE 802.3 (IEEE 802.11-2016 9.2.4.8), both bit-serial over bits in the
 * order they go on the air.
 */

/** CCITT CRC-16 generator x^16 + x^12 + x^5 + 1, without the x^16 term. */
const CRC16_POLY = 0x1021;

/**
 * The PLCP header CRC-16 over `count` bits of `bits` (one 0 or 1 a byte) from
 * `offset`, in transmission order: SIGNAL, SERVICE and LENGTH, each LSB first
 * (16.2.3.7). The register starts at all ones and the result is its ones
 * complement. The returned value is sent MSB first: bit 15 is the first CRC
 * bit on the air.
 */
export function crc16PlcpBits(bits: Uint8Array, offset: number, count: number): number {
  let reg = 0xffff;
  for (let i = offset; i < offset + count; i++) {
    const feedback = (bits[i]! & 1) ^ (reg >>> 15);
    reg = (reg << 1) & 0xffff;
    if (feedback !== 0) reg ^= CRC16_POLY;
  }
  return ~reg & 0xffff;
}

/** The IEEE 802.3 CRC-32 generator, bit-reversed (the FCS goes LSB first). */
const CRC32_POLY_REFLECTED = 0xedb88320;

const CRC32_TABLE = ((): Uint32Array => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ CRC32_POLY_REFLECTED : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * The CRC-32 FCS of `bytes[offset, offset + count)`: register preset to ones,
 * bytes taken LSB first as 802.11 sends them, result ones-complemented
 * (9.2.4.8). Byte-wise through a table, equal to the bit-serial definition.
 */
export function crc32(bytes: Uint8Array, offset = 0, count = bytes.length - offset): number {
  let c = 0xffffffff;
  for (let i = offset; i < offset + count; i++) c = CRC32_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Length in bytes of the FCS at the end of every PSDU. */
export const FCS_BYTES = 4;

/** `frame` followed by its FCS, least significant byte first (the order 802.11 sends it). */
export function appendFcs(frame: Uint8Array): Uint8Array {
  const out = new Uint8Array(frame.length + FCS_BYTES);
  out.set(frame);
  const fcs = crc32(frame);
  for (let k = 0; k < FCS_BYTES; k++) out[frame.length + k] = (fcs >>> (8 * k)) & 0xff;
  return out;
}

/** Whether the last 4 bytes of `psdu` are the FCS of the bytes before them. */
export function fcsMatches(psdu: Uint8Array): boolean {
  if (psdu.length < FCS_BYTES) return false;
  const n = psdu.length - FCS_BYTES;
  const fcs = crc32(psdu, 0, n);
  for (let k = 0; k < FCS_BYTES; k++) if (psdu[n + k] !== ((fcs >>> (8 * k)) & 0xff)) return false;
  return true;
}
