import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Micros } from '../../src/core/time.js';
import { congestionControl, type CongestionControl, type SendView } from '../../src/tcp/cc/index.js';
import type { TcpConfig } from '../../src/tcp/connection.js';
import { Scoreboard } from '../../src/tcp/scoreboard.js';
import { TCP_SYN, type TcpSegment } from '../../src/wire/tcp.js';
import { DirectPair, TcpPair, bulk, pattern, segmentOffsets, type LinkFate, type LinkParams } from '../support/tcp-net.js';

const MS = 1_000;
const DELAY = 20 * MS;
const MSS_TS = 1448;
const MSS = 1460;

interface Sample {
  at: Micros;
  cwnd: number;
  ssthresh: number;
  una: number;
  max: number;
  inRecovery: boolean;
  timeouts: number;
  spurious: number;
  undos: number;
}

/**
 * What a mesh channel switch does to a flow: every data segment A sends
 * from `fromUs` for `forUs` waits, in order, until the end of that time
 * (nothing is lost). With `drop` they are lost instead.
 */
function hold(fromUs: Micros, forUs: Micros, drop = false): { link: LinkParams; bind: (p: TcpPair) => void } {
  let pair: TcpPair | undefined;
  const link: LinkParams = {
    delayUs: DELAY,
    rateBps: 0,
    queuePackets: 0,
    fate: (seg, dir) => {
      const now = pair!.now;
      if (dir !== 'ab' || seg.payload.length === 0 || now < fromUs || now >= fromUs + forUs) return undefined;
      return drop ? { drop: true } : { drop: false, delayUs: fromUs + forUs - now };
    },
  };
  return { link, bind: (p) => (pair = p) };
}

/**
 * A 10 Mb/s link on which the first transmission of A's data segments
 * number `ks` (full segments of `mss`) meets `fate`: a loss, or a delay
 * that lets later segments overtake it.
 */
function firstOf(ks: number[], mss: number, fate: LinkFate): LinkParams {
  let isn: number | undefined;
  const pending = new Set(segmentOffsets(ks, mss));
  return {
    delayUs: DELAY,
    rateBps: 10e6,
    queuePackets: 0,
    fate: (seg, dir) => {
      if (dir === 'ab' && seg.flags & TCP_SYN) isn = seg.seq;
      if (dir !== 'ab' || isn === undefined || seg.payload.length === 0) return undefined;
      return pending.delete((seg.seq - isn) >>> 0) ? fate : undefined;
    },
  };
}

/** A bulk transfer A to B over `link`, the sender's state after every segment it takes in. */
function run(linkOf: { link: LinkParams; bind?: (p: TcpPair) => void }, cfgA: Partial<TcpConfig>, cfgB: Partial<TcpConfig> = {}, bytes = 3_000_000) {
  // Each test turns on what it is about: the stack's defaults (F-RTO, D-SACK, RACK-TLP) start off here.
  const none: Partial<TcpConfig> = { timeWaitMs: 100, frto: false, eifel: false, dsack: false, rack: false };
  const pair = new TcpPair(linkOf.link, 1, { ...none, ...cfgA }, { ...none, ...cfgB });
  linkOf.bind?.(pair);
  const r = bulk(pair, { ab: bytes, cfgA, cfgB });
  const samples: Sample[] = [];
  pair.onInput = (side, now) => {
    const c = r.client;
    if (side !== 'a' || !c) return;
    samples.push({
      at: now,
      cwnd: c.cwnd,
      ssthresh: c.ssthresh,
      una: c.seq.una,
      max: c.seq.max,
      inRecovery: c.inRecovery,
      timeouts: c.stats.timeouts,
      spurious: c.stats.spuriousTimeouts + c.stats.spuriousFastRetransmits,
      undos: c.stats.undos,
    });
  };
  pair.run(60_000_000);
  assert.equal(r.ab.got, bytes, 'every byte delivered');
  assert.equal(r.ab.bad, 0);
  return { pair, r, c: r.client!, samples };
}

