import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runSeeds } from '../../src/sim/parallel.js';
import { runScenario } from '../../src/sim/run.js';
import { loadScenario, parseScenario } from '../../src/config/scenario.js';
import { summarize, type SimResult } from '../../src/sim/report.js';
import { cogmesh } from '../support/cli.js';

/** A short chain with no PN traffic and a light UDP flow. */
function quiet(hops: number, extra: Record<string, unknown> = {}) {
  return parseScenario({
    name: 'quiet',
    durationS: 12,
    topology: { kind: 'chain', nodes: hops + 1 },
    medium: { controlChannelPn: false },
    node: { sensing: { durationMs: 20, periodMs: 1000 } },
    flows: [{ kind: 'udp-cbr', src: 0, dst: 'last', rateMbps: 0.2, packetBytes: 500, startS: 3 }],
    ...extra,
  });
}

describe('simulator: a mesh carries packets', () => {
  test('a light UDP flow crosses a 3-hop chain with no PN traffic, nearly all of it', () => {
    const r = runScenario(quiet(3), 1);
    const f = r.flows[0]!;
    assert.ok(f.sent > 400, `sent ${f.sent}`);
    assert.ok(f.deliveryRatio > 0.95, `delivery ${f.deliveryRatio}`);
    assert.ok(Math.abs(f.throughputMbps - 0.2) < 0.02, `throughput ${f.throughputMbps}`);
    // Every relay forwarded, and routers sit on distinct R1 channels next to each other.
    for (const n of r.nodes.slice(1, -1)) assert.ok(n.forwarded > 400, `router ${n.node} forwarded ${n.forwarded}`);
    for (const n of r.nodes) assert.ok(n.r1Channel !== null && n.r1Channel !== 1, 'R1 has a channel and it is not the control channel');
  });

  test('the same scenario and seed give byte-identical results; another seed does not', () => {
    const sc = quiet(2, { pn: { sources: [{ channels: 'all', pattern: { kind: 'onoff', idleMs: 800, busyMs: 200, distribution: 'exponential' } }] } });
    const a = JSON.stringify(summarize('q', sc.durationS, [runScenario(sc, 4)]));
    const b = JSON.stringify(summarize('q', sc.durationS, [runScenario(sc, 4)]));
    const c = JSON.stringify(summarize('q', sc.durationS, [runScenario(sc, 5)]));
    assert.equal(a, b);
    assert.notEqual(a, c);
  });

  test('PN bursts cost packets when frames may not wait for them', () => {
    const pn = { sources: [{ channels: 'all', pattern: { kind: 'onoff', idleMs: 300, busyMs: 300, distribution: 'exponential' } }] };
    const clear = runScenario(quiet(2), 2).flows[0]!;
    const hit = runScenario(quiet(2, { pn, medium: { controlChannelPn: false, pnCarrierSense: false } }), 2);
    const pnLosses = hit.nodes.reduce((a, n) => a + (n.mac.R1.pnLosses ?? 0), 0);
    assert.ok(pnLosses > 10, `PN losses ${pnLosses}`);
    assert.ok(hit.flows[0]!.delayMeanMs! > clear.delayMeanMs!, 'retries after PN losses add delay');
  });

  test('without PN traffic the routers settle on distinct channels within two hops and stay', async () => {
    // urbanx-chain's routers end their sensing rounds within a few ms of one another:
    // without p-persistence (probability 1) they all leave a shared channel together, forever.
    for (const [p, settles] of [
      [1, false],
      [0.5, true],
    ] as const) {
      for (const seed of [3, 4]) {
        const sc = await loadScenario('config/scenarios/urbanx-chain.json', {
          hops: 3,
          durationS: 40,
          set: ['pn.sources=[]', `node.channel.contendedMoveProbability=${p}`, 'flows.0.rateMbps=0.5'],
        });
        const r = runScenario(sc, seed);
        const moves = Math.max(...r.nodes.map((n) => n.r1Changes.length));
        const ch = r.nodes.map((n) => n.r1Channel);
        const distinct = ch.every((c, i) => c !== ch[i + 1] && c !== ch[i + 2]);
        if (settles) {
          assert.ok(moves <= 4, `p=${p} seed ${seed}: a router moved R1 ${moves} times`);
          assert.ok(distinct, `p=${p} seed ${seed}: R1 channels ${ch.join(' ')} repeat within two hops`);
        } else {
          assert.ok(moves > 8, `p=${p} seed ${seed}: expected the routers to oscillate, most moves ${moves}`);
        }
      }
    }
  });

  test('when the relay in use fails, the source fails over to the other path without a new discovery', () => {
    // A diamond: 0 reaches 3 through 1 or through 2.
    const diamond = (events: unknown[]) =>
      parseScenario({
        durationS: 30,
        topology: {
          kind: 'positions',
          nodes: [
            { xM: 0, yM: 0 },
            { xM: 200, yM: 100 },
            { xM: 200, yM: -100 },
            { xM: 400, yM: 0 },
          ],
        },
        medium: { controlChannelPn: false },
        node: { sensing: { durationMs: 20, periodMs: 1000 } },
        flows: [{ kind: 'udp-cbr', src: 0, dst: 3, rateMbps: 0.2, packetBytes: 500, startS: 3 }],
        events,
      });
    const before = runScenario(diamond([]), 1);
    const used = before.nodes.find((n) => n.node !== 0 && n.node !== 3 && n.forwarded > 0)!.node;
    const other = used === 1 ? 2 : 1;
    const r = runScenario(diamond([{ atS: 12, node: used, action: 'fail' }]), 1);
    const src = r.nodes[0]!;
    assert.equal(r.nodes[used]!.failed, true);
    assert.ok(src.routing.failovers! >= 1, `failovers ${src.routing.failovers}`);
    assert.equal(src.routing.discoveriesStarted, 1, 'no second discovery');
    assert.ok(r.nodes[other]!.forwarded > 500, `the other relay forwarded ${r.nodes[other]!.forwarded}`);
    const f = r.flows[0]!;
    assert.ok(f.deliveryRatio > 0.97, `delivery ${f.deliveryRatio}: the failed frame and the queue follow the other path`);
  });

  test("a PN burst on one neighbour's channel does not starve R2's other queues", () => {
    // Router 1 sends to 0 (R1 on 6) and to 2 (R1 on 11); a PN holds channel 6 from 8 s to 16 s.
    const sc = parseScenario({
      durationS: 20,
      topology: { kind: 'chain', nodes: 3 },
      medium: { controlChannelPn: false, adjacentChannelInterference: false },
      pn: { sources: [{ channels: [6], pattern: { kind: 'onoff', idleMs: 8000, busyMs: 8000, distribution: 'fixed' } }] },
      node: { sensing: { durationMs: 20, periodMs: 1000 }, channel: { minDwellMs: 3600000 } },
      nodeOverrides: { '0': { channel: { initialChannel: 6 } }, '1': { channel: { initialChannel: 3 } }, '2': { channel: { initialChannel: 11 } } },
      flows: [
        { kind: 'udp-cbr', src: 1, dst: 0, rateMbps: 0.2, packetBytes: 500, startS: 3 },
        { kind: 'udp-cbr', src: 1, dst: 2, rateMbps: 0.2, packetBytes: 500, startS: 3 },
      ],
    });
    const r = runScenario(sc, 1);
    assert.ok(r.flows[0]!.deliveryRatio < 0.7, `the blocked flow delivered ${r.flows[0]!.deliveryRatio}`);
    assert.equal(r.flows[1]!.deliveryRatio, 1, 'the flow on the clear channel loses nothing');
  });

  test('a PN that never stops is handled (no look-ahead runaway)', () => {
    const sc = parseScenario({
      durationS: 40,
      topology: { kind: 'chain', nodes: 3 },
      medium: { controlChannelPn: false },
      pn: { sources: [{ channels: [6, 7, 8], pattern: { kind: 'fraction', busy: 1, meanBurstMs: 100 } }] },
      flows: [{ kind: 'udp-cbr', src: 0, dst: 2, rateMbps: 0.3, packetBytes: 500, startS: 3 }],
    });
    const r = runScenario(sc, 1);
    assert.ok(r.flows[0]!.deliveryRatio > 0.9, `delivery ${r.flows[0]!.deliveryRatio}`);
  });

  test('a source with no discovery buffer still discovers routes (it drops while it waits)', () => {
    const r = runScenario(quiet(2, { node: { sensing: { durationMs: 20, periodMs: 1000 }, routing: { bufferPackets: 0 } } }), 1);
    const f = r.flows[0]!;
    assert.ok(f.deliveryRatio > 0.95, `delivery ${f.deliveryRatio}`);
    assert.ok(r.nodes[0]!.drops['buffer-full']! >= 1, 'the packets sent before the route was found are dropped');
  });

  test('seeds run on worker threads give the very results of seeds run in turn', async () => {
    const sc = quiet(2, { durationS: 8 });
    const inTurn = await runSeeds(sc, [1, 2, 3], 1);
    const threaded = await runSeeds(sc, [1, 2, 3], 2);
    assert.equal(JSON.stringify(threaded), JSON.stringify(inTurn));
  });

  test('a progress callback sees the seeds advance in simulated time and changes no result', async () => {
    const sc = quiet(2, { durationS: 5 });
    const plain = await runSeeds(sc, [1, 2, 3], 1);
    for (const jobs of [1, 2]) {
      const seen: number[] = [];
      const watched = await runSeeds(sc, [1, 2, 3], jobs, undefined, (done) => seen.push(done));
      assert.equal(JSON.stringify(watched), JSON.stringify(plain), `jobs ${jobs}: the same results`);
      assert.equal(seen.at(-1), 3, `jobs ${jobs}: ends at every seed done`);
      assert.ok(
        seen.every((d, i) => d >= 0 && d <= 3 && (i === 0 || d >= seen[i - 1]!)),
        `jobs ${jobs}: never goes back: ${seen.join(' ')}`,
      );
      // A whole simulated second is a fifth of a 5 s seed: parts of seeds show before each ends.
      assert.ok(
        seen.some((d) => !Number.isInteger(d)),
        `jobs ${jobs}: parts of seeds: ${seen.join(' ')}`,
      );
    }
  });

  test('several seeds give mean and spread', () => {
    const sc = quiet(1);
    const res = summarize(
      'q',
      sc.durationS,
      [1, 2, 3].map((s) => runScenario(sc, s)),
    );
    const t = res.summary[0]!.throughputMbps!;
    assert.deepEqual(res.seeds, [1, 2, 3]);
    assert.ok(t.min <= t.mean && t.mean <= t.max);
    assert.ok(t.ci95 >= 0);
  });
});

