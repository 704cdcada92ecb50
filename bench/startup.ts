/**
 * What starting the built `cogmesh` costs: CPU time (user + system, as
 * /usr/bin/time counts it) of `cogmesh sim config/scenarios/urbanx-chain.json
 * --duration 1`, with sensing off and on, of `cogmesh sim --help` and of a
 * router started for one virtual second (config/examples/demo.json), against
 * `node -e 0` measured in the same run, the runs interleaved so that a load
 * that comes and goes touches every command alike. Needs `npm run build`
 * first, and GNU time at /usr/bin/time.
 *
 *   node --import tsx bench/startup.ts [--runs 9]
 *
 * Prints one line per command: the median and the least CPU seconds of the
 * runs, and the goal (a one-second simulation without sensing under 0.4 s).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`bench/startup.ts: --runs: "${values.runs}" is not an integer >= 1\n`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${root}/dist/cli/main.js`)) {
  process.stderr.write('bench/startup.ts: not built yet: run `npm run build` first\n');
  process.exit(2);
}

const scenario = 'config/scenarios/urbanx-chain.json';
const commands: Array<[name: string, args: string[]]> = [
  ['node -e 0', ['-e', '0']],
  ['cogmesh sim --help', ['bin/cogmesh.js', 'sim', '--help']],
  ['cogmesh sim --duration 1 --cognitive off', ['bin/cogmesh.js', 'sim', scenario, '--duration', '1', '--cognitive', 'off']],
  ['cogmesh sim --duration 1', ['bin/cogmesh.js', 'sim', scenario, '--duration', '1']],
  ['cogmesh node --virtual --for 1', ['bin/cogmesh.js', 'node', '--config', 'config/examples/demo.json', '--virtual', '--for', '1']],
];

/** CPU seconds (user + system) of one run of node with `args`. */
function cpuSeconds(args: string[]): number {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [user, system] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return user! + system!;
}

const samples = new Map<string, number[]>(commands.map(([name]) => [name, []]));
for (let i = 0; i < runs; i++) for (const [name, args] of commands) samples.get(name)!.push(cpuSeconds(args));
for (const [name, xs] of samples) {
  xs.sort((a, b) => a - b);
  process.stdout.write(`${name.padEnd(42)} median ${xs[Math.floor(xs.length / 2)]!.toFixed(2)} cpu-s, least ${xs[0]!.toFixed(2)}\n`);
}
process.stdout.write('goal: cogmesh sim --duration 1 --cognitive off under 0.4 cpu-s\n');
