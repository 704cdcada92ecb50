import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { PrefixRoutes, type PrefixAction, type PrefixParams } from '../../src/routing/prefixes.js';
import { parseIpAddress, parsePrefix, type Prefix } from '../../src/wire/ip.js';
import { encodeControl, parseControl } from '../../src/wire/codec.js';
import type { PrefixAnnouncement } from '../../src/wire/mesh.js';

const PARAMS: PrefixParams = { announceIntervalUs: 5_000_000, lifetimeUs: 15_000_000, netDiameter: 35, jitterUs: 10_000 };

const pfx = (text: string): Prefix => {
  const p = parsePrefix(text);
  assert.ok(p.ok, text);
  return p.value;
};
/** A message as a neighbour hears it: through the codec. */
function decodeOrThrow(m: PrefixAnnouncement): PrefixAnnouncement {
  const r = parseControl(encodeControl(m));
  assert.ok(r.ok && r.value.type === 'prefix');
  return r.value;
}
const ip = (text: string): Uint8Array => parseIpAddress(text)!;

/** Routers in a line, 0 - 1 - 2 - ...: each hears its neighbours' broadcasts, through the codec. */
class Line {
  readonly cores: PrefixRoutes[];
  now = 0;
  readonly sent: Array<{ from: number; a: PrefixAction }> = [];

  constructor(n: number, params = PARAMS, seqStart = 0) {
    this.cores = Array.from({ length: n }, (_, i) => new PrefixRoutes(i, Rng.fromSeed(7).fork(`r${i}`), params, seqStart));
  }

  /** Runs every core's timers up to `until`, delivering each broadcast to the routers next to its sender. */
  runUntil(until: number): void {
    for (;;) {
      let next: number | undefined;
      for (const c of this.cores) {
        const d = c.nextDeadline();
        if (d !== undefined && (next === undefined || d < next)) next = d;
      }
      if (next === undefined || next > until) break;
      this.now = Math.max(this.now, next);
      this.cores.forEach((c, i) => {
        for (const a of c.tick(this.now)) {
          this.sent.push({ from: i, a });
          for (const j of [i - 1, i + 1]) {
            const to = this.cores[j];
            if (to) to.handle(decodeOrThrow(a.msg), i, this.now);
          }
        }
      });
    }
    this.now = until;
  }
}

describe('prefix announcements', () => {
  test('every router learns, by longest prefix match, which router serves an address', () => {
    const line = new Line(4);
    line.cores[0]!.serve([pfx('10.0.0.0/24'), pfx('fd00:1:0:0::/64')], 0);
    line.cores[3]!.serve([pfx('10.0.0.0/16'), pfx('10.0.3.0/24')], 0);
    line.runUntil(1_000_000);
    for (const c of line.cores) {
      assert.equal(c.lookup(ip('10.0.0.9')), 0, 'the /24 of router 0 beats the /16 of router 3');
      assert.equal(c.lookup(ip('10.0.7.1')), 3);
      assert.equal(c.lookup(ip('10.0.3.2')), 3);
      assert.equal(c.lookup(ip('fd00:1::42')), 0);
      assert.equal(c.lookup(ip('192.168.1.1')), undefined);
      assert.equal(c.lookup(ip('fd00:2::1')), undefined);
    }
    const far = line.cores[2]!.entries().find((e) => e.router === 0 && e.prefix === '10.0.0.0/24');
    assert.equal(far?.hops, 2);
  });

  test('each announcement is relayed once per router, and a copy heard again is a duplicate', () => {
    const line = new Line(5);
    line.cores[0]!.serve([pfx('10.0.0.0/24')], 0);
    line.runUntil(1_000_000);
    const bySender = new Map<number, number>();
    for (const s of line.sent) bySender.set(s.from, (bySender.get(s.from) ?? 0) + 1);
    const counts = [...bySender].sort((a, b) => a[0] - b[0]).map(([from, n]) => `${from}:${n}`);
    assert.deepEqual(counts, ['0:1', '1:1', '2:1', '3:1', '4:1'], 'router 0 announces once; every other router relays it once');
    assert.ok(line.cores[1]!.counters.duplicates >= 1, 'router 1 hears router 2 relay what it relayed itself');
  });

  test('announcements come every interval, and one not renewed expires after its lifetime', () => {
    const line = new Line(2);
    line.cores[0]!.serve([pfx('10.0.0.0/24')], 0);
    line.runUntil(21_000_000);
    assert.equal(line.cores[0]!.counters.announced, 5, 'at about 0, 5, 10, 15 and 20 s');
    assert.equal(line.cores[1]!.lookup(ip('10.0.0.1')), 0);
    line.cores[0]!.serve([], line.now);
    line.runUntil(line.now + 14_000_000);
    assert.equal(line.cores[1]!.lookup(ip('10.0.0.1')), 0, 'kept within its lifetime');
    line.runUntil(line.now + 2_000_000);
    line.cores[1]!.tick(line.now);
    assert.equal(line.cores[1]!.lookup(ip('10.0.0.1')), undefined, 'forgotten after it');
    assert.equal(line.cores[1]!.counters.expired, 1);
  });

  test('the TTL bounds how far an announcement goes', () => {
    const line = new Line(5, { ...PARAMS, netDiameter: 2 });
    line.cores[0]!.serve([pfx('10.0.0.0/24')], 0);
    line.runUntil(1_000_000);
    assert.equal(line.cores[2]!.lookup(ip('10.0.0.1')), 0);
    assert.equal(line.cores[3]!.lookup(ip('10.0.0.1')), undefined);
  });

  test('a router that restarts with a later sequence start is believed at once', () => {
    const line = new Line(2, PARAMS, 1000);
    line.cores[0]!.serve([pfx('10.0.0.0/24')], 0);
    line.runUntil(1_000_000);
    const reborn = new PrefixRoutes(0, Rng.fromSeed(8), PARAMS, 2000);
    reborn.serve([pfx('10.9.0.0/16')], line.now);
    const d = reborn.nextDeadline()!;
    for (const a of reborn.tick(d)) line.cores[1]!.handle(decodeOrThrow(a.msg), 0, d);
    assert.equal(line.cores[1]!.lookup(ip('10.9.1.1')), 0);
    assert.equal(line.cores[1]!.lookup(ip('10.0.0.1')), undefined, 'the newer announcement replaces what router 0 served before');
  });

  test('the same inputs give the same announcements (determinism)', () => {
    const run = (): string => {
      const line = new Line(4);
      line.cores[0]!.serve([pfx('10.0.0.0/24')], 0);
      line.cores[3]!.serve([pfx('10.0.3.0/24')], 0);
      line.runUntil(12_000_000);
      return JSON.stringify(line.sent.map((s) => [s.from, s.a.msg.orig, s.a.msg.seq, s.a.msg.hopCount]));
    };
    assert.equal(run(), run());
  });
});
