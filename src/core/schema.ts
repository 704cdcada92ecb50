import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type * as AjvModule from 'ajv/dist/2020.js';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { ConfigError, type ConfigIssue } from './errors.js';
import { jsonSyntaxError, syntaxErrorExcerpt } from './json.js';

/**
 * What every JSON document cogmesh reads (node configurations, simulation
 * scenarios) shares: validation against a JSON Schema that is the one source
 * of defaults, problems told in plain words with the path of the field,
 * `path=value` overrides, and JSON syntax errors with a line and column.
 */

export type Schema = { [k: string]: unknown };

/**
 * Keywords cogmesh adds to its schemas: `x-live` (a field a running router
 * takes), `x-secret` (a field never shown), `x-form` (what a `pattern`
 * accepts, in words, for the problem that refuses a value).
 */
export const SCHEMA_ANNOTATIONS = ['x-live', 'x-secret', 'x-form'] as const;

/** What the value of a field marked `x-secret` reads as wherever it would be shown (when it is set). */
export const REDACTED = '(redacted)';

/** A secret's value as a problem may show it: an empty (unset) one as it is, any other withheld. */
export function withheld(v: unknown): unknown {
  return v === '' || v === undefined ? v : REDACTED;
}

/** How every validator is compiled, at run time or ahead of it (standalone). */
const AJV_OPTIONS: Options = { allErrors: true, verbose: true, useDefaults: true, discriminator: true, strict: true };

// Ajv is loaded only when a schema is compiled: a built package carries its validators compiled ahead of time.
const requireCjs = createRequire(import.meta.url);

function newAjv(extra: Options = {}): Ajv2020 {
  const { Ajv2020 } = requireCjs('ajv/dist/2020.js') as typeof AjvModule;
  const ajv = new Ajv2020({ ...AJV_OPTIONS, ...extra });
  // cogmesh's annotations: they mark fields for the code that reads the schema, and validate nothing.
  ajv.addVocabulary([...SCHEMA_ANNOTATIONS]);
  return ajv;
}

/**
 * The one validator compiler of the process: a schema that several others
 * name by `$id` (the node schema, inside every scenario) is compiled once.
 */
let shared: Ajv2020 | undefined;
function sharedAjv(): Ajv2020 {
  shared ??= newAjv();
  return shared;
}

/** Adds a schema with an `$id` to a compiler, once: `$ref`s to it resolve to that one compiled schema. */
function register(ajv: Ajv2020, s: Schema): void {
  if (typeof s.$id === 'string' && ajv.getSchema(s.$id) === undefined) ajv.addSchema(s);
}

/** `s` compiled, once per compiler for a schema with an `$id`. */
function compiled(ajv: Ajv2020, s: Schema): ValidateFunction {
  if (typeof s.$id !== 'string') return ajv.compile(s);
  register(ajv, s);
  return ajv.getSchema(s.$id)!;
}

/**
 * What a schema checker validates: a root and the schemas its `$ref`s name.
 * Its digest (of their text) names its validator in the standalone module,
 * so a validator compiled from other schemas than the ones loaded (a build
 * older than an edit of a schema) is never used.
 */
interface CheckedSchemas {
  root: Schema;
  refs: readonly Schema[];
  /** The root's members that are also checked on their own (SchemaChecker.members): their validators are compiled ahead of time as well. */
  members?: readonly string[];
}

function schemasDigest({ root, refs }: CheckedSchemas): string {
  return createHash('sha256')
    .update(JSON.stringify([root, ...refs]))
    .digest('hex');
}

/** Validators compiled ahead of time (`standaloneValidators`), by the digest of their schemas. */
export type StandaloneValidators = Readonly<Record<string, ValidateFunction | undefined>>;

/** Where the build writes the standalone validators: next to this module. */
export const standaloneValidatorsPath: string = fileURLToPath(new URL('./schema-validators.cjs', import.meta.url));

/**
 * Where the build writes V8's code cache of the standalone validators. Their
 * code is large (every check spelled out, for every field), and compiling it
 * took more time than running it; the cache holds it compiled. A Node.js
 * other than the build's refuses the cache, and the code is compiled as usual.
 */
export const standaloneCodeCachePath: string = `${standaloneValidatorsPath}.v8cache`;

