import { memoryLogger } from '../support/control-view.js';
import { rawStation } from '../support/raw-station.js';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINK_VERSION, type DownMessage } from '../../radio/medium/link.js';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { MediumServer } from '../../radio/medium/server.js';
import { connectCurveLink, listenCurveLink } from '../../radio/medium/curve-link.js';
import type { Duplex } from 'node:stream';
import type { MacFrame } from '../../radio/medium/types.js';
import { curveKeyPair } from 'zeromq';
import { PacedEngine } from '../../src/core/paced.js';
import { createLogger } from '../../src/core/log.js';
import { UsageError } from '../../src/core/errors.js';
import { freePort } from '../openflow/pki.js';
import { MEDIUM_SETUP } from '../support/medium-setup.js';

const setup = MEDIUM_SETUP;

const sink = () => new Writable({ write: (_c, _e, cb) => cb() });
const quiet = () => createLogger({ level: 'warn', format: 'json', destination: sink() });

async function until(what: string, f: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a medium that holds each station to its address', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-medium-auth-'));
  const path = join(dir, 'medium');
  const { log: serverLog, lines } = memoryLogger();
  let server: MediumServer;
  before(async () => {
    server = new MediumServer(setup, {
      endpoint: `ipc://${path}`,
      log: serverLog,
      silenceUs: 600_000,
    });
    await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a frame claiming another source than the station joined with is refused, counted and logged within a budget; the station's own frames still go", async () => {
    const paced = new PacedEngine();
    paced.start();
    // Router 1 is live and listening on channel 6.
    const r1 = await RemoteMedium.connect({
      endpoint: `ipc://${path}`,
      node: 1,
      name: 'r1',
      position: { xM: 0, yM: 0 },
      paced,
      log: quiet(),
      joinTimeoutMs: 3000,
    });
    const heard: MacFrame[] = [];
    r1.addStation(
      { id: 'r1/R3', node: 1, position: { xM: 0, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: true, channel: 6 },
      { onReceive: (f) => heard.push(f), onSent: () => undefined },
    );
    // Router 2 hears what is sent on channel 6 too: a spoofed frame "from router 1" must not reach it.
    const r2 = await RemoteMedium.connect({
      endpoint: `ipc://${path}`,
      node: 2,
      name: 'r2',
      position: { xM: 50, yM: 0 },
      paced,
      log: quiet(),
      joinTimeoutMs: 3000,
    });
    const heard2: MacFrame[] = [];
    r2.addStation(
      { id: 'r2/R3', node: 2, position: { xM: 50, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: true, channel: 6 },
      { onReceive: (f) => heard2.push(f), onSent: () => undefined },
    );
    const x = await rawStation(path);
    try {
      x.say({ t: 'join', version: LINK_VERSION, node: 9, name: 'x9', position: { xM: 20, yM: 0 } });
      await until('the welcome', () => x.inbox.some((m) => m.t === 'welcome'));
      x.say({ t: 'station', spec: { id: 'x9/R3', acceptsUnicast: true, acceptsBroadcast: true, channel: 6 } });
      await until('three stations on the air', () => server.routers().filter((r) => r.stations.length > 0).length === 3);
      const payload = Uint8Array.of(1, 2, 3, 4);
      const spoofs = 20;
      for (let seq = 0; seq < spoofs; seq++) x.say({ t: 'send', st: 'x9/R3', seq, src: 1, dst: 2, payload });
      await until('every spoofed send to come back', () => x.inbox.filter((m) => m.t === 'sent').length === spoofs);
      for (const m of x.inbox)
        if (m.t === 'sent') assert.deepEqual({ ok: m.outcome.ok, attempts: m.outcome.attempts }, { ok: false, attempts: 0 }, 'aborted, never on the air');
      assert.equal(server.counters.refusedByReason['spoofed-source'], spoofs);
      assert.equal(server.counters.refused, spoofs);
      const logged = lines.filter((l) => l.event === 'medium-refused' && l.reason === 'spoofed-source');
      assert.equal(logged.length, 1, 'one line for the whole burst (LogBudget), not one per frame');

      // The station's own address still works: the same frame from 9 reaches router 2.
      x.say({ t: 'send', st: 'x9/R3', seq: spoofs, src: 9, dst: 2, payload });
      await until('router 2 to hear the honest frame', () => heard2.length === 1);
      assert.equal(heard2[0]!.src, 9);
      assert.equal(heard.length, 0, 'router 1 heard nothing addressed to it');
      assert.equal(server.counters.refusedByReason['spoofed-source'], spoofs, 'the honest frame is not refused');
    } finally {
      x.close();
      r1.close();
      r2.close();
      paced.stop();
    }
  });

  test('a station that joins claiming the address of a live router is refused with the reason, counted, and the router keeps it', async () => {
    const paced = new PacedEngine();
    paced.start();
    const r3 = await RemoteMedium.connect({
      endpoint: `ipc://${path}`,
      node: 3,
      name: 'r3',
      position: { xM: 0, yM: 0 },
      paced,
      log: quiet(),
      joinTimeoutMs: 3000,
    });
    const x = await rawStation(path);
    try {
      const before = server.counters.refusedByReason['address-held'];
      x.say({ t: 'join', version: LINK_VERSION, node: 3, name: 'impostor', position: { xM: 0, yM: 0 } });
      await until('the refusal', () => x.inbox.some((m) => m.t === 'refused'));
      const refusal = x.inbox.find((m) => m.t === 'refused') as Extract<DownMessage, { t: 'refused' }>;
      assert.match(refusal.reason, /address 3 is held by a live router \(r3, heard \d+ ms ago\)/);
      assert.ok(!x.inbox.some((m) => m.t === 'welcome'), 'no welcome');
      assert.equal(server.counters.refusedByReason['address-held'], before + 1);
      assert.ok(
        lines.some((l) => l.event === 'medium-refused' && l.reason === 'address-held'),
        'logged',
      );
      assert.deepEqual(
        server
          .routers()
          .filter((r) => r.node === 3)
          .map((r) => r.name),
        ['r3'],
      );
      // Refused, it is not on the air: what it sends next is refused as not joined.
      x.say({ t: 'station', spec: { id: 'x/R3', acceptsUnicast: true, acceptsBroadcast: true, channel: 6 } });
      await until('a second refusal', () => x.inbox.filter((m) => m.t === 'refused').length === 2);
      assert.ok(server.counters.refusedByReason['not-joined'] >= 1);
    } finally {
      x.close();
      r3.close();
      paced.stop();
    }
  });
});

