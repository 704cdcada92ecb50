import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import { US_PER_S } from '../../src/core/time.js';
import type { IqBlock } from '../frontend.js';
import {
  COGMESH_EXTENSION,
  formatDatetime,
  formatSigmfMeta,
  SAMPLE_BYTES,
  SIGMF_VERSION,
  sigmfPaths,
  type SigmfAnnotation,
  type SigmfCapture,
  type SigmfMeta,
  type SigmfWriteDatatype,
} from './sigmf.js';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

export interface SigmfWriterOptions {
  /** Samples per second of the recording; default: the first block's. Every block must have it. */
  sampleRateHz?: number;
  /** Sample format of the data file (default `cf32_le`, the blocks' own, bit-exact). */
  datatype?: SigmfWriteDatatype;
  description?: string;
  author?: string;
  /** `core:recorder` (default `cogmesh`). */
  recorder?: string;
  hw?: string;
  /**
   * Unix time in microseconds of the blocks' time 0. With it every capture
   * gets a `core:datetime` (block.startUs after it); without it, none.
   */
  epochUs?: number;
  /** Keys added to `global` as they are (another namespace's, say). */
  extraGlobal?: Record<string, unknown>;
}

/**
 * Records IQ blocks into a SigMF recording, `NAME.sigmf-data` and
 * `NAME.sigmf-meta`. Samples stream to the data file as blocks come; a new
 * capture segment starts whenever the centre frequency or the calibration
 * changes or a block does not follow on from the previous one in time, so
 * one recording holds a sweep over many channels. `close()` writes the
 * metadata: until then only the data file exists.
 */
export class SigmfWriter {
  readonly metaPath: string;
  readonly dataPath: string;
  private readonly datatype: SigmfWriteDatatype;
  private sampleRateHz: number | undefined;
  private readonly captures: SigmfCapture[] = [];
  private readonly annotations: SigmfAnnotation[] = [];
  private samples = 0;
  /** Centre, calibration and expected start of the next block of the capture in progress. */
  private last: { centerHz: number; calibrationDb: number; nextUs: number } | undefined;
  private globalCalibrationDb: number | undefined;
  /** Writes go out one after another, in call order. */
  private queue: Promise<void> = Promise.resolve();
  private scratch: Uint8Array = new Uint8Array(0);
  /** Set once a write failed: nothing more is written and close() refuses to describe the data. */
  private failed: FrontendError | undefined;
  private meta: SigmfMeta | undefined;
  private closing: Promise<SigmfMeta> | undefined;

  private constructor(
    private readonly handle: FileHandle,
    paths: { meta: string; data: string },
    private readonly opts: SigmfWriterOptions,
  ) {
    this.metaPath = paths.meta;
    this.dataPath = paths.data;
    this.datatype = opts.datatype ?? 'cf32_le';
    this.sampleRateHz = opts.sampleRateHz;
  }

  /** Creates (or truncates) `NAME.sigmf-data`; `path` is NAME, NAME.sigmf-meta or NAME.sigmf-data. */
  static async create(path: string, opts: SigmfWriterOptions = {}): Promise<SigmfWriter> {
    if (opts.datatype !== undefined && opts.datatype !== 'cf32_le' && opts.datatype !== 'ci16_le') {
      throw new RangeArgumentError('datatype', opts.datatype, '"cf32_le" or "ci16_le"');
    }
    if (opts.sampleRateHz !== undefined && !(opts.sampleRateHz > 0 && Number.isFinite(opts.sampleRateHz))) {
      throw new RangeArgumentError('sampleRateHz', opts.sampleRateHz, 'a finite number > 0');
    }
    if (opts.epochUs !== undefined && !Number.isFinite(opts.epochUs)) throw new RangeArgumentError('epochUs', opts.epochUs, 'a finite Unix time in µs');
    const paths = sigmfPaths(path);
    const handle = await open(paths.data, 'w');
    return new SigmfWriter(handle, paths, opts);
  }

  /** Complex samples written (or queued) so far. */
  get samplesWritten(): number {
    return this.samples;
  }

  /** Capture segments so far. */
  get captureCount(): number {
    return this.captures.length;
  }

