import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { congestionControl, Reno, type CcName, type CcParams, type SendView } from '../../src/tcp/cc/index.js';
import { HYSTART, HyStartPlusPlus } from '../../src/tcp/cc/hystart.js';
import { Scoreboard } from '../../src/tcp/scoreboard.js';
import { TcpPair, bulk } from '../support/tcp-net.js';

const MSS = 1000;

/**
 * Rounds of ACKs into a HyStart++ instance: each round acknowledges `acks`
 * segments, one per ACK, each with an RTT sample of `rttMs`, while the
 * sender keeps `acks` segments outstanding (each ACK sends one more), so a
 * round begins with each group. Returns the phase after each ACK; `toCa`
 * says whether CSS handed over to congestion avoidance.
 */
class Rounds {
  una = 1;
  readonly h = new HyStartPlusPlus();
  toCa = false;
  increases: number[] = [];

  round(rttMs: number, acks = 10): string[] {
    const phases: string[] = [];
    for (let i = 0; i < acks; i++) {
      this.una += MSS;
      this.h.onRtt(rttMs * 1000);
      const r = this.h.onAck(this.una, MSS, this.una + acks * MSS, MSS);
      this.increases.push(r.increase);
      if (r.toCa) this.toCa = true;
      phases.push(this.h.phase);
    }
    return phases;
  }
}

describe('HyStart++ (RFC 9406)', () => {
  test('a delay increase of lastRoundMinRTT/8 (4 to 16 ms) ends slow start into CSS, once N_RTT_SAMPLE samples are in', () => {
    const r = new Rounds();
    r.round(100);
    r.round(100);
    // RttThresh = max(4, min(100 / 8, 16)) = 12.5 ms.
    const p = r.round(112.5);
    assert.deepEqual(p.slice(0, HYSTART.N_RTT_SAMPLE - 1), Array(HYSTART.N_RTT_SAMPLE - 1).fill('slow-start'), 'not before the 8th sample');
    assert.equal(p[HYSTART.N_RTT_SAMPLE - 1], 'css');
    // Just below the threshold: slow start goes on.
    const q = new Rounds();
    q.round(100);
    assert.deepEqual(q.round(112.4), Array(10).fill('slow-start'));
    // The clamps: 4 ms at small RTTs, 16 ms at large ones.
    for (const [base, below, at] of [
      [20, 23.9, 24],
      [200, 215.9, 216],
    ] as const) {
      const a = new Rounds();
      a.round(base);
      assert.equal(a.round(below).at(-1), 'slow-start', `${base} ms: ${below} stays`);
      const b = new Rounds();
      b.round(base);
      assert.equal(b.round(at).at(-1), 'css', `${base} ms: ${at} leaves`);
    }
  });

  test('CSS grows a quarter as fast (CSS_GROWTH_DIVISOR), slow start by min(N, L x SMSS)', () => {
    const r = new Rounds();
    r.round(100);
    r.increases = [];
    r.round(120);
    // The ACK that ends slow start still grows as slow start; those after it by a quarter.
    assert.deepEqual(r.increases, [...Array(8).fill(MSS), MSS / 4, MSS / 4]);
    const h = new HyStartPlusPlus();
    assert.equal(h.onAck(20 * MSS, 20 * MSS, 40 * MSS, MSS).increase, HYSTART.L * MSS, 'an ACK of 20 segments grows by L = 8');
  });

  test('CSS returns to slow start when the RTT falls back below the baseline', () => {
    const r = new Rounds();
    r.round(100);
    r.round(120);
    assert.equal(r.h.phase, 'css');
    // Above the baseline (120): CSS stays.
    assert.equal(r.round(121).at(-1), 'css');
    const p = r.round(110);
    assert.deepEqual(p.slice(0, 7), Array(7).fill('css'));
    assert.equal(p[7], 'slow-start', 'back on the 8th sample of a round below the baseline');
    // And slow start can end again on a new increase.
    r.round(110);
    assert.equal(r.round(130).at(-1), 'css');
  });

  test('after CSS_ROUNDS rounds in CSS, congestion avoidance: ssthresh = cwnd', () => {
    const r = new Rounds();
    r.round(100);
    r.round(120);
    for (let k = 1; k < HYSTART.CSS_ROUNDS; k++) {
      r.round(120);
      assert.equal(r.toCa, false, `still CSS after ${k} more rounds`);
    }
    r.round(120);
    assert.equal(r.toCa, true);
    assert.equal(r.h.phase, 'done');

    // The same through a Reno with HyStart++: ssthresh becomes the window.
    const reno = new Reno(params({ hystart: true }));
    let una = 1;
    const round = (rttMs: number) => {
      const acks = Math.floor(reno.cwnd / MSS);
      for (let i = 0; i < acks; i++) {
        const flight = reno.cwnd;
        una += MSS;
        reno.onRtt(rttMs * 1000, 0);
        reno.onAck({ now: 0, ack: una, acked: MSS, dup: false, flightBefore: flight }, view(una, una + flight));
      }
    };
    round(100);
    round(120);
    assert.equal(reno.ssthresh, Number.MAX_SAFE_INTEGER, 'CSS is still slow start as far as ssthresh goes');
    for (let k = 0; k < HYSTART.CSS_ROUNDS; k++) round(120);
    assert.ok(reno.ssthresh < Number.MAX_SAFE_INTEGER, 'ssthresh set');
    // Congestion avoidance since: about one segment per round trip.
    assert.ok(reno.cwnd >= reno.ssthresh && reno.cwnd - reno.ssthresh <= 2 * MSS, `avoidance from ${reno.ssthresh}: ${reno.cwnd}`);
  });

  test('a loss ends HyStart++ for good; later slow starts are standard', () => {
    const reno = new Reno(params({ hystart: true }));
    reno.onTimeout(view(1, 1 + 10 * MSS), 0);
    const before = reno.cwnd;
    reno.onAck({ now: 0, ack: 1 + 10 * MSS, acked: 10 * MSS, dup: false, flightBefore: 10 * MSS }, view(1 + 10 * MSS, 1 + 10 * MSS));
    assert.equal(reno.cwnd - before, MSS, 'RFC 5681: one SMSS per ACK, not L');
  });

  test('the variant default: on with cubic, off with the others, either way when set', () => {
    const on = (name: CcName, hystart?: boolean) => {
      const cc = congestionControl(name, params({ hystart, initialWindow: 2 * MSS }));
      // An ACK of 4 segments: HyStart++ grows by 4 (L = 8), standard slow start by 1.
      cc.onAck({ now: 0, ack: 1 + 4 * MSS, acked: 4 * MSS, dup: false, flightBefore: 4 * MSS }, view(1 + 4 * MSS, 1 + 4 * MSS));
      return cc.cwnd === 6 * MSS;
    };
    assert.deepEqual(
      (['reno', 'newreno', 'vegas', 'sack', 'cubic'] as const).map((n) => on(n)),
      [false, false, false, false, true],
    );
    assert.equal(on('cubic', false), false);
    assert.equal(on('reno', true), true);
    assert.equal(on('sack', true), true);
  });
});

