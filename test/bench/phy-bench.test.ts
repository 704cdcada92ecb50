import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Runs the benchmark small: every row there, both kernels measured, every frame found by the
// receiver. Its speed is the benchmark's business, not this test's.
test('bench:phy measures TX and RX at 1 and 2 samples per chip and at 20 and 25 Msample/s, on both kernels, and finds every frame', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/phy.ts'), '--frames', '2', '--bytes', '40', '--seconds', '0.02', '--json'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    wasm: string;
    rows: Array<{
      path: string;
      deviceHz: number | null;
      samplesPerChip: number;
      needMsps: number;
      tsMsps: number;
      wasmMsps: number | null;
      framesFound?: number;
      framesSent?: number;
    }>;
  };
  assert.equal(out.wasm, 'simd128');
  assert.deepEqual(
    out.rows.map((x) => `${x.path} ${x.samplesPerChip} ${x.deviceHz ?? '-'} ${x.needMsps}`),
    [
      'tx 1 - 11',
      'tx 1 - 11',
      'tx 2 - 22',
      'tx 2 - 22',
      'tx 2 20000000 20',
      'tx 1 20000000 20',
      'tx 2 25000000 25',
      'tx 1 25000000 25',
      'rx 1 - 11',
      'rx 1 - 11',
      'rx 2 - 22',
      'rx 2 - 22',
      'rx 2 20000000 20',
      'rx 2 25000000 25',
    ],
  );
  for (const x of out.rows) {
    assert.ok(x.tsMsps > 0);
    if (x.framesFound !== undefined) assert.equal(x.framesFound, x.framesSent, `${x.path} ${x.deviceHz}`);
  }
  assert.equal(out.rows.filter((x) => x.wasmMsps !== null).length, 12);
  // Over noise alone (the first row at each of 11 and 22) nothing is sent and nothing found.
  assert.deepEqual(
    out.rows.filter((x) => x.framesSent === 0).map((x) => x.framesFound),
    [0, 0],
  );
  assert.deepEqual(
    out.rows.filter((x) => x.framesSent === 2).map((x) => x.framesFound),
    [2, 2, 2, 2],
  );
});
