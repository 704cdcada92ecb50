import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import type { TcpConnection } from '../../src/tcp/connection.js';
import { flowMatcher, formatFlow, inFlow, parseFlow } from '../../src/vnf/flow.js';
import { VnfError, VnfManager } from '../../src/vnf/manager.js';
import type { Vnf, VnfType } from '../../src/vnf/types.js';
import { VNF_TYPES } from '../../src/vnf/index.js';
import { parseIpAddress } from '../../src/wire/ip.js';
import { ipv4, TCP_SYN } from '../../src/wire/tcp.js';
import { pattern, patternByte } from '../support/tcp-net.js';
import { VnfChain } from '../support/vnf-chain.js';

const MS = 1000;
const FLOW = { proto: 'tcp' as const, dstPort: 5001 };

/** A bulk transfer of `bytes` from A to B port `port` over the chain, content checked at B. */
function transfer(chain: VnfChain, bytes: number, port = 5001, o: { readEvery?: Micros; readChunk?: number } = {}) {
  const r = {
    client: undefined as TcpConnection | undefined,
    server: undefined as TcpConnection | undefined,
    got: 0,
    bad: 0,
    eofAt: -1,
    events: [] as string[],
    /** With readEvery: a time span (µs) in which the server does not read. */
    pause: undefined as [number, number] | undefined,
  };
  let written = 0;
  chain.b.listen(port, (c) => (r.server = c));
  const read = (c: TcpConnection, now: Micros, max = Infinity) => {
    const d = c.read(max, now);
    for (let k = 0; k < d.length; k++) if (d[k] !== patternByte(r.got + k)) r.bad++;
    r.got += d.length;
  };
  const prev = chain.onEvent;
  chain.onEvent = (side, e, now) => {
    prev(side, e, now);
    if (e.conn !== r.client && e.conn !== r.server) return;
    r.events.push(`${side}:${e.event}`);
    if (side === 'a' && e.conn === r.client && (e.event === 'connected' || e.event === 'writable')) {
      while (written < bytes && e.conn.writable > 0) written += e.conn.write(pattern(written, Math.min(e.conn.writable, bytes - written)), now);
      if (written >= bytes && e.conn.state === 'ESTABLISHED') e.conn.close(now);
    }
    if (side === 'b' && e.event === 'readable' && o.readEvery === undefined) read(e.conn, now);
    if (side === 'b' && e.event === 'eof') {
      r.eofAt = now;
      e.conn.close(now);
    }
  };
  if (o.readEvery !== undefined) {
    const every = o.readEvery;
    const tick = (now: Micros): void => {
      const pause = r.pause;
      if (r.server && !(pause && now > pause[0] && now < pause[1])) read(r.server, now, o.readChunk ?? Infinity);
      chain.at(now + every, tick);
    };
    chain.at(every, tick);
  }
  chain.at(0, (now) => (r.client = chain.a.connect(chain.ipB, port, now)));
  return r;
}

/** The ISNs of the SYNs of connections to `port` on each link, in order. */
function synIsnsByLink(chain: VnfChain, port: number): Array<number | undefined> {
  return Array.from(
    { length: chain.middle + 1 },
    (_, link) => chain.wire.find((w) => w.link === link && w.dir === 'ab' && w.seg.flags === TCP_SYN && w.seg.dstPort === port)?.seg.seq,
  );
}

