import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClockRegressionError, RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { ChannelScheduler } from '../../src/sched/channel-scheduler.js';
import type { ChannelSchedulerParams, QosClass, QueuedPacket, SchedAction } from '../../src/sched/types.js';

type Pkt = QueuedPacket<number>;
type Act = SchedAction<number>;

const OVH = 1_000;
const IVL = 40_000;
const P: ChannelSchedulerParams = { channels: [1, 6, 11], queuePackets: 4, switchingIntervalUs: IVL, overheadUs: OVH, adaptive: false };

let nextId = 0;
/** A packet for `nextHop` queued at `at`; `item` is a fresh id. */
const pkt = (nextHop: number, at: number, bytes = 100): Pkt => ({ nextHop, bytes, enqueuedUs: at, item: nextId++ });

const sched = (over: Partial<ChannelSchedulerParams> = {}, start = 0) => new ChannelScheduler<number>({ ...P, ...over }, start);

/** Queues `n` packets for `nextHop` on `channel` at `at`, asserting each is accepted; returns them. */
function fill(s: ChannelScheduler<number>, channel: number, n: number, at: number, nextHop = channel, bytes = 100): Pkt[] {
  const out: Pkt[] = [];
  for (let i = 0; i < n; i++) {
    const p = pkt(nextHop, at, bytes);
    assert.deepEqual(s.enqueue(channel, p, at), { ok: true });
    out.push(p);
  }
  return out;
}

/** Each channel queue's totals, without the per-class breakdown. */
const totals = (s: ChannelScheduler<number>) => s.queues().map(({ channel, packets, bytes }) => ({ channel, packets, bytes }));
const tune = (channel: number, readyUs: number): Act => ({ kind: 'tune', channel, readyUs });
const tx = (channel: number, packet: Pkt): Act => ({ kind: 'transmit', channel, packet });
const sent = (acts: Act[]) => acts.flatMap((a) => (a.kind === 'transmit' ? [a.packet] : []));
const drops = (acts: Act[]) => acts.flatMap((a) => (a.kind === 'drop' ? [[a.packet.item, a.reason] as const] : []));

/** Puts R2 on `channel` with its queue loaded: tune at `at`, first transmit at `at + OVH`. Returns the first packet sent. */
function start(s: ChannelScheduler<number>, channel: number, at: number): Pkt {
  assert.deepEqual(s.tick(at), [tune(channel, at + OVH)]);
  const first = s.tick(at + OVH);
  assert.equal(first.length, 1);
  assert.equal(first[0]!.kind, 'transmit');
  return sent(first)[0]!;
}

describe('one channel', () => {
  test('the first packet makes R2 tune at once, and goes out when the overhead is over', () => {
    const s = sched();
    assert.equal(s.tunedChannel, undefined);
    assert.equal(s.dwellEndUs, undefined);
    const p = pkt(2, 10_000);
    assert.deepEqual(s.enqueue(6, p, 10_000), { ok: true });
    assert.equal(s.nextDeadline(), 10_000);
    assert.deepEqual(s.tick(10_000), [tune(6, 11_000)]);
    assert.equal(s.tunedChannel, 6);
    assert.equal(s.nextDeadline(), 11_000);
    assert.deepEqual(s.tick(10_999), [], 'deaf and silent during the overhead');
    assert.deepEqual(s.tick(11_000), [tx(6, p)]);
    assert.equal(s.dwellEndUs, 11_000 + IVL, 'the dwell starts when the tune completes');
    assert.equal(s.counters.switches, 1);
    assert.equal(s.counters.handedOut, 1);
  });

  test('FIFO, one packet at the MAC at a time', () => {
    const s = sched();
    const ps = fill(s, 6, 3, 0);
    assert.equal(start(s, 6, 0), ps[0]);
    assert.deepEqual(s.tick(5_000), [], 'no second packet before txDone');
    assert.equal(s.nextDeadline(), OVH + IVL, 'only the dwell end is pending');
    assert.deepEqual(s.txDone(6_000), [tx(6, ps[1]!)]);
    assert.deepEqual(s.txDone(7_000), [tx(6, ps[2]!)]);
    assert.deepEqual(s.txDone(8_000), []);
    assert.equal(s.counters.handedOut, 3);
  });

  test('a full queue refuses and counts; a channel without a queue refuses and counts', () => {
    const s = sched();
    fill(s, 1, 4, 0);
    assert.deepEqual(s.enqueue(1, pkt(1, 0), 0), { ok: false, reason: 'queue-full' });
    assert.deepEqual(s.enqueue(3, pkt(3, 0), 0), { ok: false, reason: 'no-channel' });
    assert.equal(s.counters.drops['queue-full'], 1);
    assert.equal(s.counters.drops['no-channel'], 1);
    assert.equal(s.counters.enqueued, 6, 'every packet offered');
    assert.deepEqual(totals(s), [
      { channel: 1, packets: 4, bytes: 400 },
      { channel: 6, packets: 0, bytes: 0 },
      { channel: 11, packets: 0, bytes: 0 },
    ]);
    // Room again once R2 has taken one.
    start(s, 1, 0);
    assert.deepEqual(s.enqueue(1, pkt(1, 2_000), 2_000), { ok: true });
  });

  test('refuses bad parameters with a named field', () => {
    const bad = (over: Partial<ChannelSchedulerParams>, field: string) =>
      assert.throws(
        () => sched(over),
        (e: unknown) => e instanceof RangeArgumentError && e.field === field,
      );
    bad({ channels: [1, 1] }, 'scheduler.channels');
    bad({ channels: [1.5] }, 'scheduler.channels');
    bad({ queuePackets: 0 }, 'scheduler.queuePackets');
    bad({ switchingIntervalUs: 0 }, 'scheduler.switchingIntervalUs');
    bad({ overheadUs: -1 }, 'scheduler.overheadUs');
  });

  test('time does not go back', () => {
    const s = sched({}, 1_000);
    assert.throws(
      () => s.tick(999),
      (e: unknown) => e instanceof ClockRegressionError && e.code === 'CORE_CLOCK_REGRESSION',
    );
  });
});

