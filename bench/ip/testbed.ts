/**
 * A `cogmesh testbed --netns` for bench/ip.ts: started as a child process
 * with JSON log lines, ready once every router's control API is up and the
 * first host reaches the last; stopped with one SIGINT (the testbed then
 * stops its routers and medium and removes its namespaces), and if that
 * fails, killed and its namespaces removed here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { childrenOf, deadline, netnsPids, onCleanup, removeNetns, run, sleep } from './sys.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN_DIR = '/run/cogmesh/testbeds';

/**
 * The ideal medium the IP benches run on, as `--set` overrides of the
 * scenario: no PN sources, no sensing (R1 fixed on channel 6), 802.11g's
 * fastest rate, and none of the scenario's own flows.
 */
export const IDEAL_MEDIUM: readonly string[] = [
  'flows=[]',
  'pn.sources=[]',
  'node.channel.cognitive=false',
  'node.channel.initialChannel=6',
  'medium.phy=802.11g',
  'medium.dataRateMbps=54',
  'node.channel.capacityMbps=54',
];

export interface TestbedOptions {
  /** The testbed's arguments after the scenario (--hops, --acc, --set...). */
  args: string[];
  routers: number;
  /** Extra environment for the testbed and its processes (NODE_OPTIONS for a profile). */
  env?: Record<string, string>;
  /** How long to wait for it to come up (ms). */
  upTimeoutMs?: number;
  /** Run the sources under tsx instead of the compiled build (bin/cogmesh.js). */
  fromSources?: boolean;
}

/**
 * Why the compiled build cannot stand for the sources (missing, or older
 * than a source file or the schema it compiles), or undefined when it can.
 */
export function buildStaleness(): string | undefined {
  // Written when `npm run build` finishes; the build skips steps that are up to date, so its outputs may be older.
  const built = join(ROOT, 'dist/.built');
  let builtMs: number;
  try {
    builtMs = statSync(built).mtimeMs;
  } catch {
    return 'no compiled build (dist/.built)';
  }
  const newest = (dir: string): { path: string; ms: number } => {
    let best = { path: dir, ms: 0 };
    for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || !/\.(ts|json)$/.test(e.name)) continue;
      const path = join(e.path, e.name);
      const ms = statSync(path).mtimeMs;
      if (ms > best.ms) best = { path, ms };
    }
    return best;
  };
  for (const dir of ['src', 'radio', 'config']) {
    const n = newest(join(ROOT, dir));
    if (n.ms > builtMs) return `the compiled build is older than ${n.path.slice(ROOT.length)}`;
  }
  return undefined;
}

export interface Testbed {
  tag: string;
  /** The command that started it, as a person would type it from the repository. */
  command: string;
  routerNs(i: number): string;
  hostNs(i: number): string;
  /** The veth end in host i's namespace. */
  hostDev(i: number): string;
  hostAddr(i: number): string;
  /** The router daemons' and the medium's pids. */
  routerPids: number[];
  mediumPid: number;
  /** Seconds from start to ready (routers up, first host reaches the last). */
  upS: number;
  /** The last log lines (for an error). */
  tail(): string;
  stop(): Promise<void>;
}

