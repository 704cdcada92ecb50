import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { ChannelScheduler } from '../../src/sched/channel-scheduler.js';
import { ClassedQueue, checkClasses, NO_QOS } from '../../src/sched/classes.js';
import type { QosClass, QueuedPacket } from '../../src/sched/types.js';

type Pkt = QueuedPacket<string>;
const HIGH: QosClass = { queue: 1, minKbps: 500, burstUs: 20_000 };
const LOW: QosClass = { queue: 2, minKbps: 300, burstUs: 20_000 };
const BE: QosClass = { queue: 0, minKbps: 0, burstUs: 0 };
const p = (item: string, queue: number | undefined, at = 0, bytes = 1000): Pkt => ({ nextHop: 1, bytes, enqueuedUs: at, item, queue });

/**
 * Serves `q` back to back at `rateKbps` for `durationUs`, keeping every class
 * backlogged when `backlogged` says so; returns the bytes each queue sent.
 */
function serve(q: ClassedQueue<string>, rateKbps: number, durationUs: number, backlogged: (queue: number) => boolean): Map<number, number> {
  const sent = new Map<number, number>();
  let now = 0;
  let n = 0;
  const refill = (): void => {
    for (const c of q.classes()) if (c.packets < 2 && backlogged(c.queue)) q.admit(p(`x${n++}`, c.queue, now));
  };
  while (now < durationUs) {
    refill();
    const pkt = q.shift(now);
    if (!pkt) break;
    sent.set(pkt.queue ?? 0, (sent.get(pkt.queue ?? 0) ?? 0) + pkt.bytes);
    now += Math.round((pkt.bytes * 8000) / rateKbps);
  }
  return sent;
}

const kbps = (bytes: number | undefined, us: number): number => ((bytes ?? 0) * 8000) / us;

