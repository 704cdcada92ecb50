import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ControlClient } from '../../src/control/client.js';
import type { ControlReply } from '../../src/control/protocol.js';
import { spawnCogmesh } from './cli.js';
import { until } from './until.js';

/**
 * A \`cogmesh testbed --netns\` run as the IP tests drive it: each router
 * daemon in a network namespace with its TUN, a client host namespace behind
 * each, and commands run in those hosts.
 */

export const RUN_DIR = '/run/cogmesh/testbeds';
const TOOLS = ['ip', 'ping', 'traceroute', 'iperf3', 'curl', 'python3', 'setpriv'];
const missing = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
export const skip =
  process.getuid?.() !== 0 ? 'network namespaces and TUN devices need root' : missing.length > 0 ? `missing tools: ${missing.join(', ')}` : false;

export interface Line {
  event?: string;
  tag?: string;
  proc?: string;
  [k: string]: unknown;
}

/** A `cogmesh testbed --netns` process and what it logged. */
export class IpTestbed {
  readonly lines: Line[] = [];
  tag = '';
  private readonly clients: ControlClient[] = [];

  private constructor(readonly proc: ChildProcess) {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      try {
        this.lines.push(JSON.parse(l) as Line);
      } catch {
        this.lines.push({ msg: l });
      }
    });
  }

  static async start(scenario: string, ...extra: string[]): Promise<IpTestbed> {
    const proc = spawnCogmesh(
      ['testbed', scenario, '--netns', '--set', 'flows=[]', '--log-format', 'json', '--for', '600', ...extra],
      ['ignore', 'pipe', 'inherit'],
    );
    const tb = new IpTestbed(proc);
    const started = await until('the testbed-start line', async () => tb.lines.find((l) => l.event === 'testbed-start'), 60_000);
    tb.tag = String(started.tag);
    return tb;
  }

  ns(kind: 'r' | 'h', i: number): string {
    return `cm-${this.tag}-${kind}${i}`;
  }

  /** Runs a command in client host i (or router i's namespace) and waits for it. */
  run(i: number, argv: string[], timeoutMs = 60_000, kind: 'h' | 'r' = 'h'): Promise<{ code: number | null; out: string; err: string }> {
    return run(['ip', 'netns', 'exec', this.ns(kind, i), ...argv], timeoutMs);
  }

  /** Starts a command in client host i that runs until killed. */
  background(i: number, argv: string[]): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.ns('h', i), ...argv], { stdio: 'ignore' });
  }

  ctl(i: number): ControlClient {
    const c = new ControlClient(`ipc://${RUN_DIR}/${this.tag}.ipc/r${i}.ctl`);
    this.clients.push(c);
    return c;
  }

  /**
   * iperf3 TCP from host `from` to host `to` (its 10.0.N.2) for `seconds`,
   * the first `omit` left out, with iperf3's `extra` arguments: the
   * receiver's rate (Mbps).
   */
  async tcp(from: number, to: number, port: number, seconds: number, omit = 0, extra: string[] = []): Promise<number> {
    const server = await iperfServer(this, to, port);
    try {
      const r = await this.run(
        from,
        ['iperf3', '-c', `10.0.${to}.2`, '-p', String(port), '-t', String(seconds), '-O', String(omit), '-J', ...extra],
        (seconds + omit + 60) * 1000,
      );
      const j = JSON.parse(r.out || '{}') as { end?: { sum_received?: { bits_per_second: number } }; error?: string };
      assert.ok(r.code === 0 && j.end?.sum_received, `iperf3 from host ${from} to host ${to}: ${j.error ?? r.err}`);
      return j.end.sum_received.bits_per_second / 1e6;
    } finally {
      kill(server);
    }
  }

  async status(i: number): Promise<Status> {
    const r: ControlReply = await this.ctl(i).request('status', {}, 3000);
    assert.ok(r.ok, JSON.stringify(r));
    return r.result as Status;
  }

  /** Pings host `to` from host `from` until one reply comes. */
  async reachable(from: number, to: string, ms = 120_000): Promise<void> {
    await until(
      `a ping reply from ${to}`,
      async () => ((await this.run(from, ['ping', '-c', '1', '-W', '2', to], 10_000)).code === 0 ? true : undefined),
      ms,
      500,
    );
  }

  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    for (const c of this.clients) c.close();
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill(signal);
      await exited;
    }
  }

  /** What of this testbed is still on the machine: namespaces, its state file, its ipc directory. */
  leftovers(): string[] {
    const ns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
    const left = ns.split('\n').filter((l) => l.startsWith(`cm-${this.tag}-`));
    if (existsSync(join(RUN_DIR, `${this.tag}.json`))) left.push(`${this.tag}.json`);
    if (existsSync(join(RUN_DIR, `${this.tag}.ipc`))) left.push(`${this.tag}.ipc`);
    return left;
  }
}

export interface Status {
  counters: { forwarded: number };
  ip: { relayed: number; toHost: number };
}

export function run(argv: string[], timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/** Waits until something in host `i` listens on TCP `port`. */
export async function listening(tb: IpTestbed, i: number, port: number): Promise<void> {
  await until(
    `a listener on port ${port} in host ${i}`,
    async () => ((await tb.run(i, ['ss', '-Hltn', `sport = :${port}`], 10_000)).out.trim() !== '' ? true : undefined),
    20_000,
    200,
  );
}

/** An iperf3 server in host `i` for one test, once it listens. */
export async function iperfServer(tb: IpTestbed, i: number, port: number): Promise<ChildProcess> {
  const p = tb.background(i, ['iperf3', '-s', '-1', '-p', String(port)]);
  await listening(tb, i, port);
  return p;
}

export function kill(p: ChildProcess): void {
  if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}
