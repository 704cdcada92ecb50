/**
 * How the simulator grows with the mesh: random meshes of 10, 30, 100, 300
 * and 1000 routers at one density, a fixed number of flows per router, each
 * flow over a fixed number of hops, simulated for 60 s each.
 *
 *   node --import tsx bench/scale.ts [--sizes 10,30,100,300,1000] [--duration 60]
 *                                    [--flows-per-router 0.1] [--flow-hops 3]
 *                                    [--degree 12] [--rate 0.1] [--seed 1]
 *                                    [--cognitive on|off] [--pn on|off]
 *                                    [--set PATH=VALUE]... [--heap-mb 8192] [--runs 5] [--short-s 5]
 *                                    [--keep DIR] [--json]
 *
 * The routers are drawn uniformly at random in a square sized so that each
 * has `--degree` others within the transmission range on average, redrawn
 * until the mesh is connected; so the work per router stays the same as the
 * mesh grows. Each flow is a UDP CBR flow of `--rate` Mbps (1000-byte packets)
 * from a random router to one exactly `--flow-hops` hops away (fewest hops
 * in range), so a flow's work does not grow with the mesh either. Everything
 * else is the scenario defaults (cognitive layer on; --set as `cogmesh sim`).
 *
 * Each size runs the build's simulator (`npm run build`) in a process of its own (its heap capped at --heap-mb, 8 GiB
 * by default) that reports the simulation's wall and CPU time, the events it
 * fired and its peak resident set. The report gives events per second and the
 * growth exponent of the wall time against the 10-router run, measured in the
 * same run: log(wall_N / wall_10) / log(N / 10); 1 is linear. A short run
 * is moved most by other work on the machine (on this 2-core VM one core at
 * times runs the same process 1.4x slower than the other, for minutes), and
 * the exponent of a small size magnifies it (a tenth more wall at 30 routers
 * is 0.09 of exponent): each size whose first run took under --short-s
 * seconds of wall runs --runs times in all, in passes over those sizes after
 * the first pass (so that its runs are spread over the bench), and its row
 * gives the median run's wall and CPU (and the range of its walls). --keep DIR
 * leaves each mesh's scenario file in DIR (scale-N.json), to run or profile
 * with `cogmesh sim`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../src/core/rng.js';
import type { ScenarioOverrides } from '../src/config/scenario.js';
import { builtSimulate } from './built.js';
import { progress, progressWanted } from '../src/cli/progress.js';
import { median } from '../src/sim/report.js';

/** The medium's default transmission range (m), which the scenarios use. */
const TX_RANGE_M = 250;
const PACKET_BYTES = 1000;
/** The flows start once HELLOs have found the neighbours. */
const FLOW_START_S = 5;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10,30,100,300,1000' },
    duration: { type: 'string', default: '60' },
    'flows-per-router': { type: 'string', default: '0.1' },
    'flow-hops': { type: 'string', default: '3' },
    degree: { type: 'string', default: '12' },
    rate: { type: 'string', default: '0.1' },
    seed: { type: 'string', default: '1' },
    cognitive: { type: 'string', default: 'on' },
    pn: { type: 'string', default: 'on' },
    set: { type: 'string', multiple: true, default: [] },
    'heap-mb': { type: 'string', default: '8192' },
    runs: { type: 'string', default: '5' },
    'short-s': { type: 'string', default: '5' },
    keep: { type: 'string' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

function usage(msg: string): never {
  process.stderr.write(`bench/scale.ts: ${msg}\n`);
  process.exit(2);
}
function num(name: string, v: string | undefined, min: number, max: number, integer = false): number {
  const n = Number(v);
  if (v === undefined || v.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    usage(`--${name}: "${v}" is not ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return n;
}
function onOff(name: string, v: string | undefined): boolean {
  if (v !== 'on' && v !== 'off') usage(`--${name}: "${v}" is not on or off`);
  return v === 'on';
}

/** What a child process reports of one simulation. */
interface ChildReport {
  wallMs: number;
  cpuMs: number;
  events: number;
  maxRssMb: number;
  delivered: number;
  sent: number;
}

// ---- A child: one simulation ------------------------------------------------------

if (values.child !== undefined) {
  const simulate = await builtSimulate('bench/scale.ts');
  const { path, overrides } = JSON.parse(values.child) as { path: string; overrides: ScenarioOverrides };
  const c0 = process.cpuUsage();
  const { result, wallMs } = await simulate(path, overrides, 1);
  const c = process.cpuUsage(c0);
  const run = result.runs[0]!;
  const report: ChildReport = {
    wallMs,
    cpuMs: (c.user + c.system) / 1000,
    events: run.events,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    sent: run.flows.reduce((a, f) => a + ('sent' in f ? Number(f.sent) : 0), 0),
    delivered: run.flows.reduce((a, f) => a + ('received' in f ? Number(f.received) : 0), 0),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}

// ---- The parent: the meshes and the report -------------------------------------------

const sizes = (values.sizes ?? '').split(',').map((s) => num('sizes', s, 2, 1000, true));
if (sizes.length === 0) usage('--sizes: no size given');
const durationS = num('duration', values.duration, FLOW_START_S + 1, 1e6);
const flowsPerRouter = num('flows-per-router', values['flows-per-router'], 0, 10);
const flowHops = num('flow-hops', values['flow-hops'], 1, 64, true);
const degree = num('degree', values.degree, 2, 100);
const rateMbps = num('rate', values.rate, 0.001, 100);
const seed = num('seed', values.seed, 1, 2 ** 31 - 1, true);
const cognitive = onOff('cognitive', values.cognitive);
const pn = onOff('pn', values.pn);
const heapMb = num('heap-mb', values['heap-mb'], 256, 1 << 20, true);
const runs = num('runs', values.runs, 1, 100, true);
const shortS = num('short-s', values['short-s'], 0, 1e6);

type Point = { xM: number; yM: number };

/** Routers within the transmission range of each router. */
function neighbours(pts: readonly Point[]): number[][] {
  const out: number[][] = pts.map(() => []);
  const r2 = TX_RANGE_M * TX_RANGE_M;
  for (let i = 0; i < pts.length; i++) {
    for (let j = i + 1; j < pts.length; j++) {
      const dx = pts[i]!.xM - pts[j]!.xM;
      const dy = pts[i]!.yM - pts[j]!.yM;
      if (dx * dx + dy * dy <= r2) {
        out[i]!.push(j);
        out[j]!.push(i);
      }
    }
  }
  return out;
}

/** Hop counts from `src` (fewest hops within range); -1 where unreachable. */
function hopsFrom(adj: readonly number[][], src: number): Int32Array {
  const d = new Int32Array(adj.length).fill(-1);
  d[src] = 0;
  const queue = [src];
  for (let k = 0; k < queue.length; k++) {
    const u = queue[k]!;
    for (const v of adj[u]!) {
      if (d[v] !== -1) continue;
      d[v] = d[u]! + 1;
      queue.push(v);
    }
  }
  return d;
}

/** A connected random mesh of n routers at the density of `degree`, and its flows. */
function mesh(n: number, rng: Rng): { positions: Point[]; flows: Array<{ src: number; dst: number }> } {
  // n routers in a square of side s have about n * pi * R^2 / s^2 neighbours each.
  const side = Math.sqrt((n * Math.PI * TX_RANGE_M * TX_RANGE_M) / degree);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const positions = Array.from({ length: n }, () => ({ xM: round(rng.next() * side), yM: round(rng.next() * side) }));
    const adj = neighbours(positions);
    if (hopsFrom(adj, 0).includes(-1)) continue;
    const count = Math.max(1, Math.round(n * flowsPerRouter));
    const flows: Array<{ src: number; dst: number }> = [];
    for (let tries = 0; flows.length < count && tries < 100 * count; tries++) {
      const src = Math.floor(rng.next() * n);
      const d = hopsFrom(adj, src);
      // The farthest routers, when none is exactly flowHops away (a small mesh).
      const want = Math.min(flowHops, Math.max(...d));
      const at = [...d.keys()].filter((i) => d[i] === want);
      flows.push({ src, dst: at[Math.floor(rng.next() * at.length)]! });
    }
    return { positions, flows };
  }
  usage(`no connected mesh of ${n} routers at degree ${degree} in 1000 draws: raise --degree`);
}
const round = (x: number): number => Math.round(x * 10) / 10;

function runChild(path: string, overrides: ScenarioOverrides): Promise<ChildReport> {
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, `--max-old-space-size=${heapMb}`, script, '--child', JSON.stringify({ path, overrides })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as ChildReport);
      else reject(new Error(`the run exited (${signal ?? `code ${code}`}): ${err.trim().split('\n').slice(-3).join(' / ') || 'no output'}`));
    });
  });
}

interface Row {
  routers: number;
  flows: number;
  /** The median run's report (by wall; its CPU the median of the runs' CPU). */
  report?: ChildReport;
  /** Every run's report, in the order run. */
  runs: ChildReport[];
  error?: string;
  /** The scenario file and its overrides, to run again. */
  path: string;
  overrides: ScenarioOverrides;
}

/** A row's runs as one: the median wall and CPU, the rest (peak RSS; the events and deliveries are the same in every run) from the run nearest the median wall. */
function summarise(all: readonly ChildReport[]): ChildReport {
  const wallMs = median(all.map((r) => r.wallMs));
  const nearest = [...all].sort((a, b) => Math.abs(a.wallMs - wallMs) - Math.abs(b.wallMs - wallMs))[0]!;
  return { ...nearest, wallMs, cpuMs: median(all.map((r) => r.cpuMs)) };
}

const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'cogmesh-scale-'));
if (values.keep !== undefined) mkdirSync(dir, { recursive: true });
const rows: Row[] = [];
// One unit per size's first run; the larger sizes take the most time, so the estimate is early at first. COGMESH_PROGRESS=0 turns it off.
const shown = progress({ total: sizes.length, label: 'bench scale', unit: 'sizes', enabled: progressWanted() });
try {
  for (const n of sizes) {
    const rng = Rng.fromSeed(seed).fork(`scale/${n}`);
    const m = mesh(n, rng);
    const scenario = {
      name: `scale-${n}`,
      description: `bench/scale.ts: ${n} random routers at degree ${degree}, ${m.flows.length} UDP flows of ${flowHops} hops`,
      durationS,
      seed,
      topology: { kind: 'positions', nodes: m.positions },
      flows: m.flows.map((f) => ({ kind: 'udp-cbr', src: f.src, dst: f.dst, rateMbps, packetBytes: PACKET_BYTES, startS: FLOW_START_S })),
    };
    const path = join(dir, `scale-${n}.json`);
    writeFileSync(path, JSON.stringify(scenario));
    const overrides: ScenarioOverrides = { seed, seeds: 1, durationS, cognitive, pn, set: values.set ?? [] };
    process.stderr.write(`bench/scale.ts: ${n} routers, ${m.flows.length} flows ...\n`);
    const row: Row = { routers: n, flows: m.flows.length, runs: [], path, overrides };
    try {
      row.runs.push(await runChild(path, overrides));
    } catch (e) {
      row.error = e instanceof Error ? e.message : String(e);
    }
    rows.push(row);
    shown.tick();
  }
  // The short sizes again, a pass at a time, until each has --runs runs.
  const short = rows.filter((r) => r.error === undefined && r.runs[0]!.wallMs < shortS * 1000);
  for (let pass = 1; pass < runs && short.length > 0; pass++) {
    process.stderr.write(`bench/scale.ts: pass ${pass + 1} of ${runs} over ${short.map((r) => r.routers).join(', ')} routers ...\n`);
    for (const row of short) {
      if (row.error !== undefined) continue;
      try {
        row.runs.push(await runChild(row.path, row.overrides));
      } catch (e) {
        row.error = e instanceof Error ? e.message : String(e);
      }
    }
  }
  for (const row of rows) {
    if (row.error !== undefined) continue;
    // A seed's simulation is deterministic: every run of a mesh fires the same events and delivers the same.
    const [first, ...rest] = row.runs;
    const other = rest.find((r) => r.events !== first!.events || r.delivered !== first!.delivered || r.sent !== first!.sent);
    if (other) row.error = `its runs differ (${first!.events} and ${other.events} events, ${first!.delivered} and ${other.delivered} delivered)`;
    else row.report = summarise(row.runs);
  }
} finally {
  shown.stop();
  if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
}

const ref = rows.find((r) => r.report);
/** The growth exponent of wall time (or, with `cpu`, of CPU time: less moved by other work on the machine) against the reference run. */
const exponent = (r: Row, cpu = false): number | null => {
  if (!ref || !r.report || r === ref) return null;
  const [now, then] = cpu ? [r.report.cpuMs, ref.report!.cpuMs] : [r.report.wallMs, ref.report!.wallMs];
  return Math.log(now / then) / Math.log(r.routers / ref.routers);
};

if (values.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        durationS,
        degree,
        flowsPerRouter,
        flowHops,
        rateMbps,
        cognitive,
        pn,
        heapMb,
        rows: rows.map((row) => {
          const { path: _path, overrides: _overrides, ...r } = row;
          return { ...r, exponent: exponent(row), cpuExponent: exponent(row, true) };
        }),
      },
      null,
      2,
    )}\n`,
  );
} else {
  const f = (x: number, d = 2): string => x.toFixed(d);
  const lines = [
    `| routers | flows | runs | wall (s) | walls (s) | CPU (s) | events | events/s | peak RSS (MB) | delivered | exponent vs ${ref?.routers ?? '-'} | CPU exponent |`,
    '| ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  /** The range of a row's walls, when it ran more than once. */
  const walls = (r: Row): string => {
    if (r.runs.length < 2) return '-';
    const w = r.runs.map((x) => x.wallMs / 1000);
    return `${f(Math.min(...w))}-${f(Math.max(...w))}`;
  };
  for (const r of rows) {
    const p = r.report;
    if (!p) {
      lines.push(`| ${r.routers} | ${r.flows} | ${r.runs.length} | failed: ${r.error} | | | | | | | | |`);
      continue;
    }
    const e = exponent(r);
    const ec = exponent(r, true);
    lines.push(
      `| ${r.routers} | ${r.flows} | ${r.runs.length} | ${f(p.wallMs / 1000)} | ${walls(r)} | ${f(p.cpuMs / 1000)} | ${p.events} | ${Math.round(p.events / (p.wallMs / 1000))} | ${f(p.maxRssMb, 0)} | ${p.sent > 0 ? f((100 * p.delivered) / p.sent, 1) + '%' : '-'} | ${e === null ? '-' : f(e)} | ${ec === null ? '-' : f(ec)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
  process.stdout.write(
    `${f(durationS, 0)} s simulated per mesh, cognitive ${cognitive ? 'on' : 'off'}, PNs ${pn ? 'on' : 'off'}; ${degree} neighbours per router on average, ` +
      `${flowsPerRouter} flows per router of ${flowHops} hops at ${rateMbps} Mbps; one process per mesh, heap capped at ${heapMb} MB; ` +
      `a size whose first run took under ${f(shortS, 0)} s ran ${runs} times (spread over the bench) and shows its median run's wall and CPU; ` +
      `exponent = log(wall_N / wall_ref) / log(N / ref), 1 is linear; the CPU exponent is the same of CPU time, which other work on the machine moves less.\n`,
  );
  const at300 = rows.find((r) => r.routers === 300)?.report;
  const worst = Math.max(...rows.map((r) => exponent(r) ?? -Infinity));
  process.stdout.write(`goal_300_routers_wall_le_15s=${at300 ? (at300.wallMs <= 15_000 ? 'yes' : 'no') : 'not-run'}\n`);
  process.stdout.write(
    `goal_growth_exponent_le_1.05=${Number.isFinite(worst) ? (worst <= 1.05 ? 'yes' : 'no') : 'not-run'} (worst ${Number.isFinite(worst) ? f(worst) : '-'})\n`,
  );
  if (rows.some((r) => r.routers === 1000)) {
    const big = rows.find((r) => r.routers === 1000)!;
    process.stdout.write(
      `goal_1000_routers_fit_8GiB=${big.report ? (big.report.maxRssMb <= 8192 ? 'yes' : 'no') : 'no'}${big.report ? ` (peak RSS ${f(big.report.maxRssMb, 0)} MB)` : ''}\n`,
    );
  }
}
if (rows.some((r) => r.error)) process.exitCode = 1;
