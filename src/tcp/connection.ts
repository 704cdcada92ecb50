import { CogmeshError } from '../core/errors.js';
import { earlierOf, US_PER_MS, type Micros } from '../core/time.js';
import { TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN, type SackBlock, type TcpOptions, type TcpSegment } from '../wire/tcp.js';
import { congestionControl, initialWindow, type CcName, type CongestionControl, type SendView, type AckEvent } from './cc/index.js';
import { Rack } from './rack.js';
import { ByteRing } from './ring.js';
import { RttEstimator } from './rtt.js';
import { Scoreboard, type SeqRange } from './scoreboard.js';
import { fromWire, seqLt, toWire } from './seq.js';

/**
 * A TCP connection (RFC 9293) as a sans-IO core, in the order of the RFC:
 * configuration, state, the user calls (open, send, receive, close, abort),
 * segment arrival (3.10.7), output, timers (RFC 6298 retransmission, delayed
 * ACK, persist, TIME-WAIT). No clock, no socket: time comes in with every
 * call, segments and events go out through `poll()`, and `nextDeadline()`
 * says when `tick()` is next due. The congestion control is a pluggable part
 * (cc/); the wire codec is src/wire/tcp.ts.
 */

export type TcpState =
  'CLOSED' | 'LISTEN' | 'SYN-SENT' | 'SYN-RECEIVED' | 'ESTABLISHED' | 'FIN-WAIT-1' | 'FIN-WAIT-2' | 'CLOSE-WAIT' | 'CLOSING' | 'LAST-ACK' | 'TIME-WAIT';

export interface TcpConfig {
  /** Largest payload per segment this end receives (the MSS option it sends) and sends. */
  mss: number;
  sendBufferBytes: number;
  /** Receive buffer: bounds the advertised window. */
  receiveBufferBytes: number;
  congestion: CcName;
  /** Offer SACK-permitted (RFC 2018); a `sack` congestion control needs it negotiated. */
  sack: boolean;
  /** Offer timestamps (RFC 7323): RTT from every ACK, and PAWS. */
  timestamps: boolean;
  /** Offer window scaling (RFC 7323). */
  windowScale: boolean;
  /** Delay of an ACK for in-order data (every second full segment is acknowledged at once); 0 acknowledges every segment. */
  delayedAckMs: number;
  /** Initial window in segments; 0 takes RFC 5681's (2 to 4 by MSS). */
  initialWindowSegments: number;
  initialRtoMs: number;
  /** RFC 6298 says 1 s; Linux and ns-2.35 use 200 ms. */
  minRtoMs: number;
  maxRtoMs: number;
  /** Consecutive timeouts of the same data before the connection gives up (RFC 9293 R2). */
  maxRetransmits: number;
  /** Retransmissions of a SYN before the open fails. */
  synRetries: number;
  /** TIME-WAIT, 2 x MSL. */
  timeWaitMs: number;
  /** Turn off Nagle's algorithm (RFC 896): send small segments at once. */
  noDelay: boolean;
  dupThresh: number;
  vegas: { alpha: number; beta: number; gamma: number };
  /**
   * HyStart++ (RFC 9406) in the first slow start: true or false for any
   * congestion control; undefined takes the variant's default (on with
   * cubic, as Linux runs HyStart with CUBIC; off with the others).
   */
  hystart: boolean | undefined;
  /** Proportional Rate Reduction (RFC 6937) in the fast recoveries that reduce cwnd (newreno, vegas, sack, cubic; Reno keeps window inflation). */
  prr: boolean;
  /**
   * F-RTO (RFC 5682): after a timeout, two new segments before any
   * go-back-N tell a spurious timeout from a loss (the SACK-enhanced
   * algorithm of its section 3 when SACK is negotiated); a spurious one gets
   * the Eifel response (RFC 4015).
   */
  frto: boolean;
  /**
   * Eifel detection (RFC 3522): the timestamp echoed by the first ACK after a
   * timeout or fast retransmit tells whether it answers the original; a
   * spurious one gets the Eifel response (RFC 4015). Needs timestamps.
   */
  eifel: boolean;
  /**
   * D-SACK (RFC 2883): as a receiver, report duplicate segments in the first
   * SACK block; as a sender, undo a congestion response all of whose
   * retransmissions came back as duplicates (RFC 3708). Needs SACK.
   */
  dsack: boolean;
  /** RACK-TLP (RFC 8985): losses found by transmit time, and a probe for a lost tail. Needs SACK. */
  rack: boolean;
}

export const DEFAULT_TCP_CONFIG: Readonly<TcpConfig> = Object.freeze({
  mss: 1460,
  sendBufferBytes: 256 * 1024,
  receiveBufferBytes: 256 * 1024,
  congestion: 'newreno',
  sack: true,
  timestamps: true,
  windowScale: true,
  delayedAckMs: 40,
  initialWindowSegments: 0,
  initialRtoMs: 1000,
  minRtoMs: 200,
  maxRtoMs: 60_000,
  maxRetransmits: 15,
  synRetries: 6,
  timeWaitMs: 60_000,
  noDelay: false,
  dupThresh: 3,
  vegas: Object.freeze({ alpha: 1, beta: 3, gamma: 1 }),
  hystart: undefined,
  prr: false,
  // Linux's loss recovery: F-RTO, D-SACK and RACK-TLP on (tcp_frto, tcp_dsack, tcp_recovery); Eifel needs timestamps and is off.
  frto: true,
  eifel: false,
  dsack: true,
  rack: true,
}) as Readonly<TcpConfig>;

/** What happened to the connection, for its application. */
export type TcpEvent =
  /** The three-way handshake completed. */
  | 'connected'
  /** In-order data waits in the receive buffer. */
  | 'readable'
  /** Room in the send buffer again. */
  | 'writable'
  /** The peer closed its direction: no data after what is buffered. */
  | 'eof'
  /** The connection reached CLOSED in an orderly way (or was aborted locally). */
  | 'closed'
  /** The peer reset it. */
  | 'reset'
  /** The peer refused the open (RST to our SYN). */
  | 'refused'
  /** Retransmissions went unanswered too often: given up. */
  | 'timeout';

export type TcpAction = { kind: 'segment'; seg: TcpSegment } | { kind: 'event'; event: TcpEvent };

const eventAction = (event: TcpEvent): TcpAction => Object.freeze({ kind: 'event', event });
/** The action of each event (every one: the type asks for them all), made once and frozen: `poll` hands out the same object every time. */
const EVENT_ACTIONS: { readonly [E in TcpEvent]: TcpAction } = Object.freeze({
  connected: eventAction('connected'),
  readable: eventAction('readable'),
  writable: eventAction('writable'),
  eof: eventAction('eof'),
  closed: eventAction('closed'),
  reset: eventAction('reset'),
  refused: eventAction('refused'),
  timeout: eventAction('timeout'),
});

/** A user call that the connection's state does not allow (RFC 9293's "error: connection closing" and the like). */
export class TcpError extends CogmeshError {}

export interface TcpStats {
  segmentsSent: number;
  segmentsReceived: number;
  /** Payload bytes sent, retransmissions included. */
  bytesSent: number;
  retransmittedSegments: number;
  retransmittedBytes: number;
  fastRetransmits: number;
  timeouts: number;
  dupAcksReceived: number;
  /** Segments outside the receive window, or failing PAWS. */
  outOfWindow: number;
  challengeAcks: number;
  zeroWindowProbes: number;
  /** In-order payload bytes handed to the receive buffer. */
  bytesReceived: number;
  /** Payload bytes that arrived twice (or arrived old). */
  duplicateBytes: number;
  /** Timeouts F-RTO or Eifel found spurious (the original segments had arrived). */
  spuriousTimeouts: number;
  /** Fast retransmits Eifel found spurious. */
  spuriousFastRetransmits: number;
  /** Retransmitted segments a D-SACK reported as duplicates at the receiver (RFC 3708). */
  dsackedRetransmits: number;
  /** Congestion responses taken back (after a spurious timeout, fast retransmit or a recovery all of whose retransmissions were D-SACKed). */
  undos: number;
  /** D-SACK blocks this end sent as a receiver, and received as a sender. */
  dsackBlocksSent: number;
  dsackBlocksReceived: number;
  /** Tail loss probes sent (RFC 8985 7), and the losses they repaired. */
  tailLossProbes: number;
  tlpRepairs: number;
  /** Segments RACK marked lost by their transmit time (RFC 8985 6). */
  rackLosses: number;
}

const SYNCHRONIZED: ReadonlySet<TcpState> = new Set(['ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2', 'CLOSE-WAIT', 'CLOSING', 'LAST-ACK', 'TIME-WAIT']);
/** States in which this end still has sequence space to (re)send. */
const SENDING: ReadonlySet<TcpState> = new Set(['ESTABLISHED', 'CLOSE-WAIT', 'FIN-WAIT-1', 'CLOSING', 'LAST-ACK']);
/** States in which segment text is accepted (RFC 9293 3.10.7.4, seventh). */
const RECEIVING: ReadonlySet<TcpState> = new Set(['ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2']);

/** Payload cost of the timestamps option on every segment. */
const TS_OPTION_BYTES = 12;

interface OooSegment {
  start: number;
  data: Uint8Array;
}

/** A congestion response that a later finding may take back (RFC 3522, 3708, 4015, 5682). */
interface LossEpisode {
  kind: 'timeout' | 'fast';
  /** cwnd and ssthresh before the response. */
  prior: { cwnd: number; ssthresh: number };
  /** RFC 4015's pipe_prev: max(FlightSize, ssthresh) before the response. */
  pipePrev: number;
  /** RFC 4015's SRTT_prev and RTTVAR_prev (a timeout's). */
  rttPrev: { srttUs: number; rttvarUs: number } | undefined;
  /** RFC 3522's RetransmitTS, the timestamp of the first retransmission, until Eifel has judged the acceptable ACK. */
  retransmitTs: number | undefined;
  /** SND.MAX when it began. */
  recover: number;
  /** Its retransmissions, and whether a D-SACK reported each (RFC 3708). */
  retransmits: Array<{ start: number; end: number; dsacked: boolean }>;
  undone: boolean;
}

/** RFC 8985 7.2's WCDelAckT: the longest a receiver may delay the ACK of a lone segment. */
const WC_DEL_ACK_US = 200 * US_PER_MS;

