import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventEngine } from '../../src/core/engine.js';
import { InvalidTimeError, RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';

describe('EventEngine', () => {
  test('runs events in time order, with the clock at each event time', () => {
    const e = new EventEngine();
    const log: string[] = [];
    for (const [at, name] of [
      [30, 'c'],
      [10, 'a'],
      [20, 'b'],
      [25, 'b2'],
    ] as const) {
      e.at(at, (now) => log.push(`${name}@${now}/${e.now()}`));
    }
    e.run();
    assert.deepEqual(log, ['a@10/10', 'b@20/20', 'b2@25/25', 'c@30/30']);
    assert.equal(e.now(), 30);
    assert.equal(e.eventsFired, 4);
    assert.equal(e.pending, 0);
  });

  test('events at equal times run in insertion order', () => {
    const rng = Rng.fromSeed(21);
    const e = new EventEngine();
    const planned = Array.from({ length: 300 }, (_, i) => ({ at: rng.int(0, 5) * 100, i }));
    const fired: number[] = [];
    for (const p of planned) e.at(p.at, () => fired.push(p.i));
    e.run();
    assert.deepEqual(
      fired,
      [...planned].sort((x, y) => x.at - y.at || x.i - y.i).map((p) => p.i),
    );
  });

  test('an event scheduled from inside an event at the same time runs after those already queued', () => {
    const e = new EventEngine();
    const log: string[] = [];
    e.at(10, () => {
      log.push('A');
      e.after(0, () => log.push('D'));
      e.at(10, () => log.push('E'));
    });
    e.at(10, () => log.push('B'));
    e.at(10, () => log.push('C'));
    e.at(11, () => log.push('F'));
    e.run();
    assert.deepEqual(log, ['A', 'B', 'C', 'D', 'E', 'F']);
  });

  test('cancel stops a pending event, once', () => {
    const e = new EventEngine();
    const log: string[] = [];
    const a = e.at(10, () => log.push('a'));
    const b = e.at(20, () => log.push('b'));
    e.at(30, () => log.push('c'));
    assert.equal(e.pending, 3);
    assert.equal(e.cancel(b), true);
    assert.equal(e.cancel(b), false);
    assert.equal(e.pending, 2);
    e.run(10);
    assert.equal(e.cancel(a), false, 'an event that has run cannot be cancelled');
    assert.equal(e.cancel(12345), false);
    e.run();
    assert.deepEqual(log, ['a', 'c']);
    assert.equal(e.eventsFired, 2);
  });

  test('a handle names one event only: once it has run or been cancelled, a later event in its place is not cancelled by it', () => {
    const e = new EventEngine();
    const log: string[] = [];
    const handles = new Set<number>();
    let stale = e.at(1, () => log.push('first'));
    handles.add(stale);
    e.run();
    // Thousands of events, each scheduled after the last ran or was cancelled: their storage is reused.
    for (let i = 0; i < 5000; i++) {
      const id = e.at(e.now() + 1, () => log.push(`e${i}`));
      assert.ok(!handles.has(id), `handle ${id} handed out twice`);
      handles.add(id);
      assert.equal(e.cancel(stale), false, 'a stale handle cancels nothing');
      if (i % 2 === 0) assert.equal(e.cancel(id), true);
      else e.run();
      stale = id;
    }
    assert.equal(e.pending, 0);
    assert.equal(log.length, 1 + 2500);
    // Many pending at once, cancelled in a scrambled order: each exactly once, the rest run in order.
    const rng = Rng.fromSeed(7);
    const ids = Array.from({ length: 300 }, (_, i) => e.at(e.now() + 10 + i, () => log.push(`p${i}`)));
    const gone = new Set(ids.filter(() => rng.next() < 0.5));
    for (const id of gone) assert.equal(e.cancel(id), true);
    for (const id of gone) assert.equal(e.cancel(id), false);
    assert.equal(e.pending, 300 - gone.size);
    const before = log.length;
    e.run();
    assert.deepEqual(
      log.slice(before),
      ids.flatMap((id, i) => (gone.has(id) ? [] : [`p${i}`])),
    );
  });

  test('nextAt skips cancelled events', () => {
    const e = new EventEngine();
    const first = e.at(5, () => {});
    e.at(9, () => {});
    assert.equal(e.nextAt(), 5);
    e.cancel(first);
    assert.equal(e.nextAt(), 9);
    assert.equal(e.step(), true);
    assert.equal(e.now(), 9);
    assert.equal(e.nextAt(), undefined);
    assert.equal(e.step(), false);
  });

  test('run(until) runs events up to and including until, then leaves the clock at until', () => {
    const e = new EventEngine();
    const log: number[] = [];
    for (const at of [100, 200, 300, 400]) e.at(at, (now) => log.push(now));
    e.run(300);
    assert.deepEqual(log, [100, 200, 300]);
    assert.equal(e.now(), 300);
    e.run(350);
    assert.deepEqual(log, [100, 200, 300]);
    assert.equal(e.now(), 350, 'the clock moves to until even with no event there');
    assert.equal(e.pending, 1);
    e.run();
    assert.deepEqual(log, [100, 200, 300, 400]);
    assert.equal(e.now(), 400);
  });

  test('run(until) on an empty engine just moves the clock; run() with nothing to do does not', () => {
    const e = new EventEngine(50);
    e.run();
    assert.equal(e.now(), 50);
    e.run(1000);
    assert.equal(e.now(), 1000);
  });

  test('events scheduled during a run(until) beyond until wait for the next run', () => {
    const e = new EventEngine();
    const log: number[] = [];
    e.at(10, (now) => {
      log.push(now);
      e.after(100, (t) => log.push(t));
    });
    e.run(50);
    assert.deepEqual(log, [10]);
    assert.equal(e.nextAt(), 110);
    e.run(110);
    assert.deepEqual(log, [10, 110]);
  });

  test('scheduling in the past is refused; now is fine', () => {
    const e = new EventEngine();
    e.run(100);
    assert.throws(
      () => e.at(99, () => {}),
      (err: unknown) => err instanceof RangeArgumentError && err.code === 'CORE_OUT_OF_RANGE',
    );
    assert.equal(e.pending, 0);
    let ran = false;
    e.at(100, () => (ran = true));
    e.run();
    assert.ok(ran);
  });

  test('times and delays must be non-negative integer microseconds', () => {
    const e = new EventEngine();
    const isInvalid = (err: unknown) => err instanceof InvalidTimeError && err.code === 'CORE_INVALID_TIME';
    assert.throws(() => e.at(1.5, () => {}), isInvalid);
    assert.throws(() => e.at(Number.NaN, () => {}), isInvalid);
    assert.throws(() => e.after(-1, () => {}), isInvalid);
    assert.throws(() => e.after(0.5, () => {}), isInvalid);
    assert.throws(() => new EventEngine(-5), isInvalid);
    assert.equal(e.pending, 0);
  });

  test('nothing runs before it is due', () => {
    const e = new EventEngine();
    let ran = false;
    e.at(1000, () => (ran = true));
    e.run(999);
    assert.equal(ran, false);
    assert.equal(e.now(), 999);
    e.run(1000);
    assert.equal(ran, true);
  });
  test('what an event schedules keeps its order, and what it cancels again never runs', () => {
    const e = new EventEngine();
    const order: string[] = [];
    e.at(10, () => {
      // Scheduled in this order at the same times as events from before: after them, in this order.
      e.at(20, () => order.push('b'));
      const moved = e.at(20, () => order.push('never'));
      e.at(15, () => order.push('first'));
      e.cancel(moved);
      e.at(20, () => order.push('c'));
      assert.equal(e.pending, 4, 'the held ones count as pending');
    });
    e.at(20, () => order.push('a'));
    e.run();
    assert.deepEqual(order, ['first', 'a', 'b', 'c']);
    assert.equal(e.pending, 0);
    assert.equal(e.eventsFired, 5);
  });

  test('an event that drives the engine itself sees what it scheduled', () => {
    const e = new EventEngine();
    const order: string[] = [];
    e.at(10, () => {
      e.at(12, () => order.push('inner'));
      assert.equal(e.nextAt(), 12);
      e.run(12);
      order.push('outer done');
    });
    e.at(30, () => order.push('last'));
    e.run();
    assert.deepEqual(order, ['inner', 'outer done', 'last']);
  });

  interface Pending {
    at: number;
    order: number;
    name: number;
  }

  test('move is cancel and schedule anew: against a plain list, over random schedules, moves, cancels and runs', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rng = Rng.fromSeed(seed);
      const e = new EventEngine();
      // The reference: pending events as (at, order of scheduling, name), run by sorting.
      let order = 0;
      const model = new Map<number, Pending>();
      const handles: number[] = [];
      const fired: number[] = [];
      const expected: number[] = [];
      let name = 0;
      const fire = (n: number) => () => fired.push(n);
      const runModel = (until: number): void => {
        for (;;) {
          let best: [number, Pending] | undefined;
          for (const kv of model)
            if (kv[1].at <= until && (!best || kv[1].at < best[1].at || (kv[1].at === best[1].at && kv[1].order < best[1].order))) best = kv;
          if (!best) return;
          model.delete(best[0]);
          expected.push(best[1].name);
        }
      };
      for (let step = 0; step < 3000; step++) {
        const r = rng.next();
        const now = e.now();
        if (r < 0.4) {
          const n = name++;
          const at = now + rng.int(0, 50);
          const id = e.at(at, fire(n));
          model.set(id, { at, order: order++, name: n });
          handles.push(id);
        } else if (r < 0.7 && handles.length > 0) {
          const k = rng.int(0, handles.length - 1);
          const id = handles[k]!;
          const n = name++;
          const at = now + rng.int(0, 50);
          const moved = e.move(id, at, fire(n));
          model.delete(id);
          model.set(moved, { at, order: order++, name: n });
          handles[k] = moved;
        } else if (r < 0.85 && handles.length > 0) {
          const k = rng.int(0, handles.length - 1);
          const id = handles[k]!;
          assert.equal(e.cancel(id), model.has(id));
          model.delete(id);
        } else if (r >= 0.85) {
          const until = now + rng.int(0, 30);
          runModel(until);
          e.run(until);
        }
      }
      runModel(Infinity);
      e.run();
      assert.deepEqual(fired, expected, `seed ${seed}`);
      assert.equal(e.pending, 0);
    }
  });
});
