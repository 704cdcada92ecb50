/**
 * The seeds' UDP result (seeds/000 section 5.1: "the UDP throughput was
 * 1.3 Mbps for a four-hop path even although the delivery ratio was low,
 * around 60%"), reproduced over 1-4 hops of config/scenarios/urbanx-chain.json.
 *
 *   node --import tsx bench/repro/udp.ts [--seeds 5] [--duration 100] [--set PATH=VALUE]... [--json]
 *
 * Prints a Markdown table (mean and 95% confidence half-width over the seeds)
 * of throughput, delivery ratio, delay and jitter per hop count, then the
 * wall time. --set passes overrides to every run, as `cogmesh sim --set`.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chooseBackend } from '../../src/sensing/backend.js';
import { summarize, type SimResult, type Spread } from '../../src/sim/report.js';
import { defaultJobs, runSeeds } from '../../src/sim/parallel.js';
import { loadScenario } from '../../src/config/scenario.js';
import { progress, progressWanted } from '../../src/cli/progress.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '100' },
    set: { type: 'string', multiple: true, default: [] },
    hops: { type: 'string', default: '1,2,3,4' },
    json: { type: 'boolean', default: false },
  },
});
const seeds = Number(values.seeds);
const durationS = Number(values.duration);
const hops = (values.hops ?? '1,2,3,4').split(',').map(Number);
const scenarioPath = fileURLToPath(new URL('../../config/scenarios/urbanx-chain.json', import.meta.url));

const jobs = defaultJobs(seeds);
const backend = jobs <= 1 ? (await chooseBackend('auto')).backend : undefined;
const t0 = performance.now();
const results: Array<{ hops: number; result: SimResult }> = [];
// One point per hop count, done in parts as its seeds end; on stderr, off with COGMESH_PROGRESS=0.
const shown = progress({ total: hops.length, label: 'repro udp', unit: 'points', enabled: progressWanted() });
for (const h of hops) {
  const sc = await loadScenario(scenarioPath, { hops: h, seeds, durationS, set: values.set });
  const runs = await runSeeds(
    sc,
    Array.from({ length: sc.seeds }, (_, k) => sc.seed + k),
    jobs,
    backend,
    (done) => shown.update(results.length + done / sc.seeds),
  );
  results.push({ hops: h, result: summarize(sc.name, sc.durationS, runs) });
}
shown.stop();
const wallS = (performance.now() - t0) / 1000;

if (values.json) {
  process.stdout.write(
    `${JSON.stringify(
      results.map((r) => ({ hops: r.hops, summary: r.result.summary[0] })),
      null,
      2,
    )}\n`,
  );
} else {
  const cell = (s: Spread | null | undefined, k = 1, digits = 2): string => (s ? `${(s.mean * k).toFixed(digits)} ± ${(s.ci95 * k).toFixed(digits)}` : 'n/a');
  const lines = [
    '| hops | throughput (Mbps) | delivery (%) | delay (ms) | jitter (ms) |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...results.map(({ hops: h, result }) => {
      const s = result.summary[0];
      return `| ${h} | ${cell(s?.throughputMbps, 1, 3)} | ${cell(s?.deliveryRatio, 100, 1)} | ${cell(s?.delayMeanMs, 1, 0)} | ${cell(s?.jitterMs, 1, 1)} |`;
    }),
  ];
  process.stdout.write(
    `${lines.join('\n')}\n\n${seeds} seed(s) x ${durationS} s per hop count; ${wallS.toFixed(1)} s wall for ${hops.length * seeds * durationS} simulated seconds\n`,
  );
}
