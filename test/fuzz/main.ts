import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runAny, type TargetReport } from './run.js';
import { TARGETS } from './targets.js';

/**
 * `npm run fuzz -- [--n N] [--seed S] [--target NAME[,NAME...]] [--index I] [--slow-ms MS] [--out DIR]`
 *
 * Runs every parser (or those named) over N random and mutated inputs each
 * and prints, per target, the inputs, the clean refusals, the accepted, the
 * escapes and the inputs a second. Each escape is written to DIR (default
 * test-artifacts/fuzz) as a JSON file with its target, seed, index, error,
 * stack and input; `--target T --seed S --index I` runs that one input
 * again. Exits 1 when anything escaped, 2 on a usage error.
 */

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    target: { type: 'string' },
    index: { type: 'string' },
    'slow-ms': { type: 'string', default: '2000' },
    out: { type: 'string', default: 'test-artifacts/fuzz' },
    list: { type: 'boolean', default: false },
  },
});

function usage(message: string): never {
  process.stderr.write(`fuzz: ${message}\n`);
  process.exit(2);
}

const int = (name: string, s: string, min: number, max: number): number => {
  const v = Number(s);
  if (!Number.isSafeInteger(v) || v < min || v > max) usage(`--${name} ${s}: expected an integer in [${min}, ${max}]`);
  return v;
};

if (values.list) {
  for (const t of TARGETS) process.stdout.write(`${t.name.padEnd(14)} ${t.doc}\n`);
  process.exit(0);
}

const n = int('n', values.n ?? '10000', 1, Number.MAX_SAFE_INTEGER);
const seed = int('seed', values.seed ?? '1', 0, 0xffff_ffff);
const slowMs = int('slow-ms', values['slow-ms'] ?? '2000', 1, Number.MAX_SAFE_INTEGER);
const index = values.index === undefined ? undefined : int('index', values.index, 0, Number.MAX_SAFE_INTEGER);
const names = values.target?.split(',') ?? TARGETS.map((t) => t.name);
const unknown = names.filter((name) => !TARGETS.some((t) => t.name === name));
if (unknown.length > 0) usage(`no target ${unknown.join(', ')} (targets: ${TARGETS.map((t) => t.name).join(', ')})`);

const rate = (r: TargetReport): string => Math.round(r.inputs / Math.max(r.seconds, 1e-9)).toLocaleString('en-US');
const row = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(14) : c.padStart(11))).join(' ');

process.stdout.write(`fuzz: seed ${seed}, ${index !== undefined ? `input ${index} only` : `${n.toLocaleString('en-US')} inputs per target`}\n`);
process.stdout.write(row(['target', 'inputs', 'refused', 'accepted', 'escapes', 'inputs/s', 'slowest ms']) + '\n');
const reports: TargetReport[] = [];
for (const t of TARGETS.filter((x) => names.includes(x.name))) {
  const progress = (done: number): void => {
    if (process.stderr.isTTY) process.stderr.write(`\r${t.name}: ${done.toLocaleString('en-US')}`);
  };
  const r = runAny(t, { seed, n, slowMs, index, progress });
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  reports.push(r);
  process.stdout.write(
    row(
      [r.target, r.inputs, r.refused, r.accepted, r.escapes.length, rate(r), r.slowestMs.toFixed(1)].map((c) =>
        typeof c === 'number' ? c.toLocaleString('en-US') : c,
      ),
    ) + '\n',
  );
  for (const e of r.escapes) {
    const out = values.out ?? 'test-artifacts/fuzz';
    mkdirSync(out, { recursive: true });
    const file = `${out}/${e.target}-seed${e.seed}-input${e.index}.json`;
    writeFileSync(file, JSON.stringify(e, null, 2) + '\n');
    process.stdout.write(
      `  ESCAPE input ${e.index}: ${e.error}\n  written to ${file}; again: npm run fuzz -- --target ${e.target} --seed ${e.seed} --index ${e.index}\n`,
    );
  }
}
const escapes = reports.reduce((s, r) => s + r.escapes.length, 0);
const inputs = reports.reduce((s, r) => s + r.inputs, 0);
process.stdout.write(`fuzz: ${inputs.toLocaleString('en-US')} inputs, ${escapes} escape${escapes === 1 ? '' : 's'}\n`);
process.exitCode = escapes > 0 ? 1 : 0;