describe('dwell and switching', () => {
  test('serves A for exactly the interval, then switches to B with the overhead', () => {
    const s = sched({ queuePackets: 8 });
    const a = fill(s, 1, 8, 0);
    const b = fill(s, 6, 2, 0);
    assert.equal(start(s, 1, 0), a[0], 'oldest packet first, ties in channel order');
    const end = OVH + IVL;
    assert.equal(s.dwellEndUs, end);
    // 10 ms per packet: handed at 1, 11, 21, 31 ms; the fourth is done exactly at the dwell end.
    const handed = [a[0]];
    for (let t = 11_000; t < end; t += 10_000) handed.push(...sent(s.txDone(t)));
    assert.deepEqual(handed, a.slice(0, 4));
    assert.deepEqual(s.txDone(end), [tune(6, end + OVH)], 'dwell over: switch, no transmit');
    assert.equal(s.dwellEndUs, undefined);
    assert.deepEqual(s.tick(end + OVH - 1), [], 'nothing during the overhead');
    assert.deepEqual(s.tick(end + OVH), [tx(6, b[0]!)]);
    assert.equal(s.dwellEndUs, end + OVH + IVL);
    assert.equal(s.counters.switches, 2);
    assert.equal(s.counters.dwellUs[1], IVL, 'time tuned to channel 1, overhead excluded');
  });

  test('a packet in service at the dwell end is not preempted; the switch comes at txDone', () => {
    const s = sched();
    const a = fill(s, 1, 4, 0);
    const b = fill(s, 6, 1, 0);
    start(s, 1, 0);
    // 12 ms per packet: handed at 1, 13, 25, 37 ms; the fourth is still out at the dwell end (41 ms).
    assert.deepEqual(s.txDone(13_000), [tx(1, a[1]!)]);
    assert.deepEqual(s.txDone(25_000), [tx(1, a[2]!)]);
    assert.deepEqual(s.txDone(37_000), [tx(1, a[3]!)]);
    assert.equal(s.nextDeadline(), 41_000);
    assert.deepEqual(s.tick(41_000), [], 'the packet in service keeps R2');
    assert.equal(s.nextDeadline(), undefined, 'the decision waits for txDone');
    assert.deepEqual(s.txDone(49_000), [tune(6, 50_000)]);
    assert.deepEqual(s.tick(50_000), [tx(6, b[0]!)]);
  });

  test('round robin in channel list order, wrapping, skipping empty queues', () => {
    const s = sched({ channels: [1, 6, 11, 2] });
    fill(s, 6, 2, 0);
    fill(s, 1, 2, 0);
    fill(s, 2, 1, 0);
    const tunes: number[] = [];
    let now = 0;
    const drive = (acts: Act[]) => {
      for (const act of acts) if (act.kind === 'tune') tunes.push(act.channel);
    };
    // Every packet takes the whole dwell, so each dwell serves one packet.
    drive(s.tick(now));
    for (let i = 0; i < 12 && s.nextDeadline() !== undefined; i++) {
      now = s.nextDeadline()!;
      const acts = s.tick(now);
      drive(acts);
      if (sent(acts).length > 0) {
        now = s.dwellEndUs!;
        drive(s.txDone(now));
      }
    }
    assert.deepEqual(tunes, [1, 6, 2, 1, 6], 'after 1: 6 (11 empty), then 2, wrapping to 1');
    assert.equal(s.counters.stays, 0);
  });

  test('stays without overhead when only the current queue has packets', () => {
    const s = sched({ queuePackets: 8 });
    const a = fill(s, 1, 6, 0);
    start(s, 1, 0);
    for (let t = 11_000; t < 41_000; t += 10_000) s.txDone(t);
    assert.deepEqual(s.txDone(41_000), [tx(1, a[4]!)], 'no tune: a new dwell at once');
    assert.equal(s.dwellEndUs, 41_000 + IVL);
    assert.equal(s.counters.stays, 1);
    assert.equal(s.counters.switches, 1);
  });

  test('waits on its channel for the whole interval when its queue empties early', () => {
    const s = sched();
    const a = fill(s, 1, 1, 0);
    const b = fill(s, 6, 1, 0);
    start(s, 1, 0);
    assert.deepEqual(s.txDone(2_000), [], 'channel 6 waits');
    assert.equal(s.nextDeadline(), 41_000);
    assert.deepEqual(s.tick(19_999), []);
    // A packet for the current channel goes at once, within the same dwell.
    const late = pkt(1, 20_000);
    s.enqueue(1, late, 20_000);
    assert.deepEqual(s.tick(20_000), [tx(1, late)]);
    assert.equal(s.dwellEndUs, 41_000);
    assert.deepEqual(s.txDone(21_000), []);
    // A packet for another channel does not cut the dwell short.
    s.enqueue(11, pkt(11, 30_000), 30_000);
    assert.equal(s.nextDeadline(), 41_000);
    assert.deepEqual(s.tick(40_999), []);
    assert.deepEqual(s.tick(41_000), [tune(6, 42_000)]);
    assert.deepEqual(s.tick(42_000), [tx(6, b[0]!)]);
    assert.equal(a.length, 1);
  });

  test('an idle R2 whose dwell is over switches as soon as a packet arrives for another channel', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    assert.deepEqual(s.txDone(2_000), []);
    assert.deepEqual(s.tick(41_000), [], 'all queues empty: stay tuned, idle');
    assert.equal(s.tunedChannel, 1);
    assert.equal(s.dwellEndUs, undefined);
    assert.equal(s.nextDeadline(), undefined);
    const p = pkt(6, 50_000);
    s.enqueue(6, p, 50_000);
    assert.equal(s.nextDeadline(), 50_000);
    assert.deepEqual(s.tick(50_000), [tune(6, 51_000)]);
    assert.deepEqual(s.tick(51_000), [tx(6, p)]);
  });

  test('an idle R2 sends a packet for its own channel at once, in a new dwell', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    s.txDone(2_000);
    s.tick(41_000);
    const p = pkt(1, 50_000);
    s.enqueue(1, p, 50_000);
    assert.deepEqual(s.tick(50_000), [tx(1, p)]);
    assert.equal(s.dwellEndUs, 50_000 + IVL);
    assert.equal(s.counters.stays, 1);
    assert.equal(s.counters.switches, 1);
    assert.equal(s.counters.dwellUs[1], 49_000, 'idle time on the channel counts as tuned');
  });
});

