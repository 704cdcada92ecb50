import { RangeArgumentError } from '../core/errors.js';
import type { Micros } from '../core/time.js';
import { parsePrefix, prefixContains, type Prefix } from '../wire/ip.js';
import { parseScanReport } from '../wire/scan-report.js';

/** A client whose reports the gateway takes: its name and the prefixes its reports may come from. */
export interface ScanClient {
  id: string;
  /** CIDR prefixes; empty: from any address. */
  prefixes: readonly string[];
}

/** Where a report taken goes (the dependence graph): returns whether the graph changed. */
export type ScanDelivery = (client: string, aps: ReadonlyMap<string, number>, now: Micros) => boolean;

export interface ScanReportsOptions {
  /** With a key, only reports sealed with it are taken (docs/gateway.md). */
  key?: Uint8Array;
  /** A client's reports taken at most this often (µs); the others are dropped as `rateLimited`. */
  minIntervalUs: Micros;
}

/** What became of one datagram. */
/** `graph-refused`: a report that would make a dependence graph the slices cannot be computed on (too many independent sets): the graph stays as it was. */
export type ScanVerdict = 'taken' | 'malformed' | 'bad-mac' | 'unknown-client' | 'wrong-source' | 'stale' | 'rate-limited' | 'graph-refused';

export interface ScanReportsCounters {
  taken: number;
  graphChanges: number;
  malformed: number;
  badMac: number;
  unknownClient: number;
  wrongSource: number;
  stale: number;
  rateLimited: number;
  graphRefused: number;
}

/** What the control API shows of a gateway's scan-report listener. */
export interface GatewayScanView {
  /** address:port */
  listening: string;
  /** By cause; `oversized`: datagrams longer than any report. */
  counters: ScanReportsCounters & { oversized: number };
  latest: ScanLatest[];
}

/** A client's latest report taken. */
export interface ScanLatest {
  client: string;
  atUs: Micros;
  boot: number;
  seq: number;
  aps: Record<string, number>;
}

interface ClientState {
  prefixes: Prefix[];
  boot: number;
  seq: number;
  atUs: Micros | undefined;
  aps: ReadonlyMap<string, number> | undefined;
}

/**
 * The gateway's side of the scan reports: each datagram is parsed, checked
 * and, when taken, handed to the dependence graph (`deliver`). A report is taken only
 * from a configured client, from an address in that client's prefixes,
 * newer than the last one taken from it (boot, then seq: a restarted
 * client counts as newer), no sooner than `minIntervalUs` after it, and,
 * when the gateway has a key, sealed with it. Anything else is counted by
 * its cause and changes nothing, so that a forged or replayed report cannot
 * reshape the slices and a flood costs a parse per datagram, not a
 * recomputation.
 */
export class ScanReports {
  readonly counters: ScanReportsCounters = {
    taken: 0,
    graphChanges: 0,
    malformed: 0,
    badMac: 0,
    unknownClient: 0,
    wrongSource: 0,
    stale: 0,
    rateLimited: 0,
    graphRefused: 0,
  };
  private readonly clients = new Map<string, ClientState>();

  constructor(
    clients: readonly ScanClient[],
    private readonly options: ScanReportsOptions,
    private readonly deliver: ScanDelivery,
  ) {
    if (!(Number.isSafeInteger(options.minIntervalUs) && options.minIntervalUs >= 0))
      throw new RangeArgumentError('minIntervalUs', options.minIntervalUs, 'an integer number of µs >= 0');
    clients.forEach((c, i) => {
      if (c.id === '') throw new RangeArgumentError(`clients[${i}].id`, c.id, 'a non-empty name');
      if (this.clients.has(c.id)) throw new RangeArgumentError(`clients[${i}].id`, c.id, 'a client listed once');
      const prefixes = c.prefixes.map((text, k) => {
        const p = parsePrefix(text);
        if (!p.ok) throw new RangeArgumentError(`clients[${i}].prefixes[${k}]`, text, `a prefix in CIDR notation: ${p.error}`);
        return p.value;
      });
      this.clients.set(c.id, { prefixes, boot: 0, seq: 0, atUs: undefined, aps: undefined });
    });
  }

