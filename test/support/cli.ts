import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, where the CLI runs from. */
export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Node's arguments that run the cogmesh CLI from source, as `cogmesh ARGS...`. */
const cli = (args: readonly string[]): string[] => ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args];

/** Runs the cogmesh CLI from source, as `cogmesh ARGS...`, and returns its exit code and output. */
export function cogmesh(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, cli(args), {
    cwd: root,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Starts the cogmesh CLI from source as a process of the test's, `cogmesh ARGS...`, in the repository's root; `env`: added to this process's environment. */
export function spawnCogmesh(args: readonly string[], stdio: StdioOptions, env?: Record<string, string>): ChildProcess {
  return spawn(process.execPath, cli(args), { cwd: root, stdio, ...(env ? { env: { ...process.env, ...env } } : {}) });
}

/** Stops processes a test started, newest first: SIGINT to each still running, then its exit. */
export async function stopAll(procs: ChildProcess[]): Promise<void> {
  for (const p of [...procs].reverse()) {
    if (p.exitCode === null && p.signalCode === null) {
      p.kill('SIGINT');
      await new Promise((r) => p.once('exit', r));
    }
  }
}

/** The `key=value` lines a bench prints, as an object (a value keeps any `=` after the first). */
export function keyValues(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}
