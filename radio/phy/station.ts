import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import type { EventId } from '../../src/core/engine.js';
import type { Rng } from '../../src/core/rng.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import { US_PER_S, type Micros } from '../../src/core/time.js';
import { DOT11_DATA_HEADER_BYTES, encodeDot11Ack, encodeDot11Data, parseDot11, SEQ_MODULO, SNAP_BYTES, type Dot11Fault } from '../../src/wire/dot11.js';
import type { ChannelPlan } from '../channels.js';
import type { Frontend, IqBlock } from '../frontend.js';
import { BROADCAST, checkSend, zeroStationCounters } from '../medium/station.js';
import type { MacFrame, Station, StationCounters, StationHandlers, StationSpec } from '../medium/types.js';
import { modulateFrame, ppduSamples, type SamplesPerChip } from './dsss/modem.js';
import { PSDU_MAX_BYTES, type DsssRate } from './dsss/plcp.js';
import { DsssReceiver, type DsssRxCounters, type DsssRxFrame } from './dsss/receiver.js';
import { ACK_AIRTIME_US, checkMacTiming, difsUs, type MacTiming } from './timing.js';
import { FCS_BYTES } from './dsss/crc.js';

/** Chips per second of 802.11b DSSS. */
const CHIP_RATE = 11e6;

export interface PhyStationOptions {
  spec: StationSpec;
  handlers: StationHandlers;
  /** The radio this station owns: it reads its samples and transmits through it. */
  frontend: Frontend;
  plan: ChannelPlan;
  scheduler: Scheduler;
  /** Backoff draws. */
  rng: Rng;
  timing: MacTiming;
  /** Rate of data frames (ACKs go at 1 Mb/s). */
  rateMbps: DsssRate;
  /** Samples per block read from the front-end (default: 1 ms of samples). */
  blockSamples?: number;
  /** Clear-channel assessment: a block above this power (dBm) is busy (default -82 dBm, 802.11b's energy-detect level for 100 mW). */
  ccaDbm?: number;
  /**
   * When the radio reads samples: `always` (a station that receives: R1, R3),
   * or `while-sending`, only while it has a frame in service (carrier sense
   * and its ACK): a radio that only sends (R2) then costs nothing while idle.
   * Default: `always` when the spec accepts unicast or broadcast frames, else
   * `while-sending`.
   */
  listen?: 'always' | 'while-sending';
  /** A receive or transmit error of the front-end (the station goes on when it can). */
  onError?: (where: string, error: unknown) => void;
}

/** What the PHY station saw below the MAC, by cause; every field only grows. */
export interface PhyStationCounters {
  /** The receiver's counts (detections, frames, FCS failures, header faults...). */
  rx: DsssRxCounters;
  /** Frames with a good FCS that were not the mesh's, by cause. */
  notMesh: Record<Dot11Fault, number>;
  /** Data frames for another station (heard, set the NAV, not taken). */
  overheard: number;
  /** ACKs received while none was awaited, or for another station. */
  strayAcks: number;
  /** ACKs that went out after SIFS had passed (the host answered late). */
  lateAcks: number;
  /** Blocks whose energy made the medium busy. */
  busyBlocks: number;
  blocks: number;
  /** Samples the front-end lost (overruns). */
  droppedSamples: number;
  /** Reads the front-end refused (each retried a block later, but for a closed radio). */
  readErrors: number;
}

interface Service {
  readonly frame: MacFrame;
  readonly seq: number;
  readonly bcast: boolean;
  attempts: number;
  cw: number;
  backoff: number;
}

type Phase = 'idle' | 'contend' | 'tx' | 'wait-ack';

/**
 * One radio's 802.11 DCF over the DSSS PHY on a front-end: the station
 * contract the routers use on the emulated medium (`Station`), met here by
 * what this radio really hears. It reads the front-end block after block, uses
 * each block's energy as carrier sense, decodes frames with `DsssReceiver`,
 * answers unicast data with an ACK at SIFS after its end (a timed burst), and
 * sends its own queue by DCF: DIFS of idle medium, then a random backoff in
 * slots, an ACK awaited for unicast frames, retries with a doubled contention
 * window up to the retry limit. Its intervals are those of a host-based MAC
 * (`MacTiming`, docs/phy.md).
 */
