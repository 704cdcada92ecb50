import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { TupleClassifier } from '../../src/openflow/classifier.js';
import { FlowTable } from '../../src/openflow/flow-table.js';
import type { OfMatch, PacketFields } from '../../src/wire/openflow/match.js';
import { compileMatch, covers, matchesPacket, overlaps, type CompiledMatch } from '../../src/openflow/matching.js';
import { mod, okValue } from './support.js';

// A brute-force reference, written without the bit tricks of the table: bit by bit with arithmetic.

const bit = (x: number, b: number): number => Math.floor(x / 2 ** b) % 2;

function refNum(pv: number | undefined, value: number, mask: number | undefined, bits: number): boolean {
  if (pv === undefined) return false;
  for (let b = 0; b < bits; b++) {
    if (mask !== undefined && bit(mask, b) === 0) continue;
    if (bit(pv, b) !== bit(value, b)) return false;
  }
  return true;
}

function refBytes(pv: Uint8Array | undefined, value: Uint8Array, mask: Uint8Array | undefined): boolean {
  if (pv === undefined) return false;
  for (let i = 0; i < value.length; i++) {
    if (!refNum(pv[i], value[i]!, mask?.[i], 8)) return false;
  }
  return true;
}

/** Does the packet match? Field by field, every field the match names. */
function refMatches(m: OfMatch, p: PacketFields): boolean {
  if (m.inPort !== undefined && p.inPort !== m.inPort) return false;
  if (m.ethType !== undefined && p.ethType !== m.ethType) return false;
  if (m.ipProto !== undefined && p.ipProto !== m.ipProto) return false;
  if (m.tcpDst !== undefined && p.tcpDst !== m.tcpDst) return false;
  if (m.udpDst !== undefined && p.udpDst !== m.udpDst) return false;
  if (m.vlanVid !== undefined && !refNum(p.vlanVid ?? 0, m.vlanVid.value, m.vlanVid.mask, 13)) return false;
  if (m.ipv4Src !== undefined && !refNum(p.ipv4Src, m.ipv4Src.value, m.ipv4Src.mask, 32)) return false;
  if (m.ipv6Flabel !== undefined && !refNum(p.ipv6Flabel, m.ipv6Flabel.value, m.ipv6Flabel.mask, 20)) return false;
  if (m.ethDst !== undefined && !refBytes(p.ethDst, m.ethDst.value, m.ethDst.mask)) return false;
  return true;
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(0, xs.length - 1)]!;
const PREFIXES = [8, 16, 24] as const;
const prefixMask = (n: number): number => (n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0);
const NETS = [0x0a000000, 0x0a010000, 0x0a010100, 0x0a010102, 0xc0a80000];
const MACS = [Uint8Array.of(0, 1, 2, 3, 4, 5), Uint8Array.of(0, 1, 2, 3, 4, 6), Uint8Array.of(2, 1, 2, 3, 4, 5)];

/** A random valid match over small domains (so entries overlap often), prerequisites respected, masks never all ones or zeros. */
function randomMatch(rng: Rng): OfMatch {
  const m: OfMatch = {};
  if (rng.next() < 0.3) m.inPort = rng.int(1, 3);
  if (rng.next() < 0.3) m.vlanVid = rng.next() < 0.5 ? { value: pick(rng, [0, 0x1001, 0x1002]) } : { value: 0x1000, mask: 0x1000 };
  if (rng.next() < 0.25)
    m.ethDst =
      rng.next() < 0.5 ? { value: pick(rng, MACS).slice() } : { value: Uint8Array.of(0, 1, 2, 0, 0, 0), mask: Uint8Array.of(0xff, 0xff, 0xff, 0, 0, 0) };
  const l3 = rng.next();
  if (l3 < 0.45) {
    m.ethType = 0x0800;
    if (rng.next() < 0.6) {
      const n = pick(rng, PREFIXES);
      const mask = prefixMask(n);
      const value = (pick(rng, NETS) & mask) >>> 0;
      m.ipv4Src = rng.next() < 0.2 ? { value: pick(rng, NETS) } : { value, mask };
    }
  } else if (l3 < 0.8) {
    m.ethType = 0x86dd;
    if (rng.next() < 0.6)
      m.ipv6Flabel = rng.next() < 0.5 ? { value: pick(rng, [0x00100, 0x00200, 0]), mask: 0xfff00 } : { value: pick(rng, [0x00100, 0x00101, 0x00200]) };
  }
  if (m.ethType !== undefined && rng.next() < 0.5) {
    m.ipProto = pick(rng, [6, 17]);
    if (rng.next() < 0.6) {
      if (m.ipProto === 6) m.tcpDst = pick(rng, [80, 443]);
      else m.udpDst = pick(rng, [53, 5683]);
    }
  }
  if (Object.keys(m).length === 0) m.inPort = rng.int(1, 3); // no catch-all entries: lookups must also miss
  return m;
}

