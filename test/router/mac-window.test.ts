import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AirMedium } from '../../radio/medium/index.js';
import type { MacFrame, Station, StationHandlers, StationHost } from '../../radio/medium/types.js';
import { seconds, US_PER_MS } from '../../src/core/time.js';
import type { NodeConfig } from '../../src/config/types.js';
import { routersAt } from '../support/star.js';

/**
 * R2's MAC window through the whole router, in virtual time: three routers
 * in a chain whose radios attach to the medium the way a router process
 * attaches to `cogmesh medium` (a window of frames queued at R2's station,
 * a retune giving back everything the station holds: server.ts), with
 * sensing rounds pausing R2 and the relay switching between its two
 * neighbours' channels.
 */

interface Watch {
  /** R2 frames that went on the air on a channel other than their queue's. */
  wrongChannel: Array<{ queue: number; air: number | undefined }>;
  /** The most frames R2's station held at once. */
  mostHeld: number;
  /** onSent for a frame the station did not hold (given back twice, or never sent). */
  strayOutcomes: number;
  held: number;
  /** Frames R2 refused (remoteLike's refuseEvery). */
  refused?: number;
}

/** The medium as a router process sees it: a window, and a retune that gives back everything the radio holds. */
function remoteLike(medium: AirMedium, window: number, w: Watch, refuseEvery = 0): StationHost {
  let sends = 0;
  return {
    sendWindow: window,
    addStation(spec, handlers): Station {
      const r2 = spec.id.endsWith('/R2');
      const held = new Set<MacFrame>();
      // The handlers need the station they belong to, which addStation returns.
      const at = {} as { st: Station };
      const h: StationHandlers = {
        onReceive: (f, now) => handlers.onReceive(f, now),
        onSent: (f, o) => {
          if (r2 && !held.delete(f)) w.strayOutcomes++;
          if (r2) w.held--;
          handlers.onSent(f, o);
        },
        onAttempt: (f, n) => {
          const queue = r2 ? (f.tag as { channel: number }).channel : undefined;
          if (queue !== undefined && at.st.channel !== queue) w.wrongChannel.push({ queue, air: at.st.channel });
          handlers.onAttempt?.(f, n);
        },
      };
      const st = medium.addStation(spec, h);
      at.st = st;
      return {
        id: st.id,
        get channel() {
          return st.channel;
        },
        get counters() {
          return st.counters;
        },
        get idle() {
          return st.idle;
        },
        get queued() {
          return st.queued;
        },
        get serviceAttempts() {
          return st.serviceAttempts;
        },
        send(f) {
          // A radio that refuses a frame now and then (a full queue), when asked to.
          if (r2 && refuseEvery > 0 && ++sends % refuseEvery === 0) {
            w.refused = (w.refused ?? 0) + 1;
            return false;
          }
          const ok = st.send(f);
          if (r2 && ok) {
            held.add(f);
            w.held++;
            w.mostHeld = Math.max(w.mostHeld, held.size);
          }
          return ok;
        },
        retune(channel, overheadUs) {
          st.hold();
          st.retune(channel, overheadUs);
        },
        hold: () => st.hold(),
        detach: () => st.detach(),
      };
    },
  };
}

test('a MAC window of 4 across sensing pauses and channel switches: frames only on their queue channel, the bound kept, nothing lost or taken twice', () => {
  const watch: Watch = { wrongChannel: [], mostHeld: 0, strayOutcomes: 0, held: 0 };
  const r1Of = [6, 11, 3];
  const taken = new Map<string, number>();
  const { engine, routers } = routersAt(
    [
      { xM: 0, yM: 0 },
      { xM: 200, yM: 0 },
      { xM: 400, yM: 0 },
    ],
    {
      seed: 3,
      // Each router keeps its own R1 channel (sensing still runs, and pauses R2): the relay serves two channels.
      config: (cfg: NodeConfig, i) => ({ ...cfg, channelPlan: { ...cfg.channelPlan, allowed: [r1Of[i]!] } }),
      host: (m) => remoteLike(m, 4, watch),
      extra: () => ({
        deliver: (h) => {
          const k = `${h.flow}/${h.seq}`;
          taken.set(k, (taken.get(k) ?? 0) + 1);
        },
      }),
    },
  );
  // Flows both ways through the relay, 200-byte packets every 3 ms each, from 3 s to 9 s.
  let seq = 0;
  const send = (now: number): void => {
    routers[0]!.originate(2, 'udp', 1, seq, new Uint8Array(200), now);
    routers[2]!.originate(0, 'udp', 2, seq++, new Uint8Array(200), now);
    if (now + 3 * US_PER_MS < seconds(9)) engine.at(now + 3 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  engine.run(seconds(12));

  const relay = routers[1]!;
  assert.ok(relay.sched.counters.switches > 20, `the relay switched ${relay.sched.counters.switches} times`);
  assert.ok(relay.counters.sensingRounds > 3, `${relay.counters.sensingRounds} sensing rounds`);
  assert.deepEqual(watch.wrongChannel.slice(0, 5), [], 'every R2 frame on the air on its queue channel');
  assert.equal(watch.mostHeld, 4, 'the window is used, and never exceeded');
  assert.equal(watch.strayOutcomes, 0, 'every frame handed to R2 comes back once');
  assert.equal(watch.held, 0, 'and none is left with R2 once the traffic is over');
  const twice = [...taken].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], 'no packet delivered twice');
  for (const flow of [1, 2]) {
    const got = [...taken.keys()].filter((k) => k.startsWith(`${flow}/`)).length;
    assert.ok(got > 0.5 * seq, `flow ${flow}: ${got} of ${seq} delivered`);
  }
  for (const r of routers) {
    const c = r.sched.counters;
    const drops = Object.values(c.drops).reduce((a, b) => a + b, 0);
    const queued = r.sched.queues().reduce((n, q) => n + q.packets, 0);
    assert.equal(r.sched.inFlight, 0);
    assert.equal(c.enqueued, c.handedOut + drops + c.removed + queued, `router ${r.addr}: every packet accounted for`);
  }
});

test('a frame R2 refuses is dropped and frees its place in the window: the router keeps sending', () => {
  const watch: Watch = { wrongChannel: [], mostHeld: 0, strayOutcomes: 0, held: 0 };
  let delivered = 0;
  const { engine, routers } = routersAt(
    [
      { xM: 0, yM: 0 },
      { xM: 200, yM: 0 },
    ],
    {
      seed: 5,
      config: (cfg: NodeConfig) => ({ ...cfg, channelPlan: { ...cfg.channelPlan, allowed: [6] } }),
      host: (m) => remoteLike(m, 2, watch, 7),
      extra: () => ({ deliver: () => void delivered++ }),
    },
  );
  let seq = 0;
  const send = (now: number): void => {
    routers[0]!.originate(1, 'udp', 1, seq++, new Uint8Array(200), now);
    if (now + 5 * US_PER_MS < seconds(8)) engine.at(now + 5 * US_PER_MS, send);
  };
  engine.at(seconds(3), send);
  engine.run(seconds(10));
  const r = routers[0]!;
  assert.ok((watch.refused ?? 0) > 50, `${watch.refused} frames refused`);
  // Without the refused frames' places freed, a window of 2 would stall after two refusals.
  assert.ok(delivered > 0.7 * seq, `${delivered} of ${seq} delivered`);
  assert.ok(delivered < seq, 'the refused frames are not delivered');
  assert.equal(r.sched.inFlight, 0, 'nothing left in the window');
  assert.equal(watch.strayOutcomes, 0);
});
