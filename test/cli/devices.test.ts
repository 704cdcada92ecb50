import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DevicesReport } from '../../src/cli/devices.js';
import { cogmesh } from '../support/cli.js';

test('cogmesh devices --json answers on this machine: UHD, USB and SORA rings each say what they found or why not', () => {
  const r = cogmesh('devices', '--json', '--ring', '/nonexistent/sora0');
  assert.equal(r.code, 0, r.err);
  const d = JSON.parse(r.out) as DevicesReport;
  if (d.uhd.available) {
    assert.match(d.uhd.version ?? '', /^4\./, 'libuhd 4.x');
    assert.ok(Array.isArray(d.uhd.devices), 'a device list');
  } else assert.ok((d.uhd.reason ?? '').length > 0, 'a reason when UHD is not available');
  if (!d.usb.available) assert.match(d.usb.reason ?? '', /USB/, 'the reason names USB');
  assert.equal(d.sora.length, 1);
  assert.equal(d.sora[0]!.ok, false);
  assert.match(d.sora[0]!.error ?? '', /\/nonexistent\/sora0/, 'the error names the ring');
});

test('cogmesh devices prints one line per source for people', () => {
  const r = cogmesh('devices');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^UHD/m);
  assert.match(r.out, /^USB/m);
  assert.match(r.out, /^SORA rings/m);
});
