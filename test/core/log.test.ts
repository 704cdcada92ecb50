import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { VirtualClock } from '../../src/core/time.js';
import { createLogger, type LogOptions } from '../../src/core/log.js';
import { root } from '../support/cli.js';
import { runScript } from '../support/script.js';

function capture(o: Omit<LogOptions, 'destination'>): { lines: () => string[]; opts: LogOptions } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(c, _e, cb) {
      chunks.push(String(c));
      cb();
    },
  });
  return { lines: () => chunks.join('').trim().split('\n'), opts: { ...o, destination } };
}

// Records carry nested fields (the node, probe figures, per-channel lists): every format must render them all.
const records: Array<[Record<string, unknown>, string]> = [
  [{ event: 'node-start', node: { id: 1, name: 'n' }, plan: 'ism2g4-11' }, 'node up'],
  [{ event: 'sensing-backend', backend: 'cpu', probe: { cpuMsps: 1 } }, 'backend'],
  [{ event: 'sensing-round', round: 0, durationUs: 5, channels: [{ channel: 1, w: 0.5 }] }, 'round 0'],
];

for (const mode of ['real', 'virtual'] as const) {
  test(`pretty logs render every record, one line each (${mode} time)`, () => {
    const clock = new VirtualClock(1234);
    const c = capture({ level: 'info', format: 'pretty', ...(mode === 'virtual' ? { virtualClock: clock } : {}) });
    const log = createLogger(c.opts);
    for (const [fields, msg] of records) log.info(fields, msg);
    const lines = c.lines();
    assert.equal(lines.length, records.length, lines.join('\n'));
    records.forEach(([, msg], i) => assert.match(lines[i]!, new RegExp(`INFO: .*${msg}$`)));
    if (mode === 'virtual') assert.match(lines[0]!, /\[t=1234us\]/);
  });
}

const LOG_MODULE = JSON.stringify(new URL('../../src/core/log.js', import.meta.url).href);

test('json logs are one object a line, with the virtual time when there is one', () => {
  const clock = new VirtualClock(42);
  const c = capture({ level: 'info', format: 'json', virtualClock: clock });
  const log = createLogger(c.opts);
  for (const [fields, msg] of records) log.info(fields, msg);
  const objs = c.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(objs.length, 3);
  assert.equal(objs[0]!.t_us, 42);
  assert.deepEqual(objs[0]!.node, { id: 1, name: 'n' });
  assert.equal(objs[2]!.msg, 'round 0');
});

test('background logs to standard output are all written, in order, by the time the process exits', async () => {
  // A child process: standard output is where background lines go, and exit is when the last of them must be out.
  const script = [
    `import { createLogger } from ${LOG_MODULE};`,
    "const log = createLogger({ level: 'info', format: 'json', background: true });",
    "for (let i = 0; i < 2000; i++) log.info({ event: 'line', i }, 'line ' + i);",
    'process.exit(0);',
  ].join('\n');
  const r = await runScript(script);
  assert.equal(r.code, 0, r.stderr);
  const seen = r.lines.map((l) => (JSON.parse(l) as { i: number }).i);
  assert.deepEqual(
    seen,
    Array.from({ length: 2000 }, (_, i) => i),
  );
});

/** `runScript`'s `onLine` that closes the child's standard output after `first`, the line it waits for, then tells it to go on. */
const readerGoesAfter =
  (first: (line: string) => boolean) =>
  (line: string, c: ChildProcess): void => {
    if (!first(line)) return;
    c.stdout!.destroy();
    c.stdin!.write('go\n');
  };

