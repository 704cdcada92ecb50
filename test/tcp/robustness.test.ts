import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_TCP_CONFIG, TcpConnection, TcpError } from '../../src/tcp/connection.js';
import { TcpStack } from '../../src/tcp/stack.js';
import { Rng } from '../../src/core/rng.js';
import { TCP_ACK, TCP_SYN, ipv4, type TcpOptions, type TcpSegment } from '../../src/wire/tcp.js';
import { DirectPair } from '../support/tcp-net.js';

const EMPTY = new Uint8Array(0);

/** A server connection past its handshake with a peer that offered `options` (its ISN 500, ours 1000). */
function accepted(options: TcpOptions, cfg = {}): TcpConnection {
  const c = new TcpConnection({ ...DEFAULT_TCP_CONFIG, timestamps: false, ...cfg }, 80, 1234, 1000);
  c.listen();
  const seg = (over: Partial<TcpSegment>): TcpSegment => ({
    srcPort: 1234,
    dstPort: 80,
    seq: 500,
    ack: 0,
    flags: TCP_SYN,
    window: 65535,
    urgent: 0,
    options: {},
    payload: EMPTY,
    ...over,
  });
  c.handle(seg({ options }), 1000);
  c.handle(seg({ seq: 501, ack: 1001, flags: TCP_ACK }), 2000);
  c.poll();
  return c;
}

describe('robustness', () => {
  test('two ends that both timed out settle: bare ACKs go at SND.MAX, not the rewound SND.NXT', () => {
    const p = new DirectPair({ timestamps: false }, { timestamps: false });
    p.open();
    const data = new Uint8Array(2 * 1460);
    p.a.write(data, p.now);
    p.b.write(data, p.now);
    p.now += 1000;
    const fromA = p.take('a');
    const fromB = p.take('b');
    for (const s of fromA) p.input('b', s);
    for (const s of fromB) p.input('a', s);
    p.advance(p.now + 100_000);
    p.take('a'); // every ACK lost
    p.take('b');
    p.advance(p.now + 1_100_000); // both retransmission timers fire: SND.NXT rewinds on both sides
    assert.ok(p.a.stats.timeouts >= 1 && p.a.seq.nxt < p.a.seq.max, `a timed out and rewound: ${JSON.stringify(p.a.seq)}`);
    assert.ok(p.b.stats.timeouts >= 1 && p.b.seq.nxt < p.b.seq.max, `b timed out and rewound: ${JSON.stringify(p.b.seq)}`);
    let rounds = 0;
    for (; rounds < 100; rounds++) {
      p.collect();
      if (p.queue.a.length === 0 && p.queue.b.length === 0) break;
      p.deliver('a');
      p.deliver('b');
    }
    assert.ok(rounds < 10, `the exchange settled after ${rounds} rounds`);
    assert.equal(p.a.seq.una, 2921, 'a: everything acknowledged');
    assert.equal(p.b.seq.una, 2921, 'b: everything acknowledged');
  });

  test('a peer MSS too small to carry data is raised to 64: the connection still sends', () => {
    for (const mss of [0, 1, 12]) {
      const c = accepted({ mss });
      c.write(new Uint8Array(500), 3000);
      const out = c.poll().flatMap((a) => (a.kind === 'segment' ? [a.seg] : []));
      assert.ok(c.sendMss >= 1, `mss ${mss}: send MSS ${c.sendMss}`);
      assert.ok(out.length > 0 && out.every((s) => s.payload.length === 64), `mss ${mss}: ${out.map((s) => s.payload.length)}`);
    }
  });

  test('an out-of-order segment received 5000 times is held once and counted as duplicate bytes once each', () => {
    const c = accepted({ mss: 1460, sackPermitted: true });
    const data = new Uint8Array(1460);
    for (let i = 0; i < 5000; i++) {
      c.handle({ srcPort: 1234, dstPort: 80, seq: 501 + 1460, ack: 1001, flags: TCP_ACK, window: 65535, urgent: 0, options: {}, payload: data }, 3000 + i);
      c.poll();
    }
    assert.equal(c.stats.duplicateBytes, 4999 * 1460);
    // Overlapping pieces: only the new part is kept.
    c.handle({ srcPort: 1234, dstPort: 80, seq: 501 + 730, ack: 1001, flags: TCP_ACK, window: 65535, urgent: 0, options: {}, payload: data }, 9000);
    assert.equal(c.stats.duplicateBytes, 4999 * 1460 + 730);
    c.handle({ srcPort: 1234, dstPort: 80, seq: 501, ack: 1001, flags: TCP_ACK, window: 65535, urgent: 0, options: {}, payload: new Uint8Array(730) }, 9001);
    assert.equal(c.readable, 730 + 730 + 1460, 'the hole filled, everything in order');
  });

  test('SACK blocks ride only where they fit in the MSS with the payload (RFC 6691)', () => {
    const c = accepted({ mss: 1460, sackPermitted: true }, { noDelay: true });
    c.handle(
      { srcPort: 1234, dstPort: 80, seq: 501 + 1460, ack: 1001, flags: TCP_ACK, window: 65535, urgent: 0, options: {}, payload: new Uint8Array(100) },
      3000,
    );
    const bare = c.poll().flatMap((a) => (a.kind === 'segment' ? [a.seg] : []));
    assert.equal(bare.length, 1);
    assert.equal(bare[0]!.options.sack?.length, 1, 'the duplicate ACK reports the block');
    c.write(new Uint8Array(1460 + 1000), 4000);
    const data = c.poll().flatMap((a) => (a.kind === 'segment' ? [a.seg] : []));
    assert.deepEqual(
      data.map((x) => [x.payload.length, x.options.sack?.length ?? 0]),
      [
        [1460, 0],
        [1000, 1],
      ],
      'a full segment has no room for a block; a shorter one has',
    );
  });

  test('a configuration no connection can run with is refused when the listener is set up, naming the field', () => {
    const stack = new TcpStack(ipv4(10, 0, 0, 1), Rng.fromSeed(1));
    assert.throws(
      () => stack.listen(80, () => undefined, { mss: 10 }),
      (e: unknown) => e instanceof TcpError && /tcp\.mss: 10/.test(e.message),
    );
    assert.throws(
      () => stack.listen(81, () => undefined, { minRtoMs: 5000, maxRtoMs: 1000 }),
      (e: unknown) => e instanceof TcpError && /tcp\.minRtoMs/.test(e.message),
    );
    assert.throws(
      () => new TcpStack(ipv4(10, 0, 0, 1), Rng.fromSeed(1), { receiveBufferBytes: 0 }),
      (e: unknown) => e instanceof TcpError && /receiveBufferBytes/.test(e.message),
    );
  });
});
