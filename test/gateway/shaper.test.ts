import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClockRegressionError, RangeArgumentError } from '../../src/core/errors.js';
import { ms, seconds, type Micros } from '../../src/core/time.js';
import { RateAdapter } from '../../src/gateway/rate.js';
import { GatewayShaper, type ShaperParams, type SliceLayout } from '../../src/gateway/shaper.js';

/** A packet: its client and its number. */
interface Pkt {
  client: number;
  n: number;
}

interface Departure {
  at: Micros;
  client: number;
  bytes: number;
}

const PKT = 1000;

function shaper(p: Partial<ShaperParams>, layout: SliceLayout, startUs = 0): GatewayShaper<Pkt> {
  return new GatewayShaper<Pkt>({ clients: 2, periodUs: ms(100), queueBytes: 1_000_000, rateMbps: 8, adapt: false, ...p }, layout, startUs);
}

/**
 * Drives a shaper in virtual time from `fromUs` to `untilUs`, at its own
 * deadlines; `backlog` packets of 1000 bytes are kept in each listed
 * client's queue (a saturated source), topped up at every step.
 */
function drive(s: GatewayShaper<Pkt>, fromUs: Micros, untilUs: Micros, saturate: readonly number[], backlog = 20): Departure[] {
  const out: Departure[] = [];
  let now = fromUs;
  let n = 0;
  for (;;) {
    for (const j of saturate) while (s.client(j).queuePackets < backlog) s.enqueue(j, { client: j, n: n++ }, PKT, now);
    s.poll(now, (p, at) => out.push({ at, client: p.client, bytes: PKT }));
    const next = s.nextDeadline();
    if (next === undefined || next > untilUs) return out;
    now = next;
  }
}

const bytesIn = (d: readonly Departure[], client: number, from: Micros, to: Micros): number =>
  d.filter((x) => x.client === client && x.at >= from && x.at < to).reduce((s, x) => s + x.bytes, 0);

describe('GatewayShaper: virtual queues served in time slices', () => {
  test('no packet leaves outside its client’s slices', () => {
    // T = 100 ms: client 0 in [0, 30), client 1 in [30, 80), nobody in [80, 100).
    const s = shaper({}, { sets: [[0], [1]], shares: [0.3, 0.5] });
    assert.deepEqual(s.slicesOf(0), [[0, 30_000]]);
    assert.deepEqual(s.slicesOf(1), [[30_000, 80_000]]);
    const d = drive(s, 0, seconds(2), [0, 1]);
    assert.ok(d.length > 1000);
    for (const x of d) {
      const off = x.at % 100_000;
      if (x.client === 0) assert.ok(off < 30_000, `client 0 left at ${x.at} (offset ${off})`);
      else assert.ok(off >= 30_000 && off < 80_000, `client 1 left at ${x.at} (offset ${off})`);
      assert.ok(s.isOn(x.client, x.at));
    }
    assert.equal(s.client(0).share, 0.3);
    assert.equal(s.client(1).share, 0.5);
  });

  test('within its slices a queue is served at v_j', () => {
    const s = shaper({ rateMbps: 4 }, { sets: [[0], [1]], shares: [0.3, 0.5] });
    const d = drive(s, 0, seconds(2), [0, 1]);
    // 4 Mbps = 500 bytes/ms: 15 000 bytes in client 0's 30 ms, 25 000 in client 1's 50 ms, give or take the bucket (1500 B).
    for (let f = 1; f < 20; f++) {
      const t0 = f * 100_000;
      const a = bytesIn(d, 0, t0, t0 + 30_000);
      const b = bytesIn(d, 1, t0 + 30_000, t0 + 80_000);
      assert.ok(Math.abs(a - 15_000) <= 1_000, `frame ${f}: client 0 sent ${a} bytes in its slice`);
      assert.ok(Math.abs(b - 25_000) <= 1_000, `frame ${f}: client 1 sent ${b} bytes in its slice`);
    }
    // Back to back inside a slice: one packet per 1000 B / 500 B/ms = 2 ms.
    const inSlice = d.filter((x) => x.client === 1 && x.at >= 1_040_000 && x.at < 1_070_000).map((x) => x.at);
    for (let i = 1; i < inSlice.length; i++) assert.equal(inSlice[i]! - inSlice[i - 1]!, 2_000);
  });

  test('throughput is C·T_on/T', () => {
    for (const ton of [0.1, 0.25, 0.5, 0.75, 1]) {
      const s = shaper({ clients: 1, rateMbps: 10 }, { sets: [[0]], shares: [ton] });
      const d = drive(s, 0, seconds(10), [0]);
      const mbps = (bytesIn(d, 0, 0, seconds(10)) * 8) / 10 / 1e6;
      assert.ok(Math.abs(mbps - 10 * ton) / (10 * ton) < 0.01, `T_on/T ${ton}: ${mbps} Mbps, expected ${10 * ton}`);
    }
  });

  test('line rate (rateMbps 0): the queue leaves at once when its slice starts', () => {
    const s = shaper({ rateMbps: 0 }, { sets: [[0], [1]], shares: [0.5, 0.5] });
    for (let i = 0; i < 5; i++) assert.ok(s.enqueue(1, { client: 1, n: i }, PKT, 10_000));
    assert.equal(s.nextDeadline(), 50_000);
    const out: Micros[] = [];
    s.poll(50_000, (_p, at) => out.push(at));
    assert.deepEqual(out, [50_000, 50_000, 50_000, 50_000, 50_000]);
    assert.equal(s.nextDeadline(), undefined);
  });

  test('drop-tail at the byte limit, counted per client', () => {
    const s = shaper({ queueBytes: 2_500 }, { sets: [[0]], shares: [0.5] });
    assert.equal(s.enqueue(1, { client: 1, n: 0 }, PKT, 0), true);
    assert.equal(s.enqueue(1, { client: 1, n: 1 }, PKT, 0), true);
    assert.equal(s.enqueue(1, { client: 1, n: 2 }, PKT, 0), false);
    assert.equal(s.enqueue(1, { client: 1, n: 3 }, 500, 0), true);
    const c = s.client(1);
    assert.deepEqual(
      { enqueued: c.enqueued, dropped: c.dropped, droppedBytes: c.droppedBytes, queuePackets: c.queuePackets, queueBytes: c.queueBytes, sent: c.sent },
      { enqueued: 3, dropped: 1, droppedBytes: 1000, queuePackets: 3, queueBytes: 2500, sent: 0 },
    );
    // Client 1 is in no set: its queue never leaves.
    assert.equal(s.nextDeadline(), undefined);
  });

  test('new slices take effect at once and the frame keeps its phase', () => {
    const s = shaper({ rateMbps: 0 }, { sets: [[0]], shares: [0.5] });
    s.enqueue(1, { client: 1, n: 0 }, PKT, 120_000);
    assert.equal(s.nextDeadline(), undefined);
    s.setLayout({ sets: [[0], [1]], shares: [0.5, 0.5] }, 130_000);
    assert.equal(s.nextDeadline(), 150_000);
    assert.equal(s.client(1).share, 0.5);
  });

  test('bad parameters, layouts and times are refused', () => {
    assert.throws(() => shaper({ periodUs: 0 }, { sets: [], shares: [] }), RangeArgumentError);
    assert.throws(() => shaper({ adapt: true, rateMbps: 0 }, { sets: [], shares: [] }), RangeArgumentError);
    assert.throws(() => shaper({}, { sets: [[0], [1]], shares: [0.6, 0.6] }), /summing to at most 1/);
    assert.throws(() => shaper({}, { sets: [[2]], shares: [0.5] }), /sets\[0\]\[0\]/);
    const s = shaper({}, { sets: [[0]], shares: [1] });
    s.poll(10, () => undefined);
    assert.throws(() => s.enqueue(0, { client: 0, n: 0 }, PKT, 5), ClockRegressionError);
  });
});

