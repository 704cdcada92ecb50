import type { ChannelPlan } from '../../radio/channels.js';
import { remainingCapacity } from '../channel/capacity.js';
import { ChannelDecision, type Decision } from '../channel/decision.js';
import type { NodeConfig } from '../config/types.js';
import { Rng } from '../core/rng.js';
import type { Micros } from '../core/time.js';
import { CooperativeSensing, type SharedWorkload } from '../sensing/cooperative.js';
import { SensingSchedule, type Visit } from '../sensing/schedule.js';
import { WorkloadEstimator, type ChannelObservation } from '../sensing/workload.js';
import { cooperativeParams, decisionParams, sensingParams, usableChannels } from './params.js';

/** One channel's line in a sensing round's report. */
export interface ChannelReport {
  channel: number;
  /** Merged w (own and neighbours'). */
  w: number;
  /** This node's own w. */
  ownW: number | undefined;
  /** RC of equation (2), bits per second. */
  rc: number;
  meanPowerDbm: number | undefined;
  /** Windows this node monitored on the channel in this round. */
  windows: number;
}

export type NodeEvent =
  | { kind: 'sensing-round'; round: number; startUs: Micros; endUs: Micros; visited: number[]; channels: ChannelReport[] }
  | { kind: 'r1-decision'; decision: Decision };

export type NodeAction =
  | { kind: 'pause-tx'; round: number }
  | { kind: 'resume-tx'; round: number }
  | { kind: 'visit'; visit: Visit }
  | { kind: 'tune-r1'; channel: number }
  | { kind: 'event'; event: NodeEvent };

/**
 * The most rounds R1's first choice waits for a complete one (every visited channel sensed):
 * the third round decides whatever it saw.
 */
export const FIRST_DECISION_ROUNDS = 3;

/**
 * The node's cognitive loop as a sans-IO core: the sensing schedule says when
 * and where to sense, the driver reports what the energy detector saw, and at
 * the end of each round the merged workload feeds the channel decision, which
 * may move R1. Time comes in with every call; actions go out.
 */
export class NodeCore {
  readonly schedule: SensingSchedule;
  readonly workload: WorkloadEstimator;
  readonly cooperative: CooperativeSensing;
  readonly decision: ChannelDecision;
  private readonly neighbourR1 = new Map<string, number>();
  /** Per neighbour, the R1 channels of its own neighbours (receivers two hops away). */
  private readonly twoHopR1 = new Map<string, ReadonlyArray<{ addr: number; r1Channel: number }>>();
  private readonly roundWindows = new Map<number, number>();
  private lastDecision: Decision | undefined;
  /** Draws for the channel decision's p-persistent moves, from the node's seed. */
  private readonly decisionRng: Rng;
  private lastRound: Extract<NodeEvent, { kind: 'sensing-round' }> | undefined;
  /** Incomplete rounds that ended with R1 still unchosen (see FIRST_DECISION_ROUNDS). */
  private roundsWithoutDecision = 0;

  constructor(
    private cfg: NodeConfig,
    readonly plan: ChannelPlan,
    private readonly sensingRetuneUs: Micros,
    startUs: Micros,
  ) {
    this.schedule = new SensingSchedule(sensingParams(cfg, plan, sensingRetuneUs), startUs);
    this.workload = new WorkloadEstimator(cfg.sensing.memory);
    this.cooperative = new CooperativeSensing(cooperativeParams(cfg));
    const initial = cfg.channel.initialChannel > 0 ? cfg.channel.initialChannel : undefined;
    this.decision = new ChannelDecision(plan, decisionParams(cfg, plan), initial, startUs);
    this.decisionRng = Rng.fromSeed(cfg.node.seed).fork(`decision/${cfg.node.id}`);
  }

  get config(): NodeConfig {
    return this.cfg;
  }

  /** The channel R1 is on (or will be once tuned), undefined before the first decision. */
  get r1(): number | undefined {
    return this.decision.current;
  }

  get latestDecision(): Decision | undefined {
    return this.lastDecision;
  }

  get latestRound(): Extract<NodeEvent, { kind: 'sensing-round' }> | undefined {
    return this.lastRound;
  }

  /** Whether sensing and the channel decision run (channel.cognitive). */
  get cognitive(): boolean {
    return this.cfg.channel.cognitive;
  }

  nextDeadline(): Micros | undefined {
    return this.cognitive ? this.schedule.nextDeadline() : undefined;
  }

  tick(now: Micros): NodeAction[] {
    if (!this.cognitive) return [];
    const out: NodeAction[] = [];
    for (const a of this.schedule.tick(now)) if (a.kind !== 'round-done') out.push(a);
    if (out.length > 0) this.roundWindows.clear();
    return out;
  }