/** The payload of a segment without data: one empty array for all of them (nothing can be written into it). */
const NO_BYTES = new Uint8Array(0);

/** What `poll` answers when there is nothing to hand out: made once, and frozen. */
const NO_ACTIONS: readonly TcpAction[] = Object.freeze([]);

export class TcpConnection {
  state: TcpState = 'CLOSED';
  readonly stats: TcpStats = {
    segmentsSent: 0,
    segmentsReceived: 0,
    bytesSent: 0,
    retransmittedSegments: 0,
    retransmittedBytes: 0,
    fastRetransmits: 0,
    timeouts: 0,
    dupAcksReceived: 0,
    outOfWindow: 0,
    challengeAcks: 0,
    zeroWindowProbes: 0,
    bytesReceived: 0,
    duplicateBytes: 0,
    spuriousTimeouts: 0,
    spuriousFastRetransmits: 0,
    dsackedRetransmits: 0,
    undos: 0,
    dsackBlocksSent: 0,
    dsackBlocksReceived: 0,
    tailLossProbes: 0,
    tlpRepairs: 0,
    rackLosses: 0,
  };
  readonly rtt: RttEstimator;
  readonly scoreboard: Scoreboard;
  /** What `view()` hands the congestion control, written again at each call. */
  private readonly sendView: { -readonly [K in keyof SendView]: SendView[K] };
  /** What `ackEvent()` hands the congestion control, written again at each call. */
  private readonly ackSeen: AckEvent = { now: 0, ack: 0, acked: 0, dup: false, flightBefore: 0 };
  private cc: CongestionControl;
  /**
   * Segments since the last poll; undefined when none. Made with its first
   * segment (`[a]`): an empty list that grows takes room for 17 at its first
   * store, and most polls hand out one segment.
   */
  private out: TcpAction[] | undefined;
  /**
   * Events since the last poll, each once, in the order first emitted:
   * `pending[0 .. pendingCount)`. An array and a count rather than a Set: an
   * event is pending after nearly every input, and a Set's iteration and
   * `clear` (a new table each time) cost more than the rest of `poll`.
   */
  private readonly pending: TcpEvent[] = [];
  private pendingCount = 0;

  // Send side (absolute offsets: 0 is our SYN, data byte k is k + 1).
  private readonly sndBuf: ByteRing;
  /** Absolute offset of the first byte in sndBuf. */
  private sndBufStart = 1;
  /** Absolute offset just past the last byte written by the application. */
  private writeEnd = 1;
  private finQueued = false;
  private sndUna = 0;
  private sndNxt = 0;
  private sndMax = 0;
  private sndWnd = 0;
  private maxSndWnd = 0;
  private sndWl1 = 0;
  private sndWl2 = 0;
  private sndWscale = 0;
  private peerMss = 536;
  /** The segment being timed without timestamps (Karn): where it starts and ends, and when it left. */
  private timing: { seq: number; end: number; at: Micros } | undefined;
  /**
   * The round trip of the delay that fooled the timer, the sample RFC 4015
   * 3.2 adapts it with, which Karn's rule would lose without timestamps.
   * F-RTO keeps, from the first timeout of an episode, when it struck and
   * the segment then being timed. If the timeout proves spurious and that
   * segment was never retransmitted, its round trip (`ackedAt` - `at`) is
   * the sample; else the time from the timeout to the ACK that proved it,
   * a lower bound on the round trip of the originals that ACK covers (all
   * sent before the timeout, none retransmitted).
   */
  private frtoClock: { firedAt: Micros; timed?: { seq: number; end: number; at: Micros; ackedAt?: Micros } } | undefined;
  private retries = 0;
  private synSentAt: Micros | undefined;
  private synRetransmitted = false;

  // Receive side (absolute offsets: 0 is the peer's SYN).
  private irs = 0;
  private rcvNxt = 0;
  private readonly rcvBuf: ByteRing;
  private rcvAdvEnd = 0;
  private readonly rcvWscale: number;
  private ooo: OooSegment[] = [];
  /** Left edges of recently received out-of-order data, newest first (SACK block order, RFC 2018 4). */
  private sackRecent: number[] = [];
  private peerFinAt: number | undefined;
  private ackLimit: number | undefined;
  private windowLimit: number | undefined;
  private eofSignalled = false;
  private ackPending = false;
  private unackedSegments = 0;
  private lastAckSent = 0;

  // Negotiated options.
  private wsOn = false;
  private sackOn = false;
  private tsOn = false;
  private tsRecent = 0;
  private peerOffers: TcpOptions = {};
  private passive = false;

  // Timers.
  private rtoAt: Micros | undefined;
  private delackAt: Micros | undefined;
  private persistAt: Micros | undefined;
  private persistShift = 0;
  private timeWaitAt: Micros | undefined;

  // Spurious retransmissions (RFC 3522, 3708, 4015, 5682) and RACK-TLP (RFC 8985): idle unless configured.
  /** The last loss episode, while its response may still be taken back. */
  private episode: LossEpisode | undefined;
  /** F-RTO after a timeout: the step that waits for the next ACK (RFC 5682 2 and 3), and its "recover". */
  private frto: { step: 2 | 3; recover: number } | undefined;
  /** "recover" of the last timeout: another before SND.UNA passes it is still RTO recovery (RFC 5682 step 1). */
  private rtoRecover: number | undefined;
  /** The timer before a timeout found spurious, for the next round-trip sample (RFC 4015 3.2). */
  private adaptRto: { srttUs: number; rttvarUs: number } | undefined;
  /** Duplicate data for the first SACK block of the next ACK (RFC 2883 4). */
  private dsackOut: SeqRange | undefined;
  private readonly rack: Rack | undefined;
  /** The tail loss probe out (RFC 8985 7.4's TLP.end_seq, and what it sent). */
  private tlp: { end: number; seq: number; len: number; retransmit: boolean } | undefined;
  private tlpAt: Micros | undefined;
  private rackAt: Micros | undefined;

  /** Its configuration: a copy of what it was made with (`tcpConfig`). */
  readonly cfg: Readonly<TcpConfig>;

  constructor(
    config: Readonly<TcpConfig>,
    readonly localPort: number,
    readonly remotePort: number,
    /** Initial send sequence number (RFC 9293 3.4.1; the caller draws it). */
    readonly iss: number,
  ) {
    checkTcpConfig(config);
    const cfg = tcpConfig(config);
    this.cfg = cfg;
    this.sndBuf = new ByteRing(cfg.sendBufferBytes);
    this.rcvBuf = new ByteRing(cfg.receiveBufferBytes);
    let shift = 0;
    if (cfg.windowScale) while (shift < 14 && cfg.receiveBufferBytes >> shift > 0xffff) shift++;
    this.rcvWscale = shift;
    this.rtt = new RttEstimator({
      initialUs: cfg.initialRtoMs * US_PER_MS,
      minUs: cfg.minRtoMs * US_PER_MS,
      maxUs: cfg.maxRtoMs * US_PER_MS,
      granularityUs: US_PER_MS,
    });
    this.scoreboard = new Scoreboard(cfg.dupThresh);
    this.sendView = { mss: 0, una: 0, nxt: 0, max: 0, end: 0, wndEnd: 0, maxWnd: 0, scoreboard: this.scoreboard, sackOn: false };
    this.cc = this.makeCc(cfg.mss);
    this.rack = cfg.rack ? new Rack() : undefined;
  }

  private makeCc(mss: number): CongestionControl {
    return congestionControl(this.cfg.congestion, {
      mss,
      initialWindow: initialWindow(mss, this.cfg.initialWindowSegments),
      dupThresh: this.cfg.dupThresh,
      vegas: { ...this.cfg.vegas },
      sack: this.sackOn,
      hystart: this.cfg.hystart,
      prr: this.cfg.prr,
    });
  }

  // ---------------------------------------------------------------------------
  // User calls (RFC 9293 3.10.1-3.10.6)

  /** Active OPEN: sends the SYN. */
  connect(now: Micros): void {
    if (this.state !== 'CLOSED') throw new TcpError('TCP_BAD_STATE', `tcp: connect in ${this.state}`);
    this.state = 'SYN-SENT';
    this.sendSyn(now);
  }

  /** Passive OPEN: waits for a SYN. */
  listen(): void {
    if (this.state !== 'CLOSED') throw new TcpError('TCP_BAD_STATE', `tcp: listen in ${this.state}`);
    this.state = 'LISTEN';
    this.passive = true;
  }

  /** SEND: queues as much of `data` as the send buffer holds; returns how many bytes it took. */
  write(data: Uint8Array, now: Micros): number {
    if (this.finQueued || !['SYN-SENT', 'SYN-RECEIVED', 'ESTABLISHED', 'CLOSE-WAIT'].includes(this.state)) {
      throw new TcpError('TCP_CLOSING', `tcp: cannot send in ${this.state}${this.finQueued ? ' after close' : ''}`);
    }
    const n = this.sndBuf.push(data);
    this.writeEnd += n;
    if (SYNCHRONIZED.has(this.state)) this.output(now);
    return n;
  }

  /** Room left in the send buffer. */
  get writable(): number {
    return this.sndBuf.free;
  }

  /** RECEIVE: takes up to `max` bytes of in-order data, a copy of its own. */
  read(max = Infinity, now?: Micros): Uint8Array {
    return this.take(max, now, false);
  }

  /**
   * RECEIVE for a caller that uses the data at once (checks it, writes it on):
   * as `read`, but the bytes are a view into the receive buffer when they lie
   * in one run, with nothing allocated or copied. The view is right only
   * until the connection's next input, which may write that space again.
   */
  readView(max = Infinity, now?: Micros): Uint8Array {
    return this.take(max, now, true);
  }

  private take(max: number, now: Micros | undefined, view: boolean): Uint8Array {
    const n = Math.min(max, this.rcvBuf.length);
    const data = view ? this.rcvBuf.view(0, n) : this.rcvBuf.peek(0, n);
    this.rcvBuf.consume(n);
    // Window update when reading opened a worthwhile amount (RFC 9293 3.8.6.2.2).
    if (n > 0 && now !== undefined && SYNCHRONIZED.has(this.state) && this.peerFinAt === undefined) {
      const edge = this.windowEdge();
      if (edge - this.rcvAdvEnd >= Math.min(2 * this.cfg.mss, this.cfg.receiveBufferBytes / 2)) this.sendAck(now);
    }
    return data;
  }

