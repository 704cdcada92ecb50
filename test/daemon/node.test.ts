import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import { applyOverrides, defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig, PnConfig } from '../../src/config/types.js';
import { EventEngine } from '../../src/core/engine.js';
import { seconds } from '../../src/core/time.js';
import type { DriverEvent } from '../../src/router/sensing.js';
import { createLogger } from '../../src/core/log.js';
import { startNode } from '../../src/daemon/node.js';
import { runVirtual } from '../../src/core/pump.js';

const fraction = (channel: number, busy: number): PnConfig => ({ channel, powerDbm: -50, pattern: { kind: 'fraction', busy, meanBurstMs: 1 } });

function config(sets: string[]): NodeConfig {
  return applyOverrides(defaultNodeConfig(1), ['sensing.backend="cpu"', 'log.format="json"', ...sets]);
}

/** A debug-level JSON logger on the engine's clock, and what it wrote so far. */
function capturedLog(engine: EventEngine): { log: ReturnType<typeof createLogger>; text: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(c, _e, cb) {
      chunks.push(String(c));
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', format: 'json', virtualClock: engine.clock, destination: sink }), text: () => chunks.join('') };
}

/** Runs a node in virtual time; returns its events and its JSON log. */
async function run(cfg: NodeConfig, forS: number): Promise<{ events: DriverEvent[]; log: string; r1: number | undefined }> {
  const engine = new EventEngine();
  const { log, text } = capturedLog(engine);
  const events: DriverEvent[] = [];
  const node = await startNode(cfg, { scheduler: engine, log, reproducible: true, onEvent: (e) => events.push(e) });
  await runVirtual(engine, seconds(forS));
  const r1 = node.core.r1;
  await node.stop();
  return { events, log: text(), r1 };
}

test('a node picks an R1 channel that neither is nor overlaps the busy ones', async () => {
  const plan = ism2g4(11);
  const cfg = config([`sim.band.pn=${JSON.stringify([fraction(1, 0.3), fraction(6, 0.8)])}`]);
  const { events, r1 } = await run(cfg, 4.5);
  assert.ok(r1 !== undefined);
  assert.ok(r1 !== 1 && r1 !== 6 && !plan.overlaps(r1, 1) && !plan.overlaps(r1, 6), `R1 on ${r1}`);
  const rounds = events.filter((e) => e.kind === 'sensing-round');
  assert.equal(rounds.length, 5, 'a round every second from t = 0');
  const tuned = events.filter((e) => e.kind === 'r1-tuned');
  assert.equal(tuned.at(-1)?.kind === 'r1-tuned' && tuned.at(-1)!.channel, r1, 'the R1 radio really was tuned');
});

test('data transmission pauses for each sensing round and resumes after it, within T_s', async () => {
  const cfg = config(['sensing.durationMs=30', 'sensing.periodMs=500']);
  const { events } = await run(cfg, 2.2);
  const marks = events.filter((e) => e.kind === 'tx-paused' || e.kind === 'tx-resumed');
  assert.equal(marks.length, 10);
  for (let i = 0; i < marks.length; i += 2) {
    const p = marks[i]!;
    const r = marks[i + 1]!;
    assert.equal(p.kind, 'tx-paused');
    assert.equal(r.kind, 'tx-resumed');
    if (p.kind === 'tx-paused' && r.kind === 'tx-resumed') {
      assert.equal(p.atUs, (i / 2) * 500_000);
      assert.ok(r.atUs - p.atUs <= 30_000, `round took ${r.atUs - p.atUs} us`);
    }
  }
});

test('R1 moves when the PN load moves, and says why', async () => {
  const phases = [
    { durationS: 6, pn: [fraction(1, 0.9), fraction(6, 0.9)] },
    { durationS: 6, pn: [fraction(11, 0.9), fraction(6, 0.9)] },
  ];
  // R1 never takes the control channel: keep R3 off the channels this test moves R1 to.
  const cfg = config([
    `sim.band.phases=${JSON.stringify(phases)}`,
    'sim.band.repeat=false',
    'channel.minDwellMs=2000',
    'radios.R3.channel=3',
    'channel.controlGuard=1',
  ]);
  const { events } = await run(cfg, 11.5);
  const moves = events.filter((e) => e.kind === 'r1-decision' && e.decision.changed);
  assert.equal(moves.length, 2, 'the first choice, then one move');
  const [first, second] = moves.map((e) => (e.kind === 'r1-decision' ? e.decision : undefined));
  assert.equal(first!.channel, 11);
  assert.equal(first!.reason, 'initial');
  assert.equal(second!.channel, 1);
  assert.equal(second!.previous, 11);
  assert.equal(second!.reason, 'better');
  assert.ok(second!.atUs >= 6_000_000 && second!.atUs <= 8_000_000, `moved at ${second!.atUs} us`);
});

test('R1 never takes the common control channel R3 sits on', async () => {
  // Channel 1 is the only PN-free channel, but R3 is on it.
  const busy = Array.from({ length: 10 }, (_, i) => fraction(i + 2, 0.5));
  const cfg = config([`sim.band.pn=${JSON.stringify(busy)}`, 'radios.R3.channel=1']);
  const { events } = await run(cfg, 2.5);
  const decisions = events.filter((e) => e.kind === 'r1-decision');
  assert.ok(decisions.length > 0);
  for (const e of decisions) if (e.kind === 'r1-decision') assert.notEqual(e.decision.channel, 1);
});

test('the same seed gives a byte-identical log; another seed does not', async () => {
  const sets = [`sim.band.pn=${JSON.stringify([fraction(3, 0.5), fraction(9, 0.2)])}`];
  const a = await run(config([...sets, 'node.seed=7']), 3.5);
  const b = await run(config([...sets, 'node.seed=7']), 3.5);
  const c = await run(config([...sets, 'node.seed=8']), 3.5);
  assert.ok(a.log.length > 1000);
  assert.equal(a.log, b.log);
  assert.notEqual(a.log, c.log);
});

test('a neighbour’s shared workload enters the merged w, and ages out', async () => {
  const engine = new EventEngine();
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const log = createLogger({ level: 'warn', format: 'json', virtualClock: engine.clock, destination: sink });
  const cfg = config(['sensing.channelsPerRound=1', 'sensing.cooperative.maxAgeMs=3000', 'sensing.cooperative.neighbourWeight=1']);
  const events: DriverEvent[] = [];
  const node = await startNode(cfg, { scheduler: engine, log, reproducible: true, onEvent: (e) => events.push(e) });
  // Before any own measurement of channel 9, a neighbour says it is 60% busy.
  node.core.neighbourWorkload('n2', [{ channel: 9, w: 0.6, windows: 1000 }], 0);
  await runVirtual(engine, seconds(0.5));
  const first = events.find((e) => e.kind === 'sensing-round');
  assert.ok(first && first.kind === 'sensing-round');
  const ch9 = first.channels.find((c) => c.channel === 9)!;
  assert.equal(ch9.w, 0.6);
  assert.equal(ch9.ownW, undefined);
  await runVirtual(engine, seconds(4.5));
  const last = events.filter((e) => e.kind === 'sensing-round').at(-1)!;
  assert.ok(last.kind === 'sensing-round' && last.channels.every((c) => c.channel !== 9), 'aged out, and not yet sensed by this node');
  await node.stop();
});

test('a node stopped at once (say its monitor could not bind) logs no R3 tuning error', async () => {
  const engine = new EventEngine();
  const { log, text } = capturedLog(engine);
  const node = await startNode(config([]), { scheduler: engine, log, reproducible: true });
  // No engine step ran: R3's tune to the control channel is still in flight when the radios close.
  await node.stop();
  await new Promise((r) => setImmediate(r));
  const records = text()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { level: number; event?: string });
  assert.deepEqual(
    records.filter((r) => r.level >= 50),
    [],
    'nothing at error level',
  );
  assert.ok(
    records.some((r) => r.event === 'r3-tune-cancelled'),
    'the cancelled tune is a debug record',
  );
});

