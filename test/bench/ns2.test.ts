import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { root } from '../support/cli.js';

// .ci/run installs Debian's ns2; a development machine without it skips this test, saying so.
const hasNs = spawnSync('sh', ['-c', 'command -v ns'], { encoding: 'utf8' }).status === 0;

it(
  'bench:ns2 runs ns-2 and cogmesh side by side, and cogmesh is within 25% of ns-2',
  { skip: hasNs ? false : 'ns-2 (Debian package ns2) is not installed' },
  () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(root, 'bench/ns2.ts'), '--hops', '1,2', '--duration', '30', '--seeds', '1', '--json', '--check'],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 300_000,
      },
    );
    assert.equal(r.status, 0, `bench/ns2.ts failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as {
      rounds: number;
      rows: Array<{
        hops: number;
        ratio: number;
        within: boolean;
        ns2: { goodputMbps: { mean: number }; wallS: number; wallRoundsS: number[] };
        cogmesh: { goodputMbps: { mean: number }; wallS: number; wallRoundsS: number[]; processWallS: number };
      }>;
    };
    // Times are the median of 3 rounds (the default), each side's rounds given.
    assert.equal(out.rounds, 3);
    const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[1]!;
    assert.deepEqual(
      out.rows.map((x) => x.hops),
      [1, 2],
    );
    for (const row of out.rows) {
      assert.ok(row.ns2.goodputMbps.mean > 0.3, `ns-2 goodput at ${row.hops} hop(s): ${row.ns2.goodputMbps.mean}`);
      assert.ok(row.within && Math.abs(row.ratio - 1) <= 0.25, `ratio ${row.ratio} at ${row.hops} hop(s)`);
      assert.ok(row.ns2.wallS > 0 && row.cogmesh.wallS > 0, 'both wall times measured');
      assert.equal(row.ns2.wallRoundsS.length, 3);
      assert.equal(row.cogmesh.wallRoundsS.length, 3);
      assert.equal(row.ns2.wallS, middle(row.ns2.wallRoundsS));
      assert.equal(row.cogmesh.wallS, middle(row.cogmesh.wallRoundsS));
      // Whole processes, start-up included, each giving the in-process goodput (the bench checks that).
      assert.ok(row.cogmesh.processWallS > 0, 'whole-process wall time measured');
    }
    assert.ok(out.rows[0]!.ns2.goodputMbps.mean > out.rows[1]!.ns2.goodputMbps.mean, 'goodput falls with hops');
  },
);
