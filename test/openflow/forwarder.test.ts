import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import { flowMod, OFPP, type FlowMod, type OfAction } from '../../src/wire/openflow/actions.js';
import { FlowTables } from '../../src/openflow/pipeline.js';
import { FlowTableForwarder, meshFrame, packetFields } from '../../src/openflow/forwarder.js';
import { portOfNeighbour } from '../../src/openflow/ports.js';
import { meshIp, meshIp6 } from '../../src/wire/addresses.js';
import { encodeTcp, tcpChecksum } from '../../src/wire/tcp.js';
import { star } from '../support/star.js';
import { apply, output, write } from './support.js';

const ip = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
/** A router's IPv6 address as the flow table sees a labelled packet's: fd00::10.hi.lo.1. */
const meshV6 = (addr: number): number[] => [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, addr >> 8, addr & 0xff, 1];
const add = (priority: number, match: FlowMod['match'], actions: Array<{ type: 'output'; port: number; maxLen: number }>): FlowMod =>
  flowMod({ priority, match, instructions: [{ type: 'apply-actions', actions }] });

test("a mesh packet's fields: in-port from the neighbour it came from, IPv4 addresses of the routers, TCP ports", () => {
  const seg = Uint8Array.of(0x27, 0x11, 0x13, 0x89, 0, 0, 0, 0);
  const f = packetFields({ src: 1, dst: 4, ttl: 30, proto: 'tcp', flow: 0, seq: 0 }, seg, 3);
  assert.deepEqual(f, {
    inPort: portOfNeighbour(3),
    ethType: 0x0800,
    ipProto: 6,
    ipv4Src: ip(10, 0, 1, 1),
    ipv4Dst: ip(10, 0, 4, 1),
    tcpSrc: 10001,
    tcpDst: 5001,
  });
  assert.equal(packetFields({ src: 1, dst: 4, ttl: 30, proto: 'udp', flow: 0, seq: 0 }, new Uint8Array(8), undefined).inPort, OFPP.LOCAL);
});

