import { RangeArgumentError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import { earlierOf, US_PER_S, type Micros } from '../core/time.js';
import { formatPrefix, PrefixTable, type Prefix } from '../wire/ip.js';
import { BROADCAST, type AnnouncedPrefix, type NodeAddr, type PrefixAnnouncement } from '../wire/mesh.js';
import { seqNewer, seqNext } from './aodv.js';

/**
 * Which router serves which IP prefix: a sans-IO core. Each router floods a
 * PREFIX announcement of its own prefixes on R3 every interval; every router
 * relays each announcement it has not seen (newer sequence number from its
 * originator) once, after a random jitter, and keeps it for its lifetime.
 * `lookup` answers, by longest prefix match, the mesh address behind which
 * an IP address lives; AODV then finds the route to that router. This is
 * OLSR's host and network association (RFC 7181 section 12) flooded by
 * simple duplicate suppression, next to reactive routing.
 */

export interface PrefixParams {
  /** How often a router announces its own prefixes. */
  announceIntervalUs: Micros;
  /** How long routers keep an announcement (three intervals). */
  lifetimeUs: Micros;
  /** Hops an announcement travels at most (NET_DIAMETER). */
  netDiameter: number;
  /** A relayed announcement, and each of the router's own, waits a random 0..this first. */
  jitterUs: Micros;
}

/** What the core asks of the router: broadcast a PREFIX on R3. */
export type PrefixAction = { kind: 'send'; to: NodeAddr; msg: PrefixAnnouncement };

/** One router's announced prefixes, as `entries` shows them. */
export interface PrefixView {
  prefix: string;
  router: NodeAddr;
  hops: number;
  expiresUs: Micros;
}

interface Origin {
  seq: number;
  hops: number;
  expiresUs: Micros;
  prefixes: Prefix[];
}

/** The lifetime field is 16 bits of seconds. */
const MAX_LIFETIME_S = 0xffff;

export class PrefixRoutes {
  private own: Prefix[] = [];
  private ownSeq: number;
  private nextAnnounceUs: Micros | undefined;
  private readonly origins = new Map<NodeAddr, Origin>();
  private table = new PrefixTable<NodeAddr>();
  /** Announcements waiting for their jitter, in time order. */
  private readonly delayed: Array<{ atUs: Micros; msg: PrefixAnnouncement }> = [];
  private nextExpiryUs: Micros | undefined;
  readonly counters = { announced: 0, relayed: 0, learned: 0, duplicates: 0, expired: 0 };

  /**
   * `seqStart`: the first sequence number; a daemon gives its clock's
   * seconds, so that a router that restarts announces newer than before.
   */
  constructor(
    private readonly self: NodeAddr,
    private readonly rng: Rng,
    private params: PrefixParams,
    seqStart = 0,
  ) {
    checkParams(params);
    this.ownSeq = seqStart >>> 0;
  }

  setParams(p: PrefixParams, now: Micros): void {
    checkParams(p);
    this.params = p;
    if (this.nextAnnounceUs !== undefined) this.nextAnnounceUs = Math.min(this.nextAnnounceUs, now + p.announceIntervalUs);
  }

  /**
   * The prefixes this router serves (its own addresses and LANs); an empty
   * list announces nothing. A change is announced at once.
   */
  serve(prefixes: readonly Prefix[], now: Micros): void {
    this.own = [...prefixes];
    this.rebuild();
    this.nextAnnounceUs = this.own.length > 0 ? now + Math.floor(this.rng.next() * this.params.jitterUs) : undefined;
  }

  /** A PREFIX heard from neighbour `from`. */
  handle(msg: PrefixAnnouncement, from: NodeAddr, now: Micros): PrefixAction[] {
    this.sweep(now);
    if (msg.orig === this.self || from === this.self) return [];
    const known = this.origins.get(msg.orig);
    if (known && !seqNewer(msg.seq, known.seq)) {
      this.counters.duplicates++;
      return [];
    }
    this.counters.learned++;
    const lifetimeUs = msg.lifetimeS * US_PER_S;
    this.origins.set(msg.orig, { seq: msg.seq, hops: msg.hopCount + 1, expiresUs: now + lifetimeUs, prefixes: msg.prefixes.map(toPrefix) });
    this.rebuild();
    if (msg.ttl > 1) {
      const relay: PrefixAnnouncement = { ...msg, hopCount: Math.min(255, msg.hopCount + 1), ttl: msg.ttl - 1 };
      this.delay(now + Math.floor(this.rng.next() * this.params.jitterUs), relay);
    }
    return [];
  }

  /** Timers due at `now`: announcements whose jitter is over, the router's own announcement, expiries. */
  tick(now: Micros): PrefixAction[] {
    const out: PrefixAction[] = [];
    this.sweep(now);
    while (this.delayed.length > 0 && this.delayed[0]!.atUs <= now) {
      const d = this.delayed.shift()!;
      if (d.msg.orig !== this.self) this.counters.relayed++;
      out.push({ kind: 'send', to: BROADCAST, msg: d.msg });
    }
    if (this.nextAnnounceUs !== undefined && this.nextAnnounceUs <= now) {
      this.ownSeq = seqNext(this.ownSeq);
      this.counters.announced++;
      out.push({ kind: 'send', to: BROADCAST, msg: this.announcement() });
      this.nextAnnounceUs = now + this.params.announceIntervalUs;
    }
    return out;
  }

  nextDeadline(): Micros | undefined {
    return earlierOf(earlierOf(this.delayed[0]?.atUs, this.nextAnnounceUs), this.nextExpiryUs);
  }

  /** The router behind which `addr` (4 or 16 bytes) lives, by longest prefix match; undefined: none announced it. */
  lookup(addr: Uint8Array): NodeAddr | undefined {
    return this.table.lookup(addr)?.value;
  }

  /** Every prefix known, the router's own first, then by router. */
  entries(): PrefixView[] {
    const out: PrefixView[] = this.own.map((p) => ({ prefix: formatPrefix(p), router: this.self, hops: 0, expiresUs: Number.MAX_SAFE_INTEGER }));
    for (const [router, o] of [...this.origins].sort((a, b) => a[0] - b[0])) {
      for (const p of o.prefixes) out.push({ prefix: formatPrefix(p), router, hops: o.hops, expiresUs: o.expiresUs });
    }
    return out;
  }

  private announcement(): PrefixAnnouncement {
    const lifetimeS = Math.min(MAX_LIFETIME_S, Math.ceil(this.params.lifetimeUs / US_PER_S));
    return {
      type: 'prefix',
      orig: this.self,
      seq: this.ownSeq,
      hopCount: 0,
      ttl: Math.min(255, this.params.netDiameter),
      lifetimeS,
      prefixes: this.own.slice(0, 255).map((p) => ({ version: p.version, bytes: p.bytes, length: p.length })),
    };
  }

  private delay(atUs: Micros, msg: PrefixAnnouncement): void {
    let i = this.delayed.length;
    while (i > 0 && this.delayed[i - 1]!.atUs > atUs) i--;
    this.delayed.splice(i, 0, { atUs, msg });
  }

  /** Forgets announcements past their lifetime. */
  private sweep(now: Micros): void {
    if (this.nextExpiryUs === undefined || this.nextExpiryUs > now) return;
    let gone = false;
    for (const [router, o] of this.origins) {
      if (o.expiresUs <= now) {
        this.origins.delete(router);
        this.counters.expired++;
        gone = true;
      }
    }
    if (gone) this.rebuild();
    else this.nextExpiryUs = this.earliestExpiry();
  }

  private earliestExpiry(): Micros | undefined {
    let t: Micros | undefined;
    for (const o of this.origins.values()) if (t === undefined || o.expiresUs < t) t = o.expiresUs;
    return t;
  }

  /**
   * The lookup table anew: every router's prefixes, then the router's own
   * (its own win a tie); where two routers announce the same prefix, the
   * lower address serves it.
   */
  private rebuild(): void {
    const t = new PrefixTable<NodeAddr>();
    for (const [router, o] of [...this.origins].sort((a, b) => b[0] - a[0])) for (const p of o.prefixes) t.set(p, router);
    for (const p of this.own) t.set(p, this.self);
    this.table = t;
    this.nextExpiryUs = this.earliestExpiry();
  }
}

function toPrefix(p: AnnouncedPrefix): Prefix {
  return { version: p.version, bytes: p.bytes, length: p.length };
}

function checkParams(p: PrefixParams): void {
  if (!(p.announceIntervalUs > 0)) throw new RangeArgumentError('announceIntervalUs', p.announceIntervalUs, 'a positive number of microseconds');
  if (!(p.lifetimeUs >= p.announceIntervalUs)) throw new RangeArgumentError('lifetimeUs', p.lifetimeUs, 'at least announceIntervalUs');
  if (!(Number.isInteger(p.netDiameter) && p.netDiameter >= 1)) throw new RangeArgumentError('netDiameter', p.netDiameter, 'an integer >= 1');
  if (!(p.jitterUs >= 0)) throw new RangeArgumentError('jitterUs', p.jitterUs, 'a number of microseconds >= 0');
}