describe('TCP-ACC', () => {
  test('intercepts exactly the configured flow: its own SYN downstream for port 5001, the other flow untouched', () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS });
    chain.managers[0]!.instantiate('tcp-acc', FLOW, {}, 0);
    const r1 = transfer(chain, 100_000, 5001);
    const r2 = transfer(chain, 100_000, 6000);
    chain.run(120_000_000);
    assert.equal(r1.got, 100_000);
    assert.equal(r1.bad, 0);
    assert.equal(r2.got, 100_000);
    assert.equal(r2.bad, 0);
    const [up1, down1] = synIsnsByLink(chain, 5001);
    const [up2, down2] = synIsnsByLink(chain, 6000);
    assert.ok(up1 !== undefined && down1 !== undefined && up1 !== down1, 'port 5001: the accelerator opened its own connection downstream');
    assert.equal(up2, down2, "port 6000: the client's SYN went through");
    const [info] = chain.managers[0]!.list();
    assert.equal(info!.counters.sessions, 1);
    assert.equal(info!.counters.sessionsClosed, 1, 'both legs closed in order (after TIME-WAIT)');
  });

  test('split: the client has its data acknowledged before the server has it', () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS });
    chain.managers[0]!.instantiate('tcp-acc', FLOW, {}, 0);
    // After the handshakes, the downstream link loses everything until 2 s.
    chain.fate = (link, _dir, seg) => (link === 1 && seg.payload.length > 0 && chain.now < 2_000_000 ? { drop: true } : undefined);
    const r = transfer(chain, 20_000);
    let ackedEarly = false;
    chain.at(1_500_000, () => {
      ackedEarly = (r.client?.seq.una ?? 0) > 10_000 && r.got === 0;
    });
    chain.run(30_000_000);
    assert.ok(ackedEarly, 'at 1.5 s the client saw its bytes acknowledged while the server had none');
    assert.equal(r.got, 20_000);
    assert.equal(r.bad, 0);
  });

  test('e2e: no byte is acknowledged upstream before downstream acknowledged it; split acknowledges ahead', () => {
    const ahead: Record<string, number> = {};
    for (const mode of ['split', 'e2e'] as const) {
      const chain = new VnfChain(1, { delayUs: 5 * MS, rateBps: 2e6 }, 3);
      chain.managers[0]!.instantiate('tcp-acc', FLOW, { mode, tcp: { congestion: 'sack' } }, 0);
      chain.fate = (link, _dir, seg, rng) => (link === 1 && seg.payload.length > 0 && rng.next() < 0.05 ? { drop: true } : undefined);
      const r = transfer(chain, 300_000);
      chain.run(60_000_000);
      assert.equal(r.got, 300_000, `${mode}: every byte`);
      assert.equal(r.bad, 0, `${mode}: in order`);
      const [isnUp, isnDown] = synIsnsByLink(chain, 5001);
      const rel = (seq: number, isn: number) => (seq - isn) >>> 0;
      let downAcked = 0;
      let most = 0;
      for (const w of chain.wire) {
        if (w.dir !== 'ba' || w.dropped || !(w.seg.flags & 0x10)) continue;
        // Link 1: the server acknowledging the accelerator; link 0: the accelerator acknowledging the client.
        if (w.link === 1) downAcked = Math.max(downAcked, rel(w.seg.ack, isnDown!));
        else if (w.seg.flags !== TCP_SYN + 0x10) most = Math.max(most, rel(w.seg.ack, isnUp!) - downAcked);
      }
      ahead[mode] = most;
    }
    assert.equal(ahead.e2e, 0, 'e2e never ran ahead of the server');
    assert.ok((ahead.split ?? 0) > 10_000, `split acknowledged up to ${ahead.split} bytes ahead of the server`);
  });

  test("as: data is acknowledged on receipt, as split, but the client's FIN only once the server has acknowledged the FIN passed on", () => {
    const bytes = 200_000;
    const finAcked: Record<string, { client: number; server: number; ahead: number }> = {};
    for (const mode of ['split', 'as'] as const) {
      const chain = new VnfChain(1, { delayUs: 5 * MS, rateBps: 2e6 }, 3);
      chain.managers[0]!.instantiate('tcp-acc', FLOW, { mode, tcp: { congestion: 'sack' } }, 0);
      const r = transfer(chain, bytes);
      chain.run(60_000_000);
      assert.equal(r.got, bytes, `${mode}: every byte`);
      assert.equal(r.bad, 0, `${mode}: in order`);
      assert.ok(r.eofAt > 0, `${mode}: the FIN crossed`);
      const [isnUp, isnDown] = synIsnsByLink(chain, 5001);
      const rel = (seq: number, isn: number) => (seq - isn) >>> 0;
      // Byte k of the stream is ISN + 1 + k; the FIN is ISN + 1 + bytes, acknowledged by ISN + 2 + bytes.
      const acks = (link: number) => chain.wire.filter((w) => w.link === link && w.dir === 'ba' && !w.dropped && w.seg.flags & 0x10);
      const firstFinAck = (link: number, isn: number) => acks(link).find((w) => rel(w.seg.ack, isn) === bytes + 2)?.at ?? -1;
      let downAcked = 0;
      let ahead = 0;
      for (const w of chain.wire) {
        if (w.dir !== 'ba' || w.dropped || !(w.seg.flags & 0x10) || w.seg.flags & TCP_SYN) continue;
        if (w.link === 1) downAcked = Math.max(downAcked, rel(w.seg.ack, isnDown!));
        else ahead = Math.max(ahead, Math.min(rel(w.seg.ack, isnUp!), bytes + 1) - downAcked);
      }
      finAcked[mode] = { client: firstFinAck(0, isnUp!), server: firstFinAck(1, isnDown!), ahead };
      assert.ok(
        acks(0).every((w) => rel(w.seg.ack, isnUp!) <= bytes + 2),
        `${mode}: no ACK beyond the FIN`,
      );
      const c = chain.managers[0]!.list()[0]!.counters;
      if (mode === 'as') assert.ok(c.finAcksHeld! >= 1, `held ${c.finAcksHeld} FIN ACK(s)`);
      else assert.equal(c.finAcksHeld, undefined, 'split has no such counter');
    }
    const { split, as } = finAcked as Record<'split' | 'as', { client: number; server: number; ahead: number }>;
    assert.ok(split.ahead > 2000 && as.ahead > 2000, `both acknowledged data segments ahead of the server (split ${split.ahead}, as ${as.ahead} bytes)`);
    assert.ok(split.client > 0 && split.client < split.server, 'split acknowledges the FIN before the server has it');
    assert.ok(as.client > 0 && as.server > 0, 'as acknowledged the FIN in the end');
    // The server's ACK crosses link 1 (5 ms) before the accelerator lets the client's go.
    assert.ok(as.client >= as.server + 5 * MS, `as: the client's FIN acknowledged at ${as.client} us, the server acknowledged it at ${as.server} us`);
  });

  test('a chain of accelerators delivers every byte in order through loss on every link', () => {
    const chain = new VnfChain(3, { delayUs: 2 * MS, rateBps: 10e6 }, 5);
    for (const m of chain.managers) m.instantiate('tcp-acc', FLOW, { tcp: { congestion: 'sack' } }, 0);
    chain.fate = (_link, _dir, seg, rng) =>
      seg.payload.length > 0 && rng.next() < 0.03 ? { drop: true } : rng.next() < 0.05 ? { drop: false, extraUs: 3 * MS } : undefined;
    const r = transfer(chain, 1_000_000);
    chain.run(120_000_000);
    assert.equal(r.got, 1_000_000, 'every byte');
    assert.equal(r.bad, 0, 'in order, as written');
    assert.ok(r.eofAt > 0, 'the FIN crossed every accelerator');
    for (const m of chain.managers) {
      const c = m.list()[0]!.counters;
      assert.equal(c.sessions, 1);
      assert.ok(c.bytesUp === 1_000_000, `each relayed the whole stream (${c.bytesUp})`);
    }
    const isns = synIsnsByLink(chain, 5001);
    assert.equal(new Set(isns).size, 4, 'four legs, four handshakes');
  });

  test('legs run CUBIC with PRR and HyStart++ when told, through loss on both links; a bad option is refused', () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS, rateBps: 2e6 }, 3);
    chain.managers[0]!.instantiate('tcp-acc', FLOW, { tcp: { congestion: 'cubic', prr: true, hystart: true } }, 0);
    chain.fate = (_link, _dir, seg, rng) => (seg.payload.length > 0 && rng.next() < 0.03 ? { drop: true } : undefined);
    const r = transfer(chain, 300_000);
    chain.run(60_000_000);
    assert.equal(r.got, 300_000);
    assert.equal(r.bad, 0);
    assert.throws(
      () => new VnfManager(VNF_TYPES, 1).instantiate('tcp-acc', FLOW, { tcp: { congestion: 'cubic', prr: 'yes', hystart: 1 } }, 0),
      (e: unknown) => e instanceof ConfigError && /tcp\.hystart: 1 is out of range, expected true, false, or absent/.test(e.message),
    );
  });

  test('the buffer never exceeds its bound when the server reads slowly', () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS }, 2, {}, { receiveBufferBytes: 8000 });
    chain.managers[0]!.instantiate('tcp-acc', FLOW, { bufferBytes: 32_000 }, 0);
    const r = transfer(chain, 300_000, 5001, { readEvery: 100 * MS, readChunk: 4000 });
    let clientAhead = 0;
    chain.at(3_000_000, () => (clientAhead = (r.client?.seq.una ?? 0) - r.got));
    chain.run(60_000_000);
    assert.equal(r.got, 300_000);
    assert.equal(r.bad, 0);
    const held = chain.managers[0]!.list()[0]!.counters.maxHeldBytes!;
    assert.ok(held <= 32_000, `held at most ${held} bytes`);
    assert.ok(held > 16_000, `the buffer was used (${held} bytes)`);
    assert.ok(clientAhead <= 32_000 + 8000 + 1, `the client ran at most the buffer and the server's window ahead (${clientAhead})`);
  });

  test('FIN both ways: a half-closed connection still carries the other direction; RST crosses both ways', () => {
    for (const who of ['a', 'b'] as const) {
      const chain = new VnfChain(2, { delayUs: 3 * MS });
      for (const m of chain.managers) m.instantiate('tcp-acc', FLOW, {}, 0);
      const r = transfer(chain, 2_000_000);
      chain.at(150 * MS, (now) => {
        const c = who === 'a' ? r.client! : r.server!;
        c.abort(now);
      });
      chain.run(10_000_000);
      const other = who === 'a' ? 'b' : 'a';
      assert.ok(r.events.includes(`${other}:reset`), `${who} aborted: ${other} was reset (${r.events.join(' ')})`);
      for (const m of chain.managers) assert.equal(m.list()[0]!.counters.activeSessions, 0, 'the accelerators let go');
    }
    // Orderly: A writes and closes; B reads all, sees EOF, closes; both ends finish.
    const chain = new VnfChain(2, { delayUs: 3 * MS });
    for (const m of chain.managers) m.instantiate('tcp-acc', FLOW, {}, 0);
    const r = transfer(chain, 50_000);
    chain.run(120_000_000);
    assert.equal(r.got, 50_000);
    assert.ok(r.events.includes('a:eof'), "the server's FIN reached the client");
    assert.ok(r.events.includes('a:closed') && r.events.includes('b:closed'), r.events.join(' '));
  });
});

