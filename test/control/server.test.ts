import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Request } from 'zeromq';
import { defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { ControlClient, TelemetryClient } from '../../src/control/client.js';
import { REDACTED } from '../../src/config/live.js';
import type { ControlReply } from '../../src/control/protocol.js';
import { ControlServer, requestChannel, type RequestTrace } from '../../src/control/server.js';
import type { RouterStatus } from '../../src/router/view.js';
import { ControllerService } from '../../src/daemon/controller-service.js';
import { memoryLogger, TestRouterView } from '../support/control-view.js';

const T = 3000;
const CONTROL = 'tcp://127.0.0.1:17110';
const TELEMETRY = 'tcp://127.0.0.1:17111';

function controlConfig(over: Partial<NodeConfig['control']> = {}): NodeConfig['control'] {
  return { endpoint: CONTROL, telemetry: TELEMETRY, telemetryPeriodMs: 100, curve: { publicKey: '', secretKey: '', allow: [] }, ...over };
}

function ok(r: ControlReply): unknown {
  assert.ok(r.ok, `expected ok, got ${JSON.stringify(r)}`);
  return r.result;
}

function err(r: ControlReply): { code: string; message: string; issues?: Array<{ path: string; value: unknown; expected: string }> } {
  assert.ok(!r.ok, `expected an error, got ${JSON.stringify(r)}`);
  return r.error;
}

describe('control API over ZeroMQ (no CURVE)', () => {
  const view = new TestRouterView(defaultNodeConfig(3));
  const { log, lines } = memoryLogger();
  const server = new ControlServer(view, controlConfig(), log);
  let client: ControlClient;
  let telemetry: TelemetryClient;

  before(async () => {
    await server.start();
    client = new ControlClient(CONTROL);
    telemetry = new TelemetryClient(TELEMETRY, ['status', 'config', 'r1', 'vnf']);
  });
  after(async () => {
    client.close();
    telemetry.close();
    await server.stop();
  });

  test("status answers with the view's status, and the request id is echoed", async () => {
    const r = await client.request('status', {}, T);
    const s = ok(r) as RouterStatus;
    assert.equal(typeof r.id, 'number', 'the client numbers its requests');
    assert.equal(s.node.id, 3);
    assert.equal(s.configVersion, view.configVersion());
    assert.equal(s.sensing.durationMs, 70);
    assert.equal(s.r2.channel, null, 'undefined goes out as null');
  });

  test('a REQ client is served too (its empty delimiter frame goes back with the reply)', async () => {
    const req = new Request({ linger: 0, receiveTimeout: T, sendTimeout: T });
    try {
      req.connect(CONTROL);
      await req.send(JSON.stringify({ id: 'req-1', cmd: 'status' }));
      const [frame] = await req.receive();
      const r = JSON.parse(frame!.toString('utf8')) as ControlReply;
      assert.equal(r.id, 'req-1');
      assert.equal((ok(r) as RouterStatus).node.id, 3);
    } finally {
      req.close();
    }
  });

  test('get: the whole configuration (secrets redacted), a section, a field; an unknown path is named', async () => {
    const whole = ok(await client.request('get', {}, T)) as { config: NodeConfig; version: string };
    assert.equal(whole.version, view.configVersion());
    assert.equal(whole.config.node.id, 3);
    const field = ok(await client.request('get', { path: 'sensing.durationMs' }, T)) as { path: string; value: unknown; version: string };
    assert.deepEqual(field, { path: 'sensing.durationMs', value: 70, version: view.configVersion() });
    const section = ok(await client.request('get', { path: 'sensing' }, T)) as { value: NodeConfig['sensing'] };
    assert.equal(section.value.periodMs, 1000);
    const item = ok(await client.request('get', { path: 'sim.band.pn' }, T)) as { value: unknown[] };
    assert.ok(Array.isArray(item.value), 'an array field comes whole');
    const e = err(await client.request('get', { path: 'sensing.bogus' }, T));
    assert.equal(e.code, 'CONTROL_UNKNOWN_PATH');
    assert.match(e.message, /sensing\.bogus/);
    assert.equal(e.issues?.[0]?.path, '/sensing/bogus');
    assert.match(e.issues?.[0]?.expected ?? '', /durationMs/, 'the fields that exist are listed');
  });

  test('set sensing.durationMs: answered with the new version and the change, seen by get and by the next status telemetry', async () => {
    const before = view.configVersion();
    const r = ok(await client.request('set', { values: { 'sensing.durationMs': 20 } }, T)) as { version: string; changed: string[] };
    assert.deepEqual(r.changed, ['sensing.durationMs']);
    assert.notEqual(r.version, before);
    assert.equal(r.version, view.configVersion());
    assert.equal(view.config().sensing.durationMs, 20, 'reconfigure was called');
    const g = ok(await client.request('get', { path: 'sensing.durationMs' }, T)) as { value: unknown; version: string };
    assert.deepEqual([g.value, g.version], [20, r.version]);
    // The subscriber's queue holds older status messages: take the first one sent after the set.
    const setAt = view.now();
    const st = await telemetry.waitFor((m) => m.topic === 'status' && m.body.atUs >= setAt, T);
    assert.equal(st.body.kind, 'status');
    assert.equal(st.body.node, 3);
    if (st.body.kind !== 'status') return;
    assert.equal(st.body.status.sensing.durationMs, 20, 'the next status message shows the new value');
    assert.equal(st.body.status.configVersion, r.version);
    assert.ok(
      lines.some((l) => l.event === 'control-set'),
      'the change is logged',
    );
    // The same values again change nothing, and no reconfigure runs.
    const applied = view.applied.length;
    const again = ok(await client.request('set', { values: { 'sensing.durationMs': 20 } }, T)) as { version: string; changed: string[] };
    assert.deepEqual(again, { version: r.version, changed: [], lasts: 'until-restart' });
    assert.equal(view.applied.length, applied, 'no reconfigure for a set that changes nothing');
  });

  test('set with persist on a router started from no configuration file is refused, and nothing changes', async () => {
    const v0 = view.configVersion();
    const r = await client.request('set', { values: { 'sensing.durationMs': 25 }, persist: true }, T);
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'CONTROL_BAD_ARGUMENT');
    assert.match(r.error.message, /persist needs the configuration file .*`cogmesh node --config FILE`/);
    assert.equal(view.configVersion(), v0);
    const typed = await client.request('set', { values: { 'sensing.durationMs': 25 }, persist: 'yes' }, T);
    assert.ok(!typed.ok);
    assert.match(typed.error.message, /persist.*true or false/);
  });

  test('set with a matching expect applies; a stale expect is refused naming both versions, and nothing changes', async () => {
    const v0 = view.configVersion();
    const r = ok(await client.request('set', { values: { 'sensing.periodMs': 900, 'channel.hysteresis': 0.2 }, expect: v0 }, T)) as {
      version: string;
      changed: string[];
    };
    assert.deepEqual(r.changed, ['channel.hysteresis', 'sensing.periodMs']);
    const applied = view.applied.length;
    const e = err(await client.request('set', { values: { 'sensing.periodMs': 800 }, expect: v0 }, T));
    assert.equal(e.code, 'CONTROL_STALE_VERSION');
    assert.ok(e.message.includes(v0) && e.message.includes(r.version), `the message names both versions: ${e.message}`);
    assert.equal(view.configVersion(), r.version, 'version unchanged');
    assert.equal(view.config().sensing.periodMs, 900);
    assert.equal(view.applied.length, applied, 'no reconfigure');
  });

  test('a set of an out-of-range value, of an unknown path, of a restart-only field: refused naming the field, version unchanged', async () => {
    const v0 = view.configVersion();
    const applied = view.applied.length;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ 'sensing.durationMs': 0 }, 'CONFIG_INVALID', '/sensing/durationMs'],
      [{ 'sensing.durationMs': 5000 }, 'CONFIG_INVALID', '/sensing/durationMs'],
      [{ 'sensing.memory': 'lots' }, 'CONFIG_INVALID', '/sensing/memory'],
      [{ 'sensing.bogus': 1 }, 'CONFIG_INVALID', '/sensing/bogus'],
      [{ 'node.id': 9 }, 'CONTROL_RESTART_ONLY', '/node/id'],
      [{ 'sensing.durationMs': 30, 'radios.R3.channel': 6 }, 'CONTROL_RESTART_ONLY', '/radios/R3/channel'],
    ];
    for (const [values, code, path] of cases) {
      const e = err(await client.request('set', { values }, T));
      assert.equal(e.code, code, JSON.stringify(values));
      assert.ok(
        e.issues?.some((i) => i.path === path),
        `${JSON.stringify(values)}: issues name ${path}: ${JSON.stringify(e.issues)}`,
      );
      assert.equal(view.configVersion(), v0, `${JSON.stringify(values)}: version unchanged`);
    }
    assert.equal(view.applied.length, applied, 'no reconfigure');
    assert.equal(view.config().sensing.durationMs, 20, 'the half that was live did not go in either');
    assert.ok(server.counters.refused >= cases.length, `refusals counted: ${JSON.stringify(server.counters)}`);
  });

  test('malformed JSON, a non-object, no cmd, an unknown command, bad arguments: error replies, and the server keeps serving', async () => {
    const before = { ...server.counters };
    const raw = async (frames: string | string[]) => err(await client.requestRaw(frames, T));
    assert.equal((await raw('{"cmd": "status"')).code, 'CONTROL_MALFORMED');
    assert.match((await raw('{"cmd": "status"')).message, /not JSON/);
    assert.match((await raw('[1, 2]')).message, /not a JSON object \(got an array\)/);
    assert.match((await raw('{"id": 5}')).message, /no "cmd"/);
    assert.equal((await raw('{"id": 5, "cmd": 7}')).code, 'CONTROL_MALFORMED');
    const multi = await raw(['{"cmd":"status"}', 'extra']);
    assert.equal(multi.code, 'CONTROL_MALFORMED');
    assert.match(multi.message, /2 frames/);
    // Nested deep enough to overflow the stack when echoed (as an id, as a command): refused, and the socket keeps serving.
    const deep = await raw(`{"id": ${'['.repeat(12000)}${']'.repeat(12000)}, "cmd": "status"}`);
    assert.equal(deep.code, 'CONTROL_MALFORMED');
    assert.match(deep.message, /^request has objects and arrays nested deeper than 64 levels at line 1, column 71/);
    const deepCmd = await raw(`{"cmd":${'['.repeat(4103)}${']'.repeat(4103)}}`);
    assert.equal(deepCmd.code, 'CONTROL_MALFORMED');
    assert.ok(deepCmd.message.length < 200, `a bounded message: ${deepCmd.message.length} characters`);

    const unknown = await client.request('reboot', {}, T);
    assert.equal(err(unknown).code, 'CONTROL_UNKNOWN_COMMAND');
    assert.match(err(unknown).message, /"reboot".*status, get, set/);
    assert.equal(typeof unknown.id, 'number', 'the id is echoed on errors too');

    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['get', { path: 5 }, /get: argument "path" is 5, expected a string/],
      ['get', { path: 'sensing..x' }, /not a dotted path/],
      ['get', { pth: 'sensing' }, /get: no argument "pth" \(get takes path\)/],
      ['status', { verbose: true }, /status takes no arguments/],
      ['set', {}, /set: argument "values" is missing/],
      ['set', { values: [1] }, /set: argument "values" is \[1\], expected an object/],
      ['set', { values: {} }, /"values" is empty/],
      ['set', { values: { 'a=b': 1 } }, /not a dotted path/],
      ['set', { values: { 'sensing.durationMs': 20 }, expect: 3 }, /argument "expect" is 3, expected a string/],
      ['vnf.start', { type: 'tcp-acc' }, /argument "flow" is missing/],
      ['vnf.start', { type: 'tcp-acc', flow: 'tcp anywhere' }, /"flow" "tcp anywhere" is not a flow pattern/],
      ['vnf.stop', { vnf: 'one' }, /argument "vnf" is "one", expected an integer/],
    ];
    for (const [cmd, args, re] of bad) {
      const e = err(await client.request(cmd, args, T));
      assert.equal(e.code, 'CONTROL_BAD_ARGUMENT', `${cmd} ${JSON.stringify(args)}`);
      assert.match(e.message, re);
    }
    assert.equal((ok(await client.request('status', {}, T)) as RouterStatus).node.id, 3, 'still serving');
    assert.equal(server.counters.malformed - before.malformed, 8);
    assert.equal(server.counters.unknownCommand - before.unknownCommand, 1);
    assert.equal(server.counters.badArgument - before.badArgument, bad.length);
    // Per command and result (the monitor's cogmesh_control_requests_total): a bad argument is its command's, the rest no command's.
    const count = (cmd: string, result: string): number => server.requestsByCommand.get(cmd)?.get(result) ?? 0;
    assert.ok(count('unknown', 'malformed') >= 8, 'unparseable requests count under unknown');
    assert.ok(count('unknown', 'unknownCommand') >= 1, 'so does a command that does not exist: its name is not kept');
    assert.ok(!server.requestsByCommand.has('reboot'));
    assert.ok(count('set', 'badArgument') >= 5, 'set with bad arguments');
    assert.ok(count('status', 'badArgument') >= 1);
    assert.ok(count('status', 'ok') >= 2);
    const sum = [...server.requestsByCommand.values()].flatMap((m) => [...m.values()]).reduce((a, b) => a + b, 0);
    assert.equal(sum, server.counters.requests, 'every request counted once');
  });

  test('the tables: neighbours, routes, queues, flows, spectrum', async () => {
    assert.equal((ok(await client.request('neighbours', {}, T)) as Array<{ addr: number }>)[0]?.addr, 2);
    assert.equal((ok(await client.request('routes', {}, T)) as Array<{ dst: number }>)[0]?.dst, 4);
    assert.deepEqual(ok(await client.request('queues', {}, T)), [
      {
        channel: 6,
        packets: 3,
        bytes: 3000,
        classes: [
          { queue: 1, name: 'high', packets: 1, bytes: 1000 },
          { queue: 0, name: 'best-effort', packets: 2, bytes: 2000 },
        ],
      },
    ]);
    assert.equal((ok(await client.request('flows', {}, T)) as Array<{ role: string }>)[0]?.role, 'source');
    const sp = ok(await client.request('spectrum', {}, T)) as { channels: Array<{ ownW: unknown }> };
    assert.equal(sp.channels.length, 3);
    assert.equal(sp.channels[1]?.ownW, null);
  });

  test("vnf.start, vnf.list, vnf.stop; refusals keep the manager's codes; events go out on the vnf topic", async () => {
    const started = ok(await client.request('vnf.start', { type: 'tcp-acc', flow: 'tcp 10.0.0.1:* > 10.0.4.1:5001', params: { mode: 'split' } }, T)) as {
      id: number;
      flow: unknown;
    };
    assert.deepEqual(started.flow, { proto: 'tcp', srcIp: '10.0.0.1', dstIp: '10.0.4.1', dstPort: 5001 });
    const ev = await telemetry.waitFor((m) => m.topic === 'vnf', T);
    assert.equal(ev.body.kind === 'vnf' && ev.body.event.kind, 'started');
    const list = ok(await client.request('vnf.list', {}, T)) as Array<{ id: number; state: string }>;
    assert.deepEqual(
      list.map((v) => [v.id, v.state]),
      [[started.id, 'running']],
    );
    const stopped = ok(await client.request('vnf.stop', { vnf: started.id }, T)) as { state: string };
    assert.equal(stopped.state, 'stopped');
    assert.equal(err(await client.request('vnf.stop', { vnf: started.id }, T)).code, 'VNF_UNKNOWN_INSTANCE');
    assert.equal(err(await client.request('vnf.start', { type: 'nat', flow: '* *:* > *:*' }, T)).code, 'VNF_UNKNOWN_TYPE');
    const p = err(await client.request('vnf.start', { type: 'tcp-acc', flow: '* *:* > *:*', params: 4 }, T));
    assert.equal(p.code, 'CONFIG_INVALID');
    assert.equal(p.issues?.[0]?.path, '/params');
  });

  test('telemetry: events of the view go out on their topics with the router id', async () => {
    view.emit({ kind: 'r1', atUs: 42, channel: 6, changed: true, reason: 'channel 6 offers more' });
    const m = await telemetry.waitFor((x) => x.topic === 'r1', T);
    assert.deepEqual(m.body, { node: 3, kind: 'r1', atUs: 42, channel: 6, changed: true, reason: 'channel 6 offers more' });
    assert.ok(server.counters.telemetrySent > 0, 'counted');
  });

  test('controller.*: refused without the controller role; with it, flows are added and removed while it runs', async () => {
    const refused = err(await client.request('controller.flows', {}, T));
    assert.equal(refused.code, 'CONTROL_NOT_CONTROLLER');
    assert.match(refused.message, /controller\.listen and controller\.connect are empty/);
    view.controllerRole = new ControllerService({ hysteresis: 0.2, log, now: () => view.now() });
    try {
      assert.deepEqual(ok(await client.request('controller.flows', {}, T)), []);
      const added = ok(await client.request('controller.add', { flow: 'udp:0-4,label=0x100' }, T)) as { id: number; state: string };
      assert.deepEqual([added.id, added.state], [1, 'pending'], 'no router connected yet: the flow waits for a path');
      const tcp = ok(await client.request('controller.add', { flow: 'tcp:4-0:5001', acc: 'every-2' }, T)) as { id: number };
      assert.equal(tcp.id, 2, 'the next free id');
      for (const [args, what] of [
        [{ flow: 'udp:0-4,label=0x100000' }, /label 1048576/],
        [{ flow: 'udp:3-3' }, /same router/],
        [{ flow: 'icmp:0-4' }, /is not PROTO:SRC-DST/],
        [{ flow: 'tcp:0-4', acc: 'sometimes' }, /"acc" "sometimes" is not every or every-K/],
      ] as const) {
        const e = err(await client.request('controller.add', args, T));
        assert.equal(e.code, 'CONTROL_BAD_ARGUMENT', JSON.stringify(args));
        assert.match(e.message, what);
      }
      const udpAcc = err(await client.request('controller.add', { flow: 'udp:1-4', acc: 'every' }, T));
      assert.match(udpAcc.message, /TCP-ACC needs a tcp flow/, 'an acc given with a UDP flow is refused, not dropped');
      const twice = err(await client.request('controller.add', { flow: 'tcp:4-0:5001' }, T));
      assert.match(twice.message, /flow 2 already places this traffic/, 'the same traffic twice is refused');
      assert.deepEqual(
        (ok(await client.request('controller.flows', {}, T)) as Array<{ id: number }>).map((f) => f.id),
        [1, 2],
        'refusals changed nothing',
      );
      assert.deepEqual(ok(await client.request('controller.remove', { flow: 1 }, T)), { id: 1 });
      assert.match(err(await client.request('controller.remove', { flow: 1 }, T)).message, /no flow 1/);
      assert.deepEqual(
        (ok(await client.request('controller.flows', {}, T)) as Array<{ id: number }>).map((f) => f.id),
        [2],
      );
    } finally {
      view.controllerRole = undefined;
    }
  });

  test('each request served is published on the request channel, with when it came in, was answered and went out', async () => {
    const traces: RequestTrace[] = [];
    const take = (t: unknown): void => void traces.push(t as RequestTrace);
    requestChannel.subscribe(take);
    try {
      ok(await client.request('status', {}, T));
      err(await client.request('nosuch', {}, T));
      err(await client.requestRaw('not json', T));
    } finally {
      requestChannel.unsubscribe(take);
    }
    assert.deepEqual(
      traces.map((t) => t.ok),
      [true, false, false],
    );
    for (const t of traces) assert.ok(t.receivedMs <= t.repliedMs && t.repliedMs <= t.sentMs, JSON.stringify(t));
    ok(await client.request('status', {}, T));
    assert.equal(traces.length, 3, 'nothing is published once nobody listens');
  });

  test('help lists every command with its arguments', async () => {
    const h = ok(await client.request('help', {}, T)) as { commands: Array<{ name: string; args: Array<{ name: string; required: boolean }> }> };
    assert.deepEqual(
      h.commands.map((c) => c.name),
      [
        'status',
        'get',
        'set',
        'neighbours',
        'routes',
        'queues',
        'flows',
        'spectrum',
        'gateway',
        'vnf.list',
        'vnf.start',
        'vnf.stop',
        'controller.flows',
        'controller.add',
        'controller.remove',
        'help',
      ],
    );
    assert.deepEqual(
      h.commands.find((c) => c.name === 'set')?.args.map((a) => [a.name, a.required]),
      [
        ['values', true],
        ['expect', false],
        ['persist', false],
      ],
    );
  });
});

