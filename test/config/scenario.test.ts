import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import { bandConfig, loadScenario, nodeCount, parseScenario, placeNodes, routerConfig, type Scenario } from '../../src/config/scenario.js';

const minimal = { topology: { kind: 'chain' } };

function refused(input: unknown, path: string, expected: RegExp, o = {}): void {
  assert.throws(
    () => parseScenario(input, 'test', o),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      const issue = e.issues.find((i) => i.path === path);
      assert.ok(issue, `no issue at ${path}: ${e.message}`);
      assert.match(issue.expected, expected);
      return true;
    },
  );
}

describe('scenario: defaults and validation', () => {
  test('a minimal scenario is completed by the schema', () => {
    const sc = parseScenario(minimal);
    assert.equal(sc.durationS, 100);
    assert.deepEqual(sc.topology, { kind: 'chain', nodes: 5, spacingM: 200 });
    assert.equal(sc.medium.txRangeM, 250);
    assert.equal(sc.medium.csRangeM, 550);
    assert.equal(sc.medium.dataRateMbps, 2);
    assert.equal(sc.seeds, 1);
    assert.deepEqual(sc.flows, []);
  });

  test('the input is not changed', () => {
    const input = { topology: { kind: 'chain' } };
    parseScenario(input);
    assert.deepEqual(input, { topology: { kind: 'chain' } });
  });

  test('the shipped urbanx-chain scenario is valid and says what the seeds say', async () => {
    const sc = await loadScenario('config/scenarios/urbanx-chain.json');
    assert.equal(nodeCount(sc.topology), 5);
    const cfg = routerConfig(sc, 2, sc.seed);
    assert.equal(cfg.sensing.durationMs, 70);
    assert.equal(cfg.switching.intervalMs, 50);
    assert.equal(cfg.switching.overheadUs, 1000);
    assert.equal(cfg.channel.capacityMbps, 2);
    const flow = sc.flows[0]!;
    assert.equal(flow.kind === 'udp-cbr' ? flow.packetBytes : undefined, 1000);
    assert.equal(bandConfig(sc, 11).pn.length, 11);
  });

  test("a router's configuration for another seed is the checked one with its own seed, and a changed scenario is checked again", async () => {
    const sc = await loadScenario('config/scenarios/urbanx-chain.json', { seeds: 3 });
    const withSeed = (seed: number, index: number): unknown => {
      const s = structuredClone(sc);
      return { ...routerConfig(s, index, seed) };
    };
    for (const seed of [1, 2, 4294967295]) {
      for (const index of [0, 3]) {
        const cfg = routerConfig(sc, index, seed);
        // What a scenario checked for the first time (a copy: no configuration kept) gives.
        assert.deepEqual(cfg, withSeed(seed, index), `seed ${seed}, router ${index}`);
        assert.equal(cfg.node.seed, (seed * 1000003 + index) >>> 0);
        assert.equal(cfg.node.id, index);
        // A caller's changes stay in its copy.
        cfg.sensing.durationMs = 1;
        cfg.node.name = 'changed';
      }
    }
    assert.equal(routerConfig(sc, 3, 5).sensing.durationMs, 70);
    assert.equal(routerConfig(sc, 3, 5).node.name, 'r3');
    // The scenario changed after its routers' configurations were checked: checked again, refused whole.
    (sc.node as { sensing?: Record<string, unknown> }).sensing = { durationMs: -1 };
    assert.throws(
      () => routerConfig(sc, 3, 5),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/node/sensing/durationMs'),
    );
    (sc.node as { sensing?: Record<string, unknown> }).sensing = { durationMs: 60 };
    assert.equal(routerConfig(sc, 3, 5).sensing.durationMs, 60);
  });

  test('every shipped scenario is valid', async () => {
    const dir = 'config/scenarios';
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 3, files.join(', '));
    for (const f of files) {
      const sc = await loadScenario(join(dir, f));
      assert.ok(sc.flows.length > 0, `${f} has traffic`);
    }
  });

  test('unknown fields, bad kinds and out-of-range values are named by path', () => {
    refused({ ...minimal, durationz: 3 }, '/durationz', /no such field/);
    refused({ topology: { kind: 'ring' } }, '/topology/kind', /one of "chain", "dumbbell", "grid", "random", "positions"/);
    refused({ topology: { kind: 'chain', nodes: 1 } }, '/topology/nodes', />= 2/);
    refused({ ...minimal, medium: { txRangeM: 300, csRangeM: 200 } }, '/medium/csRangeM', /at least medium.txRangeM/);
    refused({ ...minimal, medium: { phy: '802.11g', dataRateMbps: 2 } }, '/medium/dataRateMbps', /802.11g/);
  });

  test('flows must name routers of the topology', () => {
    refused({ ...minimal, flows: [{ kind: 'udp-cbr', src: 7 }] }, '/flows/0/src', /0\.\.4/);
    refused({ ...minimal, flows: [{ kind: 'udp-cbr', src: 4, dst: 'last' }] }, '/flows/0/dst', /other than the source/);
    refused({ ...minimal, flows: [{ kind: 'udp-cbr', startS: 10, stopS: 5 }] }, '/flows/0/stopS', /later than startS/);
  });

  test('node sections are checked as node configurations, at their path in the scenario', () => {
    refused({ ...minimal, node: { sensing: { durationMs: 'long' } } }, '/node/sensing/durationMs', /integer/);
    refused({ ...minimal, nodeOverrides: { '3': { switching: { intervalMs: 0 } } } }, '/nodeOverrides/3/switching/intervalMs', />= 1/);
    refused({ ...minimal, nodeOverrides: { '9': {} } }, '/nodeOverrides/9', /router of the topology/);
  });

  test('PN channels must be in the plan', () => {
    refused({ ...minimal, pn: { sources: [{ channels: [3, 12], pattern: { kind: 'off' } }] } }, '/pn/sources/0/channels/1', /1\.\.11/);
  });

  test('--hops sets a chain length and is refused for other topologies', () => {
    assert.equal(nodeCount(parseScenario(minimal, 's', { hops: 2 }).topology), 3);
    refused({ topology: { kind: 'grid' } }, '/topology/kind', /chain/, { hops: 2 });
  });

  test('--set overrides any field and is validated like the file', () => {
    const sc = parseScenario(minimal, 's', { set: ['medium.rtsCts=true', 'topology.spacingM=150'] });
    assert.equal(sc.medium.rtsCts, true);
    assert.equal((sc.topology as { spacingM: number }).spacingM, 150);
    refused(minimal, '/medium/nosuch', /no such field/, { set: ['medium.nosuch=1'] });
    refused(minimal, '/node/sensing/memry', /no such field/, { set: ['node.sensing.memry=0.9'] });
    assert.equal(routerConfig(parseScenario(minimal, 's', { set: ['node.sensing.memory=0.9'] }), 0, 1).sensing.memory, 0.9);
    refused({ ...minimal, medium: {} }, '/medium/txRangeM', /number/, { set: ['medium.txRangeM="far"'] });
  });
});

