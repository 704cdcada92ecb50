/**
 * The seeds' TCP-ACC results (seeds/000 section 5.2: Table 2, TCP-ACC on
 * every second node, Fig. 8's trends, Fig. 9 and Fig. 10; seeds/004's table
 * under random loss and reordering), reproduced on
 * config/scenarios/urbanx-chain.json and urbanx-dumbbell.json; and seeds/001's
 * own setting (ES-TCP and AS-TCP at a split host between a far host behind a
 * WAN and a mobile host) on config/scenarios/wan-split.json (`wan`).
 *
 *   node --import tsx bench/repro/acc.ts [--only table2,every2,8,9,10,loss,trace,wan] [--seeds 5] [--duration 100]
 *                                        [--mode split|e2e|as] [--set PATH=VALUE]... [--plots DIR | --update-docs] [--json]
 *
 * Prints one Markdown table per experiment (mean and 95% confidence
 * half-width over the seeds) and writes SVG plots into --plots (default
 * out/figures; '' writes none; --update-docs: docs/figures). docs/reproduction.md records a run.
 */
import { spread, type SimResult, type Spread } from '../../src/sim/report.js';
import type { ScenarioOverrides } from '../../src/config/scenario.js';
import { CC_NAMES, type CcName } from '../../src/tcp/cc/types.js';
import { cell, goodput, kbps, repro, scenarioFile, toPoint } from './common.js';
import { barChart, lineChart, panelChart, type ChartSpec, type Series } from './plot.js';
import { RunTrace, type TraceResult, type TraceSample } from '../../src/sim/trace.js';

const EXPERIMENTS = ['table2', 'every2', '8', '9', '10', 'loss', 'trace', 'wan'] as const;
type Experiment = (typeof EXPERIMENTS)[number];

/** The points each experiment runs (its hops, placements, grids, variants, conditions or traced runs), for the progress display. */
const POINTS: Record<Experiment, number> = {
  table2: 4 * 2,
  every2: 3,
  '8': 4 * 3 + 4 * 3 + 5 * 3,
  '9': CC_NAMES.length + 1,
  '10': CC_NAMES.length + 1,
  loss: 5 * 3,
  trace: 2,
  wan: 2 * 2 * 4,
};

const ctx = await repro('acc.ts', EXPERIMENTS, POINTS, { mode: 'split' });
const only: string[] = ctx.only;
const mode = ctx.flags.mode;
if (mode !== 'split' && mode !== 'e2e' && mode !== 'as') {
  process.stderr.write(`bench/repro/acc.ts: --mode: "${mode}" is not split, e2e or as\n`);
  process.exit(2);
}
const plot = ctx.plot;
const chainPath = scenarioFile('urbanx-chain.json');
const dumbbellPath = scenarioFile('urbanx-dumbbell.json');

/** A point of the chain (4 hops unless told) or the dumbbell, TCP Reno and the accelerators' mode unless told. */
const point = (path: string, set: string[], o: Partial<ScenarioOverrides> = {}): Promise<SimResult> =>
  ctx.point(path, set, { hops: path === chainPath ? 4 : undefined, tcp: 'reno', accMode: mode, ...o });

const PN_2_2 = ['pn.sources.0.pattern.idleMs=2000', 'pn.sources.0.pattern.busyMs=2000'];

/** The RTT of the leg that leaves router `node` (the source's own for node 0, else its accelerator's downstream leg), over the seeds. */
function legRtt(r: SimResult, node: number): Spread | null {
  if (node === 0) return r.summary[0]?.rttMeanMs ?? null;
  return spread(r.runs.map((run) => run.nodes[node]?.vnfs.find((v) => v.type === 'tcp-acc')?.counters.downRttMeanMs ?? null));
}

/** Jain's fairness index of the flows' goodputs, per run, over the seeds. */
function jain(r: SimResult): Spread | null {
  return spread(
    r.runs.map((run) => {
      const x = run.flows.map((f) => f.goodputMbps);
      const sum = x.reduce((a, b) => a + b, 0);
      const sq = x.reduce((a, b) => a + b * b, 0);
      return sq > 0 ? (sum * sum) / (x.length * sq) : null;
    }),
  );
}

interface Table {
  experiment: Experiment;
  markdown: string;
  data: unknown;
}
const tables: Table[] = [];

