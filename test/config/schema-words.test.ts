import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { schemaChecker, type Schema } from '../../src/core/schema.js';

/**
 * A refused value's problem says what the field accepts, in words, from
 * whichever keyword refused it: a pattern by its `x-form`, lengths, bounds,
 * item counts, names of fields.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));

const schema: Schema = {
  $id: 'https://cogmesh.invalid/test/schema-words.json',
  type: 'object',
  additionalProperties: false,
  required: ['must'],
  properties: {
    must: { type: 'integer' },
    placement: { type: 'string', pattern: '^(none|every-[1-9])$', 'x-form': '"none" or "every-K" (K from 1 to 9)' },
    bare: { type: 'string', pattern: '^[a-z]+$' },
    iface: { type: 'string', minLength: 1, maxLength: 15, pattern: '^[a-z0-9]+$', 'x-form': 'lower-case letters and digits' },
    code: { type: 'string', minLength: 3, maxLength: 3 },
    note: { type: 'string', maxLength: 4 },
    name: { type: 'string', minLength: 1 },
    mode: { enum: ['split', 'e2e'] },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    share: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    step: { type: 'integer', multipleOf: 10 },
    list: { type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: { type: 'integer', minimum: 0 } },
    flag: { type: 'boolean' },
    byRouter: { type: 'object', propertyNames: { pattern: '^[0-9]+$', 'x-form': 'a router number' } },
  },
};

const check = schemaChecker(schema, [], { standalone: null });

/** The one problem found at `path` in `doc`. */
function problemAt(doc: Record<string, unknown>, path: string): { value: unknown; expected: string } {
  const issues = check({ must: 1, ...doc });
  const at = issues.filter((i) => i.path === path);
  assert.equal(at.length, 1, `one problem at ${path}: ${JSON.stringify(issues)}`);
  return at[0]!;
}

test('a pattern is told by its x-form, or shown as a regular expression without one', () => {
  assert.equal(problemAt({ placement: 'everyX' }, '/placement').expected, '"none" or "every-K" (K from 1 to 9)');
  assert.equal(problemAt({ bare: 'A1' }, '/bare').expected, 'a string matching /^[a-z]+$/');
  assert.equal(problemAt({ iface: 'eth-0' }, '/iface').expected, 'lower-case letters and digits (1 to 15 characters)');
  assert.equal(problemAt({ iface: 'a'.repeat(16) }, '/iface').expected, 'lower-case letters and digits (1 to 15 characters)');
});

test('lengths, bounds, choices, types and item counts in words', () => {
  assert.equal(problemAt({ code: 'ab' }, '/code').expected, 'a string of exactly 3 characters');
  assert.equal(problemAt({ note: 'abcde' }, '/note').expected, 'a string of at most 4 characters');
  assert.equal(problemAt({ name: '' }, '/name').expected, 'a non-empty string');
  assert.equal(problemAt({ mode: 'as' }, '/mode').expected, 'one of "split", "e2e"');
  assert.equal(problemAt({ port: 0 }, '/port').expected, 'an integer >= 1 and <= 65535');
  assert.equal(problemAt({ port: 'http' }, '/port').expected, 'an integer >= 1 and <= 65535');
  assert.equal(problemAt({ share: 1 }, '/share').expected, 'a number > 0 and < 1');
  assert.equal(problemAt({ step: 15 }, '/step').expected, 'an integer, a multiple of 10');
  assert.equal(problemAt({ flag: 'yes' }, '/flag').expected, 'true or false');
  const items = 'an array of 1 to 3 items, each an integer >= 0, no item twice';
  assert.equal(problemAt({ list: [] }, '/list').expected, items);
  assert.equal(problemAt({ list: [1, 1] }, '/list').expected, items);
  assert.equal(problemAt({ list: [1, 2, 3, 4] }, '/list').expected, items);
});

test('a missing field, an unknown field and a field name of the wrong form are named', () => {
  const missing = check({}).find((i) => i.path === '/must');
  assert.deepEqual(missing, { path: '/must', value: undefined, expected: 'a value (required): an integer' });
  const unknown = problemAt({ colour: 'red' }, '/colour');
  assert.equal(unknown.value, 'red');
  assert.match(unknown.expected, /^no such field \(allowed: must, placement, /);
  assert.deepEqual(problemAt({ byRouter: { r1: {} } }, '/byRouter/r1'), {
    path: '/byRouter/r1',
    value: 'r1',
    expected: 'a field name that is a router number',
  });
});

test('every pattern of the shipped schemas has an x-form that says it in words', () => {
  const missing: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${at}/${i}`));
    else if (typeof node === 'object' && node !== null) {
      const s = node as Record<string, unknown>;
      if (typeof s.pattern === 'string' && typeof s['x-form'] !== 'string') missing.push(at);
      for (const [k, v] of Object.entries(s)) walk(v, `${at}/${k}`);
    }
  };
  for (const file of ['config/node.schema.json', 'config/scenario.schema.json']) walk(JSON.parse(readFileSync(join(root, file), 'utf8')), file);
  assert.deepEqual(missing, []);
});
