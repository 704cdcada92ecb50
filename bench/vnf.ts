/**
 * What the VNF sandbox costs a packet: a trivial VNF (counts and forwards)
 * called in-process through a VNF manager, as the simulator runs VNFs,
 * against the same VNF in its sandbox (a worker thread; calls and replies
 * through rings in shared memory), one call at a time and with calls
 * pipelined (1000 in flight).
 *
 *   node --import tsx bench/vnf.ts [--packets 20000] [--warmup 10000]
 *
 * Each sandbox first takes --warmup calls one at a time, untimed but for
 * the first sandbox's (printed as `sandbox_warmup_us_per_packet`): both
 * threads' code runs interpreted at first, and V8 compiles it fully only
 * after some thousands of calls. A router's sandbox takes a flow's every
 * packet, so it is the compiled code's cost that counts; the warm-up is
 * reported so that what a fresh sandbox costs is seen too.
 *
 * Prints key=value lines: the machine's cores and load (the sandbox's
 * figures depend on a core being free for each thread); microseconds per
 * packet for each way, and the spread of one call at a time (10th, 50th
 * and 90th percentiles); the CPU the whole process spent per packet (main
 * thread and worker: spinning counts); the same one-at-a-time run with the
 * host never spinning (it waits with Atomics.waitAsync only) and with
 * neither thread spinning; the CPU an idle sandbox uses; whether one call at
 * a time is under 10 µs; and the sandbox's ratios against in-process,
 * measured in the same run.
 */
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { VnfManager } from '../src/vnf/manager.js';
import { VnfSandbox, type SandboxTuning } from '../src/vnf/sandbox.js';
import type { VnfPacket } from '../src/vnf/types.js';
import { counter } from './vnf-counter.js';

const { values } = parseArgs({ options: { packets: { type: 'string', default: '20000' }, warmup: { type: 'string', default: '10000' } } });
const n = Number(values.packets);
if (!Number.isInteger(n) || n < 100) {
  process.stderr.write(`bench/vnf.ts: --packets: "${values.packets}" is not an integer >= 100\n`);
  process.exit(2);
}
const warmup = Number(values.warmup);
if (!Number.isInteger(warmup) || warmup < 0) {
  process.stderr.write(`bench/vnf.ts: --warmup: "${values.warmup}" is not an integer >= 0\n`);
  process.exit(2);
}

const FLOW = { proto: 'tcp' as const };
const pkt: VnfPacket = { proto: 'tcp', src: Uint8Array.of(10, 0, 0, 1), dst: Uint8Array.of(10, 0, 0, 2), bytes: new Uint8Array(1040).fill(7) };
pkt.bytes.set([0x9c, 0x40, 0x13, 0x89]);

/** Wall and process CPU (every thread) of `run`, µs per packet. */
async function measure(run: () => unknown): Promise<{ us: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await run();
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { us: (wall * 1000) / n, cpuUs: (used.user + used.system) / n };
}

// In-process, as in the simulator.
const m = new VnfManager([counter], 1);
m.instantiate('counter', FLOW, {}, 0);
for (let i = 0; i < 2000; i++) m.intercept(pkt, i);
const inProcess = await measure(() => {
  for (let i = 0; i < n; i++) m.intercept(pkt, i);
});

async function sandbox(tuning: Partial<SandboxTuning>): Promise<VnfSandbox> {
  const box = await new VnfSandbox(
    { type: 'counter', flow: FLOW, params: {}, seed: 1, now: 0, modules: [{ url: new URL('./vnf-counter.ts', import.meta.url).href, export: 'counter' }] },
    { memoryMb: 64, callBudgetMs: 10_000 },
    tuning,
  ).ready();
  if (box.state !== 'running') {
    process.stderr.write(`bench/vnf.ts: the sandbox did not start: ${box.reason}\n`);
    process.exit(1);
  }
  const t = performance.now();
  for (let i = 0; i < warmup; i++) await box.intercept(pkt, i);
  warmupUs ??= warmup > 0 ? ((performance.now() - t) * 1000) / warmup : undefined;
  return box;
}
/** The first sandbox's warm-up calls, µs each. */
let warmupUs: number | undefined;

