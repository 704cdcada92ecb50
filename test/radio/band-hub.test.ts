import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Dealer } from 'zeromq';
import { Rng } from '../../src/core/rng.js';
import { RealTimeScheduler } from '../../src/core/scheduler.js';
import { ism2g4 } from '../../radio/channels.js';
import { modulateFrame } from '../../radio/phy/dsss/modem.js';
import { DsssReceiver } from '../../radio/phy/dsss/receiver.js';
import { EmulatedBand, SimFrontend } from '../../radio/sim/index.js';
import { BandHub, BandHubLink, decodeHubMessage, encodeHubMessage, type HubMessage } from '../../radio/sim/hub.js';
import { spawnCogmesh, stopAll } from '../support/cli.js';
import { until } from '../support/until.js';

const plan = ism2g4(11);
const ch6 = plan.get(6).centerHz;
const FRAME = Uint8Array.from({ length: 40 }, (_, i) => (i * 53 + 7) & 255);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A node's band on the real clock, with one radio at 11 Msps on channel 6, linked to the hub. */
async function node(name: string, endpoint: string, seed: number) {
  const scheduler = new RealTimeScheduler();
  const band = new EmulatedBand(plan, { noiseFigureDb: 5, pn: [], phases: [], repeat: false }, Rng.fromSeed(seed), scheduler);
  const radio = new SimFrontend(band, scheduler, { id: `${name}/R1`, sampleRateHz: 11e6, txPowerDbm: -60, retuneUs: 100 });
  await radio.tune(ch6);
  const link = new BandHubLink({ endpoint, band, scheduler, id: name, helloMs: 100 });
  return { scheduler, band, radio, link };
}

test('hub messages: bursts round-trip as float32 and int16, malformed ones are named by cause', () => {
  const data = Float32Array.from({ length: 20 }, (_, i) => Math.sin(i) * 0.7);
  const burst = { from: 'a/R1', centerHz: ch6, sampleRateHz: 11e6, startUs: 123456789.25, powerDbm: -42.5, data, count: 10 };
  const f32 = decodeHubMessage(encodeHubMessage({ kind: 'burst', burst }, 'f32')) as Extract<HubMessage, { kind: 'burst' }>;
  assert.deepEqual({ ...f32.burst, data: undefined }, { ...burst, data: undefined });
  assert.deepEqual(f32.burst.data, data);
  const i16 = decodeHubMessage(encodeHubMessage({ kind: 'burst', burst }, 'i16')) as Extract<HubMessage, { kind: 'burst' }>;
  for (let i = 0; i < 20; i++) assert.ok(Math.abs(i16.burst.data[i]! - data[i]!) < 1e-4);
  assert.deepEqual(decodeHubMessage(encodeHubMessage({ kind: 'hello', id: 'nodeA' })), { kind: 'hello', id: 'nodeA' });

  const good = encodeHubMessage({ kind: 'burst', burst }, 'f32');
  const broken = (f: (b: Buffer) => void): Buffer => {
    const b = Buffer.from(good.toString('base64'), 'base64');
    f(b);
    return b;
  };
  assert.deepEqual(decodeHubMessage(good.subarray(0, 20)), { malformed: 'short' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.write('XXXX', 0, 'latin1'))), { malformed: 'magic' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeUInt8(9, 4))), { malformed: 'version' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeUInt8(7, 5))), { malformed: 'kind' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeUInt8(3, 6))), { malformed: 'format' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeUInt8(0, 7))), { malformed: 'id' });
  assert.deepEqual(decodeHubMessage(good.subarray(0, good.length - 4)), { malformed: 'length' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeDoubleLE(Number.NaN, 16))), { malformed: 'field' });
  assert.deepEqual(decodeHubMessage(broken((b) => b.writeFloatLE(Number.POSITIVE_INFINITY, 60))), { malformed: 'samples' });
});

