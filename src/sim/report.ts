import type { Micros } from '../core/time.js';
import type { FlowRecord } from '../traffic/cbr.js';
import type { TcpFlowRecord } from '../traffic/bulk-tcp.js';
import type { TcpConnection, TcpStats } from '../tcp/connection.js';
import type { MeshRouter } from '../router/router.js';

/** One flow's figures in one run. */
export interface FlowResult {
  flow: number;
  kind: string;
  src: number;
  dst: number;
  offeredMbps: number;
  sent: number;
  received: number;
  duplicates: number;
  /** received / sent. */
  deliveryRatio: number;
  /** Payload bits received over the flow's active time (start to stop or end of run), Mbps. */
  throughputMbps: number;
  /** Distinct payload bits delivered to the application in order, over the active time, Mbps (UDP: unique packets' payload). */
  goodputMbps: number;
  delayMeanMs: number | null;
  delayP50Ms: number | null;
  delayP95Ms: number | null;
  delayMaxMs: number | null;
  /** Mean absolute difference of consecutive packets' delays (RFC 3550's D, unsmoothed), ms. */
  jitterMs: number | null;
  /** What a TCP flow's ends measured; null for UDP. */
  tcp: TcpFlowResult | null;
}

/**
 * The counters of spurious-retransmission detection (F-RTO, Eifel, D-SACK)
 * and RACK-TLP a flow reports, as TcpStats names them: the source's, but for
 * the D-SACK blocks the sink sent.
 */
const RECOVERY_STATS = [
  'spuriousTimeouts',
  'spuriousFastRetransmits',
  'dsackedRetransmits',
  'undos',
  'dsackBlocksSent',
  'dsackBlocksReceived',
  'tailLossProbes',
  'tlpRepairs',
  'rackLosses',
] as const;
type RecoveryStats = Pick<TcpStats, (typeof RECOVERY_STATS)[number]>;

function recoveryStats(source: TcpConnection | undefined, sink: TcpConnection | undefined): RecoveryStats {
  return Object.fromEntries(RECOVERY_STATS.map((k) => [k, (k === 'dsackBlocksSent' ? sink : source)?.stats[k] ?? 0])) as unknown as RecoveryStats;
}

/** A TCP flow's figures in one run (with the counters of RECOVERY_STATS). */
export interface TcpFlowResult extends RecoveryStats {
  variant: string;
  /** In-order bytes the sink application read within the flow's active time. */
  bytesDelivered: number;
  /** Bytes whose content differed from what the source wrote (0 unless something is broken). */
  corruptBytes: number;
  connectedAtS: number | null;
  /** Why the connection ended before the run did ('reset', 'timeout'), or null. */
  failure: string | null;
  /** Segments the source sent, retransmissions included. */
  segmentsSent: number;
  retransmittedSegments: number;
  /** retransmittedSegments over segmentsSent: loss as the sender saw it (drops and spurious timeouts alike). */
  retransmitRate: number;
  fastRetransmits: number;
  timeouts: number;
  /** The source's packets (data) and the sink's (ACKs) lost in the mesh. */
  dataDrops: number;
  ackDrops: number;
  /** dataDrops over the source's packets. */
  dropRate: number;
  dropReasons: Record<string, number>;
  /** Round-trip samples the source took (RFC 6298), and its smoothed RTT and RTO at the end. */
  rttSamples: number;
  rttMeanMs: number | null;
  rttMinMs: number | null;
  rttMaxMs: number | null;
  srttMs: number | null;
  rtoMs: number | null;
  /** The source's congestion window, sampled every 10 ms while connected, in segments. */
  cwndMeanSegments: number | null;
  cwndMaxSegments: number | null;
}

