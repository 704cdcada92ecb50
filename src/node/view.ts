import type { ChannelPlan } from '../../radio/channels.js';
import stableStringify from 'fast-json-stable-stringify';
import { configVersion, parseNodeConfig } from '../config/load.js';
import type { NodeConfig } from '../config/types.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import type { Logger } from './log.js';
import type { NodeEvent } from './core.js';
import type { Micros } from '../core/time.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import type { FlowPattern, VnfEvent, VnfInfo } from '../vnf/types.js';
import type { Result } from '../core/result.js';
import type { FlowSpec, PathInfo } from '../openflow/controller.js';
import { ControllerService } from '../openflow/controller-service.js';
import { parseAccText, parseFlowText } from '../openflow/flow-text.js';

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
  /** A stable hash of the running configuration (configVersion). */
  configVersion(): string;
  /**
   * Applies a configuration that passed the schema, live and atomically: every
   * core takes its part, or (ConfigError naming each field that cannot change
   * while running) nothing changes. Returns the new version.
   */
  reconfigure(next: NodeConfig): string;
  neighbours(): NeighbourView[];
  routes(): RouteView[];
  queues(): QueueView[];
  /** Traffic through this router, per flow (source, destination, protocol, flow id). */
  flows(): FlowView[];
  /** The latest sensing round, undefined before the first. */
  spectrum(): SpectrumView | undefined;
  vnfs(): VnfInfo[];
  /** Starts a VNF of a registered type on the flows matching `flow`; refuses bad parameters (ConfigError). */
  startVnf(type: string, flow: FlowPattern, params: unknown): Promise<VnfInfo>;
  stopVnf(id: number): Promise<VnfInfo>;
  /** The CETT controller this router runs (the controller role), undefined when it runs none. */
  controller(): ControllerRole | undefined;
  /** Every telemetry event as it happens; returns the unsubscribe. */
  subscribe(fn: (e: Telemetry) => void): () => void;
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
  r1: { channel: number | undefined; since: Micros | undefined; reason: string | undefined };
  r2: { channel: number | undefined; dwellEndUs: Micros | undefined; switches: number };
  r3: { channel: number };
  sensing: { rounds: number; durationMs: number; periodMs: number; ccaThresholdDbm: number; transmitPaused: boolean };
  counters: Record<string, number>;
  drops: Record<string, number>;
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

export type Telemetry =
  | { kind: 'spectrum'; atUs: Micros; spectrum: SpectrumView }
  | { kind: 'r1'; atUs: Micros; channel: number | undefined; changed: boolean; reason: string }
  | { kind: 'r2'; atUs: Micros; channel: number | undefined }
  | { kind: 'config'; atUs: Micros; version: string; changed: string[] }
  | { kind: 'vnf'; atUs: Micros; event: VnfEvent }
  | { kind: 'neighbour'; atUs: Micros; addr: number; up: boolean };

/**
 * The configuration fields a running router takes live (dotted paths; a
 * section name covers its fields). Anything else changes only with a restart.
 */
export const LIVE_FIELDS: readonly string[] = Object.freeze([
  'sensing.durationMs',
  'sensing.periodMs',
  'sensing.channelsPerRound',
  'sensing.ccaThresholdDbm',
  'sensing.memory',
  'sensing.cooperative',
  'switching.intervalMs',
  'switching.adaptive',
  'qos',
  'channel.capacityMbps',
  'channel.hysteresis',
  'channel.minDwellMs',
  'channel.loadMbps',
  'channel.contendedMoveProbability',
  'routing.helloIntervalMs',
  'routing.allowedHelloLoss',
  'routing.activeRouteTimeoutMs',
  'routing.nodeTraversalMs',
  'routing.rreqRetries',
  'routing.pathHysteresis',
  'log.level',
]);

/** The dotted paths of the leaves where `a` and `b` differ (arrays compare whole). */
export function changedPaths(a: unknown, b: unknown, at = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPaths(a[k], b[k], at === '' ? k : `${at}.${k}`));
  }
  return stableStringify(a) === stableStringify(b) ? [] : [at];
}

/** Whether a dotted path is live (it or a section holding it is listed). */
export function isLive(path: string): boolean {
  return LIVE_FIELDS.some((f) => path === f || path.startsWith(`${f}.`));
}

/** Fields whose values never leave the router (the server's CURVE secret, the monitor's token). */
export const SECRET_FIELDS: readonly string[] = Object.freeze(['control.curve.secretKey', 'monitor.token']);

/** What a secret reads as outside the router (when it is set). */
export const REDACTED = '(redacted)';

/**
 * One issue for every changed field that a running router cannot take. A
 * secret field's values are not shown: an issue must not tell a client what
 * `get` would not.
 */
export function restartOnlyIssues(prev: NodeConfig, next: NodeConfig): ConfigIssue[] {
  const get = (root: unknown, path: string): unknown =>
    path.split('.').reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), root);
  const shown = (path: string, v: unknown): unknown => (SECRET_FIELDS.includes(path) && v !== '' ? REDACTED : v);
  return changedPaths(prev, next)
    .filter((p) => !isLive(p))
    .map((p) => ({
      path: `/${p.replaceAll('.', '/')}`,
      value: shown(p, get(next, p)),
      expected: `${showPrev(shown(p, get(prev, p)))} (a running router takes this field only at restart)`,
    }));
}

