import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LIVE_SECTIONS, nodeSchema, parseNodeConfig } from '../../src/config/load.js';
import { LIVE_FIELDS } from '../../src/config/live.js';
import { scenarioSchema } from '../../src/config/scenario.js';
import { hwProfileSchema } from '../../src/hw/profiles.js';
import { evaluateStandaloneValidators, schemaChecker, standaloneValidators, type Schema, type StandaloneValidators } from '../../src/core/schema.js';

/**
 * The build compiles every schema's validator ahead of time
 * (`standaloneValidators`, written by src/config/build-validators.ts): these
 * tests check that such a validator accepts and refuses what the one compiled
 * at run time does, with the same problems at the same paths and the same
 * defaults filled in.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The module the build writes, run as the product runs it (its `require`s resolve from here). */
function evaluate(code: string): StandaloneValidators {
  return evaluateStandaloneValidators(code, fileURLToPath(import.meta.url)).validators;
}

// Made now, as the build does: every checker the product makes when its modules load.
const built = evaluate(standaloneValidators());
// And the module apart of the members some of them check on their own.
const builtMembers = evaluate(standaloneValidators(undefined, 'members'));

const jsonFiles = (dir: string): unknown[] =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(root, dir, f), 'utf8')) as unknown);

/**
 * Documents near `doc`, most of them invalid: each field removed, each leaf
 * replaced by values of other types and out of any range, an unknown field in
 * each object, each object and array replaced by a scalar.
 */
function variants(doc: unknown): unknown[] {
  const out: unknown[] = [doc, null, [], {}, 'text'];
  const walk = (node: unknown, replace: (v: unknown) => unknown): void => {
    if (Array.isArray(node)) {
      out.push(replace(7), replace([...node, node[0] ?? null]));
      node.forEach((item, i) => walk(item, (v) => replace(node.map((x, j) => (j === i ? v : x)))));
    } else if (typeof node === 'object' && node !== null) {
      const obj = node as Record<string, unknown>;
      out.push(replace('text'), replace({ ...obj, bogus: 1 }));
      for (const key of Object.keys(obj)) {
        const { [key]: _removed, ...rest } = obj;
        out.push(replace(rest));
        walk(obj[key], (v) => replace({ ...obj, [key]: v }));
      }
    } else {
      for (const v of [-1e12, 1e12, 0.5, -1, 'not-a-value', '', true, null]) if (v !== node) out.push(replace(v));
    }
  };
  walk(doc, (v) => v);
  return out;
}

function sameAsCompiled(what: string, rootSchema: Schema, refs: readonly Schema[], docs: readonly unknown[]): number {
  const ahead = schemaChecker(rootSchema, refs, { standalone: built });
  const runtime = schemaChecker(rootSchema, refs, { standalone: null });
  let refused = 0;
  for (const doc of docs) {
    const a = structuredClone(doc);
    const b = structuredClone(doc);
    const issues = ahead(a);
    assert.deepEqual(issues, runtime(b), `${what}: same problems for ${JSON.stringify(doc).slice(0, 300)}`);
    assert.deepEqual(a, b, `${what}: same defaults filled in`);
    if (issues.length > 0) refused++;
  }
  assert.equal(ahead.source, 'standalone', `${what}: the validator compiled ahead of time was used`);
  assert.equal(runtime.source, 'compiled');
  return refused;
}

test('node configurations: the validator compiled ahead of time finds what the run-time one finds', () => {
  const docs = jsonFiles('config/examples').flatMap(variants);
  const refused = sameAsCompiled('node', nodeSchema, [], docs);
  assert.ok(refused > docs.length / 2, `most variants are invalid (${refused} of ${docs.length})`);
});

test('scenarios (with the node schema they name): the validator compiled ahead of time finds what the run-time one finds', () => {
  const docs = jsonFiles('config/scenarios').flatMap(variants);
  const refused = sameAsCompiled('scenario', scenarioSchema, [nodeSchema], docs);
  assert.ok(refused > docs.length / 2, `most variants are invalid (${refused} of ${docs.length})`);
});

test('hardware profiles: the validator compiled ahead of time finds what the run-time one finds', () => {
  const docs = jsonFiles('hw/profiles').flatMap(variants);
  const refused = sameAsCompiled('hw profile', hwProfileSchema, [], docs);
  assert.ok(refused > docs.length / 2, `most variants are invalid (${refused} of ${docs.length})`);
});

test('a schema other than the one compiled ahead of time (a build older than an edit) is compiled at run time', () => {
  const edited = structuredClone(nodeSchema) as Schema;
  edited.description = `${String(edited.description)} (edited)`;
  const check = schemaChecker(edited, [], { standalone: built });
  assert.deepEqual(check({ node: { id: 1 } }), []);
  assert.equal(check.source, 'compiled');
});

test('a checker has no validator before its first check', () => {
  const check = schemaChecker(nodeSchema, [], { standalone: built });
  assert.equal(check.source, undefined);
  check({ node: { id: 1 } });
  assert.equal(check.source, 'standalone');
});