/** One router's figures in one run. */
export interface NodeResult {
  node: number;
  /** Whether the router failed during the run (a scenario event). */
  failed: boolean;
  xM: number;
  yM: number;
  /** R1's channel at the end, and every change (time in s). */
  r1Channel: number | null;
  r1Changes: Array<{ atS: number; channel: number }>;
  neighbours: Array<{ addr: number; r1Channel: number }>;
  switches: number;
  stays: number;
  /** Dwells R2 left early by the work-conserving rule (of `switches`); only with `switching.workConserving`, so that other runs read as before. */
  earlyLeaves?: number;
  /** Time R2 was tuned to each channel, s. */
  r2DwellS: Record<string, number>;
  queues: Array<{ channel: number; meanPackets: number; maxPackets: number }>;
  drops: Record<string, number>;
  originated: number;
  forwarded: number;
  delivered: number;
  rerouted: number;
  /** Data packets the OpenFlow flow table forwarded, ahead of AODV (the controller's entries). */
  byFlowTable: number;
  malformed: number;
  sensingRounds: number;
  mac: Record<'R1' | 'R2' | 'R3', Record<string, number>>;
  routing: Record<string, number>;
  /** The VNFs it ran (TCP-ACC), with their counters: sessions, bytes relayed, buffer high-water mark, each leg's mean RTT. */
  vnfs: Array<{ id: number; type: string; state: string; reason: string | null; packetsTaken: number; packetsSent: number; counters: Record<string, number> }>;
  /** The gateway role's figures (docs/gateway.md), only on a router that takes it, so that other runs read as before. */
  gateway?: {
    unshaped: number;
    clients: Array<{ id: string; enqueued: number; sent: number; dropped: number; bytes: number; rateMbps: number; share: number }>;
  };
}

export interface RunResult {
  seed: number;
  durationS: number;
  events: number;
  flows: FlowResult[];
  nodes: NodeResult[];
  /** The wired hosts' links, both directions (only in a scenario with hosts). */
  hosts?: HostResult[];
}

/** A wired host's link: packets sent into each direction, delivered, dropped at its full queue. */
export interface HostResult {
  host: number;
  gateway: number;
  up: WiredCounters;
  down: WiredCounters;
}

export interface WiredCounters {
  sent: number;
  sentBytes: number;
  delivered: number;
  drops: number;
  maxQueuePackets: number;
}

/** The figures a multi-seed summary gives per flow (TCP ones are null for UDP flows). */
export type SummaryFigure =
  | 'throughputMbps'
  | 'goodputMbps'
  | 'deliveryRatio'
  | 'delayMeanMs'
  | 'jitterMs'
  | 'dropRate'
  | 'retransmitRate'
  | 'rttMeanMs'
  | 'cwndMeanSegments'
  | 'timeouts'
  | 'spuriousTimeouts'
  | 'undos';

/** Mean and spread of one figure over the runs of several seeds. */
export interface Spread {
  mean: number;
  std: number;
  min: number;
  max: number;
  /** Half-width of the 95% confidence interval of the mean (Student t), 0 with one run. */
  ci95: number;
}

export interface SimResult {
  scenario: string;
  seeds: number[];
  durationS: number;
  runs: RunResult[];
  /** Per flow, over the runs. */
  summary: Array<{ flow: number; src: number; dst: number; kind: string } & Record<SummaryFigure, Spread | null>>;
}

/** Rounds to 6 significant digits, so that reports read well and compare exactly. */
export function sig(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(6));
}

const msOf = (us: number): number => sig(us / 1000);

export function flowResult(f: FlowRecord): FlowResult {
  const activeUs = Math.max(1, f.endUs - f.startUs);
  const d = [...f.delaysUs];
  let jitter: number | null = null;
  if (d.length >= 2) {
    let s = 0;
    for (let i = 1; i < d.length; i++) s += Math.abs(d[i]! - d[i - 1]!);
    jitter = msOf(s / (d.length - 1));
  }
  const sorted = d.sort((a, b) => a - b);
  const q = (p: number): number | null => (sorted.length === 0 ? null : msOf(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!));
  return {
    flow: f.flow,
    kind: f.kind,
    src: f.src,
    dst: f.dst,
    offeredMbps: f.offeredMbps,
    sent: f.sent,
    received: f.received,
    duplicates: f.duplicates,
    deliveryRatio: f.sent > 0 ? sig(f.received / f.sent) : 0,
    throughputMbps: sig((f.receivedBytes * 8) / activeUs),
    goodputMbps: sig((f.receivedBytes * 8) / activeUs),
    delayMeanMs: sorted.length > 0 ? msOf(sorted.reduce((a, b) => a + b, 0) / sorted.length) : null,
    delayP50Ms: q(0.5),
    delayP95Ms: q(0.95),
    delayMaxMs: sorted.length > 0 ? msOf(sorted[sorted.length - 1]!) : null,
    jitterMs: jitter,
    tcp: null,
  };
}

