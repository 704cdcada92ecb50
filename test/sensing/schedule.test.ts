import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SensingSchedule, type SensingAction, type SensingScheduleParams } from '../../src/sensing/schedule.js';

const P: SensingScheduleParams = { durationUs: 70_000, periodUs: 1_000_000, channelsPerRound: 0, channels: [1, 6, 11], retuneUs: 1_000 };

/** Runs one round to its end, visits taking exactly their planned time. */
function runRound(
  s: SensingSchedule,
  start: number,
): { visits: Array<{ channel: number; captureUs: number; startUs: number }>; actions: SensingAction[]; end: number } {
  const actions = s.tick(start);
  const visits: Array<{ channel: number; captureUs: number; startUs: number }> = [];
  let now = start;
  let pending = actions.find((a) => a.kind === 'visit');
  while (pending && pending.kind === 'visit') {
    visits.push({ channel: pending.visit.channel, captureUs: pending.visit.captureUs, startUs: pending.visit.startUs });
    now += P.retuneUs + pending.visit.captureUs;
    const next = s.visitDone(now);
    actions.push(...next);
    pending = next.find((a) => a.kind === 'visit');
  }
  return { visits, actions, end: now };
}

test('nothing happens before the first round is due', () => {
  const s = new SensingSchedule(P, 500_000);
  assert.equal(s.nextDeadline(), 500_000);
  assert.deepEqual(s.tick(0), []);
  assert.deepEqual(s.tick(499_999), []);
  assert.equal(s.sensing, false);
});

test('a round pauses transmission, visits every channel for an equal share of T_s, then resumes', () => {
  const s = new SensingSchedule(P, 0);
  const r = runRound(s, 0);
  assert.deepEqual(
    r.visits.map((v) => v.channel),
    [1, 6, 11],
  );
  const dwell = Math.floor(70_000 / 3);
  for (const v of r.visits) assert.equal(v.captureUs, dwell - 1_000);
  assert.equal(r.actions[0]!.kind, 'pause-tx');
  const kinds = r.actions.map((a) => a.kind);
  assert.deepEqual(kinds.slice(-2), ['resume-tx', 'round-done']);
  assert.ok(r.end <= 70_000, 'the round fits in T_s');
  assert.equal(s.sensing, false);
});

test('rounds keep their period, and no deadline is reported while a visit is out', () => {
  const s = new SensingSchedule(P, 0);
  s.tick(0);
  assert.equal(s.nextDeadline(), undefined);
  assert.deepEqual(s.tick(5_000_000), [], 'no new round while one is in progress');
  s.visitDone(10);
  s.visitDone(20);
  s.visitDone(30);
  assert.equal(s.nextDeadline(), 1_000_000);
  // A late driver: the round starts late but the cadence holds.
  runRound(s, 1_200_000);
  assert.equal(s.nextDeadline(), 2_000_000);
  // A very late driver skips missed rounds instead of bursting.
  runRound(s, 9_500_000);
  assert.equal(s.nextDeadline(), 10_500_000);
});

test('channelsPerRound rotates through the channels across rounds', () => {
  const s = new SensingSchedule({ ...P, channelsPerRound: 2, channels: [1, 2, 3, 4, 5] }, 0);
  const seen: number[][] = [];
  for (let i = 0; i < 4; i++) seen.push(runRound(s, i * 1_000_000).visits.map((v) => v.channel));
  assert.deepEqual(seen, [
    [1, 2],
    [3, 4],
    [5, 1],
    [2, 3],
  ]);
});

test('a T_s too short for the retunes, or longer than the period, is refused', () => {
  assert.throws(() => new SensingSchedule({ ...P, durationUs: 3_000 }, 0), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => new SensingSchedule({ ...P, durationUs: 2_000_000 }, 0), { code: 'CORE_OUT_OF_RANGE' });
  assert.throws(() => new SensingSchedule({ ...P, channels: [] }, 0), { code: 'CORE_OUT_OF_RANGE' });
});

test('reconfigure applies from the next round', () => {
  const s = new SensingSchedule(P, 0);
  s.tick(0);
  s.reconfigure({ ...P, durationUs: 30_000, periodUs: 500_000 }, 100);
  const a = s.visitDone(10_000)[0];
  assert.equal(a?.kind === 'visit' && a.visit.captureUs, Math.floor(70_000 / 3) - 1_000, 'the round in progress keeps its plan');
  s.visitDone(20_000);
  s.visitDone(30_000);
  const next = runRound(s, s.nextDeadline()!);
  assert.equal(next.visits[0]!.captureUs, 10_000 - 1_000);
});

test('each visit carries its end on the round plan, so late timers cannot stretch T_s', () => {
  const s = new SensingSchedule(P, 0);
  const dwell = Math.floor(70_000 / 3);
  const first = s.tick(0).find((a) => a.kind === 'visit');
  assert.ok(first?.kind === 'visit');
  assert.equal(first.visit.endUs, dwell);
  // The driver came back 5 ms late: the next visit still ends on the plan.
  const second = s.visitDone(dwell + 5_000).find((a) => a.kind === 'visit');
  assert.ok(second?.kind === 'visit');
  assert.equal(second.visit.startUs, dwell + 5_000);
  assert.equal(second.visit.endUs, 2 * dwell);
});
