import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { loadHwProfiles } from '../../src/hw/profiles.js';
import {
  listUsbSdrs,
  loadUsbBackend,
  matchUsbSdrs,
  usbSubsystemProblem,
  watchUsbSdrs,
  type UsbBackend,
  type UsbDescriptor,
  type UsbSdrList,
} from '../../radio/usb/discovery.js';

const profiles = loadHwProfiles();

const B210_NI: UsbDescriptor = { vendorId: 0x3923, productId: 0x7814, bus: '2', address: 5, serialNumber: '31F4A2B' };
const B2XX: UsbDescriptor = { vendorId: 0x2500, productId: 0x0020, bus: '001', address: 7 };
const FX3_BOOT: UsbDescriptor = { vendorId: 0x04b4, productId: 0x00f3, bus: 3, address: 2 };
const HACKRF: UsbDescriptor = { vendorId: 0x1d50, productId: 0x6089, bus: '1-1', address: 9 };
const KEYBOARD: UsbDescriptor = { vendorId: 0x046d, productId: 0xc31c, bus: '1', address: 3 };

test('matching: a B210 by its NI id, the shared B200/B210 id, the FX3 bootloader id; unknown devices ignored', () => {
  const found = matchUsbSdrs([KEYBOARD, B210_NI, B2XX, FX3_BOOT], profiles);
  assert.equal(found.length, 3, 'the keyboard is not an SDR');
  const [ni, shared, boot] = found;
  assert.deepEqual(ni, {
    profile: 'usrp-b210',
    name: 'NI USRP-2901 (NI-branded USRP B210)',
    vendorId: 0x3923,
    productId: 0x7814,
    bus: 2,
    address: 5,
    serial: '31F4A2B',
    driver: 'uhd',
    role: 'normal',
  });
  assert.equal(shared?.role, 'normal');
  assert.equal(shared?.driver, 'uhd');
  assert.equal(shared?.bus, 1);
  assert.deepEqual(shared?.candidates, ['usrp-b200', 'usrp-b210']);
  assert.match(shared?.note ?? '', /2500:0020 is listed by usrp-b200, usrp-b210: the id alone cannot tell which.*EEPROM/);
  assert.equal(boot?.role, 'bootloader');
  assert.deepEqual(boot?.candidates, ['bladerf1', 'bladerf2-micro', 'usrp-b200', 'usrp-b210']);
  assert.match(boot?.note ?? '', /no firmware/);
});

test('matching: a device cogmesh has no driver for says so, and which library would serve it', () => {
  const [h] = matchUsbSdrs([HACKRF], profiles);
  assert.equal(h?.profile, 'hackrf-one');
  assert.equal(h?.driver, 'none');
  assert.equal(h?.bus, 1, 'a sysfs-style "1-1" names bus 1');
  assert.match(h?.note ?? '', /cogmesh has no driver for the HackRF yet.*libhackrf/);
  assert.deepEqual(matchUsbSdrs([], profiles), []);
  assert.deepEqual(matchUsbSdrs([KEYBOARD], profiles), []);
});

test('the USB subsystem check: Linux without /dev/bus/usb is reported plainly; other platforms are left to enumeration', () => {
  assert.equal(
    usbSubsystemProblem('linux', () => false),
    'no USB subsystem on this machine (/dev/bus/usb missing)',
  );
  assert.equal(
    usbSubsystemProblem('linux', () => true),
    undefined,
  );
  assert.equal(
    usbSubsystemProblem('darwin', () => false),
    undefined,
  );
});

test('listUsbSdrs on this machine: available with a list, or not, with a plain reason', async () => {
  const list = await listUsbSdrs();
  if (list.available) {
    assert.equal(list.reason, undefined);
    assert.ok(Array.isArray(list.devices), 'a list of devices');
  } else {
    assert.deepEqual(list.devices, []);
    assert.ok(typeof list.reason === 'string' && list.reason.length > 0, `a reason: ${String(list.reason)}`);
    if (process.platform === 'linux' && !existsSync('/dev/bus/usb')) assert.equal(list.reason, 'no USB subsystem on this machine (/dev/bus/usb missing)');
    else assert.match(list.reason ?? '', /usb package|USB enumeration failed|no USB subsystem/);
  }
});

