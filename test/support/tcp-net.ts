import { EventEngine } from '../../src/core/engine.js';
import { Rng } from '../../src/core/rng.js';
import type { Micros } from '../../src/core/time.js';
import { TcpStack, type TcpStackEvent } from '../../src/tcp/stack.js';
import { DEFAULT_TCP_CONFIG, TcpConnection, type TcpConfig, type TcpEvent, type TcpState } from '../../src/tcp/connection.js';
import { toWire } from '../../src/tcp/seq.js';
import { TCP_SYN, encodeTcp, ipv4, parseTcp, type TcpSegment } from '../../src/wire/tcp.js';

/** What the link does to one segment: deliver after a delay, or drop. */
export type LinkFate = { drop: true } | { drop: false; delayUs: Micros };

export interface LinkParams {
  /** One-way delay, µs. */
  delayUs: Micros;
  /** Bottleneck rate in bits/s (serialisation), 0 for none. */
  rateBps: number;
  /** Queue limit at the bottleneck, packets (0: unbounded). */
  queuePackets: number;
  /** Decides drops and extra delay per segment; `index` counts segments per direction. */
  fate?: (seg: TcpSegment, dir: 'ab' | 'ba', index: number, rng: Rng) => LinkFate | undefined;
}

/**
 * Two TCP stacks (A 10.0.0.1, B 10.0.0.2) joined by a link in virtual time:
 * delay, optional rate and queue, and a fate function for loss and
 * reordering. Every segment that crosses is recorded.
 */
export class TcpPair {
  readonly engine = new EventEngine(0);
  readonly rng: Rng;
  readonly ipA = ipv4(10, 0, 0, 1);
  readonly ipB = ipv4(10, 0, 0, 2);
  readonly a: TcpStack;
  readonly b: TcpStack;
  readonly trace: Array<{ at: Micros; dir: 'ab' | 'ba'; seg: TcpSegment; dropped: boolean }> = [];
  readonly events: Array<{ at: Micros; side: 'a' | 'b' } & TcpStackEvent> = [];
  private readonly count = { ab: 0, ba: 0 };
  private readonly busyUntil = { ab: 0, ba: 0 };
  private readonly queued = { ab: 0, ba: 0 };
  private alarm: { a?: number; b?: number } = {};
  onEvent: (side: 'a' | 'b', e: TcpStackEvent, now: Micros) => void = () => undefined;
  /** Called after every segment a stack takes in (before its output is moved), with the receiving side. */
  onInput: (side: 'a' | 'b', now: Micros) => void = () => undefined;
  /** Every state each connection passed through (one entry per change, seen after each input, timer and user call). */
  readonly states = new Map<TcpConnection, Array<{ at: Micros; state: TcpState }>>();

  constructor(
    readonly link: LinkParams,
    seed = 1,
    cfgA: Partial<TcpConfig> = {},
    cfgB: Partial<TcpConfig> = {},
  ) {
    ({ rng: this.rng, a: this.a, b: this.b } = hostPair(seed, cfgA, cfgB));
  }

  get now(): Micros {
    return this.engine.now();
  }

  /**
   * Moves packets and events out of both stacks (again while event handlers
   * produce more) and re-arms their timers.
   */
  pump(): void {
    this.record();
    for (let busy = true, guard = 0; busy; guard++) {
      if (guard > 10_000) throw new Error('pump: event handlers never settle');
      busy = false;
      for (const side of ['a', 'b'] as const) {
        const stack = side === 'a' ? this.a : this.b;
        const { packets, events } = stack.poll();
        if (packets.length > 0 || events.length > 0) busy = true;
        for (const e of events) {
          this.track(e.conn);
          this.events.push({ at: this.now, side, ...e });
          // Whatever the handler's calls (read, write, close) produce, the next poll takes.
          this.onEvent(side, e, this.now);
          this.record();
        }
        for (const p of packets) this.transmit(side === 'a' ? 'ab' : 'ba', p.bytes);
      }
    }
    this.arm('a');
    this.arm('b');
  }

  private track(conn: TcpConnection): void {
    if (!this.states.has(conn)) this.states.set(conn, []);
  }

  /** Notes the state of every connection known so far. */
  private record(): void {
    for (const c of [...this.a.connections(), ...this.b.connections()]) this.track(c);
    for (const [c, h] of this.states) {
      if (h.at(-1)?.state !== c.state) h.push({ at: this.now, state: c.state });
    }
  }

  /** The states `conn` passed through, in order. */
  history(conn: TcpConnection): TcpState[] {
    return (this.states.get(conn) ?? []).map((h) => h.state);
  }

