import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import type { EventId } from '../../src/core/engine.js';
import type { Rng } from '../../src/core/rng.js';
import type { Scheduler } from '../../src/core/scheduler.js';
import type { Micros } from '../../src/core/time.js';
import type { ChannelPlan } from '../channels.js';
import { airtimeUs, checkPhy, phy80211b, phyParams } from './phy.js';
import { distanceM, pathLoss, powerAt, type PathLoss } from './propagation.js';
import { BROADCAST, DcfStation, type Air, type AirFrame, type FrameKind, type Hearing, type PnState, type Timing } from './station.js';
import type { MacFrame, MediumParams, PhyParams, PnSource, Position, Station, StationHandlers, StationSpec } from './types.js';

export type { Station } from './types.js';

export const DEFAULT_MEDIUM_PARAMS: Readonly<MediumParams> = Object.freeze({
  txRangeM: 250,
  csRangeM: 550,
  captureDb: 10,
  capture: 'strongest',
  pnLossProbability: 1,
  pnCarrierSense: true,
});

/** What the medium is built from: the clock, the channels, the randomness and, optionally, the PN activity. */
export interface MediumParts {
  scheduler: Scheduler;
  plan: ChannelPlan;
  rng: Rng;
  pn?: PnSource;
}

/** Use of one channel. */
export interface ChannelUsage {
  /** Frames put on the air on it (data, broadcast, RTS, CTS, ACK). */
  frames: number;
  /** Time with at least one frame on the air on exactly this channel, µs (stretches that ended). */
  busyUs: Micros;
}

export interface MediumCounters {
  /** Frames put on the air, all channels. */
  frames: number;
  /** Frames cut short because their sender retuned or detached. */
  truncated: number;
  /** By channel number. */
  readonly channels: ReadonlyMap<number, ChannelUsage>;
}

/** PN intervals are asked for in stretches this long and kept per channel. */
const PN_CHUNK_US = 1_000_000;
/** How far back of the first question a PN cache starts, and how long it keeps past bursts. */
const PN_HISTORY_US = 1_000_000;
/** A burst that reaches this many chunks ahead is taken to end there, for now. */
const PN_MAX_EXTEND_CHUNKS = 16;

/**
 * The emulated air that carries mesh frames between stations (radios): who
 * hears whom (ns-2 TwoRayGround, receive and carrier-sense thresholds from
 * the ranges, channel overlap from the plan), collisions with capture, PN
 * bursts, and an 802.11 DCF MAC per station. Event-driven: a frame costs a
 * few events and O(stations) work, never an event per backoff slot.
 */
export class AirMedium {
  readonly params: Readonly<MediumParams>;
  readonly phy: Readonly<PhyParams>;
  private readonly core: MediumCore;

  constructor(parts: MediumParts, params: Partial<MediumParams> = {}, phy: PhyParams = phy80211b()) {
    this.params = checkParams(mediumParams({ ...DEFAULT_MEDIUM_PARAMS, ...params }));
    checkPhy(phy);
    this.phy = phyParams(phy);
    this.core = new MediumCore(parts, this.params, this.phy);
  }

  addStation(spec: StationSpec, handlers: StationHandlers): Station {
    return this.core.addStation(spec, handlers);
  }

  /** The attached station with this id. */
  station(id: string): Station | undefined {
    return this.core.ids.get(id);
  }

  /** Airtime of a data frame carrying `payloadBytes`: PLCP, MAC header and FCS included, at the data rate. */
  frameAirtimeUs(payloadBytes: number): Micros {
    if (!Number.isSafeInteger(payloadBytes) || payloadBytes < 0) {
      throw new RangeArgumentError('payloadBytes', payloadBytes, 'an integer number of bytes >= 0');
    }
    return this.core.t.dataUs(payloadBytes);
  }

  /** Power received at `b` from a station at `a` transmitting on `channel`, W. */
  receivedPowerW(a: Position, b: Position, channel: number): number {
    checkPosition('a', a);
    checkPosition('b', b);
    return powerAt(this.core.pl[this.core.channelIndex(channel)]!, distanceM(a, b));
  }

  /** The receive threshold (power at txRangeM) and carrier-sense threshold (power at csRangeM) on a channel, W. */
  thresholdsW(channel: number): { rxW: number; csW: number } {
    const k = this.core.channelIndex(channel);
    return { rxW: this.core.rxThresh[k]!, csW: this.core.csThresh[k]! };
  }

  get counters(): MediumCounters {
    return this.core.counters;
  }
}

/** The medium's parameters with every field, in one order, made at one place: one hidden class in every run (see `phyParams`). */
function mediumParams(p: MediumParams): MediumParams {
  return {
    txRangeM: p.txRangeM,
    csRangeM: p.csRangeM,
    captureDb: p.captureDb,
    capture: p.capture,
    pnLossProbability: p.pnLossProbability,
    pnCarrierSense: p.pnCarrierSense,
  };
}

