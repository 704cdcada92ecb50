import { RangeArgumentError } from './errors.js';

/**
 * A seeded pseudo-random generator (xoshiro128**, 32-bit state words, so it
 * runs on plain JS numbers without BigInt). Cores take one as an input; none
 * calls Math.random(). `fork(label)` derives an independent stream from the
 * seed and a label, not from the current state, so adding a stream somewhere
 * never shifts the numbers another stream draws.
 */
export class Rng {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  /** A second normal deviate kept from the last Box-Muller pair. */
  private spare: number | undefined;

  private constructor(readonly seed: number, readonly label: string) {
    let h = splitmix32(hashString(label) ^ (seed >>> 0));
    this.s0 = h.value;
    h = splitmix32(h.state);
    this.s1 = h.value;
    h = splitmix32(h.state);
    this.s2 = h.value;
    h = splitmix32(h.state);
    this.s3 = h.value;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  static fromSeed(seed: number): Rng {
    if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
      throw new RangeArgumentError('seed', seed, 'an integer in [0, 4294967295]');
    }
    return new Rng(seed, '');
  }

  /** An independent stream named by `label`, derived from this stream's seed and label. */
  fork(label: string): Rng {
    return new Rng(this.seed, this.label === '' ? label : `${this.label}/${label}`);
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 bits of resolution. */
  next(): number {
    const hi = this.nextU32() >>> 5; // 27 bits
    const lo = this.nextU32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform in (0, 1], safe to take the logarithm of. */
  nextOpen(): number {
    return 1 - this.next();
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Exponentially distributed with the given mean. */
  exponential(mean: number): number {
    return -mean * Math.log(this.nextOpen());
  }

  /** Standard normal deviate (Box-Muller, both values of each pair used). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(this.nextOpen()));
    const th = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(th);
    return r * Math.cos(th);
  }

  /**
   * Fills `out` with independent normal deviates of standard deviation `sigma`;
   * the bulk path for noise synthesis.
   */
  fillNormal(out: Float32Array, sigma: number, offset = 0, count = out.length - offset): void {
    let i = offset;
    const end = offset + count;
    if (this.spare !== undefined && i < end) {
      out[i++] = this.spare * sigma;
      this.spare = undefined;
    }
    for (; i + 1 < end; i += 2) {
      const r = sigma * Math.sqrt(-2 * Math.log(this.nextOpen()));
      const th = 2 * Math.PI * this.next();
      out[i] = r * Math.cos(th);
      out[i + 1] = r * Math.sin(th);
    }
    if (i < end) out[i] = this.normal() * sigma;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

function splitmix32(state: number): { state: number; value: number } {
  const s = (state + 0x9e3779b9) | 0;
  let z = s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return { state: s, value: z >>> 0 };
}

/** FNV-1a over UTF-16 code units: a stable label hash. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