if (only.includes('table2')) {
  const rows: Array<{ hops: number; acc: SimResult; plain: SimResult }> = [];
  for (const hops of [1, 2, 3, 4]) rows.push({ hops, acc: await point(chainPath, [], { hops, acc: 'every' }), plain: await point(chainPath, [], { hops }) });
  const md = [
    '| hops | TCP-ACC goodput (kbps) | Reno goodput (kbps) | RTT node 0 (ms) | RTT node 1 (ms) | RTT node 2 (ms) | RTT node 3 (ms) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ hops, acc, plain }) =>
        `| ${hops} | ${kbps(goodput(acc))} | ${kbps(goodput(plain))} | ${[0, 1, 2, 3].map((n) => (n < hops ? cell(legRtt(acc, n), 1, 0) : '')).join(' | ')} |`,
    ),
  ].join('\n');
  tables.push({
    experiment: 'table2',
    markdown: `Table 2, TCP-ACC (${mode}) on every router over 1-4 hops, with each leg's RTT (node i to the next accelerator or the sink)\n\n${md}`,
    data: rows.map(({ hops, acc, plain }) => ({
      hops,
      acc: goodput(acc),
      reno: goodput(plain),
      legRttMs: [0, 1, 2, 3].slice(0, hops).map((n) => legRtt(acc, n)),
    })),
  });
  await plot(
    `acc-table2.svg`,
    lineChart({
      title: `Table 2, TCP-ACC (${mode}) against end-to-end Reno over hops`,
      xLabel: 'hops',
      yLabel: 'goodput (kbps)',
      series: [
        { name: 'TCP-ACC on every router', points: rows.map(({ hops, acc }) => toPoint(hops, goodput(acc))) },
        { name: 'TCP Reno end to end', points: rows.map(({ hops, plain }) => toPoint(hops, goodput(plain))) },
      ],
    }),
  );
}

if (only.includes('every2')) {
  const every = await point(chainPath, [], { acc: 'every' });
  const every2 = await point(chainPath, [], { acc: 'every-2' });
  const none = await point(chainPath, [], {});
  const md = [
    '| placement | goodput at node 4 (kbps) |',
    '| :--- | ---: |',
    `| every router (1, 2, 3) | ${kbps(goodput(every))} |`,
    `| every second router (2) | ${kbps(goodput(every2))} |`,
    `| none (end-to-end Reno) | ${kbps(goodput(none))} |`,
  ].join('\n');
  tables.push({
    experiment: 'every2',
    markdown: `TCP-ACC (${mode}) on every router and on every second router, 4 hops\n\n${md}`,
    data: { every: goodput(every), every2: goodput(every2), none: goodput(none) },
  });
}

if (only.includes('8')) {
  const grids = [
    {
      key: '8a',
      title: 'Fig. 8a, PN idle and busy durations',
      xs: [250, 500, 1000, 2000],
      series: [1000, 2000, 4000],
      x: 'T_busy',
      s: 'T_idle',
      set: (x: number, s: number) => [`pn.sources.0.pattern.idleMs=${s}`, `pn.sources.0.pattern.busyMs=${x}`],
    },
    {
      key: '8b',
      title: 'Fig. 8b, sensing and transmission durations (T_idle = T_busy = 2 s)',
      xs: [30, 70, 100, 200],
      series: [500, 1000, 2000],
      x: 'sensing',
      s: 'transmission',
      set: (x: number, s: number) => [...PN_2_2, `node.sensing.durationMs=${x}`, `node.sensing.periodMs=${x + s}`],
    },
    {
      key: '8c',
      title: 'Fig. 8c, switching interval',
      xs: [10, 20, 50, 100, 200],
      series: [500, 1000, 2000],
      x: 'switching interval',
      s: 'transmission',
      set: (x: number, s: number) => [`node.switching.intervalMs=${x}`, 'node.sensing.durationMs=70', `node.sensing.periodMs=${70 + s}`],
    },
  ];
  for (const g of grids) {
    const rows: Array<{ s: number; points: Array<{ x: number; r: SimResult }> }> = [];
    for (const s of g.series) {
      const points: Array<{ x: number; r: SimResult }> = [];
      for (const x of g.xs) points.push({ x, r: await point(chainPath, g.set(x, s), { acc: 'every' }) });
      rows.push({ s, points });
    }
    const md = [
      `| ${g.s} (ms) \\ ${g.x} (ms) | ${g.xs.join(' | ')} |`,
      `| ---: | ${g.xs.map(() => '---:').join(' | ')} |`,
      ...rows.map((row) => `| ${row.s} | ${row.points.map((p) => kbps(goodput(p.r))).join(' | ')} |`),
    ].join('\n');
    tables.push({
      experiment: '8',
      markdown: `${g.title}: TCP-ACC (${mode}) goodput (kbps), 4 hops\n\n${md}`,
      data: rows.map((row) => ({ [g.s]: row.s, points: row.points.map((p) => ({ [g.x]: p.x, goodputMbps: goodput(p.r) })) })),
    });
    const series: Series[] = rows.map((row) => ({ name: `${g.s} ${row.s} ms`, points: row.points.map((p) => toPoint(p.x, goodput(p.r))) }));
    await plot(`acc-fig${g.key}.svg`, lineChart({ title: `${g.title} (TCP-ACC, 4 hops)`, xLabel: `${g.x} (ms)`, yLabel: 'goodput (kbps)', series }));
  }
}