describe('simulator: the statistical sensing model', () => {
  const pn = { sources: [{ channels: 'all', powerDbm: -50, pattern: { kind: 'onoff', idleMs: 2000, busyMs: 500, distribution: 'exponential' } }] };

  test('statistical is the default: a run without the field is the run with model statistical, not the one with iq', () => {
    // A CCA threshold just over the noise floor puts every window in doubt, so the two models' draws tell apart.
    const node = { sensing: { durationMs: 20, periodMs: 1000, ccaThresholdDbm: -93.5 } };
    const ownW = (sc: ReturnType<typeof quiet>): number[] => {
      const ws: number[] = [];
      runScenario(sc, 4, {
        onRouterEvent: (_i, e) => {
          if (e.kind === 'sensing-round') for (const c of e.channels) if (c.ownW !== undefined) ws.push(c.ownW);
        },
      });
      return ws;
    };
    const byDefault = ownW(quiet(2, { pn, durationS: 6, node }));
    assert.deepEqual(byDefault, ownW(quiet(2, { pn, durationS: 6, node, sensing: { model: 'statistical' } })));
    assert.notDeepEqual(byDefault, ownW(quiet(2, { pn, durationS: 6, node, sensing: { model: 'iq' } })));
  });

  test('a statistical run senses (sensing rounds report w) and is the same for a seed, to the byte', () => {
    const sc = quiet(2, { pn, durationS: 6, sensing: { model: 'statistical' } });
    const ws: number[] = [];
    const a = runScenario(sc, 4, {
      onRouterEvent: (_i, e) => {
        if (e.kind === 'sensing-round') for (const c of e.channels) if (c.ownW !== undefined) ws.push(c.ownW);
      },
    });
    assert.ok(ws.length > 0 && ws.some((w) => w > 0), `own w seen: ${ws.length}`);
    assert.ok(a.nodes.every((n) => n.sensingRounds > 0));
    assert.equal(JSON.stringify(runScenario(sc, 4)), JSON.stringify(a));
  });
});