/** Data segments A sent (offsets from its ISN) with their send times; `again` marks a sequence sent before. */
function dataLog(pair: TcpPair): Array<{ at: Micros; seq: number; again: boolean }> {
  const seen = new Set<number>();
  return pair.data('ab').map((d) => {
    const again = seen.has(d.seq);
    seen.add(d.seq);
    return { at: d.at, seq: d.seq, again };
  });
}

/** The checks every detected spurious timeout shares: one retransmission, then new data; cwnd and ssthresh as RFC 4015 3.2 sets them. */
function assertSpuriousTimeout(res: ReturnType<typeof run>, mss: number): void {
  const { pair, c, samples } = res;
  assert.equal(c.stats.timeouts, 1, 'one timeout');
  assert.equal(c.stats.spuriousTimeouts, 1, 'found spurious');
  assert.equal(c.stats.undos, 1);
  assert.equal(c.stats.retransmittedSegments, 1, 'only the timeout retransmission: no go-back-N');
  const before = samples.filter((s) => s.timeouts === 0).at(-1)!;
  const at = samples.findIndex((s) => s.spurious === 1);
  const after = samples[at]!;
  // pipe_prev = max(FlightSize, ssthresh) before the timeout.
  assert.equal(after.ssthresh, Math.max(before.max - before.una, before.ssthresh), 'ssthresh = pipe_prev');
  const flight = after.max - after.una;
  assert.ok(after.cwnd >= flight && after.cwnd <= flight + 3 * mss, `cwnd = FlightSize + min(acked, IW): ${after.cwnd} for ${flight}`);
  assert.equal(after.inRecovery, false);
  // After the one retransmission, only new data goes out.
  const log = dataLog(pair);
  const rtx = log.findIndex((d) => d.again);
  assert.ok(
    log.slice(rtx + 1).every((d) => !d.again && d.seq >= before.max),
    'new data after the retransmission, never older',
  );
}

