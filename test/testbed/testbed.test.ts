import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { launchChromium } from '../support/browser.js';
import { ControlClient, TelemetryClient } from '../../src/control/client.js';
import type { ControlReply } from '../../src/control/protocol.js';
import { cogmesh, spawnCogmesh } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * The real-time testbed as an operator meets it: `cogmesh testbed` starts
 * the medium and one `cogmesh node` process per router; the tests talk to
 * the routers' control APIs over ZeroMQ and kill a router process.
 */

const MEDIUM = 'tcp://127.0.0.1:17600';
const CONTROL_BASE = 17700;
const MONITOR_BASE = 18180;
const control = (i: number) => `tcp://127.0.0.1:${CONTROL_BASE + 10 * i}`;
const telemetry = (i: number) => `tcp://127.0.0.1:${CONTROL_BASE + 10 * i + 1}`;

interface Line {
  proc?: string;
  event?: string;
  msg?: string;
  [k: string]: unknown;
}

function result<T>(r: ControlReply): T {
  assert.ok(r.ok, `refused: ${JSON.stringify(r)}`);
  return r.result as T;
}

interface TrafficRow {
  id: number;
  role: string;
  received: number;
  sent: number;
}
interface FlowRow {
  proto: string;
  src: number;
  dst: number;
  role: string;
  nextHop: number | undefined;
}
interface Status {
  pid: number;
  configVersion: string;
  sensing: { durationMs: number };
  traffic: TrafficRow[];
}

describe('the real-time testbed: a diamond of router processes on the medium process', { timeout: 180_000 }, () => {
  let testbed: ChildProcess;
  const lines: Line[] = [];
  const clients: ControlClient[] = [];
  const ctl = (i: number): ControlClient => {
    const c = new ControlClient(control(i));
    clients.push(c);
    return c;
  };

  before(async () => {
    testbed = spawnCogmesh(
      [
        'testbed',
        'config/scenarios/testbed-diamond.json',
        '--medium',
        MEDIUM,
        '--control-base',
        String(CONTROL_BASE),
        '--monitor-base',
        String(MONITOR_BASE),
        '--log-format',
        'json',
        '--for',
        '170',
      ],
      ['ignore', 'pipe', 'inherit'],
    );
    createInterface({ input: testbed.stdout! }).on('line', (l) => {
      try {
        lines.push(JSON.parse(l) as Line);
      } catch {
        lines.push({ msg: l });
      }
    });
    // Every router answers its control API.
    for (let i = 0; i < 4; i++) await until(`router ${i}'s control API`, async () => result<Status>(await ctl(i).request('status', {}, 1000)), 30_000);
  });

  after(async () => {
    for (const c of clients) c.close();
    if (testbed.exitCode === null && testbed.signalCode === null) {
      testbed.kill('SIGINT');
      await new Promise((r) => testbed.once('exit', r));
    }
  });

  test('`cogmesh ctl status --json` answers from router 0', () => {
    const r = cogmesh('ctl', '--node', control(0), 'status', '--json');
    assert.equal(r.code, 0, r.err);
    const s = JSON.parse(r.out) as { node: { id: number }; mesh: boolean };
    assert.equal(s.node.id, 0);
    assert.equal(s.mesh, true);
  });

  test('a remote set of the sensing duration shows in the next telemetry and in get; a stale compare-and-set is refused and changes nothing', async () => {
    const c = ctl(2);
    const before = result<Status>(await c.request('status'));
    const sub = new TelemetryClient(telemetry(2), ['status', 'config']);
    try {
      await new Promise((r) => setTimeout(r, 300)); // the subscription reaches the node
      const set = result<{ version: string }>(await c.request('set', { values: { 'sensing.durationMs': 40 }, expect: before.configVersion }));
      assert.notEqual(set.version, before.configVersion);
      const statusOf = (m: { body: unknown }) => (m.body as { status: Status }).status;
      const seen = await sub.waitFor((m) => m.topic === 'status' && statusOf(m).sensing.durationMs === 40, 5000);
      assert.equal(statusOf(seen).configVersion, set.version);
      const got = result<{ value: unknown }>(await c.request('get', { path: 'sensing.durationMs' }));
      assert.equal(got.value, 40);
      // The old version is stale now.
      const stale = await c.request('set', { values: { 'sensing.durationMs': 20 }, expect: before.configVersion });
      assert.ok(!stale.ok && stale.error.code === 'CONTROL_STALE_VERSION', JSON.stringify(stale));
      const bad = await c.request('set', { values: { 'sensing.durationMs': 5000, 'switching.intervalMs': 20 } });
      assert.ok(!bad.ok && bad.error.issues?.some((i) => i.path === '/sensing/durationMs'), JSON.stringify(bad));
      const unknown = await c.request('reboot');
      assert.ok(!unknown.ok && unknown.error.code === 'CONTROL_UNKNOWN_COMMAND', JSON.stringify(unknown));
      const after = result<Status>(await c.request('status'));
      assert.equal(after.configVersion, set.version, 'refused commands changed nothing');
      assert.equal(after.sensing.durationMs, 40);
    } finally {
      sub.close();
    }
  });

  test("router 0's monitor in headless Chromium shows its live spectrum and its routes", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      await page.goto(`http://127.0.0.1:${MONITOR_BASE}/`);
      const rows = (): Promise<number> => page.locator('#power').getAttribute('data-rounds').then(Number);
      const first = await until('spectrum rows', async () => ((await rows()) >= 1 ? rows() : undefined), 20_000);
      await until('a new sensing round on the page', async () => ((await rows()) > first ? true : undefined), 20_000);
      await until(
        'a route to router 3 on the page',
        async () => ((await page.locator('#routes tbody tr[data-dst="3"]').count()) > 0 ? true : undefined),
        30_000,
      );
      const r1 = (await page.locator('#r1').textContent())?.trim();
      assert.match(r1 ?? '', /^\d+$/, `R1's channel on the page: ${r1}`);
      if (!existsSync('test-artifacts')) mkdirSync('test-artifacts');
      await page.screenshot({ path: 'test-artifacts/monitor-testbed.png', fullPage: true });
    } finally {
      await browser.close();
    }
  });

  test('the flow runs over one path; when that router process is killed, traffic moves to the other path', async () => {
    const src = ctl(0);
    const sink = ctl(3);
    const relay = await until(
      'flow 0 to run through a relay',
      async () => {
        const flows = result<FlowRow[]>(await src.request('flows'));
        const f = flows.find((x) => x.proto === 'udp' && x.src === 0 && x.dst === 3);
        const received = result<Status>(await sink.request('status')).traffic.find((t) => t.id === 0)?.received ?? 0;
        return f && (f.nextHop === 1 || f.nextHop === 2) && received >= 20 ? f.nextHop : undefined;
      },
      60_000,
    );
    const other = relay === 1 ? 2 : 1;
    const pid = result<Status>(await ctl(relay).request('status')).pid;
    process.kill(pid, 'SIGKILL');
    const atKill = result<Status>(await sink.request('status')).traffic.find((t) => t.id === 0)!.received;
    await until(
      `flow 0 to move to router ${other}`,
      async () => {
        const f = result<FlowRow[]>(await src.request('flows')).find((x) => x.proto === 'udp' && x.src === 0 && x.dst === 3);
        return f?.nextHop === other ? true : undefined;
      },
      30_000,
    );
    // And packets arrive again through it.
    const resumed = await until(
      'packets through the other path',
      async () => {
        const n = result<Status>(await sink.request('status')).traffic.find((t) => t.id === 0)!.received;
        return n >= atKill + 25 ? n : undefined;
      },
      30_000,
    );
    assert.ok(resumed >= atKill + 25, `the sink got ${resumed - atKill} packets after the kill`);
    const relayFlows = result<FlowRow[]>(await ctl(other).request('flows'));
    assert.ok(
      relayFlows.some((f) => f.proto === 'udp' && f.src === 0 && f.dst === 3 && f.role === 'relay'),
      `router ${other} relays flow 0: ${JSON.stringify(relayFlows)}`,
    );
    // The testbed reported the death and kept the others running.
    const died = lines.find((l) => l.event === 'process-exit' && l.proc === `r${relay}`);
    assert.ok(died, `the testbed reported r${relay}'s death`);
    const left = await until('the medium to take the router off the air', async () => lines.find((l) => l.event === 'router-left' && l.node === relay), 10_000);
    assert.ok(left, 'the medium took it off the air');
  });
});

