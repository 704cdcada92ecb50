import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  CaptureError,
  FileFrontend,
  formatDatetime,
  layoutSegments,
  parseDatetime,
  parseSigmfMeta,
  readSigmf,
  sigmfPaths,
  SigmfWriter,
  type SigmfMeta,
} from '../../radio/file/index.js';
import type { IqBlock } from '../../radio/frontend.js';

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-sigmf-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const F1 = 2_412_000_000;
const F6 = 2_437_000_000;

/** A block of `count` samples whose values say where they are: I = base + k, Q = -(base + k) / 7. */
function ramp(base: number, count: number, centerHz: number, startUs: number, calibrationDb = -10): IqBlock {
  const data = new Float32Array(2 * count);
  for (let k = 0; k < count; k++) {
    data[2 * k] = (base + k) / 1024;
    data[2 * k + 1] = -(base + k) / 7168;
  }
  return { data, count, startUs, sampleRateHz: 1e6, centerHz, calibrationDb, droppedSamples: 0 };
}

/** A metadata document as a test breaks it: any field may be changed, added or deleted. */
type Fields = Record<string, unknown>;
interface Doc {
  global: Fields;
  captures: Fields[];
  annotations: Fields[];
}

/** A valid metadata document for `n` cf32 samples, to break one field at a time. */
function goodDoc(): Doc {
  return {
    global: { 'core:datatype': 'cf32_le', 'core:sample_rate': 1e6, 'core:version': '1.2.0' },
    captures: [
      { 'core:sample_start': 0, 'core:frequency': F1 },
      { 'core:sample_start': 100, 'core:frequency': F6 },
    ],
    annotations: [],
  };
}

/** Writes NAME.sigmf-meta (doc) and NAME.sigmf-data (bytes) and returns the meta path. */
function files(name: string, doc: unknown, dataBytes: number | undefined): string {
  const p = sigmfPaths(join(dir, name));
  writeFileSync(p.meta, typeof doc === 'string' ? doc : JSON.stringify(doc));
  if (dataBytes !== undefined) writeFileSync(p.data, new Uint8Array(dataBytes));
  return p.meta;
}

async function refusal(p: Promise<unknown>): Promise<CaptureError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof CaptureError, `a CaptureError, got ${String(e)}`);
    assert.equal(e.code, 'RADIO_BAD_CAPTURE');
    return e;
  }
  assert.fail('expected the recording to be refused');
}

