import { Writable } from 'node:stream';
import { configVersion, defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { CogmeshError, ConfigError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import { createLogger, type Logger } from '../../src/core/log.js';
import type { NeighbourView, RouteView } from '../../src/routing/aodv.js';
import {
  type ControllerRole,
  type FlowView,
  type QueueView,
  type RouterStatus,
  type RouterView,
  type SpectrumView,
  type Telemetry,
} from '../../src/router/view.js';
import type { LiveChange } from '../../src/config/live.js';
import { newVnfInfo, type FlowPattern, type VnfInfo } from '../../src/vnf/types.js';

/**
 * A RouterView for the control API's tests: a real NodeConfig with its real
 * configVersion, a reconfigure that validates and applies for real (and
 * refuses restart-only fields as the daemon does), fixed tables, VNFs kept
 * in a list, and telemetry sent to subscribers (`emit`, and a `config` event
 * on every reconfigure).
 */
export class TestRouterView implements RouterView {
  readonly id: number;
  readonly name: string;
  private cfg: NodeConfig;
  private readonly startUs: Micros;
  private readonly subscribers = new Set<(e: Telemetry) => void>();
  private readonly instances: VnfInfo[] = [];
  private nextVnf = 1;
  /** Every configuration applied, oldest first. */
  readonly applied: NodeConfig[] = [];
  /** VNF types startVnf knows. */
  readonly vnfTypes = new Set(['tcp-acc']);
  /** The controller role, when a test gives it one. */
  controllerRole: ControllerRole | undefined;

  controller(): ControllerRole | undefined {
    return this.controllerRole;
  }

  constructor(cfg: NodeConfig = defaultNodeConfig(3)) {
    this.cfg = structuredClone(cfg);
    this.id = cfg.node.id;
    this.name = cfg.node.name;
    this.startUs = this.now();
  }

  now(): Micros {
    return Date.now() * 1000;
  }

  status(): RouterStatus {
    const s = this.cfg.sensing;
    const atUs = this.now();
    return {
      node: { id: this.id, name: this.name },
      atUs,
      uptimeS: (atUs - this.startUs) / 1e6,
      configVersion: this.configVersion(),
      mesh: false,
      r1: { channel: 11, since: this.startUs, reason: 'most remaining capacity' },
      r2: { channel: undefined, dwellEndUs: undefined, switches: 0 },
      r3: { channel: this.cfg.radios.R3.channel },
      sensing: { rounds: 4, durationMs: s.durationMs, periodMs: s.periodMs, ccaThresholdDbm: s.ccaThresholdDbm, transmitPaused: false },
      counters: { sensingRounds: 4 },
      drops: {},
    };
  }

  config(): NodeConfig {
    return structuredClone(this.cfg);
  }

  runningConfig(): Readonly<NodeConfig> {
    return this.cfg;
  }

  configVersion(): string {
    return configVersion(this.cfg);
  }

  reconfigure(change: LiveChange): string {
    if (change.from !== this.configVersion()) throw new ConfigError([{ path: '/', value: change.from, expected: 'the running version' }], 'reconfigure');
    if (change.restartOnly.length > 0) throw new ConfigError(change.restartOnly, 'reconfigure');
    const { checked, changed } = change;
    this.cfg = checked;
    this.applied.push(structuredClone(checked));
    const version = this.configVersion();
    this.emit({ kind: 'config', atUs: this.now(), version, changed });
    return version;
  }

  neighbours(): NeighbourView[] {
    return [{ addr: 2, lastHeardUs: this.now() - 300_000, r1Channel: 6, lostAtUs: this.now() + 2_700_000 }];
  }

  routes(): RouteView[] {
    return [
      {
        dst: 4,
        seq: 7,
        state: 'valid',
        advertisedHops: 2,
        paths: [{ nextHop: 2, hopCount: 2, pathCost: 1.5, lastHop: 2, expiresUs: this.now() + 3_000_000, chosen: true }],
        chosen: 2,
        precursors: [],
        deleteAtUs: undefined,
      },
    ];
  }

  queues(): QueueView[] {
    return [
      {
        channel: 6,
        packets: 3,
        bytes: 3000,
        classes: [
          { queue: 1, name: 'high', packets: 1, bytes: 1000 },
          { queue: 0, name: 'best-effort', packets: 2, bytes: 2000 },
        ],
      },
    ];
  }

  flows(): FlowView[] {
    return [{ proto: 'udp', src: 3, dst: 4, flow: 1, role: 'source', packets: 120, bytes: 120_000, nextHop: 2, lastUs: this.now(), label: 0 }];
  }

  spectrum(): SpectrumView | undefined {
    const t = this.now();
    return {
      round: 4,
      startUs: t - 70_000,
      endUs: t,
      channels: [
        { channel: 1, centerMHz: 2412, w: 0.3, ownW: 0.3, rcBps: 1.4e6, powerDbm: -70.2 },
        { channel: 6, centerMHz: 2437, w: 0.8, ownW: undefined, rcBps: 0.4e6, powerDbm: undefined },
        { channel: 11, centerMHz: 2462, w: 0, ownW: 0, rcBps: 2e6, powerDbm: -95 },
      ],
    };
  }

  vnfs(): VnfInfo[] {
    return structuredClone(this.instances);
  }

  async startVnf(type: string, flow: FlowPattern, params: unknown): Promise<VnfInfo> {
    if (!this.vnfTypes.has(type)) throw new CogmeshError('VNF_UNKNOWN_TYPE', `vnf: no type "${type}" (known: ${[...this.vnfTypes].join(', ')})`);
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      throw new ConfigError([{ path: '/params', value: params, expected: 'an object' }], `vnf ${type}`);
    const info = newVnfInfo(this.nextVnf++, type, flow, params as Record<string, unknown>, this.now());
    this.instances.push(info);
    this.emit({ kind: 'vnf', atUs: info.startedAtUs, event: { kind: 'started', id: info.id, type, atUs: info.startedAtUs } });
    return structuredClone(info);
  }

  async stopVnf(id: number): Promise<VnfInfo> {
    const inst = this.instances.find((i) => i.id === id && i.state === 'running');
    if (!inst) throw new CogmeshError('VNF_UNKNOWN_INSTANCE', `vnf: no running instance ${id}`);
    inst.state = 'stopped';
    inst.endedAtUs = this.now();
    inst.reason = 'terminated';
    this.emit({ kind: 'vnf', atUs: inst.endedAtUs, event: { kind: 'stopped', id, type: inst.type, atUs: inst.endedAtUs, reason: 'terminated' } });
    return structuredClone(inst);
  }

  subscribe(fn: (e: Telemetry) => void): () => void {
    this.subscribers.add(fn);
    return () => {
      this.subscribers.delete(fn);
    };
  }

  /** Sends a telemetry event to every subscriber. */
  emit(e: Telemetry): void {
    for (const fn of this.subscribers) fn(e);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }
}

/** A logger that keeps its lines, to check what the server logged. */
export function memoryLogger(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', format: 'json', destination }), lines };
}
