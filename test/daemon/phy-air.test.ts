import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { SimFrontend } from '../../radio/sim/frontend.js';
import { applyOverrides, defaultNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/core/log.js';
import { PacedEngine } from '../../src/core/paced.js';
import { openPhyAir } from '../../src/daemon/mesh-air.js';

/**
 * A router over its own radios (phy.enabled): each radio a sim front-end or a
 * device, the router sensing through its sensing radio's front-end.
 */

const log = createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

function config(sets: string[]): NodeConfig {
  return applyOverrides(defaultNodeConfig(1), [
    'phy.enabled=true',
    'radios.R1.sampleRateHz=11e6',
    'radios.R2.sampleRateHz=11e6',
    'radios.R3.sampleRateHz=11e6',
    ...sets,
  ]);
}

test('on sim radios: each radio its own front-end, handed to the router for sensing through R2 or R1', async () => {
  for (const [radio, through] of [
    ['R2', 'R2'],
    ['R1', 'R1'],
    ['R3', 'R2'],
  ] as const) {
    const air = await openPhyAir(config([`sensing.radio="${radio}"`]), log, new PacedEngine());
    try {
      assert.ok(air.radioFrontends);
      assert.deepEqual(
        Object.values(air.radioFrontends).map((fe) => fe.kind),
        ['sim', 'sim', 'sim'],
      );
      assert.equal(new Set(Object.values(air.radioFrontends)).size, 3, 'three front-ends');
      assert.match(air.describe, new RegExp(`sensing through ${through}'s front-end`));
    } finally {
      await air.close();
    }
  }
});

test('a radio on a USRP: the real libuhd says no device is attached, and the radios opened before it are closed', async () => {
  const closed: string[] = [];
  const orig = SimFrontend.prototype.close;
  SimFrontend.prototype.close = function (this: SimFrontend) {
    closed.push(this.id);
    return orig.call(this);
  };
  try {
    await assert.rejects(
      openPhyAir(config(['radios.R2.frontend="uhd"']), log, new PacedEngine()),
      (e: Error & { code?: string }) => (e.code === 'RADIO_NO_DEVICE' && /no USRP found/.test(e.message)) || e.code === 'RADIO_NO_LIBRARY',
    );
    assert.deepEqual(closed, ['cogmesh/R1'], 'R1 opened first, and was closed');
  } finally {
    SimFrontend.prototype.close = orig;
  }
});

test('slow motion with a radio on a device is refused, naming phy.timeScale and the device', async () => {
  await assert.rejects(
    openPhyAir(config(['radios.R3.frontend="sora"', 'radios.R3.device="/nonexistent/ring"', 'phy.timeScale=0.2']), log, new PacedEngine()),
    (e: Error) => /\/phy\/timeScale/.test(e.message) && /R3: sora/.test(e.message),
  );
});
