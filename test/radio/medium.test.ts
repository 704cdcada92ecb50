import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventEngine } from '../../src/core/engine.js';
import { CogmeshError, FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { ism2g4 } from '../../radio/channels.js';
import { EmulatedBand } from '../../radio/sim/band.js';
import {
  AirMedium,
  airtimeUs,
  BROADCAST,
  phy80211b,
  phy80211g,
  type MacFrame,
  type MediumParams,
  type PhyParams,
  type PnSource,
  type SendOutcome,
  type Station,
  type StationSpec,
} from '../../radio/medium/index.js';
import type { DcfStation } from '../../radio/medium/station.js';

const plan = ism2g4(11);
const S = 1_000_000;

interface Rig {
  engine: EventEngine;
  medium: AirMedium;
}

function rig(o: { seed?: number; params?: Partial<MediumParams>; phy?: PhyParams; pn?: PnSource } = {}): Rig {
  const engine = new EventEngine();
  const parts = { scheduler: engine, plan, rng: Rng.fromSeed(o.seed ?? 1), ...(o.pn ? { pn: o.pn } : {}) };
  return { engine, medium: new AirMedium(parts, o.params, o.phy) };
}

/** A station with everything it receives and every outcome recorded, and hooks for traffic. */
interface Probe {
  st: Station;
  node: number;
  rx: Array<{ frame: MacFrame; at: number }>;
  sent: Array<{ frame: MacFrame; outcome: SendOutcome }>;
  onSent?: (frame: MacFrame, outcome: SendOutcome) => void;
  onReceive?: (frame: MacFrame, at: number) => void;
}

function radio(r: Rig, id: string, node: number, xM: number, o: Partial<StationSpec> & { yM?: number } = {}): Probe {
  const { yM, ...spec } = o;
  const p: Probe = { st: undefined as unknown as Station, node, rx: [], sent: [] };
  p.st = r.medium.addStation(
    { id, node, position: { xM, yM: yM ?? 0 }, acceptsUnicast: true, acceptsBroadcast: true, channel: 1, ...spec },
    {
      onReceive: (frame, at) => {
        p.rx.push({ frame, at });
        p.onReceive?.(frame, at);
      },
      onSent: (frame, outcome) => {
        p.sent.push({ frame, outcome });
        p.onSent?.(frame, outcome);
      },
    },
  );
  return p;
}

function pkt(src: number, dst: number, bytes = 1000, tag?: unknown): MacFrame {
  return { src, dst, payload: new Uint8Array(bytes), tag };
}

/** Keeps `p` backlogged with frames to `dst`. */
function saturate(p: Probe, dst: number, bytes = 1000): void {
  p.onSent = () => p.st.send(pkt(p.node, dst, bytes));
  p.st.send(pkt(p.node, dst, bytes));
  p.st.send(pkt(p.node, dst, bytes));
}

const mbps = (p: Probe, seconds: number): number => (p.st.counters.rxBytes * 8) / seconds / 1e6;

/** PN bursts from a fixed list per channel. */
function fixedPn(bursts: Record<number, Array<[number, number]>>): PnSource {
  return {
    pnBusyIntervals(channel, t0, t1) {
      const out: Array<[number, number]> = [];
      for (const [s, e] of bursts[channel] ?? []) if (e > t0 && s < t1) out.push([Math.max(s, t0), Math.min(e, t1)]);
      return out;
    },
  };
}

/** PN bursts [k * period + offset, + on) forever on one channel. */
function periodicPn(channel: number, periodUs: number, onUs: number, offsetUs = 0): PnSource {
  return {
    pnBusyIntervals(ch, t0, t1) {
      const out: Array<[number, number]> = [];
      if (ch !== channel) return out;
      for (let k = Math.max(0, Math.floor((t0 - offsetUs) / periodUs) - 1); k * periodUs + offsetUs < t1; k++) {
        const s = k * periodUs + offsetUs;
        const e = s + onUs;
        if (e > t0) out.push([Math.max(s, t0), Math.min(e, t1)]);
      }
      return out;
    },
  };
}

function expectRange(fn: () => unknown, field: string): void {
  assert.throws(fn, (e: unknown) => e instanceof RangeArgumentError && e.field === field, `expected a RangeArgumentError on ${field}`);
}

// ---- PHY and propagation ---------------------------------------------------------

test('airtime: 802.11b long preamble at every rate, ACK at the basic rate', () => {
  const b = phy80211b();
  assert.equal(airtimeUs(b, 1028, 2e6), 192 + 4112);
  assert.equal(airtimeUs(b, 14, 1e6), 192 + 112);
  assert.equal(airtimeUs(phy80211b(11e6), 1028, 11e6), 192 + Math.ceil(8224 / 11));
  assert.equal(airtimeUs(phy80211b(5.5e6), 1028, 5.5e6), 192 + 1496);
  assert.equal(airtimeUs(phy80211b(5.5e6), 11, 5.5e6), 192 + 16);
  const { medium } = rig();
  assert.equal(medium.frameAirtimeUs(1000), 4304);
  assert.equal(medium.frameAirtimeUs(0), 192 + 112);
  assert.deepEqual(
    [
      b.slotUs,
      b.sifsUs,
      b.difsUs,
      b.cwMin,
      b.cwMax,
      b.plcpUs,
      b.macHeaderBytes,
      b.ackBytes,
      b.rtsBytes,
      b.ctsBytes,
      b.shortRetryLimit,
      b.longRetryLimit,
      b.basicRateBps,
    ],
    [20, 10, 50, 31, 1023, 192, 28, 14, 20, 14, 7, 4, 1e6],
  );
  assert.equal(b.rtsThresholdBytes, Infinity);
  for (const bad of [54e6, 3e6, 0]) expectRange(() => phy80211b(bad), 'dataRateBps');
});

test('airtime: 802.11g ERP-OFDM in whole 4 µs symbols plus the 6 µs signal extension', () => {
  const g = phy80211g();
  assert.deepEqual([g.slotUs, g.sifsUs, g.difsUs, g.cwMin, g.plcpUs, g.basicRateBps], [9, 10, 28, 15, 20, 6e6]);
  for (const mb of [6, 9, 12, 18, 24, 36, 48, 54]) {
    const phy = phy80211g(mb * 1e6);
    const { medium } = rig({ phy });
    for (const payload of [1, 100, 1000, 1472, 2000]) {
      const bytes = payload + 28;
      const expected = 20 + 4 * Math.ceil((16 + 8 * bytes + 6) / (4 * mb)) + 6;
      assert.equal(medium.frameAirtimeUs(payload), expected, `${mb} Mbps, ${payload} B`);
    }
  }
  // A 1500-byte MPDU at 54 Mbps: 56 symbols.
  assert.equal(airtimeUs(g, 1500, 54e6), 20 + 224 + 6);
  // ACK at 6 Mbps: 6 symbols.
  assert.equal(airtimeUs(g, 14, 6e6), 20 + 24 + 6);
  for (const bad of [11e6, 2e6, 100e6]) expectRange(() => phy80211g(bad), 'dataRateBps');
});

test('propagation: TwoRayGround beyond the crossover, Friis below; thresholds are the powers at the ranges', () => {
  const { medium } = rig();
  const at = (d: number, ch = 1): number => medium.receivedPowerW({ xM: 0, yM: 0 }, { xM: d, yM: 0 }, ch);
  // ns-2's well-known thresholds for 250 m and 550 m.
  assert.ok(Math.abs(at(250) / 3.652e-10 - 1) < 1e-3, `${at(250)}`);
  assert.ok(Math.abs(at(550) / 1.559e-11 - 1) < 1e-3, `${at(550)}`);
  const th = medium.thresholdsW(6);
  assert.equal(th.rxW, at(250, 6));
  assert.equal(th.csW, at(550, 6));
  // Friis below the crossover, with the channel's wavelength.
  const lambda = 299_792_458 / plan.get(1).centerHz;
  const friis = (0.28183815 * lambda * lambda) / (16 * Math.PI * Math.PI * 100 * 100);
  assert.ok(Math.abs(at(100) / friis - 1) < 1e-12, 'Math.abs(at(100) / friis - 1) < 1e-12');
  const cross = (4 * Math.PI * 1.5 * 1.5) / lambda;
  assert.ok(Math.abs(at(cross - 1e-6) / at(cross + 1e-6) - 1) < 1e-4, 'continuous at the crossover');
  assert.ok(at(100, 11) < at(100, 1), 'shorter wavelength, less power under Friis');
  assert.equal(at(300, 11), at(300, 1), 'two-ray does not depend on frequency');
  assert.ok(Number.isFinite(at(0)), 'co-located stations get a finite power');
});

test('refuses bad input with errors that name the field', () => {
  const r = rig();
  expectRange(() => rig({ params: { csRangeM: 200 } }), 'csRangeM');
  expectRange(() => rig({ params: { txRangeM: 0 } }), 'txRangeM');
  expectRange(() => rig({ params: { pnLossProbability: 1.5 } }), 'pnLossProbability');
  expectRange(() => rig({ params: { pnLossProbability: -0.1 } }), 'pnLossProbability');
  expectRange(() => rig({ params: { pnLossProbability: Number.NaN } }), 'pnLossProbability');
  expectRange(() => rig({ params: { captureDb: Infinity } }), 'captureDb');
  expectRange(() => rig({ phy: { ...phy80211b(), cwMax: 7 } }), 'phy.cwMax');
  expectRange(() => rig({ phy: { ...phy80211b(), slotUs: 0 } }), 'phy.slotUs');
  expectRange(() => radio(r, 'x', 1, 0, { channel: 14 }), 'channel');
  expectRange(() => radio(r, 'y', 1, Number.NaN), 'position');
  expectRange(() => radio(r, 'z', BROADCAST, 0), 'node');
  expectRange(() => radio(r, 'q', 1, 0, { queueLimit: -1 }), 'queueLimit');
  const a = radio(r, 'a', 1, 0);
  assert.throws(
    () => radio(r, 'a', 2, 10),
    (e: unknown) => e instanceof FrontendError && e.code === 'RADIO_DUPLICATE_ID',
  );
  expectRange(() => a.st.send(pkt(1, 2, 0)), 'frame.payload.length');
  expectRange(() => a.st.send(pkt(1, 70000)), 'frame.dst');
  expectRange(() => a.st.retune(12, 0), 'channel');
  expectRange(() => a.st.retune(2, -1), 'overheadUs');
  expectRange(() => a.st.retune(2, 1.5), 'overheadUs');
  assert.equal(r.medium.counters.frames, 0);
  // A detached station refuses work, and its id is free again.
  a.st.detach();
  assert.throws(
    () => a.st.send(pkt(1, 2)),
    (e: unknown) => e instanceof CogmeshError && e.code === 'RADIO_DETACHED',
  );
  radio(r, 'a', 1, 0);
});

// ---- DCF -------------------------------------------------------------------------

test('nothing is sent when nothing is queued, and nothing is left pending after the last frame', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  r.engine.run(S);
  assert.equal(r.engine.eventsFired, 0);
  assert.equal(r.medium.counters.frames, 0);
  assert.ok(a.st.idle && b.st.idle, 'a.st.idle && b.st.idle');
  a.st.send(pkt(1, 2));
  a.st.send(pkt(1, BROADCAST));
  r.engine.run();
  assert.equal(b.rx.length, 2);
  assert.equal(r.engine.pending, 0, 'post-backoff ends, no timer left running');
  assert.ok(a.st.idle && b.st.idle, 'a.st.idle && b.st.idle');
  const fired = r.engine.eventsFired;
  r.engine.run(10 * S);
  assert.equal(r.engine.eventsFired, fired);
});

