import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { ChannelScheduler } from '../../src/sched/channel-scheduler.js';
import type { ChannelSchedulerParams, QueuedPacket, SchedAction } from '../../src/sched/types.js';

/*
 * R2's MAC window (`macWindow`): the MAC of a router on the medium process
 * holds several packets at once. All in virtual time.
 */

type Pkt = QueuedPacket<number>;
type Act = SchedAction<number>;

const OVH = 1_000;
const IVL = 40_000;
const P: ChannelSchedulerParams = { channels: [1, 6, 11], queuePackets: 8, switchingIntervalUs: IVL, overheadUs: OVH, adaptive: false };

let nextId = 0;
const pkt = (nextHop: number, at: number): Pkt => ({ nextHop, bytes: 100, enqueuedUs: at, item: nextId++ });
const sched = (over: Partial<ChannelSchedulerParams>) => new ChannelScheduler<number>({ ...P, ...over }, 0);

function fill(s: ChannelScheduler<number>, channel: number, n: number, at: number): Pkt[] {
  const out: Pkt[] = [];
  for (let i = 0; i < n; i++) {
    const p = pkt(channel, at);
    assert.deepEqual(s.enqueue(channel, p, at), { ok: true });
    out.push(p);
  }
  return out;
}

const tune = (channel: number, readyUs: number): Act => ({ kind: 'tune', channel, readyUs });
const tx = (channel: number, ...packets: Pkt[]): Act[] => packets.map((packet) => ({ kind: 'transmit', channel, packet }));
const packetsOn = (s: ChannelScheduler<number>, channel: number) => s.queues().find((q) => q.channel === channel)!.packets;

