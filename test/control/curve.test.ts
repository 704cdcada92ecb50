import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { curveKeyPair } from 'zeromq';
import { parseNodeConfig } from '../../src/config/load.js';
import { ControlClient, TelemetryClient } from '../../src/control/client.js';
import { isCurveKey, z85Decode, z85Encode } from '../../src/control/curve.js';
import { ControlTimeoutError, type ControlReply } from '../../src/control/protocol.js';
import { ControlServer, DENIED_LOG_LINES } from '../../src/control/server.js';
import type { RouterStatus } from '../../src/router/view.js';
import { memoryLogger, TestRouterView } from '../support/control-view.js';

const T = 3000;
const CONTROL = 'tcp://127.0.0.1:17210';
const TELEMETRY = 'tcp://127.0.0.1:17211';

test('Z85: the 32 bytes of a CURVE key round-trip, and junk is refused', () => {
  const k = curveKeyPair();
  for (const key of [k.publicKey, k.secretKey]) {
    const bytes = z85Decode(key);
    assert.equal(bytes?.length, 32, key);
    assert.equal(z85Encode(bytes!), key);
    assert.ok(isCurveKey(key), key);
  }
  // The example of the Z85 specification (ZeroMQ RFC 32).
  assert.equal(z85Encode(Uint8Array.of(0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b)), 'HelloWorld');
  const b = randomBytes(32);
  assert.deepEqual(z85Decode(z85Encode(b)), new Uint8Array(b));
  assert.equal(z85Decode('abcd'), undefined, 'not a multiple of 5');
  assert.equal(z85Decode('ab"de'), undefined, 'not the alphabet');
  assert.equal(z85Decode('#####'), undefined, 'beyond 32 bits');
  assert.ok(!isCurveKey('HelloWorld'), 'too short for a key');
});

describe('control API with CURVE and a ZAP allow-list', () => {
  const server = curveKeyPair();
  const allowed = curveKeyPair();
  const stranger = curveKeyPair();
  // A configuration the loader accepts: CURVE on, one client allowed.
  const cfg = parseNodeConfig({
    node: { id: 7, name: 'r7' },
    control: {
      endpoint: CONTROL,
      telemetry: TELEMETRY,
      telemetryPeriodMs: 100,
      curve: { publicKey: server.publicKey, secretKey: server.secretKey, allow: [allowed.publicKey] },
    },
  });
  const view = new TestRouterView(cfg);
  const { log, lines } = memoryLogger();
  const ctl = new ControlServer(view, cfg.control, log);
  const open: Array<{ close(): void }> = [];
  const client = (keys?: { publicKey: string; secretKey: string }): ControlClient => {
    const c = new ControlClient(CONTROL, keys ? { curve: { serverKey: server.publicKey, ...keys } } : {});
    open.push(c);
    return c;
  };

  before(() => ctl.start());
  after(async () => {
    for (const c of open) c.close();
    await ctl.stop();
  });

  test('an allowed client key gets answers', async () => {
    const r = await client(allowed).request('status', {}, T);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal((r.result as RouterStatus).node.id, 7);
    const set: ControlReply = await client(allowed).request('set', { values: { 'sensing.durationMs': 25 } }, T);
    assert.ok(set.ok, JSON.stringify(set));
    assert.ok(ctl.counters.zapAllowed >= 2, `ZAP said yes: ${JSON.stringify(ctl.counters)}`);
  });

  test('a client key not on the allow-list gets no answer', async () => {
    const denied = ctl.counters.zapDenied;
    await assert.rejects(client(stranger).request('status', {}, 1000), (e: unknown) => {
      assert.ok(e instanceof ControlTimeoutError, `a timeout: ${String(e)}`);
      assert.equal(e.code, 'CONTROL_TIMEOUT');
      assert.match(e.message, /did not answer within 1000 ms.*allow-list/);
      return true;
    });
    assert.ok(ctl.counters.zapDenied > denied, 'ZAP said no');
    const line = lines.find((l) => l.event === 'control-denied');
    assert.equal(line?.clientKey, stranger.publicKey, 'the refused key is logged');
    assert.equal(view.config().sensing.durationMs, 25, 'nothing changed');
  });

  test('a plain client (no CURVE) gets no answer', async () => {
    await assert.rejects(client().request('status', {}, 1000), (e: unknown) => e instanceof ControlTimeoutError);
  });

  test('a client that has the wrong server key gets no answer', async () => {
    const c = new ControlClient(CONTROL, { curve: { serverKey: stranger.publicKey, ...allowed } });
    open.push(c);
    await assert.rejects(c.request('status', {}, 1000), (e: unknown) => e instanceof ControlTimeoutError);
  });

  test('telemetry: the allowed key receives status messages, another key nothing', async () => {
    const good = new TelemetryClient(TELEMETRY, ['status'], { curve: { serverKey: server.publicKey, ...allowed } });
    const bad = new TelemetryClient(TELEMETRY, ['status'], { curve: { serverKey: server.publicKey, ...stranger } });
    const plain = new TelemetryClient(TELEMETRY, ['status']);
    open.push(good, bad, plain);
    const m = await good.next(T);
    assert.equal(m.topic, 'status');
    assert.equal(m.body.node, 7);
    await assert.rejects(bad.next(600), (e: unknown) => e instanceof ControlTimeoutError, 'a stranger hears nothing');
    await assert.rejects(plain.next(300), (e: unknown) => e instanceof ControlTimeoutError, 'a plain subscriber hears nothing');
  });
});

