import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { parseJsonText } from '../core/json.js';
import { DependenceTracker, type DependenceConfig, type DependenceGraph } from './dependence.js';
import { computeSlices, type SliceSchedule } from './slices.js';

/**
 * A gateway plan: the clients, their APs, the Type II configuration and the
 * clients' latest scan reports in (JSON text), the dependence graph and the
 * time slices out. What `cogmesh gateway plan` runs; docs/gateway.md shows
 * the file.
 */

/** A client as the plan file gives it. */
export interface PlanClient {
  id: string;
  ap: string;
  /** Weight w_j of its utility (default 1). */
  weight: number;
  /** Its rate over the air (Mbps), if known: for throughput and utility in rate terms only. */
  rateMbps?: number;
}

export interface PlanInput {
  clients: PlanClient[];
  dependence: DependenceConfig;
  /** Each scan report: client id and AP name to beacon strength (dBm), in file order. */
  reports: { client: string; beacons: Map<string, number> }[];
}

export interface GatewayPlan {
  input: PlanInput;
  graph: DependenceGraph;
  schedule: SliceSchedule;
  /** Σ w_j·log(r_j·x_j) when every client has a rate, else undefined. */
  rateUtility: number | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const KEYS = new Set(['clients', 'interferingAps', 'apPositions', 'interferenceRangeM', 'pTh', 'reports']);

/** The plan file's text as input; every problem found is named with its path (ConfigError). */
export function parsePlanText(text: string, source = 'gateway plan'): PlanInput {
  const parsed = parseJsonText(text);
  if (!parsed.ok) throw new ConfigError([{ path: '/', value: undefined, expected: `JSON (${parsed.error.message})` }], source);
  const doc = parsed.value;
  const issues: ConfigIssue[] = [];
  const issue = (path: string, value: unknown, expected: string): void => void issues.push({ path, value, expected });
  if (!isObject(doc)) throw new ConfigError([{ path: '/', value: doc, expected: 'an object with "clients"' }], source);
  for (const k of Object.keys(doc)) if (!KEYS.has(k)) issue(`/${k}`, doc[k], `no such field (known: ${[...KEYS].join(', ')})`);

  const clients: PlanClient[] = [];
  const ids = new Set<string>();
  const aps = new Set<string>();
  if (!Array.isArray(doc.clients) || doc.clients.length === 0) issue('/clients', doc.clients, 'a non-empty array of {"id", "ap"}');
  else
    doc.clients.forEach((c: unknown, i) => {
      const at = `/clients/${i}`;
      if (!isObject(c)) return issue(at, c, 'an object {"id", "ap", "weight"?, "rateMbps"?}');
      if (!isName(c.id)) return issue(`${at}/id`, c.id, 'a non-empty string');
      if (ids.has(c.id)) return issue(`${at}/id`, c.id, 'a name no other client has');
      if (!isName(c.ap)) return issue(`${at}/ap`, c.ap, 'the name of the AP (mesh router) it is associated with');
      const weight = c.weight ?? 1;
      if (!(typeof weight === 'number' && Number.isFinite(weight) && weight > 0)) return issue(`${at}/weight`, c.weight, 'a number > 0');
      if (c.rateMbps !== undefined && !(typeof c.rateMbps === 'number' && Number.isFinite(c.rateMbps) && c.rateMbps > 0))
        return issue(`${at}/rateMbps`, c.rateMbps, 'a rate in Mbps > 0');
      for (const k of Object.keys(c)) if (!['id', 'ap', 'weight', 'rateMbps'].includes(k)) issue(`${at}/${k}`, c[k], 'no such field');
      ids.add(c.id);
      aps.add(c.ap);
      clients.push({ id: c.id, ap: c.ap, weight, ...(c.rateMbps !== undefined ? { rateMbps: c.rateMbps } : {}) });
    });

  const interferingAps: [string, string][] = [];
  if (doc.interferingAps !== undefined) {
    if (!Array.isArray(doc.interferingAps)) issue('/interferingAps', doc.interferingAps, 'an array of AP pairs ["ap1", "ap2"]');
    else
      doc.interferingAps.forEach((p: unknown, i) => {
        const at = `/interferingAps/${i}`;
        if (!Array.isArray(p) || p.length !== 2 || !isName(p[0]) || !isName(p[1]) || p[0] === p[1]) return issue(at, p, 'a pair of two different AP names');
        for (const ap of p as string[]) if (!aps.has(ap)) return issue(at, p, `APs of the clients (no client is on ${JSON.stringify(ap)})`);
        interferingAps.push([p[0], p[1]]);
      });
  }

  const apPositions: { ap: string; x: number; y: number }[] = [];
  if (doc.apPositions !== undefined) {
    if (!Array.isArray(doc.apPositions)) issue('/apPositions', doc.apPositions, 'an array of {"ap", "x", "y"} (metres)');
    else
      doc.apPositions.forEach((p: unknown, i) => {
        const at = `/apPositions/${i}`;
        if (!isObject(p) || !isName(p.ap) || typeof p.x !== 'number' || !Number.isFinite(p.x) || typeof p.y !== 'number' || !Number.isFinite(p.y))
          return issue(at, p, 'an object {"ap", "x", "y"} with finite x and y (metres)');
        if (!aps.has(p.ap)) return issue(`${at}/ap`, p.ap, 'an AP of the clients');
        if (apPositions.some((q) => q.ap === p.ap)) return issue(`${at}/ap`, p.ap, 'an AP given one position');
        apPositions.push({ ap: p.ap, x: p.x, y: p.y });
      });
    if (!(typeof doc.interferenceRangeM === 'number' && Number.isFinite(doc.interferenceRangeM) && doc.interferenceRangeM >= 0))
      issue('/interferenceRangeM', doc.interferenceRangeM, 'a distance in metres >= 0 (required with apPositions)');
  } else if (doc.interferenceRangeM !== undefined) issue('/interferenceRangeM', doc.interferenceRangeM, 'given only with apPositions');

  if (doc.pTh !== undefined && !(typeof doc.pTh === 'number' && Number.isFinite(doc.pTh) && doc.pTh > 0))
    issue('/pTh', doc.pTh, 'a number > 0 (the paper: 0.3)');

  const reports: PlanInput['reports'] = [];
  if (doc.reports !== undefined) {
    if (!Array.isArray(doc.reports)) issue('/reports', doc.reports, 'an array of {"client", "beacons": {AP: dBm}}');
    else
      doc.reports.forEach((r: unknown, i) => {
        const at = `/reports/${i}`;
        if (!isObject(r)) return issue(at, r, 'an object {"client", "beacons": {AP: dBm}}');
        if (!isName(r.client) || !ids.has(r.client)) return issue(`${at}/client`, r.client, 'one of the clients');
        if (!isObject(r.beacons)) return issue(`${at}/beacons`, r.beacons, 'an object from AP name to beacon strength (dBm)');
        const beacons = new Map<string, number>();
        for (const [ap, dbm] of Object.entries(r.beacons)) {
          if (!aps.has(ap)) issue(`${at}/beacons/${ap}`, dbm, 'a beacon of an AP of the clients');
          else if (!(typeof dbm === 'number' && Number.isFinite(dbm) && dbm <= 30 && dbm >= -150))
            issue(`${at}/beacons/${ap}`, dbm, 'a beacon strength in dBm, in [-150, 30]');
          else beacons.set(ap, dbm);
        }
        reports.push({ client: r.client, beacons });
      });
  }
  if (issues.length > 0) throw new ConfigError(issues, source);
  const dependence: DependenceConfig = {
    clients: clients.map(({ id, ap }) => ({ id, ap })),
    interferingAps,
    ...(apPositions.length > 0 ? { apPositions, interferenceRangeM: doc.interferenceRangeM as number } : {}),
    ...(doc.pTh !== undefined ? { pTh: doc.pTh as number } : {}),
  };
  return { clients, dependence, reports };
}

/** The graph from the configuration and the reports (in order), and the slices on it. */
export function planGateway(input: PlanInput, options: { tolerance?: number; maxSets?: number } = {}): GatewayPlan {
  const tracker = new DependenceTracker(input.dependence);
  for (const r of input.reports) tracker.report(r.client, r.beacons);
  const graph = tracker.graph;
  // A graph with more maximal independent sets than maxSets is refused (RangeArgumentError on maxSets).
  const schedule = computeSlices(
    graph.clients.length,
    graph.edges.map((e) => [e.a, e.b] as const),
    { weights: input.clients.map((c) => c.weight), ...options },
  );
  const rates = input.clients.map((c) => c.rateMbps);
  const rateUtility = rates.every((r) => r !== undefined)
    ? input.clients.reduce((s, c, j) => s + c.weight * Math.log(c.rateMbps! * schedule.clientShares[j]!), 0)
    : undefined;
  return { input, graph, schedule, rateUtility };
}
