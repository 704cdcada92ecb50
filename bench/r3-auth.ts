/**
 * What R3's message authentication costs a control message: signing
 * (`R3Auth.seal`) after encoding, and checking (`R3Auth.open`, HMAC and
 * replay record) before parsing, against plain encoding and parsing of the
 * same messages, measured in the same run. The messages are a HELLO with 11
 * workload entries and 4 neighbours (the seeds' band: what a router sends
 * every second) and an RREP.
 *
 *   node --import tsx bench/r3-auth.ts [--messages 50000]
 *
 * Prints key=value lines: microseconds per message for encode+parse and for
 * encode+seal+open+parse, their ratio, and the bytes the trailer adds.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encodeControl, parseControl } from '../src/wire/codec.js';
import { BROADCAST, type ControlMsg } from '../src/wire/mesh.js';
import { AUTH_TRAILER_BYTES, keysFromSeed, R3Auth } from '../src/wire/r3-auth.js';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '50000' } } });
const n = Number(values.messages);
if (!Number.isInteger(n) || n < 1000) {
  process.stderr.write(`bench/r3-auth.ts: --messages: "${values.messages}" is not an integer >= 1000\n`);
  process.exit(2);
}

const hello: ControlMsg = {
  type: 'hello',
  src: 1,
  seq: 42,
  r1Channel: 6,
  workload: Array.from({ length: 11 }, (_, i) => ({ channel: i + 1, w: i / 11, windows: 1000 + i })),
  neighbours: [0, 2, 3, 4].map((addr) => ({ addr, r1Channel: 6 })),
};
const rrep: ControlMsg = {
  type: 'rrep',
  repair: false,
  ackRequired: false,
  hopCount: 2,
  dst: 3,
  dstSeq: 9,
  orig: 0,
  lifetimeMs: 3000,
  lastHop: 2,
  pathCost: 2.5,
};

/** Microseconds per message of `round` over n messages, after an untimed warm-up. */
function perMessage(round: (i: number) => void): number {
  for (let i = 0; i < 2000; i++) round(i);
  const t = performance.now();
  for (let i = 0; i < n; i++) round(i);
  return ((performance.now() - t) * 1000) / n;
}

const lines = [`messages=${n}`, `trailer_bytes=${AUTH_TRAILER_BYTES}`];
for (const [name, msg] of [
  ['hello', hello],
  ['rrep', rrep],
] as const) {
  const plainUs = perMessage(() => {
    if (!parseControl(encodeControl(msg)).ok) throw new Error('bench/r3-auth.ts: a plain message did not parse');
  });
  const keys = keysFromSeed(1);
  const tx = new R3Auth(keys, 1);
  const rx = new R3Auth(keys, 2);
  const authUs = perMessage(() => {
    const opened = rx.open(tx.seal(encodeControl(msg), 1, BROADCAST), 1, BROADCAST);
    if (!opened.ok || !parseControl(opened.value).ok)
      throw new Error(`bench/r3-auth.ts: a signed message did not pass (${opened.ok ? 'parse' : opened.error})`);
  });
  const bytes = encodeControl(msg).length;
  lines.push(
    `${name}_bytes=${bytes}`,
    `${name}_plain_encode_parse_us=${plainUs.toFixed(3)}`,
    `${name}_signed_encode_seal_open_parse_us=${authUs.toFixed(3)}`,
    `${name}_ratio_signed_vs_plain=${(authUs / plainUs).toFixed(2)}`,
    `${name}_size_ratio=${((bytes + AUTH_TRAILER_BYTES) / bytes).toFixed(2)}`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
