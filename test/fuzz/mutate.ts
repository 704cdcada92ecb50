import type { Rng } from '../../src/core/rng.js';
import { concat } from '../wire/openflow/helpers.js';

/**
 * The fuzzer's inputs: pure random ones and mutations of valid seeds, drawn
 * from a seeded Rng only, so that a seed and an input's index give the same
 * input again (a crasher is reproduced from them). Three kinds: bytes (wire
 * parsers), text (JSON text: control requests, configuration files, SigMF
 * metadata) and values (a configuration handed over as an object).
 */

/** Values that sit on the edges of the fields parsers read: 8, 16, 32 and 48 bits, signed and unsigned. */
const INTERESTING = [0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff];

const pick = <T>(rng: Rng, a: readonly T[]): T => a[rng.int(0, a.length - 1)]!;

/** A length: mostly short (headers), sometimes up to a few kB (jumbo payloads, long counts). */
function length(rng: Rng): number {
  return rng.next() < 0.75 ? rng.int(0, 64) : rng.int(0, 4096);
}

export function randomBytes(rng: Rng, n = length(rng)): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
  return b;
}

/** Writes `v` as `width` bytes at `o`, big- or little-endian, clipped at the end of `b`. */
function put(b: Uint8Array, o: number, v: number, width: number, bigEndian: boolean): void {
  for (let i = 0; i < width && o + i < b.length; i++) {
    const shift = 8 * (bigEndian ? width - 1 - i : i);
    b[o + i] = shift >= 32 ? 0 : (v >>> shift) & 0xff;
  }
}

/** One mutation of `b` (a copy; `b` is not changed). `other` is another seed, for splicing. */
function mutateOnce(rng: Rng, b: Uint8Array, other: Uint8Array): Uint8Array {
  const n = b.length;
  const at = (): number => (n === 0 ? 0 : rng.int(0, n - 1));
  const out = Uint8Array.from(b);
  switch (rng.int(0, 11)) {
    case 0: // a bit flipped
      if (n > 0) out[at()]! ^= 1 << rng.int(0, 7);
      return out;
    case 1: // a byte set at random
      if (n > 0) out[at()] = rng.int(0, 255);
      return out;
    case 2: // an edge value written over an 8-, 16- or 32-bit field
      put(out, at(), pick(rng, INTERESTING), pick(rng, [1, 2, 4]), rng.next() < 0.8);
      return out;
    case 3: {
      // a small step up or down in a byte or a 16-bit field (off-by-one counts and lengths)
      if (n === 0) return out;
      const o = at();
      const step = rng.int(1, 4) * (rng.next() < 0.5 ? -1 : 1);
      if (rng.next() < 0.5 || o + 1 >= n) out[o] = (out[o]! + step) & 0xff;
      else put(out, o, ((out[o]! << 8) | out[o + 1]!) + step, 2, true);
      return out;
    }
    case 4: {
      // a length field set from the input's own size: n, n +- 1, the header's, a count's
      const o = rng.int(0, Math.min(n, 32));
      const v = pick(rng, [n, n - 1, n + 1, n - o, n - o - 1, n - o + 1, Math.floor(n / 2), 0, 0xffff, 0xffffffff]);
      put(out, o, v, pick(rng, [1, 2, 4]), true);
      return out;
    }
    case 5: // bytes inserted
      return concat(b.subarray(0, (n > 0 && at()) || 0), randomBytes(rng, rng.int(1, 16)), b.subarray((n > 0 && at()) || 0));
    case 6: {
      // a run deleted
      const o = at();
      return concat(b.subarray(0, o), b.subarray(Math.min(n, o + rng.int(1, 16))));
    }
    case 7: {
      // a run repeated (a count that grows, entries copied)
      const o = at();
      const run = b.subarray(o, Math.min(n, o + rng.int(1, 32)));
      const times = rng.int(1, rng.next() < 0.9 ? 4 : 64);
      return concat(b.subarray(0, o), ...Array.from({ length: times }, () => run), b.subarray(o));
    }
    case 8: // spliced with another seed
      return concat(b.subarray(0, rng.int(0, n)), other.subarray(rng.int(0, other.length)));
    case 9: // truncated
      return b.slice(0, rng.int(0, n));
    case 10: // bytes appended
      return concat(b, randomBytes(rng, rng.int(1, rng.next() < 0.9 ? 16 : 2048)));
    default: {
      // a run filled with one byte (0x00 or 0xff mostly)
      const o = at();
      out.fill(pick(rng, [0, 0xff, rng.int(0, 255)]), o, Math.min(n, o + rng.int(1, 64)));
      return out;
    }
  }
}

