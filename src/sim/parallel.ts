import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CogmeshError } from '../core/errors.js';
import { workerEntry } from '../core/worker-entry.js';
import type { EnergyBackend } from '../sensing/energy.js';
import type { RunResult } from './report.js';
import { runScenario } from './run.js';
import type { Scenario } from '../config/scenario.js';

/** Worker threads that a run of several seeds uses by default: one per core, at most one per seed. */
export function defaultJobs(seeds: number): number {
  return Math.max(1, Math.min(seeds, availableParallelism()));
}

/**
 * Runs a scenario for each seed, on `jobs` worker threads (1: in this
 * thread). Each run depends on its scenario and seed only, so the results,
 * returned in the order of `seeds`, are the same whatever `jobs` is.
 */
export async function runSeeds(sc: Scenario, seeds: readonly number[], jobs: number, backend?: EnergyBackend): Promise<RunResult[]> {
  if (jobs <= 1 || seeds.length <= 1) return seeds.map((s) => runScenario(sc, s, { backend }));
  const url = workerEntry(import.meta.url, 'seed-worker');
  const results = new Map<number, RunResult>();
  const queue = [...seeds];
  const workers = Array.from({ length: Math.min(jobs, seeds.length) }, () => new Worker(url));
  try {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const next = (): void => {
              const seed = queue.shift();
              if (seed === undefined) resolve();
              else w.postMessage({ scenario: sc, seed });
            };
            w.on('message', (m: { seed: number; result?: RunResult; error?: string }) => {
              if (m.error !== undefined) reject(new CogmeshError('SIM_RUN_FAILED', `seed ${m.seed}: ${m.error}`));
              else {
                results.set(m.seed, m.result!);
                next();
              }
            });
            w.on('error', reject);
            next();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return seeds.map((s) => results.get(s)!);
}
