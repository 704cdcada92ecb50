import type { Micros } from './time.js';

/**
 * A table of deadlines keyed by what they are for. A core owns one, sets and
 * clears entries as its state changes, reports `next()` as its next deadline,
 * and asks `due(now)` which ones have fired. Timers are data: nothing here
 * calls back.
 */
export class Timers<K> {
  private readonly at = new Map<K, Micros>();

  set(key: K, when: Micros): void {
    this.at.set(key, when);
  }

  clear(key: K): void {
    this.at.delete(key);
  }

  get(key: K): Micros | undefined {
    return this.at.get(key);
  }

  has(key: K): boolean {
    return this.at.has(key);
  }

  /** The earliest deadline, or undefined when none is set. */
  next(): Micros | undefined {
    let m: Micros | undefined;
    for (const w of this.at.values()) if (m === undefined || w < m) m = w;
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
    return any;
  }

  get size(): number {
    return this.at.size;
  }
}