  /** The driver finished a visit; `obs` is what the detector saw there. */
  visitDone(obs: ChannelObservation, now: Micros): NodeAction[] {
    this.workload.observe(obs);
    this.roundWindows.set(obs.channel, (this.roundWindows.get(obs.channel) ?? 0) + obs.windows);
    const out: NodeAction[] = [];
    for (const a of this.schedule.visitDone(now)) {
      if (a.kind === 'round-done') out.push(...this.endRound(a.round, a.startUs, a.endUs, a.channels, now));
      else out.push(a);
    }
    return out;
  }

  /** A neighbour's shared w vector arrived on R3. */
  neighbourWorkload(from: string, entries: readonly SharedWorkload[], now: Micros): { accepted: number; rejected: number } {
    return this.cooperative.receive(from, now, entries);
  }

  /** A neighbour announced its R1 channel on R3 (undefined: it left). */
  neighbourChannel(from: string, channel: number | undefined): void {
    if (channel === undefined) {
      this.neighbourR1.delete(from);
      this.twoHopR1.delete(from);
    } else this.neighbourR1.set(from, channel);
  }

  /** A neighbour told the R1 channels of its own neighbours (its HELLO's neighbour list). */
  neighbourNeighbours(from: string, list: ReadonlyArray<{ addr: number; r1Channel: number }>): void {
    this.twoHopR1.set(from, list);
  }

  /**
   * The receivers whose channel R1 would share: neighbours, and receivers
   * two hops away (their senders are this node's neighbours, within
   * interference range), each counted once.
   */
  sharers(): Map<string, number> {
    const out = new Map(this.neighbourR1);
    const self = String(this.cfg.node.id);
    for (const list of this.twoHopR1.values()) {
      for (const e of list) {
        const key = String(e.addr);
        if (key !== self && !out.has(key)) out.set(key, e.r1Channel);
      }
    }
    return out;
  }

  /** What this node shares with its neighbours: its own w per channel. */
  sharedWorkload(): SharedWorkload[] {
    return this.workload.all().map((e) => ({ channel: e.channel, w: e.w, windows: e.windows }));
  }

  /** Applies a new configuration to the running core (validated by the caller). */
  reconfigure(cfg: NodeConfig, now: Micros): void {
    this.schedule.reconfigure(sensingParams(cfg, this.plan, this.sensingRetuneUs), now);
    this.workload.setMemory(cfg.sensing.memory);
    this.cooperative.setParams(cooperativeParams(cfg));
    this.decision.setParams(decisionParams(cfg, this.plan));
    this.cfg = cfg;
  }

  private endRound(round: number, startUs: Micros, endUs: Micros, visited: number[], now: Micros): NodeAction[] {
    const channels = usableChannels(this.cfg, this.plan);
    const own = this.workload.all();
    const merged = this.cooperative.merge(own, now, channels, this.cfg.sensing.cooperative.enabled);
    const C = this.cfg.channel.capacityMbps * 1e6;
    const reports: ChannelReport[] = merged.map((m) => ({
      channel: m.channel,
      w: m.w,
      ownW: m.ownW,
      rc: remainingCapacity(m.w, C),
      meanPowerDbm: own.find((o) => o.channel === m.channel)?.meanPowerDbm,
      windows: this.roundWindows.get(m.channel) ?? 0,
    }));
    const roundEvent: NodeEvent = { kind: 'sensing-round', round, startUs, endUs, visited, channels: reports };
    this.lastRound = roundEvent;
    const workload = new Map(merged.map((m) => [m.channel, m.w]));
    const draw = this.decisionRng.next();
    // R1's first channel comes from a round in which every visit saw samples. In real time a
    // visit can see none (timers so late at start-up that its capture time is gone, a failed
    // read), and a channel without an estimate is not a candidate, so the first choice would
    // be among the channels that happened to be sensed. In virtual time every visit captures
    // its share of T_s, so every round is complete and nothing waits. A channel whose reads
    // always fail must not keep R1 off the air for good: the wait is FIRST_DECISION_ROUNDS long.
    const complete = visited.every((ch) => (this.roundWindows.get(ch) ?? 0) > 0);
    const decision: Decision =
      this.decision.current === undefined && !complete && this.roundsWithoutDecision++ < FIRST_DECISION_ROUNDS - 1
        ? {
            channel: undefined,
            previous: undefined,
            changed: false,
            reason: 'incomplete-round',
            scores: this.decision.score(workload, this.sharers()),
            atUs: now,
          }
        : this.decision.decide(workload, this.sharers(), now, draw);
    this.lastDecision = decision;
    const out: NodeAction[] = [
      { kind: 'event', event: roundEvent },
      { kind: 'event', event: { kind: 'r1-decision', decision } },
    ];
    if (decision.changed && decision.channel !== undefined) out.push({ kind: 'tune-r1', channel: decision.channel });
    return out;
  }
}
