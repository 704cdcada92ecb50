import type { SpectrumChannel } from '../../router/view.js';
import { drawTimeTicks, fitCanvas, FONT, plotNote, ROW_PX } from './axes.js';
import { esc, fmtMbps } from './format.js';
import { $, type PageState } from './state.js';

/** The page's drawing: the power and w waterfalls, their legends, and the RC bars. */

export const POWER_MIN = -100;
export const POWER_MAX = -40;
export const VIRIDIS = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725'];
export const INFERNO = ['#000004', '#1b0c41', '#4a0c6b', '#781c6d', '#a52c60', '#cf4446', '#ed6925', '#fb9b06', '#f7d13d', '#fcffa4'];
export const NA_FILL = '#262b33';

export function hexRgb(h: string): [number, number, number] {
  return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
}

/** 256 colours interpolated along `stops`. */
function makeLut(stops: readonly string[]): string[] {
  const rgb = stops.map(hexRgb);
  const out: string[] = [];
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (rgb.length - 1);
    const k = Math.min(rgb.length - 2, Math.floor(x));
    const f = x - k;
    const c = [0, 1, 2].map((j) => Math.round(rgb[k]![j]! + (rgb[k + 1]![j]! - rgb[k]![j]!) * f));
    out.push(`rgb(${c.join(',')})`);
  }
  return out;
}

/** 256 colours along `stops`, as r, g, b bytes (for ImageData). */
export function lutRgb(stops: readonly string[]): Uint8ClampedArray {
  const out = new Uint8ClampedArray(256 * 3);
  makeLut(stops).forEach((c, i) => out.set(c.slice(4, -1).split(',').map(Number), i * 3));
  return out;
}

export const POWER_LUT = makeLut(VIRIDIS);
export const W_LUT = makeLut(INFERNO);

function colourOf(lut: readonly string[], v: number, lo: number, hi: number): string {
  const i = Math.round(((v - lo) / (hi - lo)) * 255);
  return lut[i < 0 ? 0 : i > 255 ? 255 : i]!;
}

/** Where a waterfall drew its cells, for the tooltip. */
interface Geometry {
  ax: number;
  ay: number;
  colX: number[];
  n: number;
}
const geometry = new WeakMap<HTMLCanvasElement, Geometry>();

/** One waterfall: a column per channel, a row per round (newest on top), with R1, R2 and R3 marked. */
export function drawWaterfall(
  S: PageState,
  cv: HTMLCanvasElement,
  valueOf: (c: SpectrumChannel) => number | undefined,
  lut: readonly string[],
  lo: number,
  hi: number,
  markR1: boolean,
): void {
  const fit = fitCanvas(cv);
  if (!fit) return;
  const { g, W, H } = fit;
  const ax = 52;
  const ay = 24;
  const aw = W - ax - 6;
  const ah = H - ay - 4;
  const cols = S.channels;
  const nc = cols.length;
  g.font = FONT;
  g.textBaseline = 'middle';
  g.textAlign = 'center';
  const colX: number[] = [];
  for (let c = 0; c <= nc; c++) colX.push(Math.round(ax + (aw * c) / Math.max(1, nc)));
  for (let c = 0; c < nc; c++) {
    const ch = cols[c]!;
    const cx = (colX[c]! + colX[c + 1]!) / 2;
    if (ch === S.r1) {
      g.fillStyle = '#2dd4bf';
      g.fillRect(colX[c]! + 1, 3, colX[c + 1]! - colX[c]! - 2, 16);
      g.fillStyle = '#0d1015';
    } else g.fillStyle = ch === S.r3 ? '#a78bfa' : '#8793a3';
    g.fillText(String(ch), cx, 11.5);
    if (ch === S.r2) {
      g.fillStyle = '#f5b942';
      g.fillRect(colX[c]! + 3, 20, colX[c + 1]! - colX[c]! - 6, 2);
    }
  }
  const cap = Math.max(1, Math.floor(ah / ROW_PX));
  const n = Math.min(cap, S.rows.length);
  for (let i = 0; i < n; i++) {
    const row = S.rows[S.rows.length - 1 - i]!;
    const y = ay + i * ROW_PX;
    for (let c = 0; c < nc; c++) {
      const cell = row.cells.get(cols[c]!);
      const v = cell ? valueOf(cell) : undefined;
      g.fillStyle = v === undefined || v === null ? NA_FILL : colourOf(lut, v, lo, hi);
      g.fillRect(colX[c]!, y, colX[c + 1]! - colX[c]! - 1, ROW_PX);
    }
    if (markR1 && row.r1 !== null) {
      const k = cols.indexOf(row.r1);
      if (k >= 0) {
        g.fillStyle = 'rgba(255,255,255,0.9)';
        g.fillRect(Math.round((colX[k]! + colX[k + 1]!) / 2) - 1, y, 2, ROW_PX);
      }
    }
  }
  if (n > 0) drawTimeTicks(g, S.rows, n, ax, ay);
  else plotNote(g, 'waiting for the first sensing round', ax + aw / 2, ay + ah / 2);
  geometry.set(cv, { ax, ay, colX, n });
  cv.dataset.rounds = String(n);
  cv.dataset.lastRound = n > 0 ? String(S.rows[S.rows.length - 1]!.round) : '';
}

