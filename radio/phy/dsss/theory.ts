/**
 * Bit and packet error rates over AWGN for the DSSS PHY's two modulations,
 * for the tests and `npm run bench:phy-per` to compare the receiver against.
 *
 * DBPSK with differential detection: Pb = exp(-Eb/N0) / 2 (Proakis, Digital
 * Communications, 4th ed., 5.2.8). DQPSK with Gray mapping and differential
 * detection, the exact form from the same section:
 * Pb = Q1(a, b) - I0(ab) exp(-(a^2 + b^2) / 2) / 2, with
 * a = sqrt(2 Eb/N0 (1 - 1/sqrt 2)), b = sqrt(2 Eb/N0 (1 + 1/sqrt 2)), where
 * Q1 is Marcum's Q function, here integrated numerically.
 */

/** I0(x) exp(-x), x >= 0 (Abramowitz and Stegun 9.8.1 and 9.8.2). */
function besselI0Scaled(x: number): number {
  if (x <= 3.75) {
    const t = (x / 3.75) ** 2;
    const i0 = 1 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 + t * (0.2659732 + t * (0.0360768 + t * 0.0045813)))));
    return i0 * Math.exp(-x);
  }
  const t = 3.75 / x;
  const p =
    0.39894228 +
    t * (0.01328592 + t * (0.00225319 + t * (-0.00157565 + t * (0.00916281 + t * (-0.02057706 + t * (0.02635537 + t * (-0.01647633 + t * 0.00392377)))))));
  return p / Math.sqrt(x);
}

/** Marcum Q1(a, b) = integral from b to infinity of x exp(-(x^2 + a^2) / 2) I0(a x) dx, by Simpson's rule. */
function marcumQ1(a: number, b: number): number {
  const top = Math.max(a, b) + 40;
  const steps = 20000;
  const h = (top - b) / steps;
  const f = (x: number): number => x * Math.exp(-((x - a) ** 2) / 2) * besselI0Scaled(a * x);
  let sum = f(b) + f(top);
  for (let k = 1; k < steps; k++) sum += (k % 2 === 1 ? 4 : 2) * f(b + k * h);
  return (sum * h) / 3;
}

export function berDbpsk(ebN0: number): number {
  return Math.exp(-ebN0) / 2;
}

export function berDqpsk(ebN0: number): number {
  const a = Math.sqrt(2 * ebN0 * (1 - Math.SQRT1_2));
  const b = Math.sqrt(2 * ebN0 * (1 + Math.SQRT1_2));
  return marcumQ1(a, b) - 0.5 * besselI0Scaled(a * b) * Math.exp(-((a - b) ** 2) / 2);
}

/**
 * PER of one frame of `frameBytes` (FCS excluded) at `rateMbps` and the
 * PSDU's Eb/N0 (linear): the 8 SYNC ones the receiver checks, the SFD and the
 * header go at 1 Mb/s in DBPSK, so with the same noise their Eb/N0 is
 * `rateMbps` times the PSDU's; every bit there and in the PSDU must be right.
 */
export function perTheory(ebN0: number, rateMbps: 1 | 2, frameBytes: number): number {
  const preambleBits = 8 + 16 + 48;
  const psduBits = 8 * (frameBytes + 4);
  const okPreamble = (1 - berDbpsk(rateMbps * ebN0)) ** preambleBits;
  const okPsdu = (1 - (rateMbps === 1 ? berDbpsk(ebN0) : berDqpsk(ebN0))) ** psduBits;
  return 1 - okPreamble * okPsdu;
}

/** The Eb/N0 in dB where perTheory equals `per`, by bisection. */
export function ebN0DbForPer(per: number, rateMbps: 1 | 2, frameBytes: number): number {
  let lo = -5;
  let hi = 25;
  for (let k = 0; k < 60; k++) {
    const mid = (lo + hi) / 2;
    if (perTheory(10 ** (mid / 10), rateMbps, frameBytes) > per) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
