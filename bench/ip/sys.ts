/**
 * What bench/ip.ts reads of the machine: commands run to completion, the CPU
 * time of processes and of the whole machine from /proc, an interface's
 * packet counters in a network namespace, and one place that removes what
 * the bench made, whatever stops it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (or `timeoutMs`, then SIGKILL); never throws for a non-zero exit. */
export function run(cmd: string, args: readonly string[], timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout, stderr: `${stderr}${err && typeof err.code !== 'number' ? ` (${err.message})` : ''}` });
    });
  });
}

/** Runs a command and throws, naming it and what it said, unless it exits 0. */
export async function must(cmd: string, args: readonly string[], timeoutMs?: number): Promise<string> {
  const r = await run(cmd, args, timeoutMs);
  if (r.code !== 0) throw new Error(`\`${[cmd, ...args].join(' ')}\` failed (${r.code ?? 'killed'}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A sleep that does not keep the process alive (for the losing side of a race). */
export const deadline = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
export const HZ: number = (() => {
  try {
    const v = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return v > 0 ? v : 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds of a process (all its threads): its own, and its waited-for children's; undefined once it is gone. */
export function procCpu(pid: number): { self: number; children: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces), from field 3 (state) on: utime is field 14.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const at = (field: number): number => Number(f[field - 3]);
  return { self: (at(14) + at(15)) / HZ, children: (at(16) + at(17)) / HZ };
}

/** Summed CPU seconds of processes (own time only); a process already gone counts 0. */
export function cpuOf(pids: readonly number[]): number {
  return pids.reduce((s, p) => s + (procCpu(p)?.self ?? 0), 0);
}

export interface MachineCpu {
  /** Every non-idle state (user, nice, system, irq, softirq, steal), summed over the CPUs (s). */
  busy: number;
  /** Time in softirq (network receive and forwarding among it), summed over the CPUs (s). */
  softirq: number;
}

/** The machine's CPU time so far, from the first line of /proc/stat. */
export function machineCpu(): MachineCpu {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return { busy: (user! + nice! + system! + irq! + softirq! + steal!) / HZ, softirq: softirq! / HZ };
}

/** Direct children of a process (from /proc/<pid>/task/<pid>/children). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The command line of a process, spaces between arguments ('' when gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** The processes in a network namespace. */
export async function netnsPids(ns: string): Promise<number[]> {
  const r = await run('ip', ['netns', 'pids', ns]);
  return r.code === 0 ? r.stdout.split(/\s+/).filter(Boolean).map(Number) : [];
}

/** Packets an interface in a namespace has received and sent so far. */
export async function linkPackets(ns: string, dev: string): Promise<{ rx: number; tx: number }> {
  const out = await must('ip', ['-n', ns, '-s', '-j', 'link', 'show', 'dev', dev]);
  const [link] = JSON.parse(out) as Array<{ stats64: { rx: { packets: number }; tx: { packets: number } } }>;
  if (!link) throw new Error(`no interface ${dev} in namespace ${ns}`);
  return { rx: link.stats64.rx.packets, tx: link.stats64.tx.packets };
}

/** Removes a namespace: kills what runs in it, then deletes it (its veth ends go with it). Quiet when it is gone. */
export async function removeNetns(ns: string): Promise<void> {
  for (const pid of await netnsPids(ns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await run('ip', ['netns', 'del', ns]);
}

const cleanups = new Set<() => Promise<void>>();
let interrupted = false;

/** Registers what undoes a step; the returned function runs it once (and forgets it). */
export function onCleanup(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const once = (): Promise<void> => {
    cleanups.delete(once);
    done ??= fn().catch((e: unknown) => {
      process.stderr.write(`bench/ip.ts: cleanup: ${(e as Error).message}\n`);
    });
    return done;
  };
  cleanups.add(once);
  return once;
}

/** Runs every registered cleanup (newest first). */
export async function cleanupAll(): Promise<void> {
  for (const fn of [...cleanups].reverse()) await fn();
}

/** True once SIGINT or SIGTERM came (what fails afterwards is the cleanup's doing). */
export const isInterrupted = (): boolean => interrupted;

/** On SIGINT or SIGTERM: every cleanup, then exit 130. */
export function cleanupOnSignals(): void {
  const stop = (sig: string): void => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`bench/ip.ts: ${sig}: removing the testbeds and namespaces of this run\n`);
    void cleanupAll().finally(() => process.exit(130));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
