import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chooseBackend } from '../../src/sensing/backend.js';
import { type EnergyBackend } from '../../src/sensing/energy.js';
import { defaultJobs, runSeeds } from '../../src/sim/parallel.js';
import { summarize, type SimResult, type Spread } from '../../src/sim/report.js';
import { runScenario, type RunOptions } from '../../src/sim/run.js';
import { loadScenario, type ScenarioOverrides } from '../../src/config/scenario.js';
import { progress, progressWanted } from '../../src/cli/progress.js';
import { seconds } from '../../src/core/time.js';
import { writeChart } from './plot.js';

/**
 * What every reproduction script shares: its flags (--only, --seeds,
 * --duration, --set, --plots DIR (default out/figures; '' writes none),
 * --update-docs (writes the tracked docs/figures instead), --json, and its own), running a point over the
 * seeds, the table cells and the plots.
 */
export interface Repro<E extends string> {
  only: E[];
  seeds: number;
  durationS: number;
  json: boolean;
  /** The script's own string flags. */
  flags: Record<string, string | undefined>;
  /** A point: a scenario with overrides (and --set's), over the seeds. */
  point(path: string, set: string[], o?: Partial<ScenarioOverrides>): Promise<SimResult>;
  /** A point's first seed alone, in this thread, with run options (a trace). */
  single(path: string, set: string[], o: Partial<ScenarioOverrides>, opts: RunOptions): Promise<SimResult>;
  /** Writes a plot into --plots (none with --plots ''). */
  plot(name: string, svg: Promise<string>): Promise<void>;
  /** The closing line: seeds, duration, wall time. */
  footer(): string;
  /** Ends the progress display (before the tables go to stdout). */
  finish(): void;
}

/** Where plots go by default: an untracked folder of the repository. */
export const OUT_FIGURES = fileURLToPath(new URL('../../out/figures', import.meta.url));
/** The figures the docs show, written only with --update-docs. */
export const DOCS_FIGURES = fileURLToPath(new URL('../../docs/figures', import.meta.url));

export const scenarioFile = (name: string): string => fileURLToPath(new URL(`../../config/scenarios/${name}`, import.meta.url));

/**
 * `points`: how many points (calls of `point` or `single`) each experiment
 * runs, for the progress display on stderr (src/cli/progress.ts; off with
 * COGMESH_PROGRESS=0). A point counts as done in parts, as its seeds end.
 */
export async function repro<E extends string>(
  script: string,
  experiments: readonly E[],
  points: Record<E, number>,
  own: Record<string, string> = {},
): Promise<Repro<E>> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', default: experiments.join(',') },
      seeds: { type: 'string', default: '5' },
      duration: { type: 'string', default: '100' },
      set: { type: 'string', multiple: true, default: [] },
      plots: { type: 'string' },
      'update-docs': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      ...Object.fromEntries(Object.entries(own).map(([k, d]) => [k, { type: 'string' as const, default: d }])),
    },
  });
  const usage = (msg: string): never => {
    process.stderr.write(`bench/repro/${script}: ${msg}\n`);
    process.exit(2);
  };
  const only = String(values.only ?? '')
    .split(',')
    .map((s) => s.trim());
  for (const e of only) if (!(experiments as readonly string[]).includes(e)) usage(`--only: "${e}" is not one of ${experiments.join(', ')}`);
  const seeds = Number(values.seeds);
  if (!Number.isInteger(seeds) || seeds < 1) usage(`--seeds: "${String(values.seeds)}" is not a positive integer`);
  const durationS = Number(values.duration);
  if (!(durationS > 10)) usage(`--duration: "${String(values.duration)}" is not a number of seconds > 10`);
  const extra = (values.set ?? []) as string[];
  // The tracked figures under docs/figures change only when asked: a run that checks something writes beside them.
  if (values['update-docs'] && values.plots !== undefined) usage('--update-docs writes docs/figures: give it or --plots DIR, not both');
  const plotDir = values['update-docs'] ? DOCS_FIGURES : (values.plots ?? OUT_FIGURES);
  const jobs = defaultJobs(seeds);
  const backend: EnergyBackend | undefined = jobs <= 1 ? (await chooseBackend('auto')).backend : undefined;
  const t0 = performance.now();
  let simulated = 0;
  const shown = progress({
    total: (only as E[]).reduce((n, e) => n + points[e], 0),
    label: `repro ${script.replace(/\.ts$/, '')}`,
    unit: 'points',
    enabled: progressWanted(),
  });
  let pointsDone = 0;
  const pointDone = (): void => {
    pointsDone++;
    shown.update(pointsDone);
  };
  return {
    only: only as E[],
    seeds,
    durationS,
    json: values.json === true,
    flags: Object.fromEntries(Object.keys(own).map((k) => [k, (values as Record<string, unknown>)[k] as string | undefined])),
    async point(path, set, o = {}) {
      const sc = await loadScenario(path, { seeds, durationS, ...o, set: [...set, ...extra] });
      const runs = await runSeeds(
        sc,
        Array.from({ length: sc.seeds }, (_, k) => sc.seed + k),
        jobs,
        backend,
        (done) => shown.update(pointsDone + done / sc.seeds),
      );
      pointDone();
      simulated += sc.seeds * sc.durationS;
      return summarize(sc.name, sc.durationS, runs);
    },
    async single(path, set, o, opts) {
      const sc = await loadScenario(path, { durationS, ...o, seeds: 1, set: [...set, ...extra] });
      const durationUs = seconds(sc.durationS);
      const run = runScenario(sc, sc.seed, { ...(backend ? { backend } : {}), progress: (us) => shown.update(pointsDone + us / durationUs), ...opts });
      pointDone();
      simulated += sc.durationS;
      return summarize(sc.name, sc.durationS, [run]);
    },
    async plot(name, svg) {
      if (plotDir === '') return;
      await writeChart(join(plotDir, name), await svg);
    },
    finish: () => shown.stop(),
    footer: () => `${seeds} seed(s) x ${durationS} s per point; ${((performance.now() - t0) / 1000).toFixed(1)} s wall for ${simulated} simulated seconds`,
  };
}

/** mean ± 95% half-width, scaled by k. */
export const cell = (s: Spread | null | undefined, k = 1, digits = 3): string =>
  s ? `${(s.mean * k).toFixed(digits)} ± ${(s.ci95 * k).toFixed(digits)}` : 'n/a';
export const kbps = (s: Spread | null | undefined): string => cell(s, 1000, 0);
/** A plot point with its error bar (never below zero), scaled by k (Mbps to kbps by default). */
export const toPoint = (x: number | string, s: Spread | null | undefined, k = 1000): { x: number | string; y: number; lo?: number; hi?: number } =>
  s ? { x, y: s.mean * k, lo: Math.max(0, (s.mean - s.ci95) * k), hi: (s.mean + s.ci95) * k } : { x, y: 0 };
export const goodput = (r: SimResult, flow = 0): Spread | null => r.summary[flow]?.goodputMbps ?? null;
