import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TcpConnection } from '../../src/tcp/connection.js';
import { RttEstimator } from '../../src/tcp/rtt.js';
import { TcpPair, bulk, dropFirstAt, segmentOffsets, type LinkParams } from '../support/tcp-net.js';

const MS = 1_000;
/** The retransmission timer alone: no tail loss probe ahead of it, no F-RTO after it (both on by default). */
const RTO_ONLY = { frto: false, rack: false };

/** A connection A to B on `link`; `write` bytes go out at `writeAt`. */
function oneWrite(link: LinkParams, bytes: number, cfgA: Parameters<TcpPair['a']['connect']>[3] = {}, seed = 1, writeAt = 100 * MS, read = true) {
  const pair = new TcpPair(link, seed, cfgA);
  let client: TcpConnection | undefined;
  let server: TcpConnection | undefined;
  let got = 0;
  pair.b.listen(80, (c) => (server = c));
  pair.onEvent = (side, e, now) => {
    if (side === 'b' && e.event === 'readable') got = read ? got + e.conn.read(Infinity, now).length : e.conn.readable;
  };
  pair.at(0, (now) => (client = pair.a.connect(pair.ipB, 80, now, cfgA)));
  pair.at(writeAt, (now) => {
    client!.write(new Uint8Array(bytes).fill(1), now);
  });
  return {
    pair,
    get client() {
      return client!;
    },
    get server() {
      return server!;
    },
    get got() {
      return got;
    },
  };
}

describe('RFC 6298 estimator', () => {
  const P = { initialUs: 1000 * MS, minUs: 200 * MS, maxUs: 60_000 * MS, granularityUs: MS };

  test('first sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4 RTTVAR); later ones alpha 1/8, beta 1/4', () => {
    const e = new RttEstimator({ ...P, minUs: 0 });
    assert.equal(e.rtoUs, 1000 * MS, 'initial RTO');
    e.sample(100 * MS);
    assert.equal(e.srtt, 100 * MS);
    assert.equal(e.rttvar, 50 * MS);
    assert.equal(e.rtoUs, 300 * MS);
    e.sample(200 * MS);
    assert.equal(e.rttvar, 0.75 * 50 * MS + 0.25 * 100 * MS);
    assert.equal(e.srtt, 0.875 * 100 * MS + 0.125 * 200 * MS);
    assert.equal(e.rtoUs, Math.round(112.5 * MS + 4 * 62.5 * MS));
  });

  test('after a SYN timeout data starts from an RTO of 3 s (5.7), until the first sample', () => {
    const e = new RttEstimator(P);
    e.backoff();
    e.backoff();
    e.restartAfterSynTimeout();
    assert.equal(e.rtoUs, 3_000 * MS, 'reset to 3 s, backoff cleared');
    e.sample(100 * MS);
    assert.equal(e.rtoUs, 300 * MS, 'a sample takes over');
    e.restartAfterSynTimeout();
    assert.equal(e.rtoUs, 300 * MS, 'no effect once a sample exists');
  });

  test('the RTO is clamped to [min, max]', () => {
    const e = new RttEstimator(P);
    e.sample(2 * MS);
    assert.equal(e.rtoUs, 200 * MS, 'a short path gets the minimum');
    const f = new RttEstimator({ ...P, maxUs: 5_000 * MS });
    f.sample(4_000 * MS);
    assert.equal(f.rtoUs, 5_000 * MS, 'a long one the maximum');
  });

  test('backoff doubles the RTO in use, from the clamped value, up to the maximum; a new sample ends it', () => {
    const e = new RttEstimator({ ...P, maxUs: 3_000 * MS });
    e.sample(2 * MS); // RTO 200 ms (the minimum; the computed one is 6 ms)
    const seen = [e.rtoUs];
    for (let i = 0; i < 6; i++) {
      e.backoff();
      seen.push(e.rtoUs);
    }
    assert.deepEqual(
      seen,
      [200, 400, 800, 1600, 3000, 3000, 3000].map((x) => x * MS),
    );
    e.sample(2 * MS);
    assert.equal(e.backoffs, 0);
    assert.equal(e.rtoUs, 200 * MS);
  });
});