describe('TCP-ACC: review cases', () => {
  test('terminating an accelerator, or one that throws mid-connection, resets both ends (no half-dead connection)', () => {
    for (const how of ['terminate', 'throw'] as const) {
      const chain = new VnfChain(1, { delayUs: 5 * MS });
      const m = chain.managers[0]!;
      const info = m.instantiate('tcp-acc', FLOW, {}, 0);
      const r = transfer(chain, 5_000_000);
      chain.at(1_000_000, (now) => {
        if (how === 'terminate') m.terminate(info.id, now);
        else {
          // The instance's own code throws from now on (a bug surfacing mid-flow).
          const acc = (m as unknown as { instances: Map<number, { vnf: { handle: () => boolean } }> }).instances.get(info.id)!.vnf;
          acc.handle = () => {
            throw new Error('bug');
          };
        }
      });
      chain.run(20_000_000);
      assert.ok(r.events.includes('a:reset') && r.events.includes('b:reset'), `${how}: ${r.events.join(' ')}`);
      assert.equal(m.list()[0]!.state, how === 'terminate' ? 'stopped' : 'failed');
    }
  });

  test("e2e: a server that stops reading closes the client's window; the client probes instead of timing out", () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS, rateBps: 5e6 }, 1, {}, { receiveBufferBytes: 16_000 });
    chain.managers[0]!.instantiate('tcp-acc', FLOW, { mode: 'e2e' }, 0);
    const r = transfer(chain, 1_000_000, 5001, { readEvery: 100 * MS });
    // The server reads every 100 ms, except between 1 s and 300 s.
    r.pause = [1_000_000, 300_000_000];
    let stalled: { timeouts: number; wnd: number } | undefined;
    chain.at(250_000_000, () => (stalled = { timeouts: r.client!.stats.timeouts, wnd: r.client!.seq.wnd }));
    chain.run(600_000_000);
    assert.equal(r.got, 1_000_000, 'everything arrived once the server read again');
    assert.equal(r.bad, 0);
    assert.deepEqual(stalled, { timeouts: 0, wnd: 0 }, 'a closed window, and no timeout, while the server did not read');
  });
});

