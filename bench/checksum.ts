/**
 * What the one's complement sum of RFC 1071 costs a span (`sumWords` in
 * src/wire/checksum.ts: the WebAssembly SIMD kernel from 128 bytes to 64 KiB
 * where the engine has it), against its JavaScript loop (`sumWordsLoop`, the
 * reference) over the same spans, measured in the same run. The spans are a
 * bare TCP ACK, a 576-byte datagram, the chain's 1000-byte segment with its
 * header, an Ethernet MTU, a jumbo frame and a 64 KiB segment, each at an
 * even offset into a shared buffer as packets lie in the slabs.
 *
 *   node --import tsx bench/checksum.ts [--bytes 200000000]
 *
 * Prints key=value lines: nanoseconds per sum for each size and each way,
 * and the kernel's speed-up over the loop (loop time / sumWords time).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fold, sumWords, sumWordsLoop } from '../src/wire/checksum.js';

const { values } = parseArgs({ options: { bytes: { type: 'string', default: '200000000' } } });
const total = Number(values.bytes);
if (!Number.isInteger(total) || total < 1_000_000) {
  process.stderr.write(`bench/checksum.ts: --bytes: "${values.bytes}" is not an integer >= 1000000\n`);
  process.exit(2);
}

const SIZES = [40, 576, 1020, 1500, 9000, 65_536];
const buf = new Uint8Array(new ArrayBuffer(1 << 18), 6, (1 << 18) - 6);
for (let i = 0; i < buf.length; i++) buf[i] = (i * 2654435761) >>> 24;

/** Nanoseconds per sum of `n`-byte spans with `f`, over about `total` bytes, after an untimed warm-up; the spans walk the buffer. */
function perSum(f: typeof sumWords, n: number): { ns: number; check: number } {
  const count = Math.max(2000, Math.floor(total / n));
  const stride = n + 2;
  const spans = Math.max(1, Math.floor((buf.length - n) / stride));
  let check = 0;
  for (let i = 0; i < 2000; i++) check += f(buf, (i % spans) * stride, (i % spans) * stride + n, 0);
  check = 0;
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const at = (i % spans) * stride;
    check = (check + fold(f(buf, at, at + n, 0))) % 0xffff;
  }
  return { ns: ((performance.now() - t) * 1e6) / count, check };
}

const lines = [`bytes=${total}`];
for (const n of SIZES) {
  const loop = perSum(sumWordsLoop, n);
  const fast = perSum(sumWords, n);
  if (loop.check !== fast.check) {
    process.stderr.write(`bench/checksum.ts: ${n}-byte spans: sumWords and sumWordsLoop disagree (${fast.check} and ${loop.check})\n`);
    process.exit(1);
  }
  lines.push(`span_${n}_loop_ns=${loop.ns.toFixed(1)}`, `span_${n}_sumwords_ns=${fast.ns.toFixed(1)}`, `span_${n}_speedup=${(loop.ns / fast.ns).toFixed(2)}`);
}
process.stdout.write(lines.join('\n') + '\n');