/** A seed after one to eight stacked mutations. */
export function mutateBytes(rng: Rng, seed: Uint8Array, other: Uint8Array): Uint8Array {
  let b = seed;
  const times = rng.next() < 0.5 ? 1 : rng.int(2, 8);
  for (let i = 0; i < times; i++) b = mutateOnce(rng, b, other);
  return b;
}

// ---------------------------------------------------------------------------
// JSON-shaped inputs

/** Scalars on the edges of what a schema or a check reads: integer limits, -0, huge, empty, long, odd keys and code points. */
const EDGE_SCALARS: readonly unknown[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  255,
  256,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 48,
  2 ** 53 - 1,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  '',
  ' ',
  'x',
  '0',
  '1e3',
  '0x10',
  'Infinity',
  'NaN',
  'null',
  '__proto__',
  'constructor',
  '\u0000',
  '\ud800',
  '\u{1f600}',
  '../x',
  'a.b.c',
  '1970-01-01T00:00:00Z',
  'tcp 10.0.0.1:* > 10.0.4.1:5001',
  'x'.repeat(257),
  'y'.repeat(70_000),
  true,
  false,
  null,
];

/** What a JavaScript caller may hand over that JSON cannot say. */
const NON_JSON: readonly (() => unknown)[] = [
  () => NaN,
  () => Infinity,
  () => -Infinity,
  () => undefined,
  () => 10n,
  () => Symbol('s'),
  () => () => 0,
  () => new Date(0),
  () => new Map([[1, 2]]),
  () => new Uint8Array(3),
  () => Object.create(null) as unknown,
  () => {
    const sparse: unknown[] = [];
    sparse[1] = 1; // index 0 a hole
    return sparse;
  },
];

const KEYS = ['__proto__', 'constructor', 'toString', '', 'id', 'node', 'type', 'version', '0', 'a.b', 'x'.repeat(300)];

/** A plain array or object (not a Date, a Map, a typed array: those are left whole). */
const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return Array.isArray(v) || proto === Object.prototype || proto === null;
};

