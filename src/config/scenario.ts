import { DEFAULT_MEDIUM_PARAMS, phy80211b, phy80211g, type MediumParams, type PhyParams } from '../../radio/medium/index.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import stableStringify from 'fast-json-stable-stringify';
import { ism2g4 } from '../../radio/channels.js';
import type { PnConfig, PnPatternConfig, BandConfig, NodeConfig } from './types.js';
import { configFilePath, nodeSchema, parseNodeConfig, withoutSecretValues } from './load.js';
import { cloneJson, copyJson, isObject, overridePaths, readJsonFile, schemaChecker, type Schema } from '../core/schema.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { CcName } from '../tcp/cc/types.js';
import { ipText } from '../vnf/flow.js';
import type { FlowPattern } from '../vnf/types.js';
import type { AccMode } from '../vnf/tcp-acc.js';
import { meshIp } from '../wire/addresses.js';
import { DATA_LABELLED_HEADER_BYTES } from '../wire/codec.js';

/** A simulation scenario as validated against `config/scenario.schema.json`, defaults filled in. */
export interface Scenario {
  name: string;
  description: string;
  seed: number;
  seeds: number;
  durationS: number;
  topology: Topology;
  /** Hosts behind wired links to routers: host k is node `nodeCount(topology) + k`. */
  hosts: WiredHost[];
  medium: MediumScenario;
  pn: {
    noiseFigureDb: number;
    sources: PnSource[];
    phases: Array<{ durationS: number; sources: PnSource[] }>;
    repeat: boolean;
  };
  /** How the routers' energy detectors see the band: synthesised IQ, or window energies drawn from their distribution. */
  sensing: { model: 'iq' | 'statistical' };
  /** Partial node configuration shared by every router. */
  node: Record<string, unknown>;
  nodeOverrides: Record<string, Record<string, unknown>>;
  flows: FlowSpec[];
  events: ScenarioEvent[];
  acc: AccScenario;
  controller: { enabled: boolean; hysteresis: number; statusPeriodMs: number };
  /** R3's message authentication with keys made from the seed. */
  auth: { enabled: boolean };
  /** TCP checksums at the simulated hosts: only where something else reads the bytes ('auto'), or always. */
  checksums: { tcp: 'auto' | 'always' };
  impairments: Array<{ from: number; to: number; lossProbability: number; reorderProbability: number; reorderDelayMs: number }>;
}

/**
 * A node with no radio behind a full-duplex point-to-point wired link to
 * router `router` (its gateway): a far host behind a WAN. Each direction
 * of the link has the rate, delay and drop-tail queue given here.
 */
export interface WiredHost {
  name: string;
  router: number;
  rateMbps: number;
  delayMs: number;
  queuePackets: number;
  queueBytes: number;
}

/** TCP-ACC on the routers of the TCP flows' paths. */
export interface AccScenario {
  /** none, every, every-K, or nodes (the routers listed in `nodes`). */
  placement: string;
  nodes: number[];
  mode: AccMode;
  bufferBytes: number;
}

/** A router fails at `atS`, for the rest of the run. */
export interface ScenarioEvent {
  atS: number;
  node: number;
  action: 'fail';
}

export type Topology =
  | { kind: 'chain'; nodes: number; spacingM: number }
  | { kind: 'dumbbell'; spacingM: number }
  | { kind: 'grid'; rows: number; cols: number; spacingM: number }
  | { kind: 'random'; nodes: number; widthM: number; heightM: number }
  | { kind: 'positions'; nodes: Array<{ xM: number; yM: number }> };

export interface MediumScenario {
  phy: '802.11b' | '802.11g';
  dataRateMbps: number;
  txRangeM: number;
  csRangeM: number;
  captureDb: number;
  capture: 'strongest' | 'first';
  adjacentChannelInterference: boolean;
  pnLossProbability: number;
  pnCarrierSense: boolean;
  rtsCts: boolean;
  controlChannelPn: boolean;
}

