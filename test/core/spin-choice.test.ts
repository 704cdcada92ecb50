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
  test('tries both, keeps the faster, and tries the other less often while tries confirm it', () => {
    const tries = (modes: boolean[], spinning: boolean): number[] => modes.flatMap((s, i) => (i >= 2 && s !== spinning ? [i] : []));
    const fastSpin = run(new SpinChoice(4, 8), 130, (s) => (s ? 5 : 40));
    assert.deepEqual(fastSpin.slice(0, 2), [true, false], 'both tried first');
    // 8 epochs after the choice, then 16, 32 and 64 (the most by default: 8 x 8) while sleeping stays slower.
    assert.deepEqual(tries(fastSpin, true), [9, 25, 57, 121], 'spins, trying sleep ever less often');
    const fastSleep = run(new SpinChoice(4, 8), 130, (s) => (s ? 60 : 30));
    assert.deepEqual(tries(fastSleep, false), [9, 25, 57, 121], 'sleeps, trying spin ever less often');
    // Capped in time, 320 us of the held mode's calls between tries: 16 of spinning's epochs (4 calls of 5 us),
    // 4 of sleeping's (4 calls of 20 us); a try's own epoch does not count.
    const capped = run(new SpinChoice(4, 8, 0.8, 320), 70, (s) => (s ? 5 : 40));
    assert.deepEqual(tries(capped, true), [9, 25, 42, 59], 'at most maxExploreUs of spinning apart');
    const cappedSleep = run(new SpinChoice(4, 8, 0.8, 320), 40, (s) => (s ? 60 : 20));
    assert.deepEqual(tries(cappedSleep, false), [5, 10, 15, 20, 25, 30, 35], 'at most maxExploreUs of sleeping apart');
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

  test('one slow epoch (a collection, a preemption) does not flip the choice', () => {
    const choice = new SpinChoice(4, 8);
    let hiccup = false;
    const cost = (s: boolean): number => (s ? (hiccup ? 500 : 5) : 40);
    run(choice, 5, cost);
    hiccup = true;
    run(choice, 1, cost);
    hiccup = false;
    assert.deepEqual(run(choice, 2, cost), [true, true], 'still spinning');
  });

  test('a choice held for long still follows a change of load at its next try', () => {
    // Spinning has been faster for 200 epochs: tries are 64 epochs apart.
    const choice = new SpinChoice(4, 8);
    let spinUs = 5;
    const cost = (s: boolean): number => (s ? spinUs : 40);
    run(choice, 200, cost);
    // Spinning gets slow: its own epochs show it at once.
    spinUs = 200;
    const slow = run(choice, 3, cost);
    assert.equal(slow.at(-1), false, 'sleeps the epoch after spinning got slow');
    // Spinning pays again: one try is enough, however slow spinning was before.
    spinUs = 5;
    const back = run(choice, 10, cost);
    assert.equal(back.at(-1), true, 'spins again after the first try');
  });
});
