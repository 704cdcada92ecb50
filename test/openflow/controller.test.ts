import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OFPP, OFPTT_ALL } from '../../src/wire/openflow/actions.js';
import { CETT_EXP_START_VNF, CETT_EXP_STOP_VNF, CETT_VNF_EXPERIMENTER, CettController, type Send } from '../../src/openflow/controller.js';
import { meshIpv4 } from '../../src/wire/addresses.js';
import { type FlowSpec } from '../../src/openflow/flow-spec.js';
import { OfAgent, type AgentSession } from '../../src/openflow/agent.js';
import { FlowTables } from '../../src/openflow/pipeline.js';
import { meshPorts } from '../../src/openflow/ports.js';
import type { PacketFields } from '../../src/wire/openflow/match.js';
import { encodeOf, parseOf, type OfMessage, type OfPort } from '../../src/wire/openflow/index.js';

const key = (a: number): string => `r${a}`;
const addrOf = (k: string): number => Number(k.slice(1));
const dec = new TextDecoder();

const port = (from: number, to: number, rc: number): OfPort => ({
  portNo: to + 1,
  hwAddr: Uint8Array.of(2, 0, 0, 0, from, to),
  name: `r${from}-n${to}`,
  config: 0,
  state: 0,
  curr: 0,
  advertised: 0,
  supported: 0,
  peer: 0,
  currSpeed: rc,
  maxSpeed: 2000,
});

interface VnfMsg {
  router: number;
  expType: number;
  body: { type: string; flow: string; params?: Record<string, unknown>; ref: number };
}

/**
 * Fake switches: every message the controller sends is encoded (wire-valid),
 * parsed back, and FLOW_MODs applied to a real flow table per router, so
 * packets can be traced hop by hop.
 */
class Mesh {
  readonly ctl: CettController<string>;
  readonly tables = new Map<number, FlowTables>();
  readonly vnfMsgs: VnfMsg[] = [];
  /** Routers running a VNF instance, by ref. */
  readonly vnfs = new Map<number, Set<number>>();
  lastXid = 0;
  now = 0;

  constructor(opts: ConstructorParameters<typeof CettController>[0] = {}) {
    this.ctl = new CettController<string>(opts);
  }

  /** Connects router `a` with links to the given neighbours (RC kbps). */
  connect(a: number, links: Array<[number, number]>): Send<string>[] {
    this.tables.set(a, new FlowTables(1));
    const hello = this.ctl.open(key(a));
    assert.deepEqual(
      hello.map((m) => m.type),
      ['hello', 'features-request', 'multipart-request'],
      'a session starts with HELLO, FEATURES_REQUEST, PORT_DESC request',
    );
    this.deliver(hello.map((msg) => ({ to: key(a), msg })));
    const out: Send<string>[] = [];
    out.push(...this.feed(a, { type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [1 << 4] }] }));
    out.push(
      ...this.feed(a, { type: 'features-reply', xid: 2, datapathId: (0x02n << 40n) | BigInt(a), nBuffers: 0, nTables: 1, auxiliaryId: 0, capabilities: 0 }),
    );
    out.push(
      ...this.feed(a, {
        type: 'multipart-reply',
        xid: 3,
        flags: 0,
        body: { type: 'port-desc', ports: [{ ...port(a, 0, 2000), portNo: OFPP.LOCAL, name: `r${a}-local` }, ...links.map(([b, rc]) => port(a, b, rc))] },
      }),
    );
    return out;
  }

  /** A bidirectional link: both ends' ports. */
  static both(edges: Array<[number, number, number]>): Map<number, Array<[number, number]>> {
    const m = new Map<number, Array<[number, number]>>();
    for (const [a, b, rc] of edges) {
      m.set(a, [...(m.get(a) ?? []), [b, rc]]);
      m.set(b, [...(m.get(b) ?? []), [a, rc]]);
    }
    return m;
  }

  build(edges: Array<[number, number, number]>): void {
    for (const [a, links] of [...Mesh.both(edges)].sort((x, y) => x[0] - y[0])) this.connect(a, links);
  }

  /** A message from router a's switch to the controller; what the controller answers is delivered. */
  feed(a: number, msg: OfMessage): Send<string>[] {
    const out = this.ctl.receive(key(a), msg, this.now);
    this.deliver(out);
    return out;
  }

  setRc(a: number, b: number, rc: number): Send<string>[] {
    return this.feed(a, { type: 'port-status', xid: 0, reason: 'modify', port: port(a, b, rc) });
  }

  dropPort(a: number, b: number): Send<string>[] {
    return this.feed(a, { type: 'port-status', xid: 0, reason: 'delete', port: port(a, b, 0) });
  }

  deliver(out: readonly Send<string>[]): void {
    for (const { to, msg } of out) {
      assert.ok(msg.xid > this.lastXid || msg.type === 'echo-reply', `xids increase: ${msg.type} xid ${msg.xid} after ${this.lastXid}`);
      if (msg.type !== 'echo-reply') this.lastXid = msg.xid;
      const bytes = encodeOf(msg);
      const back = parseOf(bytes);
      assert.ok(back.ok, `${msg.type} to ${to} parses back: ${back.ok ? '' : back.error.message}`);
      if (!back.ok) continue;
      const m = back.value;
      const a = addrOf(to);
      if (m.type === 'flow-mod') {
        const t = this.tables.get(a);
        assert.ok(t, `flow-mod to a known router ${a}`);
        const r = t.apply(m.mod, this.now);
        assert.ok(r.ok, `router ${a} accepts the FLOW_MOD: ${r.ok ? '' : r.error.detail}`);
      } else if (m.type === 'experimenter') {
        assert.equal(m.experimenter, CETT_VNF_EXPERIMENTER, 'experimenter id');
        const body = JSON.parse(dec.decode(m.data)) as VnfMsg['body'];
        this.vnfMsgs.push({ router: a, expType: m.expType, body });
        const set = this.vnfs.get(body.ref) ?? new Set<number>();
        if (m.expType === CETT_EXP_START_VNF) {
          assert.ok(!set.has(a), `no second start of ref ${body.ref} on ${a}`);
          set.add(a);
        } else {
          assert.equal(m.expType, CETT_EXP_STOP_VNF, 'expType start or stop');
          assert.ok(set.has(a), `stop of ref ${body.ref} on ${a} where it runs`);
          set.delete(a);
        }
        this.vnfs.set(body.ref, set);
      }
    }
  }

  /** Follows a packet from `from` by the flow tables: the routers it visits, ending where it is delivered (LOCAL). */
  trace(from: number, fields: PacketFields): number[] | 'no-entry' | 'loop' {
    const seen = [from];
    let at = from;
    for (let i = 0; i < 20; i++) {
      const e = this.tables.get(at)?.lookup(0, fields, this.now, 100);
      if (!e) return 'no-entry';
      const ins = e.instructions[0];
      const act = ins && ins.type === 'apply-actions' ? ins.actions[0] : undefined;
      if (!act || act.type !== 'output') return 'no-entry';
      if (act.port === OFPP.LOCAL) return seen;
      at = act.port - 1;
      seen.push(at);
    }
    return 'loop';
  }

  entries(a: number): number {
    return this.tables.get(a)?.table(0)?.list().length ?? 0;
  }
}

