import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TcpError, type TcpEvent, type TcpState } from '../../src/tcp/connection.js';
import { TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, type TcpSegment } from '../../src/wire/tcp.js';
import { DirectPair, TcpPair, bulk, type LinkParams } from '../support/tcp-net.js';

const LINK: LinkParams = { delayUs: 10_000, rateBps: 10e6, queuePackets: 0 };
const TW = { timeWaitMs: 2_000 };

function rst(seq: number, ack = 0, flags = TCP_RST, from: 'a' | 'b' = 'b'): TcpSegment {
  const [srcPort, dstPort] = from === 'b' ? [80, 40000] : [40000, 80];
  return { srcPort, dstPort, seq, ack, flags, window: 0, urgent: 0, options: {}, payload: new Uint8Array(0) };
}

/** A DirectPair brought to the point where `side` is in `state`; queued segments are dropped. */
function reach(state: TcpState): { d: DirectPair; side: 'a' | 'b'; expect: TcpEvent } {
  const d = new DirectPair({ timeWaitMs: 1_000 }, { timeWaitMs: 1_000 });
  if (state === 'SYN-RECEIVED') {
    d.b.listen();
    d.a.connect(0);
    d.deliver('a');
    d.take('b');
    return { d, side: 'b', expect: 'reset' };
  }
  d.open();
  d.now = 10_000;
  const closeA = () => {
    d.a.close(d.now);
    d.deliver('a'); // FIN to B
    d.deliver('b'); // its ACK to A
  };
  switch (state) {
    case 'ESTABLISHED':
      return { d, side: 'a', expect: 'reset' };
    case 'FIN-WAIT-1':
      d.a.close(d.now);
      d.take('a');
      return { d, side: 'a', expect: 'reset' };
    case 'FIN-WAIT-2':
      closeA();
      return { d, side: 'a', expect: 'reset' };
    case 'CLOSE-WAIT':
      closeA();
      return { d, side: 'b', expect: 'reset' };
    case 'LAST-ACK':
      closeA();
      d.b.close(d.now);
      d.take('b');
      return { d, side: 'b', expect: 'closed' };
    case 'TIME-WAIT':
      closeA();
      d.b.close(d.now);
      d.deliver('b');
      d.take('a');
      return { d, side: 'a', expect: 'closed' };
    case 'CLOSING': {
      d.a.close(d.now);
      d.b.close(d.now);
      const [finA] = d.take('a');
      const [finB] = d.take('b');
      d.input('b', finA!);
      d.input('a', finB!);
      d.take('a');
      d.take('b');
      return { d, side: 'a', expect: 'closed' };
    }
    default:
      throw new Error(`no recipe for ${state}`);
  }
}

