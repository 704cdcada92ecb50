import { EventEngine } from '../../src/core/engine.js';
import { type Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import type { TcpConfig } from '../../src/tcp/connection.js';
import { type TcpStack, type TcpStackEvent } from '../../src/tcp/stack.js';
import { VnfManager } from '../../src/vnf/manager.js';
import type { VnfPacket } from '../../src/vnf/types.js';
import { VNF_TYPES } from '../../src/vnf/index.js';
import { ipv4, parseTcp, type TcpSegment } from '../../src/wire/tcp.js';
import { hostPair } from './tcp-net.js';

/** What a link does to one packet: deliver after the link's delay (plus extra), or drop. */
export type Fate = { drop: true } | { drop: false; extraUs?: Micros } | undefined;

/**
 * A line of nodes in virtual time: host A (10.0.0.1), then `middle` routers
 * each with a VNF manager, then host B (10.0.0.2). Every packet crosses each
 * router in turn; a router's manager may take it (an accelerator answers in
 * the place of an end). Links have a one-way delay, an optional rate and a
 * fate function for loss.
 */
export class VnfChain {
  readonly engine = new EventEngine(0);
  readonly ipA = ipv4(10, 0, 0, 1);
  readonly ipB = ipv4(10, 0, 0, 2);
  readonly a: TcpStack;
  readonly b: TcpStack;
  readonly managers: VnfManager[];
  /** Every packet put on link i (between node i and node i + 1; node 0 is A), with its direction. */
  readonly wire: Array<{ at: Micros; link: number; dir: 'ab' | 'ba'; seg: TcpSegment; dropped: boolean }> = [];
  onEvent: (side: 'a' | 'b', e: TcpStackEvent, now: Micros) => void = () => undefined;
  fate: (link: number, dir: 'ab' | 'ba', seg: TcpSegment, rng: Rng) => Fate = () => undefined;
  private readonly rng: Rng;
  private readonly alarms = new Map<string, { id: number; at: Micros }>();
  private readonly busy = new Map<string, Micros>();

  constructor(
    readonly middle: number,
    readonly link: { delayUs: Micros; rateBps?: number },
    seed = 1,
    cfgA: Partial<TcpConfig> = {},
    cfgB: Partial<TcpConfig> = {},
  ) {
    ({ rng: this.rng, a: this.a, b: this.b } = hostPair(seed, cfgA, cfgB));
    this.managers = Array.from({ length: middle }, (_, i) => new VnfManager(VNF_TYPES, seed * 100 + i));
  }

  get now(): Micros {
    return this.engine.now();
  }

  /** Node index: 0 is A, middle + 1 is B. */
  private get last(): number {
    return this.middle + 1;
  }

  pump(): void {
    for (let round = 0; round < 100; round++) {
      let moved = false;
      for (const [side, stack, node] of [
        ['a', this.a, 0],
        ['b', this.b, this.last],
      ] as const) {
        const { packets, events } = stack.poll();
        for (const e of events) this.onEvent(side, e, this.now);
        for (const p of packets) this.put(node, side === 'a' ? 'ab' : 'ba', { proto: 'tcp', src: stack.localIp, dst: p.dst, bytes: p.bytes });
        moved ||= packets.length > 0 || events.length > 0;
      }
      this.managers.forEach((m, i) => {
        const { packets } = m.poll(this.now);
        for (const p of packets) this.put(i + 1, sameIp(p.dst, this.ipB) ? 'ab' : 'ba', p);
        moved ||= packets.length > 0;
      });
      if (!moved) break;
    }
    this.arm();
  }

  /** Node `from` puts a packet on the link towards its next node in direction `dir`. */
  private put(from: number, dir: 'ab' | 'ba', pkt: VnfPacket): void {
    const link = dir === 'ab' ? from : from - 1;
    const to = dir === 'ab' ? from + 1 : from - 1;
    const seg = parseTcp(pkt.bytes);
    if (!seg.ok) throw new Error(`a node sent a bad segment: ${seg.error.message}`);
    const fate = this.fate(link, dir, seg.value, this.rng);
    const dropped = fate?.drop === true;
    this.wire.push({ at: this.now, link, dir, seg: seg.value, dropped });
    if (dropped) return;
    let departs = this.now;
    const rate = this.link.rateBps ?? 0;
    if (rate > 0) {
      const k = `${link}${dir}`;
      departs = Math.max(this.now, this.busy.get(k) ?? 0) + Math.ceil(((pkt.bytes.length + 40) * 8 * 1e6) / rate);
      this.busy.set(k, departs);
    }
    const extra = fate && !fate.drop ? (fate.extraUs ?? 0) : 0;
    this.engine.at(departs + this.link.delayUs + extra, (t) => {
      this.arrive(to, dir, pkt, t);
      this.pump();
    });
  }

  private arrive(node: number, dir: 'ab' | 'ba', pkt: VnfPacket, now: Micros): void {
    if (node === 0) return this.a.input(pkt.src, pkt.bytes, now);
    if (node === this.last) return this.b.input(pkt.src, pkt.bytes, now);
    const m = this.managers[node - 1]!;
    if (m.intercept(pkt, now)) return;
    this.put(node, dir, pkt);
  }

  private arm(): void {
    const due: Array<[string, Micros | undefined, (t: Micros) => void]> = [
      ['a', this.a.nextDeadline(), (t) => this.a.tick(t)],
      ['b', this.b.nextDeadline(), (t) => this.b.tick(t)],
      ...this.managers.map((m, i): [string, Micros | undefined, (t: Micros) => void] => [`m${i}`, m.nextDeadline(), (t) => m.tick(t)]),
    ];
    for (const [name, at, run] of due) {
      const prev = this.alarms.get(name);
      const when = at === undefined ? undefined : Math.max(at, this.now);
      if (prev && prev.at === when) continue;
      if (prev) this.engine.cancel(prev.id);
      this.alarms.delete(name);
      if (when === undefined) continue;
      const id = this.engine.at(when, (t) => {
        this.alarms.delete(name);
        run(t);
        this.pump();
      });
      this.alarms.set(name, { id, at: when });
    }
  }

  at(t: Micros, fn: (now: Micros) => void): void {
    this.engine.at(t, (now) => {
      fn(now);
      this.pump();
    });
  }

  run(untilUs: Micros): void {
    this.pump();
    this.engine.run(untilUs);
  }
}

function sameIp(x: Uint8Array, y: Uint8Array): boolean {
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
