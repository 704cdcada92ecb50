import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { formatGateway } from '../../src/cli/ctl.js';
import type { ControlClient } from '../../src/control/client.js';
import type { ControlReply } from '../../src/control/protocol.js';
import type { MeshNode } from '../../src/daemon/mesh.js';
import { RouterMetrics } from '../../src/monitor/metrics.js';
import type { GatewayState } from '../../src/gateway/role.js';
import { memoryLogger } from '../support/control-view.js';
import { startGatewayRouter, type GatewayRouter } from '../support/gateway-router.js';

const T = 5000;

function ok(r: ControlReply): unknown {
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(r)}`);
  return r.result;
}

/**
 * The gateway role of a running router through the control API: `gateway`
 * reads its clients, queues, rates, slices and graph; `set` changes its
 * fields live (a new role from the new section), and a refused set leaves
 * the role and the configuration as they were.
 */
describe('control API: the gateway role of a running router', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-gw-ctl-'));
  let router: GatewayRouter;
  let node: MeshNode;
  let client: ControlClient;

  before(async () => {
    router = await startGatewayRouter(
      dir,
      [
        { id: 'sta1', prefix: '10.0.1.0/24', router: 1 },
        { id: 'sta2', prefix: '10.0.2.0/24', router: 1 },
        { id: 'sta3', prefix: '10.0.3.0/24', router: 3 },
      ],
      memoryLogger().log,
    );
    ({ node, client } = router);
  });
  after(async () => {
    await router.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const state = async (): Promise<GatewayState | null> => ok(await client.request('gateway', {}, T)) as GatewayState | null;

  test('gateway reads the clients, their queues and rates, the computed slices and the graph', async () => {
    const g = (await state())!;
    assert.equal(g.enabled, true);
    assert.equal(g.mode, 'computed');
    assert.deepEqual(
      g.clients.map((c) => [c.id, c.prefix, c.router, c.share, c.rateMbps, c.queueBytes, c.sent]),
      [
        ['sta1', '10.0.1.0/24', 1, 0.5, 22, 0, 0],
        ['sta2', '10.0.2.0/24', 1, 0.5, 22, 0, 0],
        ['sta3', '10.0.3.0/24', 3, 1, 22, 0, 0],
      ],
    );
    // What `cogmesh ctl gateway` prints of it.
    const text = formatGateway(g);
    assert.match(text, /^period 100 ms, slices computed/);
    assert.match(text, /^sta3 +10\.0\.3\.0\/24 +3 +1\.0000 +22\.000 /m);
    assert.match(text, /^ {2}\{sta1, sta3\} {2}0\.5000$/m);
    assert.match(text, /^ {2}sta1 -- sta2 {2}same-ap$/m);
    assert.equal(formatGateway(null), '(the gateway role is off)\n');
    assert.deepEqual(g.graph, [{ a: 'sta1', b: 'sta2', kind: 'same-ap' }]);
    assert.deepEqual(
      g.slices.map((s) => s.clients),
      [
        ['sta1', 'sta3'],
        ['sta2', 'sta3'],
      ],
    );
  });

  test("the monitor's metrics show each client's queue, rate and share", async () => {
    const text = await new RouterMetrics(node).registry.metrics();
    assert.match(text, /^cogmesh_gateway_share_ratio\{client="sta3",node="[^"]+"\} 1$/m);
    assert.match(text, /^cogmesh_gateway_rate_mbps\{client="sta1",node="[^"]+"\} 22$/m);
    assert.match(text, /^cogmesh_gateway_queue_bytes\{client="sta2",node="[^"]+"\} 0$/m);
    assert.match(text, /^cogmesh_gateway_packets_total\{client="sta1",outcome="dropped",node="[^"]+"\} 0$/m);
  });

  test('set takes gateway fields live: static slices and a rate', async () => {
    const r = ok(
      await client.request(
        'set',
        {
          values: {
            'gateway.slicing.mode': 'static',
            'gateway.slicing.static': [{ clients: ['sta3'], share: 0.25 }],
            'gateway.rate.rateMbps': 5,
          },
        },
        T,
      ),
    ) as { changed: string[] };
    assert.deepEqual(r.changed, ['gateway.rate.rateMbps', 'gateway.slicing.mode', 'gateway.slicing.static']);
    const g = (await state())!;
    assert.equal(g.mode, 'static');
    assert.deepEqual(
      g.clients.map((c) => [c.id, c.share, c.rateMbps]),
      [
        ['sta1', 0, 5],
        ['sta2', 0, 5],
        ['sta3', 0.25, 5],
      ],
    );
    assert.deepEqual(g.slices, [{ clients: ['sta3'], share: 0.25 }]);
  });

  test('a refused set names the path and leaves the role and the configuration as they were', async () => {
    const before = await state();
    const version = (ok(await client.request('get', { path: 'gateway' }, T)) as { version: string }).version;
    for (const values of [
      { 'gateway.slicing.static': [{ clients: ['nobody'], share: 0.5 }] },
      { 'gateway.slicing.static.0.share': 1.5 },
      { 'gateway.clients.0.prefix': '10.0.1.1/24' },
    ]) {
      const r = await client.request('set', { values }, T);
      assert.ok(!r.ok, JSON.stringify(r));
      assert.match(r.error.message, /gateway/);
      assert.ok(
        r.error.issues?.some((i) => i.path.startsWith('/gateway/')),
        JSON.stringify(r.error),
      );
    }
    assert.deepEqual(await state(), before);
    assert.equal((ok(await client.request('get', { path: 'gateway' }, T)) as { version: string }).version, version);
  });

  test('gateway off: the read answers null', async () => {
    ok(await client.request('set', { values: { 'gateway.enabled': false } }, T));
    assert.equal(await state(), null);
  });
});