test('"usb" is refused at start, naming the radio and the driver to use', async () => {
  const cfg = config(['radios.R2.frontend="usb"']);
  const engine = new EventEngine();
  const log = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  await assert.rejects(
    startNode(cfg, { scheduler: engine, log, reproducible: true }),
    (e: Error & { code?: string }) => e.code === 'RADIO_UNSUPPORTED' && /radios\.R2/.test(e.message) && /"uhd"/.test(e.message),
  );
});

test('a node whose radio is a USRP fails to start on a machine without one, saying so', async () => {
  const cfg = config(['radios.R2.frontend="uhd"']);
  const engine = new EventEngine();
  const log = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  await assert.rejects(
    startNode(cfg, { scheduler: engine, log, reproducible: true }),
    (e: Error & { code?: string }) => (e.code === 'RADIO_NO_DEVICE' && /no USRP found/.test(e.message)) || e.code === 'RADIO_NO_LIBRARY',
  );
});

test('when one radio fails to open, the ones opened before it are closed', async () => {
  // R1 replays a recording (opens), R2 names a ring that does not exist (fails).
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { SigmfWriter } = await import('../../radio/file/index.js');
  const { FileFrontend } = await import('../../radio/file/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-open-'));
  try {
    const w = await SigmfWriter.create(join(dir, 'rec'), { sampleRateHz: 1e6 });
    await w.write({ data: new Float32Array(64), count: 32, startUs: 0, sampleRateHz: 1e6, centerHz: 2_412_000_000, calibrationDb: -10, droppedSamples: 0 });
    await w.close();
    const closed: string[] = [];
    const orig = FileFrontend.prototype.close;
    FileFrontend.prototype.close = async function (this: InstanceType<typeof FileFrontend>) {
      closed.push(this.id);
      return orig.call(this);
    };
    try {
      const cfg = config([
        `radios.R1.frontend="file"`,
        `radios.R1.device=${JSON.stringify(join(dir, 'rec.sigmf-meta'))}`,
        'radios.R2.frontend="sora"',
        `radios.R2.device=${JSON.stringify(join(dir, 'no-ring'))}`,
      ]);
      const engine = new EventEngine();
      const log = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
      await assert.rejects(startNode(cfg, { scheduler: engine, log, reproducible: true }), (e: Error & { code?: string }) => e.code === 'RADIO_NO_DEVICE');
      assert.equal(closed.length, 1, 'the recording opened for R1 was closed');
    } finally {
      FileFrontend.prototype.close = orig;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