const tcpFields = (src: number, dst: number, sport: number, dport: number): PacketFields => ({
  ethType: 0x0800,
  ipProto: 6,
  ipv4Src: meshIpv4(src),
  ipv4Dst: meshIpv4(dst),
  tcpSrc: sport,
  tcpDst: dport,
});

const flowMods = (out: readonly Send<string>[], to: number) =>
  out.filter((s) => s.to === key(to) && s.msg.type === 'flow-mod').map((s) => (s.msg.type === 'flow-mod' ? s.msg.mod : assert.fail('flow-mod')));

const chain = (): Mesh => {
  const m = new Mesh();
  m.build([
    [0, 1, 1000],
    [1, 2, 1000],
    [2, 3, 1000],
    [3, 4, 1000],
  ]);
  return m;
};

/** 0 - 1 - 3 and 0 - 2 - 3. */
const diamond = (opts: ConstructorParameters<typeof CettController>[0] = {}): Mesh => {
  const m = new Mesh(opts);
  m.build([
    [0, 1, 1000],
    [0, 2, 1000],
    [1, 3, 1000],
    [2, 3, 1000],
  ]);
  return m;
};

const flow = (over: Partial<FlowSpec> = {}): FlowSpec => ({ id: 7, proto: 'tcp', srcAddr: 0, dstAddr: 4, dstPort: 5001, ...over });

function added(m: Mesh, spec: FlowSpec): { out: Send<string>[]; routers: number[]; cett: number; state: string } {
  const r = m.ctl.addFlow(spec, m.now);
  assert.ok(r.ok, `addFlow ${spec.id} accepted: ${r.ok ? '' : r.error.detail}`);
  if (!r.ok) assert.fail('unreachable');
  m.deliver(r.value.out);
  return r.value;
}

test('the handshake: HELLO, FEATURES_REQUEST, PORT_DESC; the topology from FEATURES_REPLY and PORT_DESC; echo answered', () => {
  const m = chain();
  const topo = m.ctl.topology();
  assert.deepEqual(
    topo.routers.map((r) => [r.addr, r.key, r.datapathId]),
    [0, 1, 2, 3, 4].map((a) => [a, key(a), (0x02n << 40n) | BigInt(a)]),
    'five routers, addresses from the datapath ids',
  );
  assert.equal(topo.links.length, 8, 'eight directed links in a 5-chain (LOCAL is no link)');
  const l12 = topo.links.find((l) => l.from === 1 && l.to === 2);
  assert.ok(l12, 'link 1 -> 2 known');
  assert.deepEqual([l12.portNo, l12.rcKbps, l12.ett], [3, 1000, 0.008], 'port 3 (neighbour 2 + 1), RC 1000 kbps, ETT 8000 bits / 1 Mbps');
  const echo = m.feed(2, { type: 'echo-request', xid: 99, data: Uint8Array.of(1, 2) });
  assert.deepEqual(
    echo.map((s) => [s.to, s.msg.type, s.msg.xid]),
    [[key(2), 'echo-reply', 99]],
    'echo answered with its xid',
  );
});

