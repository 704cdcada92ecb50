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

test("cogmesh ctl status tells the log's lost lines, and why its writing stopped, only when there are some", () => {
  const base = status({ channel: 1 });
  assert.doesNotMatch(formatStatus(base), /^log/m, 'a synchronous log: nothing to say');
  assert.doesNotMatch(formatStatus({ ...base, log: { dropped: 0 } }), /^log/m, 'nothing lost: nothing to say');
  assert.match(formatStatus({ ...base, log: { dropped: 12 } }), /^log {6}12 line\(s\) dropped \(its reader fell behind\)$/m);
  assert.match(formatStatus({ ...base, log: { dropped: 3, gone: 'EPIPE' } }), /^log {6}3 line\(s\) dropped, writing stopped \(EPIPE: its reader went away\)$/m);
});
