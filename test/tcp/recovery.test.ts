import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CcName } from '../../src/tcp/cc/index.js';
import type { Micros } from '../../src/core/time.js';
import { TcpPair, bulk, dropFirstAt, segmentOffsets, type Bulk, type LinkParams } from '../support/tcp-net.js';

const MSS = 1448;
const DELAY = 20_000;
/** Round trip of a full segment: both delays and the serialisation of data (1500 + 40 bytes at 10 Mb/s) and ACK. */
const RTT = 2 * DELAY + 1_232 + 74;

interface Sample {
  at: Micros;
  inRecovery: boolean;
  cwnd: number;
  ssthresh: number;
  una: number;
  max: number;
}

/** A bulk transfer A to B whose data segments number `drop` lose their first transmission; the sender's state after every ACK. */
function lossy(cc: CcName, drop: number[], bytes = 200_000, extra: Partial<LinkParams> = {}) {
  const link: LinkParams = { delayUs: DELAY, rateBps: 10e6, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets(drop)), ...extra };
  const pair = new TcpPair(link, 1, { congestion: cc, timeWaitMs: 100 }, { timeWaitMs: 100 });
  const r = bulk(pair, { ab: bytes });
  const samples: Sample[] = [];
  pair.onInput = (side, now) => {
    const c = r.client;
    if (side !== 'a' || !c) return;
    samples.push({ at: now, inRecovery: c.inRecovery, cwnd: c.cwnd, ssthresh: c.ssthresh, una: c.seq.una, max: c.seq.max });
  };
  pair.run(30_000_000);
  const seen = new Set<number>();
  const rtx: Array<{ at: Micros; seq: number }> = [];
  for (const d of pair.data('ab')) {
    if (seen.has(d.seq)) rtx.push({ at: d.at, seq: d.seq });
    seen.add(d.seq);
  }
  return { pair, r, samples, rtx };
}

/** Index ranges of the samples in recovery, one per episode. */
function episodes(samples: Sample[]): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  for (let i = 0; i < samples.length; i++) {
    if (samples[i]!.inRecovery && !samples[i - 1]?.inRecovery) out.push({ from: i, to: i });
    if (samples[i]!.inRecovery) out.at(-1)!.to = i;
  }
  return out;
}

function complete(r: Bulk, bytes = 200_000): void {
  assert.equal(r.ab.got, bytes);
  assert.equal(r.ab.bad, 0, `first bad byte at ${r.ab.firstBad}`);
  assert.ok(r.ab.eof, 'end of stream');
}