test('two CURVE servers in one process each enforce their own allow-list', async () => {
  const a = curveKeyPair();
  const b = curveKeyPair();
  const ca = curveKeyPair();
  const cb = curveKeyPair();
  const mk = (port: number, srv: typeof a, allow: string) =>
    new ControlServer(
      new TestRouterView(),
      {
        endpoint: `tcp://127.0.0.1:${port}`,
        telemetry: '',
        telemetryPeriodMs: 1000,
        curve: { publicKey: srv.publicKey, secretKey: srv.secretKey, allow: [allow] },
      },
      memoryLogger().log,
    );
  const sa = mk(17220, a, ca.publicKey);
  const sb = mk(17221, b, cb.publicKey);
  await sa.start();
  await sb.start();
  const clients = [
    new ControlClient('tcp://127.0.0.1:17220', { curve: { serverKey: a.publicKey, ...ca } }),
    new ControlClient('tcp://127.0.0.1:17221', { curve: { serverKey: b.publicKey, ...cb } }),
    new ControlClient('tcp://127.0.0.1:17221', { curve: { serverKey: b.publicKey, ...ca } }),
  ];
  try {
    assert.ok((await clients[0]!.request('status', {}, T)).ok, 'a takes its client');
    assert.ok((await clients[1]!.request('status', {}, T)).ok, 'b takes its client');
    await assert.rejects(clients[2]!.request('status', {}, 800), (e: unknown) => e instanceof ControlTimeoutError, "b does not take a's client");
  } finally {
    for (const c of clients) c.close();
    await sa.stop();
    await sb.stop();
  }
});

test('a flood of refused handshakes: every one counted, a few lines logged, the last saying the rest are not', async () => {
  const server = curveKeyPair();
  const allowed = curveKeyPair();
  const cfg = parseNodeConfig({
    node: { id: 8 },
    control: {
      endpoint: 'tcp://127.0.0.1:17240',
      telemetry: '',
      curve: { publicKey: server.publicKey, secretKey: server.secretKey, allow: [allowed.publicKey] },
    },
  });
  const { log, lines } = memoryLogger();
  const ctl = new ControlServer(new TestRouterView(cfg), cfg.control, log);
  await ctl.start();
  const clients = Array.from({ length: 12 }, () => new ControlClient('tcp://127.0.0.1:17240', { curve: { serverKey: server.publicKey, ...curveKeyPair() } }));
  try {
    await Promise.all(clients.map((c) => assert.rejects(c.request('status', {}, 800), (e: unknown) => e instanceof ControlTimeoutError)));
    const denied = lines.filter((l) => l.event === 'control-denied');
    assert.ok(ctl.counters.zapDenied >= clients.length, `every refusal counted: ${ctl.counters.zapDenied}`);
    assert.equal(denied.length, DENIED_LOG_LINES, `${denied.length} lines for ${ctl.counters.zapDenied} refusals`);
    assert.match(String(denied.at(-1)!.msg), /further refused handshakes in the next \d+ s are counted, not logged\)$/);
    const ok = new ControlClient('tcp://127.0.0.1:17240', { curve: { serverKey: server.publicKey, ...allowed } });
    clients.push(ok);
    assert.ok((await ok.request('status', {}, T)).ok, 'an allowed client still gets in');
  } finally {
    for (const c of clients) c.close();
    await ctl.stop();
  }
});
