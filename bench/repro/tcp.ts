/**
 * The seeds' TCP experiments (seeds/000 section 5.1, Figs. 6a-6c and 7, and
 * Table 1), reproduced on config/scenarios/urbanx-chain.json: one TCP flow
 * from router 0 to router 4 over the 4-hop chain, 11 PNs on the 11 channels.
 *
 *   node --import tsx bench/repro/tcp.ts [--only 6a,6b,6c,7,table1] [--seeds 5] [--duration 100]
 *                                        [--set PATH=VALUE]... [--plots DIR | --update-docs] [--json]
 *
 * Prints one Markdown table per experiment (mean and 95% confidence
 * half-width over the seeds) and writes one SVG plot per figure into --plots
 * (default out/figures; '' writes none; --update-docs: docs/figures). --set passes overrides to every run,
 * as `cogmesh sim --set`. docs/reproduction.md records a run of this script
 * and compares it with the paper.
 */
import type { SimResult, Spread } from '../../src/sim/report.js';
import type { ScenarioOverrides } from '../../src/config/scenario.js';
import { CC_NAMES } from '../../src/tcp/cc/types.js';
import { cell, goodput, kbps, repro, scenarioFile, toPoint } from './common.js';
import { barChart, lineChart, type Series } from './plot.js';

const EXPERIMENTS = ['6a', '6b', '6c', '7', 'table1'] as const;
type Experiment = (typeof EXPERIMENTS)[number];

/** The points each experiment runs (its grid, or its variants by PN load and cognition, or its hops with and without F-RTO), for the progress display. */
const POINTS: Record<Experiment, number> = { '6a': 4 * 4, '6b': 6 * 3, '6c': 6 * 3, '7': 2 * CC_NAMES.length * 2, table1: 4 * 2 };

const ctx = await repro('tcp.ts', EXPERIMENTS, POINTS);
const only: string[] = ctx.only;
const scenarioPath = scenarioFile('urbanx-chain.json');
const plot = ctx.plot;

/** One point: the 4-hop chain with TCP (Reno unless told) and these overrides, over the seeds. */
const point = (set: string[], o: Partial<ScenarioOverrides> = {}): Promise<SimResult> => ctx.point(scenarioPath, set, { hops: 4, tcp: 'reno', ...o });

const pnPattern = (idleMs: number, busyMs: number): string[] => [`pn.sources.0.pattern.idleMs=${idleMs}`, `pn.sources.0.pattern.busyMs=${busyMs}`];
/**
 * Sensing for `sensingMs` after every `transmissionMs` of transmission (the
 * period is their sum). A 10 ms round cannot visit all 11 channels with a
 * 1 ms retune each: it visits 3 a round, in turn, as the UDP reproduction does.
 */
const sensing = (sensingMs: number, transmissionMs: number): string[] => [
  `node.sensing.durationMs=${sensingMs}`,
  `node.sensing.periodMs=${sensingMs + transmissionMs}`,
  ...(sensingMs < 12 ? ['node.sensing.channelsPerRound=3'] : []),
];

interface Table {
  experiment: Experiment;
  title: string;
  markdown: string;
  data: unknown;
}
const tables: Table[] = [];

/** A grid of goodput over (x, series): the shape of Figs. 6a-6c. */
async function grid(
  experiment: Experiment,
  title: string,
  xLabel: string,
  xUnit: string,
  seriesLabel: string,
  xs: number[],
  series: number[],
  set: (x: number, s: number) => string[],
  fmt: (v: number) => string,
): Promise<void> {
  const rows: Array<{ series: number; points: Array<{ x: number; r: SimResult }> }> = [];
  for (const s of series) {
    const points: Array<{ x: number; r: SimResult }> = [];
    for (const x of xs) points.push({ x, r: await point(set(x, s)) });
    rows.push({ series: s, points });
  }
  const head = `| ${seriesLabel} \\ ${xLabel} | ${xs.map(fmt).join(' | ')} |`;
  const md = [
    head,
    `| ---: | ${xs.map(() => '---:').join(' | ')} |`,
    ...rows.map((row) => `| ${fmt(row.series)} | ${row.points.map((p) => kbps(goodput(p.r))).join(' | ')} |`),
  ].join('\n');
  tables.push({
    experiment,
    title,
    markdown: `${title}: goodput (kbps)\n\n${md}`,
    data: rows.map((row) => ({
      [seriesLabel]: row.series,
      points: row.points.map((p) => ({ [xLabel]: p.x, goodputMbps: goodput(p.r), timeouts: p.r.summary[0]?.timeouts ?? null })),
    })),
  });
  const chartSeries: Series[] = rows.map((row) => ({ name: `${seriesLabel} ${fmt(row.series)}`, points: row.points.map((p) => toPoint(p.x, goodput(p.r))) }));
  await plot(
    `tcp-fig${experiment}.svg`,
    lineChart({ title: `${title} (TCP Reno, 4 hops)`, xLabel: `${xLabel} (${xUnit})`, yLabel: 'goodput (kbps)', series: chartSeries }),
  );
}