describe('sensing pauses', () => {
  test('no transmit while paused; resume retunes, even to the same channel', () => {
    const s = sched();
    const a = fill(s, 1, 3, 0);
    assert.equal(start(s, 1, 0), a[0]);
    assert.equal(s.paused, false);
    assert.deepEqual(s.pause(5_000), []);
    assert.equal(s.paused, true);
    assert.equal(s.nextDeadline(), undefined);
    assert.deepEqual(s.txDone(6_000), [], 'the MAC finished the packet it had; nothing more goes out');
    s.enqueue(1, pkt(1, 7_000), 7_000);
    s.enqueue(6, pkt(6, 7_000), 7_000);
    assert.equal(s.nextDeadline(), undefined);
    assert.deepEqual(s.tick(100_000), []);
    assert.deepEqual(s.resume(200_000), [tune(1, 201_000)], 'channel 1 still has packets');
    assert.equal(s.paused, false);
    assert.deepEqual(s.tick(200_999), []);
    assert.deepEqual(s.tick(201_000), [tx(1, a[1]!)]);
    assert.equal(s.dwellEndUs, 201_000 + IVL, 'a fresh dwell');
    assert.equal(s.counters.switches, 2);
    assert.equal(s.counters.dwellUs[1], 4_000, 'away while sensing');
  });

  test('an aborted packet goes back to the head of its queue and out first after resume', () => {
    const s = sched();
    const a = fill(s, 1, 2, 0);
    const first = start(s, 1, 0);
    s.pause(3_000);
    s.requeueFront(1, first);
    assert.equal(s.counters.handedOut, 0);
    assert.deepEqual(totals(s)[0], { channel: 1, packets: 2, bytes: 200 });
    assert.deepEqual(s.tick(3_000), []);
    assert.deepEqual(s.resume(10_000), [tune(1, 11_000)]);
    assert.deepEqual(s.tick(11_000), [tx(1, a[0]!)]);
    assert.deepEqual(s.txDone(12_000), [tx(1, a[1]!)]);
  });

  test('resume goes to the next non-empty queue when the current one is empty', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    s.txDone(2_000);
    s.pause(3_000);
    fill(s, 11, 1, 4_000);
    assert.deepEqual(s.resume(10_000), [tune(11, 11_000)]);
  });

  test('resume with every queue empty: no tune until a packet comes', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    s.txDone(2_000);
    s.pause(3_000);
    assert.deepEqual(s.resume(10_000), []);
    assert.equal(s.tunedChannel, undefined);
    assert.equal(s.nextDeadline(), undefined);
    const p = pkt(6, 20_000);
    s.enqueue(6, p, 20_000);
    assert.deepEqual(s.tick(20_000), [tune(6, 21_000)]);
  });

  test('a packet requeued outside sensing goes out again at the next tick', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    const first = start(s, 1, 0);
    s.requeueFront(1, first);
    assert.equal(s.nextDeadline(), OVH);
    assert.deepEqual(s.tick(1_500), [tx(1, first)]);
  });
});