export class PhyStation implements Station {
  readonly id: string;
  readonly node: number;
  readonly counters: StationCounters = zeroStationCounters();
  readonly phy: PhyStationCounters;
  private readonly fe: Frontend;
  private readonly spec: StationSpec;
  private readonly handlers: StationHandlers;
  private readonly plan: ChannelPlan;
  private readonly scheduler: Scheduler;
  private readonly rng: Rng;
  private readonly timing: MacTiming;
  private readonly rateMbps: DsssRate;
  private readonly sps: SamplesPerChip;
  private readonly rateHz: number;
  private readonly blockSamples: number;
  private readonly ccaDbm: number;
  private readonly onError: ((where: string, error: unknown) => void) | undefined;
  private readonly listenAlways: boolean;
  /** The generation whose receive loop runs, if one does. */
  private loopGen: number | undefined;
  private readonly buf: Float32Array;
  /** One receiver for the station's life: a retune resets its stream, its counters go on. */
  private readonly receiver: DsssReceiver;

  private channelNumber: number | undefined;
  /** Bumped by every retune and by detach: a receive loop or a transmission of an older generation stops. */
  private gen = 0;
  private detached = false;
  private tuned = false;

  /** Where the receiver's stream began (its sample 0), and the samples given to it since. */
  private streamStartUs: Micros | undefined;
  private streamSamples = 0;

  // Carrier sense.
  /** When the last block was handed over (a front-end hands blocks over some time after their end). */
  private lastBlockAtUs: Micros = -Infinity;
  private lastBlockBusy = false;
  private navUntilUs: Micros = 0;
  private transmitting = false;
  /** Idle time counted towards DIFS and backoff, as of `idleCheckedUs`. */
  private idleRunUs = 0;

  // DCF.
  private readonly queue: MacFrame[] = [];
  private svc: Service | undefined;
  private phase: Phase = 'idle';
  private slotEv: EventId | undefined;
  private ackEv: EventId | undefined;
  private nextSeq = 0;
  private readonly lastSeqFrom = new Map<number, number>();
  private readonly ackWaves = new Map<number, Float32Array>();

  // Sharing the front-end.
  /** Tunes, reads and transmissions of the front-end not yet settled. */
  private inFlight = 0;
  private readonly releaseWaiters: Array<() => void> = [];

  constructor(o: PhyStationOptions) {
    this.spec = o.spec;
    this.id = o.spec.id;
    this.node = o.spec.node;
    this.handlers = o.handlers;
    this.fe = o.frontend;
    this.plan = o.plan;
    this.scheduler = o.scheduler;
    this.rng = o.rng;
    this.timing = checkMacTiming(o.timing, `${o.spec.id} timing`);
    if (o.rateMbps !== 1 && o.rateMbps !== 2) throw new RangeArgumentError('rateMbps', o.rateMbps, '1 or 2');
    this.rateMbps = o.rateMbps;
    const rate = o.frontend.capabilities.sampleRateHz;
    if (rate !== CHIP_RATE && rate !== 2 * CHIP_RATE) {
      throw new RangeArgumentError(`${o.spec.id} sample rate`, rate, '11e6 or 22e6 samples/s (1 or 2 per chip) for the DSSS PHY');
    }
    if (!o.frontend.capabilities.canTransmitIq) {
      throw new FrontendError('RADIO_CANNOT_TRANSMIT', `${o.spec.id}: the front-end ${o.frontend.id} cannot transmit samples, which a PHY station needs`);
    }
    this.rateHz = rate;
    this.sps = rate === CHIP_RATE ? 1 : 2;
    this.blockSamples = o.blockSamples ?? Math.round(rate / 1000);
    if (!Number.isSafeInteger(this.blockSamples) || this.blockSamples < 64) {
      throw new RangeArgumentError('blockSamples', this.blockSamples, 'an integer >= 64');
    }
    this.ccaDbm = o.ccaDbm ?? -82;
    this.onError = o.onError;
    this.listenAlways = (o.listen ?? (o.spec.acceptsUnicast || o.spec.acceptsBroadcast ? 'always' : 'while-sending')) === 'always';
    this.buf = new Float32Array(2 * this.blockSamples);
    this.receiver = new DsssReceiver({ samplesPerChip: this.sps });
    this.phy = {
      rx: this.receiver.counters,
      notMesh: { short: 0, type: 0, foreign: 0, ethertype: 0 },
      overheard: 0,
      strayAcks: 0,
      lateAcks: 0,
      busyBlocks: 0,
      blocks: 0,
      droppedSamples: 0,
      readErrors: 0,
    };
    if (o.spec.channel !== undefined) this.retune(o.spec.channel, 0);
  }

  get channel(): number | undefined {
    return this.tuned ? this.channelNumber : undefined;
  }

