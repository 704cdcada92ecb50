import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cogmesh } from '../support/cli.js';

/** Runs the cogmesh CLI from source, as `cogmesh ARGS...`. */

test('cogmesh config check config/examples/node.json --hw usrp-b210 exits 0 and prints the warnings', () => {
  const r = cogmesh('config', 'check', 'config/examples/node.json', '--hw', 'usrp-b210');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^config\/examples\/node\.json: valid, version [0-9a-f]{16}\n/);
  assert.match(r.out, /^hardware usrp-b210 \(R1, R2, R3 name the sim front-end: checked as if on this hardware\):$/m);
  assert.ok(/^ {2}no hardware warnings$/m.test(r.out) || /^ {2}warning HW_/m.test(r.out), `warnings or "no hardware warnings":\n${r.out}`);
  // The example's 50 ms switching interval is shorter than ten normal B210 retunes.
  assert.match(r.out, /^ {2}warning HW_SWITCH_INTERVAL R2 \/switching\/intervalMs: switching\.intervalMs 50 ms is not much larger than a normal retune/m);
});

test('--hw with a configuration that suits the device prints "no hardware warnings"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cogmesh-hw-cli-'));
  try {
    const radio = { frontend: 'uhd', sampleRateHz: 20000000, gainDb: 40 };
    const file = join(dir, 'node.json');
    writeFileSync(
      file,
      JSON.stringify({
        node: { id: 1 },
        radios: { R1: radio, R2: radio, R3: { ...radio, channel: 1 } },
        switching: { intervalMs: 200, overheadUs: 12000 },
        sensing: { durationMs: 200, channelsPerRound: 1 },
      }),
    );
    const r = cogmesh('config', 'check', file, '--hw', 'usrp-b210');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^hardware usrp-b210:\n {2}no hardware warnings\n$/m);
    const printed = cogmesh('config', 'check', file, '--print', '--hw', 'usrp-b210');
    assert.equal(printed.code, 0, printed.err);
    assert.doesNotThrow(() => JSON.parse(printed.out), 'with --print stdout is the configuration alone');
    assert.match(printed.err, /no hardware warnings/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--hw with an unknown profile is refused with exit code 2, naming the known ones', () => {
  const r = cogmesh('config', 'check', 'config/examples/node.json', '--hw', 'usrp-x310');
  assert.equal(r.code, 2);
  assert.match(r.err, /no hardware profile "usrp-x310" \(known: bladerf1, bladerf2-micro, hackrf-one, rtl-sdr, usrp-b200, usrp-b210\) \[HW_PROFILE_UNKNOWN\]/);
  assert.equal(r.out, '');
});
