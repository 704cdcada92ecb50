import { writeSync, write as fsWrite } from 'node:fs';
import { pino, type Logger } from 'pino';
import pretty, { prettyFactory } from 'pino-pretty';
import type { Clock } from './time.js';

export type { Logger };

export interface LogOptions {
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  format: 'pretty' | 'json';
  /** In virtual time, log lines carry the virtual time (`t_us`) instead of the wall clock, so runs compare byte for byte. */
  virtualClock?: Clock;
  /** Where lines go (standard output by default). */
  destination?: NodeJS.WritableStream;
  /**
   * Standard output written in the background (default false): a line is
   * queued and written once the event loop is free, so a router never waits
   * on its log's reader; what is queued is written out at exit
   * (`BackgroundLines`). Synchronous writes keep lines in order with
   * everything else the process prints.
   */
  background?: boolean;
}

/** The structured logger of a node: one JSON object a line, or a readable rendering of the same for a terminal. */
export function createLogger(o: LogOptions): Logger {
  const vc = o.virtualClock;
  const timestamp = vc ? () => `,"t_us":${vc.now()}` : pino.stdTimeFunctions.isoTime;
  const base = { level: o.level, base: undefined, timestamp };
  const prettyOptions = {
    colorize: o.destination === undefined && process.stdout.isTTY === true,
    // Each message already says what its record holds; the fields are for the json format.
    hideObject: true,
    ignore: 't_us',
    translateTime: vc ? false : 'SYS:HH:MM:ss.l',
    messageFormat: vc ? '[t={t_us}us] {msg}' : '{msg}',
  };
  if (o.destination === undefined && o.background === true) {
    // Node's stream for standard output, once made, has a pipe or socket there in non-blocking mode (a plain `node`
    // process starts with it blocking): a write on the thread pool then takes what fits and never waits for a reader
    // that is alive but does not read, which would hold the process at exit. Made here on purpose, not left to `isTTY`.
    void process.stdout;
    const render = o.format === 'pretty' ? prettyFactory(prettyOptions) : undefined;
    return pino(base, new BackgroundLines(1, render ? { render } : {}));
  }
  if (o.format === 'json') {
    return pino(base, o.destination ? (o.destination as unknown as pino.DestinationStream) : pino.destination({ fd: 1, sync: true }));
  }
  return pino(base, pretty({ ...prettyOptions, destination: o.destination ?? 1, sync: true }));
}

/**
 * What a logger (or a child of it) writing in the background lost: the lines
 * it dropped and, once writing stopped for good, why (an errno code).
 * Undefined for a logger that writes synchronously (it loses nothing: it
 * waits).
 */
export function logLoss(log: Logger): { dropped: number; gone?: string } | undefined {
  const stream = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (!(stream instanceof BackgroundLines)) return undefined;
  return stream.gone === undefined ? { dropped: stream.dropped } : { dropped: stream.dropped, gone: stream.gone };
}

/** How long the exit's flush retries a descriptor that is not ready (EAGAIN) before it leaves the rest unwritten. */
const EXIT_RETRY_MS = 2000;

/** The BackgroundLines with something to write at exit: one exit listener for them all. */
const unflushed = new Set<BackgroundLines>();
const utf8 = new TextEncoder();
let exitHooked = false;

/**
 * Log lines written to a file descriptor in the background, for a process
 * that must never wait on its log's reader (a real-time router): a line is
 * queued and the queue goes out in one write on libuv's thread pool while
 * the event loop goes on; at exit, what is still queued is written out
 * (`flushAtExit`).
 *
 * Written here rather than with pino's own background destination
 * (sonic-boom), whose flush at exit retries a failed write forever: a
 * process whose reader had gone away (a SIGKILLed testbed, `| head`) with
 * lines queued at exit never ended. Here a failed write (EPIPE: the reader
 * is gone) stops the writing for good, and the exit's flush gives up on a
 * descriptor that stays not ready. Lines that cannot be written (the reader
 * gone, or more than `maxQueuedChars` waiting for a reader that does not
 * read) are counted in `dropped`; once the queue has room again, a line
 * from `notice` says how many went before the next one. The descriptor
 * should be in non-blocking mode where it is a pipe or a socket
 * (createLogger has Node make standard output so): a write on the thread
 * pool to a blocking one whose reader is alive but does not read waits for
 * ever, and holds the process at its exit (libuv waits for its pool).
 */