/** A colour scale under a waterfall. */
export function legend(el: HTMLElement, stops: readonly string[], ticks: readonly number[], lo: number, hi: number, unit: string): void {
  const grad = `linear-gradient(90deg, ${stops.join(', ')})`;
  const t = ticks.map((v) => `<span style="left:${(((v - lo) / (hi - lo)) * 100).toFixed(2)}%">${v}</span>`).join('');
  el.innerHTML = `<span class="unit">${unit}</span><div class="scale" style="background:${grad}"><div class="ticks">${t}</div></div><span class="na"><i></i>not sensed</span>`;
}

/** One RC bar per channel of the plan. */
export function buildBars(S: PageState): void {
  $('rc').innerHTML = S.channels
    .map(
      (ch) =>
        `<div class="bar" data-channel="${esc(ch)}"><span class="val"></span><div class="track"><div class="fill" style="height:0%"></div></div><span class="ch">${esc(ch)}</span><span class="tags"></span></div>`,
    )
    .join('');
}

/** The RC bars from the latest round, with R1, R2, R3 and the best channel marked. */
export function updateBars(S: PageState): void {
  const f = S.latest;
  let cap = S.hello?.capacityBps ?? 0;
  let best = -1;
  const cells = new Map<number, SpectrumChannel>();
  if (f) {
    for (const c of f.channels) {
      cells.set(c.channel, c);
      if (c.rcBps > best) best = c.rcBps;
      if (c.rcBps > cap) cap = c.rcBps;
    }
  }
  $('rc-round').textContent = f ? `round ${f.round}` : '';
  for (const b of Array.from($('rc').children) as HTMLElement[]) {
    const ch = Number(b.dataset.channel);
    const c = cells.get(ch);
    b.classList.toggle('r1', ch === S.r1);
    b.classList.toggle('r3', ch === S.r3);
    b.classList.toggle('best', !!c && c.rcBps === best);
    (b.querySelector('.fill') as HTMLElement).style.height = c && cap > 0 ? `${((c.rcBps / cap) * 100).toFixed(1)}%` : '0%';
    (b.querySelector('.val') as HTMLElement).textContent = c ? fmtMbps(c.rcBps) : '';
    b.title = c
      ? `channel ${ch} · ${c.centerMHz} MHz · w ${c.w.toFixed(3)}${c.ownW !== undefined ? ` (own ${c.ownW.toFixed(3)})` : ''} · RC ${fmtMbps(c.rcBps)} Mbps${c.powerDbm !== undefined ? ` · ${c.powerDbm.toFixed(1)} dBm` : ''}`
      : `channel ${ch}`;
    let tags = '';
    if (ch === S.r1) tags += '<span class="tag r1">R1</span>';
    if (ch === S.r2) tags += '<span class="tag r2">R2</span>';
    if (ch === S.r3) tags += '<span class="tag r3">R3</span>';
    (b.querySelector('.tags') as HTMLElement).innerHTML = tags;
  }
}

/** What the cell under the pointer holds, as the canvas's tooltip. */
export function hover(S: PageState, cv: HTMLCanvasElement, e: MouseEvent): void {
  const g = geometry.get(cv);
  const r = cv.getBoundingClientRect();
  const x = e.clientX - r.left;
  const y = e.clientY - r.top;
  let text = '';
  if (g && y >= g.ay && x >= g.ax) {
    const i = Math.floor((y - g.ay) / ROW_PX);
    let c = 0;
    while (c < S.channels.length && g.colX[c + 1]! <= x) c++;
    const row = i < g.n ? S.rows[S.rows.length - 1 - i] : undefined;
    const ch = S.channels[c];
    if (row && ch !== undefined) {
      const cell = row.cells.get(ch);
      text = `channel ${ch} · round ${row.round} · `;
      text += !cell
        ? 'not in this round'
        : `w ${cell.w.toFixed(3)} · RC ${fmtMbps(cell.rcBps)} Mbps · ${cell.powerDbm === undefined ? 'not visited' : `${cell.powerDbm.toFixed(1)} dBm`}`;
      if (row.r1 === ch) text += ' · R1';
    }
  }
  if (cv.title !== text) cv.title = text;
}
