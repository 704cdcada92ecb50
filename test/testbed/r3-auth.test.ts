import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LocalTestbed } from '../support/local-testbed.js';

/**
 * A testbed run with R3's authentication on (the scenario's auth.enabled):
 * the testbed makes the run's key file, every router daemon signs and checks
 * with it, and a relay the testbed restarts is taken back at once (its index,
 * the boot time in seconds, is newer than any before). Real processes; what
 * is checked is what happens, never how fast.
 */
describe('a testbed with authenticated R3', { timeout: 300_000 }, () => {
  let tb: LocalTestbed;
  before(async () => {
    tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {
      hops: 2,
      set: ['auth.enabled=true', 'flows=[{"kind":"udp-cbr","src":0,"dst":2,"rateMbps":0.1,"packetBytes":500,"startS":0}]'],
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
