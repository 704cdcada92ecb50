import type { Scheduler } from '../core/scheduler.js';
import type { Micros } from '../core/time.js';
import { US_PER_S } from '../core/time.js';
import { allocBytes } from '../wire/bytes.js';
import type { DataHeader } from '../wire/mesh.js';

/** Bytes at the head of every CBR payload: the send time (float64, µs), so the sink measures delay. */
export const CBR_STAMP_BYTES = 8;

/** What a flow's sink measured. */
export interface FlowRecord {
  flow: number;
  src: number;
  dst: number;
  kind: 'udp-cbr';
  offeredMbps: number;
  startUs: Micros;
  endUs: Micros;
  sent: number;
  received: number;
  duplicates: number;
  receivedBytes: number;
  /** Delays of the received packets in arrival order (µs). */
  delaysUs: number[];
}

/**
 * A constant-bit-rate UDP source: `packetBytes` of payload every
 * packetBytes * 8 / rate seconds from `startUs` until `stopUs`, each stamped
 * with its send time.
 */
export class CbrSource {
  private seq = 0;
  readonly intervalUs: number;

  constructor(
    readonly record: FlowRecord,
    private readonly packetBytes: number,
    private readonly send: (flow: number, seq: number, payload: Uint8Array, now: Micros) => void,
  ) {
    this.intervalUs = (packetBytes * 8 * US_PER_S) / (record.offeredMbps * 1e6);
  }

  /** Send time of packet k (kept in integer µs so every run ticks at the same instants). */
  sendTimeUs(k: number): Micros {
    return this.record.startUs + Math.round(k * this.intervalUs);
  }

  /** Emits packet number `seq` at `now`; returns when the next one is due, or undefined after the end. */
  emit(now: Micros): Micros | undefined {
    // From the slabs (wire/bytes.ts), as every packet: no backing store of its own to make.
    const payload = allocBytes(this.packetBytes);
    new DataView(payload.buffer, payload.byteOffset, payload.byteLength).setFloat64(0, now);
    this.record.sent++;
    this.send(this.record.flow, this.seq, payload, now);
    this.seq++;
    const next = this.sendTimeUs(this.seq);
    return next < this.record.endUs ? next : undefined;
  }
}

/**
 * Runs `src` on `scheduler` from `startUs` (never in the past): each packet
 * schedules the next, until the source's end or until `stopped` says so.
 */
export function runCbr(scheduler: Scheduler, src: CbrSource, startUs: Micros, stopped: () => boolean = () => false): void {
  const tick = (now: Micros): void => {
    if (stopped()) return;
    const next = src.emit(now);
    if (next !== undefined) scheduler.at(Math.max(next, scheduler.now()), tick);
  };
  scheduler.at(Math.max(startUs, scheduler.now()), tick);
}

/** The receiving end of a flow: counts, detects duplicates, records delay. */
export class FlowSink {
  private readonly seen = new Set<number>();
  private highest = -1;

  /**
   * `window`: for a sink that runs without end (a router daemon), only the
   * last `window` sequence numbers are remembered for duplicates and only
   * the last `window` delays are kept; by default everything is.
   */
  constructor(
    readonly record: FlowRecord,
    private readonly window = Infinity,
  ) {}

  receive(header: DataHeader, payload: Uint8Array, now: Micros): void {
    if (this.seen.has(header.seq)) {
      this.record.duplicates++;
      return;
    }
    this.seen.add(header.seq);
    if (header.seq > this.highest) this.highest = header.seq;
    if (this.seen.size > 2 * this.window) {
      for (const s of this.seen) if (s < this.highest - this.window) this.seen.delete(s);
      this.record.delaysUs.splice(0, this.record.delaysUs.length - this.window);
    }
    this.record.received++;
    this.record.receivedBytes += payload.length;
    if (payload.length >= CBR_STAMP_BYTES) {
      const sentUs = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getFloat64(0);
      this.record.delaysUs.push(now - sentUs);
    }
  }
}
