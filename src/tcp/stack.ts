import { RangeArgumentError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';
import { earlierOf, type Micros } from '../core/time.js';
import { sameBytes } from '../wire/bytes.js';
import { TCP_RST, TCP_SYN, TCP_ACK, encodeTcp, parseTcp, type IpPair, type TcpSegment } from '../wire/tcp.js';
import { checkTcpConfig, DEFAULT_TCP_CONFIG, resetFor, TcpConnection, TcpError, type TcpConfig, type TcpEvent } from './connection.js';

/** A segment leaving the stack: its bytes and the address they go to. */
export interface TcpPacket {
  dst: Uint8Array;
  /** The packet's own: the stack keeps no reference to them. */
  bytes: Uint8Array;
  /** Bytes in front of `bytes` that are its own too (the stack's `room`), for the layer below's header (`withFront`). */
  room: number;
}

/** An event of one connection, for its application. */
export interface TcpStackEvent {
  conn: TcpConnection;
  event: TcpEvent;
}

export interface TcpStackCounters {
  received: number;
  /** Too short, bad header length or a malformed option. */
  malformed: number;
  badChecksum: number;
  /** Segments for no connection and no listener, answered with RST. */
  noConnection: number;
  resetsSent: number;
  accepted: number;
}

interface Entry {
  conn: TcpConnection;
  remote: Uint8Array;
  /** This host's address and the remote's, for encoding the connection's segments (made once). */
  ip: IpPair;
}

/** The most header room a stack keeps in front of a segment. */
const MAX_ROOM = 256;

/** What `poll` answers when there is nothing: made once, and frozen. */
const NOTHING_POLLED = Object.freeze({ packets: Object.freeze([] as TcpPacket[]), events: Object.freeze([] as TcpStackEvent[]) });

/**
 * One host's TCP: connections keyed by (remote address, remote port, local
 * port), listeners by port, the wire codec at the edge. Bytes in through
 * `input`, bytes out through `poll`; like the connections it drives it reads
 * no clock. Segments that fail parsing or the checksum are counted and
 * dropped; segments for nothing get the RST of RFC 9293 3.10.7.1.
 */
export class TcpStack {
  /** Live connections, in the order they were made (the order timers and polls visit them). */
  private readonly conns = new Set<Entry>();
  /** The same entries by their two ports (`portsKey`), for the lookup every arriving segment makes. */
  private readonly byPorts = new Map<number, Entry[]>();
  private readonly listeners = new Map<number, { cfg: Readonly<TcpConfig>; accept: (conn: TcpConnection) => void }>();
  /** Packets since the last poll; undefined when none (made with the first: see `TcpConnection`'s `out`). */
  private outbox: TcpPacket[] | undefined;
  /** Events since the last poll; undefined when none. */
  private events: TcpStackEvent[] | undefined;
  private nextEphemeral = 49152;
  readonly counters: TcpStackCounters = { received: 0, malformed: 0, badChecksum: 0, noConnection: 0, resetsSent: 0, accepted: 0 };

  readonly defaults: Readonly<TcpConfig>;

  /**
   * `defaults` apply to every connection of this host, over DEFAULT_TCP_CONFIG;
   * each connect or listen may change more. `room`: bytes each packet keeps
   * free in front of its segment, for the header the layer below puts there
   * (the mesh's DATA header: then it is not copied again). `checksums`
   * false: the stack neither fills in nor verifies TCP checksums (the field
   * stays 0), leaving them to its link as a host does whose network card
   * offloads them; only for a link that delivers the bytes as they were sent
   * or not at all, between stacks that all do so (the simulator's hosts).
   */
  constructor(
    readonly localIp: Uint8Array,
    private readonly rng: Rng,
    defaults: Partial<TcpConfig> = {},
    private readonly room = 0,
    readonly checksums = true,
  ) {
    if (!Number.isSafeInteger(room) || room < 0 || room > MAX_ROOM)
      throw new RangeArgumentError('room', room, `an integer number of bytes in [0, ${MAX_ROOM}]`);
    this.defaults = { ...DEFAULT_TCP_CONFIG, ...defaults };
    checkTcpConfig(this.defaults);
  }

  /** Accepts connections on `port`; `accept` hears of each new one when its SYN arrives. */
  listen(port: number, accept: (conn: TcpConnection) => void, cfg: Partial<TcpConfig> = {}): void {
    if (this.listeners.has(port)) throw new TcpError('TCP_PORT_IN_USE', `tcp: port ${port} already listening`);
    const merged = { ...this.defaults, ...cfg };
    // Refused now, not at the first SYN.
    checkTcpConfig(merged);
    this.listeners.set(port, { cfg: merged, accept });
  }

  /** Opens a connection to `remote`:`port` (active open). */
  connect(remote: Uint8Array, port: number, now: Micros, cfg: Partial<TcpConfig> = {}, localPort?: number): TcpConnection {
    const lp = localPort ?? this.ephemeralPort(remote, port);
    if (this.find(remote, port, lp)) throw new TcpError('TCP_PORT_IN_USE', `tcp: a connection ${lp} -> ${port} exists`);
    const conn = new TcpConnection({ ...this.defaults, ...cfg }, lp, port, this.iss());
    const e = this.add(conn, remote);
    conn.connect(now);
    this.collect(e);
    return conn;
  }

  private ephemeralPort(remote: Uint8Array, port: number): number {
    for (let i = 0; i < 16384; i++) {
      const p = this.nextEphemeral;
      this.nextEphemeral = p === 65535 ? 49152 : p + 1;
      if (!this.find(remote, port, p)) return p;
    }
    throw new TcpError('TCP_NO_PORT', 'tcp: no free ephemeral port');
  }

  /** RFC 6528 asks for unpredictable initial sequence numbers: they come from the injected RNG. */
  private iss(): number {
    return this.rng.int(0, 0xffffffff) >>> 0;
  }

  /** A segment from `src` arrived. */
  input(src: Uint8Array, bytes: Uint8Array, now: Micros): void {
    this.counters.received++;
    const r = parseTcp(bytes, this.checksums ? { src, dst: this.localIp } : undefined);
    if (!r.ok) {
      if (r.error.code === 'WIRE_BAD_CHECKSUM') this.counters.badChecksum++;
      else this.counters.malformed++;
      return;
    }
    const seg = r.value;
    const entry = this.find(src, seg.srcPort, seg.dstPort);
    if (entry) {
      entry.conn.handle(seg, now);
      this.collect(entry);
      return;
    }
    const listener = this.listeners.get(seg.dstPort);
    if (listener && (seg.flags & (TCP_SYN | TCP_RST | TCP_ACK)) === TCP_SYN) {
      const conn = new TcpConnection(listener.cfg, seg.dstPort, seg.srcPort, this.iss());
      conn.listen();
      conn.handle(seg, now);
      const e = this.add(conn, src);
      this.counters.accepted++;
      listener.accept(conn);
      this.collect(e);
      return;
    }
    this.counters.noConnection++;
    if (!(seg.flags & TCP_RST)) this.send({ src: this.localIp, dst: src }, resetFor(seg));
  }

  /** Runs the timers that are due. */
  tick(now: Micros): void {
    // A connection that closes leaves the set while it is walked, which a Set allows (nothing joins it here).
    for (const e of this.conns) {
      const d = e.conn.nextDeadline();
      if (d !== undefined && d <= now) {
        e.conn.tick(now);
        this.collect(e);
      }
    }
  }

  nextDeadline(): Micros | undefined {
    let t: Micros | undefined;
    for (const e of this.conns) t = earlierOf(t, e.conn.nextDeadline());
    return t;
  }

  /**
   * Packets to send and connection events since the last poll, including what
   * user calls (write, read, close, abort) made since.
   */
  poll(): { readonly packets: readonly TcpPacket[]; readonly events: readonly TcpStackEvent[] } {
    for (const e of this.conns) this.collect(e);
    // A host is polled until nothing is left: the last, empty answer is one object made once.
    const packets = this.outbox;
    const events = this.events;
    if (packets === undefined && events === undefined) return NOTHING_POLLED;
    // Handed over whole, and new lists started with their first entries: no copies.
    this.outbox = undefined;
    this.events = undefined;
    return { packets: packets ?? NOTHING_POLLED.packets, events: events ?? NOTHING_POLLED.events };
  }

  /** Live connections. */
  connections(): TcpConnection[] {
    return [...this.conns].map((e) => e.conn);
  }

  private collect(e: Entry): void {
    const conn = e.conn;
    const actions = conn.poll();
    for (let i = 0; i < actions.length; i++) {
      const a = actions[i]!;
      if (a.kind === 'segment') this.send(e.ip, a.seg);
      else {
        const ev: TcpStackEvent = { conn, event: a.event };
        // Stored by index, not pushed: a push is inlined only while its call site never deoptimized (see the event engine).
        const events = this.events;
        if (events === undefined) this.events = [ev];
        else events[events.length] = ev;
      }
    }
    if (conn.state === 'CLOSED') this.remove(conn);
  }

  private find(remote: Uint8Array, remotePort: number, localPort: number): Entry | undefined {
    const list = this.byPorts.get(portsKey(remotePort, localPort));
    if (list) for (let i = 0; i < list.length; i++) if (sameBytes(list[i]!.remote, remote)) return list[i];
    return undefined;
  }

  private add(conn: TcpConnection, remote: Uint8Array): Entry {
    const e: Entry = { conn, remote, ip: { src: this.localIp, dst: remote } };
    this.conns.add(e);
    const k = portsKey(e.conn.remotePort, e.conn.localPort);
    const list = this.byPorts.get(k);
    if (list) list.push(e);
    else this.byPorts.set(k, [e]);
    return e;
  }

  private remove(conn: TcpConnection): void {
    const k = portsKey(conn.remotePort, conn.localPort);
    const list = this.byPorts.get(k);
    const e = list?.find((x) => x.conn === conn);
    if (!list || !e) return;
    this.conns.delete(e);
    if (list.length > 1)
      this.byPorts.set(
        k,
        list.filter((x) => x !== e),
      );
    else this.byPorts.delete(k);
  }

  private send(ip: IpPair, seg: TcpSegment): void {
    if (seg.flags & TCP_RST) this.counters.resetsSent++;
    const p: TcpPacket = { dst: ip.dst, bytes: encodeTcp(seg, ip, this.room, this.checksums), room: this.room };
    const box = this.outbox;
    if (box === undefined) this.outbox = [p];
    else box[box.length] = p;
  }
}

const portsKey = (remotePort: number, localPort: number): number => remotePort * 0x10000 + localPort;