export async function startTestbed(o: TestbedOptions): Promise<Testbed> {
  const entry = o.fromSources ? ['--import', 'tsx', 'src/cli/main.ts'] : ['bin/cogmesh.js'];
  const cli = [...entry, 'testbed', 'config/scenarios/testbed-chain.json', '--netns', '--log-format', 'json', ...o.args];
  const command = `node ${cli.map((a) => (/^[\w./:=,-]+$/.test(a) ? a : `'${a}'`)).join(' ')}`;
  const t0 = performance.now();
  // Its own process group: a Ctrl-C at the terminal reaches the bench alone, which sends the testbed exactly one SIGINT.
  const child = spawn(process.execPath, cli, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...o.env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: string[] = [];
  let tag: string | undefined;
  const pids = new Map<string, number>();
  const controls = new Set<string>();
  let fault: string | undefined;
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > 40) lines.shift();
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (rec.event === 'testbed-start' && typeof rec.tag === 'string') tag = rec.tag;
    if (rec.event === 'process-start' && typeof rec.proc === 'string' && typeof rec.childPid === 'number') pids.set(rec.proc, rec.childPid);
    if (rec.event === 'control-start' && typeof rec.proc === 'string') controls.add(rec.proc);
    if (rec.event === 'process-exit') fault = `${String(rec.proc)} exited while the testbed ran`;
  };
  createInterface({ input: child.stdout! }).on('line', keep);
  createInterface({ input: child.stderr! }).on('line', keep);
  let gone = false;
  void exited.then(() => (gone = true));

  const stop = onCleanup(() => stopTestbed(child, exited, () => tag));
  const tail = (): string => lines.map((l) => `    ${l.slice(0, 300)}`).join('\n');
  const fail = async (why: string): Promise<never> => {
    const t = tail();
    await stop();
    throw new Error(`the testbed did not come up: ${why}\n  ${command}\n${t}`);
  };

  const deadline = performance.now() + (o.upTimeoutMs ?? 45_000);
  while (controls.size < o.routers || !pids.has('medium') || tag === undefined) {
    if (gone) return fail('the testbed process exited');
    if (fault) return fail(fault);
    if (performance.now() > deadline) return fail(`only ${controls.size} of ${o.routers} routers started their control API`);
    await sleep(100);
  }
  const t = tag;
  const routerNs = (i: number): string => `cm-${t}-r${i}`;
  const hostNs = (i: number): string => `cm-${t}-h${i}`;
  const hostAddr = (i: number): string => `10.0.${i}.2`;
  // The first packets start route discovery: wait until the first host reaches the last.
  const last = o.routers - 1;
  for (;;) {
    const r = await run('ip', ['netns', 'exec', hostNs(0), 'ping', '-c', '1', '-W', '1', hostAddr(last)], 5000);
    if (r.code === 0) break;
    if (gone) return fail('the testbed process exited');
    if (performance.now() > deadline) return fail(`h0 cannot reach ${hostAddr(last)} (h${last}) through the mesh`);
  }
  const routerPids: number[] = [];
  for (let i = 0; i < o.routers; i++) {
    const pid = pids.get(`r${i}`);
    // The supervisor runs each router with `ip netns exec`, which execs it: the daemon is the one process in its namespace.
    const inNs = await netnsPids(routerNs(i));
    if (pid === undefined || !inNs.includes(pid)) return fail(`router r${i}'s pid (${pid}) is not in namespace ${routerNs(i)} (${inNs.join(', ')})`);
    routerPids.push(pid);
  }
  const mediumPid = pids.get('medium')!;
  if (!childrenOf(child.pid!).includes(mediumPid)) return fail(`the medium (pid ${mediumPid}) is not the testbed's child`);
  return {
    tag: t,
    command,
    routerNs,
    hostNs,
    hostDev: (i) => `cm${t}-${i}h`,
    hostAddr,
    routerPids,
    mediumPid,
    upS: (performance.now() - t0) / 1000,
    tail,
    stop,
  };
}

/** One SIGINT and a wait; if the testbed does not end, SIGKILL it and its processes and remove its namespaces and run files here. */
async function stopTestbed(child: ChildProcess, exited: Promise<void>, tag: () => string | undefined): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const family = [child.pid!, ...childrenOf(child.pid!)];
    child.kill('SIGINT');
    const ended = await Promise.race([exited.then(() => true), deadline(30_000).then(() => false)]);
    if (!ended) {
      process.stderr.write(`bench/ip.ts: the testbed (pid ${child.pid}) did not stop within 30 s of SIGINT: killing it\n`);
      for (const pid of family) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await exited;
    }
  }
  // Whatever a killed testbed (or a testbed killed half-way up, before it logged its tag) left.
  const t = tag() ?? (await tagOfPid(child.pid!));
  if (t === undefined) return;
  const left = (await run('ip', ['netns', 'list'])).stdout
    .split('\n')
    .map((l) => l.split(/\s+/)[0] ?? '')
    .filter((n) => n.startsWith(`cm-${t}-`));
  for (const ns of left) await removeNetns(ns);
  await rm(`${RUN_DIR}/${t}.json`, { force: true });
  await rm(`${RUN_DIR}/${t}.ipc`, { recursive: true, force: true });
}

/** The tag in the state file that testbed process `pid` wrote, if any. */
async function tagOfPid(pid: number): Promise<string | undefined> {
  let names: string[];
  try {
    names = await readdir(RUN_DIR);
  } catch {
    return undefined;
  }
  for (const n of names.filter((f) => /^[0-9a-f]{4}\.json$/.test(f))) {
    try {
      const st = JSON.parse(await readFile(`${RUN_DIR}/${n}`, 'utf8')) as { pid?: unknown; tag?: unknown };
      if (st.pid === pid && typeof st.tag === 'string') return st.tag;
    } catch {
      // unreadable or removed meanwhile
    }
  }
  return undefined;
}