export interface PnSource {
  channels: 'all' | number[];
  powerDbm: number;
  pattern: PnPatternConfig;
}

export type FlowSpec = UdpFlowSpec | TcpFlowSpec;

export interface UdpFlowSpec {
  kind: 'udp-cbr';
  src: number;
  dst: number | 'last';
  /** IPv6 flow label of its packets (its QoS class); 0: none. */
  label: number;
  rateMbps: number;
  packetBytes: number;
  startS: number;
  stopS: number;
}

/** A bulk TCP transfer; `tcp` holds both ends' parameters (defaults mirror ns-2's Agent/TCP and TCPSink). */
export interface TcpFlowSpec {
  kind: 'tcp-bulk';
  src: number;
  dst: number | 'last';
  /** IPv6 flow label of both directions' packets; 0: none. */
  label: number;
  variant: CcName;
  bytes: number;
  port: number;
  startS: number;
  stopS: number;
  tcp: {
    mss: number;
    receiveBufferBytes: number;
    sendBufferBytes: number;
    delayedAckMs: number;
    timestamps: boolean;
    windowScale: boolean;
    initialWindowSegments: number;
    initialRtoMs: number;
    minRtoMs: number;
    maxRtoMs: number;
    maxRetransmits: number;
    /** HyStart++ (RFC 9406); absent: the variant's default (on with cubic). */
    hystart?: boolean;
    /** Proportional Rate Reduction (RFC 6937) in fast recovery. */
    prr: boolean;
    /**
     * F-RTO (RFC 5682), Eifel detection (RFC 3522), D-SACK (RFC 2883, RFC
     * 3708) and RACK-TLP (RFC 8985); see TcpConfig. Absent: off at the
     * flow's ends (ns-2's agents have none of them), the stack's default in
     * TCP-ACC's legs (DEFAULT_TCP_CONFIG).
     */
    frto?: boolean;
    eifel?: boolean;
    dsack?: boolean;
    rack?: boolean;
  };
}

export const scenarioSchemaPath: string = configFilePath('scenario.schema.json');
export const scenarioSchema: Readonly<Schema> = JSON.parse(readFileSync(scenarioSchemaPath, 'utf8')) as Schema;
const check = schemaChecker(scenarioSchema, [nodeSchema]);

/** Options that the command line folds into a scenario before it is checked. */
export interface ScenarioOverrides {
  /** `path=value` overrides of any scenario field. */
  set?: readonly string[];
  seed?: number;
  seeds?: number;
  durationS?: number;
  /** Chain length in hops (a chain scenario only). */
  hops?: number;
  /** Every flow becomes a bulk TCP flow with this congestion control (a TCP flow keeps its other settings). */
  tcp?: CcName;
  /** false: every router keeps R1 on one fixed channel with no sensing (PNs stay). */
  cognitive?: boolean;
  /** false: no primary-node traffic at all. */
  pn?: boolean;
  /** The routers' sensing model (scenario field sensing.model). */
  sensingModel?: string;
  /** TCP-ACC placement: none, every, every-K, or a list of routers ("1,3"). */
  acc?: string;
  /** true: the CETT controller places the flows and their TCP-ACCs. */
  controller?: boolean;
  accMode?: AccMode;
  /** true: the hosts' own TCP crosses the routers (a testbed with real IP), so TCP-ACC has flows without a tcp-bulk one. */
  hostsTcp?: boolean;
}

/** R1's fixed channel with `cognitive: false` when the scenario names none: 6, or 11 if the control channel is 6. */
export function fixedChannelFor(node: Record<string, unknown>): number {
  const channel = isObject(node.channel) ? node.channel : {};
  if (typeof channel.initialChannel === 'number' && channel.initialChannel > 0) return channel.initialChannel;
  const radios = isObject(node.radios) ? node.radios : {};
  const r3 = isObject(radios.R3) ? radios.R3.channel : undefined;
  return r3 === 6 ? 11 : 6;
}

