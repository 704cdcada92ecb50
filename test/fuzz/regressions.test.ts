import assert from 'node:assert/strict';
import test from 'node:test';
import { parseNodeConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/core/errors.js';
import { briefJson } from '../../src/core/json.js';
import { parseJsonFileText } from '../../src/core/schema.js';

/**
 * Inputs the fuzzer found escaping a parser (`npm run fuzz`), kept so that
 * they stay refused cleanly. Each names the run that found it.
 */

function refusal(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    return e;
  }
  assert.fail('expected a refusal');
}

// config-text, seed 1, input 1007: a file of 200,000 nested arrays. structuredClone gave up (the stack),
// and the refusal then showed the document with String(), which recursed as deep and overflowed too.
test('a configuration file nested far too deep is refused as a ConfigError, not a stack overflow', () => {
  for (const depth of [5_000, 200_000]) {
    const arrays = '['.repeat(depth) + ']'.repeat(depth);
    const e = refusal(() => parseNodeConfig(parseJsonFileText(arrays, 'deep.json'), 'deep.json'));
    assert.equal(e.issues[0]?.path, '/');
    assert.match(e.message, /deep\.json refused .*\n {2}\/: "an array" — expected plain JSON data .* nested at most a few thousand levels deep/);
    const objects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    assert.match(refusal(() => parseNodeConfig(parseJsonFileText(objects, 'deep.json'), 'deep.json')).message, /"an object" — expected plain JSON data/);
  }
});

test('a configuration value nested far too deep is refused without quoting it (it may hold a secret)', () => {
  let doc: unknown = { control: { curve: { serverSecretKey: 'do-not-show-this' } } };
  for (let i = 0; i < 200_000; i++) doc = [doc];
  const e = refusal(() => parseNodeConfig(doc, 'deep'));
  assert.doesNotMatch(e.message, /do-not-show-this/);
});

// config-object, seed 1, input 253: a configuration whose node id is a BigInt (10n). The refusal's
// message showed the value with JSON.stringify, which throws a TypeError on a BigInt.
test('a configuration value holding a BigInt is refused as a ConfigError that shows it', () => {
  const e = refusal(() => parseNodeConfig({ node: { id: 10n } }, 'code'));
  assert.match(e.message, /\/node\/id: 10n — expected/);
  assert.equal(briefJson({ a: [1n, 2] }), '{"a":[1n,2]}');
});