test('saturated unicast link: 1000-byte frames at 2 Mbps reach the analytic DCF throughput', () => {
  const seconds = 20;
  const r = rig({ seed: 3 });
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 200);
  saturate(a, 2);
  r.engine.run(seconds * S);
  // One sender: no collisions; a cycle is DIFS + mean backoff (CWmin / 2 slots) + DATA + SIFS + ACK.
  const phy = phy80211b();
  const cycleUs = phy.difsUs + (phy.cwMin / 2) * phy.slotUs + r.medium.frameAirtimeUs(1000) + phy.sifsUs + airtimeUs(phy, 14, 1e6);
  const analytic = 8000 / cycleUs;
  const got = mbps(b, seconds);
  console.log(`# single link: ${got.toFixed(4)} Mbps, analytic ${analytic.toFixed(4)} Mbps (cycle ${cycleUs} µs)`);
  assert.ok(Math.abs(got / analytic - 1) < 0.02, `${got} vs ${analytic}`);
  assert.equal(a.st.counters.retries, 0);
  assert.equal(b.st.counters.collisions, 0);
  assert.equal(a.st.counters.acked, b.st.counters.rxFrames);
  assert.ok(
    a.sent.every((s) => s.outcome.ok && s.outcome.attempts === 1),
    'a.sent.every((s) => s.outcome.ok && s.outcome.attempts === 1)',
  );
  // Airtime accounting: DATA at the sender, ACKs at the receiver.
  assert.equal(a.st.counters.airtimeUs, a.st.counters.txFrames * 4304);
  assert.equal(b.st.counters.airtimeUs, b.st.counters.rxFrames * 304);
  const ch1 = r.medium.counters.channels.get(1)!;
  assert.equal(ch1.frames, a.st.counters.txFrames + b.st.counters.rxFrames);
  assert.ok(
    ch1.busyUs > 0.9 * seconds * S * ((4304 + 304) / cycleUs) && ch1.busyUs <= seconds * S,
    'ch1.busyUs > 0.9 * seconds * S * ((4304 + 304) / cycleUs) && ch1.busyUs <= seconds * S',
  );
});