describe('tcp orderly close', () => {
  test('the active closer passes FIN-WAIT-1, FIN-WAIT-2 and TIME-WAIT (timeWaitMs long); the passive one CLOSE-WAIT and LAST-ACK', () => {
    const pair = new TcpPair(LINK, 31, TW, TW);
    const r = bulk(pair, { ab: 50_000 });
    pair.run(20_000_000);
    assert.equal(r.ab.got, 50_000);
    const c = r.client!;
    const s = r.server!;
    assert.deepEqual(pair.history(c), ['SYN-SENT', 'ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2', 'TIME-WAIT', 'CLOSED']);
    assert.deepEqual(pair.history(s), ['SYN-RECEIVED', 'ESTABLISHED', 'CLOSE-WAIT', 'LAST-ACK', 'CLOSED']);
    const h = pair.states.get(c)!;
    const tw = h.find((x) => x.state === 'TIME-WAIT')!;
    const closed = h.find((x) => x.state === 'CLOSED')!;
    assert.equal(closed.at - tw.at, 2_000_000, 'TIME-WAIT lasts timeWaitMs');
    assert.deepEqual(
      pair.events.filter((e) => e.conn === c).map((e) => e.event),
      ['connected', 'eof', 'closed'],
    );
    assert.deepEqual(
      pair.events
        .filter((e) => e.conn === s)
        .map((e) => e.event)
        .slice(-2),
      ['eof', 'closed'],
    );
    assert.equal(pair.a.connections().length, 0);
    assert.equal(pair.b.connections().length, 0);
    // One FIN each way, each acknowledged.
    assert.equal(pair.trace.filter((t) => t.seg.flags & TCP_FIN).length, 2);
  });

  test('the server closes first: it is the one in TIME-WAIT', () => {
    const pair = new TcpPair(LINK, 32, TW, TW);
    const r = bulk(pair, { ab: 0, ba: 30_000 });
    pair.run(20_000_000);
    assert.equal(r.ba.got, 30_000);
    assert.equal(r.ba.bad, 0);
    assert.deepEqual(pair.history(r.server!), ['SYN-RECEIVED', 'ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2', 'TIME-WAIT', 'CLOSED']);
    assert.deepEqual(pair.history(r.client!), ['SYN-SENT', 'ESTABLISHED', 'CLOSE-WAIT', 'LAST-ACK', 'CLOSED']);
  });

  test('half close: data keeps flowing to an end in FIN-WAIT-2', () => {
    const pair = new TcpPair(LINK, 33, TW, TW);
    const r = bulk(pair, { ab: 1_000, ba: 200_000 });
    pair.run(20_000_000);
    assert.equal(r.ab.got, 1_000);
    assert.equal(r.ba.got, 200_000);
    assert.equal(r.ba.bad, 0);
    const h = pair.states.get(r.client!)!;
    const fw2 = h.find((x) => x.state === 'FIN-WAIT-2')!;
    assert.ok(fw2, 'the client reached FIN-WAIT-2');
    const dataAfter = pair.trace.filter((t) => t.dir === 'ba' && t.seg.payload.length > 0 && t.at > fw2.at);
    assert.ok(dataAfter.length > 10, "the server sent data after the client's FIN was acknowledged");
    assert.ok(pair.history(r.client!).includes('TIME-WAIT'), 'the client closed last through TIME-WAIT');
  });

  test('close in SYN-RECEIVED: the FIN follows once the handshake completes', () => {
    const d = new DirectPair();
    d.b.listen();
    d.a.connect(0);
    d.deliver('a');
    assert.equal(d.b.state, 'SYN-RECEIVED');
    d.b.close(1);
    assert.equal(d.b.state, 'SYN-RECEIVED');
    d.deliver('b'); // SYN-ACK
    d.deliver('a'); // ACK
    assert.equal(d.b.state, 'FIN-WAIT-1');
    const [fin] = d.take('b');
    assert.ok(fin && fin.flags & TCP_FIN, 'the FIN went out');
    d.input('a', fin);
    assert.equal(d.a.state, 'CLOSE-WAIT');
    d.exchange();
    assert.equal(d.b.state, 'FIN-WAIT-2');
  });

  test('close in SYN-SENT just forgets the connection', () => {
    const d = new DirectPair();
    d.a.connect(0);
    d.take('a');
    d.a.close(1);
    assert.equal(d.a.state, 'CLOSED');
    assert.equal(d.take('a').length, 0, 'nothing sent');
    assert.deepEqual(d.events.a, ['closed']);
    assert.equal(d.a.nextDeadline(), undefined, 'no SYN retransmission pending');
  });

  test('a FIN overtaking the data before it waits for that data', () => {
    const d = new DirectPair({ noDelay: true }, {});
    d.open();
    d.a.write(Uint8Array.of(1, 2, 3), 0);
    d.a.write(Uint8Array.of(4, 5, 6), 0);
    d.a.close(0);
    const segs = d.take('a');
    const fin = segs.at(-1)!;
    assert.ok(fin.flags & TCP_FIN, 'the last segment carries the FIN');
    // Everything but the first segment arrives first.
    for (const s of segs.slice(1)) d.input('b', s);
    assert.equal(d.b.state, 'ESTABLISHED', 'no CLOSE-WAIT before the missing data');
    assert.equal(d.b.readable, 0);
    assert.ok(!d.events.b.includes('eof'), 'no end of stream yet');
    d.input('b', segs[0]!);
    assert.equal(d.b.state, 'CLOSE-WAIT');
    assert.deepEqual([...d.b.read(Infinity, 1)], [1, 2, 3, 4, 5, 6]);
    assert.ok(d.events.b.includes('eof'), 'end of stream now');
    assert.equal(d.b.seq.rcvNxt, 8, 'data and FIN acknowledged');
  });

  test('simultaneous close: both ends pass CLOSING and TIME-WAIT', () => {
    const pair = new TcpPair(LINK, 34, TW, TW);
    const r = bulk(pair, { ab: 0 });
    pair.onEvent = () => undefined; // nobody closes on end of stream here
    pair.at(200_000, (now) => {
      r.client!.close(now);
      r.server!.close(now);
    });
    pair.run(20_000_000);
    for (const c of [r.client!, r.server!]) {
      const h = pair.history(c);
      assert.deepEqual(h.slice(-4), ['FIN-WAIT-1', 'CLOSING', 'TIME-WAIT', 'CLOSED']);
    }
    const fins = pair.trace.filter((t) => t.seg.flags & TCP_FIN);
    assert.deepEqual(
      fins.map((t) => t.at),
      [200_000, 200_000],
      'the FINs crossed',
    );
  });

  test('TIME-WAIT answers a retransmitted FIN with an ACK and starts over', () => {
    let serverFinSeen = false;
    let droppedAck = false;
    const link: LinkParams = {
      ...LINK,
      fate: (seg, dir) => {
        if (dir === 'ba' && seg.flags & TCP_FIN) serverFinSeen = true;
        // The client's ACK of the server's FIN is lost, once.
        if (dir === 'ab' && serverFinSeen && !droppedAck && seg.payload.length === 0 && seg.flags === TCP_ACK) {
          droppedAck = true;
          return { drop: true };
        }
        return undefined;
      },
    };
    const pair = new TcpPair(link, 35, TW, TW);
    const r = bulk(pair, { ab: 5_000 });
    pair.run(20_000_000);
    assert.ok(droppedAck, 'the last ACK was lost');
    const c = r.client!;
    const finsB = pair.trace.filter((t) => t.dir === 'ba' && t.seg.flags & TCP_FIN);
    assert.equal(finsB.length, 2, 'the server sent its FIN again');
    assert.equal(finsB[1]!.seg.seq, finsB[0]!.seg.seq);
    const answer = pair.trace.find((t) => t.dir === 'ab' && t.at > finsB[1]!.at)!;
    assert.ok(answer, 'the client answered');
    assert.equal(answer.seg.flags, TCP_ACK);
    assert.equal(answer.seg.ack, (finsB[1]!.seg.seq + 1) >>> 0, 'acknowledging the FIN');
    assert.ok(answer.at - finsB[1]!.at < 11_000, 'at once');
    const h = pair.states.get(c)!;
    assert.deepEqual(pair.history(c).slice(-2), ['TIME-WAIT', 'CLOSED']);
    const closedAt = h.find((x) => x.state === 'CLOSED')!.at;
    assert.equal(closedAt - answer.at, 2_000_000, 'TIME-WAIT restarted at the retransmitted FIN');
    assert.equal(r.server!.state, 'CLOSED');
    assert.deepEqual(
      pair.events
        .filter((e) => e.conn === r.server)
        .map((e) => e.event)
        .slice(-1),
      ['closed'],
    );
  });
});