/** Runs the standalone validators' code (CommonJS, from `standaloneValidators`) as a module at `filename`. */
export function evaluateStandaloneValidators(code: string, filename: string, cachedData?: Uint8Array): { validators: StandaloneValidators; script: Script } {
  const script = new Script(`(function (exports, require, module) {${code}\n})`, { filename, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {} as StandaloneValidators };
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown) => void;
  run(module.exports, createRequire(filename), module);
  return { validators: module.exports, script };
}

/**
 * Where the build writes the standalone validators of the members some
 * checkers also check on their own (`SchemaChecker.members`), and their code
 * cache: a module apart, loaded the first time such a check runs, so that
 * a command that never makes one (all but a router taking live sets) never
 * reads it.
 */
export const memberValidatorsPath: string = fileURLToPath(new URL('./schema-validators-members.cjs', import.meta.url));
export const memberCodeCachePath: string = `${memberValidatorsPath}.v8cache`;

/** A module of standalone validators the build wrote, loaded when first asked for. */
class BuiltValidators {
  private built: { validators: StandaloneValidators; script: Script } | null | undefined;

  constructor(
    readonly path: string,
    readonly cachePath: string,
  ) {}

  /** Its validators, or null where there are none (running from sources). */
  load(): StandaloneValidators | null {
    if (this.built === undefined) {
      if (existsSync(this.path)) {
        const code = readFileSync(this.path, 'utf8');
        const cache = existsSync(this.cachePath) ? new Uint8Array(readFileSync(this.cachePath)) : undefined;
        this.built = evaluateStandaloneValidators(code, this.path, cache);
      } else {
        this.built = null;
      }
    }
    return this.built?.validators ?? null;
  }

  /** Writes the module (and drops its old code cache); returns what writes the cache of what has run of it since. */
  write(code: string): () => void {
    writeFileSync(this.path, code);
    rmSync(this.cachePath, { force: true });
    this.built = undefined;
    return () => {
      if (this.load() === null) throw new Error(`no standalone validators at ${this.path}`);
      const cache = this.built!.script.createCachedData();
      writeFileSync(this.cachePath, new Uint8Array(cache.buffer, cache.byteOffset, cache.byteLength));
    };
  }
}

const builtRoots = new BuiltValidators(standaloneValidatorsPath, standaloneCodeCachePath);
const builtMembers = new BuiltValidators(memberValidatorsPath, memberCodeCachePath);

/**
 * For the build: writes the standalone validators (the roots', and the
 * members' apart), and returns a function that writes their code caches
 * once they have been run (V8 caches the functions compiled so far, so the
 * build runs them on typical documents first). A checker that has not
 * checked anything yet takes these validators.
 */
export function writeStandaloneValidators(): () => void {
  const roots = builtRoots.write(standaloneValidators());
  const members = builtMembers.write(standaloneValidators(declared, 'members'));
  return () => {
    roots();
    members();
  };
}

/** Every schema a checker was made for, so that the build can compile them all ahead of time. */
const declared: CheckedSchemas[] = [];

/**
 * A CommonJS module whose exports are the validators of every schema
 * checker made so far (`schemaChecker`), or of `only`, compiled ahead of time
 * by Ajv's standalone code: it needs no schema compiler at run time. With
 * `part` 'members': the validators of the members they check on their own
 * instead (`opts.members`).
 */
export function standaloneValidators(only: readonly CheckedSchemas[] = declared, part: 'roots' | 'members' = 'roots'): string {
  const { default: toCode } = requireCjs('ajv/dist/standalone/index.js') as {
    default: (ajv: Ajv2020, exports: Record<string, string>) => string;
  };
  const ajv = newAjv({ code: { source: true } });
  const exports: Record<string, string> = {};
  const digestOf = new Map<string, string>();
  for (const c of only) {
    const id = c.root.$id;
    if (typeof id !== 'string') throw new Error('a schema compiled ahead of time needs an $id');
    const digest = schemasDigest(c);
    // One compiler holds one schema per $id: two versions of a schema cannot both be compiled ahead of time.
    if ((digestOf.get(id) ?? digest) !== digest) throw new Error(`two different schemas with the $id ${id}`);
    digestOf.set(id, digest);
    for (const r of c.refs) register(ajv, r);
    register(ajv, c.root);
    if (part === 'roots') exports[digest] = id;
    else for (const name of c.members ?? []) exports[memberKey(digest, name)] = registerMember(ajv, c.root, id, name);
  }
  return `${toCode(ajv, exports)}\n`;
}

