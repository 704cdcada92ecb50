import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WiredLink, WiredLinkDirection, type WiredLinkParams } from '../../src/core/wired-link.js';
import { RangeArgumentError } from '../../src/core/errors.js';

const link = (o: Partial<WiredLinkParams> = {}): WiredLinkDirection<number> =>
  new WiredLinkDirection<number>({ rateMbps: 10, delayMs: 50, queuePackets: 100, queueBytes: 0, ...o });

/** Steps a direction through its deadlines until `until`, with each packet's arrival time. */
function drain(d: WiredLinkDirection<number>, until = Number.MAX_SAFE_INTEGER): Array<{ item: number; at: number }> {
  const out: Array<{ item: number; at: number }> = [];
  for (let t = d.nextDeadline(); t !== undefined && t <= until; t = d.nextDeadline()) for (const item of d.tick(t)) out.push({ item, at: t });
  return out;
}

describe('wired link: one direction in virtual time', () => {
  test('a packet arrives after its transmission time plus the propagation delay', () => {
    const d = link();
    // 1250 bytes at 10 Mbps: 1000 us on the wire, then 50 ms of propagation.
    assert.deepEqual(d.send(7, 1250, 2000), { ok: true });
    assert.equal(d.nextDeadline(), 2000 + 1000 + 50_000);
    assert.deepEqual(d.tick(52_999), [], 'nothing arrives a microsecond early');
    assert.deepEqual(d.tick(53_000), [7]);
    assert.equal(d.nextDeadline(), undefined, 'and nothing is left on the way');
    assert.deepEqual(d.tick(1_000_000), []);
  });

  test('back-to-back packets are spaced by the rate and keep FIFO order', () => {
    const d = link({ delayMs: 10 });
    for (let i = 0; i < 5; i++) assert.ok(d.send(i, 1250, 0).ok);
    const got = drain(d);
    assert.deepEqual(
      got.map((g) => g.item),
      [0, 1, 2, 3, 4],
    );
    assert.deepEqual(
      got.map((g) => g.at),
      [11_000, 12_000, 13_000, 14_000, 15_000],
    );
  });

  test('the rate is kept over a long run without rounding drift (fractional transmission times)', () => {
    // 1000 bytes at 3 Mbps: 2666.67 us each; 3000 packets take 8 s exactly.
    const d = link({ rateMbps: 3, delayMs: 0, queuePackets: 0, queueBytes: 10_000_000 });
    for (let i = 0; i < 3000; i++) assert.ok(d.send(i, 1000, 0).ok);
    const got = drain(d);
    assert.equal(got.length, 3000);
    assert.equal(got.at(-1)!.at, 8_000_000);
    assert.equal(got[0]!.at, 2667, 'a fractional arrival rounds up');
  });

  test('a full drop-tail queue (in packets) refuses the next packet; the one on the wire does not count', () => {
    const d = link({ queuePackets: 3 });
    // The first goes on the wire at once; three wait; the fifth is refused.
    for (let i = 0; i < 4; i++) assert.deepEqual(d.send(i, 1250, 0), { ok: true });
    assert.equal(d.queueLength(0), 3);
    assert.deepEqual(d.send(4, 1250, 0), { ok: false, reason: 'queue-full' });
    assert.equal(d.counters.drops, 1);
    // Once the first has left, there is room for one more.
    assert.equal(d.queueLength(1000), 2);
    assert.deepEqual(d.send(5, 1250, 1000), { ok: true });
    assert.deepEqual(
      drain(d).map((g) => g.item),
      [0, 1, 2, 3, 5],
    );
    assert.equal(d.counters.delivered, 5);
    assert.equal(d.counters.maxQueuePackets, 3);
  });

  test('a byte limit refuses a packet that does not fit, and takes a smaller one that does', () => {
    const d = link({ queuePackets: 0, queueBytes: 3000 });
    assert.ok(d.send(0, 1500, 0).ok, 'on the wire at once');
    assert.ok(d.send(1, 1500, 0).ok);
    assert.ok(d.send(2, 1000, 0).ok);
    assert.equal(d.send(3, 1000, 0).ok, false, '2500 + 1000 bytes do not fit in 3000');
    assert.ok(d.send(4, 500, 0).ok, '2500 + 500 do');
    assert.deepEqual(
      drain(d).map((g) => g.item),
      [0, 1, 2, 4],
    );
  });

  test('an idle link sends a packet at once, whatever came before', () => {
    const d = link({ queuePackets: 1, delayMs: 1 });
    assert.ok(d.send(0, 1250, 0).ok);
    assert.ok(d.send(1, 1250, 0).ok);
    drain(d);
    // Long after: the queue is empty, the transmitter free.
    assert.equal(d.queueLength(500_000), 0);
    assert.ok(d.send(2, 1250, 500_000).ok);
    assert.equal(d.nextDeadline(), 500_000 + 1000 + 1000);
  });

  test('the same inputs give the same arrivals, to the microsecond', () => {
    const run = (): string => {
      const d = link({ rateMbps: 7.3, delayMs: 12.345, queuePackets: 20 });
      const out: string[] = [];
      let t = 0;
      for (let i = 0; i < 500; i++) {
        t += (i * 7919) % 1300;
        out.push(d.send(i, 200 + ((i * 31) % 1300), t).ok ? '' : `drop ${i}`);
        for (const item of d.tick(t)) out.push(`${item}@${t}`);
      }
      for (const g of drain(d)) out.push(`${g.item}@${g.at}`);
      return out.join(',');
    };
    assert.equal(run(), run());
  });

  test('nothing arrives when nothing was sent', () => {
    const d = link();
    assert.equal(d.nextDeadline(), undefined);
    assert.deepEqual(d.tick(10_000_000), []);
  });

  test('a link is full duplex: the two directions do not share the rate or the queue', () => {
    const l = new WiredLink<number>({ rateMbps: 10, delayMs: 5, queuePackets: 1, queueBytes: 0 });
    assert.ok(l.up.send(1, 1250, 0).ok);
    assert.ok(l.up.send(2, 1250, 0).ok);
    assert.equal(l.up.send(3, 1250, 0).ok, false);
    assert.ok(l.down.send(9, 1250, 0).ok, 'the other direction is idle');
    assert.equal(l.down.nextDeadline(), 6000);
  });

  test('bad parameters are refused with the field named', () => {
    assert.throws(
      () => link({ rateMbps: 0 }),
      (e: unknown) => e instanceof RangeArgumentError && /rateMbps/.test(e.message),
    );
    assert.throws(
      () => link({ delayMs: -1 }),
      (e: unknown) => e instanceof RangeArgumentError && /delayMs/.test(e.message),
    );
    assert.throws(
      () => link({ queuePackets: 1.5 }),
      (e: unknown) => e instanceof RangeArgumentError && /queuePackets/.test(e.message),
    );
  });
});