  /** In-order bytes waiting to be read. */
  get readable(): number {
    return this.rcvBuf.length;
  }

  /** CLOSE: a FIN follows the data already written. */
  close(now: Micros): void {
    switch (this.state) {
      case 'CLOSED':
        return;
      case 'LISTEN':
      case 'SYN-SENT':
        this.enterClosed('closed');
        return;
      case 'SYN-RECEIVED':
        // Sent once the handshake completes (then FIN-WAIT-1).
        this.finQueued = true;
        return;
      case 'ESTABLISHED':
        this.finQueued = true;
        this.state = 'FIN-WAIT-1';
        this.output(now);
        return;
      case 'CLOSE-WAIT':
        this.finQueued = true;
        this.state = 'LAST-ACK';
        this.output(now);
        return;
      default:
        // Already closing: RFC 9293 answers "connection closing"; nothing changes.
        return;
    }
  }

  /** ABORT: a RST to the peer where it knows the connection, and CLOSED at once. */
  abort(now: Micros): void {
    if (['SYN-RECEIVED', 'ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2', 'CLOSE-WAIT'].includes(this.state)) {
      this.emitSegment(this.makeSegment(this.controlSeq(), NO_BYTES, TCP_RST, now, false), now);
    }
    this.enterClosed('closed');
  }

  /**
   * Segments and events since the last poll, in order. A data segment's
   * payload is a view into the send buffer (no copy): encode it, or copy
   * it, before the connection's next input or timer, after which the
   * bytes it shows may be acknowledged and their space written again.
   */
  poll(): readonly TcpAction[] {
    // Polled after every input and timer: nothing to hand out is the one frozen empty list.
    const n = this.pendingCount;
    let out = this.out;
    if (out === undefined) {
      if (n === 0) return NO_ACTIONS;
      out = n === 1 ? [EVENT_ACTIONS[this.pending[0]!]] : [];
      if (n > 1) for (let i = 0; i < n; i++) out[i] = EVENT_ACTIONS[this.pending[i]!];
    } else if (n > 0) {
      // The segments, then the events, in a list made to size (one store past a list of one takes room for 17).
      const all = new Array<TcpAction>(out.length + n);
      for (let i = 0; i < out.length; i++) all[i] = out[i]!;
      for (let i = 0; i < n; i++) all[out.length + i] = EVENT_ACTIONS[this.pending[i]!];
      out = all;
    }
    this.pendingCount = 0;
    // Handed over whole, and a new list started with the next segment: no copy.
    this.out = undefined;
    return out;
  }

  private emit(e: TcpEvent): void {
    const p = this.pending;
    const n = this.pendingCount;
    for (let i = 0; i < n; i++) if (p[i] === e) return;
    p[n] = e;
    this.pendingCount = n + 1;
  }

  // ---------------------------------------------------------------------------
  // Segment arrival (RFC 9293 3.10.7)

  handle(seg: TcpSegment, now: Micros): void {
    this.stats.segmentsReceived++;
    switch (this.state) {
      case 'CLOSED':
        this.replyReset(seg, now);
        return;
      case 'LISTEN':
        this.handleListen(seg, now);
        return;
      case 'SYN-SENT':
        this.handleSynSent(seg, now);
        return;
      default:
        this.handleSynchronized(seg, now);
    }
  }

  /** The RST that answers a segment nobody should have sent (3.10.7.1). */
  private replyReset(seg: TcpSegment, now: Micros): void {
    if (seg.flags & TCP_RST) return;
    this.queueSegment(resetFor(seg));
    void now;
  }

  private handleListen(seg: TcpSegment, now: Micros): void {
    if (seg.flags & TCP_RST) return;
    if (seg.flags & TCP_ACK) {
      this.queueSegment(resetFor(seg));
      return;
    }
    if (!(seg.flags & TCP_SYN)) return;
    this.irs = seg.seq;
    this.rcvNxt = 1;
    this.negotiate(seg.options);
    this.sndWnd = seg.window;
    this.maxSndWnd = seg.window;
    this.sndWl1 = 0;
    this.sndWl2 = 0;
    if (this.tsOn && seg.options.timestamp) this.tsRecent = seg.options.timestamp.value;
    this.state = 'SYN-RECEIVED';
    this.sendSyn(now);
  }

  private handleSynSent(seg: TcpSegment, now: Micros): void {
    let ack: number | undefined;
    if (seg.flags & TCP_ACK) {
      ack = fromWire(this.iss, seg.ack, this.sndUna);
      if (ack <= 0 || ack > this.sndMax) {
        if (!(seg.flags & TCP_RST)) this.queueSegment(resetFor(seg));
        return;
      }
    }
    if (seg.flags & TCP_RST) {
      if (ack !== undefined) this.enterClosed('refused');
      return;
    }
    if (!(seg.flags & TCP_SYN)) return;
    this.irs = seg.seq;
    this.rcvNxt = 1;
    this.negotiate(seg.options);
    if (this.tsOn && seg.options.timestamp) this.tsRecent = seg.options.timestamp.value;
    if (ack !== undefined) {
      this.sndUna = ack;
      this.sndWnd = seg.window;
      this.maxSndWnd = seg.window;
      this.sndWl1 = 0;
      this.sndWl2 = ack;
      this.established(now);
      this.sendAckOrData(now);
    } else {
      // Simultaneous open (3.5): both SYNs crossed.
      this.state = 'SYN-RECEIVED';
      this.sndWnd = seg.window;
      this.maxSndWnd = seg.window;
      this.sndNxt = 0;
      this.sendSyn(now);
    }
  }

  private handleSynchronized(seg: TcpSegment, now: Micros): void {
    const syn = (seg.flags & TCP_SYN) !== 0;
    const fin = (seg.flags & TCP_FIN) !== 0;
    const rst = (seg.flags & TCP_RST) !== 0;
    const segSeq = fromWire(this.irs, seg.seq, this.rcvNxt);
    const segLen = seg.payload.length + (syn ? 1 : 0) + (fin ? 1 : 0);

    // A retransmitted SYN while our SYN-ACK is out: the SYN-ACK was lost.
    if (this.state === 'SYN-RECEIVED' && syn && !(seg.flags & TCP_ACK) && segSeq === 0) {
      this.sendSyn(now, true);
      return;
    }

    // PAWS (RFC 7323 5): a timestamp older than the last in-order one is an old duplicate.
    const ts = seg.options.timestamp;
    if (this.tsOn && ts && !rst && seqLt(ts.value, this.tsRecent)) {
      this.stats.outOfWindow++;
      // As Linux does: an old duplicate refused by PAWS is still one (RFC 2883 4).
      this.noteDuplicate(segSeq, seg.payload.length);
      this.sendAck(now);
      return;
    }

    // First: sequence number acceptable?
    if (!this.acceptable(segSeq, segLen)) {
      this.stats.outOfWindow++;
      if (seg.payload.length > 0) {
        this.stats.duplicateBytes += seg.payload.length;
        this.noteDuplicate(segSeq, seg.payload.length);
      }
      if (this.state === 'TIME-WAIT' && fin) this.timeWaitAt = now + this.cfg.timeWaitMs * US_PER_MS;
      if (!rst) this.sendAck(now);
      return;
    }

    // Second: RST (with RFC 5961 3.2's check: only an exact match resets).
    if (rst) {
      if (segSeq !== this.rcvNxt) {
        this.challengeAck(now);
        return;
      }
      if (this.state === 'SYN-RECEIVED') this.enterClosed(this.passive ? 'reset' : 'refused');
      // RFC 1337: a RST must not cut TIME-WAIT short (old duplicates could reach a new incarnation).
      else if (this.state === 'TIME-WAIT') return;
      else if (['CLOSING', 'LAST-ACK'].includes(this.state)) this.enterClosed('closed');
      else this.enterClosed('reset');
      return;
    }

    // Fourth: a SYN in a synchronized state gets a challenge ACK (RFC 5961 4.2).
    if (syn) {
      this.challengeAck(now);
      return;
    }

    // Fifth: the ACK field.
    if (!(seg.flags & TCP_ACK)) return;
    if (this.tsOn && ts && segSeq <= this.lastAckSent) this.tsRecent = ts.value;
    const ack = fromWire(this.iss, seg.ack, this.sndUna);
    if (this.state === 'SYN-RECEIVED') {
      if (ack <= this.sndUna || ack > this.sndMax) {
        this.queueSegment(resetFor(seg));
        return;
      }
      this.sndWnd = seg.window << this.sndWscale;
      this.maxSndWnd = Math.max(this.maxSndWnd, this.sndWnd);
      this.sndWl1 = segSeq;
      this.sndWl2 = ack;
      this.established(now);
      // The SYN is acknowledged here, not as data: the congestion control does not count it.
      this.sndUna = 1;
      this.scoreboard.update([], 1, this.sndMax);
      if (this.finQueued) this.state = 'FIN-WAIT-1';
    }
    if (ack > this.sndMax) {
      // It acknowledges something not yet sent.
      this.sendAck(now);
      return;
    }
    this.processAck(seg, segSeq, ack, now);
    if (this.state === 'CLOSED') return;

    const finAcked = this.finQueued && this.sndUna > this.writeEnd;
    if (this.state === 'FIN-WAIT-1' && finAcked) this.state = 'FIN-WAIT-2';
    else if (this.state === 'CLOSING' && finAcked) this.enterTimeWait(now);
    else if (this.state === 'LAST-ACK' && finAcked) {
      this.enterClosed('closed');
      return;
    }

    // Seventh: segment text.
    if (seg.payload.length > 0 && RECEIVING.has(this.state)) this.receiveText(segSeq, seg.payload, now);

    // Eighth: FIN, in order only (an early one is remembered).
    if (fin && RECEIVING.has(this.state)) this.peerFinAt = segSeq + seg.payload.length;
    else if (fin && this.state === 'TIME-WAIT') {
      this.sendAck(now);
      this.timeWaitAt = now + this.cfg.timeWaitMs * US_PER_MS;
    }
    this.maybeFin(now);

    this.output(now);
    this.flushAck(now);
  }