/** Folds --tcp, --cognitive, --pn and --sensing-model into a scenario document whose defaults are filled in. */
function applyModes(doc: Record<string, unknown>, o: ScenarioOverrides): void {
  if (o.pn === false && isObject(doc.pn)) {
    doc.pn.sources = [];
    doc.pn.phases = [];
  }
  if (o.cognitive === false) {
    if (!isObject(doc.node)) doc.node = {};
    const node = doc.node as Record<string, unknown>;
    const fixed = fixedChannelFor(node);
    node.channel = { ...(isObject(node.channel) ? node.channel : {}), cognitive: false, initialChannel: fixed };
  }
  // Any string goes in: the schema check that follows refuses a bad one at /sensing/model.
  if (o.sensingModel !== undefined) doc.sensing = { ...(isObject(doc.sensing) ? doc.sensing : {}), model: o.sensingModel };
  if (o.controller !== undefined) doc.controller = { ...(isObject(doc.controller) ? doc.controller : {}), enabled: o.controller };
  if (o.acc !== undefined || o.accMode !== undefined) {
    const acc: Record<string, unknown> = { ...(isObject(doc.acc) ? doc.acc : {}) };
    if (o.acc !== undefined) {
      if (/^\s*\d+(\s*,\s*\d+)*\s*$/.test(o.acc)) {
        acc.placement = 'nodes';
        acc.nodes = o.acc.split(',').map((v) => Number(v.trim()));
      } else acc.placement = o.acc;
    }
    if (o.accMode !== undefined) acc.mode = o.accMode;
    doc.acc = acc;
  }
  if (o.tcp !== undefined && Array.isArray(doc.flows)) {
    doc.flows = doc.flows.map((f: unknown) => {
      if (!isObject(f)) return f;
      if (f.kind === 'tcp-bulk') return { ...f, variant: o.tcp };
      const tcp: Record<string, unknown> = {};
      if (typeof f.packetBytes === 'number') tcp.mss = Math.max(64, f.packetBytes);
      return { kind: 'tcp-bulk', src: f.src, dst: f.dst, startS: f.startS, stopS: f.stopS, variant: o.tcp, tcp };
    });
  }
}

/**
 * Validates a scenario (schema, then what the schema cannot say: flows name
 * existing routers, ranges, each router's configuration) and returns it with
 * every default filled in. The input is not changed. Refused whole with a
 * ConfigError that lists every problem with its path.
 */
export function parseScenario(input: unknown, source = 'scenario', o: ScenarioOverrides = {}): Scenario {
  let doc = cloneJson(input, source);
  const issues: ConfigIssue[] = [];
  // Defaults first, so that an override may name a field the file left out.
  check(doc);
  if (isObject(doc)) applyModes(doc, o);
  check(doc);
  if (o.set && o.set.length > 0) {
    const r = overridePaths(doc, o.set, { create: true });
    issues.push(...r.issues);
    doc = r.doc;
  }
  if (isObject(doc)) {
    if (o.seed !== undefined) doc.seed = o.seed;
    if (o.seeds !== undefined) doc.seeds = o.seeds;
    if (o.durationS !== undefined) doc.durationS = o.durationS;
    if (o.hops !== undefined) {
      const topo = doc.topology;
      if (isObject(topo) && topo.kind === 'chain') topo.nodes = o.hops + 1;
      else issues.push({ path: '/topology/kind', value: isObject(topo) ? topo.kind : topo, expected: '"chain" (--hops sets the length of a chain)' });
    }
  }
  if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), source);
  issues.push(...check(doc));
  if (issues.length === 0) issues.push(...semanticIssues(doc as Scenario, o.hostsTcp === true));
  if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), source);
  return doc as Scenario;
}

/**
 * A bulk TCP flow with `variant` to `port` and the scenario schema's
 * defaults for the rest (both ends' TCP parameters): a router daemon's test
 * flows take the very settings a simulated flow does.
 */
