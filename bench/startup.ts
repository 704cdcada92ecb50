/**
 * What starting the built `cogmesh` costs: CPU time (user + system, as
 * /usr/bin/time counts it) and wall time of `cogmesh --version`,
 * `cogmesh --help`, `cogmesh sim --help`, `cogmesh sim
 * config/scenarios/urbanx-chain.json --duration 1` with sensing off and on,
 * and a router started for one virtual second (config/examples/demo.json),
 * against `node -e 0` measured in the same run, the runs interleaved so that
 * a load that comes and goes touches every command alike. Needs `npm run
 * build` first, and GNU time at /usr/bin/time.
 *
 *   node --import tsx bench/startup.ts [--runs 9]
 *
 * Prints one line per command: the median and the least CPU seconds of the
 * runs, the median wall seconds, and each median as a multiple of `node -e
 * 0`'s; then the goals (`cogmesh --version` under 0.5 s, a one-second
 * simulation without sensing under 0.4 cpu-s).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { progress, progressWanted } from '../src/cli/progress.js';

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
  ['cogmesh --version', ['bin/cogmesh.js', '--version']],
  ['cogmesh --help', ['bin/cogmesh.js', '--help']],
  ['cogmesh sim --help', ['bin/cogmesh.js', 'sim', '--help']],
  ['cogmesh sim --duration 1 --cognitive off', ['bin/cogmesh.js', 'sim', scenario, '--duration', '1', '--cognitive', 'off']],
  ['cogmesh sim --duration 1', ['bin/cogmesh.js', 'sim', scenario, '--duration', '1']],
  ['cogmesh node --virtual --for 1', ['bin/cogmesh.js', 'node', '--config', 'config/examples/demo.json', '--virtual', '--for', '1']],
];

/** CPU seconds (user + system) and wall seconds of one run of node with `args`. */
function timed(args: string[]): { cpu: number; wall: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %e', process.execPath, ...args], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [user, system, wall] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { cpu: user! + system!, wall: wall! };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const samples = new Map<string, { cpu: number[]; wall: number[] }>(commands.map(([name]) => [name, { cpu: [], wall: [] }]));
// Between the timed processes, never inside one; on stderr, off with COGMESH_PROGRESS=0.
const shown = progress({ total: runs * commands.length, label: 'bench startup', unit: 'runs', enabled: progressWanted() });
for (let i = 0; i < runs; i++) {
  for (const [name, args] of commands) {
    const t = timed(args);
    samples.get(name)!.cpu.push(t.cpu);
    samples.get(name)!.wall.push(t.wall);
    shown.tick();
  }
}
shown.stop();
const base = samples.get('node -e 0')!;
for (const [name, { cpu, wall }] of samples) {
  const ratio = `${(median(cpu) / median(base.cpu)).toFixed(1)}x cpu, ${(median(wall) / median(base.wall)).toFixed(1)}x wall`;
  process.stdout.write(
    `${name.padEnd(42)} median ${median(cpu).toFixed(2)} cpu-s (least ${Math.min(...cpu).toFixed(2)}), ${median(wall).toFixed(2)} wall-s (${ratio} of node -e 0)\n`,
  );
}
process.stdout.write('goals: cogmesh --version under 0.5 wall-s; cogmesh sim --duration 1 --cognitive off under 0.4 cpu-s\n');