function randomPacket(rng: Rng): PacketFields {
  const p: PacketFields = { inPort: rng.int(1, 3), ethDst: pick(rng, MACS) };
  if (rng.next() < 0.5) p.vlanVid = pick(rng, [0x1001, 0x1002, 0x1003]);
  const v6 = rng.next() < 0.5;
  p.ethType = v6 ? 0x86dd : 0x0800;
  if (v6) p.ipv6Flabel = pick(rng, [0x00100, 0x00101, 0x00200, 0x00000, 0x00300]);
  else p.ipv4Src = (pick(rng, NETS) + rng.int(0, 3)) >>> 0;
  p.ipProto = pick(rng, [6, 17]);
  if (p.ipProto === 6) p.tcpDst = pick(rng, [80, 443, 22]);
  else p.udpDst = pick(rng, [53, 5683, 123]);
  return p;
}

/** JSON of a match with byte strings as arrays: equal texts for identical generated matches (the generator writes fields in one order). */
const matchKey = (priority: number, m: OfMatch): string =>
  `${priority}:${JSON.stringify(m, (_k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v))}`;

interface RefEntry {
  key: string;
  priority: number;
  match: OfMatch;
  order: number;
  cookie: bigint;
}

test('seeded random: lookup agrees with a brute-force reference through adds, replacements and strict deletes', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const rng = Rng.fromSeed(seed).fork('flow-table');
    const table = new FlowTable({ capacity: 100_000 });
    const ref: RefEntry[] = [];
    let order = 0;
    let cookie = 0n;
    let checked = 0;
    let hits = 0;
    for (let step = 0; step < 1500; step++) {
      const r = rng.next();
      if (r < 0.5 || ref.length === 0) {
        const priority = pick(rng, [0, 1, 2, 3, 10]);
        const match = randomMatch(rng);
        cookie++;
        okValue(table.apply(mod({ priority, match, cookie }), 0), `seed ${seed} step ${step}: add`);
        const key = matchKey(priority, match);
        const old = ref.find((e) => e.key === key);
        if (old)
          old.cookie = cookie; // replaced in place: keeps its order
        else ref.push({ key, priority, match, order: order++, cookie });
      } else if (r < 0.6) {
        const victim = pick(rng, ref);
        const d = okValue(
          table.apply(mod({ command: 'delete-strict', priority: victim.priority, match: victim.match }), 0),
          `seed ${seed} step ${step}: delete`,
        );
        assert.ok(d.command === 'delete-strict' && d.deleted === 1, `seed ${seed} step ${step}: strict delete finds its entry`);
        ref.splice(ref.indexOf(victim), 1);
      } else {
        const pkt = randomPacket(rng);
        let best: RefEntry | undefined;
        for (const e of ref) {
          if (!refMatches(e.match, pkt)) continue;
          if (best === undefined || e.priority > best.priority || (e.priority === best.priority && e.order < best.order)) best = e;
        }
        const got = table.lookup(pkt, 0, 1);
        assert.equal(
          got?.cookie,
          best?.cookie,
          `seed ${seed} step ${step}: lookup of ${JSON.stringify(pkt, (_k, v: unknown) => (v instanceof Uint8Array ? Array.from(v) : v))}`,
        );
        checked++;
        if (best) hits++;
      }
      assert.equal(table.size, ref.length, `seed ${seed} step ${step}: same number of entries`);
    }
    assert.ok(checked > 400 && hits > checked / 4 && hits < checked, `seed ${seed}: a useful mix of hits (${hits}) and misses among ${checked} lookups`);
  }
});

