import type { Frontend, IqBlock } from '../../radio/frontend.js';
import type { EventId } from '../core/engine.js';
import type { Scheduler } from '../core/scheduler.js';
import type { Micros } from '../core/time.js';
import { VisitTally, type ChannelObservation } from '../sensing/workload.js';
import type { NodeAction, NodeCore, NodeEvent } from './core.js';

/** What the driver needs of the energy detector. */
export interface Detector {
  detect(block: IqBlock): { windows: number; busyWindows: number; meanPowerDbm: number; busyMeanPowerDbm: number | undefined };
  /** A buffer the detector reads in place (its backend's memory), or undefined. */
  allocateBlock?(count: number): Float32Array | undefined;
}

export interface NodeDriverParts {
  core: NodeCore;
  scheduler: Scheduler;
  /** The radio that senses. */
  sensing: Frontend;
  /** The receive radio, tuned to the decided channel (may be the sensing radio itself). */
  r1: Frontend;
  detector: Detector;
  /** Called for every event of the core, and for driver happenings. */
  onEvent: (e: DriverEvent) => void;
  /** Largest block read from a front-end at once, in complex samples. */
  maxBlockSamples?: number;
}

export type DriverEvent =
  | NodeEvent
  | { kind: 'r1-tuned'; channel: number; retuneUs: Micros; atUs: Micros }
  | { kind: 'tx-paused' | 'tx-resumed'; round: number; atUs: Micros }
  | { kind: 'driver-error'; where: string; error: unknown; atUs: Micros };

/**
 * Runs a NodeCore against real front-ends and a scheduler. The same driver
 * serves real time (RealTimeScheduler and hardware or emulated radios) and
 * virtual time (the event engine, pumped by `runVirtual`): it only awaits
 * front-ends and asks the scheduler for wake-ups.
 */
export class NodeDriver {
  private timer: EventId | undefined;
  private running = false;
  private busy: Promise<void> = Promise.resolve();
  private txPaused = false;

  /** Where sensing blocks are read into: the detector's own memory when it has some, so no block is copied. */
  private readonly blockBuffer: Float32Array | undefined;

  constructor(private readonly p: NodeDriverParts) {
    this.blockBuffer = p.detector.allocateBlock?.(this.maxBlock);
  }

  private get maxBlock(): number {
    return this.p.maxBlockSamples ?? 1 << 16;
  }

  get transmitPaused(): boolean {
    return this.txPaused;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const r1 = this.p.core.r1;
    if (r1 !== undefined) this.busy = this.tuneR1(r1);
    this.arm();
  }

  /** Stops scheduling; resolves when the work in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.p.scheduler.cancel(this.timer);
    this.timer = undefined;
    await this.busy;
  }

  /** Re-reads the core's deadline (after a reconfiguration). */
  rearm(): void {
    this.arm();
  }

  private arm(): void {
    if (!this.running) return;
    if (this.timer !== undefined) this.p.scheduler.cancel(this.timer);
    this.timer = undefined;
    const due = this.p.core.nextDeadline();
    if (due === undefined) return;
    const at = Math.max(due, this.p.scheduler.now());
    this.timer = this.p.scheduler.at(at, (now) => {
      this.timer = undefined;
      this.busy = this.busy.then(() => this.execute(this.p.core.tick(now)));
    });
  }

  private async execute(actions: NodeAction[]): Promise<void> {
    for (const a of actions) {
      if (!this.running) return;
      switch (a.kind) {
        case 'pause-tx':
          this.txPaused = true;
          this.p.onEvent({ kind: 'tx-paused', round: a.round, atUs: this.p.scheduler.now() });
          break;
        case 'resume-tx':
          this.txPaused = false;
          this.p.onEvent({ kind: 'tx-resumed', round: a.round, atUs: this.p.scheduler.now() });
          break;
        case 'event':
          this.p.onEvent(a.event);
          break;
        case 'tune-r1':
          await this.tuneR1(a.channel);
          break;
        case 'visit': {
          let obs: ChannelObservation;
          try {
            obs = await this.visit(a.visit.channel, a.visit.captureUs, a.visit.endUs);
          } catch (error) {
            if (!this.running) return; // stopping: the radio was closed under the visit
            // A failed visit counts as a visit that saw nothing; the round goes on.
            this.p.onEvent({ kind: 'driver-error', where: `sensing channel ${a.visit.channel}`, error, atUs: this.p.scheduler.now() });
            obs = { channel: a.visit.channel, windows: 0, busyWindows: 0, meanPowerDbm: -Infinity, busyMeanPowerDbm: undefined, atUs: this.p.scheduler.now() };
          }
          await this.execute(this.p.core.visitDone(obs, this.p.scheduler.now()));
          break;
        }
      }
    }
    // After a round on R1 itself, R1 goes back to its channel.
    if (actions.some((a) => a.kind === 'resume-tx') && this.p.sensing === this.p.r1) {
      const ch = this.p.core.r1;
      if (ch !== undefined && !actions.some((a) => a.kind === 'tune-r1')) await this.tuneR1(ch);
    }
    this.arm();
  }

  private async visit(channel: number, plannedUs: Micros, endUs: Micros): Promise<ChannelObservation> {
    const fe = this.p.sensing;
    await fe.tune(this.p.core.plan.get(channel).centerHz);
    // Timer lateness (real time) would otherwise add up over a round's visits and stretch T_s.
    const captureUs = Math.max(0, Math.min(plannedUs, endUs - this.p.scheduler.now()));
    let remaining = Math.round((captureUs * fe.capabilities.sampleRateHz) / 1e6);
    const max = this.maxBlock;
    const tally = new VisitTally();
    while (remaining > 0) {
      const n = Math.min(remaining, max);
      tally.add(this.p.detector.detect(await fe.readIq(n, this.blockBuffer)));
      remaining -= n;
    }
    return tally.observation(channel, this.p.scheduler.now());
  }

  private async tuneR1(channel: number): Promise<void> {
    try {
      const r = await this.p.r1.tune(this.p.core.plan.get(channel).centerHz);
      this.p.onEvent({ kind: 'r1-tuned', channel, retuneUs: r.retuneUs, atUs: this.p.scheduler.now() });
    } catch (error) {
      if (!this.running) return;
      this.p.onEvent({ kind: 'driver-error', where: `tuning R1 to channel ${channel}`, error, atUs: this.p.scheduler.now() });
    }
  }
}
