import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Micros } from '../../src/core/time.js';
import { congestionControl, Cubic, SackRecovery, type AckEvent, type CcParams, type SendView } from '../../src/tcp/cc/index.js';
import { CUBIC_ALPHA, cubicK, wCubic } from '../../src/tcp/cc/cubic.js';
import { Scoreboard } from '../../src/tcp/scoreboard.js';
import { TcpPair, bulk, dropFirstAt, segmentOffsets } from '../support/tcp-net.js';

const MSS = 1000;
const RTT: Micros = 100_000;

function params(extra: Partial<CcParams> = {}): CcParams {
  return { mss: MSS, initialWindow: 10 * MSS, dupThresh: 3, vegas: { alpha: 1, beta: 3, gamma: 1 }, hystart: false, ...extra };
}

function view(una: number, max: number): SendView {
  return { mss: MSS, una, nxt: max, max, end: 1e12, wndEnd: 1e12, maxWnd: 1e9, scoreboard: new Scoreboard(3), sackOn: false };
}

/**
 * A sender that always has data and is limited by its window: every round
 * trip, one ACK per segment of the window, spread over the RTT. Returns the
 * time reached and the offsets.
 */
class Driver {
  una = 1;
  now: Micros = 0;
  constructor(readonly cc: Cubic | SackRecovery) {}

  get max(): number {
    return this.una + this.cc.cwnd;
  }

  ack(bytes = MSS): void {
    const flight = this.cc.cwnd;
    const v0 = this.max;
    this.una += bytes;
    this.cc.onRtt(RTT, this.now);
    const a: AckEvent = { now: this.now, ack: this.una, acked: bytes, dup: false, flightBefore: flight };
    this.cc.onAck(a, view(this.una, Math.max(v0, this.una)));
  }

  rounds(n: number): void {
    for (let r = 0; r < n; r++) {
      const acks = Math.max(1, Math.floor(this.cc.cwnd / MSS));
      for (let i = 0; i < acks; i++) {
        this.now += Math.floor(RTT / acks);
        this.ack();
      }
    }
  }

  /** Highest offset sent when the last recovery began. */
  private recoverAt = 0;

  /** Three duplicate ACKs at the current time: a fast retransmit. */
  loss(): void {
    const flight = this.max - this.una;
    this.recoverAt = this.una + flight;
    for (let i = 0; i < 3; i++) this.cc.onAck({ now: this.now, ack: this.una, acked: 0, dup: true, flightBefore: flight }, view(this.una, this.una + flight));
  }

  /** The ACK that ends the recovery (everything outstanding at its start acknowledged; a window's worth sent since). */
  endRecovery(): void {
    const ack = this.recoverAt;
    const acked = ack - this.una;
    this.una = ack;
    const flight = 2 * this.cc.ssthresh;
    this.cc.onAck({ now: this.now, ack, acked, dup: false, flightBefore: acked + flight }, view(ack, ack + flight));
  }
}

/** A CUBIC sender in congestion avoidance at `segments` segments. */
function inAvoidance(segments: number): Driver {
  const c = new Cubic(params({ initialWindow: segments * MSS }));
  c.ssthresh = segments * MSS;
  return new Driver(c);
}

