import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cogmesh } from '../support/cli.js';

/** `cogmesh gateway plan`: the CLI run as a process, from source. */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-gateway-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

/** Two APs, two clients each; sta2 hears ap2 8 dB above its own ap1 (Type III with sta3 and sta4). */
const PLAN = {
  clients: [
    { id: 'sta1', ap: 'ap1', rateMbps: 22 },
    { id: 'sta2', ap: 'ap1', rateMbps: 22 },
    { id: 'sta3', ap: 'ap2', rateMbps: 18 },
    { id: 'sta4', ap: 'ap2', rateMbps: 22 },
  ],
  reports: [
    { client: 'sta2', beacons: { ap1: -70, ap2: -62 } },
    { client: 'sta3', beacons: { ap1: -85, ap2: -45 } },
  ],
};

describe('cogmesh gateway plan', () => {
  test('prints the graph, the sets with their slices, the shares, the utility and the gap', () => {
    const r = cogmesh('gateway', 'plan', '--graph', file('plan.json', PLAN));
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^dependence graph: 4 clients, 4 dependent pairs \(same-ap 2, type-ii 0, type-iii 2\)$/m);
    assert.match(r.out, /^ {2}sta2 -- sta3 {2}type-iii$/m);
    assert.match(r.out, /^ {2}\{sta1, sta3\} {2}0\.3750 {2}375\.0 ms$/m);
    assert.match(r.out, /^ {2}\{sta2\} {2}0\.2500 {2}250\.0 ms$/m);
    assert.match(r.out, /^ {2}sta1 {2}ap ap1 {2}0\.7500 {2}22 Mbps -> 16\.50 Mbps$/m);
    assert.match(r.out, /^aggregate utility sum w log x = -3\.6356\d\d/m);
    assert.match(r.out, /^optimality gap <= \S+ \(certified\)/m);
  });

  test('--json: the same plan as one object', () => {
    const r = cogmesh('gateway', 'plan', '--graph', file('plan.json', PLAN), '--json', '--frame-ms', '500');
    assert.equal(r.code, 0, r.err);
    const plan = JSON.parse(r.out) as {
      clients: { id: string; share: number; throughputMbps: number }[];
      edges: { a: string; b: string; kind: string }[];
      sets: { clients: string[]; share: number; sliceMs: number }[];
      utility: number;
      gap: number;
      converged: boolean;
    };
    const shares = plan.clients.map((c) => c.share);
    [0.75, 0.25, 0.375, 0.375].forEach((x, j) => assert.ok(Math.abs(shares[j]! - x) < 1e-6, `${j}: ${shares[j]}`));
    assert.deepEqual(
      plan.edges.map((e) => `${e.a}-${e.b}:${e.kind}`),
      ['sta1-sta2:same-ap', 'sta2-sta3:type-iii', 'sta2-sta4:type-iii', 'sta3-sta4:same-ap'],
    );
    assert.equal(plan.sets.length, 3);
    assert.ok(Math.abs(plan.sets[2]!.sliceMs - 125) < 1e-3);
    assert.ok(plan.converged && plan.gap <= 1e-6);
  });

  test('gateway rate: Algorithm 2 over a recorded queue, one line per interval', () => {
    const trace = file('trace.json', {
      samples: [
        [1, 5000],
        [4, 20000],
        [7, 20000],
        [10, 10000],
      ],
      untilS: 12,
    });
    const r = cogmesh('gateway', 'rate', '--trace', trace);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^t_interval 3 s, q_lb 7500 B, eps 0\.05 Mbps\/KB, lambda 0\.9, beta 0\.8/);
    assert.match(r.out, /^ +3\.0 +5000 +4000 +19\.800 {2}decrease$/m);
    assert.match(r.out, /^ +6\.0 +20000 +16800 +20\.640 {2}increase$/m);
    assert.match(r.out, /^ +12\.0 +10000 +11872 +21\.608 {2}hold$/m);
  });

  test('refuses bad input with exit code 2, naming what is wrong', () => {
    const cases: [string, unknown, string[]][] = [
      ['malformed.json', '{"clients": [', ['malformed.json', 'JSON']],
      ['unknown-client.json', { ...PLAN, reports: [{ client: 'sta9', beacons: { ap1: -50 } }] }, ['/reports/0/client', '"sta9"', 'one of the clients']],
      ['bad-dbm.json', { ...PLAN, reports: [{ client: 'sta1', beacons: { ap1: 'loud' } }] }, ['/reports/0/beacons/ap1', 'dBm']],
      ['bad-ap.json', { ...PLAN, interferingAps: [['ap1', 'ap7']] }, ['/interferingAps/0', 'ap7']],
    ];
    for (const [name, body, names] of cases) {
      const r = cogmesh('gateway', 'plan', '--graph', file(name, body));
      assert.equal(r.code, 2, `${name}: ${r.err}`);
      assert.equal(r.out, '', name);
      assert.doesNotMatch(r.err, /\n\s+at /, `${name}: no stack trace`);
      for (const n of names) assert.ok(r.err.includes(n), `${name}: names ${n}: ${r.err}`);
    }
    const missing = cogmesh('gateway', 'plan', '--graph', join(dir, 'none.json'));
    assert.equal(missing.code, 2);
    assert.match(missing.err, /--graph: cannot read .*none\.json \(ENOENT\)/);
  });
});