describe('VNF manager', () => {
  const thrower = (when: 'handle' | 'tick'): VnfType => ({
    name: 'broken',
    params: () => ({}),
    create: (): Vnf => ({
      handle: () => {
        if (when === 'handle') throw new Error('boom');
        return false;
      },
      tick: () => {
        throw new Error('tick boom');
      },
      nextDeadline: () => (when === 'tick' ? 1000 : undefined),
      poll: () => [],
      counters: () => ({}),
      stop: () => undefined,
    }),
  });

  test('a VNF that throws is stopped and reported; its flow falls back to forwarding and a parallel accelerated flow keeps going', () => {
    const chain = new VnfChain(1, { delayUs: 5 * MS });
    const m = new VnfManager([...VNF_TYPES, thrower('handle')], 1);
    (chain.managers as VnfManager[])[0] = m;
    m.instantiate('broken', { proto: 'tcp', dstPort: 6000 }, {}, 0);
    m.instantiate('tcp-acc', FLOW, {}, 0);
    const fast = transfer(chain, 200_000, 5001);
    const broken = transfer(chain, 200_000, 6000);
    chain.run(30_000_000);
    assert.equal(broken.got, 200_000, "the broken VNF's flow was forwarded");
    assert.equal(fast.got, 200_000);
    const list = m.list();
    const failed = list.find((i) => i.type === 'broken')!;
    assert.equal(failed.state, 'failed');
    assert.match(failed.reason ?? '', /Error: boom/);
    assert.equal(list.find((i) => i.type === 'tcp-acc')!.state, 'running');
  });

  test('a VNF whose timer throws is stopped at its tick', () => {
    const m = new VnfManager([thrower('tick')], 1);
    m.instantiate('broken', {}, {}, 0);
    assert.equal(m.nextDeadline(), 1000);
    m.tick(1000);
    const { events } = m.poll(1000);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['started', 'failed'],
    );
    assert.equal(m.nextDeadline(), undefined);
  });

  test('lifecycle: instantiate, list, terminate; unknown types and bad parameters are refused whole', () => {
    const m = new VnfManager(VNF_TYPES, 1);
    assert.throws(
      () => m.instantiate('nat', FLOW, {}, 0),
      (e: unknown) => e instanceof VnfError && e.code === 'VNF_UNKNOWN_TYPE' && /tcp-acc/.test(e.message),
    );
    assert.throws(
      () => m.instantiate('tcp-acc', FLOW, { bufferBytes: 1, tcp: { congestion: 'bbr', nagle: true } }, 0),
      (e: unknown) => e instanceof ConfigError && ['/bufferBytes', '/tcp/congestion', '/tcp/nagle'].every((p) => e.issues.some((i) => i.path === p)),
    );
    assert.deepEqual(m.list(), [], 'nothing started by a refused request');
    const info = m.instantiate('tcp-acc', FLOW, { bufferBytes: 4096 }, 10);
    assert.equal(m.list()[0]!.state, 'running');
    assert.equal(m.terminate(info.id, 20).state, 'stopped');
    assert.throws(
      () => m.terminate(info.id, 30),
      (e: unknown) => e instanceof VnfError && e.code === 'VNF_UNKNOWN_INSTANCE',
    );
    assert.deepEqual(
      m.poll(30).events.map((e) => e.kind),
      ['started', 'stopped'],
    );
    assert.equal(m.intercept({ proto: 'tcp', src: ipv4(1, 1, 1, 1), dst: ipv4(2, 2, 2, 2), bytes: new Uint8Array(20) }, 40), false, 'nothing runs: forwarded');
  });

  test('flow patterns: text form round trip, wildcards, both directions', () => {
    const p = parseFlow('tcp:10.0.0.1-10.0.4.1:5001');
    assert.deepEqual(p, { proto: 'tcp', srcIp: '10.0.0.1', dstIp: '10.0.4.1', dstPort: 5001 });
    assert.equal(formatFlow(p), 'tcp:10.0.0.1-10.0.4.1:5001');
    assert.throws(
      () => parseFlow('tcp 10.0.0.1:99999 > x:1'),
      (e: unknown) => e instanceof ConfigError && e.issues[0]!.path === '/flow/srcPort',
    );
    assert.throws(
      () => parseFlow('tcp:0-4:99999'),
      (e: unknown) => e instanceof ConfigError && e.issues[0]!.path === '/flow/dstPort',
    );
    assert.throws(
      () => parseFlow('from a to b'),
      (e: unknown) => e instanceof ConfigError,
    );
  });

  test('flow patterns match packets by their bytes, in either direction, any way an address is written', () => {
    const ip = (t: string): Uint8Array => parseIpAddress(t)!;
    const ports = (s: number, d: number): Uint8Array => Uint8Array.of(s >> 8, s & 0xff, d >> 8, d & 0xff, 0, 0);
    const m = flowMatcher(parseFlow('tcp:10.0.0.1-10.0.4.1:5001'));
    assert.ok(inFlow(m, 'tcp', ip('10.0.0.1'), ip('10.0.4.1'), ports(40000, 5001)), 'forward');
    assert.ok(inFlow(m, 'tcp', ip('10.0.4.1'), ip('10.0.0.1'), ports(5001, 40000)), 'back');
    assert.ok(!inFlow(m, 'udp', ip('10.0.0.1'), ip('10.0.4.1'), ports(40000, 5001)), 'another protocol');
    assert.ok(!inFlow(m, 'tcp', ip('10.0.0.1'), ip('10.0.4.1'), ports(40000, 5002)), 'another port');
    assert.ok(!inFlow(m, 'tcp', ip('10.0.0.1'), ip('10.0.4.2'), ports(40000, 5001)), 'another address');
    assert.ok(!inFlow(m, 'tcp', ip('10.0.4.1'), ip('10.0.0.1'), ports(40000, 5001)), 'back, but the port on the wrong side');
    assert.ok(!inFlow(m, 'tcp', ip('10.0.0.1'), ip('10.0.4.1'), Uint8Array.of(0x9c, 0x40, 0x13)), 'too short for its ports');
    // An IPv6 address matches whether the pattern writes it in full or compressed.
    const v6 = ip('fd00::a00:1');
    for (const text of ['udp:[fd00::a00:1]-*:53', 'udp:[FD00:0:0:0:0:0:0A00:0001]-*:53']) {
      const m6 = flowMatcher(parseFlow(text));
      assert.ok(inFlow(m6, 'udp', v6, ip('fd00::1'), ports(1234, 53)), text);
      assert.ok(!inFlow(m6, 'udp', ip('10.0.0.1'), ip('fd00::1'), ports(1234, 53)), `${text}: an IPv4 source`);
    }
    // An address that is none (the older form takes any text) matches nothing; a wildcard, everything.
    assert.ok(!inFlow(flowMatcher(parseFlow('tcp nowhere:* > *:*')), 'tcp', ip('10.0.0.1'), ip('10.0.4.1'), ports(1, 2)));
    assert.ok(inFlow(flowMatcher(parseFlow('*:*-*')), 'udp', v6, ip('10.0.0.1'), ports(1, 2)));
  });

  test("flow patterns take the controller's form: router numbers, addresses, * and a source port", () => {
    const same = { proto: 'tcp', srcIp: '10.0.0.1', dstIp: '10.0.4.1', dstPort: 5001 };
    assert.deepEqual(parseFlow('tcp:0-4:5001'), same, 'routers by number, as the controller --flow names them');
    assert.deepEqual(parseFlow('tcp 10.0.0.1:* > 10.0.4.1:5001'), same, 'the older form is still taken');
    assert.deepEqual(parseFlow('*:*-*'), {});
    assert.deepEqual(parseFlow('tcp:0-4'), { proto: 'tcp', srcIp: '10.0.0.1', dstIp: '10.0.4.1' }, 'no port: any');
    const v6 = parseFlow('udp:[fd00:0:0:0:0:0:a00:1]-*:53,sport=1234');
    assert.deepEqual(v6, { proto: 'udp', srcIp: 'fd00:0:0:0:0:0:a00:1', dstPort: 53, srcPort: 1234 });
    assert.equal(formatFlow(v6), 'udp:[fd00:0:0:0:0:0:a00:1]-*:53,sport=1234');
    assert.throws(
      () => parseFlow('tcp:0-4,label=3'),
      (e: unknown) => e instanceof ConfigError && /sport=N/.test(e.message),
    );
  });
});
