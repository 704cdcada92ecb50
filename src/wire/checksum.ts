/**
 * The one's complement sum of RFC 1071, shared by the IP, ICMP, TCP and UDP
 * checksums (src/wire/ip.ts, src/wire/tcp.ts).
 */

/**
 * Adds the big-endian 16-bit words of b[start, end) to `sum`; end - start
 * must be even. No carries folded here: a double holds the exact sum of 2^37
 * words, far beyond any segment. Unrolled by four words to cut the loop
 * overhead; no per-byte allocation, no DataView.
 */
export function sumWords(b: Uint8Array, start: number, end: number, sum: number): number {
  let i = start;
  for (const stop = end - 7; i < stop; i += 8) {
    sum += ((b[i]! << 8) | b[i + 1]!) + ((b[i + 2]! << 8) | b[i + 3]!) + ((b[i + 4]! << 8) | b[i + 5]!) + ((b[i + 6]! << 8) | b[i + 7]!);
  }
  for (; i < end; i += 2) sum += (b[i]! << 8) | b[i + 1]!;
  return sum;
}

/** Folds the carries of a sum back into 16 bits (end-around carry). */
export function fold(sum: number): number {
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return sum;
}
