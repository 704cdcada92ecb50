/** A range of absolute sequence offsets, end exclusive. */
export interface SeqRange {
  start: number;
  end: number;
}

/**
 * The sender's SACK scoreboard (RFC 6675 section 3): which bytes above the
 * cumulative ACK the receiver has reported holding, kept as sorted disjoint
 * ranges of absolute offsets. It answers IsLost, the pipe estimate and
 * NextSeg's candidates; the congestion control decides what to do with them.
 */
export class Scoreboard {
  private ranges: SeqRange[] = [];
  /**
   * End of the highest segment RACK (RFC 8985) marked lost by time; every
   * unSACKed byte below counts as lost. It only grows until cleared, so a
   * lost segment once retransmitted counts once in the pipe, as RFC 6675's
   * lost-and-retransmitted octets do.
   */
  private rackLostEnd = 0;

  constructor(private readonly dupThresh: number) {}

  /** The SACKed ranges, lowest first. */
  get blocks(): readonly SeqRange[] {
    return this.ranges;
  }

  /** Bytes SACKed in all. */
  get sackedBytes(): number {
    let n = 0;
    for (const r of this.ranges) n += r.end - r.start;
    return n;
  }

  /** End of the highest SACKed range (HighSACK + 1), or undefined when nothing is SACKed. */
  get highSacked(): number | undefined {
    return this.ranges.at(-1)?.end;
  }

  clear(): void {
    this.ranges = [];
    this.rackLostEnd = 0;
  }

  /** RACK found the segments ending at or below `end` lost (RFC 8985 6.2 step 5). */
  markLostBelow(end: number): void {
    this.rackLostEnd = Math.max(this.rackLostEnd, end);
  }

  /**
   * Folds in the blocks of one ACK (only what lies between `una` and `max`
   * counts) and forgets what the cumulative ACK now covers. Returns whether
   * any byte was newly SACKed.
   */
  update(blocks: readonly SeqRange[], una: number, max: number): boolean {
    this.advance(una);
    const before = this.sackedBytes;
    for (const b of blocks) {
      const start = Math.max(b.start, una);
      const end = Math.min(b.end, max);
      if (end > start) this.insert(start, end);
    }
    return this.sackedBytes > before;
  }

  private insert(start: number, end: number): void {
    const out: SeqRange[] = [];
    let s = start;
    let e = end;
    let placed = false;
    for (const r of this.ranges) {
      if (r.end < s) out.push(r);
      else if (r.start > e) {
        if (!placed) {
          out.push({ start: s, end: e });
          placed = true;
        }
        out.push(r);
      } else {
        s = Math.min(s, r.start);
        e = Math.max(e, r.end);
      }
    }
    if (!placed) out.push({ start: s, end: e });
    this.ranges = out;
  }

  /** Drops what lies below the cumulative ACK. */
  private advance(una: number): void {
    while (this.ranges.length > 0 && this.ranges[0]!.start < una) {
      const r = this.ranges[0]!;
      if (r.end <= una) this.ranges.shift();
      else r.start = una;
    }
  }

  isSacked(seq: number): boolean {
    for (const r of this.ranges) if (seq >= r.start && seq < r.end) return true;
    return false;
  }

  /**
   * The offset below which every unSACKed byte counts as lost (IsLost):
   * more than (DupThresh - 1) * SMSS bytes, or DupThresh discontiguous
   * ranges, SACKed above it; 0 when nothing is lost.
   */
  lostBelow(mss: number): number {
    return Math.max(this.rackLostEnd, this.lostByDupThresh(mss));
  }

  private lostByDupThresh(mss: number): number {
    let bytes = 0;
    for (let i = this.ranges.length - 1; i >= 0; i--) {
      const r = this.ranges[i]!;
      const blocksAbove = this.ranges.length - i;
      if (blocksAbove >= this.dupThresh) return r.start;
      const need = (this.dupThresh - 1) * mss + 1 - bytes;
      if (r.end - r.start >= need) return r.end - need + 1;
      bytes += r.end - r.start;
    }
    return 0;
  }

  isLost(seq: number, mss: number): boolean {
    return !this.isSacked(seq) && seq < this.lostBelow(mss);
  }

  /** Bytes of [from, to) not SACKed. */
  unsackedIn(from: number, to: number): number {
    if (to <= from) return 0;
    let n = to - from;
    for (const r of this.ranges) {
      const s = Math.max(r.start, from);
      const e = Math.min(r.end, to);
      if (e > s) n -= e - s;
    }
    return n;
  }

  /**
   * RFC 6675 SetPipe: unSACKed bytes in flight between `una` and `max` that
   * are not lost, plus those retransmitted (below `highRxt`).
   */
  pipe(una: number, max: number, highRxt: number, mss: number): number {
    const lost = Math.max(una, Math.min(max, this.lostBelow(mss)));
    return this.unsackedIn(lost, max) + this.unsackedIn(una, Math.min(highRxt, max));
  }

  /** The first unSACKed offset at or above `from` and below `to`, with the length of its unSACKed run (capped at `maxLen`). */
  firstHole(from: number, to: number, maxLen: number): SeqRange | undefined {
    let s = from;
    for (const r of this.ranges) {
      if (r.end <= s) continue;
      if (r.start <= s) {
        s = r.end;
        continue;
      }
      break;
    }
    if (s >= to) return undefined;
    let end = Math.min(to, s + maxLen);
    for (const r of this.ranges) if (r.start > s && r.start < end) end = r.start;
    return { start: s, end };
  }
}