describe('HyStart++ on a connection', () => {
  // A 10 Mb/s bottleneck with an unbounded queue: nothing is ever lost, the RTT grows as the queue does.
  const run = (cfg: { congestion: CcName; hystart?: boolean }) => {
    const pair = new TcpPair({ delayUs: 20_000, rateBps: 10e6, queuePackets: 0 }, 1, { ...cfg, timeWaitMs: 100 }, { timeWaitMs: 100 });
    const r = bulk(pair, { ab: 1_500_000 });
    pair.run(30_000_000);
    assert.equal(r.ab.got, 1_500_000);
    const c = r.client!;
    assert.equal(c.stats.fastRetransmits + c.stats.timeouts, 0, 'no loss');
    return c.ssthresh;
  };
  test('leaves slow start on the queue building up, with cubic by default and with any variant when set', () => {
    assert.ok(run({ congestion: 'cubic' }) < Number.MAX_SAFE_INTEGER);
    assert.equal(run({ congestion: 'cubic', hystart: false }), Number.MAX_SAFE_INTEGER);
    assert.equal(run({ congestion: 'newreno' }), Number.MAX_SAFE_INTEGER);
    assert.ok(run({ congestion: 'newreno', hystart: true }) < Number.MAX_SAFE_INTEGER);
  });
});

function params(extra: Partial<CcParams> = {}): CcParams {
  return { mss: MSS, initialWindow: 10 * MSS, dupThresh: 3, vegas: { alpha: 1, beta: 3, gamma: 1 }, ...extra };
}

function view(una: number, max: number): SendView {
  return { mss: MSS, una, nxt: max, max, end: 1e12, wndEnd: 1e12, maxWnd: 1e9, scoreboard: new Scoreboard(3), sackOn: false };
}