/** Where a checker's validator came from: compiled ahead of time, or compiled when first needed. */
export type ValidatorSource = 'standalone' | 'compiled';

/** A schema checker: the problems found in a document, whose defaults it fills in. */
export interface SchemaChecker {
  (data: unknown): ConfigIssue[];
  /**
   * What the checker finds in `data`, a document that differs from one it
   * passed (defaults filled in) only in the root's members named in
   * `members`: those are checked, each against its schema, and the rest
   * is known good. Where the root's own rules might be at stake (a member
   * missing, or one the root does not list), the whole document is checked.
   */
  members(data: unknown, members: readonly string[]): ConfigIssue[];
  /** Where its validator came from; undefined before the first check. */
  readonly source: ValidatorSource | undefined;
}

/**
 * A checker of `root` (with the schemas its `$ref`s name, by `$id`): it
 * fills defaults into the document it is given and returns every problem
 * found. Its validator comes from `standalone` (by default the build's;
 * null: compile it) when that holds one for these very schemas, and is
 * otherwise compiled on the first check, not before: a command that reads
 * no document pays nothing for it. `opts.members`: root members (of its
 * `properties`) that `members` checks on their own, whose validators the
 * build compiles ahead of time too; a change elsewhere is checked whole.
 */
export function schemaChecker(
  root: Schema,
  refs: readonly Schema[] = [],
  opts: { standalone?: StandaloneValidators | null; members?: readonly string[] } = {},
): SchemaChecker {
  declared.push({ root, refs, members: opts.members });
  let v: ValidateFunction | undefined;
  let source: ValidatorSource | undefined;
  let digest: string | undefined;
  /** The name of these schemas' validators in a standalone module, hashed once. */
  const digestOnce = (): string => (digest ??= schemasDigest({ root, refs }));
  const validator = (): ValidateFunction => {
    if (v) return v;
    const ahead = opts.standalone === undefined ? builtRoots.load() : opts.standalone;
    v = ahead?.[digestOnce()];
    if (v) {
      source = 'standalone';
      return v;
    }
    const ajv = sharedAjv();
    for (const r of refs) register(ajv, r);
    v = compiled(ajv, root);
    source = 'compiled';
    return v;
  };

  const memberValidators = new Map<string, ValidateFunction | null>();
  /** The validator of the root's member `name`, made once; null when there is none to make (the root has no $id). */
  const memberValidator = (name: string): ValidateFunction | null => {
    let m = memberValidators.get(name);
    if (m !== undefined) return m;
    const ahead = opts.standalone === undefined ? builtMembers.load() : opts.standalone;
    m = ahead?.[memberKey(digestOnce(), name)] ?? null;
    if (m === null && typeof root.$id === 'string') {
      const ajv = sharedAjv();
      for (const r of refs) register(ajv, r);
      register(ajv, root);
      m = ajv.getSchema(registerMember(ajv, root, root.$id, name)) ?? null;
    }
    memberValidators.set(name, m);
    return m;
  };
  /** The root's own rules, the one part of a document a member check leaves out, as the whole check would see them: only an object with listed members is left to them. */
  const listed = new Set(memberNames(root));
  const onTheirOwn = new Set((opts.members ?? []).filter((n) => listed.has(n)));
  const rootRulesKnown =
    Object.keys(root).every((k) => ROOT_RULES_BY_MEMBERS.has(k)) &&
    root.type === 'object' &&
    (root.additionalProperties === undefined || typeof root.additionalProperties === 'boolean');

  function checkMembers(data: unknown, members: readonly string[]): ConfigIssue[] {
    if (!rootRulesKnown || !isObject(data) || members.some((n) => !onTheirOwn.has(n) || data[n] === undefined)) return check(data);
    if (root.additionalProperties === false) for (const k in data) if (Object.hasOwn(data, k) && !listed.has(k)) return check(data);
    const issues: ConfigIssue[] = [];
    for (const name of new Set(members)) {
      const m = memberValidator(name);
      if (m === null) return check(data);
      if (!m(data[name])) issues.push(...schemaIssues(m.errors ?? [], `/${escapePointer(name)}`));
    }
    return issues;
  }

  function schemaIssues(errors: readonly ErrorObject[], prefix = ''): ConfigIssue[] {
    const issues: ConfigIssue[] = [];
    const seen = new Set<string>();
    const add = (issue: ConfigIssue): void => {
      if (seen.has(issue.path)) return;
      seen.add(issue.path);
      issues.push(issue);
    };
    for (const e of errors) {
      const parent = (e.parentSchema ?? {}) as Schema;
      const at = prefix + e.instancePath;
      switch (e.keyword) {
        case 'required': {
          const name = (e.params as { missingProperty: string }).missingProperty;
          const child = childSchema(parent, name);
          add({ path: `${at}/${name}`, value: undefined, expected: `a value (required)${child ? `: ${describe(child)}` : ''}` });
          break;
        }
        case 'additionalProperties': {
          const name = (e.params as { additionalProperty: string }).additionalProperty;
          const props = (parent.properties ?? {}) as Record<string, Schema>;
          const allowed = Object.keys(props).join(', ');
          // Beside a secret, an unknown field may be that secret under a misspelt name: its value is not shown.
          const nearSecret = Object.values(props).some((p) => p['x-secret'] === true);
          const value = (e.data as Record<string, unknown>)[name];
          add({ path: `${at}/${escapePointer(name)}`, value: nearSecret ? withheld(value) : value, expected: `no such field (allowed: ${allowed})` });
          break;
        }
        case 'discriminator': {
          const p = e.params as { tag: string; tagValue: unknown };
          const kinds = discriminatorValues(parent);
          const missing = p.tagValue === undefined;
          add({ path: `${at}/${p.tag}`, value: p.tagValue, expected: `${missing ? 'a value (required): ' : ''}one of ${kinds}` });
          break;
        }
        case 'propertyNames':
          // Its subschema's own error (below, with `propertyName`) says what a name must be.
          break;
        default:
          if (e.propertyName !== undefined) {
            add({
              path: `${at}/${escapePointer(e.propertyName)}`,
              value: e.propertyName,
              expected: `a field name that is ${describe(parent) || 'valid here'}`,
            });
            break;
          }
          add({
            path: at === '' ? '/' : at,
            value: parent['x-secret'] === true ? withheld(e.data) : e.data,
            expected: describe(parent) || (e.message ?? 'a valid value'),
          });
      }
    }
    return issues;
  }

  function childSchema(parent: Schema, name: string): Schema | undefined {
    const props = parent.properties as Record<string, Schema> | undefined;
    const child = props?.[name];
    return child ? resolve(child) : undefined;
  }

  function resolve(s: Schema): Schema {
    const ref = s.$ref;
    if (typeof ref !== 'string') return s;
    const hash = ref.indexOf('#');
    const file = hash < 0 ? ref : ref.slice(0, hash);
    const base = file === '' ? root : [root, ...refs].find((r) => typeof r.$id === 'string' && r.$id.endsWith(`/${file}`));
    if (!base || hash < 0 || !ref.startsWith('#/', hash)) return s;
    let node: unknown = base;
    for (const seg of ref.slice(hash + 2).split('/')) node = (node as Schema)[seg];
    return resolve(node as Schema);
  }

  function discriminatorValues(s: Schema): string {
    const branches = (s.oneOf ?? []) as Schema[];
    const tag = (s.discriminator as { propertyName: string }).propertyName;
    return branches.map((b) => JSON.stringify(((b.properties as Record<string, Schema>)[tag] ?? {}).const)).join(', ');
  }

  /**
   * What a schema accepts, in plain words, from every keyword that can
   * refuse a value: `an integer >= 1 and <= 10000`, `one of "auto", "cpu"`,
   * `a string of 1 to 15 characters`, the `x-form` of a pattern.
   */
  function describe(raw: Schema): string {
    const s = resolve(raw);
    if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.discriminator) return `an object whose "kind" is one of ${discriminatorValues(s)}`;
    switch (s.type) {
      case 'integer':
      case 'number': {
        const bounds: string[] = [];
        if (typeof s.minimum === 'number') bounds.push(`>= ${s.minimum}`);
        if (typeof s.exclusiveMinimum === 'number') bounds.push(`> ${s.exclusiveMinimum}`);
        if (typeof s.maximum === 'number') bounds.push(`<= ${s.maximum}`);
        if (typeof s.exclusiveMaximum === 'number') bounds.push(`< ${s.exclusiveMaximum}`);
        const noun = s.type === 'integer' ? 'an integer' : 'a number';
        const multiple = typeof s.multipleOf === 'number' ? `, a multiple of ${s.multipleOf}` : '';
        return `${bounds.length > 0 ? `${noun} ${bounds.join(' and ')}` : noun}${multiple}`;
      }
      case 'string':
        return describeString(s);
      case 'boolean':
        return 'true or false';
      case 'array': {
        const items = s.items ? describe(s.items as Schema) : 'anything';
        const count = countWords(s.minItems, s.maxItems, 'item');
        const unique = s.uniqueItems === true ? ', no item twice' : '';
        return `an array of ${count || 'items'}, each ${items}${unique}`;
      }
      case 'object': {
        const fields = Object.keys((s.properties ?? {}) as Schema);
        return fields.length > 0 ? `an object with fields ${fields.join(', ')}` : 'an object';
      }
      default:
        // A schema without a type (a propertyNames) may still hold a string's keywords.
        return typeof s.pattern === 'string' || typeof s.minLength === 'number' || typeof s.maxLength === 'number' ? describeString(s) : '';
    }
  }

  /**
   * A string's form: its pattern told by the schema's `x-form` (a regular
   * expression is no way to tell a person what to write; one without
   * `x-form` is shown as it is) and its length.
   */
  function describeString(s: Schema): string {
    const length = countWords(s.minLength, s.maxLength, 'character');
    const form = typeof s['x-form'] === 'string' ? s['x-form'] : typeof s.pattern === 'string' ? `a string matching /${s.pattern}/` : undefined;
    if (form !== undefined) return length ? `${form} (${length})` : form;
    if (s.minLength === 1) return typeof s.maxLength === 'number' ? `a non-empty string of at most ${s.maxLength} characters` : 'a non-empty string';
    return length ? `a string of ${length}` : 'a string';
  }

  /** `1 to 15 characters`, `at least 2 items`, `at most 256 characters`, or '' without bounds. */
  function countWords(min: unknown, max: unknown, unit: string): string {
    const lo = typeof min === 'number' && min > 0 ? min : undefined;
    const hi = typeof max === 'number' ? max : undefined;
    const units = (n: number): string => `${n} ${unit}${n === 1 ? '' : 's'}`;
    if (lo !== undefined && hi !== undefined) return lo === hi ? `exactly ${units(lo)}` : `${lo} to ${units(hi)}`;
    if (lo !== undefined) return `at least ${units(lo)}`;
    if (hi !== undefined) return `at most ${units(hi)}`;
    return '';
  }

  const check = (data: unknown): ConfigIssue[] => {
    const validate = validator();
    return validate(data) ? [] : schemaIssues(validate.errors ?? []);
  };
  return Object.defineProperty(Object.assign(check, { members: checkMembers }), 'source', { get: () => source, enumerable: true }) as SchemaChecker;
}