test('a TCP flow along a 5-router chain: both directions on every router, cookie = id, LOCAL at the ends', () => {
  const m = chain();
  const r = added(m, flow());
  assert.equal(r.state, 'installed', 'installed');
  assert.deepEqual(r.routers, [0, 1, 2, 3, 4], 'the chain');
  assert.ok(Math.abs(r.cett - 0.032) < 1e-12, `CETT 4 x 8 ms, got ${r.cett}`);
  // One action list per router, contiguous.
  assert.deepEqual(
    r.out.map((s) => s.to),
    [0, 0, 1, 1, 2, 2, 3, 3, 4, 4].map(key),
    'two FLOW_MODs per router, router by router',
  );
  for (let a = 0; a <= 4; a++) {
    const mods = flowMods(r.out, a);
    assert.equal(mods.length, 2, `router ${a}: two FLOW_MODs`);
    const [fwd, rev] = mods;
    assert.ok(fwd && rev, `router ${a}: forward and reverse`);
    for (const mod of mods) {
      assert.deepEqual([mod.command, mod.cookie, mod.priority, mod.tableId], ['add', 7n, 1000, 0], `router ${a}: add, cookie 7, priority 1000, table 0`);
    }
    assert.deepEqual(
      fwd.match,
      { ethType: 0x0800, ipProto: 6, ipv4Src: { value: meshIpv4(0) }, ipv4Dst: { value: meshIpv4(4) }, tcpDst: 5001 },
      `router ${a}: forward match`,
    );
    assert.deepEqual(
      rev.match,
      { ethType: 0x0800, ipProto: 6, ipv4Src: { value: meshIpv4(4) }, ipv4Dst: { value: meshIpv4(0) }, tcpSrc: 5001 },
      `router ${a}: reverse (ACK) match`,
    );
    assert.deepEqual(
      fwd.instructions,
      [{ type: 'apply-actions', actions: [{ type: 'output', port: a === 4 ? OFPP.LOCAL : a + 2, maxLen: 0 }] }],
      `router ${a}: forward output`,
    );
    assert.deepEqual(
      rev.instructions,
      [{ type: 'apply-actions', actions: [{ type: 'output', port: a === 0 ? OFPP.LOCAL : a, maxLen: 0 }] }],
      `router ${a}: reverse output`,
    );
  }
  assert.equal(meshIpv4(4), 0x0a000401, '10.0.4.1');
  assert.deepEqual(m.trace(0, tcpFields(0, 4, 40000, 5001)), [0, 1, 2, 3, 4], 'data follows the chain to router 4');
  assert.deepEqual(m.trace(4, tcpFields(4, 0, 5001, 40000)), [4, 3, 2, 1, 0], 'ACKs follow it back');
  assert.equal(m.trace(0, tcpFields(0, 4, 40000, 80)), 'no-entry', 'another port is not this flow');
  assert.deepEqual(m.ctl.paths(), [{ id: 7, state: 'installed', routers: [0, 1, 2, 3, 4], cett: r.cett, vnfs: [] }], 'paths()');
  assert.equal(m.ctl.counters.flowModsSent, 10, 'ten FLOW_MODs counted');
});

test('a UDP flow matches udp_dst forward and udp_src back; without a port, the addresses alone', () => {
  const m = chain();
  const r = added(m, flow({ id: 3, proto: 'udp', srcAddr: 4, dstAddr: 1, dstPort: 9000 }));
  assert.deepEqual(r.routers, [4, 3, 2, 1], 'from 4 down to 1');
  const [fwd, rev] = flowMods(r.out, 2);
  assert.deepEqual(
    fwd?.match,
    { ethType: 0x0800, ipProto: 17, ipv4Src: { value: meshIpv4(4) }, ipv4Dst: { value: meshIpv4(1) }, udpDst: 9000 },
    'forward udp match',
  );
  assert.deepEqual(
    rev?.match,
    { ethType: 0x0800, ipProto: 17, ipv4Src: { value: meshIpv4(1) }, ipv4Dst: { value: meshIpv4(4) }, udpSrc: 9000 },
    'reverse udp match',
  );
  const r2 = added(m, flow({ id: 4, dstPort: undefined }));
  const [f2] = flowMods(r2.out, 0);
  assert.deepEqual(
    f2?.match,
    { ethType: 0x0800, ipProto: 6, ipv4Src: { value: meshIpv4(0) }, ipv4Dst: { value: meshIpv4(4) } },
    'no port: addresses and protocol',
  );
});