describe('spurious timeouts: F-RTO (RFC 5682) and Eifel (RFC 3522) with the Eifel response (RFC 4015)', () => {
  // A 600 ms hold from 400 ms, past the 200 ms RTO.
  const spurious = () => hold(400 * MS, 600 * MS);
  const lossy = () => hold(400 * MS, 60 * MS, true);

  test('without a detection, the held segments cost a timeout and a go-back-N of the whole window', () => {
    const res = run(spurious(), { congestion: 'newreno', sack: false, timestamps: false });
    assert.equal(res.c.stats.timeouts, 1);
    assert.equal(res.c.stats.spuriousTimeouts, 0);
    assert.ok(res.c.stats.retransmittedSegments > 20, `go-back-N resent ${res.c.stats.retransmittedSegments} segments`);
  });

  test('F-RTO without SACK (section 2): two new segments, their ACK advances SND.UNA: spurious', () => {
    const res = run(spurious(), { congestion: 'newreno', sack: false, timestamps: false, frto: true });
    assertSpuriousTimeout(res, MSS);
    assert.equal(res.c.negotiated.sack, false);
    // Step 2b: the first two segments after the retransmission are new, sent together on the first ACK.
    const log = dataLog(res.pair);
    const rtx = log.findIndex((d) => d.again);
    assert.equal(log[rtx + 1]!.at, log[rtx + 2]!.at, 'two new segments on one ACK');
  });

  test('F-RTO with SACK (section 3)', () => {
    const res = run(spurious(), { congestion: 'sack', timestamps: false, frto: true });
    assert.equal(res.c.negotiated.sack, true);
    assertSpuriousTimeout(res, MSS);
  });

  test('Eifel: the ACK echoes the original timestamp: spurious on the first ACK', () => {
    const res = run(spurious(), { congestion: 'newreno', sack: false, eifel: true });
    assert.equal(res.c.negotiated.timestamps, true);
    assertSpuriousTimeout(res, MSS_TS);
    // The timer adapted on the first sample: the delay that fooled it counts.
    assert.ok(res.c.rtt.maxSampleUs > 600 * MS);
  });

  test('F-RTO: the timer adapts on the round trip of the held original (RFC 4015 3.2), which Karn would discard after go-back-N', () => {
    const frto = run(spurious(), { congestion: 'newreno', sack: false, timestamps: false, frto: true });
    assertSpuriousTimeout(frto, MSS);
    // The held segments waited from the timeout (640 ms) to the end of the hold (1 s) at least.
    assert.ok(frto.c.rtt.maxSampleUs >= 350 * MS, `the hold counts: largest sample ${frto.c.rtt.maxSampleUs} us`);
    const plain = run(spurious(), { congestion: 'newreno', sack: false, timestamps: false });
    assert.ok(plain.c.rtt.maxSampleUs < 200 * MS, `without F-RTO no held segment is timed: largest sample ${plain.c.rtt.maxSampleUs} us`);
  });

  for (const [name, cfg] of [
    ['without SACK', { congestion: 'newreno', sack: false, timestamps: false, frto: true }],
    ['with SACK', { congestion: 'sack', timestamps: false, frto: true }],
  ] as Array<[string, Partial<TcpConfig>]>) {
    test(`F-RTO ${name}: a timeout that recurs before any ACK (a 1.2 s hold) is still found spurious, with no go-back-N`, () => {
      const res = run(hold(400 * MS, 1200 * MS), cfg);
      assert.equal(res.c.stats.timeouts, 2, 'the timeout and its backed-off repeat');
      assert.equal(res.c.stats.spuriousTimeouts, 1, 'one episode, found spurious');
      assert.equal(res.c.stats.undos, 1);
      assert.equal(res.c.stats.retransmittedSegments, 2, 'the first segment twice, nothing else');
      // From the first timeout (640 ms) to the end of the hold (1.6 s) at least.
      assert.ok(res.c.rtt.maxSampleUs >= 950 * MS, `the timer adapts on the hold: largest sample ${res.c.rtt.maxSampleUs} us`);
    });
  }

  test('Eifel is off for a connection without timestamps', () => {
    const res = run(spurious(), { congestion: 'newreno', sack: false, eifel: true }, { timestamps: false });
    assert.equal(res.c.negotiated.timestamps, false);
    assert.equal(res.c.stats.spuriousTimeouts, 0);
    assert.ok(res.c.stats.retransmittedSegments > 20);
  });

  for (const [name, cfg] of [
    ['F-RTO without SACK', { congestion: 'newreno', sack: false, timestamps: false, frto: true }],
    ['F-RTO with SACK', { congestion: 'sack', timestamps: false, frto: true }],
    ['Eifel', { congestion: 'newreno', eifel: true }],
  ] as Array<[string, Partial<TcpConfig>]>) {
    test(`${name}: a genuine timeout (the segments were lost) is not spurious; recovery as without it`, () => {
      const res = run(lossy(), cfg);
      assert.ok(res.c.stats.timeouts >= 1);
      assert.equal(res.c.stats.spuriousTimeouts, 0, 'not spurious');
      assert.equal(res.c.stats.undos, 0);
      const plain = run(lossy(), { ...cfg, frto: false, eifel: false });
      assert.ok(res.c.ssthresh <= plain.c.ssthresh * 2, 'the window reduction stands');
    });
  }

  test('Eifel finds a fast retransmit caused by reordering spurious and restores cwnd and ssthresh', () => {
    // Data segment 40 arrives 30 ms late: dozens overtake it.
    const go = (eifel: boolean) =>
      run({ link: firstOf([40], MSS_TS, { drop: false, delayUs: 30 * MS }) }, { congestion: 'reno', sack: false, eifel }, {}, 400_000);
    const res = go(true);
    assert.equal(res.c.stats.fastRetransmits, 1);
    assert.equal(res.c.stats.spuriousFastRetransmits, 1);
    assert.equal(res.c.stats.undos, 1);
    const entry = res.samples.findIndex((s) => s.inRecovery);
    const before = res.samples[entry - 1]!;
    const undone = res.samples.find((s) => s.undos === 1)!;
    assert.equal(undone.ssthresh, before.ssthresh, 'ssthresh restored');
    assert.ok(undone.cwnd >= before.cwnd, 'cwnd restored');
    const plain = go(false);
    assert.equal(plain.c.stats.undos, 0);
    assert.ok(plain.c.ssthresh < res.c.ssthresh, 'without Eifel the window stays halved');
  });
});

