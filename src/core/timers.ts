import type { Micros } from './time.js';

/**
 * A table of deadlines keyed by what they are for. A core owns one, sets and
 * clears entries as its state changes, reports `next()` as its next deadline,
 * and asks `due(now)` which ones have fired. Timers are data: nothing here
 * calls back.
 */
export class Timers<K> {
  private readonly at = new Map<K, Micros>();
  /**
   * `next()`'s answer while no deadline changed since it was computed
   * (`known`): a router asks after every input, and most inputs set none.
   */
  private earliest: Micros | undefined;
  private known = false;

  set(key: K, when: Micros): void {
    this.at.set(key, when);
    this.known = false;
  }

  clear(key: K): void {
    if (this.at.delete(key)) this.known = false;
  }

  get(key: K): Micros | undefined {
    return this.at.get(key);
  }

  has(key: K): boolean {
    return this.at.has(key);
  }

  /** The earliest deadline, or undefined when none is set. */
  next(): Micros | undefined {
    if (this.known) return this.earliest;
    let m: Micros | undefined;
    for (const w of this.at.values()) if (m === undefined || w < m) m = w;
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
    for (const [k, w] of this.at) if (w <= now) fired.push([k, w]);
    fired.sort((a, b) => a[1] - b[1]);
    for (const [k] of fired) this.at.delete(k);
    if (fired.length > 0) this.known = false;
    return fired.map(([k]) => k);
  }

  /** Removes the keys whose deadline is at or before `now`, as `due` does; whether there were any (nothing allocated). */
  takeDue(now: Micros): boolean {
    let any = false;
    for (const [k, w] of this.at) {
      if (w <= now) {
        this.at.delete(k);
        any = true;
      }
    }
    if (any) this.known = false;
    return any;
  }

  get size(): number {
    return this.at.size;
  }
}
