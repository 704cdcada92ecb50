/**
 * seeds/002's QoS experiment (Tables 5-8, Figs. 25-36: per-class loss, delay
 * and throughput with and without background flows, with and without the
 * QoS queues), reproduced on config/scenarios/qos-relay.json: three client
 * flows tagged high (flow label 0x00100), low (0x00200) and best effort (0)
 * cross a relay whose channel queue toward the sink four background flows
 * congest.
 *
 *   node --import tsx bench/repro/qos.ts [--only table,sweep] [--seeds 5] [--duration 100]
 *                                        [--set PATH=VALUE]... [--plots DIR | --update-docs] [--json]
 *
 * `table`: the paper's four environments (no background / 4 background
 * flows, without / with QoS). `sweep`: client loss against the number of
 * background flows, 0 to 4, without and with QoS (plot qos-loss.svg).
 * Without QoS every router has one best-effort queue (node.qos.classes=[]);
 * with it, the default classes (high 400 kbps, low 200 kbps guaranteed).
 * Prints Markdown tables (mean and 95% confidence half-width over the seeds).
 */
import { readFileSync } from 'node:fs';
import type { SimResult, Spread } from '../../src/sim/report.js';
import { cell, repro, scenarioFile, toPoint } from './common.js';
import { lineChart, type Series } from './plot.js';

const EXPERIMENTS = ['table', 'sweep'] as const;
type Experiment = (typeof EXPERIMENTS)[number];

/** The points each experiment runs (four environments; 0-4 background flows without and with QoS), for the progress display. */
const POINTS: Record<Experiment, number> = { table: 4, sweep: 5 * 2 };

const ctx = await repro('qos.ts', EXPERIMENTS, POINTS);
const scenarioPath = scenarioFile('qos-relay.json');
const allFlows = (JSON.parse(readFileSync(scenarioPath, 'utf8')) as { flows: Array<{ src: number; label?: number }> }).flows;
/** The client flows (from router 0, one per class) come first; the background (from the relay) after. */
const clients = allFlows.filter((f) => f.src === 0);
const background = allFlows.filter((f) => f.src !== 0);
const CLASSES = ['high', 'low', 'best effort'] as const;

/** The scenario with `bg` background flows, with or without the QoS classes. */
function point(bg: number, qos: boolean): Promise<SimResult> {
  const set = [`flows=${JSON.stringify([...clients, ...background.slice(0, bg)])}`, ...(qos ? [] : ['node.qos.classes=[]'])];
  return ctx.point(scenarioPath, set);
}

/** Loss (1 - delivery ratio) as a spread of its own. */
const loss = (s: Spread | null | undefined): Spread | null => (s ? { mean: 1 - s.mean, std: s.std, min: 1 - s.max, max: 1 - s.min, ci95: s.ci95 } : null);
const flow = (r: SimResult, i: number) => r.summary[i];

interface Table {
  experiment: Experiment;
  markdown: string;
  data: unknown;
}
const tables: Table[] = [];

if (ctx.only.includes('table')) {
  const envs = [
    { name: 'no background, without QoS', bg: 0, qos: false },
    { name: 'no background, with QoS', bg: 0, qos: true },
    { name: '4 background flows, without QoS', bg: 4, qos: false },
    { name: '4 background flows, with QoS', bg: 4, qos: true },
  ];
  const rows: Array<{ env: string; r: SimResult; bg: number }> = [];
  for (const e of envs) rows.push({ env: e.name, r: await point(e.bg, e.qos), bg: e.bg });
  const bgLoss = (r: SimResult, bg: number): string => {
    if (bg === 0) return '-';
    const l = Array.from({ length: bg }, (_, k) => loss(flow(r, clients.length + k)?.deliveryRatio)?.mean ?? NaN);
    return (100 * (l.reduce((a, b) => a + b, 0) / l.length)).toFixed(1);
  };
  const md = [
    '| environment | class | loss (%) | throughput (kbps) | delay (ms) |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows.flatMap(({ env, r, bg }) => [
      ...CLASSES.map(
        (c, i) =>
          `| ${env} | ${c} | ${cell(loss(flow(r, i)?.deliveryRatio), 100, 1)} | ${cell(flow(r, i)?.throughputMbps, 1000, 0)} | ${cell(flow(r, i)?.delayMeanMs, 1, 0)} |`,
      ),
      `| ${env} | background (mean of ${bg}) | ${bgLoss(r, bg)} | | |`,
    ]),
  ].join('\n');
  tables.push({
    experiment: 'table',
    markdown: `Per-class loss, throughput and delay of the three 150 kbps client flows (seeds/002 Tables 5-8)\n\n${md}`,
    data: rows.map(({ env, r }) => ({ environment: env, flows: r.summary })),
  });
}

if (ctx.only.includes('sweep')) {
  const counts = [0, 1, 2, 3, 4];
  const series: Series[] = [];
  const rows: string[] = [];
  const data: unknown[] = [];
  for (const qos of [false, true]) {
    const results: SimResult[] = [];
    for (const bg of counts) results.push(await point(bg, qos));
    CLASSES.forEach((c, i) =>
      series.push({ name: `${c}, ${qos ? 'with' : 'without'} QoS`, points: results.map((r, k) => toPoint(counts[k]!, loss(flow(r, i)?.deliveryRatio), 100)) }),
    );
    results.forEach((r, k) => {
      rows.push(`| ${qos ? 'with' : 'without'} | ${counts[k]} | ${CLASSES.map((_, i) => cell(loss(flow(r, i)?.deliveryRatio), 100, 1)).join(' | ')} |`);
      data.push({ qos, background: counts[k], summary: r.summary });
    });
  }
  tables.push({
    experiment: 'sweep',
    markdown: `Client loss (%) against the number of 300 kbps background flows at the relay\n\n| QoS | background flows | high | low | best effort |\n| --- | ---: | ---: | ---: | ---: |\n${rows.join('\n')}`,
    data,
  });
  await ctx.plot(
    'qos-loss.svg',
    lineChart({
      title: 'seeds/002 on the mesh: client loss per class',
      xLabel: 'background flows (300 kbps each)',
      yLabel: 'loss (%)',
      xType: 'ordinal',
      series,
    }),
  );
}

ctx.finish();
if (ctx.json)
  process.stdout.write(
    `${JSON.stringify(
      tables.map((t) => ({ experiment: t.experiment, data: t.data })),
      null,
      2,
    )}\n`,
  );
else process.stdout.write(`${tables.map((t) => t.markdown).join('\n\n')}\n\n${ctx.footer()}\n`);
