import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import type { MacFrame, SendOutcome, StationSpec } from '../../radio/medium/types.js';
import { PhyHost } from '../../radio/phy/host.js';
import { PhyStation } from '../../radio/phy/station.js';
import { ACK_AIRTIME_US, MAC_TIMING, type MacTiming } from '../../radio/phy/timing.js';
import { EmulatedBand, SimFrontend, type SimFrontendOptions } from '../../radio/sim/index.js';
import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import { BROADCAST } from '../../src/wire/mesh.js';

const plan = ism2g4(11);

/** Lets settled promises run their callbacks. */
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

interface Heard {
  frame: MacFrame;
  atUs: number;
}

function rig(seed = 1) {
  const engine = new EventEngine();
  const band = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, Rng.fromSeed(seed));
  const rng = Rng.fromSeed(seed + 100);
  const timing: MacTiming = MAC_TIMING.sim;
  const station = (node: number, channel: number, o: { spec?: Partial<StationSpec>; fe?: Partial<SimFrontendOptions>; timing?: MacTiming } = {}) => {
    const heard: Heard[] = [];
    const sent: Array<{ frame: MacFrame; outcome: SendOutcome }> = [];
    const fe = new SimFrontend(band, engine, { id: `n${node}`, sampleRateHz: 11e6, ...o.fe });
    const st = new PhyStation({
      spec: { id: `n${node}/R3`, node, position: { xM: 0, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: true, channel, ...o.spec },
      handlers: {
        onReceive: (frame, atUs) => void heard.push({ frame, atUs }),
        onSent: (frame, outcome) => void sent.push({ frame, outcome }),
      },
      frontend: fe,
      plan,
      scheduler: engine,
      rng: rng.fork(`n${node}`),
      timing: o.timing ?? timing,
      rateMbps: 2,
    });
    return { st, fe, heard, sent };
  };
  /** Runs the engine (and the promise callbacks between its events) until `done` or `limitUs`. */
  const run = async (limitUs: number, done: () => boolean = () => false): Promise<void> => {
    while (!done() && engine.now() < limitUs) {
      if (!engine.step()) break;
      await flush();
    }
  };
  return { engine, band, station, run };
}

const payload = (n: number, salt = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + salt) & 255);

