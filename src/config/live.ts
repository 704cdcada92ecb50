import stableStringify from 'fast-json-stable-stringify';
import type { ConfigIssue } from '../core/errors.js';
import { valueAt, type Schema } from '../core/schema.js';
import { configVersion, nodeSchema, parseNodeConfig } from './load.js';
import type { NodeConfig } from './types.js';

/**
 * What a running router may change, and what it never shows, as the schema
 * marks them: a field (or a whole section) with `"x-live": true` changes
 * while the router runs, any other only at restart; a field with
 * `"x-secret": true` never leaves the router.
 */

/** The dotted paths of the properties whose schema carries `mark` (a section's path covers its fields). */
export function markedFields(schema: Readonly<Schema>, mark: string, at = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.entries(props).flatMap(([name, child]) => {
    const path = at === '' ? name : `${at}.${name}`;
    return child[mark] === true ? [path] : markedFields(child, mark, path);
  });
}

/** The configuration fields a running router takes live (dotted paths; a section's path covers its fields). */
export const LIVE_FIELDS: readonly string[] = Object.freeze(markedFields(nodeSchema, 'x-live'));

/** Fields whose values never leave the router (the server's CURVE secret, the monitor's token). */
export const SECRET_FIELDS: readonly string[] = Object.freeze(markedFields(nodeSchema, 'x-secret'));

/** What a secret reads as outside the router (when it is set). */
export const REDACTED = '(redacted)';

/** The dotted paths of the leaves where `a` and `b` differ (arrays compare whole). */
export function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPaths(a[k], b[k], at === '' ? k : `${at}.${k}`));
  }
  return stableStringify(a) === stableStringify(b) ? [] : [at];
}

/** Whether a dotted path is live (it or a section holding it is marked). */
export function isLive(path: string): boolean {
  return LIVE_FIELDS.some((f) => path === f || path.startsWith(`${f}.`));
}

/** The configuration with its secrets blanked out (those that are set). */
export function redactConfig(cfg: NodeConfig): NodeConfig {
  const out = structuredClone(cfg);
  for (const path of SECRET_FIELDS) {
    const segs = path.split('.');
    const parent = valueAt(out, segs.slice(0, -1));
    const leaf = segs[segs.length - 1]!;
    if (parent.ok && typeof parent.value === 'object' && parent.value !== null) {
      const o = parent.value as Record<string, unknown>;
      if (o[leaf] !== '') o[leaf] = REDACTED;
    }
  }
  return out;
}

/**
 * One issue for every changed field that a running router cannot take. A
 * secret field's values are not shown: an issue must not tell a client what
 * `get` would not.
 */
export function restartOnlyIssues(prev: NodeConfig, next: NodeConfig): ConfigIssue[] {
  const at = (root: unknown, path: string): unknown => {
    const r = valueAt(root, path.split('.'));
    return r.ok ? r.value : undefined;
  };
  const shown = (path: string, v: unknown): unknown => (SECRET_FIELDS.includes(path) && v !== '' ? REDACTED : v);
  return changedPaths(prev, next)
    .filter((p) => !isLive(p))
    .map((p) => ({
      path: `/${p.replaceAll('.', '/')}`,
      value: shown(p, at(next, p)),
      expected: `${JSON.stringify(shown(p, at(prev, p))) ?? 'undefined'} (a running router takes this field only at restart)`,
    }));
}

/** A new configuration checked once against the running one: what a router's `reconfigure` takes. */
export interface LiveChange {
  /** The version of the configuration it was checked against. */
  from: string;
  /** The new configuration, valid and with every default filled in. */
  checked: NodeConfig;
  /** Dotted paths of the fields that change (empty: nothing to do). */
  changed: string[];
  /** Changed fields a running router takes only at restart (empty: it can be applied live). */
  restartOnly: ConfigIssue[];
}

/**
 * Checks `next` (the schema and the loader's rules: ConfigError naming every
 * field otherwise) and says what it changes against `prev`, and which of
 * those changes need a restart.
 */
export function liveChange(prev: NodeConfig, next: unknown, source = 'set'): LiveChange {
  const checked = parseNodeConfig(next, source);
  return { from: configVersion(prev), checked, changed: changedPaths(prev, checked), restartOnly: restartOnlyIssues(prev, checked) };
}