/** Absolute offsets of B's SACK blocks in its ACKs to A (relative to A's ISN). */
function sackOffsets(seg: TcpSegment, isnA: number): Array<[number, number]> {
  return (seg.options.sack ?? []).map((b) => [(b.left - isnA) >>> 0, (b.right - isnA) >>> 0]);
}

describe('D-SACK (RFC 2883) at the receiver', () => {
  const cfg: Partial<TcpConfig> = { dsack: true, initialWindowSegments: 10, delayedAckMs: 0, timestamps: false };
  const seg = (k: number): [number, number] => [1 + k * MSS, 1 + (k + 1) * MSS];

  /** A sends six full segments; the test delivers what it chooses and reads B's last ACK. */
  function setup(bCfg: Partial<TcpConfig> = cfg) {
    const p = new DirectPair(cfg, bCfg);
    p.open();
    p.a.write(pattern(0, 6 * MSS), p.now);
    const segs = p.take('a');
    assert.equal(segs.length, 6);
    const isnA = p.a.iss;
    const give = (...ks: number[]): Array<[number, number]> => {
      for (const k of ks) p.input('b', segs[k]!);
      const acks = p.take('b');
      return sackOffsets(acks.at(-1)!, isnA);
    };
    const ackOf = (): number => (p.b.seq.rcvNxt as number) - 0;
    return { p, segs, give, ackOf };
  }

  test('4.1.1: a duplicate below the cumulative ACK (its ACK was lost) is reported alone, in the first block', () => {
    const { give } = setup();
    give(0, 1);
    assert.deepEqual(give(0), [seg(0)]);
  });

  test('4.1.2 and 4.1.3: a duplicate of out-of-order data: the D-SACK block, then the block holding it, then the others', () => {
    const { give } = setup();
    // 0 is late; 1 and 3 arrive: blocks [3] (newest) and [1].
    assert.deepEqual(give(1, 3), [seg(3), seg(1)]);
    // 1 arrives again.
    assert.deepEqual(give(1), [seg(1), seg(1), seg(3)]);
    // 4 extends the block of 3; then 4 again: D-SACK 4, its block 3-4, then 1.
    give(4);
    assert.deepEqual(give(4), [seg(4), [seg(3)[0], seg(4)[1]], seg(1)]);
  });

  test('each duplicate is reported once; a later ACK has no D-SACK', () => {
    const { give } = setup();
    give(1);
    assert.deepEqual(give(1)[0], seg(1));
    assert.deepEqual(give(2), [[seg(1)[0], seg(2)[1]]], 'no D-SACK any more');
  });

  test('4.1.1 after the hole fills: the late original is a duplicate below the ACK', () => {
    const { give } = setup();
    give(1, 2);
    // The retransmission of 0 fills the hole; the ACK covers 0-2 with no SACK.
    assert.deepEqual(give(0), []);
    assert.deepEqual(give(0), [seg(0)]);
  });

  test('a partly duplicate segment: only the duplicated part is reported', () => {
    const { p, segs, give } = setup();
    give(0);
    // Segments 0 and 1 as one (a repacketised retransmission): its first half is old.
    const both: TcpSegment = { ...segs[0]!, payload: pattern(0, 2 * MSS) };
    p.input('b', both);
    const ack = p.take('b').at(-1)!;
    assert.deepEqual(sackOffsets(ack, p.a.iss), [seg(0)]);
  });

  test('without dsack the receiver reports no duplicate', () => {
    const { give } = setup({ ...cfg, dsack: false });
    give(0, 1);
    assert.deepEqual(give(0), []);
  });
});

