import { RangeArgumentError } from '../src/core/errors.js';

/** One radio channel of a channel plan. */
export interface Channel {
  /** The channel number operators use (1-13 in the 2.4 GHz ISM band). */
  readonly number: number;
  readonly centerHz: number;
  /** Occupied bandwidth (22 MHz for 802.11b DSSS in the ISM band). */
  readonly widthHz: number;
}

/**
 * A channel plan: the channels a node may use and how much each pair overlaps.
 * Overlap matters twice: an emitter on one channel leaks energy into the
 * channels around it (the emulated band uses `overlapFactor` for that), and
 * the channel decision must not call a channel free when it overlaps a busy one.
 */
export class ChannelPlan {
  private readonly byNumber: Map<number, Channel>;
  private readonly overlapCache = new Map<number, number>();

  constructor(
    readonly name: string,
    readonly channels: readonly Channel[],
    /** Whether channels are treated as orthogonal (no overlap at all), as ns-2's multichannel model has them. */
    readonly orthogonal = false,
  ) {
    this.byNumber = new Map(channels.map((c) => [c.number, c]));
  }

  get numbers(): number[] {
    return this.channels.map((c) => c.number);
  }

  has(n: number): boolean {
    return this.byNumber.has(n);
  }

  get(n: number): Channel {
    const c = this.byNumber.get(n);
    if (!c) throw new RangeArgumentError('channel', n, `a channel of plan ${this.name} (${this.numbers.join(', ')})`);
    return c;
  }

  /** Two channels overlap when their centres are closer than their width. */
  overlaps(a: number, b: number): boolean {
    const ca = this.get(a);
    const cb = this.get(b);
    if (this.orthogonal) return false;
    return Math.abs(ca.centerHz - cb.centerHz) < (ca.widthHz + cb.widthHz) / 2;
  }

  /** The channels that overlap `n`, without `n` itself. */
  overlapping(n: number): number[] {
    return this.numbers.filter((m) => m !== n && this.overlaps(n, m));
  }

  /**
   * The fraction of an emitter's power on channel `from` that a receiver tuned
   * to channel `to` collects (1 for the same channel). The emitter's power
   * spectral density is taken as the 802.11 DSSS transmit spectral mask: flat
   * within +-11 MHz, -30 dBr to +-22 MHz, -50 dBr beyond (the mask is the
   * worst case a compliant transmitter may radiate); the receiver integrates it
   * over its own channel width.
   */
  overlapFactor(from: number, to: number): number {
    const a = this.get(from);
    const b = this.get(to);
    const key = a.number * 1000 + b.number;
    const cached = this.overlapCache.get(key);
    if (cached !== undefined) return cached;
    if (this.orthogonal) return a.number === b.number ? 1 : 0;
    const f = maskOverlap(b.centerHz - a.centerHz, a.widthHz, b.widthHz);
    this.overlapCache.set(key, f);
    return f;
  }

  /** A channel plan of the given channel numbers only. */
  subset(numbers: readonly number[]): ChannelPlan {
    return new ChannelPlan(
      this.name,
      numbers.map((n) => this.get(n)),
      this.orthogonal,
    );
  }

  /**
   * The same channels taken as orthogonal: an emitter reaches only receivers
   * on its own channel. Not the 2.4 GHz band's physics, but the model of
   * ns-2's multichannel extensions, which the seeds' results come from.
   */
  asOrthogonal(): ChannelPlan {
    return new ChannelPlan(`${this.name}-orthogonal`, this.channels, true);
  }
}

/** Relative PSD of the DSSS transmit mask at offset `f` from the carrier (linear): 1, 1e-3 (-30 dBr) or 1e-5 (-50 dBr). */
export function maskPsd(f: number, widthHz: number): number {
  const half = widthHz / 2;
  const x = Math.abs(f);
  if (x < half) return 1;
  if (x < 2 * half) return 1e-3;
  return 1e-5;
}

/** Integral of the mask over a receiver band `rxWidthHz` wide centred `offsetHz` from the carrier. */
function maskIntegral(offsetHz: number, txWidthHz: number, rxWidthHz: number): number {
  // The mask is piecewise constant: integrate exactly between its breakpoints.
  const lo = offsetHz - rxWidthHz / 2;
  const hi = offsetHz + rxWidthHz / 2;
  const h = txWidthHz / 2;
  const points = [lo, hi, -2 * h, -h, h, 2 * h].filter((p) => p >= lo && p <= hi).sort((p, q) => p - q);
  let sum = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const p = points[i]!;
    const q = points[i + 1]!;
    sum += maskPsd((p + q) / 2, txWidthHz) * (q - p);
  }
  return sum;
}

/** The share of the power collected in-channel that a receiver offset by `offsetHz` collects. */
function maskOverlap(offsetHz: number, txWidthHz: number, rxWidthHz: number): number {
  return maskIntegral(offsetHz, txWidthHz, rxWidthHz) / maskIntegral(0, txWidthHz, rxWidthHz);
}

const MHZ = 1_000_000;

/**
 * The 2.4 GHz ISM band as 802.11b/g uses it: channels 1-13 at 2412 + 5(n-1) MHz,
 * 22 MHz wide (channel 14 at 2484 MHz is Japan-only DSSS and left out).
 * `count` 11 is the North American plan the seeds simulated; 13 is ETSI's.
 */
export function ism2g4(count: 11 | 13 = 11): ChannelPlan {
  const channels: Channel[] = [];
  for (let n = 1; n <= count; n++) channels.push({ number: n, centerHz: (2407 + 5 * n) * MHZ, widthHz: 22 * MHZ });
  return new ChannelPlan(`ism2g4-${count}`, channels);
}
