import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Off, TxOff } from './layout.js';

/**
 * Builds and runs native/sora-ring's producer and consumer, the stand-ins
 * for a SORA board's receive and transmit DMA, for tests, demos and
 * benchmarks. Nothing here is needed to use rings that a real board's driver
 * serves.
 */

/** native/sora-ring, from this file in the source tree (radio/sora) or the build (dist/radio/sora). */
export function producerSourceDir(): string | undefined {
  for (const rel of ['../../native/sora-ring/', '../../../native/sora-ring/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'Makefile'))) return dir;
  }
  return undefined;
}

/** `exe` is the producer, `consumer` the TX ring's consumer. */
export type BuildResult = { ok: true; exe: string; consumer: string } | { ok: false; reason: string };

/** Runs `make -C native/sora-ring`; the reason says what is missing when it cannot. */
export function buildProducer(dir = producerSourceDir()): BuildResult {
  if (dir === undefined) return { ok: false, reason: 'native/sora-ring is not in this tree' };
  const make = spawnSync('make', ['-s', '-C', dir], { encoding: 'utf8' });
  if (make.error) {
    const missing = (make.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, reason: missing ? 'make not found (install make and gcc)' : `make failed to start: ${make.error.message}` };
  }
  if (make.status !== 0) {
    const err = `${make.stderr}${make.stdout}`.trim();
    const noCc = /not found|No such file or directory/.test(err) && /\bcc\b|gcc/.test(err);
    return { ok: false, reason: noCc ? `no C compiler (install gcc): ${err}` : `make -C ${dir} failed:\n${err}` };
  }
  return { ok: true, exe: join(dir, 'build', 'sora-producer'), consumer: join(dir, 'build', 'sora-consumer') };
}

/** The producer's flags (see `sora-producer --help`). */
export interface ProducerOptions {
  ring: string;
  format?: 'cf32' | 'ci16';
  rateHz?: number;
  /** Slots, a power of two. */
  capacity?: number;
  source?: 'noise' | 'counter' | 'file';
  file?: string;
  loop?: boolean;
  noiseDbfs?: number;
  burstDbfs?: number;
  /** Fraction of time ON, 0..1. */
  busy?: number;
  burstUs?: number;
  seed?: number;
  centerHz?: number;
  tuneRangeHz?: readonly [number, number];
  retuneUs?: number;
  fullScaleDbm?: number;
  /** As fast as possible instead of real time. */
  fast?: boolean;
  durationS?: number;
  samples?: number;
  chunk?: number;
  unlink?: boolean;
}

export function producerArgs(o: ProducerOptions): string[] {
  const a = ['--ring', o.ring];
  const num = (flag: string, v: number | undefined): void => {
    if (v !== undefined) a.push(flag, String(v));
  };
  if (o.format !== undefined) a.push('--format', o.format);
  num('--rate', o.rateHz);
  num('--capacity', o.capacity);
  if (o.source !== undefined) a.push('--source', o.source);
  if (o.file !== undefined) a.push('--file', o.file);
  if (o.loop) a.push('--loop');
  num('--noise-dbfs', o.noiseDbfs);
  num('--burst-dbfs', o.burstDbfs);
  num('--busy', o.busy);
  num('--burst-us', o.burstUs);
  num('--seed', o.seed);
  num('--center', o.centerHz);
  num('--tune-min', o.tuneRangeHz?.[0]);
  num('--tune-max', o.tuneRangeHz?.[1]);
  num('--retune-us', o.retuneUs);
  num('--full-scale-dbm', o.fullScaleDbm);
  if (o.fast) a.push('--fast');
  num('--duration', o.durationS);
  num('--samples', o.samples);
  num('--chunk', o.chunk);
  if (o.unlink) a.push('--unlink');
  return a;
}

/** The consumer's flags (see `sora-consumer --help`). */
export interface ConsumerOptions {
  /** The TX ring it creates. */
  ring: string;
  /** Where the bursts it sends go. */
  out: string;
  rateHz?: number;
  /** Sample slots, a power of two. */
  capacity?: number;
  /** Burst records, a power of two. */
  burstSlots?: number;
  /** A timed burst first seen more than this after its time is dropped as late. */
  lateUs?: number;
  /** Exit after this many bursts. */
  bursts?: number;
  pollUs?: number;
  unlink?: boolean;
}

export function consumerArgs(o: ConsumerOptions): string[] {
  const a = ['--ring', o.ring, '--out', o.out];
  const num = (flag: string, v: number | undefined): void => {
    if (v !== undefined) a.push(flag, String(v));
  };
  num('--rate', o.rateHz);
  num('--capacity', o.capacity);
  num('--burst-slots', o.burstSlots);
  num('--late-us', o.lateUs);
  num('--bursts', o.bursts);
  num('--poll-us', o.pollUs);
  if (o.unlink) a.push('--unlink');
  return a;
}

/** The pid at byte `offset` of the ring file at `path`, or undefined when there is no readable ring there. */
function ringPid(path: string, offset: number): number | undefined {
  if (!existsSync(path)) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const b = new Uint8Array(8);
    if (readSync(fd, b, 0, 8, offset) !== 8) return undefined;
    return Number(new DataView(b.buffer).getBigUint64(0, true));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A running producer or consumer. */
export class RingProcess {
  private stderr = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly ring: string,
  ) {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      this.stderr += s;
    });
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      child.on('error', (e) => {
        this.stderr += e.message;
        this.exit = { code: -1, signal: null };
        resolve();
      });
    });
  }

  /**
   * Starts the producer and resolves once the file at the ring path is its
   * ring (the file is renamed into place complete, carrying its pid), so that
   * a stale ring left at that path is not mistaken for the new one.
   */
  static start(exe: string, opts: ProducerOptions, timeoutMs = 5000): Promise<RingProcess> {
    return RingProcess.launch('sora-producer', exe, producerArgs(opts), opts.ring, Off.producerPid, timeoutMs);
  }

  /** Starts the TX ring's consumer and resolves once the file at its ring path is its ring. */
  static startConsumer(exe: string, opts: ConsumerOptions, timeoutMs = 5000): Promise<RingProcess> {
    return RingProcess.launch('sora-consumer', exe, consumerArgs(opts), opts.ring, TxOff.consumerPid, timeoutMs);
  }

  private static async launch(name: string, exe: string, args: string[], ring: string, pidOffset: number, timeoutMs: number): Promise<RingProcess> {
    const p = new RingProcess(spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'] }), ring);
    const deadline = performance.now() + timeoutMs;
    while (p.pid === undefined || ringPid(ring, pidOffset) !== p.pid) {
      if (p.exit !== undefined) throw new Error(`${name} exited (${p.exit.code ?? p.exit.signal}) before creating ${ring}: ${p.stderr.trim()}`);
      if (performance.now() > deadline) {
        await p.stop();
        throw new Error(`${name} did not create ${ring} within ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    return p;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** What it printed (errors only). */
  get errors(): string {
    return this.stderr;
  }

  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exit;
  }

  /** Resolves when it exits on its own (a duration or sample count reached). */
  wait(): Promise<void> {
    return this.exited;
  }

  /** SIGTERM (it stops cleanly, marking its ring stopped), then waits for the exit. */
  async stop(): Promise<void> {
    if (this.exit === undefined) this.child.kill('SIGTERM');
    await this.exited;
  }
}

/** The producer's process (a `RingProcess`), under the name the receive side has always used. */
export const ProducerProcess = RingProcess;
export type ProducerProcess = RingProcess;
