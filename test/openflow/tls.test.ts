import { memoryLogger } from '../support/control-view.js';
import assert from 'node:assert/strict';
import { REFUSAL_LOG_LINES } from '../../src/core/log-budget.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseNodeConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/core/errors.js';
import { type createLogger } from '../../src/core/log.js';
import { ControllerService } from '../../src/daemon/controller-service.js';
import { startOpenFlow, type OpenFlowRouter, type OpenFlowSide } from '../../src/daemon/openflow.js';
import { loadOfTls } from '../../src/daemon/of-tls.js';
import { encodeOf } from '../../src/wire/openflow/index.js';
import { until } from '../support/until.js';
import { have, makePki, type Pki, type TlsFiles } from './pki.js';

/**
 * OpenFlow over TLS inside one process, with real sockets and a PKI made by
 * ovs-pki: the CETT controller and router agents, each way round (agents
 * active towards a pssl: controller; a controller connecting to pssl:
 * agents), flows installed through them; a plain TCP peer on a TLS port
 * never served; a certificate from another CA refused either way; TLS files
 * that are missing or wrong refused naming their field.
 */

const skip = have('ovs-pki') ? false : 'ovs-pki is not installed here (.ci/run installs openvswitch-common)';
const dir = mkdtempSync(join(tmpdir(), 'cogmesh-oftls-'));
let pki: Pki;
let rogue: Pki;

interface Events {
  lines: Array<Record<string, unknown>>;
  has(event: string, extra?: (l: Record<string, unknown>) => boolean): boolean;
}

/** A JSON logger whose lines the test reads. */
function logger(): { log: ReturnType<typeof createLogger>; events: Events } {
  const { log, lines } = memoryLogger();
  return {
    log,
    events: { lines, has: (event, extra) => lines.some((l) => l.event === event && (extra ? extra(l) : true)) },
  };
}

/** Router `id` of a chain 0 - 1 - 2: its neighbours, each at RC 1000 kbps of 2000. */
function router(id: number): OpenFlowRouter {
  const neighbours = [id - 1, id + 1].filter((n) => n >= 0 && n <= 2);
  return {
    node: { id, name: `r${id}` },
    now: () => 0,
    enter: (fn) => fn(0),
    neighbours: () => neighbours.map((addr) => ({ addr, r1Channel: addr + 1 })),
    w: () => new Map(neighbours.map((n) => [n + 1, 0.5])),
    r1Channel: () => id + 1,
    capacityKbps: () => 2000,
    link: () => undefined,
    local: () => ({ rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, txDropped: 0 }),
    queues: () => [{ queue: 0, minKbps: 0 }],
  };
}

/** A router's agent with its OpenFlow section set as given, quick to reconnect. */
async function agent(id: number, openflow: Record<string, unknown>, log = logger().log): Promise<OpenFlowSide> {
  const cfg = parseNodeConfig({ node: { id, name: `r${id}` }, openflow: { reconnectMinMs: 50, reconnectMaxMs: 200, ...openflow } });
  return startOpenFlow(cfg, router(id), log, 'test');
}

function controller(tls: TlsFiles | undefined, log = logger().log): ControllerService {
  return new ControllerService({ hysteresis: 0.2, log, now: () => 0, reconnectMinMs: 50, reconnectMaxMs: 200, ...(tls ? { tls } : {}) });
}

const entries = (a: OpenFlowSide): number => a.tables.table(0)?.list().length ?? 0;
const port = (address: string | undefined): number => Number(/^pssl:(\d+):/.exec(address ?? '')?.[1]);

/** The ConfigError `f` throws. */
async function configError(f: () => Promise<unknown> | unknown): Promise<ConfigError> {
  try {
    await f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `a ConfigError, not ${String(e)}`);
    return e;
  }
  assert.fail('expected a ConfigError');
}