test('the diamond: equal branches go to the lower address; with one branch slower, the flow takes the other', () => {
  const m = diamond();
  const a = added(m, flow({ id: 1, dstAddr: 3 }));
  assert.deepEqual(a.routers, [0, 1, 3], 'a tie goes to the lower relay');
  m.setRc(1, 3, 500);
  m.setRc(3, 1, 500);
  const b = added(m, flow({ id: 2, dstAddr: 3, dstPort: 5002 }));
  assert.deepEqual(b.routers, [0, 2, 3], 'branch 1 slower (RC 500): branch 2');
  assert.ok(Math.abs(b.cett - 0.016) < 1e-12, `CETT 16 ms, got ${b.cett}`);
  assert.deepEqual(m.trace(0, tcpFields(0, 3, 1, 5002)), [0, 2, 3], 'flow 2 traced through 2');
  // Fewer hops win a tie in cost: 0-3 direct at 500 kbps (16 ms) against 0-2-3 (16 ms).
  const m2 = new Mesh();
  m2.build([
    [0, 2, 1000],
    [2, 3, 1000],
    [0, 3, 500],
  ]);
  assert.deepEqual(m2.ctl.bestPath(0, 3)?.routers, [0, 3], 'equal CETT: fewer hops');
  // RC 0 makes a link unusable.
  m2.setRc(0, 3, 0);
  assert.deepEqual(m2.ctl.bestPath(0, 3)?.routers, [0, 2, 3], 'RC 0: no link');
  // A link one way only (no port back for ACKs) is not used.
  m2.dropPort(3, 2);
  assert.equal(m2.ctl.bestPath(0, 3), undefined, 'no path without the reverse link');
});

test('re-route with hysteresis: a small drop does not move the flow, a big one does; the old relay loses its entries', () => {
  const m = diamond();
  added(m, flow({ dstAddr: 3 }));
  assert.equal(m.entries(1), 2, 'relay 1 holds the forward and reverse entries');
  // 8 + 8.9 ms against 16 ms: 5.6 % worse, within 20 %.
  const small = m.setRc(1, 3, 900);
  assert.deepEqual(small, [], 'a small drop sends nothing');
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 1, 3], 'still through 1');
  assert.equal(m.ctl.counters.reroutes, 0, 'no re-route');
  // 8 + 20 = 28 ms against 16 ms: moves.
  const big = m.setRc(1, 3, 400);
  assert.equal(m.ctl.counters.reroutes, 1, 'one re-route');
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 2, 3], 'now through 2');
  const kinds = big.map((s) => `${addrOf(s.to)}:${s.msg.type === 'flow-mod' ? s.msg.mod.command : s.msg.type}`);
  assert.deepEqual(kinds, ['0:add', '0:add', '2:add', '2:add', '3:add', '3:add', '1:delete'], 'adds on the new path first, then the delete on the old relay');
  const del = flowMods(big, 1)[0];
  assert.ok(del, 'a delete for router 1');
  assert.deepEqual(
    [del.cookie, del.cookieMask, del.tableId, del.outPort],
    [7n, 0xffff_ffff_ffff_ffffn, OFPTT_ALL, OFPP.ANY],
    'delete by cookie, masked, every table',
  );
  assert.equal(m.entries(1), 0, 'relay 1 has no entries left');
  assert.equal(m.entries(0), 2, 'the source still holds two (replaced) entries');
  assert.deepEqual(m.trace(0, tcpFields(0, 3, 1, 5001)), [0, 2, 3], 'data through 2');
  assert.deepEqual(m.trace(3, tcpFields(3, 0, 5001, 1)), [3, 2, 0], 'ACKs through 2');
  // Hysteresis 0: any strictly better path moves it back.
  const m0 = diamond({ hysteresis: 0 });
  added(m0, flow({ dstAddr: 3 }));
  m0.setRc(1, 3, 990);
  assert.deepEqual(m0.ctl.paths()[0]?.routers, [0, 2, 3], 'hysteresis 0: moves at once');
});

test('link loss re-routes; with no path left the flow is pending and its entries gone; a new path reinstalls it', () => {
  const m = diamond();
  added(m, flow({ dstAddr: 3 }));
  const out = m.dropPort(0, 1);
  assert.ok(out.length > 0, 'the loss sends something');
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 2, 3], 'moved to 2');
  assert.equal(m.entries(1), 0, 'relay 1 cleared');
  m.dropPort(2, 3);
  const p = m.ctl.paths()[0];
  assert.ok(p, 'the flow is still known');
  assert.deepEqual([p.state, p.routers], ['pending', []], 'no path: pending');
  for (const a of [0, 1, 2, 3]) assert.equal(m.entries(a), 0, `router ${a} has no entries`);
  m.feed(2, { type: 'port-status', xid: 0, reason: 'add', port: port(2, 3, 800) });
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 2, 3], 'the link back: installed again');
  assert.deepEqual(m.trace(0, tcpFields(0, 3, 1, 5001)), [0, 2, 3], 'traced');
  // A port whose link is down is no link either.
  m.feed(0, { type: 'port-status', xid: 0, reason: 'modify', port: { ...port(0, 2, 1000), state: 1 } });
  assert.equal(m.ctl.paths()[0]?.state, 'pending', 'LINK_DOWN: pending');
});

