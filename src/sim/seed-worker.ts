import { parentPort } from 'node:worker_threads';
import { chooseBackend } from '../sensing/backend.js';
import { runScenario, sumsIq } from './run.js';
import { cpuBackend, type EnergyBackend } from '../sensing/energy.js';
import type { Scenario } from '../config/scenario.js';

/**
 * A worker thread of `runSeeds`: runs the seeds it is given, one message per
 * seed, and answers each with its result. A run is a pure function of the
 * scenario and the seed, so which worker runs it changes nothing in it.
 */
const port = parentPort;
if (!port) throw new Error('seed-worker runs as a worker thread of runSeeds');
/** The detector backend, probed once, on the first run whose detectors sum IQ (see sumsIq). */
let probed: EnergyBackend | undefined;
port.on('message', async (m: { scenario: Scenario; seed: number }) => {
  try {
    const backend = sumsIq(m.scenario) ? (probed ??= (await chooseBackend('auto')).backend) : cpuBackend;
    port.postMessage({ seed: m.seed, result: runScenario(m.scenario, m.seed, { backend }) });
  } catch (e) {
    port.postMessage({ seed: m.seed, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
});