export function tcpFlowResult(f: TcpFlowRecord): FlowResult {
  const activeUs = Math.max(1, f.endUs - f.startUs);
  const c = f.sender;
  const rtt = c?.rtt;
  const delivered = f.dataPackets - f.dataDrops;
  return {
    flow: f.flow,
    kind: 'tcp-bulk',
    src: f.src,
    dst: f.dst,
    offeredMbps: 0,
    sent: f.dataPackets,
    received: delivered,
    duplicates: 0,
    deliveryRatio: f.dataPackets > 0 ? sig(delivered / f.dataPackets) : 0,
    throughputMbps: sig((f.arrivedBytes * 8) / activeUs),
    goodputMbps: sig((f.goodputBytes * 8) / activeUs),
    delayMeanMs: null,
    delayP50Ms: null,
    delayP95Ms: null,
    delayMaxMs: null,
    jitterMs: null,
    tcp: {
      variant: f.variant,
      bytesDelivered: f.goodputBytes,
      corruptBytes: f.corruptBytes,
      connectedAtS: f.connectedAtUs === null ? null : sig(f.connectedAtUs / 1e6),
      failure: f.failure,
      segmentsSent: c?.stats.segmentsSent ?? 0,
      retransmittedSegments: c?.stats.retransmittedSegments ?? 0,
      retransmitRate: c && c.stats.segmentsSent > 0 ? sig(c.stats.retransmittedSegments / c.stats.segmentsSent) : 0,
      fastRetransmits: c?.stats.fastRetransmits ?? 0,
      timeouts: c?.stats.timeouts ?? 0,
      dataDrops: f.dataDrops,
      ackDrops: f.ackDrops,
      dropRate: f.dataPackets > 0 ? sig(f.dataDrops / f.dataPackets) : 0,
      dropReasons: Object.fromEntries(Object.entries(f.dropReasons).sort((a, b) => a[0].localeCompare(b[0]))),
      rttSamples: rtt?.samples ?? 0,
      rttMeanMs: rtt && rtt.samples > 0 ? msOf(rtt.sumUs / rtt.samples) : null,
      rttMinMs: rtt && rtt.samples > 0 ? msOf(rtt.minSampleUs) : null,
      rttMaxMs: rtt && rtt.samples > 0 ? msOf(rtt.maxSampleUs) : null,
      srttMs: rtt?.srtt === undefined ? null : msOf(rtt.srtt),
      rtoMs: rtt ? msOf(rtt.rtoUs) : null,
      cwndMeanSegments: f.cwndSamples > 0 ? sig(f.cwndSumSegments / f.cwndSamples) : null,
      cwndMaxSegments: f.cwndSamples > 0 ? sig(f.cwndMaxSegments) : null,
      ...recoveryStats(c, f.receiver),
    },
  };
}

/** R3 authentication's counters as routing figures: auth + the counter's name (authBadMac...). */
function authFigures(c: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [`auth${k[0]!.toUpperCase()}${k.slice(1)}`, v]));
}

