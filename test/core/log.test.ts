import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { VirtualClock } from '../../src/core/time.js';
import { createLogger, type LogOptions } from '../../src/core/log.js';

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

test('background logs to standard output are all written, in order, by the time the process exits', () => {
  // A child process: standard output is where background lines go, and exit is when the last of them must be out.
  const script = [
    `import { createLogger } from ${JSON.stringify(new URL('../../src/core/log.js', import.meta.url).href)};`,
    "const log = createLogger({ level: 'info', format: 'json', background: true });",
    "for (let i = 0; i < 2000; i++) log.info({ event: 'line', i }, 'line ' + i);",
    'process.exit(0);',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const seen = out
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { i: number }).i);
  assert.deepEqual(
    seen,
    Array.from({ length: 2000 }, (_, i) => i),
  );
});
