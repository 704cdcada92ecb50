import { parentPort } from 'node:worker_threads';
import { chooseBackend } from '../sensing/backend.js';
import { runScenario, sumsIq } from './run.js';
import { cpuBackend, type EnergyBackend } from '../sensing/energy.js';
import type { Micros } from '../core/time.js';
import type { SeedMessage, SeedRequest } from './parallel.js';

/**
 * A worker thread of `runSeeds`: runs the seeds it is given, one message per
 * seed, and answers each with its result. A run is a pure function of the
 * scenario and the seed, so which worker runs it changes nothing in it.
 */
const port = parentPort;
if (!port) throw new Error('seed-worker runs as a worker thread of runSeeds');
const answer = (m: SeedMessage): void => port.postMessage(m);
/** The detector backend, probed once, on the first run whose detectors sum IQ (see sumsIq). */
let probed: EnergyBackend | undefined;
port.on('message', async (m: SeedRequest) => {
  try {
    const backend = sumsIq(m.scenario) ? (probed ??= (await chooseBackend('auto')).backend) : cpuBackend;
    const progress = m.progress ? (simulatedUs: Micros) => answer({ seed: m.seed, simulatedUs }) : undefined;
    answer({ seed: m.seed, result: runScenario(m.scenario, m.seed, { backend, ...(progress ? { progress } : {}) }) });
  } catch (e) {
    answer({ seed: m.seed, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
});