describe('CUBIC (RFC 9438)', () => {
  test('K and W_cubic(t) (Figures 1 and 2, C = 0.4)', () => {
    // W_max 100 segments, the epoch from 70 (β = 0.7 of it): K = cbrt(30 / 0.4) = cbrt(75).
    const k = cubicK(100, 70);
    assert.equal(k.toFixed(4), '4.2172');
    assert.equal(wCubic(0, k, 100).toFixed(6), '70.000000', 'the curve starts at cwnd_epoch');
    assert.equal(wCubic(k, k, 100), 100, 'and is back at W_max after K');
    assert.equal(wCubic(k + 2, k, 100).toFixed(6), '103.200000', 'convex beyond it: 0.4 x 2^3 above');
    assert.equal(wCubic(k - 1, k, 100).toFixed(6), '99.600000', 'concave before it');
    assert.equal(cubicK(10, 10), 0);
    assert.equal(CUBIC_ALPHA.toFixed(6), '0.529412', 'α = 3(1 - β)/(1 + β)');
  });

  test('multiplicative decrease: ssthresh = β x FlightSize, W_max = the window at the event; recovery ends at ssthresh', () => {
    const d = inAvoidance(100);
    const c = d.cc as Cubic;
    d.loss();
    assert.equal(c.inRecovery, true);
    assert.equal(c.ssthresh, 70 * MSS);
    assert.equal(c.wMax, 100 * MSS);
    assert.equal(c.cwndPrior, 100 * MSS);
    d.endRecovery();
    assert.equal(c.inRecovery, false);
    assert.equal(c.cwnd, 70 * MSS);
  });

  test('with SACK negotiated the factory puts CUBIC under RFC 6675 recovery, which cuts to β as well', () => {
    const cc = congestionControl('cubic', params({ sack: true }));
    assert.ok(cc instanceof SackRecovery);
    assert.equal(cc.name, 'cubic');
    assert.equal(cc.sackRecovery, true);
    assert.ok(congestionControl('cubic', params({ sack: false })) instanceof Cubic);
    const s = cc as SackRecovery;
    const una = 1;
    const max = una + 50 * MSS;
    for (let i = 0; i < 3; i++) s.onAck({ now: 0, ack: una, acked: 0, dup: true, flightBefore: 50 * MSS }, view(una, max));
    assert.equal(s.inRecovery, true);
    assert.equal(s.ssthresh, 35 * MSS);
    assert.equal(s.cwnd, 35 * MSS, 'cwnd = ssthresh at once (RFC 6675)');
  });

  test('concave then convex: the window climbs back to W_max by about K, levels off there, then grows beyond it', () => {
    // A large window, where the cubic curve is ahead of the Reno-friendly estimate.
    const d = inAvoidance(1000);
    const c = d.cc as Cubic;
    d.loss();
    d.endRecovery();
    const t0 = d.now;
    d.rounds(1);
    assert.equal(c.epochStart !== undefined && c.epochStart >= t0, true, 'an epoch began with avoidance');
    const k = cubicK(1000, 700);
    assert.equal(c.k, k);
    assert.equal(k.toFixed(3), '9.086');
    const at = (s: number) => {
      while (d.now < t0 + s * 1e6) d.rounds(1);
      return c.cwnd / MSS;
    };
    const w1 = at(1);
    const w8 = at(8);
    const wK = at(k);
    assert.ok(w1 - 700 > 10 * (wK - w8), `concave: ${w1 - 700} segments in the first second, ${wK - w8} in the last second before K`);
    assert.ok(wK > 995 && wK <= 1002, `at W_max by K: ${wK}`);
    const w12 = at(k + 3);
    assert.ok(w12 > 1008, `convex past K: ${w12}`);
    // cwnd tracks the target W_cubic(t + RTT), well above the Reno-friendly estimate.
    const t = (d.now - c.epochStart!) / 1e6;
    const target = wCubic(t + RTT / 1e6, c.k, 1000);
    assert.ok(Math.abs(w12 - target) < 2, `${w12} against W_cubic(t + RTT) = ${target}`);
    assert.ok(c.wEst / MSS < w12 - 100, `W_est ${c.wEst / MSS} far below`);
  });

  test('the Reno-friendly region takes over at small windows: cwnd follows W_est, above W_cubic', () => {
    const d = inAvoidance(10);
    const c = d.cc as Cubic;
    d.loss();
    d.endRecovery();
    assert.equal(c.cwnd, 7 * MSS);
    d.rounds(12);
    const t = (d.now - c.epochStart!) / 1e6;
    const cubicSeg = wCubic(t, c.k, c.wMax / MSS);
    assert.ok(c.wEst / MSS > cubicSeg, `W_est ${c.wEst / MSS} above W_cubic ${cubicSeg}`);
    assert.equal(c.cwnd, Math.floor(c.wEst), 'cwnd = W_est');
    // About α segments per round trip below cwnd_prior, one above it.
    assert.ok(c.cwnd / MSS > 7 + 12 * CUBIC_ALPHA - 1 && c.cwnd / MSS < 7 + 12 + 1, `${c.cwnd / MSS} after 12 rounds`);
  });

  test('fast convergence: a loss before W_max was reached lowers W_max to (1 + β)/2 of the window', () => {
    const d = inAvoidance(100);
    const c = d.cc as Cubic;
    d.loss();
    d.endRecovery();
    d.rounds(3);
    const w = c.cwnd;
    assert.ok(w < 100 * MSS);
    d.loss();
    assert.equal(c.wMax, (w * 1.7) / 2);
    assert.equal(c.ssthresh, Math.floor(0.7 * w), 'the cut itself is still β');
  });

  test('timeout: cwnd one segment, ssthresh β x FlightSize, and the next avoidance stage has K = 0 from its own window', () => {
    const d = inAvoidance(40);
    const c = d.cc as Cubic;
    c.onTimeout(view(d.una, d.una + 40 * MSS), d.now);
    assert.equal(c.cwnd, MSS);
    assert.equal(c.ssthresh, 28 * MSS);
    d.rounds(6);
    assert.ok(c.cwnd >= c.ssthresh, 'slow start reached ssthresh');
    assert.equal(c.k, 0);
    assert.equal(c.wMax, c.cwndEpoch, 'W_max = the window at the start of the stage');
    assert.equal(c.wEst >= c.cwndEpoch, true);
  });

  test('undo: a spurious event gives back cwnd, ssthresh, W_max, K and the epoch (4.9)', () => {
    const d = inAvoidance(100);
    const c = d.cc as Cubic;
    d.loss();
    d.endRecovery();
    d.rounds(5);
    const before = { cwnd: c.cwnd, ssthresh: c.ssthresh, wMax: c.wMax, k: c.k, epochStart: c.epochStart, wEst: c.wEst };
    d.loss();
    assert.notEqual(c.wMax, before.wMax);
    assert.equal(c.epochStart, undefined);
    c.undo({ cwnd: before.cwnd, ssthresh: before.ssthresh }, view(d.una, d.max), d.now);
    assert.equal(c.inRecovery, false);
    assert.deepEqual({ cwnd: c.cwnd, ssthresh: c.ssthresh, wMax: c.wMax, k: c.k, epochStart: c.epochStart, wEst: c.wEst }, before);
    // And after a timeout.
    c.onTimeout(view(d.una, d.max), d.now);
    assert.equal(c.cwnd, MSS);
    c.undo({ cwnd: before.cwnd, ssthresh: before.ssthresh }, view(d.una, d.max), d.now);
    assert.deepEqual({ cwnd: c.cwnd, ssthresh: c.ssthresh, wMax: c.wMax, k: c.k, epochStart: c.epochStart, wEst: c.wEst }, before);
    d.rounds(1);
    assert.equal(c.epochStart, before.epochStart, 'the restored epoch goes on; no new one starts');
  });
});