  /**
   * One datagram from `from` (the sender's IP address, 4 or 16 bytes) at
   * `now`. Returns what became of it and whether the dependence graph changed
   * (then the slices are due again).
   */
  receive(bytes: Uint8Array, from: Uint8Array, now: Micros): { verdict: ScanVerdict; changed: boolean } {
    const r = parseScanReport(bytes, this.options.key);
    if (!r.ok) return this.refuse(r.error.code === 'WIRE_BAD_CHECKSUM' ? 'bad-mac' : 'malformed');
    const m = r.value;
    const c = this.clients.get(m.client);
    if (c === undefined) return this.refuse('unknown-client');
    if (c.prefixes.length > 0 && !c.prefixes.some((p) => prefixContains(p, from))) return this.refuse('wrong-source');
    if (c.atUs !== undefined && (m.boot < c.boot || (m.boot === c.boot && m.seq <= c.seq))) return this.refuse('stale');
    if (c.atUs !== undefined && now - c.atUs < this.options.minIntervalUs) return this.refuse('rate-limited');
    // Its count is used up whatever the graph makes of it: a replay of a refused report is stale, and it waits its interval too.
    c.boot = m.boot;
    c.seq = m.seq;
    c.atUs = now;
    let changed: boolean;
    try {
      changed = this.deliver(m.client, m.aps, now);
    } catch (e) {
      if (!(e instanceof RangeArgumentError)) throw e;
      return this.refuse('graph-refused');
    }
    c.aps = m.aps;
    this.counters.taken++;
    if (changed) this.counters.graphChanges++;
    return { verdict: 'taken', changed };
  }

  /**
   * Takes over what `old` knew (a new configuration of the same gateway): its
   * counters, and the latest report of each client still configured, so that
   * a report older than it stays refused.
   */
  carryFrom(old: ScanReports): void {
    Object.assign(this.counters, old.counters);
    for (const [id, c] of old.clients) {
      const mine = this.clients.get(id);
      if (mine === undefined) continue;
      mine.boot = c.boot;
      mine.seq = c.seq;
      mine.atUs = c.atUs;
      mine.aps = c.aps;
    }
  }

  /** Each client's latest report taken, in the order configured. */
  latest(): ScanLatest[] {
    const out: ScanLatest[] = [];
    for (const [client, c] of this.clients)
      if (c.atUs !== undefined && c.aps !== undefined) out.push({ client, atUs: c.atUs, boot: c.boot, seq: c.seq, aps: Object.fromEntries(c.aps) });
    return out;
  }

  private refuse(verdict: Exclude<ScanVerdict, 'taken'>): { verdict: ScanVerdict; changed: boolean } {
    const key = (
      {
        malformed: 'malformed',
        'bad-mac': 'badMac',
        'unknown-client': 'unknownClient',
        'wrong-source': 'wrongSource',
        stale: 'stale',
        'rate-limited': 'rateLimited',
        'graph-refused': 'graphRefused',
      } as const
    )[verdict];
    this.counters[key]++;
    return { verdict, changed: false };
  }
}

/** Bytes a scan-report key may have. */
export const SCAN_KEY_MIN_BYTES = 16;
export const SCAN_KEY_MAX_BYTES = 64;

/** A scan-report key from its text: hex, 16-64 bytes, surrounding white space allowed. Throws RangeArgumentError naming `what`, never the key. */
export function parseScanKey(text: string, what: string): Uint8Array {
  const hex = text.trim();
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex) || hex.length / 2 < SCAN_KEY_MIN_BYTES || hex.length / 2 > SCAN_KEY_MAX_BYTES)
    throw new RangeArgumentError(what, '(not shown)', `a key of ${SCAN_KEY_MIN_BYTES}-${SCAN_KEY_MAX_BYTES} bytes in hex`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/**
 * The mesh router an AP name in a scan report stands for: a name in `aps`
 * (a BSSID, say), else `rN` or `N` for router N; undefined for an AP
 * outside the mesh.
 */
export function routerOfAp(name: string, aps: ReadonlyMap<string, number>): number | undefined {
  const alias = aps.get(name);
  if (alias !== undefined) return alias;
  const m = /^r?(0|[1-9][0-9]{0,4})$/.exec(name);
  const n = m ? Number(m[1]) : NaN;
  return n <= 65534 ? n : undefined;
}
