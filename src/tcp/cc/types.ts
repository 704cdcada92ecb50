import type { Micros } from '../../core/time.js';
import type { Scoreboard } from '../scoreboard.js';

export type CcName = 'reno' | 'newreno' | 'vegas' | 'sack' | 'cubic';
export const CC_NAMES: readonly CcName[] = ['reno', 'newreno', 'vegas', 'sack', 'cubic'];

/**
 * What the congestion control sees of the sender (absolute offsets, see
 * seq.ts): good for the call it is passed to, never to keep (the connection
 * writes the same object again for its next call).
 */
export interface SendView {
  /** Effective send MSS: payload bytes of a full segment. */
  readonly mss: number;
  /** Oldest unacknowledged offset. */
  readonly una: number;
  /** Next offset to send (behind `max` after a timeout: go-back-N). */
  readonly nxt: number;
  /** Highest offset sent so far, plus one. */
  readonly max: number;
  /** End of the sequence space the application has filled (its FIN included once it closed). */
  readonly end: number;
  /** Right edge of the peer's receive window. */
  readonly wndEnd: number;
  /** Largest window the peer has offered (sender-side silly-window avoidance). */
  readonly maxWnd: number;
  /** The SACK scoreboard (empty when SACK was not negotiated). */
  readonly scoreboard: Scoreboard;
  readonly sackOn: boolean;
}

/** One arriving ACK, as the connection classified it: good for the call it is passed to, never to keep (as a `SendView`). */
export interface AckEvent {
  now: Micros;
  /** The cumulative ACK (absolute). */
  ack: number;
  /** Bytes newly acknowledged by it (0 for a duplicate). */
  acked: number;
  /** A duplicate ACK in RFC 5681's sense (or one carrying new SACK information, RFC 6675). */
  dup: boolean;
  /** Bytes in flight before this ACK (FlightSize, RFC 5681). */
  flightBefore: number;
}

/** A segment the control wants sent: [seq, seq + len) of the sequence space. */
export interface NextSegment {
  seq: number;
  len: number;
}

/**
 * A congestion control, pluggable into a connection: it owns cwnd and
 * ssthresh, hears every ACK, timeout and RTT sample, and picks what goes out
 * next. The connection owns everything else (timers, the state machine,
 * buffers, the wire).
 */
export interface CongestionControl {
  readonly name: CcName;
  /** Congestion window, bytes. */
  readonly cwnd: number;
  readonly ssthresh: number;
  /** In fast recovery (or SACK loss recovery). */
  readonly inRecovery: boolean;
  /**
   * Loss recovery runs on the SACK scoreboard (RFC 6675): an ACK that brings
   * new SACK information counts as a duplicate, not only the classic kind.
   */
  readonly sackRecovery?: boolean;
  onAck(a: AckEvent, v: SendView): void;
  /** The retransmission timer expired (the connection already rewound `nxt` to `una`). */
  onTimeout(v: SendView, now: Micros): void;
  /** A valid round-trip sample. */
  onRtt(rttUs: number, now: Micros): void;
  /**
   * The last congestion response was taken back: the retransmission that
   * caused it is known spurious (RFC 3522, RFC 5682, RFC 3708). Leaves fast
   * recovery (or loss recovery) and the guard against a second response for
   * the same window, and sets cwnd and ssthresh to `prior`, which the
   * connection computes as RFC 4015 section 3.2 (a timeout) or RFC 3708
   * section 5 (a fast retransmit) says. A control with state of its own
   * puts that back too (CUBIC: RFC 9438 4.9).
   */
  undo(prior: { cwnd: number; ssthresh: number }, v: SendView, now: Micros): void;
  /**
   * A loss found and repaired outside any recovery (a tail loss probe that
   * repaired one, RFC 8985 7.4.2): the congestion response a fast recovery
   * of it would have given, as a recovery left at once: ssthresh cut by the
   * control's own rule from a flight of `flight` bytes, cwnd down to it.
   */
  congestionEvent(flight: number, v: SendView, now: Micros): void;
  /** The next segment allowed out now, or undefined. */
  next(v: SendView): NextSegment | undefined;
  /** The connection sent what `next` returned. */
  sent(seg: NextSegment, v: SendView): void;
}

export interface CcParams {
  mss: number;
  /** Initial window in bytes (RFC 5681 3.1). */
  initialWindow: number;
  dupThresh: number;
  /** Vegas' thresholds, in segments queued in the network. */
  vegas: { alpha: number; beta: number; gamma: number };
  /** SACK was negotiated: CUBIC recovers by RFC 6675 then, by NewReno (RFC 6582) otherwise, as Linux does. */
  sack?: boolean;
  /** HyStart++ (RFC 9406) in the first slow start; absent or false: standard slow start. */
  hystart?: boolean;
  /** Proportional Rate Reduction (RFC 6937) in the recoveries that reduce cwnd (newreno, sack, cubic). */
  prr?: boolean;
}

/** The initial window of RFC 5681 3.1 for a sender MSS, unless a number of segments is given. */
export function initialWindow(mss: number, segments: number): number {
  if (segments > 0) return segments * mss;
  if (mss > 2190) return 2 * mss;
  if (mss > 1095) return 3 * mss;
  return 4 * mss;
}
