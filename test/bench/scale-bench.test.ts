import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { root } from '../support/cli.js';

// Runs the benchmark small: two meshes, a few seconds each. Its speed is the benchmark's business, not this test's.
test('bench:scale runs each mesh in a process of its own and reports events, RSS and the growth exponent against the smallest', () => {
  const args = ['--import', 'tsx', join(root, 'bench/scale.ts'), '--sizes', '6,12', '--duration', '8', '--cognitive', 'off', '--runs', '3', '--json'];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    rows: Array<{
      routers: number;
      flows: number;
      exponent: number | null;
      cpuExponent: number | null;
      report?: { wallMs: number; cpuMs: number; events: number; maxRssMb: number; sent: number; delivered: number };
      runs: Array<{ wallMs: number; cpuMs: number; events: number }>;
    }>;
  };
  assert.deepEqual(
    out.rows.map((x) => [x.routers, x.flows]),
    [
      [6, 1],
      [12, 1],
    ],
  );
  for (const row of out.rows) {
    const p = row.report!;
    assert.ok(p.wallMs > 0 && p.maxRssMb > 0, `${row.routers} routers: wall ${p.wallMs} ms, RSS ${p.maxRssMb} MB`);
    assert.ok(p.sent > 0 && p.delivered > 0 && p.delivered <= p.sent, `${row.routers} routers: ${p.delivered} of ${p.sent} delivered`);
    // A short mesh runs --runs times, each the same simulation; the row gives the median wall and CPU.
    assert.equal(row.runs.length, 3);
    assert.ok(row.runs.every((x) => x.events === p.events));
    const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[1]!;
    assert.equal(p.wallMs, middle(row.runs.map((x) => x.wallMs)));
    assert.equal(p.cpuMs, middle(row.runs.map((x) => x.cpuMs)));
  }
  // More routers, more HELLOs: more events; the first mesh is the reference.
  assert.ok(out.rows[1]!.report!.events > out.rows[0]!.report!.events);
  assert.equal(out.rows[0]!.exponent, null);
  assert.ok(Number.isFinite(out.rows[1]!.exponent));
  assert.equal(out.rows[0]!.cpuExponent, null);
  assert.ok(Number.isFinite(out.rows[1]!.cpuExponent));
});

test('bench:scale refuses a bad size, naming the flag', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/scale.ts'), '--sizes', '10,x'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--sizes: "x" is not an integer from 2 to 1000/);
});
