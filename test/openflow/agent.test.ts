import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OFPP, OFPQ_ALL } from '../../src/wire/openflow/actions.js';
import { OfAgent, type AgentQueue, type AgentSession, type PortCounters } from '../../src/openflow/agent.js';
import { FlowTables } from '../../src/openflow/pipeline.js';
import { meshFrame } from '../../src/openflow/forwarder.js';
import { meshPorts } from '../../src/openflow/ports.js';
import { encodeOf, OFPBRC, OFPET, OFPHFC, OFPQOFC, OFPRRFC, parseOf, type OfMessage } from '../../src/wire/openflow/index.js';
import { CETT_EXP_START_VNF, CETT_EXP_STOP_VNF, CETT_VNF_EXPERIMENTER } from '../../src/openflow/controller.js';

function agent() {
  const a = new OfAgent({
    datapathId: 0x020000000003n,
    tables: new FlowTables(1),
    router: {
      ports: () => meshPorts({ node: 3, name: 'r3', neighbours: [{ addr: 2, r1Channel: 6 }], w: new Map([[6, 0.5]]), capacityKbps: 2000 }),
      counters: () => undefined,
      queues: () => [{ queue: 0, minKbps: 0 }],
    },
    node: { id: 3, name: 'r3' },
    version: 'test',
    startUs: 0,
  });
  return a;
}
const replies = (a: OfAgent, s: AgentSession): OfMessage[] =>
  a.drain(s).map((b) => {
    const m = parseOf(b);
    assert.ok(m.ok, `the agent sent something it cannot parse: ${m.ok ? '' : m.error.message}`);
    return m.value;
  });
const hello = (a: OfAgent, s: AgentSession): void => {
  a.receive(s, encodeOf({ type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [1 << 4] }] }), 0);
  replies(a, s);
};

test('a peer must open with a HELLO offering 1.3; otherwise HELLO_FAILED with a text, and the connection closes', () => {
  const a = agent();
  const s = a.open();
  assert.equal(replies(a, s)[0]?.type, 'hello');
  a.receive(s, encodeOf({ type: 'echo-request', xid: 9, data: new Uint8Array(0) }), 0);
  const r = replies(a, s)[0];
  assert.ok(r?.type === 'error' && r.errType === OFPET.HELLO_FAILED && r.code === OFPHFC.EPERM, JSON.stringify(r));
  assert.match(new TextDecoder().decode(r.data), /first message must be a HELLO/);
  assert.equal(s.closing, true);
  const old = a.open();
  replies(a, old);
  a.receive(old, encodeOf({ type: 'hello', version: 1, xid: 1, elements: [] }), 0);
  const e = replies(a, old)[0];
  assert.ok(e?.type === 'error' && e.code === OFPHFC.INCOMPATIBLE && old.closing, 'OpenFlow 1.0 only: incompatible');
});

test('ROLE: a new master demotes the other; a generation id that goes back is stale', () => {
  const a = agent();
  const s1 = a.open();
  const s2 = a.open();
  hello(a, s1);
  hello(a, s2);
  a.receive(s1, encodeOf({ type: 'role-request', xid: 2, role: 'master', generationId: 10n }), 0);
  assert.deepEqual(
    replies(a, s1).map((m) => (m.type === 'role-reply' ? [m.role, m.generationId] : m.type)),
    [['master', 10n]],
  );
  a.receive(s2, encodeOf({ type: 'role-request', xid: 3, role: 'master', generationId: 11n }), 0);
  replies(a, s2);
  assert.equal(s1.role, 'slave', 'the first master became a slave');
  a.receive(s1, encodeOf({ type: 'role-request', xid: 4, role: 'master', generationId: 9n }), 0);
  const stale = replies(a, s1)[0];
  assert.ok(stale?.type === 'error' && stale.errType === OFPET.ROLE_REQUEST_FAILED && stale.code === OFPRRFC.STALE, JSON.stringify(stale));
  assert.equal(s2.role, 'master', 'a stale request changes nothing');
});