describe('D-SACK at the sender (RFC 3708): undoing a spurious fast retransmit', () => {
  /** Data segment 40 is 30 ms late: a fast retransmit that was not needed. */
  const reorder = () => ({ link: firstOf([40], MSS, { drop: false, delayUs: 30 * MS }) });

  test('the retransmission comes back D-SACKed: cwnd and ssthresh as before the recovery', () => {
    const cfg: Partial<TcpConfig> = { congestion: 'sack', dsack: true, timestamps: false };
    const res = run(reorder(), cfg, { dsack: true }, 400_000);
    const c = res.c;
    assert.equal(c.stats.fastRetransmits, 1);
    assert.equal(c.stats.retransmittedSegments, 1);
    assert.equal(c.stats.dsackBlocksReceived, 1);
    assert.equal(res.r.server!.stats.dsackBlocksSent, 1);
    assert.equal(c.stats.dsackedRetransmits, 1);
    assert.equal(c.stats.undos, 1);
    const entry = res.samples.findIndex((s) => s.inRecovery);
    const before = res.samples[entry - 1]!;
    const undone = res.samples.find((s) => s.undos === 1)!;
    assert.ok(undone.ssthresh >= before.ssthresh, 'ssthresh back');
    assert.ok(undone.cwnd >= before.cwnd, 'cwnd back');
    const plain = run(reorder(), { ...cfg, dsack: false }, { dsack: false }, 400_000);
    assert.equal(plain.c.stats.undos, 0);
    assert.ok(plain.c.ssthresh < c.ssthresh);
  });

  test('a genuine loss is not undone: the retransmission is not D-SACKed', () => {
    const link = firstOf([40], MSS, { drop: true });
    const res = run({ link }, { congestion: 'sack', dsack: true, timestamps: false }, { dsack: true }, 400_000);
    assert.equal(res.c.stats.fastRetransmits, 1);
    assert.equal(res.c.stats.undos, 0);
    assert.equal(res.c.stats.dsackedRetransmits, 0);
  });
});

describe('RACK-TLP (RFC 8985)', () => {
  const cfg: Partial<TcpConfig> = { congestion: 'sack', timestamps: false, rack: true };
  const dropAt = (ks: number[]): LinkParams => firstOf(ks, MSS, { drop: true });
  const bytes = 60 * MSS;

  test('a loss with only two segments after it: RACK marks it lost by time, no timeout (DupThresh never reached)', () => {
    const res = run({ link: dropAt([57]) }, cfg, {}, bytes);
    assert.equal(res.c.stats.timeouts, 0, 'no timeout');
    assert.ok(res.c.stats.rackLosses >= 1, 'RACK marked it');
    assert.equal(res.c.stats.retransmittedSegments, 1);
    const plain = run({ link: dropAt([57]) }, { ...cfg, rack: false }, {}, bytes);
    assert.equal(plain.c.stats.timeouts, 1, 'without RACK it takes the RTO');
    assert.ok(res.r.ab.eofAt! < plain.r.ab.eofAt!);
  });

  test('the last segment lost: the tail loss probe resends it before the RTO', () => {
    const res = run({ link: dropAt([59]) }, cfg, {}, bytes);
    assert.equal(res.c.stats.timeouts, 0);
    assert.equal(res.c.stats.tailLossProbes, 1);
    const plain = run({ link: dropAt([59]) }, { ...cfg, rack: false }, {}, bytes);
    assert.equal(plain.c.stats.timeouts, 1);
    assert.ok(res.r.ab.eofAt! < plain.r.ab.eofAt!);
  });

  test('the last two lost: the probe is SACKed, RACK finds the other lost, fast recovery repairs it; no RTO', () => {
    const res = run({ link: dropAt([58, 59]) }, cfg, {}, bytes);
    assert.equal(res.c.stats.timeouts, 0);
    assert.equal(res.c.stats.tailLossProbes, 1);
    assert.equal(res.c.stats.fastRetransmits, 1);
    assert.ok(res.c.stats.rackLosses >= 1);
  });

  test('no loss: no probe fires while ACKs keep coming, and nothing is marked lost', () => {
    const res = run({ link: { delayUs: DELAY, rateBps: 10e6, queuePackets: 0 } }, cfg, {}, bytes);
    assert.equal(res.c.stats.retransmittedSegments, 0);
    assert.equal(res.c.stats.rackLosses, 0);
    assert.equal(res.c.stats.timeouts, 0);
  });
});