  /** RFC 9293 3.10.7.4's acceptability test, against the window we advertised. */
  private acceptable(segSeq: number, segLen: number): boolean {
    const wnd = Math.max(0, this.rcvAdvEnd - this.rcvNxt);
    if (segLen === 0) return wnd === 0 ? segSeq === this.rcvNxt : segSeq >= this.rcvNxt && segSeq < this.rcvNxt + wnd;
    if (wnd === 0) return false;
    const last = segSeq + segLen - 1;
    return (segSeq >= this.rcvNxt && segSeq < this.rcvNxt + wnd) || (last >= this.rcvNxt && last < this.rcvNxt + wnd);
  }

  private challengeAck(now: Micros): void {
    this.stats.challengeAcks++;
    this.sendAck(now);
  }

  private processAck(seg: TcpSegment, segSeq: number, ack: number, now: Micros): void {
    const wnd = seg.window << this.sndWscale;
    const windowChanged = wnd !== this.sndWnd;
    if (this.sndWl1 < segSeq || (this.sndWl1 === segSeq && this.sndWl2 <= ack)) {
      this.sndWnd = wnd;
      this.maxSndWnd = Math.max(this.maxSndWnd, wnd);
      this.sndWl1 = segSeq;
      this.sndWl2 = ack;
    }
    let newSack = false;
    let dsack: SeqRange | undefined;
    /** For SACK-enhanced F-RTO: whether the ACK reports data above its "recover", or newly below it. */
    const frtoSeen = { above: ack > (this.frto?.recover ?? Infinity), newBelow: ack > this.sndUna };
    if (this.sackOn && seg.options.sack && seg.options.sack.length > 0) {
      const blocks: SeqRange[] = seg.options.sack.map((b) => {
        const start = fromWire(this.iss, b.left, this.sndUna);
        return { start, end: start + ((b.right - b.left) >>> 0) };
      });
      dsack = dsackBlock(blocks, Math.max(ack, this.sndUna));
      const from = Math.max(ack, this.sndUna);
      const recover = Math.max(from, this.frto?.recover ?? from);
      const sackedBelow = (): number => recover - from - this.scoreboard.unsackedIn(from, recover);
      const before = this.frto ? sackedBelow() : 0;
      newSack = this.scoreboard.update(blocks, Math.max(ack, this.sndUna), this.sndMax);
      if (this.frto) {
        frtoSeen.above ||= blocks.some((b) => b !== dsack && b.end > recover);
        frtoSeen.newBelow ||= sackedBelow() > before;
      }
    } else if (ack > this.sndUna) this.scoreboard.update([], ack, this.sndMax);
    const flightBefore = this.sndMax - this.sndUna;
    const acked = Math.max(0, ack - this.sndUna);
    const classicDup = ack === this.sndUna && seg.payload.length === 0 && !(seg.flags & (TCP_SYN | TCP_FIN)) && !windowChanged && this.sndMax > this.sndUna;
    // RFC 6675 counts an ACK with new SACK information as a duplicate; RFC 5681's senders only the classic kind.
    // An ACK closing the window answers a zero-window probe, never a loss (BSD counts no duplicates while persisting).
    const dup = acked === 0 && wnd > 0 && (classicDup || (this.cc.sackRecovery === true && newSack && this.sndMax > this.sndUna));
    if (dup) this.stats.dupAcksReceived++;
    // Spurious or not is judged before the ACK's round-trip sample is taken: after a spurious timeout the sample adapts the timer.
    const spurious = acked > 0 ? this.eifelDetect(seg) : undefined;
    const timed = this.frtoClock?.timed;
    if (timed && ack >= timed.end) timed.ackedAt ??= now;
    const frtoAct = this.frto && (acked > 0 || dup) ? this.frtoStep(ack, acked, frtoSeen) : undefined;
    if ((spurious?.kind === 'timeout' || frtoAct === 'spurious') && this.episode) this.adaptRto = this.episode.rttPrev;
    if (acked > 0) {
      if (frtoAct === 'spurious') this.frtoSample(ack, now);
      else if (!this.frto) this.frtoClock = undefined;
      this.rttSample(seg, ack, now);
      this.sndUna = ack;
      if (this.sndNxt < ack) this.sndNxt = ack;
      const dataAcked = Math.min(ack, this.writeEnd) - this.sndBufStart;
      if (dataAcked > 0) {
        this.sndBuf.consume(dataAcked);
        this.sndBufStart += dataAcked;
        if (!this.finQueued) this.emit('writable');
      }
      this.retries = 0;
      this.persistShift = 0;
    }
    if (this.rack && this.sackOn) {
      this.rack.onAck(this.sndUna, this.writeEnd, this.scoreboard, now, this.tsOn ? seg.options.timestamp?.echo : undefined);
      if (dsack) this.rack.onDsack(this.sndMax, this.sndUna);
      this.rackDetect(now);
    }
    const wasRecovering = this.cc.inRecovery;
    const priorCwnd = this.cc.cwnd;
    const priorSsthresh = this.cc.ssthresh;
    if (acked > 0 || dup) this.cc.onAck(this.ackEvent(now, ack, acked, dup, flightBefore), this.view());
    this.afterCcAck(wasRecovering, priorCwnd, priorSsthresh, flightBefore, now);
    if (spurious) this.respondSpurious(spurious, acked, now);
    else if (frtoAct === 'spurious' && this.episode) this.respondSpurious(this.episode, acked, now);
    else if (frtoAct === 'new-data') {
      // RFC 5682 step 2b: two previously unsent segments, past the window if need be.
      this.sndNxt = this.sndMax;
      this.sendNew(2, now);
    } else if (frtoAct === 'go-back') this.sndNxt = this.sndUna;
    if (dsack && this.cfg.dsack) this.dsackArrived(dsack);
    if (this.cfg.dsack && this.episode && !this.episode.undone) this.dsackUndo(now);
    if (this.tlp && ack >= this.tlp.end) this.tlpAcked(ack, dsack, now);
    // RFC 6298 5.2 and 5.3.
    if (acked > 0) {
      if (this.sndUna >= this.sndMax) this.rtoAt = undefined;
      else this.rtoAt = now + this.rtt.rtoUs;
      this.armTlp(now);
    }
    if (this.sndWnd > 0) this.persistAt = undefined;
  }

  // ---------------------------------------------------------------------------
  // Spurious retransmissions: Eifel detection (RFC 3522), F-RTO (RFC 5682),
  // D-SACK (RFC 2883, RFC 3708), and the Eifel response (RFC 4015)

  private get eifelOn(): boolean {
    return this.cfg.eifel && this.tsOn;
  }

  /** Whether any of the detections may judge a loss episode. */
  private get judgesEpisodes(): boolean {
    return this.cfg.frto || this.eifelOn || (this.cfg.dsack && this.sackOn);
  }

  /** cwnd and ssthresh before a congestion response, and what RFC 4015 3.2 step 0 keeps with them. */
  private beginEpisode(kind: LossEpisode['kind'], prior: { cwnd: number; ssthresh: number }, flight: number, now: Micros): void {
    this.episode = {
      kind,
      prior,
      pipePrev: Math.max(flight, prior.ssthresh),
      rttPrev: kind === 'timeout' ? this.rtt.beforeRetransmit() : undefined,
      // The retransmission leaves now, carrying this timestamp.
      retransmitTs: this.eifelOn ? this.tsNow(now) : undefined,
      recover: this.sndMax,
      retransmits: [],
      undone: false,
    };
  }

  /**
   * What follows the congestion control's view of an ACK (or of a RACK
   * timer), given cwnd and ssthresh before it: a fast retransmit starts an
   * episode.
   */
  private afterCcAck(wasRecovering: boolean, priorCwnd: number, priorSsthresh: number, flightBefore: number, now: Micros): void {
    if (!wasRecovering && this.cc.inRecovery) {
      this.stats.fastRetransmits++;
      if (this.judgesEpisodes) this.beginEpisode('fast', { cwnd: priorCwnd, ssthresh: priorSsthresh }, flightBefore, now);
    }
    if (wasRecovering && !this.cc.inRecovery) this.rack?.recoveryEnded();
  }

  /** A timeout: an episode of its own unless it repeats one (RFC 3522 keeps the first retransmission's timestamp), and F-RTO's step 1. */
  private timeoutEpisode(now: Micros): void {
    const first = this.retries === 1;
    if (this.cfg.frto && !this.eifelOn) {
      // RFC 5682 step 1: a timeout during the RTO recovery of an earlier one goes on conventionally. A timeout
      // that recurs before any ACK, on the same SND.UNA, is no news: F-RTO goes on waiting for its first ACK
      // (recurring timeouts, RFC 5682 3.2, as Linux's tcp_enter_loss reads it), so a delay longer than two
      // timeouts can still be found spurious.
      const recurring = !first && this.frto?.step === 2;
      const inRtoRecovery = first ? this.rtoRecover !== undefined && this.rtoRecover >= this.sndUna : !recurring;
      if (!recurring) this.frto = inRtoRecovery ? undefined : { step: 2, recover: this.sndMax };
      this.rtoRecover = this.sndMax;
    }
    if (!this.judgesEpisodes || (!first && this.episode?.kind === 'timeout')) return;
    this.beginEpisode('timeout', { cwnd: this.cc.cwnd, ssthresh: this.cc.ssthresh }, this.sndMax - this.sndUna, now);
  }

  /**
   * Eifel detection (RFC 3522 3.2) on the first ACK of new data after a
   * retransmission: an echoed timestamp older than the retransmission's
   * says the original arrived, so the retransmission was not needed.
   */
  private eifelDetect(seg: TcpSegment): LossEpisode | undefined {
    const ep = this.episode;
    if (!ep || ep.retransmitTs === undefined) return undefined;
    const sent = ep.retransmitTs;
    ep.retransmitTs = undefined;
    const ts = seg.options.timestamp;
    if (ep.undone || !ts || ((ts.echo - sent) | 0) >= 0) return undefined;
    return ep;
  }

