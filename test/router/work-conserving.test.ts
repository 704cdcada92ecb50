import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import { set } from '../../src/control/commands.js';
import type { RouterView } from '../../src/router/view.js';
import { memoryLogger } from '../support/control-view.js';
import { RouterOnlyView } from '../support/router-only-view.js';
import { star } from '../support/star.js';

test("a live set of switching.workConserving reaches R2's scheduler: a relay between two directions starts leaving empty dwells early", () => {
  const { engine, routers, delivered } = star();
  // Router 1 sends to 2 and 2 to 1 through relay 0, whose R2 alternates between their two channels.
  let seq = 0;
  const send = (now: number): void => {
    routers[1]!.originate(2, 'udp', 1, seq, new Uint8Array(200), now);
    routers[2]!.originate(1, 'udp', 2, seq++, new Uint8Array(40), now);
    if (now + 20 * US_PER_MS < seconds(12)) engine.at(now + 20 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  engine.run(seconds(6));
  const relay = routers[0]!;
  assert.notEqual(routers[1]!.core.r1, routers[2]!.core.r1, 'the two directions are on two channels');
  const before = { ...relay.sched.counters };
  assert.equal(before.earlyLeaves, 0, 'off by default');
  assert.ok(before.switches > 10, `the relay switches between the two: ${before.switches}`);

  // The live set as the control API's `set` makes it.
  const { log, lines } = memoryLogger();
  const view = new RouterOnlyView(relay, engine, log);
  const v0 = view.configVersion();
  const r = set(view as unknown as RouterView, { 'switching.workConserving': true }, v0);
  assert.notEqual(r.version, v0);
  assert.deepEqual(r.changed, ['switching.workConserving'], 'a live field: taken, not refused as restart-only');
  assert.deepEqual(lines.find((l) => l.event === 'reconfigured')?.changed, ['switching.workConserving']);
  assert.equal(relay.config.switching.workConserving, true);
  engine.run(seconds(12));
  const after = relay.sched.counters;
  assert.ok(after.earlyLeaves > 50, `dwells left early once it is on: ${after.earlyLeaves}`);
  assert.ok(after.earlyLeaves <= after.switches - before.switches, 'each early leave is a switch');
  for (const f of [1, 2]) assert.ok((delivered.get(f) ?? 0) > 400, `flow ${f} still arrives: ${JSON.stringify([...delivered])}`);
});
