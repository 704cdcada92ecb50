import { RangeArgumentError } from '../../../src/core/errors.js';

/**
 * What the air and two radios do to a signal that the PHY is measured
 * against (`cogmesh phy tx`, the tests, `npm run bench:phy-per`).
 */

/**
 * Turns `iq` (interleaved I, Q at `rateHz`) in place by a carrier frequency
 * offset of `cfoHz`: sample n times e^(2 pi j cfoHz (n0 + n) / rateHz), as a
 * receiver tuned `cfoHz` below the transmitter sees it; `n0` is the index of
 * the block's first sample in the stream, so that blocks turned one after
 * another keep one phase. Two 802.11b radios may be +-25 ppm off each (802.11-2016
 * 16.3.7.5), +-60 kHz at 2.4 GHz.
 */
export function turnCarrier(iq: Float32Array, cfoHz: number, rateHz: number, n0 = 0): void {
  if (!Number.isFinite(cfoHz)) throw new RangeArgumentError('cfoHz', cfoHz, 'a finite frequency');
  if (!(rateHz > 0 && Number.isFinite(rateHz))) throw new RangeArgumentError('rateHz', rateHz, 'a finite rate > 0');
  if (cfoHz === 0) return;
  const w = (2 * Math.PI * cfoHz) / rateHz;
  for (let n = 0; n < iq.length >>> 1; n++) {
    // The angle from the stream's start each time, so that rounding does not pile up over long blocks.
    const a = w * (n0 + n);
    const c = Math.cos(a);
    const s = Math.sin(a);
    const re = iq[2 * n]!;
    const im = iq[2 * n + 1]!;
    iq[2 * n] = re * c - im * s;
    iq[2 * n + 1] = re * s + im * c;
  }
}
