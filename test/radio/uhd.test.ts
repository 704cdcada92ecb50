/**
 * The UHD front-end against the real libuhd (UHD 4.3, as Debian ships it and
 * CI installs it). No USRP is attached where these run, so this is UHD's
 * no-device path, for real: discovery finds nothing and opening is refused
 * with UHD's own words. Skipped, saying why, only when libuhd cannot be
 * loaded. The streaming logic is tested against a fake in uhd-frontend.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { FrontendError } from '../../src/core/errors.js';
import { loadUhdLib, openUhdFrontend, uhdDevices, uhdInfo, uhdLib } from '../../radio/uhd/index.js';

const info = uhdInfo();
const skip = info.available ? false : `libuhd cannot be loaded here: ${info.reason ?? 'unknown reason'}`;
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The library-missing messages are libuhd's; without koffi (an optional dependency) they are about koffi instead. */
function koffiMissing(): string | false {
  try {
    createRequire(import.meta.url).resolve('koffi');
    return false;
  } catch {
    return 'koffi (optional dependency) is not installed';
  }
}

async function rejection(p: Promise<unknown>): Promise<FrontendError> {
  let caught: unknown;
  await p.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => {
      caught = e;
    },
  );
  assert.ok(caught instanceof FrontendError, `expected a FrontendError, got ${String(caught)}`);
  return caught;
}

test('libuhd 4.3 loads and reports its version and ABI', { skip }, () => {
  assert.equal(info.available, true);
  assert.match(info.version ?? '', /^4\.3\./, `version ${info.version}`);
  assert.match(info.abi ?? '', /^4\.3/, `abi ${info.abi}`);
});

test('every call the front-end needs is bound, timed commands and the tx streamer included', { skip }, () => {
  const lib = uhdLib();
  for (const name of [
    'uhd_usrp_find',
    'uhd_usrp_make',
    'uhd_usrp_set_rx_freq',
    'uhd_rx_streamer_recv',
    'uhd_rx_metadata_out_of_sequence',
    'uhd_usrp_get_time_now',
    'uhd_usrp_set_command_time',
    'uhd_usrp_clear_command_time',
    'uhd_tx_streamer_send',
    'uhd_usrp_get_tx_stream',
    'uhd_tx_streamer_recv_async_msg',
    'uhd_async_metadata_event_code',
    'uhd_async_metadata_time_spec',
    'uhd_tx_metadata_make',
    'uhd_tx_metadata_time_spec',
    'uhd_usrp_get_tx_num_channels',
    'uhd_usrp_set_tx_freq',
    'uhd_usrp_set_tx_gain',
    'uhd_usrp_get_tx_gain_range',
  ]) {
    assert.ok(lib.symbols.has(name), `${name} not bound from ${lib.path}`);
  }
});

test('transmit metadata made by UHD and read back: burst flags and 64-bit times survive the binding', { skip }, () => {
  const lib = uhdLib();
  const cases = [
    { startOfBurst: true, endOfBurst: false, timeSpec: { fullSecs: 1_764_700_000, fracSecs: 0.123456789 } },
    // past 2^32 s: a 32-bit time_t would lose it
    { startOfBurst: true, endOfBurst: true, timeSpec: { fullSecs: 2 ** 33 + 5, fracSecs: 0.5 } },
    { startOfBurst: false, endOfBurst: true },
    { startOfBurst: false, endOfBurst: false },
  ];
  for (const md of cases) assert.deepEqual(lib.checkTxMetadata(md), md);
});

test('uhdDevices: UHD discovery runs and finds no USRP here', { skip }, async () => {
  const r = await uhdDevices();
  assert.deepEqual(r, { available: true, devices: [] });
});

test('openUhdFrontend with no device: RADIO_NO_DEVICE quoting UHD', { skip }, async () => {
  const e = await rejection(openUhdFrontend({ deviceArgs: '', sampleRateHz: 1e6, gainDb: 30, calibrationDb: -20 }));
  assert.equal(e.code, 'RADIO_NO_DEVICE', e.message);
  assert.match(e.message, /^no USRP found \(device args "": UHD said "/);
  assert.match(e.message, /No devices found/, 'UHD said why');
});

test('openUhdFrontend with device args: UHD names them in its refusal', { skip }, async () => {
  const e = await rejection(openUhdFrontend({ deviceArgs: 'type=b200,serial=0000000', sampleRateHz: 1e6, gainDb: 30, calibrationDb: -20 }));
  assert.equal(e.code, 'RADIO_NO_DEVICE', e.message);
  assert.match(e.message, /device args "type=b200,serial=0000000"/);
  assert.match(e.message, /No devices found for -----> Device Address: type: b200 serial: 0000000/);
});

test('openUhdFrontend with the transmit chain asked for and no device: RADIO_NO_DEVICE quoting UHD', { skip }, async () => {
  const e = await rejection(
    openUhdFrontend({ deviceArgs: 'type=b200', sampleRateHz: 1e6, gainDb: 30, calibrationDb: -20, txChannel: 0, txGainDb: 10, txAntenna: 'TX/RX' }),
  );
  assert.equal(e.code, 'RADIO_NO_DEVICE', e.message);
  assert.match(e.message, /^no USRP found \(device args "type=b200": UHD said "/);
  assert.match(e.message, /No devices found for -----> Device Address: type: b200/);
});

test('a library that cannot be loaded is RADIO_NO_LIBRARY naming what was tried and how to install', { skip: koffiMissing() }, () => {
  assert.throws(
    () => loadUhdLib({ env: { COGMESH_LIBUHD: '/nonexistent/libuhd.so' } }),
    (e: unknown) =>
      e instanceof FrontendError &&
      e.code === 'RADIO_NO_LIBRARY' &&
      e.message.includes('/nonexistent/libuhd.so') &&
      e.message.includes('apt install libuhd4.3.0'),
  );
  assert.throws(
    () => loadUhdLib({ env: {}, names: ['libuhd-missing-a.so', 'libuhd-missing-b.so'] }),
    (e: unknown) => e instanceof FrontendError && e.code === 'RADIO_NO_LIBRARY' && /tried libuhd-missing-a\.so \(.*\), libuhd-missing-b\.so/.test(e.message),
  );
});

test('COGMESH_LIBUHD=/nonexistent in the environment: RADIO_NO_LIBRARY from every entry point', { skip: koffiMissing() }, async () => {
  const code = `
    const m = await import(${JSON.stringify(pathToFileURL(`${repoRoot}radio/uhd/index.ts`).href)});
    let open;
    try { await m.openUhdFrontend({ deviceArgs: '', sampleRateHz: 1e6, gainDb: 0, calibrationDb: 0 }); }
    catch (e) { open = { code: e.code, message: e.message }; }
    console.log(JSON.stringify({ info: m.uhdInfo(), devices: await m.uhdDevices(), open }));
  `;
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', code],
      { cwd: repoRoot, env: { ...process.env, COGMESH_LIBUHD: '/nonexistent' }, timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
  const r = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as {
    info: { available: boolean; reason?: string };
    devices: { available: boolean; devices: unknown[] };
    open?: { code: string; message: string };
  };
  assert.equal(r.info.available, false);
  assert.match(r.info.reason ?? '', /COGMESH_LIBUHD=\/nonexistent/);
  assert.equal(r.devices.available, false);
  assert.deepEqual(r.devices.devices, []);
  assert.equal(r.open?.code, 'RADIO_NO_LIBRARY', r.open?.message);
  assert.match(r.open?.message ?? '', /apt install libuhd4\.3\.0/);
});
