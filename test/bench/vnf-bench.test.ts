import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { keyValues, root } from '../support/cli.js';

// Runs the benchmark small: the sandboxed VNF must see every packet, and the ratios come last.
// Its speed is the benchmark's business, not this test's.
test('bench:vnf measures in-process and sandboxed calls, their CPU and the goal line, and prints their ratios', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/vnf.ts'), '--packets', '300'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const kv = keyValues(r.stdout);
  for (const k of [
    'inprocess_us_per_packet',
    'sandbox_us_per_packet',
    'sandbox_pipelined_us_per_packet',
    'ratio_sandbox_vs_inprocess',
    'ratio_pipelined_vs_inprocess',
    'sandbox_cpu_us_per_packet',
    'sandbox_pipelined_cpu_us_per_packet',
    'sandbox_waitasync_us_per_packet',
    'sandbox_nospin_us_per_packet',
  ]) {
    assert.ok(Number(kv[k]) > 0, `${k}=${kv[k]}`);
  }
  assert.ok(Number(kv.sandbox_idle_cpu_percent) >= 0, `sandbox_idle_cpu_percent=${kv.sandbox_idle_cpu_percent}`);
  assert.match(kv.goal_sequential_lt_10us ?? '', /^(yes|no)$/);
  assert.ok(r.stdout.trim().split('\n').at(-1)!.startsWith('ratio_pipelined_vs_inprocess='), 'the ratio last');
});
