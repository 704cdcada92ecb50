import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import { Rng } from '../../src/core/rng.js';
import { mutateBytes, mutateText, mutateValue, randomBytes, randomText } from './mutate.js';
import type { AnyTarget, FuzzTarget } from './targets.js';

/**
 * Runs one target over `n` inputs: about one in ten purely random, the rest
 * seeds after stacked mutations. Input `i` is drawn from its own stream
 * (`fork` of the seed by target and index), so any input is made again from
 * the seed and its index alone, whatever came before it.
 */

export interface Escape {
  target: string;
  seed: number;
  index: number;
  /** What escaped: the error's class and message, or that the input ran past the time limit. */
  error: string;
  stack: string | undefined;
  /** The input as a crasher file holds it: bytes in hex, text as a JSON string, a value as util.inspect shows it. */
  input: string;
}

export interface TargetReport {
  target: string;
  inputs: number;
  refused: number;
  accepted: number;
  escapes: Escape[];
  /** Refusals by code (WIRE_TRUNCATED, CONFIG_INVALID, ...). */
  codes: Record<string, number>;
  seconds: number;
  /** The slowest single input, milliseconds. */
  slowestMs: number;
}

export interface RunOptions {
  seed: number;
  n: number;
  /** An input that takes longer than this is an escape (a hang, or work out of proportion to the input); Infinity for none. */
  slowMs: number;
  /** Only this input (reproducing a crasher). */
  index?: number;
  /** Called every so many inputs, for a progress line. */
  progress?: (done: number) => void;
}

/** Input `index` of `target` for `seed`. */
export function inputOf<I>(target: FuzzTarget<I>, seeds: readonly I[], seed: number, index: number): I {
  const rng = Rng.fromSeed(seed).fork(`${target.name}/${index}`);
  const random = rng.next() < 0.1;
  const a: unknown = seeds[rng.int(0, seeds.length - 1)];
  const b: unknown = seeds[rng.int(0, seeds.length - 1)];
  switch (target.kind) {
    case 'bytes':
      if (random) return randomBytes(rng) as I;
      // A target that knows its format's fields aims half of its mutations at them; the rest are the generic ones.
      if (target.mutate && rng.next() < 0.5) return target.mutate(rng, a as I, b as I);
      return mutateBytes(rng, a as Uint8Array, b as Uint8Array) as I;
    case 'text':
      return (random ? randomText(rng) : mutateText(rng, a as string, b as string)) as I;
    default:
      return (random ? JSON.parse(randomJson(rng)) : mutateValue(rng, a, true)) as I;
  }
}

/** A random text that parses as JSON, for value targets: random text is seldom JSON. */
function randomJson(rng: Rng): string {
  const t = randomText(rng);
  try {
    JSON.parse(t);
    return t;
  } catch {
    return String(rng.int(-5, 5));
  }
}

export function showInput(kind: AnyTarget['kind'], input: unknown): string {
  if (kind === 'bytes') return Buffer.from(input as Uint8Array).toString('hex');
  if (kind === 'text') return JSON.stringify(input);
  return inspect(input, { depth: 8, maxArrayLength: 50, maxStringLength: 200, breakLength: 160 });
}

function describe(e: unknown): { error: string; stack: string | undefined } {
  if (e instanceof Error) return { error: `${e.name}: ${e.message.slice(0, 500)}`, stack: e.stack };
  return { error: `a thrown ${typeof e}: ${String(e).slice(0, 200)}`, stack: undefined };
}

/** Runs `target` for `o.n` inputs (or input `o.index` only) and reports what became of them. */
export function runTarget<I>(target: FuzzTarget<I>, o: RunOptions): TargetReport {
  const seeds = target.seeds();
  const report: TargetReport = { target: target.name, inputs: 0, refused: 0, accepted: 0, escapes: [], codes: {}, seconds: 0, slowestMs: 0 };
  const from = o.index ?? 0;
  const to = o.index !== undefined ? o.index + 1 : o.n;
  const started = performance.now();
  for (let i = from; i < to; i++) {
    const input = inputOf(target, seeds, o.seed, i);
    const t0 = performance.now();
    let code: string | undefined;
    let escaped: { error: string; stack: string | undefined } | undefined;
    try {
      code = target.feed(input);
    } catch (e) {
      escaped = describe(e);
    }
    const ms = performance.now() - t0;
    if (ms > report.slowestMs) report.slowestMs = ms;
    if (escaped === undefined && ms > o.slowMs) escaped = { error: `took ${ms.toFixed(0)} ms, beyond the ${o.slowMs} ms limit`, stack: undefined };
    report.inputs++;
    if (escaped !== undefined) {
      report.escapes.push({ target: target.name, seed: o.seed, index: i, ...escaped, input: showInput(target.kind, input) });
    } else if (code === undefined) report.accepted++;
    else {
      report.refused++;
      report.codes[code] = (report.codes[code] ?? 0) + 1;
    }
    if (o.progress && (i + 1) % 10_000 === 0) o.progress(i + 1 - from);
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Runs a target of any kind (the union narrowed for the generic runner). */
export const runAny = (t: AnyTarget, o: RunOptions): TargetReport => runTarget(t as FuzzTarget<unknown>, o);
