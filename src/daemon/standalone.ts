import type { NodeConfig } from '../config/types.js';
import type { Scheduler } from '../core/scheduler.js';
import type { Micros } from '../core/time.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import { VnfError } from '../vnf/manager.js';
import type { FlowPattern, VnfInfo } from '../vnf/types.js';
import type { DriverEvent } from '../router/sensing.js';
import type { Logger } from '../core/log.js';
import { startNode, type RunningNode } from './node.js';
import { qosQueues } from '../router/params.js';
import { startOpenFlow, type OpenFlowSide } from './openflow.js';
import { spectrumView, type FlowView, type QueueView, type RouterStatus, type RouterView, type SpectrumView } from '../router/view.js';
import { LiveConfigView } from './live-view.js';
import { monitorTaps } from './monitor-taps.js';

/**
 * A node that senses and decides R1 but is on no air medium (hardware
 * front-ends, or the emulated band alone): its control API and monitor show
 * the spectrum and the R1 decision and take live sensing and decision
 * settings; it has no neighbours, routes, queues or data path, so it refuses
 * VNFs.
 */
export class StandaloneNode extends LiveConfigView implements RouterView {
  readonly id: number;
  readonly name: string;
  protected readonly startedUs: Micros;
  private node!: RunningNode;
  private lastR1: { atUs: Micros; reason: string } | undefined;

  private constructor(
    cfg: NodeConfig,
    private readonly scheduler: Scheduler,
    log: Logger,
  ) {
    super(cfg, log);
    this.id = cfg.node.id;
    this.name = cfg.node.name;
    this.startedUs = scheduler.now();
  }

  static async start(cfg: NodeConfig, scheduler: Scheduler, log: Logger): Promise<StandaloneNode> {
    const v = new StandaloneNode(cfg, scheduler, log);
    // The real-time scheduler's clock is the epoch's: the recordings' datetimes need no offset.
    v.taps = monitorTaps(cfg, { now: () => scheduler.now(), epochUs: 0, log, emit: (t) => v.emitTelemetry(t) });
    v.node = await startNode(cfg, { scheduler, log, onEvent: (e) => v.onEvent(e), ...(v.taps.tap ? { iqTap: v.taps.tap } : {}) });
    try {
      await v.startController();
    } catch (e) {
      await v.node.stop();
      throw e;
    }
    if (cfg.openflow.mode !== 'off') {
      try {
        // No neighbours without an air medium: the agent shows the LOCAL port, whose speed is RC on R1's channel.
        v.openflow = await startOpenFlow(
          cfg,
          {
            node: { id: cfg.node.id, name: cfg.node.name },
            now: () => scheduler.now(),
            enter: (fn) => fn(scheduler.now()),
            neighbours: () => [],
            w: () => new Map((v.node.core.latestRound?.channels ?? []).map((c) => [c.channel, c.w])),
            r1Channel: () => v.node.core.r1,
            capacityKbps: () => Math.round(v.cfg.channel.capacityMbps * 1000),
            link: () => undefined,
            local: () => ({ rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, txDropped: 0 }),
            queues: () => qosQueues(v.cfg),
          },
          log,
          process.env.npm_package_version ?? '0.1.0',
        );
      } catch (e) {
        await v.stopController();
        await v.node.stop();
        throw e;
      }
    }
    return v;
  }

  /** The node's OpenFlow agent, when openflow.mode is not off. */
  openflow: OpenFlowSide | undefined;

  async stop(): Promise<void> {
    await this.stopTaps();
    this.hub.clear();
    await this.openflow?.stop();
    await this.stopController();
    await this.node.stop();
  }

  private onEvent(e: DriverEvent): void {
    switch (e.kind) {
      case 'sensing-round':
        this.hub.emit({ kind: 'spectrum', atUs: e.endUs, spectrum: spectrumView(this.node.core.plan, e) });
        return;
      case 'r1-decision':
        if (e.decision.changed) this.lastR1 = { atUs: e.decision.atUs, reason: e.decision.reason };
        this.hub.emit({ kind: 'r1', atUs: e.decision.atUs, channel: e.decision.channel, changed: e.decision.changed, reason: e.decision.reason });
        return;
      default:
        return;
    }
  }

  now(): Micros {
    return this.scheduler.now();
  }

  status(): RouterStatus & { pid: number } {
    const core = this.node.core;
    const now = this.scheduler.now();
    return {
      ...this.statusHead(now),
      mesh: false,
      r1: { channel: core.r1, since: this.lastR1?.atUs, reason: core.latestDecision?.reason },
      r2: { channel: undefined, dwellEndUs: undefined, switches: 0 },
      r3: { channel: this.cfg.radios.R3.channel },
      sensing: {
        rounds: core.latestRound === undefined ? 0 : core.latestRound.round + 1,
        durationMs: this.cfg.sensing.durationMs,
        periodMs: this.cfg.sensing.periodMs,
        ccaThresholdDbm: this.node.detector.ccaThresholdDbm,
        transmitPaused: this.node.sensing.transmitPaused,
      },
      counters: {},
      drops: {},
    };
  }

  protected applyLive(checked: NodeConfig): void {
    this.node.core.reconfigure(checked, this.scheduler.now());
    this.node.detector.setThreshold(checked.sensing.ccaThresholdDbm);
    this.node.driver.rearm();
  }

  neighbours(): NeighbourView[] {
    return [];
  }

  routes(): RouteView[] {
    return [];
  }

  queues(): QueueView[] {
    return [];
  }

  flows(): FlowView[] {
    return [];
  }

  spectrum(): SpectrumView | undefined {
    const e = this.node.core.latestRound;
    return e ? spectrumView(this.node.core.plan, e) : undefined;
  }

  vnfs(): VnfInfo[] {
    return [];
  }

  startVnf(_type: string, _flow: FlowPattern, _params: unknown): Promise<VnfInfo> {
    return Promise.reject(new VnfError('VNF_NO_DATA_PATH', 'vnf.start: this node is on no air medium (sim.medium.endpoint is empty), so no flow crosses it'));
  }

  stopVnf(id: number): Promise<VnfInfo> {
    return Promise.reject(new VnfError('VNF_UNKNOWN_INSTANCE', `vnf: no running instance ${id}`));
  }
}
