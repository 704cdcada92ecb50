import assert from 'node:assert/strict';
import { test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { Rng } from '../../src/core/rng.js';
import { changedPaths, liveChange, sameJson } from '../../src/config/live.js';
import { defaultNodeConfig, parseNodeConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/core/errors.js';
import { copyJson, setPaths } from '../../src/core/schema.js';
import { configVersion } from '../../src/config/load.js';

/** A random JSON-ish value over a small domain, so that equal ones come up often. */
function randomValue(rng: Rng, depth: number): unknown {
  const r = rng.next();
  if (depth <= 0 || r < 0.4) return [0, 1, 'a', 'b', true, null, undefined, NaN, Infinity, 1.5][rng.int(0, 9)];
  if (r < 0.7) return Array.from({ length: rng.int(0, 3) }, () => randomValue(rng, depth - 1));
  const o: Record<string, unknown> = {};
  // Keys in a random order: stable serialisation sorts them.
  for (const k of ['z', 'a', 'm'].sort(() => rng.next() - 0.5)) if (rng.next() < 0.6) o[k] = randomValue(rng, depth - 1);
  return o;
}

test('sameJson says what comparing stable serialisations says, without serialising', () => {
  const rng = Rng.fromSeed(5).fork('same-json');
  let same = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = randomValue(rng, 3);
    const b = rng.next() < 0.3 ? structuredClone(a) : randomValue(rng, 3);
    const want = stableStringify(a) === stableStringify(b);
    assert.equal(sameJson(a, b), want, `${stableStringify(a)} vs ${stableStringify(b)}`);
    if (want) same++;
  }
  assert.ok(same > 5000 && same < 15_000, `a mix of equal (${same}) and different documents`);
});

/** changedPaths as it was before it skipped equal members: every member visited. */
function changedPathsVisitingAll(a: unknown, b: unknown, at = '', out: string[] = []): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) changedPathsVisitingAll(a[k], b[k], at === '' ? k : `${at}.${k}`, out);
  } else if (stableStringify(a) !== stableStringify(b)) out.push(at);
  return out;
}

test('changedPaths finds what visiting every member finds, on random documents', () => {
  const rng = Rng.fromSeed(6).fork('changed-paths');
  let some = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = randomValue(rng, 4);
    const b = rng.next() < 0.3 ? structuredClone(a) : randomValue(rng, 4);
    const want = changedPathsVisitingAll(a, b);
    assert.deepEqual(changedPaths(a, b), want, `${stableStringify(a)} vs ${stableStringify(b)}`);
    if (want.length > 1) some++;
  }
  assert.ok(some > 1000, `documents that differ in several places (${some})`);
});

test('copyJson copies plain JSON data whole: equal, and sharing nothing', () => {
  const rng = Rng.fromSeed(7).fork('copy-json');
  const objects = (v: unknown): unknown[] => (typeof v === 'object' && v !== null ? [v, ...Object.values(v).flatMap(objects)] : []);
  for (const doc of [defaultNodeConfig(1), ...Array.from({ length: 2000 }, () => randomValue(rng, 4))]) {
    const copy = copyJson(doc);
    assert.deepEqual(copy, structuredClone(doc));
    const mine = new Set(objects(doc));
    assert.ok(
      objects(copy).every((o) => !mine.has(o)),
      'no object or array shared',
    );
  }
});

test('changedPaths names the leaves that differ, arrays whole, in key order; a live change reports them once', () => {
  const a = defaultNodeConfig(1);
  const b = structuredClone(a);
  b.sensing.periodMs += 1;
  b.radios.R3.channel = a.radios.R3.channel === 3 ? 4 : 3;
  assert.deepEqual(changedPaths(a, b), ['radios.R3.channel', 'sensing.periodMs']);
  assert.deepEqual(changedPaths(a, structuredClone(a)), []);
  const c = liveChange(a, b);
  assert.deepEqual(c.changed, ['radios.R3.channel', 'sensing.periodMs']);
  assert.deepEqual(
    c.restartOnly.map((i) => i.path),
    ['/radios/R3/channel'],
  );
});

