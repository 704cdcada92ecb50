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

  private constructor(
    readonly seed: number,
    readonly label: string,
  ) {
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
   * A Gamma(shape, scale) deviate: mean shape * scale. The energy of n
   * complex Gaussian samples of mean power P is Gamma(n, P), which is what
   * the statistical sensing model draws instead of the samples. Marsaglia
   * and Tsang's method (2000): for shape >= 1, a normal x and a uniform u
   * accept d * (1 + x / sqrt(9d))^3 with d = shape - 1/3, a rejection method
   * that is exact for every shape (no normal approximation for large ones;
   * it accepts over 95% of the time, more as the shape grows). For shape < 1,
   * Gamma(shape + 1) * u^(1/shape). The normal deviate is the ziggurat's,
   * the one the IQ synthesis uses.
   */
  gamma(shape: number, scale = 1): number {
    if (!(shape > 0) || !Number.isFinite(shape)) throw new RangeArgumentError('shape', shape, 'a finite number > 0');
    if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeArgumentError('scale', scale, 'a finite number > 0');
    if (shape < 1) return this.gammaAtLeastOne(shape + 1) * this.nextOpen() ** (1 / shape) * scale;
    return this.gammaAtLeastOne(shape) * scale;
  }

  /**
   * Fills out[offset .. offset + count) with independent Gamma(shape, scale)
   * deviates, the same numbers as that many calls of `gamma` would give; the
   * bulk path of the statistical sensing model (one window a deviate).
   */
  fillGamma(out: Float64Array, shape: number, scale: number, offset = 0, count = out.length - offset): void {
    if (!(shape > 0) || !Number.isFinite(shape)) throw new RangeArgumentError('shape', shape, 'a finite number > 0');
    if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeArgumentError('scale', scale, 'a finite number > 0');
    const end = offset + count;
    if (shape < 1) {
      for (let i = offset; i < end; i++) out[i] = this.gammaAtLeastOne(shape + 1) * this.nextOpen() ** (1 / shape) * scale;
      return;
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    const kn = ZIG.kn;
    const wn = ZIG.wn;
    // marsagliaTsang with the ziggurat's fast path and xoshiro128** inlined on
    // local state (the hot loop of statistical sensing); the same draws in the
    // same order, so the same deviates. The rare paths go through the methods.
    let s0 = this.s0;
    let s1 = this.s1;
    let s2 = this.s2;
    let s3 = this.s3;
    for (let i = offset; i < end; i++) {
      for (;;) {
        // The normal: the ziggurat's fast path on nextU32, inlined.
        let r = Math.imul(s1, 5);
        const hz = Math.imul((r << 7) | (r >>> 25), 9);
        let t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        const iz = hz & 127;
        let x: number;
        if (Math.abs(hz) < kn[iz]!) x = hz * wn[iz]!;
        else {
          this.s0 = s0;
          this.s1 = s1;
          this.s2 = s2;
          this.s3 = s3;
          x = this.zigguratTail(hz, iz);
          s0 = this.s0;
          s1 = this.s1;
          s2 = this.s2;
          s3 = this.s3;
        }
        let v = 1 + c * x;
        if (v <= 0) continue;
        // The uniform: nextU32, inlined.
        r = Math.imul(s1, 5);
        const u32 = Math.imul((r << 7) | (r >>> 25), 9) >>> 0;
        t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        v = v * v * v;
        const u = (u32 + 1) * 2.3283064365386963e-10;
        const x2 = x * x;
        if (u < 1 - 0.0331 * x2 * x2 || Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) {
          out[i] = d * v * scale;
          break;
        }
      }
    }
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
  }

  /** Marsaglia-Tsang for shape >= 1, scale 1. */
  private gammaAtLeastOne(shape: number): number {
    const d = shape - 1 / 3;
    return this.marsagliaTsang(d, 1 / Math.sqrt(9 * d));
  }

  /** One Gamma(d + 1/3, 1) deviate, c = 1 / sqrt(9d). */
  private marsagliaTsang(d: number, c: number): number {
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.zigguratNormal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      // Uniform in (0, 1] at 32-bit resolution, the resolution of the normal's own draws.
      const u = (this.nextU32() + 1) * 2.3283064365386963e-10;
      const x2 = x * x;
      // The squeeze accepts most draws without a logarithm.
      if (u < 1 - 0.0331 * x2 * x2) return d * v;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  /** One standard normal deviate from the ziggurat, as fillNormal draws them, in double precision. */
  private zigguratNormal(): number {
    const hz = this.nextU32() | 0;
    const iz = hz & 127;
    if (Math.abs(hz) < ZIG.kn[iz]!) return hz * ZIG.wn[iz]!;
    return this.zigguratTail(hz, iz);
  }

  /**
   * Fills `out` with independent normal deviates of standard deviation `sigma`;
   * the bulk path for noise synthesis. Marsaglia and Tsang's ziggurat (128
   * layers, 32-bit draws): one draw and a comparison for about 98.8% of the
   * deviates, so noise costs a fraction of what Box-Muller's log, sqrt, cos
   * and sin do.
   */
  fillNormal(out: Float32Array, sigma: number, offset = 0, count = out.length - offset): void {
    let i = offset;
    const end = offset + count;
    if (this.spare !== undefined && i < end) {
      out[i++] = this.spare * sigma;
      this.spare = undefined;
    }
    const kn = ZIG.kn;
    const wn = ZIG.wn;
    // xoshiro128** inlined on local state (the hot loop of noise synthesis).
    let s0 = this.s0;
    let s1 = this.s1;
    let s2 = this.s2;
    let s3 = this.s3;
    for (; i < end; i++) {
      const r = Math.imul(s1, 5);
      const hz = Math.imul((r << 7) | (r >>> 25), 9);
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      const iz = hz & 127;
      if (Math.abs(hz) < kn[iz]!) out[i] = hz * wn[iz]! * sigma;
      else {
        this.s0 = s0;
        this.s1 = s1;
        this.s2 = s2;
        this.s3 = s3;
        out[i] = this.zigguratTail(hz, iz) * sigma;
        s0 = this.s0;
        s1 = this.s1;
        s2 = this.s2;
        s3 = this.s3;
      }
    }
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
  }

  /** The ziggurat's slow path: the wedge of layer iz, or the tail beyond R for the base layer. */
  private zigguratTail(hz: number, iz: number): number {
    const { kn, wn, fn } = ZIG;
    for (;;) {
      const x = hz * wn[iz]!;
      if (iz === 0) {
        let tx: number;
        let ty: number;
        do {
          tx = -Math.log(this.nextOpen()) / ZIG_R;
          ty = -Math.log(this.nextOpen());
        } while (ty + ty < tx * tx);
        return hz > 0 ? ZIG_R + tx : -ZIG_R - tx;
      }
      if (fn[iz]! + this.next() * (fn[iz - 1]! - fn[iz]!) < Math.exp(-0.5 * x * x)) return x;
      hz = this.nextU32() | 0;
      iz = hz & 127;
      if (Math.abs(hz) < kn[iz]!) return hz * wn[iz]!;
    }
  }
}

/** Start of the normal's tail in the 128-layer ziggurat, and the area of each layer. */
const ZIG_R = 3.442619855899;
const ZIG_V = 9.91256303526217e-3;

/** Ziggurat tables for 32-bit signed draws (Marsaglia and Tsang, 2000). */
const ZIG = ((): { kn: Float64Array; wn: Float64Array; fn: Float64Array } => {
  const m1 = 2147483648;
  const kn = new Float64Array(128);
  const wn = new Float64Array(128);
  const fn = new Float64Array(128);
  let dn = ZIG_R;
  let tn = dn;
  const q = ZIG_V / Math.exp(-0.5 * dn * dn);
  kn[0] = (dn / q) * m1;
  kn[1] = 0;
  wn[0] = q / m1;
  wn[127] = dn / m1;
  fn[0] = 1;
  fn[127] = Math.exp(-0.5 * dn * dn);
  for (let i = 126; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(ZIG_V / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = (dn / tn) * m1;
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / m1;
  }
  return { kn, wn, fn };
})();

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
