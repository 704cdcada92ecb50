import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import { flowMod, OFPP, type FlowMod } from '../../src/openflow/actions.js';
import { FlowTables } from '../../src/openflow/flow-table.js';
import { FlowTableForwarder, packetFields } from '../../src/openflow/forwarder.js';
import { portOfNeighbour } from '../../src/openflow/ports.js';
import { star } from '../support/star.js';

const ip = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
const add = (priority: number, match: FlowMod['match'], actions: Array<{ type: 'output'; port: number; maxLen: number }>): FlowMod =>
  flowMod({ priority, match, instructions: [{ type: 'apply-actions', actions }] });

test("a mesh packet's fields: in-port from the neighbour it came from, IPv4 addresses of the routers, TCP ports", () => {
  const seg = Uint8Array.of(0x27, 0x11, 0x13, 0x89, 0, 0, 0, 0);
  const f = packetFields({ src: 1, dst: 4, ttl: 30, proto: 'tcp', flow: 0, seq: 0 }, seg, 3);
  assert.deepEqual(f, { inPort: portOfNeighbour(3), ethType: 0x0800, ipProto: 6, ipv4Src: ip(10, 0, 1, 1), ipv4Dst: ip(10, 0, 4, 1), tcpSrc: 10001, tcpDst: 5001 });
  assert.equal(packetFields({ src: 1, dst: 4, ttl: 30, proto: 'udp', flow: 0, seq: 0 }, new Uint8Array(8), undefined).inPort, OFPP.LOCAL);
});

test("the flow table decides ahead of AODV: an entry drops one flow at the relay, another delivers a flow there; unmatched traffic is AODV's", () => {
  const tables = new FlowTables(1);
  const fw = new FlowTableForwarder(tables, 0);
  // At relay 0: UDP to router 2 is dropped; UDP to router 3 is delivered to the relay itself (LOCAL).
  assert.ok(tables.apply(add(100, { ethType: 0x0800, ipProto: 17, ipv4Dst: { value: ip(10, 0, 2, 1) } }, []), 0).ok, 'drop entry');
  assert.ok(tables.apply(add(100, { ethType: 0x0800, ipProto: 17, ipv4Dst: { value: ip(10, 0, 3, 1) } }, [{ type: 'output', port: OFPP.LOCAL, maxLen: 0 }]), 0).ok, 'local entry');
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
  assert.deepEqual(decide([{ type: 'apply-actions', actions: [out(4)] }, { type: 'clear-actions' }]), { kind: 'next-hop', nextHop: 3 }, 'clear does not undo an applied output');
  assert.deepEqual(decide([{ type: 'write-actions', actions: [out(4)] }, { type: 'clear-actions' }]), { kind: 'next-hop', nextHop: 3 }, 'clear runs before write, whatever the list order');
  assert.deepEqual(decide([{ type: 'write-actions', actions: [out(4)] }, { type: 'apply-actions', actions: [out(6)] }]), { kind: 'next-hop', nextHop: 5 }, 'apply runs before the action set');
  assert.deepEqual(decide([{ type: 'apply-actions', actions: [out(OFPP.IN_PORT)] }], 'local'), { kind: 'deliver' }, 'IN_PORT of a packet originated here is LOCAL');
  assert.deepEqual(decide([{ type: 'apply-actions', actions: [out(OFPP.IN_PORT)] }], 7), { kind: 'next-hop', nextHop: 7 });
  assert.deepEqual(decide([]), { kind: 'drop' }, 'no output: dropped');
});