  /** The initial sequence number of the side sending in `dir` (from its SYN in the trace). */
  isn(dir: 'ab' | 'ba'): number {
    const syn = this.trace.find((t) => t.dir === dir && t.seg.flags & TCP_SYN);
    if (!syn) throw new Error(`no SYN ${dir} in the trace`);
    return syn.seg.seq;
  }

  /** Trace entries carrying payload in `dir`, with their sequence offsets relative to the sender's ISN (first data byte is 1). */
  data(dir: 'ab' | 'ba'): Array<{ at: Micros; seq: number; len: number; dropped: boolean; seg: TcpSegment }> {
    const isn = this.isn(dir);
    return this.trace
      .filter((t) => t.dir === dir && t.seg.payload.length > 0)
      .map((t) => ({ at: t.at, seq: (t.seg.seq - isn) >>> 0, len: t.seg.payload.length, dropped: t.dropped, seg: t.seg }));
  }

  /** Hands `seg` to the stack of the other side of `dir` now, as if the link delivered it (encoded with a correct checksum). */
  inject(dir: 'ab' | 'ba', seg: TcpSegment): void {
    const from = dir === 'ab' ? this.ipA : this.ipB;
    const to = dir === 'ab' ? this.ipB : this.ipA;
    this.inputRaw(dir, encodeTcp(seg, { src: from, dst: to }));
  }

  /** Hands raw bytes to the stack of the other side of `dir` now. */
  inputRaw(dir: 'ab' | 'ba', bytes: Uint8Array): void {
    const stack = dir === 'ab' ? this.b : this.a;
    stack.input(dir === 'ab' ? this.ipA : this.ipB, bytes, this.now);
    this.onInput(dir === 'ab' ? 'b' : 'a', this.now);
    this.pump();
  }

  private arm(side: 'a' | 'b'): void {
    const stack = side === 'a' ? this.a : this.b;
    const due = stack.nextDeadline();
    const prev = this.alarm[side];
    if (prev !== undefined) this.engine.cancel(prev);
    this.alarm[side] = undefined;
    if (due === undefined) return;
    this.alarm[side] = this.engine.at(Math.max(due, this.now), (t) => {
      this.alarm[side] = undefined;
      stack.tick(t);
      this.pump();
    });
  }

  private transmit(dir: 'ab' | 'ba', bytes: Uint8Array): void {
    const parsed = parseTcp(bytes);
    if (!parsed.ok) throw new Error(`stack sent a bad segment: ${parsed.error.message}`);
    const seg = parsed.value;
    const index = this.count[dir]++;
    const fate = this.link.fate?.(seg, dir, index, this.rng) ?? { drop: false, delayUs: 0 };
    const full = this.link.queuePackets > 0 && this.queued[dir] >= this.link.queuePackets;
    const dropped = fate.drop || full;
    this.trace.push({ at: this.now, dir, seg, dropped });
    if (dropped) return;
    let departs = this.now;
    if (this.link.rateBps > 0) {
      const txUs = Math.ceil(((bytes.length + 40) * 8 * 1e6) / this.link.rateBps);
      departs = Math.max(this.now, this.busyUntil[dir]) + txUs;
      this.busyUntil[dir] = departs;
      this.queued[dir]++;
      this.engine.at(departs, () => {
        this.queued[dir]--;
      });
    }
    const arrive = departs + this.link.delayUs + fate.delayUs;
    const to = dir === 'ab' ? this.b : this.a;
    const from = dir === 'ab' ? this.ipA : this.ipB;
    this.engine.at(arrive, (t) => {
      to.input(from, bytes, t);
      this.onInput(dir === 'ab' ? 'b' : 'a', t);
      this.pump();
    });
  }

  /** Runs until `untilUs` (or until nothing is left to do). */
  run(untilUs: Micros): void {
    this.pump();
    this.engine.run(untilUs);
  }

  /** Runs `fn` at `at` and pumps afterwards. */
  at(at: Micros, fn: (now: Micros) => void): void {
    this.engine.at(at, (t) => {
      fn(t);
      this.pump();
    });
  }
}

/** Deterministic content: byte i of a stream is a function of i (so the receiver can check every byte). */
export function patternByte(i: number): number {
  return (i * 131 + (i >>> 8) * 7 + (i >>> 16)) & 0xff;
}

export function pattern(from: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let k = 0; k < n; k++) out[k] = patternByte(from + k);
  return out;
}

export interface BulkOptions {
  /** Bytes A sends to B, and B to A (both at once when both are set). */
  ab: number;
  ba?: number;
  port?: number;
  /** Per-connection configuration of A's connect and of B's listen. */
  cfgA?: Partial<TcpConfig>;
  cfgB?: Partial<TcpConfig>;
  /** Largest write per call. */
  chunk?: number;
  /** Whether each side's application reads (a function is asked at every 'readable'). */
  readA?: boolean;
  readB?: boolean;
  /** Virtual time to start the connection. */
  startUs?: Micros;
}

