import type { Micros } from '../core/time.js';
import type { GatewayState } from '../gateway/role.js';
import type { NeighbourView, RouteView } from '../routing/aodv.js';
import type { FlowView, QueueView, RouterStatus, Telemetry } from '../router/view.js';
import type { VnfInfo } from '../vnf/types.js';

/**
 * The monitor's stream (docs/monitor-protocol.md): JSON text messages, and
 * binary spectrum frames (frames.ts). The server writes these types and the
 * page reads them, so the two cannot drift apart.
 */

/** Version of the stream's messages (the `hello` says it). */
export const MONITOR_PROTOCOL = 1;

/** A value as the stream carries it: JSON, where an undefined field is written as null. */
export type OnWire<T> = T extends undefined
  ? null
  : T extends ReadonlyArray<infer U>
    ? Array<OnWire<U>>
    : T extends object
      ? { [K in keyof T]: OnWire<T[K]> }
      : T;

/** First message on a connection, before the history of rounds. */
export interface HelloMessage {
  type: 'hello';
  protocol: number;
  node: { id: number; name: string };
  /** Every channel of the plan, in order: the waterfalls' columns. */
  channels: number[];
  allowed: number[];
  /** C of equation (2), bits per second. */
  capacityBps: number;
  queuePackets: number;
  configVersion: string;
  statePeriodMs: number;
  atUs: Micros;
  /** Binary frames of history that follow (spectra of the last rounds and the PSDs of their visits). */
  history: number;
  /** The PSD frames the router sends (monitor.psd), or null when it sends none. */
  psd: { bins: number; segments: number } | null;
}

/** The router's state, on connect and every statePeriodMs. */
export interface StateMessage {
  type: 'state';
  atUs: Micros;
  status: RouterStatus;
  queues: QueueView[];
  neighbours: NeighbourView[];
  routes: RouteView[];
  vnfs: VnfInfo[];
  flows: FlowView[];
  /** The gateway role's clients, queues, rates, slices and dependence graph; null when the router does not have the role. */
  gateway: GatewayState | null;
}

/** Telemetry other than spectrum (which goes as frames), as it happens. */
export type EventMessage = { type: 'event' } & Exclude<Telemetry, { kind: 'spectrum' }>;

export type MonitorMessage = HelloMessage | StateMessage | EventMessage;