describe('neighbours moving and leaving', () => {
  test("rechannel moves a next hop's packets, in order, to the tail of its new queue; overflow drops", () => {
    const s = sched();
    s.pause(0); // keep R2 out of the way
    const a1 = pkt(7, 0);
    const x = pkt(8, 1);
    const a2 = pkt(7, 2);
    for (const p of [a1, x, a2]) s.enqueue(1, p, 2);
    const y = fill(s, 6, 3, 3, 9);
    const acts = s.rechannel(7, 6, 10);
    assert.deepEqual(drops(acts), [[a2.item, 'queue-full']]);
    assert.deepEqual(
      s.queues().map((q) => q.packets),
      [1, 4, 0],
    );
    assert.equal(s.counters.drops['queue-full'], 1);
    // Serve channel 6 to see its order.
    assert.deepEqual(s.removeNextHop(8, 15), [x]);
    assert.deepEqual(s.resume(20), [tune(6, 20 + OVH)]);
    s.tick(20 + OVH);
    const order = [y[0]];
    for (let t = 2_000; t < 6_000; t += 1_000) order.push(...sent(s.txDone(t)));
    assert.deepEqual(order, [...y, a1]);
  });

  test('rechannel to a channel without a queue drops its packets', () => {
    const s = sched();
    s.pause(0);
    const a = fill(s, 1, 2, 0, 7);
    assert.deepEqual(
      drops(s.rechannel(7, 3, 10)),
      a.map((p) => [p.item, 'no-channel']),
    );
  });

  test("removeNextHop takes a lost neighbour's packets out, in order", () => {
    const s = sched();
    s.pause(0);
    const a1 = pkt(7, 0);
    const x = pkt(8, 1);
    const a2 = pkt(7, 2);
    for (const p of [a1, x, a2]) s.enqueue(1, p, 2);
    assert.deepEqual(s.removeNextHop(7, 5), [a1, a2]);
    assert.deepEqual(s.removeNextHop(7, 6), []);
    assert.deepEqual(totals(s)[0], { channel: 1, packets: 1, bytes: 100 });
    assert.equal(s.counters.removed, 2);
  });

  test('removeAll empties every queue, oldest first, and counts the packets as removed', () => {
    const s = sched();
    s.pause(0);
    const a = pkt(7, 0);
    const b = pkt(8, 1);
    const c = pkt(9, 2);
    s.enqueue(6, b, 2);
    s.enqueue(1, a, 2);
    s.enqueue(1, c, 2);
    assert.deepEqual(s.removeAll(5), [a, b, c]);
    assert.ok(
      s.queues().every((q) => q.packets === 0),
      'queues empty',
    );
    assert.equal(s.counters.removed, 3);
    assert.deepEqual(s.tick(6), []);
  });
});

describe('adaptive dwell', () => {
  test('interval x clamp(bytes / mean bytes of the non-empty queues, 0.5, 2)', () => {
    const s = sched({ adaptive: true });
    fill(s, 1, 3, 0); // 300 bytes
    const b = fill(s, 6, 1, 0); // 100 bytes
    start(s, 1, 0);
    // mean = (300 + 100) / 2 = 200: channel 1 gets 300 / 200 = 1.5 intervals.
    assert.equal(s.dwellEndUs, OVH + 1.5 * IVL);
    s.txDone(2_000);
    s.txDone(3_000);
    assert.deepEqual(s.txDone(4_000), []);
    const end1 = OVH + 1.5 * IVL;
    assert.deepEqual(s.tick(end1), [tune(6, end1 + OVH)]);
    // Channel 1 fills again during the overhead: 100 against 300, mean 200, channel 6 gets half an interval.
    fill(s, 1, 3, end1 + 10);
    assert.deepEqual(s.tick(end1 + OVH), [tx(6, b[0]!)]);
    assert.equal(s.dwellEndUs, end1 + OVH + 0.5 * IVL);
  });

  test('clamped to twice the interval; a lone queue gets the interval', () => {
    const s = sched({ adaptive: true });
    fill(s, 1, 1, 0, 1, 1_000);
    fill(s, 6, 1, 0, 6, 10);
    fill(s, 11, 1, 0, 11, 10);
    start(s, 1, 0);
    // mean = 340: 1000 / 340 = 2.94, clamped to 2.
    assert.equal(s.dwellEndUs, OVH + 2 * IVL);

    const t = sched({ adaptive: true });
    fill(t, 6, 2, 0, 6, 50);
    start(t, 6, 0);
    assert.equal(t.dwellEndUs, OVH + IVL);
  });
});