  /**
   * F-RTO (RFC 5682) on an ACK after a timeout: step 2 sends new data
   * instead of going back, step 3 judges by what the next ACK acknowledges.
   * Without SACK (section 2) a duplicate ACK means a loss; with it (section
   * 3) the SACK blocks say whether the originals below "recover" arrived.
   */
  private frtoStep(ack: number, acked: number, seen: { above: boolean; newBelow: boolean }): 'spurious' | 'new-data' | 'go-back' | undefined {
    const f = this.frto!;
    if (f.step === 2) {
      if (acked === 0) {
        // A duplicate ACK: the basic algorithm reverts (2a); the SACK one waits for the retransmission's ACK.
        if (!this.sackOn) this.frto = undefined;
        return undefined;
      }
      const end = this.writeEnd + (this.finQueued ? 1 : 0);
      const canSendNew = end > this.sndMax && ack + this.sndWnd > this.sndMax;
      // 2a: everything up to "recover" acknowledged, or nothing new to send: conventional recovery.
      if (ack >= f.recover || !canSendNew) {
        this.frto = undefined;
        return undefined;
      }
      f.step = 3;
      return 'new-data';
    }
    this.frto = undefined;
    if (!this.sackOn) return acked > 0 ? 'spurious' : 'go-back';
    // Section 3 step 3: data above "recover" (the new segments) reported means a hole below it: a loss.
    if (seen.above || !seen.newBelow) return 'go-back';
    return 'spurious';
  }

  /**
   * The Eifel response (RFC 4015 3.2; RFC 5682 4 for F-RTO): after a
   * spurious timeout, carry on with new data where go-back-N would have
   * started, with cwnd = FlightSize + min(bytes_acked, IW) and ssthresh =
   * pipe_prev; the timer adapts on the next sample (adaptRto). After a
   * spurious fast retransmit, cwnd and ssthresh as they were.
   */
  private respondSpurious(ep: LossEpisode, acked: number, now: Micros): void {
    ep.undone = true;
    this.frto = undefined;
    this.rtoRecover = undefined;
    if (ep.kind === 'timeout') {
      this.stats.spuriousTimeouts++;
      this.sndNxt = this.sndMax;
      const iw = initialWindow(this.sendMss, this.cfg.initialWindowSegments);
      this.cc.undo({ cwnd: this.sndMax - this.sndUna + Math.min(acked, iw), ssthresh: ep.pipePrev }, this.view(), now);
    } else {
      this.stats.spuriousFastRetransmits++;
      this.cc.undo(ep.prior, this.view(), now);
    }
    this.stats.undos++;
  }

  /** A D-SACK (RFC 3708 3): it marks the episode's retransmission it covers. */
  private dsackArrived(d: SeqRange): void {
    this.stats.dsackBlocksReceived++;
    for (const r of this.episode?.retransmits ?? []) {
      if (!r.dsacked && d.start <= r.start && r.end <= d.end) {
        r.dsacked = true;
        this.stats.dsackedRetransmits++;
      }
    }
  }

  /**
   * RFC 3708 3: once every retransmission of the episode is D-SACKed and the
   * cumulative ACK has passed where the episode began, none was needed: the
   * response is undone, to no less than the window it left (RFC 3708 5).
   */
  private dsackUndo(now: Micros): void {
    const ep = this.episode!;
    if (ep.retransmits.length === 0 || this.sndUna < ep.recover || !ep.retransmits.every((r) => r.dsacked)) return;
    ep.undone = true;
    this.stats.undos++;
    this.cc.undo({ cwnd: Math.max(this.cc.cwnd, ep.prior.cwnd), ssthresh: Math.max(this.cc.ssthresh, ep.prior.ssthresh) }, this.view(), now);
  }

  /** Up to `n` previously unsent segments, whatever cwnd says (F-RTO's step 2b, RFC 8985's probe); returns how many went. */
  private sendNew(n: number, now: Micros): number {
    let sent = 0;
    for (; sent < n; sent++) {
      const v = this.view();
      const room = Math.min(v.end, v.wndEnd) - this.sndMax;
      if (room <= 0) break;
      const next = { seq: this.sndMax, len: Math.min(v.mss, room) };
      this.sendRange(next.seq, next.len, now);
      this.cc.sent(next, v);
    }
    return sent;
  }

  /** The receiver's side of RFC 2883 4: the first contiguous run of [start, start + len) it already holds. */
  private noteDuplicate(start: number, len: number): void {
    if (!this.cfg.dsack || !this.sackOn || len <= 0) return;
    const end = start + len;
    if (start < this.rcvNxt) {
      this.dsackOut = { start, end: Math.min(end, this.rcvNxt) };
      return;
    }
    let run: SeqRange | undefined;
    for (const s of this.ooo) {
      const a = Math.max(start, s.start);
      const b = Math.min(end, s.start + s.data.length);
      if (b <= a) continue;
      if (run && a > run.end) break;
      run = run ? { start: run.start, end: b } : { start: a, end: b };
    }
    if (run) this.dsackOut = run;
  }

  // ---------------------------------------------------------------------------
  // RACK-TLP (RFC 8985)

  /** RACK's loss detection (6.2 step 5): what it marks lost the scoreboard shows the congestion control; the rest arms its timer. */
  private rackDetect(now: Micros): boolean {
    const rack = this.rack!;
    const r = rack.detectLoss(now, rack.reoWnd(this.cc.inRecovery || this.retries > 0, this.cfg.dupThresh, this.rtt.srtt));
    this.stats.rackLosses += r.newlyLost;
    if (r.lostEnd > 0) this.scoreboard.markLostBelow(r.lostEnd);
    this.rackAt = r.timeoutUs > 0 ? now + Math.ceil(r.timeoutUs) : undefined;
    return r.newlyLost > 0;
  }

  /** The reordering timer (6.3): segments lost by now start or feed a recovery, as an ACK reporting them would. */
  private onRackTimer(now: Micros): void {
    this.rackAt = undefined;
    if (!this.rack || !this.sackOn || !SENDING.has(this.state) || this.sndUna >= this.sndMax) return;
    if (!this.rackDetect(now)) return;
    const wasRecovering = this.cc.inRecovery;
    const priorCwnd = this.cc.cwnd;
    const priorSsthresh = this.cc.ssthresh;
    const flight = this.sndMax - this.sndUna;
    this.cc.onAck(this.ackEvent(now, this.sndUna, 0, false, flight), this.view());
    this.afterCcAck(wasRecovering, priorCwnd, priorSsthresh, flight, now);
    this.output(now);
  }

  /**
   * Arms the probe timeout (7.2) while data is in flight and no recovery or
   * probe is under way: 2 SRTT (plus the worst delayed ACK when one segment
   * is out), 1 s before any sample, never past the RTO.
   */
  private armTlp(now: Micros): void {
    if (!this.rack) return;
    this.tlpAt = undefined;
    if (!this.sackOn || !SENDING.has(this.state) || this.sndUna >= this.sndMax || this.sndNxt < this.sndMax) return;
    if (this.cc.inRecovery || this.retries > 0 || this.tlp || this.sndWnd === 0) return;
    const srtt = this.rtt.srtt;
    let pto = srtt === undefined ? 1_000_000 : Math.ceil(2 * srtt);
    if (srtt !== undefined && this.sndMax - this.sndUna <= this.sendMss) pto += WC_DEL_ACK_US;
    this.tlpAt = this.rtoAt === undefined ? now + pto : Math.min(now + pto, this.rtoAt);
  }

  /** The probe (7.3): a new segment if the window allows, else the last one sent again; then the RTO, not another probe. */
  private onTlp(now: Micros): void {
    this.tlpAt = undefined;
    if (!SENDING.has(this.state) || this.sndUna >= this.sndMax || this.tlp || this.sndNxt < this.sndMax) return;
    let seq = this.sndMax;
    let len: number;
    let retransmit = false;
    if (this.sendNew(1, now) === 1) len = this.sndMax - seq;
    else {
      // The last segment as it was sent, with a FIN sent apart from it: resending the FIN alone would repair nothing.
      seq = Math.max(this.sndUna, this.rack?.lastStartBelow(Math.min(this.sndMax, this.writeEnd)) ?? this.sndMax - this.sendMss);
      len = this.sndMax - seq;
      retransmit = true;
      this.sendRange(seq, len, now);
      this.cc.sent({ seq, len }, this.view());
    }
    this.stats.tailLossProbes++;
    this.tlp = { end: this.sndMax, seq, len, retransmit };
    this.rtoAt = now + this.rtt.rtoUs;
  }

  /**
   * The ACK of a probe (7.4.2): new data or a D-SACK of the probe means
   * nothing was lost; an ACK past it without that D-SACK means the probe
   * repaired a loss, which gets the congestion response a fast recovery of
   * it would have: the control's own cut of its window (Reno's half,
   * CUBIC's 0.7), as a recovery left at once, as Linux does.
   */
  private tlpAcked(ack: number, dsack: SeqRange | undefined, now: Micros): void {
    const t = this.tlp!;
    if (!t.retransmit || (dsack && dsack.start <= t.seq && t.seq + t.len <= dsack.end)) {
      this.tlp = undefined;
      return;
    }
    if (ack <= t.end) return;
    this.tlp = undefined;
    this.stats.tlpRepairs++;
    this.cc.congestionEvent(this.cc.cwnd, this.view(), now);
  }

  /**
   * F-RTO found the timeout spurious: the original transmit it kept timing
   * gives the adapting sample (or goes on being timed, if not yet
   * acknowledged); without one, the next sample adapts the timer.
   */
  private frtoSample(ack: number, now: Micros): void {
    const clock = this.frtoClock;
    this.frtoClock = undefined;
    if (!clock) return;
    const t = clock.timed;
    if (!t) this.timedSample(now - clock.firedAt, now);
    else if (t.ackedAt === undefined && ack < t.end) this.timing = { seq: t.seq, end: t.end, at: t.at };
    else this.timedSample((t.ackedAt ?? now) - t.at, now);
  }

  private rttSample(seg: TcpSegment, ack: number, now: Micros): void {
    let sample: number | undefined;
    const ts = seg.options.timestamp;
    if (this.tsOn && ts && ts.echo !== 0) sample = ((this.tsNow(now) - ts.echo) >>> 0) * US_PER_MS;
    else if (this.timing && ack >= this.timing.end) sample = now - this.timing.at;
    if (this.timing && ack >= this.timing.end) this.timing = undefined;
    if (sample !== undefined) this.timedSample(sample, now);
  }

  /** One round-trip sample into the timer (adapting it after a spurious timeout) and the congestion control. */
  private timedSample(sample: number, now: Micros): void {
    if (sample > this.cfg.maxRtoMs * US_PER_MS * 4) return;
    if (this.adaptRto) this.rtt.sampleAfterSpurious(sample, this.adaptRto);
    else this.rtt.sample(sample);
    this.adaptRto = undefined;
    this.cc.onRtt(sample, now);
  }