test('seeded random: loose coverage and overlap agree with brute force over every packet of a small field space', () => {
  // inPort (exact) and VLAN_VID (13 bits, arbitrary masks): 3 x 8192 packets, every bit of both fields varied.
  const packets: PacketFields[] = [];
  for (const inPort of [1, 2, 3]) for (let v = 0; v < 0x2000; v++) packets.push(v === 0 ? { inPort } : { inPort, vlanVid: v });
  const rng = Rng.fromSeed(7).fork('coverage');
  const randomVlanMatch = (): OfMatch => {
    const m: OfMatch = {};
    if (rng.next() < 0.5) m.inPort = rng.int(1, 2);
    if (rng.next() < 0.85) {
      let mask = 0;
      for (let b = 0; b < 13; b++) if (rng.next() < 0.25) mask |= 1 << b;
      if (rng.next() < 0.2) mask = 0x1fff;
      const value = rng.int(0, 0x1fff) & mask;
      m.vlanVid = { value, mask };
    }
    return m;
  };
  const compile = (m: OfMatch): CompiledMatch => okValue(compileMatch(m), 'compile');
  let covered = 0;
  let overlapping = 0;
  for (let i = 0; i < 150; i++) {
    const a = compile(randomVlanMatch());
    // Half the time derive b from a by adding bits, so coverage happens.
    let b: CompiledMatch;
    if (rng.next() < 0.5) {
      const am = a.match;
      const extra = rng.int(0, 0x1fff);
      const mask = ((am.vlanVid?.mask ?? (am.vlanVid ? 0x1fff : 0)) | extra) & 0x1fff;
      const value = ((am.vlanVid?.value ?? 0) | (rng.int(0, 0x1fff) & extra & ~(am.vlanVid?.mask ?? (am.vlanVid ? 0x1fff : 0)))) & mask;
      b = compile({ ...(am.inPort !== undefined || rng.next() < 0.5 ? { inPort: am.inPort ?? 1 } : {}), vlanVid: { value, mask } });
    } else b = compile(randomVlanMatch());
    let aOnly = false;
    let both = false;
    for (const p of packets) {
      const ma = refMatches(a.match, p);
      const mb = refMatches(b.match, p);
      if (mb && !ma) aOnly = true;
      if (ma && mb) both = true;
    }
    const what = `a=${JSON.stringify(a.match)} b=${JSON.stringify(b.match)}`;
    assert.equal(covers(a, b), !aOnly, `covers (every packet of b matches a): ${what}`);
    assert.equal(overlaps(a, b), both, `overlaps (some packet matches both): ${what}`);
    assert.equal(overlaps(b, a), both, `overlap is symmetric: ${what}`);
    for (const p of packets.slice(0, 2000)) assert.equal(matchesPacket(b, p), refMatches(b.match, p), `matchesPacket: ${what}`);
    if (!aOnly) covered++;
    if (both) overlapping++;
  }
  assert.ok(covered > 20 && covered < 140, `a mix of covering and not covering pairs (${covered})`);
  assert.ok(overlapping > 20 && overlapping < 150, `a mix of overlapping and disjoint pairs (${overlapping})`);
});

test('seeded random: timeouts, idle refresh and nextDeadline agree with a reference that recomputes every expiry', () => {
  for (const seed of [11, 12, 13]) {
    const rng = Rng.fromSeed(seed).fork('timers');
    const table = new FlowTable();
    // One entry per in_port, so each lookup hits a known entry (or the entry's replacement).
    interface RefTimed {
      port: number;
      idle: number;
      hard: number;
      installed: number;
      lastUsed: number;
      packets: number;
      notify: boolean;
      cookie: bigint;
    }
    const live = new Map<number, RefTimed>();
    const expiry = (e: RefTimed): number => Math.min(e.hard > 0 ? e.installed + e.hard * 1e6 : Infinity, e.idle > 0 ? e.lastUsed + e.idle * 1e6 : Infinity);
    let now = 0;
    let cookie = 0n;
    let reported = 0;
    for (let step = 0; step < 3000; step++) {
      now += rng.int(0, 400_000);
      // Reference: everything due by now goes, in order of expiry (ties: earlier install first).
      const due = [...live.values()].filter((e) => expiry(e) <= now).sort((a, b) => expiry(a) - expiry(b) || Number(a.cookie - b.cookie));
      for (const e of due) live.delete(e.port);
      const want = due
        .filter((e) => e.notify)
        .map((e) => {
          const at = expiry(e);
          return [
            e.cookie,
            e.hard > 0 && e.installed + e.hard * 1e6 <= at ? 'hard-timeout' : 'idle-timeout',
            Math.floor((at - e.installed) / 1e6),
            ((at - e.installed) % 1e6) * 1000,
            e.packets,
          ];
        });
      const r = rng.next();
      if (r < 0.3) {
        // tick
        const got = table.tick(now).map((x) => [x.cookie, x.reason, x.durationSec, x.durationNsec, x.packetCount]);
        assert.deepEqual(got, want, `seed ${seed} step ${step}: FLOW_REMOVED records at ${now}`);
        reported += got.length;
      } else {
        // lookups and adds expire as they go; their records wait for the next tick, which must report them
        if (r < 0.75) {
          const port = rng.int(1, 12);
          const hit = table.lookup({ inPort: port }, now, 10);
          const e = live.get(port);
          assert.equal(hit?.cookie, e?.cookie, `seed ${seed} step ${step}: lookup port ${port} at ${now}`);
          if (e) {
            e.lastUsed = now;
            e.packets++;
          }
        } else {
          const port = rng.int(1, 12);
          const idle = rng.int(0, 3);
          const hard = rng.int(0, 1) === 0 ? 0 : rng.int(1, 6);
          const notify = rng.next() < 0.7;
          cookie++;
          okValue(
            table.apply(mod({ match: { inPort: port }, cookie, idleTimeout: idle, hardTimeout: hard, flags: notify ? 1 : 0 }), now),
            `seed ${seed} step ${step}: add`,
          );
          const old = live.get(port);
          live.set(port, { port, idle, hard, installed: now, lastUsed: now, packets: old?.packets ?? 0, notify, cookie });
        }
        const got = table.tick(now).map((x) => [x.cookie, x.reason, x.durationSec, x.durationNsec, x.packetCount]);
        assert.deepEqual(got, want, `seed ${seed} step ${step}: records of entries expired by a lookup or add at ${now}`);
        reported += got.length;
      }
      const next = Math.min(...[...live.values()].map(expiry));
      assert.equal(table.nextDeadline(), Number.isFinite(next) ? next : undefined, `seed ${seed} step ${step}: nextDeadline`);
      assert.deepEqual(
        table
          .list()
          .map((e) => e.cookie)
          .sort(),
        [...live.values()].map((e) => e.cookie).sort(),
        `seed ${seed} step ${step}: live entries`,
      );
    }
    assert.ok(reported > 100, `seed ${seed}: many FLOW_REMOVED records checked (${reported})`);
  }
});

