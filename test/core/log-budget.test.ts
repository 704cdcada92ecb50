import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetNote, LogBudget, type LogVerdict } from '../../src/core/log-budget.js';

const S = 1_000_000;

test('at most `lines` lines a window; the rest counted, and the next line says how many', () => {
  const b = new LogBudget(3, 60 * S);
  const at = (t: number): LogVerdict => b.admit(t);
  assert.deepEqual(at(0), { log: true, notLogged: 0, last: false, quietUntilUs: 60 * S });
  assert.deepEqual(at(1), { log: true, notLogged: 0, last: false, quietUntilUs: 60 * S });
  assert.deepEqual(at(2), { log: true, notLogged: 0, last: true, quietUntilUs: 60 * S });
  for (let t = 3; t < 1003; t++) assert.deepEqual(at(t * 1000), { log: false });
  assert.equal(b.notLogged(), 1000);
  assert.deepEqual(at(60 * S - 1), { log: false }, 'the window is not over');
  // The next window starts with the first event after the last one ended.
  assert.deepEqual(at(75 * S), { log: true, notLogged: 1001, last: false, quietUntilUs: 135 * S });
  assert.equal(b.notLogged(), 0);
});

test('nothing is held back when events are rare', () => {
  const b = new LogBudget(1, 10 * S);
  for (let i = 0; i < 5; i++) assert.deepEqual(b.admit(i * 10 * S), { log: true, notLogged: 0, last: true, quietUntilUs: (i + 1) * 10 * S });
});

test('a clock that steps back opens no window', () => {
  const b = new LogBudget(1, 10 * S);
  assert.ok(b.admit(50 * S).log);
  assert.equal(b.admit(1 * S).log, false);
  assert.equal(b.admit(59 * S).log, false);
  assert.ok(b.admit(60 * S).log);
});

test('a budget that can log nothing, or a bad time, is refused', () => {
  assert.throws(() => new LogBudget(0, S), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => new LogBudget(2, 0), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => new LogBudget(1, S).admit(-1), { code: 'CORE_INVALID_TIME' });
});

test('budgetNote: what a line adds, nothing when nothing was held back and more may follow', () => {
  assert.equal(budgetNote({ log: true, notLogged: 0, last: false, quietUntilUs: 60 * S }, 0, 'refusals'), '');
  assert.equal(budgetNote({ log: true, notLogged: 7, last: false, quietUntilUs: 60 * S }, 0, 'refusals'), ' (7 more refusals before this one were not logged)');
  assert.equal(
    budgetNote({ log: true, notLogged: 7, last: true, quietUntilUs: 60 * S }, 20 * S + 1, 'refusals'),
    ' (7 more refusals before this one were not logged; further refusals in the next 40 s are counted, not logged)',
  );
});

test('each kind has a budget of its own: one line a kind every 10 s, the next saying how many were held back', () => {
  const b = new LogBudget(1, 10 * S);
  const took = (key: string, t: number): number | undefined => {
    const v = b.admit(t, key);
    return v.log ? v.notLogged : undefined;
  };
  assert.equal(took('fault/X', 0), 0);
  for (let t = 1; t < 100; t++) assert.equal(took('fault/X', t * 1000), undefined, 'held back within the interval');
  assert.equal(took('fault/Y', 50_000), 0, 'another kind has a budget of its own');
  assert.equal(took('fault/X', 10 * S), 99, 'the next line counts those held back');
  assert.equal(took('fault/X', 10 * S + 1), undefined);
  assert.equal(took('fault/X', 20 * S + 1), 1);
});

test('due: a summary for each kind with events held back once its window is over; nothing when nothing was held back', () => {
  const b = new LogBudget(1, 10 * S);
  assert.deepEqual(b.due(100 * S), [], 'nothing before any line');
  b.admit(0, 'a');
  b.admit(1, 'a');
  b.admit(2, 'a');
  b.admit(0, 'b');
  assert.deepEqual(b.due(5 * S), [], 'not before the window is over');
  assert.deepEqual(b.due(10 * S), [{ key: 'a', held: 2 }], 'b held nothing back: no summary');
  assert.deepEqual(b.due(30 * S), [], 'once told, nothing more');
  assert.equal(b.admit(15 * S, 'a').log, false, 'the summary counts as the first line of its window');
  assert.deepEqual(b.admit(20 * S, 'a'), { log: true, notLogged: 1, last: true, quietUntilUs: 30 * S });
});
