import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { basename } from 'node:path';
import { FrontendError, RangeArgumentError } from '../../src/core/errors.js';
import { assertMicros, US_PER_S, type Micros } from '../../src/core/time.js';
import type { Frontend, FrontendCapabilities, IqBlock, ReceivedFrame, TuneResult, TxBurst, TxReport } from '../frontend.js';
import { readSigmf, SAMPLE_BYTES, type SigmfDatatype, type SigmfRecording, type SigmfSegment } from './sigmf.js';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

export interface FileFrontendOptions {
  /** Default: the recording's file name. */
  id?: string;
  /** When the samples at a frequency run out, start again from its first (default true); else `RADIO_END_OF_CAPTURE`. */
  loop?: boolean;
  /** dBm of a full-scale signal for recordings without `cogmesh:calibration_db` (default 0). */
  calibrationDb?: number;
  /** Retune time to report (default 0: a file is never deaf). */
  retuneUs?: Micros;
  /**
   * `async` (default): file reads on libuv's pool, the event loop free
   * meanwhile. `sync`: `readIq` reads before it returns and its promise is
   * already resolved, which virtual-time pumps (`runVirtual`) need, as they
   * only wait for promise continuations, never for I/O.
   */
  reads?: 'async' | 'sync';
}

/** All the segments at one centre frequency, and where reading is in them. */
interface Track {
  readonly frequencyHz: number;
  readonly segments: readonly SigmfSegment[];
  readonly sampleCount: number;
  seg: number;
  offset: number;
  /** Times the track wrapped around. */
  lap: number;
}

/** A stretch of one segment going to out[2*outSample ..]. */
interface Piece {
  readonly byteOffset: number;
  readonly samples: number;
  readonly outSample: number;
  /** Amplitude factor that brings the segment's calibration to the block's (1 when the same). */
  readonly scale: number;
}

interface ReadPlan {
  readonly pieces: Piece[];
  readonly count: number;
  readonly startUs: number;
  readonly centerHz: number;
  readonly calibrationDb: number;
}

/**
 * A front-end that replays a SigMF recording. `tune` picks the capture
 * segments recorded at that centre frequency; `readIq` hands out their
 * samples in order, each frequency keeping its own place, so that a sweep
 * recorded over several channels replays channel by channel however often
 * the reader comes back. A block's `startUs` is its first sample's time in
 * the recording (sample index / rate), one recording's length later on each
 * wrap. Samples are read straight into the caller's buffer for cf32, and
 * converted through a scratch buffer for ci16, ci8 and cu8 (full scale 1.0 is
 * 32768, 128 and 127.5 counts from zero).
 */
export class FileFrontend implements Frontend {
  readonly kind = 'file' as const;
  readonly id: string;
  readonly capabilities: FrontendCapabilities;
  readonly gainDb = 0;
  private readonly tracks: Track[];
  private readonly datatype: SigmfDatatype;
  private readonly sampleBytes: number;
  private readonly fallbackCalibrationDb: number;
  private readonly loop: boolean;
  private readonly syncReads: boolean;
  private current: Track | undefined;
  private scratch: Uint8Array = new Uint8Array(0);
  private asyncScratch: Uint8Array = new Uint8Array(0);
  /** Asynchronous reads run one after another, in call order. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  /** Takes over `handle`, the recording's data file open for reading. `openFileFrontend` does both. */
  constructor(
    readonly recording: SigmfRecording,
    private readonly handle: FileHandle,
    opts: FileFrontendOptions = {},
  ) {
    this.id = opts.id ?? basename(recording.metaPath);
    this.datatype = recording.meta.global.datatype;
    this.sampleBytes = SAMPLE_BYTES[this.datatype];
    this.loop = opts.loop ?? true;
    this.syncReads = (opts.reads ?? 'async') === 'sync';
    this.fallbackCalibrationDb = opts.calibrationDb ?? 0;
    if (!Number.isFinite(this.fallbackCalibrationDb)) throw new RangeArgumentError('calibrationDb', opts.calibrationDb, 'a finite number of dBm');
    const byFreq = new Map<number, SigmfSegment[]>();
    for (const s of recording.segments) {
      const list = byFreq.get(s.frequencyHz);
      if (list) list.push(s);
      else byFreq.set(s.frequencyHz, [s]);
    }
    this.tracks = [...byFreq.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([frequencyHz, segments]) => ({ frequencyHz, segments, sampleCount: segments.reduce((n, s) => n + s.sampleCount, 0), seg: 0, offset: 0, lap: 0 }));
    if (this.tracks.length === 0) {
      throw new FrontendError('RADIO_BAD_CAPTURE', `${recording.metaPath}: no capture segment has samples (the data file holds ${recording.sampleCount})`);
    }
    const freqs = this.frequencies;
    this.capabilities = {
      sampleRateHz: recording.meta.global.sampleRateHz,
      tuneRangeHz: [freqs[0]!, freqs[freqs.length - 1]!],
      gainRangeDb: [0, 0],
      retuneUs: assertMicros('retuneUs', opts.retuneUs ?? 0),
      canTransmit: false,
      canTransmitIq: false,
    };
  }

