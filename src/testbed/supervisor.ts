import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mediumSetupJson } from '../../radio/medium/server.js';
import type { Logger } from '../core/log.js';
import type { TestbedPlan } from './plan.js';
import { alive, inNetns } from './netns.js';
import { newR3KeyFile } from '../config/r3-keys.js';

/**
 * The R3 key file of one testbed run, in the run's own folder (made by
 * mkdtemp, so only this user reads it): one random 256-bit key, id 1, that
 * every router of the run signs with. A new run has a new key; a router the
 * testbed restarts reads the same file. Returns its path.
 */
async function writeR3Keys(dir: string): Promise<string> {
  const file = join(dir, 'r3-keys.json');
  await writeFile(file, newR3KeyFile(1), { mode: 0o600 });
  return file;
}

export interface SupervisorOptions {
  log: Logger;
  /** Relay every line the routers log (sensing rounds and all); default: the notable ones. */
  verbose?: boolean;
  /** How to start `cogmesh`: node's own flags and the CLI entry (default: this process's). */
  command?: { execPath: string; args: string[] };
  /** Start a medium that dies again (default true); false: its death is reported and left to `onExit`. */
  restartMedium?: boolean;
}

/**
 * When the testbed starts a dead medium again: after RESTART_FIRST_MS, then
 * twice as long each time it dies again within RESTART_STABLE_MS of its
 * start, up to RESTART_MAX_MS; after RESTART_GIVE_UP such deaths in a row
 * (it cannot start: a taken endpoint, a bad setup) the testbed gives up.
 */
export const RESTART_FIRST_MS = 200;
export const RESTART_MAX_MS = 5000;
export const RESTART_STABLE_MS = 30_000;
export const RESTART_GIVE_UP = 5;

interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  state: 'running' | 'exited';
  /** How it was started, to start it again. */
  args: string[];
  netns: string | undefined;
  startedMs: number;
  /** Deaths in a row, each soon after its start (see RESTART_STABLE_MS). */
  quickDeaths: number;
  /** Times it was started again. */
  restarts: number;
  /** Started again by `restart`, not by the exit handler. */
  replacing: boolean;
  /** The start events it has yet to log before it is up (listening where the plan says); empty: up. */
  pending: Set<string>;
  /** The last warning or error it logged (or line on its standard error): why it exited, often. */
  lastError: string | undefined;
}

/** Prefix of a testbed run's own folder under the OS's temporary folder. */
export const RUN_DIR_PREFIX = 'cogmesh-testbed-';
/** The file in a run's folder that holds its supervisor's pid, so that a later run can tell a folder whose testbed was killed. */
const PID_FILE = 'supervisor.pid';

/**
 * Removes the folders in `parent` of testbed runs whose supervisor is gone
 * (killed: it had no chance to remove its own). A folder without a pid
 * file is left alone: its run may be between making it and writing the
 * file. Returns the folders removed.
 */
