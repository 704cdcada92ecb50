import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseNodeConfig } from '../../src/config/load.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { GatewayRole } from '../../src/gateway/role.js';
import { parseIpAddress } from '../../src/wire/ip.js';

/** The paper's two APs of two clients (docs/gateway.md), routers 1 and 2, computed slices. */
const gateway = (over: Record<string, unknown> = {}) =>
  parseNodeConfig({
    node: { id: 0 },
    gateway: {
      enabled: true,
      clients: [
        { id: 'sta1', prefix: '10.0.1.0/25', router: 1 },
        { id: 'sta2', prefix: '10.0.1.128/25', router: 1 },
        { id: 'sta3', prefix: '10.0.2.0/24', router: 2 },
        { id: 'sta4', prefix: '10.0.2.7', router: 2 },
      ],
      rate: { rateMbps: 0 },
      ...over,
    },
  }).gateway;

const ip = (s: string): Uint8Array => parseIpAddress(s)!;
/** sta2's scan: router 2's beacon 8 dB above its own router 1's. */
const hearsRouter2 = new Map([
  [1, -70],
  [2, -62],
]);
const shares = (r: GatewayRole<unknown>) => r.state().clients.map((c) => Number(c.share.toFixed(3)));

describe('GatewayRole', () => {
  test('a destination goes to the client with the longest prefix holding it; others pass, counted', () => {
    const r = new GatewayRole<unknown>(gateway(), 0);
    assert.equal(r.classify(ip('10.0.1.5')), 0);
    assert.equal(r.classify(ip('10.0.1.200')), 1);
    assert.equal(r.classify(ip('10.0.2.8')), 2);
    assert.equal(r.classify(ip('10.0.2.7')), 3);
    assert.equal(r.classify(ip('10.0.3.1')), -1);
    assert.equal(r.classify(ip('fd00::1')), -1);
    assert.equal(r.state().unshaped, 2);
  });

  test('same-router clients are dependent: 1/2 each; scan reports that add Type III compute the slices again', () => {
    const r = new GatewayRole<unknown>(gateway(), 0);
    assert.deepEqual(shares(r), [0.5, 0.5, 0.5, 0.5]);
    assert.deepEqual(
      r.state().graph.map((e) => `${e.a}-${e.b} ${e.kind}`),
      ['sta1-sta2 same-ap', 'sta3-sta4 same-ap'],
    );
    // sta2 hears router 2 8 dB above its own: dependent on both of router 2's clients.
    assert.equal(r.report('sta2', hearsRouter2, 1000), true);
    assert.deepEqual(shares(r), [0.75, 0.25, 0.375, 0.375]);
    assert.equal(r.state().sliceChanges, 2);
    // The same report again changes nothing.
    assert.equal(r.report('sta2', hearsRouter2, 2000), false);
    assert.equal(r.state().sliceChanges, 2);
  });

  test('a graph given whole replaces the tracked one; unknown ids are refused', () => {
    const r = new GatewayRole<unknown>(gateway(), 0);
    r.setGraph(
      {
        edges: [
          { a: 'sta1', b: 'sta2' },
          { a: 'sta2', b: 'sta3' },
          { a: 'sta3', b: 'sta4' },
          { a: 'sta4', b: 'sta1' },
        ],
      },
      0,
    );
    assert.deepEqual(shares(r), [0.5, 0.5, 0.5, 0.5]);
    assert.equal(r.state().graph.length, 4);
    assert.throws(() => r.setGraph({ edges: [{ a: 'sta1', b: 'nobody' }] }, 0), RangeArgumentError);
    assert.equal(r.state().graph.length, 4, 'a refused graph changes nothing');
    assert.equal(r.state().sliceChanges, 2);
  });

  test('Type II from the configuration: clients of interfering routers are dependent', () => {
    const r = new GatewayRole<unknown>(gateway({ interferingAps: [[1, 2]] }), 0);
    assert.deepEqual(shares(r), [0.25, 0.25, 0.25, 0.25]);
  });

  test('static slices: the configuration’s sets, whatever the graph', () => {
    const r = new GatewayRole<unknown>(
      gateway({
        slicing: {
          mode: 'static',
          static: [
            { clients: ['sta1', 'sta3'], share: 0.4 },
            { clients: ['sta2'], share: 0.1 },
          ],
        },
      }),
      0,
    );
    assert.deepEqual(shares(r), [0.4, 0.1, 0.4, 0]);
    r.setGraph({ edges: [] }, 0);
    assert.deepEqual(shares(r), [0.4, 0.1, 0.4, 0]);
    assert.deepEqual(r.state().slices, [
      { clients: ['sta1', 'sta3'], share: 0.4 },
      { clients: ['sta2'], share: 0.1 },
    ]);
  });
  test('a scan report that would make a graph the slices cannot be computed on is refused, and the report, graph and slices stay', () => {
    // Seven triples of clients on one router each (3^7 = 2187 maximal independent sets), and x, y, z on routers 10, 11, 12.
    const clients = [
      ...Array.from({ length: 21 }, (_, i) => ({ id: `t${i}`, prefix: `10.1.${i}.0/24`, router: 20 + Math.floor(i / 3) })),
      ...['x', 'y', 'z'].map((id, k) => ({ id, prefix: `10.2.${k}.0/24`, router: 10 + k })),
    ];
    const r = new GatewayRole<unknown>(gateway({ clients }), 0);
    const before = r.state();
    // x hears routers 11 and 12 far above its own: x-y and x-z become Type III, and the sets double past 4096 (to 4374).
    assert.throws(
      () =>
        r.report(
          'x',
          new Map([
            [10, -80],
            [11, -50],
            [12, -50],
          ]),
          1000,
        ),
      (e: unknown) => e instanceof RangeArgumentError && /maxSets/.test(e.message),
    );
    assert.deepEqual(r.state().graph, before.graph);
    assert.deepEqual(r.state().slices, before.slices);
    // The tracker holds what it held before the report: a scan that hears nothing changes nothing.
    assert.equal(r.report('x', new Map([[10, -80]]), 1500), false);
  });
});