describe('a MAC window', () => {
  test('the MAC gets up to macWindow packets of the tuned channel, and one more as each is done', () => {
    const s = sched({ macWindow: 3 });
    const ps = fill(s, 6, 5, 0);
    assert.deepEqual(s.tick(0), [tune(6, OVH)]);
    assert.deepEqual(s.tick(OVH), tx(6, ps[0]!, ps[1]!, ps[2]!));
    assert.equal(s.inFlight, 3);
    assert.deepEqual(s.tick(OVH + 10), [], 'the window is full');
    assert.deepEqual(s.txDone(2_000, ps[1]), tx(6, ps[3]!), 'done out of order: still one more');
    assert.deepEqual(s.txDone(3_000, ps[0]), tx(6, ps[4]!));
    assert.deepEqual(s.txDone(4_000, ps[2]), []);
    assert.equal(s.inFlight, 2);
    assert.deepEqual(s.txDone(4_500, ps[2]), [], 'a packet the MAC no longer holds is not done twice');
    assert.equal(s.inFlight, 2);
    // A packet queued while the window has room goes at the next tick.
    const late = pkt(6, 5_000);
    s.enqueue(6, late, 5_000);
    assert.equal(s.nextDeadline(), 5_000);
    assert.deepEqual(s.tick(5_000), tx(6, late));
    assert.equal(s.counters.handedOut, 6);
  });

  test('a dwell end with other channels waiting: nothing more goes, and the switch waits until the MAC holds nothing', () => {
    const s = sched({ macWindow: 2 });
    const a = fill(s, 6, 4, 0);
    fill(s, 11, 1, 0);
    assert.deepEqual(s.tick(0), [tune(6, OVH)]);
    assert.deepEqual(s.tick(OVH), tx(6, a[0]!, a[1]!));
    assert.deepEqual(s.txDone(2_000, a[0]), tx(6, a[2]!));
    assert.deepEqual(s.tick(OVH + IVL), [], 'the dwell is over: no more packets of channel 6');
    assert.deepEqual(s.txDone(OVH + IVL + 100, a[1]), [], 'one still with the MAC');
    assert.deepEqual(s.txDone(OVH + IVL + 200, a[2]), [tune(11, OVH + IVL + 200 + OVH)]);
    assert.equal(packetsOn(s, 6), 1, 'the rest waits for the next dwell on 6');
  });

  test('a dwell end with only its own channel waiting: R2 stays at the next room in the window, without draining it', () => {
    const s = sched({ macWindow: 2 });
    const a = fill(s, 6, 5, 0);
    s.tick(0);
    assert.deepEqual(s.tick(OVH), tx(6, a[0]!, a[1]!));
    assert.deepEqual(s.tick(OVH + IVL), [], 'the window is full: the decision waits for room');
    assert.equal(s.counters.stays, 0);
    assert.deepEqual(s.txDone(OVH + IVL + 10, a[0]), tx(6, a[2]!), 'a new dwell, one packet still out');
    assert.equal(s.counters.stays, 1);
    assert.equal(s.dwellEndUs, OVH + IVL + 10 + IVL);
    assert.equal(s.inFlight, 2);
    assert.equal(s.counters.switches, 1);
  });

  test('packets given back return to the head of their queue in the order they were handed out, whatever order they come back in', () => {
    const s = sched({ macWindow: 3 });
    const a = fill(s, 6, 5, 0);
    s.tick(0);
    assert.deepEqual(s.tick(OVH), tx(6, a[0]!, a[1]!, a[2]!));
    // A retune gave back the whole window, the last one first.
    s.requeueFront(6, a[2]!);
    assert.equal(s.inFlight, 2);
    assert.deepEqual(s.tick(2_000), [], 'nothing goes while some are back and others still out');
    s.requeueFront(6, a[0]!);
    assert.deepEqual(s.tick(2_100), []);
    assert.equal(packetsOn(s, 6), 2, 'the ones given back wait until the last is back');
    s.requeueFront(6, a[1]!);
    assert.equal(s.inFlight, 0);
    assert.equal(packetsOn(s, 6), 5);
    assert.deepEqual(s.tick(2_200), tx(6, a[0]!, a[1]!, a[2]!), 'in the order they were first handed out');
    assert.equal(s.counters.handedOut, 3);
  });

  test('a hold: the one in service is done, the ones behind it come back and go out first', () => {
    const s = sched({ macWindow: 3 });
    const a = fill(s, 6, 4, 0);
    s.tick(0);
    assert.deepEqual(s.tick(OVH), tx(6, a[0]!, a[1]!, a[2]!));
    s.pause(2_000);
    s.requeueFront(6, a[1]!);
    s.requeueFront(6, a[2]!);
    assert.deepEqual(s.txDone(2_500, a[0]), [], 'paused');
    assert.equal(packetsOn(s, 6), 3);
    assert.deepEqual(s.resume(10_000), [tune(6, 10_000 + OVH)]);
    assert.deepEqual(s.tick(10_000 + OVH), tx(6, a[1]!, a[2]!, a[3]!));
  });

  test('a window of 1 is the one-at-a-time rule', () => {
    const s = sched({ macWindow: 1 });
    const a = fill(s, 6, 3, 0);
    s.tick(0);
    assert.deepEqual(s.tick(OVH), tx(6, a[0]!));
    assert.deepEqual(s.tick(OVH + 1), []);
    assert.deepEqual(s.txDone(2_000), tx(6, a[1]!), 'without a packet: the oldest the MAC holds');
  });

  test('refuses a window that is not an integer >= 1', () => {
    for (const w of [0, -1, 1.5, Number.NaN]) assert.throws(() => sched({ macWindow: w }), RangeArgumentError);
  });
});

/**
 * A randomized run against a MAC that behaves like a station on the medium
 * process: a FIFO of the packets it was handed, the head in service; a
 * retune gives back everything it holds, a hold everything behind the head,
 * in an order of the RNG's choosing (records may come back in any order).
 */