test('write then read: metadata and cf32 samples come back bit for bit, one capture per frequency change', async () => {
  const path = join(dir, 'roundtrip');
  const w = await SigmfWriter.create(path, { description: 'two channels', hw: 'bench', author: 'tests', epochUs: Date.UTC(2024, 4, 1) * 1000 });
  const blocks = [ramp(0, 300, F1, 0), ramp(300, 200, F1, 300), ramp(500, 250, F6, 500), ramp(750, 100, F1, 750)];
  for (const b of blocks) await w.write(b);
  w.annotate({ sampleStart: 520, sampleCount: 30, label: 'pn', comment: 'burst', freqLowerEdgeHz: F6 - 11e6, freqUpperEdgeHz: F6 + 11e6 });
  w.annotate({ sampleStart: 10, sampleCount: 5, label: 'early' });
  const written = await w.close();
  assert.equal(w.samplesWritten, 850);

  const rec = await readSigmf(`${path}.sigmf-meta`);
  assert.deepEqual(rec.meta, written, 'what close() returns is what is read back');
  assert.equal(rec.sampleCount, 850);
  const g = rec.meta.global;
  assert.equal(g.datatype, 'cf32_le');
  assert.equal(g.sampleRateHz, 1e6);
  assert.equal(g.version, '1.2.0');
  assert.equal(g.description, 'two channels');
  assert.equal(g.recorder, 'cogmesh');
  assert.equal(g.hw, 'bench');
  assert.equal(g.calibrationDb, -10);
  assert.deepEqual(
    rec.meta.captures.map((c) => [c.sampleStart, c.frequencyHz, c.datetime]),
    [
      [0, F1, '2024-05-01T00:00:00.000000Z'],
      [500, F6, '2024-05-01T00:00:00.000500Z'],
      [750, F1, '2024-05-01T00:00:00.000750Z'],
    ],
    'contiguous blocks on one frequency share a capture',
  );
  assert.deepEqual(
    rec.meta.annotations.map((a) => [a.sampleStart, a.label]),
    [
      [10, 'early'],
      [520, 'pn'],
    ],
    'annotations sorted by sample_start',
  );
  const raw = JSON.parse(readFileSync(`${path}.sigmf-meta`, 'utf8')) as { global: Record<string, unknown> };
  assert.deepEqual(raw.global['core:extensions'], [{ name: 'cogmesh', version: '1.0.0', optional: true }], 'the cogmesh namespace is declared');
  assert.equal(raw.global['cogmesh:calibration_db'], -10);

  const fe = await FileFrontend.open(path);
  try {
    await fe.tune(F1);
    const a = await fe.readIq(600);
    const expected1 = new Float32Array(1200);
    expected1.set(blocks[0]!.data, 0);
    expected1.set(blocks[1]!.data, 600);
    expected1.set(blocks[3]!.data, 1000);
    assert.deepEqual(new Uint8Array(a.data.buffer, a.data.byteOffset, 4800), new Uint8Array(expected1.buffer), 'channel 1: its three blocks, bit for bit');
    await fe.tune(F6);
    const b = await fe.readIq(250);
    assert.deepEqual(Array.from(b.data), Array.from(blocks[2]!.data), 'channel 6: its block');
    assert.equal(b.calibrationDb, -10);
  } finally {
    await fe.close();
  }
});

test('the writer starts a capture when calibration changes or time jumps, and records the calibration where it differs', async () => {
  const path = join(dir, 'segments');
  const w = await SigmfWriter.create(path);
  await w.write(ramp(0, 100, F1, 0, -10));
  await w.write(ramp(100, 100, F1, 100, -20)); // gain changed
  await w.write(ramp(200, 100, F1, 5000, -20)); // a gap in time
  await w.write(ramp(300, 100, F1, 5100, -20)); // follows on
  const meta = await w.close();
  assert.deepEqual(
    meta.captures.map((c) => [c.sampleStart, c.calibrationDb]),
    [
      [0, undefined],
      [100, -20],
      [200, -20],
    ],
  );
  assert.equal(meta.global.calibrationDb, -10);
  assert.equal(meta.captures[0]!.datetime, undefined, 'no epoch, no datetime');
  const again = await w.close();
  assert.equal(again, meta, 'closing twice returns the same metadata');
  await assert.rejects(w.write(ramp(0, 1, F1, 0)), { code: 'RADIO_CLOSED' });
});

test('the writer refuses a second sample rate in one recording', async () => {
  const w = await SigmfWriter.create(join(dir, 'rates'));
  await w.write(ramp(0, 10, F1, 0));
  await assert.rejects(w.write({ ...ramp(0, 10, F1, 10), sampleRateHz: 2e6 }), { code: 'CORE_OUT_OF_RANGE' });
  await w.close();
});