describe('ClassedQueue', () => {
  test('every class backlogged: each gets its guarantee, what is left goes by priority', () => {
    const q = new ClassedQueue<string>(10, [HIGH, LOW, BE], 0);
    const us = 20_000_000;
    const sent = serve(q, 2000, us, () => true);
    const high = kbps(sent.get(1), us);
    const low = kbps(sent.get(2), us);
    const be = kbps(sent.get(0), us);
    assert.ok(Math.abs(low - 300) < 15, `low gets its 300 kbps guarantee: ${low}`);
    assert.ok(Math.abs(high - 1700) < 15, `high gets 500 kbps and the 1200 left over: ${high}`);
    assert.ok(be < 1, `best effort gets nothing while high takes every spare slot: ${be}`);
  });

  test('a class below its guarantee leaves the rest to the others', () => {
    const q = new ClassedQueue<string>(10, [HIGH, LOW, BE], 0);
    const us = 20_000_000;
    // Only low and best effort have traffic: low's guarantee, then the rest by priority (low first).
    const sent = serve(q, 2000, us, (queue) => queue !== 1);
    assert.equal(sent.get(1), undefined);
    assert.ok(kbps(sent.get(2), us) > 1990, 'low is above best effort in priority: it takes all');
    const onlyBe = serve(new ClassedQueue<string>(10, [HIGH, LOW, BE], 0), 2000, us, (queue) => queue === 0);
    assert.ok(kbps(onlyBe.get(0), us) > 1990, 'alone, best effort has the whole channel');
  });

  test('a guarantee holds against a higher-priority class that wants everything', () => {
    // BE with a guarantee of its own under a greedy high class.
    const q = new ClassedQueue<string>(10, [HIGH, { queue: 0, minKbps: 200, burstUs: 20_000 }], 0);
    const us = 20_000_000;
    const sent = serve(q, 1000, us, () => true);
    assert.ok(Math.abs(kbps(sent.get(0), us) - 200) < 15, `best effort keeps its 200 kbps: ${kbps(sent.get(0), us)}`);
    assert.ok(Math.abs(kbps(sent.get(1), us) - 800) < 15, `high has the rest: ${kbps(sent.get(1), us)}`);
  });

  test('a full queue pushes out the newest packet of the lowest class below the arrival, else refuses', () => {
    const q = new ClassedQueue<string>(3, [HIGH, LOW, BE], 0);
    assert.deepEqual(q.admit(p('b1', 0)), { ok: true });
    assert.deepEqual(q.admit(p('b2', 0)), { ok: true });
    assert.deepEqual(q.admit(p('l1', 2)), { ok: true });
    // Full. Best effort cannot push anything out.
    assert.deepEqual(q.admit(p('b3', 0)), { ok: false });
    // Low pushes out best effort's newest.
    const r1 = q.admit(p('l2', 2));
    assert.ok(r1.ok && r1.pushedOut?.item === 'b2', 'low pushed out b2');
    // High pushes out best effort's last packet, then low's newest.
    const r2 = q.admit(p('h1', 1));
    assert.ok(r2.ok && r2.pushedOut?.item === 'b1', 'high pushed out b1');
    const r3 = q.admit(p('h2', 1));
    assert.ok(r3.ok && r3.pushedOut?.item === 'l2', 'high pushed out l2');
    const r4 = q.admit(p('h3', 1));
    assert.ok(r4.ok && r4.pushedOut?.item === 'l1', 'high pushed out l1');
    // Full of high: a high packet is refused, and so is low's.
    assert.deepEqual(q.admit(p('h4', 1)), { ok: false });
    assert.deepEqual(q.admit(p('l3', 2)), { ok: false });
    assert.deepEqual(q.classes(), [
      { queue: 1, packets: 3, bytes: 3000 },
      { queue: 2, packets: 0, bytes: 0 },
      { queue: 0, packets: 0, bytes: 0 },
    ]);
  });

  test('a packet for a queue with no class waits as best effort', () => {
    const q = new ClassedQueue<string>(2, [HIGH, BE], 0);
    const x = p('x', 9);
    q.admit(x);
    q.admit(p('y', undefined));
    assert.deepEqual(
      q.classes().map((c) => c.packets),
      [0, 2],
    );
    assert.equal(x.queue, 0, "the packet's queue is best effort's now");
    const refused = p('z', 7);
    assert.deepEqual(q.admit(refused), { ok: false });
    assert.equal(refused.queue, 0, 'a packet turned away is best effort too (its drop counts there)');
    const high = p('h', 1);
    assert.ok(q.admit(high).ok, 'high pushes best effort out');
    assert.equal(high.queue, 1, 'a class keeps its queue');
  });

  test('an aborted packet goes back to its class head and its bytes back to the bucket', () => {
    // A bucket of exactly one packet: after it is charged the class is out of guarantee.
    const q = new ClassedQueue<string>(8, [{ queue: 1, minKbps: 400, burstUs: 20_000 }, BE], 0);
    q.admit(p('b', 0, 0));
    q.admit(p('h1', 1, 1));
    q.admit(p('h2', 1, 2));
    const first = q.shift(0)!;
    assert.equal(first.item, 'h1', 'within its guarantee, high goes first');
    // 1000 bytes charged to a 1000-byte bucket: high is at 0, still within; give h1 back and h1 again goes first.
    q.unshift(first);
    assert.equal(q.shift(0)!.item, 'h1');
    assert.equal(q.shift(0)!.item, 'h2', 'still not below zero after one refund');
    // Now below zero: high has nothing within its guarantee; priority order still serves high first.
    q.admit(p('h3', 1, 3));
    assert.equal(q.shift(0)!.item, 'h3');
    assert.equal(q.shift(0)!.item, 'b');
  });

  test('new classes live: a class that goes hands its packets to best effort, oldest first', () => {
    const q = new ClassedQueue<string>(8, [HIGH, LOW, BE], 0);
    q.admit(p('b1', 0, 10));
    q.admit(p('l1', 2, 5));
    q.admit(p('b2', 0, 20));
    q.admit(p('l2', 2, 15));
    q.admit(p('h1', 1, 1));
    q.setClasses([HIGH, BE], 100);
    assert.deepEqual(
      q.classes().map((c) => [c.queue, c.packets]),
      [
        [1, 1],
        [0, 4],
      ],
    );
    const all = q.drain();
    assert.deepEqual(
      all.map((x) => x.item),
      ['h1', 'l1', 'b1', 'l2', 'b2'],
      'drain gives every packet oldest first',
    );
    assert.deepEqual(
      all.map((x) => x.queue),
      [1, 0, 0, 0, 0],
      "the removed class's packets are best effort's now",
    );
  });

  test('NO_QOS is a FIFO', () => {
    const q = new ClassedQueue<string>(2, NO_QOS, 0);
    q.admit(p('a', 1));
    q.admit(p('b', 2));
    assert.deepEqual(q.admit(p('c', 1)), { ok: false });
    assert.deepEqual([q.shift(0)?.item, q.shift(0)?.item, q.shift(0)], ['a', 'b', undefined]);
  });

  test('class lists are checked by name', () => {
    const refused = (field: string) => (e: unknown) => e instanceof RangeArgumentError && e.field === field;
    assert.throws(() => checkClasses([HIGH]), refused('scheduler.classes'), 'queue 0 must be there');
    assert.throws(() => checkClasses([HIGH, HIGH, BE]), refused('scheduler.classes[1].queue'));
    assert.throws(() => checkClasses([{ ...HIGH, minKbps: -1 }, BE]), refused('scheduler.classes[0].minKbps'));
    assert.throws(() => checkClasses([{ ...HIGH, burstUs: 1.5 }, BE]), refused('scheduler.classes[0].burstUs'));
    assert.throws(() => checkClasses([{ ...HIGH, queue: 0xffffffff }, BE]), refused('scheduler.classes[0].queue'));
    assert.deepEqual(checkClasses([HIGH, BE]), [HIGH, BE]);
  });
});

