import type { ChannelPlan } from '../../radio/channels.js';
import type { LiveChange } from '../config/live.js';
import type { NodeConfig } from '../config/types.js';
import type { Micros } from '../core/time.js';
import type { Result } from '../core/result.js';
import type { PathInfo } from '../openflow/controller.js';
import type { FlowSpec } from '../openflow/flow-spec.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import type { PsdTapCounters, VisitPsd } from '../sensing/iq-tap.js';
import type { FlowPattern, VnfEvent, VnfInfo } from '../vnf/types.js';
import type { GatewayState } from '../gateway/role.js';
import type { NodeEvent } from './node-core.js';

/**
 * What a running router shows to its control plane (the ZeroMQ API, the
 * WebSocket monitor): reads through the same cores the router runs on, a
 * live and atomic reconfiguration, the VNF lifecycle and a stream of
 * telemetry. The daemon implements it; the control plane never reaches
 * around it.
 */
export interface RouterView {
  readonly id: number;
  readonly name: string;
  /** The router's clock (epoch microseconds in real time). */
  now(): Micros;
  status(): RouterStatus;
  /** The running configuration (a copy). */
  config(): NodeConfig;
  /**
   * The running configuration itself, no copy: for a reader that copies what
   * it keeps. Never change it; a reconfiguration replaces it whole.
   */
  runningConfig(): Readonly<NodeConfig>;
  /** A stable hash of the running configuration (configVersion). */
  configVersion(): string;
  /**
   * Applies a change checked against the running configuration (`liveChange`),
   * live and atomically: every core takes its part. A change checked against
   * another version, or one with fields a running router takes only at
   * restart, is refused whole (ConfigError) and nothing changes. Returns the
   * new version.
   */
  reconfigure(change: LiveChange): string;
  neighbours(): NeighbourView[];
  routes(): RouteView[];
  queues(): QueueView[];
  /** Traffic through this router, per flow (source, destination, protocol, flow id). */
  flows(): FlowView[];
  /** The latest sensing round, undefined before the first. */
  spectrum(): SpectrumView | undefined;
  /** The gateway role's clients, queues, rates, slices and graph; undefined when it is off. */
  gateway?(): GatewayState | undefined;
  vnfs(): VnfInfo[];
  /** Starts a VNF of a registered type on the flows matching `flow`; refuses bad parameters (ConfigError). */
  startVnf(type: string, flow: FlowPattern, params: unknown): Promise<VnfInfo>;
  stopVnf(id: number): Promise<VnfInfo>;
  /** The CETT controller this router runs (the controller role), undefined when it runs none. */
  controller(): ControllerRole | undefined;
  /** Every telemetry event as it happens; returns the unsubscribe. */
  subscribe(fn: (e: Telemetry) => void): () => void;
  /** Recordings of the IQ its detector reads (the monitor's "record the next N seconds"); undefined when it has none. */
  recordings?(): RecordingControl | undefined;
  /** What the monitor's PSD of its visits has done; undefined when it estimates none. */
  psdCounters?(): PsdTapCounters | undefined;
}

/** A recording of the IQ a router's detector reads, as SigMF (`NAME.sigmf-meta` and `NAME.sigmf-data`). */
export interface RecordingInfo {
  /** The recording's base name (no folder, no extension). */
  name: string;
  state: 'recording' | 'done' | 'failed';
  /** Asked-for length, seconds of the router's clock. */
  seconds: number;
  startedAtUs: Micros;
  endedAtUs: Micros | undefined;
  /** Why it ended: the time was up, the size cap (monitor.record.maxMiB), the router stopped, or an error. */
  reason: 'time' | 'size' | 'stopped' | 'error' | undefined;
  samples: number;
  /** Capture segments: one per visit, as sensing hops channel to channel. */
  captures: number;
  bytes: number;
  error: string | undefined;
}

/** What the monitor reaches of a router's recordings. */
export interface RecordingControl {
  /**
   * Starts recording the next `seconds` of what the detector reads. Refuses
   * (RecordingError naming why) a length outside (0, monitor.record.maxS], or
   * a second recording while one runs.
   */
  start(seconds: number): RecordingInfo;
  /** The recordings made since the router started, newest last. */
  list(): RecordingInfo[];
  /** The path of `file` (a recording's `NAME.sigmf-meta` or `NAME.sigmf-data`, once done), or undefined. */
  path(file: string): string | undefined;
}

/** What the control API reaches of a router's controller role (ControllerService). */
export interface ControllerRole {
  flows(): PathInfo[];
  addFlow(spec: FlowSpec): Result<PathInfo, string>;
  removeFlow(id: number): Result<{ id: number }, string>;
  readonly sessions: number;
}

