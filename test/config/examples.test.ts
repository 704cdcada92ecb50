import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { r1Channels } from '../../src/router/params.js';
import { ism2g4 } from '../../radio/channels.js';
import { loadNodeConfig, schemaPath } from '../../src/config/load.js';
import type { PnConfig } from '../../src/config/types.js';

const examplesDir = join(dirname(schemaPath), 'examples');

describe('config/examples', () => {
  const files = readdirSync(examplesDir).filter((f) => f.endsWith('.json'));

  test('the examples are there', () => {
    assert.ok(files.includes('node.json'));
    assert.ok(files.includes('demo.json'));
  });

  for (const f of files) {
    test(`${f} validates against the schema and the loader's rules`, async () => {
      const cfg = await loadNodeConfig(join(examplesDir, f));
      assert.equal(typeof cfg.node.id, 'number');
    });
  }

  test('node.json: node 1 with primary nodes on the emulated band', async () => {
    const cfg = await loadNodeConfig(join(examplesDir, 'node.json'));
    assert.equal(cfg.node.id, 1);
    assert.ok(cfg.sim.band.pn.length >= 2);
    assert.ok(Object.values(cfg.radios).every((r) => r.frontend === 'sim'));
  });

  test('demo.json: sensing and dwell as the demo promises, PN load in repeating 15 s phases', async () => {
    const cfg = await loadNodeConfig(join(examplesDir, 'demo.json'));
    assert.equal(cfg.channelPlan.channels, 11);
    assert.equal(cfg.sensing.durationMs, 70);
    assert.equal(cfg.sensing.periodMs, 1000);
    assert.equal(cfg.channel.minDwellMs, 3000);
    assert.equal(cfg.log.format, 'pretty');
    assert.equal(cfg.sim.band.repeat, true);
    assert.ok(cfg.sim.band.phases.length >= 3);
    for (const ph of cfg.sim.band.phases) assert.ok(ph.durationS >= 10 && ph.durationS <= 20, `phase of ${ph.durationS} s`);
    const total = cfg.sim.band.phases.reduce((s, ph) => s + ph.durationS, 0);
    assert.ok(total <= 60, 'a newcomer sees every phase within a minute');
  });

  test('demo.json: each phase leaves exactly one channel R1 may take quiet, a different one each time', async () => {
    // Quiet: no PN reaches the channel above the CCA threshold, counting the
    // spill of a PN into the channels that overlap its own.
    const cfg = await loadNodeConfig(join(examplesDir, 'demo.json'));
    const plan = ism2g4(cfg.channelPlan.channels);
    const strongest = (pns: PnConfig[], ch: number): number =>
      Math.max(-Infinity, ...pns.filter((p) => p.pattern.kind !== 'off').map((p) => p.powerDbm + 10 * Math.log10(plan.overlapFactor(p.channel, ch))));
    const quiet = cfg.sim.band.phases.map((ph) => r1Channels(cfg, plan).filter((ch) => strongest(ph.pn, ch) < cfg.sensing.ccaThresholdDbm));
    assert.deepEqual(quiet, [[11], [6], [1]]);
  });
});
