import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { LocalTestbed } from '../support/local-testbed.js';

/**
 * A key rotation on a running mesh (docs/wire.md), without a restart: two
 * router daemons of a testbed with authenticated R3 and a UDP flow between
 * them. The new key goes into the shared key file and every router reloads
 * it (SIGHUP), every router signs with it (`set routing.auth.sendKeyId`), the
 * old key leaves the file and every router reloads again. Routing stays
 * verified throughout: no message is refused, by reason of MAC or key. A
 * spoiled file and bad sets are refused whole on the way. Real processes;
 * what is checked is what happens, never how fast.
 */
describe('an R3 key rotation by reload on two router daemons', { timeout: 300_000 }, () => {
  let tb: LocalTestbed;
  before(async () => {
    tb = await LocalTestbed.start('config/scenarios/testbed-chain.json', {
      hops: 1,
      set: ['auth.enabled=true', 'flows=[{"kind":"udp-cbr","src":0,"dst":1,"rateMbps":0.1,"packetBytes":500,"startS":0}]'],
    });
  });
  after(async () => {
    await tb?.stop();
  });

  interface R3View {
    auth: Record<string, number>;
    keys: { sendKeyId: number; ids: number[] };
  }
  const r3 = async (i: number): Promise<R3View> => {
    const s = (await tb.status(i)) as unknown as { r3: Partial<R3View> };
    assert.ok(s.r3.auth && s.r3.keys, `router ${i} reports no R3 authentication`);
    return s.r3 as R3View;
  };
  const ROUTERS = [0, 1];
  const udp = async (): Promise<number> => (await tb.flow(1, 0))?.received ?? 0;
  /** Waits until every router has verified `more` messages beyond what it had now. */
  const moreVerified = async (what: string, more = 3): Promise<void> => {
    const was = await Promise.all(ROUTERS.map(async (i) => (await r3(i)).auth.verified!));
    for (const i of ROUTERS) {
      await tb.waitFor(
        `router ${i} verifies ${more} messages ${what}`,
        async () => ((await r3(i)).auth.verified! >= was[i]! + more ? true : undefined),
        60_000,
      );
    }
  };
  const keyHex = (): string => randomBytes(32).toString('hex');
  /** Writes the key file whole at once (a reader never sees half of it). */
  const writeKeys = (file: string, text: string): void => {
    writeFileSync(`${file}.new`, text, { mode: 0o600 });
    renameSync(`${file}.new`, file);
  };
  /** Sends SIGHUP to every router and waits for each to show `keys` in force. */
  const reloadAll = async (keys: R3View['keys']): Promise<void> => {
    for (const i of ROUTERS) {
      assert.ok(tb.sup.kill(`r${i}`, 'SIGHUP'), `r${i} runs`);
      await tb.waitFor(
        `router ${i} with keys ${JSON.stringify(keys)}`,
        async () => (JSON.stringify((await r3(i)).keys) === JSON.stringify(keys) ? true : undefined),
        30_000,
        100,
      );
    }
  };
  const set = async (i: number, values: Record<string, unknown>) => tb.ctl(i).request('set', { values });

  test('the new key added, signed with, the old one removed: the flow goes on and nothing is refused', async () => {
    await tb.waitFor('UDP from router 0 to router 1', async () => ((await udp()) >= 10 ? true : undefined), 120_000);
    await moreVerified('before the rotation', 1);
    const got = await tb.ctl(0).request('get', { path: 'routing.auth.keyFile' });
    assert.ok(got.ok, JSON.stringify(got));
    const file = (got.result as { value: string }).value;
    const old = (JSON.parse(readFileSync(file, 'utf8')) as { keys: Array<{ id: number; hex: string }> }).keys;
    assert.deepEqual(
      old.map((k) => k.id),
      [1],
    );
    const fresh = { id: 2, hex: keyHex() };

    // 1. The new key in the file, reloaded everywhere: both keys are accepted, key 1 still signs.
    writeKeys(file, JSON.stringify({ keys: [...old, fresh] }));
    await reloadAll({ sendKeyId: 1, ids: [1, 2] });
    await moreVerified('with both keys in force');

    // A spoiled file is refused whole by a reload: one line naming the problem, the keys in force stay.
    const linesBefore = tb.lines.length;
    writeKeys(file, '{"keys": [');
    assert.ok(tb.sup.kill('r0', 'SIGHUP'));
    const refused = await tb.waitFor(
      'the refusal',
      async () => tb.lines.slice(linesBefore).find((l) => l.proc === 'r0' && l.event === 'r3-keys-refused'),
      30_000,
      100,
    );
    assert.match(
      String(refused.msg),
      /SIGHUP: the R3 key file was refused whole, the keys in force stay \(signing with key 1 of 1, 2\): routing\.auth\.keyFile .*expected a JSON key file/,
    );
    assert.deepEqual((await r3(0)).keys, { sendKeyId: 1, ids: [1, 2] });
    // So is a set while the file is spoiled, whole: the version does not move.
    const version = ((await tb.status(0)) as unknown as { configVersion: string }).configVersion;
    const spoiled = await set(0, { 'routing.auth.sendKeyId': 2 });
    assert.ok(!spoiled.ok && /expected a JSON key file/.test(spoiled.error.message), JSON.stringify(spoiled));
    assert.equal(((await tb.status(0)) as unknown as { configVersion: string }).configVersion, version);
    writeKeys(file, JSON.stringify({ keys: [...old, fresh] }));
    // A send key that is not in the file, and turning authentication off, are refused too.
    const missing = await set(0, { 'routing.auth.sendKeyId': 3 });
    assert.ok(!missing.ok && /sendKeyId/.test(missing.error.message), JSON.stringify(missing));
    const off = await set(0, { 'routing.auth.keyFile': '' });
    assert.ok(!off.ok && off.error.code === 'CONTROL_RESTART_ONLY', JSON.stringify(off));
    assert.deepEqual((await r3(0)).keys, { sendKeyId: 1, ids: [1, 2] });

    // 2. Every router signs with the new key.
    for (const i of ROUTERS) {
      const r = await set(i, { 'routing.auth.sendKeyId': 2 });
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepEqual((await r3(i)).keys, { sendKeyId: 2, ids: [1, 2] });
    }
    await moreVerified('signed with the new key');

    // 3. The old key out of the file, reloaded everywhere.
    const receivedBefore = await udp();
    writeKeys(file, JSON.stringify({ keys: [fresh] }));
    await reloadAll({ sendKeyId: 2, ids: [2] });
    await moreVerified('with the new key alone');
    await tb.waitFor('UDP after the rotation', async () => ((await udp()) > receivedBefore + 10 ? true : undefined), 60_000);

    for (const i of ROUTERS) {
      const a = (await r3(i)).auth;
      assert.deepEqual([a.badMac, a.unknownKey, a.replay, a.malformedTrailer, a.noTrailer], [0, 0, 0, 0, 0], `router ${i}: ${JSON.stringify(a)}`);
    }
    assert.equal(tb.lines.filter((l) => l.event === 'r3-keys-reloaded' && l.why === 'SIGHUP').length, 4, 'two reloads on each router');
    assert.equal(tb.lines.filter((l) => l.event === 'r3-keys-reloaded' && l.why === 'set').length, 2, 'a set on each router');
    // No line of any process shows a 256-bit key.
    assert.ok(!tb.lines.some((l) => /[0-9a-f]{64}/i.test(JSON.stringify(l))), 'a key in the log');
  });
});