describe('GatewayShaper: rate adaptation (Algorithm 2) on the queue after service', () => {
  test('increase, hold and decrease, as a RateAdapter given the same queue lengths decides', () => {
    // Always on, v_0 = 0.1 Mbps (12.5 B/ms): 100 KB queued at 0 are far from served by 3 s.
    const s = new GatewayShaper<Pkt>(
      { clients: 1, periodUs: ms(100), queueBytes: 200_000, rateMbps: 0.1, adapt: true, adaptParams: { intervalUs: seconds(3) } },
      { sets: [[0]], shares: [1] },
      0,
    );
    for (let i = 0; i < 100; i++) s.enqueue(0, { client: 0, n: i }, PKT, 0);
    const ref = new RateAdapter(0, { intervalUs: seconds(3), initialRateMbps: 0.1 });
    const decisions = [];
    let t = 0;
    for (const k of [1, 2, 3]) {
      const end = seconds(3 * k);
      const d = drive(s, t, end - 1, []);
      // The queue just before the run is the length after the last service before it.
      ref.observe(end - 1, s.client(0).queueBytes);
      const [expected] = ref.advance(end);
      s.poll(end, (p, at) => d.push({ at, client: p.client, bytes: PKT }));
      const got = s.client(0).lastDecision!;
      assert.deepEqual(got, expected);
      assert.equal(s.client(0).rateMbps, expected!.rateMbps);
      decisions.push(got.reason);
      t = end;
      if (k === 1) {
        // Served at 0.1 Mbps until 3 s: 37.5 KB (one bucket ahead), then at the increased rate.
        assert.ok(got.queueBytes >= 61_000 && got.queueBytes <= 63_000, `queue at 3 s: ${got.queueBytes}`);
        assert.ok(Math.abs(got.rateMbps - (0.1 + (0.05 * got.avgQueueBytes) / 1000)) < 1e-9);
        const after = drive(s, end, end + ms(100), []).map((x) => x.at);
        t = after[after.length - 1]!;
        const gap = (PKT * 8) / got.rateMbps;
        for (let i = 2; i < after.length; i++) assert.ok(Math.abs(after[i]! - after[i - 1]! - gap) <= 1, `spacing ${after[i]! - after[i - 1]!} vs ${gap}`);
      }
    }
    assert.deepEqual(decisions, ['increase', 'hold', 'decrease']);
  });

  test('a client never served keeps the length after its last service (none: 0), so its rate only decreases', () => {
    const s = new GatewayShaper<Pkt>(
      { clients: 2, periodUs: ms(100), queueBytes: 200_000, rateMbps: 5, adapt: true, adaptParams: { intervalUs: seconds(1) } },
      { sets: [[0]], shares: [1] },
      0,
    );
    for (let i = 0; i < 20; i++) s.enqueue(1, { client: 1, n: i }, PKT, 0);
    drive(s, 0, seconds(3), []);
    // No service: the queue after service is the start's 0, so q̄ = 0 < q_lb: three decreases.
    assert.equal(s.client(1).lastDecision!.reason, 'decrease');
    assert.ok(Math.abs(s.client(1).rateMbps - 5 * 0.9 ** 3) < 1e-9);
    assert.equal(s.client(1).sent, 0);
  });
});