test('randomized: the window bound, transmits only on the tuned channel, nothing lost or duplicated across switches and pauses', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
    const rng = Rng.fromSeed(seed);
    const window = [2, 3, 8][seed % 3]!;
    // Seeds 7 to 9 run work-conserving dwells: a leave, too, waits for every packet to be back.
    const workConserving = seed > 6;
    const params: ChannelSchedulerParams = { ...P, queuePackets: 6, adaptive: seed % 2 === 0, macWindow: window, workConserving };
    const s = new ChannelScheduler<number>(params, 0);
    const pool = [1, 6, 11];
    const hopChannel = new Map<number, number>();
    for (let h = 1; h <= 5; h++) hopChannel.set(h, pool[rng.int(0, 2)]!);
    let clock = 0;
    let readyUs = 0;
    let paused = false;
    let resuming = false;
    /** Bumped by every tune: a packet is done in the epoch it was handed out in, or never. */
    let epoch = 0;
    const mac: Array<{ packet: Pkt; epoch: number; doneAt: number | undefined }> = [];
    const all = new Set<number>();
    const done = new Map<number, number>();
    const dropped = new Set<number>();
    const removed = new Set<number>();
    const lastDone = new Map<number, number>();

    const giveBack = (from: number) => {
      const back = mac.splice(from);
      // In any order: the scheduler puts them back in the order they were handed out.
      for (let i = back.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [back[i], back[j]] = [back[j]!, back[i]!];
      }
      for (const b of back) s.requeueFront(hopChannel.get(b.packet.nextHop) ?? 1, b.packet);
    };
    const handle = (acts: Act[]) => {
      for (const a of acts) {
        if (a.kind === 'tune') {
          if (mac.length > 0) {
            assert.ok(resuming, 'a tune while the MAC holds packets only comes from resume');
            giveBack(0); // the retune gives them back
          }
          epoch++;
          readyUs = a.readyUs;
        } else if (a.kind === 'transmit') {
          assert.equal(paused, false, 'no transmit while paused');
          assert.equal(a.channel, s.tunedChannel, 'on the channel R2 is tuned to');
          assert.ok(clock >= readyUs, 'not during the overhead');
          assert.ok(mac.length < window, 'the window bound');
          mac.push({ packet: a.packet, epoch, doneAt: undefined });
        } else dropped.add(a.packet.item);
      }
    };
    const serve = () => {
      const head = mac[0];
      if (head && head.doneAt === undefined) head.doneAt = clock + rng.int(100, 3_000);
    };
    const runTo = (t: number) => {
      for (let guard = 0; ; guard++) {
        assert.ok(guard < 20_000, 'the scheduler keeps asking for ticks');
        serve();
        const d = s.nextDeadline();
        const next = Math.min(d ?? Infinity, mac[0]?.doneAt ?? Infinity);
        if (next > t) break;
        clock = Math.max(clock, next);
        const head = mac[0];
        if (head?.doneAt !== undefined && head.doneAt <= (d ?? Infinity)) {
          mac.shift();
          assert.equal(head.epoch, epoch, 'done on the channel it was handed out for');
          const id = head.packet.item;
          assert.ok(!done.has(id), `packet ${id} done twice`);
          done.set(id, clock);
          assert.ok((lastDone.get(head.packet.nextHop) ?? -1) < id, 'per next hop, packets leave in order');
          lastDone.set(head.packet.nextHop, id);
          handle(s.txDone(clock, head.packet));
        } else handle(s.tick(clock));
      }
      if (workConserving && s.dwellEndUs !== undefined && !s.paused && s.inFlight === 0 && mac.length === 0) {
        assert.ok(packetsOn(s, s.tunedChannel!) > 0 || !s.othersWaiting(), `a dwell on an empty queue with others waiting was left (seed ${seed})`);
      }
      clock = t;
    };

    for (let step = 0; step < 2_000; step++) {
      runTo(clock + rng.int(0, 2_000));
      const r = rng.next();
      const hop = rng.int(1, 5);
      if (r < 0.7) {
        const p = pkt(hop, clock);
        all.add(p.item);
        if (!s.enqueue(hopChannel.get(hop)!, p, clock).ok) dropped.add(p.item);
      } else if (r < 0.74) {
        const channel = pool[rng.int(0, 2)]!;
        hopChannel.set(hop, channel);
        handle(s.rechannel(hop, channel, clock));
      } else if (r < 0.76) {
        for (const p of s.removeNextHop(hop, clock)) removed.add(p.item);
      } else if (r < 0.82 && !paused) {
        paused = true;
        handle(s.pause(clock));
        // The router retunes R2 away (everything back), or holds (the one in service goes on).
        if (rng.next() < 0.5) giveBack(0);
        else giveBack(1);
      } else if (r < 0.88 && paused) {
        paused = false;
        resuming = true;
        handle(s.resume(clock));
        resuming = false;
      }
    }
    if (paused) {
      paused = false;
      resuming = true;
      handle(s.resume(clock));
      resuming = false;
    }
    runTo(clock + 10_000_000);
    assert.equal(mac.length, 0);
    assert.equal(s.inFlight, 0);
    assert.equal(
      s.queues().reduce((n, q) => n + q.packets, 0),
      0,
      'drained',
    );
    for (const id of all) {
      const fates = Number(done.has(id)) + Number(dropped.has(id)) + Number(removed.has(id));
      assert.equal(fates, 1, `packet ${id}: done ${done.has(id)}, dropped ${dropped.has(id)}, removed ${removed.has(id)}`);
    }
    const c = s.counters;
    const drops = Object.values(c.drops).reduce((a, b) => a + b, 0);
    assert.equal(c.enqueued, c.handedOut + drops + c.removed);
    assert.equal(c.handedOut, done.size);
    assert.ok(done.size > 500, `seed ${seed}: ${done.size} packets done`);
    assert.ok(c.earlyLeaves <= c.switches, 'each early leave is a switch');
    if (workConserving) assert.ok(c.earlyLeaves > 10, `seed ${seed}: ${c.earlyLeaves} dwells left early`);
    else assert.equal(c.earlyLeaves, 0);
  }
});

