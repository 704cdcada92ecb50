import type { Row } from './state.js';

/**
 * Axis ticks at round values, for the page's plots: frequency in MHz, power
 * in dB, and the waterfalls' time, which reads as time before the newest row
 * ("now", "-30 s", "-1 min", "-1:30") on every waterfall alike.
 */

/** Pixels a round takes in a waterfall (every waterfall, so that their times line up). */
export const ROW_PX = 2;
/** Canvas text: 12 px, the smallest size an operator reads at a glance. */
export const FONT = '12px system-ui, sans-serif';
export const AXIS_TEXT = '#8793a3';
export const GRID_LINE = 'rgba(135,147,163,0.16)';

/** The smallest step of 1, 2 or 5 times a power of ten that puts at least `minPx` pixels between ticks. */
export function niceStep(span: number, px: number, minPx: number): number {
  if (!(span > 0) || !(px > 0)) return 1;
  const raw = (span * minPx) / px;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** The multiples of `step` in [lo, hi]. */
export function ticksIn(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step; k++) out.push(Math.round(k * step * 1e6) / 1e6);
  return out;
}

/** Steps of the time axis, seconds. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];

/** A time before now: "-5 s", "-2 min", "-1:30", "-1 h". */
export function fmtAgo(s: number): string {
  if (s === 0) return 'now';
  if (s < 60) return `-${s} s`;
  if (s % 3600 === 0) return `-${s / 3600} h`;
  if (s % 60 === 0) return `-${s / 60} min`;
  return `-${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The time gutter of a waterfall whose top `n` rows (newest first, ROW_PX
 * each, from `ay`) are the newest of `rows`: a tick and a label at every
 * round multiple of a step chosen so that labels stay at least 40 px apart.
 */
export function drawTimeTicks(g: CanvasRenderingContext2D, rows: readonly Row[], n: number, ax: number, ay: number): void {
  if (n === 0) return;
  const last = rows.length - 1;
  const ageOf = (i: number): number => (rows[last]!.endUs - rows[last - i]!.endUs) / 1e6;
  const span = ageOf(n - 1);
  const perRow = n > 1 ? span / (n - 1) : 1;
  const step = TIME_STEPS.find((s) => (s / perRow) * ROW_PX >= 40) ?? TIME_STEPS[TIME_STEPS.length - 1]!;
  g.font = FONT;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  g.fillStyle = AXIS_TEXT;
  let i = 0;
  for (let t = 0; t <= span + 1e-6; t += step) {
    // The rows' ages only grow downwards: walk to the pair that brackets t.
    while (i + 1 < n && ageOf(i + 1) < t) i++;
    let y = ay + i * ROW_PX;
    if (i + 1 < n && ageOf(i + 1) > ageOf(i)) y += ((t - ageOf(i)) / (ageOf(i + 1) - ageOf(i))) * ROW_PX;
    g.fillRect(ax - 4, Math.round(y), 4, 1);
    g.fillText(fmtAgo(t), ax - 7, Math.max(ay + 7, y + 0.5));
  }
}

/**
 * The canvas's 2D context, its bitmap sized to the box the page's layout
 * gives it times devicePixelRatio (so lines stay sharp on any screen), drawing
 * in CSS pixels; undefined while the box is empty.
 */
export function fitCanvas(cv: HTMLCanvasElement): { g: CanvasRenderingContext2D; W: number; H: number } | undefined {
  const dpr = window.devicePixelRatio || 1;
  const W = cv.clientWidth;
  const H = cv.clientHeight;
  if (W === 0 || H === 0) return undefined;
  if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) {
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
  }
  const g = cv.getContext('2d');
  if (!g) return undefined;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#0a0d11';
  g.fillRect(0, 0, W, H);
  g.font = FONT;
  return { g, W, H };
}

/** A note in the middle of an empty plot. */
export function plotNote(g: CanvasRenderingContext2D, text: string, x: number, y: number): void {
  g.font = FONT;
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  g.fillStyle = '#8793a3';
  g.fillText(text, x, y);
}
