import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { LogBudget } from '../../src/core/log-budget.js';

const S = 1_000_000;

test('the first line of a kind goes at once, then one per interval, saying how many were held back', () => {
  const b = new LogBudget(10 * S);
  assert.equal(b.take('fault/X', 0), 0);
  for (let t = 1; t < 100; t++) assert.equal(b.take('fault/X', t * 1000), undefined, 'held back within the interval');
  assert.equal(b.take('fault/Y', 50_000), 0, 'another kind has a budget of its own');
  assert.equal(b.take('fault/X', 10 * S), 99, 'the next line counts those held back');
  assert.equal(b.take('fault/X', 10 * S + 1), undefined);
  assert.equal(b.take('fault/X', 20 * S + 1), 1);
});

test('due: a summary for each kind with lines held back once its interval is over; nothing when nothing was held back', () => {
  const b = new LogBudget(10 * S);
  assert.deepEqual(b.due(100 * S), [], 'nothing before any line');
  b.take('a', 0);
  b.take('a', 1);
  b.take('a', 2);
  b.take('b', 0);
  assert.deepEqual(b.due(5 * S), [], 'not before the interval is over');
  assert.deepEqual(b.due(10 * S), [{ key: 'a', held: 2 }], 'b held nothing back: no summary');
  assert.deepEqual(b.due(30 * S), [], 'once told, nothing more');
  assert.equal(b.take('a', 15 * S), undefined, 'the summary counts as the line of its interval');
  assert.equal(b.take('a', 20 * S), 1);
});

test('an interval that is not a whole number of µs >= 0 is refused', () => {
  assert.throws(() => new LogBudget(-1), RangeArgumentError);
  assert.throws(() => new LogBudget(1.5), RangeArgumentError);
});