test('two bands linked through a `cogmesh band` process: a burst one sends is decoded from the other’s IQ', async () => {
  const port = await freePort();
  const endpoint = `tcp://127.0.0.1:${port}`;
  const hubProc = spawnCogmesh(['band', '--bind', endpoint, '--stats-interval', '0.1', '--log-format', 'json'], ['ignore', 'pipe', 'pipe']);
  let out = '';
  hubProc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  hubProc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const a = await node('a', endpoint, 1);
  const b = await node('b', endpoint, 2);
  try {
    // Both bands have said hello (every 100 ms): the hub's stats (every 100 ms) count two peers.
    await until('both bands at the hub', () => Promise.resolve(out.includes('"peers":2') ? true : undefined), 60_000, 100);
    const burst = modulateFrame(FRAME, { rateMbps: 1, samplesPerChip: 1 });
    // 300 ms ahead: the burst reaches b's band before b synthesises that time, even on a busy machine.
    const at = a.scheduler.now() + 300_000;
    const sent = a.radio.transmitIq({ data: burst, count: burst.length / 2, atUs: at });
    // b streams from now until past the burst: a first block of 50 ms, then blocks of 1 ms (11000 samples),
    // all asked for at once, so that they follow one another without gaps however busy the machine.
    const first = b.radio.readIq(550_000);
    const count = Math.ceil((at + 5000 - b.scheduler.now()) / 1000);
    const got = await Promise.all([first, ...Array.from({ length: count }, () => b.radio.readIq(11000))]);
    for (let k = 1; k < got.length; k++) assert.equal(got[k]!.startUs, got[k - 1]!.startUs + (k === 1 ? 50_000 : 1000));
    assert.ok(got[0]!.startUs < at && got[count]!.startUs > at + 1000, 'the reads cover the burst (the two clocks agree to a few µs)');
    const iq = new Float32Array(2 * got.reduce((n, blk) => n + blk.count, 0));
    let o = 0;
    for (const blk of got) {
      iq.set(blk.data.subarray(0, 2 * blk.count), o);
      o += 2 * blk.count;
    }
    const frames = new DsssReceiver({ samplesPerChip: 1 }).receive(iq);
    assert.equal(frames.length, 1, JSON.stringify({ link: b.link.counters, band: b.band.iqCounters }));
    assert.deepEqual(frames[0]!.frame, FRAME);
    assert.equal((await sent).late, false);
    assert.equal(a.link.counters.sent, 1);
    assert.equal(b.link.counters.received, 1);
    assert.equal(b.link.counters.late, 0);
    assert.equal(b.band.iqCounters.remote, 1);
    // a does not get its own burst back.
    assert.equal(a.link.counters.received, 0);
  } finally {
    await a.link.close();
    await b.link.close();
    await a.radio.close();
    await b.radio.close();
    await stopAll([hubProc]);
  }
});

test('a burst that arrives after the receiver synthesised its time is counted late; malformed messages are counted and dropped', async () => {
  const port = await freePort();
  const endpoint = `tcp://127.0.0.1:${port}`;
  const hub = await BandHub.listen(endpoint);
  const a = await node('a', endpoint, 1);
  const b = await node('b', endpoint, 2);
  const rogue = new Dealer({ linger: 0 });
  rogue.connect(endpoint);
  try {
    await until('both bands heard', () => Promise.resolve(hub.peerCount === 2 ? true : undefined), 10_000, 50);
    // b has synthesised 1 s ahead already.
    b.band.synthesize(ch6, b.scheduler.now() + 1_000_000, 10, 11e6, -10, new Float32Array(20), 'probe');
    const data = new Float32Array(2 * 1100).fill(0.5);
    await a.radio.transmitIq({ data, count: 1100, atUs: a.scheduler.now() + 20_000 });
    await until('the late burst', () => Promise.resolve(b.link.counters.received === 1 ? true : undefined), 10_000, 20);
    assert.equal(b.link.counters.late, 1);
    assert.equal(b.band.iqCounters.late, 1);
    assert.ok(b.band.iqCounters.lateUs > 99 && b.band.iqCounters.lateUs <= 100.001, `${b.band.iqCounters.lateUs}`);
    await rogue.send(Buffer.from('not a hub message at all, some 48 bytes or more of it'));
    await rogue.send(Buffer.from('short'));
    await until('malformed counted', () => Promise.resolve(hub.counters.malformed === 2 ? true : undefined), 10_000, 20);
    assert.deepEqual(hub.counters.malformedByCause, { magic: 1, short: 1 });
    assert.equal(hub.counters.bursts, 1);
  } finally {
    rogue.close();
    await a.link.close();
    await b.link.close();
    await a.radio.close();
    await b.radio.close();
    await hub.close();
  }
});

test('`cogmesh node` with sim.band.hub links its band to the hub (hellos arrive), and leaves with the hub’s counts logged', async () => {
  const port = await freePort();
  const endpoint = `tcp://127.0.0.1:${port}`;
  const hub = await BandHub.listen(endpoint);
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-band-hub-'));
  const path = join(dir, 'node.json');
  writeFileSync(path, JSON.stringify({ node: { id: 7, name: 'hubbed' }, sim: { band: { hub: endpoint } }, log: { format: 'json' } }));
  const proc = spawnCogmesh(['node', '--config', path], ['ignore', 'pipe', 'pipe']);
  let log = '';
  proc.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  try {
    await until('the node’s hello', () => Promise.resolve(hub.counters.hellos > 0 ? true : undefined), 60_000, 100);
    assert.equal(hub.peerCount, 1);
    assert.match(log, /"event":"band-hub"/);
    await until('the node up', () => Promise.resolve(log.includes('"event":"node-start"') ? true : undefined), 60_000, 100);
  } finally {
    await stopAll([proc]);
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match(log, /"event":"band-hub-stop"/);
});
