import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { cogmesh, spawnCogmesh, stopAll } from '../support/cli.js';
import { until } from '../support/until.js';
import { freePort, have, makePki, type Pki, type TlsFiles } from './pki.js';

/**
 * OpenFlow over TLS between `cogmesh` processes and Open vSwitch's own
 * tools, with a PKI made by ovs-pki as the Open vSwitch manual does it:
 * ovs-ofctl over ssl: against a passive agent listening with pssl: (and a
 * plain tcp: to the same port failing), an active agent connecting with
 * ssl: to ovs-testcontroller and to `cogmesh controller` listening with
 * pssl:, the controller connecting to the passive agent, and peers
 * certified by another CA refused. tshark shows the TLS handshakes and that
 * the agent never sent OpenFlow in the clear.
 */

const missing = ['ovs-pki', 'ovs-ofctl', 'ovs-testcontroller'].filter((c) => !have(c));
const skip = missing.length > 0 ? `not installed here: ${missing.join(', ')} (.ci/run installs them)` : false;

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-oftls-'));
const pcap = join(dir, 'tls.pcap');
const procs: ChildProcess[] = [];
let pki: Pki;
let rogue: Pki;
let passivePort: number;

type Line = Record<string, unknown>;

/** A cogmesh process whose JSON log lines go to `lines`. */
function run(args: string[], lines: Line[]): ChildProcess {
  const p = spawnCogmesh(args, ['ignore', 'pipe', 'pipe']);
  createInterface({ input: p.stdout! }).on('line', (l) => {
    try {
      lines.push(JSON.parse(l) as Line);
    } catch {
      lines.push({ msg: l });
    }
  });
  procs.push(p);
  return p;
}

/** A `cogmesh node` (the demo with its agent) with these fields set. */
function node(lines: Line[], ...set: string[]): ChildProcess {
  const args = ['node', '--config', 'config/examples/openflow-passive.json', '--log-format', 'json', '--for', '150'];
  return run([...args, '--set', 'openflow.reconnectMinMs=100', '--set', 'openflow.reconnectMaxMs=400', ...set.flatMap((s) => ['--set', s])], lines);
}

const tlsSet = (section: string, f: TlsFiles): string[] => [
  `${section}.tls.privateKey=${f.privateKey}`,
  `${section}.tls.certificate=${f.certificate}`,
  `${section}.tls.caCert=${f.caCert}`,
];
const ovsTls = (f: TlsFiles): string[] => [`--private-key=${f.privateKey}`, `--certificate=${f.certificate}`, `--ca-cert=${f.caCert}`];

