import { ConfigVersions } from '../config/load.js';
import type { LiveChange } from '../config/live.js';
import type { NodeConfig } from '../config/types.js';
import { ConfigError } from '../core/errors.js';
import { logLoss, type Logger } from '../core/log.js';
import type { Micros } from '../core/time.js';
import { parseAccText, parseFlowText } from '../openflow/flow-spec.js';
import { parseActiveEndpoint, parsePassiveEndpoint, reaches } from '../openflow/endpoint.js';
import type { ControllerRole, RecordingControl, RouterStatus, Telemetry } from '../router/view.js';
import type { PsdTapCounters } from '../sensing/iq-tap.js';
import { ControllerService } from './controller-service.js';
import type { MonitorTaps } from './monitor-taps.js';

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
  /** The running configuration's version, hashed again after a change only where it changed. */
  private readonly versions: ConfigVersions;
  protected readonly hub: TelemetryHub;

  constructor(
    cfg: NodeConfig,
    protected readonly log: Logger,
  ) {
    this.cfg = cfg;
    this.versions = new ConfigVersions(cfg);
    this.hub = new TelemetryHub(log);
  }

  /** The controller role's service, when `controller.listen` is set. */
  protected controllerService: ControllerService | undefined;
  /** What reads the sensing IQ for the monitor (its PSD, its recordings), set by the host. */
  protected taps: MonitorTaps | undefined;

  /** Telemetry from outside the router's own events (the monitor's taps). */
  emitTelemetry(t: Telemetry): void {
    this.hub.emit(t);
  }

  recordings(): RecordingControl | undefined {
    return this.taps?.recorder;
  }

  psdCounters(): PsdTapCounters | undefined {
    const c = this.taps?.psd?.counters;
    return c ? { ...c } : undefined;
  }

  /** Ends a recording in progress, so that its files are whole when the router stops. */
  protected async stopTaps(): Promise<void> {
    await this.taps?.recorder?.stop();
  }

  abstract now(): Micros;
  abstract readonly id: number;
  abstract readonly name: string;
  /** When the router started (its clock). */
  protected abstract readonly startedUs: Micros;

  /** What every status begins with: who, when, since when, which configuration. */
  protected statusHead(now: Micros): Pick<RouterStatus, 'node' | 'atUs' | 'uptimeS' | 'configVersion' | 'log'> & { pid: number } {
    const loss = logLoss(this.log);
    return {
      node: { id: this.id, name: this.name },
      pid: process.pid,
      atUs: now,
      uptimeS: Math.round((now - this.startedUs) / 1000) / 1000,
      configVersion: this.version,
      ...(loss === undefined ? {} : { log: loss }),
    };
  }

  /** Hands a checked configuration to the running cores, in one step. */
  protected abstract applyLive(next: NodeConfig, changed: string[]): void;

  config(): NodeConfig {
    return structuredClone(this.cfg);
  }

  runningConfig(): Readonly<NodeConfig> {
    return this.cfg;
  }

  controller(): ControllerRole | undefined {
    return this.controllerService;
  }

  /**
   * Takes the controller role when `controller.listen` or `controller.connect`
   * is set: the CETT controller there with the configured flows, before the
   * router's own agent connects to it. A ConfigError names what is wrong.
   */
  protected async startController(): Promise<void> {
    const c = this.cfg.controller;
    if (c.listen === '' && c.connect.length === 0) return;
    const acc = c.acc === 'none' ? undefined : parseAccText(c.acc, c.accMode);
    if (acc && !acc.ok) throw new ConfigError([{ path: '/controller/acc', value: c.acc, expected: acc.error }]);
    const of = this.cfg.openflow;
    const service = new ControllerService({
      hysteresis: c.hysteresis,
      log: this.log,
      now: () => this.now(),
      tls: c.tls,
      reconnectMinMs: of.reconnectMinMs,
      reconnectMaxMs: of.reconnectMaxMs,
    });
    for (const [i, text] of c.flows.entries()) {
      const spec = parseFlowText(text, i + 1, acc?.value);
      const r = spec.ok ? service.addFlow(spec.value) : spec;
      if (!r.ok) throw new ConfigError([{ path: `/controller/flows/${i}`, value: text, expected: r.error }]);
    }
    await service.start(c.listen, c.connect);
    this.controllerService = service;
    if (!controlsItself(this.cfg)) {
      // Legitimate (a router that only controls), but then it is no link of any path.
      this.log.warn(
        { event: 'controller-self', openflow: of.mode, controller: of.controller, listen: c.listen, connect: c.connect },
        `this router runs the controller${c.listen === '' ? '' : ` on ${c.listen}`} but its own agent and the controller do not meet (openflow.mode ${of.mode}${of.mode === 'active' ? `, openflow.controller ${of.controller}` : `, openflow.listen ${of.listen}`}): paths through this router cannot be placed`,
      );
    }
  }

  protected async stopController(): Promise<void> {
    await this.controllerService?.stop();
    this.controllerService = undefined;
  }

  configVersion(): string {
    return this.versions.version;
  }

  /** The running configuration's version. */
  protected get version(): string {
    return this.versions.version;
  }

  reconfigure(change: LiveChange): string {
    if (change.from !== this.version) {
      throw new ConfigError(
        [{ path: '/', value: change.from, expected: `a change checked against the running configuration, version ${this.version}` }],
        'set',
      );
    }
    if (change.restartOnly.length > 0) throw new ConfigError(change.restartOnly, 'set');
    const { checked, changed } = change;
    if (changed.length === 0) return this.version;
    this.applyLive(checked, changed);
    this.cfg = checked;
    this.versions.update(checked, changed);
    // Setting pino's level rebuilds its methods: only when it changes.
    if (this.log.level !== checked.log.level) this.log.level = checked.log.level;
    this.log.info({ event: 'reconfigured', changed, version: this.version }, `configuration ${this.version}: ${changed.join(', ')} changed`);
    this.hub.emit({ kind: 'config', atUs: this.now(), version: this.version, changed });
    return this.version;
  }

  subscribe(fn: (e: Telemetry) => void): () => void {
    return this.hub.subscribe(fn);
  }
}

/** Whether a router's own agent and its controller role meet: the agent connects to where the role listens, or the role connects to where the agent listens. */
function controlsItself(cfg: NodeConfig): boolean {
  const of = cfg.openflow;
  const c = cfg.controller;
  const listen = c.listen === '' ? undefined : parsePassiveEndpoint(c.listen);
  if (of.mode === 'active') {
    const agent = parseActiveEndpoint(of.controller);
    return agent.ok && listen?.ok === true && reaches(agent.value, listen.value);
  }
  if (of.mode !== 'passive') return false;
  const agent = parsePassiveEndpoint(of.listen);
  return (
    agent.ok &&
    c.connect.some((t) => {
      const e = parseActiveEndpoint(t);
      return e.ok && reaches(e.value, agent.value);
    })
  );
}
