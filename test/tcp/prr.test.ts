import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SackRecovery, type CcParams, type SendView } from '../../src/tcp/cc/index.js';
import { Prr } from '../../src/tcp/cc/prr.js';
import { Scoreboard, type SeqRange } from '../../src/tcp/scoreboard.js';
import type { CcName } from '../../src/tcp/cc/index.js';
import { TcpPair, bulk, dropFirstAt, segmentOffsets } from '../support/tcp-net.js';

const MSS = 1000;

function params(prr: boolean): CcParams {
  return { mss: MSS, initialWindow: 20 * MSS, dupThresh: 3, vegas: { alpha: 1, beta: 3, gamma: 1 }, prr };
}

/**
 * RFC 6937 3.1's setting: 20 segments (0-19) outstanding, cwnd 20, bulk
 * data; segments `lost` never arrive, each other one brings a SACK. What the
 * sender sends on the ACK of each segment that arrived, in the RFC's notation
 * ("R" a retransmission, "N" new data, "3R" three of them, "" nothing).
 * Limited Transmit is not ours: recovery starts with 20 segments out, not
 * 22, so pipe is two segments lower than in the RFC's charts and the first
 * two ACKs send nothing.
 */
function pattern(lost: number[], prr: boolean): string[] {
  const cc = new SackRecovery(params(prr));
  const sb = new Scoreboard(3);
  const seg = (i: number) => 1 + i * MSS;
  const una = seg(0);
  let max = seg(20);
  const got: number[] = [];
  const out: string[] = [];
  const view = (): SendView => ({ mss: MSS, una, nxt: max, max, end: 1e9, wndEnd: 1e9, maxWnd: 1e9, scoreboard: sb, sackOn: true });
  for (let i = 0; i < 20; i++) {
    if (lost.includes(i)) continue;
    got.push(i);
    const blocks: SeqRange[] = got.map((k) => ({ start: seg(k), end: seg(k + 1) }));
    const flightBefore = max - una;
    sb.update(blocks, una, max);
    cc.onAck({ now: 0, ack: una, acked: 0, dup: true, flightBefore }, view());
    const sent: string[] = [];
    for (let guard = 0; guard < 50; guard++) {
      const v = view();
      const s = cc.next(v);
      if (!s) break;
      sent.push(s.seq < max ? 'R' : 'N');
      cc.sent(s, v);
      max = Math.max(max, s.seq + s.len);
    }
    out.push(compress(sent));
  }
  return out;
}

/** ["R", "R", "N"] as "2R N". */
function compress(sent: string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < sent.length;) {
    let j = i;
    while (j < sent.length && sent[j] === sent[i]) j++;
    parts.push(`${j - i > 1 ? j - i : ''}${sent[i]}`);
    i = j;
  }
  return parts.join(' ');
}

