import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScenario } from '../../src/sim/run.js';
import { loadScenario } from '../../src/config/scenario.js';

const chain = new URL('../../config/scenarios/urbanx-chain.json', import.meta.url).pathname;
const diamond = new URL('../../config/scenarios/testbed-diamond.json', import.meta.url).pathname;

test("the CETT controller on a 4-hop chain: its flow tables carry the flow and its TCP-ACCs sit on the relays; goodput equals the static placement's", async () => {
  const run = async (controller: boolean) => runScenario(await loadScenario(chain, { hops: 4, tcp: 'reno', acc: 'every', controller, durationS: 40 }), 1);
  const stat = await run(false);
  const ctl = await run(true);
  const g = (r: typeof stat) => (r.flows[0] as { goodputMbps: number }).goodputMbps;
  assert.ok(g(ctl) > 0.2, `the flow runs: ${g(ctl)} Mbps`);
  assert.equal(g(ctl), g(stat), 'same path, same relays: the same figure');
  assert.deepEqual(
    ctl.nodes.map((n) => n.vnfs.length),
    [0, 1, 1, 1, 0],
    'TCP-ACC on the relays only',
  );
  assert.ok(
    ctl.nodes.slice(1, 4).every((n) => n.byFlowTable > 1000),
    `relays forward by the flow table: ${ctl.nodes.map((n) => n.byFlowTable)}`,
  );
  assert.ok(
    stat.nodes.every((n) => n.byFlowTable === 0),
    'without the controller the table is empty',
  );
});

test('on the diamond, the controller moves the flow to the other relay when the one it used fails', async () => {
  const sc = await loadScenario(diamond, {
    controller: true,
    durationS: 40,
    set: ['events=[{"atS": 20, "node": 1, "action": "fail"}, {"atS": 20, "node": 2, "action": "fail"}]'],
  });
  // Which relay does the controller pick? Fail only that one.
  const probe = runScenario(await loadScenario(diamond, { controller: true, durationS: 15 }), 1);
  const used = probe.nodes[1]!.byFlowTable > probe.nodes[2]!.byFlowTable ? 1 : 2;
  const other = used === 1 ? 2 : 1;
  sc.events = [{ atS: 20, node: used, action: 'fail' }];
  const r = runScenario(sc, 1);
  const f = r.flows[0] as { received: number; sent: number };
  assert.ok(
    r.nodes[other]!.byFlowTable > 50,
    `router ${other} carries the flow by its flow table after router ${used} failed: ${r.nodes.map((n) => n.byFlowTable)}`,
  );
  assert.ok(f.received > 0.8 * f.sent, `most packets arrive: ${f.received} of ${f.sent}`);
});

test('a flow that stops ends at the controller: its TCP-ACCs stop on every relay', async () => {
  const run = async (stopS: number) =>
    runScenario(await loadScenario(chain, { hops: 3, tcp: 'reno', acc: 'every', controller: true, durationS: 40, set: [`flows.0.stopS=${stopS}`] }), 1);
  const ended = await run(20);
  const running = await run(0);
  const states = (r: typeof ended) => r.nodes.map((n) => n.vnfs.map((v) => `${v.state}${v.reason ? `:${v.reason}` : ''}`).join(','));
  assert.deepEqual(states(running), ['', 'running', 'running', ''], 'a flow that runs keeps its TCP-ACCs');
  assert.deepEqual(states(ended), ['', 'stopped:terminated', 'stopped:terminated', ''], 'the flow ended: its TCP-ACCs were stopped');
  // The relay's table carried the flow while it ran.
  const relayTable = (r: typeof ended) => r.nodes[1]!.byFlowTable;
  assert.ok(
    relayTable(ended) > 300 && relayTable(ended) < relayTable(running),
    `the relay's table carried the flow until it ended: ${relayTable(ended)} of ${relayTable(running)}`,
  );
});
