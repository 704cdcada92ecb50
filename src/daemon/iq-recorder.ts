import { basename, join } from 'node:path';
import type { IqBlock } from '../../radio/frontend.js';
import { SigmfWriter } from '../../radio/file/writer.js';
import { CogmeshError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { US_PER_S, type Micros } from '../core/time.js';
import type { RecordingControl, RecordingInfo } from '../router/view.js';
import type { IqTap } from '../sensing/iq-tap.js';
import type { Visit } from '../sensing/schedule.js';

export type RecordingErrorCode = 'RECORD_OFF' | 'RECORD_BUSY' | 'RECORD_BAD_LENGTH';

/** A recording refused: recording is off, one is running, or the length is out of range. */
export class RecordingError extends CogmeshError {
  declare readonly code: RecordingErrorCode;

  constructor(code: RecordingErrorCode, message: string) {
    super(code, message);
  }
}

export interface IqRecorderOptions {
  /** Folder the recordings go to (monitor.record.dir). */
  dir: string;
  /** Longest recording, seconds, and largest, bytes of data. */
  maxS: number;
  maxBytes: number;
  /** The router's clock, and the Unix time of its time 0 (0 when it runs on the epoch's clock; undefined in virtual time). */
  now: () => Micros;
  epochUs: number | undefined;
  node: { id: number; name: string };
  log: Logger;
  /** Each recording as it starts and ends. */
  onChange: (r: RecordingInfo) => void;
}

interface Active {
  info: RecordingInfo;
  writer: Promise<SigmfWriter>;
  endUs: Micros;
  /** The writes not yet done: a failure of one fails the recording. */
  writes: Promise<void>;
}

/**
 * The monitor's "record the next N seconds" (after gqrx's timed recording):
 * an IQ tap that, while a recording runs, copies every block the detector
 * reads into a SigMF recording, one capture segment per visit (the sensing
 * radio hops channel to channel, and each segment says its centre and time).
 * It ends at the first visit that ends after the asked-for time, or at the
 * size cap. One recording at a time; the finished ones are listed and their
 * files served by the monitor. Nothing here blocks the detector: a block is
 * copied and handed to the writer's queue.
 */
export class IqRecorder implements IqTap, RecordingControl {
  private active: Active | undefined;
  private readonly done: RecordingInfo[] = [];
  private seq = 0;

  constructor(private readonly o: IqRecorderOptions) {}

  start(seconds: number): RecordingInfo {
    if (this.o.dir === '') throw new RecordingError('RECORD_OFF', 'recording is off on this router: monitor.record.dir is empty');
    if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= this.o.maxS)) {
      throw new RecordingError('RECORD_BAD_LENGTH', `seconds: ${String(seconds)} is not a length in (0, ${this.o.maxS}] s (monitor.record.maxS)`);
    }
    if (this.active) throw new RecordingError('RECORD_BUSY', `recording ${this.active.info.name} is running; one recording at a time`);
    const now = this.o.now();
    const stamp = this.o.epochUs !== undefined ? new Date((this.o.epochUs + now) / 1000).toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z') : `t${now}`;
    const name = `cogmesh-${this.o.node.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${stamp}-${++this.seq}`;
    const info: RecordingInfo = {
      name,
      state: 'recording',
      seconds,
      startedAtUs: now,
      endedAtUs: undefined,
      reason: undefined,
      samples: 0,
      captures: 0,
      bytes: 0,
      error: undefined,
    };
    const writer = SigmfWriter.create(join(this.o.dir, name), {
      description: `the IQ router ${this.o.node.name} (id ${this.o.node.id}) read while sensing, ${seconds} s from the monitor`,
      ...(this.o.epochUs !== undefined ? { epochUs: this.o.epochUs } : {}),
    });
    const a: Active = { info, writer, endUs: now + Math.round(seconds * US_PER_S), writes: writer.then(() => undefined) };
    this.active = a;
    // A folder that is not there fails the recording at once, not at its end.
    a.writes.catch((e: unknown) => this.finish(a, 'error', e));
    this.o.log.info(
      { event: 'record-start', name, seconds, dir: this.o.dir },
      `recording the next ${seconds} s of sensing IQ into ${join(this.o.dir, name)}.sigmf-*`,
    );
    this.o.onChange({ ...info });
    return { ...info };
  }

  list(): RecordingInfo[] {
    const all = this.active ? [...this.done, this.active.info] : this.done;
    return all.map((r) => ({ ...r }));
  }

  path(file: string): string | undefined {
    // Only the files of a finished recording of this router, by their exact names: no path reaches anything else.
    if (basename(file) !== file) return undefined;
    const m = /^(.+)\.sigmf-(meta|data)$/.exec(file);
    if (!m || !this.done.some((r) => r.name === m[1] && r.state === 'done')) return undefined;
    return join(this.o.dir, file);
  }

  block(v: Visit, b: IqBlock): void {
    const a = this.active;
    if (!a || a.info.state !== 'recording' || b.count === 0) return;
    const room = Math.floor((this.o.maxBytes - a.info.bytes) / 8);
    const n = Math.min(b.count, room);
    if (n > 0) {
      // The detector reuses its buffer: the writer gets a copy.
      const copy: IqBlock = { ...b, data: b.data.slice(0, 2 * n), count: n };
      const before = a.info.samples;
      a.info.samples += n;
      a.info.bytes += 8 * n;
      a.writes = a.writes.then(async () => {
        const w = await a.writer;
        await w.write(copy);
        if (before === 0 || w.captureCount !== a.info.captures) {
          a.info.captures = w.captureCount;
          w.annotate({ sampleStart: before, sampleCount: n, label: `round ${v.round} channel ${v.channel}` });
        }
      });
      a.writes.catch((e: unknown) => this.finish(a, 'error', e));
    }
    if (n < b.count) this.finish(a, 'size');
  }

  visitEnd(_v: Visit, now: Micros): void {
    const a = this.active;
    if (a && a.info.state === 'recording' && now >= a.endUs) this.finish(a, 'time');
  }

  /** Ends the recording in progress (the router stops); resolves once its files are written. */
  async stop(): Promise<void> {
    const a = this.active;
    if (a) await this.finish(a, 'stopped');
  }

  private finish(a: Active, reason: NonNullable<RecordingInfo['reason']>, error?: unknown): Promise<void> {
    if (this.active !== a) return Promise.resolve();
    this.active = undefined;
    a.info.endedAtUs = this.o.now();
    a.info.reason = reason;
    return (async () => {
      try {
        if (error !== undefined) throw error;
        await a.writes;
        const meta = await (await a.writer).close();
        a.info.captures = meta.captures.length;
        a.info.state = 'done';
        this.o.log.info(
          { event: 'record-done', name: a.info.name, reason, samples: a.info.samples, captures: a.info.captures, bytes: a.info.bytes },
          `recording ${a.info.name} done (${reasonText(reason)}): ${a.info.samples} samples in ${a.info.captures} captures`,
        );
      } catch (e) {
        a.info.state = 'failed';
        a.info.reason = 'error';
        a.info.error = (e as Error).message;
        await a.writer.then((w) => w.close()).catch(() => undefined);
        this.o.log.error({ event: 'record-failed', name: a.info.name, err: e }, `recording ${a.info.name} failed: ${a.info.error}`);
      }
      this.done.push(a.info);
      this.o.onChange({ ...a.info });
    })();
  }
}

function reasonText(r: NonNullable<RecordingInfo['reason']>): string {
  return r === 'time' ? 'its time is up' : r === 'size' ? 'it reached monitor.record.maxMiB' : r === 'stopped' ? 'the router stopped' : 'an error';
}