test('listUsbSdrs through a backend: matches what it enumerates; an enumeration failure is a reason, not a rejection', async () => {
  const ok: UsbBackend = { getDevices: async () => [KEYBOARD, HACKRF] };
  const list = await listUsbSdrs({ backend: ok, profiles });
  assert.equal(list.available, true);
  assert.deepEqual(
    list.devices.map((d) => d.profile),
    ['hackrf-one'],
  );
  const failing: UsbBackend = {
    getDevices: async () => {
      throw new Error('getDevices error: /sys/bus/usb/devices/ not found (errno 2)\nmore');
    },
  };
  assert.deepEqual(await listUsbSdrs({ backend: failing, profiles }), {
    available: false,
    reason: 'USB enumeration failed: getDevices error: /sys/bus/usb/devices/ not found (errno 2)',
    devices: [],
  });
});

/** A backend whose attached devices and hot-plug events the test drives. */
function fakeUsb(initial: UsbDescriptor[]) {
  let attached = [...initial];
  const listeners = new Set<() => void>();
  const backend: UsbBackend = {
    getDevices: async () => [...attached],
    watch(onChange) {
      listeners.add(onChange);
      return () => listeners.delete(onChange);
    },
  };
  const plug = (d: UsbDescriptor[]): void => {
    attached = d;
    for (const l of listeners) l();
  };
  return { backend, plug, listeners };
}

/** Resolves once `reports` has n entries (or fails after a bound number of turns of the event loop). */
async function until(reports: UsbSdrList[], n: number): Promise<void> {
  for (let i = 0; i < 1000 && reports.length < n; i++) await new Promise((r) => setImmediate(r));
  assert.ok(reports.length >= n, `expected ${n} reports, got ${reports.length}`);
}

test('watchUsbSdrs: reports the list, then again on hot-plug when the SDRs change, never after stop', async () => {
  const usb = fakeUsb([KEYBOARD]);
  const reports: UsbSdrList[] = [];
  const stop = watchUsbSdrs((l) => reports.push(l), { backend: usb.backend, profiles });
  await until(reports, 1);
  assert.deepEqual(reports[0], { available: true, devices: [] });
  assert.equal(usb.listeners.size, 1, 'subscribed to hot-plug once enumeration worked');

  usb.plug([KEYBOARD, HACKRF]);
  await until(reports, 2);
  assert.deepEqual(
    reports[1]?.devices.map((d) => d.profile),
    ['hackrf-one'],
  );

  // A device that is not an SDR comes and goes: the SDR list is the same, so nothing is reported.
  usb.plug([HACKRF]);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(reports.length, 2, 'no report when the list of SDRs did not change');

  stop();
  assert.equal(usb.listeners.size, 0, 'stop unsubscribes');
  usb.plug([]);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(reports.length, 2, 'nothing after stop');
});

test('watchUsbSdrs: a failing enumeration is reported once and never subscribes', async () => {
  const listeners = new Set<() => void>();
  const backend: UsbBackend = {
    getDevices: async () => {
      throw new Error('no sysfs');
    },
    watch(onChange) {
      listeners.add(onChange);
      return () => listeners.delete(onChange);
    },
  };
  const reports: UsbSdrList[] = [];
  const stop = watchUsbSdrs((l) => reports.push(l), { backend, profiles });
  await until(reports, 1);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(reports, [{ available: false, reason: 'USB enumeration failed: no sysfs', devices: [] }]);
  assert.equal(listeners.size, 0, 'no hot-plug subscription without a working enumeration');
  stop();
});

test('watchUsbSdrs on this machine: without USB it reports the unavailability once; stop is safe either way', async () => {
  const reports: UsbSdrList[] = [];
  const stop = watchUsbSdrs((l) => reports.push(l));
  await until(reports, 1);
  stop();
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(reports.length, 1, 'one report, then nothing after stop');
  if (!reports[0]?.available) {
    assert.ok((reports[0]?.reason ?? '').length > 0, 'a reason');
    if (process.platform === 'linux' && !existsSync('/dev/bus/usb'))
      assert.equal(reports[0]?.reason, 'no USB subsystem on this machine (/dev/bus/usb missing)');
  }
  const silent: UsbSdrList[] = [];
  watchUsbSdrs((l) => silent.push(l))();
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(silent, [], 'stopped before the first report: nothing is reported');
});

test('the usb package as a backend: loads here, and enumeration either works or fails with a reason', async () => {
  const loaded = loadUsbBackend();
  if ('reason' in loaded) {
    assert.match(loaded.reason, /usb package/);
    return;
  }
  const list = await listUsbSdrs({ backend: loaded.backend, profiles });
  if (!list.available) assert.match(list.reason ?? '', /^USB enumeration failed: /);
  else assert.ok(Array.isArray(list.devices), 'a list of devices');
});
