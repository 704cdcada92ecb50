import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TcpConnection, TcpConfig } from '../../src/tcp/connection.js';
import { TCP_ACK, TCP_RST, TCP_SYN, type TcpSegment } from '../../src/wire/tcp.js';
import { DirectPair, TcpPair } from '../support/tcp-net.js';

const LINK = { delayUs: 10_000, rateBps: 0, queuePackets: 0 };

/** A connects to B's listener on port 80; returns both ends once run to `untilUs`. */
function open(pair: TcpPair, untilUs = 1_000_000, cfgA: Partial<TcpConfig> = {}, cfgB: Partial<TcpConfig> = {}) {
  const ends: { client?: TcpConnection; server?: TcpConnection } = {};
  pair.b.listen(80, (c) => (ends.server = c), cfgB);
  pair.at(0, (now) => (ends.client = pair.a.connect(pair.ipB, 80, now, cfgA)));
  pair.run(untilUs);
  return ends;
}

function flagsOf(seg: TcpSegment): string {
  return `${seg.flags & TCP_SYN ? 'S' : ''}${seg.flags & TCP_ACK ? '.' : ''}${seg.flags & TCP_RST ? 'R' : ''}`;
}

describe('tcp handshake', () => {
  test('active and passive open: SYN, SYN-ACK, ACK, both ESTABLISHED', () => {
    const pair = new TcpPair(LINK, 1);
    const { client, server } = open(pair);
    assert.ok(client && server, 'both ends exist');
    assert.equal(client.state, 'ESTABLISHED');
    assert.equal(server.state, 'ESTABLISHED');
    assert.deepEqual(
      pair.trace.map((t) => `${t.dir}:${flagsOf(t.seg)}`),
      ['ab:S', 'ba:S.', 'ab:.'],
    );
    const [syn, synAck, ack] = pair.trace.map((t) => t.seg) as [TcpSegment, TcpSegment, TcpSegment];
    assert.equal(syn.seq, client.iss);
    assert.equal(synAck.seq, server.iss);
    assert.equal(synAck.ack, (client.iss + 1) >>> 0);
    assert.equal(ack.seq, (client.iss + 1) >>> 0);
    assert.equal(ack.ack, (server.iss + 1) >>> 0);
    const connected = pair.events.filter((e) => e.event === 'connected');
    assert.deepEqual(
      connected.map((e) => [e.side, e.at]),
      [
        ['a', 20_000],
        ['b', 30_000],
      ],
    );
    assert.deepEqual(pair.history(client), ['SYN-SENT', 'ESTABLISHED']);
    assert.deepEqual(pair.history(server), ['SYN-RECEIVED', 'ESTABLISHED']);
    assert.equal(pair.b.counters.accepted, 1);
    // The SYN gave an RTT sample on each side (Karn allows it: not retransmitted).
    assert.equal(client.rtt.srtt, 20_000);
    assert.equal(server.rtt.srtt, 20_000);
  });

  test('every option is offered and negotiated when both ends have it', () => {
    const pair = new TcpPair(LINK, 2);
    const { client, server } = open(pair, 1_000_000, { receiveBufferBytes: 1 << 20 }, { receiveBufferBytes: 300_000 });
    assert.ok(client && server, 'both ends exist');
    const syn = pair.trace[0]!.seg;
    const synAck = pair.trace[1]!.seg;
    assert.equal(syn.options.mss, 1460);
    assert.equal(syn.options.windowScale, 5, '1 MiB needs a shift of 5');
    assert.equal(syn.options.sackPermitted, true);
    assert.ok(syn.options.timestamp !== undefined, 'SYN carries timestamps');
    assert.equal(syn.options.timestamp.echo, 0);
    assert.equal(synAck.options.windowScale, 3, '300 000 bytes need a shift of 3');
    assert.equal(synAck.options.sackPermitted, true);
    assert.ok(synAck.options.timestamp !== undefined, 'SYN-ACK carries timestamps');
    assert.equal(synAck.options.timestamp.echo, syn.options.timestamp.value);
    // Windows in SYNs are never scaled (RFC 7323 2.2).
    assert.equal(syn.window, 65535);
    assert.deepEqual(client.negotiated, { windowScale: true, sndWscale: 3, rcvWscale: 5, sack: true, timestamps: true, mss: 1448 });
    assert.deepEqual(server.negotiated, { windowScale: true, sndWscale: 5, rcvWscale: 3, sack: true, timestamps: true, mss: 1448 });
  });

  const OPTIONS = [
    { name: 'window scale', cfg: { windowScale: false }, key: 'windowScale' as const, opt: 'windowScale' as const },
    { name: 'SACK-permitted', cfg: { sack: false }, key: 'sack' as const, opt: 'sackPermitted' as const },
    { name: 'timestamps', cfg: { timestamps: false }, key: 'timestamps' as const, opt: 'timestamp' as const },
  ];
  for (const o of OPTIONS) {
    for (const off of ['client', 'server'] as const) {
      test(`${o.name} is not used when the ${off} does not offer it`, () => {
        const pair = new TcpPair(LINK, 3);
        const { client, server } = open(pair, 1_000_000, off === 'client' ? o.cfg : {}, off === 'server' ? o.cfg : {});
        assert.ok(client && server, 'both ends exist');
        assert.equal(client.state, 'ESTABLISHED');
        assert.equal(server.state, 'ESTABLISHED');
        const syn = pair.trace[0]!.seg;
        const synAck = pair.trace[1]!.seg;
        assert.equal(syn.options[o.opt] !== undefined, off === 'server', `the SYN offers ${o.name} only if the client has it`);
        assert.equal(synAck.options[o.opt], undefined, `the SYN-ACK never carries ${o.name} here`);
        assert.equal(client.negotiated[o.key], false);
        assert.equal(server.negotiated[o.key], false);
        for (const [k, v] of Object.entries(client.negotiated)) {
          if (k === o.key || typeof v !== 'boolean') continue;
          assert.equal(v, true, `${k} still negotiated`);
        }
        if (o.key === 'windowScale') {
          assert.equal(client.negotiated.sndWscale, 0);
          assert.equal(server.negotiated.sndWscale, 0);
        }
        if (o.key === 'timestamps') {
          assert.equal(client.negotiated.mss, 1460, 'no timestamp option to pay for');
          for (const t of pair.trace.slice(1)) assert.equal(t.seg.options.timestamp, undefined, 'no segment after the SYN carries timestamps');
        }
        if (o.key === 'sack') {
          assert.equal(synAck.options.sackPermitted, undefined);
        }
      });
    }
  }

  test('MSS: each end sends at most the smaller of the two (less the timestamps option); 536 without the option', () => {
    const pair = new TcpPair(LINK, 4);
    const { client, server } = open(pair, 1_000_000, {}, { mss: 1000 });
    assert.ok(client && server, 'both ends exist');
    assert.equal(pair.trace[1]!.seg.options.mss, 1000);
    assert.equal(client.negotiated.mss, 988);
    assert.equal(server.negotiated.mss, 988);

    const d = new DirectPair();
    d.b.listen();
    d.input('b', { srcPort: 40000, dstPort: 80, seq: 77, ack: 0, flags: TCP_SYN, window: 8192, urgent: 0, options: {}, payload: new Uint8Array(0) });
    const [sa] = d.take('b');
    assert.ok(sa !== undefined, 'SYN-ACK sent');
    assert.equal(sa.flags, TCP_SYN | TCP_ACK);
    assert.deepEqual(sa.options, { mss: 1460 }, 'a SYN-ACK answers a bare SYN with MSS only');
    assert.equal(d.b.negotiated.mss, 536, 'RFC 9293 3.7.1 default send MSS');
    assert.equal(d.b.seq.wnd, 8192);
  });

  test('simultaneous open: two SYNs cross and both ends reach ESTABLISHED', () => {
    const d = new DirectPair();
    d.a.connect(d.now);
    d.b.connect(d.now);
    const synA = d.take('a');
    const synB = d.take('b');
    assert.equal(synA.length, 1);
    assert.equal(synB.length, 1);
    assert.equal(synA[0]!.flags, TCP_SYN);
    assert.equal(synB[0]!.flags, TCP_SYN);
    d.now = 5_000;
    d.input('b', synA[0]!);
    d.input('a', synB[0]!);
    assert.equal(d.a.state, 'SYN-RECEIVED');
    assert.equal(d.b.state, 'SYN-RECEIVED');
    const sa = d.queue.a[0];
    assert.ok(sa !== undefined, 'A answers with a SYN-ACK');
    assert.equal(sa.flags, TCP_SYN | TCP_ACK);
    assert.equal(sa.seq, d.a.iss, 'the SYN-ACK repeats the ISN');
    assert.equal(sa.ack, (d.b.iss + 1) >>> 0);
    assert.ok(sa.options.timestamp !== undefined && sa.options.mss === 1460, 'the SYN-ACK carries the options B offered');
    d.now = 10_000;
    d.exchange();
    assert.equal(d.a.state, 'ESTABLISHED');
    assert.equal(d.b.state, 'ESTABLISHED');
    assert.deepEqual(d.events.a, ['connected']);
    assert.deepEqual(d.events.b, ['connected']);
    assert.equal(d.a.negotiated.timestamps, true);
    assert.equal(d.a.negotiated.sack, true);
    assert.equal(d.a.negotiated.windowScale, true);
    // Data flows both ways afterwards.
    d.a.write(Uint8Array.of(1, 2, 3), d.now);
    d.b.write(Uint8Array.of(9, 8), d.now);
    d.exchange();
    d.advance(d.now + 50_000); // the delayed ACKs
    d.exchange();
    assert.deepEqual([...d.b.readView(2, d.now)], [1, 2], 'readView takes as read does');
    assert.deepEqual([...d.b.read(Infinity, d.now)], [3]);
    assert.deepEqual([...d.a.read(Infinity, d.now)], [9, 8]);
    assert.equal(d.a.seq.una, 4, "A's data acknowledged");
    assert.equal(d.b.seq.una, 3, "B's data acknowledged");
  });

  test('a lost SYN is retransmitted with doubling timeouts; after synRetries the open fails with timeout', () => {
    const pair = new TcpPair({ ...LINK, fate: (seg) => (seg.flags & TCP_SYN ? { drop: true } : undefined) }, 5, { synRetries: 3 });
    const { client } = open(pair, 60_000_000);
    assert.ok(client, 'client exists');
    const syns = pair.trace.filter((t) => t.dir === 'ab' && t.seg.flags & TCP_SYN);
    assert.deepEqual(
      syns.map((t) => t.at),
      [0, 1_000_000, 3_000_000, 7_000_000],
    );
    assert.ok(
      syns.every((t) => t.seg.seq === client.iss),
      'every retransmission repeats the ISN',
    );
    const ev = pair.events.filter((e) => e.side === 'a');
    assert.deepEqual(
      ev.map((e) => [e.event, e.at]),
      [['timeout', 15_000_000]],
    );
    assert.equal(client.state, 'CLOSED');
    assert.equal(pair.a.connections().length, 0, 'the stack forgot it');
    assert.equal(client.stats.timeouts, 3);
  });

  test('a lost SYN-ACK: the retransmitted SYN gets it again and both ends connect, once', () => {
    const pair = new TcpPair({ ...LINK, fate: (_s, dir, i) => (dir === 'ba' && i === 0 ? { drop: true } : undefined) }, 6);
    const { client, server } = open(pair, 5_000_000);
    assert.ok(client && server, 'both ends exist');
    assert.equal(client.state, 'ESTABLISHED');
    assert.equal(server.state, 'ESTABLISHED');
    assert.equal(pair.b.counters.accepted, 1, 'one connection, not two');
    assert.equal(pair.b.connections().length, 1);
    const synAcks = pair.trace.filter((t) => t.dir === 'ba' && t.seg.flags & TCP_SYN);
    assert.ok(synAcks.length >= 2, 'the SYN-ACK went out again');
    assert.ok(
      synAcks.every((t) => t.seg.seq === server.iss),
      'with the same ISN',
    );
    const connectedA = pair.events.find((e) => e.side === 'a' && e.event === 'connected');
    assert.ok(connectedA && connectedA.at >= 1_000_000 && connectedA.at <= 1_030_000, `connected after one SYN timeout (${connectedA?.at})`);
    // The SYN was retransmitted: no RTT sample from it (Karn), the RTO stays backed off.
    assert.equal(client.rtt.samples, 0);
  });

  test('a lost final ACK: data from the client completes the open on the server', () => {
    const pair = new TcpPair({ ...LINK, fate: (seg, dir, i) => (dir === 'ab' && i === 1 && seg.payload.length === 0 ? { drop: true } : undefined) }, 7);
    let server: TcpConnection | undefined;
    let got = 0;
    pair.b.listen(80, (c) => (server = c));
    pair.onEvent = (side, e, now) => {
      if (side === 'a' && e.event === 'connected') {
        e.conn.write(new Uint8Array(100).fill(7), now);
      }
      if (side === 'b' && e.event === 'readable') got += e.conn.read(Infinity, now).length;
    };
    pair.at(0, (now) => pair.a.connect(pair.ipB, 80, now, { noDelay: true }));
    pair.run(500_000);
    assert.ok(server, 'server exists');
    assert.equal(server.state, 'ESTABLISHED');
    assert.equal(got, 100);
    assert.ok(pair.trace[2]!.dropped, 'the bare ACK was lost');
  });

  test('RST to a SYN: no listener, the client hears refused', () => {
    const pair = new TcpPair(LINK, 8);
    let client: TcpConnection | undefined;
    pair.at(0, (now) => (client = pair.a.connect(pair.ipB, 81, now)));
    pair.run(1_000_000);
    assert.ok(client, 'client exists');
    assert.equal(client.state, 'CLOSED');
    assert.deepEqual(
      pair.events.map((e) => [e.side, e.event, e.at]),
      [['a', 'refused', 20_000]],
    );
    const rst = pair.trace[1]!.seg;
    assert.equal(rst.flags, TCP_RST | TCP_ACK);
    assert.equal(rst.seq, 0);
    assert.equal(rst.ack, (client.iss + 1) >>> 0);
    assert.equal(pair.b.counters.noConnection, 1);
    assert.equal(pair.b.counters.resetsSent, 1);
    assert.equal(pair.a.connections().length, 0);
    assert.equal(pair.trace.length, 2, 'nothing after the RST');
  });

  test('SYN-SENT: a SYN-ACK acknowledging the wrong sequence number gets a RST and the open goes on', () => {
    const d = new DirectPair();
    d.a.connect(0);
    const [syn] = d.take('a');
    assert.ok(syn, 'SYN sent');
    d.input('a', {
      srcPort: 80,
      dstPort: 40000,
      seq: 5,
      ack: (d.a.iss + 100) >>> 0,
      flags: TCP_SYN | TCP_ACK,
      window: 1000,
      urgent: 0,
      options: {},
      payload: new Uint8Array(0),
    });
    assert.equal(d.a.state, 'SYN-SENT');
    const [rst] = d.take('a');
    assert.ok(rst, 'a RST answers');
    assert.equal(rst.flags, TCP_RST);
    assert.equal(rst.seq, (d.a.iss + 100) >>> 0);
    // The real SYN-ACK still works.
    d.b.listen();
    d.input('b', syn);
    d.exchange();
    assert.equal(d.a.state, 'ESTABLISHED');
    assert.equal(d.b.state, 'ESTABLISHED');
  });
});
