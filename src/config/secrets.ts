import { isObject, markedFields, REDACTED, valueAt, type Schema } from '../core/schema.js';

/**
 * The secrets of a configuration: the fields its schema marks
 * `"x-secret": true` (the control API's CURVE secret key, the monitor's
 * token). They never leave the router: `get` shows them redacted, the
 * configuration version is a hash of the configuration without them (so it
 * cannot be searched offline for them), and no error names their value.
 */

export { REDACTED };

/** The dotted paths of a schema's secret fields. */
export function secretFields(schema: Readonly<Schema>): readonly string[] {
  return Object.freeze(markedFields(schema, 'x-secret'));
}

/**
 * `doc` without the fields at `paths` (dotted): only the objects on the way
 * to a field are copied, and `doc` itself is not changed. A path the
 * document does not have is passed over.
 */
export function withoutFields<T>(doc: T, paths: readonly string[]): T {
  let out: unknown = doc;
  for (const p of paths) out = without(out, p.split('.'));
  return out as T;
}

function without(v: unknown, segs: readonly string[]): unknown {
  const [head, ...rest] = segs;
  if (head === undefined || !isObject(v) || !Object.hasOwn(v, head)) return v;
  const copy = { ...v };
  if (rest.length === 0) delete copy[head];
  else copy[head] = without(v[head], rest);
  return copy;
}

/** A copy of `doc` with the fields at `paths` that are set (not empty) reading REDACTED. */
export function redactFields<T>(doc: T, paths: readonly string[]): T {
  const out = structuredClone(doc);
  for (const path of paths) {
    const segs = path.split('.');
    const parent = valueAt(out, segs.slice(0, -1));
    const leaf = segs[segs.length - 1]!;
    if (parent.ok && isObject(parent.value) && Object.hasOwn(parent.value, leaf) && parent.value[leaf] !== '') parent.value[leaf] = REDACTED;
  }
  return out;
}

/**
 * Where a problem's value may be a secret: at a secret field, or at an
 * unknown field beside one (the secret under a misspelt name). As JSON
 * pointers, matched at the end of a problem's path, so that a node
 * configuration inside another document (a scenario's) is covered too.
 */
export interface SecretPlaces {
  fields: readonly string[];
  /** A secret's parent, and the fields the schema declares there. */
  parents: ReadonlyArray<readonly [pointer: string, declared: ReadonlySet<string>]>;
}

const pointerOf = (dotted: string): string => (dotted === '' ? '' : `/${dotted.replaceAll('.', '/')}`);

/** The secret places of `schema` for its secret fields (dotted paths). */
export function secretPlaces(schema: Readonly<Schema>, fields: readonly string[]): SecretPlaces {
  const parents = fields.map((f) => {
    const segs = f.split('.').slice(0, -1);
    let s: Readonly<Schema> | undefined = schema;
    for (const seg of segs) s = (s?.properties as Record<string, Schema> | undefined)?.[seg];
    const declared = new Set(Object.keys((s?.properties ?? {}) as Schema));
    return [pointerOf(segs.join('.')), declared] as const;
  });
  return { fields: fields.map(pointerOf), parents };
}

/** Whether a problem at `path` (a JSON pointer) may show a secret. */
export function mayHoldSecret(places: SecretPlaces, path: string): boolean {
  if (places.fields.some((p) => path.endsWith(p))) return true;
  const cut = path.lastIndexOf('/');
  const parent = path.slice(0, cut);
  const name = path.slice(cut + 1);
  return places.parents.some(([p, declared]) => parent.endsWith(p) && !declared.has(name));
}

/**
 * What a monitor token must be: 128 bits at least, counted by its alphabet
 * (a token is as strong as the random bits it carries, which its text alone
 * cannot show: the rule counts the most each character could carry). The
 * characters are base64url's (RFC 4648 section 5), which go into a URL as
 * they are: 6 bits each, so 22 of them (132 bits); a token of hex digits
 * only carries 4 bits a digit, so 32 of them.
 */
export const MONITOR_TOKEN_RULE =
  'a token of at least 128 bits: 22 or more base64url characters (A-Z a-z 0-9 - _), or 32 or more hex digits (`cogmesh keygen --token` makes one)';

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const HEX = /^[0-9A-Fa-f]*$/;

/** What makes a (non-empty) monitor token too weak, quoting none of it; undefined for a token of 128 bits or more. */
export function monitorTokenProblem(token: string): string | undefined {
  if (!BASE64URL.test(token)) return 'a character outside base64url';
  const [unit, bits, need] = HEX.test(token) ? ['hex digit', 4, 32] : ['character', 6, 22];
  const n = token.length;
  if (n < need) return `${n} ${unit}${n === 1 ? '' : 's'} (${n * bits} bits), fewer than ${need}`;
  return undefined;
}
