import type net from 'node:net';
import { LinkWriter, type LinkMessage } from './link.js';

/** Where an outbox writes: a connected stream socket. */
export type LinkStream = Pick<net.Socket, 'writableLength' | 'destroyed'> & { write(data: Uint8Array): boolean };

/**
 * What a process has to say on the medium link, batched: the messages posted
 * to one peer in one turn of the event loop leave as one link message, in
 * one write(). A peer that does not read must not make this process grow
 * without bound: past `limitBytes` waiting in its socket, messages to it are
 * dropped and counted.
 */
export class LinkOutbox {
  /** Messages written, link messages (writes) they took, and messages dropped. */
  readonly counters = { messages: 0, batches: 0, dropped: 0 };
  private readonly staged = new Map<LinkStream, LinkWriter>();
  private scheduled = false;
  /** Nesting of `hold`: while above 0, posts wait for `release` (no flush of their own). */
  private holding = 0;

  /**
   * `manual`: the owner calls `flush` (the medium, once per run of its
   * engine); otherwise the outbox flushes once per turn of the event loop.
   */
  constructor(
    private readonly limitBytes = 32 * 1024 * 1024,
    private readonly manual = false,
  ) {}

  /** Whether anything is staged. */
  get pending(): boolean {
    return this.staged.size > 0;
  }

  /** Stages `m` for the peer at the other end of `to`; false when it was dropped. */
  post(to: LinkStream, m: LinkMessage): boolean {
    if (to.destroyed || to.writableLength > this.limitBytes) {
      this.counters.dropped++;
      return false;
    }
    let w = this.staged.get(to);
    if (!w) {
      w = new LinkWriter();
      this.staged.set(to, w);
    }
    w.add(m);
    if (!this.scheduled && !this.manual && this.holding === 0) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return true;
  }

  /**
   * What is posted from here to the matching `release` leaves at the
   * release, in one write per peer, rather than at the end of the turn: a
   * router answering what one read from the medium brought (a relay's
   * sends) writes at once, without a setImmediate per wake-up. Posts made
   * before the hold still leave with it (or at the end of the turn).
   */
  hold(): void {
    this.holding++;
  }

  /** Ends a `hold`; the outermost writes what is staged. */
  release(): void {
    if (this.holding > 0) this.holding--;
    if (this.holding === 0 && this.staged.size > 0) this.flush();
  }

  /** Writes what is staged now (the outbox also does it once per event-loop turn). */
  readonly flush = (): void => {
    this.scheduled = false;
    for (const [to, w] of this.staged) {
      const n = w.size;
      const buf = w.take();
      if (!buf) continue;
      if (to.destroyed) {
        this.counters.dropped += n;
        continue;
      }
      to.write(buf);
      this.counters.messages += n;
      this.counters.batches++;
    }
    this.staged.clear();
  };

  /** Drops what is staged for a peer that is gone. */
  forget(to: LinkStream): void {
    const w = this.staged.get(to);
    if (!w) return;
    this.counters.dropped += w.size;
    this.staged.delete(to);
  }
}