if (only.includes('9')) {
  const rows: Array<{ name: string; r: SimResult }> = [];
  for (const v of CC_NAMES) rows.push({ name: v, r: await point(chainPath, PN_2_2, { tcp: v }) });
  rows.push({ name: 'TCP-ACC', r: await point(chainPath, PN_2_2, { acc: 'every' }) });
  const reno = goodput(rows[0]!.r)?.mean ?? 0;
  const md = [
    '| TCP | goodput (kbps) | against Reno | RTT (ms) | timeouts |',
    '| :--- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ name, r }) =>
        `| ${name} | ${kbps(goodput(r))} | ${reno > 0 ? ((goodput(r)?.mean ?? 0) / reno).toFixed(2) : 'n/a'} | ${cell(r.summary[0]?.rttMeanMs, 1, 0)} | ${cell(r.summary[0]?.timeouts, 1, 1)} |`,
    ),
  ].join('\n');
  tables.push({
    experiment: '9',
    markdown: `Fig. 9, TCP variants and TCP-ACC (${mode}, Reno legs) on the 4-hop chain, T_idle = T_busy = 2 s (RTT: the source's)\n\n${md}`,
    data: rows.map(({ name, r }) => ({ name, ...r.summary[0] })),
  });
  await plot(
    'acc-fig9.svg',
    barChart({
      title: 'Fig. 9, TCP variants and TCP-ACC (4 hops, T_idle = T_busy = 2 s)',
      xLabel: 'TCP',
      yLabel: 'goodput (kbps)',
      series: [{ name: 'goodput', points: rows.map(({ name, r }) => toPoint(name, goodput(r))) }],
    }),
  );
}

if (only.includes('10')) {
  const rows: Array<{ name: string; r: SimResult }> = [];
  for (const v of CC_NAMES) rows.push({ name: v, r: await point(dumbbellPath, [], { tcp: v }) });
  rows.push({ name: 'TCP-ACC', r: await point(dumbbellPath, [], { acc: 'every' }) });
  const md = [
    '| TCP | F1 (0 -> 5) goodput (kbps) | F2 (1 -> 6) goodput (kbps) | sum (kbps) | Jain index |',
    '| :--- | ---: | ---: | ---: | ---: |',
    ...rows.map(({ name, r }) => {
      const sum = spread(r.runs.map((run) => run.flows.reduce((a, f) => a + f.goodputMbps, 0)));
      return `| ${name} | ${kbps(goodput(r, 0))} | ${kbps(goodput(r, 1))} | ${kbps(sum)} | ${cell(jain(r), 1, 3)} |`;
    }),
  ].join('\n');
  tables.push({
    experiment: '10',
    markdown: `Fig. 10, two flows on the dumbbell (both from 5 s), TCP variants and TCP-ACC (${mode}, Reno legs)\n\n${md}`,
    data: rows.map(({ name, r }) => ({ name, f1: goodput(r, 0), f2: goodput(r, 1), jain: jain(r) })),
  });
  await plot(
    'acc-fig10.svg',
    barChart({
      title: 'Fig. 10, two flows on the dumbbell',
      xLabel: 'TCP',
      yLabel: 'goodput (kbps)',
      series: [
        { name: 'F1 (0 -> 5)', points: rows.map(({ name, r }) => toPoint(name, goodput(r, 0))) },
        { name: 'F2 (1 -> 6)', points: rows.map(({ name, r }) => toPoint(name, goodput(r, 1))) },
      ],
    }),
  );
}

