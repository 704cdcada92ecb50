import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import stableStringify from 'fast-json-stable-stringify';
import { ism2g4 } from '../../radio/channels.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import type { NodeConfig } from './types.js';

/**
 * Where the JSON Schema of a node's configuration lives: `config/` at the
 * repository (or package) root. This file runs from `src/config/` under tsx
 * and from `dist/src/config/` once built, so both depths are tried.
 */
export const schemaPath: string = locateSchema();

function locateSchema(): string {
  const candidates = ['../../config/node.schema.json', '../../../config/node.schema.json'].map((rel) =>
    fileURLToPath(new URL(rel, import.meta.url)),
  );
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

type Schema = { [k: string]: unknown };

/** The schema as parsed from schemaPath (read-only; it is the one source of defaults). */
export const nodeSchema: Readonly<Schema> = JSON.parse(readFileSync(schemaPath, 'utf8')) as Schema;

const ajv = new Ajv2020({ allErrors: true, verbose: true, useDefaults: true, discriminator: true, strict: true });
const validate = ajv.compile(nodeSchema);

/**
 * Validates `input` against the schema, fills in every default and checks
 * what the schema cannot say (cross-field rules, channels of the plan).
 * The input is never mutated. Throws ConfigError listing every problem.
 */
export function parseNodeConfig(input: unknown, source = 'configuration'): NodeConfig {
  let data: unknown;
  try {
    data = structuredClone(input);
  } catch {
    throw new ConfigError([{ path: '/', value: String(input), expected: 'plain JSON data (objects, arrays, strings, numbers, booleans)' }], source);
  }
  const issues = validate(data) ? [] : schemaIssues(validate.errors ?? []);
  const seen = new Set(issues.map((i) => i.path));
  for (const issue of semanticIssues(data)) if (!seen.has(issue.path)) issues.push(issue);
  if (issues.length > 0) throw new ConfigError(issues, source);
  return data as NodeConfig;
}

/** The configuration of node `id` with every other field at its default. */
export function defaultNodeConfig(id = 1): NodeConfig {
  return parseNodeConfig({ node: { id } }, 'default configuration');
}

/**
 * Reads and validates a JSON configuration file. A missing file, a JSON
 * syntax error (with its line and column) and every invalid field are all
 * reported as a ConfigError whose source is the file's path.
 */
export async function loadNodeConfig(path: string): Promise<NodeConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : `${code ?? 'unreadable'}: ${(e as Error).message}`;
    throw new ConfigError([{ path: '/', value: path, expected: `a readable configuration file (found ${why})` }], path);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const found = jsonSyntaxError(text) ?? { offset: 0, message: (e as Error).message };
    const { line, column } = lineColumn(text, found.offset);
    const excerpt = text.slice(found.offset).split(/\r?\n/, 1)[0]!.slice(0, 20);
    const value = excerpt !== '' ? excerpt : found.offset >= text.length ? '(end of file)' : '(end of line)';
    throw new ConfigError(
      [{ path: '/', value, expected: `valid JSON: ${found.message} at line ${line}, column ${column}` }],
      path,
    );
  }
  return parseNodeConfig(data, path);
}

/**
 * Applies `path=value` overrides (dotted paths, e.g. `sensing.durationMs=20`;
 * array items by index, e.g. `sim.band.pn.0.powerDbm=-40`) to a copy of `cfg`
 * and validates the result whole. A value is taken as JSON when it parses as
 * JSON, otherwise as a string. Unknown paths are refused; `cfg` is unchanged.
 */
export function applyOverrides(cfg: NodeConfig, overrides: readonly string[], source = 'overrides'): NodeConfig {
  const next = structuredClone(cfg) as unknown;
  const issues: ConfigIssue[] = [];
  for (const entry of overrides) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    const segments = key.split('.');
    const pointer = `/${segments.join('/')}`;
    if (eq <= 0 || segments.some((s) => s === '')) {
      issues.push({ path: pointer, value: entry, expected: 'an override of the form path=value, e.g. sensing.durationMs=20' });
      continue;
    }
    const raw = entry.slice(eq + 1);
    const value = parseOverrideValue(raw);
    let parent: unknown = next;
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      const here = `/${segments.slice(0, i + 1).join('/')}`;
      if (!hasChild(parent, seg)) {
        issues.push({ path: here, value, expected: noSuchChild(parent) });
        break;
      }
      if (i === segments.length - 1) (parent as Record<string, unknown>)[seg] = value;
      else parent = (parent as Record<string, unknown>)[seg];
    }
  }
  if (issues.length > 0) throw new ConfigError(issues, source);
  return parseNodeConfig(next, source);
}

/**
 * A stable version of a configuration: the first 16 hex digits of the
 * SHA-256 of its canonical JSON (keys sorted), so equal configurations have
 * equal versions whatever the order of their keys.
 */