export function tcpFlowSpec(variant: CcName, port: number): TcpFlowSpec {
  const sc = parseScenario({ topology: { kind: 'chain', nodes: 2 }, flows: [{ kind: 'tcp-bulk', src: 0, dst: 1, variant, port }] }, 'traffic');
  return sc.flows[0] as TcpFlowSpec;
}

export async function loadScenario(path: string, o: ScenarioOverrides = {}): Promise<Scenario> {
  return parseScenario(await readJsonFile(path, 'scenario file'), path, o);
}

/**
 * A stable version of a scenario: the first 16 hex digits of the SHA-256 of
 * its canonical JSON (keys sorted) once every default is filled in, as
 * configVersion is for a node. Two files that describe the same runs (one
 * spelling a default out, one leaving it to the schema) have the same
 * version; a scenario holds no secrets, so nothing is left out.
 */
export function scenarioVersion(sc: Scenario): string {
  return createHash('sha256').update(stableStringify(sc)).digest('hex').slice(0, 16);
}

/** Number of routers a topology places. */
export function nodeCount(t: Topology): number {
  switch (t.kind) {
    case 'chain':
    case 'random':
      return t.nodes;
    case 'dumbbell':
      return 7;
    case 'grid':
      return t.rows * t.cols;
    case 'positions':
      return t.nodes.length;
  }
}

/** The routers' positions (m). A random topology is drawn from `seed` until it is connected within `txRangeM`. */
export function placeNodes(t: Topology, txRangeM: number, seed: number): Array<{ xM: number; yM: number }> {
  switch (t.kind) {
    case 'chain':
      return Array.from({ length: t.nodes }, (_, i) => ({ xM: i * t.spacingM, yM: 0 }));
    case 'grid': {
      const out: Array<{ xM: number; yM: number }> = [];
      for (let r = 0; r < t.rows; r++) for (let c = 0; c < t.cols; c++) out.push({ xM: c * t.spacingM, yM: r * t.spacingM });
      return out;
    }
    case 'dumbbell': {
      // Sources 0 and 1 both reach 2 (and not 3); 2-3-4 is the bottleneck; 4 reaches sinks 5 and 6.
      const d = t.spacingM;
      const h = d / 2;
      return [
        { xM: 0, yM: h },
        { xM: 0, yM: -h },
        { xM: d, yM: 0 },
        { xM: 2 * d, yM: 0 },
        { xM: 3 * d, yM: 0 },
        { xM: 4 * d, yM: h },
        { xM: 4 * d, yM: -h },
      ];
    }
    case 'positions':
      return t.nodes.map((p) => ({ xM: p.xM, yM: p.yM }));
    case 'random': {
      const rng = Rng.fromSeed(seed).fork('topology');
      for (let attempt = 0; attempt < 10000; attempt++) {
        const pts = Array.from({ length: t.nodes }, () => ({ xM: rng.next() * t.widthM, yM: rng.next() * t.heightM }));
        if (connected(pts, txRangeM)) return pts;
      }
      throw new ConfigError(
        [
          {
            path: '/topology',
            value: t,
            expected: `an area where ${t.nodes} routers placed at random are connected within ${txRangeM} m (10000 draws failed): make it smaller or add routers`,
          },
        ],
        'scenario',
      );
    }
  }
}

function connected(pts: ReadonlyArray<{ xM: number; yM: number }>, range: number): boolean {
  const seen = new Set<number>([0]);
  const stack = [0];
  while (stack.length > 0) {
    const i = stack.pop()!;
    for (let j = 0; j < pts.length; j++) {
      if (seen.has(j)) continue;
      if (Math.hypot(pts[i]!.xM - pts[j]!.xM, pts[i]!.yM - pts[j]!.yM) <= range) {
        seen.add(j);
        stack.push(j);
      }
    }
  }
  return seen.size === pts.length;
}

