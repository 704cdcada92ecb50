import { RangeArgumentError } from '../core/errors.js';

/**
 * The link-dependence graph of ADWISER v2 (seeds/003, Section 4): two
 * clients are dependent when their downlinks cannot be served at the same
 * time. A pure core: configuration and scan reports in, the graph out.
 *
 * - Same AP: "When two clients are associated with the same AP, we declare
 *   the corresponding links to be dependent."
 * - Type II: the clients' APs interfere with each other. Time invariant, from
 *   the configuration: a list of interfering AP pairs, or AP positions with an
 *   interference range (APs at most that far apart interfere).
 * - Type III: the APs do not interfere, but a client is within the other AP's
 *   interference range. Inferred from the clients' scan reports with the
 *   paper's heuristic (Algorithm 1, whose pseudo-code did not survive in the
 *   seed's text; its prose): clients S1 (on A1) and S2 (on A2) are dependent
 *   "if P11/P21 < p_th or P22/P12 < p_th", P_kj being the received strength of
 *   AP k's beacon reported by client j.
 * - Type I (client-to-client interference only) is ignored, as in the paper.
 *
 * Readings (docs/gateway.md): reports give beacon strengths in dBm, as scans
 * do; the ratio is taken between linear powers (mW), so with p_th = 0.3 a
 * client counts as dependent when it hears the other AP's beacon more than
 * 10·log10(1/0.3) ≈ 5.2 dB above its own AP's. A beacon a client did not
 * report counts as not heard (that side of the test does not hold), and a
 * client with no report yet has no Type III dependence.
 */

/** A client of the gateway and the AP (mesh router) it is associated with. */
export interface GatewayClient {
  id: string;
  ap: string;
}

/** An AP's position (metres), for Type II from geometry. */
export interface ApPosition {
  ap: string;
  x: number;
  y: number;
}

/** The time-invariant part: clients, their APs and which APs interfere. */
export interface DependenceConfig {
  clients: readonly GatewayClient[];
  /** AP pairs that interfere with each other (Type II). */
  interferingAps?: readonly (readonly [string, string])[];
  /** AP positions; with `interferenceRangeM`, APs at most that far apart interfere (Type II). */
  apPositions?: readonly ApPosition[];
  interferenceRangeM?: number;
  /** The Type III threshold p_th, > 0. Paper: 0.3. */
  pTh?: number;
}

/** The paper's p_th. */
export const ADWISER_P_TH = 0.3;

/** Why two clients are dependent. */
export type DependenceKind = 'same-ap' | 'type-ii' | 'type-iii';

/** One edge of the graph: clients by index (a < b) and why. */
export interface DependenceEdge {
  a: number;
  b: number;
  kind: DependenceKind;
}

/** A client's scan: the beacon strength of each AP it heard (dBm). */
export type ScanReport = ReadonlyMap<string, number>;

/** The graph as the slice computation takes it: clients in configuration order, edges with a < b sorted. */
export interface DependenceGraph {
  clients: readonly string[];
  edges: readonly DependenceEdge[];
}

const dbmToMw = (dbm: number): number => 10 ** (dbm / 10);

/** Type III between client i (on AP ai) and client j (on AP aj), per the heuristic. */
export function typeIIIDependent(ai: string, aj: string, ri: ScanReport | undefined, rj: ScanReport | undefined, pTh: number): boolean {
  const side = (r: ScanReport | undefined, own: string, other: string): boolean => {
    const pOwn = r?.get(own);
    const pOther = r?.get(other);
    if (pOwn === undefined || pOther === undefined) return false;
    return dbmToMw(pOwn) / dbmToMw(pOther) < pTh;
  };
  return side(ri, ai, aj) || side(rj, aj, ai);
}

/**
 * The dependence graph of a set of clients, kept from their latest scan
 * reports. `report` takes a client's new scan and says whether the graph
 * changed (the set of dependent pairs or their kinds), which is when the
 * slices must be computed again.
 */
export class DependenceTracker {
  readonly clients: readonly string[];
  readonly pTh: number;
  private readonly apOf: readonly string[];
  private readonly index = new Map<string, number>();
  private readonly apsInterfere = new Set<string>();
  private readonly reports: (ScanReport | undefined)[];
  private current: DependenceGraph;