describe('tcp reset', () => {
  test('SYN-SENT: only a RST acknowledging the SYN refuses the open', () => {
    const d = new DirectPair();
    d.a.connect(0);
    d.take('a');
    const iss1 = (d.a.iss + 1) >>> 0;
    d.input('a', rst(0, 0, TCP_RST));
    assert.equal(d.a.state, 'SYN-SENT', 'a RST without ACK is ignored');
    d.input('a', rst(0, (iss1 + 5) >>> 0, TCP_RST | TCP_ACK));
    assert.equal(d.a.state, 'SYN-SENT', 'a RST acknowledging something else is ignored');
    assert.equal(d.take('a').length, 0, 'and not answered');
    d.input('a', rst(0, iss1, TCP_RST | TCP_ACK));
    assert.equal(d.a.state, 'CLOSED');
    assert.deepEqual(d.events.a, ['refused']);
  });

  const STATES: TcpState[] = ['SYN-RECEIVED', 'ESTABLISHED', 'FIN-WAIT-1', 'FIN-WAIT-2', 'CLOSE-WAIT', 'CLOSING', 'LAST-ACK', 'TIME-WAIT'];
  for (const state of STATES) {
    test(`${state}: an exact RST resets, an in-window one gets a challenge ACK, one outside the window is ignored`, () => {
      // In window, not exact: a challenge ACK (RFC 5961 3.2), nothing else changes.
      {
        const { d, side } = reach(state);
        const conn = d.conn(side);
        const peer = side === 'a' ? 'b' : 'a';
        assert.equal(conn.state, state);
        const { una, nxt, max, rcvNxt } = conn.seq;
        const events = d.events[side].length;
        assert.ok(conn.seq.rcvWnd > 10, 'an open window');
        d.input(side, rst(d.wireSeq(peer, conn.seq.rcvNxt + 5), 0, TCP_RST, peer));
        assert.equal(conn.state, state, 'still there');
        assert.equal(conn.stats.challengeAcks, 1);
        const out = d.take(side);
        assert.equal(out.length, 1, 'one challenge ACK');
        assert.equal(out[0]!.flags & (TCP_ACK | TCP_RST | TCP_SYN), TCP_ACK);
        assert.equal(out[0]!.ack, d.wireSeq(peer, conn.seq.rcvNxt));
        assert.deepEqual({ ...conn.seq, wnd: 0, rcvWnd: 0 }, { una, nxt, max, rcvNxt, wnd: 0, rcvWnd: 0 });
        assert.equal(d.events[side].length, events, 'no event');
      }
      // Outside the window (above it and below RCV.NXT): dropped without a word.
      for (const off of [(c: { rcvNxt: number; rcvWnd: number }) => c.rcvNxt + c.rcvWnd + 100, (c: { rcvNxt: number }) => c.rcvNxt - 1000]) {
        const { d, side } = reach(state);
        const conn = d.conn(side);
        const peer = side === 'a' ? 'b' : 'a';
        d.input(side, rst(d.wireSeq(peer, off(conn.seq)), 0, TCP_RST, peer));
        assert.equal(conn.state, state);
        assert.equal(d.take(side).length, 0, 'no answer');
        assert.equal(conn.stats.challengeAcks, 0);
      }
      // Exact: CLOSED, except in TIME-WAIT, which RFC 1337 keeps whole (a RST there is ignored).
      {
        const { d, side, expect } = reach(state);
        const conn = d.conn(side);
        const peer = side === 'a' ? 'b' : 'a';
        d.input(side, rst(d.wireSeq(peer, conn.seq.rcvNxt), 0, TCP_RST, peer));
        if (state === 'TIME-WAIT') {
          assert.equal(conn.state, 'TIME-WAIT', 'RFC 1337: TIME-WAIT is not cut short');
          assert.equal(d.take(side).length, 0, 'a RST is never answered');
          return;
        }
        assert.equal(conn.state, 'CLOSED');
        assert.equal(d.events[side].at(-1), expect);
        assert.equal(d.take(side).length, 0, 'a RST is never answered');
        assert.equal(conn.nextDeadline(), undefined, 'no timer left');
      }
    });
  }

  test('abort() sends a RST the peer accepts; abort in SYN-SENT sends nothing', () => {
    const pair = new TcpPair(LINK, 36);
    const r = bulk(pair, { ab: 0 });
    pair.onEvent = () => undefined;
    pair.at(100_000, (now) => {
      r.client!.abort(now);
    });
    pair.run(1_000_000);
    const last = pair.trace.at(-1)!;
    assert.equal(last.dir, 'ab');
    assert.equal(last.seg.flags, TCP_RST);
    assert.equal(last.at, 100_000);
    assert.equal(r.client!.state, 'CLOSED');
    assert.equal(r.server!.state, 'CLOSED');
    assert.deepEqual(
      pair.events.filter((e) => e.event !== 'connected').map((e) => [e.side, e.event]),
      [
        ['a', 'closed'],
        ['b', 'reset'],
      ],
    );
    assert.equal(pair.a.connections().length + pair.b.connections().length, 0);

    const d = new DirectPair();
    d.a.connect(0);
    d.take('a');
    d.a.abort(1);
    assert.equal(d.take('a').length, 0);
    assert.equal(d.a.state, 'CLOSED');
  });

  test('write after close throws TcpError; close twice is harmless', () => {
    const d = new DirectPair();
    d.open();
    d.a.close(1);
    assert.throws(
      () => d.a.write(Uint8Array.of(1), 2),
      (e: unknown) => e instanceof TcpError && e.code === 'TCP_CLOSING',
    );
    d.a.close(3);
    assert.equal(d.a.state, 'FIN-WAIT-1');
    d.exchange();
    assert.equal(d.a.state, 'FIN-WAIT-2');
    assert.throws(() => d.a.write(Uint8Array.of(1), 4), TcpError);
    // The passive side may still write in CLOSE-WAIT, not after its own close.
    assert.equal(d.b.state, 'CLOSE-WAIT');
    assert.equal(d.b.write(Uint8Array.of(7, 7), 5), 2);
    d.b.close(6);
    assert.equal(d.b.state, 'LAST-ACK');
    assert.throws(() => d.b.write(Uint8Array.of(1), 7), TcpError);
    d.exchange();
    assert.deepEqual([...d.a.read(Infinity, 8)], [7, 7]);
    assert.equal(d.b.state, 'CLOSED');
    assert.equal(d.a.state, 'TIME-WAIT');
    const fresh = new DirectPair();
    assert.throws(() => fresh.a.write(Uint8Array.of(1), 0), TcpError, 'no write before an open');
  });
});