describe('live parameters', () => {
  test('a smaller queue drops from the tail, removed channels drop everything, new channels get a queue', () => {
    const s = sched();
    s.pause(0);
    const a = fill(s, 1, 4, 0);
    const b = fill(s, 6, 2, 0);
    const acts = s.setParams({ ...P, channels: [1, 11, 2], queuePackets: 2 }, 10);
    assert.deepEqual(drops(acts), [
      [b[0]!.item, 'no-channel'],
      [b[1]!.item, 'no-channel'],
      [a[2]!.item, 'queue-full'],
      [a[3]!.item, 'queue-full'],
    ]);
    assert.deepEqual(totals(s), [
      { channel: 1, packets: 2, bytes: 200 },
      { channel: 11, packets: 0, bytes: 0 },
      { channel: 2, packets: 0, bytes: 0 },
    ]);
    assert.deepEqual(s.enqueue(6, pkt(6, 20), 20), { ok: false, reason: 'no-channel' });
    assert.deepEqual(s.enqueue(2, pkt(2, 20), 20), { ok: true });
    assert.equal(s.counters.drops['no-channel'], 3);
    assert.equal(s.counters.drops['queue-full'], 2);
  });

  test("removing R2's channel ends its dwell after the packet in service", () => {
    const s = sched();
    fill(s, 1, 3, 0);
    const b = fill(s, 6, 1, 0);
    start(s, 1, 0);
    const acts = s.setParams({ ...P, channels: [6, 11] }, 2_000);
    assert.equal(drops(acts).length, 2);
    assert.equal(sent(acts).length + acts.filter((x) => x.kind === 'tune').length, 0, 'the packet in service keeps R2');
    assert.deepEqual(s.txDone(3_000), [tune(6, 4_000)]);
    assert.deepEqual(s.tick(4_000), [tx(6, b[0]!)]);
  });

  test('a new interval applies from the next dwell', () => {
    const s = sched({ queuePackets: 8 });
    fill(s, 1, 8, 0);
    start(s, 1, 0);
    assert.deepEqual(s.setParams({ ...P, queuePackets: 8, switchingIntervalUs: 10_000 }, 2_000), []);
    assert.equal(s.dwellEndUs, OVH + IVL);
    s.txDone(OVH + IVL);
    assert.equal(s.dwellEndUs, OVH + IVL + 10_000);
  });
});

describe('nothing happens when nothing should', () => {
  test('an empty scheduler has no deadline and no actions', () => {
    const s = sched();
    assert.equal(s.nextDeadline(), undefined);
    for (const t of [0, 1, 1_000_000]) assert.deepEqual(s.tick(t), []);
    assert.deepEqual(s.txDone(2_000_000), [], 'a txDone with nothing handed out');
    assert.deepEqual(s.pause(2_000_000), []);
    assert.deepEqual(s.resume(2_000_001), []);
    assert.deepEqual(s.rechannel(5, 6, 2_000_002), []);
    assert.deepEqual(s.removeNextHop(5, 2_000_003), []);
    assert.equal(s.counters.switches, 0);
    assert.equal(s.tunedChannel, undefined);
  });

  test('tick before each deadline returns [], and a drained scheduler goes quiet', () => {
    const s = sched();
    fill(s, 1, 2, 0);
    fill(s, 6, 1, 0);
    let now = 0;
    let out = 0;
    for (let i = 0; i < 50; i++) {
      const d = s.nextDeadline();
      if (d === undefined) break;
      if (d > now) assert.deepEqual(s.tick(d - 1 > now ? d - 1 : now), [], `before ${d}`);
      now = Math.max(now, d);
      let acts = s.tick(now);
      while (sent(acts).length > 0) {
        out++;
        now += 500;
        acts = s.txDone(now);
      }
    }
    assert.equal(out, 3);
    assert.equal(s.nextDeadline(), undefined);
    assert.deepEqual(s.tick(now + 10_000_000), []);
  });
});

const CLASSES: QosClass[] = [
  { queue: 1, minKbps: 400, burstUs: 50_000 },
  { queue: 2, minKbps: 100, burstUs: 100_000 },
  { queue: 0, minKbps: 0, burstUs: 0 },
];

