import { memoryLogger } from '../support/control-view.js';
import { rawLink, rawStation } from '../support/raw-station.js';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LINK_VERSION, type DownMessage } from '../../radio/medium/link.js';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { MediumServer } from '../../radio/medium/server.js';
import { connectCurveLink, listenCurveLink, MediumAllowList, parseMediumAllowed, routerJoinProof } from '../../radio/medium/curve-link.js';
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

/** A router named r<node> joining the medium at `endpoint` over CURVE with `keys`. */
function curveJoin(
  endpoint: string,
  serverKey: string,
  paced: PacedEngine,
  node: number,
  keys: { publicKey: string; secretKey: string },
  joinTimeoutMs = 5000,
) {
  return RemoteMedium.connect({
    endpoint,
    node,
    name: `r${node}`,
    position: { xM: node * 50, yM: 0 },
    paced,
    log: quiet(),
    joinTimeoutMs,
    curve: { serverKey, ...keys },
  });
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
        const m = await curveJoin(endpoint, mediumKeys.publicKey, paced, node, keys, joinTimeoutMs);
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

      // With no key bound to addresses, a join that proves no key (a router of an earlier cogmesh) gets in as before.
      const earlier = connectCurveLink(endpoint, { serverKey: mediumKeys.publicKey, ...otherAllowed });
      try {
        const x = rawLink(earlier);
        x.say({ t: 'join', version: LINK_VERSION, node: 5, name: 'r5', position: { xM: 0, yM: 0 } });
        await until('the welcome', () => x.inbox.some((m) => m.t === 'welcome'));
      } finally {
        earlier.destroy();
      }

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

describe('a medium that holds each CURVE key to the addresses it may join as', () => {
  const mediumKeys = curveKeyPair();
  const bound = curveKeyPair();
  const free = curveKeyPair();
  const { log: serverLog, lines } = memoryLogger();
  let server: MediumServer;
  let endpoint: string;
  const paced = new PacedEngine();
  before(async () => {
    const port = await freePort();
    endpoint = `tcp://127.0.0.1:${port}`;
    server = new MediumServer(setup, {
      endpoint: `tcp://0.0.0.0:${port}`,
      log: serverLog,
      silenceUs: 600_000,
      curve: { ...mediumKeys, allow: [parseMediumAllowed(`${bound.publicKey}=1`), parseMediumAllowed(free.publicKey)] },
    });
    await server.start();
    paced.start();
  });
  after(async () => {
    paced.stop();
    await server.stop();
  });
  const join = (node: number, keys: { publicKey: string; secretKey: string }, joinTimeoutMs = 5000) =>
    curveJoin(endpoint, mediumKeys.publicKey, paced, node, keys, joinTimeoutMs);

  test('a key bound to address 1 joining as 2 is refused with the reason, counted and logged; as 1 it joins', async () => {
    await assert.rejects(
      join(2, bound, 1200),
      (e: Error & { code?: string }) => e.code === 'RADIO_NO_MEDIUM' && e.message.includes(`key ${bound.publicKey} may join as 1, not as 2`),
    );
    assert.ok(server.counters.refusedByReason['key-address'] >= 1);
    assert.ok(!server.routers().some((r) => r.node === 2), 'never on the air as 2');
    assert.ok(lines.some((l) => l.event === 'medium-refused' && l.reason === 'key-address' && l.node === 2 && l.key === bound.publicKey));
    const ok = await join(1, bound);
    try {
      assert.deepEqual(
        server.routers().map((r) => r.node),
        [1],
      );
    } finally {
      ok.close();
    }
  });

  test('a key allowed without addresses joins as any free address', async () => {
    const a = await join(7, free);
    const b = await join(300, { ...free });
    try {
      assert.ok(server.routers().some((r) => r.node === 7));
      assert.ok(server.routers().some((r) => r.node === 300));
    } finally {
      a.close();
      b.close();
    }
  });

  test("a join that names another router's key without its secret, or proves no key, is refused", async () => {
    // An allowed key's holder claims the bound key of router 1, with a proof made with its own secret key.
    const c = connectCurveLink(endpoint, { serverKey: mediumKeys.publicKey, ...free });
    const x = rawLink(c);
    try {
      const before = server.counters.refusedByReason['key-address'];
      const forged = routerJoinProof({ serverKey: mediumKeys.publicKey, publicKey: bound.publicKey, secretKey: free.secretKey }, 1);
      x.say({ t: 'join', version: LINK_VERSION, node: 1, name: 'impostor', position: { xM: 0, yM: 0 }, ...forged });
      await until('the refusal', () => x.inbox.some((m) => m.t === 'refused'));
      assert.match(
        (x.inbox[0] as { reason: string }).reason,
        new RegExp(`the join's proof does not hold for key ${bound.publicKey.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
      x.say({ t: 'join', version: LINK_VERSION, node: 1, name: 'impostor', position: { xM: 0, yM: 0 } });
      await until('a second refusal', () => x.inbox.filter((m) => m.t === 'refused').length === 2);
      assert.match((x.inbox[1] as { reason: string }).reason, /the join as 1 proves no CURVE key/);
      assert.equal(server.counters.refusedByReason['key-address'], before + 2);
      assert.ok(!x.inbox.some((m) => m.t === 'welcome'));
    } finally {
      c.destroy();
    }
  });
});

test('--allow values: KEY or KEY=ADDR[,ADDR...]; anything else is refused naming the value', () => {
  const k = curveKeyPair().publicKey;
  assert.equal(parseMediumAllowed(k), k);
  assert.deepEqual(parseMediumAllowed(`${k}=1,2,2,65534`), { key: k, addresses: [1, 2, 65534] });
  // Z85 has '=' among its characters: a key may hold one, and the addresses still start after the 40th.
  const withEq = `${'0'.repeat(39)}=`;
  assert.deepEqual(parseMediumAllowed(`${withEq}=3`), { key: withEq, addresses: [3] });
  for (const [bad, why] of [
    ['abc', /"abc" is not KEY or KEY=ADDR\[,ADDR\.\.\.\].*3 characters, not 40/],
    [`${k}x`, /is not KEY or KEY=ADDR/],
    [`${k}=`, /"" is not a mesh address/],
    [`${k}=1,,2`, /"" is not a mesh address/],
    [`${k}=1,two`, /"two" is not a mesh address \(KEY=ADDR\[,ADDR\.\.\.\], each address 0\.\.65534\)/],
    [`${k}=65535`, /"65535" is not a mesh address/],
    [`${k}=-1`, /"-1" is not a mesh address/],
  ] as const) {
    assert.throws(
      () => parseMediumAllowed(bad),
      (e: Error) => e instanceof UsageError && e.message.startsWith(`--allow: "${bad}"`) && why.test(e.message) && !e.message.includes('\n'),
      bad,
    );
  }
  assert.throws(() => new MediumAllowList([k, `${k}=1`].map(parseMediumAllowed)), /key .* is given twice/);
  const list = new MediumAllowList([parseMediumAllowed(`${k}=4,5`)]);
  assert.deepEqual([list.mayUse(k, 4), list.mayUse(k, 5), list.mayUse(k, 6)], [true, true, false]);
});

test("the medium's counters in a 'medium-stats' line every interval when they changed, and a final one when it stops", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-medium-stats-'));
  const path = join(dir, 'medium');
  const { log, lines } = memoryLogger();
  const server = new MediumServer(setup, { endpoint: `ipc://${path}`, log, statsIntervalUs: 300_000 });
  await server.start();
  const stats = () => lines.filter((l) => l.event === 'medium-stats');
  try {
    // Nothing happens: no line, however many intervals pass.
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(stats().length, 0);
    const x = await rawStation(path);
    x.say({ t: 'beat' });
    await until('a stats line', () => stats().length === 1);
    const line = stats()[0]!;
    assert.equal(line.final, false);
    assert.equal(line.refused, 1);
    assert.equal(line['refused.not-joined'], 1);
    assert.equal(line['refused.key-address'], undefined, 'reasons at 0 are left out');
    assert.equal(line.received, 1);
    assert.equal(line.zapDenied, 0);
    x.close();
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const last = stats().at(-1)!;
  assert.equal(last.final, true);
  assert.equal(last['refused.not-joined'], 1);
});