/**
 * The keywords of a root schema that a check of some of its members can
 * leave out for a document that passed before: annotations, and the rules
 * `members` checks itself (an object; with `additionalProperties` false, no
 * member it does not list; a schema there for unlisted members is not one).
 */
const ROOT_RULES_BY_MEMBERS = new Set(['$schema', '$id', 'title', 'description', 'type', 'additionalProperties', 'properties', '$defs', ...SCHEMA_ANNOTATIONS]);

/** The members a root schema lists (`properties`). */
function memberNames(root: Schema): string[] {
  return Object.keys((root.properties ?? {}) as Schema);
}

/** The standalone export of the validator of a root's member, beside the root's own (its digest). */
function memberKey(digest: string, name: string): string {
  return `${digest}/${name}`;
}

/**
 * A schema of a root's member on its own, registered with `ajv` under an $id
 * of its own; returns that $id. It is the member's schema with the
 * references into the root (`#/$defs/...`) made absolute, and without the
 * member's `default` (the root's business: strict mode refuses a default at
 * a root, and a reference to the member would compile it as one).
 */
function registerMember(ajv: Ajv2020, root: Schema, rootId: string, name: string): string {
  const id = `${rootId.replace(/#.*$/, '')}.member.${encodeURIComponent(name)}`;
  const { default: _ignored, ...member } = ((root.properties ?? {}) as Record<string, Schema>)[name]!;
  register(ajv, { ...(rebased(member, rootId) as Schema), $id: id });
  return id;
}

