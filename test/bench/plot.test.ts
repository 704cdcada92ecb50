import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { barChart, lineChart, panelChart, writeChart, type ChartSpec } from '../../bench/repro/plot.js';

const hops = [1, 2, 3, 4];

const lineSpec: ChartSpec = {
  title: 'UDP throughput over a chain',
  xLabel: 'hop count',
  yLabel: 'throughput (Mbps)',
  series: [
    { name: 'simulated', points: hops.map((h) => ({ x: h, y: 5.2 / h, lo: 5.2 / h - 0.25, hi: 5.2 / h + 0.25 })) },
    { name: 'Urban-X paper', points: hops.map((h) => ({ x: h, y: 4.6 / h })) },
  ],
};

const barSpec: ChartSpec = {
  title: 'Delivery ratio & loss <by hops>',
  xLabel: 'path',
  yLabel: 'delivery (%)',
  series: [
    { name: 'AODV-like', points: hops.map((h) => ({ x: `${h} hops`, y: 100 - 9 * h, lo: 97 - 9 * h, hi: 103 - 9 * h })) },
    { name: 'multipath', points: hops.map((h) => ({ x: `${h} hops`, y: 100 - 6 * h })) },
    { name: 'single channel', points: hops.map((h) => ({ x: `${h} hops`, y: 100 - 12 * h })) },
  ],
};

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The texts of the <text> elements, unescaped one level (what a reader sees). */
const texts = (svg: string): string[] => [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);

function assertSvg(svg: string, spec: ChartSpec): void {
  assert.ok(svg.startsWith('<svg'), `output starts with <svg, not ${JSON.stringify(svg.slice(0, 40))}`);
  assert.ok(svg.trimEnd().endsWith('</svg>'), 'output ends with </svg>');
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, 'root element carries the SVG namespace');
  assert.match(svg, /<rect width="\d+" height="\d+" fill="white"\/>/, 'white background');
  // Well-formed enough: every opened element is closed, in order.
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
    const [, close, name, selfClose] = m;
    if (selfClose) continue;
    if (close) assert.equal(stack.pop(), name, `</${name}> closes the innermost open element`);
    else stack.push(name!);
  }
  assert.deepEqual(stack, [], 'every element is closed');
  const shown = texts(svg);
  for (const label of [spec.title, spec.xLabel, spec.yLabel, ...spec.series.map((s) => s.name)]) {
    assert.ok(shown.includes(escapeXml(label)), `the SVG shows ${JSON.stringify(label)} as a text element`);
  }
}

/** The vertical error-bar rules (vega-lite's errorbar is a rule plus two ticks), as path strings. */
const errorBarRules = (svg: string): string[] =>
  [...svg.matchAll(/<g class="mark-rule role-mark [^"]*errorbar[^"]*"[^>]*>(.*?)<\/g>/g)].flatMap((m) => [...m[1]!.matchAll(/<line [^>]*>/g)].map((l) => l[0]));

test('lineChart renders an SVG with the title, axis labels, series names and error bars', async () => {
  const svg = await lineChart(lineSpec);
  assertSvg(svg, lineSpec);
  assert.match(svg, /class="mark-line role-mark/, 'a line mark');
  assert.match(svg, /class="mark-symbol role-mark/, 'point marks on the lines');
  // Error bars for the four points of the series that has lo/hi, none for the other.
  assert.equal(errorBarRules(svg).length, 4, 'one error bar per point that gives lo/hi');
  // Two series, two colours on the lines.
  const strokes = new Set([...svg.matchAll(/<path [^>]*stroke="(#[0-9a-f]{6})"[^>]*stroke-width="2"/g)].map((m) => m[1]));
  assert.equal(strokes.size, 2, `one line colour per series (got ${[...strokes].join(', ')})`);
});

test('lineChart draws no error bars when no point gives lo/hi', async () => {
  const svg = await lineChart({ ...lineSpec, series: [lineSpec.series[1]!] });
  assertSvg(svg, { ...lineSpec, series: [lineSpec.series[1]!] });
  assert.ok(!svg.includes('errorbar'), 'no error-bar marks');
});

test('barChart renders grouped bars with the title, axis labels, series names and error bars', async () => {
  const svg = await barChart(barSpec);
  assertSvg(svg, barSpec);
  const bars = svg.match(/<g class="mark-rect role-mark (?!errorbar)[^"]*"[^>]*>(.*?)<\/g>/)?.[1] ?? '';
  assert.equal(bars.match(/<path /g)?.length, 12, '4 categories x 3 series = 12 bars');
  assert.equal(errorBarRules(svg).length, 4, 'one error bar per bar that gives lo/hi');
  for (const h of hops) assert.ok(texts(svg).includes(`${h} hops`), `category "${h} hops" labels the x axis`);
});

test('renders are deterministic: the same spec gives byte-identical SVG', async () => {
  const [a, b] = [await lineChart(lineSpec), await lineChart(lineSpec)];
  assert.ok(a === b, 'two line-chart renders are byte-identical');
  const [c, d] = await Promise.all([barChart(barSpec), barChart(barSpec)]);
  assert.ok(c === d, 'two concurrent bar-chart renders are byte-identical');
  assert.ok(a !== c, 'different specs give different SVG');
});

test('panelChart stacks bare-line panels under one title, each with its own title and legend, deterministically', async () => {
  const series = (k: number): ChartSpec['series'] => [
    { name: `cwnd ${k}`, points: Array.from({ length: 200 }, (_, i) => ({ x: i / 10, y: (i * k) % 17 })) },
    { name: `in flight ${k}`, points: Array.from({ length: 200 }, (_, i) => ({ x: i / 10, y: (i * k) % 11 })) },
  ];
  const panels: ChartSpec[] = [1, 2].map((k) => ({ title: `leg ${k}`, xLabel: 'time (s)', yLabel: 'KB', points: false, series: series(k) }));
  const svg = await panelChart('Windows per leg', panels);
  const shown = texts(svg);
  for (const label of ['Windows per leg', 'leg 1', 'leg 2', 'cwnd 1', 'in flight 2', 'time (s)', 'KB']) assert.ok(shown.includes(label), `shows ${label}`);
  assert.doesNotMatch(svg, /class="mark-symbol role-mark/, 'no dots on bare lines');
  assert.equal(await panelChart('Windows per leg', panels), svg, 'byte-identical again');
});

test('charts reject specs they cannot draw faithfully', async () => {
  await assert.rejects(lineChart({ ...lineSpec, series: [] }), /no series/);
  await assert.rejects(lineChart({ ...lineSpec, series: [lineSpec.series[0]!, lineSpec.series[0]!] }), /given twice/);
  await assert.rejects(lineChart({ ...lineSpec, series: [{ name: 's', points: [{ x: 1, y: Number.NaN }] }] }), /non-finite/);
  await assert.rejects(lineChart({ ...lineSpec, series: [{ name: 's', points: [{ x: 1, y: 1, lo: 0 }] }] }), /lo\/hi/);
  await assert.rejects(lineChart({ ...lineSpec, xType: 'quantitative', series: [{ name: 's', points: [{ x: 'a', y: 1 }] }] }), /numeric x/);
});

test('writeChart creates the directory and writes the SVG', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cogmesh-plot-'));
  try {
    const svg = await lineChart(lineSpec);
    const path = join(dir, 'a', 'b', 'udp.svg');
    await writeChart(path, svg);
    const written = await readFile(path, 'utf8');
    assert.ok(written === `${svg}\n`, 'the file holds the SVG and a final newline');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