test('a background log whose reader went away does not hold the process at exit, with lines still queued', { timeout: 60_000 }, async () => {
  // The reader goes after the first line; the child then logs more and exits at once, so they are still queued at exit.
  // pino's own background destination retried their failed write for ever there, and the process never ended.
  const script = [
    `import { createLogger } from ${LOG_MODULE};`,
    "const log = createLogger({ level: 'info', format: 'json', background: true });",
    "log.info({ event: 'first' }, 'first');",
    "process.stdin.once('data', () => { for (let i = 0; i < 100; i++) log.info({ event: 'late', i }, 'late'); process.exit(0); });",
  ].join('\n');
  const r = await runScript(script, { onLine: readerGoesAfter((l) => l.includes('"first"')) });
  assert.equal(r.signal, null, `still running after 30 s, killed: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
});

test('BackgroundLines: what a reader that went away cannot take is counted as dropped, and the writing stops', { timeout: 60_000 }, async () => {
  const script = [
    `import { BackgroundLines } from ${LOG_MODULE};`,
    'const w = new BackgroundLines(1);',
    "w.write('first\\n');",
    "process.stdin.once('data', () => { const t = setInterval(() => { w.write('late\\n'); if (w.gone !== undefined) { clearInterval(t); for (let i = 0; i < 5; i++) w.write('after\\n'); process.stderr.write(JSON.stringify({ gone: w.gone, dropped: w.dropped })); process.exit(0); } }, 10); });",
  ].join('\n');
  const r = await runScript(script, { onLine: readerGoesAfter((l) => l === 'first') });
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stderr) as { gone: string; dropped: number };
  assert.equal(s.gone, 'EPIPE');
  // At least the line whose write failed, and the five written after.
  assert.ok(s.dropped >= 6, r.stderr);
});

test(
  'logLoss: a background logger, through any child, tells what it dropped and why it stopped; a synchronous one has nothing to tell',
  { timeout: 60_000 },
  async () => {
    const script = [
      `import { createLogger, logLoss } from ${LOG_MODULE};`,
      "const log = createLogger({ level: 'info', format: 'json', background: true });",
      "const child = log.child({ part: 'r3' });",
      "log.info({ event: 'first' }, 'first');",
      'const before = logLoss(child);',
      "process.stdin.once('data', () => { const t = setInterval(() => { child.info({ event: 'late' }, 'late'); const l = logLoss(log); if (l.gone !== undefined) { clearInterval(t); for (let i = 0; i < 3; i++) log.info('after'); process.stderr.write(JSON.stringify({ before, after: logLoss(child), sync: logLoss(createLogger({ level: 'info', format: 'json' })) ?? null })); process.exit(0); } }, 10); });",
    ].join('\n');
    const r = await runScript(script, { onLine: readerGoesAfter((l) => l.includes('"first"')) });
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stderr) as { before: { dropped: number; gone?: string }; after: { dropped: number; gone?: string }; sync: null };
    assert.deepEqual(s.before, { dropped: 0 });
    assert.equal(s.after.gone, 'EPIPE');
    assert.ok(s.after.dropped >= 4, r.stderr);
    assert.equal(s.sync, null, 'a synchronous logger loses nothing');
  },
);

test('BackgroundLines: lines beyond its queue are dropped and counted, and a line says how many before the next one', async () => {
  // The first line is in flight while the loop runs (its completion comes on a later turn): three more fit in 100 characters.
  const script = [
    `import { BackgroundLines } from ${LOG_MODULE};`,
    "const w = new BackgroundLines(1, { maxQueuedChars: 100, notice: (n) => 'dropped ' + n + '\\n' });",
    "for (let i = 0; i < 10; i++) w.write('line ' + i + ' ' + 'x'.repeat(22) + '\\n');",
    "setTimeout(() => { w.write('later\\n'); process.stderr.write(String(w.dropped)); }, 100);",
  ].join('\n');
  const r = await runScript(script);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.lines.map((l) => l.split(' ').slice(0, 2).join(' ')),
    ['line 0', 'line 1', 'line 2', 'line 3', 'dropped 6', 'later'],
  );
  assert.equal(r.stderr, '6');
});

test('pretty background logs to standard output: one rendered line per record, in order', async () => {
  const script = [
    `import { createLogger } from ${LOG_MODULE};`,
    "const log = createLogger({ level: 'info', format: 'pretty', background: true });",
    "for (let i = 0; i < 50; i++) log.info({ event: 'line', i }, 'line ' + i);",
    'process.exit(0);',
  ].join('\n');
  const r = await runScript(script);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.lines.length, 50, r.stdout);
  r.lines.forEach((l, i) => assert.match(l, new RegExp(`INFO: line ${i}$`)));
});

/** A FIFO in a folder of its own, removed after `fn`. */
async function withFifo<T>(fn: (path: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cm-log-fifo-'));
  try {
    const path = join(dir, 'out');
    execFileSync('mkfifo', [path]);
    return await fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a background log to a pipe whose reader is alive but does not read does not hold the process at exit', { timeout: 60_000 }, async () => {
  // The child's standard output is a FIFO that this process holds open but never reads: it fills at 64 kB. A write
  // waiting for room on libuv's thread pool would hold the child at exit for ever (libuv waits for its pool's threads);
  // standard output is non-blocking (createLogger has Node make it so; tsx, which runs this child, does too), so the
  // writes take what fits, the rest waits in the queue, and the exit's flush gives up on it after 2 s.
  await withFifo(async (path) => {
    const fd = openSync(path, 'r+');
    try {
      const script = [
        `import { createLogger, logLoss } from ${LOG_MODULE};`,
        "const log = createLogger({ level: 'info', format: 'json', background: true });",
        "for (let i = 0; i < 10000; i++) log.info({ event: 'line', i, pad: 'x'.repeat(100) }, 'line');",
        'setTimeout(() => { process.stderr.write(JSON.stringify(logLoss(log))); process.exit(0); }, 100);',
      ].join('\n');
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', fd, 'pipe'] });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      clearTimeout(timer);
      assert.equal(signal, null, `still running after 30 s, killed: ${stderr}`);
      assert.equal(code, 0, stderr);
      // More than the pipe holds was queued, nothing given up before the exit (the exit's flush tried for 2 s, then left it).
      const loss = JSON.parse(stderr) as { dropped: number; gone?: string };
      assert.deepEqual(loss, { dropped: 0 }, stderr);
    } finally {
      closeSync(fd);
    }
  });
});