/** A flow's destination as a router number. */
export function flowDst(f: FlowSpec, nodes: number): number {
  return f.dst === 'last' ? nodes - 1 : f.dst;
}

/** The band every router hears: the scenario's PN sources expanded to one PN per channel. */
export function bandConfig(sc: Scenario, channels: number): BandConfig {
  const expand = (sources: PnSource[]): PnConfig[] =>
    sources.flatMap((s) =>
      (s.channels === 'all' ? Array.from({ length: channels }, (_, i) => i + 1) : s.channels).map((channel) => ({
        channel,
        powerDbm: s.powerDbm,
        pattern: structuredClone(s.pattern),
      })),
    );
  return {
    noiseFigureDb: sc.pn.noiseFigureDb,
    pn: expand(sc.pn.sources),
    phases: sc.pn.phases.map((p) => ({ durationS: p.durationS, pn: expand(p.sources) })),
    repeat: sc.pn.repeat,
  };
}

/** The air medium's parameters and PHY a scenario asks for. */
export function airOf(sc: Scenario): { params: MediumParams; phy: PhyParams } {
  const m = sc.medium;
  const phy = m.phy === '802.11b' ? phy80211b(m.dataRateMbps * 1e6) : phy80211g(m.dataRateMbps * 1e6);
  if (m.rtsCts) phy.rtsThresholdBytes = 0;
  return {
    params: {
      ...DEFAULT_MEDIUM_PARAMS,
      txRangeM: m.txRangeM,
      csRangeM: m.csRangeM,
      captureDb: m.captureDb,
      capture: m.capture,
      pnLossProbability: m.pnLossProbability,
      pnCarrierSense: m.pnCarrierSense,
    },
    phy,
  };
}

/**
 * Router configurations a scenario has had checked, by their document with
 * the seed left out: another seed's differs only in `node.seed`, a 32-bit
 * integer no rule reads, which every seed gives (`>>> 0`) in the schema's
 * range. A run of several seeds checks each router's configuration once
 * (a scenario of one seed keeps none: nothing would ask again). Keyed by
 * content, not by router: a scenario changed after a call is checked again.
 * What is kept is a copy the callers never see.
 */
const checkedRouterConfigs = new WeakMap<Scenario, Map<string, NodeConfig>>();

/**
 * The configuration of router `index`: node defaults, then the scenario's
 * shared `node` section, then its own override; id, name and seed are the
 * router's. Problems are reported at their path in the scenario.
 */
export function routerConfig(sc: Scenario, index: number, seed: number): NodeConfig {
  const own = sc.nodeOverrides[String(index)] ?? {};
  const merged = deepMerge(deepMerge({}, sc.node), own);
  const node = isObject(merged.node) ? merged.node : {};
  const nodeSeed = (seed * 1000003 + index) >>> 0;
  const ownNode = { ...node, id: index, name: `r${index}`, seed: 0 };
  merged.node = ownNode;
  // The document without its seed names the configuration among the scenario's checked ones (kept for several seeds only).
  const key = sc.seeds > 1 ? JSON.stringify(merged) : undefined;
  let checked = checkedRouterConfigs.get(sc);
  const known = key === undefined ? undefined : checked?.get(key);
  if (known !== undefined) {
    const cfg = copyJson(known);
    cfg.node.seed = nodeSeed;
    return cfg;
  }
  ownNode.seed = nodeSeed;
  try {
    const cfg = parseNodeConfig(merged, `router ${index}`);
    if (key !== undefined) {
      if (checked === undefined) checkedRouterConfigs.set(sc, (checked = new Map()));
      checked.set(key, copyJson(cfg));
    }
    return cfg;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const at = Object.hasOwn(sc.nodeOverrides, String(index)) ? `/nodeOverrides/${index}` : '/node';
    throw new ConfigError(
      e.issues.map((i) => ({ ...i, path: `${at}${i.path === '/' ? '' : i.path}` })),
      `scenario ${sc.name}, router ${index}`,
    );
  }
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? deepMerge(b, v) : structuredClone(v);
  }
  return out;
}