test('broadcast: after DIFS on an idle medium, no ACK, no retry, onSent when it leaves the air', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  const c = radio(r, 'c', 3, 200, { acceptsBroadcast: false });
  const far = radio(r, 'far', 4, 400);
  a.st.send(pkt(1, BROADCAST, 1000, 'hello'));
  r.engine.run();
  // Idle since 0: the medium has not been idle for DIFS yet, so it goes at DIFS.
  assert.deepEqual(
    a.sent.map((s) => [s.frame.tag, s.outcome]),
    [['hello', { ok: true, attempts: 1, atUs: 50 + 4304 }]],
  );
  assert.deepEqual(
    b.rx.map((x) => [x.frame.tag, x.at]),
    [['hello', 4354]],
  );
  assert.equal(c.rx.length, 0);
  assert.equal(far.rx.length, 0, 'beyond txRange');
  assert.equal(r.medium.counters.frames, 1, 'no ACK');
  // Idle for longer than DIFS: a new frame goes at once.
  r.engine.run(100_000);
  a.st.send(pkt(1, BROADCAST, 1000, 'again'));
  r.engine.run();
  assert.equal(a.sent[1]!.outcome.atUs, 100_000 + 4304);
  assert.equal(a.st.counters.retries, 0);
  // A station never takes the broadcasts of its own node.
  const twin = radio(r, 'a-R3', 1, 0);
  a.st.send(pkt(1, BROADCAST, 100));
  r.engine.run();
  assert.equal(twin.rx.length, 0);
  assert.equal(b.rx.length, 3);
});

test('retry limit: a receiver out of range costs exactly shortRetryLimit attempts', () => {
  for (const rts of [Infinity, 0]) {
    const r = rig({ phy: { ...phy80211b(), rtsThresholdBytes: rts } });
    const a = radio(r, 'a', 1, 0);
    const b = radio(r, 'b', 2, 400); // within csRange, beyond txRange
    a.st.send(pkt(1, 2, 1000, 'x'));
    a.st.send(pkt(1, 2, 1000, 'y'));
    r.engine.run();
    assert.deepEqual(
      a.sent.map((s) => [s.frame.tag, s.outcome.ok, s.outcome.ok ? '' : s.outcome.reason, s.outcome.attempts]),
      [
        ['x', false, 'retry-limit', 7],
        ['y', false, 'retry-limit', 7],
      ],
    );
    assert.equal(a.st.counters.retryLimitDrops, 2);
    assert.equal(a.st.counters.retries, 12);
    assert.equal(a.st.counters.txFrames, rts === 0 ? 0 : 14, 'with RTS/CTS no DATA goes without a CTS');
    assert.equal(b.rx.length, 0);
    assert.equal(r.engine.pending, 0);
  }
});

test('two senders in range of each other share one receiver about fairly, with few collisions', () => {
  const seconds = 30;
  const r = rig({ seed: 5 });
  const a = radio(r, 'a', 1, 0, { yM: 0 });
  const b = radio(r, 'b', 2, 0, { yM: 150 });
  const c = radio(r, 'c', 3, 120, { yM: 75 });
  let fromA = 0;
  let fromB = 0;
  c.onReceive = (f) => (f.src === 1 ? fromA++ : fromB++);
  saturate(a, 3);
  saturate(b, 3);
  r.engine.run(seconds * S);
  const total = fromA + fromB;
  const collisions = c.st.counters.collisions;
  console.log(`# two senders: ${fromA} + ${fromB} frames, ${((total * 8000) / seconds / 1e6).toFixed(3)} Mbps, ${collisions} collisions at the receiver`);
  assert.ok(Math.abs(fromA - fromB) / total < 0.05, `${fromA} vs ${fromB}`);
  assert.ok(collisions / total < 0.08, `${collisions} collisions for ${total} frames`);
  assert.ok((total * 8000) / seconds / 1e6 > 1.45, '(total * 8000) / seconds / 1e6 > 1.45');
  assert.equal(a.st.counters.retryLimitDrops + b.st.counters.retryLimitDrops, 0);
});

test('NAV: a station that decodes only the CTS keeps off the air until the ACK is over', () => {
  const params = { txRangeM: 250, csRangeM: 300 };
  for (const rts of [0, Infinity]) {
    const r = rig({ params, phy: { ...phy80211b(), rtsThresholdBytes: rts } });
    const a = radio(r, 'a', 1, 0);
    const b = radio(r, 'b', 2, 240);
    const c = radio(r, 'c', 3, 480); // hidden from a
    a.st.send(pkt(1, 2, 1000, 'data'));
    r.engine.at(1_000, () => c.st.send(pkt(3, BROADCAST, 100, 'hello')));
    r.engine.run();
    const cStart = c.sent[0]!.outcome.atUs - r.medium.frameAirtimeUs(100);
    if (rts === 0) {
      // RTS 50..402, CTS 412..716, DATA 726..5030, ACK 5040..5344; the CTS reserves up to the end of the ACK.
      assert.deepEqual(
        a.sent.map((s) => s.outcome),
        [{ ok: true, attempts: 1, atUs: 5_344 }],
      );
      assert.ok(cStart >= 5_344 + 50, `c started at ${cStart}`);
      assert.deepEqual(
        b.rx.map((x) => x.frame.tag),
        ['data', 'hello'],
      );
    } else {
      assert.equal(cStart, 1_000, 'nothing heard: c goes at once, into the DATA');
      assert.equal(b.st.counters.collisions >= 1, true);
    }
  }
});