describe('PhyStation: the DCF over the DSSS PHY on a front-end', () => {
  test('a broadcast reaches every station on the channel and none elsewhere', async () => {
    const { station, run } = rig();
    const a = station(1, 6);
    const b = station(2, 6);
    const c = station(3, 11);
    a.st.send({ src: 1, dst: BROADCAST, payload: payload(100) });
    await run(200_000, () => b.heard.length > 0 && a.sent.length > 0);
    await run(220_000);
    assert.equal(b.heard.length, 1);
    assert.deepEqual([...b.heard[0]!.frame.payload], [...payload(100)]);
    assert.equal(b.heard[0]!.frame.src, 1);
    assert.equal(b.heard[0]!.frame.dst, BROADCAST);
    assert.equal(c.heard.length, 0, 'channel 11 is 25 MHz away');
    assert.equal(a.sent[0]!.outcome.ok, true);
    assert.equal(a.sent[0]!.outcome.attempts, 1);
    assert.equal(b.st.phy.rx.fcs, 0);
    assert.ok(a.st.counters.airtimeUs > 0);
  });

  test('a unicast frame is acknowledged, and frames queued behind it go in order', async () => {
    const { station, run } = rig(2);
    const a = station(1, 6);
    const b = station(2, 6);
    for (let k = 0; k < 4; k++) assert.ok(a.st.send({ src: 1, dst: 2, payload: payload(200 + k, k) }));
    assert.equal(a.st.queued, 3);
    await run(2_000_000, () => a.sent.length === 4);
    assert.deepEqual(
      a.sent.map((s) => s.outcome.ok),
      [true, true, true, true],
    );
    assert.equal(a.st.counters.acked, 4);
    assert.deepEqual(
      b.heard.map((h) => h.frame.payload.length),
      [200, 201, 202, 203],
    );
    for (const [k, h] of b.heard.entries()) assert.deepEqual([...h.frame.payload], [...payload(200 + k, k)]);
    assert.equal(b.st.counters.duplicates, 0);
    assert.equal(a.st.phy.strayAcks, 0);
    assert.ok(a.st.idle);
  });

  test('a radio that only sends (R2) reads samples only while it has a frame to send, and hears its ACK', async () => {
    const { station, run } = rig(6);
    const r2 = station(1, 6, { spec: { id: 'n1/R2', acceptsUnicast: false, acceptsBroadcast: false } });
    const b = station(2, 6);
    await run(20_000);
    assert.equal(r2.st.phy.blocks, 0, 'idle: not reading');
    r2.st.send({ src: 1, dst: 2, payload: payload(300) });
    await run(1_000_000, () => r2.sent.length === 1);
    assert.equal(r2.sent[0]!.outcome.ok, true);
    assert.equal(b.heard.length, 1);
    await run(1_100_000);
    const blocks = r2.st.phy.blocks;
    assert.ok(blocks > 0);
    await run(1_300_000);
    assert.ok(r2.st.phy.blocks <= blocks + 1, 'done sending: it stops reading');
  });

  test('a unicast frame nobody acknowledges is tried retryLimit times, then given up', async () => {
    const { station, run } = rig(3);
    const timing: MacTiming = { ...MAC_TIMING.sim, retryLimit: 3 };
    const a = station(1, 6, { timing });
    const b = station(2, 6);
    a.st.send({ src: 1, dst: 9, payload: payload(50) });
    await run(5_000_000, () => a.sent.length === 1);
    assert.equal(a.sent.length, 1);
    assert.deepEqual(a.sent[0]!.outcome.ok ? 'ok' : a.sent[0]!.outcome.reason, 'retry-limit');
    assert.equal(a.sent[0]!.outcome.attempts, 3);
    assert.equal(a.st.counters.retries, 2);
    assert.equal(a.st.counters.retryLimitDrops, 1);
    assert.equal(b.heard.length, 0, 'not for b');
    assert.ok(b.st.phy.overheard >= 3, 'b heard every attempt');
  });

  test('a retune gives the frame in service back as aborted and tunes the radio', async () => {
    const { station, run } = rig(4);
    const a = station(1, 6);
    a.st.send({ src: 1, dst: 2, payload: payload(10) });
    a.st.retune(1, 0);
    assert.equal(a.sent.length, 1);
    assert.equal(a.sent[0]!.outcome.ok ? 'ok' : a.sent[0]!.outcome.reason, 'aborted');
    await run(50_000, () => a.st.channel === 1);
    assert.equal(a.st.channel, 1);
    assert.equal(a.fe.centerHz, plan.get(1).centerHz);
  });

  test('released: the front-end is free once the station is tuned nowhere and its last read, tune and transmission have settled', async () => {
    const { station, run, engine } = rig(8);
    const a = station(1, 6);
    const b = station(2, 6);
    let released = false;
    void a.st.released().then(() => (released = true));
    await run(20_000);
    assert.equal(released, false, 'tuned to channel 6 and reading');
    // A unicast exchange: its transmission and the wait for the ACK hold the front-end.
    a.st.send({ src: 1, dst: 2, payload: payload(400) });
    await run(200_000, () => a.st.serviceAttempts === 1);
    a.st.hold();
    await run(2_000_000, () => a.sent.length === 1);
    assert.equal(a.sent[0]!.outcome.ok, true, 'the exchange ended with its ACK');
    assert.equal(released, false, 'still tuned after the exchange');
    a.st.retune(undefined, 0);
    await flush();
    assert.equal(released, false, 'a read is still in flight');
    const at = engine.now();
    await run(at + 5_000, () => released);
    assert.equal(released, true);
    assert.ok(engine.now() > at, 'released once the read in flight came back');
    assert.equal(b.heard.length, 1);
    // Another user may tune the front-end now; a station already let go of it at once.
    let again = false;
    await a.st.released().then(() => (again = true));
    assert.equal(again, true);
  });

  test('refuses what the PHY cannot do, naming it', () => {
    const { station } = rig();
    assert.throws(() => station(1, 6, { fe: { sampleRateHz: 1e6 } }), /sample rate.*11e6 or 22e6/);
    assert.throws(() => station(3, 6, { timing: { ...MAC_TIMING.sim, ackTimeoutUs: ACK_AIRTIME_US } }), /ackTimeoutUs/);
    assert.throws(() => station(4, 6, { fe: { canTransmitIq: false } }), /cannot transmit samples/);
    const { st } = station(2, 6);
    assert.throws(() => st.send({ src: 2, dst: 1, payload: new Uint8Array(5000) }), /payload.length/);
    assert.throws(() => st.send({ src: 2, dst: 1, payload: new Uint8Array(0) }), /payload.length/);
  });

  test('PhyHost gives each radio of a router the station on its own front-end, with its kind profile and overrides', () => {
    const engine = new EventEngine();
    const band = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, Rng.fromSeed(5));
    const fe = (r: string): SimFrontend => new SimFrontend(band, engine, { id: `x/${r}`, sampleRateHz: 22e6 });
    const hostOf = (prefix: string, rateMbps: 1 | 2, timing: Partial<MacTiming>): PhyHost =>
      new PhyHost({
        frontends: { R1: fe(`${prefix}R1`), R2: fe(`${prefix}R2`), R3: fe(`${prefix}R3`) },
        plan,
        scheduler: engine,
        rng: Rng.fromSeed(6),
        rateMbps,
        timing,
      });
    const host = hostOf('', 1, { slotUs: 1500, sifsUs: 0 });
    assert.deepEqual(host.timingOf('R2'), { ...MAC_TIMING.sim, slotUs: 1500 });
    const spec = (r: string): StationSpec => ({ id: `x/${r}`, node: 4, position: { xM: 0, yM: 0 }, acceptsUnicast: r !== 'R2', acceptsBroadcast: r === 'R3' });
    const noop = { onReceive: () => undefined, onSent: () => undefined };
    host.addStation(spec('R1'), noop);
    host.addStation(spec('R3'), noop);
    assert.equal(host.stations.length, 2);
    assert.throws(() => host.addStation(spec('R4'), noop), /NAME\/R1/);
    assert.throws(() => hostOf('y', 2, { cwMin: 50, cwMax: 20 }), /cwMax/);
    host.close();
  });
});