/**
 * Airtimes and intervals that follow from the PHY. A class, so that
 * `dataUs` is one function for every run: a closure made per medium would
 * be a new call target in each run, and the MAC's optimised code would be
 * thrown away at the next run's first frame.
 */
class AirTiming implements Timing {
  readonly ackUs: Micros;
  readonly ctsUs: Micros;
  readonly rtsUs: Micros;
  readonly eifsUs: Micros;
  readonly ackTimeoutUs: Micros;
  readonly ctsTimeoutUs: Micros;

  constructor(private readonly phy: PhyParams) {
    const sifs = phy.sifsUs;
    this.ackUs = airtimeUs(phy, phy.ackBytes, phy.basicRateBps);
    this.ctsUs = airtimeUs(phy, phy.ctsBytes, phy.basicRateBps);
    this.rtsUs = airtimeUs(phy, phy.rtsBytes, phy.basicRateBps);
    this.eifsUs = sifs + this.ackUs + phy.difsUs;
    this.ackTimeoutUs = sifs + this.ackUs + phy.slotUs;
    this.ctsTimeoutUs = sifs + this.ctsUs + phy.slotUs;
  }

  dataUs(payloadBytes: number): Micros {
    const phy = this.phy;
    return airtimeUs(phy, payloadBytes + phy.macHeaderBytes, phy.dataRateBps);
  }
}

function checkParams(p: MediumParams): MediumParams {
  if (!Number.isFinite(p.txRangeM) || p.txRangeM <= 0) throw new RangeArgumentError('txRangeM', p.txRangeM, 'a finite distance > 0 m');
  if (!Number.isFinite(p.csRangeM) || p.csRangeM < p.txRangeM) {
    throw new RangeArgumentError('csRangeM', p.csRangeM, `a finite distance >= txRangeM (${p.txRangeM} m)`);
  }
  if (!Number.isFinite(p.captureDb)) throw new RangeArgumentError('captureDb', p.captureDb, 'a finite number of dB');
  if (p.capture !== 'strongest' && p.capture !== 'first') throw new RangeArgumentError('capture', p.capture, '"strongest" or "first"');
  if (!(p.pnLossProbability >= 0 && p.pnLossProbability <= 1)) {
    throw new RangeArgumentError('pnLossProbability', p.pnLossProbability, 'a probability in [0, 1]');
  }
  if (typeof p.pnCarrierSense !== 'boolean') throw new RangeArgumentError('pnCarrierSense', p.pnCarrierSense, 'true or false');
  return p;
}

function checkPosition(field: string, p: Position): void {
  if (!p || !Number.isFinite(p.xM) || !Number.isFinite(p.yM)) throw new RangeArgumentError(field, p, 'a position with finite xM and yM');
}

/** A frame object for `transmit` to fill (all its fields present, so every frame has one shape). */
function blankFrame(sender: DcfStation): AirFrame {
  return {
    kind: 'data',
    sender,
    chIdx: -1,
    startUs: 0,
    endUs: 0,
    navUs: 0,
    mac: undefined,
    seq: 0,
    target: undefined,
    firstHearing: undefined,
    lastHearing: undefined,
    truncated: false,
    pnLost: undefined,
    endEv: 0,
  };
}

/** The medium's state and the services stations use; the public face is AirMedium. */
class MediumCore implements Air {
  readonly t: Timing;
  readonly ids = new Map<string, DcfStation>();
  readonly pl: PathLoss[];
  readonly rxThresh: Float64Array;
  readonly csThresh: Float64Array;
  readonly counters: MediumCounters;
  private readonly scheduler: Scheduler;
  private readonly plan: ChannelPlan;
  private readonly rng: Rng;
  private readonly pn: PnSource | undefined;
  /**
   * By channel index: whether a PN may ever be on it (there is a source and
   * it does not rule the channel out). Where none can be, the PN questions
   * (every access of every station asks one) are not asked: with no burst
   * they answer off, and a burst's end older than EIFS and CWmax slots
   * changes no access (see PnCache).
   */
  private readonly pnOn: boolean[];
  private readonly nch: number;
  private readonly chIndexByNumber = new Map<number, number>();
  /** overlap[from * nch + to]. */
  private readonly overlap: Float64Array;
  private readonly captureRatio: number;
  private readonly stations: DcfStation[] = [];
  private readonly positions: Position[] = [];
  /** Stations by square cell of the plane, for reachOf (made on first use, dropped when a station joins). */
  private grid: { cellM: number; cells: Map<string, number[]> } | undefined;
  private readonly byNode = new Map<number, DcfStation[]>();
  /** By station index, the list of its router's stations (the same array as `byNode`'s): what every frame's sender looks up. */
  private readonly sameNode: DcfStation[][] = [];
  private readonly inAir: AirFrame[] = [];
  /**
   * Hearings of ended frames, for reuse (a list through `next`): a frame has
   * a hearing for every station within carrier-sense range, most frames end
   * within a millisecond, and made anew they were a fifth of what a
   * simulation allocated.
   */
  private spareHearings: Hearing | undefined;
  /** Ended frames, for reuse: `spareFrames[0 .. spareFrameCount)` (one was made for every frame, a tenth of what a simulation allocated). */
  private readonly spareFrames: AirFrame[] = [];
  private spareFrameCount = 0;
  private readonly usage: ChannelUsage[];
  private readonly framesOnChannel: Int32Array;
  private readonly busySince: Float64Array;
  private readonly pnCaches: Array<PnCache | undefined>;
  private readonly pnRng: Rng;
  /**
   * What stations posted, to run once the event that posted it is done, as
   * `fn.call(self, a, b)`: `outFn[0 .. outCount)` and the same places of
   * `outSelf`, `outA` and `outB` (a delivery is posted as the handler's method
   * and its arguments, not a closure made per frame). Stored by index with a
   * count of its own: an array's push is inlined only while its call site
   * never deoptimized (see the event engine).
   */
  private readonly outFn: Array<((this: unknown, a: unknown, b: unknown) => void) | undefined> = [];
  private readonly outSelf: unknown[] = [];
  private readonly outA: unknown[] = [];
  private readonly outB: unknown[] = [];
  private outCount = 0;
  /** reachOf's lists, by station index * channels + channel index. */
  private reach: Array<Reach | undefined> = [];
  private flushing = false;