test('EIFS after a frame heard but not decoded, DIFS after one decoded', () => {
  for (const [x, defer] of [
    [100, 50],
    [400, 10 + 304 + 50],
  ] as const) {
    const starts = new Set<number>();
    for (let seed = 1; seed <= 20; seed++) {
      const r = rig({ seed });
      const a = radio(r, 'a', 1, 0);
      const c = radio(r, 'c', 3, x);
      a.st.send(pkt(1, BROADCAST, 1000)); // on the air 50..4354
      r.engine.at(1_000, () => c.st.send(pkt(3, BROADCAST, 100)));
      r.engine.run();
      const start = c.sent[0]!.outcome.atUs - r.medium.frameAirtimeUs(100);
      const slots = (start - 4_354 - defer) / 20;
      assert.ok(Number.isInteger(slots) && slots >= 0 && slots <= 31, `at ${x} m: start ${start}`);
      starts.add(start);
    }
    assert.ok(starts.size > 5, 'a backoff drawn, since the medium was busy when the frame came');
  }
});

function hiddenTerminals(rts: number, seconds: number): { rx: number; collisions: number; sent: number; dropped: number } {
  const r = rig({ seed: 11, params: { txRangeM: 250, csRangeM: 300 }, phy: { ...phy80211b(), rtsThresholdBytes: rts } });
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 240);
  const c = radio(r, 'c', 3, 480);
  saturate(a, 2);
  saturate(c, 2);
  r.engine.run(seconds * S);
  return {
    rx: b.st.counters.rxFrames,
    collisions: b.st.counters.collisions,
    sent: a.st.counters.txFrames + c.st.counters.txFrames,
    dropped: a.st.counters.retryLimitDrops + c.st.counters.retryLimitDrops,
  };
}

test('hidden terminals collide at the middle station; RTS/CTS cuts the loss', () => {
  const seconds = 20;
  const basic = hiddenTerminals(Infinity, seconds);
  const rtscts = hiddenTerminals(0, seconds);
  const loss = (x: { rx: number; sent: number }): number => 1 - x.rx / x.sent;
  console.log(
    `# hidden terminals: basic ${basic.rx} frames (${((basic.rx * 8000) / seconds / 1e6).toFixed(3)} Mbps), ${basic.collisions} collisions, DATA loss ${(100 * loss(basic)).toFixed(1)}%, ${basic.dropped} dropped; ` +
      `RTS/CTS ${rtscts.rx} frames (${((rtscts.rx * 8000) / seconds / 1e6).toFixed(3)} Mbps), ${rtscts.collisions} collisions, DATA loss ${(100 * loss(rtscts)).toFixed(1)}%, ${rtscts.dropped} dropped`,
  );
  assert.ok(basic.collisions > basic.rx, `${basic.collisions} collisions for ${basic.rx} frames received`);
  assert.ok(loss(basic) > 0.4, `DATA loss ${loss(basic)}`);
  assert.ok(loss(rtscts) < 0.1, `DATA loss with RTS/CTS ${loss(rtscts)}`);
  assert.ok(rtscts.rx > 1.5 * basic.rx, `${rtscts.rx} vs ${basic.rx}`);
  assert.ok(rtscts.dropped < basic.dropped, 'rtscts.dropped < basic.dropped');
});

test('capture: a frame 10 dB stronger survives an overlapping one; two alike both die', () => {
  // The two senders cannot hear each other (290 m > csRange 260 m): both go at DIFS.
  const params = { txRangeM: 250, csRangeM: 260 };
  {
    const r = rig({ params });
    const rx = radio(r, 'rx', 1, 0);
    const near = radio(r, 'near', 2, -50);
    const far = radio(r, 'far', 3, 240);
    near.st.send(pkt(2, BROADCAST, 500, 'near'));
    far.st.send(pkt(3, BROADCAST, 500, 'far'));
    r.engine.run();
    assert.equal(near.sent[0]!.outcome.atUs, far.sent[0]!.outcome.atUs, 'they overlapped exactly');
    assert.deepEqual(
      rx.rx.map((x) => x.frame.tag),
      ['near'],
    );
    assert.equal(rx.st.counters.collisions, 1);
  }
  {
    const r = rig({ params });
    const rx = radio(r, 'rx', 1, 0);
    const left = radio(r, 'left', 2, -200);
    const right = radio(r, 'right', 3, 200);
    left.st.send(pkt(2, BROADCAST, 500, 'left'));
    right.st.send(pkt(3, BROADCAST, 500, 'right'));
    r.engine.run();
    assert.equal(rx.rx.length, 0);
    assert.equal(rx.st.counters.collisions, 2);
  }
  {
    // Unicast: the near frame is ACKed despite the far one.
    const r = rig({ params });
    const rx = radio(r, 'rx', 1, 0);
    const near = radio(r, 'near', 2, -50);
    const far = radio(r, 'far', 3, 240);
    near.st.send(pkt(2, 1, 500, 'near'));
    far.st.send(pkt(3, BROADCAST, 3000, 'far'));
    r.engine.run();
    assert.deepEqual(
      near.sent.map((s) => s.outcome),
      [{ ok: true, attempts: 1, atUs: 50 + r.medium.frameAirtimeUs(500) + 10 + 304 }],
    );
    assert.deepEqual(
      rx.rx.map((x) => x.frame.tag),
      ['near'],
    );
  }
});

test('channels 1 and 11 do not interfere; channels 1 and 2 share the air', () => {
  const seconds = 10;
  const pairs = (chB: number): [number, number] => {
    const r = rig({ seed: 2 });
    const a = radio(r, 'a', 1, 0, { channel: 1 });
    const b = radio(r, 'b', 2, 100, { channel: 1 });
    const c = radio(r, 'c', 3, 0, { yM: 30, channel: chB });
    const d = radio(r, 'd', 4, 100, { yM: 30, channel: chB });
    saturate(a, 2);
    saturate(c, 4);
    r.engine.run(seconds * S);
    return [mbps(b, seconds), mbps(d, seconds)];
  };
  const apart = pairs(11);
  const close = pairs(2);
  console.log(`# channels 1+11: ${apart.map((x) => x.toFixed(3)).join(' + ')} Mbps; 1+2: ${close.map((x) => x.toFixed(3)).join(' + ')} Mbps`);
  for (const x of apart) assert.ok(x > 1.55, `${x} Mbps on orthogonal channels`);
  for (const x of close) assert.ok(x < 1.0 && x > 0.6, `${x} Mbps on overlapping channels`);
  assert.ok(close[0] + close[1] < 1.7, 'close[0] + close[1] < 1.7');
});

// ---- PN ------------------------------------------------------------------------