describe('CUBIC on a connection', () => {
  const link = (drop: number[]) => ({ delayUs: 20_000, rateBps: 10e6, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets(drop)) });

  for (const sack of [true, false]) {
    test(`three losses in a window, SACK ${sack ? 'negotiated (RFC 6675 recovery)' : 'refused (NewReno recovery)'}: one recovery, ssthresh β x FlightSize, the stream intact`, () => {
      const pair = new TcpPair(link([30, 32, 34]), 1, { congestion: 'cubic', timeWaitMs: 100 }, { sack, timeWaitMs: 100 });
      const r = bulk(pair, { ab: 300_000 });
      const seen: Array<{ rec: boolean; ssthresh: number; flight: number }> = [];
      pair.onInput = (side) => {
        const c = r.client;
        if (side === 'a' && c) seen.push({ rec: c.inRecovery, ssthresh: c.ssthresh, flight: c.seq.max - c.seq.una });
      };
      pair.run(30_000_000);
      assert.equal(r.ab.got, 300_000);
      assert.equal(r.ab.bad, 0);
      const c = r.client!;
      assert.equal(c.congestion, 'cubic');
      assert.equal(c.negotiated.sack, sack);
      assert.equal(c.stats.timeouts, 0);
      assert.equal(c.stats.fastRetransmits, 1);
      const i = seen.findIndex((s) => s.rec);
      assert.ok(i > 0);
      assert.equal(seen[i]!.ssthresh, Math.max(Math.floor(0.7 * seen[i - 1]!.flight), 2 * c.negotiated.mss));
    });
  }
});