export function nodeResult(r: MeshRouter, pos: { xM: number; yM: number }): NodeResult {
  const drops: Record<string, number> = {};
  const sd = r.sched.counters.drops as Record<string, number>;
  for (const [k, v] of Object.entries(r.drops)) drops[k] = v + (sd[k] ?? 0);
  for (const [k, v] of Object.entries(sd)) if (!(k in drops)) drops[k] = v;
  const dwell: Record<string, number> = {};
  for (const [ch, us] of Object.entries(r.sched.counters.dwellUs)) if (us > 0) dwell[ch] = sig(us / 1e6);
  const mac = (s: { counters: object }): Record<string, number> => ({ ...(s.counters as Record<string, number>) });
  return {
    node: r.addr,
    failed: r.isDown,
    xM: pos.xM,
    yM: pos.yM,
    r1Channel: r.core.r1 ?? null,
    r1Changes: r.r1History.map((c) => ({ atS: sig(c.atUs / 1e6), channel: c.channel })),
    neighbours: r.neighbourChannels(),
    switches: r.sched.counters.switches,
    stays: r.sched.counters.stays,
    ...(r.config.switching.workConserving ? { earlyLeaves: r.sched.counters.earlyLeaves } : {}),
    r2DwellS: dwell,
    queues: r.queueStats().map((q) => ({ channel: q.channel, meanPackets: sig(q.meanPackets), maxPackets: q.maxPackets })),
    drops,
    originated: r.counters.originated,
    forwarded: r.counters.forwarded,
    delivered: r.counters.delivered,
    rerouted: r.counters.rerouted,
    byFlowTable: r.counters.byFlowTable,
    malformed: r.counters.malformedControl + r.counters.malformedData,
    sensingRounds: r.counters.sensingRounds,
    mac: { R1: mac(r.r1), R2: mac(r.r2), R3: mac(r.r3) },
    // Authentication's figures only when it is on, so that other runs read as before.
    routing: { ...r.aodv.counters, ...(r.auth ? authFigures(r.auth.counters) : {}) },
    vnfs: (r.vnfList ?? []).map((v) => ({
      id: v.id,
      type: v.type,
      state: v.state,
      reason: v.reason,
      packetsTaken: v.packetsTaken,
      packetsSent: v.packetsSent,
      counters: Object.fromEntries(Object.entries(v.counters).map(([k, x]) => [k, sig(x)])),
    })),
    ...gatewayFigures(r),
  };
}

function gatewayFigures(r: MeshRouter): Pick<NodeResult, 'gateway'> {
  const g = r.gateway.state();
  if (!g) return {};
  return {
    gateway: {
      unshaped: g.unshaped,
      clients: g.clients.map((c) => ({
        id: c.id,
        enqueued: c.enqueued,
        sent: c.sent,
        dropped: c.dropped,
        bytes: c.bytes,
        rateMbps: sig(c.rateMbps),
        share: sig(c.share),
      })),
    },
  };
}

// Two-sided 97.5% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond.
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069,
  2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The middle value of `xs` (the mean of the two middle ones for an even count; NaN for none). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function spread(values: ReadonlyArray<number | null>): Spread | null {
  const v = values.filter((x): x is number => x !== null);
  if (v.length === 0) return null;
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const std = v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (v.length - 1)) : 0;
  const t = v.length > 1 ? (T975[v.length - 2] ?? 1.96) : 0;
  return { mean: sig(mean), std: sig(std), min: sig(Math.min(...v)), max: sig(Math.max(...v)), ci95: sig((t * std) / Math.sqrt(v.length)) };
}