if (only.includes('loss')) {
  // seeds/004's setting: a proxy between two ends, loss or reordering on the link after it.
  // Here: the 2-hop chain without PNs or cognition, TCP-ACC on router 1, the link 1 -> 2 impaired.
  const conditions = [
    { name: 'no loss', imp: '' },
    { name: '0.1% loss', imp: '"lossProbability":0.001' },
    { name: '1% loss', imp: '"lossProbability":0.01' },
    { name: '5% loss', imp: '"lossProbability":0.05' },
    { name: '10% reordering', imp: '"reorderProbability":0.1,"reorderDelayMs":20' },
  ];
  const modes = [
    { name: 'TCP Reno end to end', o: { acc: 'none' } },
    { name: 'TCP-ACC split', o: { acc: '1', accMode: 'split' as const } },
    { name: 'TCP-ACC e2e', o: { acc: '1', accMode: 'e2e' as const } },
  ];
  const grid: Array<{ mode: string; results: SimResult[] }> = [];
  for (const m of modes) {
    const results: SimResult[] = [];
    for (const c of conditions) {
      const set = c.imp === '' ? [] : [`impairments=[{"from":1,"to":2,${c.imp}}]`];
      results.push(await point(chainPath, set, { hops: 2, cognitive: false, pn: false, ...m.o }));
    }
    grid.push({ mode: m.name, results });
  }
  const norm = (r: SimResult, base: SimResult): string => {
    const b = goodput(base)?.mean ?? 0;
    return b > 0 ? `${((100 * (goodput(r)?.mean ?? 0)) / b).toFixed(1)}%` : 'n/a';
  };
  const md = [
    `| | ${conditions.map((c) => c.name).join(' | ')} |`,
    `| :--- | ${conditions.map(() => '---:').join(' | ')} |`,
    ...grid.map((g) => `| ${g.mode} | ${g.results.map((r, i) => (i === 0 ? kbps(goodput(r)) + ' kbps' : norm(r, g.results[0]!))).join(' | ')} |`),
  ].join('\n');
  tables.push({
    experiment: 'loss',
    markdown: `seeds/004's table: goodput under loss and reordering on one link (2-hop chain, no PNs, one channel, accelerator on router 1), normalised to each one's loss-free goodput\n\n${md}`,
    data: grid.map((g) => ({ mode: g.mode, goodputMbps: g.results.map((r) => goodput(r)) })),
  });
}

