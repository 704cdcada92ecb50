import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mediumSetupJson } from '../../radio/medium/server.js';
import type { Logger } from '../core/log.js';
import type { TestbedPlan } from './plan.js';
import { inNetns } from './netns.js';

export interface SupervisorOptions {
  log: Logger;
  /** Relay every line the routers log (sensing rounds and all); default: the notable ones. */
  verbose?: boolean;
  /** How to start `cogmesh`: node's own flags and the CLI entry (default: this process's). */
  command?: { execPath: string; args: string[] };
}

interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  state: 'running' | 'exited';
}

/** Set in a child's environment: it stops when its standard input closes (the testbed went away). */
export const SUPERVISED = 'COGMESH_SUPERVISED';

/** In a process the testbed started: resolves when the testbed goes away (its pipe to our standard input closes). */
export function supervisorGone(): Promise<string> | undefined {
  if (process.env[SUPERVISED] !== '1') return undefined;
  return new Promise((resolve) => {
    process.stdin.on('data', () => undefined);
    process.stdin.once('close', () => resolve('the testbed went away'));
    process.stdin.once('end', () => resolve('the testbed went away'));
  });
}

/** Log events a testbed relays from its routers unless asked for everything. */
const NOTABLE = new Set([
  'node-start',
  'node-stop',
  'neighbour-up',
  'neighbour-lost',
  'traffic',
  'reconfigured',
  'vnf-started',
  'vnf-stopped',
  'vnf-failed',
  'medium-start',
  'router-joined',
  'router-left',
  'medium-rejoin',
  'driver-error',
  'control-start',
  'monitor-start',
]);

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/**
 * Runs a testbed: the medium process, then one `cogmesh node` process per
 * router, each from a configuration file the plan gives. It relays their
 * logs (tagged with the process), reports a process that dies while the
 * others go on, and stops them all (SIGTERM, then SIGKILL after a grace
 * period) on `stop`.
 */
export class Supervisor {
  private readonly procs = new Map<string, Proc>();
  private dir: string | undefined;
  private stopping = false;
  /** Called when a process exits while the testbed runs (not on stop). */
  onExit: (name: string, code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;

  constructor(
    private readonly plan: TestbedPlan,
    private readonly o: SupervisorOptions,
  ) {}

  /** The running processes' names and pids. */
  processes(): Array<{ name: string; pid: number | undefined; state: Proc['state'] }> {
    return [...this.procs.values()].map((p) => ({ name: p.name, pid: p.child.pid, state: p.state }));
  }

  pid(name: string): number | undefined {
    return this.procs.get(name)?.child.pid;
  }

  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'cogmesh-testbed-'));
    const mediumFile = join(this.dir, 'medium.json');
    await writeFile(mediumFile, mediumSetupJson(this.plan.medium));
    this.spawn('medium', ['medium', '--setup', mediumFile, '--bind', this.plan.mediumEndpoint, '--log-format', 'json']);
    for (const r of this.plan.routers) {
      const file = join(this.dir, `${r.name}.json`);
      await writeFile(file, JSON.stringify(r.config, null, 2));
      this.spawn(r.name, ['node', '--config', file], r.netns);
    }
  }

  /** Kills one process (an experiment: a router PC dies). */
  kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): boolean {
    const p = this.procs.get(name);
    if (!p || p.state !== 'running') return false;
    return p.child.kill(signal);
  }

  /** Stops every process: SIGTERM, then SIGKILL after `graceMs`; removes the configuration files. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // Routers first, so that they leave the medium cleanly; then the medium.
    const order = [...this.procs.values()].sort((a, b) => (a.name === 'medium' ? 1 : 0) - (b.name === 'medium' ? 1 : 0));
    await Promise.all(order.filter((p) => p.name !== 'medium').map((p) => this.end(p, graceMs)));
    const medium = this.procs.get('medium');
    if (medium) await this.end(medium, graceMs);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private async end(p: Proc, graceMs: number): Promise<void> {
    if (p.state !== 'running') return;
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
    await p.exited;
    clearTimeout(timer);
  }

  /** Starts one process; `netns`: in that network namespace (`ip netns exec`, which execs it: the pid is the process's own). */
  private spawn(name: string, args: string[], netns?: string): void {
    const own = this.o.command ?? { execPath: process.execPath, args: [...process.execArgv, process.argv[1]!] };
    const cmd = netns ? inNetns(netns, own.execPath, own.args) : own;
    // The child's standard input is a pipe from this process: if the testbed dies, even by SIGKILL, the pipe closes and the child stops.
    // Its own process group: a terminal's Ctrl-C reaches the testbed alone, which stops the routers first, then the medium.
    const child = spawn(cmd.execPath, [...cmd.args, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, FORCE_COLOR: '0', [SUPERVISED]: '1' },
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const p: Proc = { name, child, exited, state: 'running' };
    this.procs.set(name, p);
    // Each line says which process it comes from, in both log formats.
    const log = this.o.log.child({ proc: name }, { msgPrefix: `[${name}] ` });
    createInterface({ input: child.stdout! }).on('line', (line) => this.relay(log, line));
    createInterface({ input: child.stderr! }).on('line', (line) => log.warn({ event: 'stderr' }, line));
    void exited.then(({ code, signal }) => {
      p.state = 'exited';
      if (this.stopping) return;
      log.error({ event: 'process-exit', code, signal }, `${name} exited (${signal ?? `code ${code}`}) while the testbed runs; the others go on`);
      this.onExit(name, code, signal);
    });
    log.info({ event: 'process-start', childPid: child.pid }, `${name} started (pid ${child.pid})`);
  }

  private relay(log: Logger, line: string): void {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      log.info(line);
      return;
    }
    const event = typeof rec.event === 'string' ? rec.event : undefined;
    const level = LEVELS[typeof rec.level === 'number' ? rec.level : 30] ?? 'info';
    const notable =
      level === 'warn' ||
      level === 'error' ||
      level === 'fatal' ||
      (event !== undefined && NOTABLE.has(event)) ||
      (event === 'r1-decision' && rec.changed === true);
    if (!notable && !this.o.verbose) return;
    const { level: _l, time: _t, pid: _p, hostname: _h, msg, ...fields } = rec;
    log[level](fields, typeof msg === 'string' ? msg : '');
  }
}
