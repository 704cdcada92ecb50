import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, progress, progressLine, progressWanted, type ProgressStream } from '../../src/cli/progress.js';
import { cogmesh } from '../support/cli.js';

/** A stand-in for stderr that keeps what is written; a terminal when `tty`. */
function fakeStream(tty = false): ProgressStream & { text: () => string; writes: string[] } {
  const writes: string[] = [];
  return { isTTY: tty, columns: 100, write: (s: string) => (writes.push(s), true), text: () => writes.join(''), writes };
}

/** A clock the test moves by hand, in milliseconds. */
function fakeClock(): { now: () => number; advanceS: (s: number) => void } {
  let t = 5_000;
  return { now: () => t, advanceS: (s) => void (t += s * 1000) };
}

test('off a terminal: no line in the first 10 s, however much is done', () => {
  const out = fakeStream();
  const clock = fakeClock();
  const p = progress({ total: 10, label: 'sim', unit: 'seeds', stream: out, clock: clock.now });
  for (let k = 0; k < 9; k++) {
    clock.advanceS(1);
    p.tick();
  }
  clock.advanceS(0.9);
  p.tick();
  p.stop();
  assert.equal(out.text(), '', 'a run shorter than 10 s prints nothing');
});

test('off a terminal: one line once 10 s have passed, then one every 10 s at most', () => {
  const out = fakeStream();
  const clock = fakeClock();
  const p = progress({ total: 10, label: 'sim', unit: 'seeds', stream: out, clock: clock.now });
  clock.advanceS(10);
  p.update(3);
  assert.deepEqual(out.writes, ['cogmesh: sim: 3/10 seeds (30 %), 10 s elapsed, about 23 s left\n']);
  clock.advanceS(9);
  p.tick();
  assert.equal(out.writes.length, 1, 'nothing 9 s after a line');
  clock.advanceS(1);
  p.tick(0.5);
  assert.equal(out.writes.length, 2);
  // 4.5 of 10 after 20 s: the count is whole seeds, the percent and the estimate count the half.
  assert.equal(out.writes[1], 'cogmesh: sim: 4/10 seeds (45 %), 20 s elapsed, about 24 s left\n');
  // A long silence brings one line, not a burst.
  clock.advanceS(45);
  p.update(8);
  p.update(8);
  assert.equal(out.writes.length, 3);
  assert.equal(out.writes[2], 'cogmesh: sim: 8/10 seeds (80 %), 65 s elapsed, about 16 s left\n');
  p.stop();
  clock.advanceS(60);
  p.update(10);
  assert.equal(out.writes.length, 3, 'nothing after stop()');
  assert.ok(
    out.writes.every((w) => w.endsWith('\n') && !w.includes('\x1b')),
    'whole lines, no terminal codes',
  );
});

test('the line before anything is done has no estimate; a line at the total says 0 s left', () => {
  assert.equal(progressLine('repro tcp', 'points', 0, 12, 30), 'cogmesh: repro tcp: 0/12 points (0 %), 30 s elapsed');
  assert.equal(progressLine('sim', 'seeds', 2, 2, 300), 'cogmesh: sim: 2/2 seeds (100 %), 5 min elapsed, about 0 s left');
});

test("off a terminal: no line once all is done (the run's own closing output follows), nor past the total", () => {
  const out = fakeStream();
  const clock = fakeClock();
  const p = progress({ total: 2, label: 'sim', unit: 'seeds', stream: out, clock: clock.now });
  clock.advanceS(30);
  p.update(2);
  p.update(7);
  p.stop();
  assert.equal(out.text(), '', 'a one-seed run, however slow, prints nothing but its own lines');
});

test('durations read as a person would say them', () => {
  assert.equal(formatDuration(0.4), '0 s');
  assert.equal(formatDuration(41), '41 s');
  assert.equal(formatDuration(119), '119 s');
  assert.equal(formatDuration(600), '10 min');
  assert.equal(formatDuration(2 * 3600 + 5 * 60), '2 h 05 min');
});

test('on a terminal: a cli-progress bar with the count, percent, elapsed time and estimate, cleared at the end', () => {
  const out = fakeStream(true);
  const clock = fakeClock();
  const p = progress({ total: 4, label: 'sim', unit: 'seeds', stream: out, clock: clock.now });
  assert.equal(out.text(), '', 'the bar appears with the first progress');
  p.update(0);
  clock.advanceS(30);
  p.update(1);
  p.stop();
  const text = out.text();
  // The bar as cli-progress draws it: moved to column 0, the line, then cleared to its right.
  const ESC = '\x1b';
  assert.ok(text.includes(`${ESC}[1G`), 'the cursor goes back to column 1 before each drawing');
  assert.match(text, /cogmesh: sim \[[=-]+\] 0\/4 seeds 0 % \| estimating \| 0 s elapsed/);
  assert.match(text, /cogmesh: sim \[[=-]+\] 1\/4 seeds 25 % \| about 90 s left \| 30 s elapsed/);
  // clearOnComplete: the last thing written clears the line, so the report that follows starts clean.
  assert.equal(out.writes.at(-1), `${ESC}[2K`);
  p.stop();
});

test('disabled, or nothing to count: nothing is written, even on a terminal', () => {
  for (const o of [{ enabled: false, total: 3 }, { total: 0 }]) {
    const out = fakeStream(true);
    const clock = fakeClock();
    const p = progress({ label: 'sim', unit: 'seeds', stream: out, clock: clock.now, ...o });
    clock.advanceS(100);
    p.tick();
    p.stop();
    assert.equal(out.text(), '');
  }
});

test('COGMESH_PROGRESS=0 turns the display off; unset or 1 leaves it on', () => {
  assert.equal(progressWanted({}), true);
  assert.equal(progressWanted({ COGMESH_PROGRESS: '1' }), true);
  for (const v of ['0', 'off', 'false', ' 0 ']) assert.equal(progressWanted({ COGMESH_PROGRESS: v }), false, v);
});

test('cogmesh sim --seeds 2 that ends quickly prints no progress on stderr; --no-progress is accepted', () => {
  const args = ['sim', 'config/scenarios/urbanx-chain.json', '--hops', '2', '--seeds', '2', '--duration', '1', '--jobs', '1', '--json'];
  const shown = cogmesh(...args);
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.err, /^simulated 2 x 1 s in [0-9.]+ s wall\n$/);
  const quiet = cogmesh(...args, '--no-progress');
  assert.equal(quiet.code, 0, quiet.err);
  assert.match(quiet.err, /^simulated 2 x 1 s in [0-9.]+ s wall\n$/);
  assert.equal(quiet.out, shown.out, 'the same JSON with and without the display');
});
