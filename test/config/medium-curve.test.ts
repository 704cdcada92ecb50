import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { curveKeyPair } from 'zeromq';
import { parseNodeConfig } from '../../src/config/load.js';
import { REDACTED } from '../../src/config/live.js';
import { ConfigError } from '../../src/core/errors.js';

const MEDIUM = curveKeyPair();
const ROUTER = curveKeyPair();
const OTHER = curveKeyPair();

function issues(raw: unknown): ConfigError['issues'] {
  try {
    parseNodeConfig(raw);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.issues;
  }
  return [];
}

const node = (medium: Record<string, unknown>) => ({ node: { id: 1 }, sim: { medium } });
const keys = { serverKey: MEDIUM.publicKey, publicKey: ROUTER.publicKey, secretKey: ROUTER.secretKey };

describe('sim.medium.curve: a medium beyond loopback is joined with CURVE', () => {
  test('a loopback or ipc medium needs no keys; one beyond loopback needs all three, and takes them', () => {
    assert.deepEqual(issues(node({ endpoint: 'tcp://127.0.0.1:7600' })), []);
    assert.deepEqual(issues(node({ endpoint: 'ipc:///run/cogmesh/medium' })), []);
    const bare = issues(node({ endpoint: 'tcp://192.0.2.7:7600' }));
    assert.equal(bare.length, 1);
    assert.equal(bare[0]!.path, '/sim/medium/endpoint');
    assert.match(bare[0]!.expected, /CURVE keys in sim\.medium\.curve/);
    const c = parseNodeConfig(node({ endpoint: 'tcp://192.0.2.7:7600', curve: keys }));
    assert.deepEqual(c.sim.medium.curve, keys);
  });

  test('keys given in part, a pair whose halves do not belong together, keys with ipc: each named', () => {
    const part = issues(node({ endpoint: 'tcp://192.0.2.7:7600', curve: { serverKey: MEDIUM.publicKey, publicKey: ROUTER.publicKey } }));
    assert.ok(
      part.some((i) => i.path === '/sim/medium/curve/secretKey' && /all three, or none/.test(i.expected)),
      JSON.stringify(part),
    );
    const mixed = issues(node({ endpoint: 'tcp://192.0.2.7:7600', curve: { ...keys, publicKey: OTHER.publicKey } }));
    assert.ok(
      mixed.some((i) => i.path === '/sim/medium/curve/publicKey' && /sim\.medium\.curve\.secretKey/.test(i.expected)),
      JSON.stringify(mixed),
    );
    const ipc = issues(node({ endpoint: 'ipc:///run/cogmesh/medium', curve: keys }));
    assert.ok(
      ipc.some((i) => i.path === '/sim/medium/curve' && /tcp only/.test(i.expected)),
      JSON.stringify(ipc),
    );
  });

  test('a bad secret key is named, never shown', () => {
    const bad = `${ROUTER.secretKey.slice(0, 17)}~${ROUTER.secretKey.slice(18)}`;
    const found = issues(node({ endpoint: 'tcp://192.0.2.7:7600', curve: { ...keys, secretKey: bad } }));
    const issue = found.find((i) => i.path === '/sim/medium/curve/secretKey');
    assert.ok(issue, JSON.stringify(found));
    assert.equal(issue.value, REDACTED);
    assert.ok(!JSON.stringify(found).includes(bad));
  });
});
