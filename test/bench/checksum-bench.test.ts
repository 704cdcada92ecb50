import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { keyValues, root } from '../support/cli.js';

const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/checksum.ts'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });

// Runs the benchmark small: both ways must agree on every size (the bench checks), and each size prints both times and their ratio.
// Its speed is the benchmark's business, not this test's.
test('bench:checksum times sumWords against its loop over six span sizes and prints the ratio of each', () => {
  const r = bench('--bytes', '1000000');
  assert.equal(r.status, 0, r.stderr);
  const kv = keyValues(r.stdout);
  assert.equal(kv.bytes, '1000000');
  for (const n of [40, 576, 1020, 1500, 9000, 65_536]) {
    for (const k of ['loop_ns', 'sumwords_ns', 'speedup']) assert.ok(Number(kv[`span_${n}_${k}`]) > 0, `span_${n}_${k}=${kv[`span_${n}_${k}`]}`);
  }
});

test('bench:checksum refuses a size it cannot time, naming the flag', () => {
  const r = bench('--bytes', '5');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--bytes: "5" is not an integer >= 1000000/);
});
