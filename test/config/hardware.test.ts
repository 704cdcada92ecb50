import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultNodeConfig, parseNodeConfig } from '../../src/config/load.js';
import type { NodeConfig } from '../../src/config/types.js';
import { findHwProfile, parseHwProfile, type HwProfile } from '../../src/hw/profiles.js';
import { hardwareWarnings, RETUNE_MARGIN, retuneUs } from '../../src/config/hardware.js';

/** A configuration from the defaults with `patch` applied section by section. */
function config(patch: Record<string, Record<string, unknown>>): NodeConfig {
  const base = defaultNodeConfig(1) as unknown as Record<string, Record<string, unknown>>;
  const doc = structuredClone(base);
  for (const [k, v] of Object.entries(patch)) doc[k] = { ...doc[k], ...v };
  return parseNodeConfig(doc);
}

/** A profile like the B210's but with the given normal retune, to make the rule's arithmetic plain. */
function slowRetune(fixedUs: number, quick: { fixedUs: number } | null): HwProfile {
  const b210 = findHwProfile('usrp-b210');
  return {
    ...b210,
    profile: 'slow',
    retune: {
      normal: { ...b210.retune.normal, fixedUs, inFlightSamples: 0 },
      quick: quick && b210.retune.quick ? { ...b210.retune.quick, fixedUs: quick.fixedUs, inFlightSamples: 0 } : null,
    },
  };
}

const codes = (ws: ReturnType<typeof hardwareWarnings>) => ws.map((w) => `${w.code}${w.radio ? ` ${w.radio}` : ''}`);

test("retune time is the fixed part plus the samples in flight at the radio's rate", () => {
  const b210 = findHwProfile('usrp-b210');
  assert.equal(retuneUs(b210.retune.normal, 1e6), b210.retune.normal.fixedUs + b210.retune.normal.inFlightSamples);
  assert.equal(retuneUs({ fixedUs: 2000, inFlightSamples: 524288, basis: 'source-code', source: 'x' }, 20e6), 2000 + 26214);
});

test('a 40 ms switching interval on a device whose normal retune takes 30 ms needs timed/quick retune', () => {
  const cfg = config({ switching: { intervalMs: 40, overheadUs: 30000 }, sensing: { durationMs: 1000, channelsPerRound: 1 } });
  const ws = hardwareWarnings(cfg, slowRetune(30000, { fixedUs: 2000 }));
  assert.deepEqual(codes(ws), ['HW_SWITCH_INTERVAL R2']);
  const w = ws[0]!;
  assert.equal(w.path, '/switching/intervalMs');
  assert.equal(w.value, 40);
  assert.match(w.message, /switching\.intervalMs 40 ms is not much larger than a normal retune of R2 on slow \(30 ms at 1 MS\/s\)/);
  assert.match(w.message, /each switch would cost 75% of the dwell/);
  assert.match(w.message, /needs a timed\/quick retune: the UHD timed commands one takes about 2 ms and would fit \(cogmesh does not use it yet\)/);
  // The same interval on a real slow-retune profile: an RTL-SDR at 2.4 MS/s (about 21 ms) has no quick retune at all.
  const rtl = hardwareWarnings(config({ radios: { R2: { sampleRateHz: 2.4e6 } }, switching: { intervalMs: 40 } }), findHwProfile('rtl-sdr'));
  assert.match(
    rtl.find((x) => x.code === 'HW_SWITCH_INTERVAL')?.message ?? '',
    /40 ms is not much larger than a normal retune of R2 on rtl-sdr \(20\.853 ms at 2\.4 MS\/s\).*rtl-sdr has no timed or quick retune/,
  );
  // No warning once the interval is RETUNE_MARGIN retunes long.
  const at = config({ switching: { intervalMs: (RETUNE_MARGIN * 30000) / 1000, overheadUs: 30000 }, sensing: { durationMs: 1000, channelsPerRound: 1 } });
  assert.deepEqual(hardwareWarnings(at, slowRetune(30000, { fixedUs: 2000 })), []);
});

test('without a quick retune, or with one too slow for the dwell, the warning says so', () => {
  const cfg = config({ switching: { intervalMs: 40, overheadUs: 30000 }, sensing: { durationMs: 1000, channelsPerRound: 1 } });
  assert.match(hardwareWarnings(cfg, slowRetune(30000, null))[0]?.message ?? '', /slow has no timed or quick retune/);
  assert.match(
    hardwareWarnings(cfg, slowRetune(30000, { fixedUs: 5000 }))[0]?.message ?? '',
    /Even a timed\/quick retune \(UHD timed commands, about 5 ms\) needs a dwell of at least 50 ms/,
  );
});

