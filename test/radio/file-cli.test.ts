import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cogmesh } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-file-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the cogmesh CLI from source, as `cogmesh ARGS...`. */

const digest = (path: string): string => createHash('sha256').update(readFileSync(path).toString('base64')).digest('hex');

interface SenseJson {
  seconds: number;
  seed: number;
  plan: string;
  channels: Array<{ channel: number; centerMHz: number; w: number; rc: number; powerDbm: number | null; windows: number }>;
  r1: number | null;
}

test('cogmesh record, then cogmesh sense --frontend file: w near the recorded busy fraction and the same R1 as on the band', () => {
  const out = join(dir, 'pn6');
  const rec = cogmesh('record', '--out', out, '--pn', '6:0.4', '--seconds', '2', '--seed', '5', '--channels', '1,6,11', '--json');
  assert.equal(rec.code, 0, rec.err);
  const r = JSON.parse(rec.out) as { meta: string; samples: number; captures: number; channels: Array<{ channel: number; pnBusy: number; seconds: number }> };
  assert.equal(r.meta, `${out}.sigmf-meta`);
  assert.equal(r.samples, 2_000_000);
  assert.equal(r.captures, 200);
  const truth = r.channels.find((c) => c.channel === 6)!.pnBusy;

  const sensed = cogmesh('sense', '--frontend', 'file', '--input', r.meta, '--seconds', '2', '--json');
  assert.equal(sensed.code, 0, sensed.err);
  const j = JSON.parse(sensed.out) as SenseJson;
  assert.deepEqual(Object.keys(j), ['seconds', 'seed', 'plan', 'channels', 'r1'], 'the same shape as on the emulated band');
  assert.deepEqual(
    j.channels.map((c) => c.channel),
    [1, 6, 11],
    'the channels the recording holds',
  );
  const w = (c: number): number => j.channels.find((x) => x.channel === c)!.w;
  assert.ok(Math.abs(w(6) - truth) < 0.015, `w(6) = ${w(6)}, recorded ${truth}`);
  assert.ok(Math.abs(w(6) - 0.4) < 0.06, `w(6) = ${w(6)}`);
  assert.ok(w(1) < 0.01 && w(11) < 0.01, `w(1) = ${w(1)}, w(11) = ${w(11)}`);
  assert.equal(j.r1, 11, 'R1 takes the idle channel clear of the control channel (1)');

  const band = cogmesh('sense', '--pn', '6:0.4', '--seconds', '2', '--seed', '5', '--json');
  assert.equal(band.code, 0, band.err);
  assert.equal((JSON.parse(band.out) as SenseJson).r1, j.r1, 'the choice sensing the band itself makes');

  const text = cogmesh('sense', '--frontend', 'file', '--input', r.meta, '--seconds', '2');
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /^sensed ism2g4-11 for 2 s \(recording .*pn6\.sigmf-meta, virtual time\)$/m);
  assert.match(text.out, /^ {2}6 {2}2437 {2}0\.[34]\d\d/m);
  assert.match(text.out, /^R1 would take channel 11$/m);
});

test('cogmesh record is deterministic for a seed, and ci16 recordings sense the same', () => {
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  for (const out of [a, b]) {
    const r = cogmesh('record', '--out', out, '--pn', '1:0.3,11:0.7', '--seconds', '0.5', '--seed', '9', '--channels', '1,11', '--annotate');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /PN annotations/);
  }
  assert.equal(digest(`${a}.sigmf-data`), digest(`${b}.sigmf-data`), 'same seed, same samples');
  assert.equal(digest(`${a}.sigmf-meta`), digest(`${b}.sigmf-meta`), 'same seed, same metadata');
  const meta = JSON.parse(readFileSync(`${a}.sigmf-meta`, 'utf8')) as { annotations: Array<Record<string, unknown>> };
  assert.ok(meta.annotations.length > 10, `PN bursts annotated: ${meta.annotations.length}`);
  assert.equal(meta.annotations[0]!['core:label'], 'pn');

  const c = join(dir, 'c16');
  const r16 = cogmesh('record', '--out', c, '--pn', '1:0.3,11:0.7', '--seconds', '0.5', '--seed', '9', '--channels', '1,11', '--datatype', 'ci16_le');
  assert.equal(r16.code, 0, r16.err);
  const s32 = JSON.parse(cogmesh('sense', '--frontend', 'file', '--input', `${a}.sigmf-meta`, '--seconds', '0.5', '--json').out) as SenseJson;
  const s16 = JSON.parse(cogmesh('sense', '--frontend', 'file', '--input', `${c}.sigmf-meta`, '--seconds', '0.5', '--json').out) as SenseJson;
  for (const ch of [0, 1]) {
    assert.ok(
      Math.abs(s32.channels[ch]!.w - s16.channels[ch]!.w) < 0.002,
      `ch ${s32.channels[ch]!.channel}: cf32 ${s32.channels[ch]!.w}, ci16 ${s16.channels[ch]!.w}`,
    );
  }
  assert.ok(Math.abs(s32.channels[0]!.w - 0.3) < 0.1 && Math.abs(s32.channels[1]!.w - 0.7) < 0.1, JSON.stringify(s32.channels));
});