test('a change within some sections: checking those sections alone finds what checking the whole finds, ahead of time and at run time', () => {
  const live = LIVE_SECTIONS;
  assert.deepEqual([...live].sort(), [...new Set(LIVE_FIELDS.map((f) => f.split('.', 1)[0]!))].sort());
  const ahead = schemaChecker(nodeSchema, [], { standalone: { ...built, ...builtMembers }, members: live });
  const runtime = schemaChecker(nodeSchema, [], { standalone: null, members: live });
  const whole = schemaChecker(nodeSchema, [], { standalone: built });
  // The build compiles each of them on its own, in a module apart from the roots'.
  assert.equal(Object.keys(builtMembers).length, live.length);
  assert.ok(Object.keys(built).every((k) => !k.includes('/')));
  let refused = 0;
  let checked = 0;
  for (const base of jsonFiles('config/examples')) {
    const cfg = structuredClone(base);
    assert.deepEqual(whole(cfg), [], 'an example passes');
    // The live sections are checked alone; any other (node, here) goes to the whole check.
    for (const name of [...live, 'node']) {
      for (const v of variants((cfg as Record<string, unknown>)[name])) {
        const doc = { ...(cfg as Record<string, unknown>), [name]: v };
        const [a, b, c] = [structuredClone(doc), structuredClone(doc), structuredClone(doc)];
        const want = whole(c);
        const what = `${name} = ${JSON.stringify(v).slice(0, 200)}`;
        assert.deepEqual(ahead.members(a, [name]), want, `ahead of time: ${what}`);
        assert.deepEqual(runtime.members(b, [name]), want, `at run time: ${what}`);
        assert.deepEqual(a, c, `same defaults filled in: ${what}`);
        assert.deepEqual(b, c, `same defaults filled in: ${what}`);
        if (want.length > 0) refused++;
        checked++;
      }
    }
  }
  assert.ok(refused > checked / 2, `most variants are invalid (${refused} of ${checked})`);
});

test('a member check goes to the whole check where the root is at stake: a section missing, an unknown one, not an object', () => {
  const check = schemaChecker(nodeSchema, [], { standalone: { ...built, ...builtMembers }, members: ['sensing'] });
  const whole = schemaChecker(nodeSchema, [], { standalone: built });
  const cfg = parseNodeConfig({ node: { id: 3 } }, 'test') as unknown as Record<string, unknown>;
  const { sensing: _gone, ...missing } = cfg;
  for (const doc of [missing, { ...cfg, bogus: 1 }, 'text', null, []]) {
    const a = structuredClone(doc);
    const b = structuredClone(doc);
    assert.deepEqual(check.members(a, ['sensing']), whole(b), JSON.stringify(doc).slice(0, 200));
    assert.deepEqual(a, b);
  }
  // A section not checked on its own (node) with a bad value: the whole check reports it.
  const bad = { ...cfg, node: { ...(cfg.node as object), id: -5 } };
  assert.ok(check.members(structuredClone(bad), ['node']).some((i) => i.path === '/node/id'));
});

test('a root whose own rules a member check cannot stand for (a schema for unlisted members, a required member) is checked whole', () => {
  const schemas: Schema[] = [
    {
      $id: 'https://cogmesh.test/members-extra.json',
      type: 'object',
      additionalProperties: { type: 'integer' },
      properties: { a: { type: 'object', properties: { n: { type: 'integer', default: 1 } }, default: {} } },
    },
    {
      $id: 'https://cogmesh.test/members-required.json',
      type: 'object',
      required: ['b'],
      properties: { a: { type: 'object', properties: { n: { type: 'integer', default: 1 } }, default: {} }, b: { type: 'integer' } },
    },
  ];
  for (const schema of schemas) {
    const check = schemaChecker(schema, [], { standalone: null, members: ['a'] });
    for (const doc of [{ a: { n: 'x' }, extra: 'text' }, { a: {} }, { a: { n: 2 }, b: 3 }]) {
      const [x, y] = [structuredClone(doc), structuredClone(doc)];
      assert.deepEqual(check.members(x, ['a']), check(y), `${String(schema.$id)}: ${JSON.stringify(doc)}`);
      assert.deepEqual(x, y);
    }
  }
  // Where they are, the member alone: a problem at the root's level is not its business.
  const plain = schemaChecker(
    {
      $id: 'https://cogmesh.test/members-plain.json',
      type: 'object',
      properties: { a: { type: 'object', properties: { n: { type: 'integer' } } }, c: { type: 'integer' } },
    },
    [],
    { standalone: null, members: ['a'] },
  );
  assert.deepEqual(plain.members({ a: { n: 1 }, c: 'not checked' }, ['a']), []);
  assert.deepEqual(
    plain.members({ a: { n: 'x' } }, ['a']).map((i) => i.path),
    ['/a/n'],
  );
});
