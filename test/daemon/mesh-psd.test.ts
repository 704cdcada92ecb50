import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readSigmf } from '../../radio/file/sigmf.js';
import { MediumServer } from '../../radio/medium/server.js';
import { defaultNodeConfig } from '../../src/config/load.js';
import { MeshNode } from '../../src/daemon/mesh.js';
import type { PsdView, RecordingInfo } from '../../src/router/view.js';
import { memoryLogger } from '../support/control-view.js';
import { MEDIUM_SETUP } from '../support/medium-setup.js';

/**
 * A router on the air medium process (what `npm start` runs) reads its
 * spectrum off the IQ its detector senses: with a monitor configured it
 * streams a PSD of every visit, where a primary node on channel 6 stands
 * above the others, and records what it senses on request; without a
 * monitor it runs neither.
 */
test('a router on the medium streams the PSD of each visit and records its sensing IQ, only when it runs a monitor', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-mesh-psd-'));
  const setup = {
    ...MEDIUM_SETUP,
    band: { ...MEDIUM_SETUP.band, pn: [{ channel: 6, powerDbm: -50, pattern: { kind: 'fraction' as const, busy: 1, meanBurstMs: 1 } }] },
  };
  const server = new MediumServer(setup, { endpoint: `ipc://${join(dir, 'medium')}`, log: memoryLogger().log });
  await server.start();
  try {
    const recDir = join(dir, 'rec');
    mkdirSync(recDir);
    for (const monitor of [true, false]) {
      const cfg = defaultNodeConfig(1);
      cfg.sim.medium.endpoint = `ipc://${join(dir, 'medium')}`;
      cfg.sensing.periodMs = 250;
      if (monitor) {
        // The monitor's server is the CLI's to start; the node runs its taps as soon as one is configured.
        cfg.monitor.listen = '127.0.0.1:0';
        cfg.monitor.record.dir = recDir;
      }
      const node = await MeshNode.start(cfg, memoryLogger().log);
      const psds = new Map<number, PsdView>();
      const records: RecordingInfo[] = [];
      node.subscribe((t) => {
        if (t.kind === 'psd') psds.set(t.psd.channel, t.psd);
        if (t.kind === 'record') records.push(t.recording);
      });
      try {
        if (!monitor) {
          assert.equal(node.recordings(), undefined, 'no monitor: nothing records');
          await new Promise((r) => setTimeout(r, 1500));
          assert.equal(psds.size, 0, 'no monitor: no PSD');
          continue;
        }
        const rec = node.recordings()!.start(0.6);
        const deadline = Date.now() + 30_000;
        while ((psds.size < 11 || !records.some((r) => r.state !== 'recording')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.equal(psds.size, 11, `a PSD of every channel: ${[...psds.keys()].join(', ')}`);
        const mean = (p: PsdView): number => 10 * Math.log10(p.dbmPerHz.reduce((a, v) => a + 10 ** (v / 10), 0) / p.dbmPerHz.length);
        for (const p of psds.values()) {
          assert.equal(p.sampleRateHz, cfg.radios.R2.sampleRateHz, "the sensing radio's rate");
          assert.equal(p.dbmPerHz.length, cfg.monitor.psd.bins);
          if (p.channel !== 6) assert.ok(mean(psds.get(6)!) - mean(p) > 30, `channel 6 stands above channel ${p.channel}`);
        }
        const done = records.find((r) => r.name === rec.name && r.state !== 'recording');
        assert.equal(done?.state, 'done', JSON.stringify(records));
        const file = await readSigmf(join(recDir, `${rec.name}.sigmf-meta`));
        assert.equal(file.sampleCount, done.samples);
        assert.ok(file.meta.captures.length >= 11, `${file.meta.captures.length} captures`);
      } finally {
        await node.stop();
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