  get idle(): boolean {
    return this.svc === undefined && this.queue.length === 0;
  }

  get queued(): number {
    return this.queue.length;
  }

  get serviceAttempts(): number | undefined {
    return this.svc?.attempts;
  }

  send(frame: MacFrame): boolean {
    checkSend(this.id, this.detached, frame);
    const max = PSDU_MAX_BYTES - FCS_BYTES - DOT11_DATA_HEADER_BYTES - SNAP_BYTES;
    if (frame.payload.length > max) throw new RangeArgumentError('frame.payload.length', frame.payload.length, `at most ${max} bytes on the DSSS PHY`);
    if (this.svc === undefined) {
      this.begin(frame);
      return true;
    }
    if (this.queue.length >= (this.spec.queueLimit ?? 64)) {
      this.counters.queueDrops++;
      return false;
    }
    this.queue.push(frame);
    return true;
  }

  retune(channel: number | undefined, _overheadUs: Micros): void {
    if (this.detached) return;
    this.abortService();
    const gen = ++this.gen;
    this.tuned = false;
    this.channelNumber = channel;
    this.receiver.reset();
    this.streamStartUs = undefined;
    if (channel === undefined) {
      this.checkReleased();
      return;
    }
    const centerHz = this.plan.get(channel).centerHz;
    this.track(this.fe.tune(centerHz)).then(
      () => {
        if (gen !== this.gen) return;
        this.tuned = true;
        this.idleRunUs = 0;
        this.listen();
        this.kick();
      },
      (e: unknown) => {
        if (gen === this.gen) this.onError?.(`tuning ${this.id} to channel ${channel}`, e);
      },
    );
  }

  released(): Promise<void> {
    return new Promise((resolve) => {
      this.releaseWaiters.push(resolve);
      this.checkReleased();
    });
  }

  /** Counts `op` in flight until it settles. */
  private track<T>(op: Promise<T>): Promise<T> {
    this.inFlight++;
    const done = (): void => {
      this.inFlight--;
      this.checkReleased();
    };
    op.then(done, done);
    return op;
  }

  private checkReleased(): void {
    if (this.releaseWaiters.length === 0 || this.inFlight > 0 || (this.channelNumber !== undefined && !this.detached)) return;
    for (const w of this.releaseWaiters.splice(0)) w();
  }

  hold(): void {
    const back = this.queue.splice(0);
    for (const f of back) this.giveBack(f, 'aborted', 0);
  }

  detach(): void {
    if (this.detached) return;
    this.abortService();
    this.hold();
    this.detached = true;
    this.gen++;
    this.tuned = false;
    this.checkReleased();
  }

  // -------------------------------------------------------------------------
  // Receive

  /** Starts the receive loop if the radio should be reading and is not. */
  private listen(): void {
    if (!this.tuned || this.loopGen === this.gen) return;
    if (!this.listenAlways && this.svc === undefined) return;
    this.loopGen = this.gen;
    void this.rxLoop(this.gen);
  }

  private async rxLoop(gen: number): Promise<void> {
    try {
      await this.readLoop(gen);
    } finally {
      if (this.loopGen === gen) this.loopGen = undefined;
    }
  }

  private async readLoop(gen: number): Promise<void> {
    while (gen === this.gen && (this.listenAlways || this.svc !== undefined)) {
      let block: IqBlock;
      try {
        block = await this.track(this.fe.readIq(this.blockSamples, this.buf));
      } catch (e) {
        if (gen !== this.gen) return;
        this.phy.readErrors++;
        this.onError?.(`receiving on ${this.id}`, e);
        if (e instanceof FrontendError && e.code === 'RADIO_CLOSED') return;
        // Try again a block later: a radio that failed once may serve the next read.
        await new Promise<void>((resolve) => this.scheduler.after(Math.ceil((this.blockSamples * US_PER_S) / this.rateHz), () => resolve()));
        continue;
      }
      if (gen !== this.gen) return;
      this.onBlock(block);
    }
  }

