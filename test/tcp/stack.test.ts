import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { TcpError, type TcpConnection } from '../../src/tcp/connection.js';
import { TcpStack } from '../../src/tcp/stack.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { withFront } from '../../src/wire/bytes.js';
import { TCP_ACK, TCP_RST, TCP_SYN, encodeTcp, ipv4, parseTcp, tcpChecksum, type TcpSegment } from '../../src/wire/tcp.js';
import { TcpPair, bulk, type LinkParams } from '../support/tcp-net.js';

const LINK: LinkParams = { delayUs: 10_000, rateBps: 0, queuePackets: 0 };

/** An established connection A to B with a little data delivered, at rest. */
function established() {
  const pair = new TcpPair(LINK, 51, { timeWaitMs: 100 }, { timeWaitMs: 100 });
  const r = bulk(pair, { ab: 0 });
  pair.onEvent = () => undefined;
  pair.at(100_000, (now) => {
    r.client!.write(new Uint8Array(500).fill(5), now);
  });
  pair.run(1_000_000);
  assert.equal(r.server!.readable, 500);
  return { pair, client: r.client!, server: r.server! };
}

/** What a connection looks like from outside, to check that nothing changed. */
function snapshot(c: TcpConnection) {
  return JSON.stringify({ state: c.state, seq: c.seq, stats: c.stats, readable: c.readable, deadline: c.nextDeadline(), cwnd: c.cwnd });
}