describe('a medium beyond loopback: CURVE with an allow-list', () => {
  test('refuses to start on a tcp endpoint beyond loopback without CURVE, naming what to do; loopback and ipc need none', () => {
    const log = quiet();
    for (const endpoint of ['tcp://0.0.0.0:7600', 'tcp://*:7600', 'tcp://192.0.2.10:7600', 'tcp://[::]:7600']) {
      assert.throws(
        () => new MediumServer(setup, { endpoint, log }),
        (e: Error) => e instanceof UsageError && /reachable beyond this machine: give the medium CURVE keys/.test(e.message),
        endpoint,
      );
    }
    for (const endpoint of ['tcp://127.0.0.1:7600', 'tcp://localhost:7600', 'tcp://[::1]:7600', 'ipc:///run/cogmesh/medium']) {
      assert.doesNotThrow(() => new MediumServer(setup, { endpoint, log }), endpoint);
    }
    const k = curveKeyPair();
    assert.throws(() => new MediumServer(setup, { endpoint: 'ipc:///run/cogmesh/medium', log, curve: { ...k, allow: [] } }), /CURVE runs over tcp only/);
  });

  test('with CURVE on a non-loopback endpoint an allowed router joins and its frames cross; a stranger is refused and counted', async () => {
    const mediumKeys = curveKeyPair();
    const allowedKeys = curveKeyPair();
    const otherAllowed = curveKeyPair();
    const strangerKeys = curveKeyPair();
    const port = await freePort();
    const server = new MediumServer(setup, {
      endpoint: `tcp://0.0.0.0:${port}`,
      log: quiet(),
      silenceUs: 600_000,
      curve: { ...mediumKeys, allow: [allowedKeys.publicKey, otherAllowed.publicKey] },
    });
    await server.start();
    const paced = new PacedEngine();
    paced.start();
    const endpoint = `tcp://127.0.0.1:${port}`;
    const open: RemoteMedium[] = [];
    try {
      const join = async (node: number, keys: { publicKey: string; secretKey: string }, joinTimeoutMs = 5000) => {
        const m = await RemoteMedium.connect({
          endpoint,
          node,
          name: `r${node}`,
          position: { xM: node * 50, yM: 0 },
          paced,
          log: quiet(),
          joinTimeoutMs,
          curve: { serverKey: mediumKeys.publicKey, ...keys },
        });
        open.push(m);
        return m;
      };
      const a = await join(1, allowedKeys);
      const b = await join(2, otherAllowed);
      assert.equal(a.welcome.bandSeed, 7);
      const heard: MacFrame[] = [];
      const outcomes: boolean[] = [];
      const tx = a.addStation(
        { id: 'r1/R2', node: 1, position: { xM: 50, yM: 0 }, acceptsUnicast: false, acceptsBroadcast: false, channel: 6 },
        { onReceive: () => undefined, onSent: (_f, o) => outcomes.push(o.ok) },
      );
      b.addStation(
        { id: 'r2/R1', node: 2, position: { xM: 100, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: false, channel: 6 },
        { onReceive: (f) => heard.push(f), onSent: () => undefined },
      );
      await until('both radios on the air', () => server.routers().filter((r) => r.stations.length > 0).length === 2);
      const payload = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
      paced.inject(() => assert.ok(tx.send({ src: 1, dst: 2, payload })));
      await until('the frame acknowledged', () => outcomes.length === 1);
      assert.deepEqual(outcomes, [true]);
      assert.deepEqual(heard[0]?.payload, payload);
      assert.ok(server.counters.zapAllowed >= 2);

      // A stranger with a key pair of its own gets no session: no welcome, a clear error, counted.
      await assert.rejects(
        join(9, strangerKeys, 1500),
        (e: Error & { code?: string }) => e.code === 'RADIO_NO_MEDIUM' && e.message.includes(`key ${strangerKeys.publicKey} is not on its allow-list`),
      );
      assert.ok(server.counters.zapDenied >= 1);
      assert.ok(!server.routers().some((r) => r.node === 9), 'the stranger never joined');
      // A router that knows the medium's key but brings none of its own (plain TCP) gets nothing either.
      await assert.rejects(
        RemoteMedium.connect({ endpoint, node: 8, name: 'r8', position: { xM: 0, yM: 0 }, paced, log: quiet(), joinTimeoutMs: 1000 }),
        (e: Error & { code?: string }) => e.code === 'RADIO_NO_MEDIUM',
      );
      assert.ok(!server.routers().some((r) => r.node === 8));
    } finally {
      for (const m of open) m.close();
      paced.stop();
      await server.stop();
    }
  });
});

test('over CURVE, a peer that falls silent has its stream closed, as a closed socket would be; one that speaks again is a new peer', async () => {
  const medium = curveKeyPair();
  const router = curveKeyPair();
  const port = await freePort();
  const accepted: Duplex[] = [];
  const got: string[] = [];
  const server = await listenCurveLink(
    `tcp://127.0.0.1:${port}`,
    { ...medium, allow: [router.publicKey] },
    (s) => {
      accepted.push(s);
      s.on('data', (c: Buffer) => got.push(c.toString()));
    },
    { idleMs: 300 },
  );
  const client = connectCurveLink(`tcp://127.0.0.1:${port}`, { serverKey: medium.publicKey, ...router });
  try {
    const replies: string[] = [];
    client.on('data', (c: Buffer) => replies.push(c.toString()));
    client.write(Buffer.from('hello'));
    await until('the medium to hear it', () => got.length === 1);
    accepted[0]!.write(Buffer.from('welcome'));
    await until('the answer', () => replies.length === 1);
    assert.deepEqual(replies, ['welcome']);
    const closed = new Promise((r) => accepted[0]!.once('close', r));
    await closed;
    client.write(Buffer.from('again'));
    await until('a new peer', () => accepted.length === 2 && got.length === 2);
    assert.equal(accepted[0]!.destroyed, true);
  } finally {
    client.destroy();
    await server.close();
  }
});