  private onBlock(block: IqBlock): void {
    const n = block.count;
    const d = block.data;
    let sum = 0;
    for (let i = 0; i < 2 * n; i++) sum += d[i]! * d[i]!;
    const dbm = 10 * Math.log10(sum / n || 1e-30) + block.calibrationDb;
    this.phy.blocks++;
    this.phy.droppedSamples += block.droppedSamples;
    const busy = dbm > this.ccaDbm;
    if (busy) this.phy.busyBlocks++;
    this.lastBlockBusy = busy;
    this.lastBlockAtUs = this.scheduler.now();
    // The receiver keeps a frame that straddles blocks across calls, as long as the blocks are one stream:
    // samples lost (an overrun) or a gap end the stream, and it starts again with this block.
    const frames: DsssRxFrame[] = [];
    const expectedUs = this.streamStartUs === undefined ? undefined : this.streamStartUs + (this.streamSamples * US_PER_S) / this.rateHz;
    if (expectedUs === undefined || block.droppedSamples > 0 || Math.abs(block.startUs - expectedUs) > US_PER_S / this.rateHz) {
      if (expectedUs !== undefined) this.deliver(this.receiver.flush());
      this.streamStartUs = block.startUs;
      this.streamSamples = 0;
    }
    frames.push(...this.receiver.receive(d.subarray(0, 2 * n)));
    this.streamSamples += n;
    this.deliver(frames);
  }

  /** Hands on the frames with a good FCS (the receiver counted the rest by cause). */
  private deliver(frames: readonly DsssRxFrame[]): void {
    const start = this.streamStartUs ?? 0;
    for (const f of frames) {
      if (!f.fcsOk) continue;
      const startUs = start + (f.startSample * US_PER_S) / this.rateHz;
      const frameEndUs = Math.round(startUs + (ppduSamples(f.psdu.length, f.rateMbps, this.sps) * US_PER_S) / this.rateHz);
      this.onFrame(f.frame, frameEndUs);
    }
  }

  private onFrame(bytes: Uint8Array, endUs: Micros): void {
    const p = parseDot11(bytes);
    if (!p.ok) {
      this.phy.notMesh[p.fault]++;
      return;
    }
    const f = p.frame;
    const now = this.scheduler.now();
    if (f.kind === 'ack') {
      if (f.ra === this.node && this.phase === 'wait-ack' && this.svc !== undefined) this.acked(now);
      else this.phy.strayAcks++;
      return;
    }
    const forUs = f.dst === this.node ? this.spec.acceptsUnicast : f.dst === BROADCAST && this.spec.acceptsBroadcast;
    if (!forUs) {
      if (f.dst !== BROADCAST) this.navUntilUs = Math.max(this.navUntilUs, endUs + f.durationUs);
      this.phy.overheard++;
      return;
    }
    if (f.dst !== BROADCAST) this.sendAck(f.src, endUs);
    if (f.retry && this.lastSeqFrom.get(f.src) === f.seq) {
      this.counters.duplicates++;
      return;
    }
    this.lastSeqFrom.set(f.src, f.seq);
    this.counters.rxFrames++;
    this.counters.rxBytes += f.payload.length;
    this.handlers.onReceive({ src: f.src, dst: f.dst, payload: f.payload.slice() }, now);
  }

  private sendAck(to: number, frameEndUs: Micros): void {
    let wave = this.ackWaves.get(to);
    if (wave === undefined) {
      wave = modulateFrame(encodeDot11Ack(to), { rateMbps: 1, samplesPerChip: this.sps });
      this.ackWaves.set(to, wave);
    }
    const atUs = frameEndUs + this.timing.sifsUs;
    this.track(this.fe.transmitIq({ data: wave, count: wave.length / 2, atUs })).then(
      (r) => {
        if (r.late) this.phy.lateAcks++;
        this.counters.airtimeUs += r.endUs - r.startUs;
      },
      (e: unknown) => this.onError?.(`sending an ACK on ${this.id}`, e),
    );
  }

  // -------------------------------------------------------------------------
  // DCF

  /** Busy when the last block read was, under a NAV, while sending, or when no recent block says (what is not heard is not known to be idle). */
  private mediumBusy(now: Micros): boolean {
    const blockUs = (this.blockSamples * US_PER_S) / this.rateHz;
    return this.transmitting || this.lastBlockBusy || now < this.navUntilUs || now - this.lastBlockAtUs > 2 * blockUs;
  }

  private begin(frame: MacFrame): void {
    const bcast = frame.dst === BROADCAST;
    this.svc = { frame, seq: this.nextSeq, bcast, attempts: 0, cw: this.timing.cwMin, backoff: 0 };
    this.nextSeq = (this.nextSeq + 1) % SEQ_MODULO;
    this.svc.backoff = this.rng.int(0, this.svc.cw);
    this.phase = 'contend';
    this.listen();
    this.kick();
  }

  /** Starts the slot clock of a contending service, if it is not running. */
  private kick(): void {
    if (this.phase !== 'contend' || this.slotEv !== undefined || !this.tuned) return;
    this.slotEv = this.scheduler.after(this.timing.slotUs, (now) => this.slot(now));
  }

