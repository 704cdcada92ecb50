import type { Micros } from '../core/time.js';
import type { NodeAddr } from '../wire/mesh.js';

/** Why a packet left the stack without being delivered (counted per reason). */
export type DropReason = 'queue-full' | 'no-route' | 'ttl-expired' | 'retry-limit' | 'no-channel' | 'malformed' | 'route-broken';

/** A packet waiting for R2. */
export interface QueuedPacket<T = unknown> {
  nextHop: NodeAddr;
  bytes: number;
  enqueuedUs: Micros;
  /** The packet itself, opaque to the scheduler. */
  item: T;
  /**
   * The QoS class's queue it waits in (OpenFlow queue id); absent: best
   * effort (0). A channel queue that takes (or turns away for lack of room)
   * a packet of a queue that is no class sets this to best effort's.
   */
  queue?: number;
}

/** A QoS class of the channel queues (seeds/002): a queue with a guaranteed rate. */
export interface QosClass {
  /** Its queue id, the same on every port (OpenFlow set_queue and queue stats); 0 is best effort. */
  queue: number;
  /** Rate guaranteed to the class within each channel queue while it has packets, kbps (0: none). */
  minKbps: number;
  /** The guarantee's token bucket holds `minKbps` over this long (how much unused guarantee a class keeps). */
  burstUs: Micros;
}

export interface ChannelSchedulerParams {
  /** Channels that have a queue. */
  channels: readonly number[];
  /** Packets each channel queue holds. */
  queuePackets: number;
  /** Time R2 serves one channel before it may switch. */
  switchingIntervalUs: Micros;
  /** R2 deaf and silent per switch. */
  overheadUs: Micros;
  /** Scale each dwell by the queue's share of the load (0.5x to 2x the interval). */
  adaptive: boolean;
  /**
   * Work-conserving dwells (default false): a dwell whose queue is empty,
   * with none of R2's packets at the MAC, ends at once when another queue
   * has packets, instead of waiting on the channel until it ends.
   */
  workConserving?: boolean;
  /** QoS classes inside each channel queue, highest priority first; one of them is queue 0. Absent: one best-effort queue. */
  classes?: readonly QosClass[];
  /**
   * Packets R2's MAC may hold at once (default 1: the next one only when the
   * last is done). A MAC in another process (the medium's) takes a window
   * of them, so that its round trip does not come between two frames.
   */
  macWindow?: number;
}

export type SchedAction<T = unknown> =
  /** Retune R2 to `channel`; it is usable from `readyUs` (now + overhead). */
  | { kind: 'tune'; channel: number; readyUs: Micros }
  /** Hand this packet to R2's MAC now, on the channel R2 is tuned to. */
  | { kind: 'transmit'; channel: number; packet: QueuedPacket<T> }
  /** A packet the scheduler dropped. */
  | { kind: 'drop'; packet: QueuedPacket<T>; reason: DropReason };