  constructor(
    parts: MediumParts,
    readonly params: Readonly<MediumParams>,
    readonly phy: Readonly<PhyParams>,
  ) {
    this.scheduler = parts.scheduler;
    this.plan = parts.plan;
    this.rng = parts.rng;
    this.pn = parts.pn;
    this.pnRng = parts.rng.fork('medium/pn-loss');
    const chs = parts.plan.channels;
    const n = chs.length;
    this.nch = n;
    this.overlap = new Float64Array(n * n);
    this.pl = chs.map((c) => pathLoss(c.centerHz));
    this.rxThresh = Float64Array.from(this.pl, (pl) => powerAt(pl, params.txRangeM));
    this.csThresh = Float64Array.from(this.pl, (pl) => powerAt(pl, params.csRangeM));
    chs.forEach((a, i) => {
      this.chIndexByNumber.set(a.number, i);
      chs.forEach((b, j) => (this.overlap[i * n + j] = parts.plan.overlapFactor(a.number, b.number)));
    });
    this.captureRatio = 10 ** (params.captureDb / 10);
    this.usage = chs.map(() => ({ frames: 0, busyUs: 0 }));
    this.framesOnChannel = new Int32Array(n);
    this.busySince = new Float64Array(n);
    this.pnCaches = chs.map(() => undefined);
    this.pnOn = chs.map((c) => this.pn !== undefined && (this.pn.pnPossible?.(c.number) ?? true));
    this.counters = { frames: 0, truncated: 0, channels: new Map(chs.map((c, i) => [c.number, this.usage[i]!])) };

    this.t = new AirTiming(phy);
  }

  /**
   * The lowest power at which a frame on channel k matters to a station:
   * carrier sense on any channel k overlaps, or reception on k (less a margin
   * against rounding: a station just outside is tested again in the loop).
   */
  private reachFloor(k: number): number {
    let floor = this.rxThresh[k]!;
    for (let j = 0; j < this.nch; j++) {
      const ov = this.overlap[k * this.nch + j]!;
      if (ov > 0) floor = Math.min(floor, this.csThresh[j]! / ov);
    }
    return floor * (1 - 1e-9);
  }

  /** Metres between stations i and j (the later one's position from the earlier one's, as they joined). */
  private distance(i: number, j: number): number {
    return i > j ? distanceM(this.positions[i]!, this.positions[j]!) : distanceM(this.positions[j]!, this.positions[i]!);
  }