describe('tcp retransmission timer', () => {
  test('every retransmission of lost data waits twice as long as the one before, up to maxRtoMs; maxRetransmits later: timeout', () => {
    // A 1 ms path: the computed RTO is a few ms, so the 200 ms minimum applies; backoff doubles from there.
    const link: LinkParams = {
      delayUs: 1 * MS,
      rateBps: 0,
      queuePackets: 0,
      fate: (seg, dir) => (dir === 'ab' && seg.payload.length > 0 ? { drop: true } : undefined),
    };
    const t = oneWrite(link, 500, { ...RTO_ONLY, minRtoMs: 200, maxRtoMs: 2_000, maxRetransmits: 6 });
    t.pair.run(60_000_000);
    const sends = t.pair.data('ab').map((d) => d.at);
    assert.equal(sends.length, 7, 'the original and maxRetransmits retransmissions');
    assert.equal(sends[0], 100 * MS);
    const gaps = sends.slice(1).map((x, i) => x - sends[i]!);
    assert.deepEqual(
      gaps,
      [200, 400, 800, 1600, 2000, 2000].map((x) => x * MS),
    );
    const ev = t.pair.events.filter((e) => e.side === 'a' && e.event !== 'connected');
    assert.deepEqual(
      ev.map((e) => [e.event, e.at]),
      [['timeout', sends[6]! + 2000 * MS]],
    );
    assert.equal(t.client.state, 'CLOSED');
    assert.equal(t.client.stats.timeouts, 6);
    assert.equal(t.pair.a.connections().length, 0);
    assert.ok(
      t.pair.data('ab').every((d) => d.seq === 1 && d.len === 500),
      'the same data each time',
    );
  });

  test('the first RTO of a fresh connection is initialRtoMs less the handshake sample; maxRtoMs caps the backoff', () => {
    const link: LinkParams = {
      delayUs: 300 * MS,
      rateBps: 0,
      queuePackets: 0,
      fate: (seg, dir) => (dir === 'ab' && seg.payload.length > 0 ? { drop: true } : undefined),
    };
    const t = oneWrite(link, 100, { ...RTO_ONLY, maxRtoMs: 4_000, maxRetransmits: 4 }, 1, 1_000 * MS);
    t.pair.run(60_000_000);
    const sends = t.pair.data('ab').map((d) => d.at);
    const gaps = sends.slice(1).map((x, i) => x - sends[i]!);
    // Handshake sample 600 ms: RTO = 600 + 4 * 300 = 1800 ms, then 3600, then 4000 (the cap).
    assert.deepEqual(
      gaps,
      [1800, 3600, 4000, 4000].map((x) => x * MS),
    );
    assert.equal(t.pair.events.filter((e) => e.event === 'timeout').length, 1);
  });

  test('Karn: without timestamps a retransmitted segment gives no RTT sample, and the backed-off RTO stays', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 0, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets([0], 1460)) };
    const t = oneWrite(link, 300, { ...RTO_ONLY, timestamps: false });
    t.pair.run(2_500_000);
    assert.equal(t.got, 300);
    assert.equal(t.client.negotiated.timestamps, false);
    assert.equal(t.client.stats.timeouts, 1);
    assert.equal(t.client.rtt.samples, 1, "only the handshake's sample");
    assert.equal(t.client.rtt.srtt, 20 * MS);
    assert.equal(t.client.rtt.backoffs, 1, 'the RTO stays backed off until a valid sample');
    assert.equal(t.client.rtt.maxSampleUs, 20 * MS, 'no inflated sample');

    // A later, unambiguous segment gives a sample again and ends the backoff.
    t.pair.at(3_000_000, (now) => {
      t.client.write(new Uint8Array(100), now);
    });
    t.pair.run(6_000_000);
    assert.equal(t.client.rtt.samples, 2);
    assert.equal(t.client.rtt.backoffs, 0);
  });

  test('with timestamps the ACK of a retransmission is a valid sample (RFC 7323 4): it measures the retransmission', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 0, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets([0])) };
    const t = oneWrite(link, 300, RTO_ONLY);
    t.pair.run(5_000_000);
    assert.equal(t.got, 300);
    assert.equal(t.client.stats.timeouts, 1);
    assert.ok(t.client.rtt.samples >= 1, 'a sample from the timestamp echo');
    // The ACK is delayed by B's delayed-ACK timer: RTT 20 ms + 40 ms, never RTO + RTT.
    assert.ok(t.client.rtt.maxSampleUs <= 61 * MS, `sample measures the retransmission (${t.client.rtt.maxSampleUs})`);
    assert.equal(t.client.rtt.backoffs, 0);
  });
});

