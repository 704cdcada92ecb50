import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { root } from './cli.js';

export interface ScriptRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Standard output's lines, as `onLine` saw them. */
  lines: string[];
}

/**
 * Runs an ES module script as `node --import tsx -e SCRIPT` in the
 * repository's root, optionally under `wrapper` (a command that runs the
 * rest, like setpriv). `onLine` sees each line of its standard output as it
 * comes, with the child (to write to its standard input, or close its
 * output). A child still running after `ms` (a liveness bound, not a speed)
 * is killed: the run's `signal` says so.
 */
export function runScript(
  script: string,
  o: { wrapper?: readonly string[]; onLine?: (line: string, child: ChildProcess) => void; ms?: number } = {},
): Promise<ScriptRun> {
  const argv = [...(o.wrapper ?? []), process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  const run: ScriptRun = { code: null, signal: null, stdout: '', stderr: '', lines: [] };
  child.stdout.setEncoding('utf8').on('data', (c: string) => (run.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (run.stderr += c));
  createInterface({ input: child.stdout }).on('line', (l) => {
    run.lines.push(l);
    o.onLine?.(l, child);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), o.ms ?? 30_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ ...run, code, signal });
    });
  });
}