const s = (ms: number): string => `${ms / 1000} s`;
const msFmt = (ms: number): string => `${ms} ms`;

if (only.includes('6a')) {
  await grid(
    '6a',
    'Fig. 6a, PN idle and busy durations',
    'T_busy',
    'ms',
    'T_idle',
    [250, 500, 1000, 2000],
    [500, 1000, 2000, 4000],
    (busy, idle) => pnPattern(idle, busy),
    s,
  );
}
if (only.includes('6b')) {
  await grid(
    '6b',
    'Fig. 6b, sensing and transmission durations',
    'sensing',
    'ms',
    'transmission',
    [10, 30, 70, 100, 200, 300],
    [500, 1000, 2000],
    (sense, tx) => sensing(sense, tx),
    msFmt,
  );
}
if (only.includes('6c')) {
  await grid(
    '6c',
    'Fig. 6c, switching interval and transmission duration',
    'switching interval',
    'ms',
    'transmission',
    [10, 20, 40, 50, 100, 200],
    [500, 1000, 2000],
    (sw, tx) => [`node.switching.intervalMs=${sw}`, ...sensing(70, tx)],
    msFmt,
  );
}

/**
 * Fig. 7's second PN setting: uneven load, as in a city where some channels
 * are crowded. Channels 1-6 are busy half the time (T_idle = T_busy = 1 s),
 * 7-11 about 6% (T_idle 4 s, T_busy 0.25 s); the fixed channel (6) is a crowded one.
 */
const UNEVEN_PN =
  'pn.sources=' +
  JSON.stringify([
    { channels: [1, 2, 3, 4, 5, 6], powerDbm: -50, pattern: { kind: 'onoff', idleMs: 1000, busyMs: 1000, distribution: 'exponential' } },
    { channels: [7, 8, 9, 10, 11], powerDbm: -50, pattern: { kind: 'onoff', idleMs: 4000, busyMs: 250, distribution: 'exponential' } },
  ]);

if (only.includes('7')) {
  const settings = [
    { key: 'even', label: 'same load on every channel', set: [] as string[] },
    { key: 'uneven', label: 'uneven load (1-6 crowded)', set: [UNEVEN_PN] },
  ];
  const rows: Array<{ variant: string; setting: (typeof settings)[number]; on: SimResult; off: SimResult }> = [];
  for (const setting of settings) {
    for (const v of CC_NAMES) {
      rows.push({ variant: v, setting, on: await point(setting.set, { tcp: v }), off: await point(setting.set, { tcp: v, cognitive: false }) });
    }
  }
  const f = (r: SimResult) => r.summary[0];
  const md = [
    '| PN load | variant | Urban-X goodput (kbps) | fixed channel goodput (kbps) | Urban-X cwnd (segments) | fixed channel cwnd (segments) | Urban-X retransmitted (%) | fixed channel retransmitted (%) | Urban-X timeouts | fixed channel timeouts |',
    '| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.setting.label} | ${r.variant} | ${kbps(goodput(r.on))} | ${kbps(goodput(r.off))} | ${cell(f(r.on)?.cwndMeanSegments, 1, 1)} | ${cell(f(r.off)?.cwndMeanSegments, 1, 1)} | ${cell(f(r.on)?.retransmitRate, 100, 1)} | ${cell(f(r.off)?.retransmitRate, 100, 1)} | ${cell(f(r.on)?.timeouts, 1, 1)} | ${cell(f(r.off)?.timeouts, 1, 1)} |`,
    ),
  ].join('\n');
  tables.push({
    experiment: '7',
    title: 'Fig. 7, TCP variants with and without cognitive channel assignment',
    markdown: `Fig. 7, TCP variants with cognitive channel assignment (Urban-X) and with every router on one fixed channel (--cognitive off, channel 6), PNs active in both\n\n${md}`,
    data: rows.map((r) => ({ pnLoad: r.setting.key, variant: r.variant, urbanx: f(r.on), fixed: f(r.off) })),
  });
  const bars = (pick: (r: SimResult) => Spread | null, k: number): Series[] =>
    settings.flatMap((setting) => {
      const mine = rows.filter((r) => r.setting === setting);
      return [
        { name: `Urban-X, ${setting.key} PN load`, points: mine.map((r) => toPoint(r.variant, pick(r.on), k)) },
        { name: `fixed channel, ${setting.key} PN load`, points: mine.map((r) => toPoint(r.variant, pick(r.off), k)) },
      ];
    });
  await plot(
    'tcp-fig7-goodput.svg',
    barChart({ title: 'Fig. 7a, goodput of TCP variants (4 hops)', xLabel: 'TCP variant', yLabel: 'goodput (kbps)', series: bars(goodput, 1000) }),
  );
  await plot(
    'tcp-fig7-cwnd.svg',
    barChart({
      title: 'Fig. 7d, mean congestion window (4 hops)',
      xLabel: 'TCP variant',
      yLabel: 'cwnd (segments)',
      series: bars((r) => f(r)?.cwndMeanSegments ?? null, 1),
    }),
  );
}