describe('tcp delayed ACK', () => {
  test('a lone segment is acknowledged after delayedAckMs', () => {
    // B's application does not read: reading would open the window beyond what the SYN-ACK could offer, and that update goes at once.
    const t = oneWrite({ delayUs: 10 * MS, rateBps: 0, queuePackets: 0 }, 100, {}, 1, 100 * MS, false);
    t.pair.run(1_000_000);
    const acks = t.pair.trace.filter((x) => x.dir === 'ba' && x.at > 100 * MS);
    assert.equal(acks.length, 1);
    assert.equal(acks[0]!.at, 110 * MS + 40 * MS);
  });

  test('full segments: every second one is acknowledged at once; an odd last one after the delay', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
    const t = oneWrite(link, 7 * 1448, { initialWindowSegments: 10 }, 1, 100 * MS, false);
    t.pair.run(1_000_000);
    const data = t.pair.data('ab');
    assert.equal(data.length, 7);
    const serial = Math.ceil(((1448 + 20 + 12 + 40) * 8 * 1e6) / 10e6);
    const arrivals = data.map((d, i) => 100 * MS + (i + 1) * serial + 10 * MS);
    const acks = t.pair.trace.filter((x) => x.dir === 'ba' && x.at > 100 * MS);
    assert.deepEqual(
      acks.map((a) => a.at),
      [arrivals[1], arrivals[3], arrivals[5], arrivals[6]! + 40 * MS],
    );
    const isnA = t.pair.isn('ab');
    assert.deepEqual(
      acks.map((a) => (a.seg.ack - isnA) >>> 0),
      [2, 4, 6, 7].map((k) => 1 + k * 1448),
    );
  });

  test('delayedAckMs 0 acknowledges every segment', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
    const pair = new TcpPair(link, 1, { initialWindowSegments: 10 }, { delayedAckMs: 0 });
    const r = bulk(pair, { ab: 5 * 1448 });
    pair.run(200 * MS);
    assert.equal(r.ab.got, 5 * 1448);
    const firstData = pair.data('ab')[0]!.at;
    const isnA = pair.isn('ab');
    const acked = pair.trace.filter((x) => x.dir === 'ba' && x.at > firstData).map((x) => (x.seg.ack - isnA) >>> 0);
    for (let k = 1; k <= 5; k++) assert.ok(acked.includes(1 + k * 1448), `segment ${k} acknowledged on its own (${acked.join(', ')})`);
  });

  test('an out-of-order segment is acknowledged at once, with a SACK block; so is the one filling the hole', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0, fate: dropFirstAt('ab', segmentOffsets([1])) };
    const t = oneWrite(link, 4 * 1448, { initialWindowSegments: 10 }, 1, 100 * MS, false);
    t.pair.run(2_000_000);
    assert.equal(t.got, 4 * 1448);
    const data = t.pair.data('ab');
    const serial = Math.ceil(((1448 + 20 + 12 + 40) * 8 * 1e6) / 10e6);
    const isnA = t.pair.isn('ab');
    const acks = t.pair.trace.filter((x) => x.dir === 'ba' && x.at > 100 * MS);
    // Segment 0 arrives in order (delayed ACK pending), 2 and 3 out of order: each is ACKed at once.
    // (A dropped segment never took the link's time: 2 left second, 3 third.)
    const arr2 = 100 * MS + 2 * serial + 10 * MS;
    const arr3 = 100 * MS + 3 * serial + 10 * MS;
    assert.equal(acks[0]!.at, arr2, 'the first out-of-order segment is ACKed on arrival');
    assert.equal((acks[0]!.seg.ack - isnA) >>> 0, 1 + 1448);
    assert.deepEqual(
      acks[0]!.seg.options.sack?.map((b) => [(b.left - isnA) >>> 0, (b.right - isnA) >>> 0]),
      [[1 + 2 * 1448, 1 + 3 * 1448]],
    );
    assert.equal(acks[1]!.at, arr3);
    assert.deepEqual(
      acks[1]!.seg.options.sack?.map((b) => [(b.left - isnA) >>> 0, (b.right - isnA) >>> 0]),
      [[1 + 2 * 1448, 1 + 4 * 1448]],
    );
    // The retransmission fills the hole: its ACK is immediate and covers everything.
    const rtx = data.filter((d) => d.seq === 1 + 1448)[1]!;
    const fill = acks.find((a) => (a.seg.ack - isnA) >>> 0 === 1 + 4 * 1448)!;
    assert.ok(fill, 'a cumulative ACK for all');
    assert.equal(fill.at, rtx.at + serial + 10 * MS, 'sent as the hole filled');
    assert.equal(fill.seg.options.sack, undefined, 'no SACK left to report');
  });
});