  /**
   * The stations that may be within reach of station i on any channel, in
   * station order: those in its cell of the grid and the eight around it.
   * A cell is as wide as the farthest reach of any channel, found from the
   * path loss (power only falls with distance), so no station in reach is
   * left out; reachOf tests each candidate exactly.
   */
  private near(i: number): number[] {
    const g = (this.grid ??= this.makeGrid());
    if (!Number.isFinite(g.cellM)) return this.stations.map((_, j) => j);
    const p = this.positions[i]!;
    const cx = Math.floor(p.xM / g.cellM);
    const cy = Math.floor(p.yM / g.cellM);
    const out: number[] = [];
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) for (const j of g.cells.get(`${cx + dx},${cy + dy}`) ?? []) out.push(j);
    return out.sort((a, b) => a - b);
  }

  private makeGrid(): { cellM: number; cells: Map<string, number[]> } {
    const cellM = Math.max(...this.pl.map((pl, k) => reachRadiusM(pl, this.reachFloor(k))));
    const cells = new Map<string, number[]>();
    if (Number.isFinite(cellM) && cellM > 0) {
      this.positions.forEach((p, j) => {
        const key = `${Math.floor(p.xM / cellM)},${Math.floor(p.yM / cellM)}`;
        const cell = cells.get(key);
        if (cell) cell.push(j);
        else cells.set(key, [j]);
      });
    }
    return { cellM: cellM > 0 ? cellM : Infinity, cells };
  }

  /**
   * The stations of other routers that a frame of `st` on channel k can
   * touch at all, in station order: its power at them is at or above the
   * lowest threshold the transmit loop tests against (carrier sense on any
   * channel k overlaps, or reception on k). Positions never change, so the
   * list is made on first use and kept until a station joins.
   */
  private reachOf(st: DcfStation, k: number): Reach {
    const key = st.index * this.nch + k;
    return this.reach[key] ?? this.newReach(st, k, key);
  }

  /** `reachOf` the first time it is asked (out of line: the answer is nearly always known). */
  private newReach(st: DcfStation, k: number, key: number): Reach {
    const floor = this.reachFloor(k);
    const pl = this.pl[k]!;
    const stations: DcfStation[] = [];
    const power: number[] = [];
    for (const i of this.near(st.index)) {
      const r = this.stations[i]!;
      if (r === st || r.node === st.node) continue;
      const p0 = powerAt(pl, this.distance(st.index, i));
      if (p0 < floor) continue;
      stations.push(r);
      power.push(p0);
    }
    const reach: Reach = { stations, power: Float64Array.from(power) };
    this.reach[key] = reach;
    return reach;
  }

  addStation(spec: StationSpec, handlers: StationHandlers): Station {
    if (typeof spec.id !== 'string' || spec.id === '') throw new RangeArgumentError('id', spec.id, 'a non-empty string');
    if (this.ids.has(spec.id)) throw new FrontendError('RADIO_DUPLICATE_ID', `a station with id ${JSON.stringify(spec.id)} is already on the medium`);
    if (!Number.isInteger(spec.node) || spec.node < 0 || spec.node >= BROADCAST) {
      throw new RangeArgumentError('node', spec.node, 'a mesh address in [0, 65534]');
    }
    checkPosition('position', spec.position);
    if (spec.channel !== undefined) this.channelIndex(spec.channel);
    if (spec.queueLimit !== undefined && (!Number.isSafeInteger(spec.queueLimit) || spec.queueLimit < 0)) {
      throw new RangeArgumentError('queueLimit', spec.queueLimit, 'an integer number of frames >= 0');
    }
    if (typeof handlers?.onReceive !== 'function' || typeof handlers.onSent !== 'function') {
      throw new RangeArgumentError('handlers', handlers, 'an object with onReceive and onSent functions');
    }
    const index = this.stations.length;
    const st = new DcfStation(index, spec, handlers, this, this.rng.fork(`mac/${spec.id}`));
    this.positions.push({ xM: spec.position.xM, yM: spec.position.yM });
    this.stations.push(st);
    this.reach = [];
    this.grid = undefined;
    this.ids.set(st.id, st);
    let same = this.byNode.get(st.node);
    if (same) same.push(st);
    else this.byNode.set(st.node, (same = [st]));
    this.sameNode[index] = same;
    if (st.chIdx >= 0) this.joinChannel(st);
    return st;
  }

  channelIndex(channel: number): number {
    const k = this.chIndexByNumber.get(channel);
    if (k === undefined) this.plan.get(channel); // throws RangeArgumentError naming `channel`
    return k!;
  }

  now(): Micros {
    return this.scheduler.now();
  }

  at(t: Micros, fire: () => void): EventId {
    return this.scheduler.at(Math.max(t, this.scheduler.now()), () => {
      fire();
      this.flush();
    });
  }

  atFlushing(t: Micros, fire: () => void): EventId {
    return this.scheduler.at(Math.max(t, this.scheduler.now()), fire);
  }

  cancel(id: EventId): void {
    this.scheduler.cancel(id);
  }

  moveFlushing(id: EventId, t: Micros, fire: () => void): EventId {
    return this.scheduler.move(id, Math.max(t, this.scheduler.now()), fire);
  }

  post(fn: () => void): void {
    this.postCall(undefined, fn, undefined, undefined);
  }

  postCall<S, A, B>(self: S, fn: (this: S, a: A, b: B) => void, a: A, b: B): void {
    const i = this.outCount++;
    this.outFn[i] = fn as (this: unknown, a: unknown, b: unknown) => void;
    this.outSelf[i] = self;
    this.outA[i] = a;
    this.outB[i] = b;
  }

  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    const { outFn, outSelf, outA, outB } = this;
    let i = 0;
    try {
      while (i < this.outCount) {
        const fn = outFn[i]!;
        const self = outSelf[i];
        const a = outA[i];
        const b = outB[i];
        outFn[i] = outSelf[i] = outA[i] = outB[i] = undefined;
        i++;
        fn.call(self, a, b);
      }
    } finally {
      // Nearly always all of it ran (each place emptied as it ran); what a throw left moves to the front.
      const left = this.outCount - i;
      if (left > 0) {
        for (let j = 0; j < left; j++) {
          outFn[j] = outFn[i + j];
          outSelf[j] = outSelf[i + j];
          outA[j] = outA[i + j];
          outB[j] = outB[i + j];
        }
        for (let j = Math.max(left, i); j < this.outCount; j++) outFn[j] = outSelf[j] = outA[j] = outB[j] = undefined;
      }
      this.outCount = left;
      this.flushing = false;
    }
  }

  transmit(st: DcfStation, kind: FrameKind, mac: MacFrame | undefined, seq: number, target: DcfStation | undefined, navUs: Micros): AirFrame {
    const now = this.scheduler.now();
    const k = st.chIdx;
    const t = this.t;
    const airUs = kind === 'ack' ? t.ackUs : kind === 'cts' ? t.ctsUs : kind === 'rts' ? t.rtsUs : t.dataUs(mac!.payload.length);
    if (kind === 'data' || kind === 'rts') target = this.unicastTarget(st, mac!.dst, k);
    // An ended frame again, or a new one; every field written here either way.
    const f = this.spareFrameCount > 0 ? this.spareFrames[--this.spareFrameCount]! : blankFrame(st);
    f.kind = kind;
    f.sender = st;
    f.chIdx = k;
    f.startUs = now;
    f.endUs = now + airUs;
    f.navUs = navUs;
    f.mac = mac;
    f.seq = seq;
    f.target = target;
    f.truncated = false;
    f.pnLost = undefined;
    f.endEv = 0;
    st.freeze(now, true);
    st.txFrame = f;
    st.eifs = false;
    st.counters.airtimeUs += airUs;
    // It cannot receive what is on the air while it sends.
    const mine = st.heard;
    for (let i = 0; i < mine.length; i++) {
      const h = mine[i]!;
      if (h.frame.endUs > now) h.deaf = true;
    }
    const same = this.sameNode[st.index]!;
    for (let i = 0; i < same.length; i++) {
      const r = same[i]!;
      if (r !== st && !r.detached && r.chIdx === k) this.ownHearing(f, r, now);
    }
    this.counters.frames++;
    this.usage[k]!.frames++;
    if (this.framesOnChannel[k]!++ === 0) this.busySince[k] = now;
    this.inAir[this.inAir.length] = f;

    const rxThresh = this.rxThresh[k]!;
    const cap = this.captureRatio;
    const firstOnly = this.params.capture === 'first';
    const bcast = kind === 'bcast';
    const reach = this.reachOf(st, k);
    const reachable = reach.stations;
    for (let i = 0; i < reachable.length; i++) {
      const r = reachable[i]!;
      if (r.detached) continue;
      const p0 = reach.power[i]!;
      const rk = r.chIdx;
      if (rk !== k) {
        // A broadcast its station should have taken, missed while deaf or elsewhere.
        if (bcast && r.acceptsBroadcast && p0 >= rxThresh) r.counters.missedDeaf++;
        if (rk < 0) continue;
      }
      const p = rk === k ? p0 : p0 * this.overlap[k * this.nch + rk]!;
      if (p < this.csThresh[rk]!) continue;
      const candidate = rk === k && p >= rxThresh;
      const heard = r.heard;
      const blinded = r.txFrame !== undefined || ownOnAir(heard, now);
      let collided = false;
      for (let j = 0; j < heard.length; j++) {
        const g = heard[j]!;
        if (g.frame.endUs <= now || g.own) continue;
        if (firstOnly || p < cap * g.p) collided = true;
        if (g.p < cap * p) g.collided = true;
      }
      const wasIdle = heard.length === 0;
      this.hear(f, r, p, candidate, collided, candidate && blinded, false);
      if (wasIdle && !r.txFrame) r.freeze(now);
    }
    f.endEv = this.scheduler.atWith(f.endUs, this.frameEnds, f);
    return f;
  }

  /** A frame's end on the air, made once: the event carries the frame. */
  private readonly frameEnds = (_now: Micros, f: AirFrame): void => {
    this.endFrame(f, false);
    this.flush();
  };

  truncate(f: AirFrame): void {
    this.scheduler.cancel(f.endEv);
    this.counters.truncated++;
    this.endFrame(f, true);
  }

  /**
   * Radios of one router on the same channel are one half-duplex transceiver
   * as far as the air goes: while one sends, the others decode nothing (what
   * they were receiving is lost, as if they sent themselves) and sense the
   * medium busy. On different channels they do not meet (the seeds' model of
   * a multi-radio router).
   */
  private ownHearing(f: AirFrame, r: DcfStation, now: Micros): void {
    const heard = r.heard;
    for (let i = 0; i < heard.length; i++) {
      const g = heard[i]!;
      if (g.frame.endUs > now && !g.own) g.deaf = true;
    }
    const wasIdle = heard.length === 0;
    this.hear(f, r, 0, false, false, false, true);
    if (wasIdle && !r.txFrame) r.freeze(now);
  }

  /** A hearing of frame f by station r, added to both. */
  private hear(f: AirFrame, r: DcfStation, p: number, candidate: boolean, collided: boolean, deaf: boolean, own: boolean): void {
    const heard = r.heard;
    const pos = heard.length;
    let h = this.spareHearings;
    if (h === undefined) h = { frame: f, st: r, p, candidate, collided, deaf, gone: false, own, pos, decoded: false, next: undefined };
    else {
      this.spareHearings = h.next;
      h.frame = f;
      h.st = r;
      h.p = p;
      h.candidate = candidate;
      h.collided = collided;
      h.deaf = deaf;
      h.gone = false;
      h.own = own;
      h.pos = pos;
      h.decoded = false;
      h.next = undefined;
    }
    // Stored by index, not pushed (see `outFn`).
    heard[pos] = h;
    if (f.lastHearing === undefined) f.firstHearing = h;
    else f.lastHearing.next = h;
    f.lastHearing = h;
  }

  /** Removes a station's hearings (retune, detach); those it should have received count as missed while deaf. */
  leaveChannel(st: DcfStation): void {
    const now = this.scheduler.now();
    for (const h of st.heard) {
      if (h.gone) continue;
      h.gone = true;
      const f = h.frame;
      if (h.candidate && !f.truncated && f.endUs > now && (f.target === st || (f.kind === 'bcast' && st.acceptsBroadcast))) {
        st.counters.missedDeaf++;
      }
    }
    st.heard = [];
  }

  /** A station arrives on its channel: it senses the frames already in the air, but cannot decode them. */
  joinChannel(st: DcfStation): void {
    const k = st.chIdx;
    const now = this.scheduler.now();
    for (const f of this.inAir) {
      const s = f.sender;
      if (s === st || f.endUs <= now) continue;
      if (s.node === st.node) {
        if (f.chIdx === k) this.ownHearing(f, st, now);
        continue;
      }
      const p = powerAt(this.pl[f.chIdx]!, this.distance(s.index, st.index)) * this.overlap[f.chIdx * this.nch + k]!;
      if (p < this.csThresh[k]!) continue;
      this.hear(f, st, p, false, false, false, false);
    }
  }

  remove(st: DcfStation): void {
    if (this.ids.get(st.id) === st) this.ids.delete(st.id);
    const same = this.byNode.get(st.node);
    if (same) {
      const i = same.indexOf(st);
      if (i >= 0) same.splice(i, 1);
      if (same.length === 0) this.byNode.delete(st.node);
    }
  }

  pnCarrierSense(st: DcfStation): boolean {
    return this.pnOn[st.chIdx] === true && this.params.pnCarrierSense && st.pnAffected;
  }

  pnAt(chIdx: number, t: Micros): Readonly<PnState> {
    return this.pnCache(chIdx, t).at(t);
  }

  pnNextStart(chIdx: number, t: Micros, limit: Micros): Micros {
    return this.pnCache(chIdx, t).nextStart(t, limit);
  }

  /** The receiving station of a unicast frame: the one of node `dst` that takes unicast and is on channel k. */
  private unicastTarget(st: DcfStation, dst: number, k: number): DcfStation | undefined {
    const list = this.byNode.get(dst);
    if (!list || dst === st.node) return undefined;
    for (let i = 0; i < list.length; i++) {
      const r = list[i]!;
      if (r.acceptsUnicast && r.chIdx === k) return r;
    }
    this.missedUnicast(st, list, k);
    return undefined;
  }

  /** No station of the unicast's node listens on channel k: the first that would have been in range missed it. */
  private missedUnicast(st: DcfStation, list: readonly DcfStation[], k: number): void {
    const pl = this.pl[k]!;
    for (const r of list) {
      if (r.acceptsUnicast && powerAt(pl, this.distance(st.index, r.index)) >= this.rxThresh[k]!) {
        r.counters.missedDeaf++;
        break;
      }
    }
  }

  private endFrame(f: AirFrame, truncated: boolean): void {
    const now = truncated ? this.scheduler.now() : f.endUs;
    f.endUs = now;
    f.truncated = truncated;
    const air = this.inAir;
    const i = air.indexOf(f);
    if (i >= 0) {
      air[i] = air[air.length - 1]!;
      air.pop();
    }
    const k = f.chIdx;
    if (--this.framesOnChannel[k]! === 0) this.usage[k]!.busyUs += now - this.busySince[k]!;

    const sender = f.sender;
    if (!truncated) {
      sender.txFrame = undefined;
      if (sender.heard.length === 0) sender.idleStartUs = now;
    }
    // First the state of every hearer, then what decoding sets off, then their access timers.
    let decoders = 0;
    const first = f.firstHearing;
    for (let h = first; h !== undefined; h = h.next) {
      if (h.gone) continue;
      h.gone = true;
      const r = h.st;
      const heard = r.heard;
      // The last hearing takes its place.
      if (heard[h.pos] === h) {
        const last = heard.pop()!;
        if (last !== h) {
          heard[h.pos] = last;
          last.pos = h.pos;
        }
      }
      let ok = false;
      if (!truncated && h.candidate) {
        const forR = f.target === r || (f.kind === 'bcast' && r.acceptsBroadcast);
        if (h.deaf) {
          if (forR) r.counters.missedDeaf++;
        } else if (h.collided) {
          if (forR) r.counters.collisions++;
        } else if (r.pnAffected && this.pnDestroyed(f)) {
          if (forR) r.counters.pnLosses++;
        } else ok = true;
      }
      // ns-2: a frame heard but not received correctly makes the next defer EIFS
      // (not its own router's: that one it knows it sent).
      if (!h.own) r.eifs = !ok;
      h.decoded = ok;
      if (ok) decoders++;
      if (heard.length === 0 && !r.txFrame) r.idleStartUs = now;
    }
    if (!truncated) sender.ownFrameEnded(f, now);
    if (decoders > 0) for (let h = first; h !== undefined; h = h.next) if (h.decoded) h.st.decoded(f, now);
    for (let h = first; h !== undefined; h = h.next) {
      const r = h.st;
      if (!r.detached && r.heard.length === 0 && !r.txFrame) r.reschedule(now);
    }
    if (!truncated && sender.heard.length === 0 && !sender.txFrame) sender.reschedule(now);
    // Its hearings are done with (each has left its station's list): they wait for the next frames.
    const last = f.lastHearing;
    if (last !== undefined) {
      last.next = this.spareHearings;
      this.spareHearings = first;
      f.firstHearing = f.lastHearing = undefined;
    }
    // So is the frame: nothing outside the medium holds it (a station keeps what its response needs).
    f.mac = undefined;
    f.target = undefined;
    this.spareFrames[this.spareFrameCount++] = f;
  }

  /** Whether a PN burst on the frame's channel destroyed it: one draw per frame, shared by every receiver. */
  private pnDestroyed(f: AirFrame): boolean {
    if (f.pnLost !== undefined) return f.pnLost;
    let lost = false;
    const prob = this.params.pnLossProbability;
    if (this.pnOn[f.chIdx] === true && prob > 0 && this.pnCache(f.chIdx, f.startUs).overlaps(f.startUs, f.endUs)) {
      lost = prob >= 1 || this.pnRng.next() < prob;
    }
    f.pnLost = lost;
    return lost;
  }

  private pnCache(chIdx: number, t: Micros): PnCache {
    let c = this.pnCaches[chIdx];
    if (!c) {
      // A burst's end matters to an access for EIFS and at most CWmax slots of backoff after it.
      const mattersUs = Math.max(PN_HISTORY_US, this.t.eifsUs + this.phy.cwMax * this.phy.slotUs);
      c = new PnCache(this.pn!, this.plan.channels[chIdx]!.number, Math.max(0, Math.min(t, this.scheduler.now()) - PN_HISTORY_US), mattersUs);
      this.pnCaches[chIdx] = c;
    }
    return c;
  }
}