test('seeded random: the classifier agrees with a scan in lookup order through loose deletes, modifies and timeouts too', () => {
  for (const seed of [11, 12, 13]) {
    const rng = Rng.fromSeed(seed).fork('classifier');
    const table = new FlowTable({ capacity: 100_000 });
    let cookie = 0n;
    let now = 0;
    let hits = 0;
    for (let step = 0; step < 1200; step++) {
      now += rng.int(0, 400_000);
      const r = rng.next();
      if (r < 0.45) {
        cookie++;
        const timeouts = rng.next() < 0.3 ? { idleTimeout: rng.int(1, 3), hardTimeout: rng.int(0, 5) } : {};
        okValue(table.apply(mod({ priority: pick(rng, [0, 1, 2, 3, 10, 500, 60000]), match: randomMatch(rng), cookie, ...timeouts }), now), 'add');
      } else if (r < 0.52) {
        okValue(table.apply(mod({ command: 'delete', match: randomMatch(rng) }), now), 'loose delete');
      } else if (r < 0.57) {
        okValue(table.apply(mod({ command: 'modify', match: randomMatch(rng) }), now), 'loose modify');
      } else {
        const pkt = randomPacket(rng);
        // The reference (after the lookup, which first takes out what timed out): the first entry in the
        // table's own lookup order that the packet matches.
        const got = table.lookup(pkt, now, 1);
        const want = table.list().find((e) => matchesPacket(okValue(compileMatch(e.match), 'compile'), pkt));
        assert.equal(got, want, `seed ${seed} step ${step}`);
        if (got) hits++;
      }
    }
    assert.ok(hits > 50, `seed ${seed}: ${hits} hits`);
  }
});

test('the classifier: one hash probe per match shape, whatever the number of entries', () => {
  const c = new TupleClassifier<{ priority: number; seq: number; cm: CompiledMatch }>();
  const at = (priority: number, seq: number, m: OfMatch) => ({ priority, seq, cm: okValue(compileMatch(m), 'compile') });
  const many = Array.from({ length: 5000 }, (_, i) => at(60000 - i, i, { ethType: 0x0800, ipv4Dst: { value: (0x0a000000 + i) >>> 0 } }));
  for (const e of many) c.insert(e);
  const wide = at(10, 9999, { ethType: 0x0800, ipv4Dst: { value: 0x0a000000, mask: 0xff000000 } });
  c.insert(wide);
  assert.equal(c.size, 5001);
  assert.equal(c.shapes, 2);
  assert.equal(c.lookup({ ethType: 0x0800, ipv4Dst: 0x0a000010 }), many[16], 'the exact entry, at a higher priority than the prefix');
  assert.equal(c.lookup({ ethType: 0x0800, ipv4Dst: 0x0affffff }), wide, 'the prefix when no exact entry matches');
  assert.equal(c.lookup({ ethType: 0x86dd }), undefined);
  assert.ok(c.remove(many[16]!));
  assert.equal(c.remove(many[16]!), false, 'not in any more');
  assert.equal(c.lookup({ ethType: 0x0800, ipv4Dst: 0x0a000010 }), wide);
  for (const e of many) c.remove(e);
  assert.equal(c.shapes, 1, 'an emptied shape goes');
});
