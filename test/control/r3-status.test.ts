import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStatus } from '../../src/cli/ctl.js';
import type { RouterStatus } from '../../src/router/view.js';

const status = (r3: RouterStatus['r3']): RouterStatus => ({
  node: { id: 1, name: 'r1' },
  atUs: 0,
  uptimeS: 3,
  configVersion: 'v',
  mesh: true,
  r1: { channel: 6, since: 0, reason: 'initial' },
  r2: { channel: 6, dwellEndUs: 0, switches: 0 },
  r3,
  sensing: { rounds: 1, durationMs: 70, periodMs: 1000, ccaThresholdDbm: -82, transmitPaused: false },
  counters: {},
  drops: {},
});

test('cogmesh ctl status shows what R3 authentication signed, verified and dropped, and nothing when it is off', () => {
  const on = formatStatus(status({ channel: 1, auth: { signed: 10, verified: 20, noTrailer: 3, badMac: 0 } }));
  assert.match(on, /^R3 {2}channel 1, authenticated: signed 10, verified 20, noTrailer 3, badMac 0$/m);
  assert.match(formatStatus(status({ channel: 1 })), /^R3 {2}channel 1$/m);
  const keys = formatStatus(status({ channel: 1, auth: { signed: 1 }, keys: { sendKeyId: 2, ids: [1, 2] } }));
  assert.match(keys, /^R3 {2}channel 1, authenticated \(signing with key 2 of 1, 2\): signed 1$/m, 'the key ids in force, during a rotation');
});
