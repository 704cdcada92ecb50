import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CogmeshError } from '../core/errors.js';
import { workerEntry } from '../core/worker-entry.js';
import type { EnergyBackend } from '../sensing/energy.js';
import { seconds, type Micros } from '../core/time.js';
import type { RunResult } from './report.js';
import { runScenario } from './run.js';
import type { Scenario } from '../config/scenario.js';

/** Worker threads that a run of several seeds uses by default: one per core, at most one per seed. */
export function defaultJobs(seeds: number): number {
  return Math.max(1, Math.min(seeds, availableParallelism()));
}

/** What runSeeds asks a seed worker: one seed of a scenario, with its progress or without. */
export interface SeedRequest {
  scenario: Scenario;
  seed: number;
  progress: boolean;
}

/**
 * What a seed worker answers: how far a seed is (when asked for progress,
 * about once per simulated second), then its result or its error.
 */
export type SeedMessage = { seed: number; simulatedUs: Micros } | { seed: number; result?: RunResult; error?: string };

/**
 * Told how far a run of several seeds is, in seeds: the seeds done, plus the
 * simulated part of each seed under way (2.5: two seeds done, and half of
 * another). For a progress display; it changes nothing in the runs.
 */
export type SeedsProgress = (seedsDone: number) => void;

/**
 * Runs a scenario for each seed, on `jobs` worker threads (1: in this
 * thread). Each run depends on its scenario and seed only, so the results,
 * returned in the order of `seeds`, are the same whatever `jobs` is.
 */
export async function runSeeds(
  sc: Scenario,
  seeds: readonly number[],
  jobs: number,
  backend?: EnergyBackend,
  onProgress?: SeedsProgress,
): Promise<RunResult[]> {
  const durationUs = seconds(sc.durationS);
  /** The simulated part (0 to 1) of each seed under way; a seed done leaves it for `finished`. */
  const partial = new Map<number, number>();
  let finished = 0;
  const report = (): void => {
    let sum = finished;
    for (const f of partial.values()) sum += f;
    onProgress?.(sum);
  };
  const at = (seed: number, simulatedUs: Micros): void => {
    partial.set(seed, Math.min(1, simulatedUs / durationUs));
    report();
  };
  const done = (seed: number): void => {
    partial.delete(seed);
    finished++;
    report();
  };
  if (jobs <= 1 || seeds.length <= 1)
    return seeds.map((s) => {
      const r = runScenario(sc, s, { backend, ...(onProgress ? { progress: (us: Micros) => at(s, us) } : {}) });
      if (onProgress) done(s);
      return r;
    });
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
              else w.postMessage({ scenario: sc, seed, progress: onProgress !== undefined } satisfies SeedRequest);
            };
            w.on('message', (m: SeedMessage) => {
              if ('simulatedUs' in m) at(m.seed, m.simulatedUs);
              else if (m.error !== undefined) reject(new CogmeshError('SIM_RUN_FAILED', `seed ${m.seed}: ${m.error}`));
              else {
                results.set(m.seed, m.result!);
                if (onProgress) done(m.seed);
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
