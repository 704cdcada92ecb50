import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IpTestbed, iperfServer, kill, skip } from '../support/ip-testbed.js';

/**
 * The WAN a router emulates on its LAN side (`ip.wan`, docs/ip.md), as the
 * hosts see it through Linux's own IP: router 0 puts 100 ms each way and a
 * 1 Mbps link with a 20-packet queue between its TUN and the mesh. The
 * scenario's primary users are left out: one that comes on over the
 * routers' channel loses frames until the next sensing visit moves them
 * (up to a period of 1.07 s), which is the cognitive layer's business, not
 * the WAN's, and would make the ping count below a matter of luck.
 */
const DELAY_MS = 100;
const RATE_MBPS = 1;

interface WanStatus {
  ip: { wan?: Record<'toMesh' | 'toLan', { sent: number; delivered: number; drops: number; maxQueuePackets: number }> | null };
}

describe('an emulated WAN between a router and its LAN (testbed --netns, ip.wan)', { skip, timeout: 300_000 }, () => {
  let tb: IpTestbed;
  before(async () => {
    tb = await IpTestbed.start(
      'config/scenarios/testbed-chain.json',
      '--hops',
      '1',
      '--set',
      'pn.sources=[]',
      '--set',
      `nodeOverrides.0.ip.wan=${JSON.stringify({ enabled: true, delayMs: DELAY_MS, rateMbps: RATE_MBPS, queuePackets: 20 })}`,
    );
    await tb.reachable(0, '10.0.1.2');
  });
  after(async () => {
    await tb?.stop();
  });

  test('every ping crosses the delay line both ways: no round trip is shorter than twice the one-way delay', async () => {
    const r = await tb.run(0, ['ping', '-c', '5', '-i', '0.3', '-W', '5', '10.0.1.2'], 60_000);
    const rtts = [...r.out.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
    assert.ok(rtts.length >= 4, `replies: ${r.out}`);
    for (const t of rtts) assert.ok(t >= 2 * DELAY_MS, `an RTT of ${t} ms, under the WAN's ${2 * DELAY_MS} ms`);
    // The router behind no WAN answers its own host at once: only router 0's LAN side is delayed.
    const near = await tb.run(1, ['ping', '-c', '3', '-i', '0.3', '-W', '5', '10.0.1.1'], 30_000);
    const nearRtts = [...near.out.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
    assert.ok(nearRtts.length >= 2 && nearRtts.every((t) => t < 2 * DELAY_MS), `host 1 to its router: ${near.out}`);
  });

  test('UDP sent at 3 Mbps leaves the WAN at its 1 Mbps; the rest is dropped at its queue and counted', async () => {
    const server = await iperfServer(tb, 1, 5301);
    try {
      const r = await tb.run(0, ['iperf3', '-c', '10.0.1.2', '-p', '5301', '-u', '-b', '3M', '-l', '1000', '-t', '6', '-J'], 60_000);
      assert.equal(r.code, 0, r.err || r.out);
      const j = JSON.parse(r.out) as { end: { sum_received?: { bits_per_second: number }; sum: { bits_per_second: number } } };
      const received = (j.end.sum_received ?? j.end.sum).bits_per_second / 1e6;
      // iperf3 counts its payload: a little under the link's rate, which carries the IP and UDP headers too.
      assert.ok(received <= RATE_MBPS, `received ${received.toFixed(3)} Mbps through a ${RATE_MBPS} Mbps WAN`);
      assert.ok(received >= 0.5 * RATE_MBPS, `received ${received.toFixed(3)} Mbps: the WAN's rate is not used`);
    } finally {
      kill(server);
    }
    const s = (await tb.status(0)) as unknown as WanStatus;
    const wan = s.ip.wan;
    assert.ok(wan, 'router 0 reports its WAN');
    assert.ok(wan.toMesh.drops > 0, `toward the mesh: ${JSON.stringify(wan.toMesh)}`);
    assert.ok(wan.toMesh.maxQueuePackets <= 20, `the queue held ${wan.toMesh.maxQueuePackets} packets, over its 20`);
    assert.ok(wan.toLan.delivered > 0, `toward the LAN: ${JSON.stringify(wan.toLan)}`);
    const far = (await tb.status(1)) as unknown as WanStatus;
    assert.ok(far.ip.wan === undefined || far.ip.wan === null, 'router 1 has no WAN');
  });
});