/**
 * The PN bursts of one channel, asked of the PnSource a chunk at a time and
 * kept sorted and merged (a burst that spans a chunk boundary comes back as
 * one), with the past dropped after PN_HISTORY_US.
 *
 * A channel nobody uses for a while is not asked about meanwhile; when it is
 * used again, the cache does not walk the source through the stretch it
 * missed: it skips to `skipBeforeUs` (PN_HISTORY_US, or longer with a very
 * large CWmax) before the question. A source with bounded history (the band
 * of the medium process keeps 60 s) refuses questions about a past it
 * forgot, and a channel idle for longer than that would otherwise ask about
 * one. Nothing the MAC does depends on bursts that old: a burst's end counts
 * only as the start of the EIFS (or DIFS) and backoff before an access,
 * which last at most EIFS + CWmax slots (21 ms with 802.11b).
 */
class PnCache {
  private starts: number[] = [];
  private ends: number[] = [];
  private head = 0;
  private lastDroppedEnd = -Infinity;
  private fetchedTo: Micros;
  /** Bursts before this time are not known (the cache began or skipped here). */
  private knownFromUs: Micros;

  constructor(
    private readonly src: PnSource,
    private readonly channel: number,
    fromUs: Micros,
    private readonly skipBeforeUs: Micros,
  ) {
    this.fetchedTo = fromUs;
    this.knownFromUs = fromUs;
  }