  constructor(config: DependenceConfig) {
    const pTh = config.pTh ?? ADWISER_P_TH;
    if (!(Number.isFinite(pTh) && pTh > 0)) throw new RangeArgumentError('pTh', pTh, 'a finite number > 0');
    this.pTh = pTh;
    if (config.clients.length === 0) throw new RangeArgumentError('clients', [], 'at least one client');
    const aps = new Set<string>();
    config.clients.forEach((c, i) => {
      if (c.id === '') throw new RangeArgumentError(`clients[${i}].id`, c.id, 'a non-empty name');
      if (c.ap === '') throw new RangeArgumentError(`clients[${i}].ap`, c.ap, 'a non-empty AP name');
      if (this.index.has(c.id)) throw new RangeArgumentError(`clients[${i}].id`, c.id, 'a name no other client has');
      this.index.set(c.id, i);
      aps.add(c.ap);
    });
    this.clients = config.clients.map((c) => c.id);
    this.apOf = config.clients.map((c) => c.ap);
    (config.interferingAps ?? []).forEach(([a, b], i) => {
      for (const ap of [a, b])
        if (!aps.has(ap)) throw new RangeArgumentError(`interferingAps[${i}]`, [a, b], `APs that clients are associated with (no client is on "${ap}")`);
      if (a === b) throw new RangeArgumentError(`interferingAps[${i}]`, [a, b], 'two different APs');
      this.apsInterfere.add(pairKey(a, b));
    });
    const positions = config.apPositions ?? [];
    if (positions.length > 0) {
      const range = config.interferenceRangeM;
      if (range === undefined || !(Number.isFinite(range) && range >= 0))
        throw new RangeArgumentError('interferenceRangeM', range, 'a finite number of metres >= 0 (required with apPositions)');
      const seen = new Set<string>();
      positions.forEach((p, i) => {
        if (seen.has(p.ap)) throw new RangeArgumentError(`apPositions[${i}].ap`, p.ap, 'an AP given one position');
        seen.add(p.ap);
        if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) throw new RangeArgumentError(`apPositions[${i}]`, p, 'finite x and y (metres)');
      });
      for (let i = 0; i < positions.length; i++)
        for (let j = i + 1; j < positions.length; j++)
          if (Math.hypot(positions[i]!.x - positions[j]!.x, positions[i]!.y - positions[j]!.y) <= range)
            this.apsInterfere.add(pairKey(positions[i]!.ap, positions[j]!.ap));
    }
    this.reports = this.clients.map(() => undefined);
    this.current = this.compute();
  }

  /** The graph as of the latest reports. */
  get graph(): DependenceGraph {
    return this.current;
  }

  /** Whether two APs interfere (Type II). */
  apsInterfering(a: string, b: string): boolean {
    return this.apsInterfere.has(pairKey(a, b));
  }

  /**
   * A client's latest scan (AP name to beacon strength in dBm); replaces its
   * previous one. Returns whether the graph changed.
   */
  report(clientId: string, scan: ScanReport): boolean {
    const i = this.index.get(clientId);
    if (i === undefined) throw new RangeArgumentError('report.client', clientId, `one of the clients (${this.clients.join(', ')})`);
    for (const [ap, dbm] of scan) if (!Number.isFinite(dbm)) throw new RangeArgumentError(`report.${clientId}.${ap}`, dbm, 'a finite beacon strength in dBm');
    this.reports[i] = new Map(scan);
    const next = this.compute();
    const changed = !sameEdges(next.edges, this.current.edges);
    if (changed) this.current = next;
    return changed;
  }

  /** A client's latest scan, or undefined before its first. */
  reportOf(clientId: string): ScanReport | undefined {
    const i = this.index.get(clientId);
    return i === undefined ? undefined : this.reports[i];
  }

  /** Puts back a client's earlier scan (undefined: none yet), as `report` would take it; returns whether the graph changed. */
  restore(clientId: string, scan: ScanReport | undefined): boolean {
    const i = this.index.get(clientId);
    if (i === undefined) throw new RangeArgumentError('restore.client', clientId, `one of the clients (${this.clients.join(', ')})`);
    this.reports[i] = scan;
    const next = this.compute();
    const changed = !sameEdges(next.edges, this.current.edges);
    if (changed) this.current = next;
    return changed;
  }

  private compute(): DependenceGraph {
    const edges: DependenceEdge[] = [];
    const n = this.clients.length;
    for (let a = 0; a < n; a++)
      for (let b = a + 1; b < n; b++) {
        const apA = this.apOf[a]!;
        const apB = this.apOf[b]!;
        let kind: DependenceKind | undefined;
        if (apA === apB) kind = 'same-ap';
        else if (this.apsInterfere.has(pairKey(apA, apB))) kind = 'type-ii';
        else if (typeIIIDependent(apA, apB, this.reports[a], this.reports[b], this.pTh)) kind = 'type-iii';
        if (kind !== undefined) edges.push({ a, b, kind });
      }
    return { clients: this.clients, edges };
  }
}

const pairKey = (a: string, b: string): string => JSON.stringify(a < b ? [a, b] : [b, a]);

function sameEdges(x: readonly DependenceEdge[], y: readonly DependenceEdge[]): boolean {
  return x.length === y.length && x.every((e, i) => e.a === y[i]!.a && e.b === y[i]!.b && e.kind === y[i]!.kind);
}