/** An own data property, even for `__proto__` (plain assignment would change the prototype). */
function setOwn(o: Record<string, unknown> | unknown[], k: string | number, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** `v` inside `depth` arrays or single-key objects, built without recursion. */
export function nest(v: unknown, depth: number, objects: boolean): unknown {
  let out = v;
  for (let i = 0; i < depth; i++) out = objects ? { a: out } : [out];
  return out;
}

/** A random scalar: an edge value, or (for value inputs) something JSON cannot say. */
function scalar(rng: Rng, nonJson: boolean): unknown {
  if (nonJson && rng.next() < 0.15) return pick(rng, NON_JSON)();
  if (rng.next() < 0.2) return rng.int(-1000, 100_000);
  return pick(rng, EDGE_SCALARS);
}

/** A new value for a mutated place: a scalar, an empty or deep container, a copy of another part, a long array. */
function replacement(rng: Rng, root: unknown, nonJson: boolean): unknown {
  switch (rng.int(0, 9)) {
    case 0:
      return rng.next() < 0.5 ? [] : {};
    case 1:
      return nest(scalar(rng, nonJson), pick(rng, [2, 8, 63, 64, 65, 100, 1000, 5000]), rng.next() < 0.5);
    case 2:
      // Long arrays of small numbers (a long one of edge scalars would be megabytes of 70,000-character strings).
      return Array.from({ length: pick(rng, [2, 16, 256, 5000]) }, () => rng.int(-1, 300));
    case 3:
      return structuredCloneSafe(pickNode(rng, root).value);
    default:
      return scalar(rng, nonJson);
  }
}

function structuredCloneSafe(v: unknown): unknown {
  try {
    return structuredClone(v);
  } catch {
    return v;
  }
}

/** A place in `root`: a container and a key in it, or the root itself (container undefined). */
interface Place {
  container: Record<string, unknown> | unknown[] | undefined;
  key: string | number;
  value: unknown;
}

/** A random place in `root`, walked down from the root (no recursion: the walk is a loop). */
function pickNode(rng: Rng, root: unknown): Place {
  let place: Place = { container: undefined, key: '', value: root };
  for (let depth = 0; depth < 200; depth++) {
    const v = place.value;
    if (!isContainer(v)) break;
    const keys = Array.isArray(v) ? v.map((_x, i) => i) : Object.keys(v);
    if (keys.length === 0 || rng.next() < 0.3) break;
    const key = pick<string | number>(rng, keys);
    place = { container: v, key, value: (v as Record<string | number, unknown>)[key] };
  }
  return place;
}

/**
 * A JSON-shaped seed after one to six stacked changes: a value replaced, a
 * key deleted or added, a type swapped, a part wrapped deep. The seed is
 * copied first (it is not changed). `nonJson` lets values in that JSON
 * cannot hold (NaN, undefined, a BigInt, a function).
 */
export function mutateValue(rng: Rng, seed: unknown, nonJson: boolean): unknown {
  let root = structuredClone(seed);
  const times = rng.next() < 0.5 ? 1 : rng.int(2, 6);
  for (let i = 0; i < times; i++) {
    const p = pickNode(rng, root);
    const set = (v: unknown): void => {
      if (p.container === undefined) root = v;
      else setOwn(p.container, p.key, v);
    };
    switch (rng.int(0, 5)) {
      case 0: // deleted
        if (p.container === undefined) root = scalar(rng, nonJson);
        else if (Array.isArray(p.container)) p.container.splice(p.key as number, 1);
        else delete p.container[p.key];
        break;
      case 1: // a key added beside it
        if (isContainer(p.value) && !Array.isArray(p.value)) setOwn(p.value, pick(rng, KEYS), replacement(rng, root, nonJson));
        else if (Array.isArray(p.value)) p.value.push(replacement(rng, root, nonJson));
        else set(replacement(rng, root, nonJson));
        break;
      case 2: // the type swapped: an object's values as an array, an array as an object, a scalar as a string
        if (Array.isArray(p.value)) set(Object.fromEntries(Array.from(p.value, (x, k) => [String(k), x])));
        else if (isContainer(p.value)) set(Object.values(p.value));
        else set(String(p.value as string));
        break;
      default:
        set(replacement(rng, root, nonJson));
    }
  }
  return root;
}

/** Characters JSON text is made of, and a few that break it. */
const JSON_CHARS = '{}[]:,"\\ 0123456789-+.eEtrufalsn\n\t\u0000\u00e9\ud800';

export function randomText(rng: Rng): string {
  const n = length(rng);
  let s = '';
  for (let i = 0; i < n; i++) s += JSON_CHARS[rng.int(0, JSON_CHARS.length - 1)];
  return s;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * A mutated JSON text: most often a changed value re-serialised, else the
 * text's UTF-8 bytes mutated (broken syntax, bad UTF-8, cut short), else the
 * text wrapped in brackets deeper than any limit (built as text: serialising
 * such a value would itself recurse that deep).
 */
export function mutateText(rng: Rng, seed: string, other: string): string {
  const r = rng.next();
  if (r < 0.55) {
    let v: unknown;
    try {
      v = JSON.parse(seed);
    } catch {
      return fromUtf8.decode(mutateBytes(rng, utf8.encode(seed), utf8.encode(other)));
    }
    try {
      return JSON.stringify(mutateValue(rng, v, false)) ?? 'null';
    } catch {
      return seed;
    }
  }
  if (r < 0.92) return fromUtf8.decode(mutateBytes(rng, utf8.encode(seed), utf8.encode(other)));
  const depth = rng.next() < 0.95 ? pick(rng, [63, 64, 65, 1000, 10_000]) : 200_000;
  const objects = rng.next() < 0.5;
  return objects ? '{"a":'.repeat(depth) + seed + '}'.repeat(depth) : '['.repeat(depth) + seed + ']'.repeat(depth);
}
