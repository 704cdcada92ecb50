import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { curveKeyPair } from 'zeromq';
import { parseNodeConfig } from '../../src/config/load.js';
import { isCurveKey } from '../../src/control/curve.js';
import { ControlServer } from '../../src/control/server.js';
import type { RouterStatus } from '../../src/router/view.js';
import { spawnCogmesh } from '../support/cli.js';
import { memoryLogger, TestRouterView } from '../support/control-view.js';

/**
 * Runs the cogmesh CLI from source without blocking this process: the
 * control server under test answers from this process's event loop, which
 * test/support/cli.ts's spawnSync would stall.
 */
function cogmeshAsync(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCogmesh([...args], ['ignore', 'pipe', 'pipe']);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-ctl-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('cogmesh keygen prints a CURVE pair; --out writes it with mode 0600 and prints the public key; no overwrite without --force', async () => {
  const r = await cogmeshAsync('keygen');
  assert.equal(r.code, 0, r.err);
  const pair = JSON.parse(r.out) as { publicKey: string; secretKey: string };
  assert.ok(isCurveKey(pair.publicKey) && isCurveKey(pair.secretKey), r.out);
  assert.notEqual(pair.publicKey, pair.secretKey);

  const file = join(dir, 'client.key');
  const w = await cogmeshAsync('keygen', '--out', file);
  assert.equal(w.code, 0, w.err);
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { publicKey: string; secretKey: string };
  assert.equal(w.out, `${saved.publicKey}\n`, 'only the public key is printed');
  assert.ok(isCurveKey(saved.secretKey), 'the file holds the secret key');
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const again = await cogmeshAsync('keygen', '--out', file);
  assert.equal(again.code, 2, again.err);
  assert.match(again.err, /exists .*--force/);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).publicKey, saved.publicKey, 'the pair is kept');
  const forced = await cogmeshAsync('keygen', '--out', file, '--force');
  assert.equal(forced.code, 0, forced.err);
  assert.notEqual(forced.out.trim(), saved.publicKey);
});

test('cogmesh keygen --token prints a monitor token the loader takes; --out writes it with mode 0600 and prints nothing', async () => {
  const r = await cogmeshAsync('keygen', '--token');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^[A-Za-z0-9_-]{43}\n$/);
  assert.equal(parseNodeConfig({ node: { id: 1 }, monitor: { listen: '0.0.0.0:8080', token: r.out.trim() } }).monitor.token, r.out.trim());
  const file = join(dir, 'monitor.token');
  const w = await cogmeshAsync('keygen', '--token', '--out', file);
  assert.equal(w.code, 0, w.err);
  assert.equal(w.out, '', 'the token is not printed');
  assert.match(readFileSync(file, 'utf8'), /^[A-Za-z0-9_-]{43}\n$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const again = await cogmeshAsync('keygen', '--token', '--out', file);
  assert.equal(again.code, 2);
  assert.match(again.err, /a token is not overwritten without --force/);
});

test('ctl, its commands and keygen have --help', async () => {
  const cmds = [['ctl'], ['ctl', 'set'], ['ctl', 'vnf', 'start'], ['ctl', 'watch'], ['keygen']];
  const runs = await Promise.all(cmds.map((c) => cogmeshAsync(...c, '--help')));
  runs.forEach((r, i) => {
    assert.equal(r.code, 0, `${cmds[i]!.join(' ')} --help: ${r.err}`);
    assert.match(r.out, new RegExp(`^Usage: cogmesh ${cmds[i]!.join(' ')}`, 'm'), cmds[i]!.join(' '));
  });
});

