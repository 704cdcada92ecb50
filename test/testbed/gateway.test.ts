import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { ControlClient } from '../../src/control/client.js';
import type { GatewayState } from '../../src/gateway/role.js';
import { spawnCogmesh } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * The gateway role with Linux TCP: `cogmesh testbed --netns` runs two
 * routers one hop apart (no PNs), each with a client host namespace; iperf3
 * sends from the host behind router 0 to the host behind router 1. Without
 * the gateway the flow gets C; with router 0's gateway serving router 1's
 * LAN in a static slice of T_on of every T = 100 ms at C (set live through
 * the control API), it gets C·T_on/T.
 */

const RUN_DIR = '/run/cogmesh/testbeds';
const missing = ['ip', 'ping', 'iperf3', 'ss'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
const skip = process.getuid?.() !== 0 ? 'network namespaces and TUN devices need root' : missing.length > 0 ? `missing tools: ${missing.join(', ')}` : false;

/** Runs argv to its end (killed past `timeoutMs`): its exit code and standard output. */
function exec(argv: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('iperf3 (Linux TCP) through a time-sliced gateway', { skip, timeout: 300_000 }, () => {
  let proc: ChildProcess;
  let tag = '';
  let ctl: ControlClient;
  const inHost = (i: number, argv: string[]): string[] => ['ip', 'netns', 'exec', `cm-${tag}-h${i}`, ...argv];

  before(async () => {
    proc = spawnCogmesh(
      [
        'testbed',
        'config/scenarios/testbed-chain.json',
        '--netns',
        '--hops',
        '1',
        '--set',
        'flows=[]',
        '--set',
        'pn={"sources":[]}',
        '--log-format',
        'json',
        '--for',
        '280',
      ],
      ['ignore', 'pipe', 'inherit'],
    );
    const lines: Array<{ event?: string; tag?: string }> = [];
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      try {
        lines.push(JSON.parse(l) as { event?: string; tag?: string });
      } catch {
        // Not a log line.
      }
    });
    tag = String((await until('the testbed-start line', async () => lines.find((l) => l.event === 'testbed-start'), 60_000)).tag);
    ctl = new ControlClient(`ipc://${RUN_DIR}/${tag}.ipc/r0.ctl`);
    await until(
      'a ping reply from 10.0.1.2',
      async () => ((await exec(inHost(0, ['ping', '-c', '1', '-W', '2', '10.0.1.2']), 10_000)).code === 0 ? true : undefined),
      120_000,
      500,
    );
  });
  after(async () => {
    ctl?.close();
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      await exited;
    }
    const left = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => l.startsWith(`cm-${tag}-`));
    assert.deepEqual(left, [], 'the testbed left no namespace behind');
  });

  /** One iperf3 TCP run of `seconds` from host 0 to host 1: the receiver's rate (Mbps). */
  async function iperf(port: number, seconds: number): Promise<number> {
    const server = spawn('ip', ['netns', 'exec', `cm-${tag}-h1`, 'iperf3', '-s', '-1', '-p', String(port)], { stdio: 'ignore' });
    try {
      await until(
        `iperf3 listening on ${port}`,
        async () => ((await exec(inHost(1, ['ss', '-Hltn', `sport = :${port}`]), 10_000)).out.trim() !== '' ? true : undefined),
        20_000,
        200,
      );
      const r = await exec(inHost(0, ['iperf3', '-c', '10.0.1.2', '-p', String(port), '-t', String(seconds), '-J']), (seconds + 60) * 1000);
      const j = JSON.parse(r.out) as { end: { sum_received: { bits_per_second: number } } };
      return j.end.sum_received.bits_per_second / 1e6;
    } finally {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    }
  }

  test('T_on/T = 1/2: within 15% of C·T_on/T', async () => {
    const c = await iperf(5301, 12);
    assert.ok(c > 0.3, `unsliced: ${c} Mbps`);
    const gateway = {
      enabled: true,
      clients: [{ id: 'h1', prefix: '10.0.1.0/24', router: 1 }],
      slicing: { periodMs: 100, mode: 'static', static: [{ clients: ['h1'], share: 0.5 }] },
      rate: { rateMbps: Number(c.toFixed(3)) },
    };
    const set = await ctl.request('set', { values: { gateway } }, 5000);
    assert.ok(set.ok, JSON.stringify(set));
    const sliced = await iperf(5302, 12);
    const expected = c * 0.5;
    assert.ok(Math.abs(sliced - expected) / expected < 0.15, `sliced ${sliced} Mbps, C·T_on/T = ${expected} Mbps (C = ${c})`);
    const r = await ctl.request('gateway', {}, 5000);
    assert.ok(r.ok, JSON.stringify(r));
    const h1 = (r.result as GatewayState).clients[0]!;
    assert.equal(h1.share, 0.5);
    assert.ok(h1.sent > 100, `the gateway sent ${h1.sent} packets of the client`);
  });
});