/** What one direction of a bulk transfer delivered. */
export interface StreamCheck {
  /** Bytes read by the application. */
  got: number;
  /** Bytes that were not patternByte(offset). */
  bad: number;
  /** Offset of the first bad byte, or -1. */
  firstBad: number;
  eof: boolean;
  eofAt: Micros | undefined;
}

export interface Bulk {
  client: TcpConnection | undefined;
  server: TcpConnection | undefined;
  ab: StreamCheck;
  ba: StreamCheck;
  /** Reads whatever the side's application has not read yet (after readA/readB false). */
  drain(side: 'a' | 'b', now: Micros): void;
}

/**
 * A transfer between A (client) and B (server) on `pair`, in the manner of an
 * application: each side writes its stream (patternByte content) as the send
 * buffer allows, closes once all is written, reads and checks every byte it
 * receives, and closes at end-of-stream if it had nothing to send. Call
 * pair.run afterwards.
 */
export function bulk(pair: TcpPair, o: BulkOptions): Bulk {
  const port = o.port ?? 80;
  const chunk = o.chunk ?? 65536;
  const want = { a: o.ab, b: o.ba ?? 0 };
  const written = { a: 0, b: 0 };
  const reading = { a: o.readA ?? true, b: o.readB ?? true };
  const fresh = (): StreamCheck => ({ got: 0, bad: 0, firstBad: -1, eof: false, eofAt: undefined });
  const res: Bulk = {
    client: undefined,
    server: undefined,
    ab: fresh(),
    ba: fresh(),
    drain: (side, now) => {
      const conn = side === 'a' ? res.client : res.server;
      if (!conn) return;
      readAll(side, conn, now);
    },
  };
  const readAll = (side: 'a' | 'b', conn: TcpConnection, now: Micros) => {
    const s = side === 'b' ? res.ab : res.ba;
    const d = conn.read(Infinity, now);
    for (let k = 0; k < d.length; k++) {
      if (d[k] !== patternByte(s.got + k)) {
        s.bad++;
        if (s.firstBad < 0) s.firstBad = s.got + k;
      }
    }
    s.got += d.length;
  };
  const pushOut = (side: 'a' | 'b', conn: TcpConnection, now: Micros) => {
    if (!['ESTABLISHED', 'CLOSE-WAIT'].includes(conn.state)) return;
    while (written[side] < want[side]) {
      const n = conn.write(pattern(written[side], Math.min(chunk, want[side] - written[side])), now);
      written[side] += n;
      if (n === 0) break;
    }
    if (written[side] >= want[side] && want[side] > 0) conn.close(now);
  };
  pair.b.listen(
    port,
    (conn) => {
      res.server = conn;
    },
    o.cfgB ?? {},
  );
  pair.onEvent = (side, e, now) => {
    if (e.event === 'connected' || e.event === 'writable') pushOut(side, e.conn, now);
    if (e.event === 'readable' && reading[side]) readAll(side, e.conn, now);
    if (e.event === 'eof') {
      const s = side === 'b' ? res.ab : res.ba;
      s.eof = true;
      s.eofAt = now;
      if (reading[side]) readAll(side, e.conn, now);
      if (want[side] === 0) e.conn.close(now);
    }
  };
  pair.at(o.startUs ?? 0, (now) => {
    res.client = pair.a.connect(pair.ipB, port, now, o.cfgA ?? {});
  });
  return res;
}

/**
 * Two TcpConnections joined by hand, without stacks or a link: segments wait
 * in a queue per direction until the test delivers, drops or rewrites them
 * (each crosses the wire codec on delivery). For state-by-state tests and
 * for what the stacks cannot do (simultaneous open).
 */
export class DirectPair {
  now: Micros = 0;
  readonly a: TcpConnection;
  readonly b: TcpConnection;
  readonly events: { a: TcpEvent[]; b: TcpEvent[] } = { a: [], b: [] };
  /** Every segment each side emitted, in order. */
  readonly sent: { a: TcpSegment[]; b: TcpSegment[] } = { a: [], b: [] };
  /** Segments emitted and not yet delivered, per sender. */
  readonly queue: { a: TcpSegment[]; b: TcpSegment[] } = { a: [], b: [] };
  private readonly ip = { a: ipv4(10, 0, 0, 1), b: ipv4(10, 0, 0, 2) };

  constructor(cfgA: Partial<TcpConfig> = {}, cfgB: Partial<TcpConfig> = {}, issA = 1_000_000, issB = 3_000_000_000) {
    this.a = new TcpConnection({ ...DEFAULT_TCP_CONFIG, ...cfgA }, 40000, 80, issA);
    this.b = new TcpConnection({ ...DEFAULT_TCP_CONFIG, ...cfgB }, 80, 40000, issB);
  }