function ofctl(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync('ovs-ofctl', ['-O', 'OpenFlow13', ...args], { encoding: 'utf8', timeout: 15_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const event = (lines: Line[], name: string, extra: (l: Line) => boolean = () => true): Line | undefined => lines.find((l) => l.event === name && extra(l));

describe('OpenFlow over TLS against Open vSwitch: ovs-pki, ovs-ofctl, ovs-testcontroller', { skip, timeout: 240_000 }, () => {
  const agentLog: Line[] = [];
  let capture: ChildProcess | undefined;

  before(async () => {
    pki = makePki(dir, 'mesh');
    rogue = makePki(dir, 'rogue');
    passivePort = await freePort();
    if (have('tshark')) {
      capture = spawn('tshark', ['-i', 'lo', '-f', `tcp port ${passivePort}`, '-w', pcap, '-q'], { stdio: 'ignore' });
      procs.push(capture);
      await until('the capture file', async () => (existsSync(pcap) ? true : undefined), 15_000);
    }
    node(agentLog, `openflow.listen=pssl:${passivePort}:127.0.0.1`, ...tlsSet('openflow', pki.switch));
    await until(
      'the passive TLS agent',
      async () => (ofctl(...ovsTls(pki.controller), 'probe', `ssl:127.0.0.1:${passivePort}`).code === 0 ? true : undefined),
      60_000,
    );
  });

  after(() => stopAll(procs));

  test('ovs-ofctl over ssl: reads the features reply, adds a flow and dumps it', () => {
    const T = `ssl:127.0.0.1:${passivePort}`;
    const show = ofctl(...ovsTls(pki.controller), 'show', T);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /OFPT_FEATURES_REPLY \(OF1\.3\)/);
    assert.match(show.out, /dpid:0000020000000001/);
    assert.match(show.out, /n_tables:1/);
    const add = ofctl(...ovsTls(pki.controller), 'add-flow', T, 'priority=100,tcp,nw_dst=10.0.4.1,tp_dst=5001,actions=output:5');
    assert.equal(add.code, 0, add.err);
    assert.match(ofctl(...ovsTls(pki.controller), 'dump-flows', T).out, /priority=100,tcp,nw_dst=10\.0\.4\.1,tp_dst=5001 actions=output:5/);
    assert.equal(event(agentLog, 'openflow-tls-refused'), undefined, 'nothing refused so far');
  });

  test('a plain tcp: connection to the TLS port fails: the handshake never completes, nothing is served', () => {
    const plain = ofctl('show', `tcp:127.0.0.1:${passivePort}`);
    assert.notEqual(plain.code, 0, `plain TCP refused (${plain.out})`);
    assert.doesNotMatch(plain.out, /FEATURES_REPLY|dpid/);
  });

  test('ovs-ofctl with a certificate from another CA is refused, and so is an agent its CA does not vouch for', async () => {
    const T = `ssl:127.0.0.1:${passivePort}`;
    const stranger = ofctl(...ovsTls({ ...rogue.controller, caCert: pki.controller.caCert }), 'show', T);
    assert.notEqual(stranger.code, 0, 'a controller certified by another CA');
    assert.doesNotMatch(stranger.out, /dpid/);
    await until(
      "the agent's refusal, with who and why",
      async () =>
        event(agentLog, 'openflow-tls-refused', (l) => /^127\.0\.0\.1:\d+$/.test(String(l.remote)) && /VERIFY|ISSUER|SIGNATURE/.test(String(l.reason))),
      15_000,
    );
    const doubting = ofctl(...ovsTls({ ...pki.controller, caCert: rogue.controller.caCert }), 'show', T);
    assert.notEqual(doubting.code, 0, 'ovs-ofctl trusting only the other CA refuses the agent');
    assert.doesNotMatch(doubting.out, /dpid/);
  });

  test('an active agent (ssl:) and ovs-testcontroller (pssl:): the handshake, FLOW_MODs sent, no ERROR', async () => {
    const port = await freePort();
    const log = join(dir, 'tc.log');
    const fd = openSync(log, 'w');
    const tc = spawn(
      'ovs-testcontroller',
      ['-O', 'OpenFlow13', '-v', `--unixctl=${join(dir, 'tc.ctl')}`, ...ovsTls(pki.controller), `pssl:${port}:127.0.0.1`],
      { stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    procs.push(tc);
    node([], 'openflow.mode=active', `openflow.controller=ssl:127.0.0.1:${port}`, 'node.id=2', 'node.name=of-tls-active', ...tlsSet('openflow', pki.switch));
    const text = await until(
      'the handshake and a FLOW_MOD',
      async () => {
        const t = readFileSync(log, 'utf8');
        return /received: OFPT_FEATURES_REPLY/.test(t) && /sent \(Success\): OFPT_FLOW_MOD/.test(t) ? t : undefined;
      },
      60_000,
    );
    assert.match(text, /ssl:127\.0\.0\.1:\d+: sent \(Success\): OFPT_HELLO/, 'over ssl:');
    assert.match(text, /dpid:0000020000000002/);
    assert.doesNotMatch(text, /received: OFPT_ERROR/, 'the node answered nothing with an ERROR');
  });

  test('cogmesh controller: agents connect to its pssl: (one from another CA is refused), and it connects to a pssl: agent with ssl:', async () => {
    const port = await freePort();
    const ctlLog: Line[] = [];
    run(
      [
        'controller',
        '--listen',
        `pssl:${port}:127.0.0.1`,
        '--connect',
        `ssl:127.0.0.1:${passivePort}`,
        ...ovsTls(pki.controller),
        '--flow',
        'tcp:3-4:5001',
        '--log-format',
        'json',
        '--for',
        '120',
      ],
      ctlLog,
    );
    // The controller's own ssl: connection to the passive agent.
    await until('the controller connected to the passive agent', async () => event(ctlLog, 'switch-connected'), 60_000);
    node([], 'openflow.mode=active', `openflow.controller=ssl:127.0.0.1:${port}`, 'node.id=3', 'node.name=of-tls-3', ...tlsSet('openflow', pki.switch));
    await until('the active agent connected', async () => (ctlLog.filter((l) => l.event === 'switch-connected').length === 2 ? true : undefined), 60_000);
    // Certified by the other PKI's switch CA, trusting this controller's CA.
    const stranger = { ...rogue.switch, caCert: pki.switch.caCert };
    node([], 'openflow.mode=active', `openflow.controller=ssl:127.0.0.1:${port}`, 'node.id=4', 'node.name=of-tls-4', ...tlsSet('openflow', stranger));
    await until('the stranger refused', async () => event(ctlLog, 'controller-tls-refused', (l) => /VERIFY|ISSUER|SIGNATURE/.test(String(l.reason))), 60_000);
    assert.equal(ctlLog.filter((l) => l.event === 'switch-connected').length, 2, 'the stranger got no session');
    const start = event(ctlLog, 'controller-start');
    assert.deepEqual([start?.listen, start?.connect], [`pssl:${port}:127.0.0.1`, [`ssl:127.0.0.1:${passivePort}`]]);
  });

  test(
    'tshark: TLS handshakes on the agent port, and never an OpenFlow message from the agent in the clear',
    { skip: have('tshark') ? false : 'no tshark' },
    async () => {
      assert.ok(capture);
      await new Promise((r) => setTimeout(r, 1000));
      capture.kill('SIGINT');
      await new Promise((r) => capture!.once('exit', r));
      const frames = (filter: string, ...decode: string[]): number => {
        const r = spawnSync('tshark', ['-r', pcap, ...decode, '-Y', filter, '-T', 'fields', '-e', 'frame.number'], { encoding: 'utf8', timeout: 60_000 });
        return r.stdout.trim() === '' ? 0 : r.stdout.trim().split('\n').length;
      };
      const asTls = ['-d', `tcp.port==${passivePort},tls`];
      assert.ok(frames('tls.handshake.type == 1', ...asTls) >= 4, 'Client Hellos (ovs-ofctl, the controller)');
      assert.ok(frames(`tls.handshake.type == 2 && tcp.srcport == ${passivePort}`, ...asTls) >= 4, "the agent's Server Hellos");
      assert.ok(frames(`tls.app_data && tcp.srcport == ${passivePort}`, ...asTls) > 0, 'OpenFlow went as TLS application data');
      // Read as OpenFlow, the port shows the plain peer's HELLO, and nothing the agent sent.
      const asOf = ['-d', `tcp.port==${passivePort},openflow`];
      assert.ok(frames(`openflow_v4 && tcp.dstport == ${passivePort}`, ...asOf) >= 1, "the plain ovs-ofctl's HELLO in the clear");
      assert.equal(frames(`openflow_v4 && tcp.srcport == ${passivePort}`, ...asOf), 0, 'the agent sent no OpenFlow in the clear');
    },
  );
});

after(() => {
  if (process.env.KEEP_OF_PCAP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log('kept', dir);
});

describe('TLS configuration errors name the field or option', { timeout: 60_000 }, () => {
  test('cogmesh node with pssl: refuses TLS files that are unset, then files that are not there, naming each', () => {
    const args = ['node', '--config', 'config/examples/openflow-passive.json', '--for', '1', '--set', 'openflow.listen=pssl:0:127.0.0.1'];
    const unset = cogmesh(...args, '--set', `openflow.tls.privateKey=${join(dir, 'nowhere-privkey.pem')}`);
    assert.equal(unset.code, 2, unset.err);
    assert.match(
      unset.err,
      /\/openflow\/tls\/certificate: "" — expected the path of a PEM file, its certificate: openflow\.listen is pssl:0:127\.0\.0\.1 \(TLS\)/,
    );
    assert.match(unset.err, /\/openflow\/tls\/caCert: "" — expected the path of a PEM file/);
    const absent = cogmesh(
      ...args,
      ...tlsSet('openflow', { privateKey: join(dir, 'nowhere-privkey.pem'), certificate: join(dir, 'c.pem'), caCert: join(dir, 'ca.pem') }).flatMap((s) => [
        '--set',
        s,
      ]),
    );
    assert.equal(absent.code, 2, absent.err);
    assert.match(absent.err, /\/openflow\/tls\/privateKey: ".*nowhere-privkey\.pem" — expected a readable PEM file, this side's private key \(ENOENT\)/);
    assert.match(absent.err, /\/openflow\/tls\/certificate: ".*c\.pem" — expected a readable PEM file, this side's certificate \(ENOENT\)/);
    assert.match(absent.err, /\/openflow\/tls\/caCert: ".*ca\.pem" — expected a readable PEM file/);
  });

  test('cogmesh node refuses a plain passive agent beyond loopback', () => {
    const r = cogmesh('node', '--config', 'config/examples/openflow-passive.json', '--for', '1', '--set', 'openflow.listen=0.0.0.0:6634');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /\/openflow\/listen: "0\.0\.0\.0:6634" — expected a loopback address, or pssl:PORT\[:HOST\] with openflow\.tls/);
  });

  test('cogmesh controller names --private-key, --certificate and --ca-cert', () => {
    const r = cogmesh('controller', '--listen', 'pssl:0:127.0.0.1', '--private-key', join(dir, 'none.pem'), '--for', '1');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--private-key: ".*none\.pem": expected a readable PEM file/);
    assert.match(r.err, /--certificate: "": expected the path of a PEM file/);
    assert.match(r.err, /--ca-cert: "": expected the path of a PEM file/);
    const bad = cogmesh('controller', '--connect', 'pssl:6653', '--for', '1');
    assert.equal(bad.code, 2, bad.err);
    assert.match(bad.err, /--connect: "pssl:6653": expected not an endpoint to connect to: ssl:HOST:PORT \(TLS\)/);
  });
});