function showPrev(v: unknown): string {
  return JSON.stringify(v) ?? 'undefined';
}

/**
 * A new configuration checked for a running router: the schema and the
 * loader's rules, then only live fields changed. Returns it with the paths
 * that changed; throws ConfigError (every field named) otherwise.
 */
export function checkLiveChange(prev: NodeConfig, next: NodeConfig): { checked: NodeConfig; changed: string[] } {
  const checked = parseNodeConfig(next, 'set');
  const issues = restartOnlyIssues(prev, checked);
  if (issues.length > 0) throw new ConfigError(issues, 'set');
  return { checked, changed: changedPaths(prev, checked) };
}

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

/** The subscribers of a router's telemetry; one that throws is logged and the others still hear. */
export class TelemetryHub {
  private readonly subscribers = new Set<(e: Telemetry) => void>();

  constructor(private readonly log: Logger) {}

  subscribe(fn: (e: Telemetry) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  emit(t: Telemetry): void {
    for (const fn of this.subscribers) {
      try {
        fn(t);
      } catch (e) {
        this.log.error({ event: 'telemetry-error', err: e }, `a telemetry subscriber failed: ${(e as Error).message}`);
      }
    }
  }

  clear(): void {
    this.subscribers.clear();
  }
}

/**
 * What every router daemon's view shares: the running configuration and its
 * version, the live reconfiguration (checked whole, then handed to the
 * router by `applyLive`), and the telemetry subscribers.
 */
export abstract class LiveConfigView {
  protected cfg: NodeConfig;
  protected version: string;
  protected readonly hub: TelemetryHub;

  constructor(
    cfg: NodeConfig,
    protected readonly log: Logger,
  ) {
    this.cfg = cfg;
    this.version = configVersion(cfg);
    this.hub = new TelemetryHub(log);
  }

  /** The controller role's service, when `controller.listen` is set. */
  protected controllerService: ControllerService | undefined;

  abstract now(): Micros;
  abstract readonly id: number;
  abstract readonly name: string;
  /** When the router started (its clock). */
  protected abstract readonly startedUs: Micros;

  /** What every status begins with: who, when, since when, which configuration. */
  protected statusHead(now: Micros): Pick<RouterStatus, 'node' | 'atUs' | 'uptimeS' | 'configVersion'> & { pid: number } {
    return { node: { id: this.id, name: this.name }, pid: process.pid, atUs: now, uptimeS: Math.round((now - this.startedUs) / 1000) / 1000, configVersion: this.version };
  }

  /** Hands a checked configuration to the running cores, in one step. */
  protected abstract applyLive(next: NodeConfig, changed: string[]): void;

  config(): NodeConfig {
    return structuredClone(this.cfg);
  }

  controller(): ControllerRole | undefined {
    return this.controllerService;
  }

  /**
   * Takes the controller role when `controller.listen` is set: the CETT
   * controller on that address with the configured flows, before the
   * router's own agent connects to it. A ConfigError names what is wrong.
   */
  protected async startController(): Promise<void> {
    const c = this.cfg.controller;
    if (c.listen === '') return;
    const acc = c.acc === 'none' ? undefined : parseAccText(c.acc, c.accMode);
    if (acc && !acc.ok) throw new ConfigError([{ path: '/controller/acc', value: c.acc, expected: acc.error }]);
    const service = new ControllerService({ hysteresis: c.hysteresis, log: this.log, now: () => this.now() });
    for (const [i, text] of c.flows.entries()) {
      const spec = parseFlowText(text, i + 1, acc?.value);
      const r = spec.ok ? service.addFlow(spec.value) : spec;
      if (!r.ok) throw new ConfigError([{ path: `/controller/flows/${i}`, value: text, expected: r.error }]);
    }
    await service.start(c.listen);
    this.controllerService = service;
    const of = this.cfg.openflow;
    if (of.mode !== 'active' || of.controller !== c.listen) {
      // Legitimate (a router that only controls), but then it is no link of any path.
      this.log.warn(
        { event: 'controller-self', openflow: of.mode, controller: of.controller, listen: c.listen },
        `this router runs the controller on ${c.listen} but its own agent does not connect to it (openflow.mode ${of.mode}${of.mode === 'active' ? `, openflow.controller ${of.controller}` : ''}): paths through this router cannot be placed`,
      );
    }
  }

  protected async stopController(): Promise<void> {
    await this.controllerService?.stop();
    this.controllerService = undefined;
  }

  configVersion(): string {
    return this.version;
  }

  reconfigure(next: NodeConfig): string {
    const { checked, changed } = checkLiveChange(this.cfg, next);
    if (changed.length === 0) return this.version;
    this.applyLive(checked, changed);
    this.cfg = checked;
    this.version = configVersion(checked);
    this.log.level = checked.log.level;
    this.log.info({ event: 'reconfigured', changed, version: this.version }, `configuration ${this.version}: ${changed.join(', ')} changed`);
    this.hub.emit({ kind: 'config', atUs: this.now(), version: this.version, changed });
    return this.version;
  }

  subscribe(fn: (e: Telemetry) => void): () => void {
    return this.hub.subscribe(fn);
  }
}