test('refused metadata names its field', async () => {
  const cases: Array<[string, (d: Doc) => void, string, RegExp]> = [
    ['datatype-cf64', (d) => (d.global['core:datatype'] = 'cf64_le'), 'global.core:datatype', /not a format cogmesh reads/],
    ['datatype-real', (d) => (d.global['core:datatype'] = 'rf32_le'), 'global.core:datatype', /complex samples only/],
    ['datatype-junk', (d) => (d.global['core:datatype'] = 'complex64'), 'global.core:datatype', /not a SigMF datatype/],
    ['no-rate', (d) => delete d.global['core:sample_rate'], 'global.core:sample_rate', /missing/],
    ['zero-rate', (d) => (d.global['core:sample_rate'] = 0), 'global.core:sample_rate', /> 0/],
    ['no-version', (d) => delete d.global['core:version'], 'global.core:version', /version/],
    ['two-channels', (d) => (d.global['core:num_channels'] = 2), 'global.core:num_channels', /single-channel/],
    ['negative-start', (d) => (d.captures[0]!['core:sample_start'] = -1), 'captures[0].core:sample_start', /integer >= 0/],
    ['fractional-start', (d) => (d.captures[1]!['core:sample_start'] = 10.5), 'captures[1].core:sample_start', /integer >= 0/],
    [
      'unsorted',
      (d) => d.captures.push({ 'core:sample_start': 50, 'core:frequency': F1 }),
      'captures[2].core:sample_start',
      /does not come after captures\[1\]'s 100/,
    ],
    ['no-frequency', (d) => delete d.captures[1]!['core:frequency'], 'captures[1].core:frequency', /centre frequency/],
    ['bad-datetime', (d) => (d.captures[0]!['core:datetime'] = '2024-05-01 10:00'), 'captures[0].core:datetime', /ISO 8601/],
    ['no-captures', (d) => (d.captures = []), 'captures', /at least one/],
    ['no-global', (d) => delete (d as Partial<Doc>).global, 'global', /object/],
    ['bad-calibration', (d) => (d.global['cogmesh:calibration_db'] = 'loud'), 'global.cogmesh:calibration_db', /full-scale/],
    ['bad-dataset', (d) => (d.global['core:dataset'] = '../elsewhere.bin'), 'global.core:dataset', /file name/],
    ['unsorted-annotations', (d) => (d.annotations = [{ 'core:sample_start': 5 }, { 'core:sample_start': 2 }]), 'annotations[1].core:sample_start', /sorted/],
  ];
  for (const [name, breakIt, field, why] of cases) {
    const doc = goodDoc();
    breakIt(doc);
    const e = await refusal(readSigmf(files(name, doc, 200 * 8)));
    assert.equal(e.field, field, name);
    assert.match(e.message, why, name);
    assert.ok(e.message.includes(field), `${name}: the message names the field: ${e.message}`);
  }
});

test('a data file that is not a whole number of samples, or is missing, is refused with the file named', async () => {
  const odd = await refusal(readSigmf(files('odd-size', goodDoc(), 200 * 8 + 3)));
  assert.equal(odd.field, 'sigmf-data');
  assert.match(odd.message, /1603 bytes of samples are not a whole number of cf32_le samples \(8 bytes each\): 200 samples and 3 bytes over/);
  assert.match(odd.message, /odd-size\.sigmf-data/);

  const ci16 = goodDoc();
  ci16.global['core:datatype'] = 'ci16_le';
  const e16 = await refusal(readSigmf(files('odd-ci16', ci16, 401 * 4 + 2)));
  assert.match(e16.message, /\(4 bytes each\)/);

  const missing = await refusal(readSigmf(files('no-data', goodDoc(), undefined)));
  assert.equal(missing.field, 'sigmf-data');
  assert.match(missing.message, /no-data\.sigmf-data is missing/);

  const noMeta = await refusal(readSigmf(join(dir, 'nothing-here.sigmf-meta')));
  assert.match(noMeta.message, /no such file/);

  const notJson = await refusal(readSigmf(files('not-json', '{"global": ', 0)));
  assert.equal(notJson.field, '(document)');
});