export class BackgroundLines {
  /** Lines not written: the reader went away, or `maxQueuedChars` were waiting already. */
  dropped = 0;
  /** Why writing stopped (an errno code), once it has. */
  gone: string | undefined;
  private queue: string[] = [];
  private queuedChars = 0;
  /** The bytes of a write that was not taken whole: they go first. */
  private rest: Uint8Array | undefined;
  private writing = false;
  private retry: NodeJS.Timeout | undefined;
  private droppedUnsaid = 0;
  private readonly maxQueuedChars: number;
  private readonly render: ((line: string) => string) | undefined;
  private readonly notice: (dropped: number) => string;

  constructor(
    private readonly fd: number,
    o: { maxQueuedChars?: number; render?: (line: string) => string; notice?: (dropped: number) => string } = {},
  ) {
    this.maxQueuedChars = o.maxQueuedChars ?? 16 << 20;
    this.render = o.render;
    this.notice =
      o.notice ??
      ((n) =>
        `${JSON.stringify({ level: 40, time: new Date().toISOString(), event: 'log-dropped', lines: n, msg: `${n} log lines were dropped: their reader did not keep up` })}\n`);
    if (!exitHooked) {
      exitHooked = true;
      process.on('exit', () => {
        for (const b of unflushed) b.flushAtExit();
      });
    }
  }

  /** pino's call: one line (JSON, with its newline). */
  write(line: string): boolean {
    if (this.gone !== undefined || this.queuedChars + line.length > this.maxQueuedChars) {
      this.dropped++;
      this.droppedUnsaid++;
      return true;
    }
    if (this.droppedUnsaid > 0) {
      this.push(this.notice(this.droppedUnsaid));
      this.droppedUnsaid = 0;
    }
    this.push(line);
    if (!this.writing && this.retry === undefined) this.next();
    return true;
  }

  private push(line: string): void {
    const text = this.render ? this.render(line) : line;
    this.queue.push(text);
    this.queuedChars += text.length;
    unflushed.add(this);
  }

  /** What is waiting, in one buffer: the rest of a partial write, then the queue. */
  private take(): Uint8Array {
    const q = utf8.encode(this.queue.length === 1 ? this.queue[0]! : this.queue.join(''));
    this.queue = [];
    this.queuedChars = 0;
    const rest = this.rest;
    this.rest = undefined;
    if (rest === undefined) return q;
    const data = new Uint8Array(rest.length + q.length);
    data.set(rest);
    data.set(q, rest.length);
    return data;
  }

  private next(): void {
    const data = this.take();
    if (data.length === 0) {
      unflushed.delete(this);
      return;
    }
    this.writing = true;
    fsWrite(this.fd, data, 0, data.length, null, (err, n) => {
      this.writing = false;
      if (err) {
        if (err.code === 'EAGAIN') {
          this.rest = data;
          this.retry = setTimeout(() => {
            this.retry = undefined;
            this.next();
          }, 10);
          this.retry.unref();
        } else this.stop(err.code ?? err.message, data);
        return;
      }
      if (n < data.length) this.rest = data.subarray(n);
      if (this.rest !== undefined || this.queue.length > 0) this.next();
      else unflushed.delete(this);
    });
  }

  private stop(why: string, lost: Uint8Array): void {
    this.gone = why;
    let lines = this.queue.length;
    for (let i = lost.indexOf(10); i >= 0; i = lost.indexOf(10, i + 1)) lines++;
    this.dropped += lines;
    this.queue = [];
    this.queuedChars = 0;
    this.rest = undefined;
    unflushed.delete(this);
  }

  /**
   * At exit: what is queued, written out. With a write in flight on the
   * thread pool, the rest is queued there behind it (libuv runs the work
   * queued on its pool before the process ends, taking it in the order
   * queued): written here at once, it could overtake the lines in flight.
   * Otherwise it is written synchronously, retrying a descriptor that is
   * not ready for EXIT_RETRY_MS at most.
   */
  flushAtExit(): void {
    if (this.gone !== undefined) return;
    if (this.retry !== undefined) clearTimeout(this.retry);
    const data = this.take();
    if (this.writing) {
      if (data.length > 0) fsWrite(this.fd, data, 0, data.length, null, () => undefined);
      return;
    }
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    const until = Date.now() + EXIT_RETRY_MS;
    let off = 0;
    while (off < data.length) {
      try {
        off += writeSync(this.fd, data, off, data.length - off);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN' && Date.now() < until) Atomics.wait(sleeper, 0, 0, 10);
        else {
          this.stop((e as NodeJS.ErrnoException).code ?? String(e), data.subarray(off));
          return;
        }
      }
    }
    unflushed.delete(this);
  }
}
