import type { PsdView } from '../router/view.js';

/**
 * The band-wide spectrum the monitor draws, stitched from the latest PSD of
 * each channel visit, the way sweeping analysers (rtl_power, hackrf_sweep)
 * join their captures: every point of the band takes the bin of the capture
 * whose centre is nearest to it, among the captures that reach it. Nearest
 * centre means the middle of each capture, away from the band edges where a
 * front-end's anti-aliasing filter rolls off. A point no capture reaches is
 * NaN (a gap, drawn as such).
 */
export interface BandGrid {
  /** Lowest and highest frequency of the grid, Hz (the first and last points). */
  fromHz: number;
  toHz: number;
  /** Points of the grid, at least 2. */
  points: number;
}

/** The frequency of point `i` of `g`, Hz. */
export function gridHz(g: BandGrid, i: number): number {
  return g.fromHz + ((g.toHz - g.fromHz) * i) / (g.points - 1);
}

/**
 * The grid that spans the captures of `psds` (from the lowest bin's lower
 * edge to the highest bin's upper edge), `points` wide; undefined when there
 * is none.
 */
export function bandGridOf(psds: Iterable<PsdView>, points: number): BandGrid | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of psds) {
    const [a, b] = reach(p);
    lo = Math.min(lo, a);
    hi = Math.max(hi, b);
  }
  return lo < hi ? { fromHz: lo, toHz: hi, points: Math.max(2, Math.floor(points)) } : undefined;
}

/**
 * The frequencies a capture reaches, Hz: from its lowest bin's lower edge to
 * its highest bin's upper edge (half a bin beyond their centres), so that
 * captures whose centres are their sample rate apart tile the band.
 */
export function reach(p: PsdView): [number, number] {
  const n = p.dbmPerHz.length;
  const half = p.sampleRateHz / n / 2;
  return [binHz(p, 0) - half, binHz(p, n - 1) + half];
}

/** The centre frequency of bin `i` of `p`, Hz. */
export function binHz(p: PsdView, i: number): number {
  const n = p.dbmPerHz.length;
  return p.centerHz + ((i - n / 2) * p.sampleRateHz) / n;
}

/**
 * The band-wide PSD on `g`, dBm/Hz (NaN where no capture reaches), into `out`
 * (g.points long) or a new array; each point takes the bin it falls in.
 */
export function stitchBand(psds: Iterable<PsdView>, g: BandGrid, out = new Float32Array(g.points)): Float32Array {
  // Each capture's reach once, not once per point.
  const list = Array.from(psds, (p) => ({ p, reach: reach(p) }));
  for (let i = 0; i < g.points; i++) {
    const f = gridHz(g, i);
    let best: PsdView | undefined;
    for (const { p, reach: r } of list) {
      if (f < r[0] || f > r[1]) continue;
      if (!best || Math.abs(f - p.centerHz) < Math.abs(f - best.centerHz)) best = p;
    }
    if (!best) {
      out[i] = Number.NaN;
      continue;
    }
    const n = best.dbmPerHz.length;
    const k = Math.round(((f - best.centerHz) * n) / best.sampleRateHz + n / 2);
    out[i] = best.dbmPerHz[Math.min(n - 1, Math.max(0, k))]!;
  }
  return out;
}