  /**
   * On at t until `until`, or off since `lastEnd`: the end of the last burst,
   * -Infinity when never on, or the time the cache skipped to when the last
   * burst ended before it (then off at least since that time, over `skipBeforeUs` ago).
   */
  at(t: Micros): Readonly<PnState> {
    this.skipTo(t);
    this.fetchPast(t);
    this.drop(t);
    const i = this.firstEndingAfter(t);
    if (i < this.ends.length && this.starts[i]! <= t) {
      // Look ahead for the burst's end, but never further than a bounded time past t:
      // a PN that stays on must not drag the band's history window along with it.
      const horizon = t + PN_MAX_EXTEND_CHUNKS * PN_CHUNK_US;
      while (this.ends[i]! >= this.fetchedTo && this.fetchedTo < horizon) this.fetchChunk();
      return this.answer(true, this.ends[i]!, t);
    }
    return this.answer(false, t, i > this.head ? this.ends[i - 1]! : this.lastDroppedEnd);
  }

  /** `at`'s answer, in the one object this cache hands out (read at once: every reschedule of a station asks). */
  private answer(on: boolean, until: Micros, lastEnd: Micros): Readonly<PnState> {
    const a = this.state;
    a.on = on;
    a.until = until;
    a.lastEnd = lastEnd;
    return a;
  }
  private readonly state: PnState = { on: false, until: 0, lastEnd: 0 };