describe('undo in the congestion controls (RFC 4015 3.2, RFC 3708 5)', () => {
  const MSS = 1000;
  const p = { mss: MSS, initialWindow: 10 * MSS, dupThresh: 3, vegas: { alpha: 1, beta: 3, gamma: 1 }, hystart: false };
  const view = (una: number, max: number): SendView => ({
    mss: MSS,
    una,
    nxt: max,
    max,
    end: 1e12,
    wndEnd: 1e12,
    maxWnd: 1e9,
    scoreboard: new Scoreboard(3),
    sackOn: false,
  });
  const dupAcks = (cc: CongestionControl, una: number, max: number): void => {
    for (let i = 0; i < 3; i++) cc.onAck({ now: 0, ack: una, acked: 0, dup: true, flightBefore: max - una }, view(una, max));
  };

  for (const name of ['reno', 'newreno', 'cubic'] as const) {
    test(`${name}: an undone fast retransmit leaves recovery with the prior window, and a later loss starts a new recovery at once`, () => {
      const cc = congestionControl(name, p);
      dupAcks(cc, 1, 1 + 20 * MSS);
      assert.equal(cc.inRecovery, true);
      const reduced = cc.ssthresh;
      cc.undo({ cwnd: 20 * MSS, ssthresh: 40 * MSS }, view(1, 1 + 20 * MSS), 0);
      assert.equal(cc.inRecovery, false);
      assert.equal(cc.cwnd, 20 * MSS);
      assert.equal(cc.ssthresh, 40 * MSS);
      assert.ok(reduced < 20 * MSS, 'the fast retransmit had cut ssthresh');
      // The guard against a second response in the same window is gone: three duplicates below the old recovery point start one.
      dupAcks(cc, 1 + 5 * MSS, 1 + 20 * MSS);
      assert.equal(cc.inRecovery, true);
    });
  }
});

describe("a loss repaired by a tail loss probe (RFC 8985 7.4.2): the control's own cut", () => {
  const MSS = 1000;
  const p = { mss: MSS, initialWindow: 20 * MSS, dupThresh: 3, vegas: { alpha: 1, beta: 3, gamma: 1 }, hystart: false };
  const v: SendView = { mss: MSS, una: 1, nxt: 1, max: 1, end: 1e12, wndEnd: 1e12, maxWnd: 1e9, scoreboard: new Scoreboard(3), sackOn: false };
  for (const [name, sack, cut] of [
    ['reno', false, 10],
    ['newreno', false, 10],
    ['cubic', false, 14],
    ['cubic', true, 14],
  ] as const) {
    test(`${name}${sack ? ' over SACK' : ''}: ssthresh and cwnd to ${cut} of 20 segments, out of any recovery`, () => {
      const cc = congestionControl(name, { ...p, sack });
      cc.congestionEvent(cc.cwnd, v, 0);
      assert.equal(cc.ssthresh, cut * MSS);
      assert.equal(cc.cwnd, cut * MSS);
      assert.equal(cc.inRecovery, false);
    });
  }
});