describe('tcp unacceptable segments (RFC 9293 3.10.7.4, RFC 5961)', () => {
  test('a SYN on an established connection gets a challenge ACK and changes nothing', () => {
    const { d } = reach('ESTABLISHED');
    const before = { ...d.a.seq };
    d.input('a', {
      srcPort: 80,
      dstPort: 40000,
      seq: d.wireSeq('b', 1),
      ack: 0,
      flags: TCP_SYN,
      window: 1000,
      urgent: 0,
      options: { mss: 1000 },
      payload: new Uint8Array(0),
    });
    assert.equal(d.a.state, 'ESTABLISHED');
    assert.equal(d.a.stats.challengeAcks, 1);
    const [ack] = d.take('a');
    assert.ok(ack, 'challenge ACK');
    assert.equal(ack.flags, TCP_ACK);
    assert.equal(ack.ack, d.wireSeq('b', before.rcvNxt));
    assert.equal(d.a.seq.una, before.una);
  });

  test('data outside the receive window is dropped and answered with an ACK; data partly inside is trimmed; the active opener takes all its SYN offered', () => {
    const cfg = { receiveBufferBytes: 1000, noDelay: true };
    const d = new DirectPair(cfg, cfg);
    d.open();
    const seg = (abs: number, len: number) => ({
      srcPort: 80,
      dstPort: 40000,
      seq: d.wireSeq('b', abs),
      ack: d.wireSeq('a', 1),
      flags: TCP_ACK,
      window: 1000,
      urgent: 0,
      options: {},
      payload: new Uint8Array(len).fill(9),
    });
    assert.equal(d.sent.a[0]!.window, 1000, 'the SYN offered 1000 bytes');
    assert.equal(d.a.seq.rcvWnd, 1000, 'and A takes 1000, from the first data byte');
    d.input('a', seg(1 + 1000, 10)); // just past the window
    assert.equal(d.a.stats.outOfWindow, 1);
    assert.equal(d.take('a').length, 1, 'an ACK answers');
    d.input('a', seg(1 + 995, 10)); // straddles the right edge: 5 bytes kept out of order
    assert.equal(d.a.stats.outOfWindow, 1);
    d.input('a', seg(1, 995));
    assert.equal(d.a.readable, 1000, 'everything up to the edge, nothing past it');
    assert.equal(d.a.seq.rcvNxt, 1001);
  });
});
