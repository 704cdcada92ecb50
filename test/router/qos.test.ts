import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seconds, US_PER_MS, type Micros } from '../../src/core/time.js';
import { liveChange } from '../../src/config/live.js';
import { ConfigError } from '../../src/core/errors.js';
import type { MeshRouter } from '../../src/router/router.js';
import { flowMod } from '../../src/wire/openflow/actions.js';
import { FlowTables } from '../../src/openflow/pipeline.js';
import { FlowTableForwarder } from '../../src/openflow/forwarder.js';
import { portOfNeighbour } from '../../src/openflow/ports.js';
import { memoryLogger } from '../support/control-view.js';
import { RouterOnlyView } from '../support/router-only-view.js';
import { star } from '../support/star.js';

/** Packets router `r` sent to neighbour `n`, per QoS queue id (queues with none left out). */
const sentPerQueue = (r: MeshRouter, n: number): Record<number, number> =>
  Object.fromEntries(
    [...(r.links.get(n)?.queues ?? new Map<number, { txPackets: number }>())].filter(([, c]) => c.txPackets > 0).map(([q, c]) => [q, c.txPackets]),
  );

/** The queue ids inside each of R2's channel queues, highest priority first. */
const classIds = (r: MeshRouter): number[][] => r.sched.queues().map((q) => q.classes.map((c) => c.queue));