test('header and trailing bytes are laid out around the samples; captures past the end are ignored', () => {
  const doc = goodDoc();
  doc.global['core:trailing_bytes'] = 16;
  doc.captures[0]!['core:header_bytes'] = 32;
  doc.captures[1]!['core:header_bytes'] = 8;
  doc.captures.push({ 'core:sample_start': 500, 'core:frequency': F1 });
  const meta: SigmfMeta = parseSigmfMeta(doc, 'x');
  const { sampleCount, segments } = layoutSegments(meta, 32 + 8 + 16 + 300 * 8);
  assert.equal(sampleCount, 300);
  assert.deepEqual(
    segments.map((s) => [s.frequencyHz, s.sampleStart, s.sampleCount, s.byteOffset]),
    [
      [F1, 0, 100, 32],
      [F6, 100, 200, 32 + 8 + 100 * 8],
    ],
  );
  assert.throws(() => layoutSegments(meta, 10), { code: 'RADIO_BAD_CAPTURE', message: /fewer than the metadata's 40 header and 16 trailing bytes/ });
});

test('unknown keys and namespaces are kept, SigMF 0.x and v-prefixed versions are read', () => {
  const doc = goodDoc();
  doc.global['core:version'] = 'v1.0.0';
  doc.global['other:thing'] = { a: 1 };
  doc.captures[0]!['other:gain'] = 3;
  const m = parseSigmfMeta(doc);
  assert.deepEqual(m.global.extra, { 'other:thing': { a: 1 } });
  assert.deepEqual(m.captures[0]!.extra, { 'other:gain': 3 });
  doc.global['core:version'] = '0.0.2';
  assert.equal(parseSigmfMeta(doc).global.version, '0.0.2');
  doc.global['core:version'] = '2.0.0';
  assert.throws(() => parseSigmfMeta(doc), { code: 'RADIO_BAD_CAPTURE', message: /core:version/ });
});

test('core:datetime to the microsecond', () => {
  const us = Date.UTC(2024, 0, 2, 3, 4, 5) * 1000 + 678_901;
  assert.equal(formatDatetime(us), '2024-01-02T03:04:05.678901Z');
  assert.equal(parseDatetime('2024-01-02T03:04:05.678901Z'), us);
  assert.equal(parseDatetime('2024-01-02T03:04:05Z'), us - 678_901);
  assert.equal(parseDatetime('2024-01-02T03:04:05.6789019Z'), us, 'digits past the microsecond are dropped');
  assert.equal(formatDatetime(0), '1970-01-01T00:00:00.000000Z');
});

/** `{"global": ` and `depth` arrays, each in the one before: JSON.parse takes it, JSON.stringify of it overflows the stack. */
const deepMeta = (depth: number): string => `{"global":${'['.repeat(depth)}${']'.repeat(depth)}}`;

test('metadata nested thousands deep is refused with a bounded one-line error, not a stack overflow', async () => {
  for (const depth of [4100, 100_000]) {
    const e = await refusal(readSigmf(files(`deep-${depth}`, deepMeta(depth), 0)));
    assert.equal(e.field, '(document)');
    assert.match(e.message, /: \(document\): objects and arrays nested deeper than 64 levels at line 1, column 74: not SigMF metadata$/);
    assert.ok(!e.message.includes('\n') && e.message.length < 300, `${e.message.length} characters`);
  }
  // Deep within an annotation's field of another namespace: the same.
  const doc = goodDoc();
  const nested = JSON.stringify(doc).replace('"annotations":[]', `"annotations":[{"core:sample_start":0,"x:deep":${'['.repeat(4100)}${']'.repeat(4100)}}]`);
  const inside = await refusal(readSigmf(files('deep-annotation', nested, 200 * 8)));
  assert.match(inside.message, /nested deeper than 64 levels/);
  // Metadata as deep as the limit is read.
  const ok = JSON.stringify(goodDoc()).replace('"annotations":[]', `"annotations":[{"core:sample_start":0,"x:deep":${'['.repeat(61)}${']'.repeat(61)}}]`);
  assert.equal((await readSigmf(files('deep-ok', ok, 200 * 8))).meta.annotations.length, 1);
});

test('a deep document given to parseSigmfMeta itself: the message shows a bounded piece of it', () => {
  const deep = JSON.parse(deepMeta(20_000)) as unknown;
  assert.throws(
    () => parseSigmfMeta(deep, 'x'),
    (e: Error) => e instanceof CaptureError && /^x: global: expected an object, got \[\[\[.*\.\.\.$/.test(e.message) && e.message.length < 120,
  );
});

test('a syntax error names the line and column, and quotes none of the file', async () => {
  const e = await refusal(readSigmf(files('broken', '{"global": {"core:datatype": "cf32_le" "core:sample_rate": 1}}', 0)));
  assert.match(e.message, /\(document\): not JSON: expected ',' or '}' but found "\\"" at line 1, column 40$/);
});