test("a set's change, compared in the sections its paths name, reports what comparing the whole configurations reports", () => {
  const rng = Rng.fromSeed(8).fork('set-sections');
  // Valid values, some the defaults (no change), in several sections, some two in one section.
  const choices: Array<[string, unknown[]]> = [
    ['sensing.periodMs', [1000, 2000]],
    ['sensing.durationMs', [70, 40]],
    ['sensing.cooperative.halfLifeMs', [2000, 3000]],
    ['radios.R3.channel', [3, 4]],
    ['channel.hysteresis', [0.1, 0.2]],
    ['switching.intervalMs', [50, 40]],
    ['log.level', ['info', 'debug']],
  ];
  const prev = defaultNodeConfig(1);
  const version = configVersion(prev);
  let changes = 0;
  for (let i = 0; i < 300; i++) {
    const entries = choices.filter(() => rng.next() < 0.5).map(([p, vs]) => [p, vs[rng.int(0, vs.length - 1)]] as const);
    // In any order, a path's section named once per path.
    entries.sort(() => rng.next() - 0.5);
    const { doc, issues } = setPaths(prev, entries);
    assert.deepEqual(issues, []);
    const whole = changedPaths(prev, structuredClone(doc));
    const c = liveChange(prev, doc, 'set', version, { take: true, sections: entries.map(([p]) => p.split('.', 1)[0]!) });
    assert.deepEqual(c.changed, whole, entries.map(([p, v]) => `${p}=${String(v)}`).join(' '));
    if (whole.length > 1) changes++;
  }
  assert.ok(changes > 50, `sets that change several fields (${changes})`);
});

test('a chain of sets, each checked against the last one taken, is taken or refused as a whole check of its configuration says', () => {
  const rng = Rng.fromSeed(9).fork('set-rules');
  // Values the rules across fields weigh against each other (a round within its period and with time for its
  // retunes, channels of the plan and of the allowed list, a control endpoint beyond loopback), valid or not.
  const choices: Array<[string, unknown[]]> = [
    ['sensing.periodMs', [1000, 2000, 500]],
    ['sensing.durationMs', [70, 40, 1500]],
    ['sensing.channelsPerRound', [0, 3, 12]],
    ['switching.overheadUs', [1000, 20000]],
    ['channel.initialChannel', [0, 6, 13]],
    ['channel.cognitive', [true, false]],
    ['channelPlan.allowed', [[], [1, 6, 11], [1, 1]]],
    ['radios.R3.channel', [3, 6, 12]],
    ['control.endpoint', ['', 'tcp://127.0.0.1:7700', 'tcp://10.0.0.1:7700']],
    ['log.level', ['info', 'debug']],
  ];
  let prev = defaultNodeConfig(1);
  const seen = { taken: 0, refused: 0 };
  for (let i = 0; i < 400; i++) {
    const entries = choices.filter(() => rng.next() < 0.25).map(([p, vs]) => [p, vs[rng.int(0, vs.length - 1)]] as const);
    if (entries.length === 0) continue;
    // As a live set builds it: the sections the paths name copied, the others the running configuration's own.
    const { doc, issues } = setPaths(prev, entries, { shareOthers: true });
    assert.deepEqual(issues, []);
    const running = structuredClone(prev);
    const what = entries.map(([p, v]) => `${p}=${JSON.stringify(v)}`).join(' ');
    let whole: { cfg?: unknown; issues?: unknown };
    try {
      whole = { cfg: parseNodeConfig(structuredClone(doc)) };
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      whole = { issues: e.issues };
    }
    try {
      const c = liveChange(prev, doc, 'set', configVersion(prev), { take: true, sections: entries.map(([p]) => p.split('.', 1)[0]!) });
      assert.deepEqual(c.checked, whole.cfg, `taken, where the whole check refuses: ${what}`);
      assert.deepEqual(prev, running, `the running configuration changed: ${what}`);
      prev = c.checked;
      seen.taken++;
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      assert.deepEqual(e.issues, whole.issues, `refused otherwise than the whole check: ${what}`);
      assert.deepEqual(prev, running, `the running configuration changed: ${what}`);
      seen.refused++;
    }
  }
  assert.ok(seen.taken > 40 && seen.refused > 40, JSON.stringify(seen));
});