describe('control server set-up', () => {
  test('secrets never leave through get', async () => {
    const cfg = defaultNodeConfig(5);
    cfg.monitor.token = 'hunter2-Zq8vXw4Ty6Rb1Nm0';
    const view = new TestRouterView(cfg);
    // The version beside the redacted configuration is no hash of the secret: the same with another token, or none.
    const other = new TestRouterView({ ...cfg, monitor: { ...cfg.monitor, token: 'another-token-of-128-bits-or-more' } });
    const none = new TestRouterView({ ...cfg, monitor: { ...cfg.monitor, token: '' } });
    const server = new ControlServer(view, controlConfig({ endpoint: 'tcp://127.0.0.1:17120', telemetry: '' }), memoryLogger().log);
    await server.start();
    const client = new ControlClient('tcp://127.0.0.1:17120');
    try {
      const whole = ok(await client.request('get', {}, T)) as { config: NodeConfig; version: string };
      assert.equal(whole.config.monitor.token, REDACTED);
      assert.equal(whole.version, other.configVersion());
      assert.equal(whole.version, none.configVersion());
      assert.equal(whole.config.control.curve.secretKey, '', 'an empty secret stays empty');
      assert.equal((ok(await client.request('get', { path: 'monitor.token' }, T)) as { value: unknown }).value, REDACTED);
      // Nor through a refusal: a restart-only set names the field, not the value it has.
      const refused = await client.request('set', { values: { 'monitor.token': 'guess' } }, T);
      assert.ok(!refused.ok, 'monitor.token is restart-only');
      assert.ok(!JSON.stringify(refused).includes('hunter2'), `the refusal leaks the token: ${JSON.stringify(refused)}`);
      assert.ok(!JSON.stringify(refused).includes('guess'), 'nor echoes the guess');
      assert.equal(server.endpoints.telemetry, undefined, 'telemetry off');
      assert.equal(view.subscriberCount, 0, 'no telemetry, no subscription');
    } finally {
      client.close();
      await server.stop();
    }
  });

  test('an endpoint that cannot be bound is refused naming it, and nothing stays open', async () => {
    const view = new TestRouterView();
    const first = new ControlServer(view, controlConfig({ endpoint: 'tcp://127.0.0.1:17130', telemetry: 'tcp://127.0.0.1:17131' }), memoryLogger().log);
    await first.start();
    const second = new ControlServer(view, controlConfig({ endpoint: 'tcp://127.0.0.1:17132', telemetry: 'tcp://127.0.0.1:17131' }), memoryLogger().log);
    try {
      await assert.rejects(second.start(), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'CONTROL_BIND');
        assert.match(e.message, /control\.telemetry tcp:\/\/127\.0\.0\.1:17131: cannot bind/);
        return true;
      });
      assert.equal(view.subscriberCount, 1, 'only the first server subscribed');
      // The second server's command socket was closed: its port binds again (libzmq releases it on its I/O thread, soon after close).
      let rebound = false;
      for (let i = 0; i < 40 && !rebound; i++) {
        const third = new ControlServer(view, controlConfig({ endpoint: 'tcp://127.0.0.1:17132', telemetry: '' }), memoryLogger().log);
        try {
          await third.start();
          rebound = true;
          await third.stop();
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      assert.ok(rebound, 'the port of the refused server is free again within 2 s');
    } finally {
      await first.stop();
    }
    assert.equal(view.subscriberCount, 0, 'stop unsubscribes');
  });

  test('an ipc endpoint works as well, and both endpoints empty start nothing', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'cogmesh-ctl-'));
    const view = new TestRouterView();
    const server = new ControlServer(view, controlConfig({ endpoint: `ipc://${join(dir, 'ctl')}`, telemetry: '' }), memoryLogger().log);
    await server.start();
    const client = new ControlClient(`ipc://${join(dir, 'ctl')}`);
    try {
      assert.equal((ok(await client.request('status', {}, T)) as RouterStatus).node.id, view.id);
    } finally {
      client.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const off = new ControlServer(view, controlConfig({ endpoint: '', telemetry: '' }), memoryLogger().log);
    await off.start();
    assert.deepEqual(off.endpoints, { control: undefined, telemetry: undefined });
    await off.stop();
  });
});