/** Broadcasts a 200-byte frame every 3 ms for `seconds`; returns which frames overlapped a burst and which arrived. */
function pnRun(prob: number, seed = 1, seconds = 3): { overlapping: number[]; lost: number[]; pnLosses: number; immune: number } {
  const pn = periodicPn(1, 10_000, 2_000, 500);
  const r = rig({ seed, pn, params: { pnLossProbability: prob, pnCarrierSense: false } });
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  const immune = radio(r, 'immune', 3, 100, { yM: 10, pnAffected: false });
  const air = r.medium.frameAirtimeUs(200);
  const n = Math.floor((seconds * S) / 3000);
  for (let k = 0; k < n; k++) r.engine.at(k * 3000 + 1000, () => a.st.send(pkt(1, BROADCAST, 200, k)));
  r.engine.run();
  const got = new Set(b.rx.map((x) => x.frame.tag as number));
  const overlapping: number[] = [];
  const lost: number[] = [];
  for (const s of a.sent) {
    const k = s.frame.tag as number;
    const start = s.outcome.atUs - air;
    const end = s.outcome.atUs;
    if (pn.pnBusyIntervals(1, start, end).length > 0) overlapping.push(k);
    if (!got.has(k)) lost.push(k);
  }
  assert.equal(a.sent.length, n);
  return { overlapping, lost, pnLosses: b.st.counters.pnLosses, immune: immune.rx.length };
}

test('PN: loss probability 1 loses exactly the frames that overlap a burst, 0 none, 0.5 about half', () => {
  const all = pnRun(1);
  assert.ok(all.overlapping.length > 200, `${all.overlapping.length} frames overlapped`);
  assert.deepEqual(all.lost, all.overlapping);
  assert.equal(all.pnLosses, all.lost.length);
  assert.equal(all.immune, 1000, 'a station not affected by PNs loses nothing');
  const none = pnRun(0);
  assert.deepEqual(none.lost, []);
  assert.equal(none.pnLosses, 0);
  const half = pnRun(0.5);
  const share = half.lost.length / half.overlapping.length;
  assert.ok(
    half.lost.every((k) => half.overlapping.includes(k)),
    'only overlapping frames are lost',
  );
  assert.ok(share > 0.4 && share < 0.6, `lost ${share} of the overlapping frames`);
  assert.deepEqual(pnRun(0.5).lost, half.lost, 'seeded');
  assert.notDeepEqual(pnRun(0.5, 2).lost, half.lost);
});

test('PN carrier sense: a sender waits for the burst to end; without it, it sends into the burst', () => {
  const pn = fixedPn({ 1: [[1_000, 30_000]], 6: [[0, 1_000_000]] });
  for (const cs of [true, false]) {
    const r = rig({ pn, params: { pnCarrierSense: cs } });
    const a = radio(r, 'a', 1, 0);
    const b = radio(r, 'b', 2, 100);
    let firstStart = -1;
    r.engine.at(2_000, () => {
      a.st.send(pkt(1, 2, 1000, 'x'));
      // The DATA is on the air once the channel shows a frame (checked after any access due now).
      const probe = (): void => {
        if (r.medium.counters.frames > 0) firstStart = r.engine.now();
        else r.engine.after(1, probe);
      };
      r.engine.after(0, probe);
    });
    r.engine.run();
    assert.equal(b.rx.length, 1);
    if (cs) {
      assert.ok(firstStart >= 30_000 + 50, `started at ${firstStart}`);
      assert.ok(firstStart <= 30_000 + 50 + 31 * 20, 'firstStart <= 30_000 + 50 + 31 * 20');
      assert.equal(b.st.counters.pnLosses, 0);
      assert.equal(a.sent[0]!.outcome.attempts, 1);
    } else {
      assert.equal(firstStart, 2_000, 'idle for longer than DIFS: at once');
      assert.ok(b.st.counters.pnLosses >= 1, 'b.st.counters.pnLosses >= 1');
    }
  }
  // A station that ignores PNs does not defer to them.
  const r = rig({ pn });
  const a = radio(r, 'a', 1, 0, { channel: 6, pnAffected: false });
  const b = radio(r, 'b', 2, 100, { channel: 6, pnAffected: false });
  a.st.send(pkt(1, 2));
  r.engine.run();
  assert.equal(a.sent[0]!.outcome.atUs, 50 + 4304 + 10 + 304);
  assert.equal(b.rx.length, 1);
});

test('PN from the emulated band: bursts found in chunks, a saturated link keeps out of them with carrier sense', () => {
  const seconds = 10;
  const result = (pnCarrierSense: boolean): { mbps: number; pnLosses: number; busyShare: number } => {
    const engine = new EventEngine();
    const band = new EmulatedBand(
      plan,
      {
        noiseFigureDb: 5,
        pn: [{ channel: 1, powerDbm: -60, pattern: { kind: 'onoff', idleMs: 20, busyMs: 20, distribution: 'exponential' } }],
        phases: [],
        repeat: false,
      },
      Rng.fromSeed(9).fork('band'),
      engine,
    );
    const medium = new AirMedium({ scheduler: engine, plan, rng: Rng.fromSeed(9), pn: band }, { pnCarrierSense });
    const r = { engine, medium };
    const a = radio(r, 'a', 1, 0);
    const b = radio(r, 'b', 2, 100);
    saturate(a, 2);
    engine.run(seconds * S);
    return { mbps: mbps(b, seconds), pnLosses: a.st.counters.pnLosses + b.st.counters.pnLosses, busyShare: band.pnBusyFraction(1, 0, seconds * S) };
  };
  const cs = result(true);
  const blind = result(false);
  console.log(
    `# band PN (busy ${(100 * cs.busyShare).toFixed(0)}%): with PN carrier sense ${cs.mbps.toFixed(3)} Mbps, ${cs.pnLosses} PN losses; ` +
      `without ${blind.mbps.toFixed(3)} Mbps, ${blind.pnLosses} PN losses`,
  );
  const free = 1.607 * (1 - cs.busyShare);
  assert.ok(cs.mbps > 0.75 * free && cs.mbps < 1.02 * free, `${cs.mbps} Mbps with ${free} Mbps of PN-free air`);
  assert.ok(blind.pnLosses > 2 * cs.pnLosses, `${blind.pnLosses} vs ${cs.pnLosses}`);
  assert.ok(cs.mbps > blind.mbps, `${cs.mbps} vs ${blind.mbps}`);
});

// ---- Retune --------------------------------------------------------------------

