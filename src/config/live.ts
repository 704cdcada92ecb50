import type { ConfigIssue } from '../core/errors.js';
import { valueAt, withheld } from '../core/schema.js';
import { checkNodeConfigInPlace, configVersion, LIVE_FIELDS, parseNodeConfig, SECRET_FIELDS } from './load.js';
import { REDACTED, redactFields } from './secrets.js';
import type { NodeConfig } from './types.js';

/**
 * What a running router may change, and what it never shows, as the schema
 * marks them: a field (or a whole section) with `"x-live": true` changes
 * while the router runs, any other only at restart; a field with
 * `"x-secret": true` never leaves the router (SECRET_FIELDS).
 */

// LIVE_FIELDS lives with the schema (load.ts), whose checker is told the sections holding them.
export { LIVE_FIELDS, REDACTED, SECRET_FIELDS };

/** The dotted paths of the leaves where `a` and `b` differ (arrays compare whole), in key order. */
export function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  const out: string[] = [];
  diff(a, b, at, out);
  return out;
}

/**
 * changedPaths of two configurations that can differ only in the top-level
 * `sections` (a set's copy of the running one, checked): those are compared,
 * the others not walked.
 */
function changedPathsIn(a: NodeConfig, b: NodeConfig, sections: readonly string[]): string[] {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  const out: string[] = [];
  for (const k of [...new Set(sections)].sort()) if (!sameJson(x[k], y[k])) diff(x[k], y[k], k, out);
  return out;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function diff(a: unknown, b: unknown, at: string, out: string[]): void {
  if (isObj(a) && isObj(b)) {
    const keys = Object.keys(a);
    for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) keys.push(k);
    keys.sort();
    for (const k of keys) {
      // A change is usually a field or two: a member that is the same document (which sameJson
      // finds without building paths) has no leaf that differs, so diff would find nothing there.
      if (!sameJson(a[k], b[k])) diff(a[k], b[k], at === '' ? k : `${at}.${k}`, out);
    }
  } else if (!sameJson(a, b)) out.push(at);
}

/**
 * Whether two JSON values are the same document (what comparing their
 * stable serialisations says: key order does not matter, array order does;
 * an undefined member is the same as a missing one), without serialising.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // NaN and the infinities serialise as null, as null does.
    const num = (v: unknown): boolean => v === null || (typeof v === 'number' && !Number.isFinite(v));
    return num(a) && num(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, y[i] ?? null)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  // Counted, not listed, and walked with for-in (no array of keys per object): this runs over a
  // whole configuration on every live set, and what it allocated was a quarter of a set's garbage.
  let defined = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k) || x[k] === undefined) continue;
    defined++;
    if (y[k] === undefined || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (Object.hasOwn(y, k) && y[k] !== undefined) defined--;
  return defined === 0;
}

/** Whether a dotted path is live (it or a section holding it is marked). */
export function isLive(path: string): boolean {
  return LIVE_FIELDS.some((f) => path === f || path.startsWith(`${f}.`));
}

/** The configuration with its secrets blanked out (those that are set). */
export function redactConfig(cfg: Readonly<NodeConfig>): NodeConfig {
  return redactFields(cfg as NodeConfig, SECRET_FIELDS);
}

/**
 * One issue for every changed field that a running router cannot take. A
 * secret field's values are not shown: an issue must not tell a client what
 * `get` would not.
 */
export function restartOnlyIssues(prev: NodeConfig, next: NodeConfig, changed: readonly string[] = changedPaths(prev, next)): ConfigIssue[] {
  const at = (root: unknown, path: string): unknown => {
    const r = valueAt(root, path.split('.'));
    return r.ok ? r.value : undefined;
  };
  const shown = (path: string, v: unknown): unknown => (SECRET_FIELDS.includes(path) ? withheld(v) : v);
  const issues = changed
    .filter((p) => !isLive(p))
    .map((p) => ({
      path: `/${p.replaceAll('.', '/')}`,
      value: shown(p, at(next, p)),
      expected: `${JSON.stringify(shown(p, at(prev, p))) ?? 'undefined'} (a running router takes this field only at restart)`,
    }));
  return [...issues, ...authSwitchIssues(prev, next)];
}

/**
 * routing.auth.keyFile is live for a rotation (another file, the same keys
 * or new ones), but turning R3's authentication on or off is not: one router
 * that starts signing drops every unsigned message of its neighbours, and
 * they cannot parse its trailer, until every router has changed; one that
 * stops lets any router in range into its routing. Neither can be done
 * router by router without a partition or an opening, so it takes a restart
 * of the mesh with the new setting.
 */
function authSwitchIssues(prev: NodeConfig, next: NodeConfig): ConfigIssue[] {
  const was = prev.routing.auth.keyFile;
  const now = next.routing.auth.keyFile;
  if ((was === '') === (now === '')) return [];
  return [
    {
      path: '/routing/auth/keyFile',
      value: now,
      expected: `${JSON.stringify(was)} or another key file: a running router turns R3 authentication ${now === '' ? 'off' : 'on'} only at restart`,
    },
  ];
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
 * those changes need a restart. `prevVersion`: `prev`'s version, when the
 * caller knows it (it spares hashing the whole configuration again).
 * `opts.take`: `next` is a document the caller gives up (built for this
 * change, held by nobody else), so it is checked in place, not copied;
 * with `opts.sections`, the top-level sections it can differ from `prev`
 * in (it is `prev` with some paths set), only those are checked against
 * the schema and compared with `prev`'s, and the loader's rules across
 * fields that read none of them when `prev` passed are not run again.
 */
export function liveChange(
  prev: NodeConfig,
  next: unknown,
  source = 'set',
  prevVersion?: string,
  opts: { take?: boolean; sections?: readonly string[] } = {},
): LiveChange {
  const checked = opts.take ? checkNodeConfigInPlace(next, source, { changedSections: opts.sections, since: prev }) : parseNodeConfig(next, source);
  const changed = opts.take && opts.sections ? changedPathsIn(prev, checked, opts.sections) : changedPaths(prev, checked);
  return { from: prevVersion ?? configVersion(prev), checked, changed, restartOnly: restartOnlyIssues(prev, checked, changed) };
}