describe('ChannelScheduler with QoS classes', () => {
  test('a push-out is a queue-full drop out of the next tick, and the counts balance', () => {
    const s = new ChannelScheduler<string>(
      { channels: [1, 6], queuePackets: 2, switchingIntervalUs: 10_000, overheadUs: 100, adaptive: false, classes: [HIGH, BE] },
      0,
    );
    // R2 tunes to channel 6 for the first packet; channel 1 fills meanwhile.
    s.enqueue(6, p('first', 0, 0), 0);
    s.tick(0);
    assert.deepEqual(s.enqueue(1, p('b1', 0, 1), 1), { ok: true });
    assert.deepEqual(s.enqueue(1, p('b2', 0, 2), 2), { ok: true });
    assert.deepEqual(s.enqueue(1, p('h1', 1, 3), 3), { ok: true });
    assert.equal(s.nextDeadline(), 3, 'the push-out asks for a tick now');
    const acts = s.tick(3);
    assert.deepEqual(
      acts.filter((a) => a.kind === 'drop').map((a) => (a.kind === 'drop' ? [a.packet.item, a.reason] : [])),
      [['b2', 'queue-full']],
    );
    assert.equal(s.counters.drops['queue-full'], 1);
    assert.deepEqual(s.queues()[0]!.classes, [
      { queue: 1, packets: 1, bytes: 1000 },
      { queue: 0, packets: 1, bytes: 1000 },
    ]);
    const noClass = p('x', 2, 4);
    assert.deepEqual(s.enqueue(1, noClass, 4), { ok: false, reason: 'queue-full' }, 'queue 2 is no class: best effort, and the queue is full');
    assert.equal(noClass.queue, 0, 'counted as best effort');
    const queued = s.queues().reduce((x, q) => x + q.packets, 0);
    assert.equal(s.counters.enqueued, s.counters.handedOut + 2 + queued);
  });

  test('the classes are checked with the other parameters, and a bad set changes nothing', () => {
    const params = { channels: [1], queuePackets: 4, switchingIntervalUs: 10_000, overheadUs: 100, adaptive: false, classes: [HIGH, BE] };
    const s = new ChannelScheduler<string>(params, 0);
    assert.throws(() => s.setParams({ ...params, classes: [HIGH] }, 1), RangeArgumentError);
    assert.deepEqual(
      s.queues()[0]!.classes.map((c) => c.queue),
      [1, 0],
    );
  });
});
