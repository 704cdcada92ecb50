import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bandGridOf, binHz, gridHz, stitchBand, type BandGrid } from '../../src/monitor/band.js';
import type { PsdView } from '../../src/router/view.js';

/** A PSD of `bins` bins at `centerMHz`, 20 MHz wide, every bin at `level` dBm/Hz (or `level(i)`). */
function psd(channel: number, centerMHz: number, level: number | ((i: number) => number), bins = 8, rateHz = 20e6): PsdView {
  const dbmPerHz = new Float32Array(bins);
  for (let i = 0; i < bins; i++) dbmPerHz[i] = typeof level === 'number' ? level : level(i);
  return { round: 1, channel, centerHz: centerMHz * 1e6, sampleRateHz: rateHz, startUs: 0, durationUs: 4000, segments: 4, dbmPerHz };
}

test('binHz: bin i is centred on centre + (i - n/2) * rate / n, lowest first', () => {
  const p = psd(6, 2437, -150);
  assert.equal(binHz(p, 0), 2427e6);
  assert.equal(binHz(p, 4), 2437e6);
  assert.equal(binHz(p, 7), 2444.5e6);
});

test("bandGridOf: from the lowest bin's lower edge to the highest bin's upper edge of all the PSDs; undefined without any", () => {
  assert.equal(bandGridOf([], 100), undefined);
  const g = bandGridOf([psd(11, 2462, -150), psd(1, 2412, -150)], 300.7)!;
  // Bins of 2.5 MHz: channel 1's lowest is centred on 2402 MHz, channel 11's highest on 2469.5 MHz.
  assert.deepEqual(g, { fromHz: 2400.75e6, toHz: 2470.75e6, points: 300 });
  assert.equal(gridHz(g, 0), g.fromHz, "the first point is the lowest bin's edge");
  assert.equal(gridHz(g, g.points - 1), g.toHz, "the last point is the highest bin's edge");
  assert.equal(bandGridOf([psd(1, 2412, -150)], 0)!.points, 2, 'at least 2 points');
});

test('stitchBand: one PSD alone gives its own bins back on its own grid', () => {
  const p = psd(6, 2437, (i) => -160 + i);
  const g: BandGrid = { fromHz: binHz(p, 0), toHz: binHz(p, 7), points: 8 };
  assert.deepEqual(Array.from(stitchBand([p], g)), Array.from(p.dbmPerHz));
  // A finer grid takes each point from the nearest bin.
  const fine = stitchBand([p], { ...g, points: 15 });
  assert.deepEqual(Array.from(fine), [-160, -159, -159, -158, -158, -157, -157, -156, -156, -155, -155, -154, -154, -153, -153]);
});

test('stitchBand: where captures overlap, each point comes from the capture whose centre is nearest', () => {
  // Channels 1 and 2 of the 2.4 GHz band: 5 MHz apart, 20 MHz captures overlap over 15 MHz.
  const a = psd(1, 2412, -150, 64);
  const b = psd(2, 2417, -120, 64);
  const g: BandGrid = { fromHz: 2402e6, toHz: 2426e6, points: 49 }; // every 0.5 MHz
  const out = stitchBand([a, b], g);
  for (let i = 0; i < g.points; i++) {
    const f = gridHz(g, i) / 1e6;
    if (f < 2414.5) assert.equal(out[i], -150, `${f} MHz is nearer channel 1's centre`);
    else if (f > 2414.5) assert.equal(out[i], -120, `${f} MHz is nearer channel 2's centre`);
  }
  // The order of the PSDs does not matter away from the exact midpoint.
  const swapped = stitchBand([b, a], g);
  for (let i = 0; i < g.points; i++) if (gridHz(g, i) !== 2414.5e6) assert.equal(swapped[i], out[i]);
});

test('stitchBand: a capture reaches half a bin past its outer bins; points none reaches are NaN gaps, grid ends included', () => {
  const a = psd(1, 2412, -150);
  const b = psd(11, 2462, -140);
  const g: BandGrid = { fromHz: 2392e6, toHz: 2482e6, points: 91 }; // every MHz
  const out = stitchBand([a, b], g);
  const at = (mhz: number): number => out[mhz - 2392]!;
  assert.ok(Number.isNaN(at(2392)), 'below the lowest bin: a gap at the grid start');
  assert.ok(Number.isNaN(at(2400)));
  assert.equal(at(2401), -150, "channel 1's lowest bin (2402 MHz, 2.5 MHz wide) reaches down to 2400.75");
  assert.equal(at(2420), -150, "channel 1's highest bin (2419.5 MHz) reaches up to 2420.75");
  assert.ok(Number.isNaN(at(2421)), 'between the captures: a gap');
  assert.ok(Number.isNaN(at(2450)));
  assert.equal(at(2451), -140);
  assert.equal(at(2470), -140);
  assert.ok(Number.isNaN(at(2471)), 'above the highest bin');
  assert.ok(Number.isNaN(at(2482)), 'a gap at the grid end');
});

test('stitchBand: captures whose centres are their sample rate apart tile the band with no gap', () => {
  // 5 Msps captures on the 5 MHz channel grid, 64 bins each.
  const psds = [1, 2, 3].map((c) => psd(c, 2407 + 5 * c, -150 + c, 64, 5e6));
  const g = bandGridOf(psds, 1501)!;
  const out = stitchBand(psds, g);
  assert.ok(
    Array.from(out).every((v) => !Number.isNaN(v)),
    'no gap between neighbouring captures',
  );
});

test('stitchBand: without PSDs, every point is a gap; into a given array', () => {
  const g: BandGrid = { fromHz: 1e9, toHz: 2e9, points: 5 };
  const out = new Float32Array(5).fill(7);
  assert.equal(stitchBand([], g, out), out, 'fills the array it is given');
  assert.ok(Array.from(out).every(Number.isNaN));
});
