import { FrontendError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import {
  BURST_TIMED,
  BurstOff,
  HEADER_BYTES,
  ProducerState,
  readTxConstants,
  TX_BURST_BYTES,
  txHeaderProblem,
  txSamplesOffset,
  TxOff,
  TxStatus,
  type TxRingConstants,
} from './layout.js';
import { openRingMemory, type MapOptions, type RingAccess, type RingMemory } from './memory.js';

/** What a TX ring is and how this process reaches it. */
export interface TxRingInfo extends TxRingConstants {
  readonly path: string;
  /** `mmap`: samples are written into the mapping. `fs`: by write(2). */
  readonly access: RingAccess;
}

/** The board's account of a finished burst (`struct sora_tx_burst`'s results). */
export interface BurstOutcome {
  /** Dropped because its time had passed when the board saw it. */
  readonly late: boolean;
  readonly startUs: Micros;
  readonly endUs: Micros;
  /** Samples the board sent. */
  readonly sent: number;
}

const TX_RING: { what: string; problem: typeof txHeaderProblem } = { what: 'a SORA TX ring', problem: txHeaderProblem };

/**
 * The node's side of a SORA-like TX ring (native/sora-ring/ring.h, struct
 * sora_tx_header): the node is its producer, the board (or
 * native/sora-ring/consumer.c) its consumer. A burst is queued as a record
 * first (`queue`), then its samples are written as slots free up (`write`),
 * then the board's outcome is read back from the record (`outcome`). Nothing
 * here waits: each call says whether it could go on, and the front-end waits
 * on a timer between calls.
 */
export class TxRing {
  readonly info: TxRingInfo;
  private readonly mask: number;
  private readonly slotsOffset: number;
  private readonly f32: Float32Array | undefined;
  /** Samples written (write_index), and bursts queued (burst_write). */
  private w: number;
  private b: number;
  private closed = false;

  private constructor(
    private readonly mem: RingMemory,
    path: string,
  ) {
    const c = readTxConstants(mem.header());
    this.info = { ...c, path, access: mem.access };
    this.mask = c.capacity - 1;
    this.slotsOffset = txSamplesOffset(c.burstSlots);
    const buf = mem.buffer;
    this.f32 = buf === undefined ? undefined : new Float32Array(buf, this.slotsOffset, 2 * c.capacity);
    this.w = this.load(TxOff.writeIndex);
    this.b = this.load(TxOff.burstWrite);
    const read = this.load(TxOff.readIndex);
    const done = this.load(TxOff.burstRead);
    if (this.w !== read || this.b !== done) {
      throw new FrontendError(
        'RADIO_TX_RING_BUSY',
        `${path}: ${this.b - done} burst(s) and ${this.w - read} sample(s) left unfinished by process ${this.load(TxOff.producerPid)}; restart the board's consumer`,
      );
    }
    mem.store(TxOff.producerPid, BigInt(process.pid));
  }

  /** Opens the TX ring at `path` for writing: RADIO_NO_DEVICE when there is none, RADIO_BAD_RING when the file is not one. */
  static async open(path: string, opts: MapOptions = {}): Promise<TxRing> {
    const mem = await openRingMemory(path, opts, TX_RING);
    try {
      if (!mem.writable) throw new FrontendError('RADIO_RING_READ_ONLY', `${path}: the TX ring cannot be written by this process`);
      return new TxRing(mem, path);
    } catch (e) {
      mem.close();
      throw e;
    }
  }

  /**
   * Queues a burst of `count` samples (timed at `atUs` unless undefined) and
   * returns its number, or undefined when every burst record is in use (the
   * board has not finished enough bursts yet).
   */
  queue(count: number, atUs: Micros | undefined): number | undefined {
    this.checkOpen();
    const seq = this.b;
    if (seq - this.load(TxOff.burstRead) >= this.info.burstSlots) return undefined;
    const rec = HEADER_BYTES + (seq & (this.info.burstSlots - 1)) * TX_BURST_BYTES;
    this.mem.store(rec + BurstOff.index, BigInt(this.w));
    this.mem.store(rec + BurstOff.count, BigInt(count));
    this.mem.store(rec + BurstOff.flags, atUs === undefined ? 0n : BURST_TIMED);
    this.mem.store(rec + BurstOff.atUs, BigInt(atUs ?? 0));
    this.mem.store(rec + BurstOff.status, TxStatus.queued);
    // release: the record is complete before the board sees burst_write move
    this.b = seq + 1;
    this.mem.store(TxOff.burstWrite, BigInt(this.b));
    return seq;
  }

  /** Writes up to `count` samples of `data` from complex sample `from` into free slots; returns how many (0 when the ring is full). */
  write(data: Float32Array, from: number, count: number): number {
    this.checkOpen();
    const free = this.info.capacity - (this.w - this.load(TxOff.readIndex));
    let n = Math.min(free, count);
    const total = n;
    let at = from;
    while (n > 0) {
      const slot = this.w & this.mask;
      const run = Math.min(n, this.info.capacity - slot);
      const src = data.subarray(2 * at, 2 * (at + run));
      if (this.f32 !== undefined) this.f32.set(src, 2 * slot);
      else this.mem.copyIn(this.slotsOffset + slot * 8, new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
      this.w += run;
      at += run;
      n -= run;
    }
    // release: the samples are in their slots before the board sees write_index move
    if (total > 0) this.mem.store(TxOff.writeIndex, BigInt(this.w));
    return total;
  }

  /** The board's outcome of burst `seq`, or undefined while it is not finished. */
  outcome(seq: number): BurstOutcome | undefined {
    this.checkOpen();
    if (this.load(TxOff.burstRead) <= seq) return undefined;
    const rec = HEADER_BYTES + (seq & (this.info.burstSlots - 1)) * TX_BURST_BYTES;
    return {
      late: this.mem.load(rec + BurstOff.status) === TxStatus.late,
      startUs: this.load(rec + BurstOff.startUs),
      endUs: this.load(rec + BurstOff.endUs),
      sent: this.load(rec + BurstOff.sent),
    };
  }

  /** Bursts the board dropped as late, over the ring's life. */
  lateBursts(): number {
    return this.load(TxOff.lateBursts);
  }

  consumerState(): 'starting' | 'running' | 'stopped' {
    const s = this.mem.load(TxOff.consumerState);
    return s === ProducerState.running ? 'running' : s === ProducerState.stopped ? 'stopped' : 'starting';
  }

  consumerPid(): number {
    return this.load(TxOff.consumerPid);
  }

  /** Milliseconds since the board's last heartbeat (both on CLOCK_MONOTONIC). */
  heartbeatAgeMs(): number {
    return Number(process.hrtime.bigint() - this.mem.load(TxOff.heartbeatNs)) / 1e6;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.mem.store(TxOff.producerPid, 0n);
    } catch {
      // the ring may be gone already; closing goes on
    }
    this.mem.close();
  }

  private load(off: number): number {
    return Number(this.mem.load(off));
  }

  private checkOpen(): void {
    if (this.closed) throw new FrontendError('RADIO_CLOSED', `${this.info.path}: the TX ring is closed`);
  }
}