  private receiveText(segSeq: number, payload: Uint8Array, now: Micros): void {
    let start = segSeq;
    let data = payload;
    if (start < this.rcvNxt) {
      this.noteDuplicate(start, payload.length);
      const cut = this.rcvNxt - start;
      this.stats.duplicateBytes += Math.min(cut, data.length);
      data = data.subarray(cut);
      start = this.rcvNxt;
    }
    const room = this.rcvAdvEnd - start;
    if (data.length > room) data = data.subarray(0, Math.max(0, room));
    if (data.length === 0) {
      this.ackPending = true;
      this.ackNow();
      return;
    }
    if (start > this.rcvNxt) {
      this.storeOoo(start, data);
      // Out of order: an immediate (duplicate) ACK, with SACK blocks (RFC 5681 4.2).
      this.ackNow();
      return;
    }
    const filledHole = this.ooo.length > 0;
    this.deliver(data);
    this.pullOoo();
    // A D-SACK to report is not delayed (RFC 2883 4 wants it in the next ACK; RFC 5681 4.2 answers duplicates at once).
    if (this.dsackOut) this.ackNow();
    // Under an acknowledgement limit, in-order data has nothing new to acknowledge:
    // an ACK would only look like a duplicate to the sender (and start a false
    // recovery). The ACK goes when the limit rises.
    if (this.ackPoint < this.rcvNxt) return;
    this.unackedSegments++;
    if (filledHole || this.cfg.delayedAckMs === 0 || this.unackedSegments >= 2) this.ackNow();
    else {
      this.ackPending = true;
      this.delackAt ??= now + this.cfg.delayedAckMs * US_PER_MS;
    }
  }

  private deliver(data: Uint8Array): void {
    const n = this.rcvBuf.push(data);
    this.rcvNxt += n;
    this.stats.bytesReceived += n;
    if (n > 0) this.emit('readable');
  }

  /**
   * Keeps the parts of an out-of-order segment not already held: the queue
   * stays sorted and disjoint, so a sender that resends what the receiver
   * holds costs neither memory nor a growing scan.
   */
  private storeOoo(start: number, data: Uint8Array): void {
    const end = start + data.length;
    const pieces: OooSegment[] = [];
    let at = start;
    for (const s of this.ooo) {
      const sEnd = s.start + s.data.length;
      if (sEnd <= at) continue;
      if (s.start >= end) break;
      if (s.start > at) pieces.push({ start: at, data: data.slice(at - start, s.start - start) });
      at = Math.max(at, sEnd);
      if (at >= end) break;
    }
    if (at < end) pieces.push({ start: at, data: data.slice(at - start) });
    let fresh = 0;
    for (const p of pieces) fresh += p.data.length;
    this.stats.duplicateBytes += data.length - fresh;
    if (fresh < data.length) this.noteDuplicate(start, data.length);
    if (pieces.length > 0) {
      this.ooo.push(...pieces);
      this.ooo.sort((x, y) => x.start - y.start);
    }
    this.sackRecent = [start, ...this.sackRecent.filter((s) => s !== start)].slice(0, 8);
  }

  private pullOoo(): void {
    while (this.ooo.length > 0) {
      const s = this.ooo[0]!;
      const end = s.start + s.data.length;
      if (s.start > this.rcvNxt) break;
      this.ooo.shift();
      if (end > this.rcvNxt) this.deliver(s.data.subarray(this.rcvNxt - s.start));
    }
    this.sackRecent = this.sackRecent.filter((s) => s >= this.rcvNxt);
  }

  /** SACK blocks for the next ACK: the block holding the newest arrival first, then the others newest first (RFC 2018 4). */
  private sackBlocks(fit: number): SackBlock[] {
    const held = this.ackPoint < this.rcvNxt;
    const dsack = this.dsackOut;
    if (!this.sackOn || (this.ooo.length === 0 && !held && !dsack) || fit <= 0) return [];
    const blocks: SeqRange[] = [];
    // Bytes taken in under an acknowledgement limit are reported as held, so
    // that a sender does not take them for lost and send them again.
    if (held) blocks.push({ start: this.ackPoint, end: this.rcvNxt });
    for (const s of this.ooo) {
      const end = s.start + s.data.length;
      const last = blocks.at(-1);
      if (last && s.start <= last.end) last.end = Math.max(last.end, end);
      else blocks.push({ start: s.start, end });
    }
    const ordered: SeqRange[] = [];
    for (const seq of this.sackRecent) {
      const b = blocks.find((x) => seq >= x.start && seq < x.end);
      if (b && !ordered.includes(b)) ordered.push(b);
    }
    for (const b of [...blocks].reverse()) if (!ordered.includes(b)) ordered.push(b);
    if (dsack) {
      // RFC 2883 4: the D-SACK block first, then the block holding it (if it lies above the cumulative ACK), then the rest.
      const holding = ordered.find((b) => dsack.start >= b.start && dsack.end <= b.end);
      const rest = ordered.filter((b) => b !== holding);
      ordered.splice(0, ordered.length, dsack, ...(holding ? [holding] : []), ...rest);
      // Each duplicate is reported once.
      this.dsackOut = undefined;
      this.stats.dsackBlocksSent++;
    }
    const max = Math.min(fit, this.tsOn ? 3 : 4);
    return ordered.slice(0, max).map((b) => ({ left: toWire(this.irs, b.start), right: toWire(this.irs, b.end) }));
  }

  /** The peer's FIN is processed once every byte before it has arrived. */
  private maybeFin(now: Micros): void {
    if (this.peerFinAt === undefined || this.rcvNxt !== this.peerFinAt || (!RECEIVING.has(this.state) && this.state !== 'SYN-RECEIVED')) return;
    this.rcvNxt += 1;
    this.ooo = [];
    this.emit('eof');
    this.eofSignalled = true;
    this.ackNow();
    const finAcked = this.finQueued && this.sndUna > this.writeEnd;
    switch (this.state) {
      case 'SYN-RECEIVED':
      case 'ESTABLISHED':
        this.state = 'CLOSE-WAIT';
        break;
      case 'FIN-WAIT-1':
        if (finAcked) this.enterTimeWait(now);
        else this.state = 'CLOSING';
        break;
      case 'FIN-WAIT-2':
        this.enterTimeWait(now);
        break;
      default:
        break;
    }
  }

  /**
   * Limits the cumulative ACK to `limit` (an absolute offset of the peer's
   * stream, at least 1): bytes beyond it are taken in and held, not
   * acknowledged but reported in SACK blocks (where SACK is on), and in-order
   * arrivals send no ACK of their own. A relay that must
   * not acknowledge what it has not delivered (end-to-end semantics, ES-TCP)
   * raises the limit as the far side acknowledges. undefined lifts it.
   */
  setAckLimit(limit: number | undefined, now: Micros): void {
    const before = this.ackPoint;
    this.ackLimit = limit === undefined ? undefined : Math.max(1, limit);
    if (this.ackPoint !== before && SYNCHRONIZED.has(this.state)) this.sendAck(now);
  }

  /**
   * Caps the right edge of the window this end advertises at `edge` (an
   * absolute offset of the peer's stream), besides the free buffer; the edge
   * already advertised never moves back. A relay under an acknowledgement
   * limit gives the far side's window edge here, so that everything the
   * sender may have in flight fits there, gets acknowledged, and a closed far
   * window closes this one (the sender probes it instead of timing out).
   */
  setWindowLimit(edge: number | undefined, now: Micros): void {
    this.windowLimit = edge;
    if (!SYNCHRONIZED.has(this.state) || this.peerFinAt !== undefined) return;
    if (this.windowEdge() - this.rcvAdvEnd >= Math.min(2 * this.cfg.mss, this.cfg.receiveBufferBytes / 2)) this.sendAck(now);
  }

  /** Where the window could reach now: the free buffer, under the window limit. */
  private windowEdge(): number {
    const edge = this.rcvNxt + this.rcvBuf.free;
    return this.windowLimit === undefined ? edge : Math.min(edge, this.windowLimit);
  }

  /** The cumulative ACK this end sends: RCV.NXT, or less under an acknowledgement limit. */
  private get ackPoint(): number {
    return this.ackLimit === undefined ? this.rcvNxt : Math.min(this.rcvNxt, this.ackLimit);
  }

  /** Whether the peer's FIN has been received (end of its data). */
  get peerClosed(): boolean {
    return this.eofSignalled;
  }

  private established(now: Micros): void {
    this.state = 'ESTABLISHED';
    this.rtoAt = undefined;
    if (this.synSentAt !== undefined && !this.synRetransmitted) this.rtt.sample(now - this.synSentAt);
    else if (this.synRetransmitted) this.rtt.restartAfterSynTimeout();
    this.retries = 0;
    const mss = this.sendMss;
    this.cc = this.makeCc(mss);
    if (this.sndNxt < this.sndUna) this.sndNxt = this.sndUna;
    this.emit('connected');
  }

  private enterTimeWait(now: Micros): void {
    this.state = 'TIME-WAIT';
    this.rtoAt = undefined;
    this.tlpAt = undefined;
    this.rackAt = undefined;
    this.persistAt = undefined;
    this.delackAt = undefined;
    this.timeWaitAt = now + this.cfg.timeWaitMs * US_PER_MS;
  }

  private enterClosed(e: TcpEvent): void {
    this.state = 'CLOSED';
    this.rtoAt = undefined;
    this.tlpAt = undefined;
    this.rackAt = undefined;
    this.delackAt = undefined;
    this.persistAt = undefined;
    this.timeWaitAt = undefined;
    this.emit(e);
  }

  private negotiate(o: TcpOptions): void {
    this.peerOffers = o;
    // A peer's MSS below 64 would leave no payload room (a stalled connection); Linux clamps too.
    this.peerMss = Math.max(MIN_MSS, o.mss ?? 536);
    this.wsOn = this.cfg.windowScale && o.windowScale !== undefined;
    this.sndWscale = this.wsOn ? Math.min(14, o.windowScale ?? 0) : 0;
    this.sackOn = this.cfg.sack && o.sackPermitted === true;
    this.tsOn = this.cfg.timestamps && o.timestamp !== undefined;
  }

