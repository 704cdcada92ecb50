import type { PacketFields } from '../wire/openflow/match.js';
import { packetValue, type CompiledMatch, type Constraint } from './matching.js';

/** What the classifier needs of a flow entry. */
export interface Classified {
  readonly priority: number;
  /** Installation order among equal priorities (lower first). */
  readonly seq: number;
  readonly cm: CompiledMatch;
}

/** Whether `a` comes before `b` in lookup order: priority high to low, then installation order. */
export const comesBefore = (a: Classified, b: Classified): boolean => a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);

/** One field of a tuple: which, and with what mask. */
interface Field {
  key: Constraint['key'];
  kind: 'num' | 'bytes';
  /** Numbers: the mask, and whether it is the field's all-ones (then the value is compared whole). */
  mask: number;
  exact: boolean;
  /** Byte strings: the mask, or undefined when exact. */
  bytesMask: Uint8Array | undefined;
}

/** The entries whose matches constrain the same fields with the same masks: a hash from the masked values to them. */
interface Tuple<E> {
  fields: Field[];
  buckets: Map<string, E[]>;
  size: number;
  /** At least the highest priority in the tuple (exact after inserts, an upper bound after removals): what lookups prune on. */
  maxPriority: number;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * The flow table's classifier: tuple space search (Srinivasan, Suri and
 * Varghese, SIGCOMM 1999), as Open vSwitch's classifier does it. Entries are
 * grouped by their match's shape (the fields it constrains and each one's
 * mask); within a tuple, a hash on the masked field values finds the
 * entries with that exact match, highest priority first. A lookup masks the
 * packet's fields once per tuple and probes its hash, visiting tuples by
 * their highest priority and stopping once no later tuple can hold a better
 * entry. Its cost grows with the number of distinct shapes, not of
 * entries: a controller installs many flows of a few shapes.
 *
 * Same semantics as a scan in lookup order (priority high to low, then
 * installation order), which the tests check it against.
 */
export class TupleClassifier<E extends Classified> {
  /** Highest `maxPriority` first. */
  private tuples: Tuple<E>[] = [];
  private readonly byShape = new Map<string, Tuple<E>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Distinct match shapes (what a lookup costs, at worst, in hash probes). */
  get shapes(): number {
    return this.tuples.length;
  }

  insert(e: E): void {
    const shape = shapeOf(e.cm);
    let t = this.byShape.get(shape);
    if (t === undefined) {
      t = { fields: fieldsOf(e.cm), buckets: new Map(), size: 0, maxPriority: -1 };
      this.byShape.set(shape, t);
      this.tuples.push(t);
    }
    const key = entryKey(e.cm);
    const bucket = t.buckets.get(key);
    if (bucket === undefined) t.buckets.set(key, [e]);
    else {
      let i = 0;
      while (i < bucket.length && comesBefore(bucket[i]!, e)) i++;
      bucket.splice(i, 0, e);
    }
    t.size++;
    this.count++;
    if (e.priority > t.maxPriority) {
      t.maxPriority = e.priority;
      this.order();
    }
  }

  /** Takes `e` out; false when it was not in. */
  remove(e: E): boolean {
    const shape = shapeOf(e.cm);
    const t = this.byShape.get(shape);
    if (t === undefined) return false;
    const key = entryKey(e.cm);
    const bucket = t.buckets.get(key);
    const i = bucket === undefined ? -1 : bucket.indexOf(e);
    if (i < 0) return false;
    bucket!.splice(i, 1);
    if (bucket!.length === 0) t.buckets.delete(key);
    t.size--;
    this.count--;
    if (t.size === 0) {
      this.byShape.delete(shape);
      this.tuples.splice(this.tuples.indexOf(t), 1);
    }
    return true;
  }

  /** The first entry in lookup order that the packet matches. */
  lookup(f: PacketFields): E | undefined {
    let best: E | undefined;
    for (const t of this.tuples) {
      // Tuples come by their highest priority: none further on can beat an entry of a higher one.
      if (best !== undefined && t.maxPriority < best.priority) break;
      const key = packetKey(t.fields, f);
      if (key === undefined) continue;
      const head = t.buckets.get(key)?.[0];
      if (head !== undefined && (best === undefined || comesBefore(head, best))) best = head;
    }
    return best;
  }

  private order(): void {
    this.tuples.sort((a, b) => b.maxPriority - a.maxPriority);
  }
}

/** A text naming a match's shape: its fields (in OXM order) and their masks. */
function shapeOf(cm: CompiledMatch): string {
  let s = '';
  for (const c of cm.constraints) {
    if (c.kind === 'num') s += `${c.key}/${c.mask.toString(16)};`;
    else s += c.mask === undefined ? `${c.key};` : `${c.key}/${bytesHex(c.mask)};`;
  }
  return s;
}

function fieldsOf(cm: CompiledMatch): Field[] {
  return cm.constraints.map((c) =>
    c.kind === 'num'
      ? { key: c.key, kind: 'num', mask: c.mask, exact: c.exact, bytesMask: undefined }
      : { key: c.key, kind: 'bytes', mask: 0, exact: c.mask === undefined, bytesMask: c.mask },
  );
}

/** The masked values of an entry's match (its values have no bits outside their masks: `compileMatch` refuses those). */
function entryKey(cm: CompiledMatch): string {
  let s = '';
  for (const c of cm.constraints) s += c.kind === 'num' ? `${c.value.toString(16)},` : `${bytesHex(c.value)},`;
  return s;
}

/** The packet's values under a tuple's masks, in the form of `entryKey`; undefined when it lacks a field the tuple constrains. */
function packetKey(fields: readonly Field[], f: PacketFields): string | undefined {
  let s = '';
  for (let i = 0; i < fields.length; i++) {
    const fd = fields[i]!;
    const pv = packetValue(f, fd.key);
    if (pv === undefined) return undefined;
    if (fd.kind === 'num') {
      if (typeof pv !== 'number') return undefined;
      s += `${(fd.exact ? pv : (pv & fd.mask) >>> 0).toString(16)},`;
    } else {
      if (!(pv instanceof Uint8Array)) return undefined;
      const m = fd.bytesMask;
      if (m !== undefined && pv.length !== m.length) return undefined;
      for (let j = 0; j < pv.length; j++) s += HEX[m === undefined ? pv[j]! : pv[j]! & m[j]!];
      s += ',';
    }
  }
  return s;
}

function bytesHex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]!];
  return s;
}