test('randomized: conservation, one packet at the MAC, transmits only on the tuned channel inside a dwell, no work-conserving leave missed', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const rng = Rng.fromSeed(seed);
    const pool = [1, 6, 11, 2];
    // Seeds 5 to 8 run QoS classes (packets of queues 0, 1, 2 and 7, which has no class) and change them live.
    const qos = seed > 4;
    const classesOf = (): QosClass[] | undefined => (qos ? CLASSES.filter((c) => c.queue === 0 || rng.next() < 0.8) : undefined);
    // Seeds 3 and 6 run work-conserving dwells.
    const workConserving = seed % 3 === 0;
    let params: ChannelSchedulerParams = { ...P, queuePackets: 6, adaptive: seed % 2 === 0, workConserving, classes: classesOf() };
    const s = new ChannelScheduler<number>(params, 0);
    const hopChannel = new Map<number, number>();
    for (let h = 1; h <= 6; h++) hopChannel.set(h, pool[rng.int(0, 2)]!);
    let clock = 0;
    let readyUs = 0;
    let paused = false;
    let classesChanged = false;
    let removed = 0;
    let handed = 0;
    let atMac: { packet: Pkt; doneAt: number } | undefined;
    const lastDone = new Map<string, number>();

    const handle = (acts: Act[]) => {
      for (const a of acts) {
        if (a.kind === 'tune') {
          assert.equal(a.readyUs, clock + params.overheadUs);
          readyUs = a.readyUs;
        } else if (a.kind === 'transmit') {
          assert.equal(atMac, undefined, 'one packet at the MAC');
          assert.equal(paused, false, 'no transmit while paused');
          assert.equal(a.channel, s.tunedChannel);
          assert.ok(clock >= readyUs, 'not during the overhead');
          assert.ok(clock < s.dwellEndUs!, 'inside the dwell');
          atMac = { packet: a.packet, doneAt: clock + rng.int(200, 8_000) };
          handed++;
        }
      }
    };
    /** Runs ticks and txDones in time order up to `t`. */
    const runTo = (t: number) => {
      for (let guard = 0; ; guard++) {
        assert.ok(guard < 10_000, 'the scheduler keeps asking for ticks');
        const d = s.nextDeadline();
        const done = atMac?.doneAt;
        const next = Math.min(d ?? Infinity, done ?? Infinity);
        if (next > t) break;
        clock = Math.max(clock, next);
        if (done !== undefined && done <= (d ?? Infinity)) {
          const p = atMac!.packet;
          // Per next hop, packets leave in order (per next hop and class, with classes: live class changes aside).
          const key = qos ? `${p.nextHop}/${p.queue}` : String(p.nextHop);
          if (!classesChanged) assert.ok((lastDone.get(key) ?? -1) < p.item, 'per next hop, packets leave in order');
          lastDone.set(key, p.item);
          atMac = undefined;
          handle(s.txDone(clock));
        } else {
          handle(s.tick(clock));
        }
      }
      const d = s.nextDeadline();
      if (d !== undefined && d > clock) assert.deepEqual(s.tick(clock), [], 'nothing before the deadline');
      if (workConserving && s.dwellEndUs !== undefined && !s.paused && s.inFlight === 0) {
        const own = s.queues().find((q) => q.channel === s.tunedChannel)?.packets ?? 0;
        assert.ok(own > 0 || !s.othersWaiting(), `a dwell on an empty queue with others waiting was left (seed ${seed})`);
      }
      clock = t;
    };

    for (let step = 0; step < 3_000; step++) {
      runTo(clock + rng.int(0, 3_000));
      const r = rng.next();
      const hop = rng.int(1, 6);
      if (r < 0.6) {
        const channel = rng.next() < 0.05 ? 99 : hopChannel.get(hop)!;
        const p = pkt(hop, clock, rng.int(40, 1_500));
        if (qos) p.queue = [0, 1, 2, 7][rng.int(0, 3)]!;
        s.enqueue(channel, p, clock);
      } else if (r < 0.65) {
        const channel = rng.next() < 0.1 ? 99 : pool[rng.int(0, 3)]!;
        hopChannel.set(hop, channel);
        handle(s.rechannel(hop, channel, clock));
      } else if (r < 0.68) {
        removed += s.removeNextHop(hop, clock).length;
      } else if (r < 0.73 && !paused) {
        paused = true;
        handle(s.pause(clock));
        if (atMac && rng.next() < 0.5) {
          s.requeueFront(hopChannel.get(atMac.packet.nextHop)!, atMac.packet);
          atMac = undefined;
          handed--;
        }
      } else if (r < 0.78 && paused) {
        paused = false;
        handle(s.resume(clock));
      } else if (r < 0.8) {
        const channels = pool.filter(() => rng.next() < 0.75);
        const classes = qos && rng.next() < 0.5 ? classesOf() : params.classes;
        if (classes !== params.classes) classesChanged = true;
        params = { ...params, channels, queuePackets: rng.int(1, 8), switchingIntervalUs: rng.int(5, 50) * 1_000, classes };
        handle(s.setParams(params, clock));
      }
      const c = s.counters;
      const dropped = Object.values(c.drops).reduce((x, y) => x + y, 0);
      const queued = s.queues().reduce((x, q) => x + q.packets, 0);
      assert.equal(c.enqueued, c.handedOut + dropped + c.removed + queued, `conservation, seed ${seed} step ${step}`);
      assert.equal(c.handedOut, handed);
      assert.equal(c.removed, removed);
      assert.ok(c.earlyLeaves <= c.switches, 'each early leave is a switch');
      if (!workConserving) assert.equal(c.earlyLeaves, 0);
      for (const q of s.queues()) {
        assert.ok(q.packets <= params.queuePackets, 'a channel queue holds at most its capacity');
        assert.equal(
          q.classes.reduce((x, k) => x + k.packets, 0),
          q.packets,
          'the classes hold the channel queue',
        );
      }
    }
    const tuned = Object.values(s.counters.dwellUs).reduce((x, y) => x + y, 0);
    assert.ok(tuned <= clock, 'time tuned never exceeds the time elapsed');
    assert.ok(s.counters.handedOut > 200, `traffic flowed (seed ${seed}: ${s.counters.handedOut})`);
    if (workConserving) assert.ok(s.counters.earlyLeaves > 10, `dwells were left early (seed ${seed}: ${s.counters.earlyLeaves})`);
  }
});

