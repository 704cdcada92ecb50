import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PacedEngine } from '../../src/core/paced.js';
import { ScaledClock, type Clock, type Micros } from '../../src/core/time.js';

/** A clock the test moves by hand. */
class HandClock implements Clock {
  constructor(public t: Micros) {}
  now(): Micros {
    return this.t;
  }
}

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('events run at their own times, never before the clock reaches them; inputs enter after every event due', async () => {
  const clock = new HandClock(1_000_000);
  const p = new PacedEngine(clock);
  const seen: Array<[string, Micros]> = [];
  p.engine.at(1_000_500, (now) => seen.push(['a', now]));
  p.engine.at(1_002_000, (now) => seen.push(['b', now]));
  p.start();
  await tick();
  assert.equal(seen.length, 0, 'nothing before its time');
  clock.t = 1_001_000;
  p.inject((now) => seen.push(['input', now]));
  assert.deepEqual(
    seen,
    [
      ['a', 1_000_500],
      ['input', 1_001_000],
    ],
    'the due event first, at its own time; the input at the clock',
  );
  clock.t = 1_010_000;
  await tick(10);
  assert.deepEqual(seen.at(-1), ['b', 1_002_000], 'a late event still sees its own time');
  assert.equal(p.now(), 1_010_000);
  assert.ok(p.lag.maxUs >= 8000, `lag recorded: ${p.lag.maxUs}`);
  p.stop();
});

test('a core that keeps scheduling at the same instant does not starve I/O: the engine yields between slices', async () => {
  const clock = new HandClock(0);
  const p = new PacedEngine(clock);
  let fired = 0;
  const again = (now: Micros): void => {
    fired++;
    if (fired < 3 * PacedEngine.SLICE) p.engine.at(now, again);
  };
  p.engine.at(0, again);
  let timerRan = false;
  setTimeout(() => (timerRan = true), 0);
  p.start();
  assert.equal(fired, PacedEngine.SLICE, 'one slice ran, then the engine yielded');
  for (let i = 0; i < 500 && fired < 3 * PacedEngine.SLICE; i++) await tick(10);
  assert.ok(timerRan, 'a timer got its turn');
  assert.equal(fired, 3 * PacedEngine.SLICE, 'then the rest ran');
  p.stop();
});

test('with aheadUs, a chain of close events runs without waiting for a timer each, and inputs enter at the engine time', async () => {
  const clock = new HandClock(1_000_000);
  const p = new PacedEngine(clock, { aheadUs: 1000 });
  const seen: Array<[string, Micros]> = [];
  p.start();
  // An input that starts a chain of dependent events 30-300 µs apart, as an 802.11 exchange does.
  p.inject((now) => {
    seen.push(['send', now]);
    p.engine.after(34, (t1) => {
      seen.push(['difs', t1]);
      p.engine.after(250, (t2) => {
        seen.push(['data', t2]);
        p.engine.after(60, (t3) => seen.push(['ack', t3]));
      });
    });
    p.engine.after(5000, (t) => seen.push(['later', t]));
  });
  assert.deepEqual(
    seen,
    [
      ['send', 1_000_000],
      ['difs', 1_000_034],
      ['data', 1_000_284],
      ['ack', 1_000_344],
    ],
    'the chain ran at once, each step at its own time; nothing beyond the horizon',
  );
  assert.equal(p.now(), 1_000_344, 'the engine is ahead of the clock');
  clock.t = 1_000_100;
  p.inject((now) => seen.push(['input', now]));
  assert.deepEqual(seen.at(-1), ['input', 1_000_344], 'an input never goes back in time: it enters at the engine time');
  clock.t = 1_004_500;
  await tick(10);
  assert.deepEqual(seen.at(-1), ['later', 1_005_000], 'an event within aheadUs of the clock runs');
  assert.equal(p.lag.maxUs, 0, 'nothing ran late');
  p.stop();
  assert.throws(() => new PacedEngine(clock, { aheadUs: -1 }), /aheadUs/);
});

test('with onFault, an event that throws is handed over and the engine goes on; without it, the throw reaches the caller', async () => {
  const clock = new HandClock(0);
  const faults: unknown[] = [];
  const p = new PacedEngine(clock, { onFault: (e) => faults.push(e) });
  const seen: Micros[] = [];
  p.engine.at(1000, () => {
    throw new Error('one event failed');
  });
  p.engine.at(2000, (now) => seen.push(now));
  p.start();
  clock.t = 5000;
  // Through a timer wake-up: the throw must not leave the timer (it would end the process).
  for (let i = 0; i < 100 && seen.length === 0; i++) await tick();
  assert.deepEqual(seen, [2000], 'the event after the faulty one ran');
  assert.equal(faults.length, 1);
  assert.equal((faults[0] as Error).message, 'one event failed');
  // Through inject as well: the input still runs.
  p.engine.at(6000, () => {
    throw new RangeError('again');
  });
  clock.t = 7000;
  assert.equal(
    p.inject((now) => now),
    7000,
  );
  assert.equal(faults.length, 2);
  p.stop();

  const bare = new PacedEngine(new HandClock(0));
  bare.engine.at(0, () => {
    throw new Error('no handler');
  });
  assert.throws(() => bare.inject(() => undefined), /no handler/);
});

test('paced.scheduler: an event scheduled from a promise continuation, outside any run, gets its wake-up', async () => {
  const clock = new HandClock(1000);
  const p = new PacedEngine(clock);
  p.start();
  await tick();
  const fired: number[] = [];
  // Nothing is scheduled, so no wake-up is set; a continuation then schedules through the engine's Scheduler.
  await Promise.resolve().then(() => p.scheduler.at(1000, (now) => fired.push(now)));
  await tick(20);
  assert.deepEqual(fired, [1000]);
  assert.equal(p.scheduler.now(), p.engine.now());
  p.stop();
});

test('a ScaledClock runs at its rate from the Unix epoch, and the engine paces by it', () => {
  const real = new HandClock(1_000_000);
  const slow = new ScaledClock(0.25, real);
  assert.equal(slow.now(), 250_000);
  real.t += 4000;
  assert.equal(slow.now(), 251_000, 'a quarter of the real time passed');
  assert.equal(slow.rate, 0.25);
  assert.throws(() => new ScaledClock(0), /rate/);
  assert.throws(() => new ScaledClock(2), /rate/);
  const p = new PacedEngine(slow);
  p.start();
  p.scheduler.at(slow.now() + 1000, () => undefined);
  // 1000 µs of the slow clock is 4 ms of real time.
  assert.ok(p.nextWakeUs !== undefined && p.nextWakeUs - slow.now() >= 1000, `wakes at ${p.nextWakeUs}`);
  p.stop();
});
