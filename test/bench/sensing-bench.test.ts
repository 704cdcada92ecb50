import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Runs the benchmark small: it must build the C reference, agree with it on every count,
// and print the ratio last. Its speed is the benchmark's business, not this test's.
test('bench:sensing builds its native reference, agrees with it, and prints the ratio last', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/sensing.ts'), '--samples', '65536', '--runs', '2', '--no-gpu'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines.at(-1)!, /^ratio_vs_native=\d+\.\d+$/);
  assert.ok(lines.some((l) => /^native_c_msps=\d/.test(l)));
  assert.ok(lines.some((l) => /^ts_cpu_msps=\d/.test(l)));
  assert.ok(lines.some((l) => /^wasm_simd_msps=\d/.test(l)));
  assert.match(lines.at(-2)!, /^fast_path=(cpu|wasm|gpu)$/);
});
