import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Scoreboard } from '../../src/tcp/scoreboard.js';
import type { TcpSegment } from '../../src/wire/tcp.js';
import { DirectPair } from '../support/tcp-net.js';

const MSS = 100;

function board(...blocks: Array<[number, number]>): Scoreboard {
  const sb = new Scoreboard(3);
  sb.update(
    blocks.map(([start, end]) => ({ start, end })),
    0,
    10_000,
  );
  return sb;
}
const ranges = (sb: Scoreboard) => sb.blocks.map((b) => [b.start, b.end]);

describe('SACK scoreboard (RFC 6675)', () => {
  test('update keeps sorted disjoint ranges: merges overlapping and adjacent blocks, clips to [una, max)', () => {
    const sb = new Scoreboard(3);
    assert.equal(sb.update([{ start: 500, end: 600 }], 100, 1000), true);
    assert.equal(sb.update([{ start: 200, end: 300 }], 100, 1000), true);
    assert.deepEqual(ranges(sb), [
      [200, 300],
      [500, 600],
    ]);
    assert.equal(sb.update([{ start: 300, end: 350 }], 100, 1000), true, 'adjacent');
    assert.deepEqual(ranges(sb), [
      [200, 350],
      [500, 600],
    ]);
    assert.equal(sb.update([{ start: 340, end: 520 }], 100, 1000), true, 'bridging');
    assert.deepEqual(ranges(sb), [[200, 600]]);
    assert.equal(sb.update([{ start: 250, end: 400 }], 100, 1000), false, 'nothing new');
    assert.equal(
      sb.update(
        [
          { start: 900, end: 1500 },
          { start: 0, end: 150 },
        ],
        100,
        1000,
      ),
      true,
    );
    assert.deepEqual(
      ranges(sb),
      [
        [100, 150],
        [200, 600],
        [900, 1000],
      ],
      'clipped to una and max',
    );
    assert.equal(sb.sackedBytes, 50 + 400 + 100);
    assert.equal(sb.highSacked, 1000);
    assert.equal(sb.update([{ start: 2000, end: 3000 }], 100, 1000), false, 'beyond what was sent: ignored');
  });

  test('the cumulative ACK advances it: ranges below are dropped or cut', () => {
    const sb = board([200, 300], [500, 600]);
    sb.update([], 250, 10_000);
    assert.deepEqual(ranges(sb), [
      [250, 300],
      [500, 600],
    ]);
    sb.update([], 600, 10_000);
    assert.deepEqual(ranges(sb), []);
    assert.equal(sb.highSacked, undefined);
    const c = board([1, 2]);
    c.clear();
    assert.equal(c.sackedBytes, 0);
  });

  test('isLost by bytes: more than (DupThresh - 1) * SMSS bytes SACKed above', () => {
    assert.equal(board([500, 700]).isLost(400, MSS), false, 'exactly 2 SMSS above is not enough');
    assert.equal(board([500, 701]).isLost(400, MSS), true, '2 SMSS + 1 is');
    assert.equal(board([500, 701]).isLost(499, MSS), true);
    assert.equal(board([500, 701]).isLost(550, MSS), false, 'SACKed bytes are never lost');
    assert.equal(board([500, 701]).isLost(800, MSS), false, 'nothing above');
    // Bytes of several blocks add up.
    assert.equal(board([300, 400], [500, 601]).isLost(250, MSS), true);
    assert.equal(board([300, 400], [500, 601]).isLost(450, MSS), false, 'only 101 bytes above');
    assert.equal(board([300, 400], [500, 600]).isLost(250, MSS), false, '200 bytes, 2 blocks');
    assert.equal(board([500, 800]).lostBelow(MSS), 600);
  });

  test('isLost by blocks: DupThresh discontiguous SACKed ranges above', () => {
    const sb = board([500, 510], [600, 610], [700, 710]);
    assert.equal(sb.isLost(400, MSS), true, '3 blocks of 10 bytes above');
    assert.equal(sb.isLost(499, MSS), true);
    assert.equal(sb.isLost(550, MSS), false, 'only 2 blocks above');
    assert.equal(sb.isLost(650, MSS), false);
    assert.equal(sb.lostBelow(MSS), 500);
    assert.equal(board([500, 510], [600, 610]).lostBelow(MSS), 0, 'nothing lost');
  });

  test('pipe: unSACKed bytes not lost, plus those retransmitted', () => {
    // una 0, max 1000; SACKed 300-400, 500-600, 700-800: [0, 300) is lost (3 blocks above it).
    const sb = board([300, 400], [500, 600], [700, 800]);
    assert.equal(sb.pipe(0, 1000, 0, MSS), 400, '400-500, 600-700, 800-1000 in flight');
    assert.equal(sb.pipe(0, 1000, 100, MSS), 500, 'plus the 100 bytes retransmitted');
    assert.equal(sb.pipe(0, 1000, 350, MSS), 400 + 300, 'retransmitted up to HighRxt, SACKed bytes not counted');
    assert.equal(new Scoreboard(3).pipe(0, 1000, 0, MSS), 1000, 'no SACK: everything outstanding');
    assert.equal(sb.unsackedIn(0, 1000), 700);
  });

  test('firstHole: the lowest unSACKed run at or above a point, cut at the next block and at maxLen', () => {
    const sb = board([300, 400], [500, 600]);
    assert.deepEqual(sb.firstHole(0, 1000, MSS), { start: 0, end: 100 });
    assert.deepEqual(sb.firstHole(250, 1000, MSS), { start: 250, end: 300 }, 'cut at the next SACKed block');
    assert.deepEqual(sb.firstHole(300, 1000, MSS), { start: 400, end: 500 }, 'skips a SACKed block');
    assert.deepEqual(sb.firstHole(420, 1000, 30), { start: 420, end: 450 }, 'cut at maxLen');
    assert.deepEqual(sb.firstHole(550, 1000, MSS), { start: 600, end: 700 });
    assert.equal(sb.firstHole(300, 400, MSS), undefined, 'nothing below `to`');
    assert.equal(sb.firstHole(500, 600, MSS), undefined);
    assert.deepEqual(sb.firstHole(600, 650, MSS), { start: 600, end: 650 }, 'cut at `to`');
  });
});