test('a relay whose session closes: flows through it move', () => {
  const m = diamond();
  added(m, flow({ dstAddr: 3 }));
  const out = m.ctl.close(key(1), m.now);
  m.deliver(out);
  assert.ok(
    out.every((s) => s.to !== key(1)),
    'nothing is sent to the closed session',
  );
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 2, 3], 'through 2');
  assert.ok(
    m.ctl.topology().routers.every((r) => r.addr !== 1),
    'router 1 left the topology',
  );
});

test('a flow added before its routers are known is pending and installs when the path appears', () => {
  const m = new Mesh();
  const r = m.ctl.addFlow(flow({ dstAddr: 2 }), 0);
  assert.ok(r.ok && r.value.state === 'pending' && r.value.out.length === 0, 'pending, nothing sent');
  m.build([
    [0, 1, 1000],
    [1, 2, 1000],
  ]);
  assert.deepEqual(m.ctl.paths()[0]?.routers, [0, 1, 2], 'installed once the chain is known');
  assert.deepEqual(m.trace(0, tcpFields(0, 2, 1, 5001)), [0, 1, 2], 'traced');
});

test('TCP-ACC: an experimenter START on every relay, STOP when the flow is removed; everyHops thins them', () => {
  const m = chain();
  const r = added(m, flow({ acc: { mode: 'split' } }));
  const starts = r.out.filter((s) => s.msg.type === 'experimenter');
  assert.deepEqual(
    starts.map((s) => addrOf(s.to)),
    [1, 2, 3],
    'relays only',
  );
  const firstVnf = r.out.findIndex((s) => s.msg.type === 'experimenter');
  assert.ok(
    r.out.slice(firstVnf).every((s) => s.msg.type === 'experimenter'),
    'VNFs start after the entries are in',
  );
  assert.deepEqual(
    m.vnfMsgs[0],
    { router: 1, expType: CETT_EXP_START_VNF, body: { type: 'tcp-acc', flow: 'tcp:10.0.0.1-10.0.4.1:5001', params: { mode: 'split' }, ref: 7 } },
    'the start message',
  );
  assert.deepEqual(m.ctl.paths()[0]?.vnfs, [1, 2, 3], 'paths() lists the VNF sites');
  const rm = m.ctl.removeFlow(7, m.now);
  assert.ok(rm.ok, 'removed');
  if (!rm.ok) return;
  m.deliver(rm.value);
  assert.deepEqual(
    rm.value.map(
      (s) => `${addrOf(s.to)}:${s.msg.type === 'flow-mod' ? s.msg.mod.command : s.msg.type === 'experimenter' ? `exp${s.msg.expType}` : s.msg.type}`,
    ),
    ['0:delete', '1:delete', '2:delete', '3:delete', '4:delete', '1:exp2', '2:exp2', '3:exp2'],
    'deletes everywhere, then the VNFs stop',
  );
  const stop = m.vnfMsgs.at(-1);
  assert.deepEqual(stop?.body, { type: 'tcp-acc', flow: 'tcp:10.0.0.1-10.0.4.1:5001', ref: 7 }, 'the stop message');
  assert.equal(m.vnfs.get(7)?.size, 0, 'no VNF left');
  for (const a of [0, 1, 2, 3, 4]) assert.equal(m.entries(a), 0, `router ${a}: no entries`);
  assert.deepEqual(m.ctl.paths(), [], 'no flows');
  const thin = added(m, flow({ id: 8, acc: { mode: 'e2e', everyHops: 2, bufferBytes: 65536 } }));
  const ex = thin.out.filter((s) => s.msg.type === 'experimenter');
  assert.deepEqual(
    ex.map((s) => addrOf(s.to)),
    [2],
    'every second relay: router 2 only',
  );
  assert.deepEqual(m.vnfMsgs.at(-1)?.body.params, { mode: 'e2e', bufferBytes: 65536 }, 'e2e with its buffer');
});

test('TCP-ACC follows a re-route: stopped on the relay left, started on the new one', () => {
  const m = diamond();
  added(m, flow({ dstAddr: 3, acc: { mode: 'split' } }));
  assert.deepEqual([...(m.vnfs.get(7) ?? [])], [1], 'VNF on relay 1');
  const out = m.setRc(0, 1, 300);
  const seq = out.map(
    (s) => `${addrOf(s.to)}:${s.msg.type === 'flow-mod' ? s.msg.mod.command : s.msg.type === 'experimenter' ? `exp${s.msg.expType}` : s.msg.type}`,
  );
  assert.deepEqual(seq, ['0:add', '0:add', '2:add', '2:add', '3:add', '3:add', '2:exp1', '1:delete', '1:exp2'], 'new entries, new VNF, then the old ones go');
  assert.deepEqual([...(m.vnfs.get(7) ?? [])], [2], 'VNF on relay 2');
});

