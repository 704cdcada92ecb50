import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { VnfSandbox } from '../../src/vnf/sandbox.js';
import type { VnfPacket } from '../../src/vnf/types.js';
import { ipv4 } from '../../src/wire/tcp.js';

const fixtures = new URL('./fixtures/misbehaving.ts', import.meta.url).href;
const modules = ['spinner', 'hog', 'thrower', 'echo'].map((e) => ({ url: fixtures, export: e }));
const FLOW = { proto: 'tcp' as const };
const pkt = (n: number): VnfPacket => ({ proto: 'tcp', src: ipv4(10, 0, 0, 1), dst: ipv4(10, 0, 0, 2), bytes: Uint8Array.of(0, 80, 19, 137, n) });

const open: VnfSandbox[] = [];
const sandbox = async (type: string, limits = { memoryMb: 48, callBudgetMs: 300 }): Promise<VnfSandbox> => {
  const s = new VnfSandbox({ type, flow: FLOW, params: {}, seed: 1, now: 0, modules }, limits);
  open.push(s);
  return s.ready();
};
after(async () => {
  for (const s of open) await s.stop(0);
});

describe('VNF sandbox', () => {
  test('a well-behaved VNF runs in its worker: packets in, packets out, counters', async () => {
    const s = await sandbox('echo');
    assert.equal(s.state, 'running');
    assert.equal(await s.intercept(pkt(1), 10), true);
    assert.equal(await s.intercept(pkt(2), 20), true);
    const { packets } = s.poll();
    assert.deepEqual(
      packets.map((p) => p.bytes[4]),
      [1, 2],
    );
    assert.equal((await s.info())?.counters.echoed, 2);
  });

  test('a VNF that spins is failed at its call budget; its flow is forwarded; another sandbox keeps working', async () => {
    const good = await sandbox('echo');
    const bad = await sandbox('spinner');
    const [took, alsoTook] = await Promise.all([bad.intercept(pkt(1), 0), good.intercept(pkt(1), 0)]);
    assert.equal(took, false, 'the packet goes on unchanged');
    assert.equal(bad.state, 'failed');
    assert.match(bad.reason ?? '', /call budget \(300 ms\)/);
    assert.equal(alsoTook, true);
    assert.equal(await bad.intercept(pkt(2), 1), false, 'after the failure, forwarding');
    for (let i = 0; i < 5; i++) assert.equal(await good.intercept(pkt(i), i), true, 'the other VNF is untouched');
    assert.ok(
      bad.poll().events.some((e) => e.kind === 'failed'),
      'reported',
    );
  });

  test('a VNF that eats memory is failed when its worker hits the limit', async () => {
    const bad = await sandbox('hog', { memoryMb: 32, callBudgetMs: 20_000 });
    assert.equal(await bad.intercept(pkt(1), 0), false);
    assert.equal(bad.state, 'failed');
    assert.match(bad.reason ?? '', /memory|exited/i);
  });

  test('a VNF that throws is failed by its manager and reported, without killing its worker', async () => {
    const bad = await sandbox('thrower');
    assert.equal(await bad.intercept(pkt(1), 0), false);
    assert.equal(bad.state, 'failed');
    assert.match(bad.reason ?? '', /RangeError: bad state/);
  });

  test('an unknown type or bad parameters fail the start, saying why', async () => {
    const s = await sandbox('nat');
    assert.equal(s.state, 'failed');
    assert.match(s.reason ?? '', /no type "nat"/);
    const t = new VnfSandbox({ type: 'tcp-acc', flow: FLOW, params: { bufferBytes: -1 }, seed: 1, now: 0 });
    open.push(t);
    await t.ready();
    assert.equal(t.state, 'failed');
    assert.match(t.reason ?? '', /bufferBytes/);
  });
});

describe('VNF sandbox: stopping', () => {
  test('stop answers every call in flight and leaves no timer behind', async () => {
    const s = new VnfSandbox({ type: 'spinner', flow: FLOW, params: {}, seed: 1, now: 0, modules }, { memoryMb: 48, callBudgetMs: 60_000 });
    await s.ready();
    const pending = s.intercept(pkt(1), 0);
    await s.stop(0);
    assert.equal(await pending, false, 'answered "not taken"');
    assert.equal(s.state, 'stopped');
    assert.equal(await s.intercept(pkt(2), 1), false, 'stopped: forwarding');
  });
});
