/**
 * Plots for the reproduction scripts (docs/reproduction.md): line and grouped-bar
 * charts as SVG strings, rendered headless in Node with vega-lite and vega (no
 * canvas, no browser).
 *
 *   const svg = await lineChart({ title: 'UDP throughput', xLabel: 'hops', yLabel: 'Mbps',
 *     series: [{ name: 'sim', points: [{ x: 1, y: 4.1, lo: 3.9, hi: 4.3 }, ...] }] });
 *   await writeChart('docs/img/udp-throughput.svg', svg);
 *
 * The output is deterministic: the same spec gives byte-identical SVG, in one
 * process or across processes. Text is sized with vega's width estimate (never a
 * canvas, whose fonts differ between machines), and the ids vega numbers from
 * process-wide counters (clip paths, gradients) are renumbered per document.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as vega from 'vega';
import type { LoggerInterface } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export interface Series {
  name: string;
  /** lo/hi: an optional error bar around y (e.g. its 95% confidence interval). */
  points: Array<{ x: number | string; y: number; lo?: number; hi?: number }>;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Plot area in px (axes, title and legend come on top); 560 x 320 unless given. */
  width?: number;
  height?: number;
  /** Line charts only: 'quantitative' when every x is a number, else 'ordinal'. Bar charts always take x as categories. */
  xType?: 'quantitative' | 'ordinal';
  /** Whether the y scale includes zero; true unless given (bars always start at zero). */
  yZero?: boolean;
  /** Line charts only: a logarithmic y scale (every y, lo and hi > 0; yZero does not apply), e.g. error rates. */
  yLog?: boolean;
  /** Line charts only: a dot at each value (true unless given); a time series of many samples reads better as bare lines. */
  points?: boolean;
}

interface Row {
  series: string;
  x: number | string;
  y: number;
  lo?: number;
  hi?: number;
}

const FONT = 'Helvetica, Arial, sans-serif';

// Plain, legible styling: white background, dark text, light grid.
const CONFIG = {
  background: 'white',
  padding: 8,
  font: FONT,
  view: { stroke: null },
  title: { fontSize: 15, fontWeight: 'bold', color: '#222', anchor: 'start', offset: 10 },
  axis: {
    labelFontSize: 12,
    titleFontSize: 13,
    titleFontWeight: 'normal',
    labelColor: '#333',
    titleColor: '#222',
    gridColor: '#e6e6e6',
    domainColor: '#888',
    tickColor: '#888',
  },
  legend: { labelFontSize: 12, titleFontSize: 12, symbolSize: 90, labelLimit: 240 },
  range: {
    // Tableau 10: distinguishable and widely used.
    category: ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'],
  },
} as const;

function rows(spec: ChartSpec): Row[] {
  if (spec.series.length === 0) throw new Error(`plot "${spec.title}": no series`);
  const names = new Set<string>();
  const out: Row[] = [];
  for (const s of spec.series) {
    if (names.has(s.name)) throw new Error(`plot "${spec.title}": series "${s.name}" given twice`);
    names.add(s.name);
    for (const p of s.points) {
      const bad = (v: number | undefined): boolean => v !== undefined && !Number.isFinite(v);
      if (!Number.isFinite(p.y) || bad(p.lo) || bad(p.hi) || (typeof p.x === 'number' && !Number.isFinite(p.x))) {
        throw new Error(`plot "${spec.title}": series "${s.name}" has a non-finite value at x=${String(p.x)}`);
      }
      if ((p.lo === undefined) !== (p.hi === undefined)) {
        throw new Error(`plot "${spec.title}": series "${s.name}" gives only one of lo/hi at x=${String(p.x)}`);
      }
      const row: Row = { series: s.name, x: p.x, y: p.y };
      if (p.lo !== undefined && p.hi !== undefined) {
        row.lo = Math.min(p.lo, p.hi);
        row.hi = Math.max(p.lo, p.hi);
      }
      out.push(row);
    }
  }
  return out;
}

/** x values in order of first appearance (the category order of ordinal axes). */
function xOrder(data: Row[]): Array<number | string> {
  return [...new Set(data.map((r) => r.x))];
}

function frame(spec: ChartSpec): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: spec.title,
    width: spec.width ?? 560,
    height: spec.height ?? 320,
    config: CONFIG,
  };
}

function colour(spec: ChartSpec): Record<string, unknown> {
  return {
    field: 'series',
    type: 'nominal',
    title: null,
    scale: { domain: spec.series.map((s) => s.name) },
    // Two columns once a row of labels would outgrow the plot's width.
    legend: { orient: 'top', direction: 'horizontal', columnPadding: 16, labelLimit: 0, columns: spec.series.length > 3 ? 2 : spec.series.length },
  };
}

/** Lines with a point at each value, one colour per series; error bars where lo/hi are given. */
export async function lineChart(spec: ChartSpec): Promise<string> {
  return render({ ...frame(spec), layer: lineLayers(spec) } as TopLevelSpec);
}

/**
 * Line charts stacked in one SVG under one title, each panel with its own
 * title, y axis and legend (e.g. one panel per TCP leg, over a shared time
 * axis). Each panel is a ChartSpec as lineChart takes it.
 */
export async function panelChart(title: string, panels: ChartSpec[]): Promise<string> {
  if (panels.length === 0) throw new Error(`plot "${title}": no panels`);
  return render({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    config: CONFIG,
    spacing: 24,
    resolve: { scale: { color: 'independent', y: 'independent' }, legend: { color: 'independent' } },
    vconcat: panels.map((p) => ({ title: { text: p.title, fontSize: 13 }, width: p.width ?? 560, height: p.height ?? 160, layer: lineLayers(p) })),
  } as unknown as TopLevelSpec);
}