/** A schema whose `$ref`s within its root document (`#...`) point into the document `rootId` instead. */
function rebased(v: unknown, rootId: string): unknown {
  if (Array.isArray(v)) return v.map((x) => rebased(x, rootId));
  if (!isObject(v)) return v;
  const out: Schema = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === '$ref' && typeof x === 'string' && x.startsWith('#') ? `${rootId}${x}` : rebased(x, rootId);
  return out;
}

/** A name as one step of a JSON pointer (RFC 6901). */
function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The dotted paths of the properties whose schema carries `mark` (a section's path covers its fields). */
export function markedFields(schema: Readonly<Schema>, mark: string, at = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.entries(props).flatMap(([name, child]) => {
    const path = at === '' ? name : `${at}.${name}`;
    return child[mark] === true ? [path] : markedFields(child, mark, path);
  });
}

/**
 * A deep copy of plain JSON data, or a ConfigError when it is not plain data
 * (a function, a symbol) or nests too deep to copy. The problem names the
 * value's kind only: String() of an array thousands deep would itself
 * overflow the stack, and the document's text may hold a secret.
 */
export function cloneJson(input: unknown, source: string): unknown {
  try {
    return structuredClone(input);
  } catch {
    const kind = Array.isArray(input) ? 'an array' : typeof input === 'object' && input !== null ? 'an object' : typeof input;
    throw new ConfigError(
      [{ path: '/', value: kind, expected: 'plain JSON data (objects, arrays, strings, numbers, booleans) nested at most a few thousand levels deep' }],
      source,
    );
  }
}

/**
 * A deep copy of a document that is plain JSON data already (a checked
 * configuration): objects, arrays and primitives are copied as they are,
 * several times faster than structuredClone on a document of a few kB.
 * Anything else (a Date, a Map) is not copied faithfully: use cloneJson.
 */
export function copyJson<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const a: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) a[i] = copyJson(v[i] as unknown);
    return a as T;
  }
  const o: Record<string, unknown> = {};
  for (const k of Object.keys(v)) o[k] = copyJson((v as Record<string, unknown>)[k]);
  return o as T;
}

