import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configVersion, defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { set } from '../../src/control/commands.js';
import { CONTROL_CODES, ControlError } from '../../src/control/protocol.js';
import { ConfigError } from '../../src/core/errors.js';
import type { Micros } from '../../src/core/time.js';
import { LiveConfigView } from '../../src/daemon/live-view.js';
import type { RouterView } from '../../src/router/view.js';
import { memoryLogger } from '../support/control-view.js';

/** The live-configuration side of a daemon alone: what it hands its cores is recorded. */
class RecordingView extends LiveConfigView {
  readonly id = 1;
  readonly name = 'live';
  protected readonly startedUs = 0;
  readonly applied: Array<{ next: NodeConfig; changed: string[] }> = [];

  now(): Micros {
    return 0;
  }

  protected applyLive(next: NodeConfig, changed: string[]): void {
    this.applied.push({ next, changed });
  }
}

const viewOf = (v: RecordingView): RouterView => v as unknown as RouterView;

test('after each live set the version is configVersion of the configuration in force, whichever sections changed', () => {
  const { log, lines } = memoryLogger();
  const v = new RecordingView(defaultNodeConfig(1), log);
  assert.equal(v.configVersion(), configVersion(v.config()));
  const sets: Array<Record<string, unknown>> = [
    { 'sensing.periodMs': 900 },
    { 'sensing.periodMs': 1000, 'channel.hysteresis': 0.2 },
    { 'log.level': 'debug' },
    { 'sensing.ccaThresholdDbm': -80, 'channel.minDwellMs': 2000 },
    { 'channel.hysteresis': 0.1 },
  ];
  const versions = new Set([v.configVersion()]);
  for (const values of sets) {
    const r = set(viewOf(v), values, v.configVersion());
    assert.equal(r.version, v.configVersion());
    assert.equal(r.version, configVersion(v.config()), `after ${JSON.stringify(values)}`);
    versions.add(r.version);
  }
  assert.equal(versions.size, sets.length + 1);
  assert.equal(v.applied.length, sets.length);
  assert.equal(log.level, 'debug', 'log.level is taken live');
  assert.equal(lines.filter((l) => l.event === 'reconfigured').length, sets.length);
});

test('a refused set (bad value, unknown path, restart-only field, stale version) leaves the running configuration as it was', () => {
  const v = new RecordingView(defaultNodeConfig(1), memoryLogger().log);
  const running = v.runningConfig();
  const before = structuredClone(running);
  const version = v.configVersion();
  const refusals: Array<[Record<string, unknown>, string | undefined, (e: unknown) => boolean]> = [
    [{ 'sensing.periodMs': -5 }, version, (e) => e instanceof ConfigError],
    // Valid alone, and refused whole with the bad field beside it.
    [{ 'sensing.periodMs': 900, 'channel.hysteresis': 'high' }, version, (e) => e instanceof ConfigError],
    [{ 'sensing.durationMs': 2000 }, version, (e) => e instanceof ConfigError],
    [{ 'sensing.nosuch': 1 }, version, (e) => e instanceof ConfigError],
    [{ 'node.id': 9 }, version, (e) => e instanceof ControlError && e.code === CONTROL_CODES.restartOnly],
    [{ 'sensing.periodMs': 900 }, '0123456789abcdef', (e) => e instanceof ControlError && e.code === CONTROL_CODES.staleVersion],
  ];
  for (const [values, expect, refused] of refusals) {
    assert.throws(() => set(viewOf(v), values, expect), refused, JSON.stringify(values));
    assert.equal(v.runningConfig(), running, 'the same configuration object is in force');
    assert.deepEqual(v.runningConfig(), before, `${JSON.stringify(values)} changed nothing`);
    assert.equal(v.configVersion(), version);
  }
  assert.equal(v.applied.length, 0);
  // A set of what is already in force changes nothing either, and is no refusal.
  assert.deepEqual(set(viewOf(v), { 'sensing.periodMs': before.sensing.periodMs }, version), { version, changed: [], lasts: 'until-restart' });
});

test('config() is a copy; runningConfig() is the configuration in force, replaced whole by a change', () => {
  const v = new RecordingView(defaultNodeConfig(1), memoryLogger().log);
  const copy = v.config();
  copy.sensing.periodMs = 1;
  assert.notEqual(v.runningConfig().sensing.periodMs, 1);
  const old = v.runningConfig();
  const oldPeriod = old.sensing.periodMs;
  set(viewOf(v), { 'sensing.periodMs': oldPeriod + 1 }, undefined);
  assert.notEqual(v.runningConfig(), old);
  assert.equal(old.sensing.periodMs, oldPeriod, 'the previous configuration was not changed in place');
  assert.equal(v.runningConfig().sensing.periodMs, oldPeriod + 1);
});