  conn(side: 'a' | 'b'): TcpConnection {
    return side === 'a' ? this.a : this.b;
  }

  /** Moves what both connections produced into the queues and event lists. */
  collect(): void {
    for (const side of ['a', 'b'] as const) {
      for (const act of this.conn(side).poll()) {
        if (act.kind === 'event') this.events[side].push(act.event);
        else {
          // Held past the next input: a copy of the payload, which poll() hands out as a view into the send buffer.
          const seg = { ...act.seg, payload: act.seg.payload.slice() };
          this.sent[side].push(seg);
          this.queue[side].push(seg);
        }
      }
    }
  }

  /** Takes the queued segments of `from` without delivering them. */
  take(from: 'a' | 'b'): TcpSegment[] {
    this.collect();
    return this.queue[from].splice(0);
  }

  /** Delivers up to `n` queued segments of `from` to the other side. */
  deliver(from: 'a' | 'b', n = Infinity): TcpSegment[] {
    this.collect();
    const segs = this.queue[from].splice(0, Math.min(n, this.queue[from].length));
    for (const s of segs) this.input(from === 'a' ? 'b' : 'a', s);
    return segs;
  }

  /** Hands `seg` to `to` through the codec (as `from` = the other side sent it). */
  input(to: 'a' | 'b', seg: TcpSegment): void {
    const from = to === 'a' ? 'b' : 'a';
    const ip = { src: this.ip[from], dst: this.ip[to] };
    const parsed = parseTcp(encodeTcp(seg, ip), ip);
    if (!parsed.ok) throw new Error(`codec refused a segment: ${parsed.error.message}`);
    this.conn(to).handle(parsed.value, this.now);
    this.collect();
  }

  /** Delivers both ways until both queues stay empty. */
  exchange(limit = 10_000): void {
    for (let i = 0; i < limit; i++) {
      this.collect();
      if (this.queue.a.length === 0 && this.queue.b.length === 0) return;
      this.deliver('a');
      this.deliver('b');
    }
    throw new Error('exchange: no end');
  }

  /** Moves time to `t`, running every timer due on the way (segments they produce stay queued). */
  advance(t: Micros): void {
    for (;;) {
      const due = [this.a.nextDeadline(), this.b.nextDeadline()].filter((d): d is number => d !== undefined && d <= t);
      if (due.length === 0) break;
      this.now = Math.max(this.now, Math.min(...due));
      this.a.tick(this.now);
      this.b.tick(this.now);
      this.collect();
    }
    this.now = Math.max(this.now, t);
  }

  /** The wire sequence number of absolute offset `abs` of `side`'s sequence space. */
  wireSeq(side: 'a' | 'b', abs: number): number {
    return toWire(this.conn(side).iss, abs);
  }

  /** a connects, b listens, the handshake completes. */
  open(): void {
    this.b.listen();
    this.a.connect(this.now);
    this.exchange();
  }
}

/**
 * A link fate dropping the first transmission of the data segments of `dir`
 * that start at the given offsets (relative to the sender's ISN: the first
 * data byte is 1); everything else passes. `also` decides the rest.
 */
export function dropFirstAt(dir: 'ab' | 'ba', offsets: readonly number[], also?: LinkParams['fate']): NonNullable<LinkParams['fate']> {
  let isn: number | undefined;
  const pending = new Set(offsets);
  return (seg, d, index, rng) => {
    if (d === dir && seg.flags & TCP_SYN) isn = seg.seq;
    if (d === dir && isn !== undefined && seg.payload.length > 0) {
      const rel = (seg.seq - isn) >>> 0;
      if (pending.delete(rel)) return { drop: true };
    }
    return also?.(seg, d, index, rng);
  };
}

/** Offsets of the data segments number `ks` (0 is the first) for full segments of `mss` bytes. */
export function segmentOffsets(ks: readonly number[], mss = 1448): number[] {
  return ks.map((k) => 1 + k * mss);
}

/** Host A (10.0.0.1) and host B (10.0.0.2), each a TcpStack on its own stream of one seeded RNG. */
export function hostPair(seed: number, cfgA: Partial<TcpConfig>, cfgB: Partial<TcpConfig>): { rng: Rng; a: TcpStack; b: TcpStack } {
  const rng = Rng.fromSeed(seed);
  return { rng, a: new TcpStack(ipv4(10, 0, 0, 1), rng.fork('a'), cfgA), b: new TcpStack(ipv4(10, 0, 0, 2), rng.fork('b'), cfgB) };
}
