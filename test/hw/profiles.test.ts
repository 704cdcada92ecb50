import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/core/errors.js';
import {
  checkHwProfileDocument,
  findHwProfile,
  hwFilePath,
  hwProfilesDir,
  loadHwProfiles,
  parseHwProfile,
  usbIdConflicts,
  usbIdText,
  type HwProfile,
} from '../../src/hw/profiles.js';
import { parseHwOption } from '../../src/config/hardware.js';
import { udevRules } from '../../src/hw/udev.js';

const files = readdirSync(hwProfilesDir).filter((f) => f.endsWith('.json'));
const raw = (f: string): unknown => JSON.parse(readFileSync(join(hwProfilesDir, f), 'utf8'));

test('every profile file validates against hw/profile.schema.json', () => {
  assert.ok(files.length >= 6, `profiles found: ${files.join(', ')}`);
  for (const f of files) assert.deepEqual(checkHwProfileDocument(raw(f)), [], f);
});

test('the profiles the hardware guide promises are there, each named after its file', () => {
  const names = loadHwProfiles().map((p) => p.profile);
  assert.deepEqual(names, ['bladerf1', 'bladerf2-micro', 'hackrf-one', 'rtl-sdr', 'usrp-b200', 'usrp-b210']);
  for (const f of files) assert.equal((raw(f) as { profile: string }).profile, f.replace(/\.json$/, ''), f);
});

test('USB ids are unique across profiles unless every profile listing one declares the sharing', () => {
  const profiles = loadHwProfiles();
  assert.deepEqual(usbIdConflicts(profiles), []);
  const owners = new Map<string, string[]>();
  for (const p of profiles)
    for (const u of p.usb) owners.set(usbIdText(u.vendorId, u.productId), [...(owners.get(usbIdText(u.vendorId, u.productId)) ?? []), p.profile]);
  const shared = [...owners].filter(([, o]) => o.length > 1).map(([id, o]) => `${id}=${o.join('+')}`);
  // The shared ids are exactly the ones the sources say cannot be told apart by USB id.
  assert.deepEqual(shared.sort(), [
    '04b4:00f0=usrp-b200+usrp-b210',
    '04b4:00f3=bladerf1+bladerf2-micro+usrp-b200+usrp-b210',
    '2500:0020=usrp-b200+usrp-b210',
    '2cf0:5247=bladerf1+bladerf2-micro',
  ]);
  // Every other id, the normal ids above all, names one device family.
  const normal = profiles.flatMap((p) => p.usb.filter((u) => u.role === 'normal' && u.sharedWith.length === 0).map((u) => usbIdText(u.vendorId, u.productId)));
  assert.equal(new Set(normal).size, normal.length, 'normal ids are unique');
});

test("the ids from the vendors' host code are the ones in the profiles", () => {
  const ids = (name: string, role: 'normal' | 'bootloader') =>
    findHwProfile(name)
      .usb.filter((u) => u.role === role)
      .map((u) => usbIdText(u.vendorId, u.productId));
  assert.deepEqual(ids('usrp-b210', 'normal'), ['2500:0020', '3923:7814']);
  assert.deepEqual(ids('usrp-b200', 'normal'), ['2500:0020', '3923:7813']);
  assert.deepEqual(ids('usrp-b210', 'bootloader'), ['04b4:00f3', '04b4:00f0']);
  assert.deepEqual(ids('hackrf-one', 'normal'), ['1d50:6089']);
  assert.deepEqual(ids('hackrf-one', 'bootloader'), ['1fc9:000c']);
  assert.deepEqual(ids('bladerf1', 'normal'), ['2cf0:5246', '1d50:6066']);
  assert.deepEqual(ids('bladerf1', 'bootloader'), ['2cf0:5247', '1d50:6080', '04b4:00f3']);
  assert.deepEqual(ids('bladerf2-micro', 'normal'), ['2cf0:5250']);
  const rtl = ids('rtl-sdr', 'normal');
  assert.equal(rtl.length, 42, 'librtlsdr known_devices has 42 entries');
  assert.deepEqual(rtl.slice(0, 2), ['0bda:2832', '0bda:2838']);
});

test('drivers: uhd serves the B2xx; the others say that cogmesh has no driver and which library would', () => {
  for (const p of loadHwProfiles()) {
    if (p.profile.startsWith('usrp-')) {
      assert.equal(p.driver.cogmesh, 'uhd', p.profile);
      assert.equal(p.driver.frontend, 'uhd', p.profile);
    } else {
      assert.equal(p.driver.cogmesh, null, p.profile);
      assert.match(p.driver.note, /cogmesh has no driver/, p.profile);
      assert.match(p.driver.nativeLibrary, /lib(hackrf|bladeRF|rtlsdr)/, p.profile);
    }
  }
});

