import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MediumServer } from '../../radio/medium/server.js';
import { defaultNodeConfig } from '../../src/config/load.js';
import { MeshNode } from '../../src/daemon/mesh.js';
import { memoryLogger } from '../support/control-view.js';
import { MEDIUM_SETUP } from '../support/medium-setup.js';

const setup = MEDIUM_SETUP;

/**
 * A router started by hand on a medium: without a key file R3 runs
 * unauthenticated, and the node says so once at start, naming how to make a
 * key; with one it signs and says nothing of the kind.
 */
test('a router on a medium warns at start when R3 is unauthenticated, and not when it has a key file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-mesh-unauth-'));
  const server = new MediumServer(setup, { endpoint: `ipc://${join(dir, 'medium')}`, log: memoryLogger().log });
  await server.start();
  try {
    const keyFile = join(dir, 'r3.keys');
    writeFileSync(keyFile, JSON.stringify({ keys: [{ id: 1, hex: 'ab'.repeat(32) }] }), { mode: 0o600 });
    for (const [id, auth] of [
      [1, undefined],
      [2, { keyFile, sendKeyId: 1 }],
    ] as const) {
      const cfg = defaultNodeConfig(id);
      cfg.sim.medium.endpoint = `ipc://${join(dir, 'medium')}`;
      if (auth) cfg.routing.auth = auth;
      const { log, lines } = memoryLogger();
      const node = await MeshNode.start(cfg, log);
      await node.stop();
      const warned = lines.filter((l) => l.event === 'r3-unauthenticated');
      if (auth) assert.equal(warned.length, 0, 'no warning with a key file');
      else {
        assert.equal(warned.length, 1);
        assert.equal(warned[0]!.level, 40, 'a warning');
        assert.match(String(warned[0]!.msg), /cogmesh keygen --r3-key 1 --out FILE/);
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
