import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadScenario } from '../../src/config/scenario.js';
import { runScenario } from '../../src/sim/run.js';

const wanSplit = fileURLToPath(new URL('../../config/scenarios/wan-split.json', import.meta.url));

/**
 * The gateway role in the simulator: wan-split.json's far host (node 3,
 * behind a 10 Mbps, 50 ms wired link to router 0) downloads over TCP to
 * router 1, one mesh hop past the gateway, with PNs off. Router 0 takes the
 * gateway role with router 1's prefix as its one client, served during a
 * static slice of T_on of every T = 100 ms at C, the unsliced flow's
 * throughput: the flow then gets C·T_on/T.
 */
describe('a time-sliced TCP flow through the gateway gets C·T_on/T', () => {
  const run = async (gateway: unknown, durationS = 40) => {
    const set = ['flows.0.dst=1'];
    if (gateway) set.push(`nodeOverrides=${JSON.stringify({ '0': { gateway } })}`);
    const r = runScenario(await loadScenario(wanSplit, { durationS, pn: false, set }), 1);
    return { ...r.flows[0]!, gateway: r.nodes[0]!.gateway };
  };
  const sliced = (rateMbps: number, share: number) => ({
    enabled: true,
    clients: [{ id: 'mobile', prefix: '10.0.1.0/24', router: 1 }],
    slicing: { periodMs: 100, mode: 'static', static: [{ clients: ['mobile'], share }] },
    rate: { adapt: false, rateMbps },
  });

  test('T_on/T = 1/2 and 1/4, within 15% of C·T_on/T; the gateway off changes nothing', async () => {
    const plain = await run(undefined);
    const c = plain.goodputMbps;
    assert.ok(c > 0.5, `unsliced goodput ${c} Mbps`);
    // Enabled with no client: every packet passes unshaped, and the run is the same.
    assert.equal(plain.gateway, undefined, 'no gateway figures without the role');
    const noClient = await run({ enabled: true });
    assert.equal(noClient.goodputMbps, c);
    assert.ok(noClient.gateway!.unshaped > 1000, `unshaped ${noClient.gateway!.unshaped}`);
    for (const share of [0.5, 0.25]) {
      const f = await run(sliced(c, share));
      const expected = c * share;
      assert.ok(Math.abs(f.goodputMbps - expected) / expected < 0.15, `T_on/T ${share}: ${f.goodputMbps} Mbps, C·T_on/T = ${expected.toFixed(3)} Mbps`);
      assert.equal(f.tcp!.corruptBytes, 0);
      const g = f.gateway!.clients[0]!;
      assert.equal(g.share, share);
      assert.ok(g.sent > 1000 && g.sent <= g.enqueued, JSON.stringify(g));
    }
  });

  test('with rate adaptation from 0.5 Mbps, Algorithm 2 raises v_j while the queue stays long: the flow gets more than it started at', async () => {
    const f = await run(
      {
        enabled: true,
        clients: [{ id: 'mobile', prefix: '10.0.1.0/24', router: 1 }],
        rate: { adapt: true, rateMbps: 0.5, intervalMs: 3000 },
      },
      60,
    );
    assert.ok(f.goodputMbps > 0.6, `goodput ${f.goodputMbps} Mbps`);
    assert.ok(f.gateway!.clients[0]!.rateMbps > 0.5, `v_j ${f.gateway!.clients[0]!.rateMbps} Mbps`);
    assert.equal(f.tcp!.corruptBytes, 0);
  });
});