export async function sweepRunDirs(parent = tmpdir()): Promise<string[]> {
  const swept: string[] = [];
  for (const d of await readdir(parent).catch(() => [] as string[])) {
    if (!d.startsWith(RUN_DIR_PREFIX)) continue;
    const pid = Number((await readFile(join(parent, d, PID_FILE), 'utf8').catch(() => '')).trim());
    if (!Number.isSafeInteger(pid) || pid <= 0 || alive(pid)) continue;
    await rm(join(parent, d), { recursive: true, force: true });
    swept.push(d);
  }
  return swept;
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
  'r3-keys-reloaded',
  'vnf-started',
  'vnf-stopped',
  'vnf-failed',
  'medium-start',
  'router-joined',
  'router-left',
  'medium-stats',
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
 * others go on, starts a medium that dies again (with the same time origin,
 * so that its PN bursts are those the routers sense; the routers join it
 * again by themselves), and stops them all (SIGTERM, then SIGKILL after a
 * grace period) on `stop`.
 */
export class Supervisor {
  private readonly procs = new Map<string, Proc>();
  private dir: string | undefined;
  private stopping = false;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** The medium's time origin (epoch µs), the same for every medium process of this testbed. */
  private epochUs = 0;
  /**
   * Called when a process exits while the testbed runs (not on stop);
   * `restarting`: the testbed starts it again; `starting`: it exited in
   * its first start, before it was up (listening where the plan says: a
   * port taken, a bad configuration).
   */
  onExit: (name: string, code: number | null, signal: NodeJS.Signals | null, restarting: boolean, starting: boolean) => void = () => undefined;

  constructor(
    private readonly plan: TestbedPlan,
    private readonly o: SupervisorOptions,
  ) {}

  /** The processes' names, pids, states and how many times each was started again. */
  processes(): Array<{ name: string; pid: number | undefined; state: Proc['state']; restarts: number }> {
    return [...this.procs.values()].map((p) => ({ name: p.name, pid: p.child.pid, state: p.state, restarts: p.restarts }));
  }

  /** The last warning or error process `name` logged. */
  lastError(name: string): string | undefined {
    return this.procs.get(name)?.lastError;
  }

  pid(name: string): number | undefined {
    return this.procs.get(name)?.child.pid;
  }

  /** The run's own folder (configuration files, R3 keys), removed on `stop`; undefined before `start`. */
  folder(): string | undefined {
    return this.dir;
  }

  async start(): Promise<void> {
    const swept = await sweepRunDirs();
    if (swept.length > 0) this.o.log.warn({ event: 'testbed-swept', folders: swept }, `removed the folders of killed testbeds: ${swept.join(', ')}`);
    this.dir = await mkdtemp(join(tmpdir(), RUN_DIR_PREFIX));
    await writeFile(join(this.dir, PID_FILE), `${process.pid}\n`);
    const mediumFile = join(this.dir, 'medium.json');
    await writeFile(mediumFile, mediumSetupJson(this.plan.medium));
    this.epochUs = Date.now() * 1000;
    const mediumArgs = ['medium', '--setup', mediumFile, '--bind', this.plan.mediumEndpoint, '--epoch-us', String(this.epochUs), '--log-format', 'json'];
    this.spawn('medium', mediumArgs, undefined);
    const keyFile = this.plan.r3Auth ? await writeR3Keys(this.dir) : undefined;
    for (const r of this.plan.routers) {
      const file = join(this.dir, `${r.name}.json`);
      const config = keyFile ? { ...r.config, routing: { ...r.config.routing, auth: { keyFile, sendKeyId: 1 } } } : r.config;
      await writeFile(file, JSON.stringify(config, null, 2));
      this.spawn(r.name, ['node', '--config', file], r.netns);
    }
  }

  /** Kills one process (an experiment: a router PC dies). */
  kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): boolean {
    const p = this.procs.get(name);
    if (!p || p.state !== 'running') return false;
    return p.child.kill(signal);
  }

  /** Kills one process if it runs (SIGKILL) and starts it again as it was started (an experiment: a router PC reboots). */
  async restart(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) throw new RangeError(`no process ${JSON.stringify(name)} in this testbed (${[...this.procs.keys()].join(', ')})`);
    if (this.stopping) return;
    p.replacing = true;
    if (p.state === 'running') {
      p.child.kill('SIGKILL');
      await p.exited;
    }
    if (!this.stopping && this.procs.get(name) === p) this.spawn(name, p.args, p.netns, p);
  }

  /** Stops every process: SIGTERM, then SIGKILL after `graceMs`; removes the run's folder (configuration files, keys). */
  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.restartTimers) clearTimeout(t);
    this.restartTimers.clear();
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

  /**
   * Starts one process; `netns`: in that network namespace (`ip netns exec`,
   * which execs it: the pid is the process's own); `before`: the process
   * of that name it replaces.
   */
  private spawn(name: string, args: string[], netns: string | undefined, before?: Proc): void {
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
    const p: Proc = {
      name,
      child,
      exited,
      state: 'running',
      args,
      netns,
      startedMs: Date.now(),
      quickDeaths: before?.quickDeaths ?? 0,
      restarts: before ? before.restarts + 1 : 0,
      replacing: false,
      pending: this.startEvents(name),
      lastError: undefined,
    };
    this.procs.set(name, p);
    // Each line says which process it comes from, in both log formats.
    const log = this.o.log.child({ proc: name }, { msgPrefix: `[${name}] ` });
    createInterface({ input: child.stdout! }).on('line', (line) => this.relay(log, line, p));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      p.lastError = line;
      log.warn({ event: 'stderr' }, line);
    });
    void exited.then(({ code, signal }) => {
      p.state = 'exited';
      if (this.stopping || p.replacing) return;
      const inMs = name === 'medium' && this.o.restartMedium !== false ? this.restartDelay(p) : undefined;
      const starting = p.restarts === 0 && p.pending.size > 0;
      const then =
        starting && name !== 'medium'
          ? ' before it was up'
          : inMs !== undefined
            ? `; starting it again in ${inMs} ms (the routers join it again)`
            : name === 'medium' && this.o.restartMedium !== false
              ? `; it died ${p.quickDeaths} times in a row soon after its start: not starting it again`
              : '; the others go on';
      log.error(
        { event: 'process-exit', code, signal, ...(inMs !== undefined ? { restartInMs: inMs } : {}) },
        `${name} exited (${signal ?? `code ${code}`})${starting ? '' : ' while the testbed runs'}${then}`,
      );
      this.onExit(name, code, signal, inMs !== undefined, starting);
      if (inMs === undefined) return;
      const timer = setTimeout(() => {
        this.restartTimers.delete(timer);
        if (!this.stopping && this.procs.get(name) === p) this.spawn(name, p.args, p.netns, p);
      }, inMs);
      this.restartTimers.add(timer);
    });
    log.info({ event: 'process-start', childPid: child.pid }, `${name} started (pid ${child.pid})`);
  }

  /** How long to wait before starting `p` again, or undefined when it keeps dying at once (give up). */
  private restartDelay(p: Proc): number | undefined {
    p.quickDeaths = Date.now() - p.startedMs < RESTART_STABLE_MS ? p.quickDeaths + 1 : 1;
    if (p.quickDeaths > RESTART_GIVE_UP) return undefined;
    return Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** (p.quickDeaths - 1));
  }

  /** What a process logs once it listens where the plan says: the medium its endpoint, a router its control API and monitor. */
  private startEvents(name: string): Set<string> {
    if (name === 'medium') return new Set(['medium-start']);
    const r = this.plan.routers.find((x) => x.name === name);
    // A router that logs warnings only never says it is up: it is taken as up at once (its death is then a death, not a failed start).
    if (!r || !['trace', 'debug', 'info'].includes(r.config.log.level)) return new Set();
    return new Set(['control-start', ...(r.monitor ? ['monitor-start'] : [])]);
  }

  private relay(log: Logger, line: string, p: Proc): void {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      log.info(line);
      return;
    }
    const event = typeof rec.event === 'string' ? rec.event : undefined;
    if (event !== undefined) p.pending.delete(event);
    const level = LEVELS[typeof rec.level === 'number' ? rec.level : 30] ?? 'info';
    if ((level === 'warn' || level === 'error' || level === 'fatal') && typeof rec.msg === 'string') p.lastError = rec.msg;
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
