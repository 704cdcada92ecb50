import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FrontendError } from '../../src/core/errors.js';
import { briefJson, parseJsonText } from '../../src/core/json.js';

/**
 * SigMF metadata (https://sigmf.org, spec v1.x): a `NAME.sigmf-meta` JSON
 * document describing the samples in `NAME.sigmf-data`. This module reads,
 * checks and writes the metadata and lays the capture segments out over the
 * data file; `writer.ts` records and `frontend.ts` replays.
 *
 * cogmesh adds one key, in its own namespace (declared in
 * `core:extensions` as optional, so other SigMF tools may ignore it):
 * `cogmesh:calibration_db`, the dBm of a full-scale signal (mean |x|^2 = 1)
 * at the antenna port, in `global` and, where it differs, in a capture. It
 * is what makes the energy detector's dBm right on replay.
 */

/** The SigMF version cogmesh writes. */
export const SIGMF_VERSION = '1.2.0';
/** cogmesh's namespace, as declared in `core:extensions`. */
export const COGMESH_EXTENSION = { name: 'cogmesh', version: '1.0.0', optional: true } as const;
export const CALIBRATION_KEY = 'cogmesh:calibration_db';

/** The sample formats cogmesh reads (complex only; 8-bit formats have no byte order). */
export type SigmfDatatype = 'cf32_le' | 'ci16_le' | 'ci8' | 'cu8';
/** The sample formats cogmesh writes. */
export type SigmfWriteDatatype = 'cf32_le' | 'ci16_le';

/** Bytes per complex sample (I and Q) of each datatype. */
export const SAMPLE_BYTES: Readonly<Record<SigmfDatatype, number>> = { cf32_le: 8, ci16_le: 4, ci8: 2, cu8: 2 };

const SUPPORTED: readonly string[] = Object.keys(SAMPLE_BYTES);
const SIGMF_DATATYPE = /^(r|c)(f64|f32|i32|i16|u32|u16|i8|u8)(_le|_be)?$/;

export interface SigmfGlobal {
  datatype: SigmfDatatype;
  sampleRateHz: number;
  /** `core:version` as found (cogmesh writes SIGMF_VERSION). */
  version: string;
  description?: string;
  author?: string;
  recorder?: string;
  hw?: string;
  /** `core:dataset`: the data file's name when it is not NAME.sigmf-data. */
  dataset?: string;
  /** `core:trailing_bytes`: bytes after the last sample, not samples. */
  trailingBytes?: number;
  /** `cogmesh:calibration_db`: dBm of a full-scale signal. */
  calibrationDb?: number;
  /** `core:extensions`: the namespaces besides `core` the metadata uses. */
  extensions?: SigmfExtension[];
  /** Every other key, kept as found (other namespaces, `core:` keys cogmesh does not use). */
  extra?: Record<string, unknown>;
}

export interface SigmfExtension {
  name: string;
  version: string;
  /** Whether a reader that does not know the namespace may still use the recording. */
  optional: boolean;
}

export interface SigmfCapture {
  sampleStart: number;
  frequencyHz: number;
  /** ISO 8601 UTC, `YYYY-MM-DDTHH:MM:SS[.fff...]Z`. */
  datetime?: string;
  globalIndex?: number;
  /** `core:header_bytes`: bytes of a header in the data file just before this capture's samples. */
  headerBytes?: number;
  /** This capture's own `cogmesh:calibration_db`, when it differs from the global one. */
  calibrationDb?: number;
  extra?: Record<string, unknown>;
}

export interface SigmfAnnotation {
  sampleStart: number;
  sampleCount?: number;
  label?: string;
  comment?: string;
  generator?: string;
  freqLowerEdgeHz?: number;
  freqUpperEdgeHz?: number;
  extra?: Record<string, unknown>;
}

export interface SigmfMeta {
  global: SigmfGlobal;
  captures: SigmfCapture[];
  annotations: SigmfAnnotation[];
}

/**
 * A recording refused: metadata that breaks SigMF or asks for what cogmesh
 * cannot read, or a data file that does not match it. `field` names the
 * culprit as a path into the metadata (`captures[1].core:frequency`), or
 * `sigmf-data` for the data file.
 */
