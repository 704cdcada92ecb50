import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OFPP } from '../../src/openflow/actions.js';
import { OfAgent, type AgentSession } from '../../src/openflow/agent.js';
import { FlowTables } from '../../src/openflow/flow-table.js';
import { meshFrame } from '../../src/openflow/forwarder.js';
import { meshPorts } from '../../src/openflow/ports.js';
import { encodeOf, OFPBRC, OFPET, OFPHFC, OFPRRFC, parseOf, type OfMessage } from '../../src/wire/openflow/index.js';
import { CETT_EXP_START_VNF, CETT_EXP_STOP_VNF, CETT_VNF_EXPERIMENTER } from '../../src/openflow/controller.js';

function agent() {
  const a = new OfAgent({
    datapathId: 0x020000000003n,
    tables: new FlowTables(1),
    router: { ports: () => meshPorts({ node: 3, name: 'r3', neighbours: [{ addr: 2, r1Channel: 6 }], w: new Map([[6, 0.5]]), capacityKbps: 2000 }), counters: () => undefined },
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
  assert.deepEqual(replies(a, s1).map((m) => (m.type === 'role-reply' ? [m.role, m.generationId] : m.type)), [['master', 10n]]);
  a.receive(s2, encodeOf({ type: 'role-request', xid: 3, role: 'master', generationId: 11n }), 0);
  replies(a, s2);
  assert.equal(s1.role, 'slave', 'the first master became a slave');
  a.receive(s1, encodeOf({ type: 'role-request', xid: 4, role: 'master', generationId: 9n }), 0);
  const stale = replies(a, s1)[0];
  assert.ok(stale?.type === 'error' && stale.errType === OFPET.ROLE_REQUEST_FAILED && stale.code === OFPRRFC.STALE, JSON.stringify(stale));
  assert.equal(s2.role, 'master', 'a stale request changes nothing');
});

test('asynchronous messages go to sessions past their HELLO only; a PORT_STATUS carries the link RC as curr_speed', () => {
  const a = agent();
  const ready = a.open();
  const early = a.open();
  hello(a, ready);
  replies(a, early);
  a.portStatus([{ reason: 'modify', port: meshPorts({ node: 3, name: 'r3', neighbours: [{ addr: 2, r1Channel: 6 }], w: new Map([[6, 0.25]]), capacityKbps: 2000 })[1]! }]);
  const got = replies(a, ready);
  assert.ok(got[0]?.type === 'port-status' && got[0].port.portNo === 3 && got[0].port.currSpeed === 1500 && got[0].port.maxSpeed === 2000, JSON.stringify(got[0], (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
  assert.equal(replies(a, early).length, 0, 'nothing before HELLO');
});

test('a PACKET_IN carries the packet as an Ethernet frame with a valid IPv4 header, cut to max_len', () => {
  const a = agent();
  const s = a.open();
  hello(a, s);
  const seg = Uint8Array.from({ length: 40 }, (_, i) => i);
  a.packetIn({ reason: 'action', tableId: 0, cookie: 5n, inPort: 3, fields: {}, maxLen: 60, header: { src: 2, dst: 4, ttl: 29, proto: 'tcp', flow: 0, seq: 7 }, payload: seg });
  const m = replies(a, s)[0];
  assert.ok(m?.type === 'packet-in', 'a PACKET_IN');
  assert.equal(m.totalLen, 14 + 20 + 40);
  assert.equal(m.data.length, 60, 'cut to max_len');
  assert.deepEqual([...m.data.subarray(12, 14)], [0x08, 0x00], 'IPv4 ethertype');
  const f = meshFrame({ src: 2, dst: 4, ttl: 29, proto: 'tcp', flow: 0, seq: 7 }, seg);
  let sum = 0;
  for (let i = 14; i < 34; i += 2) sum += (f[i]! << 8) | f[i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  assert.equal(sum, 0xffff, 'the IPv4 checksum verifies');
  assert.deepEqual([...f.subarray(26, 34)], [10, 0, 2, 1, 10, 0, 4, 1], 'the routers\' addresses');
  assert.equal(m.match.inPort, 3);
});

test('PACKET_OUT to ALL, FLOOD or TABLE is taken (and counted: a mesh router has no Ethernet to put it on)', () => {
  const a = agent();
  const s = a.open();
  hello(a, s);
  for (const port of [OFPP.ALL, OFPP.FLOOD, OFPP.TABLE]) {
    a.receive(s, encodeOf({ type: 'packet-out', xid: 5, bufferId: 0xffffffff, inPort: OFPP.CONTROLLER, actions: [{ type: 'output', port, maxLen: 0 }], data: new Uint8Array(20) }), 0);
  }
  assert.equal(replies(a, s).length, 0, 'no error');
  assert.equal(a.counters.packetOuts, 3);
});

test("the controller's VNF placement (experimenter 0x00c06e54): start and stop reach the router's VNFs; bad requests and failed starts are EPERM", async () => {
  const calls: string[] = [];
  const a = new OfAgent({
    datapathId: 3n,
    tables: new FlowTables(1),
    router: { ports: () => [], counters: () => undefined },
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
  const exp = (expType: number, body: string, xid: number) => encodeOf({ type: 'experimenter', xid, experimenter: CETT_VNF_EXPERIMENTER, expType, data: new TextEncoder().encode(body) });
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
  assert.deepEqual(errs, [[12, OFPBRC.EPERM], [13, OFPBRC.BAD_EXP_TYPE], [14, OFPBRC.EPERM]]);
});