describe('tcp stack input', () => {
  test('malformed and bad-checksum segments are counted and dropped; no connection notices', () => {
    const { pair, client, server } = established();
    const before = snapshot(server);
    const beforeClient = snapshot(client);
    const traceLen = pair.trace.length;
    const eventsLen = pair.events.length;
    // A real segment of the connection, corrupted in various ways.
    const good: TcpSegment = {
      srcPort: client.localPort,
      dstPort: 80,
      seq: (client.iss + 501) >>> 0,
      ack: (server.iss + 1) >>> 0,
      flags: TCP_ACK,
      window: 1000,
      urgent: 0,
      options: {},
      payload: Uint8Array.of(1, 2, 3),
    };
    const bytes = encodeTcp(good, { src: pair.ipA, dst: pair.ipB });
    const badSum = bytes.slice();
    badSum[bytes.length - 1]! ^= 0xff;
    const badOffset = bytes.slice();
    badOffset[12] = 0x40; // header length 16 bytes: less than the fixed header
    const badOption = encodeTcp({ ...good, payload: new Uint8Array(0) }, { src: pair.ipA, dst: pair.ipB });
    const withOpt = new Uint8Array(badOption.length + 4);
    withOpt.set(badOption);
    withOpt[12] = 0x60; // 24-byte header
    withOpt.set([2, 9, 0, 0], 20); // an MSS option of length 9
    withOpt[16] = 0;
    withOpt[17] = 0;
    const sum = tcpChecksum(withOpt, { src: pair.ipA, dst: pair.ipB });
    withOpt[16] = sum >>> 8;
    withOpt[17] = sum & 0xff; // a correct checksum over a malformed option
    const truncated = bytes.subarray(0, 12);
    const counters = { ...pair.b.counters };

    pair.inputRaw('ab', truncated);
    pair.inputRaw('ab', badOffset);
    pair.inputRaw('ab', withOpt);
    pair.inputRaw('ab', badSum);
    pair.inputRaw('ab', new Uint8Array(0));
    assert.deepEqual(
      {
        received: pair.b.counters.received,
        malformed: pair.b.counters.malformed,
        badChecksum: pair.b.counters.badChecksum,
        noConnection: pair.b.counters.noConnection,
      },
      { received: counters.received + 5, malformed: counters.malformed + 4, badChecksum: counters.badChecksum + 1, noConnection: 0 },
    );
    assert.equal(snapshot(server), before, 'the server connection is untouched');
    assert.equal(snapshot(client), beforeClient);
    assert.equal(pair.trace.length, traceLen, 'nothing sent in answer');
    assert.equal(pair.events.length, eventsLen, 'no event');
    // The intact segment still goes through.
    pair.inputRaw('ab', bytes);
    assert.equal(server.readable, 503);
  });

  test('a segment for no connection is answered with RST, a RST for none is not', () => {
    const { pair, client } = established();
    const resetsBefore = pair.b.counters.resetsSent;
    // Data to a port nobody listens on, from an unknown port.
    pair.inject('ab', { srcPort: 4444, dstPort: 81, seq: 1000, ack: 0, flags: 0, window: 100, urgent: 0, options: {}, payload: Uint8Array.of(1, 2) });
    let last = pair.trace.at(-1)!;
    assert.equal(last.dir, 'ba');
    assert.deepEqual(
      { flags: last.seg.flags, seq: last.seg.seq, ack: last.seg.ack, src: last.seg.srcPort, dst: last.seg.dstPort },
      { flags: TCP_RST | TCP_ACK, seq: 0, ack: 1002, src: 81, dst: 4444 },
    );
    // An ACK for no connection: RST with its ack as sequence number.
    pair.inject('ab', { srcPort: 4444, dstPort: 80, seq: 7, ack: 123456, flags: TCP_ACK, window: 100, urgent: 0, options: {}, payload: new Uint8Array(0) });
    last = pair.trace.at(-1)!;
    assert.deepEqual({ flags: last.seg.flags, seq: last.seg.seq }, { flags: TCP_RST, seq: 123456 });
    const n = pair.trace.length;
    pair.inject('ab', { srcPort: 4444, dstPort: 80, seq: 7, ack: 0, flags: TCP_RST, window: 0, urgent: 0, options: {}, payload: new Uint8Array(0) });
    assert.equal(pair.trace.length, n, 'no RST for a RST');
    assert.equal(pair.b.counters.noConnection, 3);
    assert.equal(pair.b.counters.resetsSent, resetsBefore + 2);
    // A SYN to the listening port from a new port is a new connection, not a RST.
    assert.equal(pair.b.connections().length, 1);
    assert.equal(client.state, 'ESTABLISHED');
  });

  test('listen twice on a port throws; an ACK to a listener gets a RST and creates nothing', () => {
    const stack = new TcpStack(ipv4(10, 0, 0, 9), Rng.fromSeed(1));
    stack.listen(80, () => undefined);
    assert.throws(
      () => stack.listen(80, () => undefined),
      (e: unknown) => e instanceof TcpError && e.code === 'TCP_PORT_IN_USE',
    );
    const from = ipv4(10, 0, 0, 1);
    const seg: TcpSegment = { srcPort: 5000, dstPort: 80, seq: 1, ack: 99, flags: TCP_ACK, window: 100, urgent: 0, options: {}, payload: new Uint8Array(0) };
    stack.input(from, encodeTcp(seg, { src: from, dst: stack.localIp }), 0);
    const { packets } = stack.poll();
    assert.equal(packets.length, 1);
    const r = parseTcp(packets[0]!.bytes, { src: stack.localIp, dst: from });
    assert.ok(r.ok, 'a valid RST');
    assert.equal(r.value.flags, TCP_RST);
    assert.equal(r.value.seq, 99);
    assert.equal(stack.connections().length, 0);
    assert.equal(stack.counters.accepted, 0);
    // connect with an explicit local port already in use
    stack.connect(from, 7, 0, {}, 6000);
    assert.throws(() => stack.connect(from, 7, 0, {}, 6000), TcpError);
  });

  test('room: each packet keeps that many zero bytes of its own in front of its segment; a bad room is refused', () => {
    const from = ipv4(10, 0, 0, 1);
    const seg: TcpSegment = { srcPort: 5000, dstPort: 80, seq: 1, ack: 99, flags: TCP_ACK, window: 100, urgent: 0, options: {}, payload: new Uint8Array(0) };
    for (const room of [0, 17]) {
      const stack = new TcpStack(ipv4(10, 0, 0, 9), Rng.fromSeed(1), {}, room);
      stack.input(from, encodeTcp(seg, { src: from, dst: stack.localIp }), 0);
      const [p] = stack.poll().packets;
      assert.equal(p!.room, room);
      assert.ok(parseTcp(p!.bytes, { src: stack.localIp, dst: from }).ok, `room ${room}: a valid segment`);
      const front = withFront(p!.bytes, room);
      assert.ok(
        front.subarray(0, room).every((x) => x === 0),
        `room ${room}: zero in front`,
      );
    }
    for (const bad of [-1, 1.5, 257, NaN]) assert.throws(() => new TcpStack(ipv4(10, 0, 0, 9), Rng.fromSeed(1), {}, bad), RangeArgumentError, `room ${bad}`);
  });

  test('checksums false: segments leave with the field 0 and arrive unverified; a stack with checksums drops them', () => {
    const ipA = ipv4(10, 0, 0, 1);
    const ipB = ipv4(10, 0, 0, 2);
    const a = new TcpStack(ipA, Rng.fromSeed(3), {}, 0, false);
    const b = new TcpStack(ipB, Rng.fromSeed(4), {}, 0, false);
    const checking = new TcpStack(ipB, Rng.fromSeed(4));
    let server: TcpConnection | undefined;
    b.listen(80, (c) => (server = c));
    checking.listen(80, () => assert.fail('a segment without its checksum got through a checking stack'));
    const seen: Uint8Array[] = [];
    /** Moves everything both stacks have to send, each segment also offered to the checking stack, until nothing is left. */
    const settle = (now: number): void => {
      for (let busy = true; busy;) {
        busy = false;
        for (const [from, to, src] of [
          [a, b, ipA],
          [b, a, ipB],
        ] as const) {
          for (const p of from.poll().packets) {
            busy = true;
            seen.push(p.bytes.slice());
            to.input(src, p.bytes, now);
            if (from === a) checking.input(src, p.bytes.slice(), now);
          }
        }
      }
    };
    const client = a.connect(ipB, 80, 0, { noDelay: true });
    settle(0);
    assert.equal(client.state, 'ESTABLISHED');
    const data = Uint8Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff);
    client.write(data, 1000);
    settle(1000);
    assert.deepEqual(server!.read(Infinity, 2000), data);
    assert.ok(seen.length >= 5, 'handshake and data went through');
    for (const bytes of seen) {
      assert.equal((bytes[16]! << 8) | bytes[17]!, 0, 'checksum field left 0');
      // Everything else as a checksumming stack writes it: the field filled in makes it a valid segment.
      const seg = parseTcp(bytes);
      assert.ok(seg.ok);
      const fromA = seg.value.dstPort === 80;
      const full = encodeTcp(seg.value, fromA ? { src: ipA, dst: ipB } : { src: ipB, dst: ipA });
      assert.deepEqual(full.subarray(18), bytes.subarray(18));
      assert.deepEqual(full.subarray(0, 16), bytes.subarray(0, 16));
    }
    assert.equal(a.counters.badChecksum + b.counters.badChecksum, 0);
    // Every segment from A reached the checking stack and was counted there as a bad checksum, nothing else.
    const fromA = seen.filter((x) => ((x[2]! << 8) | x[3]!) === 80).length;
    assert.deepEqual(
      { received: checking.counters.received, badChecksum: checking.counters.badChecksum, resetsSent: checking.counters.resetsSent },
      { received: fromA, badChecksum: fromA, resetsSent: 0 },
    );
  });

  test('connections are kept apart by address and ports', () => {
    const pair = new TcpPair(LINK, 52);
    const got = new Map<TcpConnection, number[]>();
    pair.b.listen(80, (c) => got.set(c, []));
    pair.onEvent = (side, e, now) => {
      if (side === 'b' && e.event === 'readable') got.get(e.conn)!.push(...e.conn.read(Infinity, now));
      if (side === 'a' && e.event === 'connected') e.conn.write(Uint8Array.of(e.conn.localPort & 0xff, 1, 2), now);
    };
    pair.at(0, (now) => {
      pair.a.connect(pair.ipB, 80, now, { noDelay: true });
      pair.a.connect(pair.ipB, 80, now, { noDelay: true });
      pair.a.connect(pair.ipB, 80, now, { noDelay: true });
    });
    pair.run(1_000_000);
    assert.equal(got.size, 3);
    const ports = pair.a.connections().map((c) => c.localPort);
    assert.equal(new Set(ports).size, 3, 'three ephemeral ports');
    for (const [c, data] of got) assert.deepEqual(data, [c.remotePort & 0xff, 1, 2], 'each got its own bytes');
    assert.equal(pair.b.counters.accepted, 3);
  });

  test('a SYN to a port with no listener on an otherwise busy host still gets its RST', () => {
    const { pair } = established();
    pair.inject('ab', {
      srcPort: 5555,
      dstPort: 22,
      seq: 42,
      ack: 0,
      flags: TCP_SYN,
      window: 100,
      urgent: 0,
      options: { mss: 1460 },
      payload: new Uint8Array(0),
    });
    const last = pair.trace.at(-1)!;
    assert.equal(last.seg.flags, TCP_RST | TCP_ACK);
    assert.equal(last.seg.ack, 43);
  });
});