test('refusals are values: duplicate id, unknown flow, bad specs', () => {
  const m = chain();
  added(m, flow());
  const dup = m.ctl.addFlow(flow(), 0);
  assert.ok(!dup.ok && dup.error.reason === 'duplicate-id', 'duplicate id refused');
  const unknown = m.ctl.removeFlow(99, 0);
  assert.ok(!unknown.ok && unknown.error.reason === 'unknown-flow', 'unknown flow refused');
  const udpAcc = m.ctl.addFlow(flow({ id: 9, proto: 'udp', acc: { mode: 'split' } }), 0);
  assert.ok(!udpAcc.ok && udpAcc.error.reason === 'bad-spec', 'TCP-ACC on UDP refused');
  const same = m.ctl.addFlow(flow({ id: 10, dstAddr: 0 }), 0);
  assert.ok(!same.ok && same.error.reason === 'bad-spec', 'source = destination refused');
  const neg = m.ctl.addFlow(flow({ id: -1 }), 0);
  assert.ok(!neg.ok && neg.error.reason === 'bad-spec', 'negative id refused');
  const hops = m.ctl.addFlow(flow({ id: 11, acc: { mode: 'split', everyHops: 0 } }), 0);
  assert.ok(!hops.ok && hops.error.reason === 'bad-spec', 'everyHops 0 refused');
  assert.equal(m.ctl.paths().length, 1, 'only the first flow exists');
  assert.deepEqual(m.ctl.receive('nobody', { type: 'barrier-reply', xid: 1 }, 0), [], 'a message from an unknown session is ignored');
  m.feed(1, { type: 'error', xid: 5, errType: 1, code: 3, data: new Uint8Array(0) });
  assert.equal(m.ctl.counters.errors, 1, 'an ERROR is counted');
});

test('against the real agents of a 3-router chain: the handshake, the entries in their tables, PORT_STATUS re-routing, ERROR for the experimenter counted', () => {
  const agents = new Map<number, { agent: OfAgent; session: AgentSession; tables: FlowTables; rc: Map<number, number> }>();
  const ctl = new CettController<number>();
  const links: Record<number, number[]> = { 0: [1, 2], 1: [0, 2], 2: [0, 1] };
  let errors = 0;
  const pump = (a: number): void => {
    // Agent -> controller, and what the controller answers back, until quiet.
    for (let round = 0; round < 10; round++) {
      const x = agents.get(a);
      assert.ok(x, `agent ${a}`);
      const bytes = x.agent.drain(x.session);
      if (bytes.length === 0) return;
      for (const b of bytes) {
        const m = parseOf(b);
        assert.ok(m.ok, `agent ${a} sent a parseable message`);
        if (!m.ok) continue;
        if (m.value.type === 'error') errors++;
        send(ctl.receive(a, m.value, 0));
      }
    }
  };
  const send = (out: readonly Send<number>[]): void => {
    for (const s of out) {
      const x = agents.get(s.to);
      assert.ok(x, `a message for agent ${s.to}`);
      x.agent.receive(x.session, encodeOf(s.msg), 0);
    }
    for (const a of new Set(out.map((s) => s.to))) pump(a);
  };
  for (const a of [0, 1, 2]) {
    const rc = new Map<number, number>((links[a] ?? []).map((b) => [b, 1000]));
    const tables = new FlowTables(1);
    const agent = new OfAgent({
      datapathId: (0x02n << 40n) | BigInt(a),
      tables,
      // Each neighbour on its own channel, w set so that RC = (1 - w) * 2000.
      router: {
        ports: () =>
          meshPorts({
            node: a,
            name: `r${a}`,
            neighbours: (links[a] ?? []).map((b) => ({ addr: b, r1Channel: b + 1 })),
            w: new Map((links[a] ?? []).map((b) => [b + 1, 1 - (rc.get(b) ?? 0) / 2000])),
            capacityKbps: 2000,
          }),
        counters: () => undefined,
        queues: () => [{ queue: 0, minKbps: 0 }],
      },
      node: { id: a, name: `r${a}` },
      version: 'test',
      startUs: 0,
    });
    const session = agent.open();
    agents.set(a, { agent, session, tables, rc });
    for (const m of ctl.open(a)) agent.receive(session, encodeOf(m), 0);
    pump(a);
  }
  assert.equal(ctl.topology().routers.length, 3, 'three routers known through the real handshake');
  assert.equal(ctl.topology().links.length, 6, 'six directed links from PORT_DESC');
  assert.deepEqual(ctl.bestPath(0, 2)?.routers, [0, 2], 'direct link');
  const r = ctl.addFlow({ id: 5, proto: 'tcp', srcAddr: 0, dstAddr: 2, dstPort: 5001, acc: { mode: 'split' } }, 0);
  assert.ok(r.ok, 'flow added');
  if (!r.ok) return;
  send(r.value.out);
  assert.equal(errors, 0, 'no ERROR for the entries');
  assert.equal(agents.get(0)?.tables.table(0)?.list().length, 2, 'router 0 holds two entries');
  // The direct link's RC falls: the agent announces it; the flow moves through 1 and gets a VNF there, which this agent refuses.
  const x0 = agents.get(0);
  const x2 = agents.get(2);
  assert.ok(x0 && x2, 'agents 0 and 2');
  x0.rc.set(2, 200);
  x0.agent.portStatus([{ reason: 'modify', port: { portNo: 3, name: 'r0-n2', neighbour: 2, channel: 3, rcKbps: 200, maxKbps: 2000, up: true } }]);
  pump(0);
  assert.deepEqual(ctl.paths()[0]?.routers, [0, 1, 2], 'moved through 1');
  assert.equal(agents.get(1)?.tables.table(0)?.list().length, 2, 'router 1 holds two entries');
  assert.equal(ctl.counters.errors, 1, 'the agent answered the VNF start with an ERROR (BAD_EXPERIMENTER), counted');
  const rm = ctl.removeFlow(5, 0);
  assert.ok(rm.ok, 'removed');
  if (rm.ok) send(rm.value);
  for (const a of [0, 1, 2]) assert.equal(agents.get(a)?.tables.table(0)?.list().length, 0, `router ${a} table empty`);
});

