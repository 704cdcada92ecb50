import { ConfigError, RangeArgumentError, type ConfigIssue } from '../../src/core/errors.js';
import type { Rng } from '../../src/core/rng.js';
import { assertMicros, US_PER_MS, type Micros } from '../../src/core/time.js';

export type PnPatternConfig =
  | { kind: 'off' }
  | {
      kind: 'onoff';
      /** T_idle and T_busy, fixed or as means of exponential distributions. */
      idleMs: number;
      busyMs: number;
      distribution: 'fixed' | 'exponential';
    }
  | {
      kind: 'fraction';
      /** Target busy fraction in [0, 1]. */
      busy: number;
      /** Mean length of one PN burst (bursts and gaps are exponential). */
      meanBurstMs: number;
    };

export interface PnConfig {
  channel: number;
  /** Received power of this PN at the node's antenna while it transmits. */
  powerDbm: number;
  pattern: PnPatternConfig;
}

/** A busy period of a primary node, half-open: [startUs, endUs). */
export type BusyInterval = readonly [startUs: Micros, endUs: Micros];

export interface PnProcessOptions {
  /** The process exists from this time on; it is idle before it. */
  startUs?: Micros;
  /**
   * How far behind the latest query start the process still remembers its
   * intervals (0: it forgets every interval that ends before the latest query
   * start). A query that starts earlier than what is remembered is refused.
   */
  historyUs?: Micros;
}

/** Problems with a PN pattern, with paths relative to the pattern (`/busy`, ...). */
export function checkPnPattern(p: PnPatternConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const nonNegative = (path: string, v: unknown): void => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) issues.push({ path, value: v, expected: 'a finite number >= 0' });
  };
  switch (p.kind) {
    case 'off':
      break;
    case 'onoff':
      nonNegative('/idleMs', p.idleMs);
      nonNegative('/busyMs', p.busyMs);
      if (p.distribution !== 'fixed' && p.distribution !== 'exponential') {
        issues.push({ path: '/distribution', value: p.distribution, expected: '"fixed" or "exponential"' });
      }
      break;
    case 'fraction':
      if (typeof p.busy !== 'number' || !(p.busy >= 0 && p.busy <= 1)) {
        issues.push({ path: '/busy', value: p.busy, expected: 'a number in [0, 1]' });
      }
      if (typeof p.meanBurstMs !== 'number' || !Number.isFinite(p.meanBurstMs) || p.meanBurstMs <= 0) {
        issues.push({ path: '/meanBurstMs', value: p.meanBurstMs, expected: 'a finite number > 0' });
      }
      break;
    default:
      issues.push({ path: '/kind', value: (p as { kind: unknown }).kind, expected: '"off", "onoff" or "fraction"' });
  }
  return issues;
}

type Mode = 'never' | 'always' | 'alternating';

/**
 * The ON/OFF process of one primary node. Busy and idle periods alternate;
 * they are drawn lazily, as far as queries reach, and those that end before
 * the remembered horizon are forgotten, so memory stays bounded however long
 * the run. The draws depend only on the rng and the pattern, never on how the
 * queries are cut, so two processes with the same stream give the same
 * intervals.
 */
export class PnProcess {
  readonly startUs: Micros;
  readonly historyUs: Micros;
  private readonly mode: Mode;
  /** Draws the length of the next period (busy or idle), in whole µs >= 1. */
  private readonly draw: (busy: boolean) => Micros;
  /** Busy intervals generated so far, flat [s0, e0, s1, e1, ...]; those before `head` are dead. */
  private iv: number[] = [];
  private head = 0;
  /** End of the last generated period, and whether the period after it is busy. */
  private edgeUs: Micros;
  private nextBusy: boolean;
  private latestStartUs = -Infinity;
  /** Queries starting before this are refused: their intervals may be forgotten. */
  private knownFromUs = -Infinity;