test('retune: frames sent to a station during its overhead are missed, then it receives again', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  b.st.retune(1, 12_000);
  assert.equal(b.st.channel, undefined, 'deaf while retuning');
  a.st.send(pkt(1, 2, 1000, 'x'));
  r.engine.run(12_000);
  assert.equal(b.st.channel, 1);
  assert.ok(b.st.counters.missedDeaf >= 1, 'b.st.counters.missedDeaf >= 1');
  r.engine.run();
  assert.equal(b.rx.length, 1);
  assert.ok(b.rx[0]!.at > 12_000, 'b.rx[0]!.at > 12_000');
  const out = a.sent[0]!.outcome;
  assert.ok(out.ok && out.attempts === b.st.counters.missedDeaf + 1, JSON.stringify([out, b.st.counters]));
  // A station on another channel misses frames to its node too; one tuned to undefined stays deaf.
  b.st.retune(6, 0);
  a.st.send(pkt(1, 2, 100));
  r.engine.run();
  assert.equal(a.sent[1]!.outcome.ok, false);
  assert.equal(b.st.counters.missedDeaf, out.attempts - 1 + 7);
  b.st.retune(undefined, 100);
  r.engine.run();
  assert.equal(b.st.channel, undefined);
});

test('retune aborts the exchange in service; queued frames stay queued and go on the new channel', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  for (const tag of ['x', 'y', 'z']) a.st.send(pkt(1, 2, 1000, tag));
  assert.equal(a.st.queued, 2);
  r.engine.run(2_000); // x is on the air from 50 to 4354
  a.st.retune(6, 1_000);
  // The abort comes back at once, the rest stays.
  assert.deepEqual(
    a.sent.map((s) => [s.frame.tag, s.outcome]),
    [['x', { ok: false, reason: 'aborted', attempts: 1, atUs: 2_000 }]],
  );
  assert.equal(a.st.queued, 1);
  assert.equal(a.st.idle, false);
  assert.equal(a.st.counters.aborted, 1);
  assert.equal(r.medium.counters.truncated, 1);
  b.st.retune(6, 500);
  r.engine.run();
  assert.deepEqual(
    b.rx.map((x) => x.frame.tag),
    ['y', 'z'],
    'x was cut short',
  );
  assert.ok(b.rx[0]!.at >= 3_000 + 4304, 'b.rx[0]!.at >= 3_000 + 4304');
  assert.deepEqual(
    a.sent.slice(1).map((s) => [s.frame.tag, s.outcome.ok]),
    [
      ['y', true],
      ['z', true],
    ],
  );
  assert.equal(r.medium.counters.channels.get(6)!.frames, 4);
  // While waiting for an ACK, too.
  a.st.send(pkt(1, 2, 1000, 'w'));
  r.engine.run(r.engine.now() + 50 + 4304 + 5);
  a.st.retune(6, 0);
  r.engine.run();
  assert.equal(a.sent.at(-1)!.outcome.ok, false);
  assert.equal(b.rx.at(-1)!.frame.tag, 'w', 'it arrived, but the ACK found the sender deaf');
  assert.equal(a.st.counters.aborted, 2);
});

test('hold gives back the queued frames in order; the one in service goes on; nothing happens when nothing is queued', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  a.st.hold();
  r.engine.run();
  assert.equal(a.sent.length, 0, 'an idle station: nothing to give back');
  for (const tag of ['x', 'y', 'z']) a.st.send(pkt(1, 2, 1000, tag));
  r.engine.run(2_000); // x is on the air
  a.st.hold();
  assert.deepEqual(
    a.sent.map((s) => [s.frame.tag, s.outcome]),
    [
      ['y', { ok: false, reason: 'aborted', attempts: 0, atUs: 2_000 }],
      ['z', { ok: false, reason: 'aborted', attempts: 0, atUs: 2_000 }],
    ],
  );
  assert.equal(a.st.queued, 0);
  assert.equal(a.st.serviceAttempts, 1, 'x goes on');
  r.engine.run();
  assert.deepEqual(
    b.rx.map((x) => x.frame.tag),
    ['x'],
  );
  assert.deepEqual(a.sent.at(-1)!.frame.tag, 'x');
  assert.equal(a.sent.at(-1)!.outcome.ok, true);
  assert.equal(a.st.idle, true);
  assert.equal(a.st.counters.aborted, 2);
  assert.equal(r.medium.counters.truncated, 0);
});

test('detach returns the frame in service and the queued ones as aborted', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  for (const tag of ['x', 'y']) a.st.send(pkt(1, 2, 1000, tag));
  r.engine.run(1_000);
  a.st.detach();
  assert.deepEqual(
    a.sent.map((s) => [s.frame.tag, s.outcome.ok]),
    [
      ['x', false],
      ['y', false],
    ],
  );
  r.engine.run();
  assert.equal(b.rx.length, 0);
  assert.equal(r.medium.station('a'), undefined);
  assert.equal(r.engine.pending, 0);
});

test('a full queue refuses the frame and counts it', () => {
  const r = rig();
  const a = radio(r, 'a', 1, 0, { queueLimit: 2 });
  radio(r, 'b', 2, 100);
  assert.deepEqual(
    [1, 2, 3, 4].map((i) => a.st.send(pkt(1, 2, 100, i))),
    [true, true, true, false],
  );
  assert.equal(a.st.counters.queueDrops, 1);
  r.engine.run();
  assert.deepEqual(
    a.sent.map((s) => s.frame.tag),
    [1, 2, 3],
  );
});

test('duplicates: a retry of a frame already delivered is ACKed again but delivered once', () => {
  // DATA 50..4354, ACK 4364..4668: a burst that hits only the ACK, at the sender only.
  const pn = fixedPn({ 1: [[4_400, 4_500]] });
  const r = rig({ pn, params: { pnCarrierSense: false } });
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100, { pnAffected: false });
  a.st.send(pkt(1, 2, 1000, 'x'));
  r.engine.run();
  assert.equal(a.st.counters.pnLosses, 1, 'the first ACK was lost');
  assert.equal(b.rx.length, 1);
  assert.equal(b.st.counters.rxFrames, 1);
  assert.equal(b.st.counters.duplicates, 1);
  assert.equal(a.st.counters.retries, 1);
  assert.deepEqual(
    a.sent.map((s) => [s.outcome.ok, s.outcome.attempts]),
    [[true, 2]],
  );
  // The next frame has a new sequence number and is delivered.
  a.st.send(pkt(1, 2, 1000, 'y'));
  r.engine.run();
  assert.deepEqual(
    b.rx.map((x) => x.frame.tag),
    ['x', 'y'],
  );
});

// ---- Determinism and speed -----------------------------------------------------

