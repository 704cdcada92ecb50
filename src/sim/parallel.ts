import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CogmeshError } from '../core/errors.js';
import type { EnergyBackend } from '../sensing/backend.js';
import type { RunResult } from './report.js';
import { runScenario } from './run.js';
import type { Scenario } from './scenario.js';

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
  const here = import.meta.url;
  // Under tsx the sources are TypeScript; built, they are JavaScript next to this file.
  const url = workerEntry(here);
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

/**
 * The worker's entry. Built, it is the JavaScript file next to this one.
 * Under tsx (tests, development) a worker does not inherit tsx's loader, so
 * the entry is a small module that registers it first and then imports the
 * TypeScript worker.
 */
function workerEntry(here: string): URL {
  if (!here.endsWith('.ts')) return new URL('./seed-worker.js', here);
  const tsx = import.meta.resolve('tsx/esm/api');
  const worker = new URL('./seed-worker.ts', here).href;
  const code = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(worker)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