/** Router 1 sends flows 1 (label 0x100), 2 (label 0x200) and 3 (unlabelled) to router 2 through relay 0, every 50 ms from 3 s to `untilUs`. */
function traffic(engine: ReturnType<typeof star>['engine'], routers: MeshRouter[], untilUs: Micros): void {
  let seq = 0;
  const send = (now: number): void => {
    routers[1]!.originate(2, 'udp', 1, seq, new Uint8Array(200), now, { label: 0x100 });
    routers[1]!.originate(2, 'udp', 2, seq, new Uint8Array(200), now, { label: 0x200 });
    routers[1]!.originate(2, 'udp', 3, seq++, new Uint8Array(200), now);
    if (now + 50 * US_PER_MS < untilUs) engine.at(now + 50 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
}

test("a live set of qos through the router view changes R2's classes, the OpenFlow queues and which queue a label picks; a bad one changes nothing", () => {
  const { engine, routers, delivered } = star();
  const src = routers[1]!;
  traffic(engine, routers, seconds(10));
  engine.run(seconds(6));
  assert.deepEqual(
    src.qosQueues(),
    [
      { queue: 1, minKbps: 400 },
      { queue: 2, minKbps: 200 },
      { queue: 0, minKbps: 0 },
    ],
    'the default classes: high, low, best effort',
  );
  assert.ok(
    classIds(src).length > 0 && classIds(src).every((ids) => ids.join() === '1,2,0'),
    `each channel queue holds high, low and best effort: ${JSON.stringify(classIds(src))}`,
  );
  const before = sentPerQueue(src, 0);
  assert.ok(
    (before[1] ?? 0) > 30 && (before[2] ?? 0) > 30 && (before[0] ?? 0) > 30,
    `each label in its class's queue toward the relay: ${JSON.stringify(before)}`,
  );
  assert.ok(Math.abs((before[1] ?? 0) - (before[0] ?? 0)) <= 2, `one flow per queue, as many packets each: ${JSON.stringify(before)}`);
  const relay = sentPerQueue(routers[0]!, 2);
  assert.ok((relay[1] ?? 0) > 30 && (relay[2] ?? 0) > 30 && (relay[0] ?? 0) > 30, `the relay keeps each packet's class by its label: ${JSON.stringify(relay)}`);

  // The live set, checked once and then through the view's reconfigure (as the control API's `set` does it): one class, for label 0x200, in queue 5; high's label is no class now.
  const { log, lines } = memoryLogger();
  const view = new RouterOnlyView(src, engine, log);
  const v0 = view.configVersion();
  const twice = view.config();
  twice.qos.classes = [
    { name: 'a', label: 512, queue: 5, minKbps: 0 },
    { name: 'b', label: 512, queue: 6, minKbps: 0 },
  ];
  assert.throws(
    () => view.reconfigure(liveChange(view.config(), twice)),
    (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/qos/classes/1/label'),
    'two classes with one label: refused, naming the second',
  );
  const restart = view.config();
  restart.qos.burstMs = 50;
  restart.radios.R3.channel = 6;
  assert.throws(
    () => view.reconfigure(liveChange(view.config(), restart)),
    (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/radios/R3/channel'),
    'qos with a restart-only field: refused whole',
  );
  assert.equal(view.configVersion(), v0, 'the refusals changed nothing');
  assert.ok(
    classIds(src).every((ids) => ids.join() === '1,2,0'),
    `nor R2's classes: ${JSON.stringify(classIds(src))}`,
  );
  const next = view.config();
  next.qos = { classes: [{ name: 'video', label: 512, queue: 5, minKbps: 300 }], burstMs: 50 };
  const v1 = view.reconfigure(liveChange(view.config(), next));
  assert.notEqual(v1, v0, 'a new configuration version');
  assert.deepEqual(lines.find((l) => l.event === 'reconfigured')?.changed, ['qos.burstMs', 'qos.classes'], 'qos is live: taken, naming what changed');
  assert.deepEqual(
    view.config().qos.classes.map((c) => c.queue),
    [5],
    'the view holds the new classes',
  );
  assert.deepEqual(
    src.qosQueues(),
    [
      { queue: 5, minKbps: 300 },
      { queue: 0, minKbps: 0 },
    ],
    'the OpenFlow queues follow',
  );
  assert.ok(
    classIds(src).every((ids) => ids.join() === '5,0'),
    `each channel queue now holds the new class and best effort: ${JSON.stringify(classIds(src))}`,
  );
  const at6 = sentPerQueue(src, 0);
  engine.run(seconds(11));
  const after = sentPerQueue(src, 0);
  const grew = (q: number): number => (after[q] ?? 0) - (at6[q] ?? 0);
  assert.ok(grew(1) <= 1 && grew(2) <= 1, `queues 1 and 2 are gone (a packet at the MAC aside): ${JSON.stringify({ at6, after })}`);
  assert.ok(grew(5) > 50, `label 0x200 goes in queue 5: ${JSON.stringify({ at6, after })}`);
  assert.ok(grew(0) > 1.8 * grew(5), `label 0x100 goes as best effort, with the unlabelled flow: ${JSON.stringify({ at6, after })}`);
  for (const f of [1, 2, 3]) assert.ok((delivered.get(f) ?? 0) > 100, `flow ${f} still arrives: ${JSON.stringify([...delivered])}`);
  assert.deepEqual(
    routers[0]!.qosQueues().map((q) => q.queue),
    [1, 2, 0],
    'a router not reconfigured keeps its classes',
  );
});

test('an OpenFlow set_queue puts a flow in that queue ahead of its label; a queue no class has is best effort', () => {
  const tables = new FlowTables(1);
  const labelled = (flowLabel: number) => ({ ethType: 0x86dd, ipProto: 17, ipv6Flabel: { value: flowLabel } });
  const toRelay = { type: 'output' as const, port: portOfNeighbour(0), maxLen: 0 };
  // At router 1: label 0x100 into low's queue (2); unlabelled (IPv4) into queue 9, which no class has.
  assert.ok(
    tables.apply(
      flowMod({ priority: 10, match: labelled(0x100), instructions: [{ type: 'apply-actions', actions: [{ type: 'set-queue', queueId: 2 }, toRelay] }] }),
      0,
    ).ok,
    'set_queue 2 entry',
  );
  assert.ok(
    tables.apply(
      flowMod({
        priority: 10,
        match: { ethType: 0x0800, ipProto: 17 },
        instructions: [{ type: 'write-actions', actions: [toRelay, { type: 'set-queue', queueId: 9 }] }],
      }),
      0,
    ).ok,
    'set_queue 9 entry',
  );
  const fw = new FlowTableForwarder(tables, 1);
  const { engine, routers, delivered } = star((i) => (i === 1 ? { forwarder: fw } : {}));
  traffic(engine, routers, seconds(8));
  engine.run(seconds(9));
  const sent = sentPerQueue(routers[1]!, 0);
  assert.equal(sent[1], undefined, `nothing in high's queue: its label's packets were set to queue 2 (${JSON.stringify(sent)})`);
  assert.equal(sent[9], undefined, `no queue 9 (${JSON.stringify(sent)})`);
  assert.ok((sent[0] ?? 0) > 50, `queue 0 has the unlabelled flow, set to queue 9: ${JSON.stringify(sent)}`);
  assert.ok((sent[2] ?? 0) > 1.8 * (sent[0] ?? 0), `queue 2 has two flows: 1 (set_queue) and 2 (its label, no entry): ${JSON.stringify(sent)}`);
  assert.ok(fw.counters.matched > 100, `the entries decided: ${JSON.stringify(fw.counters)}`);
  for (const f of [1, 2, 3]) assert.ok((delivered.get(f) ?? 0) > 50, `flow ${f} arrives: ${JSON.stringify([...delivered])}`);
});

test('a packet held for route discovery across a live qos change is sent, and counted, as best effort', () => {
  const { engine, routers, delivered } = star();
  const src = routers[1]!;
  engine.at(seconds(3), (now) => {
    src.originate(2, 'udp', 7, 0, new Uint8Array(100), now, { label: 0x200 });
    const next = structuredClone(src.config);
    next.qos.classes = [{ name: 'high', label: 256, queue: 1, minKbps: 400 }];
    src.reconfigure(next, ['qos.classes'], now);
  });
  engine.run(seconds(6));
  assert.equal(delivered.get(7), 1, 'delivered');
  const qs = Object.fromEntries([...(src.links.get(0)?.queues ?? new Map())].map(([q, c]) => [q, c.txPackets]));
  assert.deepEqual(qs, { 0: 1 }, 'counted in best effort, not in queue 2, which is no class any more');
});
