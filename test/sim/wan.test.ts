import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runScenario } from '../../src/sim/run.js';
import { loadScenario, parseScenario, type ScenarioOverrides } from '../../src/config/scenario.js';
import { ConfigError } from '../../src/core/errors.js';

const wanSplit = fileURLToPath(new URL('../../config/scenarios/wan-split.json', import.meta.url));

/** wan-split.json shortened to `durationS`, with the overrides given. */
const wan = (durationS: number, o: ScenarioOverrides = {}) => loadScenario(wanSplit, { durationS, ...o });

describe('a far host behind a wired link reaches the mesh through its gateway', () => {
  test('the far host (node 3) downloads to the mobile host (router 2) two mesh hops past the gateway, end to end', async () => {
    const r = runScenario(await wan(15), 1);
    const f = r.flows[0]!;
    assert.equal(f.src, 3);
    assert.equal(f.dst, 2);
    assert.ok(f.tcp!.bytesDelivered > 100_000, `delivered ${f.tcp!.bytesDelivered} bytes`);
    assert.equal(f.tcp!.corruptBytes, 0);
    // Every data packet crossed the wire into the gateway, which forwarded it into the mesh; the ACKs came back over the wire.
    const h = r.hosts![0]!;
    assert.equal(h.host, 3);
    assert.equal(h.gateway, 0);
    assert.ok(h.up.delivered >= f.sent - 1, `the link took ${h.up.delivered} of ${f.sent}`);
    assert.ok(h.down.delivered > 50, `ACKs back: ${h.down.delivered}`);
    assert.ok(r.nodes[0]!.forwarded > 50 && r.nodes[1]!.forwarded > 50);
    // Without TCP-ACC the source's RTT spans the WAN's 100 ms and the mesh.
    assert.ok(f.tcp!.rttMinMs! > 100, `RTT min ${f.tcp!.rttMinMs} ms`);
  });

  for (const mode of ['split', 'e2e', 'as'] as const) {
    test(`TCP-ACC (${mode}) on the gateway splits the far host's connection there`, async () => {
      const r = runScenario(await wan(15, { acc: '0', accMode: mode }), 1);
      const f = r.flows[0]!;
      assert.ok(f.tcp!.bytesDelivered > 100_000, `delivered ${f.tcp!.bytesDelivered} bytes`);
      assert.equal(f.tcp!.corruptBytes, 0);
      const acc = r.nodes[0]!.vnfs.find((v) => v.type === 'tcp-acc')!;
      assert.equal(acc.counters.sessions, 1);
      assert.ok(acc.counters.bytesUp! > 100_000, `relayed ${acc.counters.bytesUp} bytes`);
      // The far host's own RTT is the WAN's, plus the gateway's hold in e2e mode.
      if (mode === 'e2e') assert.ok(f.tcp!.rttMeanMs! > 110, `e2e RTT ${f.tcp!.rttMeanMs} ms`);
      else assert.ok(f.tcp!.rttMeanMs! < 110, `${mode} RTT ${f.tcp!.rttMeanMs} ms`);
      assert.equal('finAcksHeld' in acc.counters, mode === 'as');
    });
  }

  test('with a byte count, the transfer closes through the gateway in every mode; as holds the FIN ACK until the mobile host has the FIN', async () => {
    for (const mode of ['none', 'split', 'e2e', 'as']) {
      const o: ScenarioOverrides = mode === 'none' ? { pn: false } : { pn: false, acc: '0', accMode: mode as 'split' };
      const sc = await wan(20, { ...o, set: ['flows.0.bytes=200000', 'flows.0.dst=1'] });
      const r = runScenario(sc, 2);
      const f = r.flows[0]!;
      assert.equal(f.tcp!.bytesDelivered, 200_000, `${mode}: delivered ${f.tcp!.bytesDelivered}`);
      assert.equal(f.tcp!.failure, null, `${mode}: ${f.tcp!.failure}`);
      if (mode === 'as') {
        const acc = r.nodes[0]!.vnfs.find((v) => v.type === 'tcp-acc')!;
        assert.ok(acc.counters.finAcksHeld! >= 1, `held ${acc.counters.finAcksHeld}`);
        assert.equal(acc.counters.sessionsReset, 0);
      }
    }
  });

  test('a flow between a wired host and a router one hop away, and a UDP flow from the host, cross the gateway', async () => {
    const sc = await wan(12, { pn: false, set: ['flows=[{"kind":"udp-cbr","src":3,"dst":1,"rateMbps":0.2,"packetBytes":500,"startS":3}]'] });
    const f = runScenario(sc, 1).flows[0]!;
    assert.ok(f.deliveryRatio > 0.95, `delivery ${f.deliveryRatio}`);
  });

  test('the same scenario and seed give identical results', async () => {
    const sc = await wan(10, { acc: '0', accMode: 'split' });
    assert.equal(JSON.stringify(runScenario(sc, 3)), JSON.stringify(runScenario(sc, 3)));
  });
});

describe('wired hosts: configuration errors', () => {
  const base = (hosts: unknown[], flows: unknown[] = [{ kind: 'tcp-bulk', src: 2, dst: 1 }]) =>
    parseScenario({ topology: { kind: 'chain', nodes: 2 }, hosts, flows }, 'wan');
  const issuesOf = (fn: () => unknown): Array<{ path: string; expected: string }> => {
    try {
      fn();
    } catch (e) {
      if (e instanceof ConfigError) return e.issues as Array<{ path: string; expected: string }>;
      throw e;
    }
    assert.fail('no ConfigError');
  };

  test('defaults: a 10 Mbps link, 50 ms each way, 100 packets of queue', () => {
    const sc = base([{ router: 0 }]);
    assert.deepEqual(sc.hosts, [{ name: 'host', router: 0, rateMbps: 10, delayMs: 50, queuePackets: 100, queueBytes: 0 }]);
  });

  test('a gateway that is not a router is refused at its path', () => {
    const issues = issuesOf(() => base([{ router: 5 }]));
    assert.ok(issues.some((i) => i.path === '/hosts/0/router' && /gateway/.test(i.expected)));
  });

  test('a link with no queue limit at all is refused', () => {
    const issues = issuesOf(() => base([{ router: 0, queuePackets: 0, queueBytes: 0 }]));
    assert.ok(issues.some((i) => i.path === '/hosts/0/queuePackets'));
  });

  test('a byte queue smaller than one packet is refused', () => {
    const issues = issuesOf(() => base([{ router: 0, queuePackets: 0, queueBytes: 500 }]));
    assert.ok(issues.some((i) => i.path === '/hosts/0/queueBytes' && /one packet/.test(i.expected)));
  });

  test('a rate of 0 and a negative delay are refused by the schema', () => {
    assert.ok(issuesOf(() => base([{ router: 0, rateMbps: 0 }])).some((i) => i.path === '/hosts/0/rateMbps'));
    assert.ok(issuesOf(() => base([{ router: 0, delayMs: -5 }])).some((i) => i.path === '/hosts/0/delayMs'));
  });

  test('a flow to a node that is neither a router nor a host is refused, naming both ranges', () => {
    const issues = issuesOf(() => base([{ router: 0 }], [{ kind: 'tcp-bulk', src: 3, dst: 1 }]));
    const i = issues.find((x) => x.path === '/flows/0/src');
    assert.ok(i && /wired host \(2\.\.2\)/.test(i.expected), JSON.stringify(issues));
  });
});
