import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { RUN_DIR_PREFIX } from '../../src/testbed/supervisor.js';
import { spawnCogmesh, stopAll } from '../support/cli.js';

/**
 * `cogmesh testbed` as a process, for what only the whole command shows:
 * how it stops (SIGHUP as Ctrl-C), that it leaves no folder behind, what a
 * second testbed on the same machine does, and a router that cannot start.
 * Each testbed gets a temporary folder of its own (TMPDIR), to see what is
 * left in it.
 */

interface Line {
  proc?: string;
  event?: string;
  msg?: string;
  [k: string]: unknown;
}

interface Run {
  child: ChildProcess;
  lines: Line[];
  tmp: string;
  /** Resolves with the first line that `match` accepts. */
  line: (match: (l: Line) => boolean) => Promise<Line>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcess[] = [];
const folders: string[] = [];
after(async () => {
  await stopAll(started);
  for (const d of folders) rmSync(d, { recursive: true, force: true });
});

/** A one-hop chain testbed with no traffic, logging JSON, in a temporary folder of its own. */
function testbed(...args: string[]): Run {
  const tmp = mkdtempSync(join(tmpdir(), 'testbed-cli-'));
  folders.push(tmp);
  const child = spawnCogmesh(
    ['testbed', 'config/scenarios/testbed-chain.json', '--hops', '1', '--set', 'flows=[]', '--log-format', 'json', '--for', '150', ...args],
    ['ignore', 'pipe', 'pipe'],
    { TMPDIR: tmp },
  );
  started.push(child);
  const lines: Line[] = [];
  const waiting: Array<{ match: (l: Line) => boolean; resolve: (l: Line) => void }> = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const take = (raw: string): void => {
    let l: Line;
    try {
      l = JSON.parse(raw) as Line;
    } catch {
      l = { msg: raw };
    }
    lines.push(l);
    for (const w of [...waiting]) {
      if (w.match(l)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(l);
      }
    }
  };
  createInterface({ input: child.stdout! }).on('line', take);
  createInterface({ input: child.stderr! }).on('line', take);
  const line = (match: (l: Line) => boolean): Promise<Line> => {
    const seen = lines.find(match);
    if (seen) return Promise.resolve(seen);
    return Promise.race([
      new Promise<Line>((resolve) => waiting.push({ match, resolve })),
      exited.then(
        ({ code, signal }) =>
          lines.find(match) ?? assert.fail(`the testbed exited (${signal ?? code}) first; its lines:\n${lines.map((x) => x.msg).join('\n')}`),
      ),
    ]);
  };
  return { child, lines, tmp, line, exited };
}

/** The testbed's own folders left in `tmp`. */
const runFolders = (tmp: string): string[] => readdirSync(tmp).filter((f) => f.startsWith(RUN_DIR_PREFIX));

/** Every router of the run listens (its control API and monitor are up). */
async function routersUp(run: Run): Promise<void> {
  for (const proc of ['r0', 'r1']) {
    await run.line((l) => l.proc === proc && l.event === 'control-start');
    await run.line((l) => l.proc === proc && l.event === 'monitor-start');
  }
}

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface StartLine extends Line {
  medium: string;
  routers: Array<{ name: string; control: string; telemetry: string; monitor: string }>;
}

test('SIGHUP (a closed terminal) stops the testbed as Ctrl-C does: every process stopped, its folder removed, exit 0', { timeout: 120_000 }, async () => {
  const run = testbed('--medium', 'tcp://127.0.0.1:27600', '--control-base', '27700', '--monitor-base', '28180');
  await routersUp(run);
  assert.equal(runFolders(run.tmp).length, 1, 'the run has its folder while it runs');
  const pids = run.lines.filter((l) => l.event === 'process-start').map((l) => l.childPid as number);
  assert.equal(pids.length, 3, 'the medium and two routers started');
  run.child.kill('SIGHUP');
  const { code } = await run.exited;
  assert.equal(code, 0);
  assert.equal(run.lines.find((l) => l.event === 'testbed-stop')?.why, 'SIGHUP');
  assert.deepEqual(
    pids.filter((p) => alive(p)),
    [],
    'no process of the testbed is left',
  );
  assert.deepEqual(runFolders(run.tmp), [], 'its folder is removed');
});

test('a second testbed moves up to free ports when no option gave them; a port given and taken is refused in one line', { timeout: 180_000 }, async () => {
  const first = testbed();
  await routersUp(first);
  const a = (await first.line((l) => l.event === 'testbed-start')) as StartLine;
  const second = testbed();
  await routersUp(second);
  const b = (await second.line((l) => l.event === 'testbed-start')) as StartLine;
  const moved = await second.line((l) => l.event === 'testbed-ports-moved');
  assert.match(moved.msg ?? '', /cannot listen on .* using --medium tcp:\/\/127\.0\.0\.1:\d+ --control-base \d+ --monitor-base \d+/);
  const used = (s: StartLine): string[] => [s.medium, ...s.routers.flatMap((r) => [r.control, r.telemetry, r.monitor])];
  assert.deepEqual(
    used(b).filter((p) => used(a).includes(p)),
    [],
    'the second uses none of the first testbed ports',
  );
  // Both run: the first goes on while the second's routers listen on theirs.
  assert.equal(first.child.exitCode, null, 'the first testbed still runs');

  // A third told to use the first one's control ports does not move: it refuses, naming the option and the port.
  const controlBase = /:(\d+)$/.exec(a.routers[0]!.control)![1]!;
  const third = testbed('--control-base', controlBase);
  const { code } = await third.exited;
  assert.equal(code, 2);
  const said = third.lines.map((l) => l.msg ?? '').filter((m) => m !== '');
  assert.equal(said.length, 1, `one line: ${said.join(' | ')}`);
  assert.match(said[0]!, new RegExp(`^cogmesh: --control-base: cannot listen on tcp://127\\.0\\.0\\.1:${controlBase} \\(r0's control\\)`));
  assert.deepEqual(runFolders(third.tmp), [], 'a refused testbed leaves no folder');

  for (const run of [second, first]) {
    run.child.kill('SIGINT');
    assert.equal((await run.exited).code, 0);
    assert.deepEqual(runFolders(run.tmp), []);
  }
});

test(
  'a router whose port is taken after the check: the run stops, one line naming the router, the port and the flag; nothing restarted, no folder left',
  { timeout: 120_000 },
  async () => {
    const run = testbed('--medium', 'tcp://127.0.0.1:27601', '--control-base', '27800', '--monitor-base', '28190');
    // Between the testbed's check of its ports and r1's start (its processes start after this line), another program takes r1's monitor port.
    await run.line((l) => l.event === 'testbed-start');
    const squatter: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      squatter.once('error', reject);
      squatter.listen(28191, '127.0.0.1', resolve);
    });
    try {
      const { code } = await run.exited;
      assert.equal(code, 1);
      const failed = run.lines.filter((l) => l.event === 'testbed-start-failed');
      assert.equal(failed.length, 1, 'one line says why');
      assert.match(failed[0]!.msg ?? '', /^r1 could not start \(code 2\): .*127\.0\.0\.1:28191.* --monitor-base moves it$/);
      assert.equal(run.lines.find((l) => l.event === 'testbed-stop')?.why, 'r1 did not start');
      assert.equal(run.lines.filter((l) => l.proc === 'r1' && l.event === 'process-start').length, 1, 'r1 was started once, not again');
      assert.deepEqual(runFolders(run.tmp), [], 'its folder is removed');
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  },
);