describe('OpenFlow over TLS between the CETT controller and router agents', { skip, timeout: 120_000 }, () => {
  const stops: Array<() => Promise<void>> = [];

  before(() => {
    pki = makePki(dir, 'mesh');
    rogue = makePki(dir, 'rogue');
  });

  after(async () => {
    for (const s of stops.reverse()) await s();
  });

  test('agents in active mode (ssl:) connect to the controller listening with pssl:; a flow along the chain is installed in their tables', async () => {
    const ctl = controller(pki.controller);
    await ctl.start('pssl:0:127.0.0.1');
    stops.push(() => ctl.stop());
    const at = `ssl:127.0.0.1:${port(ctl.address)}`;
    const agents = await Promise.all([0, 1, 2].map((id) => agent(id, { mode: 'active', controller: at, tls: pki.switch })));
    for (const a of agents) stops.push(() => a.stop());
    await until('three routers connected', async () => (ctl.sessions === 3 ? true : undefined), 20_000, 50);
    const r = ctl.addFlow({ id: 0, proto: 'tcp', srcAddr: 0, dstAddr: 2, dstPort: 5001 });
    assert.ok(r.ok, JSON.stringify(r));
    await until('the path installed', async () => (ctl.flows()[0]?.state === 'installed' ? true : undefined), 20_000, 50);
    assert.deepEqual(ctl.flows()[0]?.routers, [0, 1, 2]);
    await until('two entries (data and ACK direction) in each router', async () => (agents.every((a) => entries(a) === 2) ? true : undefined), 20_000, 50);
  });

  test('the controller connects (ssl:) to agents listening with pssl:, and installs the flow in them', async () => {
    const agents = await Promise.all([0, 1, 2].map((id) => agent(id, { mode: 'passive', listen: 'pssl:0:127.0.0.1', tls: pki.switch })));
    for (const a of agents) stops.push(() => a.stop());
    const ctl = controller(pki.controller);
    ctl.addFlow({ id: 7, proto: 'udp', srcAddr: 2, dstAddr: 0 });
    await ctl.start(
      '',
      agents.map((a) => `ssl:127.0.0.1:${port(a.address)}`),
    );
    stops.push(() => ctl.stop());
    await until('the path installed', async () => (ctl.flows()[0]?.state === 'installed' ? true : undefined), 20_000, 50);
    assert.deepEqual(ctl.flows()[0]?.routers, [2, 1, 0]);
    await until('two entries in each router', async () => (agents.every((a) => entries(a) === 2) ? true : undefined), 20_000, 50);
  });

  test('a plain TCP peer on a TLS port is never served: no OpenFlow byte back, no session, the refusal logged', async () => {
    const { log, events } = logger();
    const a = await agent(3, { mode: 'passive', listen: 'pssl:0:127.0.0.1', tls: pki.switch }, log);
    stops.push(() => a.stop());
    const sessions = a.agent.counters.connections;
    const got: Uint8Array[] = [];
    const sock = connect({ host: '127.0.0.1', port: port(a.address) });
    sock.on('data', (d: Uint8Array) => got.push(d));
    sock.on('error', () => undefined);
    sock.write(encodeOf({ type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [1 << 4] }] }));
    await new Promise((r) => sock.once('close', r));
    // What came back, if anything, is a TLS alert (record type 21), never OpenFlow (version 4 first).
    for (const d of got) assert.notEqual(d[0], 4, 'no OpenFlow message');
    assert.equal(a.agent.counters.connections, sessions, 'no agent session opened');
    assert.equal(a.transport.counters.tlsRefused, 1);
    assert.ok(
      events.has('openflow-tls-refused', (l) => l.reason === 'ERR_SSL_WRONG_VERSION_NUMBER'),
      JSON.stringify(events.lines),
    );

    // A TLS peer that shows no certificate: the handshake may finish on its side, but it is not served either.
    const anonymous = tlsConnect({
      host: '127.0.0.1',
      port: port(a.address),
      ca: readFileSync(pki.controller.caCert, 'utf8'),
      checkServerIdentity: () => undefined,
    });
    const heard: Uint8Array[] = [];
    anonymous.on('data', (d: Uint8Array) => heard.push(d));
    anonymous.on('error', () => undefined);
    await new Promise((r) => anonymous.once('close', r));
    assert.deepEqual(heard, [], 'not a byte of OpenFlow');
    assert.equal(a.agent.counters.connections, sessions, 'no agent session opened');
    assert.equal(a.transport.counters.tlsRefused, 2);

    // An agent whose controller endpoint is plain tcp: to the controller's pssl: port: no session either.
    const c = logger();
    const ctl = controller(pki.controller, c.log);
    await ctl.start('pssl:0:127.0.0.1');
    stops.push(() => ctl.stop());
    const plain = await agent(4, { mode: 'active', controller: `tcp:127.0.0.1:${port(ctl.address)}` });
    stops.push(() => plain.stop());
    await until('the controller refused a handshake', async () => (c.events.has('controller-tls-refused') ? true : undefined), 20_000, 50);
    assert.equal(ctl.sessions, 0);
    assert.equal(ctl.core.counters.sessions, 0, 'the controller core never saw it');
  });

  test('a flood of plain peers on a TLS port: every refusal counted, a few a minute logged (REFUSAL_LOG_LINES), the last line saying the rest are counted only', async () => {
    const { log, events } = logger();
    const a = await agent(5, { mode: 'passive', listen: 'pssl:0:127.0.0.1', tls: pki.switch }, log);
    stops.push(() => a.stop());
    const n = REFUSAL_LOG_LINES + 7;
    for (let i = 0; i < n; i++) {
      const sock = connect({ host: '127.0.0.1', port: port(a.address) });
      sock.on('error', () => undefined);
      sock.write(encodeOf({ type: 'hello', version: 4, xid: 1, elements: [] }));
      await new Promise((r) => sock.once('close', r));
    }
    await until('every refusal counted', async () => (a.transport.counters.tlsRefused === n ? true : undefined), 20_000, 50);
    const lines = events.lines.filter((l) => l.event === 'openflow-tls-refused');
    assert.equal(lines.length, REFUSAL_LOG_LINES, `${lines.length} lines for ${n} refusals`);
    assert.match(String(lines.at(-1)?.msg), /counted, not logged/);
  });

  test('a certificate from another CA is refused: by the controller, by a passive agent, and by an agent verifying its controller', async () => {
    const c = logger();
    const ctl = controller(pki.controller, c.log);
    await ctl.start('pssl:0:127.0.0.1');
    stops.push(() => ctl.stop());
    const at = `ssl:127.0.0.1:${port(ctl.address)}`;
    // A switch certified by the other PKI's switch CA, trusting the right controller CA.
    const stranger = await agent(5, { mode: 'active', controller: at, tls: { ...rogue.switch, caCert: pki.switch.caCert } });
    stops.push(() => stranger.stop());
    await until(
      'the controller refused the stranger, saying who and why',
      async () =>
        c.events.has('controller-tls-refused', (l) => /^127\.0\.0\.1:\d+$/.test(String(l.remote)) && /VERIFY|ISSUER|SIGNATURE/.test(String(l.reason)))
          ? true
          : undefined,
      20_000,
      50,
    );
    // A genuine switch that trusts only the other PKI's controller CA refuses this controller.
    const a = logger();
    const doubting = await agent(6, { mode: 'active', controller: at, tls: { ...pki.switch, caCert: rogue.switch.caCert } }, a.log);
    stops.push(() => doubting.stop());
    await until(
      'the agent refused the controller',
      async () => (a.events.has('openflow-reconnect', (l) => /CERT|VERIFY|SIGNATURE/.test(String(l.reason))) ? true : undefined),
      20_000,
      50,
    );
    assert.equal(ctl.core.counters.sessions, 0, 'neither reached the controller core');
    assert.ok(stranger.transport.dials.connects >= 1 && doubting.transport.dials.connects >= 1);

    // A controller certified by the other PKI is refused by a passive agent.
    const l = logger();
    const passive = await agent(7, { mode: 'passive', listen: 'pssl:0:127.0.0.1', tls: pki.switch }, l.log);
    stops.push(() => passive.stop());
    const other = controller({ ...rogue.controller, caCert: pki.controller.caCert });
    await other.start('', [`ssl:127.0.0.1:${port(passive.address)}`]);
    stops.push(() => other.stop());
    await until('the agent refused the controller', async () => (l.events.has('openflow-tls-refused') ? true : undefined), 20_000, 50);
    assert.equal(passive.agent.counters.connections, 0, 'no session');
  });

  test('TLS files that are missing or wrong are a ConfigError naming each field', async () => {
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a PEM file\n');
    const missing = await configError(() => loadOfTls({ ...pki.switch, privateKey: join(dir, 'nowhere.pem') }, '/openflow/tls'));
    assert.deepEqual(
      missing.issues.map((i) => i.path),
      ['/openflow/tls/privateKey'],
    );
    assert.match(missing.message, /\/openflow\/tls\/privateKey: ".*nowhere\.pem" — expected a readable PEM file, this side's private key \(ENOENT\)/);
    const swapped = await configError(() => loadOfTls({ privateKey: pki.switch.certificate, certificate: garbage, caCert: garbage }, '/controller/tls'));
    assert.deepEqual(
      swapped.issues.map((i) => i.path),
      ['/controller/tls/privateKey', '/controller/tls/certificate', '/controller/tls/caCert'],
    );
    assert.match(swapped.issues[0]!.expected, /^a PEM private key/);
    assert.match(swapped.issues[1]!.expected, /^a PEM certificate/);
    assert.match(swapped.issues[2]!.expected, /^a PEM CA certificate/);
    const otherKey = await configError(() => loadOfTls({ ...pki.switch, privateKey: pki.controller.privateKey }, '/openflow/tls'));
    assert.deepEqual(
      otherKey.issues.map((i) => [i.path, i.expected]),
      [['/openflow/tls/certificate', "the certificate of the private key in /openflow/tls/privateKey (it is another key's)"]],
    );
    // Through the agent's start and the controller's, before anything listens.
    const atStart = await configError(() => agent(8, { mode: 'passive', listen: 'pssl:0:127.0.0.1', tls: { ...pki.switch, caCert: garbage } }));
    assert.deepEqual(
      atStart.issues.map((i) => i.path),
      ['/openflow/tls/caCert'],
    );
    const ctl = controller(undefined);
    const none = await configError(() => ctl.start('', ['ssl:127.0.0.1:1']));
    assert.deepEqual(
      none.issues.map((i) => i.path),
      ['/controller/tls/privateKey', '/controller/tls/certificate', '/controller/tls/caCert'],
    );
    await ctl.stop();
  });
});

after(() => rmSync(dir, { recursive: true, force: true }));
