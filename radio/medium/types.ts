import type { Micros } from '../../src/core/time.js';

/**
 * The contracts of the emulated air medium that carries mesh frames: who
 * hears whom, an 802.11 DCF MAC per radio, PN interference. `medium.ts`
 * implements them; the simulator composes routers from them.
 */

/** 802.11 PHY/MAC timing and limits (defaults: 802.11b DSSS long preamble at 2 Mbps, as in ns-2). */
export interface PhyParams {
  /** Rate of data frames (the channel's capacity C). */
  dataRateBps: number;
  /** Rate of control frames (ACK, RTS, CTS). Broadcast data frames go at `dataRateBps`, as in ns-2. */
  basicRateBps: number;
  slotUs: Micros;
  sifsUs: Micros;
  difsUs: Micros;
  /** Contention window bounds (slots), CW doubles from cwMin + 1 up to cwMax + 1. */
  cwMin: number;
  cwMax: number;
  /** PLCP preamble and header time in front of every frame. */
  plcpUs: Micros;
  /**
   * OFDM PHYs (802.11a/g ERP-OFDM): the frame body goes in whole symbols of
   * this length, with 16 service and 6 tail bits. Undefined for DSSS/CCK,
   * whose body takes exactly ceil(bits / rate).
   */
  ofdmSymbolUs?: Micros;
  /** Idle time after every OFDM frame in the 2.4 GHz band (802.11g ERP-OFDM: 6 µs); 0 or undefined elsewhere. */
  signalExtensionUs?: Micros;
  /** MAC header and FCS of a data frame. */
  macHeaderBytes: number;
  ackBytes: number;
  rtsBytes: number;
  ctsBytes: number;
  /** Attempts for frames at or below the RTS threshold (without RTS). */
  shortRetryLimit: number;
  /** Attempts for frames above the RTS threshold (with RTS/CTS). */
  longRetryLimit: number;
  /** Unicast frames whose payload is longer than this use RTS/CTS; Infinity turns RTS/CTS off. */
  rtsThresholdBytes: number;
}

export interface MediumParams {
  /** Distance up to which a frame is received (absent interference). */
  txRangeM: number;
  /** Distance up to which a frame makes the medium busy (carrier sense) and interferes. */
  csRangeM: number;
  /** A frame survives an overlapping one when it is this many dB stronger (ns-2 CPThresh 10). */
  captureDb: number;
  /**
   * Which frame capture can save: `strongest` (a frame captureDb stronger
   * than every overlapping one survives, whichever came first: a receiver
   * resyncs to a much stronger preamble) or `first` (only the frame already
   * being received can survive, as in ns-2's Mac802_11).
   */
  capture: 'strongest' | 'first';
  /** Probability that a frame overlapping a PN burst on its channel is lost. */
  pnLossProbability: number;
  /** Whether the MAC's clear-channel assessment treats an active PN on the channel as busy. */
  pnCarrierSense: boolean;
}

export interface Position {
  xM: number;
  yM: number;
}

/** A frame handed to a station: the mesh packet it carries and its MAC destination. */
export interface MacFrame {
  /** Sending node's mesh address. */
  src: number;
  /** Receiving node's mesh address, or 0xffff for broadcast (no ACK, no retries). */
  dst: number;
  /** The bytes of the mesh packet (data header + payload, or a control message). */
  payload: Uint8Array;
  /** Opaque to the medium: returned untouched in `onSent` (the scheduler's packet record). */
  tag?: unknown;
}