test("a labelled flow's entries match IPv6 (fd00::10.hi.lo.1) and its flow label both ways; a queue puts a set_queue before each output", () => {
  const m = chain();
  const v6 = (addr: number): Uint8Array => Uint8Array.of(0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, addr >> 8, addr & 0xff, 1);
  const r = added(m, flow({ id: 12, proto: 'udp', srcAddr: 0, dstAddr: 4, dstPort: 9000, label: 0x100, queue: 1 }));
  assert.deepEqual(r.routers, [0, 1, 2, 3, 4], 'the chain');
  for (let a = 0; a <= 4; a++) {
    const [fwd, rev, ...more] = flowMods(r.out, a);
    assert.ok(fwd && rev && more.length === 0, `router ${a}: a forward and a reverse FLOW_MOD`);
    assert.deepEqual(
      fwd.match,
      { ethType: 0x86dd, ipProto: 17, ipv6Src: { value: v6(0) }, ipv6Dst: { value: v6(4) }, ipv6Flabel: { value: 0x100 }, udpDst: 9000 },
      `router ${a}: forward match, IPv6 with the label`,
    );
    assert.deepEqual(
      rev.match,
      { ethType: 0x86dd, ipProto: 17, ipv6Src: { value: v6(4) }, ipv6Dst: { value: v6(0) }, ipv6Flabel: { value: 0x100 }, udpSrc: 9000 },
      `router ${a}: reverse match, the same label`,
    );
    const fwdOut = a === 4 ? OFPP.LOCAL : a + 2;
    const revOut = a === 0 ? OFPP.LOCAL : a;
    assert.deepEqual(
      fwd.instructions,
      [
        {
          type: 'apply-actions',
          actions: [
            { type: 'set-queue', queueId: 1 },
            { type: 'output', port: fwdOut, maxLen: 0 },
          ],
        },
      ],
      `router ${a}: set_queue 1, then the forward output`,
    );
    assert.deepEqual(
      rev.instructions,
      [
        {
          type: 'apply-actions',
          actions: [
            { type: 'set-queue', queueId: 1 },
            { type: 'output', port: revOut, maxLen: 0 },
          ],
        },
      ],
      `router ${a}: set_queue 1, then the reverse output`,
    );
  }
  // A labelled flow without a queue: the label's entries, outputs alone; its packets follow them, unlabelled ones do not.
  const t = added(m, flow({ id: 13, srcAddr: 1, dstAddr: 3, dstPort: 5002, label: 0x200 }));
  const [f1] = flowMods(t.out, 1);
  assert.deepEqual(f1?.instructions, [{ type: 'apply-actions', actions: [{ type: 'output', port: 3, maxLen: 0 }] }], 'no queue: the output alone');
  const labelled: PacketFields = { ethType: 0x86dd, ipProto: 6, ipv6Src: v6(1), ipv6Dst: v6(3), ipv6Flabel: 0x200, tcpSrc: 40000, tcpDst: 5002 };
  assert.deepEqual(m.trace(1, labelled), [1, 2, 3], 'a packet with the label follows the entries');
  assert.deepEqual(m.trace(3, { ...labelled, ipv6Src: v6(3), ipv6Dst: v6(1), tcpSrc: 5002, tcpDst: 40000 }), [3, 2, 1], 'so do its ACKs');
  assert.equal(m.trace(1, { ...labelled, ipv6Flabel: 0x100 }), 'no-entry', 'another label is not this flow');
  assert.equal(m.trace(1, tcpFields(1, 3, 40000, 5002)), 'no-entry', 'nor is the same flow unlabelled (IPv4)');
  // A queue on an unlabelled flow: IPv4 match, set_queue before the output.
  const u = added(m, flow({ id: 14, srcAddr: 0, dstAddr: 2, dstPort: 5003, queue: 0 }));
  const [u0] = flowMods(u.out, 0);
  assert.equal(u0?.match.ethType, 0x0800, 'no label: IPv4');
  assert.deepEqual(
    u0?.instructions,
    [
      {
        type: 'apply-actions',
        actions: [
          { type: 'set-queue', queueId: 0 },
          { type: 'output', port: 2, maxLen: 0 },
        ],
      },
    ],
    'queue 0 (best effort) is a queue too',
  );
});