describe('tcp zero-window probing', () => {
  for (const buf of [16 * 1448, 16_384]) {
    test(`a receiver that stops reading (buffer ${buf}): probes back off, never give up, and the transfer completes once it reads`, () => {
      const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
      const pair = new TcpPair(link, 1, { maxRetransmits: 3, timeWaitMs: 100 }, { timeWaitMs: 100 });
      const r = bulk(pair, { ab: 100_000, readB: false, cfgB: { receiveBufferBytes: buf } });
      const readAt = 120_000 * MS;
      pair.at(readAt, (now) => r.drain('b', now));
      const onEvent = pair.onEvent;
      pair.onEvent = (side, e, now) => {
        onEvent(side, e, now);
        if (side === 'b' && e.event === 'readable' && now >= readAt) r.drain('b', now);
      };
      pair.run(readAt - 1);
      const c = r.client!;
      assert.equal(c.state, 'FIN-WAIT-1', 'still open after two minutes of a closed window');
      assert.equal(r.server!.readable, buf, 'the receive buffer is full');
      assert.equal(r.server!.seq.rcvWnd, 0, 'its window is closed');
      const probes = pair.data('ab').filter((d) => d.len === 1);
      assert.ok(probes.length >= 6, `probes sent (${probes.length})`);
      const gaps = probes.slice(1).map((p, i) => p.at - probes[i]!.at);
      for (let i = 1; i < gaps.length; i++) {
        assert.ok(gaps[i]! >= gaps[i - 1]!, `probe intervals never shrink (${gaps.join(', ')})`);
      }
      assert.ok(
        gaps.slice(0, 4).every((g, i) => i === 0 || g === 2 * gaps[i - 1]!),
        `probe intervals double (${gaps.join(', ')})`,
      );
      assert.ok(gaps.at(-1)! <= 60_000 * MS, 'capped at maxRtoMs');
      // Each probe was answered with a zero window.
      assert.ok(
        probes.every((p) => p.seq === probes[0]!.seq),
        'probes repeat the first byte past the window',
      );
      assert.equal(c.stats.zeroWindowProbes, probes.length);
      assert.equal(c.stats.fastRetransmits, 0, 'answers to probes are no duplicate ACKs');
      assert.equal(c.stats.timeouts, 0, 'no retransmission timeout while persisting');
      pair.run(300_000 * MS);
      assert.equal(r.ab.got, 100_000);
      assert.equal(r.ab.bad, 0);
      assert.ok(r.ab.eof, 'end of stream');
      assert.equal(c.state, 'CLOSED');
      assert.ok(r.ab.eofAt! < readAt + 2_000 * MS, 'resumed at once');
    });
  }

  test('data exactly filling the window, then close: the FIN is probed into the closed window and goes through once it opens', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
    const pair = new TcpPair(link, 1, { timeWaitMs: 100 }, { timeWaitMs: 100 });
    const buf = 16 * 1448;
    const r = bulk(pair, { ab: buf, readB: false, cfgB: { receiveBufferBytes: buf } });
    const readAt = 30_000 * MS;
    pair.at(readAt, (now) => r.drain('b', now));
    pair.run(readAt - 1);
    const c = r.client!;
    assert.equal(c.state, 'FIN-WAIT-1');
    assert.equal(c.seq.una, buf + 1, 'all data acknowledged, the FIN not');
    const finProbes = pair.trace.filter((t) => t.dir === 'ab' && t.seg.flags & 0x01);
    assert.ok(finProbes.length >= 3, `the FIN went out as the probe, again and again (${finProbes.length})`);
    assert.ok(finProbes.length <= 10, `on the persist timer's backoff, not at every ACK (${finProbes.length} in 30 s)`);
    const gaps = finProbes.slice(1).map((t, i) => t.at - finProbes[i]!.at);
    assert.ok(
      gaps.every((g, i) => i === 0 || g >= gaps[i - 1]!),
      `FIN probes back off (${gaps.join(', ')})`,
    );
    assert.equal(c.stats.timeouts, 0);
    pair.run(readAt + 10_000 * MS);
    assert.equal(r.ab.got, buf);
    assert.ok(r.ab.eof, 'end of stream after the read');
    assert.ok(r.ab.eofAt! - readAt < 100 * MS, `the FIN went through at once (${r.ab.eofAt! - readAt} us)`);
    assert.equal(c.state, 'CLOSED');
  });

  test("a lost window update: the sender's probe finds the open window", () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
    const pair = new TcpPair(link, 1, { timeWaitMs: 100 }, { timeWaitMs: 100 });
    const r = bulk(pair, { ab: 60_000, readB: false, cfgB: { receiveBufferBytes: 16 * 1448 } });
    const readAt = 5_000 * MS;
    let lostUpdate = false;
    pair.link.fate = (seg, dir) => {
      if (dir === 'ba' && pair.now === readAt && seg.window > 0 && !lostUpdate) {
        lostUpdate = true;
        return { drop: true };
      }
      return undefined;
    };
    pair.at(readAt, (now) => r.drain('b', now));
    const onEvent = pair.onEvent;
    pair.onEvent = (side, e, now) => {
      onEvent(side, e, now);
      if (side === 'b' && e.event === 'readable' && now >= readAt) r.drain('b', now);
    };
    pair.run(60_000 * MS);
    assert.ok(lostUpdate, 'the window update was lost');
    assert.equal(r.ab.got, 60_000);
    assert.equal(r.ab.bad, 0);
    assert.ok(r.ab.eof, 'end of stream');
  });

  test('a window smaller than a segment, and no more: the persist timer sends what fits (SWS override)', () => {
    const link: LinkParams = { delayUs: 10 * MS, rateBps: 10e6, queuePackets: 0 };
    const pair = new TcpPair(link, 1, { timeWaitMs: 100 }, { timeWaitMs: 100 });
    // 16 384 bytes hold 11 full segments and 456 bytes.
    const r = bulk(pair, { ab: 30_000, readB: false, cfgB: { receiveBufferBytes: 16_384 } });
    pair.run(2_000 * MS);
    assert.equal(r.server!.readable, 16_384, 'the runt went out to fill the window');
    const runt = pair.data('ab').find((d) => d.len === 456);
    assert.ok(runt, 'a 456-byte segment');
  });
});