function semanticIssues(sc: Scenario, hostsTcp: boolean): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const n = nodeCount(sc.topology);
  if (sc.medium.csRangeM < sc.medium.txRangeM) {
    issues.push({ path: '/medium/csRangeM', value: sc.medium.csRangeM, expected: `at least medium.txRangeM (${sc.medium.txRangeM} m)` });
  }
  const b = sc.medium.phy === '802.11b';
  if (b !== [1, 2, 5.5, 11].includes(sc.medium.dataRateMbps)) {
    issues.push({
      path: '/medium/dataRateMbps',
      value: sc.medium.dataRateMbps,
      expected: b ? 'one of 1, 2, 5.5, 11 for 802.11b' : 'one of 6, 9, 12, 18, 24, 36, 48, 54 for 802.11g',
    });
  }
  const h = sc.hosts.length;
  // Hosts are nodes n..n+h-1: a flow may start or end at one.
  const nodes = h > 0 ? `a router of the topology (0..${n - 1}) or a wired host (${n}..${n + h - 1})` : `a router of the topology (0..${n - 1})`;
  sc.hosts.forEach((host, i) => {
    if (host.router >= n)
      issues.push({ path: `/hosts/${i}/router`, value: host.router, expected: `a router of the topology (0..${n - 1}): the host's gateway` });
    if (host.queuePackets === 0 && host.queueBytes === 0)
      issues.push({
        path: `/hosts/${i}/queuePackets`,
        value: 0,
        expected: 'a queue limit: queuePackets or queueBytes above 0 (a wired link has a finite queue)',
      });
    if (host.queueBytes > 0 && host.queueBytes < maxPacketBytes(sc))
      issues.push({
        path: `/hosts/${i}/queueBytes`,
        value: host.queueBytes,
        expected: `0 (no byte limit) or at least one packet of the scenario's flows (${maxPacketBytes(sc)} bytes with the mesh header)`,
      });
  });
  sc.flows.forEach((f, i) => {
    if (f.src >= n + h) issues.push({ path: `/flows/${i}/src`, value: f.src, expected: nodes });
    const dst = flowDst(f, n);
    if (dst >= n + h) issues.push({ path: `/flows/${i}/dst`, value: f.dst, expected: `${nodes} or "last"` });
    else if (dst === f.src) issues.push({ path: `/flows/${i}/dst`, value: f.dst, expected: `a router other than the source (${f.src})` });
    if (f.stopS !== 0 && f.stopS <= f.startS) issues.push({ path: `/flows/${i}/stopS`, value: f.stopS, expected: `0 or later than startS (${f.startS} s)` });
  });
  if (sc.controller.enabled && sc.acc.placement === 'nodes') {
    issues.push({
      path: '/acc/placement',
      value: 'nodes',
      expected: 'none, every or every-K: with the controller, TCP-ACC goes on the relays of the path it picks',
    });
  }
  if (sc.acc.placement === 'nodes' && sc.acc.nodes.length === 0) {
    issues.push({ path: '/acc/nodes', value: sc.acc.nodes, expected: 'the routers to run TCP-ACC on, with placement "nodes"' });
  }
  sc.acc.nodes.forEach((v, i) => {
    if (v >= n) issues.push({ path: `/acc/nodes/${i}`, value: v, expected: `a router of the topology (0..${n - 1})` });
  });
  if (sc.acc.placement !== 'none' && !hostsTcp && !sc.flows.some((f) => f.kind === 'tcp-bulk')) {
    issues.push({
      path: '/acc/placement',
      value: sc.acc.placement,
      expected: '"none": TCP-ACC needs a TCP flow (tcp-bulk, --tcp, or the hosts\' own with testbed --netns)',
    });
  }
  sc.impairments.forEach((m, i) => {
    if (m.from >= n) issues.push({ path: `/impairments/${i}/from`, value: m.from, expected: `a router of the topology (0..${n - 1})` });
    if (m.to >= n) issues.push({ path: `/impairments/${i}/to`, value: m.to, expected: `a router of the topology (0..${n - 1})` });
  });
  sc.events.forEach((e, i) => {
    if (e.node >= n) issues.push({ path: `/events/${i}/node`, value: e.node, expected: `a router of the topology (0..${n - 1})` });
  });
  for (const key of Object.keys(sc.nodeOverrides)) {
    if (Number(key) >= n) issues.push({ path: `/nodeOverrides/${key}`, value: sc.nodeOverrides[key], expected: `a router of the topology (0..${n - 1})` });
  }
  // Every router's configuration (shared section and overrides) is checked now, not at run time.
  const count = isObject(sc.node.channelPlan) && sc.node.channelPlan.channels === 13 ? 13 : 11;
  const plan = ism2g4(count);
  const checkSources = (base: string, sources: PnSource[]): void =>
    sources.forEach((s, i) => {
      if (s.channels === 'all') return;
      s.channels.forEach((c, j) => {
        if (!plan.has(c)) issues.push({ path: `${base}/${i}/channels/${j}`, value: c, expected: `a channel of the plan (1..${count})` });
      });
    });
  checkSources('/pn/sources', sc.pn.sources);
  sc.pn.phases.forEach((p, k) => checkSources(`/pn/phases/${k}/sources`, p.sources));
  if (issues.length > 0) return issues;
  for (let i = 0; i < n; i++) {
    if (i > 0 && !Object.hasOwn(sc.nodeOverrides, String(i))) continue;
    try {
      routerConfig(sc, i, sc.seed);
    } catch (e) {
      if (e instanceof ConfigError) issues.push(...e.issues);
      else throw e;
    }
  }
  return issues;
}