test('addFlow refuses a label that is no IPv6 flow label and a queue that is no queue id, and sends nothing', () => {
  const m = chain();
  const cases: Array<[Partial<FlowSpec>, RegExp]> = [
    [{ label: 0 }, /label 0/],
    [{ label: 0x100000 }, /label 1048576/],
    [{ label: -1 }, /label -1/],
    [{ label: 1.5 }, /label 1.5/],
    [{ queue: -1 }, /queue -1/],
    [{ queue: 0xffffffff }, /queue 4294967295/],
    [{ queue: 0.5 }, /queue 0.5/],
  ];
  for (const [i, [over, detail]] of cases.entries()) {
    const r = m.ctl.addFlow(flow({ id: 20 + i, ...over }), 0);
    assert.ok(!r.ok && r.error.reason === 'bad-spec', `${JSON.stringify(over)} refused as bad-spec`);
    if (!r.ok) assert.match(r.error.detail, detail, `${JSON.stringify(over)}: the detail names the field`);
  }
  assert.deepEqual(m.ctl.paths(), [], 'no flow was added');
  assert.equal(m.ctl.counters.flowModsSent, 0, 'no FLOW_MOD sent');
  const edge = added(m, flow({ id: 30, label: 0xfffff, queue: 0xfffffffe }));
  assert.equal(edge.state, 'installed', 'label 0xfffff and queue 0xfffffffe are the largest taken');
});

test('a flow removed while a relay is away: the relay is told to delete its entries and stop its TCP-ACC when it connects again', () => {
  const m = chain();
  const spec = flow({ acc: { mode: 'split', everyHops: 1 } });
  const a = added(m, spec);
  assert.deepEqual(a.routers, [0, 1, 2, 3, 4]);
  assert.ok(m.entries(2) === 2 && m.vnfs.get(spec.id)?.has(2), 'relay 2 forwards the flow and runs its TCP-ACC');
  // Relay 2's connection drops; its agent keeps its table and VNFs.
  m.deliver(m.ctl.close(key(2), m.now));
  const gone = m.ctl.removeFlow(spec.id, m.now);
  assert.ok(gone.ok, 'removed');
  if (gone.ok) m.deliver(gone.value);
  assert.ok(m.entries(1) === 0 && m.entries(2) === 2, 'the routers still connected deleted theirs; relay 2 could not hear');
  // It connects again (same table: the agent kept it): the controller sends the cleanup first.
  const kept = m.tables.get(2)!;
  const out = m.connect(2, [
    [1, 1000],
    [3, 1000],
  ]);
  m.tables.set(2, kept);
  const toRelay = out.filter((s) => s.to === key(2));
  assert.deepEqual(
    toRelay.map((s) =>
      s.msg.type === 'flow-mod'
        ? `flow-mod ${s.msg.mod.command} ${s.msg.mod.cookie}`
        : s.msg.type === 'experimenter'
          ? `experimenter ${s.msg.expType}`
          : s.msg.type,
    ),
    [`flow-mod delete ${spec.id}`, `experimenter ${CETT_EXP_STOP_VNF}`],
  );
  const del = toRelay[0]!.msg;
  if (del.type === 'flow-mod') kept.apply(del.mod, m.now);
  assert.equal(kept.table(0)!.list().length, 0, "relay 2's stale entries are gone");
});

test('a flow that matches the same traffic as one placed already is refused, whatever its id', () => {
  const m = chain();
  added(m, flow({ id: 1 }));
  for (const again of [flow({ id: 2 }), flow({ id: 3, acc: { mode: 'split', everyHops: 1 } })]) {
    const r = m.ctl.addFlow(again, m.now);
    assert.ok(!r.ok && r.error.reason === 'duplicate-flow' && /flow 1 already places this traffic/.test(r.error.detail), JSON.stringify(r));
  }
  for (const other of [flow({ id: 4, dstPort: 5002 }), flow({ id: 5, label: 0x100 }), flow({ id: 6, proto: 'udp', dstPort: undefined })]) {
    assert.ok(m.ctl.addFlow(other, m.now).ok, `another port, label or protocol is another flow: ${JSON.stringify(other)}`);
  }
});
