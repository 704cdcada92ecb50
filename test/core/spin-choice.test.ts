import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SpinChoice } from '../../src/core/spin-choice.js';

/** Runs `epochs` epochs of 4 calls, each taking what `cost` says for the mode in force; returns the modes, epoch by epoch. */
function run(choice: SpinChoice, epochs: number, cost: (spinning: boolean) => number): boolean[] {
  const modes: boolean[] = [];
  for (let e = 0; e < epochs; e++) {
    modes.push(choice.spinning);
    for (let i = 0; i < 4; i++) choice.record(cost(choice.spinning));
  }
  return modes;
}

describe('choosing between spinning and sleeping', () => {
  test('tries both, keeps the faster, and tries the other every 8th epoch', () => {
    const fastSpin = run(new SpinChoice(4, 8), 18, (s) => (s ? 5 : 40));
    assert.deepEqual(fastSpin.slice(0, 2), [true, false], 'both tried first');
    assert.deepEqual(
      fastSpin
        .slice(2)
        .map((s, i) => (s ? '' : `sleep@${i + 2}`))
        .filter(Boolean),
      ['sleep@8', 'sleep@16'],
      'spins, trying sleep every 8th epoch',
    );
    const fastSleep = run(new SpinChoice(4, 8), 18, (s) => (s ? 60 : 30));
    assert.deepEqual(
      fastSleep
        .slice(2)
        .map((s, i) => (s ? `spin@${i + 2}` : ''))
        .filter(Boolean),
      ['spin@8', 'spin@16'],
      'sleeps, trying spin every 8th epoch',
    );
  });

  test('spinning costs CPU: it is kept only when clearly faster', () => {
    const modes = run(new SpinChoice(4, 8, 0.8), 7, (s) => (s ? 29 : 30));
    assert.deepEqual(modes.slice(2), [false, false, false, false, false]);
  });

  test('a change of load is followed', () => {
    const choice = new SpinChoice(4, 4);
    let loaded = false;
    const cost = (s: boolean): number => (s ? (loaded ? 200 : 5) : 40);
    assert.equal(run(choice, 10, cost).at(-1), true);
    loaded = true;
    const after = run(choice, 20, cost);
    assert.equal(after.at(-1), false, 'sleeps once spinning got slow');
    loaded = false;
    const later = run(choice, 40, cost);
    assert.equal(later.at(-1), true, 'spins again once it pays');
  });
});
