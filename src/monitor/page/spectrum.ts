import { stitchBand, type BandGrid } from '../band.js';
import { niceStep, ticksIn } from '../ticks.js';
import { AXIS_TEXT, drawTimeTicks, fitCanvas, FONT, GRID_LINE, plotNote, ROW_PX } from './axes.js';
import { hexRgb, lutRgb, NA_FILL, VIRIDIS } from './draw.js';
import type { BandRow, PageState } from './state.js';

/**
 * The band-wide spectrum: the latest PSD of every channel stitched into one
 * line over the whole channel plan (dBm/Hz against MHz, channels marked, a
 * peak hold), and the same stitched PSD as a waterfall below it, one row a
 * sensing round, on the same time axis as the per-channel waterfalls.
 */

/** Margins the spectrum line and the band waterfall share, so that their frequency axes line up. */
export const BAND_LEFT = 58;
export const BAND_RIGHT = 14;
/** Rounds the peak hold spans. */
export const PEAK_ROUNDS = 30;
export const NO_PSD = 'no PSD: monitor.psd.enabled is false or the router does not sense';

const BAND_LUT = lutRgb(VIRIDIS);
const NA_RGB = hexRgb(NA_FILL);
const LINE = '#e6edf3';
const PEAK = '#f472b6';
const R1 = '#2dd4bf';
const R2 = '#f5b942';
const R3 = '#a78bfa';

/**
 * The grid of the band: from the lower edge of the lowest channel's lowest
 * bin to the upper edge of the highest channel's highest bin (the captures'
 * reach, band.ts), `points` wide. The
 * channels are the plan's (their centres from the spectrum frames) and those
 * the PSDs came from; undefined before the first PSD.
 */
export function planGrid(S: PageState, points: number): BandGrid | undefined {
  let rate = 0;
  let binHz = 0;
  for (const p of S.psds.values()) {
    if (p.sampleRateHz > rate) {
      rate = p.sampleRateHz;
      binHz = rate / p.dbmPerHz.length;
    }
  }
  if (rate === 0) return undefined;
  let lo = Infinity;
  let hi = -Infinity;
  for (const f of [...S.centersHz.values(), ...Array.from(S.psds.values(), (p) => p.centerHz)]) {
    lo = Math.min(lo, f);
    hi = Math.max(hi, f);
  }
  return { fromHz: lo - rate / 2 - binHz / 2, toHz: hi + rate / 2 - binHz / 2, points: Math.max(2, Math.round(points)) };
}

/** The band's PSD now, stitched from the latest PSDs, `points` wide; null before the first PSD. */
export function bandRow(S: PageState, points: number): BandRow | null {
  const grid = planGrid(S, points);
  return grid ? { grid, dbmPerHz: stitchBand(S.psds.values(), grid) } : null;
}

/** The value of `row` at `f` Hz (its nearest grid point), NaN outside its grid. */
function valueAt(row: BandRow, f: number): number {
  const g = row.grid;
  const k = Math.round(((f - g.fromHz) / (g.toHz - g.fromHz)) * (g.points - 1));
  return k < 0 || k >= g.points ? Number.NaN : row.dbmPerHz[k]!;
}

/** The rows the plots can show, newest last. */
function bandRows(S: PageState, n: number): BandRow[] {
  const out: BandRow[] = [];
  for (let i = Math.max(0, S.rows.length - n); i < S.rows.length; i++) {
    const b = S.rows[i]!.band;
    if (b) out.push(b);
  }
  return out;
}

/**
 * The dB range of the band's plots (the line's axis and the waterfall's
 * colours): multiples of 10 dB around what the last `rows` rows hold, 30 dB
 * at least (a quiet band is not stretched into noise) and 100 dB at most (a
 * stray bin does not wash the colours out), so that it moves only when the
 * band does.
 */
