import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import type { VnfHost } from '../../src/vnf/pool.js';
import { star } from '../support/star.js';

test("a relay's flow table gives each flow its own next hop, also for packets a sandboxed VNF lets go later", () => {
  // A star around relay 0: router 1 sends flow 7 to router 2 and flow 8 to router 3, both through 0,
  // whose VNF host takes flow 7's packets and lets each go 2 ms later (as a sandbox answers).
  let declined = 0;
  // The star's engine, once it is built (the VNF host is one of its parts).
  const ref: { engine?: { after: (d: number, f: () => void) => unknown } } = {};
  const vnf: VnfHost = {
    intercept: (pkt, _now, decline) => {
      if (pkt.tag !== 7) return false;
      ref.engine!.after(2 * US_PER_MS, () => {
        declined++;
        decline!();
      });
      return true;
    },
    tick: () => undefined,
    nextDeadline: () => undefined,
    poll: () => ({ packets: [], events: [] }),
    list: () => [],
  };
  const { engine, routers, delivered } = star((i) => (i === 0 ? { vnf } : {}));
  ref.engine = engine;
  let seq = 0;
  const send = (now: number): void => {
    routers[1]!.originate(2, 'tcp', 7, seq, new Uint8Array(200), now);
    routers[1]!.originate(3, 'tcp', 8, seq++, new Uint8Array(200), now);
    if (now < seconds(12)) engine.at(now + 50 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  let wrong = 0;
  let samples = 0;
  const probe = (): void => {
    const t = routers[0]!.flows();
    const f7 = t.find((f) => f.flow === 7);
    const f8 = t.find((f) => f.flow === 8);
    samples++;
    if ((f7?.nextHop !== undefined && f7.nextHop !== 2) || (f8?.nextHop !== undefined && f8.nextHop !== 3)) wrong++;
    if (engine.now() < seconds(12)) engine.after(US_PER_MS, probe);
  };
  engine.at(seconds(3), probe);
  engine.run(seconds(13));
  assert.ok(
    declined > 50 && (delivered.get(7) ?? 0) > 50 && (delivered.get(8) ?? 0) > 50,
    `both flows ran: ${JSON.stringify([...delivered])}, ${declined} declined`,
  );
  assert.equal(wrong, 0, `${wrong} of ${samples} samples showed a flow with another flow's next hop`);
  const t = routers[0]!.flows();
  assert.equal(t.find((f) => f.flow === 7)?.nextHop, 2);
  assert.equal(t.find((f) => f.flow === 8)?.nextHop, 3);
});