test('retune figures: every profile states its basis and source; quick retunes only where the device has one', () => {
  for (const p of loadHwProfiles()) {
    assert.ok(p.retune.normal.source.length > 40, `${p.profile}: a normal retune figure says where it comes from`);
    if (p.retune.quick) assert.equal(p.retune.quick.cogmeshUses, false, `${p.profile}: no cogmesh driver uses a quick retune yet`);
  }
  assert.equal(findHwProfile('rtl-sdr').retune.quick, null);
  assert.match(findHwProfile('usrp-b210').retune.quick?.method ?? '', /set_command_time/);
  assert.equal(findHwProfile('bladerf1').retune.normal.basis, 'vendor-measurement');
});

test('a profile that breaks the schema or its own ranges is refused, naming the field', () => {
  const good = raw('usrp-b210.json') as Record<string, unknown>;
  const bad = structuredClone(good) as Record<string, unknown> & { usb: Array<Record<string, unknown>>; rxGainDb: { min: number; max: number } };
  bad.usb[0]!.vendorId = '2500';
  bad.rxGainDb = { min: 80, max: 76 };
  assert.throws(
    () => parseHwProfile(bad, 'bad.json'),
    (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/usb/0/vendorId') && e.source === 'bad.json',
  );
  const reversed = structuredClone(good) as Record<string, unknown>;
  reversed.rxGainDb = { min: 80, max: 76 };
  assert.throws(
    () => parseHwProfile(reversed, 'reversed.json'),
    (e: unknown) => e instanceof ConfigError && e.issues.some((i) => i.path === '/rxGainDb/max'),
  );
});

test('an id listed by two profiles without declaring it is a conflict, and loading refuses it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-hw-'));
  try {
    const a = raw('hackrf-one.json') as { profile: string; name: string; usb: Array<Record<string, unknown>> };
    const b = structuredClone(a);
    b.profile = 'hackrf-copy';
    writeFileSync(join(dir, 'hackrf-one.json'), JSON.stringify(a));
    writeFileSync(join(dir, 'hackrf-copy.json'), JSON.stringify(b));
    assert.throws(() => loadHwProfiles(dir), /1d50:6089 in hackrf-one: sharedWith is \[\]/);
    const profiles = [parseHwProfile(a), parseHwProfile(b)] as HwProfile[];
    assert.equal(usbIdConflicts(profiles).length, 4, usbIdConflicts(profiles).join('\n'));
    writeFileSync(join(dir, 'misnamed.json'), JSON.stringify(a));
    rmSync(join(dir, 'hackrf-copy.json'));
    assert.throws(() => loadHwProfiles(dir), /"misnamed", the file's name/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--hw takes one profile for every radio or one per radio, and names unknown ones', () => {
  const all = parseHwOption('usrp-b210');
  assert.equal((all as HwProfile).profile, 'usrp-b210');
  const per = parseHwOption('R1=usrp-b210, R2=usrp-b210,R3=usrp-b200') as Record<string, HwProfile>;
  assert.deepEqual(Object.fromEntries(Object.entries(per).map(([r, p]) => [r, p.profile])), { R1: 'usrp-b210', R2: 'usrp-b210', R3: 'usrp-b200' });
  assert.throws(() => parseHwOption('usrp-b999'), { code: 'HW_PROFILE_UNKNOWN', message: /no hardware profile "usrp-b999" \(known: bladerf1, .*usrp-b210\)/ });
  assert.throws(() => parseHwOption('R4=usrp-b210'), { code: 'CLI_USAGE' });
  assert.throws(() => parseHwOption('R1=usrp-b210,R1=usrp-b200'), { code: 'CLI_USAGE', message: /R1 is named twice/ });
});

test('hw/udev/99-cogmesh-sdr.rules is generated from the profiles and gives every id to group plugdev', () => {
  const profiles = loadHwProfiles();
  const file = readFileSync(hwFilePath('udev/99-cogmesh-sdr.rules'), 'utf8');
  assert.equal(file, udevRules(profiles), 'regenerate hw/udev/99-cogmesh-sdr.rules as hw/README.md says');
  for (const p of profiles) {
    for (const u of p.usb) {
      const [v, pr] = usbIdText(u.vendorId, u.productId).split(':');
      assert.ok(file.includes(`ATTR{idVendor}=="${v}", ATTR{idProduct}=="${pr}", MODE="0660", GROUP="plugdev"`), `${p.profile} ${v}:${pr} has a rule`);
    }
  }
});
