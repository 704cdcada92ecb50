import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WebSocket } from 'ws';
import { bandGridOf, gridHz, stitchBand } from '../../src/monitor/band.js';
import { parseMonitorFrame } from '../../src/monitor/frames.js';
import type { PsdView } from '../../src/router/view.js';
import { stopAll } from '../support/cli.js';
import { startNodeWithMonitor } from '../support/node-process.js';

/**
 * The whole chain of the monitor's spectrum, in a real `cogmesh node`
 * process: a primary node on channel 6 in the emulated band, the sim
 * front-end sampling 20 Msps (so that the 5 MHz-spaced visits cover the band
 * without gaps), the detector's IQ through the Welch PSD, PSD frames on the
 * monitor's WebSocket, stitched band-wide as the page stitches them. The
 * primary node must show as a raised hump 22 MHz wide centred on 2437 MHz:
 * the 802.11 DSSS mask it transmits with, flat within +-11 MHz.
 */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-psd-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a PN on channel 6 shows in the monitor as a 22 MHz-wide hump centred at 2437 MHz', { timeout: 120_000 }, async () => {
  const { proc, url } = await startNodeWithMonitor(dir, {
    node: { id: 1, name: 'psd' },
    radios: { R2: { sampleRateHz: 20e6 } },
    // One channel a round, 10 ms each: a loaded machine that runs a timer late shortens a visit, never skips it.
    sensing: { radio: 'R2', durationMs: 10, periodMs: 200, channelsPerRound: 1, backend: 'cpu' },
    monitor: { psd: { bins: 256, segments: 64 } },
    sim: {
      band: { noiseFigureDb: 6, phases: [{ durationS: 3600, pn: [{ channel: 6, powerDbm: -50, pattern: { kind: 'fraction', busy: 1, meanBurstMs: 1 } }] }] },
    },
  });
  try {
    const ws = new WebSocket(new URL('stream', url.replace(/^http/, 'ws')));
    const latest = new Map<number, PsdView>();
    const bad: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no PSD of every channel within 60 s (have ${[...latest.keys()].join(', ')}; bad ${bad.join(', ')})`)),
        60_000,
      );
      ws.on('message', (data, binary) => {
        if (!binary) return;
        const buf = data as Buffer;
        const r = parseMonitorFrame(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
        if (!r.ok) return void bad.push(r.error.code);
        if (r.value.kind !== 'psd') return;
        const psd = r.value.psd;
        latest.set(psd.channel, psd);
        // The latest PSD of each of the 11 channels, as the page draws them (the PN is on all the time).
        if (latest.size === 11) {
          clearTimeout(timer);
          resolve();
        }
      });
      ws.once('error', reject);
    });
    ws.close();
    assert.deepEqual(bad, [], 'every binary message parses');
    for (const p of latest.values()) {
      assert.equal(p.dbmPerHz.length, 256);
      assert.equal(p.sampleRateHz, 20e6);
      assert.ok(p.segments >= 1 && p.segments <= 64, `segments ${p.segments}`);
    }

    const psds = [...latest.values()];
    const grid = bandGridOf(psds, 701)!;
    assert.ok(grid.fromHz <= 2402.1e6 && grid.toHz >= 2471.8e6, `the band is covered: ${grid.fromHz} - ${grid.toHz} Hz`);
    const band = stitchBand(psds, grid);
    const at = (mhz: number): number => band[Math.round(((mhz * 1e6 - grid.fromHz) / (grid.toHz - grid.fromHz)) * (grid.points - 1))]!;
    const values = (pred: (mhz: number) => boolean): number[] => {
      const out: number[] = [];
      for (let i = 0; i < grid.points; i++) {
        const mhz = gridHz(grid, i) / 1e6;
        if (pred(mhz)) out.push(band[i]!);
      }
      return out;
    };
    assert.ok(
      values(() => true).every((v) => Number.isFinite(v)),
      'no gap in the band: each 20 MHz capture reaches its neighbours',
    );
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Beyond 22 MHz of the carrier the mask is -50 dBr: the thermal floor (-174 dBm/Hz + the 6 dB noise figure) shows.
    const floor = median(values((f) => Math.abs(f - 2437) > 25));
    assert.ok(Math.abs(floor - -168) < 3, `the floor beyond the hump is about -168 dBm/Hz: ${floor.toFixed(1)}`);
    // Flat within +-11 MHz of the carrier, and as far above the floor as -50 dBm is above the channel's
    // thermal noise (-174 dBm/Hz over 22 MHz, plus 6 dB: -94.6 dBm).
    const top = values((f) => Math.abs(f - 2437) <= 9);
    const topLevel = median(top);
    assert.ok(
      top.every((v) => Math.abs(v - topLevel) < 3),
      `the top is flat within 3 dB from 2428 to 2446 MHz: ${Math.min(...top).toFixed(1)} to ${Math.max(...top).toFixed(1)}`,
    );
    assert.ok(Math.abs(topLevel - floor - 44.6) < 2, `the hump stands 44.6 dB above the floor: ${(topLevel - floor).toFixed(1)} dB`);

    // Its edges: where the level first falls 10 dB below the top, walking out from the centre.
    const edge = (dir: -1 | 1): number => {
      let mhz = 2437;
      while (Math.abs(mhz - 2437) < 30 && at(mhz) > topLevel - 10) mhz += dir * 0.1;
      return mhz;
    };
    const lo = edge(-1);
    const hi = edge(1);
    assert.ok(Math.abs(hi - lo - 22) <= 1.5, `the hump is 22 MHz wide: ${lo.toFixed(1)} to ${hi.toFixed(1)} MHz`);
    assert.ok(Math.abs((hi + lo) / 2 - 2437) <= 0.75, `centred at 2437 MHz: ${((hi + lo) / 2).toFixed(2)} MHz`);
    // The mask's skirt, -30 dBr from 11 to 22 MHz off the carrier.
    const skirt = median(values((f) => Math.abs(f - 2437) > 12.5 && Math.abs(f - 2437) < 21));
    assert.ok(Math.abs(topLevel - skirt - 30) < 3, `the skirt is 30 dB below the top: ${(topLevel - skirt).toFixed(1)} dB`);
  } finally {
    await stopAll([proc]);
  }
});
