import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ism2g4 } from '../../radio/channels.js';
import { applyOverrides, defaultNodeConfig } from '../../src/config/load.js';
import { EventEngine } from '../../src/core/engine.js';
import { runVirtual } from '../../src/core/pump.js';
import { seconds, type Micros } from '../../src/core/time.js';
import { FIRST_DECISION_ROUNDS, NodeCore, type NodeEvent } from '../../src/router/node-core.js';
import { SensingDriver, type SensingRadios } from '../../src/router/sensing.js';
import type { Visit } from '../../src/sensing/schedule.js';
import type { ChannelObservation } from '../../src/sensing/workload.js';

const plan = ism2g4(11);
const cfg = applyOverrides(defaultNodeConfig(1), ['sensing.durationMs=44', 'sensing.periodMs=500']);
/** The PN load each visit sees: channels 1-5 busy, the rest idle. */
const busyOf = (channel: number): number => (channel <= 5 ? 0.8 : 0);
const seen = (v: Visit, atUs: Micros): ChannelObservation => {
  const windows = 1000;
  const busyWindows = Math.round(busyOf(v.channel) * windows);
  return { channel: v.channel, windows, busyWindows, meanPowerDbm: busyWindows > 0 ? -55 : -95, busyMeanPowerDbm: busyWindows > 0 ? -50 : undefined, atUs };
};

type Log = string[];

/** Radios that record what the driver asks of them; `async` makes every operation take (virtual) time, as front-ends do. */
function radios(engine: EventEngine, log: Log, async: boolean, fail?: (v: Visit) => boolean): SensingRadios {
  const later = <T>(atUs: Micros, value: () => T): Promise<T> => new Promise((resolve) => engine.at(atUs, () => resolve(value())));
  return {
    now: () => engine.now(),
    at: (at, fn) => void engine.at(at, fn),
    pauseTx: (round, now) => void log.push(`${now} pause ${round}`),
    resumeTx: (round, now) => void log.push(`${now} resume ${round}`),
    capture: (v, now) => {
      log.push(`${now} visit ${v.channel}`);
      if (!async) return seen(v, v.endUs);
      if (fail?.(v)) return later(v.endUs, () => Promise.reject(new Error(`channel ${v.channel} unreadable`))).then((p) => p);
      return later(v.endUs, () => seen(v, v.endUs));
    },
    tuneR1: (channel, now) => {
      log.push(`${now} r1 ${channel}`);
      return async ? later(now, () => undefined) : undefined;
    },
    event: (e: NodeEvent) =>
      void log.push(e.kind === 'sensing-round' ? `${e.endUs} round ${e.round} ${e.visited.length}` : `r1-decision ${e.decision.channel}`),
    fault: (where, _error, now) => void log.push(`${now} fault ${where}`),
  };
}

/** Runs the driver for `forS` with its own timer; returns what the radios saw. */
async function drive(async: boolean, forS: number, fail?: (v: Visit) => boolean): Promise<{ log: Log; core: NodeCore }> {
  const engine = new EventEngine(0);
  const log: Log = [];
  const core = new NodeCore(cfg, plan, cfg.switching.overheadUs, 0);
  const driver = new SensingDriver(core, radios(engine, log, async, fail));
  driver.start(0, engine);
  await runVirtual(engine, seconds(forS));
  await driver.stop();
  return { log, core };
}

test('one driver: radios that answer at once and radios that take their time give the same rounds and the same R1', async () => {
  const sync = await drive(false, 2.2);
  const async = await drive(true, 2.2);
  assert.deepEqual(async.log, sync.log, 'the same visits, rounds and decisions at the same times');
  const rounds = sync.log.filter((l) => l.includes(' round '));
  assert.equal(rounds.length, 5, `a round every 500 ms from t = 0: ${rounds.join('; ')}`);
  assert.ok(
    rounds.every((l) => l.endsWith(' 11')),
    'each round visits every channel',
  );
  assert.ok(sync.core.r1 !== undefined && busyOf(sync.core.r1) === 0 && !plan.overlaps(sync.core.r1, 5), `R1 off the busy channels: ${sync.core.r1}`);
  const first = sync.log.indexOf('0 pause 0');
  assert.ok(first >= 0 && sync.log[first + 1] === '0 visit 1', 'a round pauses transmission, then visits its first channel');
});

test('a visit whose front-end fails is reported, counts as a visit that saw nothing, and the round goes on', async () => {
  const { log } = await drive(true, 0.3, (v) => v.channel === 3);
  const fault = log.findIndex((l) => l.endsWith('fault sensing channel 3'));
  assert.ok(fault > 0, `the failure is reported: ${log.join('; ')}`);
  assert.ok(log[fault + 1]?.endsWith('visit 4'), 'the next channel is visited');
  assert.ok(
    log.some((l) => /round 0 11$/.test(l)),
    'the round ends with all its visits',
  );
});

test('R1 is first chosen from a complete round: a first round with unsensed channels leaves R1 unchosen', async () => {
  // Round 0 sees only channels 1-6 (the reads of 7-11 fail, as visits with no capture time
  // left do at a late start): channel 6 would look best. Round 1 senses every channel.
  const { log, core } = await drive(true, 0.8, (v) => v.round === 0 && v.channel >= 7);
  const decisions = log.filter((l) => l.startsWith('r1-decision'));
  assert.deepEqual(decisions[0], 'r1-decision undefined', `no choice after the incomplete round: ${log.join('; ')}`);
  assert.equal(decisions.length, 2);
  const r1 = core.r1;
  assert.ok(r1 !== undefined && r1 >= 7 && !plan.overlaps(r1, 5), `R1 from the complete round, clear of the busy channels: ${r1}`);
  assert.equal(log.filter((l) => l.includes(' r1 ')).length, 1, 'R1 tuned once, to its first choice');
});

test("a channel that is never sensed delays R1's first choice by FIRST_DECISION_ROUNDS rounds at most", async () => {
  const { log, core } = await drive(true, 1.3, (v) => v.channel === 3);
  const decisions = log.filter((l) => l.startsWith('r1-decision'));
  assert.equal(decisions.length, FIRST_DECISION_ROUNDS);
  assert.deepEqual(decisions.slice(0, FIRST_DECISION_ROUNDS - 1), Array(FIRST_DECISION_ROUNDS - 1).fill('r1-decision undefined'));
  assert.ok(core.r1 !== undefined && busyOf(core.r1) === 0, `chosen at round ${FIRST_DECISION_ROUNDS - 1}: ${core.r1}`);
  assert.equal(core.latestDecision?.reason, 'initial');
});

test('stopped while a visit is out: nothing more happens', async () => {
  const engine = new EventEngine(0);
  const log: Log = [];
  const core = new NodeCore(cfg, plan, cfg.switching.overheadUs, 0);
  const driver = new SensingDriver(core, radios(engine, log, false));
  driver.start(0, engine);
  engine.run(1_000);
  assert.ok(log.includes('0 visit 1') && driver.nextDeadline() === undefined, 'a visit is out, so the core has no deadline');
  await driver.stop();
  const before = log.length;
  engine.run(seconds(3));
  assert.equal(log.length, before, `nothing after stop: ${log.slice(before).join('; ')}`);
  assert.equal(driver.nextDeadline(), undefined);
});
