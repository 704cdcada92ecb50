import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CC_NAMES, type CcName } from '../../src/tcp/cc/index.js';
import { formatSegment } from '../../src/wire/tcp.js';
import { DirectPair, TcpPair, bulk, pattern, patternByte, type LinkParams } from '../support/tcp-net.js';

const BASE: LinkParams = { delayUs: 10_000, rateBps: 10e6, queuePackets: 100 };
const FAST_CLOSE = { timeWaitMs: 500 };

describe('tcp data transfer', () => {
  test('a lossless transfer arrives whole and in order, and both ends close', () => {
    const pair = new TcpPair({ ...BASE, queuePackets: 0 }, 11, FAST_CLOSE, FAST_CLOSE);
    const r = bulk(pair, { ab: 500_000 });
    pair.run(30_000_000);
    assert.equal(r.ab.got, 500_000);
    assert.equal(r.ab.bad, 0, `first bad byte at ${r.ab.firstBad}`);
    assert.ok(r.ab.eof, 'end of stream seen');
    assert.ok(r.client && r.server, 'both ends exist');
    assert.equal(r.client.state, 'CLOSED');
    assert.equal(r.server.state, 'CLOSED');
    assert.equal(r.client.stats.retransmittedSegments, 0);
    assert.equal(pair.trace.filter((t) => t.dropped).length, 0);
    assert.equal(r.server.stats.bytesReceived, 500_000);
    // Full-sized segments (MSS 1460 less 12 bytes of timestamps), the last one a runt.
    const sizes = pair.data('ab').map((d) => d.len);
    assert.ok(
      sizes.slice(0, -1).every((n) => n === 1448),
      'full segments but the last',
    );
  });

  for (const cc of CC_NAMES) {
    test(`${cc}: random loss in both directions, every byte checked`, () => {
      let drops = 0;
      const pair = new TcpPair(
        {
          ...BASE,
          fate: (seg, _dir, _i, rng) => {
            if (seg.flags & 0x02) return undefined; // keep the handshake
            if (rng.next() < 0.03) {
              drops++;
              return { drop: true };
            }
            return undefined;
          },
        },
        12,
        { congestion: cc, ...FAST_CLOSE },
        FAST_CLOSE,
      );
      const r = bulk(pair, { ab: 400_000 });
      pair.run(120_000_000);
      assert.ok(drops > 5, `the link dropped something (${drops})`);
      assert.equal(r.ab.got, 400_000);
      assert.equal(r.ab.bad, 0, `first bad byte at ${r.ab.firstBad}`);
      assert.ok(r.ab.eof, 'end of stream seen');
      assert.ok(r.client && r.client.stats.retransmittedSegments > 0, 'something was retransmitted');
      assert.equal(r.client.state, 'CLOSED');
    });
  }

  test('reordering: segments overtaking each other are put back in order', () => {
    let delayed = 0;
    const pair = new TcpPair(
      {
        ...BASE,
        rateBps: 0,
        fate: (seg, dir, _i, rng) => {
          if (dir !== 'ab' || seg.payload.length === 0) return undefined;
          if (rng.next() < 0.3) {
            delayed++;
            return { drop: false, delayUs: rng.int(1_000, 15_000) };
          }
          return undefined;
        },
      },
      13,
      FAST_CLOSE,
      FAST_CLOSE,
    );
    const r = bulk(pair, { ab: 300_000 });
    pair.run(60_000_000);
    assert.ok(delayed > 20, 'the link reordered');
    assert.equal(r.ab.got, 300_000);
    assert.equal(r.ab.bad, 0, `first bad byte at ${r.ab.firstBad}`);
    assert.ok(r.ab.eof, 'end of stream seen');
    assert.ok(r.server, 'server exists');
    // Out-of-order arrivals were answered at once with SACK blocks.
    const sacks = pair.trace.filter((t) => t.dir === 'ba' && (t.seg.options.sack?.length ?? 0) > 0);
    assert.ok(sacks.length > 0, 'the receiver sent SACK blocks');
  });

  for (const cc of ['newreno', 'sack'] as CcName[]) {
    test(`${cc}: both directions at once, with loss and reordering`, () => {
      const pair = new TcpPair(
        {
          ...BASE,
          fate: (seg, _dir, _i, rng) => {
            if (seg.flags & 0x02) return undefined;
            const x = rng.next();
            if (x < 0.02) return { drop: true };
            if (x < 0.12) return { drop: false, delayUs: rng.int(500, 8_000) };
            return undefined;
          },
        },
        14,
        { congestion: cc, ...FAST_CLOSE },
        { congestion: cc, ...FAST_CLOSE },
      );
      const r = bulk(pair, { ab: 300_000, ba: 250_000 });
      pair.run(120_000_000);
      assert.equal(r.ab.got, 300_000);
      assert.equal(r.ab.bad, 0, `A to B: first bad byte at ${r.ab.firstBad}`);
      assert.equal(r.ba.got, 250_000);
      assert.equal(r.ba.bad, 0, `B to A: first bad byte at ${r.ba.firstBad}`);
      assert.ok(r.ab.eof && r.ba.eof, 'both ends saw end of stream');
      assert.ok(r.client && r.server, 'both ends exist');
      assert.equal(r.client.state, 'CLOSED');
      assert.equal(r.server.state, 'CLOSED');
      // Both carried data and acknowledgments in the same segments.
      const piggy = pair.trace.filter((t) => t.dir === 'ba' && t.seg.payload.length > 0 && t.seg.ack !== pair.trace[1]!.seg.ack);
      assert.ok(piggy.length > 0, "B's data segments acknowledge A's data");
      assert.ok(r.client.stats.retransmittedSegments > 0 && r.server.stats.retransmittedSegments > 0, 'both ends recovered losses');
    });
  }

  test('sequence numbers wrap past 2^32 without a hiccup', () => {
    const d = new DirectPair({ noDelay: true }, {}, 0xffff_f000, 0xffff_ff00);
    d.open();
    const total = 100_000;
    let written = 0;
    let got = 0;
    let bad = 0;
    for (let round = 0; round < 1000 && got < total; round++) {
      if (written < total) written += d.a.write(pattern(written, Math.min(8192, total - written)), d.now);
      d.exchange();
      const data = d.b.read(Infinity, d.now);
      for (let k = 0; k < data.length; k++) if (data[k] !== patternByte(got + k)) bad++;
      got += data.length;
      d.exchange();
      d.advance(d.now + 50_000);
    }
    assert.equal(got, total);
    assert.equal(bad, 0);
    assert.equal(d.a.seq.una, total + 1);
    const wrapped = d.sent.a.some((s) => s.seq < 0x1000_0000 && s.payload.length > 0);
    assert.ok(wrapped, 'the wire sequence numbers wrapped');
    assert.equal(d.a.stats.retransmittedSegments, 0);
  });

  test('sequence numbers wrap under loss: SACK blocks and retransmissions across 2^32', () => {
    // Seed 24259 draws the client an ISN of 0xffff531d: its stream wraps after 44 KiB.
    const pair = new TcpPair(
      { ...BASE, fate: (seg, dir, _i, rng) => (dir === 'ab' && seg.payload.length > 0 && rng.next() < 0.04 ? { drop: true } : undefined) },
      24259,
      { congestion: 'sack', ...FAST_CLOSE },
      FAST_CLOSE,
    );
    const r = bulk(pair, { ab: 300_000 });
    pair.run(60_000_000);
    assert.ok(r.client!.iss > 0xffff_0000, 'an ISN just below 2^32');
    assert.equal(r.ab.got, 300_000);
    assert.equal(r.ab.bad, 0, `first bad byte at ${r.ab.firstBad}`);
    assert.ok(r.ab.eof, 'end of stream');
    const lowSeq = pair.data('ab').filter((d) => d.seg.seq < 0x1000_0000);
    assert.ok(lowSeq.length > 50, 'most data went out with wrapped sequence numbers');
    const sackAfterWrap = pair.trace.filter((t) => t.dir === 'ba' && (t.seg.options.sack ?? []).some((b) => b.left < 0x1000_0000));
    assert.ok(sackAfterWrap.length > 0, 'SACK blocks in the wrapped space');
    assert.ok(r.client!.stats.fastRetransmits > 0, 'recovered by SACK');
  });

  test('determinism: the same seed gives the identical trace, another seed another one', () => {
    const run = (seed: number) => {
      const pair = new TcpPair(
        {
          ...BASE,
          fate: (_s, _d, _i, rng) => (rng.next() < 0.02 ? { drop: true } : rng.next() < 0.05 ? { drop: false, delayUs: rng.int(0, 5000) } : undefined),
        },
        seed,
        FAST_CLOSE,
        FAST_CLOSE,
      );
      bulk(pair, { ab: 200_000, ba: 50_000 });
      pair.run(60_000_000);
      return pair.trace.map((t) => `${t.at} ${t.dir} ${t.dropped ? 'x' : ' '} ${formatSegment(t.seg)}`).join('\n');
    };
    const one = run(21);
    assert.ok(one.length > 1000, 'a real trace');
    assert.equal(run(21), one);
    assert.notEqual(run(22), one);
  });
});