  constructor(
    readonly pattern: PnPatternConfig,
    private readonly rng: Rng,
    opts: PnProcessOptions = {},
  ) {
    const issues = checkPnPattern(pattern);
    if (issues.length > 0) throw new ConfigError(issues, 'PN pattern');
    this.startUs = assertMicros('PN start', opts.startUs ?? 0);
    this.historyUs = assertMicros('PN history', opts.historyUs ?? 0);
    this.edgeUs = this.startUs;
    this.nextBusy = false;

    let meanBusyUs = 0;
    let meanIdleUs = 0;
    if (pattern.kind === 'onoff') {
      meanBusyUs = pattern.busyMs * US_PER_MS;
      meanIdleUs = pattern.idleMs * US_PER_MS;
    } else if (pattern.kind === 'fraction' && pattern.busy > 0) {
      meanBusyUs = pattern.meanBurstMs * US_PER_MS;
      meanIdleUs = (meanBusyUs * (1 - pattern.busy)) / pattern.busy;
    }
    this.mode = meanBusyUs <= 0 ? 'never' : meanIdleUs <= 0 ? 'always' : 'alternating';

    if (pattern.kind === 'onoff' && pattern.distribution === 'fixed') {
      const busyUs = Math.max(1, Math.round(meanBusyUs));
      const idleUs = Math.max(1, Math.round(meanIdleUs));
      this.draw = (busy) => (busy ? busyUs : idleUs);
      if (this.mode === 'alternating') {
        // A random phase of the cycle [busy | idle]: busy at start with probability busy / cycle.
        const cycleUs = busyUs + idleUs;
        const phase = Math.min(cycleUs - 1, Math.floor(rng.next() * cycleUs));
        const busyNow = phase < busyUs;
        this.begin(busyNow, busyNow ? busyUs - phase : cycleUs - phase);
      }
    } else {
      this.draw = (busy) => Math.max(1, Math.round(this.rng.exponential(busy ? meanBusyUs : meanIdleUs)));
      if (this.mode === 'alternating') {
        // Stationary start; periods are memoryless, so the residual of the first one has the same law.
        const busyNow = rng.next() < meanBusyUs / (meanBusyUs + meanIdleUs);
        this.begin(busyNow, this.draw(busyNow));
      }
    }
  }

  /** The busy intervals clipped to [t0, t1), in time order. */
  busyIntervals(t0: Micros, t1: Micros): BusyInterval[] {
    const flat: number[] = [];
    this.collect(t0, t1, flat);
    const out: BusyInterval[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
    return out;
  }

  /** Whether the PN is on at time t. */
  isBusy(t: Micros): boolean {
    this.query(t, t);
    if (t < this.startUs || this.mode === 'never') return false;
    if (this.mode === 'always') return true;
    this.generate(t + 1);
    const i = this.firstEndingAfter(t);
    return i * 2 < this.iv.length && this.iv[i * 2]! <= t;
  }

  /** Exact busy time within [t0, t1), in µs. */
  busyTime(t0: Micros, t1: Micros): Micros {
    const flat: number[] = [];
    this.collect(t0, t1, flat);
    let sum = 0;
    for (let i = 0; i < flat.length; i += 2) sum += flat[i + 1]! - flat[i]!;
    return sum;
  }

  /** Intervals held in memory, the forgotten ones not yet compacted away included. */
  get storedIntervals(): number {
    return this.iv.length / 2;
  }

  /**
   * Appends the busy intervals clipped to [t0, t1) to `out` as flat start/end
   * pairs (the allocation-free path for the band's synthesis).
   */
  collect(t0: Micros, t1: Micros, out: number[]): void {
    this.query(t0, t1);
    const lo = Math.max(t0, this.startUs);
    if (t1 <= lo || this.mode === 'never') return;
    if (this.mode === 'always') {
      out.push(lo, t1);
      return;
    }
    this.generate(t1);
    const iv = this.iv;
    for (let i = this.firstEndingAfter(lo) * 2; i < iv.length && iv[i]! < t1; i += 2) {
      out.push(Math.max(iv[i]!, lo), Math.min(iv[i + 1]!, t1));
    }
  }

  private begin(busy: boolean, firstUs: Micros): void {
    if (busy) this.iv.push(this.startUs, this.startUs + firstUs);
    this.edgeUs = this.startUs + firstUs;
    this.nextBusy = !busy;
  }

  /** Checks a query and forgets what no later query can ask for. */
  private query(t0: number, t1: number): void {
    if (!Number.isFinite(t0) || !Number.isFinite(t1) || t1 < t0) {
      throw new RangeArgumentError('PN query', [t0, t1], 'finite times with t0 <= t1');
    }
    if (t0 < this.knownFromUs) {
      throw new RangeArgumentError('PN query start', t0, `a time at or after ${this.knownFromUs} us (earlier intervals are forgotten)`);
    }
    if (t0 <= this.latestStartUs) return;
    this.latestStartUs = t0;
    const cut = t0 - this.historyUs;
    if (cut <= this.knownFromUs) return;
    this.knownFromUs = cut;
    const iv = this.iv;
    let h = this.head;
    while (h * 2 < iv.length && iv[h * 2 + 1]! <= cut) h++;
    this.head = h;
    // Compact once the dead prefix is both long and most of the array.
    if (h >= 64 && h * 4 >= iv.length) {
      iv.splice(0, h * 2);
      this.head = 0;
    }
  }

  /** Draws periods until the state is known up to t1. */
  private generate(t1: number): void {
    while (this.edgeUs < t1) {
      const d = this.draw(this.nextBusy);
      if (this.nextBusy) this.iv.push(this.edgeUs, this.edgeUs + d);
      this.edgeUs += d;
      this.nextBusy = !this.nextBusy;
    }
  }

  /** Index (in intervals) of the first live interval whose end is after t. */
  private firstEndingAfter(t: number): number {
    const iv = this.iv;
    let lo = this.head;
    let hi = iv.length / 2;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (iv[mid * 2 + 1]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