test("a real profile: the example node's 50 ms interval and 70 ms sensing round are too short for a B210's normal retune", () => {
  const cfg = config({ switching: { intervalMs: 50, overheadUs: 1000 } });
  const ws = hardwareWarnings(cfg, findHwProfile('usrp-b210'));
  assert.deepEqual(codes(ws), ['HW_SWITCH_INTERVAL R2', 'HW_SWITCH_OVERHEAD R2', 'HW_SENSING_VISIT R2']);
  const visit = ws.find((w) => w.code === 'HW_SENSING_VISIT')!;
  assert.match(visit.message, /visits 11 channels in 70 ms on R2, 6\.364 ms each/);
  assert.match(ws.find((w) => w.code === 'HW_SWITCH_OVERHEAD')!.message, /set it to at least 42704/);
});

test("a configuration within the device's ranges and slow enough for its retune gives no warning", () => {
  const b210 = findHwProfile('usrp-b210');
  const rate = 20e6;
  const normal = retuneUs(b210.retune.normal, rate);
  const radio = { frontend: 'uhd', sampleRateHz: rate, gainDb: 40 };
  const cfg = config({
    radios: { R1: radio, R2: radio, R3: { ...radio, channel: 1 } },
    switching: { intervalMs: Math.ceil((RETUNE_MARGIN * normal) / 1000), overheadUs: normal },
    sensing: { durationMs: 200, channelsPerRound: 1 },
  });
  assert.deepEqual(hardwareWarnings(cfg, b210), []);
  assert.deepEqual(hardwareWarnings(cfg, { R2: b210 }), [], 'a per-radio assignment checks only the radios named');
});

test('sample rate, gain, tuning range, transmit and driver findings name the radio and the field', () => {
  const cfg = config({
    radios: { R1: { sampleRateHz: 500000, gainDb: 90 }, R2: { frontend: 'uhd', sampleRateHz: 2.4e6 }, R3: { channel: 6 } },
    switching: { intervalMs: 10000, overheadUs: 1000000 },
    sensing: { durationMs: 2500, periodMs: 5000, channelsPerRound: 1 },
  });
  const ws = hardwareWarnings(cfg, { R1: findHwProfile('rtl-sdr'), R2: findHwProfile('hackrf-one'), R3: findHwProfile('rtl-sdr') });
  const by = (code: string, radio?: string) => ws.find((w) => w.code === code && w.radio === radio);
  assert.match(by('HW_SAMPLE_RATE', 'R1')?.message ?? '', /R1 samples at 500 kS\/s, which rtl-sdr refuses \(300\.001 kS\/s - 900 kS\/s\)/);
  assert.equal(by('HW_GAIN', 'R1')?.path, '/radios/R1/gainDb');
  assert.match(by('HW_TUNE_RANGE', 'R3')?.message ?? '', /R3 cannot reach channel 6 \(2437 MHz\)/);
  assert.match(by('HW_NO_TRANSMIT', 'R3')?.message ?? '', /R3 transmits \(HELLOs and route discovery\), but rtl-sdr is receive-only/);
  assert.equal(by('HW_NO_TRANSMIT', 'R1'), undefined, 'R1 only receives');
  assert.match(by('HW_FRONTEND_KIND', 'R2')?.message ?? '', /R2 names the "uhd" front-end, but a radio on hackrf-one is a "usb" front-end/);
  const noDriver = ws.filter((w) => w.code === 'HW_NO_DRIVER').map((w) => w.message);
  assert.equal(noDriver.length, 2, noDriver.join('\n'));
  assert.ok(
    noDriver.some((m) => /RTL-SDR .* \(librtlsdr .*would serve it\): R1, R3 cannot run on it/.test(m)),
    noDriver.join('\n'),
  );
});

test('a profile object built by hand goes through the same checks as a loaded one', () => {
  const doc = JSON.parse(JSON.stringify({ ...findHwProfile('bladerf1') }));
  // Back to the file's form: ids as hex strings.
  doc.usb = doc.usb.map((u: { vendorId: number; productId: number }) => ({
    ...u,
    vendorId: `0x${u.vendorId.toString(16).padStart(4, '0')}`,
    productId: `0x${u.productId.toString(16).padStart(4, '0')}`,
  }));
  const p = parseHwProfile(doc, 'bladerf1 copy');
  assert.deepEqual(hardwareWarnings(defaultNodeConfig(1), p), hardwareWarnings(defaultNodeConfig(1), findHwProfile('bladerf1')));
});