  /**
   * Appends a block. Resolves once its samples are in the data file: the
   * block's buffer must not change until then (cf32 is written straight
   * from it, without a copy).
   */
  write(block: IqBlock): Promise<void> {
    if (this.meta || this.closing) return Promise.reject(this.closedError());
    const { count, data } = block;
    if (!Number.isSafeInteger(count) || count < 0 || data.length < 2 * count) {
      return Promise.reject(new RangeArgumentError('block.count', count, `an integer in [0, ${data.length >>> 1}]`));
    }
    if (this.sampleRateHz === undefined) this.sampleRateHz = block.sampleRateHz;
    if (block.sampleRateHz !== this.sampleRateHz) {
      return Promise.reject(
        new RangeArgumentError('block.sampleRateHz', block.sampleRateHz, `the recording's ${this.sampleRateHz} samples per second (one rate per recording)`),
      );
    }
    if (!Number.isFinite(block.centerHz) || block.centerHz <= 0)
      return Promise.reject(new RangeArgumentError('block.centerHz', block.centerHz, 'a frequency > 0'));
    if (!Number.isFinite(block.calibrationDb))
      return Promise.reject(new RangeArgumentError('block.calibrationDb', block.calibrationDb, 'a finite number of dBm'));
    if (count === 0) return this.queue;
    this.segmentFor(block);
    this.samples += count;
    const job = this.queue.then(() => {
      if (this.failed) throw this.failed;
      return this.append(data, count).catch((e: unknown) => {
        // The metadata would no longer match the data file: the recording is broken for good.
        this.failed = new FrontendError(
          'RADIO_WRITE_FAILED',
          `${this.dataPath}: a write failed, the recording is incomplete: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
        throw this.failed;
      });
    });
    this.queue = job.catch(() => undefined);
    return job;
  }

  /** Adds an annotation (kept sorted by sample_start; written with the metadata). */
  annotate(a: SigmfAnnotation): void {
    if (this.meta || this.closing) throw this.closedError();
    if (!Number.isSafeInteger(a.sampleStart) || a.sampleStart < 0) throw new RangeArgumentError('annotation.sampleStart', a.sampleStart, 'an integer >= 0');
    if (a.sampleCount !== undefined && (!Number.isSafeInteger(a.sampleCount) || a.sampleCount < 0)) {
      throw new RangeArgumentError('annotation.sampleCount', a.sampleCount, 'an integer >= 0');
    }
    let at = this.annotations.length;
    while (at > 0 && this.annotations[at - 1]!.sampleStart > a.sampleStart) at--;
    this.annotations.splice(at, 0, { ...a });
  }

  /**
   * Waits for the data, closes the data file and writes the metadata; returns
   * it. Calling it again returns the same metadata.
   */
  close(): Promise<SigmfMeta> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      try {
        await this.queue;
      } finally {
        await this.handle.close();
      }
      if (this.failed) throw this.failed;
      const rate = this.sampleRateHz;
      if (rate === undefined) throw new RangeArgumentError('sampleRateHz', undefined, 'a sample rate: give one in the options when no block was written');
      const meta: SigmfMeta = {
        global: {
          datatype: this.datatype,
          sampleRateHz: rate,
          version: SIGMF_VERSION,
          ...(this.opts.description !== undefined ? { description: this.opts.description } : {}),
          ...(this.opts.author !== undefined ? { author: this.opts.author } : {}),
          recorder: this.opts.recorder ?? 'cogmesh',
          ...(this.opts.hw !== undefined ? { hw: this.opts.hw } : {}),
          ...(this.globalCalibrationDb !== undefined ? { calibrationDb: this.globalCalibrationDb, extensions: [{ ...COGMESH_EXTENSION }] } : {}),
          ...(this.opts.extraGlobal !== undefined ? { extra: { ...this.opts.extraGlobal } } : {}),
        },
        captures: this.captures.map((c) => ({ ...c })),
        annotations: this.annotations.map((a) => ({ ...a })),
      };
      await writeFile(this.metaPath, formatSigmfMeta(meta));
      this.meta = meta;
      return meta;
    })();
    return this.closing;
  }

  /** Starts a capture segment for this block when it does not continue the one in progress. */
  private segmentFor(block: IqBlock): void {
    const rate = this.sampleRateHz!;
    const halfSampleUs = US_PER_S / rate / 2;
    const l = this.last;
    const continues =
      l !== undefined && l.centerHz === block.centerHz && l.calibrationDb === block.calibrationDb && Math.abs(block.startUs - l.nextUs) <= halfSampleUs;
    if (!continues) {
      if (this.globalCalibrationDb === undefined) this.globalCalibrationDb = block.calibrationDb;
      this.captures.push({
        sampleStart: this.samples,
        frequencyHz: block.centerHz,
        ...(this.opts.epochUs !== undefined ? { datetime: formatDatetime(this.opts.epochUs + block.startUs) } : {}),
        ...(block.calibrationDb !== this.globalCalibrationDb ? { calibrationDb: block.calibrationDb } : {}),
      });
    }
    this.last = { centerHz: block.centerHz, calibrationDb: block.calibrationDb, nextUs: block.startUs + (block.count * US_PER_S) / rate };
  }

  private async append(data: Float32Array, count: number): Promise<void> {
    const bytes = count * SAMPLE_BYTES[this.datatype];
    let out: Uint8Array;
    if (this.datatype === 'cf32_le' && LITTLE_ENDIAN_HOST) {
      out = new Uint8Array(data.buffer, data.byteOffset, bytes);
    } else {
      out = this.scratchOf(bytes);
      const view = new DataView(out.buffer, out.byteOffset, bytes);
      if (this.datatype === 'cf32_le') {
        for (let i = 0; i < 2 * count; i++) view.setFloat32(4 * i, data[i]!, true);
      } else {
        // 1.0 is 32768, the reader's scale; beyond full scale the sample clips, as an ADC would.
        for (let i = 0; i < 2 * count; i++) {
          const v = Math.round(data[i]! * 32768);
          view.setInt16(2 * i, v > 32767 ? 32767 : v < -32768 ? -32768 : v, true);
        }
      }
    }
    let done = 0;
    while (done < bytes) {
      const { bytesWritten } = await this.handle.write(out, done, bytes - done);
      done += bytesWritten;
    }
  }

  private scratchOf(bytes: number): Uint8Array {
    if (this.scratch.length < bytes) this.scratch = new Uint8Array(bytes);
    return this.scratch;
  }

  private closedError(): FrontendError {
    return new FrontendError('RADIO_CLOSED', `${this.dataPath}: the recording is closed`);
  }
}
