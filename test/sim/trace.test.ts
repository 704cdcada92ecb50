import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadScenario } from '../../src/config/scenario.js';
import { R2Timeline } from '../../src/sim/r2-timeline.js';
import { runScenario } from '../../src/sim/run.js';
import { RunTrace, traceJsonLines } from '../../src/sim/trace.js';

const chain = new URL('../../config/scenarios/urbanx-chain.json', import.meta.url).pathname;

test('a queued packet is split by what R2 did: its own channel, away sensing (with the retune that ends it), switching', () => {
  const tl = new R2Timeline();
  tl.tuned(6, 1_000, 0);
  tl.paused(50_000);
  tl.resumed(120_000);
  tl.tuned(6, 121_000, 120_000);
  tl.tuned(11, 151_000, 150_000);
  const pieces: Array<[string, number, number]> = [];
  const w = tl.split(6, 40_000, 160_000, (cause, a, b) => pieces.push([cause, a, b]));
  assert.deepEqual(w, { onChannelUs: 10_000 + 29_000, sensingUs: 71_000, switchingUs: 10_000 });
  assert.deepEqual(pieces, [
    ['sensing', 50_000, 120_000],
    ['sensing', 120_000, 121_000],
    ['switching', 150_000, 151_000],
    ['switching', 151_000, 160_000],
  ]);
  // The same wait in channel 11's queue: R2 was elsewhere (or retuning) until it reached 11.
  assert.deepEqual(tl.split(11, 40_000, 160_000), { onChannelUs: 9_000, sensingUs: 71_000, switchingUs: 40_000 });
  assert.deepEqual(tl.split(6, 5_000, 5_000), { onChannelUs: 0, sensingUs: 0, switchingUs: 0 }, 'no wait, nothing to split');
});

test('a sensing round that starts during a retune undoes the channel it would have reached', () => {
  const tl = new R2Timeline();
  tl.tuned(3, 11_000, 10_000);
  tl.paused(10_500);
  tl.resumed(80_000);
  assert.deepEqual(tl.split(3, 10_000, 90_000), { onChannelUs: 0, sensingUs: 69_500, switchingUs: 10_500 });
  assert.deepEqual(tl.totals(90_000), { sensingUs: 69_500, tuningUs: 500, untunedUs: 20_000, usableUs: 0, tunes: 1 });
});

const scenario = (acc: string) => loadScenario(chain, { hops: 4, tcp: 'reno', acc, durationS: 20 });

test('a traced run gives the result of the untraced one, and the trace has the four TCP-ACC legs along the path', async () => {
  const sc = await scenario('every');
  const plain = runScenario(sc, 1);
  const trace = new RunTrace(50_000);
  const traced = runScenario(sc, 1, { trace });
  assert.equal(JSON.stringify(traced), JSON.stringify(plain), 'byte-identical results');

  const r = trace.result();
  assert.deepEqual(
    r.header.legs.map((l) => [l.from, l.to, l.sender, l.receiver]),
    [
      [0, 1, 'source', 'acc-up'],
      [1, 2, 'acc-down', 'acc-up'],
      [2, 3, 'acc-down', 'acc-up'],
      [3, 4, 'acc-down', 'sink'],
    ],
  );
  assert.equal(r.header.intervalMs, 50);
  assert.ok(r.header.unattributedSegments <= 4, `segments told to no leg: ${r.header.unattributedSegments}`);
  for (const leg of [0, 1, 2, 3]) {
    const s = r.samples.filter((x) => x.leg === leg);
    assert.ok(s.length >= 250, `leg ${leg}: ${s.length} samples`);
    assert.ok(
      s.every((x) => x.t % 50 === 0),
      'on the interval',
    );
    assert.ok(
      s.some((x) => x.srttMs !== null && x.cwnd > 0 && x.dataSegs > 0 && x.ackSegs > 0),
      `leg ${leg} carries data and ACKs`,
    );
    // Relay occupancy only where an accelerator sends the leg.
    assert.equal(
      s.some((x) => x.relay !== null),
      leg > 0,
    );
    for (const x of s) {
      assert.ok(x.dataSensingMs + x.dataSwitchingMs <= x.dataWaitMs + 1e-9 && x.ackSensingMs + x.ackSwitchingMs <= x.ackWaitMs + 1e-9);
    }
    const sum = r.summaries.find((x) => x.leg === leg)!;
    assert.ok(sum.dataSegs > 500 && sum.sensingMs > 0 && sum.switchingMs > 0, JSON.stringify(sum));
    assert.ok(sum.sensingStallPct > 0 && sum.sensingStallPct < 100 && sum.switchingStallPct < 100);
  }
  // Every RTO event is counted in its leg's totals, with what its receiver held then.
  for (const sum of r.summaries) {
    const rtos = r.events.filter((e) => e.leg === sum.leg && e.kind === 'rto' && e.end === 'sender');
    assert.equal(rtos.length, sum.timeouts);
    // A SYN's timer may fire before its receiver exists: then neither is known.
    for (const e of rtos) assert.equal(e.spurious, e.receiverAhead === null || e.receiverAhead === undefined ? null : e.receiverAhead > 0, JSON.stringify(e));
    assert.ok(rtos.filter((e) => typeof e.receiverAhead === 'number').length >= rtos.length - 1, 'known for all but a SYN');
    assert.equal(sum.spuriousTimeouts, rtos.filter((e) => e.spurious).length);
  }
  assert.deepEqual(
    r.r2.map((x) => x.router),
    [0, 1, 2, 3, 4],
  );

  const lines = traceJsonLines(r).trimEnd().split('\n');
  const records = lines.map((l) => JSON.parse(l) as { type: string; t?: number });
  assert.equal(records[0]!.type, 'header');
  const timed = records.filter((x) => x.type === 'sample' || x.type === 'event');
  assert.ok(
    timed.every((x, i) => i === 0 || x.t! >= timed[i - 1]!.t!),
    'samples and events in time order',
  );
  assert.deepEqual([...new Set(records.map((x) => x.type))], ['header', 'sample', 'event', 'summary', 'r2']);
});

test('end-to-end Reno is one leg from the source to the sink, its segments waiting at every router on the way', async () => {
  const trace = new RunTrace(100_000);
  runScenario(await scenario('none'), 1, { trace });
  const r = trace.result();
  assert.deepEqual(
    r.header.legs.map((l) => [l.from, l.to, l.sender, l.receiver]),
    [[0, 4, 'source', 'sink']],
  );
  assert.ok(r.summaries[0]!.dataSegs > r.summaries[0]!.sentSegs, 'each data segment is handed out once per hop');
});

test('a trace interval that is not a multiple of the sampling period is refused', async () => {
  const sc = await scenario('every');
  assert.throws(() => runScenario(sc, 1, { trace: new RunTrace(15_000) }), /trace interval/);
});