/** The largest packet the scenario's flows put on a link: payload (a TCP segment: its MSS and a 60-byte header at most) and the mesh header. */
function maxPacketBytes(sc: Scenario): number {
  const payload = sc.flows.reduce((m, f) => Math.max(m, f.kind === 'tcp-bulk' ? f.tcp.mss + 60 : f.packetBytes), 0);
  return payload + DATA_LABELLED_HEADER_BYTES;
}

/** A TCP flow's identity: from its source router to its sink's port. */
export function accFlow(f: TcpFlowSpec, dst: number): FlowPattern {
  return { proto: 'tcp', srcIp: ipText(meshIp(f.src)), dstIp: ipText(meshIp(dst)), dstPort: f.port };
}

/** The accelerator's legs speak the flow's TCP. */
export function accParams(sc: Scenario, f: TcpFlowSpec): Record<string, unknown> {
  const every = /^every-(\d+)$/.exec(sc.acc.placement);
  const t = f.tcp;
  return {
    mode: sc.acc.mode,
    bufferBytes: sc.acc.bufferBytes,
    everyHops: every ? Number(every[1]) : 1,
    tcp: {
      congestion: f.variant,
      sack: true,
      mss: t.mss,
      timestamps: t.timestamps,
      windowScale: t.windowScale,
      delayedAckMs: t.delayedAckMs,
      initialWindowSegments: t.initialWindowSegments,
      initialRtoMs: t.initialRtoMs,
      minRtoMs: t.minRtoMs,
      maxRtoMs: t.maxRtoMs,
      maxRetransmits: t.maxRetransmits,
      // Only when set: the parameters travel in the controller's messages, whose size the default must not change.
      ...(t.prr ? { prr: true } : {}),
      ...(t.hystart === undefined ? {} : { hystart: t.hystart }),
      ...(t.frto === undefined ? {} : { frto: t.frto }),
      ...(t.eifel === undefined ? {} : { eifel: t.eifel }),
      ...(t.dsack === undefined ? {} : { dsack: t.dsack }),
      ...(t.rack === undefined ? {} : { rack: t.rack }),
    },
  };
}