test('asynchronous messages go to sessions past their HELLO only, with xid 0; a PORT_STATUS carries the link RC as curr_speed', () => {
  const a = agent();
  const ready = a.open();
  const early = a.open();
  hello(a, ready);
  replies(a, early);
  a.portStatus([
    { reason: 'modify', port: meshPorts({ node: 3, name: 'r3', neighbours: [{ addr: 2, r1Channel: 6 }], w: new Map([[6, 0.25]]), capacityKbps: 2000 })[1]! },
  ]);
  const got = replies(a, ready);
  assert.ok(
    got[0]?.type === 'port-status' && got[0].port.portNo === 3 && got[0].port.currSpeed === 1500 && got[0].port.maxSpeed === 2000,
    JSON.stringify(got[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
  );
  assert.equal(got[0]?.xid, 0, 'xid 0: it answers no request (a tool waiting on a reply of its own xid must not take it for one)');
  assert.equal(replies(a, early).length, 0, 'nothing before HELLO');
});

test('a PACKET_IN carries the packet as an Ethernet frame with a valid IPv4 header, cut to max_len; a labelled one as IPv6 with its flow label', () => {
  const a = agent();
  const s = a.open();
  hello(a, s);
  const seg = Uint8Array.from({ length: 40 }, (_, i) => i);
  a.packetIn({
    reason: 'action',
    tableId: 0,
    cookie: 5n,
    inPort: 3,
    fields: {},
    maxLen: 60,
    header: { src: 2, dst: 4, ttl: 29, proto: 'tcp', flow: 0, seq: 7 },
    payload: seg,
  });
  const m = replies(a, s)[0];
  assert.ok(m?.type === 'packet-in', 'a PACKET_IN');
  assert.equal(m.xid, 0, 'asynchronous: xid 0');
  assert.equal(m.totalLen, 14 + 20 + 40);
  assert.equal(m.data.length, 60, 'cut to max_len');
  assert.deepEqual([...m.data.subarray(12, 14)], [0x08, 0x00], 'IPv4 ethertype');
  const f = meshFrame({ src: 2, dst: 4, ttl: 29, proto: 'tcp', flow: 0, seq: 7 }, seg);
  let sum = 0;
  for (let i = 14; i < 34; i += 2) sum += (f[i]! << 8) | f[i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  assert.equal(sum, 0xffff, 'the IPv4 checksum verifies');
  assert.deepEqual([...f.subarray(26, 34)], [10, 0, 2, 1, 10, 0, 4, 1], "the routers' addresses");
  assert.equal(m.match.inPort, 3);
  const payload = Uint8Array.from({ length: 30 }, (_, i) => i);
  a.packetIn({
    reason: 'action',
    tableId: 0,
    cookie: 1n,
    inPort: 3,
    fields: {},
    maxLen: 0xffff,
    header: { src: 2, dst: 4, ttl: 29, proto: 'udp', flow: 0, seq: 7, label: 0x100 },
    payload,
  });
  const v6 = replies(a, s)[0];
  assert.ok(v6?.type === 'packet-in', 'a PACKET_IN of the labelled packet');
  assert.equal(v6.totalLen, 14 + 40 + 8 + 30, 'Ethernet, IPv6, UDP, payload');
  assert.deepEqual([...v6.data.subarray(12, 18)], [0x86, 0xdd, 0x60, 0x00, 0x01, 0x00], 'IPv6 ethertype, version 6, flow label 0x00100');
});

test('PACKET_OUT to ALL, FLOOD or TABLE is taken (and counted: a mesh router has no Ethernet to put it on)', () => {
  const a = agent();
  const s = a.open();
  hello(a, s);
  for (const port of [OFPP.ALL, OFPP.FLOOD, OFPP.TABLE]) {
    a.receive(
      s,
      encodeOf({
        type: 'packet-out',
        xid: 5,
        bufferId: 0xffffffff,
        inPort: OFPP.CONTROLLER,
        actions: [{ type: 'output', port, maxLen: 0 }],
        data: new Uint8Array(20),
      }),
      0,
    );
  }
  assert.equal(replies(a, s).length, 0, 'no error');
  assert.equal(a.counters.packetOuts, 3);
});

test("the controller's VNF placement (experimenter 0x00c06e54): start and stop reach the router's VNFs; bad requests and failed starts are EPERM", async () => {
  const calls: string[] = [];
  const a = new OfAgent({
    datapathId: 3n,
    tables: new FlowTables(1),
    router: { ports: () => [], counters: () => undefined, queues: () => [{ queue: 0, minKbps: 0 }] },
    node: { id: 3, name: 'r3' },
    version: 'test',
    startUs: 0,
    vnfs: {
      start: async (type, flow, params, ref) => {
        calls.push(`start ${type} ${flow} ${JSON.stringify(params)} ${ref}`);
        if (ref === 99) throw new Error('bad parameters');
      },
      stop: async (type, ref) => void calls.push(`stop ${type} ${ref}`),
    },
  });
  const s = a.open();
  hello(a, s);
  const exp = (expType: number, body: string, xid: number) =>
    encodeOf({ type: 'experimenter', xid, experimenter: CETT_VNF_EXPERIMENTER, expType, data: new TextEncoder().encode(body) });
  a.receive(s, exp(CETT_EXP_START_VNF, '{"type":"tcp-acc","flow":"tcp 10.0.0.1:* > 10.0.4.1:5001","params":{"mode":"split"},"ref":7}', 10), 0);
  a.receive(s, exp(CETT_EXP_STOP_VNF, '{"type":"tcp-acc","flow":"tcp 10.0.0.1:* > 10.0.4.1:5001","ref":7}', 11), 0);
  assert.equal(replies(a, s).length, 0, 'accepted silently');
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(calls, ['start tcp-acc tcp 10.0.0.1:* > 10.0.4.1:5001 {"mode":"split"} 7', 'stop tcp-acc 7']);
  a.receive(s, exp(CETT_EXP_START_VNF, '{not json', 12), 0);
  a.receive(s, exp(9, '{}', 13), 0);
  a.receive(s, exp(CETT_EXP_START_VNF, '{"type":"tcp-acc","flow":"tcp *:* > *:*","ref":99}', 14), 0);
  await new Promise((r) => setTimeout(r, 0));
  const errs = replies(a, s).map((m) => (m.type === 'error' ? [m.xid, m.code] : [m.type]));
  assert.deepEqual(errs, [
    [12, OFPBRC.EPERM],
    [13, OFPBRC.BAD_EXP_TYPE],
    [14, OFPBRC.EPERM],
  ]);
});

/** An agent on router 3 with links to 2 and 5 (ports 3 and 6, C 2000 kbps) and three QoS queues; `counters` per port number. */
function qosAgent(
  counters: Map<number, PortCounters> = new Map(),
  queues: AgentQueue[] = [
    { queue: 1, minKbps: 400 },
    { queue: 2, minKbps: 200 },
    { queue: 0, minKbps: 0 },
  ],
) {
  const a = new OfAgent({
    datapathId: 3n,
    tables: new FlowTables(1),
    router: {
      ports: () =>
        meshPorts({
          node: 3,
          name: 'r3',
          neighbours: [
            { addr: 5, r1Channel: 11 },
            { addr: 2, r1Channel: 6 },
          ],
          w: new Map([[6, 0.5]]),
          capacityKbps: 2000,
        }),
      counters: (portNo) => counters.get(portNo),
      queues: () => queues,
    },
    node: { id: 3, name: 'r3' },
    version: 'test',
    startUs: 1_000_000,
  });
  const s = a.open();
  hello(a, s);
  return { a, s };
}

/** One request, and the one message it is answered with. */
function ask(a: OfAgent, s: AgentSession, m: OfMessage, now = 0): OfMessage {
  a.receive(s, encodeOf(m), now);
  const got = replies(a, s);
  assert.equal(got.length, 1, `one answer to ${m.type}: ${got.map((g) => g.type).join(', ')}`);
  return got[0]!;
}

const queueStatsOf = (a: OfAgent, s: AgentSession, portNo: number, queueId: number, now = 0): OfMessage =>
  ask(a, s, { type: 'multipart-request', xid: 40, flags: 0, body: { type: 'queue', portNo, queueId } }, now);

function assertQueueOpFailed(m: OfMessage, code: number, what: string): void {
  assert.ok(
    m.type === 'error' && m.errType === OFPET.QUEUE_OP_FAILED && m.code === code && m.xid === 40,
    `${what}: QUEUE_OP_FAILED/${code}, got ${JSON.stringify(m, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
  );
  assert.ok(m.data.length > 0, `${what}: the error carries the offending request`);
}

test('queue stats: every link port (not LOCAL) has each QoS queue, counted per queue from the link counters; one queue asked, that one', () => {
  const link = (queues: Array<[number, number, number, number]>): PortCounters => ({
    rxPackets: 0,
    rxBytes: 0,
    txPackets: 999,
    txBytes: 99_999,
    txDropped: 99,
    queues: new Map(queues.map(([q, p, b, e]) => [q, { txPackets: p, txBytes: b, txErrors: e }])),
  });
  // Port 3 (neighbour 2) has traffic in every queue; port 6 (neighbour 5) only in high's.
  const counters = new Map([
    [
      3,
      link([
        [1, 10, 5000, 1],
        [2, 20, 10_000, 2],
        [0, 30, 30_000, 7],
      ]),
    ],
    [6, link([[1, 4, 2000, 0]])],
  ]);
  const { a, s } = qosAgent(counters);
  const all = queueStatsOf(a, s, OFPP.ANY, OFPQ_ALL, 3_500_000);
  assert.ok(all.type === 'multipart-reply' && all.body.type === 'queue', `a queue stats reply: ${all.type}`);
  const rows = all.body.stats.map((q) => [q.portNo, q.queueId, Number(q.txPackets), Number(q.txBytes), Number(q.txErrors)]);
  assert.deepEqual(
    rows,
    [
      [3, 1, 10, 5000, 1],
      [3, 2, 20, 10_000, 2],
      [3, 0, 30, 30_000, 7],
      [6, 1, 4, 2000, 0],
      [6, 2, 0, 0, 0],
      [6, 0, 0, 0, 0],
    ],
    'port by port, the queues in priority order, each with its own counters (not the port totals)',
  );
  assert.ok(
    all.body.stats.every((q) => q.durationSec === 2 && q.durationNsec === 500_000_000),
    'duration since the agent started (2.5 s)',
  );

  const one = queueStatsOf(a, s, 3, 2);
  assert.ok(one.type === 'multipart-reply' && one.body.type === 'queue', 'a reply for port 3 queue 2');
  assert.deepEqual(
    one.body.stats.map((q) => [q.portNo, q.queueId, Number(q.txPackets), Number(q.txErrors)]),
    [[3, 2, 20, 2]],
    'port 3, queue 2 only',
  );
  const be = queueStatsOf(a, s, OFPP.ANY, 0);
  assert.ok(be.type === 'multipart-reply' && be.body.type === 'queue', 'a reply for queue 0 everywhere');
  assert.deepEqual(
    be.body.stats.map((q) => [q.portNo, q.queueId, Number(q.txBytes)]),
    [
      [3, 0, 30_000],
      [6, 0, 0],
    ],
    'best effort on both link ports',
  );
  const port6 = queueStatsOf(a, s, 6, OFPQ_ALL);
  assert.ok(port6.type === 'multipart-reply' && port6.body.type === 'queue', 'a reply for port 6');
  assert.deepEqual(
    port6.body.stats.map((q) => q.queueId),
    [1, 2, 0],
    'port 6: its three queues',
  );
});

test('queue stats refused: a queue no class has is BAD_QUEUE, a port that is not a link (unknown, or LOCAL) is BAD_PORT', () => {
  const { a, s } = qosAgent();
  assertQueueOpFailed(queueStatsOf(a, s, 3, 7), OFPQOFC.BAD_QUEUE, 'queue 7 on port 3');
  assertQueueOpFailed(queueStatsOf(a, s, OFPP.ANY, 7), OFPQOFC.BAD_QUEUE, 'queue 7 on any port');
  assertQueueOpFailed(queueStatsOf(a, s, 9, OFPQ_ALL), OFPQOFC.BAD_PORT, 'port 9 (no neighbour 8)');
  assertQueueOpFailed(queueStatsOf(a, s, OFPP.LOCAL, OFPQ_ALL), OFPQOFC.BAD_PORT, 'LOCAL has no R2 queue');
  // Without classes, best effort is the one queue.
  const plain = qosAgent(new Map(), [{ queue: 0, minKbps: 0 }]);
  assertQueueOpFailed(queueStatsOf(plain.a, plain.s, 3, 1), OFPQOFC.BAD_QUEUE, 'queue 1 without classes');
  const only = queueStatsOf(plain.a, plain.s, OFPP.ANY, OFPQ_ALL);
  assert.ok(only.type === 'multipart-reply' && only.body.type === 'queue', 'a reply');
  assert.deepEqual(
    only.body.stats.map((q) => [q.portNo, q.queueId]),
    [
      [3, 0],
      [6, 0],
    ],
    'one queue per link port',
  );
});

test("QUEUE_GET_CONFIG: each link port's queues with min_rate in 1/10 % of the port's C, best effort without a property; BAD_PORT otherwise", () => {
  const { a, s } = qosAgent(new Map(), [
    { queue: 1, minKbps: 400 },
    { queue: 2, minKbps: 5000 },
    { queue: 4, minKbps: 0.3 },
    { queue: 0, minKbps: 0 },
  ]);
  const get = (portNo: number): OfMessage => ask(a, s, { type: 'queue-get-config-request', xid: 40, portNo });
  const one = get(3);
  assert.ok(one.type === 'queue-get-config-reply' && one.xid === 40 && one.portNo === 3, `a reply for port 3: ${one.type}`);
  assert.deepEqual(
    one.queues,
    [
      { queueId: 1, portNo: 3, properties: [{ type: 'min-rate', rate: 200 }] },
      { queueId: 2, portNo: 3, properties: [{ type: 'min-rate', rate: 1000 }] },
      { queueId: 4, portNo: 3, properties: [{ type: 'min-rate', rate: 1 }] },
      { queueId: 0, portNo: 3, properties: [] },
    ],
    '400 of 2000 kbps is 20.0 %; more than C is capped at 100 %; a small guarantee is still one; best effort has none',
  );
  const any = get(OFPP.ANY);
  assert.ok(any.type === 'queue-get-config-reply' && any.portNo === OFPP.ANY, 'a reply for every port');
  assert.deepEqual(
    any.queues.map((q) => [q.portNo, q.queueId]),
    [
      [3, 1],
      [3, 2],
      [3, 4],
      [3, 0],
      [6, 1],
      [6, 2],
      [6, 4],
      [6, 0],
    ],
    'both link ports, LOCAL not among them',
  );
  assertQueueOpFailed(get(9), OFPQOFC.BAD_PORT, 'port 9');
  assertQueueOpFailed(get(OFPP.LOCAL), OFPQOFC.BAD_PORT, 'LOCAL');
});
