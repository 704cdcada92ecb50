import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Timers } from '../../src/core/timers.js';

enum T {
  Hello,
  RreqRetry,
  RouteExpiry,
  ChannelDwell,
  SensingStart,
}

test('next() is undefined when no timer is set', () => {
  const t = new Timers<T>();
  assert.equal(t.next(), undefined);
  assert.deepEqual(t.due(Number.MAX_SAFE_INTEGER), []);
  assert.equal(t.size, 0);
});

test('next() is the earliest deadline and follows set and clear', () => {
  const t = new Timers<T>();
  t.set(T.Hello, 300);
  assert.equal(t.next(), 300);
  t.set(T.RreqRetry, 100);
  t.set(T.RouteExpiry, 200);
  assert.equal(t.next(), 100);
  t.clear(T.RreqRetry);
  assert.equal(t.next(), 200);
  t.set(T.RouteExpiry, 400); // re-arming moves the deadline
  assert.equal(t.next(), 300);
  assert.equal(t.get(T.RouteExpiry), 400);
  assert.ok(t.has(T.Hello));
  assert.ok(!t.has(T.RreqRetry));
  assert.equal(t.size, 2);
});

test('nothing is due before its time, and asking does not consume anything', () => {
  const t = new Timers<T>();
  t.set(T.Hello, 1000);
  t.set(T.ChannelDwell, 2000);
  for (const now of [0, 1, 500, 999]) assert.deepEqual(t.due(now), []);
  assert.equal(t.size, 2);
  assert.equal(t.next(), 1000);
});

test('due() returns and removes what has fired, earliest first, at or before now', () => {
  const t = new Timers<T>();
  t.set(T.SensingStart, 300);
  t.set(T.Hello, 100);
  t.set(T.RouteExpiry, 500);
  t.set(T.RreqRetry, 200);
  assert.deepEqual(t.due(300), [T.Hello, T.RreqRetry, T.SensingStart]);
  assert.equal(t.next(), 500);
  assert.deepEqual(t.due(300), []);
  assert.deepEqual(t.due(499), []);
  assert.deepEqual(t.due(500), [T.RouteExpiry]);
  assert.equal(t.next(), undefined);
});

test('equal deadlines come out in the order they were first set', () => {
  const t = new Timers<string>();
  for (const k of ['c', 'a', 'd', 'b']) t.set(k, 50);
  t.set('a', 50); // re-setting keeps its place
  t.set('e', 40);
  assert.deepEqual(t.due(50), ['e', 'c', 'a', 'd', 'b']);
});

test('a cleared timer never fires', () => {
  const t = new Timers<T>();
  t.set(T.Hello, 10);
  t.clear(T.Hello);
  t.clear(T.Hello);
  assert.deepEqual(t.due(1_000_000), []);
});

test('next() kept between changes is always the earliest deadline set (random sets, clears and takes)', () => {
  const t = new Timers<T>();
  const keys = [T.Hello, T.RreqRetry, T.RouteExpiry, T.ChannelDwell, T.SensingStart];
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 5000; i++) {
    const k = keys[rand(keys.length)]!;
    const op = rand(10);
    if (op < 4) t.set(k, rand(1000));
    else if (op < 6) t.clear(k);
    else if (op === 6) t.takeDue(rand(1000));
    else if (op === 7) t.due(rand(1000));
    const set = keys.map((x) => t.get(x)).filter((w): w is number => w !== undefined);
    assert.equal(t.next(), set.length === 0 ? undefined : Math.min(...set), `step ${i}`);
  }
});

test('due() after random sets, clears and takes: what a Map in first-set order gives, a key cleared and set again going last', () => {
  const t = new Timers<string>();
  const ref = new Map<string, number>();
  const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
  let seed = 777;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const refDue = (now: number): string[] => {
    const fired = [...ref].filter(([, w]) => w <= now).sort((x, y) => x[1] - y[1]);
    for (const [k] of fired) ref.delete(k);
    return fired.map(([k]) => k);
  };
  for (let i = 0; i < 5000; i++) {
    const k = keys[rand(keys.length)]!;
    const op = rand(10);
    // Few distinct times, so that equal deadlines are common and their order counts.
    if (op < 5) {
      const w = rand(8) * 100;
      t.set(k, w);
      ref.set(k, w);
    } else if (op < 7) {
      t.clear(k);
      ref.delete(k);
    } else if (op === 7) {
      const now = rand(8) * 100;
      assert.equal(t.takeDue(now), refDue(now).length > 0, `step ${i}`);
    } else {
      const now = rand(8) * 100;
      assert.deepEqual(t.due(now), refDue(now), `step ${i}`);
    }
    assert.equal(t.size, ref.size, `step ${i}`);
    for (const x of keys) assert.equal(t.get(x), ref.get(x), `step ${i}: ${x}`);
  }
});
