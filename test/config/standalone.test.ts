import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeSchema } from '../../src/config/load.js';
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
