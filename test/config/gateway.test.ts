import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import { parseNodeConfig } from '../../src/config/load.js';
import { isLive } from '../../src/config/live.js';

/** The gateway section of the node configuration: defaults, and each bad value refused whole, named by its path. */

const clients = [
  { id: 'sta1', prefix: '10.0.1.0/24', router: 1 },
  { id: 'sta2', prefix: '10.0.2.0/24', router: 2 },
];

function issues(gateway: unknown): Array<{ path: string; expected: string }> {
  try {
    parseNodeConfig({ node: { id: 0 }, gateway });
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.issues;
  }
  assert.fail('expected the configuration to be refused');
}

function refusedAt(gateway: unknown, path: string, expected: RegExp): void {
  const all = issues(gateway);
  const i = all.find((x) => x.path === path);
  assert.ok(i, `no issue at ${path}: ${JSON.stringify(all)}`);
  assert.match(i.expected, expected);
}

describe('the gateway section', () => {
  test("defaults: off, no client, computed slices of a 100 ms frame, the paper's Algorithm 2 values; live", () => {
    const g = parseNodeConfig({ node: { id: 0 } }).gateway;
    assert.deepEqual(g, {
      enabled: false,
      clients: [],
      slicing: { periodMs: 100, mode: 'computed', static: [] },
      rate: { adapt: false, rateMbps: 22, intervalMs: 3000, qLbKB: 7.5, epsilonMbps: 0.05, lambda: 0.9, beta: 0.8, minRateMbps: 0.1, maxRateMbps: 0 },
      queueBytes: 125_000,
      interferingAps: [],
      apPositions: [],
      interferenceRangeM: 0,
      scan: { enabled: false, listen: '', port: 7046, key: '', minIntervalMs: 500, aps: [] },
    });
    assert.ok(isLive('gateway.slicing.static'));
    assert.ok(isLive('gateway.enabled'));
    assert.ok(isLive('gateway.scan.key') && isLive('gateway.scan.aps'));
    // Where the scan reports are taken is a socket: a restart.
    for (const f of ['gateway.scan.enabled', 'gateway.scan.listen', 'gateway.scan.port']) assert.ok(!isLive(f), f);
  });

  test('scan reports: a listen address that is not one, an AP name given twice or a key that is not 16-64 bytes of hex are refused, naming the path', () => {
    refusedAt({ scan: { listen: 'gateway.local' } }, '/gateway/scan/listen', /IPv4 or IPv6 address/);
    refusedAt(
      {
        scan: {
          aps: [
            { name: 'a', router: 1 },
            { name: 'a', router: 2 },
          ],
        },
      },
      '/gateway/scan/aps/1/name',
      /aps\/0 has it/,
    );
    refusedAt({ scan: { key: 'abcd' } }, '/gateway/scan/key', /16-64 bytes in hex/);
  });

  test('a static schedule of known clients is taken', () => {
    const g = parseNodeConfig({
      node: { id: 0 },
      gateway: {
        enabled: true,
        clients,
        slicing: {
          mode: 'static',
          static: [
            { clients: ['sta1'], share: 0.3 },
            { clients: ['sta2'], share: 0.7 },
          ],
        },
      },
    }).gateway;
    assert.equal(g.slicing.static[1]!.share, 0.7);
  });

  test('bad values are refused, each named by its path', () => {
    refusedAt({ clients: [{ id: 'a', prefix: '10.0.1.1/24', router: 1 }] }, '/gateway/clients/0/prefix', /host bits set \(did you mean 10\.0\.1\.0\/24\?\)/);
    refusedAt({ clients: [clients[0], { ...clients[1], id: 'sta1' }] }, '/gateway/clients/1/id', /no other client has/);
    refusedAt({ clients: [clients[0], { ...clients[1], prefix: '10.0.1.0/24' }] }, '/gateway/clients/1/prefix', /no other client has/);
    refusedAt({ clients, slicing: { mode: 'static', static: [{ clients: ['sta9'], share: 0.5 }] } }, '/gateway/slicing/static/0/clients/0', /sta1, sta2/);
    refusedAt(
      {
        clients,
        slicing: {
          mode: 'static',
          static: [
            { clients: ['sta1'], share: 0.6 },
            { clients: ['sta2'], share: 0.6 },
          ],
        },
      },
      '/gateway/slicing/static',
      /at most 1/,
    );
    refusedAt({ enabled: true, clients, slicing: { mode: 'static' } }, '/gateway/slicing/static', /at least one set/);
    refusedAt({ clients, slicing: { static: [{ clients: ['sta1'], share: 0.5 }] } }, '/gateway/slicing/static', /mode static/);
    refusedAt({ rate: { adapt: true, rateMbps: 0 } }, '/gateway/rate/rateMbps', /> 0/);
    refusedAt({ rate: { lambda: 1 } }, '/gateway/rate/lambda', /< 1/);
    refusedAt({ clients, interferingAps: [[1, 7]] }, '/gateway/interferingAps/0', /routers that clients/);
    refusedAt({ clients, interferingAps: [[1, 1]] }, '/gateway/interferingAps/0', /two different/);
    refusedAt({ wan: {} }, '/gateway/wan', /no such field/);
    refusedAt({ rate: { adapt: true, rateMbps: 0.05 } }, '/gateway/rate/rateMbps', /at least rate\.minRateMbps \(0\.1\)/);
    refusedAt({ rate: { adapt: true, rateMbps: 30, maxRateMbps: 20 } }, '/gateway/rate/rateMbps', /at most rate\.maxRateMbps \(20\)/);
  });

  test('computed slices: a configured graph with more maximal independent sets than computeSlices takes is refused; static slices take it', () => {
    // 13 routers of 2 clients each, none interfering: 2^13 maximal independent sets.
    const many = Array.from({ length: 26 }, (_, i) => ({ id: `c${i}`, prefix: `10.1.${i}.0/24`, router: 1 + (i >> 1) }));
    refusedAt({ clients: many }, '/gateway/clients', /at most 4096 maximal independent sets/);
    const g = parseNodeConfig({ node: { id: 0 }, gateway: { clients: many, slicing: { mode: 'static', static: [{ clients: ['c0'], share: 1 }] } } }).gateway;
    assert.equal(g.clients.length, 26);
  });
});