/** A radio's handle on the air medium: an 802.11 DCF MAC with a FIFO queue. */
export interface Station {
  readonly id: string;
  /** The channel it is on; undefined while deaf (retuning, or never tuned). */
  readonly channel: number | undefined;
  readonly counters: StationCounters;
  /** Nothing in service and nothing queued. */
  readonly idle: boolean;
  /** Frames waiting behind the one in service. */
  readonly queued: number;
  /** Transmission attempts of the frame in service so far (0: still deferring to a busy medium), undefined when none is. */
  readonly serviceAttempts: number | undefined;
  /** Queues a frame (FIFO); false when the station's queue is full (counted in queueDrops). */
  send(frame: MacFrame): boolean;
  /**
   * Deaf and silent for overheadUs, then on `channel` (undefined: stays deaf).
   * Aborts the exchange in service: its frame comes back through onSent with
   * reason 'aborted'; queued frames stay queued (in process: a remote
   * station's retune gives back its queued frames too, see remote.ts).
   */
  retune(channel: number | undefined, overheadUs: Micros): void;
  /**
   * The frames queued behind the one in service come back through onSent as
   * 'aborted', in the order they were queued; the one in service goes on.
   */
  hold(): void;
  /** Leaves the medium: the frame in service and the queued ones come back through onSent as 'aborted'. */
  detach(): void;
  /**
   * A station on a radio of its own (a PHY over a front-end): resolves once
   * it is tuned nowhere (`retune(undefined)` or `detach`) and no read,
   * transmission or tune of its front-end is still in flight, so that
   * another user (sensing) may take the front-end. Stations of the air
   * medium have no front-end to let go of and leave it out.
   */
  released?(): Promise<void>;
}

export type SendOutcome = { ok: true; attempts: number; atUs: Micros } | { ok: false; reason: 'retry-limit' | 'aborted'; attempts: number; atUs: Micros };

export interface StationSpec {
  /** Unique among the medium's stations, e.g. `3/R2`. */
  id: string;
  /** Mesh address of the router the station belongs to. */
  node: number;
  position: Position;
  /** Whether unicast frames to `node` are taken by this station (R1, R3) or not (R2, which only sends). */
  acceptsUnicast: boolean;
  /** Whether it takes broadcast frames (R3). */
  acceptsBroadcast: boolean;
  /** Channel at start; undefined: deaf until `retune`. */
  channel?: number;
  /** Whether PN bursts affect this station (carrier sense and loss). Default true. */
  pnAffected?: boolean;
  /** Frames waiting at the station beyond the one in service (default 64). */
  queueLimit?: number;
}

export interface StationHandlers {
  /** A frame addressed to this station's node (or broadcast) arrived intact, at the end of its airtime. */
  onReceive(frame: MacFrame, now: Micros): void;
  /** A unicast frame was acknowledged or given up, or a broadcast left the air, or a retune aborted it. */
  onSent(frame: MacFrame, outcome: SendOutcome): void;
  /** The frame in service goes on the air (attempt 1, 2, ...): its exchange has begun. */
  onAttempt?(frame: MacFrame, attempts: number): void;
}

/** Where a router's radios attach: the air medium itself, or a proxy of it in another process. */
export interface StationHost {
  addStation(spec: StationSpec, handlers: StationHandlers): Station;
  /**
   * How many frames a sender should keep queued at a station of this host
   * (R2's MAC window): 1 (the default) when its MAC is at hand, more when a
   * round trip separates them (the medium process).
   */
  readonly sendWindow?: number;
}

/** Named counters of one station, readable by the control API and the reports. */
export interface StationCounters {
  txFrames: number;
  txBytes: number;
  rxFrames: number;
  rxBytes: number;
  acked: number;
  retries: number;
  retryLimitDrops: number;
  queueDrops: number;
  aborted: number;
  /** Frames to this station's node lost to an overlapping frame. */
  collisions: number;
  /** Frames to this station's node lost to a PN burst. */
  pnLosses: number;
  /** Frames missed because the station was deaf (retuning, on another channel, transmitting). */
  missedDeaf: number;
  /** Duplicates filtered (a retry of a frame already received). */
  duplicates: number;
  /** Time spent transmitting, µs. */
  airtimeUs: number;
}

/**
 * Where the medium learns PN activity (the emulated band implements it):
 * the stretches of [t0, t1) during which a PN on exactly `channel` is on,
 * sorted and disjoint. PNs are taken to be received alike by every router.
 */
export interface PnSource {
  pnBusyIntervals(channel: number, t0: Micros, t1: Micros): ReadonlyArray<readonly [Micros, Micros]>;
  /**
   * False when no PN can ever be on `channel` (then the medium asks nothing
   * about it: a station's access, a frame's loss); when absent, any channel
   * may have one.
   */
  pnPossible?(channel: number): boolean;
}
