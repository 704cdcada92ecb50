import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MediumServer } from '../../radio/medium/server.js';
import { defaultNodeConfig } from '../../src/config/load.js';
import { MeshNode } from '../../src/daemon/mesh.js';
import { memoryLogger } from '../support/control-view.js';
import { MEDIUM_SETUP } from '../support/medium-setup.js';
import { until } from '../support/until.js';
import { hasTshark, MALFORMED, tsharkFields } from '../support/tshark.js';

/**
 * Two routers on a medium process, router 1 capturing (`node --pcap`): its
 * file holds the authenticated HELLOs it sent and those it heard from
 * router 2, on R3's channel, stamped with the wall clock, and tshark with
 * the dissector reads them all, none malformed.
 */
test('a router on the medium captures its R3 traffic in pcapng', { skip: hasTshark ? false : 'tshark is not installed' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-mesh-pcap-'));
  const endpoint = `ipc://${join(dir, 'medium')}`;
  const server = new MediumServer(MEDIUM_SETUP, { endpoint, log: memoryLogger().log });
  await server.start();
  const nodes: MeshNode[] = [];
  try {
    const keyFile = join(dir, 'r3.keys');
    writeFileSync(keyFile, JSON.stringify({ keys: [{ id: 1, hex: 'ab'.repeat(32) }] }), { mode: 0o600 });
    const chunks: Uint8Array[] = [];
    const startedS = Date.now() / 1000;
    for (const id of [1, 2]) {
      const cfg = defaultNodeConfig(id);
      cfg.sim.medium.endpoint = endpoint;
      cfg.sim.medium.xM = 100 * id;
      cfg.routing.auth = { keyFile, sendKeyId: 1 };
      nodes.push(await MeshNode.start(cfg, memoryLogger().log, id === 1 ? { pcap: (b) => void chunks.push(b) } : {}));
    }
    const file = join(dir, 'r1.pcapng');
    const rows = async (): Promise<string[][]> => {
      await writeFile(file, chunks);
      return tsharkFields(file, [
        'frame.time_epoch',
        'frame.interface_name',
        'wlan.sa',
        'radiotap.channel.freq',
        'radiotap.dbm_antsignal',
        'cogmesh.hello.src',
        'cogmesh.auth.key_id',
      ]);
    };
    const hellos = await until(
      'HELLOs of both routers in the capture',
      async () => {
        const r = await rows();
        const srcs = new Set(r.map((x) => x[5]));
        return srcs.has('1') && srcs.has('2') ? r : undefined;
      },
      20_000,
    );
    for (const [time, ifc, , freq, signal, src, key] of hellos) {
      if (src === '') continue;
      assert.match(ifc!, /\/R3$/, 'heard and sent on R3');
      assert.equal(freq, '2412', 'R3 on channel 1');
      assert.equal(signal, '', 'the medium does not say the signal');
      assert.equal(key, '1', 'signed with key 1');
      assert.ok(Number(time) >= startedS - 1 && Number(time) < startedS + 60, `a wall-clock time stamp (${time})`);
    }
    assert.deepEqual(tsharkFields(file, ['frame.number'], MALFORMED), []);
  } finally {
    for (const n of nodes) await n.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
