import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { LINK_VERSION } from '../../radio/medium/link.js';
import type { RouteView } from '../../src/routing/aodv.js';
import { encodeControl } from '../../src/wire/codec.js';
import { BROADCAST } from '../../src/wire/mesh.js';
import { LocalTestbed } from '../support/local-testbed.js';
import { rawStation } from '../support/raw-station.js';

/**
 * A testbed run of a shipped scenario as it is, so with R3's authentication
 * on (auth.enabled is true unless a scenario says otherwise): the testbed makes the run's key file, every router daemon signs and checks
 * with it, and a relay the testbed restarts is taken back at once (its index,
 * the boot time in seconds, is newer than any before). Real processes; what
 * is checked is what happens, never how fast.
 */
describe('a testbed with authenticated R3', { timeout: 300_000 }, () => {
  let tb: LocalTestbed;
  before(async () => {
    tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {
      hops: 2,
      set: ['flows=[{"kind":"udp-cbr","src":0,"dst":2,"rateMbps":0.1,"packetBytes":500,"startS":0}]'],
    });
  });
  after(async () => {
    await tb?.stop();
  });

  const auth = async (i: number): Promise<Record<string, number>> => {
    const s = (await tb.status(i)) as unknown as { r3: { auth?: Record<string, number> } };
    assert.ok(s.r3.auth, `router ${i} reports no R3 authentication`);
    return s.r3.auth;
  };
  const udp = async (): Promise<number> => (await tb.flow(2, 0))?.received ?? 0;

  test('the routers sign and verify with the run key, and the flow crosses the relay', async () => {
    await tb.waitFor('UDP through the relay', async () => ((await udp()) >= 20 ? true : undefined), 120_000);
    for (let i = 0; i < 3; i++) {
      // Data can reach the sink before the sink has heard its first HELLO (the relay answers the RREQ): wait for one.
      await tb.waitFor(`router ${i} verified a message`, async () => ((await auth(i)).verified! > 0 ? true : undefined), 60_000);
      const a = await auth(i);
      assert.ok(a.signed! > 0 && a.verified! > 0, `router ${i}: ${JSON.stringify(a)}`);
      assert.deepEqual([a.unknownKey, a.badMac, a.malformedTrailer, a.noTrailer], [0, 0, 0, 0], `router ${i}: ${JSON.stringify(a)}`);
    }
    assert.ok(tb.lines.some((l) => l.proc === 'r0' && typeof l.msg === 'string' && l.msg.includes('its messages authenticated (signed with key 1 of 1)')));
    // No line of any process shows a 256-bit key.
    assert.ok(!tb.lines.some((l) => /[0-9a-f]{64}/i.test(JSON.stringify(l))), 'a key in the log');
  });

  test('a rogue station on the medium, holding no key, moves no route and stops no flow; its forgeries are counted', async () => {
    const R3 = ((await tb.status(0)) as unknown as { r3: { channel: number } }).r3.channel;
    const before = { udp: await udp(), noTrailer: (await auth(0)).noTrailer! };
    const x = await rawStation(join(tb.dir, 'medium'));
    try {
      // Address 9, between router 0 (0 m) and router 1 (200 m), on R3's channel.
      x.say({ t: 'join', version: LINK_VERSION, node: 9, name: 'rogue', position: { xM: 100, yM: 30 } });
      await tb.waitFor('the medium to welcome the rogue', async () => (x.inbox.some((m) => m.t === 'welcome') ? true : undefined), 10_000, 20);
      x.say({ t: 'station', spec: { id: 'rogue/R3', acceptsUnicast: true, acceptsBroadcast: true, channel: R3 } });
      const rrep = encodeControl({
        type: 'rrep',
        repair: false,
        ackRequired: false,
        hopCount: 1,
        dst: 2,
        dstSeq: 0x7ffffff0,
        orig: 0,
        lifetimeMs: 60_000,
        lastHop: 9,
        pathCost: 1,
      });
      const helloAs = (src: number): Uint8Array => encodeControl({ type: 'hello', src, seq: 0x7ffffff0, r1Channel: 6, workload: [], neighbours: [] });
      const rounds = 10;
      let seq = 0;
      for (let i = 0; i < rounds; i++) {
        // An unsolicited RREP to router 0 for router 2, as itself; a HELLO as itself; a HELLO claiming live router 1.
        x.say({ t: 'send', st: 'rogue/R3', seq: seq++, src: 9, dst: 0, payload: rrep });
        x.say({ t: 'send', st: 'rogue/R3', seq: seq++, src: 9, dst: BROADCAST, payload: helloAs(9) });
        x.say({ t: 'send', st: 'rogue/R3', seq: seq++, src: 1, dst: BROADCAST, payload: helloAs(1) });
        await new Promise((r) => setTimeout(r, 300));
      }
      await tb.waitFor(
        'every forged send to come back',
        async () => (x.inbox.filter((m) => m.t === 'sent').length === 3 * rounds ? true : undefined),
        20_000,
        50,
      );
      const sent = x.inbox.flatMap((m) => (m.t === 'sent' ? [m] : []));
      const spoofed = sent.filter((m) => m.seq % 3 === 2);
      assert.ok(
        spoofed.every((m) => !m.outcome.ok && m.outcome.attempts === 0),
        'the medium refused every frame claiming router 1, none went on the air',
      );
      assert.ok(
        tb.lines.some((l) => l.event === 'medium-refused' && l.reason === 'spoofed-source'),
        'the medium logged the spoofed source',
      );
      // What the rogue sent as itself went on the air; router 0 counted and dropped it, unsigned.
      const onAir = sent.filter((m) => m.seq % 3 !== 2 && m.outcome.ok).length;
      assert.ok(onAir >= rounds, `${onAir} of the rogue's own frames on the air`);
      await tb.waitFor(
        "router 0 to count the rogue's messages",
        async () => ((await auth(0)).noTrailer! >= before.noTrailer + Math.floor(onAir / 2) ? true : undefined),
        10_000,
      );
      const r0 = await auth(0);
      assert.equal(r0.badMac, 0, JSON.stringify(r0));
      const reply = await tb.ctl(0).request('routes', {});
      assert.ok(reply.ok, JSON.stringify(reply));
      const routes = reply.result as RouteView[];
      const to2 = routes.find((r) => r.dst === 2);
      assert.equal(to2?.chosen, 1, `router 0 still routes to 2 through router 1: ${JSON.stringify(to2)}`);
      assert.ok(!routes.some((r) => r.dst === 9 || r.paths.some((p) => p.nextHop === 9)), 'no route names the rogue');
      await tb.waitFor('UDP to keep flowing', async () => ((await udp()) > before.udp + 20 ? true : undefined), 60_000);
    } finally {
      x.close();
    }
  });

  test('a relay that restarts is taken back at once: its new index is newer, nothing is refused as a replay', async () => {
    const linesBefore = tb.lines.length;
    tb.dropClients(1);
    await tb.sup.restart('r1');
    await tb.waitFor('r1 back on the air', async () => tb.lines.slice(linesBefore).find((l) => l.proc === 'r1' && l.event === 'node-start'), 60_000, 50);
    const before = await udp();
    await tb.waitFor('UDP through the restarted relay', async () => ((await udp()) > before + 10 ? true : undefined), 120_000);
    for (const i of [0, 2]) {
      const a = await auth(i);
      assert.equal(a.replay, 0, `router ${i}: ${JSON.stringify(a)}`);
      assert.equal(a.badMac, 0);
    }
  });
});