if (only.includes('table1')) {
  const setting = ['node.switching.intervalMs=40', ...sensing(10, 1000)];
  // The paper's Reno, then the same with F-RTO (RFC 5682) at the source: the timeouts these delays cause are mostly spurious.
  const rows: Array<{ hops: number; r: SimResult; frto: SimResult }> = [];
  for (const hops of [1, 2, 3, 4]) rows.push({ hops, r: await point(setting, { hops }), frto: await point([...setting, 'flows.0.tcp.frto=true'], { hops }) });
  const f = (r: SimResult) => r.summary[0];
  const md = [
    '| hops | goodput (kbps) | drop rate (%) | retransmitted (%) | RTT (ms) | timeouts | cwnd (segments) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ hops, r }) =>
        `| ${hops} | ${kbps(goodput(r))} | ${cell(f(r)?.dropRate, 100, 2)} | ${cell(f(r)?.retransmitRate, 100, 2)} | ${cell(f(r)?.rttMeanMs, 1, 0)} | ${cell(f(r)?.timeouts, 1, 1)} | ${cell(f(r)?.cwndMeanSegments, 1, 1)} |`,
    ),
  ].join('\n');
  const ratio = (a: Spread | null | undefined, b: Spread | null | undefined): string => (a && b && b.mean > 0 ? (a.mean / b.mean).toFixed(2) : 'n/a');
  const mdFrto = [
    '| hops | goodput (kbps) | against Reno | retransmitted (%) | timeouts | of them spurious | against Reno |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ hops, r, frto }) =>
        `| ${hops} | ${kbps(goodput(frto))} | ${ratio(goodput(frto), goodput(r))} | ${cell(f(frto)?.retransmitRate, 100, 2)} | ${cell(f(frto)?.timeouts, 1, 1)} | ${cell(f(frto)?.spuriousTimeouts, 1, 1)} | ${ratio(f(frto)?.timeouts, f(r)?.timeouts)} |`,
    ),
  ].join('\n');
  tables.push({
    experiment: 'table1',
    title: 'Table 1, TCP Reno over 1-4 hops',
    markdown:
      `Table 1, TCP Reno over 1-4 hops (switching interval 40 ms, sensing 10 ms, transmission 1 s)\n\n${md}\n\n` +
      `Table 1 with F-RTO (RFC 5682) at the source, against the Reno above (timeouts: every RTO expiry; spurious: those F-RTO judged so and answered without go-back-N)\n\n${mdFrto}`,
    data: rows.map(({ hops, r, frto }) => ({ hops, ...f(r), frto: f(frto) })),
  });
  await plot(
    'tcp-table1.svg',
    lineChart({
      title: 'Table 1, TCP Reno goodput over hops',
      xLabel: 'hops',
      yLabel: 'goodput (kbps)',
      series: [
        { name: 'TCP Reno', points: rows.map(({ hops, r }) => toPoint(hops, goodput(r))) },
        { name: 'TCP Reno with F-RTO', points: rows.map(({ hops, frto }) => toPoint(hops, goodput(frto))) },
      ],
    }),
  );
}

ctx.finish();
if (ctx.json)
  process.stdout.write(
    `${JSON.stringify(
      tables.map((t) => ({ experiment: t.experiment, title: t.title, data: t.data })),
      null,
      2,
    )}\n`,
  );
else process.stdout.write(`${tables.map((t) => t.markdown).join('\n\n')}\n\n${ctx.footer()}\n`);
