import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CogmeshError, RangeArgumentError } from '../core/errors.js';
import { writeFileAtomic } from '../core/files.js';
import { lanPrefix4, lanPrefix6 } from '../wire/addresses.js';

/**
 * The network namespaces of `cogmesh testbed --netns`: per router a
 * namespace for its daemon and one for the client host behind it, joined by
 * a veth pair that carries the router's LAN. Every name holds the testbed's
 * tag, so two testbeds on one machine never meet, and a state file written
 * before the first namespace exists lets a later testbed sweep what a killed
 * one left behind.
 */

/** Where each testbed's state file lives (one `<tag>.json` per testbed). */
export const DEFAULT_RUN_DIR = '/run/cogmesh/testbeds';

/** A namespace any testbed made: `cm-<tag>-r<i>` (router) or `cm-<tag>-h<i>` (its client host). */
export const NETNS_NAME = /^cm-([0-9a-f]{4})-[rh]\d+$/;

const TAG = /^[0-9a-f]{4}$/;
/** Router addresses are 16 bits (NodeAddr), and so are the LAN prefixes derived from them. */
const MAX_ROUTERS = 0x10000;
/** How long destroy waits for killed processes to leave a namespace. */
const KILL_WAIT_MS = 5000;

/** A fault in setting up, finding or tearing down a testbed's namespaces. */
export class NetnsError extends CogmeshError {
  constructor(code: `TESTBED_${string}`, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

export interface NetnsRouter {
  index: number;
  /** `r<i>`, as the testbed's plan names the router. */
  name: string;
  routerNs: string;
  hostNs: string;
  /** The veth end in the router's namespace (`cm<tag>-<i>r`, at most 15 characters). */
  vethRouter: string;
  /** The veth end in the host's namespace (`cm<tag>-<i>h`). */
  vethHost: string;
  /** The router's LAN address (the host's gateway), IPv4 and IPv6, without prefix length. */
  gw4: string;
  gw6: string;
  /** The client host's addresses, without prefix length. */
  host4: string;
  host6: string;
  /** The LAN's prefix lengths (24 and 64). */
  prefixLen4: number;
  prefixLen6: number;
}

export interface NetnsLayout {
  tag: string;
  stateFile: string;
  routers: NetnsRouter[];
}

/** What `<runDir>/<tag>.json` holds. */
export interface TestbedState {
  tag: string;
  /** The testbed process; the testbed is stale once it is gone. */
  pid: number;
  /** ISO 8601. */
  startedAt: string;
  /** The namespaces created so far. */
  namespaces: string[];
  routers: Array<{ index: number; name: string; routerNs: string; hostNs: string; host4: string; host6: string; gw4: string; gw6: string }>;
}

/** A fresh testbed tag: 4 random lowercase hex digits. */
export function newTag(): string {
  return randomBytes(2).toString('hex');
}

/** One router's names and addresses in testbed `tag`. */
export function netnsRouter(tag: string, index: number): NetnsRouter {
  const [net4, len4] = lanPrefix4(index).split('/') as [string, string];
  const [net6, len6] = lanPrefix6(index).split('/') as [string, string];
  const base4 = net4.slice(0, net4.lastIndexOf('.') + 1);
  return {
    index,
    name: `r${index}`,
    routerNs: `cm-${tag}-r${index}`,
    hostNs: `cm-${tag}-h${index}`,
    vethRouter: `cm${tag}-${index}r`,
    vethHost: `cm${tag}-${index}h`,
    gw4: `${base4}1`,
    gw6: `${net6}1`,
    host4: `${base4}2`,
    host6: `${net6}2`,
    prefixLen4: Number(len4),
    prefixLen6: Number(len6),
  };
}

/** The namespaces, veth pairs and addresses of a testbed of `routers` routers (no side effects). */
export function netnsLayout(tag: string, routers: number, runDir = DEFAULT_RUN_DIR): NetnsLayout {
  if (!TAG.test(tag)) throw new RangeArgumentError('tag', tag, '4 lowercase hex digits');
  if (!Number.isInteger(routers) || routers < 1 || routers > MAX_ROUTERS) throw new RangeArgumentError('routers', routers, `an integer in 1..${MAX_ROUTERS}`);
  return {
    tag,
    stateFile: join(runDir, `${tag}.json`),
    routers: Array.from({ length: routers }, (_, i) => netnsRouter(tag, i)),
  };
}

function namespacesOf(layout: NetnsLayout): string[] {
  return layout.routers.flatMap((r) => [r.routerNs, r.hostNs]);
}

// ---------------------------------------------------------------------------
// Running iproute2

let ipPath: string | undefined;

/** `ip`'s absolute path, looked up once on PATH and in the sbin directories (which a non-login root shell may lack). */
export function ipCommand(): string {
  if (ipPath !== undefined) return ipPath;
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'].filter((d) => d !== '');
  for (const d of dirs) {
    const p = join(d, 'ip');
    try {
      accessSync(p, fsConstants.X_OK);
      ipPath = p;
      return p;
    } catch {
      // not here
    }
  }
  throw new NetnsError('TESTBED_NO_IPROUTE2', "iproute2's `ip` command is not installed (looked on PATH, /usr/sbin and /sbin)");
}

/** `command` run inside namespace `ns`: `ip netns exec ns command...`. */
export function inNetns(ns: string, execPath: string, args: string[]): { execPath: string; args: string[] } {
  return { execPath: ipCommand(), args: ['netns', 'exec', ns, execPath, ...args] };
}

interface IpResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

function ipRaw(args: string[]): Promise<IpResult> {
  return new Promise((resolve) => {
    execFile(ipCommand(), args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      const spawnFailure = err && typeof err.code === 'string' ? ` (${err.message})` : '';
      resolve({ ok: !err, stdout, stderr: `${stderr.trim()}${spawnFailure}`.trim() });
    });
  });
}

/** Runs `ip ...args`; throws one line naming the command and what iproute2 said. */
async function ip(...args: string[]): Promise<string> {
  const r = await ipRaw(args);
  if (!r.ok) throw new NetnsError('TESTBED_NETNS_COMMAND', `\`ip ${args.join(' ')}\` failed: ${r.stderr.replace(/\s*\n\s*/g, '; ') || 'no message'}`);
  return r.stdout;
}

/** The names of every network namespace on this machine (`ip netns list`). */
export async function listNetns(): Promise<string[]> {
  const out = await ip('netns', 'list');
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** Whether `ip netns` works here (root, iproute2, a kernel with network namespaces). */
export async function netnsAvailable(): Promise<{ ok: true } | { ok: false; why: string }> {
  if (process.getuid?.() !== 0) return { ok: false, why: 'network namespaces need root' };
  try {
    ipCommand();
    await listNetns();
    return { ok: true };
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
}

// ---------------------------------------------------------------------------
// State files

async function writeState(file: string, state: TestbedState): Promise<void> {
  // Atomic, so a reader (or a sweep after SIGKILL) never sees half a file.
  await writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o644);
}

function isState(v: unknown): v is TestbedState {
  const s = v as TestbedState;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof s.tag === 'string' &&
    TAG.test(s.tag) &&
    Number.isSafeInteger(s.pid) &&
    Array.isArray(s.namespaces) &&
    Array.isArray(s.routers)
  );
}

/** Every state file in `runDir`: its tag (from the file name) and its contents, or undefined when unreadable. */
async function readStates(runDir: string): Promise<Array<{ tag: string; file: string; state: TestbedState | undefined }>> {
  let names: string[];
  try {
    names = await readdir(runDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: Array<{ tag: string; file: string; state: TestbedState | undefined }> = [];
  for (const n of names.sort()) {
    const m = /^([0-9a-f]{4})\.json$/.exec(n);
    if (!m) continue;
    const file = join(runDir, n);
    let state: TestbedState | undefined;
    try {
      const v: unknown = JSON.parse(await readFile(file, 'utf8'));
      state = isState(v) && v.tag === m[1] ? v : undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed meanwhile
      state = undefined;
    }
    out.push({ tag: m[1]!, file, state });
  }
  return out;
}

/** Whether process `pid` exists (EPERM: it does, and is someone else's). */
export function alive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------
// Create and destroy

/**
 * Creates the namespaces, veth pairs, addresses and routes of `layout`, after
 * writing its state file (then updated as each namespace appears). On any
 * failure it removes what it made and throws one NetnsError naming the
 * command and iproute2's message. It refuses a tag whose state file or
 * namespaces exist already, so it never takes over another testbed's.
 */
export async function createNetns(layout: NetnsLayout, pid = process.pid): Promise<void> {
  const existing = new Set(await listNetns());
  const taken = namespacesOf(layout).filter((n) => existing.has(n));
  if (taken.length > 0) throw new NetnsError('TESTBED_TAG_IN_USE', `testbed tag ${layout.tag} is in use: namespace ${taken[0]} exists already`);
  await mkdir(dirname(layout.stateFile), { recursive: true, mode: 0o755 });
  const state: TestbedState = {
    tag: layout.tag,
    pid,
    startedAt: new Date().toISOString(),
    namespaces: [],
    routers: layout.routers.map((r) => ({
      index: r.index,
      name: r.name,
      routerNs: r.routerNs,
      hostNs: r.hostNs,
      host4: r.host4,
      host6: r.host6,
      gw4: r.gw4,
      gw6: r.gw6,
    })),
  };
  try {
    await writeFile(layout.stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new NetnsError('TESTBED_TAG_IN_USE', `testbed tag ${layout.tag} is in use: ${layout.stateFile} exists already`);
    }
    throw e;
  }
  try {
    for (const r of layout.routers) {
      for (const ns of [r.routerNs, r.hostNs]) {
        await ip('netns', 'add', ns);
        state.namespaces.push(ns);
        await writeState(layout.stateFile, state);
      }
      await setUpRouter(r);
    }
  } catch (e) {
    await destroyNamespaces(state.namespaces).catch(() => undefined);
    await rm(layout.stateFile, { force: true });
    throw e;
  }
}

const NO_DAD = ['net.ipv6.conf.all.accept_dad=0', 'net.ipv6.conf.default.accept_dad=0'];

async function setUpRouter(r: NetnsRouter): Promise<void> {
  const sysctl = (ns: string, settings: string[]) => ip('netns', 'exec', ns, 'sysctl', '-qw', ...settings);
  await ip('-n', r.routerNs, 'link', 'set', 'lo', 'up');
  await ip('-n', r.hostNs, 'link', 'set', 'lo', 'up');
  // Before the veth exists, so that it is created with DAD off (default.*) and its link-local address is usable at once.
  await sysctl(r.routerNs, ['net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1', ...NO_DAD]);
  await sysctl(r.hostNs, NO_DAD);
  // Made inside the two namespaces directly: the names never appear in the root namespace.
  await ip('link', 'add', r.vethRouter, 'netns', r.routerNs, 'type', 'veth', 'peer', 'name', r.vethHost, 'netns', r.hostNs);
  await ip('-n', r.routerNs, 'addr', 'add', `${r.gw4}/${r.prefixLen4}`, 'dev', r.vethRouter);
  await ip('-n', r.routerNs, '-6', 'addr', 'add', `${r.gw6}/${r.prefixLen6}`, 'dev', r.vethRouter, 'nodad');
  await ip('-n', r.routerNs, 'link', 'set', r.vethRouter, 'up');
  await ip('-n', r.hostNs, 'addr', 'add', `${r.host4}/${r.prefixLen4}`, 'dev', r.vethHost);
  await ip('-n', r.hostNs, '-6', 'addr', 'add', `${r.host6}/${r.prefixLen6}`, 'dev', r.vethHost, 'nodad');
  await ip('-n', r.hostNs, 'link', 'set', r.vethHost, 'up');
  await ip('-n', r.hostNs, 'route', 'add', 'default', 'via', r.gw4, 'dev', r.vethHost);
  await ip('-n', r.hostNs, '-6', 'route', 'add', 'default', 'via', r.gw6, 'dev', r.vethHost);
}

/** The pids of the processes inside `ns` (none when it is gone). */
async function pidsIn(ns: string): Promise<number[]> {
  const r = await ipRaw(['netns', 'pids', ns]);
  if (!r.ok) return [];
  return r.stdout
    .split(/\s+/)
    .filter((s) => s !== '')
    .map(Number)
    .filter((n) => Number.isSafeInteger(n) && n > 0);
}

/** SIGKILLs every process in `ns` until none is left. */
async function emptyNetns(ns: string): Promise<void> {
  const deadline = Date.now() + KILL_WAIT_MS;
  for (;;) {
    const pids = (await pidsIn(ns)).filter((p) => p !== process.pid);
    if (pids.length === 0) return;
    if (Date.now() > deadline) {
      throw new NetnsError('TESTBED_NETNS_BUSY', `processes ${pids.join(', ')} are still in namespace ${ns} ${KILL_WAIT_MS} ms after SIGKILL`);
    }
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await sleep(20);
  }
}

/** Empties and deletes those of `names` that exist; the veth ends go with them. */
async function destroyNamespaces(names: string[]): Promise<void> {
  const existing = new Set(await listNetns());
  const todo = [...new Set(names)].filter((n) => existing.has(n));
  await Promise.all(todo.map((ns) => emptyNetns(ns)));
  for (const ns of todo) {
    const r = await ipRaw(['netns', 'del', ns]);
    if (!r.ok && !/No such file or directory/.test(r.stderr)) {
      throw new NetnsError('TESTBED_NETNS_COMMAND', `\`ip netns del ${ns}\` failed: ${r.stderr || 'no message'}`);
    }
  }
}

/**
 * Kills every process still in the layout's namespaces, deletes the
 * namespaces (and with them the veth pairs) and removes the state file.
 * What is gone already is skipped, so it may run twice.
 */
export async function destroyNetns(layout: NetnsLayout): Promise<void> {
  await destroyNamespaces(namespacesOf(layout));
  await rm(layout.stateFile, { force: true });
}

/**
 * Removes what dead testbeds left: for each state file in `runDir` whose
 * process is gone (or that cannot be read), its namespaces and the file.
 * With `orphans`, also every `cm-<tag>-[rh]<i>` namespace whose tag no live
 * state file in `runDir` claims (and, when `orphans` is a function, that it
 * accepts): that touches namespaces machine-wide, so it is for the CLI with
 * the real run directory. Returns the tags swept.
 */
export async function sweepStale(runDir = DEFAULT_RUN_DIR, opts: { orphans?: boolean | ((tag: string) => boolean) } = {}): Promise<string[]> {
  const swept = new Set<string>();
  const live = new Set<string>();
  let all: string[] | undefined;
  for (const { tag, file, state } of await readStates(runDir)) {
    if (state && alive(state.pid)) {
      live.add(tag);
      continue;
    }
    const names = state
      ? [...state.namespaces, ...state.routers.flatMap((r) => [r.routerNs, r.hostNs])].filter((n) => NETNS_NAME.exec(n)?.[1] === tag)
      : (all ??= await listNetns()).filter((n) => NETNS_NAME.exec(n)?.[1] === tag);
    await destroyNamespaces(names);
    await rm(file, { force: true });
    swept.add(tag);
  }
  if (opts.orphans) {
    const accept = typeof opts.orphans === 'function' ? opts.orphans : () => true;
    const orphans = (await listNetns()).filter((n) => {
      const tag = NETNS_NAME.exec(n)?.[1];
      return tag !== undefined && !live.has(tag) && accept(tag);
    });
    await destroyNamespaces(orphans);
    for (const n of orphans) swept.add(NETNS_NAME.exec(n)![1]!);
  }
  return [...swept].sort();
}

/**
 * The running testbed (its process alive): the one with `tag`, or the only
 * one. Throws when none runs, when `tag` is not among them, or when several
 * run and no tag says which.
 */
export async function findTestbed(tag?: string, runDir = DEFAULT_RUN_DIR): Promise<TestbedState> {
  const running = (await readStates(runDir)).flatMap((s) => (s.state && alive(s.state.pid) ? [s.state] : []));
  const tags = running.map((s) => s.tag).join(', ');
  if (tag !== undefined) {
    const s = running.find((r) => r.tag === tag);
    if (s) return s;
    throw new NetnsError(
      'TESTBED_NOT_RUNNING',
      running.length === 0
        ? `no testbed with tag ${tag} is running (no \`cogmesh testbed --netns\` is)`
        : `no testbed with tag ${tag} is running (running: ${tags})`,
    );
  }
  if (running.length === 0) throw new NetnsError('TESTBED_NOT_RUNNING', 'no `cogmesh testbed --netns` is running');
  if (running.length > 1) throw new NetnsError('TESTBED_AMBIGUOUS', `${running.length} testbeds are running (tags ${tags}): say which with --tag`);
  return running[0]!;
}
