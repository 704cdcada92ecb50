/**
 * Axis ticks at round values, for the monitor page's plots (bundled into the
 * page, tested here): frequency in MHz, power in dB, and the waterfalls'
 * time, which reads as time before the newest row ("now", "-30 s", "-1 min",
 * "-1:30") on every waterfall alike.
 */

/** The smallest step of 1, 2 or 5 times a power of ten that puts at least `minPx` pixels between ticks over `span` drawn `px` wide. */
export function niceStep(span: number, px: number, minPx: number): number {
  if (!(span > 0) || !(px > 0)) return 1;
  const raw = (span * minPx) / px;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** The multiples of `step` in [lo, hi], lowest first (rounded to shed float noise: 2415, not 2414.9999999). */
export function ticksIn(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k++) out.push(Math.round(k * step * 1e6) / 1e6);
  return out;
}

/** Steps of the time axis, seconds: each a time a reader counts in. */
export const TIME_STEPS: readonly number[] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];

/** A whole number of seconds before now: "now", "-5 s", "-2 min", "-1:30", "-1 h". */
export function fmtAgo(s: number): string {
  if (s === 0) return 'now';
  if (s < 60) return `-${s} s`;
  if (s % 3600 === 0) return `-${s / 3600} h`;
  if (s % 60 === 0) return `-${s / 60} min`;
  return `-${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The time ticks of a waterfall whose rows, `rowPx` high, are `ages[i]`
 * seconds older than the top one (newest first, never decreasing): one at
 * every multiple of the shortest of TIME_STEPS that keeps ticks at least
 * `minPx` apart at the rows' mean rate, each at the height (from the top of
 * the first row) where that age falls between two rows.
 */
export function timeTicks(ages: readonly number[], rowPx: number, minPx = 40): Array<{ ageS: number; y: number; label: string }> {
  const n = ages.length;
  if (n === 0) return [];
  const span = ages[n - 1]!;
  const perRow = n > 1 ? span / (n - 1) : 1;
  const step = TIME_STEPS.find((s) => (s / perRow) * rowPx >= minPx) ?? TIME_STEPS[TIME_STEPS.length - 1]!;
  const out: Array<{ ageS: number; y: number; label: string }> = [];
  let i = 0;
  for (let t = 0; t <= span + 1e-6; t += step) {
    // The ages only grow downwards: walk to the pair of rows that brackets t.
    while (i + 1 < n && ages[i + 1]! < t) i++;
    let y = i * rowPx;
    if (i + 1 < n && ages[i + 1]! > ages[i]!) y += ((t - ages[i]!) / (ages[i + 1]! - ages[i]!)) * rowPx;
    out.push({ ageS: t, y, label: fmtAgo(t) });
  }
  return out;
}