export function summarize(scenario: string, durationS: number, runs: RunResult[]): SimResult {
  const first = runs[0];
  const summary = (first?.flows ?? []).map((f, i) => ({
    flow: f.flow,
    src: f.src,
    dst: f.dst,
    kind: f.kind,
    throughputMbps: spread(runs.map((r) => r.flows[i]!.throughputMbps)),
    goodputMbps: spread(runs.map((r) => r.flows[i]!.goodputMbps)),
    deliveryRatio: spread(runs.map((r) => r.flows[i]!.deliveryRatio)),
    delayMeanMs: spread(runs.map((r) => r.flows[i]!.delayMeanMs)),
    jitterMs: spread(runs.map((r) => r.flows[i]!.jitterMs)),
    dropRate: spread(runs.map((r) => r.flows[i]!.tcp?.dropRate ?? null)),
    retransmitRate: spread(runs.map((r) => r.flows[i]!.tcp?.retransmitRate ?? null)),
    rttMeanMs: spread(runs.map((r) => r.flows[i]!.tcp?.rttMeanMs ?? null)),
    cwndMeanSegments: spread(runs.map((r) => r.flows[i]!.tcp?.cwndMeanSegments ?? null)),
    timeouts: spread(runs.map((r) => r.flows[i]!.tcp?.timeouts ?? null)),
    spuriousTimeouts: spread(runs.map((r) => r.flows[i]!.tcp?.spuriousTimeouts ?? null)),
    undos: spread(runs.map((r) => r.flows[i]!.tcp?.undos ?? null)),
  }));
  return { scenario, seeds: runs.map((r) => r.seed), durationS, runs, summary };
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One line per flow and run. */
export function flowsCsv(res: SimResult): string {
  const cols = [
    'flow',
    'kind',
    'src',
    'dst',
    'offeredMbps',
    'sent',
    'received',
    'duplicates',
    'deliveryRatio',
    'throughputMbps',
    'goodputMbps',
    'delayMeanMs',
    'delayP50Ms',
    'delayP95Ms',
    'delayMaxMs',
    'jitterMs',
  ] as const;
  const tcpCols = [
    'variant',
    'retransmittedSegments',
    'retransmitRate',
    'fastRetransmits',
    'timeouts',
    'dataDrops',
    'ackDrops',
    'dropRate',
    'rttMeanMs',
    'srttMs',
    'cwndMeanSegments',
  ] as const;
  const lines = [['seed', ...cols, ...tcpCols].join(',')];
  for (const r of res.runs) {
    for (const f of r.flows) lines.push([r.seed, ...cols.map((c) => f[c]), ...tcpCols.map((c) => f.tcp?.[c] ?? null)].map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** One line per router and run: channel choices, switches, queues, drops. */
export function nodesCsv(res: SimResult): string {
  const head = [
    'seed',
    'node',
    'xM',
    'yM',
    'r1Channel',
    'r1Changes',
    'switches',
    'stays',
    'queueMeanPackets',
    'queueMaxPackets',
    'dropsQueueFull',
    'dropsNoRoute',
    'dropsRetryLimit',
    'dropsOther',
    'forwarded',
    'macRetries',
    'macCollisions',
    'macPnLosses',
  ];
  // A last column only when a run counted early leaves (switching.workConserving), so that other files read as before.
  const early = res.runs.some((r) => r.nodes.some((n) => n.earlyLeaves !== undefined));
  if (early) head.push('earlyLeaves');
  const lines = [head.join(',')];
  for (const r of res.runs) {
    for (const n of r.nodes) {
      const qMean = n.queues.reduce((a, q) => a + q.meanPackets, 0);
      const qMax = n.queues.reduce((a, q) => Math.max(a, q.maxPackets), 0);
      const d = n.drops;
      const known = (d['queue-full'] ?? 0) + (d['no-route'] ?? 0) + (d['retry-limit'] ?? 0);
      const all = Object.values(d).reduce((a, b) => a + b, 0);
      const sum = (k: string): number => (n.mac.R1[k] ?? 0) + (n.mac.R2[k] ?? 0) + (n.mac.R3[k] ?? 0);
      lines.push(
        [
          r.seed,
          n.node,
          n.xM,
          n.yM,
          n.r1Channel,
          n.r1Changes.map((c) => `${c.atS}:${c.channel}`).join(' '),
          n.switches,
          n.stays,
          sig(qMean),
          qMax,
          d['queue-full'] ?? 0,
          d['no-route'] ?? 0,
          d['retry-limit'] ?? 0,
          all - known,
          n.forwarded,
          sum('retries'),
          sum('collisions'),
          sum('pnLosses'),
          ...(early ? [n.earlyLeaves ?? null] : []),
        ]
          .map(csvCell)
          .join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A figure for people: 3 significant digits (the JSON report keeps `sig`'s 6). */
export function shortFigure(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(3))) : String(x);
}

/**
 * A mean and its confidence half-width for people: the half-width to 2 significant digits,
 * the mean to the same decimal place (digits past the interval's say nothing).
 */
export function meanWithCi(mean: number, ci: number): string {
  if (!(ci > 0) || !Number.isFinite(ci)) return `${shortFigure(mean)} ± 0`;
  const decimals = Math.min(20, Math.max(0, 1 - Math.floor(Math.log10(ci))));
  return `${mean.toFixed(decimals)} ± ${ci.toFixed(decimals)}`;
}

/** A short table for people at a terminal. */
export function textReport(res: SimResult, wallMs?: number): string {
  const out: string[] = [];
  out.push(
    `scenario ${res.scenario}: ${res.runs.length} run(s) of ${res.durationS} s (seeds ${res.seeds.join(', ')})${wallMs !== undefined ? `, ${(wallMs / 1000).toFixed(2)} s wall` : ''}`,
  );
  const several = res.runs.length > 1;
  if (several) out.push(`(a ± b: the mean over the ${res.runs.length} seeds ± the half-width of its 95% confidence interval)`);
  for (const s of res.summary) {
    const f = (x: Spread | null, unit: string, k = 1): string =>
      x === null ? 'n/a' : several ? `${meanWithCi(x.mean * k, x.ci95 * k)}${unit}` : `${shortFigure(x.mean * k)}${unit}`;
    if (s.kind === 'tcp-bulk') {
      const v = res.runs[0]?.flows.find((x) => x.flow === s.flow)?.tcp?.variant ?? 'tcp';
      out.push(
        `flow ${s.flow} (${s.src} -> ${s.dst}, tcp ${v}): goodput ${f(s.goodputMbps, ' Mbps')}, drops ${f(s.dropRate, '%', 100)}, retransmitted ${f(s.retransmitRate, '%', 100)}, RTT ${f(s.rttMeanMs, ' ms')}, cwnd ${f(s.cwndMeanSegments, ' seg')}, timeouts ${f(s.timeouts, '')}` +
          // Only where a detection found something, so that a run without one reads as before.
          ((s.spuriousTimeouts?.max ?? 0) > 0 || (s.undos?.max ?? 0) > 0 ? `, spurious timeouts ${f(s.spuriousTimeouts, '')}, undone ${f(s.undos, '')}` : ''),
      );
    } else {
      out.push(
        `flow ${s.flow} (${s.src} -> ${s.dst}): throughput ${f(s.throughputMbps, ' Mbps')}, delivery ${f(s.deliveryRatio, '%', 100)}, delay ${f(s.delayMeanMs, ' ms')}, jitter ${f(s.jitterMs, ' ms')}`,
      );
    }
  }
  const last = res.runs[res.runs.length - 1];
  if (last) {
    out.push(`routers (seed ${last.seed}):`);
    for (const n of last.nodes) {
      const drops =
        Object.entries(n.drops)
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none';
      out.push(
        `  r${n.node}: R1 ch ${n.r1Channel ?? '-'} (${n.r1Changes.length} change(s)), R2 ${n.switches} switch(es)${n.earlyLeaves !== undefined ? ` (${n.earlyLeaves} early)` : ''}, forwarded ${n.forwarded}, drops: ${drops}`,
      );
      for (const c of n.gateway?.clients ?? [])
        out.push(
          `    gateway client ${c.id}: share ${c.share}, ${c.rateMbps === 0 ? 'line rate' : `${c.rateMbps} Mbps`}, ${c.sent} sent of ${c.enqueued} queued, ${c.dropped} dropped`,
        );
    }
    for (const h of last.hosts ?? []) {
      const dir = (d: WiredCounters): string => `${d.sent} sent, ${d.drops} dropped at the queue (max ${d.maxQueuePackets} queued)`;
      out.push(`  host ${h.host} (wired to r${h.gateway}): to the gateway ${dir(h.up)}; from it ${dir(h.down)}`);
    }
  }
  return `${out.join('\n')}\n`;
}

export type { Micros };
