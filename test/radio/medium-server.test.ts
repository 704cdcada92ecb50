import { memoryLogger } from '../support/control-view.js';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLink, LINK_VERSION, parseDown } from '../../radio/medium/link.js';
import { MessageReader } from '../../radio/medium/transport.js';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { MediumServer } from '../../radio/medium/server.js';
import type { MacFrame, SendOutcome, Station } from '../../radio/medium/types.js';
import { RangeArgumentError } from '../../src/core/errors.js';
import { PacedEngine } from '../../src/core/paced.js';
import { createLogger } from '../../src/core/log.js';
import { MEDIUM_SETUP } from '../support/medium-setup.js';

const quiet = () => createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

const setup = MEDIUM_SETUP;

// A socket path of this test's own: another run on the machine cannot collide with it.
const dir = mkdtempSync(join(tmpdir(), 'cm-medium-'));
const endpoint = `ipc://${join(dir, 'medium')}`;

/** A link message with its length in front, as it goes on the stream. */
const framed = (m: Uint8Array): Uint8Array => {
  const out = new Uint8Array(4 + m.byteLength);
  new DataView(out.buffer).setUint32(0, m.byteLength);
  out.set(m, 4);
  return out;
};

/** One router's side: a paced engine, the link, and what its radios heard. */
async function router(node: number, xM: number) {
  const paced = new PacedEngine();
  paced.start();
  const medium = await RemoteMedium.connect({ endpoint, node, name: `r${node}`, position: { xM, yM: 0 }, paced, log: quiet(), joinTimeoutMs: 3000 });
  const heard: MacFrame[] = [];
  const outcomes: SendOutcome[] = [];
  const attach = (id: string, channel: number, unicast: boolean): Station =>
    medium.addStation(
      { id, node, position: { xM, yM: 0 }, acceptsUnicast: unicast, acceptsBroadcast: false, channel },
      { onReceive: (f) => heard.push(f), onSent: (_f, o) => outcomes.push(o) },
    );
  return { paced, medium, heard, outcomes, attach, close: () => (medium.close(), paced.stop()) };
}