function lineLayers(spec: ChartSpec): unknown[] {
  const data = rows(spec);
  const xType = spec.xType ?? (data.every((r) => typeof r.x === 'number') ? 'quantitative' : 'ordinal');
  if (xType === 'quantitative' && data.some((r) => typeof r.x !== 'number')) {
    throw new Error(`plot "${spec.title}": a quantitative x axis needs numeric x values`);
  }
  const x =
    xType === 'quantitative'
      ? {
          field: 'x',
          type: 'quantitative',
          title: spec.xLabel,
          scale: { zero: false, nice: false, padding: 12 },
          // Whole-number x (hops, nodes, seeds) gets whole-number ticks.
          axis: data.every((r) => Number.isInteger(r.x)) ? { tickMinStep: 1 } : {},
        }
      : { field: 'x', type: 'ordinal', title: spec.xLabel, sort: xOrder(data), axis: { labelAngle: 0 } };
  if (spec.yLog === true && data.some((r) => !(r.y > 0) || (r.lo !== undefined && !(r.lo > 0)))) {
    throw new Error(`plot "${spec.title}": a logarithmic y axis needs every value > 0`);
  }
  const y = { field: 'y', type: 'quantitative', title: spec.yLabel, scale: spec.yLog === true ? { type: 'log' } : { zero: spec.yZero ?? true } };
  const errors = data.filter((r) => r.lo !== undefined);
  const layer: unknown[] = [
    {
      data: { values: data },
      mark: spec.points === false ? { type: 'line', strokeWidth: 1.25 } : { type: 'line', strokeWidth: 2, point: { filled: true, size: 50 } },
      encoding: { x, y, color: colour(spec) },
    },
  ];
  if (errors.length > 0) {
    layer.push({
      name: 'errorbar',
      data: { values: errors },
      mark: { type: 'errorbar', ticks: { size: 8 }, thickness: 1.5 },
      encoding: {
        x,
        y: { field: 'lo', type: 'quantitative', title: spec.yLabel },
        y2: { field: 'hi' },
        color: colour(spec),
      },
    });
  }
  return layer;
}

/** Grouped bars: one group per x category, one bar per series within it; error bars where lo/hi are given. */
export async function barChart(spec: ChartSpec): Promise<string> {
  const data = rows(spec);
  const names = spec.series.map((s) => s.name);
  const x = { field: 'x', type: 'ordinal', title: spec.xLabel, sort: xOrder(data), axis: { labelAngle: 0 }, scale: { paddingInner: 0.2 } };
  const xOffset = { field: 'series', type: 'nominal', sort: names, scale: { domain: names, paddingInner: 0.05 } };
  const y = { field: 'y', type: 'quantitative', title: spec.yLabel, scale: { zero: true } };
  const errors = data.filter((r) => r.lo !== undefined);
  const layer: unknown[] = [
    {
      data: { values: data },
      mark: { type: 'bar' },
      encoding: { x, xOffset, y, color: colour(spec) },
    },
  ];
  if (errors.length > 0) {
    layer.push({
      name: 'errorbar',
      data: { values: errors },
      mark: { type: 'errorbar', ticks: { size: 8 }, thickness: 1.5, color: '#222' },
      encoding: {
        x,
        xOffset,
        y: { field: 'lo', type: 'quantitative', title: spec.yLabel },
        y2: { field: 'hi' },
      },
    });
  }
  return render({ ...frame(spec), layer } as TopLevelSpec);
}

/** Writes an SVG, creating its directory as needed. */
export async function writeChart(path: string, svg: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, svg.endsWith('\n') ? svg : `${svg}\n`, 'utf8');
}

async function render(vl: TopLevelSpec): Promise<string> {
  // Size text by vega's estimate even if the optional `canvas` package is
  // installed: canvas metrics depend on the machine's fonts.
  (vega as unknown as { textMetrics: { canvas(use: boolean): void } }).textMetrics.canvas(false);
  // A vega-lite warning means the chart is not what was asked for: fail instead.
  const warnings: string[] = [];
  // level() is a getter and a setter in one (the setter returns the logger); the level stays Warn.
  const logger: LoggerInterface = {
    level: ((v?: number): number | LoggerInterface => (v === undefined ? vega.Warn : logger)) as LoggerInterface['level'],
    error(...args: unknown[]) {
      throw new Error(`vega-lite: ${args.join(' ')}`);
    },
    warn(...args: unknown[]) {
      warnings.push(args.join(' '));
      return this;
    },
    info() {
      return this;
    },
    debug() {
      return this;
    },
  };
  const { spec } = compile(vl, { logger });
  if (warnings.length > 0) throw new Error(`vega-lite: ${warnings.join('; ')}`);
  const view = new vega.View(vega.parse(spec), { renderer: 'none', logLevel: vega.Warn });
  try {
    return renumberIds(await view.toSVG());
  } finally {
    view.finalize();
  }
}

/**
 * vega names clip paths and gradients from counters shared by the whole process
 * (clip1, clip2, ... across renders), so the same chart rendered twice would
 * differ. Renumber them in order of appearance within this document, where they
 * are defined (id="...") and referenced (url(#...)); text is left alone.
 */
function renumberIds(svg: string): string {
  const map = new Map<string, string>();
  const ids = /\b(id="|url\(#)((?:p_)?gradient_\d+|clip\d+)\b/g;
  return svg.replace(ids, (_, lead: string, id: string) => {
    let to = map.get(id);
    if (to === undefined) map.set(id, (to = `${id.replace(/\d+$/, '')}${map.size + 1}`));
    return `${lead}${to}`;
  });
}
