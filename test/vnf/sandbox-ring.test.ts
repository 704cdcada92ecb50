import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { VnfSandbox, type SandboxTuning } from '../../src/vnf/sandbox.js';
import type { VnfPacket } from '../../src/vnf/types.js';
import { ipv4 } from '../../src/wire/tcp.js';

// The sandbox's calls and replies through its rings (src/core/ring.ts): small rings, so that
// records wrap, fill the ring and outgrow it.
const fixtures = new URL('./fixtures/misbehaving.ts', import.meta.url).href;
const modules = ['spinner', 'echo', 'quitter'].map((e) => ({ url: fixtures, export: e }));
const FLOW = { proto: 'tcp' as const };

/** A TCP packet to port 5001 of `n` bytes whose contents say which packet it is. */
const pkt = (id: number, n: number): VnfPacket => {
  const bytes = Uint8Array.from({ length: n }, (_, i) => (id * 13 + i) & 0xff);
  bytes.set([0, 80, 19, 137]);
  return { proto: 'tcp', src: ipv4(10, 0, 0, 1), dst: ipv4(10, 0, 0, 2), bytes, tag: id, hops: id % 7 };
};

const open: VnfSandbox[] = [];
const sandbox = async (type: string, tuning: Partial<SandboxTuning> = {}, callBudgetMs = 2000): Promise<VnfSandbox> => {
  const s = new VnfSandbox({ type, flow: FLOW, params: {}, seed: 1, now: 0, modules }, { memoryMb: 48, callBudgetMs }, tuning);
  open.push(s);
  return s.ready();
};
after(async () => {
  for (const s of open) await s.stop(0);
});

describe('VNF sandbox: its rings', () => {
  test('many packets pipelined through small rings, some longer than a ring: all taken, echoed in order and byte for byte', async () => {
    for (const tuning of [{ ringBytes: 1024 }, { ringBytes: 1024, hostSpinUs: 0, workerSpinUs: 0 }]) {
      const s = await sandbox('echo', tuning);
      const rng = Rng.fromSeed(3);
      const sent = Array.from({ length: 400 }, (_, i) => pkt(i, i % 50 === 7 ? rng.int(1500, 9000) : rng.int(5, 600)));
      const taken = await Promise.all(sent.map((p, i) => s.intercept(p, 1000 + i)));
      assert.ok(
        taken.every((t) => t),
        'every packet taken',
      );
      const { packets } = s.poll();
      assert.equal(packets.length, sent.length);
      for (let i = 0; i < sent.length; i++) assert.deepEqual(packets[i], sent[i], `packet ${i} (${JSON.stringify(tuning)})`);
      assert.equal((await s.info())?.counters.echoed, sent.length);
      assert.equal(s.nextDeadline(), 1000 + sent.length - 1 + 1000, 'the deadline of the last reply');
    }
  });

  test('one packet at a time, sizes that walk the ring end, and one longer than the ring', async () => {
    const s = await sandbox('echo', { ringBytes: 256 });
    for (let i = 0; i < 300; i++) {
      const p = pkt(i, i === 150 ? 5000 : 5 + i);
      assert.equal(await s.intercept(p, i), true);
      assert.deepEqual(s.poll().packets, [p], `packet ${i}`);
    }
  });

  test('a worker that dies in the middle of a call: replies before it count, the calls in flight answer "not taken"', async () => {
    const s = await sandbox('quitter', { ringBytes: 512 });
    const taken = await Promise.all([1, 2, 3, 4, 5].map((i) => s.intercept(pkt(i, 40), i)));
    assert.deepEqual(taken, [true, true, false, false, false]);
    assert.equal(s.state, 'failed');
    assert.match(s.reason ?? '', /exited \(code 7\)/);
    const out = s.poll();
    assert.deepEqual(
      out.packets.map((p) => p.tag),
      [1, 2],
    );
    assert.ok(out.events.some((e) => e.kind === 'failed'));
    assert.equal(await s.intercept(pkt(6, 40), 6), false, 'failed: forwarding');
  });

  test('stop answers calls still waiting for room in the call ring, and an idle worker asleep on its ring is terminated', async () => {
    const busy = await sandbox('spinner', { ringBytes: 256 }, 60_000);
    // The first call spins for ever; the rest fill the ring and wait behind it.
    const pending = Array.from({ length: 20 }, (_, i) => busy.intercept(pkt(i, 100), i));
    await new Promise((r) => setTimeout(r, 50));
    await busy.stop(0);
    assert.deepEqual(await Promise.all(pending), new Array<boolean>(20).fill(false));
    assert.equal(busy.state, 'stopped');

    const idle = await sandbox('echo', { workerSpinUs: 0 });
    assert.equal(await idle.intercept(pkt(1, 10), 0), true);
    await new Promise((r) => setTimeout(r, 50));
    await idle.stop(0);
    assert.equal(idle.state, 'stopped');
  });

  test("the watchdog counts a call's budget from when the call began, not from an earlier call's", async () => {
    // The echo's first call is answered at once, but its timer runs on; calls made as another
    // sandbox's watchdog fires, in the same turn as that timer, must not be failed by it.
    for (let round = 0; round < 3; round++) {
      const good = await sandbox('echo', {}, 300);
      const bad = await sandbox('spinner', {}, 300);
      assert.deepEqual(await Promise.all([bad.intercept(pkt(1, 10), 0), good.intercept(pkt(1, 10), 0)]), [false, true]);
      for (let i = 0; i < 3; i++) assert.equal(await good.intercept(pkt(i, 10), i), true, good.reason ?? '');
      assert.equal(good.state, 'running');
    }
  });

  test('call ids wrap at 32 bits without losing a reply', async () => {
    const s = new VnfSandbox({ type: 'echo', flow: FLOW, params: {}, seed: 1, now: 0, modules }, { memoryMb: 48, callBudgetMs: 2000 }, {}, 0xffff_fffd);
    open.push(s);
    await s.ready();
    const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => s.intercept(pkt(i, 20), i)));
    assert.deepEqual(taken, new Array<boolean>(6).fill(true));
    assert.equal(s.state, 'running');
    assert.deepEqual(
      s.poll().packets.map((p) => p.tag),
      [0, 1, 2, 3, 4, 5],
    );
  });
});
