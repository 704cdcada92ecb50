/**
 * The DSSS scrambler and descrambler, the self-synchronising x^7 + x^4 + 1
 * of IEEE 802.11-2016 16.2.4. Both work one bit at a time over a stream and
 * keep their state between calls, so a PPDU may be fed in pieces.
 *
 * The register holds the last 7 scrambled bits: Z1 (bit 0 of `state`) is the
 * newest, Z7 (bit 6) the oldest. Scrambling is s = d ^ Z4 ^ Z7 and s shifts
 * into Z1; descrambling is d = s ^ Z4 ^ Z7 with the received s shifting in.
 * Because the descrambler's register fills with received bits, it needs no
 * seed: after 7 bits it agrees with the transmitter whatever it started from.
 */

/**
 * The transmitter's seed for the long preamble, written in the standard as
 * [1101100] with the leftmost bit in the first delay element Z1 (16.2.4).
 * Here Z1 is bit 0, so the value reads reversed.
 */
export const LONG_PREAMBLE_SEED = 0b0011011;

const MASK7 = 0x7f;

/** The transmit scrambler, x^7 + x^4 + 1 (16.2.4). */
export class Scrambler {
  private state: number;

  /** `seed`: the register, Z1 in bit 0; the long preamble's by default. */
  constructor(seed = LONG_PREAMBLE_SEED) {
    this.state = seed & MASK7;
  }

  /** Scrambles one bit (0 or 1) and returns the bit to send. */
  bit(d: number): number {
    const s = (d ^ (this.state >>> 3) ^ (this.state >>> 6)) & 1;
    this.state = ((this.state << 1) | s) & MASK7;
    return s;
  }

  /** Scrambles `bits` (one 0 or 1 a byte) in place. */
  bits(bits: Uint8Array): void {
    for (let i = 0; i < bits.length; i++) bits[i] = this.bit(bits[i]!);
  }
}

/** The receive descrambler, self-synchronising (16.2.4). */
export class Descrambler {
  private state = 0;

  /** Descrambles one received bit (0 or 1). */
  bit(s: number): number {
    const d = (s ^ (this.state >>> 3) ^ (this.state >>> 6)) & 1;
    this.state = ((this.state << 1) | (s & 1)) & MASK7;
    return d;
  }

  /** Forgets the register, as at the start of a new search. */
  reset(): void {
    this.state = 0;
  }
}
