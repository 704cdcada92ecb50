/**
 * What the VNF sandbox costs a packet: a trivial VNF (counts and forwards)
 * called in-process through a VNF manager, as the simulator runs VNFs,
 * against the same VNF in its sandbox (a worker thread, one message round
 * trip per call), one call at a time and with calls pipelined.
 *
 *   node --import tsx bench/vnf.ts [--packets 20000]
 *
 * Prints key=value lines: microseconds per packet for each way, and the
 * sandbox's ratios against in-process, measured in the same run.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { VnfManager } from '../src/vnf/manager.js';
import { VnfSandbox } from '../src/vnf/sandbox.js';
import type { VnfPacket } from '../src/vnf/types.js';
import { counter } from './vnf-counter.js';

const { values } = parseArgs({ options: { packets: { type: 'string', default: '20000' } } });
const n = Number(values.packets);
if (!Number.isInteger(n) || n < 100) {
  process.stderr.write(`bench/vnf.ts: --packets: "${values.packets}" is not an integer >= 100\n`);
  process.exit(2);
}

const FLOW = { proto: 'tcp' as const };
const pkt: VnfPacket = { proto: 'tcp', src: Uint8Array.of(10, 0, 0, 1), dst: Uint8Array.of(10, 0, 0, 2), bytes: new Uint8Array(1040).fill(7) };
pkt.bytes.set([0x9c, 0x40, 0x13, 0x89]);

// In-process, as in the simulator.
const m = new VnfManager([counter], 1);
m.instantiate('counter', FLOW, {}, 0);
for (let i = 0; i < 2000; i++) m.intercept(pkt, i);
let t = performance.now();
for (let i = 0; i < n; i++) m.intercept(pkt, i);
const inProcessUs = ((performance.now() - t) * 1000) / n;

// In a sandbox: a worker thread per VNF.
const box = await new VnfSandbox(
  { type: 'counter', flow: FLOW, params: {}, seed: 1, now: 0, modules: [{ url: new URL('./vnf-counter.ts', import.meta.url).href, export: 'counter' }] },
  { memoryMb: 64, callBudgetMs: 10_000 },
).ready();
if (box.state !== 'running') {
  process.stderr.write(`bench/vnf.ts: the sandbox did not start: ${box.reason}\n`);
  process.exit(1);
}
for (let i = 0; i < 500; i++) await box.intercept(pkt, i);
t = performance.now();
for (let i = 0; i < n; i++) await box.intercept(pkt, i);
const sequentialUs = ((performance.now() - t) * 1000) / n;
t = performance.now();
for (let i = 0; i < n; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_, k) => box.intercept(pkt, i + k)));
const pipelinedUs = ((performance.now() - t) * 1000) / n;
const offered = (await box.info())?.counters.offered;
await box.stop(0);
if (offered !== n * 2 + 500) {
  process.stderr.write(`bench/vnf.ts: the sandboxed VNF saw ${offered} packets, expected ${n * 2 + 500}\n`);
  process.exit(1);
}

const f = (x: number): string => x.toFixed(3);
process.stdout.write(
  [
    `packets=${n}`,
    `inprocess_us_per_packet=${f(inProcessUs)}`,
    `sandbox_us_per_packet=${f(sequentialUs)}`,
    `sandbox_pipelined_us_per_packet=${f(pipelinedUs)}`,
    `ratio_sandbox_vs_inprocess=${(sequentialUs / inProcessUs).toFixed(1)}`,
    `ratio_pipelined_vs_inprocess=${(pipelinedUs / inProcessUs).toFixed(1)}`,
  ].join('\n') + '\n',
);