describe('PRR (RFC 6937)', () => {
  test('one loss in 20: RFC 6675 falls silent for half a window, PRR spreads the reduction over the round trip', () => {
    // ACKs of segments 1..19.
    const rfc6675 = pattern([0], false);
    assert.deepEqual(rfc6675, ['', '', 'R', '', '', '', '', '', '', '', 'N', 'N', 'N', 'N', 'N', 'N', 'N', 'N', 'N']);
    const prr = pattern([0], true);
    // One segment every other ACK while pipe > ssthresh; once pipe is down to ssthresh (the ACK of 15), one per ACK.
    assert.deepEqual(prr, ['', '', 'R', '', 'N', '', 'N', '', 'N', '', 'N', '', 'N', '', '', 'N', 'N', 'N', 'N']);
    // The same amount of data in the end (RFC 6937 3.1: "all three algorithms send the same total amount of data").
    const count = (p: string[]) =>
      p
        .join(' ')
        .split(' ')
        .filter((x) => x !== '').length;
    assert.equal(count(prr), count(rfc6675));
  });

  test('four losses in 20: RFC 6675 waits four ACKs for pipe to fall below cwnd; PRR resends the holes every other ACK meanwhile', () => {
    // ACKs of segments 4..19.
    assert.deepEqual(pattern([0, 1, 2, 3], false), ['', '', 'R', '', '', '', '', 'R', 'R', 'R', 'N', 'N', 'N', 'N', 'N', 'N']);
    assert.deepEqual(pattern([0, 1, 2, 3], true), ['', '', 'R', '', 'R', '', 'R', '', '', 'R', 'N', 'N', 'N', 'N', 'N', 'N']);
  });

  test('fifteen losses in 20 (0-14): RFC 6675 bursts to cwnd at once; PRR with Linux bound sends one per ACK', () => {
    // ACKs of segments 15..19: recovery starts on the third, with pipe 2 (the RFC's 4 less Limited Transmit's two).
    assert.deepEqual(pattern(range(15), false), ['', '', '8R', 'R', 'R']);
    assert.deepEqual(pattern(range(15), true), ['', '', 'R', 'R', 'R']);
  });

  test("RFC 6937's own charts for the fifteen losses, from its pipe values: PRR-SSRB 2R 2R 2R, the conserving bound R R R", () => {
    // Pipe 4, 5, 6 on the ACKs of segments 17, 18 and 19, one segment delivered by each; ssthresh 10.
    const run = (prr: Prr) =>
      [4, 5, 6].map((pipe, k) => {
        if (k === 0) prr.start(20 * MSS);
        prr.onAck(MSS, pipe * MSS, 10 * MSS, MSS, false);
        const n = prr.quota / MSS;
        prr.sent(n * MSS);
        return n;
      });
    assert.deepEqual(run(new Prr(true)), [2, 2, 2], "RFC 6937's PRR-SSRB: MAX(prr_delivered - prr_out, DeliveredData) + MSS");
    assert.deepEqual(run(new Prr(false)), [1, 1, 1], "Linux's: the extra MSS only on a SafeACK, none of these is one");
    // A SafeACK gets it.
    const safe = new Prr(false);
    safe.start(20 * MSS);
    safe.onAck(MSS, 4 * MSS, 10 * MSS, MSS, true);
    assert.equal(safe.quota, 2 * MSS);
  });

  test('proportional part: sndcnt = CEIL(prr_delivered x ssthresh / RecoverFS) - prr_out while pipe > ssthresh', () => {
    const prr = new Prr();
    prr.start(20 * MSS);
    prr.onAck(MSS, 16 * MSS, 10 * MSS, MSS, false);
    assert.equal(prr.quota, MSS, 'the fast retransmit goes whatever the arithmetic (ceil(0.5) = 1 here anyway)');
    prr.sent(MSS);
    prr.onAck(MSS, 16 * MSS, 10 * MSS, MSS, false);
    assert.equal(prr.quota, 0);
    prr.onAck(MSS, 15 * MSS, 10 * MSS, MSS, false);
    assert.equal(prr.quota, MSS);
    prr.onAck(0, 15 * MSS, 10 * MSS, MSS, false);
    assert.equal(prr.quota, MSS, 'an ACK delivering nothing changes nothing');
  });
});

describe('PRR on a connection', () => {
  const run = (congestion: CcName, prr: boolean, sack = true) => {
    const link = { delayUs: 20_000, rateBps: 10e6, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets([40, 41, 42, 43])) };
    const pair = new TcpPair(link, 1, { congestion, prr, timeWaitMs: 100 }, { sack, timeWaitMs: 100 });
    const r = bulk(pair, { ab: 400_000 });
    const seen: Array<{ at: number; rec: boolean; cwnd: number; ssthresh: number }> = [];
    pair.onInput = (side, now) => {
      const c = r.client;
      if (side === 'a' && c) seen.push({ at: now, rec: c.inRecovery, cwnd: c.cwnd, ssthresh: c.ssthresh });
    };
    pair.run(30_000_000);
    assert.equal(r.ab.got, 400_000);
    assert.equal(r.ab.bad, 0);
    const c = r.client!;
    const from = seen.findIndex((s) => s.rec);
    const to = seen.findIndex((s, i) => i > from && !s.rec);
    // Data segments A sent during the recovery, by instant: the largest burst.
    const t0 = seen[from]!.at;
    const t1 = seen[to]!.at;
    const perInstant = new Map<number, number>();
    for (const t of pair.trace)
      if (t.dir === 'ab' && t.seg.payload.length > 0 && t.at >= t0 && t.at < t1) perInstant.set(t.at, (perInstant.get(t.at) ?? 0) + 1);
    return { c, burst: Math.max(...perInstant.values()), exit: seen[to]! };
  };

  for (const [cc, sack] of [
    ['newreno', false],
    ['sack', true],
    ['cubic', true],
    ['cubic', false],
  ] as const) {
    test(`${cc}${sack ? '' : ' without SACK'}: four losses in a row, one recovery without a timeout, smaller bursts with PRR, ending at ssthresh`, () => {
      const off = run(cc, false, sack);
      const on = run(cc, true, sack);
      for (const x of [off, on]) {
        assert.equal(x.c.stats.timeouts, 0);
        assert.equal(x.c.stats.fastRetransmits, 1);
      }
      assert.ok(on.burst <= 2, `PRR: at most two segments per ACK, saw ${on.burst}`);
      assert.ok(on.burst < off.burst || off.burst <= 2, `without PRR ${off.burst}, with ${on.burst}`);
      assert.equal(on.exit.cwnd, on.exit.ssthresh, 'RFC 6937: cwnd = ssthresh at the end of recovery');
    });
  }

  test('reno keeps window inflation: the option changes nothing', () => {
    const off = run('reno', false, false);
    const on = run('reno', true, false);
    assert.deepEqual(on.c.stats, off.c.stats);
  });
});

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
