import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
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
   * on its log's reader; what is queued is written out at exit. Synchronous
   * writes keep lines in order with everything else the process prints.
   */
  background?: boolean;
}

/** The structured logger of a node: one JSON object a line, or a readable rendering of the same for a terminal. */
export function createLogger(o: LogOptions): Logger {
  const vc = o.virtualClock;
  const timestamp = vc ? () => `,"t_us":${vc.now()}` : pino.stdTimeFunctions.isoTime;
  const base = { level: o.level, base: undefined, timestamp };
  if (o.format === 'json') {
    return pino(base, o.destination ? (o.destination as unknown as pino.DestinationStream) : pino.destination({ fd: 1, sync: o.background !== true }));
  }
  const stream = pretty({
    destination: o.destination ?? 1,
    sync: o.destination !== undefined || o.background !== true,
    colorize: o.destination === undefined && process.stdout.isTTY === true,
    // Each message already says what its record holds; the fields are for the json format.
    hideObject: true,
    ignore: 't_us',
    translateTime: vc ? false : 'SYS:HH:MM:ss.l',
    messageFormat: vc ? '[t={t_us}us] {msg}' : '{msg}',
  });
  return pino(base, stream);
}