describe('scenario: the sensing model', () => {
  test('statistical unless the scenario or the command line says iq', () => {
    assert.deepEqual(parseScenario(minimal).sensing, { model: 'statistical' });
    assert.equal(parseScenario({ ...minimal, sensing: { model: 'iq' } }).sensing.model, 'iq');
    assert.equal(parseScenario(minimal, 'test', { sensingModel: 'iq' }).sensing.model, 'iq');
    assert.equal(parseScenario(minimal, 'test', { set: ['sensing.model="iq"'] }).sensing.model, 'iq');
  });

  test('any other model is refused at /sensing/model, from the file, an override or --set', () => {
    refused({ ...minimal, sensing: { model: 'gamma' } }, '/sensing/model', /"iq", "statistical"/);
    refused(minimal, '/sensing/model', /"iq", "statistical"/, { sensingModel: 'IQ' });
    refused(minimal, '/sensing/model', /"iq", "statistical"/, { set: ['sensing.model=3'] });
    refused({ ...minimal, sensing: { modle: 'iq' } }, '/sensing/modle', /allowed: model/);
  });
});

describe('scenario: topologies', () => {
  const sc = (topology: unknown): Scenario => parseScenario({ topology });

  test('chain and grid positions', () => {
    assert.deepEqual(placeNodes(sc({ kind: 'chain', nodes: 3, spacingM: 100 }).topology, 250, 1), [
      { xM: 0, yM: 0 },
      { xM: 100, yM: 0 },
      { xM: 200, yM: 0 },
    ]);
    const g = placeNodes(sc({ kind: 'grid', rows: 2, cols: 3 }).topology, 250, 1);
    assert.equal(g.length, 6);
    assert.deepEqual(g[4], { xM: 200, yM: 200 });
  });

  test('dumbbell: 0 and 1 reach 2 but not 3; 4 reaches 5 and 6', () => {
    const p = placeNodes(sc({ kind: 'dumbbell' }).topology, 250, 1);
    const d = (a: number, b: number): number => Math.hypot(p[a]!.xM - p[b]!.xM, p[a]!.yM - p[b]!.yM);
    for (const [a, b] of [
      [0, 2],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
      [4, 6],
    ] as const)
      assert.ok(d(a, b) <= 250, `${a}-${b}`);
    for (const [a, b] of [
      [0, 3],
      [1, 3],
      [2, 4],
      [3, 5],
      [3, 6],
    ] as const)
      assert.ok(d(a, b) > 250, `${a}-${b}`);
  });

  test('random placement is connected and the same for a seed', () => {
    const t = sc({ kind: 'random', nodes: 12, widthM: 700, heightM: 700 }).topology;
    const a = placeNodes(t, 250, 5);
    assert.deepEqual(placeNodes(t, 250, 5), a);
    assert.notDeepEqual(placeNodes(t, 250, 6), a);
  });

  test('an area too large to connect is refused with a clear reason', () => {
    assert.throws(() => placeNodes(sc({ kind: 'random', nodes: 3, widthM: 1e6, heightM: 1e6 }).topology, 250, 1), /connected within 250 m/);
  });
});
