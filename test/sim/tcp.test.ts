import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import type { SimResult } from '../../src/sim/report.js';
import { runScenario } from '../../src/sim/run.js';
import { loadScenario, parseScenario } from '../../src/config/scenario.js';
import { streamBytes, streamByte, streamMismatches } from '../../src/traffic/bulk-tcp.js';
import { cogmesh, root } from '../support/cli.js';

const chain = join(root, 'config/scenarios/urbanx-chain.json');

describe('TCP flows in the simulator', () => {
  it("cogmesh sim --tcp reno --json reports the flow's goodput, drops and RTT, byte-identical for a seed", () => {
    const args = ['sim', chain, '--hops', '4', '--tcp', 'reno', '--duration', '25', '--json'];
    const a = cogmesh(...args);
    assert.equal(a.code, 0, a.err);
    const res = JSON.parse(a.out) as SimResult;
    const flow = res.runs[0]!.flows[0]!;
    assert.equal(flow.kind, 'tcp-bulk');
    assert.equal(flow.src, 0);
    assert.equal(flow.dst, 4);
    assert.ok(flow.goodputMbps > 0.05 && flow.goodputMbps < 2, `goodput ${flow.goodputMbps} Mbps over 4 hops`);
    const tcp = flow.tcp!;
    assert.equal(tcp.variant, 'reno');
    assert.equal(tcp.corruptBytes, 0, 'the sink reads exactly the bytes the source wrote');
    assert.ok(tcp.bytesDelivered > 100_000, `delivered ${tcp.bytesDelivered} bytes`);
    assert.equal(typeof tcp.dropRate, 'number');
    assert.equal(typeof tcp.dataDrops, 'number');
    assert.ok(tcp.rttSamples > 10 && tcp.rttMeanMs !== null && tcp.rttMeanMs > 5, `RTT ${tcp.rttMeanMs} ms from ${tcp.rttSamples} samples`);
    assert.ok(tcp.cwndMeanSegments !== null && tcp.cwndMeanSegments >= 1, 'cwnd sampled');
    assert.ok(res.summary[0]!.goodputMbps !== null, 'summary carries goodput');
    const b = cogmesh(...args);
    assert.equal(b.out, a.out, 'same seed, same bytes');
  });

  it('gives every variant its own congestion control and recovers losses without corrupting the stream', async () => {
    const goodputs = new Map<string, number>();
    for (const variant of ['reno', 'newreno', 'vegas', 'sack', 'cubic'] as const) {
      const sc = await loadScenario(chain, { hops: 2, tcp: variant, durationS: 20 });
      const r = runScenario(sc, 3);
      const f = r.flows[0]!;
      assert.equal(f.tcp?.variant, variant);
      assert.equal(f.tcp?.corruptBytes, 0, `${variant}: stream intact`);
      assert.ok(f.goodputMbps > 0.1, `${variant}: goodput ${f.goodputMbps}`);
      goodputs.set(variant, f.goodputMbps);
    }
    assert.ok(new Set(goodputs.values()).size > 1, `variants differ: ${JSON.stringify([...goodputs])}`);
  });

  it('a transfer of a set size completes and both ends close', async () => {
    const sc = await loadScenario(chain, { hops: 2, tcp: 'newreno', durationS: 30, pn: false, set: ['flows.0.bytes=200000', 'flows.0.startS=2'] });
    const f = runScenario(sc, 1).flows[0]!;
    assert.equal(f.tcp?.bytesDelivered, 200_000);
    assert.equal(f.tcp?.corruptBytes, 0);
    assert.equal(f.tcp?.failure, null);
  });

  it('the first window leaves at the handshake, not at a timeout; a flow stops at stopS', async () => {
    const sc = await loadScenario(chain, { hops: 1, tcp: 'reno', durationS: 12, cognitive: false, pn: false, set: ['flows.0.startS=3', 'flows.0.stopS=8'] });
    const f = runScenario(sc, 1).flows[0]!;
    assert.equal(f.tcp?.timeouts, 0, 'no timeout on a clean link');
    assert.ok(f.goodputMbps > 1, `goodput ${f.goodputMbps}`);
    // Nothing that arrives after the stop counts, and the source stops sending.
    assert.ok(f.throughputMbps <= f.goodputMbps * 1.05, `throughput ${f.throughputMbps} against goodput ${f.goodputMbps}`);
  });

  it('--cognitive off keeps every R1 on one channel with no sensing; --pn off removes the PNs', async () => {
    const sc = await loadScenario(chain, { hops: 3, tcp: 'reno', durationS: 15, cognitive: false, pn: false });
    assert.deepEqual(sc.pn.sources, []);
    assert.deepEqual(sc.pn.phases, []);
    const r = runScenario(sc, 1);
    for (const n of r.nodes) {
      assert.equal(n.r1Channel, 6, `router ${n.node} on the fixed channel`);
      assert.equal(n.sensingRounds, 0, `router ${n.node} never senses`);
      assert.equal(n.r1Changes.length, 1, `router ${n.node} tuned once`);
    }
    assert.ok(r.flows[0]!.goodputMbps > 0.2, `goodput ${r.flows[0]!.goodputMbps}`);
  });

  it('refuses a bad TCP flow whole, naming the field', () => {
    const base = { name: 't', topology: { kind: 'chain', nodes: 3, spacingM: 200 }, flows: [{ kind: 'tcp-bulk', variant: 'bbr' }] };
    assert.throws(
      () => parseScenario(base),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path.startsWith('/flows/0') && JSON.stringify(i).includes('variant')),
    );
    assert.throws(
      () => parseScenario({ ...base, flows: [{ kind: 'tcp-bulk', tcp: { mss: 10 } }] }),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/flows/0/tcp/mss'),
    );
    assert.throws(
      () => parseScenario({ ...base, flows: [{ kind: 'tcp-bulk' }], node: { channel: { cognitive: false } } }),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/node/channel/initialChannel'),
    );
  });

  it('the CLI refuses an unknown variant and a bad on/off', () => {
    const a = cogmesh('sim', chain, '--tcp', 'bbr');
    assert.notEqual(a.code, 0);
    assert.match(a.err, /--tcp: "bbr" is not one of reno, newreno, vegas, sack, cubic/);
    const b = cogmesh('sim', chain, '--pn', 'maybe');
    assert.notEqual(b.code, 0);
    assert.match(b.err, /--pn: "maybe" is not on or off/);
  });

  it('the stream pattern checks every byte', () => {
    const data = streamBytes(123_456, 200_000);
    assert.equal(streamMismatches(data, 123_456), 0);
    assert.equal(data[0], streamByte(123_456));
    data[77_777] = (data[77_777] ?? 0) ^ 1;
    assert.equal(streamMismatches(data, 123_456), 1);
    assert.ok(streamMismatches(streamBytes(0, 5000), 1000) > 4000, 'a shifted stream is caught');
  });
});