/**
 * Reads a JSON file. A missing file and a syntax error (with its line and
 * column) are reported as a ConfigError whose source is the file's path.
 */
export async function readJsonFile(path: string, what = 'configuration file'): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : `${code ?? 'unreadable'}: ${(e as Error).message}`;
    throw new ConfigError([{ path: '/', value: path, expected: `a readable ${what} (found ${why})` }], path);
  }
  return parseJsonFileText(text, path);
}

/**
 * The text of a JSON file as a value (a leading byte-order mark skipped),
 * or a ConfigError whose source is `path` saying where the syntax error is.
 * What readJsonFile does once it has the text; the fuzzer calls it directly.
 */
export function parseJsonFileText(text: string, path: string): unknown {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    // JSON.parse's own message quotes the text around the error: only the scanner's is used.
    const found = jsonSyntaxError(text) ?? { offset: 0, line: 1, column: 1, message: `not JSON (${(e as Error).name})`, inString: true };
    const value = syntaxErrorExcerpt(text, found);
    throw new ConfigError([{ path: '/', value, expected: `valid JSON: ${found.message} at line ${found.line}, column ${found.column}` }], path);
  }
}

/**
 * Applies `path=value` overrides (dotted paths, e.g. `sensing.durationMs=20`;
 * array items by index, e.g. `sim.band.pn.0.powerDbm=-40`) to a copy of
 * `doc`. A value is taken as JSON when it parses as JSON, otherwise as a
 * string. Unknown paths are problems, unless `create` is set (for documents
 * whose schema check comes next and names unknown fields itself); `doc`
 * itself is never changed.
 */
