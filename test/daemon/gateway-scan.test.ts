import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { formatGateway } from '../../src/cli/ctl.js';
import { set } from '../../src/control/commands.js';
import { ControlError } from '../../src/control/protocol.js';
import { ConfigError } from '../../src/core/errors.js';
import { MeshNode } from '../../src/daemon/mesh.js';
import { routerOfAp } from '../../src/gateway/scan-reports.js';
import { encodeScanReport, SCAN_REPORT_MAX_BYTES } from '../../src/wire/scan-report.js';
import { cogmesh } from '../support/cli.js';
import { memoryLogger } from '../support/control-view.js';
import { startGatewayRouter, type GatewayRouter } from '../support/gateway-router.js';
import { until } from '../support/until.js';

const KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';

/** A UDP port nothing listens on now. */
async function freePort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * The gateway's scan-report listener in a running router (src/daemon/
 * gateway-scan.ts): reports over UDP, checked, reach the role's dependence
 * graph and its slices; the refused ones are counted by cause; a live change
 * of the gateway keeps the graph the reports made.
 */
describe("a gateway router takes its clients' scan reports over UDP", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-gw-scan-'));
  let router: GatewayRouter;
  let node: MeshNode;
  let port = 0;
  let sender: Socket;

  before(async () => {
    port = await freePort();
    // c1's hosts are on the loopback here, so that this test's reports come from inside its prefix.
    const clients = [
      { id: 'c1', prefix: '127.0.0.0/8', router: 1 },
      { id: 'c2', prefix: '10.0.2.0/24', router: 2 },
    ];
    const scan = { enabled: true, listen: '127.0.0.1', port, key: KEY, minIntervalMs: 0, aps: [{ name: '02:00:00:00:02:00', router: 2 }] };
    router = await startGatewayRouter(dir, clients, memoryLogger().log, { scan });
    node = router.node;
    sender = createSocket('udp4');
  });
  after(async () => {
    sender.close();
    await router.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (b: Uint8Array): Promise<void> => new Promise((r, j) => sender.send(b, port, '127.0.0.1', (e) => (e ? j(e) : r())));
  const key = new Uint8Array(Buffer.from(KEY, 'hex'));

  test('a sealed report from c1 that hears router 2 louder than its own makes c1 and c2 dependent (Type III), and the slices follow', async () => {
    assert.deepEqual(node.gateway()!.graph, []);
    assert.deepEqual(
      node.gateway()!.slices.map((s) => s.clients),
      [['c1', 'c2']],
    );
    // Router 2 by its BSSID (gateway.scan.aps), router 1 as r1; an AP outside the mesh is left out.
    const aps = new Map([
      ['r1', -72],
      ['02:00:00:00:02:00', -58],
      ['outside', -40],
    ]);
    await send(encodeScanReport({ client: 'c1', boot: 100, seq: 1, aps }, key));
    const g = await until('the graph to change', async () => (node.gateway()!.graph.length > 0 ? node.gateway()! : undefined), 5000);
    assert.deepEqual(g.graph, [{ a: 'c1', b: 'c2', kind: 'type-iii' }]);
    assert.deepEqual(
      g.slices.map((s) => s.clients),
      [['c1'], ['c2']],
    );
    assert.equal(g.scan!.counters.taken, 1);
    assert.equal(g.scan!.counters.graphChanges, 1);
    assert.deepEqual(g.scan!.latest[0]!.aps, { r1: -72, '02:00:00:00:02:00': -58, outside: -40 });
    // What `cogmesh ctl gateway` prints of it.
    const text = formatGateway(g);
    assert.match(text, /^scan reports on udp 127\.0\.0\.1:\d+: 1 taken \(1 changed the graph\); refused: malformed 0, badMac 0,/m);
    assert.match(text, /^ {2}c1 \(boot 100, seq 1\): r1 -72 dBm, 02:00:00:00:02:00 -58 dBm, outside -40 dBm$/m);
  });

  test('unsealed, forged, replayed, misdirected, malformed and oversized datagrams are counted by cause and change nothing', async () => {
    const quiet = new Map([
      ['r1', -50],
      ['r2', -90],
    ]);
    await send(encodeScanReport({ client: 'c1', boot: 100, seq: 2, aps: quiet })); // no MAC
    await send(encodeScanReport({ client: 'c1', boot: 100, seq: 2, aps: quiet }, new Uint8Array(16))); // another key
    await send(encodeScanReport({ client: 'c1', boot: 100, seq: 1, aps: quiet }, key)); // replayed count
    await send(encodeScanReport({ client: 'c2', boot: 1, seq: 1, aps: quiet }, key)); // c2's name, from outside its prefix
    await send(encodeScanReport({ client: 'c9', boot: 1, seq: 1, aps: quiet }, key)); // no such client
    await send(new Uint8Array([0x43, 0x4d, 0x53, 0x52, 9, 0, 0]));
    await send(new Uint8Array(SCAN_REPORT_MAX_BYTES + 1));
    const g = await until(
      'seven datagrams counted',
      async () => {
        const s = node.gateway()!;
        const c = s.scan!.counters;
        return c.badMac + c.stale + c.wrongSource + c.unknownClient + c.malformed + c.oversized >= 7 ? s : undefined;
      },
      5000,
    );
    assert.deepEqual(g.scan!.counters, {
      taken: 1,
      graphChanges: 1,
      malformed: 1,
      badMac: 2,
      unknownClient: 1,
      wrongSource: 1,
      stale: 1,
      rateLimited: 0,
      graphRefused: 0,
      oversized: 1,
    });
    assert.deepEqual(g.graph, [{ a: 'c1', b: 'c2', kind: 'type-iii' }], 'nothing refused reached the graph');
  });

  test('a live change of the gateway makes a new role that keeps the graph the reports made', async () => {
    assert.deepEqual(set(node, { 'gateway.rate.rateMbps': 10 }, undefined).changed, ['gateway.rate.rateMbps']);
    const g = node.gateway()!;
    assert.equal(g.clients[0]!.rateMbps, 10);
    assert.deepEqual(g.graph, [{ a: 'c1', b: 'c2', kind: 'type-iii' }]);
    // The counters go on, and the report taken before the change stays the newest: its replay is still refused.
    await send(encodeScanReport({ client: 'c1', boot: 100, seq: 1, aps: new Map([['r1', -50]]) }, key));
    await until('the replay counted', async () => (node.gateway()!.scan!.counters.stale === 2 ? true : undefined), 5000);
    assert.equal(node.gateway()!.scan!.counters.taken, 1);
    // Where the listener listens takes a restart.
    assert.throws(
      () => set(node, { 'gateway.scan.port': port + 1 }, undefined),
      (e: unknown) => e instanceof ControlError && /gateway\.scan\.port cannot change/.test(e.message),
    );
  });

  test('the client program reaches it, and a listen address this PC does not have is refused at start, naming it', async () => {
    const out = cogmesh('gateway', 'scan-report', '--to', `127.0.0.1:${port}`, '--client', 'c1', '--ap', 'r1=-50', '--ap', 'r2=-90');
    assert.equal(out.code, 0, out.err);
    // Unsealed: this gateway takes sealed reports only.
    await until('the report counted', async () => (node.gateway()!.scan!.counters.badMac >= 3 ? true : undefined), 5000);
    const bad = structuredClone(router.cfg);
    bad.node.id = 5;
    bad.gateway.scan.listen = '192.0.2.1';
    await assert.rejects(
      MeshNode.start(bad, memoryLogger().log),
      (e: unknown) => e instanceof ConfigError && /gateway\/scan/.test(e.message) && /EADDRNOTAVAIL/.test(e.message),
    );
  });

  test('AP names: a configured name, rN or N; anything else is outside the mesh', () => {
    const aps = new Map([['aa:bb', 7]]);
    assert.equal(routerOfAp('aa:bb', aps), 7);
    assert.equal(routerOfAp('r12', aps), 12);
    assert.equal(routerOfAp('12', aps), 12);
    for (const n of ['r', 'r012', 'r65535', 'x1', '', 'R1']) assert.equal(routerOfAp(n, aps), undefined, n);
  });
});