/** A 4-hop chain (5 routers 200 m apart on one channel), saturated from node 0, with some broadcasts. */
function chain(seed: number, seconds: number, log?: string[]): { medium: AirMedium; probes: Probe[]; engine: EventEngine } {
  const r = rig({ seed });
  const probes: Probe[] = [];
  for (let i = 0; i < 5; i++) probes.push(radio(r, `n${i}`, i + 1, 200 * i));
  probes.forEach((p, i) => {
    p.onReceive = (f, at) => {
      log?.push(`${at} rx ${p.st.id} ${f.src}->${f.dst} ${String(f.tag)}`);
      if (f.dst !== BROADCAST && i < 4) p.st.send({ ...f, src: i + 1, dst: i + 2 });
    };
  });
  const src = probes[0]!;
  let n = 0;
  src.onSent = (f, o) => {
    log?.push(`${o.atUs} sent ${String(f.tag)} ${o.ok} ${o.attempts}`);
    src.st.send(pkt(1, 2, 1000, n++));
  };
  src.st.send(pkt(1, 2, 1000, n++));
  src.st.send(pkt(1, 2, 1000, n++));
  for (let t = 0; t < seconds * S; t += 100_000) r.engine.at(t, () => probes[2]!.st.send(pkt(3, BROADCAST, 60, `hello${t}`)));
  r.engine.run(seconds * S);
  return { medium: r.medium, probes, engine: r.engine };
}

test('same seed, same events and counters; another seed, other events', () => {
  const log1: string[] = [];
  const log2: string[] = [];
  const log3: string[] = [];
  const a = chain(42, 3, log1);
  const b = chain(42, 3, log2);
  const c = chain(43, 3, log3);
  assert.ok(log1.length > 1000, 'log1.length > 1000');
  assert.deepEqual(log1, log2);
  assert.deepEqual(
    a.probes.map((p) => p.st.counters),
    b.probes.map((p) => p.st.counters),
  );
  assert.equal(a.engine.eventsFired, b.engine.eventsFired);
  assert.notDeepEqual(log1, log3);
  assert.ok(c.probes[4]!.st.counters.rxFrames > 0, 'c.probes[4]!.st.counters.rxFrames > 0');
});

test('speed: a saturated 4-hop chain for 100 simulated seconds (information only)', () => {
  const seconds = 100;
  const t0 = performance.now();
  const { medium, probes, engine } = chain(7, seconds);
  const wall = (performance.now() - t0) / 1000;
  const end = probes[4]!;
  const got = mbps(end, seconds);
  console.log(
    `# 4-hop chain, ${seconds} s: ${medium.counters.frames} frames, ${engine.eventsFired} events in ${wall.toFixed(2)} s wall ` +
      `(${Math.round(medium.counters.frames / wall)} frames/s); ${got.toFixed(3)} Mbps end to end`,
  );
  assert.ok(medium.counters.frames > 40_000, `${medium.counters.frames} frames`);
  assert.ok(got > 0.3 && got < 0.8, `${got} Mbps over 4 hops`);
});

test('capture: a much stronger late frame survives with "strongest" and is lost with "first" (ns-2)', () => {
  const got: Record<string, string[]> = {};
  for (const capture of ['strongest', 'first'] as const) {
    const r = rig({ params: { txRangeM: 250, csRangeM: 300, capture } });
    const a = radio(r, 'a', 1, 0);
    const b = radio(r, 'b', 2, 240);
    const c = radio(r, 'c', 3, 310); // hidden from a, 21 dB stronger than a at b
    a.st.send(pkt(1, BROADCAST, 1000, 'far'));
    r.engine.at(1_000, () => c.st.send(pkt(3, BROADCAST, 100, 'near')));
    r.engine.run();
    got[capture] = b.rx.map((x) => String(x.frame.tag));
  }
  assert.deepEqual(got, { strongest: ['near'], first: [] });
});

test("a router's radios on one channel are one half-duplex transceiver; on different channels they do not meet", () => {
  const got: Record<string, number> = {};
  for (const channel of [1, 6]) {
    // Router 1's R1 (channel 1) receives from router 2 while router 1's R2
    // sends to router 3 on `channel`: both start on an idle medium, after DIFS.
    const r = rig({ params: { txRangeM: 250, csRangeM: 300 } });
    const r1 = radio(r, 'r1', 1, 240, { acceptsBroadcast: false });
    const r2 = radio(r, 'r2', 1, 240, { acceptsUnicast: false, acceptsBroadcast: false, channel });
    const far = radio(r, 'far', 2, 0);
    const next = radio(r, 'next', 3, 480, { channel });
    void next;
    far.st.send(pkt(2, 1, 1000, 'in'));
    r2.st.send(pkt(1, 3, 200, 'out'));
    r.engine.run();
    assert.equal(r1.rx.filter((x) => x.frame.tag === 'in').length, 1, 'received in the end');
    got[`ch${channel}`] = r1.st.counters.missedDeaf * 10 + (far.sent[0]?.outcome.ok ? far.sent[0].outcome.attempts : 0);
  }
  // Missed once while its own router sent (and sent again), against received at the first attempt.
  assert.deepEqual(got, { ch1: 12, ch6: 1 });
});

test('hearings: through retunes, truncated frames and collisions, a station holds exactly the frames in the air it hears, each once', () => {
  // The medium reuses a hearing once its frame has ended: one reused early would
  // show here as a station holding another station's hearing, a frame twice, or
  // a frame that has ended.
  const r = rig({ seed: 7, params: { txRangeM: 250, csRangeM: 550 } });
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 200);
  const c = radio(r, 'c', 3, 100, { yM: 150 });
  const d = radio(r, 'd', 4, 400);
  const e = radio(r, 'e', 5, 150, { yM: -100 });
  // Two radios of one router: its own frames blind the other.
  const e2 = radio(r, 'e2', 5, 150, { yM: -100, acceptsUnicast: false });
  saturate(a, 2);
  saturate(c, 2, 1500);
  saturate(d, 3, 300);
  saturate(e2, 1, 700);
  const all = [a, b, c, d, e, e2];
  let checks = 0;
  const check = (now: number): void => {
    for (const p of all) {
      const st = p.st as DcfStation;
      const frames = new Set<unknown>();
      st.heard.forEach((h, i) => {
        assert.equal(h.st, st, `${st.id}: a hearing of another station`);
        assert.equal(h.pos, i, `${st.id}: a hearing out of place`);
        assert.equal(h.gone, false, `${st.id}: a hearing marked gone`);
        assert.ok(h.frame.endUs >= now, `${st.id}: a hearing of a frame that ended at ${h.frame.endUs} (now ${now})`);
        assert.ok(!frames.has(h.frame), `${st.id}: a frame heard twice`);
        frames.add(h.frame);
      });
      if (st.channel === undefined) assert.equal(st.heard.length, 0, `${st.id}: deaf, yet hearing`);
    }
    checks++;
  };
  for (let t = 0; t < S; t += 97) r.engine.at(t, check);
  // Senders and listeners leave their channel now and then, mid-frame or not, for a while or at once.
  for (let t = 1_300; t < S; t += 9_711) r.engine.at(t, () => c.st.retune(1, (t / 9_711) % 2 < 1 ? 0 : 300));
  for (let t = 800; t < S; t += 1_913) r.engine.at(t, () => e.st.retune((t / 1_913) % 3 < 1 ? 6 : 1, 150));
  for (let t = 2_100; t < S; t += 23_117) r.engine.at(t, () => b.st.retune(1, 0));
  r.engine.run(S);
  assert.ok(checks > 10_000, String(checks));
  assert.ok(r.medium.counters.truncated > 10, `frames cut short: ${r.medium.counters.truncated}`);
  assert.ok(b.st.counters.collisions > 0 && b.st.counters.missedDeaf > 0, JSON.stringify(b.st.counters));
  assert.ok(b.rx.length > 20, String(b.rx.length));
  for (const p of [a, c, d, e2]) p.onSent = undefined;
  r.engine.run();
  check(r.engine.now());
  for (const p of all) assert.equal((p.st as DcfStation).heard.length, 0, `${p.st.id} still hears something`);
});