test('cogmesh record --out FOLDER writes the recording inside it, and replaces a recording only with --force', () => {
  const folder = join(dir, 'into');
  mkdirSync(folder);
  const args = ['record', '--out', folder, '--pn', '6:0.4', '--seconds', '0.05', '--seed', '3', '--json'];
  const r = cogmesh(...args);
  assert.equal(r.code, 0, r.err);
  assert.equal((JSON.parse(r.out) as { meta: string }).meta, join(folder, 'recording.sigmf-meta'));
  assert.deepEqual(readdirSync(folder).sort(), ['recording.sigmf-data', 'recording.sigmf-meta']);
  assert.ok(!existsSync(`${folder}.sigmf-meta`), 'nothing next to the folder');
  const before = digest(join(folder, 'recording.sigmf-data'));

  // The same place again: refused whole, naming --out, the file and --force; the recording is kept.
  for (const out of [folder, join(folder, 'recording'), join(folder, 'recording.sigmf-meta')]) {
    const again = cogmesh('record', '--out', out, '--pn', '6:0.4', '--seconds', '0.05', '--seed', '4');
    assert.equal(again.code, 2, again.err);
    assert.match(again.err, /^cogmesh: --out: .*recording\.sigmf-(meta|data) exists \(--force overwrites it\) \[CLI_USAGE\]\n$/);
  }
  assert.equal(digest(join(folder, 'recording.sigmf-data')), before);
  const forced = cogmesh('record', '--out', folder, '--pn', '6:0.4', '--seconds', '0.05', '--seed', '4', '--force');
  assert.equal(forced.code, 0, forced.err);
  assert.notEqual(digest(join(folder, 'recording.sigmf-data')), before, 'replaced with --force');
});

test('cogmesh sense refuses what it cannot sense with exit code 2 and a message', () => {
  const cases: Array<[string[], RegExp]> = [
    [['sense', '--frontend', 'file'], /--frontend file needs --input/],
    [
      ['sense', '--frontend', 'file', '--input', join(dir, 'none.sigmf-meta')],
      /none\.sigmf-meta: sigmf-meta: cannot read the metadata: no such file \[RADIO_BAD_CAPTURE\]/,
    ],
    [['sense', '--frontend', 'file', '--input', join(dir, 'x'), '--pn', '6:0.5'], /--pn: sets the emulated band's primary nodes/],
    [['sense', '--frontend', 'radio'], /--frontend: "radio" is not sim, file or uhd/],
    [['sense', '--input', 'x.sigmf-meta'], /--input: a recording is read with --frontend file/],
    [['sense'], /--pn: required with --frontend sim/],
    [['record', '--out', join(dir, 'bad'), '--channels', '1,14'], /--channels: channel 14 is not in the 11-channel plan/],
    [['record', '--out', join(dir, 'bad'), '--pn', '6:1.5'], /busy fraction 1\.5/],
  ];
  for (const [args, why] of cases) {
    const r = cogmesh(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, why, args.join(' '));
    assert.equal(r.out, '', `${args.join(' ')}: nothing on stdout`);
  }
});

test("cogmesh sense --frontend uhd without a radio ends with exit code 2 and the driver's reason", () => {
  // radio/uhd may be missing (RADIO_UNSUPPORTED), without libuhd (RADIO_NO_LIBRARY) or without a device (RADIO_NO_DEVICE).
  const r = cogmesh('sense', '--frontend', 'uhd', '--seconds', '0.1', '--device-args', 'serial=cogmesh-test-none');
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /\[RADIO_(UNSUPPORTED|NO_LIBRARY|NO_DEVICE)\]/);
  assert.equal(r.out, '');
});

test('cogmesh record and sense have --help', () => {
  for (const cmd of ['record', 'sense']) {
    const r = cogmesh(cmd, '--help');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: cogmesh/m, cmd);
  }
  assert.match(cogmesh('sense', '--help').out, /--frontend <kind>/);
  assert.match(cogmesh('record', '--help').out, /--dwell-ms <ms>/);
});

test('cogmesh sense --frontend file with metadata nested 4,100 deep: a one-line error and exit code 2, no stack trace', () => {
  const meta = join(dir, 'deep.sigmf-meta');
  writeFileSync(meta, `{"global":${'['.repeat(4100)}${']'.repeat(4100)}}`);
  writeFileSync(join(dir, 'deep.sigmf-data'), new Uint8Array(0));
  const r = cogmesh('sense', '--frontend', 'file', '--input', meta, '--seconds', '1');
  assert.equal(r.code, 2, r.err);
  assert.equal(r.out, '');
  assert.match(
    r.err,
    /^cogmesh: .*deep\.sigmf-meta: \(document\): objects and arrays nested deeper than 64 levels at line 1, column 74: not SigMF metadata \[RADIO_BAD_CAPTURE\]\n$/,
  );
});