export interface RouterStatus {
  node: { id: number; name: string };
  atUs: Micros;
  uptimeS: number;
  configVersion: string;
  /** Whether the router is on an air medium (routing and data) or senses only. */
  mesh: boolean;
  /** moves: R1's retunes since the router started (the first tune included), when the router keeps them. */
  r1: { channel: number | undefined; since: Micros | undefined; reason: string | undefined; moves?: number };
  r2: { channel: number | undefined; dwellEndUs: Micros | undefined; switches: number };
  /** auth: R3 authentication's counters (messages signed, verified, and dropped by reason), when it is on; keys: the ids of the keys in force and the one it signs with (never their bytes). */
  r3: { channel: number; auth?: Record<string, number>; keys?: { sendKeyId: number; ids: number[] } };
  sensing: { rounds: number; durationMs: number; periodMs: number; ccaThresholdDbm: number; transmitPaused: boolean };
  counters: Record<string, number>;
  drops: Record<string, number>;
  /** The routing's counters (route discoveries started, found and failed, routes lost, ...), on a router that routes. */
  routing?: Record<string, number>;
  /**
   * A router whose log is written in the background (`cogmesh node`): the
   * lines it dropped (its reader went away, or fell 16 M characters behind)
   * and, once writing stopped for good, why (an errno code such as EPIPE).
   */
  log?: { dropped: number; gone?: string };
}

export interface QueueView {
  channel: number;
  packets: number;
  bytes: number;
  /** The QoS classes' queues inside it, highest priority first (best effort, queue 0, last). */
  classes: Array<{ queue: number; name: string; packets: number; bytes: number }>;
}

/** A QoS queue's name: its class's, or best-effort for queue 0. */
export function queueName(cfg: NodeConfig, queue: number): string {
  return cfg.qos.classes.find((c) => c.queue === queue)?.name ?? (queue === 0 ? 'best-effort' : `queue-${queue}`);
}

export interface FlowView {
  proto: string;
  src: number;
  dst: number;
  flow: number;
  /** What this router does with it: originates, forwards, delivers. */
  role: 'source' | 'relay' | 'sink';
  packets: number;
  bytes: number;
  /** The next hop its last packet took (relay and source). */
  nextHop: number | undefined;
  lastUs: Micros;
  /** The IPv6 flow label (QoS tag) of its last packet; 0: none. */
  label: number;
}

export interface SpectrumChannel {
  channel: number;
  centerMHz: number;
  /** Merged workload w (own and neighbours'). */
  w: number;
  /** This router's own w, undefined when it did not sense the channel. */
  ownW: number | undefined;
  /** RC = (1 - w) * C, bits per second. */
  rcBps: number;
  /** Mean power the energy detector measured, dBm; undefined when not visited. */
  powerDbm: number | undefined;
}

export interface SpectrumView {
  round: number;
  startUs: Micros;
  endUs: Micros;
  channels: SpectrumChannel[];
}

/** The power spectral density of one channel visit, as the monitor streams it (sensing/iq-tap.ts makes it). */
export type PsdView = VisitPsd;

export type Telemetry =
  | { kind: 'spectrum'; atUs: Micros; spectrum: SpectrumView }
  | { kind: 'psd'; atUs: Micros; psd: PsdView }
  | { kind: 'record'; atUs: Micros; recording: RecordingInfo }
  | { kind: 'r1'; atUs: Micros; channel: number | undefined; changed: boolean; reason: string }
  | { kind: 'r2'; atUs: Micros; channel: number | undefined }
  | { kind: 'config'; atUs: Micros; version: string; changed: string[] }
  | { kind: 'vnf'; atUs: Micros; event: VnfEvent }
  | { kind: 'neighbour'; atUs: Micros; addr: number; up: boolean };

/** A sensing round as the control plane shows it. */
export function spectrumView(plan: ChannelPlan, e: Extract<NodeEvent, { kind: 'sensing-round' }>): SpectrumView {
  return {
    round: e.round,
    startUs: e.startUs,
    endUs: e.endUs,
    channels: e.channels.map((c) => ({
      channel: c.channel,
      centerMHz: plan.get(c.channel).centerHz / 1e6,
      w: c.w,
      ownW: c.ownW,
      rcBps: c.rc,
      powerDbm: c.meanPowerDbm !== undefined && Number.isFinite(c.meanPowerDbm) ? c.meanPowerDbm : undefined,
    })),
  };
}