describe('receiver SACK blocks (RFC 2018 4)', () => {
  /** A sends ten 100-byte segments; the test delivers them to B in its own order. */
  function setup(timestamps: boolean) {
    const cfg = { noDelay: true, timestamps, mss: 200, initialWindowSegments: 20 };
    const d = new DirectPair(cfg, cfg);
    d.open();
    for (let k = 0; k < 10; k++) d.a.write(new Uint8Array(100).fill(k), d.now);
    const segs = d.take('a');
    assert.equal(segs.length, 10, 'ten segments');
    const blocksAfter = (seg: TcpSegment) => {
      d.input('b', seg);
      const acks = d.take('b');
      assert.equal(acks.length, 1, 'each out-of-order segment is ACKed at once');
      // In A's sequence space: segment k holds offsets 1 + 100k to 100(k + 1).
      return (acks[0]!.options.sack ?? []).map((b) => [b.left, b.right].map((w) => (((w - d.a.iss) >>> 0) - 1) / 100));
    };
    return { d, segs, blocksAfter };
  }
  /** The blocks as [first segment, past last segment] numbers. */
  const seg = (k: number): [number, number] => [k, k + 1];

  test('newest block first, then the others most recent first; at most 3 with timestamps', () => {
    const { segs, blocksAfter } = setup(true);
    assert.deepEqual(blocksAfter(segs[3]!), [seg(3)]);
    assert.deepEqual(blocksAfter(segs[7]!), [seg(7), seg(3)]);
    assert.deepEqual(blocksAfter(segs[1]!), [seg(1), seg(7), seg(3)]);
    assert.deepEqual(blocksAfter(segs[9]!), [seg(9), seg(1), seg(7)], 'the oldest report drops out');
    assert.deepEqual(blocksAfter(segs[5]!), [seg(5), seg(9), seg(1)]);
    // A segment joining two blocks: the merged block comes first.
    assert.deepEqual(blocksAfter(segs[4]!), [[3, 6], seg(9), seg(1)]);
  });

  test('four blocks fit without timestamps', () => {
    const { segs, blocksAfter } = setup(false);
    blocksAfter(segs[3]!);
    blocksAfter(segs[7]!);
    blocksAfter(segs[1]!);
    assert.deepEqual(blocksAfter(segs[9]!), [seg(9), seg(1), seg(7), seg(3)]);
    assert.deepEqual(blocksAfter(segs[5]!), [seg(5), seg(9), seg(1), seg(7)]);
  });

  test('the cumulative ACK swallows blocks: filling the first hole reports what remains above', () => {
    const { segs, blocksAfter, d } = setup(true);
    blocksAfter(segs[1]!);
    blocksAfter(segs[2]!);
    blocksAfter(segs[5]!);
    assert.deepEqual(blocksAfter(segs[0]!), [seg(5)], 'segments 0-2 in order now, 5 still above a hole');
    assert.equal(d.b.seq.rcvNxt, 1 + 300);
    blocksAfter(segs[3]!);
    d.input('b', segs[4]!);
    const [ack] = d.take('b');
    assert.equal(ack!.options.sack, undefined, 'no hole, no SACK option');
    assert.equal(d.b.seq.rcvNxt, 1 + 600);
    assert.equal(d.b.readable, 600);
  });
});