  /** Start of the first burst within [t, limit), t itself when on at t, or Infinity. */
  nextStart(t: Micros, limit: Micros): Micros {
    this.skipTo(t);
    this.fetchPast(limit);
    const i = this.firstEndingAfter(t);
    if (i >= this.ends.length) return Infinity;
    const s = Math.max(this.starts[i]!, t);
    return s < limit ? s : Infinity;
  }

  /** Whether a burst is on at some point of [t0, t1). */
  overlaps(t0: Micros, t1: Micros): boolean {
    this.skipTo(t0);
    this.fetchPast(t1);
    const i = this.firstEndingAfter(Math.max(t0, this.knownFromUs));
    return i < this.ends.length && this.starts[i]! < t1;
  }

  /**
   * Before a question about time t: when whole chunks lie between what was
   * fetched and `skipBeforeUs` before t, forgets every burst kept and goes on
   * from the last chunk boundary (on the same grid) at or before that point.
   */
  private skipTo(t: Micros): void {
    const chunks = Math.floor((t - this.skipBeforeUs - this.fetchedTo) / PN_CHUNK_US);
    if (!(chunks > 0)) return;
    const from = this.fetchedTo + chunks * PN_CHUNK_US;
    this.starts = [];
    this.ends = [];
    this.head = 0;
    // Every burst kept ended by fetchedTo; those in the skipped stretch ended by `from`.
    this.lastDroppedEnd = from;
    this.fetchedTo = from;
    this.knownFromUs = from;
  }

