import assert from 'node:assert/strict';
import { test } from 'node:test';
import { showValue } from '../../src/core/errors.js';
import { briefJson, jsonSyntaxError, MAX_JSON_DEPTH, nestingBeyond, parseJsonText, syntaxErrorExcerpt } from '../../src/core/json.js';
import { Rng } from '../../src/core/rng.js';

test('nestingBeyond: the first bracket past the limit; brackets inside strings, escaped quotes included, do not count', () => {
  assert.equal(nestingBeyond('[[[]]]', 3), undefined);
  assert.equal(nestingBeyond('[[[[]]]]', 3), 3);
  assert.equal(nestingBeyond('{"a":[{"b":1}]}', 3), undefined);
  assert.equal(nestingBeyond('{"a":[{"b":[1]}]}', 3), 11);
  assert.equal(nestingBeyond('["[[[[", "\\"[[[["]', 1), undefined);
  assert.equal(nestingBeyond('["\\\\", [[]]]', 2), 8, 'an escaped backslash ends before the quote');
  assert.equal(nestingBeyond(`${'['.repeat(1_000_000)}`, 64), 64, 'it stops at the first level too deep');
});

test('parseJsonText: a value, or a refusal that says where and quotes nothing', () => {
  assert.deepEqual(parseJsonText('{"a": [1, {"b": null}]}'), { ok: true, value: { a: [1, { b: null }] } });
  const deep = parseJsonText(`{"cmd":${'['.repeat(4103)}${']'.repeat(4103)}}`);
  assert.deepEqual(deep, {
    ok: false,
    error: { kind: 'depth', message: `objects and arrays nested deeper than ${MAX_JSON_DEPTH} levels at line 1, column 71` },
  });
  const atLimit = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
  assert.ok(parseJsonText(atLimit).ok);
  assert.equal(parseJsonText(`[${atLimit}]`).ok, false);
  const bad = parseJsonText('{"token": "s3cret-s3cret" x}');
  assert.deepEqual(bad, { ok: false, error: { kind: 'syntax', message: `expected ',' or '}' but found "x" at line 1, column 27` } });
});

test('syntaxErrorExcerpt never shows the inside of a string', () => {
  const cases: Array<[string, string]> = [
    ['{"a": 1 "secret-value"}', '"...'],
    ['{"a": "secret-value', '(inside a string)'],
    ['{"a": "secret\\qvalue"}', '(inside a string)'],
    ['{"a": tru}', 'tru}'],
    ['{"a": 1,\n}', '}'],
    ['[1,', '(end of file)'],
  ];
  for (const [text, shown] of cases) {
    const e = jsonSyntaxError(text);
    assert.ok(e, text);
    assert.equal(syntaxErrorExcerpt(text, e), shown, text);
  }
});

/** A random JSON value, some of them long or deep. */
function randomValue(rng: Rng, depth: number): unknown {
  const r = rng.next();
  if (depth <= 0 || r < 0.35) return [0, -1.5, 'a', 'x'.repeat(rng.int(0, 80)), 'é"\\\n', true, null][rng.int(0, 6)];
  if (r < 0.7) return Array.from({ length: rng.int(0, 6) }, () => randomValue(rng, depth - 1));
  const o: Record<string, unknown> = {};
  for (const k of ['z', 'a', 'long key '.repeat(rng.int(1, 10))]) if (rng.next() < 0.7) o[k] = randomValue(rng, depth - 1);
  return o;
}

test('briefJson says what cutting JSON.stringify at the bound says, without writing more than the bound', () => {
  const rng = Rng.fromSeed(7).fork('brief-json');
  const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 3)}...` : s);
  for (let i = 0; i < 5000; i++) {
    const v = randomValue(rng, 5);
    const n = [20, 60, 200][i % 3]!;
    assert.equal(briefJson(v, n), cut(JSON.stringify(v), n), JSON.stringify(v));
  }
  assert.equal(showValue('x'.repeat(100)), `"${'x'.repeat(56)}...`);
  assert.equal(showValue(undefined), '(missing)');
});

test('briefJson of a value nested 100,000 deep or a string of 10 MB: bounded, no stack overflow', () => {
  let deep: unknown = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(briefJson(deep, 60), `${'['.repeat(57)}...`);
  assert.equal(showValue({ a: deep }), `{"a":${'['.repeat(52)}...`);
  assert.equal(briefJson('y'.repeat(10_000_000), 10), '"yyyyyy...');
});