export function dbRange(S: PageState, rows: number): { lo: number; hi: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const b of bandRows(S, rows)) {
    for (let i = 0; i < b.dbmPerHz.length; i += 2) {
      const v = b.dbmPerHz[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  if (!(min <= max)) return { lo: -170, hi: -110 };
  const hi = Math.ceil((max + 3) / 10) * 10;
  const lo = Math.max(hi - 100, Math.min(hi - 30, Math.floor((min - 3) / 10) * 10));
  return { lo, hi };
}

/** Where a band plot put its axes, for the tooltip and for tests (also as data- attributes). */
interface BandGeometry {
  ax: number;
  ay: number;
  aw: number;
  ah: number;
  fromHz: number;
  toHz: number;
}
const geometry = new WeakMap<HTMLCanvasElement, BandGeometry>();

/** The frequency axis both plots use: the plan's grid at this width; undefined before the first PSD. */
function displayGrid(S: PageState, aw: number): BandGrid | undefined {
  const now = planGrid(S, aw);
  if (now) return now;
  for (let i = S.rows.length - 1; i >= 0; i--) if (S.rows[i]!.band) return S.rows[i]!.band!.grid;
  return undefined;
}

/** Why a band plot is empty, or undefined when it has something to draw. */
function emptyNote(S: PageState, grid: BandGrid | undefined): string | undefined {
  if (!S.hello) return 'waiting for the router';
  if (S.hello.psd === null) return NO_PSD;
  if (!grid) return 'waiting for the first PSD';
  return undefined;
}

/** Keeps where the plot's axes are (none: an empty plot) for the tooltip, and says it in data- attributes. */
function mark(cv: HTMLCanvasElement, geo: BandGeometry | undefined, ticks: readonly number[]): void {
  if (geo) geometry.set(cv, geo);
  else geometry.delete(cv);
  cv.dataset.plot = geo ? `${geo.ax} ${geo.ay} ${geo.aw} ${geo.ah}` : '';
  cv.dataset.fromHz = geo ? String(geo.fromHz) : '';
  cv.dataset.toHz = geo ? String(geo.toHz) : '';
  cv.dataset.mhzTicks = ticks.join(' ');
}

/** The plot's note (why it is empty), also for tests. */
function noteOn(cv: HTMLCanvasElement, g: CanvasRenderingContext2D, text: string, x: number, y: number): void {
  plotNote(g, text, x, y);
  cv.dataset.note = text;
}

/**
 * A band plot's canvas, fitted, with its plot box (`top` and `bottom`
 * margins, the shared left and right ones) on the band's grid; or, when
 * there is nothing to draw (`empty`, or no grid yet), the box with a note
 * saying why, and undefined.
 */
function bandPlot(
  S: PageState,
  cv: HTMLCanvasElement,
  top: number,
  bottom: number,
  empty?: string,
): { g: CanvasRenderingContext2D; ax: number; ay: number; aw: number; ah: number; grid: BandGrid } | undefined {
  const fit = fitCanvas(cv);
  if (!fit) return undefined;
  const { g, W, H } = fit;
  const ax = BAND_LEFT;
  const ay = top;
  const aw = W - ax - BAND_RIGHT;
  const ah = H - ay - bottom;
  const grid = displayGrid(S, aw);
  const note = emptyNote(S, grid) ?? (aw < 10 || ah < 10 ? '' : empty);
  g.fillStyle = '#0f1318';
  g.fillRect(ax, ay, aw, ah);
  if (note !== undefined || !grid) {
    noteOn(cv, g, note ?? '', ax + aw / 2, ay + ah / 2);
    mark(cv, undefined, []);
    return undefined;
  }
  cv.dataset.note = '';
  return { g, ax, ay, aw, ah, grid };
}

/** The spectrum line: the latest stitched PSD, a peak hold, dB and MHz axes, the channels marked. */
export function drawSpectrum(S: PageState, cv: HTMLCanvasElement, lo: number, hi: number): void {
  const plot = bandPlot(S, cv, 30, 28);
  cv.dataset.drawn = plot ? 'line' : '';
  if (!plot) return;
  const { g, ax, ay, aw, ah, grid } = plot;
  const { fromHz, toHz } = grid;
  const xOf = (f: number): number => ax + ((f - fromHz) / (toHz - fromHz)) * aw;
  const yOf = (v: number): number => ay + ((hi - v) / (hi - lo)) * ah;

  // The dB axis: gridlines and labels at round values.
  g.font = FONT;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  const dbStep = Math.max(5, niceStep(hi - lo, ah, 26));
  for (const v of ticksIn(lo, hi, dbStep)) {
    const y = Math.round(yOf(v)) + 0.5;
    g.fillStyle = GRID_LINE;
    g.fillRect(ax, y - 0.5, aw, 1);
    g.fillStyle = AXIS_TEXT;
    g.fillText(String(v), ax - 7, Math.min(ay + ah - 6, Math.max(ay + 6, y)));
  }
  g.fillText('dBm/Hz', ax - 7, ay - 14);

  // The MHz axis, under the plot.
  const mhzTicks = freqTicks(g, fromHz, toHz, aw, xOf, ay, ah);
  g.textAlign = 'right';
  g.fillStyle = AXIS_TEXT;
  g.fillText('MHz', ax - 7, ay + ah + 14);

  // The channels: a faint line at each centre, the number above (R1 filled, R2 underlined, R3 in violet).
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  for (const ch of S.channels) {
    const f = S.centersHz.get(ch) ?? S.psds.get(ch)?.centerHz;
    if (f === undefined || f < fromHz || f > toHz) continue;
    const x = Math.round(xOf(f)) + 0.5;
    g.strokeStyle = ch === S.r1 ? 'rgba(45,212,191,0.55)' : 'rgba(135,147,163,0.28)';
    g.setLineDash(ch === S.r1 ? [] : [3, 4]);
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(x, ay);
    g.lineTo(x, ay + ah);
    g.stroke();
    g.setLineDash([]);
    const label = String(ch);
    const tw = Math.max(18, g.measureText(label).width + 8);
    if (ch === S.r1) {
      g.fillStyle = R1;
      g.fillRect(x - tw / 2, ay - 25, tw, 17);
      g.fillStyle = '#0d1015';
    } else g.fillStyle = ch === S.r3 ? R3 : '#c3ccd8';
    g.fillText(label, x, ay - 16);
    if (ch === S.r2) {
      g.fillStyle = R2;
      g.fillRect(x - tw / 2, ay - 6, tw, 2);
    }
  }

  // The peak hold of the last rounds, then the latest line over it; NaN (no PSD there) is a gap.
  g.save();
  g.beginPath();
  g.rect(ax, ay, aw, ah);
  g.clip();
  const cols = Math.max(2, Math.round(aw));
  const fAt = (x: number): number => fromHz + ((toHz - fromHz) * x) / (cols - 1);
  const held = bandRows(S, PEAK_ROUNDS);
  const peak = new Float32Array(cols).fill(Number.NaN);
  for (const b of held) {
    for (let x = 0; x < cols; x++) {
      const v = valueAt(b, fAt(x));
      if (!(peak[x]! >= v)) peak[x] = Number.isNaN(v) ? peak[x]! : v;
    }
  }
  const latest = bandRow(S, cols);
  const line = latest ? latest.dbmPerHz : new Float32Array(cols).fill(Number.NaN);
  trace(g, peak, (x) => ax + (x * aw) / (cols - 1), yOf, PEAK, 1, null);
  trace(g, line, (x) => ax + (x * aw) / (cols - 1), yOf, LINE, 1.5, ay + ah);
  g.restore();

  mark(cv, { ax, ay, aw, ah, fromHz, toHz }, mhzTicks);
}

/** A polyline through the finite values of `v`, broken at NaN; with `floorY`, filled faintly down to it. */
function trace(
  g: CanvasRenderingContext2D,
  v: Float32Array,
  xOf: (i: number) => number,
  yOf: (v: number) => number,
  colour: string,
  width: number,
  floorY: number | null,
): void {
  const runs: Array<[number, number]> = [];
  for (let i = 0; i < v.length;) {
    if (!Number.isFinite(v[i]!)) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < v.length && Number.isFinite(v[j + 1]!)) j++;
    runs.push([i, j]);
    i = j + 1;
  }
  if (floorY !== null) {
    g.fillStyle = 'rgba(59,130,246,0.16)';
    for (const [i, j] of runs) {
      g.beginPath();
      g.moveTo(xOf(i), floorY);
      for (let k = i; k <= j; k++) g.lineTo(xOf(k), yOf(v[k]!));
      g.lineTo(xOf(j), floorY);
      g.closePath();
      g.fill();
    }
  }
  g.strokeStyle = colour;
  g.lineWidth = width;
  g.lineJoin = 'round';
  for (const [i, j] of runs) {
    g.beginPath();
    g.moveTo(xOf(i), yOf(v[i]!));
    for (let k = i + 1; k <= j; k++) g.lineTo(xOf(k), yOf(v[k]!));
    if (i === j) g.lineTo(xOf(i) + 1, yOf(v[i]!));
    g.stroke();
  }
}

/** Gridlines and labels at round MHz values (every 1, 2, 5, 10... MHz, at least 64 px apart); the values. */
function freqTicks(g: CanvasRenderingContext2D, fromHz: number, toHz: number, aw: number, xOf: (f: number) => number, ay: number, ah: number): number[] {
  const step = niceStep((toHz - fromHz) / 1e6, aw, 64);
  const ticks = ticksIn(fromHz / 1e6, toHz / 1e6, step);
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  for (const mhz of ticks) {
    const x = Math.round(xOf(mhz * 1e6)) + 0.5;
    g.fillStyle = GRID_LINE;
    g.fillRect(x - 0.5, ay, 1, ah);
    g.fillStyle = AXIS_TEXT;
    g.fillRect(x - 0.5, ay + ah, 1, 4);
    g.fillText(String(mhz), x, ay + ah + 14);
  }
  return ticks;
}

/** The band waterfall: one row a round (newest on top), the stitched PSD coloured on the line's dB range. */
export function drawBand(S: PageState, cv: HTMLCanvasElement, lo: number, hi: number): void {
  const plot = bandPlot(S, cv, 4, 4, S.rows.length === 0 ? 'waiting for the first sensing round' : undefined);
  const n = plot ? Math.min(Math.max(1, Math.floor(plot.ah / ROW_PX)), S.rows.length) : 0;
  cv.dataset.rows = String(n);
  cv.dataset.lastRound = n > 0 ? String(S.rows[S.rows.length - 1]!.round) : '';
  if (!plot) return;
  const { g, ax, ay, aw, ah, grid } = plot;
  const { fromHz, toHz } = grid;
  const img = new ImageData(aw, n * ROW_PX);
  const px = img.data;
  const scale = 255 / (hi - lo);
  for (let i = 0; i < n; i++) {
    const row = S.rows[S.rows.length - 1 - i]!.band;
    for (let x = 0; x < aw; x++) {
      const v = row ? valueAt(row, fromHz + ((toHz - fromHz) * (x + 0.5)) / aw) : Number.NaN;
      let r = NA_RGB[0];
      let gr = NA_RGB[1];
      let b = NA_RGB[2];
      if (Number.isFinite(v)) {
        const k = 3 * Math.min(255, Math.max(0, Math.round((v - lo) * scale)));
        r = BAND_LUT[k]!;
        gr = BAND_LUT[k + 1]!;
        b = BAND_LUT[k + 2]!;
      }
      for (let d = 0; d < ROW_PX; d++) {
        const o = 4 * ((i * ROW_PX + d) * aw + x);
        px[o] = r;
        px[o + 1] = gr;
        px[o + 2] = b;
        px[o + 3] = 255;
      }
    }
  }
  const off = document.createElement('canvas');
  off.width = aw;
  off.height = n * ROW_PX;
  off.getContext('2d')?.putImageData(img, 0, 0);
  g.imageSmoothingEnabled = false;
  g.drawImage(off, ax, ay);

  // The MHz ticks of the line above, on the top edge.
  const xOf = (f: number): number => ax + ((f - fromHz) / (toHz - fromHz)) * aw;
  const step = niceStep((toHz - fromHz) / 1e6, aw, 64);
  const ticks = ticksIn(fromHz / 1e6, toHz / 1e6, step);
  g.fillStyle = 'rgba(216,222,231,0.5)';
  for (const mhz of ticks) g.fillRect(Math.round(xOf(mhz * 1e6)), ay, 1, 5);
  drawTimeTicks(g, S.rows, n, ax, ay);
  mark(cv, { ax, ay, aw, ah, fromHz, toHz }, ticks);
}

/** What the band plot under the pointer shows there, as the canvas's tooltip. */
export function hoverBand(S: PageState, cv: HTMLCanvasElement, e: MouseEvent, waterfall: boolean): void {
  const geo = geometry.get(cv);
  const r = cv.getBoundingClientRect();
  const x = e.clientX - r.left;
  const y = e.clientY - r.top;
  let text = '';
  if (geo && x >= geo.ax && x <= geo.ax + geo.aw && y >= geo.ay && y <= geo.ay + geo.ah) {
    const f = geo.fromHz + ((x - geo.ax) / geo.aw) * (geo.toHz - geo.fromHz);
    const at = S.rows[S.rows.length - 1 - (waterfall ? Math.floor((y - geo.ay) / ROW_PX) : 0)];
    const row = waterfall ? (at?.band ?? null) : bandRow(S, Math.max(2, Math.round(geo.aw)));
    const round = at?.round;
    const v = row ? valueAt(row, f) : Number.NaN;
    text = `${(f / 1e6).toFixed(2)} MHz${round !== undefined ? ` · round ${round}` : ''} · ${Number.isFinite(v) ? `${v.toFixed(1)} dBm/Hz` : 'no PSD here'}`;
  }
  if (cv.title !== text) cv.title = text;
}
