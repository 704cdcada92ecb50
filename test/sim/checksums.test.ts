import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { simulate, type Captures } from '../../src/cli/sim.js';
import type { ScenarioOverrides } from '../../src/config/scenario.js';
import { meshIp } from '../../src/wire/addresses.js';
import { parseData } from '../../src/wire/codec.js';
import { parseDot11 } from '../../src/wire/dot11.js';
import { tcpChecksum } from '../../src/wire/tcp.js';

const SCENARIO = 'config/scenarios/urbanx-chain.json';
/** One TCP Reno flow over one hop, from 1 s. */
const CHAIN: ScenarioOverrides = { hops: 1, durationS: 10, tcp: 'reno', cognitive: false, pn: false, set: ['flows.0.startS=1'] };

/** The frames of a pcapng capture, each chunk one block (as the capture writes them): the packet data of its enhanced packet blocks. */
function packets(chunks: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const b of chunks) {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (v.getUint32(0, true) !== 6) continue;
    out.push(b.subarray(28, 28 + v.getUint32(20, true)));
  }
  return out;
}

/** The TCP segments in a router's captured frames, with the routers they went between. */
function tcpSegments(chunks: readonly Uint8Array[]): Array<{ src: number; dst: number; bytes: Uint8Array }> {
  const out: Array<{ src: number; dst: number; bytes: Uint8Array }> = [];
  for (const p of packets(chunks)) {
    const radiotapBytes = p[2]! | (p[3]! << 8);
    const f = parseDot11(p.subarray(radiotapBytes));
    if (!f.ok || f.frame.kind !== 'data') continue;
    const d = parseData(f.frame.payload);
    if (!d.ok || d.value.header.proto !== 'tcp') continue;
    out.push({ src: d.value.header.src, dst: d.value.header.dst, bytes: d.value.payload });
  }
  return out;
}

describe('sim: TCP checksums', () => {
  test('a run gives the same result with checksums always and left to need', async () => {
    const auto = await simulate(SCENARIO, CHAIN, 1);
    const always = await simulate(SCENARIO, { ...CHAIN, set: [...CHAIN.set!, 'checksums.tcp=always'] }, 1);
    const flow = auto.result.runs[0]!.flows[0]!;
    assert.ok('tcp' in flow && flow.tcp !== null && flow.tcp.bytesDelivered > 100_000, 'the flow carried data');
    assert.equal(JSON.stringify(always.result), JSON.stringify(auto.result));
  });

  test("a captured run's TCP segments carry their checksums", async () => {
    const captures: Captures = new Map();
    await simulate(SCENARIO, CHAIN, 1, undefined, captures);
    let seen = 0;
    for (const chunks of captures.values()) {
      for (const s of tcpSegments(chunks)) {
        seen++;
        // Over a segment that carries a right checksum, the sum comes to 0.
        assert.equal(tcpChecksum(s.bytes, { src: meshIp(s.src), dst: meshIp(s.dst) }), 0, `segment ${seen}`);
      }
    }
    assert.ok(seen > 1000, `${seen} TCP segments captured`);
  });
});