if (only.includes('trace')) {
  // Table 2's 4-hop point, one seed, traced: TCP-ACC on every router, and end-to-end Reno beside it (docs/simulator.md, "Tracing TCP legs").
  const intervalUs = 20_000;
  const runs: Array<{ name: string; r: SimResult; t: TraceResult }> = [];
  for (const [name, acc] of [
    ['TCP-ACC', 'every'],
    ['Reno', 'none'],
  ] as const) {
    const trace = new RunTrace(intervalUs);
    const r = await ctx.single(chainPath, [], { hops: 4, tcp: 'reno', accMode: mode, acc }, { trace });
    runs.push({ name, r, t: trace.result() });
  }
  const legName = (t: TraceResult, leg: number): string => {
    const l = t.header.legs[leg]!;
    return `${l.from} -> ${l.to ?? '?'}`;
  };
  const kb = (v: number | null): string => (v === null ? 'n/a' : (v / 1024).toFixed(1));
  const rows = runs.flatMap(({ name, t }) =>
    t.summaries.map((s) => {
      const segs = Math.max(1, s.dataSegs + s.ackSegs);
      return {
        name: `${name} ${legName(t, s.leg)}`,
        s,
        sensingPerSegMs: s.sensingMs / segs,
        switchingPerSegMs: s.switchingMs / segs,
        waitPerSegMs: s.waitMs / segs,
      };
    }),
  );
  const md = [
    '| leg | mean cwnd (KB) | mean SRTT (ms) | mean RTO (ms) | RTOs (spurious) | retransmitted % | received twice, % of retransmitted | mean in flight (KB) | mean peer window (KB) | relay buffer mean / max (KB) | sensing: stalled % of run, ms per segment | switching: stalled % of run, ms per segment | queue wait per segment (ms) |',
    '| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ name, s, sensingPerSegMs, switchingPerSegMs, waitPerSegMs }) =>
        `| ${name} | ${kb(s.meanCwnd)} | ${s.meanSrttMs?.toFixed(0) ?? 'n/a'} | ${s.meanRtoMs.toFixed(0)} | ${s.timeouts} (${s.spuriousTimeouts}) | ${s.retransPct.toFixed(1)} | ${
          s.dupBytes === null || s.retransBytes === 0 ? 'n/a' : ((100 * s.dupBytes) / s.retransBytes).toFixed(0)
        } | ${kb(s.meanInFlight)} | ${kb(s.meanSndWnd)} | ${s.meanRelay === null ? 'n/a' : `${kb(s.meanRelay)} / ${kb(s.maxRelay)}`} | ${s.sensingStallPct.toFixed(1)}%, ${sensingPerSegMs.toFixed(1)} | ${s.switchingStallPct.toFixed(1)}%, ${switchingPerSegMs.toFixed(1)} | ${waitPerSegMs.toFixed(1)} |`,
    ),
  ].join('\n');
  const goodputs = runs.map(({ name, r }) => `${name} ${kbps(goodput(r))} kbps`).join(', ');
  tables.push({
    experiment: 'trace',
    markdown: `Per-leg trace of Table 2's 4-hop point, seed ${runs[0]!.t.header.seed} (${goodputs}): TCP-ACC (${mode}) on every router, and end-to-end Reno. Means over the flow's active time, sampled every ${intervalUs / 1000} ms; spurious RTOs: those that resent what the receiver already had (only the ACK was late); received twice: bytes the receiver got twice (go-back-N after an RTO resends what was in flight) against bytes retransmitted; stalled: time at least one of the leg's segments (data or ACK) waited in an R2 queue while R2 was away sensing (switching); per segment: over the leg's data and ACK segments at every router they crossed\n\n${md}`,
    data: runs.map(({ name, r, t }) => ({ name, goodput: goodput(r), legs: t.header.legs, summaries: t.summaries, r2: t.r2 })),
  });

  // A window of 20 s of the run reads better than the whole of it.
  const fromMs = 1000 * Math.max(5, Math.min(40, ctx.durationS - 20));
  const toMs = Math.min(fromMs + 20_000, 1000 * ctx.durationS);
  const inWindow = (x: TraceSample): boolean => x.t >= fromMs && x.t <= toMs;
  const window = `${fromMs / 1000}-${toMs / 1000} s`;
  const legSeries = (t: TraceResult, leg: number, pick: Array<[string, (x: TraceSample) => number | null]>): Series[] =>
    pick.map(([name, f]) => ({
      name,
      points: t.samples.filter((x) => x.leg === leg && inWindow(x) && f(x) !== null).map((x) => ({ x: x.t / 1000, y: f(x)! })),
    }));
  const perLeg = (pick: Array<[string, (x: TraceSample) => number | null]>, yLabel: string): ChartSpec[] =>
    runs.flatMap(({ name, t }) =>
      t.header.legs.map((l) => ({ title: `${name}, leg ${legName(t, l.leg)}`, xLabel: 'time (s)', yLabel, points: false, series: legSeries(t, l.leg, pick) })),
    );
  await plot(
    'acc-trace-cwnd.svg',
    panelChart(
      `Congestion window, bytes in flight and the receiver's window per leg (4 hops, ${window})`,
      perLeg(
        [
          ['cwnd', (x) => x.cwnd / 1024],
          ['in flight', (x) => x.inFlight / 1024],
          ['peer window', (x) => x.sndWnd / 1024],
        ],
        'KB',
      ),
    ),
  );
  await plot(
    'acc-trace-rtt.svg',
    panelChart(
      `SRTT and RTO per leg (4 hops, ${window})`,
      perLeg(
        [
          ['SRTT', (x) => x.srttMs],
          ['RTO', (x) => x.rtoMs],
        ],
        'ms',
      ),
    ),
  );
  const acc = runs[0]!.t;
  await plot(
    'acc-trace-relay.svg',
    lineChart({
      title: `TCP-ACC relay buffer occupancy, data direction (4 hops, ${window})`,
      xLabel: 'time (s)',
      yLabel: 'KB held',
      points: false,
      series: acc.header.legs
        .filter((l) => l.sender === 'acc-down')
        .map((l) => ({ name: `router ${l.from}`, points: legSeries(acc, l.leg, [['relay', (x) => (x.relay === null ? null : x.relay / 1024)]])[0]!.points })),
    }),
  );
  await plot(
    'acc-trace-waits.svg',
    barChart({
      title: 'R2 queue wait per segment of each leg, by what R2 was doing (4 hops, whole run)',
      xLabel: 'leg',
      yLabel: 'ms per segment',
      series: [
        { name: 'away sensing', points: rows.map((w) => ({ x: w.name, y: w.sensingPerSegMs })) },
        { name: 'switching', points: rows.map((w) => ({ x: w.name, y: w.switchingPerSegMs })) },
        { name: 'on its own channel', points: rows.map((w) => ({ x: w.name, y: w.waitPerSegMs - w.sensingPerSegMs - w.switchingPerSegMs })) },
      ],
    }),
  );
}