describe('whether other queues wait', () => {
  // `othersWaiting` keeps a tally of every queue's packets instead of passing over them: it must
  // answer as the queues themselves do through every kind of input, live changes of channels,
  // capacity and classes included.
  test('after every input of a random run it agrees with the queues', () => {
    const rng = Rng.fromSeed(17);
    const classes = [
      { queue: 2, minKbps: 500, burstUs: 20_000 },
      { queue: 0, minKbps: 0, burstUs: 0 },
    ];
    const s = sched({ macWindow: 2, queuePackets: 4, workConserving: true });
    const held: Pkt[] = [];
    let now = 0;
    const run = (actions: readonly Act[]) => {
      for (const a of actions) if (a.kind === 'transmit') held.push(a.packet);
    };
    for (let step = 0; step < 5000; step++) {
      now += rng.int(0, 3000);
      const channels = s.queueChannels;
      const r = rng.int(0, 99);
      if (r < 40) {
        const channel = channels[rng.int(0, channels.length - 1)]!;
        const p = { ...pkt(rng.int(1, 4), now), queue: rng.int(0, 2) };
        if (s.enqueue(channel, p, now).ok) run(s.tick(now));
      } else if (r < 65) run(s.tick(now));
      else if (r < 80 && held.length > 0) run(s.txDone(now, held.shift()));
      else if (r < 85 && held.length > 0) {
        s.requeueFront(channels[rng.int(0, channels.length - 1)]!, held.shift()!);
        run(s.tick(now));
      } else if (r < 88) run(s.rechannel(rng.int(1, 4), channels[rng.int(0, channels.length - 1)]!, now));
      else if (r < 90) s.removeNextHop(rng.int(1, 4), now);
      else if (r < 93) {
        const pick = [1, 6, 11, 3].filter(() => rng.int(0, 1) === 1);
        run(
          s.setParams(
            {
              ...P,
              channels: pick.length > 0 ? pick : [6],
              queuePackets: rng.int(1, 5),
              macWindow: 2,
              workConserving: true,
              classes: rng.int(0, 1) ? classes : undefined,
            },
            now,
          ),
        );
      } else if (r < 95) run(s.pause(now));
      else if (r < 97) run(s.resume(now));
      else run(s.tick(now));
      const tuned = s.tunedChannel;
      const want = s.queues().some((q) => q.channel !== tuned && q.packets > 0);
      assert.equal(s.othersWaiting(), want, `step ${step}: othersWaiting with R2 on ${tuned}`);
    }
  });
});
