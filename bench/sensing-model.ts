/**
 * The simulator's two sensing models side by side: a scenario run over a few
 * seeds with sensing.model iq and statistical, alternately, in this process.
 * Per model it prints the CPU time of a run (user + system, the median over
 * the seeds), the mean of every router's own w over every channel and sensing
 * round, and each flow's mean goodput.
 *
 *   node --import tsx bench/sensing-model.ts [SCENARIO] [--seeds 5] [--duration 100] [--set path=value ...]
 *
 * SCENARIO defaults to config/scenarios/urbanx-chain.json. Prints key=value lines.
 */
import { parseArgs } from 'node:util';
import { loadScenario, type Scenario } from '../src/config/scenario.js';
import { median } from '../src/sim/report.js';
import { runScenario } from '../src/sim/run.js';
import { progress, progressWanted } from '../src/cli/progress.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seeds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '100' },
    set: { type: 'string', multiple: true, default: [] },
  },
});
const path = positionals[0] ?? 'config/scenarios/urbanx-chain.json';
const seeds = Number(values.seeds);
const durationS = Number(values.duration);

interface Figures {
  cpuS: number[];
  w: number[];
  goodput: number[][];
}

function once(sc: Scenario, seed: number, into: Figures): void {
  let wSum = 0;
  let wCount = 0;
  const c0 = process.cpuUsage();
  const r = runScenario(sc, seed, {
    onRouterEvent: (_i, e) => {
      if (e.kind !== 'sensing-round') return;
      for (const ch of e.channels) {
        if (ch.ownW === undefined) continue;
        wSum += ch.ownW;
        wCount++;
      }
    },
  });
  const c = process.cpuUsage(c0);
  into.cpuS.push((c.user + c.system) / 1e6);
  into.w.push(wCount > 0 ? wSum / wCount : NaN);
  r.flows.forEach((f, i) => (into.goodput[i] ??= []).push(f.goodputMbps ?? NaN));
}

const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;

const models = ['iq', 'statistical'] as const;
const scenarios = Object.fromEntries(
  await Promise.all(models.map(async (m) => [m, await loadScenario(path, { durationS, set: values.set, sensingModel: m })] as const)),
) as Record<(typeof models)[number], Scenario>;
const figures: Record<string, Figures> = { iq: { cpuS: [], w: [], goodput: [] }, statistical: { cpuS: [], w: [], goodput: [] } };
// Warm-up, so that neither model pays for compiling the simulator.
runScenario({ ...scenarios.iq, durationS: 2 }, 1);
// Between the timed runs, never inside one; on stderr, off with COGMESH_PROGRESS=0.
const shown = progress({ total: seeds * models.length, label: 'bench sensing-model', unit: 'runs', enabled: progressWanted() });
for (let k = 0; k < seeds; k++) {
  const seed = scenarios.iq.seed + k;
  // Alternate which model goes first, so that drift in the machine's speed falls on both.
  for (const m of k % 2 === 0 ? models : [...models].reverse()) {
    once(scenarios[m], seed, figures[m]!);
    shown.tick();
  }
}
shown.stop();
console.log(`scenario=${path} seeds=${seeds} duration_s=${durationS}`);
for (const m of models) {
  const f = figures[m]!;
  console.log(`${m}_cpu_s_median=${median(f.cpuS).toFixed(2)} ${m}_cpu_s=${f.cpuS.map((x) => x.toFixed(2)).join(',')}`);
  console.log(`${m}_mean_w=${mean(f.w).toFixed(5)} ${m}_w_by_seed=${f.w.map((x) => x.toFixed(5)).join(',')}`);
  f.goodput.forEach((g, i) => console.log(`${m}_flow${i}_goodput_mbps=${mean(g).toFixed(4)} by_seed=${g.map((x) => x.toFixed(4)).join(',')}`));
}
console.log(`cpu_ratio_statistical_over_iq=${(median(figures.statistical!.cpuS) / median(figures.iq!.cpuS)).toFixed(3)}`);