  private fetchPast(t: Micros): void {
    while (this.fetchedTo <= t) this.fetchChunk();
  }

  private fetchChunk(): void {
    const a = this.fetchedTo;
    const b = a + PN_CHUNK_US;
    const starts = this.starts;
    const ends = this.ends;
    for (const [s, e] of this.src.pnBusyIntervals(this.channel, a, b)) {
      if (!(e > s)) continue;
      const n = ends.length;
      if (n > this.head && ends[n - 1]! >= s) {
        if (e > ends[n - 1]!) ends[n - 1] = e;
      } else {
        starts.push(s);
        ends.push(e);
      }
    }
    this.fetchedTo = b;
  }

  private firstEndingAfter(t: Micros): number {
    const ends = this.ends;
    let lo = this.head;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private drop(t: Micros): void {
    const cut = t - PN_HISTORY_US;
    while (this.head < this.ends.length - 1 && this.ends[this.head]! < cut) this.lastDroppedEnd = this.ends[this.head++]!;
    if (this.head > 1024) {
      this.starts.splice(0, this.head);
      this.ends.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** The stations a frame of one station on one channel can reach (MediumCore.reachOf), and its power at each, W. */
interface Reach {
  readonly stations: readonly DcfStation[];
  readonly power: Float64Array;
}

/** Whether a station hears another radio of its own router sending (it is blinded). */
function ownOnAir(heard: readonly Hearing[], now: Micros): boolean {
  for (let i = 0; i < heard.length; i++) {
    const g = heard[i]!;
    if (g.own === true && g.frame.endUs > now) return true;
  }
  return false;
}

/**
 * A distance beyond which the power of path loss `pl` is below `floor`
 * (power only falls with distance), with a margin: every station at or
 * above the floor is nearer. Infinity when the floor is never reached.
 */
function reachRadiusM(pl: PathLoss, floor: number): number {
  if (!(floor > 0)) return Infinity;
  let hi = 1;
  while (powerAt(pl, hi) >= floor) {
    hi *= 2;
    if (hi > 1e9) return Infinity;
  }
  let lo = hi / 2;
  for (let n = 0; n < 60; n++) {
    const mid = (lo + hi) / 2;
    if (powerAt(pl, mid) >= floor) lo = mid;
    else hi = mid;
  }
  return hi * 1.01 + 1;
}