describe('work-conserving dwells', () => {
  const wc = (over: Partial<ChannelSchedulerParams> = {}) => sched({ workConserving: true, ...over });
  const packetsOn = (s: ChannelScheduler<number>, channel: number) => s.queues().find((q) => q.channel === channel)!.packets;

  test('off (the default): an empty queue keeps R2 on its channel until the dwell ends', () => {
    for (const s of [sched(), sched({ workConserving: false })]) {
      fill(s, 1, 1, 0);
      const b = fill(s, 6, 1, 0);
      start(s, 1, 0);
      assert.deepEqual(s.txDone(2_000), [], 'channel 6 waits');
      s.enqueue(11, pkt(11, 3_000), 3_000);
      assert.equal(s.nextDeadline(), OVH + IVL, 'an arrival for another channel makes nothing due');
      assert.deepEqual(s.tick(OVH + IVL - 1), []);
      assert.deepEqual(s.tick(OVH + IVL), [tune(6, OVH + IVL + OVH)]);
      assert.deepEqual(s.tick(OVH + IVL + OVH), [tx(6, b[0]!)]);
      assert.equal(s.counters.earlyLeaves, 0);
    }
  });

  test('the queue empties with others waiting: the dwell ends at once, to the next in round-robin order, with the overhead', () => {
    const s = wc();
    const a = fill(s, 1, 2, 0);
    assert.deepEqual(s.tick(0), [tune(1, OVH)]);
    // Channel 11's packet is older than channel 6's: round robin still takes 6 first (after 1).
    const c = fill(s, 11, 1, 100);
    const b = fill(s, 6, 1, 500);
    assert.deepEqual(s.tick(OVH), [tx(1, a[0]!)]);
    assert.deepEqual(s.txDone(2_000), [tx(1, a[1]!)]);
    assert.deepEqual(s.txDone(3_000), [tune(6, 3_000 + OVH)], 'the last packet done: leave now, not at the dwell end');
    assert.equal(s.dwellEndUs, undefined);
    assert.equal(s.counters.dwellUs[1], 2_000, 'tuned to channel 1 from the end of its tune until it left');
    assert.deepEqual(s.tick(3_000 + OVH - 1), [], 'nothing during the overhead');
    assert.deepEqual(s.tick(3_000 + OVH), [tx(6, b[0]!)]);
    assert.equal(s.dwellEndUs, 3_000 + OVH + IVL, 'a full dwell on the next channel');
    assert.deepEqual(s.txDone(5_000), [tune(11, 5_000 + OVH)]);
    assert.deepEqual(s.tick(5_000 + OVH), [tx(11, c[0]!)]);
    assert.equal(s.counters.earlyLeaves, 2);
    assert.equal(s.counters.switches, 3, 'each early leave is a switch');
    assert.equal(s.counters.stays, 0);
  });

  test('every queue empty: R2 waits on its channel; a packet for it goes at once within the dwell', () => {
    const s = wc();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    assert.deepEqual(s.txDone(2_000), []);
    assert.equal(s.tunedChannel, 1);
    assert.equal(s.dwellEndUs, OVH + IVL, 'the dwell runs on');
    assert.equal(s.nextDeadline(), OVH + IVL);
    const late = pkt(1, 10_000);
    s.enqueue(1, late, 10_000);
    assert.deepEqual(s.tick(10_000), [tx(1, late)]);
    assert.deepEqual(s.txDone(11_000), []);
    assert.deepEqual(s.tick(OVH + IVL), [], 'the dwell ends with nothing to serve: idle');
    assert.equal(s.dwellEndUs, undefined);
    assert.equal(s.tunedChannel, 1);
    assert.equal(s.counters.earlyLeaves, 0);
  });

  test('a packet for another channel arriving during an empty dwell makes the switch due at that time', () => {
    const s = wc();
    fill(s, 1, 1, 0);
    start(s, 1, 0);
    assert.deepEqual(s.txDone(2_000), []);
    assert.deepEqual(s.tick(19_999), []);
    const p = pkt(11, 20_000);
    assert.deepEqual(s.enqueue(11, p, 20_000), { ok: true });
    assert.equal(s.nextDeadline(), 20_000, 'a driver ticking at nextDeadline sees it now');
    assert.deepEqual(s.tick(20_000), [tune(11, 20_000 + OVH)]);
    assert.deepEqual(s.tick(20_000 + OVH), [tx(11, p)]);
    assert.equal(s.counters.earlyLeaves, 1);
  });

  test('with a MAC window of 3 the leave waits until every packet is back', () => {
    const s = wc({ macWindow: 3, queuePackets: 8 });
    const a = fill(s, 6, 2, 0);
    const b = fill(s, 11, 1, 0);
    assert.deepEqual(s.tick(0), [tune(6, OVH)]);
    assert.deepEqual(s.tick(OVH), [tx(6, a[0]!), tx(6, a[1]!)]);
    assert.equal(s.nextDeadline(), OVH + IVL, 'the queue is empty, but the MAC still holds packets');
    assert.deepEqual(s.txDone(2_000, a[1]), [], 'one still with the MAC');
    // One aborted and given back: channel 6 has a packet again, so R2 serves it rather than leave.
    s.requeueFront(6, a[0]!);
    assert.equal(s.nextDeadline(), 2_000);
    assert.deepEqual(s.tick(2_000), [tx(6, a[0]!)]);
    const late = pkt(11, 2_500);
    s.enqueue(11, late, 2_500);
    assert.equal(s.nextDeadline(), OVH + IVL, 'an arrival for another channel waits for the MAC too');
    assert.deepEqual(s.txDone(3_000, a[0]), [tune(11, 3_000 + OVH)], 'the last one back: leave now');
    assert.deepEqual(s.tick(3_000 + OVH), [tx(11, b[0]!), tx(11, late)]);
    assert.equal(s.counters.earlyLeaves, 1);
    assert.equal(packetsOn(s, 6), 0);
  });

  test('a dwell whose queue never empties still ends at the interval', () => {
    const s = wc({ queuePackets: 8 });
    const a = fill(s, 1, 8, 0);
    const b = fill(s, 6, 1, 0);
    start(s, 1, 0);
    const end = OVH + IVL;
    for (let t = 11_000; t < end; t += 10_000) assert.equal(sent(s.txDone(t)).length, 1);
    assert.deepEqual(s.txDone(end), [tune(6, end + OVH)], 'the interval is over: switch, packets of channel 1 still queued');
    assert.equal(packetsOn(s, 1), a.length - 4);
    assert.deepEqual(s.tick(end + OVH), [tx(6, b[0]!)]);
    assert.equal(s.counters.earlyLeaves, 0);
    assert.equal(s.counters.switches, 2);
  });

  test('after a sensing round: the fresh dwell ends once its queue empties', () => {
    const s = wc();
    const a = fill(s, 1, 2, 0);
    const b = fill(s, 6, 1, 0);
    assert.equal(start(s, 1, 0), a[0]);
    s.pause(5_000);
    assert.deepEqual(s.txDone(6_000), [], 'paused: no leave, no transmit');
    assert.equal(s.nextDeadline(), undefined);
    s.enqueue(11, pkt(11, 7_000), 7_000);
    assert.equal(s.nextDeadline(), undefined, 'nothing is due while R2 is away');
    assert.deepEqual(s.resume(80_000), [tune(1, 80_000 + OVH)], 'channel 1 still has a packet');
    assert.deepEqual(s.tick(80_000 + OVH), [tx(1, a[1]!)]);
    assert.deepEqual(s.txDone(82_000), [tune(6, 82_000 + OVH)]);
    assert.deepEqual(s.tick(82_000 + OVH), [tx(6, b[0]!)]);
    assert.equal(s.counters.earlyLeaves, 1);
  });

  test('with QoS classes the queue is empty only when every class is', () => {
    const s = wc({ classes: CLASSES });
    const hi = { ...pkt(1, 0), queue: 1 };
    const be = pkt(1, 0);
    s.enqueue(1, be, 0);
    s.enqueue(1, hi, 0);
    const b = fill(s, 6, 1, 0);
    assert.deepEqual(s.tick(0), [tune(1, OVH)]);
    assert.deepEqual(s.tick(OVH), [tx(1, hi)], 'the high class first');
    assert.deepEqual(s.txDone(2_000), [tx(1, be)], 'best effort still waits on channel 1: no leave');
    assert.deepEqual(s.txDone(3_000), [tune(6, 3_000 + OVH)]);
    assert.deepEqual(s.tick(3_000 + OVH), [tx(6, b[0]!)]);
    assert.equal(s.counters.earlyLeaves, 1);
  });

  test('set live: turning it on ends an empty dwell at once; turning it off waits again', () => {
    const s = sched();
    fill(s, 1, 1, 0);
    const b = fill(s, 6, 1, 0);
    start(s, 1, 0);
    assert.deepEqual(s.txDone(2_000), []);
    assert.equal(s.nextDeadline(), OVH + IVL);
    assert.deepEqual(s.setParams({ ...P, workConserving: true }, 5_000), [tune(6, 5_000 + OVH)]);
    assert.deepEqual(s.tick(5_000 + OVH), [tx(6, b[0]!)]);
    assert.equal(s.counters.earlyLeaves, 1);
    assert.deepEqual(s.setParams({ ...P, workConserving: false }, 7_000), []);
    assert.deepEqual(s.txDone(8_000), []);
    s.enqueue(11, pkt(11, 9_000), 9_000);
    assert.equal(s.nextDeadline(), 5_000 + OVH + IVL, 'off again: the dwell runs to its end');
    assert.equal(s.counters.earlyLeaves, 1);
  });
});
