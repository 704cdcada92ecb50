import type { Micros } from '../core/time.js';
import type { Scoreboard } from './scoreboard.js';

/** One segment as it was last sent: [start, end) of the sequence space. */
interface SentSegment {
  start: number;
  end: number;
  /** When it was last (re)transmitted. */
  xmitUs: Micros;
  retransmitted: boolean;
  /** Acknowledged or SACKed. */
  delivered: boolean;
  /** Marked lost by time and not sent again since. */
  lost: boolean;
}

/** What one run of RACK's loss detection found. */
export interface RackVerdict {
  /** Segments newly marked lost. */
  newlyLost: number;
  /** End of the highest segment marked lost and not yet resent (0: none). */
  lostEnd: number;
  /** Time until the earliest outstanding segment would count as lost (the RACK reordering timer), 0: none. */
  timeoutUs: Micros;
}

/**
 * RACK's time-based loss detection (RFC 8985 section 6) as a sans-IO
 * record: the transmit time of every segment in flight, the most recently
 * sent segment known delivered (RACK.xmit_ts, RACK.end_seq) and its RTT, and
 * the reordering window. A segment sent before that one by more than
 * RACK.rtt + reo_wnd is lost; one that is not yet arms the reordering timer.
 * The connection keeps it (and Tail Loss Probe, section 7); the scoreboard
 * carries its verdict to the congestion control.
 */
export class Rack {
  /** Segments of [SND.UNA, SND.MAX), lowest first, disjoint. */
  private segs: SentSegment[] = [];
  private xmitUs = -1;
  private endSeq = 0;
  /** RACK.rtt: round trip of the most recently sent segment delivered. */
  rttUs: number | undefined;
  private minRttUs = Infinity;
  /** RACK.fack: highest end delivered. */
  private fack = 0;
  /** Reordering observed on this connection (6.2 step 3). */
  reorderingSeen = false;
  private reoWndMult = 1;
  private reoWndPersist = 0;
  private dsackRound: number | undefined;
  private sackedSegments = 0;

  /** A segment left (6.1: its transmit time is kept; a retransmission replaces what it covers). */
  onSend(start: number, end: number, now: Micros, retransmit: boolean): void {
    if (end <= start) return;
    const out: SentSegment[] = [];
    let placed = false;
    const fresh: SentSegment = { start, end, xmitUs: now, retransmitted: retransmit, delivered: false, lost: false };
    for (const s of this.segs) {
      if (s.end <= start || s.start >= end) {
        if (!placed && s.start >= end) {
          out.push(fresh);
          placed = true;
        }
        out.push(s);
        continue;
      }
      // The part of an older record outside the new one keeps its time.
      if (s.start < start) out.push({ ...s, end: start });
      if (!placed) {
        out.push(fresh);
        placed = true;
      }
      if (s.end > end) out.push({ ...s, start: end });
    }
    if (!placed) out.push(fresh);
    this.segs = out;
  }

  /**
   * An ACK arrived (6.2 steps 1-4): what it delivered, cumulatively (`una`)
   * or in SACK blocks, updates RACK.rtt, RACK.xmit_ts and the reordering
   * estimate. `dataEnd` is where the data ends (a FIN past it is never
   * SACKed); `tsEchoMs` is the ACK's timestamp echo (undefined without
   * timestamps), which tells whether a retransmitted segment's ACK answers
   * the retransmission.
   */
  onAck(una: number, dataEnd: number, sb: Scoreboard, now: Micros, tsEchoMs: number | undefined): void {
    let sacked = 0;
    for (const s of this.segs) {
      if (s.delivered) {
        if (s.end > una) sacked++;
        continue;
      }
      const cumulative = s.end <= una;
      // A FIN is never SACKed: the data of its segment is what counts (`dataEnd`, the end of the stream).
      const to = Math.min(s.end, dataEnd);
      if (!cumulative && (to <= s.start || sb.unsackedIn(s.start, to) > 0)) continue;
      s.delivered = true;
      if (!cumulative) sacked++;
      const rtt = now - s.xmitUs;
      // Step 2: an ACK that may answer the original transmission says nothing about the retransmission's time.
      if (s.retransmitted) {
        if (rtt < this.minRttUs) continue;
        if (tsEchoMs !== undefined && ((tsEchoMs - Math.floor(s.xmitUs / 1000)) | 0) < 0) continue;
      }
      this.rttUs = rtt;
      this.minRttUs = Math.min(this.minRttUs, rtt);
      if (s.xmitUs > this.xmitUs || (s.xmitUs === this.xmitUs && s.end > this.endSeq)) {
        this.xmitUs = s.xmitUs;
        this.endSeq = s.end;
      }
      // Step 3: delivered below what was delivered before, and never resent: the network reordered it.
      if (s.end < this.fack && !s.retransmitted) this.reorderingSeen = true;
      this.fack = Math.max(this.fack, s.end);
    }
    this.sackedSegments = sacked;
    while (this.segs.length > 0 && this.segs[0]!.end <= una) this.segs.shift();
  }

  /** A D-SACK arrived (6.2 step 4): the window widens by min_RTT/4 per round with one, for 16 recoveries. */
  onDsack(sndNxt: number, una: number): void {
    if (this.dsackRound !== undefined && una >= this.dsackRound) this.dsackRound = undefined;
    if (this.dsackRound !== undefined) return;
    this.dsackRound = sndNxt;
    this.reoWndMult++;
    this.reoWndPersist = 16;
  }

  /** Start of the last segment in flight that begins below `limit` (the last one carrying data, given the end of the data). */
  lastStartBelow(limit: number): number | undefined {
    for (let i = this.segs.length - 1; i >= 0; i--) if (this.segs[i]!.start < limit) return this.segs[i]!.start;
    return undefined;
  }

  /** A loss recovery ended (6.2 step 4): after 16 without a D-SACK the window is back to min_RTT/4. */
  recoveryEnded(): void {
    if (this.reoWndPersist > 0 && --this.reoWndPersist === 0) this.reoWndMult = 1;
  }

  /** RACK.reo_wnd (6.2 step 4): 0 in recovery or past DupThresh SACKed segments until reordering is seen. */
  reoWnd(inRecovery: boolean, dupThresh: number, srttUs: number | undefined): number {
    if (!this.reorderingSeen && (inRecovery || this.sackedSegments >= dupThresh)) return 0;
    if (!Number.isFinite(this.minRttUs)) return 0;
    return Math.min((this.reoWndMult * this.minRttUs) / 4, srttUs ?? Infinity);
  }

  /** Step 5: marks what was sent before RACK.xmit_ts by more than RACK.rtt + reo_wnd; the rest arms the timer. */
  detectLoss(now: Micros, reoWndUs: number): RackVerdict {
    const v: RackVerdict = { newlyLost: 0, lostEnd: 0, timeoutUs: 0 };
    if (this.rttUs === undefined) return v;
    for (const s of this.segs) {
      if (s.delivered) continue;
      if (s.lost) {
        v.lostEnd = Math.max(v.lostEnd, s.end);
        continue;
      }
      const sentBefore = this.xmitUs > s.xmitUs || (this.xmitUs === s.xmitUs && this.endSeq > s.end);
      if (!sentBefore) continue;
      const remaining = s.xmitUs + this.rttUs + reoWndUs - now;
      if (remaining <= 0) {
        s.lost = true;
        v.newlyLost++;
        v.lostEnd = Math.max(v.lostEnd, s.end);
      } else v.timeoutUs = Math.max(v.timeoutUs, remaining);
    }
    return v;
  }
}