export function configVersion(cfg: NodeConfig): string {
  return createHash('sha256').update(stableStringify(cfg)).digest('hex').slice(0, 16);
}

function parseOverrideValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
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

// ---------------------------------------------------------------------------
// Schema errors in plain words

function schemaIssues(errors: readonly ErrorObject[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  const add = (issue: ConfigIssue): void => {
    if (seen.has(issue.path)) return;
    seen.add(issue.path);
    issues.push(issue);
  };
  for (const e of errors) {
    const parent = (e.parentSchema ?? {}) as Schema;
    const at = e.instancePath;
    switch (e.keyword) {
      case 'required': {
        const name = (e.params as { missingProperty: string }).missingProperty;
        const child = childSchema(parent, name);
        add({ path: `${at}/${name}`, value: undefined, expected: `a value (required)${child ? `: ${describe(child)}` : ''}` });
        break;
      }
      case 'additionalProperties': {
        const name = (e.params as { additionalProperty: string }).additionalProperty;
        const allowed = Object.keys((parent.properties ?? {}) as Schema).join(', ');
        add({ path: `${at}/${escapePointer(name)}`, value: (e.data as Record<string, unknown>)[name], expected: `no such field (allowed: ${allowed})` });
        break;
      }
      case 'discriminator': {
        const p = e.params as { tag: string; tagValue: unknown };
        const kinds = discriminatorValues(parent);
        const missing = p.tagValue === undefined;
        add({ path: `${at}/${p.tag}`, value: p.tagValue, expected: `${missing ? 'a value (required): ' : ''}one of ${kinds}` });
        break;
      }
      default:
        add({ path: at === '' ? '/' : at, value: e.data, expected: describe(parent) || (e.message ?? 'a valid value') });
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
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return s;
  let node: unknown = nodeSchema;
  for (const seg of ref.slice(2).split('/')) node = (node as Schema)[seg];
  return node as Schema;
}

function discriminatorValues(s: Schema): string {
  const branches = (s.oneOf ?? []) as Schema[];
  const tag = (s.discriminator as { propertyName: string }).propertyName;
  return branches.map((b) => JSON.stringify(((b.properties as Record<string, Schema>)[tag] ?? {}).const)).join(', ');
}

/** What a schema accepts, in plain words: `an integer >= 1 and <= 10000`, `one of "auto", "cpu", "gpu"`. */
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
      return bounds.length > 0 ? `${noun} ${bounds.join(' and ')}` : noun;
    }
    case 'string': {
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      const noun = min > 0 ? 'a non-empty string' : 'a string';
      return typeof s.maxLength === 'number' ? `${noun} of at most ${s.maxLength} characters` : noun;
    }
    case 'boolean':
      return 'true or false';
    case 'array': {
      const items = s.items ? describe(s.items as Schema) : 'anything';
      const most = typeof s.maxItems === 'number' ? ` (at most ${s.maxItems})` : '';
      return `an array${most} of items each ${items}`;
    }
    case 'object': {
      const fields = Object.keys((s.properties ?? {}) as Schema);
      return fields.length > 0 ? `an object with fields ${fields.join(', ')}` : 'an object';
    }
    default:
      return '';
  }
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

// ---------------------------------------------------------------------------
// Rules the schema cannot express

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function get(root: unknown, ...keys: Array<string | number>): unknown {
  let v = root;
  for (const k of keys) {
    if (typeof k === 'number' ? !Array.isArray(v) : !isObject(v)) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/**
 * Cross-field checks, each guarded so that a document the schema refused is
 * checked as far as it can be; the caller drops any issue on a path the
 * schema already reported.
 */
function semanticIssues(cfg: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];

  const durationMs = get(cfg, 'sensing', 'durationMs');
  const periodMs = get(cfg, 'sensing', 'periodMs');
  if (isInt(durationMs) && isInt(periodMs) && durationMs > periodMs) {
    issues.push({ path: '/sensing/durationMs', value: durationMs, expected: `at most sensing.periodMs (${periodMs} ms): a sensing round must fit in its period` });
  }

  const count = get(cfg, 'channelPlan', 'channels');
  if (count !== 11 && count !== 13) return issues; // the schema has reported it; no plan to check channels against
  const plan = ism2g4(count);
  const inPlan = `a channel of the plan ism2g4 with ${count} channels (1..${count})`;
  const checkChannel = (path: string, v: unknown): void => {
    if (isInt(v) && !plan.has(v)) issues.push({ path, value: v, expected: inPlan });
  };

  const allowed = get(cfg, 'channelPlan', 'allowed');
  const usable = new Set<number>();
  if (Array.isArray(allowed)) {
    const firstAt = new Map<number, number>();
    allowed.forEach((c: unknown, i) => {
      const path = `/channelPlan/allowed/${i}`;
      checkChannel(path, c);
      if (!isInt(c)) return;
      const first = firstAt.get(c);
      if (first !== undefined) {
        issues.push({ path, value: c, expected: `a channel not listed already (it is at /channelPlan/allowed/${first})` });
      } else {
        firstAt.set(c, i);
        if (plan.has(c)) usable.add(c);
      }
    });
  }
  const restricted = Array.isArray(allowed) && allowed.length > 0;
  const usableCount = restricted ? usable.size : count;

  checkChannel('/radios/R3/channel', get(cfg, 'radios', 'R3', 'channel'));

  const initial = get(cfg, 'channel', 'initialChannel');
  if (isInt(initial) && initial !== 0) {
    if (!plan.has(initial)) {
      issues.push({ path: '/channel/initialChannel', value: initial, expected: `0 (let the first decision pick) or ${inPlan}` });
    } else if (restricted && !usable.has(initial)) {
      issues.push({ path: '/channel/initialChannel', value: initial, expected: `0 (let the first decision pick) or one of channelPlan.allowed (${[...usable].join(', ')})` });
    }
  }

  const perRound = get(cfg, 'sensing', 'channelsPerRound');
  if (isInt(perRound) && perRound > usableCount) {
    issues.push({ path: '/sensing/channelsPerRound', value: perRound, expected: `0 (every channel) or at most ${usableCount}, the number of usable channels` });
  }

  const checkPns = (base: string, pns: unknown): void => {
    if (!Array.isArray(pns)) return;
    pns.forEach((pn: unknown, i) => checkChannel(`${base}/${i}/channel`, get(pn, 'channel')));
  };
  checkPns('/sim/band/pn', get(cfg, 'sim', 'band', 'pn'));
  const phases = get(cfg, 'sim', 'band', 'phases');
  if (Array.isArray(phases)) phases.forEach((ph: unknown, i) => checkPns(`/sim/band/phases/${i}/pn`, get(ph, 'pn')));

  return issues;
}

// ---------------------------------------------------------------------------
// JSON syntax errors with a position (JSON.parse's message has none on Node 20)

interface SyntaxProblem {
  offset: number;
  message: string;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * Finds the first JSON syntax error in `text` (RFC 8259), iteratively so that
 * deep nesting cannot overflow the stack. Returns undefined for valid JSON.
 */
function jsonSyntaxError(text: string): SyntaxProblem | undefined {
  const n = text.length;
  let i = 0;
  const stack: Array<'{' | '['> = [];
  const fail = (message: string, at = i): SyntaxProblem => ({ offset: at, message });
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const str = (): SyntaxProblem | undefined => {
    const start = i;
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('a control character (such as a line break) inside a string');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('an invalid \\u escape in a string');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
          i += 2;
        } else {
          return fail('an invalid escape in a string');
        }
      } else {
        i++;
      }
    }
    return fail('a string that is never closed', start);
  };
  const scalar = (): SyntaxProblem | undefined => {
    const c = text[i];
    if (c === '"') return str();
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return undefined;
      }
    }
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (c !== undefined && /[-0-9]/.test(c) && m) {
      i += m[0].length;
      return undefined;
    }
    return fail(c === undefined ? 'unexpected end of input' : `unexpected ${JSON.stringify(c)} where a value was expected`);
  };

  // Each turn parses one value (opening a container counts as its start), then the punctuation after it.
  ws();
  for (;;) {
    if (i >= n) return fail('unexpected end of input');
    const c = text[i];
    let closedEmpty = false;
    if (c === '{' || c === '[') {
      i++;
      ws();
      const close = c === '{' ? '}' : ']';
      if (text[i] === close) {
        i++;
        closedEmpty = true;
      } else {
        stack.push(c);
        if (c === '{') {
          const p = key();
          if (p) return p;
        }
        continue;
      }
    }
    if (!closedEmpty) {
      const p = scalar();
      if (p) return p;
    }
    // After a complete value: close containers or move to the next item.
    for (;;) {
      ws();
      const top = stack[stack.length - 1];
      if (top === undefined) return i < n ? fail('unexpected text after the end of the JSON document') : undefined;
      const close = top === '{' ? '}' : ']';
      if (text[i] === ',') {
        i++;
        ws();
        if (top === '{') {
          const p = key();
          if (p) return p;
        }
        break;
      }
      if (text[i] === close) {
        i++;
        stack.pop();
        continue;
      }
      return fail(i >= n ? 'unexpected end of input' : `expected ',' or '${close}' but found ${JSON.stringify(text[i])}`);
    }
    ws();
  }

  function key(): SyntaxProblem | undefined {
    if (text[i] !== '"') return fail(i >= n ? 'unexpected end of input' : `expected a field name in double quotes but found ${JSON.stringify(text[i])}`);
    const p = str();
    if (p) return p;
    ws();
    if (text[i] !== ':') return fail(i >= n ? 'unexpected end of input' : `expected ':' after the field name but found ${JSON.stringify(text[i])}`);
    i++;
    ws();
    return undefined;
  }
}