describe('TCP-ACC in the simulator', () => {
  it('--acc every splits the flow at every relay; every-2 at every second; a list at the routers named', async () => {
    // Goodput summed over three seeds: one 20 s run is at the mercy of where its PN bursts fall.
    const sessions = async (acc: string): Promise<{ goodput: number; corrupt: number | undefined; at: number[] }> => {
      const sc = await loadScenario(chain, { hops: 4, tcp: 'reno', durationS: 20, acc });
      const runs = [1, 2, 3].map((seed) => runScenario(sc, seed));
      const r = runs[0]!;
      const at = r.nodes.filter((nd) => nd.vnfs.some((v) => (v.counters.sessions ?? 0) > 0)).map((nd) => nd.node);
      const goodput = runs.reduce((sum, x) => sum + x.flows[0]!.goodputMbps, 0);
      const corrupt = runs.reduce((sum, x) => sum + (x.flows[0]!.tcp?.corruptBytes ?? NaN), 0);
      return { goodput, corrupt, at };
    };
    const none = await sessions('none');
    const every = await sessions('every');
    const every2 = await sessions('every-2');
    const listed = await sessions('1,3');
    assert.deepEqual(none.at, []);
    assert.deepEqual(every.at, [1, 2, 3], 'each relay split the connection');
    assert.deepEqual(every2.at, [2], 'every second router of the path');
    assert.deepEqual(listed.at, [1, 3]);
    for (const x of [none, every, every2, listed]) assert.equal(x.corrupt, 0, "the sink read exactly the source's stream");
    assert.ok(every.goodput > none.goodput * 1.2, `accelerated ${every.goodput} against ${none.goodput} Mbps`);
  });

  it('refuses a bad placement, naming the field', () => {
    const r = cogmesh('sim', chain, '--tcp', 'reno', '--acc', 'every-0');
    assert.equal(r.code, 2);
    assert.match(r.err, /\/acc\/placement/);
    assert.throws(
      () => parseScenario({ name: 't', topology: { kind: 'chain', nodes: 3, spacingM: 200 }, acc: { placement: 'every' } }),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/acc/placement' && /TCP flow/.test(i.expected)),
    );
  });
});

describe('link impairments', () => {
  it('lose and hold back data packets on the link named, and refuse a link outside the topology', async () => {
    const sc = await loadScenario(chain, {
      hops: 2,
      tcp: 'reno',
      durationS: 20,
      cognitive: false,
      pn: false,
      set: ['impairments=[{"from":1,"to":2,"lossProbability":0.05,"reorderProbability":0.1}]'],
    });
    const r = runScenario(sc, 1);
    const f = r.flows[0]!;
    const lost = r.nodes[2]!.drops.impaired ?? 0;
    assert.ok(
      lost > 0 && f.tcp!.dropReasons.impaired === f.tcp!.dataDrops,
      `the flow's data losses are the impairment's (${lost}, ${JSON.stringify(f.tcp!.dropReasons)})`,
    );
    assert.equal(r.nodes[1]!.drops.impaired ?? 0, 0, 'only the link into router 2');
    assert.equal(f.tcp!.corruptBytes, 0);
    assert.throws(
      () => parseScenario({ name: 't', topology: { kind: 'chain', nodes: 3, spacingM: 200 }, impairments: [{ from: 1, to: 7 }] }),
      (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/impairments/0/to'),
    );
  });
});