async function until(what: string, f: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the air medium as a process of its own', () => {
  let server: MediumServer;
  before(async () => {
    server = new MediumServer(setup, { endpoint, log: quiet(), silenceUs: 600_000 });
    await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a joining router gets what it needs to sense the same band: seed, epoch, band, channels', async () => {
    const a = await router(1, 0);
    try {
      const w = a.medium.welcome;
      assert.equal(w.bandSeed, 7);
      assert.equal(w.epochUs, server.epochUs);
      assert.equal(w.channels, 11);
      assert.deepEqual(w.phy, setup.phy);
    } finally {
      a.close();
    }
  });

  test('a unicast frame crosses the medium: the receiver hears it, the sender hears it acknowledged; a silent router leaves the air', async () => {
    const a = await router(1, 0);
    const b = await router(2, 200);
    try {
      const tx = a.attach('r1/R2', 6, false);
      b.attach('r2/R1', 6, true);
      await until('both routers on the air', () => server.routers().filter((r) => r.stations.length > 0).length === 2);
      const payload = Uint8Array.from({ length: 500 }, (_, i) => i & 0xff);
      a.paced.inject(() => assert.ok(tx.send({ src: 1, dst: 2, payload }), 'the send is taken'));
      assert.equal(tx.serviceAttempts, 0, 'in service, not yet on the air');
      await until('the ACK', () => a.outcomes.length === 1);
      assert.equal(a.outcomes[0]!.ok, true, JSON.stringify(a.outcomes[0]));
      assert.equal(b.heard.length, 1);
      assert.deepEqual(b.heard[0]!.payload, payload);
      assert.equal(tx.idle, true);

      // Router 2 dies without a word: after the silence limit its radio is off the air and frames to it go unacknowledged.
      b.medium.close();
      b.paced.stop();
      await until('router 2 to be taken for gone', () => !server.routers().some((r) => r.node === 2), 3000);
      a.paced.inject(() => tx.send({ src: 1, dst: 2, payload }));
      await until('the retry limit', () => a.outcomes.length === 2);
      assert.deepEqual({ ok: a.outcomes[1]!.ok, reason: (a.outcomes[1] as { reason?: string }).reason }, { ok: false, reason: 'retry-limit' });
    } finally {
      a.close();
      b.close();
    }
  });

  test('an address held by a live router is not taken by a second process', async () => {
    const a = await router(7, 0);
    try {
      const paced = new PacedEngine();
      await assert.rejects(
        RemoteMedium.connect({ endpoint, node: 7, name: 'r7-again', position: { xM: 0, yM: 0 }, paced, log: quiet(), joinTimeoutMs: 1500 }),
        (e: Error & { code?: string }) => e.code === 'RADIO_NO_MEDIUM' && /held by a live router \(r7/.test(e.message),
      );
      assert.ok(
        server.routers().some((r) => r.node === 7 && r.name === 'r7'),
        'the first keeps it',
      );
    } finally {
      a.close();
    }
  });

  test('malformed messages are counted and dropped; a router that has not joined is told so; a broken stream is closed', async () => {
    const c = net.connect({ path: join(dir, 'medium') });
    const reader = new MessageReader();
    const inbox: Buffer[] = [];
    c.on('data', (chunk: Buffer) => {
      const got = reader.push(chunk);
      if (!(got instanceof Error)) inbox.push(...got);
    });
    await new Promise((r) => c.once('connect', r));
    try {
      const before = server.counters.malformed;
      c.write(framed(new TextEncoder().encode('{"t":"send","st":"x"')));
      c.write(framed(encodeLink({ t: 'retune', st: 'r9/R2', channel: 3, overheadUs: 0 })));
      await until('a refusal', () => inbox.length >= 1, 3000);
      const m = parseDown(inbox.shift()!);
      assert.ok(m.errors.length === 0 && m.messages[0]?.t === 'refused', `expected a refusal, got ${JSON.stringify(m)}`);
      assert.equal(server.counters.malformed, before + 1);
      // The medium still serves joins on the same connection.
      c.write(framed(encodeLink({ t: 'join', version: LINK_VERSION, node: 40, name: 'r40', position: { xM: 0, yM: 0 } })));
      await until('a welcome', () => inbox.length >= 1, 3000);
      assert.ok(parseDown(inbox.shift()!).messages[0]?.t === 'welcome', 'welcomed after the malformed ones');
      assert.ok(server.routers().some((r) => r.node === 40));
      // A length no link message has: the stream cannot be trusted, the medium closes it, and the router leaves the air.
      const closed = new Promise((r) => c.once('close', r));
      c.write(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 2, 3));
      await closed;
      await until('r40 to leave the air', () => !server.routers().some((r) => r.node === 40), 3000);
      assert.equal(server.counters.malformed, before + 2);
    } finally {
      c.destroy();
    }
  });

  test('a router whose connection closes leaves the air at once, and one that connects again is back', async () => {
    const a = await router(21, 0);
    try {
      await until('r21 on the air', () => server.routers().some((r) => r.node === 21));
    } finally {
      a.close();
    }
    await until('r21 to leave the air', () => !server.routers().some((r) => r.node === 21), 2000);
    const b = await router(21, 0);
    try {
      await until('r21 back on the air', () => server.routers().some((r) => r.node === 21));
    } finally {
      b.close();
    }
  });

  test('a window of frames at a remote radio: a retune gives back all it holds (none goes out on the new channel), a hold those behind the one in service', async () => {
    const a = await router(31, 0);
    const b = await router(32, 100);
    try {
      const done: Array<{ id: number; ok: boolean; attempts: number }> = [];
      const tx = a.medium.addStation(
        { id: 'r31/R2', node: 31, position: { xM: 0, yM: 0 }, acceptsUnicast: false, acceptsBroadcast: false, channel: 6 },
        { onReceive: () => undefined, onSent: (f, o) => done.push({ id: f.payload[0]!, ok: o.ok, attempts: o.attempts }) },
      );
      // Router 32 listens on both channels: what arrives on each is told apart.
      const heard = new Map<number, number[]>([
        [6, []],
        [11, []],
      ]);
      for (const ch of [6, 11]) {
        b.medium.addStation(
          { id: `r32/ch${ch}`, node: 32, position: { xM: 100, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: false, channel: ch },
          { onReceive: (f) => heard.get(ch)!.push(f.payload[0]!), onSent: () => undefined },
        );
      }
      await until('both routers on the air', () => server.routers().filter((r) => r.node >= 31 && r.stations.length > 0).length === 2);
      // 1000-byte frames at 2 Mbps: about 4.5 ms each on the air, 20 of them: a loaded machine's late retune still finds some queued.
      const frame = (id: number) => ({ src: 31, dst: 32, payload: new Uint8Array(1000).fill(id) });
      a.paced.inject(() => {
        for (let id = 0; id < 20; id++) assert.ok(tx.send(frame(id)));
      });
      await until('the first frame acknowledged', () => done.length >= 1);
      a.paced.inject(() => tx.retune(11, 0));
      await until('every frame back', () => done.length === 20);
      const ok1 = done.filter((d) => d.ok).map((d) => d.id);
      assert.ok(ok1.includes(0));
      // The frame in service when the retune came (given back after an attempt) may have reached router 32 with
      // its ACK still to come: the sender left the channel first, as an 802.11 radio that retunes then would.
      const cut = done.filter((d) => !d.ok && d.attempts > 0).map((d) => d.id);
      assert.ok(cut.length <= 1, `one exchange at most was cut: ${JSON.stringify(cut)}`);
      assert.deepEqual(
        heard.get(6)!.filter((id) => !cut.includes(id)),
        ok1,
        'on channel 6: exactly the frames acknowledged (and perhaps the one cut in its ACK)',
      );
      assert.deepEqual(heard.get(11), [], 'nothing queued for channel 6 went out on 11');
      assert.ok(ok1.length < 20, 'some were given back');
      assert.deepEqual(
        done.map((d) => d.id).sort((x, y) => x - y),
        Array.from({ length: 20 }, (_, i) => i),
        'each once',
      );

      // On channel 11 now: twenty more, and a hold once the first is on the air.
      a.paced.inject(() => {
        for (let id = 100; id < 120; id++) assert.ok(tx.send(frame(id)));
      });
      await until('the first exchange on the air', () => (tx.serviceAttempts ?? 0) > 0);
      a.paced.inject(() => tx.hold());
      await until('every frame back', () => done.length === 40);
      const second = done.slice(20);
      assert.deepEqual(
        second.map((d) => d.id).sort((x, y) => x - y),
        Array.from({ length: 20 }, (_, i) => 100 + i),
        'each once',
      );
      assert.deepEqual(
        heard.get(11),
        second.filter((d) => d.ok).map((d) => d.id),
        'on channel 11: exactly the frames acknowledged',
      );
      assert.equal(second.find((d) => d.id === 100)?.ok, true, 'the one in service went on');
      assert.ok(
        second.some((d) => !d.ok),
        'those behind it came back',
      );
      assert.equal(tx.idle, true);
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('a medium that fails safely', () => {
  const faultDir = mkdtempSync(join(tmpdir(), 'cm-medium-faults-'));
  const faultEndpoint = `ipc://${join(faultDir, 'medium')}`;
  const { log: serverLog, lines } = memoryLogger();
  let server: MediumServer;
  before(async () => {
    // A PN that is never on, on the test's channel: the medium asks the band about channel 6 (it asks
    // nothing about a channel no PN is configured on), and the band's answers are where the fault goes in.
    const band = { ...setup.band, pn: [{ channel: 6, powerDbm: -90, pattern: { kind: 'off' as const } }] };
    server = new MediumServer(
      { ...setup, band },
      {
        endpoint: faultEndpoint,
        log: serverLog,
        silenceUs: 600_000,
      },
    );
    await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(faultDir, { recursive: true, force: true });
  });

  test('a fault while serving messages, or in an event of the MAC, is counted by reason and logged a few times, and the medium goes on', async () => {
    const paced = new PacedEngine();
    paced.start();
    const log = quiet();
    const a = await RemoteMedium.connect({ endpoint: faultEndpoint, node: 1, name: 'r1', position: { xM: 0, yM: 0 }, paced, log, joinTimeoutMs: 3000 });
    const b = await RemoteMedium.connect({ endpoint: faultEndpoint, node: 2, name: 'r2', position: { xM: 100, yM: 0 }, paced, log, joinTimeoutMs: 3000 });
    try {
      const outcomes: SendOutcome[] = [];
      const heard: MacFrame[] = [];
      const tx = a.addStation(
        { id: 'r1/R2', node: 1, position: { xM: 0, yM: 0 }, acceptsUnicast: false, acceptsBroadcast: false, channel: 6 },
        { onReceive: () => undefined, onSent: (_f, o) => outcomes.push(o) },
      );
      b.addStation(
        { id: 'r2/R1', node: 2, position: { xM: 100, yM: 0 }, acceptsUnicast: true, acceptsBroadcast: false, channel: 6 },
        {
          onReceive: (f) => heard.push(f),
          onSent: () => undefined,
        },
      );
      await until('both radios on the air', () => server.routers().filter((r) => r.node <= 2 && r.stations.length > 0).length === 2);
      // The band fails every question about PN bursts, as it did for a channel idle past its history:
      // every send and every access of the MAC meets the fault.
      const band = server.band as { pnBusyIntervals: typeof server.band.pnBusyIntervals };
      band.pnBusyIntervals = () => {
        throw new RangeArgumentError('time', 0, 'a band that fails (test)');
      };
      const payload = new Uint8Array(200).fill(7);
      paced.inject(() => {
        for (let i = 0; i < 40; i++) tx.send({ src: 1, dst: 2, payload });
      });
      // And an event of the MAC's engine that throws, run from a timer wake-up.
      server.paced.inject((now) =>
        server.paced.engine.at(now + 2000, () => {
          throw new TypeError('an event failed (test)');
        }),
      );
      await until('every send to end', () => outcomes.length === 40);
      await until('the faulty event to run', () => (server.counters.faultsByReason.TypeError ?? 0) === 1);
      assert.ok(
        outcomes.every((o) => !o.ok && o.reason === 'aborted'),
        'each send the medium could not carry out came back aborted',
      );
      // The first fault took router 1 off the air (its radio's state was in doubt) and it joined again;
      // the sends behind it were refused as those of a router not joined, and came back with the rejoin.
      assert.ok((server.counters.faultsByReason.CORE_OUT_OF_RANGE ?? 0) >= 1, JSON.stringify(server.counters));
      assert.equal(server.counters.faults, server.counters.faultsByReason.CORE_OUT_OF_RANGE! + 1);
      assert.ok(a.counters.rejoins >= 1, 'router 1 joined again');
      const faultLines = lines.filter((l) => l.event === 'medium-fault');
      assert.deepEqual(
        faultLines.map((l) => l.reason).sort(),
        ['CORE_OUT_OF_RANGE', 'TypeError'],
        `one line for each reason, not one per fault: ${JSON.stringify(faultLines)}`,
      );

      // The band answers again: frames cross, on the same medium process.
      delete (band as Partial<typeof band>).pnBusyIntervals;
      await until('router 1 back on the air', () => server.routers().some((r) => r.node === 1 && r.stations.length === 1));
      paced.inject(() => tx.send({ src: 1, dst: 2, payload }));
      await until('the frame acknowledged', () => outcomes.length === 41);
      assert.equal(outcomes[40]!.ok, true, JSON.stringify(outcomes[40]));
      assert.equal(heard.length, 1);
    } finally {
      a.close();
      b.close();
      paced.stop();
    }
  });
});