export class CaptureError extends FrontendError {
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super('RADIO_BAD_CAPTURE', `${file}: ${field}: ${detail}`);
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isUint = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A value found, for a message: bounded, whatever its size or depth (the metadata comes from outside). */
const show = (v: unknown): string => (v === undefined ? 'missing' : briefJson(v));

/** RFC 3339 UTC timestamps as SigMF has them, any number of fractional digits. */
const DATETIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?Z$/;

const GLOBAL_KEYS = new Set([
  'core:datatype',
  'core:sample_rate',
  'core:version',
  'core:description',
  'core:author',
  'core:recorder',
  'core:hw',
  'core:dataset',
  'core:trailing_bytes',
  'core:extensions',
  CALIBRATION_KEY,
]);
const CAPTURE_KEYS = new Set(['core:sample_start', 'core:frequency', 'core:datetime', 'core:global_index', 'core:header_bytes', CALIBRATION_KEY]);
const ANNOTATION_KEYS = new Set([
  'core:sample_start',
  'core:sample_count',
  'core:label',
  'core:comment',
  'core:generator',
  'core:freq_lower_edge',
  'core:freq_upper_edge',
]);

function extraOf(o: Json, known: ReadonlySet<string>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(o)) {
    if (!known.has(k)) {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : undefined;
}

/**
 * Checks a parsed `.sigmf-meta` document and returns it in cogmesh's terms,
 * or throws CaptureError naming the first field at fault. Beyond SigMF's
 * own rules it requires what replay needs: a sample rate, a centre frequency
 * per capture, a single channel, a complex datatype cogmesh reads.
 */
export function parseSigmfMeta(doc: unknown, file = 'sigmf-meta'): SigmfMeta {
  const bad = (field: string, detail: string): never => {
    throw new CaptureError(file, field, detail);
  };
  if (!isObject(doc)) bad('(document)', 'expected a JSON object with global, captures and annotations');
  const d = doc as Json;
  const g = d.global;
  if (!isObject(g)) return bad('global', `expected an object, got ${show(g)}`);

  const dt = g['core:datatype'];
  if (typeof dt !== 'string') return bad('global.core:datatype', `expected a string such as "cf32_le", got ${show(dt)}`);
  if (!SIGMF_DATATYPE.test(dt)) return bad('global.core:datatype', `"${dt}" is not a SigMF datatype`);
  if (!SUPPORTED.includes(dt)) {
    bad('global.core:datatype', `"${dt}" is not a format cogmesh reads (${SUPPORTED.join(', ')}: complex samples only)`);
  }
  const rate = g['core:sample_rate'];
  if (!isFiniteNumber(rate) || rate <= 0) bad('global.core:sample_rate', `expected samples per second > 0, got ${show(rate)}`);
  const version = g['core:version'];
  if (typeof version !== 'string' || !/^v?[01]\.\d+\.\d+/.test(version)) {
    bad('global.core:version', `expected a SigMF version 0.x.y or 1.x.y, got ${show(version)}`);
  }
  const numChannels = g['core:num_channels'];
  if (numChannels !== undefined && numChannels !== 1) {
    bad('global.core:num_channels', `cogmesh reads single-channel recordings only, got ${show(numChannels)}`);
  }
  if (g['core:metadata_only'] === true) bad('global.core:metadata_only', 'the recording has no samples (metadata only)');
  const strings = ['core:description', 'core:author', 'core:recorder', 'core:hw', 'core:dataset'] as const;
  for (const k of strings) if (g[k] !== undefined && typeof g[k] !== 'string') bad(`global.${k}`, `expected a string, got ${show(g[k])}`);
  const dataset = g['core:dataset'] as string | undefined;
  if (dataset !== undefined && (dataset === '' || dataset !== basename(dataset) || dataset === '.' || dataset === '..')) {
    bad('global.core:dataset', `expected a file name in the metadata's folder, got ${show(dataset)}`);
  }
  const trailing = g['core:trailing_bytes'];
  if (trailing !== undefined && !isUint(trailing)) bad('global.core:trailing_bytes', `expected an integer >= 0, got ${show(trailing)}`);
  const cal = g[CALIBRATION_KEY];
  if (cal !== undefined && !isFiniteNumber(cal)) bad(`global.${CALIBRATION_KEY}`, `expected dBm of a full-scale signal, got ${show(cal)}`);

  const exts = g['core:extensions'];
  if (exts !== undefined) {
    if (!Array.isArray(exts)) bad('global.core:extensions', `expected an array of {name, version, optional}, got ${show(exts)}`);
    (exts as unknown[]).forEach((e, i) => {
      if (!isObject(e) || typeof e.name !== 'string' || typeof e.version !== 'string' || typeof e.optional !== 'boolean') {
        bad(`global.core:extensions[${i}]`, `expected {name: string, version: string, optional: boolean}, got ${show(e)}`);
      }
    });
  }

  const global: SigmfGlobal = {
    datatype: dt as SigmfDatatype,
    sampleRateHz: rate as number,
    version: version as string,
    ...(g['core:description'] !== undefined ? { description: g['core:description'] as string } : {}),
    ...(g['core:author'] !== undefined ? { author: g['core:author'] as string } : {}),
    ...(g['core:recorder'] !== undefined ? { recorder: g['core:recorder'] as string } : {}),
    ...(g['core:hw'] !== undefined ? { hw: g['core:hw'] as string } : {}),
    ...(dataset !== undefined ? { dataset } : {}),
    ...(trailing !== undefined ? { trailingBytes: trailing as number } : {}),
    ...(cal !== undefined ? { calibrationDb: cal as number } : {}),
    ...(exts !== undefined
      ? { extensions: (exts as Json[]).map((e) => ({ name: e.name as string, version: e.version as string, optional: e.optional as boolean })) }
      : {}),
  };
  const gExtra = extraOf(g, GLOBAL_KEYS);
  if (gExtra) global.extra = gExtra;

  const caps = d.captures;
  if (!Array.isArray(caps)) return bad('captures', `expected an array of capture segments, got ${show(caps)}`);
  if (caps.length === 0) bad('captures', 'no capture segment: cogmesh needs at least one, with core:frequency');
  const captures: SigmfCapture[] = [];
  caps.forEach((c: unknown, i) => {
    const at = `captures[${i}]`;
    if (!isObject(c)) return bad(at, `expected an object, got ${show(c)}`);
    const start = c['core:sample_start'];
    if (!isUint(start)) return bad(`${at}.core:sample_start`, `expected a sample index (an integer >= 0), got ${show(start)}`);
    const prev = captures[i - 1];
    if (prev && start <= prev.sampleStart) {
      bad(`${at}.core:sample_start`, `${start} does not come after captures[${i - 1}]'s ${prev.sampleStart} (captures must be sorted, starts unique)`);
    }
    const f = c['core:frequency'];
    if (!isFiniteNumber(f) || f <= 0) return bad(`${at}.core:frequency`, `expected a centre frequency in Hz > 0, got ${show(f)}`);
    const dtm = c['core:datetime'];
    if (dtm !== undefined && (typeof dtm !== 'string' || !DATETIME.test(dtm))) {
      bad(`${at}.core:datetime`, `expected UTC ISO 8601 YYYY-MM-DDTHH:MM:SS.fffZ, got ${show(dtm)}`);
    }
    const gi = c['core:global_index'];
    if (gi !== undefined && !isUint(gi)) bad(`${at}.core:global_index`, `expected an integer >= 0, got ${show(gi)}`);
    const hb = c['core:header_bytes'];
    if (hb !== undefined && !isUint(hb)) bad(`${at}.core:header_bytes`, `expected an integer >= 0, got ${show(hb)}`);
    const cc = c[CALIBRATION_KEY];
    if (cc !== undefined && !isFiniteNumber(cc)) bad(`${at}.${CALIBRATION_KEY}`, `expected dBm of a full-scale signal, got ${show(cc)}`);
    const cap: SigmfCapture = {
      sampleStart: start,
      frequencyHz: f,
      ...(dtm !== undefined ? { datetime: dtm as string } : {}),
      ...(gi !== undefined ? { globalIndex: gi as number } : {}),
      ...(hb !== undefined ? { headerBytes: hb as number } : {}),
      ...(cc !== undefined ? { calibrationDb: cc as number } : {}),
    };
    const extra = extraOf(c, CAPTURE_KEYS);
    if (extra) cap.extra = extra;
    captures.push(cap);
  });

  const anns = d.annotations ?? [];
  if (!Array.isArray(anns)) return bad('annotations', `expected an array, got ${show(anns)}`);
  const annotations: SigmfAnnotation[] = [];
  anns.forEach((a: unknown, i) => {
    const at = `annotations[${i}]`;
    if (!isObject(a)) return bad(at, `expected an object, got ${show(a)}`);
    const start = a['core:sample_start'];
    if (!isUint(start)) return bad(`${at}.core:sample_start`, `expected a sample index (an integer >= 0), got ${show(start)}`);
    const prev = annotations[i - 1];
    if (prev && start < prev.sampleStart) {
      bad(`${at}.core:sample_start`, `${start} comes before annotations[${i - 1}]'s ${prev.sampleStart} (annotations must be sorted)`);
    }
    const count = a['core:sample_count'];
    if (count !== undefined && !isUint(count)) bad(`${at}.core:sample_count`, `expected an integer >= 0, got ${show(count)}`);
    for (const k of ['core:label', 'core:comment', 'core:generator'] as const) {
      if (a[k] !== undefined && typeof a[k] !== 'string') bad(`${at}.${k}`, `expected a string, got ${show(a[k])}`);
    }
    for (const k of ['core:freq_lower_edge', 'core:freq_upper_edge'] as const) {
      if (a[k] !== undefined && !isFiniteNumber(a[k])) bad(`${at}.${k}`, `expected a frequency in Hz, got ${show(a[k])}`);
    }
    const ann: SigmfAnnotation = {
      sampleStart: start,
      ...(count !== undefined ? { sampleCount: count as number } : {}),
      ...(a['core:label'] !== undefined ? { label: a['core:label'] as string } : {}),
      ...(a['core:comment'] !== undefined ? { comment: a['core:comment'] as string } : {}),
      ...(a['core:generator'] !== undefined ? { generator: a['core:generator'] as string } : {}),
      ...(a['core:freq_lower_edge'] !== undefined ? { freqLowerEdgeHz: a['core:freq_lower_edge'] as number } : {}),
      ...(a['core:freq_upper_edge'] !== undefined ? { freqUpperEdgeHz: a['core:freq_upper_edge'] as number } : {}),
    };
    const extra = extraOf(a, ANNOTATION_KEYS);
    if (extra) ann.extra = extra;
    annotations.push(ann);
  });
  return { global, captures, annotations };
}

/** The metadata as a SigMF JSON document (keys cogmesh knows first, then the extra ones kept). */
export function sigmfMetaToJson(meta: SigmfMeta): Json {
  const g = meta.global;
  // A namespace in use is declared, whether or not the caller said so.
  const usesCogmesh = g.calibrationDb !== undefined || meta.captures.some((c) => c.calibrationDb !== undefined);
  const exts = (g.extensions ?? []).map((e) => ({ ...e }));
  if (usesCogmesh && !exts.some((e) => e.name === COGMESH_EXTENSION.name)) exts.push({ ...COGMESH_EXTENSION });
  const global: Json = {
    'core:datatype': g.datatype,
    'core:sample_rate': g.sampleRateHz,
    'core:version': g.version,
    ...(g.description !== undefined ? { 'core:description': g.description } : {}),
    ...(g.author !== undefined ? { 'core:author': g.author } : {}),
    ...(g.recorder !== undefined ? { 'core:recorder': g.recorder } : {}),
    ...(g.hw !== undefined ? { 'core:hw': g.hw } : {}),
    ...(g.dataset !== undefined ? { 'core:dataset': g.dataset } : {}),
    ...(g.trailingBytes !== undefined ? { 'core:trailing_bytes': g.trailingBytes } : {}),
    ...(g.calibrationDb !== undefined ? { [CALIBRATION_KEY]: g.calibrationDb } : {}),
    ...(exts.length > 0 ? { 'core:extensions': exts } : {}),
    ...(g.extra ?? {}),
  };
  const captures = meta.captures.map((c) => ({
    'core:sample_start': c.sampleStart,
    'core:frequency': c.frequencyHz,
    ...(c.datetime !== undefined ? { 'core:datetime': c.datetime } : {}),
    ...(c.globalIndex !== undefined ? { 'core:global_index': c.globalIndex } : {}),
    ...(c.headerBytes !== undefined ? { 'core:header_bytes': c.headerBytes } : {}),
    ...(c.calibrationDb !== undefined ? { [CALIBRATION_KEY]: c.calibrationDb } : {}),
    ...(c.extra ?? {}),
  }));
  const annotations = meta.annotations.map((a) => ({
    'core:sample_start': a.sampleStart,
    ...(a.sampleCount !== undefined ? { 'core:sample_count': a.sampleCount } : {}),
    ...(a.label !== undefined ? { 'core:label': a.label } : {}),
    ...(a.comment !== undefined ? { 'core:comment': a.comment } : {}),
    ...(a.generator !== undefined ? { 'core:generator': a.generator } : {}),
    ...(a.freqLowerEdgeHz !== undefined ? { 'core:freq_lower_edge': a.freqLowerEdgeHz } : {}),
    ...(a.freqUpperEdgeHz !== undefined ? { 'core:freq_upper_edge': a.freqUpperEdgeHz } : {}),
    ...(a.extra ?? {}),
  }));
  return { global, captures, annotations };
}

/** The `.sigmf-meta` text: indented JSON and a final newline. */
export function formatSigmfMeta(meta: SigmfMeta): string {
  return `${JSON.stringify(sigmfMetaToJson(meta), null, 2)}\n`;
}

/** A SigMF recording's two file names from either of them or from NAME alone. */
export function sigmfPaths(path: string): { meta: string; data: string; base: string } {
  const base = path.replace(/\.sigmf-(meta|data)$/, '').replace(/\.$/, '');
  return { meta: `${base}.sigmf-meta`, data: `${base}.sigmf-data`, base };
}

/** A stretch of samples at one centre frequency: one capture segment laid out over the data file. */
export interface SigmfSegment {
  /** Index into `captures`. */
  capture: number;
  frequencyHz: number;
  /** Sample index in the recording of its first sample. */
  sampleStart: number;
  sampleCount: number;
  /** Byte offset of its first sample in the data file. */
  byteOffset: number;
  /** dBm of a full-scale signal (the capture's, else the global one, else undefined). */
  calibrationDb: number | undefined;
}

/**
 * Where each capture's samples are in a data file of `dataBytes` bytes:
 * headers (`core:header_bytes`) come just before their capture's samples,
 * `core:trailing_bytes` at the end. What is left for samples must be a whole
 * number of them, else CaptureError. Captures that start at or beyond the
 * last sample are left out, as SigMF says they are to be ignored.
 */
export function layoutSegments(meta: SigmfMeta, dataBytes: number, file = 'sigmf-data'): { sampleCount: number; segments: SigmfSegment[] } {
  const sampleBytes = SAMPLE_BYTES[meta.global.datatype];
  const headers = meta.captures.reduce((s, c) => s + (c.headerBytes ?? 0), 0);
  const trailing = meta.global.trailingBytes ?? 0;
  const sampleBytesTotal = dataBytes - headers - trailing;
  if (sampleBytesTotal < 0) {
    throw new CaptureError(file, 'sigmf-data', `${dataBytes} bytes are fewer than the metadata's ${headers} header and ${trailing} trailing bytes`);
  }
  if (sampleBytesTotal % sampleBytes !== 0) {
    throw new CaptureError(
      file,
      'sigmf-data',
      `${sampleBytesTotal} bytes of samples are not a whole number of ${meta.global.datatype} samples (${sampleBytes} bytes each): ` +
        `${Math.floor(sampleBytesTotal / sampleBytes)} samples and ${sampleBytesTotal % sampleBytes} bytes over; the file is truncated or the datatype is wrong`,
    );
  }
  const sampleCount = sampleBytesTotal / sampleBytes;
  const segments: SigmfSegment[] = [];
  let headerSoFar = 0;
  meta.captures.forEach((c, i) => {
    headerSoFar += c.headerBytes ?? 0;
    const next = meta.captures[i + 1];
    const end = Math.min(next ? next.sampleStart : sampleCount, sampleCount);
    if (c.sampleStart >= end) return;
    segments.push({
      capture: i,
      frequencyHz: c.frequencyHz,
      sampleStart: c.sampleStart,
      sampleCount: end - c.sampleStart,
      byteOffset: headerSoFar + c.sampleStart * sampleBytes,
      calibrationDb: c.calibrationDb ?? meta.global.calibrationDb,
    });
  });
  return { sampleCount, segments };
}

/** A SigMF recording on disk, checked: its metadata and where its samples are. */
export interface SigmfRecording {
  metaPath: string;
  dataPath: string;
  meta: SigmfMeta;
  /** Complex samples in the data file. */
  sampleCount: number;
  /** The captures with samples, in order. */
  segments: SigmfSegment[];
}

/**
 * Reads and checks a recording from its `.sigmf-meta` (or `.sigmf-data`, or
 * NAME): the metadata against SigMF and what cogmesh needs, the data file's
 * size against the datatype. Faults are CaptureError (RADIO_BAD_CAPTURE).
 */
export async function readSigmf(path: string): Promise<SigmfRecording> {
  const metaPath = sigmfPaths(path).meta;
  let text: string;
  try {
    text = await readFile(metaPath, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    throw new CaptureError(metaPath, 'sigmf-meta', `cannot read the metadata: ${why}`);
  }
  // Metadata nested deeper than any SigMF document (a handful of levels) is refused before anything walks it.
  const doc = parseJsonText(text);
  if (!doc.ok)
    throw new CaptureError(metaPath, '(document)', doc.error.kind === 'depth' ? `${doc.error.message}: not SigMF metadata` : `not JSON: ${doc.error.message}`);
  const meta = parseSigmfMeta(doc.value, metaPath);
  const dataPath = meta.global.dataset !== undefined ? join(dirname(metaPath), meta.global.dataset) : sigmfPaths(path).data;
  let size: number;
  try {
    const st = await stat(dataPath);
    if (!st.isFile()) throw new CaptureError(metaPath, 'sigmf-data', `${dataPath} is not a file`);
    size = st.size;
  } catch (e) {
    if (e instanceof CaptureError) throw e;
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : (e as Error).message;
    throw new CaptureError(metaPath, 'sigmf-data', `the data file ${dataPath} is ${why}: a recording is its .sigmf-meta and its .sigmf-data side by side`);
  }
  const { sampleCount, segments } = layoutSegments(meta, size, dataPath);
  return { metaPath, dataPath, meta, sampleCount, segments };
}

/** `core:datetime` of a time in microseconds since the Unix epoch, to the microsecond. */
export function formatDatetime(epochUs: number): string {
  const us = Math.round(epochUs);
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const micro = String(us - ms * 1000).padStart(3, '0');
  return `${iso.slice(0, -1)}${micro}Z`;
}

/** Microseconds since the Unix epoch of a `core:datetime` (fractions beyond the microsecond dropped). */
export function parseDatetime(s: string): number {
  if (!DATETIME.test(s)) throw new CaptureError('datetime', 'core:datetime', `not UTC ISO 8601: ${JSON.stringify(s)}`);
  const frac = /\.(\d+)Z$/.exec(s)?.[1] ?? '';
  const whole = Date.parse(`${s.slice(0, 19)}Z`);
  return whole * 1000 + Number(frac.padEnd(6, '0').slice(0, 6));
}