test("the flow table decides ahead of AODV: an entry drops one flow at the relay, another delivers a flow there; unmatched traffic is AODV's", () => {
  const tables = new FlowTables(1);
  const fw = new FlowTableForwarder(tables, 0);
  // At relay 0: UDP to router 2 is dropped; UDP to router 3 is delivered to the relay itself (LOCAL).
  assert.ok(tables.apply(add(100, { ethType: 0x0800, ipProto: 17, ipv4Dst: { value: ip(10, 0, 2, 1) } }, []), 0).ok, 'drop entry');
  assert.ok(
    tables.apply(add(100, { ethType: 0x0800, ipProto: 17, ipv4Dst: { value: ip(10, 0, 3, 1) } }, [{ type: 'output', port: OFPP.LOCAL, maxLen: 0 }]), 0).ok,
    'local entry',
  );
  const { engine, routers, delivered } = star((i) => (i === 0 ? { forwarder: fw } : {}));
  let seq = 0;
  const send = (now: number): void => {
    routers[1]!.originate(2, 'udp', 1, seq, new Uint8Array(200), now);
    routers[1]!.originate(3, 'udp', 2, seq, new Uint8Array(200), now);
    routers[2]!.originate(1, 'udp', 3, seq++, new Uint8Array(200), now);
    if (now < seconds(10)) engine.at(now + 50 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  engine.run(seconds(11));
  assert.equal(delivered.get(1) ?? 0, 0, 'flow 1 (to router 2) dropped at the relay');
  assert.ok(routers[0]!.drops['flow-table'] > 50, `counted as flow-table drops: ${routers[0]!.drops['flow-table']}`);
  assert.ok((delivered.get(2) ?? 0) > 50, 'flow 2 delivered (to the relay, by its LOCAL output)');
  assert.equal(routers[3]!.counters.delivered, 0, 'router 3 never got flow 2');
  assert.ok((delivered.get(3) ?? 0) > 50, 'flow 3 (2 to 1) matches no entry and AODV routes it');
  assert.ok(fw.counters.matched > 100 && fw.counters.lookups > fw.counters.matched, JSON.stringify(fw.counters));
});

test('instructions in the order the spec fixes: apply-actions run as met, clear-actions empties only the action set, the set runs last', () => {
  const h = { src: 1, dst: 4, ttl: 30, proto: 'udp' as const, flow: 0, seq: 0 };
  const decide = (instructions: FlowMod['instructions'], inFrom: number | 'local' = 7) => {
    const tables = new FlowTables(1);
    const r = tables.apply({ ...add(10, {}, []), instructions }, 0);
    assert.ok(r.ok, JSON.stringify(r));
    return new FlowTableForwarder(tables, 0).decide(h, new Uint8Array(8), inFrom === 'local' ? undefined : inFrom, 1);
  };
  const out = (port: number) => ({ type: 'output' as const, port, maxLen: 0 });
  assert.deepEqual(
    decide([{ type: 'apply-actions', actions: [out(4)] }, { type: 'clear-actions' }]),
    { kind: 'next-hop', nextHop: 3 },
    'clear does not undo an applied output',
  );
  assert.deepEqual(
    decide([{ type: 'write-actions', actions: [out(4)] }, { type: 'clear-actions' }]),
    { kind: 'next-hop', nextHop: 3 },
    'clear runs before write, whatever the list order',
  );
  assert.deepEqual(
    decide([
      { type: 'write-actions', actions: [out(4)] },
      { type: 'apply-actions', actions: [out(6)] },
    ]),
    { kind: 'next-hop', nextHop: 5 },
    'apply runs before the action set',
  );
  assert.deepEqual(
    decide([{ type: 'apply-actions', actions: [out(OFPP.IN_PORT)] }], 'local'),
    { kind: 'deliver' },
    'IN_PORT of a packet originated here is LOCAL',
  );
  assert.deepEqual(decide([{ type: 'apply-actions', actions: [out(OFPP.IN_PORT)] }], 7), { kind: 'next-hop', nextHop: 7 });
  assert.deepEqual(decide([]), { kind: 'drop' }, 'no output: dropped');
});

test('set_queue before the output picks the QoS queue: in apply-actions as met, in the action set ahead of its output; cleared with the set', () => {
  const h = { src: 1, dst: 4, ttl: 30, proto: 'udp' as const, flow: 0, seq: 0 };
  const q = (queueId: number): OfAction => ({ type: 'set-queue', queueId });
  /** Each entry goes into its own table (the first in table 0), each but the last with a GOTO to the next. */
  const decide = (entries: Array<FlowMod['instructions']>, inFrom: number | undefined = 7) => {
    const tables = new FlowTables(entries.length);
    entries.forEach((instructions, tableId) => {
      const goto: FlowMod['instructions'] = tableId + 1 < entries.length ? [{ type: 'goto-table', tableId: tableId + 1 }] : [];
      const r = tables.apply({ ...add(10, {}, []), tableId, instructions: [...instructions, ...goto] }, 0);
      assert.ok(r.ok, `table ${tableId} takes its entry: ${JSON.stringify(r)}`);
    });
    return new FlowTableForwarder(tables, 0).decide(h, new Uint8Array(8), inFrom, 1);
  };
  assert.deepEqual(decide([[apply(q(2), output(4))]]), { kind: 'next-hop', nextHop: 3, queue: 2 }, 'apply: set_queue then output');
  assert.deepEqual(decide([[apply(output(4), q(2))]]), { kind: 'next-hop', nextHop: 3 }, 'apply: a set_queue after the output is too late');
  assert.deepEqual(decide([[apply(q(1), q(2), output(4))]]), { kind: 'next-hop', nextHop: 3, queue: 2 }, 'apply: the last set_queue before the output');
  assert.deepEqual(
    decide([[write(output(4), q(1))]]),
    { kind: 'next-hop', nextHop: 3, queue: 1 },
    'write: the action set runs set_queue before output, whatever the list order',
  );
  assert.deepEqual(
    decide([[apply(q(1)), write(output(4))]]),
    { kind: 'next-hop', nextHop: 3, queue: 1 },
    'an applied set_queue holds for the action set output',
  );
  assert.deepEqual(
    decide([[apply(q(1)), write(q(2), output(4))]]),
    { kind: 'next-hop', nextHop: 3, queue: 2 },
    "the action set's set_queue runs after the applied one",
  );
  assert.deepEqual(decide([[write(q(2)), apply(output(6))]]), { kind: 'next-hop', nextHop: 5 }, 'an applied output goes before the action set: no queue');
  assert.deepEqual(decide([[write(q(1))], [write(output(4))]]), { kind: 'next-hop', nextHop: 3, queue: 1 }, 'set_queue written in table 0, output in table 1');
  assert.deepEqual(
    decide([[write(q(1))], [{ type: 'clear-actions' }, write(output(4))]]),
    { kind: 'next-hop', nextHop: 3 },
    'clear-actions drops the written set_queue',
  );
  assert.deepEqual(
    decide([[apply(q(3), output(OFPP.IN_PORT))]], 7),
    { kind: 'next-hop', nextHop: 7, queue: 3 },
    'IN_PORT back to the neighbour keeps the queue',
  );
  assert.deepEqual(decide([[apply(q(3), output(OFPP.LOCAL))]]), { kind: 'deliver' }, 'LOCAL: delivered, no queue to name');
});

test('a labelled packet is IPv6 with its flow label to the flow table: it matches an ipv6_flabel entry and no IPv4 entry', () => {
  const v6 = (addr: number): Uint8Array => Uint8Array.from(meshV6(addr));
  const labelled = { src: 1, dst: 4, ttl: 30, proto: 'udp' as const, flow: 0, seq: 0, label: 0x100 };
  assert.deepEqual(
    packetFields(labelled, new Uint8Array(8), 3),
    { inPort: portOfNeighbour(3), ethType: 0x86dd, ipProto: 17, ipv6Src: v6(1), ipv6Dst: v6(4), ipv6Flabel: 0x100 },
    'IPv6 fd00::10.0.1.1 to fd00::10.0.4.1, flow label 0x100, no IPv4 fields',
  );
  const seg = Uint8Array.of(0x27, 0x11, 0x13, 0x89, 0, 0, 0, 0);
  const tcp = packetFields({ ...labelled, proto: 'tcp', label: 0xfffff }, seg, undefined);
  assert.deepEqual(
    [tcp.ethType, tcp.ipProto, tcp.ipv6Flabel, tcp.tcpSrc, tcp.tcpDst, tcp.inPort],
    [0x86dd, 6, 0xfffff, 10001, 5001, OFPP.LOCAL],
    'a labelled TCP segment: IPv6, its ports read',
  );

  const tables = new FlowTables(1);
  // A higher-priority IPv4 entry for the same routers, and an IPv6 entry for label 0x100 only.
  assert.ok(
    tables.apply(
      add(200, { ethType: 0x0800, ipProto: 17, ipv4Src: { value: ip(10, 0, 1, 1) }, ipv4Dst: { value: ip(10, 0, 4, 1) } }, [
        { type: 'output', port: 2, maxLen: 0 },
      ]),
      0,
    ).ok,
    'ipv4 entry',
  );
  assert.ok(
    tables.apply(
      add(100, { ethType: 0x86dd, ipProto: 17, ipv6Src: { value: v6(1) }, ipv6Dst: { value: v6(4) }, ipv6Flabel: { value: 0x100 } }, [
        { type: 'output', port: 4, maxLen: 0 },
      ]),
      0,
    ).ok,
    'ipv6 flow label entry',
  );
  const fw = new FlowTableForwarder(tables, 0);
  const decide = (label: number | undefined) => fw.decide({ ...labelled, label }, new Uint8Array(8), 7, 1);
  assert.deepEqual(decide(0x100), { kind: 'next-hop', nextHop: 3 }, 'label 0x100: the IPv6 entry (port 4), not the higher IPv4 one');
  assert.deepEqual(decide(undefined), { kind: 'next-hop', nextHop: 1 }, 'unlabelled: the IPv4 entry (port 2)');
  assert.deepEqual(decide(0), { kind: 'next-hop', nextHop: 1 }, 'label 0 is no label: IPv4');
  assert.equal(decide(0x200), undefined, 'label 0x200: neither entry, AODV routes it');
  assert.ok(
    tables.apply(add(100, { ethType: 0x86dd, ipv6Flabel: { value: 0x100, mask: 0xfff00 } }, [{ type: 'output', port: 6, maxLen: 0 }]), 0).ok,
    'masked label entry',
  );
  assert.deepEqual(decide(0x1ff), { kind: 'next-hop', nextHop: 5 }, 'a masked ipv6_flabel matches 0x1ff under 0xfff00');
});

test('meshFrame of a labelled UDP packet: an IPv6 header with the flow label and a UDP checksum that verifies (zero sent as 0xffff)', () => {
  /** The 16-bit one's complement sum of `parts` (each padded to even length), folded. */
  const sum16 = (...parts: Uint8Array[]): number => {
    let s = 0;
    for (const b of parts) for (let i = 0; i < b.length; i += 2) s += (b[i]! << 8) | (b[i + 1] ?? 0);
    while (s > 0xffff) s = (s & 0xffff) + Math.floor(s / 0x10000);
    return s;
  };
  const h = { src: 0x0102, dst: 4, ttl: 29, proto: 'udp' as const, flow: 3, seq: 9, label: 0xabcde };
  /** Checks a labelled frame of `payload`; returns its UDP checksum field. */
  const check = (payload: Uint8Array): number => {
    const f = meshFrame(h, payload);
    const l4 = 8 + payload.length;
    assert.equal(f.length, 14 + 40 + l4, `Ethernet + IPv6 + UDP + ${payload.length} bytes`);
    assert.deepEqual([...f.subarray(0, 14)], [2, 0, 0, 0, 0, 4, 2, 0, 0, 0, 1, 2, 0x86, 0xdd], 'MACs of the routers, ethertype IPv6');
    const ip = f.subarray(14, 54);
    assert.deepEqual(
      [...ip.subarray(0, 8)],
      [0x60, 0x0a, 0xbc, 0xde, l4 >> 8, l4 & 0xff, 17, 29],
      'version 6, traffic class 0, flow label 0xabcde, payload length, next header UDP, hop limit = TTL',
    );
    assert.deepEqual([...ip.subarray(8, 24)], meshV6(0x0102), 'source fd00::10.1.2.1');
    assert.deepEqual([...ip.subarray(24, 40)], meshV6(4), 'destination fd00::10.0.4.1');
    const udp = f.subarray(54);
    assert.deepEqual([...udp.subarray(0, 6)], [0, 0, 0, 0, l4 >> 8, l4 & 0xff], 'ports 0, UDP length');
    assert.deepEqual([...udp.subarray(8)], [...payload], 'the payload as carried');
    // RFC 8200 8.1 pseudo-header: source, destination, upper-layer length (32 bits), 3 zero bytes, next header.
    const pseudo = Uint8Array.from([...meshV6(0x0102), ...meshV6(4), 0, 0, l4 >> 8, l4 & 0xff, 0, 0, 0, 17]);
    assert.equal(sum16(pseudo, udp), 0xffff, `the UDP checksum verifies over pseudo-header and datagram (payload of ${payload.length})`);
    const ck = (udp[6]! << 8) | udp[7]!;
    assert.notEqual(ck, 0, 'IPv6 UDP never carries checksum 0');
    return ck;
  };
  check(Uint8Array.from({ length: 37 }, (_, i) => (i * 37 + 11) & 0xff));
  check(new Uint8Array(0));
  // A payload whose checksum comes out 0: its last word makes the sum 0xffff, and 0 is sent as 0xffff.
  const payload = Uint8Array.from({ length: 20 }, (_, i) => (i * 13 + 5) & 0xff);
  payload[18] = payload[19] = 0;
  const l4 = 8 + payload.length;
  const rest = sum16(
    Uint8Array.from([...meshV6(0x0102), ...meshV6(4), 0, 0, l4 >> 8, l4 & 0xff, 0, 0, 0, 17]),
    Uint8Array.of(0, 0, 0, 0, l4 >> 8, l4 & 0xff, 0, 0),
    payload,
  );
  const last = 0xffff - rest;
  payload[18] = last >> 8;
  payload[19] = last & 0xff;
  assert.equal(check(payload), 0xffff, 'a computed 0 is sent as 0xffff');
  // Unlabelled, the same packet is IPv4 (and label 0 is no label).
  const v4 = meshFrame({ ...h, label: 0 }, payload);
  assert.deepEqual([v4.length, v4[12], v4[13], v4[14]], [14 + 20 + 8 + payload.length, 0x08, 0x00, 0x45], 'label 0: IPv4');
  // A labelled TCP segment: IPv6, next header 6, the segment right after the header.
  const seg = Uint8Array.from({ length: 24 }, (_, i) => i);
  const t = meshFrame({ ...h, proto: 'tcp' }, seg);
  assert.deepEqual([t.length, t[18], t[19], t[20]], [14 + 40 + 24, 0, 24, 6], 'TCP over IPv6: payload length 24, next header 6');
  assert.deepEqual([...t.subarray(54, 70)], [...seg.subarray(0, 16)], 'the segment as carried up to its checksum (computed again for IPv6: the next test)');
  assert.deepEqual([...t.subarray(72)], [...seg.subarray(18)], 'and after it');
});

test('a labelled TCP segment in a PACKET_IN frame has its checksum computed again over the IPv6 pseudo-header', () => {
  const seg = encodeTcp(
    { srcPort: 1234, dstPort: 5001, seq: 1, ack: 0, flags: 0x02, window: 1000, urgent: 0, options: {}, payload: new Uint8Array([1, 2, 3]) },
    { src: meshIp(0), dst: meshIp(4) },
  );
  const v4 = meshFrame({ src: 0, dst: 4, ttl: 5, proto: 'tcp', flow: 1, seq: 1 }, seg);
  assert.equal(tcpChecksum(v4.subarray(34), { src: v4.subarray(26, 30), dst: v4.subarray(30, 34) }), 0, 'IPv4 frame: the segment as carried');
  const v6 = meshFrame({ src: 0, dst: 4, ttl: 5, proto: 'tcp', flow: 1, seq: 1, label: 0x100 }, seg);
  assert.deepEqual([...v6.subarray(22, 38)], [...meshIp6(0)]);
  assert.equal(tcpChecksum(v6.subarray(54), { src: v6.subarray(22, 38), dst: v6.subarray(38, 54) }), 0, 'IPv6 frame: the checksum holds');
  assert.deepEqual([...v6.subarray(54, 70)], [...seg.subarray(0, 16)], 'the rest of the header as carried');
  assert.deepEqual([...seg.subarray(0, 4)], [0x04, 0xd2, 0x13, 0x89], 'the segment itself is not changed');
  assert.equal(tcpChecksum(seg, { src: meshIp(0), dst: meshIp(4) }), 0, 'the carried segment keeps its IPv4 checksum');
});