  /** Opens the recording at `path` (NAME, NAME.sigmf-meta or NAME.sigmf-data), checked whole first. */
  static async open(path: string, opts: FileFrontendOptions = {}): Promise<FileFrontend> {
    const rec = await readSigmf(path);
    const handle = await open(rec.dataPath, 'r');
    try {
      return new FileFrontend(rec, handle, opts);
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  /** The centre frequencies the recording has samples at, ascending. */
  get frequencies(): number[] {
    return this.tracks.map((t) => t.frequencyHz);
  }

  /** Samples recorded at `centerHz` (0 when none). */
  samplesAt(centerHz: number): number {
    return this.trackAt(centerHz)?.sampleCount ?? 0;
  }

  get centerHz(): number | undefined {
    return this.current?.frequencyHz;
  }

  /** dBm of a full-scale signal in the samples `readIq` hands out next. */
  calibrationDb(): number {
    const t = this.current;
    const seg = t?.segments[t.seg] ?? t?.segments[0];
    return seg?.calibrationDb ?? this.fallbackCalibrationDb;
  }

  /** Selects the samples recorded at `centerHz`; `RADIO_NOT_IN_CAPTURE` when there are none. */
  tune(centerHz: number): Promise<TuneResult> {
    if (this.closed) return Promise.reject(this.closedError());
    const t = this.trackAt(centerHz);
    if (!t) {
      const have = this.frequencies.map((f) => f / 1e6).join(', ');
      return Promise.reject(new FrontendError('RADIO_NOT_IN_CAPTURE', `${this.id}: ${centerHz / 1e6} MHz is not in the capture, which holds ${have} MHz`));
    }
    this.current = t;
    return Promise.resolve({ centerHz: t.frequencyHz, retuneUs: this.capabilities.retuneUs });
  }

  /** A recording's gain is the one it was made with: only 0 (no change) is accepted. */
  setGain(gainDb: number): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    if (gainDb !== 0) {
      return Promise.reject(new FrontendError('RADIO_GAIN_RANGE', `${this.id}: gain ${gainDb} dB is outside the range [0, 0] dB (a recording has its gain)`));
    }
    return Promise.resolve();
  }

  /**
   * The next `count` samples at the current frequency, read into `into` when
   * given. When the samples there run out, the read wraps to the first of
   * them (`loop`), or the block is shorter than asked and the read after it
   * is refused with `RADIO_END_OF_CAPTURE`.
   */
  readIq(count: number, into?: Float32Array): Promise<IqBlock> {
    let plan: ReadPlan;
    try {
      plan = this.plan(count, into);
    } catch (e) {
      return Promise.reject(e);
    }
    const out = into ?? new Float32Array(2 * plan.count);
    if (this.syncReads) {
      try {
        this.fillSync(plan, out, this.scratchFor(plan, false));
      } catch (e) {
        return Promise.reject(e);
      }
      return Promise.resolve(this.blockOf(plan, out));
    }
    const job = this.queue.then(async () => {
      await this.fillAsync(plan, out);
      return this.blockOf(plan, out);
    });
    this.queue = job.then(
      () => undefined,
      () => undefined,
    );
    return job;
  }

  /** `readIq` done before returning, for drivers that keep virtual time themselves. */
  readIqSync(count: number, into?: Float32Array): IqBlock {
    const plan = this.plan(count, into);
    const out = into ?? new Float32Array(2 * plan.count);
    this.fillSync(plan, out, this.scratchFor(plan, false));
    return this.blockOf(plan, out);
  }

  /** Every frequency back to its first sample. */
  rewind(): void {
    for (const t of this.tracks) {
      t.seg = 0;
      t.offset = 0;
      t.lap = 0;
    }
  }

  send(_bytes: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: a recording cannot transmit`));
  }

  transmitIq(_burst: TxBurst): Promise<TxReport> {
    if (this.closed) return Promise.reject(this.closedError());
    return Promise.reject(new FrontendError('RADIO_CANNOT_TRANSMIT', `${this.id}: a recording cannot transmit`));
  }

  /** A recording carries no decoded frames: the listener is never called. */
  onFrame(_listener: (frame: ReceivedFrame) => void): () => void {
    return () => undefined;
  }

  /** Closes the data file once reads in flight are done; later calls are refused with `RADIO_CLOSED`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await this.handle.close();
  }

  private trackAt(centerHz: number): Track | undefined {
    // JSON round trips keep integers exact; half a hertz absorbs a recorder's rounding.
    return this.tracks.find((t) => Math.abs(t.frequencyHz - centerHz) < 0.5);
  }

  /** Works out which bytes the next `count` samples are and moves the track on past them. */
  private plan(count: number, into: Float32Array | undefined): ReadPlan {
    if (this.closed) throw this.closedError();
    const t = this.current;
    if (!t) throw new FrontendError('RADIO_NOT_TUNED', `${this.id}: tune before reading samples`);
    if (!Number.isSafeInteger(count) || count <= 0) throw new RangeArgumentError('count', count, 'an integer > 0');
    if (into !== undefined && into.length < 2 * count) {
      throw new RangeArgumentError('into', into.length, `a buffer of at least ${2 * count} floats (2 per complex sample)`);
    }
    if (t.seg >= t.segments.length) {
      if (!this.loop) {
        throw new FrontendError(
          'RADIO_END_OF_CAPTURE',
          `${this.id}: all ${t.sampleCount} samples at ${t.frequencyHz / 1e6} MHz have been read (open with loop to start again)`,
        );
      }
      this.wrap(t);
    }
    const rate = this.capabilities.sampleRateHz;
    const first = t.segments[t.seg]!;
    const startUs = ((t.lap * this.recording.sampleCount + first.sampleStart + t.offset) * US_PER_S) / rate;
    const calibrationDb = first.calibrationDb ?? this.fallbackCalibrationDb;
    const pieces: Piece[] = [];
    let got = 0;
    while (got < count) {
      if (t.seg >= t.segments.length) {
        if (!this.loop) break;
        this.wrap(t);
      }
      const s = t.segments[t.seg]!;
      const n = Math.min(count - got, s.sampleCount - t.offset);
      const segCal = s.calibrationDb ?? this.fallbackCalibrationDb;
      pieces.push({
        byteOffset: s.byteOffset + t.offset * this.sampleBytes,
        samples: n,
        outSample: got,
        scale: segCal === calibrationDb ? 1 : 10 ** ((segCal - calibrationDb) / 20),
      });
      got += n;
      t.offset += n;
      if (t.offset >= s.sampleCount) {
        t.seg++;
        t.offset = 0;
      }
    }
    return { pieces, count: got, startUs, centerHz: t.frequencyHz, calibrationDb };
  }

  private wrap(t: Track): void {
    t.seg = 0;
    t.offset = 0;
    t.lap++;
  }

  private blockOf(plan: ReadPlan, data: Float32Array): IqBlock {
    return {
      data,
      count: plan.count,
      startUs: plan.startUs,
      sampleRateHz: this.capabilities.sampleRateHz,
      centerHz: plan.centerHz,
      calibrationDb: plan.calibrationDb,
      droppedSamples: 0,
    };
  }

  /** Whether samples go straight from the file into the caller's floats. */
  private get direct(): boolean {
    return this.datatype === 'cf32_le' && LITTLE_ENDIAN_HOST;
  }

  /** A scratch buffer big enough for the plan's largest piece (unused when reads are direct). */
  private scratchFor(plan: ReadPlan, async: boolean): Uint8Array {
    if (this.direct) return this.scratch;
    const need = Math.max(...plan.pieces.map((p) => p.samples)) * this.sampleBytes;
    if (async) {
      if (this.asyncScratch.length < need) this.asyncScratch = new Uint8Array(need);
      return this.asyncScratch;
    }
    if (this.scratch.length < need) this.scratch = new Uint8Array(need);
    return this.scratch;
  }

  private fillSync(plan: ReadPlan, out: Float32Array, scratch: Uint8Array): void {
    const fd = this.handle.fd;
    for (const p of plan.pieces) {
      const target = this.targetOf(p, out, scratch);
      let done = 0;
      while (done < target.length) {
        const n = readSync(fd, target, done, target.length - done, p.byteOffset + done);
        if (n === 0) throw this.truncated(p.byteOffset + done);
        done += n;
      }
      this.finishPiece(p, out, target);
    }
  }

  private async fillAsync(plan: ReadPlan, out: Float32Array): Promise<void> {
    const scratch = this.scratchFor(plan, true);
    for (const p of plan.pieces) {
      const target = this.targetOf(p, out, scratch);
      let done = 0;
      while (done < target.length) {
        const { bytesRead } = await this.handle.read(target, done, target.length - done, p.byteOffset + done);
        if (bytesRead === 0) throw this.truncated(p.byteOffset + done);
        done += bytesRead;
      }
      this.finishPiece(p, out, target);
    }
  }

  /** Where a piece's bytes are read to: the caller's floats themselves for cf32, else the scratch buffer. */
  private targetOf(p: Piece, out: Float32Array, scratch: Uint8Array): Uint8Array {
    const bytes = p.samples * this.sampleBytes;
    if (this.direct) return new Uint8Array(out.buffer, out.byteOffset + p.outSample * 8, bytes);
    return scratch.subarray(0, bytes);
  }

  /** Converts a piece read into scratch to floats, and brings it to the block's calibration. */
  private finishPiece(p: Piece, out: Float32Array, raw: Uint8Array): void {
    const o = 2 * p.outSample;
    const n = 2 * p.samples;
    if (!this.direct) {
      switch (this.datatype) {
        case 'cf32_le': {
          const v = new DataView(raw.buffer, raw.byteOffset, raw.length);
          for (let i = 0; i < n; i++) out[o + i] = v.getFloat32(4 * i, true);
          break;
        }
        case 'ci16_le': {
          if (LITTLE_ENDIAN_HOST && raw.byteOffset % 2 === 0) {
            const v = new Int16Array(raw.buffer, raw.byteOffset, n);
            for (let i = 0; i < n; i++) out[o + i] = v[i]! / 32768;
          } else {
            const v = new DataView(raw.buffer, raw.byteOffset, raw.length);
            for (let i = 0; i < n; i++) out[o + i] = v.getInt16(2 * i, true) / 32768;
          }
          break;
        }
        case 'ci8': {
          const v = new Int8Array(raw.buffer, raw.byteOffset, n);
          for (let i = 0; i < n; i++) out[o + i] = v[i]! / 128;
          break;
        }
        case 'cu8': {
          for (let i = 0; i < n; i++) out[o + i] = (raw[i]! - 127.5) / 127.5;
          break;
        }
      }
    }
    if (p.scale !== 1) for (let i = o; i < o + n; i++) out[i] = out[i]! * p.scale;
  }

  private truncated(at: number): FrontendError {
    return new FrontendError('RADIO_BAD_CAPTURE', `${this.recording.dataPath}: ends before byte ${at}; the data file changed since it was opened`);
  }

  private closedError(): FrontendError {
    return new FrontendError('RADIO_CLOSED', `${this.id}: the front-end is closed`);
  }
}

/** Opens a SigMF recording as a front-end (`FileFrontend.open`). */
export function openFileFrontend(path: string, opts: FileFrontendOptions = {}): Promise<FileFrontend> {
  return FileFrontend.open(path, opts);
}
