/**
 * The simulator as the package ships it: the build's compiled modules
 * (`npm run build`; `npm ci` runs it), not the sources through tsx. A bench
 * that times the simulator times this, so that what it measures is what
 * `cogmesh sim` runs.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { simulate as Simulate } from '../src/cli/sim.js';

const builtSim = fileURLToPath(new URL('../dist/src/cli/sim.js', import.meta.url));

/** The build's `simulate`; exits with a clear message when there is no build. */
export async function builtSimulate(bench: string): Promise<typeof Simulate> {
  if (!existsSync(builtSim)) {
    process.stderr.write(`${bench}: no build of the simulator (dist/src/cli/sim.js): run \`npm run build\` first\n`);
    process.exit(2);
  }
  return ((await import(builtSim)) as { simulate: typeof Simulate }).simulate;
}
