import type { Micros } from '../core/time.js';

/**
 * Which packets a VNF instance serves: a transport 5-tuple, each field a
 * value or undefined (any). A pattern matches a flow in both directions: a
 * TCP connection is one flow whichever way its segments go.
 */
export interface FlowPattern {
  proto?: 'tcp' | 'udp';
  /** Dotted IPv4 or an IPv6 text form, as `ipText` writes it. */
  srcIp?: string;
  srcPort?: number;
  dstIp?: string;
  dstPort?: number;
}

/** A transport packet crossing the router, with the IP addresses around it. */
export interface VnfPacket {
  proto: 'tcp' | 'udp';
  src: Uint8Array;
  dst: Uint8Array;
  /** The transport segment (TCP header and payload, or UDP). */
  bytes: Uint8Array;
  /** Opaque to VNFs: the carrier's tag (the simulator's flow number), copied onto what they emit for it. */
  tag?: number;
  /** Hops the packet has crossed since it was sent (from its TTL), where the carrier knows. */
  hops?: number;
}

/** One running VNF: sans-IO like every core (packets and time in, packets out, a next deadline). */
export interface Vnf {
  /** A packet of its flow reached the router: true if the VNF took it (it emits its own), false to forward it unchanged. */
  handle(pkt: VnfPacket, now: Micros): boolean;
  tick(now: Micros): void;
  nextDeadline(): Micros | undefined;
  /** Packets to send, with the addresses they carry. */
  poll(): VnfPacket[];
  /** Its own figures, for `list`. */
  counters(): Record<string, number>;
  /** Released: what it held is dropped or reset. */
  stop(now: Micros): void;
}

/** A kind of VNF that the manager can instantiate. */
export interface VnfType {
  readonly name: string;
  /** Checks parameters (throwing a ConfigError naming the field) and returns them with defaults. */
  params(input: unknown): Record<string, unknown>;
  create(params: Record<string, unknown>, ctx: { flow: FlowPattern; seed: number }): Vnf;
}

export type VnfState = 'running' | 'stopped' | 'failed';

export interface VnfInfo {
  id: number;
  type: string;
  flow: FlowPattern;
  params: Record<string, unknown>;
  state: VnfState;
  startedAtUs: Micros;
  endedAtUs: Micros | null;
  /** Why it ended: 'terminated', or the error that stopped it. */
  reason: string | null;
  packetsTaken: number;
  packetsForwarded: number;
  packetsSent: number;
  counters: Record<string, number>;
}

export type VnfEvent =
  | { kind: 'started'; id: number; type: string; atUs: Micros }
  | { kind: 'stopped'; id: number; type: string; atUs: Micros; reason: string }
  | { kind: 'failed'; id: number; type: string; atUs: Micros; error: string };

/** A new instance's listing: running since `now`, nothing counted yet. */
export function newVnfInfo(id: number, type: string, flow: FlowPattern, params: Record<string, unknown>, now: Micros): VnfInfo {
  return {
    id,
    type,
    flow: { ...flow },
    params,
    state: 'running',
    startedAtUs: now,
    endedAtUs: null,
    reason: null,
    packetsTaken: 0,
    packetsForwarded: 0,
    packetsSent: 0,
    counters: {},
  };
}