describe('cogmesh ctl against a running control server', () => {
  const view = new TestRouterView();
  const server = new ControlServer(
    view,
    { endpoint: 'tcp://127.0.0.1:17310', telemetry: 'tcp://127.0.0.1:17311', telemetryPeriodMs: 100, curve: { publicKey: '', secretKey: '', allow: [] } },
    memoryLogger().log,
  );
  const node = 'tcp://127.0.0.1:17310';
  before(() => server.start());
  after(() => server.stop());

  test('ctl status --json prints the raw status; without --json a summary', async () => {
    const r = await cogmeshAsync('ctl', '--node', node, 'status', '--json');
    assert.equal(r.code, 0, r.err);
    const s = JSON.parse(r.out) as RouterStatus;
    assert.equal(s.node.id, view.id);
    assert.equal(s.configVersion, view.configVersion());
    const text = await cogmeshAsync('ctl', '--node', node, 'status');
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`^node ${view.id} .*config ${view.configVersion()}`));
    assert.match(text.out, /^R1 +channel 11/m);
  });

  test('ctl set applies live fields; a restart-only field, a stale --expect are refused with exit code 1', async () => {
    const v0 = view.configVersion();
    const r = await cogmeshAsync('ctl', '--node', node, 'set', 'sensing.durationMs=25', 'channel.hysteresis=0.15', '--expect', v0);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /changed channel\.hysteresis, sensing\.durationMs; config version [0-9a-f]{16}/);
    assert.equal(view.config().sensing.durationMs, 25);
    assert.equal(view.config().channel.hysteresis, 0.15);
    const v1 = view.configVersion();

    const restart = await cogmeshAsync('ctl', '--node', node, 'set', 'node.id=9');
    assert.equal(restart.code, 1, restart.err);
    assert.match(restart.err, /\[CONTROL_RESTART_ONLY\]/);
    assert.match(restart.err, /\/node\/id: 9 — expected/);
    const stale = await cogmeshAsync('ctl', '--node', node, 'set', 'sensing.durationMs=30', '--expect', v0);
    assert.equal(stale.code, 1, stale.err);
    assert.match(stale.err, new RegExp(`expects config version ${v0} but the router runs ${v1}.*\\[CONTROL_STALE_VERSION\\]`));
    const range = await cogmeshAsync('ctl', '--node', node, 'set', 'sensing.durationMs=-1');
    assert.equal(range.code, 1, range.err);
    assert.match(range.err, /\/sensing\/durationMs: -1 — expected an integer >= 1/);
    assert.equal(view.configVersion(), v1, 'the refusals changed nothing');

    const got = await cogmeshAsync('ctl', '--node', node, '--json', 'get', 'sensing.durationMs');
    assert.equal(got.code, 0, got.err);
    assert.deepEqual(JSON.parse(got.out), { path: 'sensing.durationMs', value: 25, version: v1 });
  });

  test("ctl watch prints telemetry (the telemetry endpoint defaults to the port after --node's)", async () => {
    const r = await cogmeshAsync('ctl', '--node', node, '--json', '--timeout', '5000', 'watch', 'status', '--count', '2');
    assert.equal(r.code, 0, r.err);
    const msgs = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { topic: string; node: number; status: RouterStatus });
    assert.equal(msgs.length, 2);
    assert.deepEqual(
      msgs.map((m) => [m.topic, m.node]),
      [
        ['status', view.id],
        ['status', view.id],
      ],
    );
  });

  test('usage errors exit 2: no --node, a bad assignment, an unknown topic, an unknown command', async () => {
    const runs: Array<Promise<{ args: readonly string[]; re: RegExp; r: Awaited<ReturnType<typeof cogmeshAsync>> }>> = [];
    for (const [args, re] of [
      [['ctl', 'status'], /--node ENDPOINT is required/],
      [['ctl', '--node', node, 'set', 'sensing.durationMs'], /"sensing\.durationMs" is not PATH=VALUE/],
      [['ctl', '--node', node, 'watch', 'weather'], /no topic "weather"/],
      [['ctl', '--node', node, 'reboot'], /unknown command 'reboot'/],
      [['ctl', '--node', node, '--server-key', 'x'.repeat(40), 'status'], /--server-key and --key-file go together/],
    ] as const) {
      runs.push(cogmeshAsync(...args).then((r) => ({ args, re, r })));
    }
    for (const { args, re, r } of await Promise.all(runs)) {
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, re);
    }
  });
});

test('cogmesh ctl with CURVE: the allowed key file gets answers; without keys the node does not answer (exit 1)', async () => {
  const srv = curveKeyPair();
  const keyFile = join(dir, 'ops.key');
  const kg = await cogmeshAsync('keygen', '--out', keyFile);
  assert.equal(kg.code, 0, kg.err);
  const clientPub = kg.out.trim();
  const cfg = parseNodeConfig({
    node: { id: 12 },
    control: { endpoint: 'tcp://127.0.0.1:17320', telemetry: '', curve: { publicKey: srv.publicKey, secretKey: srv.secretKey, allow: [clientPub] } },
  });
  const view = new TestRouterView(cfg);
  const server = new ControlServer(view, cfg.control, memoryLogger().log);
  await server.start();
  try {
    const node = 'tcp://127.0.0.1:17320';
    const r = await cogmeshAsync('ctl', '--node', node, '--server-key', srv.publicKey, '--key-file', keyFile, 'status', '--json');
    assert.equal(r.code, 0, r.err);
    assert.equal((JSON.parse(r.out) as RouterStatus).node.id, 12);
    const plain = await cogmeshAsync('ctl', '--node', node, '--timeout', '800', 'status');
    assert.equal(plain.code, 1, plain.err);
    assert.match(plain.err, /did not answer within 800 ms.*allow-list.*\[CONTROL_TIMEOUT\]/);
    assert.equal(plain.out, '');
  } finally {
    await server.stop();
  }
});
