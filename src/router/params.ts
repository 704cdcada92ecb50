import type { PrefixParams } from '../routing/prefixes.js';
import type { ChannelPlan } from '../../radio/channels.js';
import type { DecisionParams } from '../channel/decision.js';
import type { NodeConfig } from '../config/types.js';
import { US_PER_MS, type Micros } from '../core/time.js';
import type { AodvParams } from '../routing/aodv.js';
import { BEST_EFFORT_QUEUE } from '../sched/classes.js';
import type { ChannelSchedulerParams, QosClass } from '../sched/types.js';
import type { CooperativeParams } from '../sensing/cooperative.js';
import type { SensingScheduleParams } from '../sensing/schedule.js';

/**
 * The node configuration in each core's own units: every core takes its
 * parameters in microseconds and bits per second, and only the router
 * composition knows the configuration's field names.
 */

/** The parts of the configuration the node core runs on, in core units. */
export function sensingParams(cfg: NodeConfig, plan: ChannelPlan, retuneUs: Micros): SensingScheduleParams {
  return {
    durationUs: cfg.sensing.durationMs * US_PER_MS,
    periodUs: cfg.sensing.periodMs * US_PER_MS,
    channelsPerRound: cfg.sensing.channelsPerRound,
    channels: usableChannels(cfg, plan),
    retuneUs,
  };
}

export function decisionParams(cfg: NodeConfig, plan: ChannelPlan): DecisionParams {
  return {
    capacityBps: cfg.channel.capacityMbps * 1e6,
    hysteresis: cfg.channel.hysteresis,
    minDwellUs: cfg.channel.minDwellMs * US_PER_MS,
    loadBps: cfg.channel.loadMbps * 1e6,
    allowed: r1Channels(cfg, plan),
    contendedMoveProbability: cfg.channel.contendedMoveProbability,
  };
}

/**
 * The channels R1 may take: the usable ones clear of the common control
 * channel R3 sits on (spectral overlap below `channel.controlGuard`), so that
 * data never contends with HELLOs and route discovery. When the guard leaves
 * nothing, R1 may take any usable channel but R3's own; when even that leaves
 * nothing, any usable channel.
 */
export function r1Channels(cfg: NodeConfig, plan: ChannelPlan): number[] {
  const usable = usableChannels(cfg, plan);
  const cch = cfg.radios.R3.channel;
  const clear = usable.filter((c) => plan.overlapFactor(c, cch) < cfg.channel.controlGuard);
  if (clear.length > 0) return clear;
  const notCch = usable.filter((c) => c !== cch);
  return notCch.length > 0 ? notCch : usable;
}

export function cooperativeParams(cfg: NodeConfig): CooperativeParams {
  const c = cfg.sensing.cooperative;
  return { halfLifeUs: c.halfLifeMs * US_PER_MS, maxAgeUs: c.maxAgeMs * US_PER_MS, neighbourWeight: c.neighbourWeight };
}

/** Multipath AODV's parameters from the node configuration, in core units. */
export function aodvParams(cfg: NodeConfig): Partial<AodvParams> {
  const r = cfg.routing;
  return {
    helloIntervalUs: r.helloIntervalMs * US_PER_MS,
    allowedHelloLoss: r.allowedHelloLoss,
    activeRouteTimeoutUs: r.activeRouteTimeoutMs * US_PER_MS,
    myRouteTimeoutUs: 2 * r.activeRouteTimeoutMs * US_PER_MS,
    nodeTraversalUs: r.nodeTraversalMs * US_PER_MS,
    netDiameter: r.netDiameter,
    rreqRetries: r.rreqRetries,
    maxPaths: r.maxPaths,
    pathHysteresis: r.pathHysteresis,
    destinationOnly: r.destinationOnly,
  };
}

/** The prefix announcements' parameters (the ip section; relaying waits the AODV broadcast jitter). */
export function prefixParams(cfg: NodeConfig): PrefixParams {
  const intervalUs = cfg.ip.announceIntervalMs * US_PER_MS;
  return { announceIntervalUs: intervalUs, lifetimeUs: 3 * intervalUs, netDiameter: cfg.routing.netDiameter, jitterUs: 10 * US_PER_MS };
}

/** The R2 channel scheduler's parameters from the node configuration, in core units. */
/** R2's scheduler; `macWindow`: packets R2's MAC may hold at once (the medium's `sendWindow`: 1 in process). */
export function schedulerParams(cfg: NodeConfig, channels: readonly number[], macWindow = 1): ChannelSchedulerParams {
  return {
    channels,
    queuePackets: cfg.switching.queuePackets,
    switchingIntervalUs: cfg.switching.intervalMs * US_PER_MS,
    overheadUs: cfg.switching.overheadUs,
    adaptive: cfg.switching.adaptive,
    workConserving: cfg.switching.workConserving,
    classes: qosClasses(cfg),
    ...(macWindow !== 1 ? { macWindow } : {}),
  };
}

/** The QoS queues of every link as OpenFlow shows them: id and guaranteed rate, highest priority first. */
export function qosQueues(cfg: NodeConfig): Array<{ queue: number; minKbps: number }> {
  return qosClasses(cfg).map(({ queue, minKbps }) => ({ queue, minKbps }));
}

/** The scheduler's classes from `qos`: the configured ones in order, then best effort (queue 0). */
export function qosClasses(cfg: NodeConfig): QosClass[] {
  const burstUs = cfg.qos.burstMs * US_PER_MS;
  return [...cfg.qos.classes.map((c) => ({ queue: c.queue, minKbps: c.minKbps, burstUs })), { queue: BEST_EFFORT_QUEUE, minKbps: 0, burstUs: 0 }];
}

export function usableChannels(cfg: NodeConfig, plan: ChannelPlan): number[] {
  return cfg.channelPlan.allowed.length > 0 ? [...cfg.channelPlan.allowed] : plan.numbers;
}
