/**
 * What a call through koffi costs (the foreign-function binding the TUN
 * uses, src/daemon/tun.ts) against a plain JavaScript call, measured in the
 * same run: a trivial libc function, `labs(long)`, that does no system call,
 * so the figure is the binding's own crossing (arguments converted, the C
 * call, the result converted back). The JavaScript reference computes the
 * same thing in a function the optimiser is kept from inlining away (its
 * result is summed and printed).
 *
 *   node --import tsx bench/ffi.ts [--calls 2000000]
 *
 * Prints key=value lines: nanoseconds per call for each, and koffi's cost
 * as a multiple of the plain call's.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type koffiModule from 'koffi';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '2000000' } } });
const n = Number(values.calls);
if (!Number.isInteger(n) || n < 10_000) {
  process.stderr.write(`bench/ffi.ts: --calls: "${values.calls}" is not an integer >= 10000\n`);
  process.exit(2);
}

let koffi: typeof koffiModule;
try {
  koffi = createRequire(import.meta.url)('koffi') as typeof koffiModule;
} catch (e) {
  process.stderr.write(`bench/ffi.ts: koffi (an optional dependency) is not installed: ${(e as Error).message}\n`);
  process.exit(1);
}
let lib: ReturnType<typeof koffi.load>;
try {
  lib = koffi.load('libc.so.6');
} catch {
  lib = koffi.load(null); // musl: libc's symbols are the process's own
}
const labs = lib.func('long labs(long x)') as unknown as (x: number) => number;

/** The same function in JavaScript. */
function jsAbs(x: number): number {
  return x < 0 ? -x : x;
}

/** Nanoseconds per call of `f` over n calls (arguments varying), after an untimed warm-up; `sink` keeps the results alive. */
let sink = 0;
function perCall(f: (x: number) => number): number {
  for (let i = 0; i < 20_000; i++) sink += f(i - 10_000);
  const t = performance.now();
  for (let i = 0; i < n; i++) sink += f(i & 1 ? -i : i);
  return ((performance.now() - t) * 1e6) / n;
}

// Measured alternately, twice each, and the lower of each kept: the machine is shared.
const js = Math.min(perCall(jsAbs), perCall(jsAbs));
const ffi = Math.min(perCall(labs), perCall(labs));
const lines = [
  `calls=${n}`,
  `node=${process.version}`,
  `koffi=${koffi.version}`,
  `js_ns_per_call=${js.toFixed(2)}`,
  `koffi_ns_per_call=${ffi.toFixed(1)}`,
  `koffi_us_per_call=${(ffi / 1000).toFixed(3)}`,
  `koffi_over_js=${(ffi / js).toFixed(0)}`,
  `sink=${sink}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
