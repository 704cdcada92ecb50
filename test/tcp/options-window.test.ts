import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TcpConfig } from '../../src/tcp/connection.js';
import { TCP_ACK } from '../../src/wire/tcp.js';
import { DirectPair, TcpPair, bulk, type LinkParams } from '../support/tcp-net.js';

const MB = 1 << 20;
/** 100 Mb/s, 50 ms each way: a bandwidth-delay product of 1.25 MB. */
const LFN: LinkParams = { delayUs: 50_000, rateBps: 100e6, queuePackets: 0 };

function fat(cfgA: Partial<TcpConfig>, cfgB: Partial<TcpConfig>, bytes = 1_500_000) {
  const pair = new TcpPair(LFN, 41, { sendBufferBytes: MB, timeWaitMs: 100, ...cfgA }, { timeWaitMs: 100 });
  const r = bulk(pair, { ab: bytes, cfgB: { receiveBufferBytes: MB, ...cfgB } });
  let maxFlight = 0;
  pair.onInput = (side) => {
    if (side === 'a' && r.client) maxFlight = Math.max(maxFlight, r.client.seq.max - r.client.seq.una);
  };
  pair.run(60_000_000);
  assert.equal(r.ab.got, bytes);
  assert.equal(r.ab.bad, 0);
  return { pair, r, maxFlight: () => maxFlight };
}

describe('tcp window scaling', () => {
  test('a 1 MiB receive buffer: shift 5, and far more than 65535 bytes in flight on a long fat link', () => {
    const { pair, r, maxFlight } = fat({}, {});
    assert.equal(r.server!.negotiated.rcvWscale, 5);
    assert.equal(r.client!.negotiated.sndWscale, 5);
    assert.equal(r.client!.negotiated.windowScale, true);
    assert.ok(maxFlight() > 4 * 65535, `in flight up to ${maxFlight()} bytes`);
    // The window fields B sent, scaled, said more than 65535.
    const acks = pair.trace.filter((t) => t.dir === 'ba' && !(t.seg.flags & 0x02));
    const widest = Math.max(...acks.map((t) => t.seg.window));
    assert.ok(widest * 32 > 65535 * 4, `B offered ${widest} << 5`);
    assert.ok(widest <= MB / 32, 'never more than the buffer');
    assert.ok(r.client!.seq.wnd > 65535, 'the sender holds a scaled window');
  });

  for (const off of ['sender', 'receiver'] as const) {
    test(`no scaling when the ${off} does not offer it: windows stay within 65535 and are read unscaled`, () => {
      const { pair, r, maxFlight } = fat(off === 'sender' ? { windowScale: false } : {}, off === 'receiver' ? { windowScale: false } : {}, 1_000_000);
      assert.equal(r.client!.negotiated.windowScale, false);
      assert.equal(r.server!.negotiated.windowScale, false);
      assert.equal(r.client!.negotiated.sndWscale, 0);
      const acks = pair.trace.filter((t) => t.dir === 'ba' && t.seg.flags === TCP_ACK);
      // The receiver's buffer is 1 MiB: it offers all a 16-bit field holds, unshifted.
      assert.ok(acks.length > 10, 'ACKs seen');
      assert.ok(
        acks.slice(0, -1).every((t) => t.seg.window === 65535),
        `B offers 65535 (saw ${[...new Set(acks.map((t) => t.seg.window))].join(', ')})`,
      );
      assert.ok(maxFlight() <= 65535, 'never more than 65535 in flight');
      assert.ok(maxFlight() > 60_000, `the whole unscaled window used (${maxFlight()})`);
      assert.equal(r.client!.seq.wnd, 65535);
    });
  }
});

describe('tcp timestamps and PAWS', () => {
  function established() {
    const d = new DirectPair({ noDelay: true }, { noDelay: true });
    d.now = 1_000_000;
    d.open();
    d.now = 2_000_000;
    return d;
  }

  test('a segment with an old timestamp is dropped (RFC 7323 5.3) and answered with an ACK; the same data with a fresh one is taken', () => {
    const d = established();
    d.b.write(Uint8Array.of(1, 2, 3, 4), d.now);
    const [seg] = d.take('b');
    assert.ok(seg && seg.options.timestamp, 'a data segment with timestamps');
    assert.equal(seg.options.timestamp.value, 2000);
    const stale = { ...seg, options: { ...seg.options, timestamp: { value: 500, echo: seg.options.timestamp.echo } } };
    d.input('a', stale);
    assert.equal(d.a.readable, 0, 'not delivered');
    assert.equal(d.a.stats.outOfWindow, 1);
    assert.equal(d.a.seq.rcvNxt, 1);
    const [ack] = d.take('a');
    assert.ok(ack, 'an ACK answers');
    assert.equal(ack.ack, d.wireSeq('b', 1));
    d.input('a', seg);
    assert.deepEqual([...d.a.read(Infinity, d.now)], [1, 2, 3, 4]);
  });

  test('PAWS compares in 32-bit wrapping order: a TSval 2^31 + 5 ahead counts as old', () => {
    const d = established();
    d.b.write(Uint8Array.of(9), d.now);
    const [seg] = d.take('b');
    const ts = seg!.options.timestamp!;
    d.input('a', { ...seg!, options: { ...seg!.options, timestamp: { value: (ts.value + 2 ** 31 + 5) >>> 0, echo: ts.echo } } });
    assert.equal(d.a.readable, 0);
    assert.equal(d.a.stats.outOfWindow, 1);
  });

  test('a RST is exempt from PAWS', () => {
    const d = established();
    d.input('a', {
      srcPort: 80,
      dstPort: 40000,
      seq: d.wireSeq('b', 1),
      ack: 0,
      flags: 0x04,
      window: 0,
      urgent: 0,
      options: { timestamp: { value: 1, echo: 0 } },
      payload: new Uint8Array(0),
    });
    assert.equal(d.a.state, 'CLOSED');
  });

  test("TSecr echoes the TSval of the segment that advanced the left edge; segments carry the sender's clock in ms", () => {
    const d = established();
    d.b.write(Uint8Array.of(1), d.now);
    d.deliver('b');
    d.advance(2_500_000);
    const ack = d.take('a').at(-1)!;
    assert.deepEqual(ack.options.timestamp, { value: 2040, echo: 2000 }, 'the delayed ACK left at 2.04 s, echoing 2000');
  });
});

describe('tcp SACK negotiation on the receiver', () => {
  test('no SACK blocks go out when SACK was not negotiated, even with data out of order', () => {
    const link: LinkParams = {
      delayUs: 5_000,
      rateBps: 0,
      queuePackets: 0,
      fate: (seg, dir, i) => (dir === 'ab' && seg.payload.length > 0 && i % 7 === 3 ? { drop: false, delayUs: 4_000 } : undefined),
    };
    const pair = new TcpPair(link, 42, { sack: false, timeWaitMs: 100 }, { timeWaitMs: 100 });
    const r = bulk(pair, { ab: 100_000 });
    pair.run(10_000_000);
    assert.equal(r.ab.got, 100_000);
    assert.equal(r.ab.bad, 0);
    assert.ok(
      pair.trace.every((t) => t.seg.options.sack === undefined),
      'no SACK option anywhere',
    );
    assert.ok(
      pair.trace.some((t) => t.dir === 'ba' && t.seg.options.sackPermitted === undefined && t.seg.flags & 0x02),
      'SYN-ACK without SACK-permitted',
    );
  });
});
