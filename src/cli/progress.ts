import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type * as CliProgress from 'cli-progress';

/**
 * Progress of a long run (`cogmesh sim --seeds K`, the reproduction scripts,
 * the benches), on stderr only: stdout carries the JSON and the reports that
 * other tools parse, and must stay the same with or without a display.
 *
 * On a terminal it draws a bar (cli-progress) with done/total, percent,
 * elapsed time and an estimate of the time left, and clears it when the run
 * stops. Elsewhere (a pipe, a CI log, a file) it prints a plain line at most
 * every `everyS` seconds, none before the first `everyS` have passed and
 * none once all is done: a short run prints nothing extra, so its stderr is
 * the same as before, and a test that runs a short simulation sees no
 * progress at all.
 */

/** What the reporter writes to: process.stderr, or a test's stand-in. */
export interface ProgressStream {
  write(s: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Seconds between two plain lines off a terminal, and before the first one.
 * Ten: a CI log of a ten-minute run gets about sixty lines, which is enough
 * to see it move and to stay clear of no-output timeouts, without burying
 * the run's own messages; and the short runs that tests and comparisons make
 * (a few seconds each) print no line at all.
 */
export const PROGRESS_EVERY_S = 10;

/** The environment variable that turns the display off for scripts and CI: COGMESH_PROGRESS=0. */
export const PROGRESS_ENV = 'COGMESH_PROGRESS';

export interface ProgressOptions {
  /** How many units the whole run is (seeds, points, runs...). */
  total: number;
  /** What the run is, as the line names it: "sim", "repro tcp". */
  label: string;
  /** The unit, plural: "seeds", "points". */
  unit: string;
  /** Where the display goes (default process.stderr). */
  stream?: ProgressStream;
  /** Milliseconds from any origin (default performance.now); tests pass a fake one. */
  clock?: () => number;
  /** Seconds between plain lines off a terminal (default PROGRESS_EVERY_S). */
  everyS?: number;
  /** false: no display at all (--no-progress, COGMESH_PROGRESS=0). */
  enabled?: boolean;
}

export interface Progress {
  /** `n` more units done (default 1); `n` may be a fraction (part of a seed). */
  tick(n?: number): void;
  /** `done` units done in all. */
  update(done: number): void;
  /** The run is over: the bar is cleared, and nothing more is written. */
  stop(): void;
}

/** Whether the environment leaves the display on: anything but COGMESH_PROGRESS=0 (or "off", "false"). */
export function progressWanted(env: Record<string, string | undefined> = process.env): boolean {
  const v = env[PROGRESS_ENV]?.trim().toLowerCase();
  return !(v === '0' || v === 'off' || v === 'false' || v === 'no');
}

/** A duration for a person: "41 s", "12 min", "2 h 05 min". */
export function formatDuration(s: number): string {
  const r = Math.max(0, Math.round(s));
  if (r < 120) return `${r} s`;
  const min = Math.round(r / 60);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

/** Units done as a whole number for the count (a part of a seed is not a seed done). */
const whole = (done: number, total: number): number => Math.min(total, Math.floor(done + 1e-9));

/** Seconds left at the rate so far, or undefined before anything is done. */
const secondsLeft = (done: number, total: number, elapsedS: number): number | undefined =>
  done > 0 ? (elapsedS * Math.max(0, total - done)) / done : undefined;

/**
 * The plain line for a log: `cogmesh: sim: 3/10 seeds (30 %), 41 s elapsed, about 96 s left`.
 * The percent and the estimate count parts of units done; the count does not.
 */
export function progressLine(label: string, unit: string, done: number, total: number, elapsedS: number): string {
  const pct = total > 0 ? Math.floor((100 * Math.min(done, total)) / total) : 100;
  const left = secondsLeft(done, total, elapsedS);
  return (
    `cogmesh: ${label}: ${whole(done, total)}/${total} ${unit} (${pct} %), ${formatDuration(elapsedS)} elapsed` +
    (left === undefined ? '' : `, about ${formatDuration(left)} left`)
  );
}

/**
 * cli-progress, loaded when a bar is drawn: it brings readline with it,
 * tens of milliseconds that a run off a terminal (a script, a test, CI)
 * would pay at every start for nothing.
 */
const cliProgress = (): typeof CliProgress => createRequire(import.meta.url)('cli-progress') as typeof CliProgress;

const NONE: Progress = { tick: () => {}, update: () => {}, stop: () => {} };

/** A reporter for a run of `total` units (see the module's comment for what it shows where). */
export function progress(o: ProgressOptions): Progress {
  if (o.enabled === false || !(o.total > 0)) return NONE;
  const stream = o.stream ?? process.stderr;
  const clock = o.clock ?? (() => performance.now());
  const everyMs = (o.everyS ?? PROGRESS_EVERY_S) * 1000;
  const t0 = clock();
  let done = 0;
  let stopped = false;
  if (stream.isTTY) {
    const bar = new (cliProgress().SingleBar)({
      stream: stream as NodeJS.WritableStream,
      // The estimate before the elapsed time: a narrow terminal cuts the end of the line.
      format: `cogmesh: ${o.label} [{bar}] {count}/{total} ${o.unit} {percentage} % | {left} | {elapsed} elapsed`,
      barsize: 24,
      clearOnComplete: true,
      hideCursor: false,
      // Cut to the terminal's width rather than turn its line wrapping off, which a Ctrl-C mid-run would leave off.
      linewrap: true,
      // Ctrl-C must still end the run: no SIGINT handler of cli-progress's, which would tidy the bar and keep the process going.
      gracefulExit: false,
    });
    const payload = () => {
      const elapsedS = (clock() - t0) / 1000;
      const left = secondsLeft(done, o.total, elapsedS);
      return {
        count: whole(done, o.total),
        elapsed: formatDuration(elapsedS),
        left: left === undefined ? 'estimating' : `about ${formatDuration(left)} left`,
      };
    };
    // The bar appears with the first progress, so a run that ends (or fails) before any draws none.
    let started = false;
    const set = (d: number): void => {
      if (stopped) return;
      done = Math.min(o.total, Math.max(0, d));
      if (started) bar.update(done, payload());
      else {
        started = true;
        bar.start(o.total, done, payload());
      }
    };
    return {
      tick: (n = 1) => set(done + n),
      update: set,
      stop: () => {
        if (stopped) return;
        stopped = true;
        if (started) bar.stop();
      },
    };
  }
  let nextMs = t0 + everyMs;
  const set = (d: number): void => {
    if (stopped) return;
    done = Math.min(o.total, Math.max(0, d));
    const now = clock();
    // Once all is done the run's own closing output follows: a line saying 100 % would only repeat it.
    if (now < nextMs || done >= o.total) return;
    // The next line is due everyS after this one; a long silence (a slow unit) does not bring a burst of lines.
    nextMs = now + everyMs;
    stream.write(`${progressLine(o.label, o.unit, done, o.total, (now - t0) / 1000)}\n`);
  };
  return {
    tick: (n = 1) => set(done + n),
    update: set,
    stop: () => {
      stopped = true;
    },
  };
}
