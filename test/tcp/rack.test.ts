import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rack } from '../../src/tcp/rack.js';
import { Scoreboard } from '../../src/tcp/scoreboard.js';

const MS = 1_000;
const SEG = 1_000;

/**
 * RACK's record (RFC 8985 section 6) on its own, in virtual time: segments
 * of SEG bytes sent at given times, ACKs that deliver some of them
 * cumulatively or by SACK.
 */
class Flight {
  readonly rack = new Rack();
  readonly sb = new Scoreboard(3);
  una = 0;
  max = 0;

  send(n: number, at: number): void {
    for (let i = 0; i < n; i++) {
      this.rack.onSend(this.max, this.max + SEG, at, false);
      this.max += SEG;
    }
  }

  resend(k: number, at: number): void {
    this.rack.onSend(k * SEG, (k + 1) * SEG, at, true);
  }

  /** An ACK at `at`: cumulative up to segment `upTo` (exclusive), SACKing segments `sacked`. */
  ack(upTo: number, sacked: number[], at: number): void {
    this.una = Math.max(this.una, upTo * SEG);
    this.sb.update(
      sacked.map((k) => ({ start: k * SEG, end: (k + 1) * SEG })),
      this.una,
      this.max,
    );
    this.rack.onAck(this.una, this.max, this.sb, at, undefined);
  }
}

describe('RACK (RFC 8985 section 6)', () => {
  test('6.2 step 5: a segment sent before a delivered one by more than RACK.rtt + reo_wnd is lost; a younger one arms the timer', () => {
    const f = new Flight();
    f.send(1, 0); // P1 at 0 ms
    f.send(1, 10 * MS); // P2 at 10 ms
    f.send(1, 20 * MS); // P3 at 20 ms
    // P3 SACKed at 120 ms: RACK.rtt = 100 ms, sent after P1 and P2.
    f.ack(0, [2], 120 * MS);
    assert.equal(f.rack.rttUs, 100 * MS);
    const reo = f.rack.reoWnd(false, 3, 100 * MS);
    assert.equal(reo, 25 * MS, 'min_RTT / 4');
    // P1: 0 + 100 + 25 - 120 = 5 ms to go; P2: 15 ms: nothing lost yet, the timer takes the later.
    const early = f.rack.detectLoss(120 * MS, reo);
    assert.deepEqual(early, { newlyLost: 0, lostEnd: 0, timeoutUs: 15 * MS });
    // At 126 ms P1 is lost, P2 not yet.
    const later = f.rack.detectLoss(126 * MS, reo);
    assert.equal(later.newlyLost, 1);
    assert.equal(later.lostEnd, SEG);
    assert.equal(later.timeoutUs, 9 * MS);
  });

  test('6.2 step 4: before any reordering, reo_wnd is 0 in recovery and once DupThresh segments are SACKed', () => {
    const f = new Flight();
    f.send(5, 0);
    f.ack(0, [1], 100 * MS);
    assert.ok(f.rack.reoWnd(false, 3, 100 * MS) > 0, 'one SACKed segment: the window stands');
    assert.equal(f.rack.reoWnd(true, 3, 100 * MS), 0, 'in recovery');
    f.ack(0, [1, 2, 3], 101 * MS);
    assert.equal(f.rack.reoWnd(false, 3, 100 * MS), 0, 'DupThresh SACKed');
  });

  test('6.2 step 3: a never-resent segment delivered below RACK.fack is reordering; the window then stays in recovery', () => {
    const f = new Flight();
    f.send(4, 0);
    f.ack(0, [1, 2, 3], 100 * MS);
    assert.equal(f.rack.reorderingSeen, false);
    // The original P1 arrives late, below what was delivered: reordering, not loss.
    f.ack(4, [], 105 * MS);
    assert.equal(f.rack.reorderingSeen, true);
    assert.equal(f.rack.reoWnd(true, 3, 100 * MS), 25 * MS);
  });

  test('6.2 step 4: a D-SACK widens reo_wnd by min_RTT/4, once per round trip, up to SRTT; 16 recoveries without one restore it', () => {
    const f = new Flight();
    f.send(4, 0);
    f.ack(1, [], 40 * MS); // min_RTT 40 ms
    const base = f.rack.reoWnd(false, 3, 200 * MS);
    assert.equal(base, 10 * MS);
    // A D-SACK with SND.NXT at 4 segments: RACK.dsack_round = SND.NXT, reo_wnd_mult 2.
    f.rack.onDsack(f.max, f.una);
    assert.equal(f.rack.reoWnd(false, 3, 200 * MS), 20 * MS);
    // Another in the same round (SND.UNA below the round's end) changes nothing.
    f.rack.onDsack(f.max, f.una);
    assert.equal(f.rack.reoWnd(false, 3, 200 * MS), 20 * MS, 'one widening per round');
    // The round ends once SND.UNA passes it; the next D-SACK widens again.
    f.send(2, 50 * MS);
    f.ack(4, [], 90 * MS);
    f.una = 4 * SEG;
    f.rack.onDsack(f.max, f.una);
    assert.equal(f.rack.reoWnd(false, 3, 200 * MS), 30 * MS);
    // Never above SRTT.
    assert.equal(f.rack.reoWnd(false, 3, 25 * MS), 25 * MS);
    // reo_wnd_persist: 16 recoveries without a D-SACK, then back to min_RTT/4.
    for (let i = 0; i < 15; i++) f.rack.recoveryEnded();
    assert.equal(f.rack.reoWnd(false, 3, 200 * MS), 30 * MS, 'still widened after 15');
    f.rack.recoveryEnded();
    assert.equal(f.rack.reoWnd(false, 3, 200 * MS), 10 * MS, 'restored after 16');
  });

  test('6.2 step 2: the ACK of a resent segment that came sooner than min_RTT may answer the original: no RTT from it', () => {
    const f = new Flight();
    f.send(3, 0);
    f.ack(1, [], 50 * MS); // min_RTT 50 ms
    f.resend(1, 200 * MS);
    // Delivered at 210 ms, 10 ms after the resend: less than min_RTT, so the original's ACK.
    f.ack(2, [], 210 * MS);
    assert.equal(f.rack.rttUs, 50 * MS, 'RACK.rtt unchanged');
    // Delivered 60 ms after a resend: the retransmission's.
    f.resend(2, 300 * MS);
    f.ack(3, [], 360 * MS);
    assert.equal(f.rack.rttUs, 60 * MS);
  });
});
