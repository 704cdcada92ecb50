import { timeTicks } from '../ticks.js';
import type { Row } from './state.js';

/** What the page's plots share: the row height, the font and colours of axes, a canvas fitted to its box, the time gutter. */

/** Pixels a round takes in a waterfall (every waterfall, so that their times line up). */
export const ROW_PX = 2;
/** Canvas text: 12 px, the smallest size an operator reads at a glance. */
export const FONT = '12px system-ui, sans-serif';
export const AXIS_TEXT = '#8793a3';
export const GRID_LINE = 'rgba(135,147,163,0.16)';

/**
 * The time gutter of a waterfall whose top `n` rows (newest first, ROW_PX
 * each, from `ay`) are the newest of `rows`: a tick and a label at round
 * times before the newest row (ticks.ts), at least 40 px apart.
 */
export function drawTimeTicks(g: CanvasRenderingContext2D, rows: readonly Row[], n: number, ax: number, ay: number): void {
  const last = rows.length - 1;
  const ages = Array.from({ length: n }, (_, i) => (rows[last]!.endUs - rows[last - i]!.endUs) / 1e6);
  g.font = FONT;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  g.fillStyle = AXIS_TEXT;
  for (const t of timeTicks(ages, ROW_PX)) {
    g.fillRect(ax - 4, Math.round(ay + t.y), 4, 1);
    g.fillText(t.label, ax - 7, Math.max(ay + 7, ay + t.y + 0.5));
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