  /**
   * One slot of contention: a busy medium restarts the idle run; DIFS of idle
   * medium must pass before the backoff counts down, one slot per idle slot;
   * at zero the frame goes.
   */
  private slot(now: Micros): void {
    this.slotEv = undefined;
    const s = this.svc;
    if (this.phase !== 'contend' || s === undefined || !this.tuned) return;
    if (this.mediumBusy(now)) {
      this.idleRunUs = 0;
    } else {
      this.idleRunUs += this.timing.slotUs;
      if (this.idleRunUs > difsUs(this.timing)) {
        if (s.backoff === 0) {
          void this.transmit(s, this.gen);
          return;
        }
        s.backoff--;
      }
    }
    this.kick();
  }

  private async transmit(s: Service, gen: number): Promise<void> {
    this.phase = 'tx';
    s.attempts++;
    if (s.attempts > 1) this.counters.retries++;
    this.handlers.onAttempt?.(s.frame, s.attempts);
    const bytes = encodeDot11Data({
      src: this.node,
      dst: s.frame.dst,
      payload: s.frame.payload,
      seq: s.seq,
      retry: s.attempts > 1,
      durationUs: s.bcast ? 0 : this.timing.sifsUs + ACK_AIRTIME_US,
    });
    const wave = modulateFrame(bytes, { rateMbps: this.rateMbps, samplesPerChip: this.sps });
    this.transmitting = true;
    let endUs: Micros;
    try {
      const r = await this.track(this.fe.transmitIq({ data: wave, count: wave.length / 2 }));
      endUs = r.endUs;
      this.counters.airtimeUs += r.endUs - r.startUs;
    } catch (e) {
      this.transmitting = false;
      if (gen !== this.gen || this.svc !== s) return;
      this.onError?.(`transmitting on ${this.id}`, e);
      this.finish(s, { ok: false, reason: 'aborted', attempts: s.attempts, atUs: this.scheduler.now() });
      return;
    }
    this.transmitting = false;
    this.idleRunUs = 0;
    if (gen !== this.gen || this.svc !== s) return;
    this.counters.txFrames++;
    this.counters.txBytes += s.frame.payload.length;
    if (s.bcast) {
      this.finish(s, { ok: true, attempts: s.attempts, atUs: endUs });
      return;
    }
    this.phase = 'wait-ack';
    this.ackEv = this.scheduler.at(Math.max(this.scheduler.now(), endUs + this.timing.ackTimeoutUs), (now) => this.ackTimeout(s, now));
  }

  private acked(now: Micros): void {
    const s = this.svc!;
    if (this.ackEv !== undefined) this.scheduler.cancel(this.ackEv);
    this.ackEv = undefined;
    this.counters.acked++;
    this.finish(s, { ok: true, attempts: s.attempts, atUs: now });
  }

  private ackTimeout(s: Service, now: Micros): void {
    this.ackEv = undefined;
    if (this.svc !== s || this.phase !== 'wait-ack') return;
    if (s.attempts >= this.timing.retryLimit) {
      this.counters.retryLimitDrops++;
      this.finish(s, { ok: false, reason: 'retry-limit', attempts: s.attempts, atUs: now });
      return;
    }
    s.cw = Math.min(2 * s.cw + 1, this.timing.cwMax);
    s.backoff = this.rng.int(0, s.cw);
    this.phase = 'contend';
    this.kick();
  }

  private finish(s: Service, outcome: Parameters<StationHandlers['onSent']>[1]): void {
    this.svc = undefined;
    this.phase = 'idle';
    this.handlers.onSent(s.frame, outcome);
    const next = this.queue.shift();
    if (next !== undefined && this.svc === undefined && !this.detached) this.begin(next);
  }

  private abortService(): void {
    if (this.slotEv !== undefined) this.scheduler.cancel(this.slotEv);
    if (this.ackEv !== undefined) this.scheduler.cancel(this.ackEv);
    this.slotEv = undefined;
    this.ackEv = undefined;
    const s = this.svc;
    if (s === undefined) return;
    this.svc = undefined;
    this.phase = 'idle';
    this.transmitting = false;
    this.giveBack(s.frame, 'aborted', s.attempts);
    const next = this.queue.shift();
    if (next !== undefined) this.begin(next);
  }

  private giveBack(frame: MacFrame, reason: 'aborted', attempts: number): void {
    this.counters.aborted++;
    this.handlers.onSent(frame, { ok: false, reason, attempts, atUs: this.scheduler.now() });
  }
}
