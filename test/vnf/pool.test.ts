import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { SandboxPool } from '../../src/vnf/pool.js';
import type { VnfPacket } from '../../src/vnf/types.js';
import { ipv4 } from '../../src/wire/tcp.js';
import { echo, spinner, thrower } from './fixtures/misbehaving.js';

const fixtures = new URL('./fixtures/misbehaving.ts', import.meta.url).href;
const modules = ['spinner', 'thrower', 'echo'].map((e) => ({ url: fixtures, export: e }));
/** A TCP packet from 10.0.0.1:80 to 10.0.0.2:port. */
const pkt = (port: number, n: number): VnfPacket => ({
  proto: 'tcp',
  src: ipv4(10, 0, 0, 1),
  dst: ipv4(10, 0, 0, 2),
  bytes: Uint8Array.of(0, 80, port >> 8, port & 0xff, n),
});

const pools: SandboxPool[] = [];
after(async () => {
  for (const p of pools) await p.close(0);
});

async function until(what: string, f: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("the router daemon's VNF pool: one sandbox per instance", () => {
  test('a packet of an instance goes to its sandbox and its output comes back; other flows are not touched', async () => {
    const pool = new SandboxPool([echo, spinner, thrower], 1, { memoryMb: 48, callBudgetMs: 300 }, modules);
    pools.push(pool);
    let outputs = 0;
    pool.onOutput = () => outputs++;
    const info = await pool.instantiate('echo', { proto: 'tcp', dstPort: 5001 }, {}, 0);
    assert.equal(info.state, 'running');
    assert.deepEqual(
      pool.poll(0).events.map((e) => e.kind),
      ['started'],
    );
    let declined = 0;
    assert.equal(
      pool.intercept(pkt(5001, 7), 10, () => declined++),
      true,
      'handed to the sandbox',
    );
    assert.equal(
      pool.intercept(pkt(6000, 8), 10, () => declined++),
      false,
      'another flow is forwarded at once',
    );
    await until('the echo', () => outputs > 1);
    const { packets } = pool.poll(20);
    assert.deepEqual(
      packets.map((p) => p.bytes[4]),
      [7],
    );
    assert.equal(declined, 0);
    await pool.refreshAll();
    assert.equal(pool.list()[0]!.packetsTaken, 1);
    const stopped = await pool.terminate(info.id, 30);
    assert.equal(stopped.state, 'stopped');
    assert.equal(
      pool.intercept(pkt(5001, 9), 40, () => declined++),
      false,
      'a stopped instance takes nothing',
    );
  });

  test('a VNF that hangs or throws is failed and reported; the packet it held is forwarded, and so is its flow from then on; a parallel VNF keeps going', async () => {
    const pool = new SandboxPool([echo, spinner, thrower], 2, { memoryMb: 48, callBudgetMs: 300 }, modules);
    pools.push(pool);
    await pool.instantiate('spinner', { proto: 'tcp', dstPort: 1 }, {}, 0);
    await pool.instantiate('thrower', { proto: 'tcp', dstPort: 2 }, {}, 0);
    await pool.instantiate('echo', { proto: 'tcp', dstPort: 3 }, {}, 0);
    pool.poll(0);
    const declined: number[] = [];
    assert.equal(
      pool.intercept(pkt(1, 1), 10, () => declined.push(1)),
      true,
    );
    assert.equal(
      pool.intercept(pkt(2, 2), 10, () => declined.push(2)),
      true,
    );
    assert.equal(
      pool.intercept(pkt(3, 3), 10, () => declined.push(3)),
      true,
    );
    await until('both failures', () => declined.length === 2, 5000);
    assert.deepEqual(declined.sort(), [1, 2], 'the held packets go on plainly');
    const events = pool.poll(20).events;
    assert.deepEqual(
      events
        .filter((e) => e.kind === 'failed')
        .map((e) => e.type)
        .sort(),
      ['spinner', 'thrower'],
    );
    const list = pool.list();
    assert.match(list.find((i) => i.type === 'spinner')!.reason ?? '', /call budget/);
    assert.equal(list.find((i) => i.type === 'echo')!.state, 'running');
    assert.equal(
      pool.intercept(pkt(1, 4), 30, () => declined.push(4)),
      false,
      "a failed VNF's flow is forwarded at once",
    );
    assert.equal(pool.intercept(pkt(3, 5), 30), true, 'the echo still takes its flow');
  });

  test('bad parameters and unknown types are refused before any sandbox starts', async () => {
    const pool = new SandboxPool([echo], 3, { memoryMb: 48, callBudgetMs: 300 }, modules);
    pools.push(pool);
    await assert.rejects(pool.instantiate('nope', {}, {}, 0), (e: Error & { code?: string }) => e.code === 'VNF_UNKNOWN_TYPE' && /known: echo/.test(e.message));
    assert.deepEqual(pool.list(), []);
  });
});

describe('deadlines of sandboxed VNFs', () => {
  test('a deadline whose tick is in flight is not reported again (the router would spin on it)', async () => {
    const pool = new SandboxPool([echo], 4, { memoryMb: 48, callBudgetMs: 300 }, modules);
    pools.push(pool);
    await pool.instantiate('echo', { proto: 'tcp' }, {}, 0);
    let outputs = 0;
    pool.onOutput = () => outputs++;
    // The echo VNF asks to run again 1 ms after each packet.
    pool.intercept(pkt(9, 1), 1000);
    await until('the answer', () => outputs > 0);
    const due = pool.nextDeadline();
    assert.ok(due !== undefined, 'the echo has a deadline');
    pool.tick(due);
    assert.equal(pool.nextDeadline(), undefined, 'while its tick is in flight, nothing is due');
    await until('the tick to come back', () => outputs > 1);
  });
});
