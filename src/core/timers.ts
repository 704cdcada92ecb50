import type { Micros } from './time.js';

/**
 * A table of deadlines keyed by what they are for. A core owns one, sets and
 * clears entries as its state changes, reports `next()` as its next deadline,
 * and asks `due(now)` which ones have fired. Timers are data: nothing here
 * calls back.
 */
export class Timers<K> {
  /**
   * The deadlines in the order their keys were first set (a key cleared and
   * set again goes last), as a Map would keep them: `keys[i]` is due at
   * `whens[i]`, for i in [0, count) (entries past `count` are left over, not
   * cut off: the arrays keep their room). Arrays scanned in full rather than a
   * Map: a core has a handful of timers, set and taken on nearly every
   * input, and a Map's iteration and its deleted entries cost more than the
   * scan.
   */
  private readonly keys: K[] = [];
  private readonly whens: Micros[] = [];
  private count = 0;
  /**
   * `next()`'s answer while no deadline changed since it was computed
   * (`known`): a router asks after every input, and most inputs set none.
   */
  private earliest: Micros | undefined;
  private known = false;

  private indexOf(key: K): number {
    const keys = this.keys;
    for (let i = 0; i < this.count; i++) if (keys[i] === key) return i;
    return -1;
  }

  /** Removes entry i, the later ones moving up a place (their order kept). */
  private removeAt(i: number): void {
    const keys = this.keys;
    const whens = this.whens;
    const n = --this.count;
    for (let j = i; j < n; j++) {
      keys[j] = keys[j + 1]!;
      whens[j] = whens[j + 1]!;
    }
  }

  set(key: K, when: Micros): void {
    const i = this.indexOf(key);
    if (i >= 0) this.whens[i] = when;
    else {
      this.keys[this.count] = key;
      this.whens[this.count++] = when;
    }
    this.known = false;
  }

  clear(key: K): void {
    const i = this.indexOf(key);
    if (i < 0) return;
    this.removeAt(i);
    this.known = false;
  }

  get(key: K): Micros | undefined {
    const i = this.indexOf(key);
    return i < 0 ? undefined : this.whens[i];
  }

  has(key: K): boolean {
    return this.indexOf(key) >= 0;
  }

  /** The earliest deadline, or undefined when none is set. */
  next(): Micros | undefined {
    if (this.known) return this.earliest;
    let m: Micros | undefined;
    const whens = this.whens;
    for (let i = 0; i < this.count; i++) {
      const w = whens[i]!;
      if (m === undefined || w < m) m = w;
    }
    this.earliest = m;
    this.known = true;
    return m;
  }

  /**
   * Removes and returns the keys whose deadline is at or before `now`, earliest
   * first; equal deadlines keep the order in which they were first set.
   */
  due(now: Micros): K[] {
    const fired: Array<[K, Micros]> = [];
    for (let i = 0; i < this.count; i++) if (this.whens[i]! <= now) fired.push([this.keys[i]!, this.whens[i]!]);
    if (fired.length === 0) return [];
    fired.sort((a, b) => a[1] - b[1]);
    this.takeDue(now);
    return fired.map(([k]) => k);
  }

  /** Removes the keys whose deadline is at or before `now`, as `due` does; whether there were any (nothing allocated). */
  takeDue(now: Micros): boolean {
    const keys = this.keys;
    const whens = this.whens;
    const n = this.count;
    // The entries that stay move up over those taken, in their order.
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const w = whens[i]!;
      if (w <= now) continue;
      if (kept !== i) {
        keys[kept] = keys[i]!;
        whens[kept] = w;
      }
      kept++;
    }
    if (kept === n) return false;
    this.count = kept;
    this.known = false;
    return true;
  }

  get size(): number {
    return this.count;
  }
}