  /** Payload bytes of a full segment this end sends (RFC 9293 3.7.1, less the timestamps option). */
  get sendMss(): number {
    return Math.min(this.peerMss, this.cfg.mss) - (this.tsOn ? TS_OPTION_BYTES : 0);
  }

  // ---------------------------------------------------------------------------
  // Output

  /** The ACK as the congestion control sees it: one object per connection, written again at each call (see `AckEvent`). */
  private ackEvent(now: Micros, ack: number, acked: number, dup: boolean, flightBefore: number): AckEvent {
    const a = this.ackSeen;
    a.now = now;
    a.ack = ack;
    a.acked = acked;
    a.dup = dup;
    a.flightBefore = flightBefore;
    return a;
  }

  private view(): SendView {
    // One object per connection, written again at each call: a view is good for the call it is passed to (see `SendView`).
    const v = this.sendView;
    v.mss = this.sendMss;
    v.una = this.sndUna;
    v.nxt = this.sndNxt;
    v.max = this.sndMax;
    v.end = this.writeEnd + (this.finQueued ? 1 : 0);
    v.wndEnd = this.sndUna + this.sndWnd;
    v.maxWnd = this.maxSndWnd;
    v.scoreboard = this.scoreboard;
    v.sackOn = this.sackOn;
    return v;
  }

  /** Sends what the congestion control and the peer's window allow. */
  private output(now: Micros): void {
    if (!SENDING.has(this.state)) return;
    if (this.sndWnd === 0) {
      // A closed window: what lies past it (a probe, a FIN) was not taken;
      // the persist timer probes from SND.UNA, not the retransmission timer
      // (RFC 1122 4.2.2.17: never give up while probes are answered). As
      // BSD's tcp_output does, pull SND.NXT back to the window's edge.
      this.sndNxt = this.sndUna;
      this.rtoAt = undefined;
    }
    for (let guard = 0; guard < 100_000; guard++) {
      const v = this.view();
      let next = this.cc.next(v);
      if (!next) {
        // A FIN with no data before it needs no room in an open window (a closed one is probed).
        if (this.finQueued && this.sndWnd > 0 && v.nxt === this.writeEnd && v.end === this.writeEnd + 1) next = { seq: this.writeEnd, len: 1 };
        else break;
      }
      // Nagle (RFC 896): a runt of new data waits while data is unacknowledged (a FIN goes).
      const carriesFin = this.finQueued && next.seq + next.len === this.writeEnd + 1;
      if (!this.cfg.noDelay && next.seq >= this.sndMax && next.len < v.mss && this.sndUna < this.sndMax && !carriesFin) break;
      this.sendRange(next.seq, next.len, now);
      this.cc.sent(next, v);
      if (this.rack && next.seq >= v.max && this.tlpAt === undefined) this.armTlp(now);
    }
    // Nothing in flight to bring an ACK, yet data waits: the window is closed
    // or too small for a segment (sender SWS avoidance). The persist timer
    // probes it (RFC 9293 3.8.6.1) and is also the override timer that sends
    // a runt into a small window (RFC 1122 4.2.3.4); otherwise a lost window
    // update would stall the connection for good.
    if (this.sndNxt === this.sndUna && this.view().end > this.sndNxt && this.persistAt === undefined) {
      this.persistAt = now + this.persistTimeoutUs();
    }
  }

  /** Sends [seq, seq + len) of the sequence space: data from the buffer, and the FIN if the range ends with it. */
  private sendRange(seq: number, len: number, now: Micros, probe = false): void {
    const dataEnd = Math.min(seq + len, this.writeEnd);
    // A view into the send buffer: the segment is encoded (copied) when polled, before an ACK can free those bytes.
    const payload = dataEnd > seq ? this.sndBuf.view(seq - this.sndBufStart, dataEnd - seq) : NO_BYTES;
    const fin = this.finQueued && seq + len === this.writeEnd + 1;
    let flags = TCP_ACK;
    if (fin) flags |= TCP_FIN;
    if (payload.length > 0 && dataEnd === this.writeEnd) flags |= TCP_PSH;
    const retransmit = seq < this.sndMax;
    if (retransmit) {
      this.stats.retransmittedSegments++;
      this.stats.retransmittedBytes += payload.length;
      if (this.timing && seq < this.timing.end) this.timing = undefined;
      const timed = this.frtoClock?.timed;
      if (timed && seq < timed.end && seq + len > timed.seq) this.frtoClock!.timed = undefined;
    } else if (!this.timing && !probe) this.timing = { seq, end: seq + len, at: now };
    this.stats.bytesSent += payload.length;
    if (retransmit && this.episode && !this.episode.undone && this.cfg.dsack) this.episode.retransmits.push({ start: seq, end: seq + len, dsacked: false });
    if (this.rack && this.sackOn && !probe) this.rack.onSend(seq, seq + len, now, retransmit);
    this.emitSegment(this.makeSegment(seq, payload, flags, now, true), now);
    if (!probe) this.sndNxt = Math.max(this.sndNxt, seq + len);
    this.sndMax = Math.max(this.sndMax, this.sndNxt, seq + len);
    if (this.rtoAt === undefined && this.sndWnd > 0) this.rtoAt = now + this.rtt.rtoUs;
  }

  private makeSegment(seq: number, payload: Uint8Array, flags: number, now: Micros, withAck: boolean): TcpSegment {
    const options: TcpOptions = {};
    if (this.tsOn && !(flags & TCP_RST)) options.timestamp = { value: this.tsNow(now), echo: this.tsRecent };
    if (withAck && this.sackOn) {
      // The blocks must fit in the MSS with the payload (RFC 6691): a full
      // data segment carries none, a bare ACK up to three or four.
      const room = Math.min(this.peerMss, this.cfg.mss) - (this.tsOn ? TS_OPTION_BYTES : 0) - payload.length;
      const sack = this.sackBlocks(Math.floor((room - 4) / 8));
      if (sack.length > 0) options.sack = sack;
    }
    return {
      srcPort: this.localPort,
      dstPort: this.remotePort,
      seq: toWire(this.iss, seq),
      ack: withAck ? toWire(this.irs, this.ackPoint) : 0,
      flags: withAck ? flags | TCP_ACK : flags,
      window: withAck ? this.advertise() : 0,
      urgent: 0,
      options,
      payload,
    };
  }

  private emitSegment(seg: TcpSegment, _now: Micros): void {
    this.stats.segmentsSent++;
    if (seg.flags & TCP_ACK) {
      this.ackPending = false;
      this.unackedSegments = 0;
      this.delackAt = undefined;
      this.lastAckSent = this.ackPoint;
    }
    this.queueSegment(seg);
  }

  private queueSegment(seg: TcpSegment): void {
    const a: TcpAction = { kind: 'segment', seg };
    const out = this.out;
    if (out === undefined) this.out = [a];
    else out[out.length] = a;
  }

  /** The window field: free receive buffer, never moving the right edge back, opened only by a worthwhile amount (SWS avoidance). */
  private advertise(): number {
    const edge = this.windowEdge();
    const step = Math.min(this.cfg.mss, this.cfg.receiveBufferBytes / 2);
    if (edge >= this.rcvAdvEnd + step || (edge > this.rcvAdvEnd && this.rcvAdvEnd <= this.rcvNxt && edge - this.rcvNxt >= step)) {
      this.rcvAdvEnd = edge;
    }
    // The window counts from the ACK number sent (below RCV.NXT under an acknowledgement limit).
    const wnd = Math.max(0, this.rcvAdvEnd - this.ackPoint);
    // Our shift applies only if both ends agreed to scale (RFC 7323 2.2); otherwise the peer reads the field as it is.
    return Math.min(0xffff, wnd >> (this.wsOn ? this.rcvWscale : 0));
  }

  private sendSyn(now: Micros, again = false): void {
    const options: TcpOptions = { mss: this.cfg.mss };
    const answering = this.state === 'SYN-RECEIVED';
    // A SYN-ACK carries only what the peer offered (RFC 7323 2.2, RFC 2018 2).
    if (this.cfg.windowScale && (!answering || this.wsOn)) options.windowScale = this.rcvWscale;
    if (this.cfg.sack && (!answering || this.sackOn)) options.sackPermitted = true;
    if (this.cfg.timestamps && (!answering || this.tsOn)) options.timestamp = { value: this.tsNow(now), echo: answering ? this.tsRecent : 0 };
    if (this.synSentAt !== undefined || again) this.synRetransmitted = true;
    this.synSentAt = now;
    const free = this.rcvBuf.free;
    // The window of a SYN counts from the peer's first data byte (offset 1),
    // also from SYN-SENT, where RCV.NXT is not known yet (still 0 here).
    this.rcvAdvEnd = Math.max(this.rcvAdvEnd, 1 + Math.min(0xffff, free));
    const seg: TcpSegment = {
      srcPort: this.localPort,
      dstPort: this.remotePort,
      seq: this.iss,
      ack: answering ? toWire(this.irs, this.rcvNxt) : 0,
      flags: answering ? TCP_SYN | TCP_ACK : TCP_SYN,
      window: Math.min(0xffff, free),
      urgent: 0,
      options,
      payload: new Uint8Array(0),
    };
    if (this.synRetransmitted) this.stats.retransmittedSegments++;
    this.emitSegment(seg, now);
    this.sndNxt = Math.max(this.sndNxt, 1);
    this.sndMax = Math.max(this.sndMax, 1);
    this.rtoAt = now + this.rtt.rtoUs;
  }

  /** A bare ACK now. */
  private sendAck(now: Micros): void {
    if (!SYNCHRONIZED.has(this.state) && this.state !== 'SYN-RECEIVED') return;
    this.emitSegment(this.makeSegment(this.controlSeq(), NO_BYTES, TCP_ACK, now, true), now);
  }

  /**
   * The sequence number of a segment without data (a bare ACK, a RST):
   * SND.MAX, as BSD sends them. SND.NXT is behind it after a timeout
   * (go-back-N), and a bare ACK below the peer's RCV.NXT is unacceptable
   * there: the peer would drop its ACK field and answer with an ACK of its
   * own, and two ends that both timed out would do so forever. Against a
   * zero window SND.NXT stays at SND.UNA, below a refused probe byte.
   */
  private controlSeq(): number {
    return this.sndWnd === 0 ? this.sndNxt : this.sndMax;
  }