test('PN from the emulated band: a channel left unused for longer than the band keeps history works again when next used', () => {
  // The medium process keeps 60 s of band history. Channel 1 carries traffic all along, so the band's
  // queries move on; channel 6 is used once, then left alone for 75 s, then used again.
  const engine = new EventEngine();
  const onoff = { kind: 'onoff', idleMs: 30, busyMs: 10, distribution: 'exponential' } as const;
  const band = new EmulatedBand(
    plan,
    { noiseFigureDb: 5, pn: [1, 6].map((channel) => ({ channel, powerDbm: -60, pattern: onoff })), phases: [], repeat: false },
    Rng.fromSeed(3).fork('band'),
    { scheduler: engine, startUs: 0, historyUs: 60 * S },
  );
  const medium = new AirMedium({ scheduler: engine, plan, rng: Rng.fromSeed(3), pn: band });
  const r = { engine, medium };
  const a = radio(r, 'a', 1, 0);
  const b = radio(r, 'b', 2, 100);
  const c = radio(r, 'c', 3, 0, { channel: 6, yM: 1000 });
  const d = radio(r, 'd', 4, 100, { channel: 6, yM: 1000 });
  for (let t = 0; t < 80 * S; t += 100_000) engine.at(t, () => a.st.send(pkt(1, 2, 200)));
  engine.at(S / 2, () => c.st.send(pkt(3, 4, 200)));
  engine.at(76 * S, () => c.st.send(pkt(3, 4, 200)));
  engine.run(80 * S);
  assert.equal(d.rx.length, 2, 'both frames on channel 6 arrive');
  assert.deepEqual(
    c.sent.map((s) => s.outcome.ok),
    [true, true],
  );
  // Carrier sense still keeps the frame after the idle out of the PN's bursts.
  const at = d.rx[1]!.at;
  const airUs = medium.frameAirtimeUs(200);
  assert.deepEqual(band.pnBusyIntervals(6, at - airUs, at), [], 'the frame after the idle went out between PN bursts');
  assert.ok(b.rx.length > 700, `${b.rx.length} frames on channel 1`);
});

test('a channel no PN can be on is never asked about, and its traffic is what it is with a source that answers off', () => {
  // The same saturated pair on channel 6, next to a PN source with bursts on channel 1 only: once with
  // a source that rules channel 6 out (and throws if asked about it), once with one that answers "off".
  const asked: number[] = [];
  const bursts = { 1: [[0, 2 * S]] as Array<[number, number]> };
  const run = (rulesOut: boolean) => {
    const plain = fixedPn(bursts);
    const pn: PnSource = rulesOut
      ? {
          pnBusyIntervals: (ch, t0, t1) => {
            asked.push(ch);
            if (ch === 6) throw new Error('asked about channel 6');
            return plain.pnBusyIntervals(ch, t0, t1);
          },
          pnPossible: (ch) => ch === 1,
        }
      : plain;
    const r = rig({ seed: 4, pn });
    const a = radio(r, 'a', 1, 0, { channel: 6 });
    const b = radio(r, 'b', 2, 100, { channel: 6 });
    const c = radio(r, 'c', 3, 0, { channel: 1, yM: 1000 });
    const d = radio(r, 'd', 4, 100, { channel: 1, yM: 1000 });
    saturate(a, 2, 500);
    saturate(c, 4, 500);
    r.engine.run(3 * S);
    return { six: b.rx.map((x) => x.at), one: d.rx.map((x) => x.at) };
  };
  const ruledOut = run(true);
  const answered = run(false);
  assert.ok(ruledOut.six.length > 500 && ruledOut.one.length > 100, `${ruledOut.six.length} and ${ruledOut.one.length} frames`);
  assert.deepEqual(ruledOut, answered, 'the same frames at the same times');
  assert.ok(asked.length > 0 && asked.every((ch) => ch === 1), 'only channel 1 was asked about');
  // Channel 1's PN still holds its traffic back while on.
  assert.ok(ruledOut.one[0]! >= 2 * S, `first frame on channel 1 at ${ruledOut.one[0]} us, after the burst`);
});

test('the emulated band says which channels a PN of its configuration can be on', () => {
  const onoff = { kind: 'onoff', idleMs: 30, busyMs: 10, distribution: 'fixed' } as const;
  const pn = (channel: number) => ({ channel, powerDbm: -60, pattern: onoff });
  const rng = Rng.fromSeed(1).fork('band');
  const fixed = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [pn(1), pn(11)], phases: [], repeat: false }, rng);
  assert.deepEqual(
    plan.channels.map((c) => c.number).filter((ch) => fixed.pnPossible(ch)),
    [1, 11],
  );
  // With phases, the phases' PNs count (the static list is not used then).
  const phased = new EmulatedBand(
    plan,
    {
      noiseFigureDb: 5,
      pn: [pn(1)],
      phases: [
        { durationS: 1, pn: [pn(3)] },
        { durationS: 1, pn: [pn(9)] },
      ],
      repeat: true,
    },
    rng,
  );
  assert.deepEqual(
    plan.channels.map((c) => c.number).filter((ch) => phased.pnPossible(ch)),
    [3, 9],
  );
  const none = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, rng);
  assert.ok(plan.channels.every((c) => !none.pnPossible(c.number)));
});
