import assert from 'node:assert/strict';
import test from 'node:test';
import { ok, type Result } from '../../src/core/result.js';
import { encodeControl } from '../../src/wire/codec.js';
import { AUTH_TRAILER_BYTES, R3Auth, type AuthFailure } from '../../src/wire/r3-auth.js';
import { r3AuthTarget, type Receiver } from './r3-auth.js';
import { inputOf, runAny, runTarget, showInput } from './run.js';
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

test('the r3-auth target fails on a receiver that lets a forgery through, or miscounts', () => {
  const bodies = [encodeControl({ type: 'hello', src: 7, seq: 1, r1Channel: 6, workload: [], neighbours: [] })];
  /** The target over an R3Auth whose verdicts `spoil` rewrites (it may move the counters too). */
  const over = (spoil: (real: R3Auth, r: Result<Uint8Array, AuthFailure>, packet: Uint8Array) => Result<Uint8Array, AuthFailure>) =>
    r3AuthTarget(bodies, (keys): Receiver => {
      const real = new R3Auth(keys, 0);
      return { counters: real.counters, open: (packet, src, dst) => spoil(real, real.open(packet, src, dst), packet) };
    });
  // Takes a message with a bad MAC as verified (counted as verified): what a MAC check that compared too little would do.
  const lax = over((real, r, packet) => {
    if (r.ok || r.error !== 'bad-mac') return r;
    real.counters.badMac--;
    real.counters.verified++;
    return ok(packet.subarray(0, packet.length - AUTH_TRAILER_BYTES));
  });
  const forged = runTarget(lax, { seed: 1, n: 500, slowMs: Infinity });
  assert.ok(
    forged.escapes.some((e) => /a message that was never sealed verified/.test(e.error)),
    forged.escapes.map((e) => e.error).join('\n'),
  );
  // Refuses right but counts each refusal twice.
  const double = over((real, r) => {
    if (!r.ok) real.counters.noTrailer++;
    return r;
  });
  assert.ok(runTarget(double, { seed: 1, n: 200, slowMs: Infinity }).escapes.some((e) => /3 opens counted as/.test(e.error)));
});