describe('cogmesh sim', () => {
  test('--json prints the result; --out writes JSON and CSV; both are the same for a seed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-sim-'));
    try {
      const args = ['sim', 'config/scenarios/urbanx-chain.json', '--hops', '2', '--duration', '8', '--seed', '3', '--set', 'flows.0.rateMbps=0.5', '--json'];
      const a = cogmesh(...args, '--out', dir);
      assert.equal(a.code, 0, a.err);
      const res = JSON.parse(a.out) as SimResult;
      assert.equal(res.runs[0]!.nodes.length, 3);
      assert.equal(res.runs[0]!.flows[0]!.dst, 2);
      assert.ok(res.runs[0]!.flows[0]!.received > 0);
      assert.equal(readFileSync(join(dir, 'result.json'), 'utf8'), a.out);
      const flows = readFileSync(join(dir, 'flows.csv'), 'utf8').trim().split('\n');
      assert.equal(flows.length, 2);
      assert.match(flows[0]!, /^seed,flow,kind,src,dst/);
      assert.equal(readFileSync(join(dir, 'nodes.csv'), 'utf8').trim().split('\n').length, 4);
      const b = cogmesh(...args);
      assert.equal(b.out, a.out, 'byte-identical JSON for the same seed');
      assert.match(a.err, /simulated 1 x 8 s in [0-9.]+ s wall/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a bad scenario or override is refused whole, naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-sim-'));
    try {
      const path = join(dir, 'bad.json');
      writeFileSync(path, JSON.stringify({ topology: { kind: 'chain', nodes: 3 }, flows: [{ kind: 'udp-cbr', src: 0, dst: 9 }] }));
      const r = cogmesh('sim', path);
      assert.equal(r.code, 2);
      assert.match(r.err, /\/flows\/0\/dst: 9 — expected a router of the topology \(0\.\.2\)/);
      const s = cogmesh('sim', 'config/scenarios/urbanx-chain.json', '--set', 'medium.txRangeM=-5');
      assert.equal(s.code, 2);
      assert.match(s.err, /\/medium\/txRangeM: -5/);
      const h = cogmesh('sim', 'config/scenarios/urbanx-chain.json', '--hops', 'x');
      assert.equal(h.code, 2);
      assert.match(h.err, /--hops: "x"/);
      const m = cogmesh('sim', 'config/scenarios/urbanx-chain.json', '--sensing-model', 'gamma');
      assert.equal(m.code, 2);
      assert.match(m.err, /--sensing-model: "gamma" is not iq or statistical/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