/** One call at a time; also each call's own time, for its spread. */
async function sequential(box: VnfSandbox): Promise<{ us: number; cpuUs: number; pUs: (q: number) => number }> {
  const each = new Float64Array(n);
  const m = await measure(async () => {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await box.intercept(pkt, i);
      each[i] = (performance.now() - t) * 1000;
    }
  });
  each.sort();
  return { ...m, pUs: (q) => each[Math.floor(q * (n - 1))]! };
}

async function offered(box: VnfSandbox, expected: number): Promise<void> {
  const seen = (await box.info())?.counters.offered;
  await box.stop(0);
  if (seen !== expected) {
    process.stderr.write(`bench/vnf.ts: the sandboxed VNF saw ${seen} packets, expected ${expected}\n`);
    process.exit(1);
  }
}

// In a sandbox as the daemon runs it.
const box = await sandbox({});
const seq = await sequential(box);
const piped = await measure(async () => {
  for (let i = 0; i < n; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_, k) => box.intercept(pkt, i + k)));
});
// Idle: once the worker's spin is over, neither thread should use the CPU.
await new Promise((r) => setTimeout(r, 50));
const idleCpu = process.cpuUsage();
const idleT = performance.now();
await new Promise((r) => setTimeout(r, 500));
const idleUsed = process.cpuUsage(idleCpu);
const idlePct = ((idleUsed.user + idleUsed.system) / 1000 / (performance.now() - idleT)) * 100;
await offered(box, n * 2 + warmup);

// The host never spinning: each reply wakes the event loop through Atomics.waitAsync.
const quiet = await sandbox({ hostSpinUs: 0 });
const waitAsyncOnly = await sequential(quiet);
await offered(quiet, n + warmup);
// Neither spinning: the worker is woken from Atomics.wait for every call too.
const still = await sandbox({ hostSpinUs: 0, workerSpinUs: 0 });
const noSpin = await sequential(still);
await offered(still, n + warmup);

const f = (x: number): string => x.toFixed(3);
process.stdout.write(
  [
    `cpus=${availableParallelism()}`,
    `loadavg_1min=${loadavg()[0]!.toFixed(2)}`,
    `packets=${n}`,
    `warmup_packets=${warmup}`,
    ...(warmupUs === undefined ? [] : [`sandbox_warmup_us_per_packet=${f(warmupUs)}`]),
    `inprocess_us_per_packet=${f(inProcess.us)}`,
    `sandbox_us_per_packet=${f(seq.us)}`,
    `sandbox_cpu_us_per_packet=${f(seq.cpuUs)}`,
    `sandbox_p10_us=${f(seq.pUs(0.1))}`,
    `sandbox_p50_us=${f(seq.pUs(0.5))}`,
    `sandbox_p90_us=${f(seq.pUs(0.9))}`,
    `sandbox_pipelined_us_per_packet=${f(piped.us)}`,
    `sandbox_pipelined_cpu_us_per_packet=${f(piped.cpuUs)}`,
    `sandbox_waitasync_us_per_packet=${f(waitAsyncOnly.us)}`,
    `sandbox_waitasync_cpu_us_per_packet=${f(waitAsyncOnly.cpuUs)}`,
    `sandbox_nospin_us_per_packet=${f(noSpin.us)}`,
    `sandbox_nospin_cpu_us_per_packet=${f(noSpin.cpuUs)}`,
    `sandbox_idle_cpu_percent=${idlePct.toFixed(2)}`,
    `goal_sequential_lt_10us=${seq.us < 10 ? 'yes' : 'no'}`,
    `ratio_sandbox_vs_inprocess=${(seq.us / inProcess.us).toFixed(1)}`,
    `ratio_pipelined_vs_inprocess=${(piped.us / inProcess.us).toFixed(1)}`,
  ].join('\n') + '\n',
);
