import assert from 'node:assert/strict';
import test from 'node:test';
import { inputOf, runAny, showInput } from './run.js';
import { TARGETS, type FuzzTarget } from './targets.js';

/**
 * The fuzzer's short pass (`npm run fuzz` runs the long one): every parser
 * over 2,000 random and mutated inputs, none of which may escape its
 * documented refusal. Escapes are listed with what reproduces them.
 */

const N = 2_000;

for (const target of TARGETS) {
  test(`fuzz ${target.name}: ${N} inputs, each accepted or refused cleanly`, () => {
    const r = runAny(target, { seed: 1, n: N, slowMs: Infinity });
    assert.equal(r.inputs, N);
    assert.deepEqual(
      r.escapes.map((e) => `input ${e.index}: ${e.error} (npm run fuzz -- --target ${e.target} --seed ${e.seed} --index ${e.index})`),
      [],
    );
    assert.ok(r.accepted > 0, 'some inputs get through (the seeds are valid and mutations keep some so)');
    assert.ok(r.refused > 0, 'some inputs are refused');
  });
}

test('an input is made again from the seed and its index alone', () => {
  for (const target of TARGETS) {
    const t = target as FuzzTarget<unknown>;
    const seeds = t.seeds();
    for (const index of [0, 7, 1999]) {
      const a = showInput(t.kind, inputOf(t, seeds, 5, index));
      assert.equal(showInput(t.kind, inputOf(t, seeds, 5, index)), a, `${t.name} input ${index}`);
    }
    assert.notEqual(showInput(t.kind, inputOf(t, seeds, 5, 1)), showInput(t.kind, inputOf(t, seeds, 6, 1)), `${t.name}: another seed, other inputs`);
  }
});