describe('TCP-ACC in the router daemons: each VNF in its sandbox, on the data path', { timeout: 120_000 }, () => {
  const ACC_CONTROL = 17800;
  let testbed: ChildProcess;
  const clients: ControlClient[] = [];
  const ctlAt = (i: number): ControlClient => {
    const c = new ControlClient(`tcp://127.0.0.1:${ACC_CONTROL + 10 * i}`);
    clients.push(c);
    return c;
  };

  before(() => {
    testbed = spawnCogmesh(
      [
        'testbed',
        'config/scenarios/urbanx-chain.json',
        '--hops',
        '2',
        '--tcp',
        'reno',
        '--acc',
        'every',
        '--set',
        'flows.0.startS=0',
        '--medium',
        'tcp://127.0.0.1:17650',
        '--control-base',
        String(ACC_CONTROL),
        '--monitor-base',
        '18300',
        '--log-format',
        'json',
        '--for',
        '110',
      ],
      ['ignore', 'ignore', 'inherit'],
    );
  });

  after(async () => {
    for (const c of clients) c.close();
    if (testbed.exitCode === null && testbed.signalCode === null) {
      testbed.kill('SIGKILL');
      await new Promise((r) => testbed.once('exit', r));
    }
  });

  test('the relay splits the connection in its sandbox and the sink reads every byte of the stream in order', async () => {
    const sink = ctlAt(2);
    const got = await until(
      '200 kB at the sink',
      async () => {
        const t = result<Status>(await sink.request('status', {}, 1000)).traffic.find((x) => x.id === 0) as
          (TrafficRow & { bytes: number; corruptBytes: number }) | undefined;
        return t && t.bytes >= 200_000 ? t : undefined;
      },
      80_000,
    );
    assert.equal(got.corruptBytes, 0, 'every byte matches the source stream');
    const vnfs = result<Array<{ type: string; state: string; packetsTaken: number; packetsSent: number }>>(await ctlAt(1).request('vnf.list'));
    const acc = vnfs.find((v) => v.type === 'tcp-acc');
    assert.ok(acc && acc.state === 'running' && acc.packetsTaken > 100 && acc.packetsSent > 100, `the relay's TCP-ACC works the flow: ${JSON.stringify(vnfs)}`);
  });

  test('when the testbed itself is killed, its processes stop too', async () => {
    const pids = await Promise.all([0, 1, 2].map(async (i) => result<Status>(await ctlAt(i).request('status', {}, 2000)).pid));
    testbed.kill('SIGKILL');
    await until(
      'every router process to exit',
      async () => {
        const alive = pids.filter((pid) => {
          try {
            process.kill(pid, 0);
            return true;
          } catch {
            return false;
          }
        });
        return alive.length === 0 ? true : undefined;
      },
      15_000,
    );
  });
});
