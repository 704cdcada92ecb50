import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runPhyPair, type PairStatus, type StationStatus } from '../support/phy-pair.js';

/**
 * Two `cogmesh node` processes over the DSSS PHY on sim radios, their bands
 * linked through a `cogmesh band` hub (test/support/phy-pair.ts): every
 * frame (HELLO, the UDP flow's data, ACKs) leaves one router as IQ samples
 * and is found again only by the receiver in the samples the other router's
 * radios read. They find each other by HELLO on R3, and a UDP flow goes from
 * one to the other over R2 and R1; the delivery ratio is reported. The
 * routers run in slow motion (phy.timeScale 0.2), so that the test does not
 * depend on how much CPU the machine has to spare: in real time the same
 * pair is `npm run bench:phy-mesh`'s (docs/phy.md).
 */

test('two routers over the DSSS PHY on sim radios find each other by HELLO and carry a UDP flow through synthesised IQ', { timeout: 400_000 }, async (t) => {
  const logs = ['', ''];
  try {
    const r = await runPhyPair({ timeScale: 0.2, readLatencyUs: 2000, sifsUs: 4000, ackTimeoutUs: 12000 }, logs);
    const [s1, s2] = r.status;
    const ratio = r.received / r.sent;
    t.diagnostic(`UDP over the DSSS PHY: ${r.received} of ${r.sent} packets delivered, delivery ratio ${ratio.toFixed(3)}`);
    assert.ok(r.sent >= 70 && r.sent <= 80, `the source sent its 75 packets: ${r.sent}`);
    assert.ok(ratio >= 0.8, `delivery ratio ${ratio}`);
    // Everything went as samples: frames sent as bursts through the hub, decoded from IQ.
    const st = (s: PairStatus, radio: string): StationStatus => s.medium[radio] as StationStatus;
    assert.ok(st(s1, 'phy1/R2').txFrames >= r.received, 'data frames left R2');
    assert.ok(st(s1, 'phy1/R2').acked >= 0.8 * r.received, "R2 heard the receiver's ACKs");
    assert.ok(st(s2, 'phy2/R1').phy.rx.frames >= r.received, 'the data frames were decoded from the samples R1 read');
    assert.ok(st(s1, 'phy1/R3').phy.rx.frames > 0 && st(s2, 'phy2/R3').phy.rx.frames > 0, 'HELLOs decoded on R3');
    const hub1 = s1.medium.hub as { sent: number; received: number };
    assert.ok(hub1.sent > 0 && hub1.received > 0, 'bursts went through the hub');
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- router logs ---\n${logs.join('\n').slice(-4000)}`, { cause: e });
  }
});
