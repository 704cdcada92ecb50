// `npm run build`: builds dist/ step by step, and skips a step whose outputs are all newer
// than every one of its inputs, so that a build after a small change (or none, as
// `npm start` runs it) redoes only what that change touched. `--force` redoes every step.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const force = process.argv.includes('--force');
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
// The scripts run as npm would run them, without starting npm for each (about 0.3 s of CPU a time).
const env = { ...process.env, PATH: `${join(root, 'node_modules/.bin')}${delimiter}${process.env.PATH}` };

/** The compiled validators and their code caches, which build:validators writes into dist/cli and dist/src/core: no input of any step. */
const validators = (path) => path.includes('schema-validators');

/**
 * The steps in order. `run` is the package.json script that makes the step's outputs from its
 * inputs (files or folders, taken whole); package.json is an input of every step, its
 * scripts being their commands. TypeScript's step has no outputs listed: `tsc -b` keeps
 * its own record (dist/.tsbuildinfo) and emits only what changed, so it always runs
 * (with `--force` passed on to it).
 */
const STEPS = [
  { run: 'build:tsc' },
  {
    run: 'build:cli',
    inputs: ['dist/src', 'dist/radio'],
    outputs: ['dist/cli/main.js', 'dist/cli/seed-worker.js', 'dist/cli/sandbox-worker.js', 'dist/cli/build-validators.js'],
    ignore: validators,
    after: pruneBundle,
  },
  {
    run: 'build:validators',
    inputs: ['dist/cli', 'config', 'hw'],
    outputs: [
      'dist/cli/schema-validators.cjs',
      'dist/cli/schema-validators.cjs.v8cache',
      'dist/src/core/schema-validators.cjs',
      'dist/src/core/schema-validators.cjs.v8cache',
      'dist/cli/schema-validators-members.cjs',
      'dist/cli/schema-validators-members.cjs.v8cache',
      'dist/src/core/schema-validators-members.cjs',
      'dist/src/core/schema-validators-members.cjs.v8cache',
    ],
    ignore: validators,
  },
  { run: 'build:page', inputs: ['src/monitor/page'], outputs: ['dist/monitor/page.js'] },
];

/**
 * After the bundle: removes from dist/cli every file that this build of it did not write
 * (esbuild's metafile lists them), save the validators. Chunk names are hashes of their
 * contents, so each build that changes a chunk writes it under a new name and would
 * otherwise leave the old one behind.
 */
function pruneBundle() {
  const dir = join(root, 'dist/cli');
  const meta = JSON.parse(readFileSync(join(root, 'dist/cli.meta.json'), 'utf8'));
  const written = new Set(Object.keys(meta.outputs).map((p) => join(root, p)));
  let removed = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (written.has(p) || validators(p)) continue;
    rmSync(p, { recursive: true, force: true });
    removed++;
  }
  if (removed > 0) process.stdout.write(`build: removed ${removed} files of earlier bundles from dist/cli\n`);
}

/** The latest modification time (ms) of a file, or of any file under a folder; 0 when there is none. */
function newest(path, ignore) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return ignore?.(path) ? 0 : st.mtimeMs;
  let t = 0;
  for (const entry of readdirSync(path)) t = Math.max(t, newest(join(path, entry), ignore));
  return t;
}

/** The earliest modification time (ms) of the outputs; 0 when one is missing. */
function oldest(paths) {
  let t = Infinity;
  for (const p of paths) t = Math.min(t, newest(p));
  return t;
}

for (const step of STEPS) {
  if (!force && step.outputs) {
    const changed = Math.max(newest(join(root, 'package.json')), ...step.inputs.map((p) => newest(join(root, p), step.ignore)));
    if (changed < oldest(step.outputs.map((p) => join(root, p)))) {
      process.stdout.write(`build: ${step.run} is up to date\n`);
      continue;
    }
  }
  const command = `${scripts[step.run]}${force && !step.outputs ? ' --force' : ''}`;
  const r = spawnSync(command, { cwd: root, env, shell: true, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  step.after?.();
}

// When the build last finished: a skipped step leaves its outputs older than an edit that
// changed nothing they depend on, so this, not their times, says the build is current
// (bench/ip/testbed.ts checks it against the sources).
writeFileSync(join(root, 'dist/.built'), `${new Date().toISOString()}\n`);