if (only.includes('wan')) {
  // seeds/001's setting: a far host behind a 10 Mbps, 100 ms RTT WAN, the split host (TCP-ACC) on the
  // gateway router 0, and the mobile host 1 or 2 mesh hops past it (wan-split.json).
  const wanPath = scenarioFile('wan-split.json');
  /** The congestion controls compared (extend the list as variants are added). */
  const WAN_VARIANTS: readonly CcName[] = ['reno', 'cubic'];
  const WAN_MODES = [
    { key: 'e2e-tcp', name: 'end-to-end TCP', o: { acc: 'none' } },
    { key: 'split', name: 'split', o: { acc: '0', accMode: 'split' as const } },
    { key: 'es', name: 'e2e (ES-TCP)', o: { acc: '0', accMode: 'e2e' as const } },
    { key: 'as', name: 'as (AS-TCP)', o: { acc: '0', accMode: 'as' as const } },
  ];
  // One hop: two routers, the far host is node 2; two hops: the scenario as it is (host 3, mobile host 2).
  const WAN_HOPS = [
    { hops: 1, set: ['topology.nodes=2', 'flows.0.src=2', 'flows.0.dst=1'] },
    { hops: 2, set: [] as string[] },
  ];
  const rows: Array<{ variant: CcName; hops: number; results: SimResult[] }> = [];
  for (const variant of WAN_VARIANTS)
    for (const h of WAN_HOPS) {
      const results: SimResult[] = [];
      for (const m of WAN_MODES) results.push(await ctx.point(wanPath, h.set, { tcp: variant, ...m.o }));
      rows.push({ variant, hops: h.hops, results });
    }
  const gain = (r: SimResult, base: SimResult): string => {
    const b = goodput(base)?.mean ?? 0;
    return b > 0 ? `${(100 * ((goodput(r)?.mean ?? 0) / b - 1)).toFixed(0)}%` : 'n/a';
  };
  const md = [
    `| TCP | mesh hops | ${WAN_MODES.map((m) => `${m.name} (kbps)`).join(' | ')} | ${WAN_MODES.slice(1)
      .map((m) => `${m.key === 'split' ? 'split' : m.key === 'es' ? 'ES-TCP' : 'AS-TCP'} gain`)
      .join(' | ')} |`,
    `| :--- | ---: | ${WAN_MODES.map(() => '---:').join(' | ')} | ${WAN_MODES.slice(1)
      .map(() => '---:')
      .join(' | ')} |`,
    ...rows.map(
      (row) =>
        `| ${row.variant} | ${row.hops} | ${row.results.map((r) => kbps(goodput(r))).join(' | ')} | ${row.results
          .slice(1)
          .map((r) => gain(r, row.results[0]!))
          .join(' | ')} |`,
    ),
  ].join('\n');
  tables.push({
    experiment: 'wan',
    markdown: `seeds/001's setting: a far host behind a 10 Mbps, 100 ms RTT WAN, TCP-ACC on the gateway only, the mobile host 1-2 mesh hops past it (goodput; gain over end-to-end TCP)\n\n${md}`,
    data: rows.map((row) => ({
      variant: row.variant,
      hops: row.hops,
      ...Object.fromEntries(WAN_MODES.map((m, i) => [m.key, goodput(row.results[i]!)])),
      sourceRttMs: Object.fromEntries(WAN_MODES.map((m, i) => [m.key, row.results[i]!.summary[0]?.rttMeanMs ?? null])),
      timeouts: Object.fromEntries(WAN_MODES.map((m, i) => [m.key, row.results[i]!.summary[0]?.timeouts ?? null])),
    })),
  });
  await plot(
    'acc-wan.svg',
    barChart({
      title: "seeds/001's setting: far host, 10 Mbps / 100 ms WAN, split host on the gateway",
      xLabel: 'TCP, mesh hops past the gateway',
      yLabel: 'goodput (kbps)',
      series: WAN_MODES.map((m, i) => ({ name: m.name, points: rows.map((row) => toPoint(`${row.variant} ${row.hops}`, goodput(row.results[i]!))) })),
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
