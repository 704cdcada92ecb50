import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import type { EventId } from '../../src/core/engine.js';
import type { Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import type { MacFrame, PhyParams, SendOutcome, Station, StationCounters, StationHandlers, StationSpec } from './types.js';

/** The MAC destination of a broadcast frame. */
/** A station's counters before anything happened. */
export function zeroStationCounters(): StationCounters {
  return {
    txFrames: 0,
    txBytes: 0,
    rxFrames: 0,
    rxBytes: 0,
    acked: 0,
    retries: 0,
    retryLimitDrops: 0,
    queueDrops: 0,
    aborted: 0,
    collisions: 0,
    pnLosses: 0,
    missedDeaf: 0,
    duplicates: 0,
    airtimeUs: 0,
  };
}

export const BROADCAST = 0xffff;

/** What every station refuses to send: anything once detached, an empty packet, a destination that is no mesh address. */
export function checkSend(id: string, detached: boolean, frame: MacFrame): void {
  if (detached) throw new FrontendError('RADIO_DETACHED', `station ${id} is detached from the medium`);
  if (!(frame.payload instanceof Uint8Array) || frame.payload.length === 0) {
    throw new RangeArgumentError('frame.payload.length', frame.payload?.length, 'at least 1 byte');
  }
  if (!Number.isInteger(frame.dst) || frame.dst < 0 || frame.dst > BROADCAST) {
    throw new RangeArgumentError('frame.dst', frame.dst, 'a mesh address in [0, 65535] (65535: broadcast)');
  }
}

/** The kinds of frame the DCF puts on the air. `bcast` is a broadcast data frame. */
export type FrameKind = 'data' | 'bcast' | 'rts' | 'cts' | 'ack';

/**
 * A frame in the air. The medium reuses it once the frame has ended (nothing
 * outside the medium holds one, and a station keeps what it needs of a frame
 * past its end, see `respond`), so its fields are written again then; they
 * are not to be written outside the medium.
 */
export interface AirFrame {
  kind: FrameKind;
  sender: DcfStation;
  chIdx: number;
  startUs: Micros;
  /** End of the airtime; moved earlier when the sender aborts it. */
  endUs: Micros;
  /** The duration field: how long after its end the frame reserves the medium (NAV). */
  navUs: Micros;
  /** The mesh frame a data or broadcast frame carries (and an RTS announces). */
  mac: MacFrame | undefined;
  seq: number;
  /** The station it is for (unicast data, RTS, CTS, ACK), chosen when it starts. */
  target: DcfStation | undefined;
  /**
   * Its hearings in the order they were added, as a list through `Hearing.next`
   * (no array per frame: one is made for every frame, and grown as it fills).
   */
  firstHearing: Hearing | undefined;
  lastHearing: Hearing | undefined;
  truncated: boolean;
  /** Whether a PN on its channel destroyed it: decided once, when first needed. */
  pnLost: boolean | undefined;
  endEv: EventId;
}

/**
 * One station hearing one frame: power above the carrier-sense threshold.
 * The medium reuses it once the frame has ended (nothing outside the
 * medium holds one), so its fields are written again then.
 */
export interface Hearing {
  frame: AirFrame;
  st: DcfStation;
  /** Received power times the channel overlap, W. */
  p: number;
  /** Tuned to the frame's channel from its start, above the receive threshold. */
  candidate: boolean;
  /** An overlapping frame was not 10 dB (captureDb) weaker. */
  collided: boolean;
  /** The station transmitted during it. */
  deaf: boolean;
  /** The station left the channel (retune, detach): nothing more to do. */
  gone: boolean;
  /** The frame is another radio of the station's own router on the same channel: it blinds and busies, it is never decoded. */
  own: boolean;
  /** Its place in the station's `heard` (kept by the medium, which adds and removes hearings), so that removing it needs no search. */
  pos: number;
  /** Set when the frame ends: the station decoded it. */
  decoded: boolean;
  /** The frame's next hearing (see `AirFrame.firstHearing`); the next spare one while it waits for reuse. */
  next: Hearing | undefined;
}

/** What a station needs from the medium. */
/** PN state on a channel at a time (Air.pnAt): on until `until`, or off since `lastEnd`. */
export interface PnState {
  on: boolean;
  until: Micros;
  lastEnd: Micros;
}

export interface Air {
  readonly phy: PhyParams;
  readonly t: Timing;
  now(): Micros;
  at(t: Micros, fire: () => void): EventId;
  /**
   * As `at`, for a callback that runs `flush()` itself once done: nothing is
   * wrapped around it (the station's timer callbacks, made once each).
   */
  atFlushing(t: Micros, fire: () => void): EventId;
  cancel(id: EventId): void;
  /** `cancel(id)` then `atFlushing(t, fire)` in one step; returns the handle to keep. */
  moveFlushing(id: EventId, t: Micros, fire: () => void): EventId;
  /** Queues a user callback to run once the medium's state is settled. */
  post(fn: () => void): void;
  /** Queues `fn.call(self, a, b)` as `post` would, without a closure per call (a frame's delivery). */
  postCall<S, A, B>(self: S, fn: (this: S, a: A, b: B) => void, a: A, b: B): void;
  /** Runs the queued callbacks (events scheduled through `at` do so by themselves). */
  flush(): void;
  transmit(st: DcfStation, kind: FrameKind, mac: MacFrame | undefined, seq: number, target: DcfStation | undefined, navUs: Micros): AirFrame;
  truncate(f: AirFrame): void;
  leaveChannel(st: DcfStation): void;
  joinChannel(st: DcfStation): void;
  remove(st: DcfStation): void;
  channelIndex(channel: number): number;
  pnCarrierSense(st: DcfStation): boolean;
  /** PN state on a channel at t: on until `until`, or off since `lastEnd`; one object per channel, valid until the next call. */
  pnAt(chIdx: number, t: Micros): Readonly<PnState>;
  /** Start of the first PN burst within [t, limit), or Infinity. */
  pnNextStart(chIdx: number, t: Micros, limit: Micros): Micros;
}

/** Airtimes and intervals that follow from the PHY, computed once. */
export interface Timing {
  ackUs: Micros;
  ctsUs: Micros;
  rtsUs: Micros;
  eifsUs: Micros;
  ackTimeoutUs: Micros;
  ctsTimeoutUs: Micros;
  dataUs(payloadBytes: number): Micros;
}

/** The frame in service and its retry state: one object per station, written again for each frame (see `beginService`). */
interface Service {
  frame: MacFrame;
  seq: number;
  bcast: boolean;
  useRts: boolean;
  attempts: number;
  shortRetries: number;
  longRetries: number;
}

/** Where the frame in service stands. */
type Phase = 'idle' | 'contend' | 'tx' | 'wait-cts' | 'sifs' | 'wait-ack';

/**
 * A radio's 802.11 DCF: a FIFO queue, the frame in service, backoff that
 * counts down only while the medium is idle (as remaining slots, never an
 * event per slot), the RTS/CTS/DATA/ACK exchange with its timeouts and
 * retry counts. The medium tells it when its medium turns busy or idle and
 * what it decoded; it asks the medium to transmit.
 */
export class DcfStation implements Station {
  readonly id: string;
  readonly node: number;
  readonly acceptsUnicast: boolean;
  readonly acceptsBroadcast: boolean;
  readonly pnAffected: boolean;
  readonly queueLimit: number;
  readonly counters: StationCounters = zeroStationCounters();

  // Reception state, kept by the medium.
  /** Channel index in the plan; -1 while deaf (retuning or untuned). */
  chIdx = -1;
  /** Frames in the air this station hears above the carrier-sense threshold. */
  heard: Hearing[] = [];
  /** Its own frame in the air. */
  txFrame: AirFrame | undefined;
  /** Since when its medium has been idle (physical carrier sense). */
  idleStartUs: Micros;
  navUntilUs: Micros = 0;
  /** The last frame it heard was not received correctly: defer EIFS, not DIFS. */
  eifs = false;
  detached = false;
  /** Last sequence number received from each sending station, by the station's index (an array: asked for every data frame), for duplicate filtering. */
  readonly lastSeqFrom: Array<number | undefined> = [];

  private channelNumber: number | undefined;
  private retuneEv: EventId | undefined;

  // DCF state.
  private cw: number;
  private backoff = 0;
  /** The earliest time the countdown may run (end of the last exchange). */
  private contendFromUs: Micros = 0;
  private timerEv: EventId | undefined;
  private timerAtUs: Micros = 0;
  private timerIsAccess = false;
  /** What the pending exchange timeout (no ACK or no CTS in time) is for: its time, and whether an RTS went unanswered. */
  private exchAtUs: Micros = 0;
  private exchRts = false;
  /**
   * The pending response (ACK or CTS): what, to which frame (its channel,
   * sequence number and sender, kept here: the medium reuses the frame once
   * it has ended), with what NAV.
   */
  private respKind: 'ack' | 'cts' = 'ack';
  private respChIdx = -1;
  private respSeq = 0;
  private respSender: DcfStation | undefined;
  private respNavUs: Micros = 0;
  // The callbacks of the timers above, made once: a station sets one on nearly every change of the medium.
  private readonly accessRun = (): void => {
    this.access();
    this.air.flush();
  };
  private readonly wakeRun = (): void => {
    this.wake(this.timerAtUs);
    this.air.flush();
  };
  private readonly failRun = (): void => {
    this.failed(this.exchAtUs, this.exchRts);
    this.air.flush();
  };
  private readonly respondRun = (): void => {
    this.respEv = undefined;
    const to = this.respSender!;
    this.respSender = undefined;
    // Sent regardless of carrier sense, but not while deaf or already on the air.
    if (this.chIdx === this.respChIdx && !this.txFrame) this.air.transmit(this, this.respKind, undefined, this.respSeq, to, Math.max(0, this.respNavUs));
    this.air.flush();
  };
  /** When a countdown is under way: the time its first slot began. */
  private countFromUs: Micros | undefined;

  /** The frame in service (`service` while there is one). */
  private svc: Service | undefined;
  private service: Service | undefined;
  private phase: Phase = 'idle';
  private exchEv: EventId | undefined;
  private respEv: EventId | undefined;
  private readonly queue: MacFrame[] = [];
  private qHead = 0;
  private nextSeq = 0;

  constructor(
    readonly index: number,
    spec: StationSpec,
    private readonly handlers: StationHandlers,
    private readonly air: Air,
    private readonly rng: Rng,
  ) {
    this.id = spec.id;
    this.node = spec.node;
    this.acceptsUnicast = spec.acceptsUnicast;
    this.acceptsBroadcast = spec.acceptsBroadcast;
    this.pnAffected = spec.pnAffected !== false;
    this.queueLimit = spec.queueLimit ?? 64;
    this.cw = air.phy.cwMin;
    this.idleStartUs = air.now();
    if (spec.channel !== undefined) {
      this.channelNumber = spec.channel;
      this.chIdx = air.channelIndex(spec.channel);
    }
  }

  get channel(): number | undefined {
    return this.channelNumber;
  }

  get idle(): boolean {
    return this.svc === undefined && this.queued === 0;
  }

  /** Transmission attempts of the frame in service so far (0: still deferring), undefined when none is. */
  get serviceAttempts(): number | undefined {
    return this.svc?.attempts;
  }

  /** Frames waiting behind the one in service. */
  get queued(): number {
    return this.queue.length - this.qHead;
  }

  send(frame: MacFrame): boolean {
    checkSend(this.id, this.detached, frame);
    if (this.svc === undefined) {
      this.beginService(frame, this.air.now());
      return true;
    }
    if (this.queued >= this.queueLimit) {
      this.counters.queueDrops++;
      return false;
    }
    this.queue.push(frame);
    return true;
  }

  retune(channel: number | undefined, overheadUs: Micros): void {
    if (this.detached) throw new FrontendError('RADIO_DETACHED', `station ${this.id} is detached from the medium`);
    if (channel !== undefined) this.air.channelIndex(channel);
    if (!Number.isSafeInteger(overheadUs) || overheadUs < 0) {
      throw new RangeArgumentError('overheadUs', overheadUs, 'an integer number of µs >= 0');
    }
    const now = this.air.now();
    this.goDeaf(now);
    if (this.svc) this.abortService(now);
    if (overheadUs === 0) this.tuned(channel, now);
    else this.retuneEv = this.air.at(now + overheadUs, () => this.tuned(channel, now + overheadUs));
    this.air.flush();
  }

  hold(): void {
    if (this.queued === 0) return;
    const now = this.air.now();
    const h = this.handlers;
    for (let f = this.dequeue(); f; f = this.dequeue()) {
      const frame = f;
      this.counters.aborted++;
      this.air.post(() => h.onSent(frame, { ok: false, reason: 'aborted', attempts: 0, atUs: now }));
    }
    this.air.flush();
  }

  detach(): void {
    if (this.detached) return;
    const now = this.air.now();
    this.goDeaf(now);
    this.detached = true;
    const h = this.handlers;
    const svc = this.svc;
    if (svc) {
      this.counters.aborted++;
      const { frame, attempts } = svc;
      this.air.post(() => h.onSent(frame, { ok: false, reason: 'aborted', attempts, atUs: now }));
    }
    for (let f = this.dequeue(); f; f = this.dequeue()) {
      const frame = f;
      this.counters.aborted++;
      this.air.post(() => h.onSent(frame, { ok: false, reason: 'aborted', attempts: 0, atUs: now }));
    }
    this.svc = undefined;
    this.phase = 'idle';
    this.air.remove(this);
    this.air.flush();
  }

  // ---- Called by the medium -------------------------------------------------

  /** The medium turned busy for this station (a frame heard, its own transmission). */
  freeze(now: Micros, force = false): void {
    // Nearly always called with no timer pending (every station in range, for every frame): that case stays a test where it is called.
    if (this.timerEv !== undefined) this.stopTimer(now, force);
  }

  private stopTimer(now: Micros, force: boolean): void {
    // An access due at this very instant goes ahead: zero propagation delay must not hide a collision.
    if (!force && this.timerIsAccess && this.timerAtUs === now) return;
    this.air.cancel(this.timerEv!);
    this.timerEv = undefined;
    this.consumeSlots(now);
    if (this.phase === 'contend' && this.backoff === 0) this.backoff = this.draw();
  }

  /** Sets or cancels the access timer from the current state; idempotent. */
  reschedule(now: Micros): void {
    // An access due at this very instant stands, whatever else happens at this instant.
    if (this.timerEv !== undefined && this.timerIsAccess && this.timerAtUs === now) return;
    // A timer already pending is moved where the state puts it (or cancelled when nowhere).
    this.countFromUs = undefined;
    if (!this.armTimer(now) && this.timerEv !== undefined) {
      this.air.cancel(this.timerEv);
      this.timerEv = undefined;
    }
  }

  /** Sets the access timer (or moves the one pending) where the state puts it; false when it needs none. */
  private armTimer(now: Micros): boolean {
    if (this.detached || this.chIdx < 0 || this.txFrame || this.heard.length > 0) return false;
    if (this.phase !== 'contend' && !(this.phase === 'idle' && this.backoff > 0)) return false;
    let idleFrom = Math.max(this.idleStartUs, this.navUntilUs);
    const pnCs = this.air.pnCarrierSense(this);
    if (pnCs) {
      const pn = this.air.pnAt(this.chIdx, now);
      if (pn.on) return this.setTimer(pn.until, false, undefined);
      idleFrom = Math.max(idleFrom, pn.lastEnd);
    }
    if (idleFrom > now) return this.setTimer(idleFrom, false, undefined);
    const phy = this.air.phy;
    const countFrom = Math.max(idleFrom + (this.eifs ? this.air.t.eifsUs : phy.difsUs), this.contendFromUs);
    const accessAt = Math.max(now, countFrom + this.backoff * phy.slotUs);
    if (pnCs) {
      const ps = this.air.pnNextStart(this.chIdx, now, accessAt);
      if (ps < accessAt) return this.setTimer(ps, false, countFrom);
    }
    return this.setTimer(accessAt, true, countFrom);
  }

  /** Its own frame left the air (not aborted). */
  ownFrameEnded(f: AirFrame, now: Micros): void {
    const svc = this.svc;
    if (f.kind === 'ack' || f.kind === 'cts' || !svc) return;
    if (f.kind === 'bcast') {
      this.complete(now, { ok: true, attempts: svc.attempts, atUs: now });
    } else if (f.kind === 'data') {
      this.phase = 'wait-ack';
      this.exchAtUs = now + this.air.t.ackTimeoutUs;
      this.exchRts = false;
      this.exchEv = this.air.atFlushing(this.exchAtUs, this.failRun);
    } else {
      this.phase = 'wait-cts';
      this.exchAtUs = now + this.air.t.ctsTimeoutUs;
      this.exchRts = true;
      this.exchEv = this.air.atFlushing(this.exchAtUs, this.failRun);
    }
  }

  /** A frame this station decoded: for it, or overheard. */
  decoded(f: AirFrame, now: Micros): void {
    const forMe = f.target === this;
    switch (f.kind) {
      case 'bcast':
        if (this.acceptsBroadcast) this.deliver(f.mac!, now);
        return;
      case 'data':
        if (!forMe) break;
        if (this.lastSeqFrom[f.sender.index] === f.seq) this.counters.duplicates++;
        else {
          this.lastSeqFrom[f.sender.index] = f.seq;
          this.deliver(f.mac!, now);
        }
        this.respond(now, 'ack', f, 0);
        return;
      case 'rts':
        if (!forMe) break;
        // A CTS only when its own NAV leaves the medium free (802.11 9.3.2.4).
        if (this.navUntilUs <= now) this.respond(now, 'cts', f, f.navUs - this.air.phy.sifsUs - this.air.t.ctsUs);
        return;
      case 'cts':
        if (!forMe) break;
        if (this.phase === 'wait-cts' && this.svc && f.seq === this.svc.seq) {
          this.cancelExch();
          this.svc.shortRetries = 0;
          this.phase = 'sifs';
          const at = now + this.air.phy.sifsUs;
          this.exchEv = this.air.at(at, () => {
            this.exchEv = undefined;
            this.transmitData();
          });
        }
        return;
      case 'ack':
        if (forMe && this.phase === 'wait-ack' && this.svc && f.seq === this.svc.seq) {
          this.cancelExch();
          this.counters.acked++;
          this.complete(now, { ok: true, attempts: this.svc.attempts, atUs: now });
        }
        return;
    }
    if (f.navUs > 0) this.navUntilUs = Math.max(this.navUntilUs, now + f.navUs);
  }

  // ---- The exchange ----------------------------------------------------------

  private beginService(frame: MacFrame, now: Micros): void {
    const bcast = frame.dst === BROADCAST;
    const useRts = !bcast && frame.payload.length > this.air.phy.rtsThresholdBytes;
    // The station's one service object, made with its first frame: nothing keeps it past the frame's
    // service (what is posted about a frame takes its values, not the object).
    const svc = this.service;
    if (svc === undefined) this.svc = this.service = { frame, seq: this.nextSeq, bcast, useRts, attempts: 0, shortRetries: 0, longRetries: 0 };
    else {
      svc.frame = frame;
      svc.seq = this.nextSeq;
      svc.bcast = bcast;
      svc.useRts = useRts;
      svc.attempts = 0;
      svc.shortRetries = 0;
      svc.longRetries = 0;
      this.svc = svc;
    }
    this.nextSeq = (this.nextSeq + 1) & 0xfff;
    this.phase = 'contend';
    // A frame that finds the medium busy and no backoff pending draws one (802.11 9.3.4.2).
    if (this.backoff === 0 && this.mediumBusy(now)) this.backoff = this.draw();
    this.reschedule(now);
  }

  private access(): void {
    this.timerEv = undefined;
    this.countFromUs = undefined;
    this.backoff = 0;
    const svc = this.svc;
    if (this.phase !== 'contend' || !svc) return; // post-backoff done
    svc.attempts++;
    if (svc.attempts > 1) this.counters.retries++;
    this.handlers.onAttempt?.(svc.frame, svc.attempts);
    if (svc.useRts) {
      const t = this.air.t;
      const sifs = this.air.phy.sifsUs;
      this.phase = 'tx';
      this.air.transmit(this, 'rts', svc.frame, svc.seq, undefined, 3 * sifs + t.ctsUs + t.dataUs(svc.frame.payload.length) + t.ackUs);
    } else this.transmitData();
  }

  private transmitData(): void {
    const svc = this.svc!;
    this.phase = 'tx';
    this.counters.txFrames++;
    this.counters.txBytes += svc.frame.payload.length;
    const t = this.air.t;
    if (svc.bcast) this.air.transmit(this, 'bcast', svc.frame, svc.seq, undefined, 0);
    else this.air.transmit(this, 'data', svc.frame, svc.seq, undefined, this.air.phy.sifsUs + t.ackUs);
  }

  /** No CTS or no ACK in time. */
  private failed(now: Micros, rtsFailed: boolean): void {
    this.exchEv = undefined;
    const svc = this.svc!;
    const phy = this.air.phy;
    let limitHit: boolean;
    if (svc.useRts && !rtsFailed) limitHit = ++svc.longRetries >= phy.longRetryLimit;
    else limitHit = ++svc.shortRetries >= phy.shortRetryLimit;
    if (limitHit) {
      this.counters.retryLimitDrops++;
      this.complete(now, { ok: false, reason: 'retry-limit', attempts: svc.attempts, atUs: now });
      return;
    }
    this.cw = Math.min(2 * (this.cw + 1) - 1, phy.cwMax);
    this.backoff = this.draw();
    this.contendFromUs = now;
    this.phase = 'contend';
    this.reschedule(now);
  }

  /** The frame in service is done: post-backoff with CW reset, next frame into service. */
  private complete(now: Micros, outcome: SendOutcome): void {
    const frame = this.svc!.frame;
    if (!this.endService(now)) this.reschedule(now);
    const h = this.handlers;
    this.air.postCall(h, h.onSent, frame, outcome);
  }

  /** The exchange in service is cut (retune, detach): the caller has the station's timing in hand. */
  private abortService(now: Micros): void {
    const { frame, attempts } = this.svc!;
    this.counters.aborted++;
    this.endService(now);
    const h = this.handlers;
    this.air.post(() => h.onSent(frame, { ok: false, reason: 'aborted', attempts, atUs: now }));
  }

  /** Ends the service: CW back to its minimum, a post-backoff drawn, the next queued frame taken in; false when none was. */
  private endService(now: Micros): boolean {
    this.svc = undefined;
    this.phase = 'idle';
    this.cw = this.air.phy.cwMin;
    this.backoff = this.draw();
    this.contendFromUs = now;
    const next = this.dequeue();
    if (next) this.beginService(next, now);
    return next !== undefined;
  }

  /** Deaf from now: its own frame cut short, timers off, the channel left. */
  private goDeaf(now: Micros): void {
    if (this.retuneEv !== undefined) this.air.cancel(this.retuneEv);
    this.retuneEv = undefined;
    if (this.txFrame) this.air.truncate(this.txFrame);
    this.txFrame = undefined;
    this.cancelExch();
    if (this.respEv !== undefined) this.air.cancel(this.respEv);
    this.respEv = undefined;
    if (this.timerEv !== undefined) {
      this.air.cancel(this.timerEv);
      this.timerEv = undefined;
      this.consumeSlots(now);
    }
    this.air.leaveChannel(this);
    this.chIdx = -1;
    this.channelNumber = undefined;
    this.navUntilUs = 0;
    this.eifs = false;
  }

  private tuned(channel: number | undefined, now: Micros): void {
    this.retuneEv = undefined;
    if (channel === undefined) return;
    this.channelNumber = channel;
    this.chIdx = this.air.channelIndex(channel);
    this.idleStartUs = now;
    this.air.joinChannel(this);
    this.reschedule(now);
  }

  private respond(now: Micros, kind: 'ack' | 'cts', to: AirFrame, navUs: Micros): void {
    if (this.respEv !== undefined) this.air.cancel(this.respEv);
    this.respKind = kind;
    this.respChIdx = to.chIdx;
    this.respSeq = to.seq;
    this.respSender = to.sender;
    this.respNavUs = navUs;
    this.respEv = this.air.atFlushing(now + this.air.phy.sifsUs, this.respondRun);
  }

  private deliver(frame: MacFrame, now: Micros): void {
    this.counters.rxFrames++;
    this.counters.rxBytes += frame.payload.length;
    const h = this.handlers;
    this.air.postCall(h, h.onReceive, frame, now);
  }

  // ---- Contention --------------------------------------------------------------

  private setTimer(at: Micros, isAccess: boolean, countFrom: Micros | undefined): true {
    this.timerAtUs = at;
    this.timerIsAccess = isAccess;
    this.countFromUs = countFrom;
    const run = isAccess ? this.accessRun : this.wakeRun;
    this.timerEv = this.timerEv === undefined ? this.air.atFlushing(at, run) : this.air.moveFlushing(this.timerEv, at, run);
    return true;
  }

  /** A NAV or PN burst ended, or a PN burst began during the countdown. */
  private wake(now: Micros): void {
    this.timerEv = undefined;
    if (this.countFromUs !== undefined) {
      // A PN burst begins: the medium turns busy.
      this.consumeSlots(now);
      if (this.phase === 'contend' && this.backoff === 0) this.backoff = this.draw();
    }
    this.reschedule(now);
  }

  /** Takes off the backoff the whole slots that went by idle since the countdown began. */
  private consumeSlots(now: Micros): void {
    const from = this.countFromUs;
    this.countFromUs = undefined;
    if (from === undefined || now <= from) return;
    const slots = Math.floor((now - from) / this.air.phy.slotUs);
    this.backoff = Math.max(0, this.backoff - slots);
  }

  private mediumBusy(now: Micros): boolean {
    if (this.chIdx < 0 || this.txFrame || this.navUntilUs > now) return true;
    const heard = this.heard;
    for (let i = 0; i < heard.length; i++) if (heard[i]!.frame.endUs > now) return true;
    return this.air.pnCarrierSense(this) && this.air.pnAt(this.chIdx, now).on;
  }

  private draw(): number {
    return this.rng.int(0, this.cw);
  }

  private cancelExch(): void {
    if (this.exchEv !== undefined) this.air.cancel(this.exchEv);
    this.exchEv = undefined;
  }

  private dequeue(): MacFrame | undefined {
    if (this.qHead >= this.queue.length) return undefined;
    const f = this.queue[this.qHead]!;
    this.queue[this.qHead++] = undefined as unknown as MacFrame;
    if (this.qHead > 64 && this.qHead * 2 > this.queue.length) {
      this.queue.splice(0, this.qHead);
      this.qHead = 0;
    }
    return f;
  }
}