export function overridePaths(doc: unknown, overrides: readonly string[], opts: { create?: boolean } = {}): { doc: unknown; issues: ConfigIssue[] } {
  const next = structuredClone(doc) as unknown;
  const issues: ConfigIssue[] = [];
  for (const entry of overrides) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    if (eq <= 0 || key.split('.').some((s) => s === '')) {
      issues.push({ path: `/${key.split('.').join('/')}`, value: entry, expected: 'an override of the form path=value, e.g. sensing.durationMs=20' });
      continue;
    }
    setPath(next, key.split('.'), parseOverrideValue(entry.slice(eq + 1)), opts, issues);
  }
  return { doc: next, issues };
}

/**
 * Sets each dotted path to its value, in a copy of `doc` (plain JSON data:
 * copyJson): the same rules as `overridePaths`, for values that are already
 * values (the control API's `set`), so nothing goes through text and back.
 * `opts.shareOthers`: only the top-level members the paths name are copied
 * (and the root); the others are `doc`'s own objects, for a caller that
 * changes nothing in them and never changes `doc` (a live set: the running
 * configuration, checked again only in the sections it names).
 */
export function setPaths(
  doc: unknown,
  entries: ReadonlyArray<readonly [path: string, value: unknown]>,
  opts: { create?: boolean; shareOthers?: boolean } = {},
): { doc: unknown; issues: ConfigIssue[] } {
  const next = opts.shareOthers && isObject(doc) ? copyNamed(doc, entries) : copyJson(doc);
  const issues: ConfigIssue[] = [];
  for (const [path, value] of entries) {
    const segments = path.split('.');
    if (segments.some((s) => s === '')) issues.push({ path: `/${segments.join('/')}`, value, expected: 'a dotted path, e.g. sensing.durationMs' });
    else setPath(next, segments, value, opts, issues);
  }
  return { doc: next, issues };
}

/** `doc` with the top-level members the paths name copied (copyJson), the others shared. */
function copyNamed(doc: Record<string, unknown>, entries: ReadonlyArray<readonly [path: string, value: unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(doc)) out[k] = doc[k];
  for (const [path] of entries) {
    const k = path.split('.', 1)[0]!;
    if (Object.hasOwn(doc, k) && out[k] === doc[k]) out[k] = copyJson(doc[k]);
  }
  return out;
}

function setPath(root: unknown, segments: readonly string[], value: unknown, opts: { create?: boolean }, issues: ConfigIssue[]): void {
  let parent: unknown = root;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (!hasChild(parent, seg)) {
      // Creating a field is left to the schema check that follows, which names unknown ones.
      if (opts.create && isObject(parent)) {
        if (i < segments.length - 1) parent[seg] = {};
      } else {
        issues.push({ path: `/${segments.slice(0, i + 1).join('/')}`, value, expected: noSuchChild(parent) });
        return;
      }
    }
    if (i === segments.length - 1) (parent as Record<string, unknown>)[seg] = value;
    else parent = (parent as Record<string, unknown>)[seg];
  }
}

/**
 * The value at a path of a JSON document (array items by index), or where
 * the path leaves the document (`at`, a pointer) and what is there instead.
 */
export function valueAt(doc: unknown, segments: readonly string[]): { ok: true; value: unknown } | { ok: false; at: string; expected: string } {
  let v = doc;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (!hasChild(v, seg)) return { ok: false, at: `/${segments.slice(0, i + 1).join('/')}`, expected: noSuchChild(v) };
    v = (v as Record<string, unknown>)[seg];
  }
  return { ok: true, value: v };
}

/**
 * The value at `segments` of `doc`, found as `valueAt` finds it, or undefined
 * where the path leaves the document: nothing is built on the way, a miss
 * included (the configuration's cross-field rules ask for many absent
 * fields, on every live set).
 */
export function valueOrUndefined(doc: unknown, segments: readonly string[]): unknown {
  let v = doc;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (!hasChild(v, seg)) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}

function parseOverrideValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasChild(parent: unknown, seg: string): boolean {
  if (Array.isArray(parent)) return /^(0|[1-9]\d*)$/.test(seg) && Number(seg) < parent.length;
  return isObject(parent) && Object.hasOwn(parent, seg);
}

function noSuchChild(parent: unknown): string {
  if (Array.isArray(parent)) return `an index of an existing item (0..${parent.length - 1})`;
  if (isObject(parent)) return `no such field (allowed: ${Object.keys(parent).join(', ')})`;
  return 'no such field (its parent is not an object)';
}