describe('tcp fast retransmit and recovery', () => {
  test('Reno: one loss, fast retransmit on the third duplicate ACK; the first new ACK ends recovery with cwnd = ssthresh', () => {
    const { r, samples, rtx } = lossy('reno', [20]);
    complete(r);
    const c = r.client!;
    assert.equal(c.stats.timeouts, 0);
    assert.equal(c.stats.fastRetransmits, 1);
    assert.deepEqual(
      rtx.map((x) => x.seq),
      segmentOffsets([20]),
    );
    const eps = episodes(samples);
    assert.equal(eps.length, 1, 'one recovery');
    const entry = samples[eps[0]!.from]!;
    const before = samples[eps[0]!.from - 1]!;
    assert.equal(entry.ssthresh, Math.max(Math.floor((before.max - before.una) / 2), 2 * MSS), 'ssthresh = FlightSize / 2');
    assert.equal(entry.cwnd, entry.ssthresh + 3 * MSS, 'cwnd = ssthresh + 3 SMSS');
    // The retransmission left with the ACK that made the third duplicate.
    assert.equal(rtx[0]!.at, entry.at);
    const firstNew = samples.findIndex((s, i) => i > eps[0]!.from && s.una > entry.una);
    assert.ok(firstNew > 0, 'a new ACK came');
    const s = samples[firstNew]!;
    assert.equal(s.inRecovery, false, 'out of recovery on the first new ACK');
    assert.equal(s.cwnd, entry.ssthresh, 'window deflated to ssthresh');
    // Inflation: each further duplicate ACK added one SMSS.
    assert.equal(samples[eps[0]!.from + 1]!.cwnd, entry.cwnd + MSS);
  });

  test('Reno leaves recovery on a partial ACK (and needs a timeout for the other holes); NewReno does not', () => {
    const reno = lossy('reno', [20, 22, 24]);
    complete(reno.r);
    const eps = episodes(reno.samples);
    const entry = reno.samples[eps[0]!.from]!;
    const partial = reno.samples.find((s) => s.at > entry.at && s.una > entry.una)!;
    assert.ok(partial.una < entry.max, 'the first new ACK is partial');
    assert.equal(partial.inRecovery, false, 'Reno is out of recovery');
    assert.equal(partial.cwnd, entry.ssthresh);
    assert.ok(reno.r.client!.stats.timeouts > 0, 'Reno needed a timeout for the later holes');

    const nr = lossy('newreno', [20, 22, 24]);
    const e2 = nr.samples[episodes(nr.samples)[0]!.from]!;
    const p2 = nr.samples.find((s) => s.at > e2.at && s.una > e2.una)!;
    assert.ok(p2.una < e2.max, 'the first new ACK is partial');
    assert.equal(p2.inRecovery, true, 'NewReno stays in recovery');
  });

  test('NewReno: three losses in one window, one recovery episode, each partial ACK retransmits the next hole at once, no timeout', () => {
    const drop = [20, 22, 24];
    const { r, samples, rtx } = lossy('newreno', drop);
    complete(r);
    const c = r.client!;
    assert.equal(c.stats.timeouts, 0, 'no timeout');
    assert.equal(c.stats.fastRetransmits, 1, 'one fast retransmit');
    assert.deepEqual(
      rtx.map((x) => x.seq),
      segmentOffsets(drop),
      'each hole sent again once, nothing else',
    );
    const eps = episodes(samples);
    assert.equal(eps.length, 1, 'one recovery episode');
    const entry = samples[eps[0]!.from]!;
    const recover = entry.max;
    // Every later hole went out at the moment a partial ACK came in.
    const partials = samples.filter((s, i) => i > eps[0]!.from && s.una > samples[i - 1]!.una && s.una < recover);
    assert.equal(partials.length, 2, 'two partial ACKs');
    assert.deepEqual(
      rtx.slice(1).map((x) => x.at),
      partials.map((s) => s.at),
    );
    assert.deepEqual(
      rtx.slice(1).map((x) => x.seq),
      partials.map((s) => s.una),
      'the hole at the new cumulative ACK',
    );
    for (const p of partials) assert.equal(p.inRecovery, true, 'still in recovery after a partial ACK');
    // The full ACK ends it: cwnd = min(ssthresh, FlightSize + SMSS).
    const exit = samples[eps[0]!.to + 1]!;
    assert.ok(exit.una >= recover, 'recovery ends with the full ACK');
    assert.equal(exit.inRecovery, false);
    const flightAfter = samples[eps[0]!.to]!.max - exit.una;
    assert.equal(exit.cwnd, Math.min(entry.ssthresh, Math.max(flightAfter, MSS) + MSS));
    // Each partial ACK costs one round trip.
    assert.ok(rtx[2]!.at - rtx[0]!.at >= 2 * RTT - 2_000, 'one hole per round trip');
  });

  test('SACK: four losses in one window are all retransmitted within about one RTT, only the holes, nothing the receiver SACKed', () => {
    const drop = [20, 22, 24, 26];
    const { pair, r, samples, rtx } = lossy('sack', drop);
    complete(r);
    const c = r.client!;
    assert.equal(c.congestion, 'sack');
    assert.equal(c.stats.timeouts, 0, 'no timeout');
    assert.equal(c.stats.fastRetransmits, 1, 'one recovery');
    assert.deepEqual(
      rtx.map((x) => x.seq).sort((x, y) => x - y),
      segmentOffsets(drop),
      'exactly the holes',
    );
    assert.ok(rtx.at(-1)!.at - rtx[0]!.at < RTT, `all holes within one RTT (${rtx.at(-1)!.at - rtx[0]!.at} us)`);
    const eps = episodes(samples);
    assert.equal(eps.length, 1);
    const span = samples[eps[0]!.to + 1]!.at - samples[eps[0]!.from]!.at;
    assert.ok(span < 2 * RTT, `recovery over in under two RTTs (${span} us)`);
    // No retransmitted byte had been SACKed by the time the sender could know it.
    const isnB = pair.isn('ba');
    const isnA = pair.isn('ab');
    void isnB;
    for (const x of rtx) {
      for (const t of pair.trace) {
        if (t.dir !== 'ba' || t.dropped || t.at + DELAY > x.at) continue;
        for (const b of t.seg.options.sack ?? []) {
          const left = (b.left - isnA) >>> 0;
          const right = (b.right - isnA) >>> 0;
          assert.ok(x.seq + MSS <= left || x.seq >= right, `retransmitted ${x.seq} was SACKed [${left}, ${right}) at ${t.at}`);
        }
      }
    }
    // NewReno on the same losses needs a round trip per hole.
    const nr = lossy('newreno', drop);
    assert.ok(nr.rtx.at(-1)!.at - nr.rtx[0]!.at >= 3 * RTT - 3_000, 'NewReno takes a round trip per hole');
    assert.ok(r.ab.eofAt! < nr.r.ab.eofAt!, 'SACK finishes first');
  });

  test('SACK recovery is not entered without SACK negotiated: dup ACKs and a timeout-free single loss still work', () => {
    const link: LinkParams = { delayUs: DELAY, rateBps: 10e6, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets([20])) };
    const pair = new TcpPair(link, 1, { congestion: 'sack', timeWaitMs: 100 }, { sack: false, timeWaitMs: 100 });
    const r = bulk(pair, { ab: 200_000 });
    pair.run(30_000_000);
    complete(r);
    assert.equal(r.client!.negotiated.sack, false);
    assert.equal(r.client!.stats.fastRetransmits, 1);
    assert.equal(r.client!.stats.timeouts, 0);
  });

  test('Vegas keeps the bottleneck queue short with no loss; Reno fills it', () => {
    const link: LinkParams = { delayUs: DELAY, rateBps: 10e6, queuePackets: 1000 };
    const run = (cc: CcName, bytes: number) => {
      const pair = new TcpPair(link, 3, { congestion: cc, timeWaitMs: 100 }, { receiveBufferBytes: 1 << 20, timeWaitMs: 100 });
      const r = bulk(pair, { ab: bytes });
      const cw: Array<{ at: Micros; cwnd: number; srtt: number }> = [];
      pair.onInput = (side, now) => {
        if (side === 'a' && r.client?.rtt.srtt !== undefined) cw.push({ at: now, cwnd: r.client.cwnd, srtt: r.client.rtt.srtt });
      };
      pair.run(60_000_000);
      complete(r, bytes);
      return { pair, r, cw };
    };
    const vegas = run('vegas', 4_000_000);
    const base = RTT;
    assert.equal(vegas.pair.trace.filter((t) => t.dropped).length, 0, 'Vegas lost nothing');
    assert.equal(vegas.r.client!.stats.retransmittedSegments, 0);
    const end = vegas.r.ab.eofAt!;
    const late = vegas.cw.filter((x) => x.at > 0.6 * end && x.at < end - 2 * base);
    assert.ok(late.length > 100, 'samples in the last 40%');
    const cwnds = late.map((x) => x.cwnd);
    const spread = Math.max(...cwnds) - Math.min(...cwnds);
    assert.ok(spread <= 4 * MSS, `cwnd settled (spread ${spread / MSS} segments)`);
    const bdp = (10e6 / 8) * (base / 1e6);
    assert.ok(Math.max(...cwnds) < bdp + 8 * MSS, `cwnd near the path's BDP (${Math.max(...cwnds) / MSS} segments, BDP ${bdp / MSS})`);
    const srtt = Math.max(...late.map((x) => x.srtt));
    assert.ok(srtt < 1.3 * base, `Vegas RTT near the base RTT (${srtt} us, base ${base})`);

    const reno = run('reno', 1_500_000);
    const renoMax = reno.r.client!.rtt.maxSampleUs;
    assert.ok(renoMax > 4 * base, `Reno fills the queue (max RTT ${renoMax} us)`);
    assert.ok(reno.r.client!.cwnd > 3 * bdp, "Reno's window is far beyond the BDP");
  });
});