  private ackNow(): void {
    this.ackPending = true;
    this.unackedSegments = Math.max(this.unackedSegments, 2);
    this.delackAt = undefined;
  }

  /** The ACK owed for this arrival, unless data just carried it or it may wait for the delayed-ACK timer. */
  private flushAck(now: Micros): void {
    if (!this.ackPending) return;
    if (this.delackAt !== undefined && this.unackedSegments < 2) return;
    this.sendAck(now);
  }

  private sendAckOrData(now: Micros): void {
    this.ackNow();
    this.output(now);
    this.flushAck(now);
  }

  private tsNow(now: Micros): number {
    return Math.floor(now / US_PER_MS) >>> 0;
  }

  private persistTimeoutUs(): Micros {
    const base = Math.max(this.rtt.rtoUs, 5 * US_PER_MS);
    return Math.min(this.cfg.maxRtoMs * US_PER_MS, base * 2 ** this.persistShift);
  }

  // ---------------------------------------------------------------------------
  // Timers

  nextDeadline(): Micros | undefined {
    // Asked at every pump of the stack (every segment in or out).
    return earlierOf(earlierOf(earlierOf(this.rtoAt, this.delackAt), earlierOf(this.persistAt, this.timeWaitAt)), earlierOf(this.rackAt, this.tlpAt));
  }

  tick(now: Micros): void {
    if (this.timeWaitAt !== undefined && now >= this.timeWaitAt) {
      this.enterClosed('closed');
      return;
    }
    if (this.delackAt !== undefined && now >= this.delackAt) {
      this.delackAt = undefined;
      if (this.ackPending) this.sendAck(now);
    }
    if (this.persistAt !== undefined && now >= this.persistAt) this.onPersist(now);
    if (this.rackAt !== undefined && now >= this.rackAt) this.onRackTimer(now);
    if (this.tlpAt !== undefined && now >= this.tlpAt) this.onTlp(now);
    if (this.rtoAt !== undefined && now >= this.rtoAt) this.onRto(now);
  }

  private onRto(now: Micros): void {
    this.rtoAt = undefined;
    if (this.state === 'SYN-SENT' || this.state === 'SYN-RECEIVED') {
      if (++this.retries > this.cfg.synRetries) {
        this.enterClosed('timeout');
        return;
      }
      this.stats.timeouts++;
      this.rtt.backoff();
      this.sendSyn(now, true);
      return;
    }
    if (this.sndUna >= this.sndMax || !SENDING.has(this.state)) return;
    if (++this.retries > this.cfg.maxRetransmits) {
      this.enterClosed('timeout');
      return;
    }
    this.stats.timeouts++;
    this.timeoutEpisode(now);
    this.rtt.backoff();
    this.sndNxt = this.sndUna;
    // What F-RTO's RTO adaptation keeps: the episode's first timeout and the original transmit then timed.
    if (!this.frto || this.tsOn) this.frtoClock = undefined;
    else if (this.retries === 1) this.frtoClock = { firedAt: now, timed: this.timing };
    this.timing = undefined;
    this.cc.onTimeout(this.view(), now);
    this.tlp = undefined;
    this.tlpAt = undefined;
    this.rackAt = undefined;
    this.output(now);
    if (this.sndWnd > 0) this.rtoAt ??= now + this.rtt.rtoUs;
  }

  /** Zero-window probe (RFC 9293 3.8.6.1): one byte past the closed window, with backoff, for as long as the peer answers. */
  private onPersist(now: Micros): void {
    this.persistAt = undefined;
    if (!SENDING.has(this.state) || this.sndNxt > this.sndUna) return;
    const end = this.view().end;
    if (end <= this.sndUna) return;
    if (this.sndWnd > 0) {
      // A window smaller than a segment: send what fits (the SWS override); the retransmission timer takes over.
      const len = Math.min(this.sndUna + this.sndWnd, end) - this.sndNxt;
      if (len > 0) this.sendRange(this.sndNxt, Math.min(len, this.sendMss), now);
      return;
    }
    // One byte past the closed window, without moving SND.NXT: a refused
    // probe leaves no hole, and an accepted one is acknowledged.
    this.sendRange(this.sndUna, 1, now, true);
    this.stats.zeroWindowProbes++;
    this.persistShift++;
    this.persistAt = now + this.persistTimeoutUs();
  }

  // ---------------------------------------------------------------------------
  // Observation

  /** Congestion window, bytes. */
  get cwnd(): number {
    return this.cc.cwnd;
  }

  get ssthresh(): number {
    return this.cc.ssthresh;
  }

  get congestion(): CcName {
    return this.cc.name;
  }

  get inRecovery(): boolean {
    return this.cc.inRecovery;
  }

  /** Which options both ends agreed on. */
  get negotiated(): { windowScale: boolean; sndWscale: number; rcvWscale: number; sack: boolean; timestamps: boolean; mss: number } {
    return {
      windowScale: this.wsOn,
      sndWscale: this.sndWscale,
      rcvWscale: this.wsOn ? this.rcvWscale : 0,
      sack: this.sackOn,
      timestamps: this.tsOn,
      mss: this.sendMss,
    };
  }

  /** Sequence state, absolute (0 is the SYN of each side). */
  get seq(): { una: number; nxt: number; max: number; wnd: number; rcvNxt: number; rcvWnd: number } {
    return { una: this.sndUna, nxt: this.sndNxt, max: this.sndMax, wnd: this.sndWnd, rcvNxt: this.rcvNxt, rcvWnd: Math.max(0, this.rcvAdvEnd - this.rcvNxt) };
  }

  /** Bytes written and not yet acknowledged. */
  get unacknowledged(): number {
    return Math.max(0, Math.min(this.writeEnd, this.sndMax) - Math.max(1, this.sndUna));
  }

  /** What the peer offered in its SYN. */
  get peerOptions(): Readonly<TcpOptions> {
    return this.peerOffers;
  }
}

const MIN_MSS = 64;

/**
 * A copy of `c` with every field, in one order, made at one place. A
 * connection reads its configuration on every segment: made here, its
 * hidden class is the same for every connection of every run in a process,
 * so code that V8 optimised for one run's connections keeps running for the
 * next run's. A spread merge (`{ ...defaults, ...cfg }`) may get a new hidden
 * class each time V8's clone cache misses, and then every function that read
 * the old one is compiled again.
 */
export function tcpConfig(c: Readonly<TcpConfig>): TcpConfig {
  return {
    mss: c.mss,
    sendBufferBytes: c.sendBufferBytes,
    receiveBufferBytes: c.receiveBufferBytes,
    congestion: c.congestion,
    sack: c.sack,
    timestamps: c.timestamps,
    windowScale: c.windowScale,
    delayedAckMs: c.delayedAckMs,
    initialWindowSegments: c.initialWindowSegments,
    initialRtoMs: c.initialRtoMs,
    minRtoMs: c.minRtoMs,
    maxRtoMs: c.maxRtoMs,
    maxRetransmits: c.maxRetransmits,
    synRetries: c.synRetries,
    timeWaitMs: c.timeWaitMs,
    noDelay: c.noDelay,
    dupThresh: c.dupThresh,
    vegas: c.vegas,
    hystart: c.hystart,
    prr: c.prr,
    frto: c.frto,
    eifel: c.eifel,
    dsack: c.dsack,
    rack: c.rack,
  };
}

/** Refuses a configuration no connection can run with (TcpError TCP_BAD_CONFIG naming the field). */
export function checkTcpConfig(cfg: Readonly<TcpConfig>): void {
  const bad = (field: string, expected: string): never => {
    throw new TcpError(
      'TCP_BAD_CONFIG',
      `tcp.${field}: ${JSON.stringify((cfg as unknown as Record<string, unknown>)[field])} is out of range, expected ${expected}`,
    );
  };
  if (!Number.isInteger(cfg.mss) || cfg.mss < MIN_MSS || cfg.mss > 65495) bad('mss', `an integer in [${MIN_MSS}, 65495]`);
  if (!Number.isInteger(cfg.sendBufferBytes) || cfg.sendBufferBytes < 1) bad('sendBufferBytes', 'a positive integer');
  if (!Number.isInteger(cfg.receiveBufferBytes) || cfg.receiveBufferBytes < 1) bad('receiveBufferBytes', 'a positive integer');
  if (!(cfg.minRtoMs > 0 && cfg.minRtoMs <= cfg.maxRtoMs)) bad('minRtoMs', `> 0 and at most maxRtoMs (${cfg.maxRtoMs})`);
  if (!(cfg.initialRtoMs > 0)) bad('initialRtoMs', '> 0');
  if (!(cfg.delayedAckMs >= 0 && cfg.delayedAckMs <= 500)) bad('delayedAckMs', 'in [0, 500] (RFC 5681: under 500 ms)');
  if (!(Number.isInteger(cfg.dupThresh) && cfg.dupThresh >= 1)) bad('dupThresh', 'an integer >= 1');
  if (cfg.hystart !== undefined && typeof cfg.hystart !== 'boolean') bad('hystart', "true, false, or absent (the variant's default: on with cubic)");
  if (typeof cfg.prr !== 'boolean') bad('prr', 'true or false');
}

/**
 * The D-SACK block of an ACK's SACK blocks, if it has one (RFC 2883 5): the
 * first block when it lies below the cumulative ACK or inside the second.
 */
export function dsackBlock(blocks: readonly SeqRange[], ack: number): SeqRange | undefined {
  const first = blocks[0];
  if (!first) return undefined;
  if (first.start < ack) return first;
  const second = blocks[1];
  return second && first.start >= second.start && first.end <= second.end ? first : undefined;
}

/** The RST answering an unacceptable segment (RFC 9293 3.10.7.1). */
export function resetFor(seg: TcpSegment): TcpSegment {
  const base = { srcPort: seg.dstPort, dstPort: seg.srcPort, window: 0, urgent: 0, options: {}, payload: new Uint8Array(0) };
  if (seg.flags & TCP_ACK) return { ...base, seq: seg.ack, ack: 0, flags: TCP_RST };
  const len = seg.payload.length + (seg.flags & TCP_SYN ? 1 : 0) + (seg.flags & TCP_FIN ? 1 : 0);
  return { ...base, seq: 0, ack: (seg.seq + len) >>> 0, flags: TCP_RST | TCP_ACK };
}
