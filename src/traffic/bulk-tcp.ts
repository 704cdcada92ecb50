import { Alarm } from '../core/alarm.js';
import type { EventEngine } from '../core/engine.js';
import type { Rng } from '../core/rng.js';
import { US_PER_MS, type Micros } from '../core/time.js';
import type { TcpConfig, TcpConnection } from '../tcp/connection.js';
import { TcpStack, type TcpStackEvent } from '../tcp/stack.js';
import { DATA_LABELLED_HEADER_BYTES } from '../wire/codec.js';
import type { DataHeader, NodeAddr } from '../wire/mesh.js';
import { meshAddr, meshIp } from '../wire/addresses.js';
import type { TcpFlowSpec } from '../config/scenario.js';

/**
 * Content of the bulk stream: byte i is STREAM[i mod P], P a prime (so the
 * pattern never lines up with segment boundaries) and the table filled from
 * a fixed generator. The sink checks every byte it reads against it: a
 * segment delivered twice, out of place or corrupted shows.
 */
const STREAM_PERIOD = 65521;
const STREAM = ((): Uint8Array => {
  const b = new Uint8Array(2 * STREAM_PERIOD);
  let x = 0x9e3779b9;
  for (let i = 0; i < STREAM_PERIOD; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  b.copyWithin(STREAM_PERIOD, 0, STREAM_PERIOD);
  return b;
})();

/** The same bytes as a Buffer, whose `compare` takes ranges: the sink's check makes no view per segment. */
const STREAM_BUFFER = Buffer.from(STREAM.buffer, STREAM.byteOffset, STREAM.byteLength);

/** Two 16-bit values (router addresses, or ports) as one number key. */
const pairKey = (a: number, b: number): number => a * 0x10000 + b;

export function streamByte(i: number): number {
  return STREAM[i % STREAM_PERIOD]!;
}

/**
 * Bytes [from, from + n) of the stream: up to one period, a view of the
 * stream's table itself (its readers only read it; a TCP write copies it),
 * longer, a copy.
 */
export function streamBytes(from: number, n: number): Uint8Array {
  const at0 = from % STREAM_PERIOD;
  if (n <= STREAM_PERIOD) return STREAM.subarray(at0, at0 + n);
  const out = new Uint8Array(n);
  for (let done = 0; done < n;) {
    const at = (from + done) % STREAM_PERIOD;
    const run = Math.min(n - done, STREAM_PERIOD);
    out.set(STREAM.subarray(at, at + run), done);
    done += run;
  }
  return out;
}

/** How many bytes of `data`, read at stream offset `from`, differ from the stream. */
export function streamMismatches(data: Uint8Array, from: number): number {
  let bad = 0;
  for (let done = 0; done < data.length;) {
    const at = (from + done) % STREAM_PERIOD;
    const run = Math.min(data.length - done, STREAM_PERIOD);
    if (STREAM_BUFFER.compare(data, done, done + run, at, at + run) !== 0) {
      for (let k = 0; k < run; k++) if (data[done + k] !== STREAM[at + k]) bad++;
    }
    done += run;
  }
  return bad;
}

/** What one TCP flow measured. */
export interface TcpFlowRecord {
  flow: number;
  src: number;
  dst: number;
  variant: string;
  startUs: Micros;
  endUs: Micros;
  /** In-order bytes the sink application read before the end of the flow. */
  goodputBytes: number;
  /** All bytes it read (also after the end). */
  readBytes: number;
  /** Payload bytes that reached the sink's TCP, duplicates included. */
  arrivedBytes: number;
  /** Bytes read whose content was not what the source wrote (must stay 0). */
  corruptBytes: number;
  /** Packets of the flow the source (data) and the sink (ACKs) handed to the mesh. */
  dataPackets: number;
  ackPackets: number;
  /** Those lost in the mesh (queue overflow, retry limit, no route...). */
  dataDrops: number;
  ackDrops: number;
  dropReasons: Record<string, number>;
  connectedAtUs: Micros | null;
  /** When the source reset a connection still open at the flow's end. */
  stoppedAtUs: Micros | null;
  closedAtUs: Micros | null;
  /** Why the connection ended early, if it did ('reset', 'timeout', ...). */
  failure: string | null;
  cwndSamples: number;
  cwndSumSegments: number;
  cwndMaxSegments: number;
  /** The source's connection, for its counters and RTT estimator at the end. */
  sender: TcpConnection | undefined;
  receiver: TcpConnection | undefined;
}

interface Host {
  stack: TcpStack;
  /** The stack's next deadline on the engine. */
  alarm: Alarm;
  /** What the alarm runs: the stack's timers, then a pump (made once: the alarm is set again after every pump). */
  tick: (now: Micros) => void;
  seq: number;
  /**
   * The flow of the last segment this router sent: its peer, its ports
   * (`pairKey(src, dst)`) and flow number. A stack sends for one or two
   * connections in turn, so a segment nearly always finds it here instead
   * of in the two maps of `flowByPorts`.
   */
  lastTo: number;
  lastPorts: number;
  lastFlow: number;
}

export interface BulkTcpParts {
  engine: EventEngine;
  rng: Rng;
  /**
   * Hands a segment to router `from`'s mesh layer for router `to`: `bytes`
   * are the packet's own, with `room` bytes in front of them its own too
   * (room for a DATA header), where the mesh's header can go without a copy.
   */
  originate: (from: NodeAddr, to: NodeAddr, flow: number, seq: number, bytes: Uint8Array, now: Micros, room: number) => void;
  /** The routers whose ends run here (a router daemon runs only its own); default all. */
  local?: (addr: NodeAddr) => boolean;
  /** Told each time the stack of router `addr` ran (a segment in, a timer), once its output is on the mesh: a trace reads the connections then. */
  observer?: (addr: NodeAddr, now: Micros) => void;
  /** false: the stacks leave TCP checksums to their links (TcpStack's `checksums`: the simulator's hosts, when nothing else reads the bytes); default true. */
  checksums?: boolean;
}

/**
 * Bulk TCP flows over the mesh: one TcpStack per router that has a TCP
 * endpoint, their timers on the event engine, and the bulk source and sink
 * of each tcp-bulk flow. Packets between stacks cross the mesh through the
 * routers; nothing here shortcuts the air. The simulator runs every end;
 * a router daemon runs its own (`local`).
 */
export class BulkTcp {
  /** By router address (an array: looked up for every segment in and out). */
  private readonly hosts: Array<Host | undefined> = [];
  /** Flow of a connection in either direction: by `pairKey(router, router)`, then by `pairKey(port, port)`. */
  private readonly flowByPorts = new Map<number, Map<number, number>>();
  private readonly flows = new Map<number, TcpFlowRecord>();
  /** The same records by flow number, and by connection (either end): the lookups of every segment and event. */
  private readonly flowAt: Array<TcpFlowRecord | undefined> = [];
  private readonly flowByConn = new Map<TcpConnection, TcpFlowRecord>();
  private readonly specs = new Map<number, TcpFlowSpec>();
  private readonly written = new Map<number, number>();

  /** Each router's IP address (its stack's, and the pseudo-header's source of what it sends), made once: not made anew per segment. */
  private readonly ips: Array<Uint8Array | undefined> = [];

  constructor(private readonly p: BulkTcpParts) {}

  private ip(addr: NodeAddr): Uint8Array {
    let ip = this.ips[addr];
    if (!ip) this.ips[addr] = ip = meshIp(addr);
    return ip;
  }

  private host(addr: NodeAddr): Host {
    let h = this.hosts[addr];
    if (!h) {
      // Each segment is made with room for the DATA header the mesh puts in front of it.
      const stack = new TcpStack(this.ip(addr), this.p.rng.fork(`tcp/${addr}`), {}, DATA_LABELLED_HEADER_BYTES, this.p.checksums !== false);
      const tick = (t: Micros): void => {
        stack.tick(t);
        this.pump(host, addr, t);
      };
      const host: Host = { stack, alarm: new Alarm(this.p.engine), tick, seq: 0, lastTo: -1, lastPorts: -1, lastFlow: 0xffff };
      this.hosts[addr] = h = host;
    }
    return h;
  }

  /** Sets up flow `flow`: the sink listens now, the source connects at its start time. */
  addFlow(flow: number, spec: TcpFlowSpec, src: NodeAddr, dst: NodeAddr, startUs: Micros, endUs: Micros): TcpFlowRecord {
    const rec: TcpFlowRecord = {
      flow,
      src,
      dst,
      variant: spec.variant,
      startUs,
      endUs,
      goodputBytes: 0,
      readBytes: 0,
      arrivedBytes: 0,
      corruptBytes: 0,
      dataPackets: 0,
      ackPackets: 0,
      dataDrops: 0,
      ackDrops: 0,
      dropReasons: {},
      connectedAtUs: null,
      stoppedAtUs: null,
      closedAtUs: null,
      failure: null,
      cwndSamples: 0,
      cwndSumSegments: 0,
      cwndMaxSegments: 0,
      sender: undefined,
      receiver: undefined,
    };
    this.flows.set(flow, rec);
    this.flowAt[flow] = rec;
    this.specs.set(flow, spec);
    this.written.set(flow, 0);
    const t = spec.tcp;
    const common: Partial<TcpConfig> = {
      mss: t.mss,
      timestamps: t.timestamps,
      windowScale: t.windowScale,
      initialRtoMs: t.initialRtoMs,
      minRtoMs: t.minRtoMs,
      maxRtoMs: t.maxRtoMs,
      maxRetransmits: t.maxRetransmits,
      initialWindowSegments: t.initialWindowSegments,
      prr: t.prr,
      hystart: t.hystart,
      // The flow's ends are ns-2's agents unless told: none of the loss detections newer than SACK.
      frto: t.frto ?? false,
      eifel: t.eifel ?? false,
      dsack: t.dsack ?? false,
      rack: t.rack ?? false,
    };
    const localPort = 10000 + flow;
    this.setFlowOf(src, localPort, dst, spec.port, flow);
    this.setFlowOf(dst, spec.port, src, localPort, flow);
    const local = this.p.local ?? (() => true);
    if (local(dst)) this.listenFor(dst, spec, common);
    if (!local(src)) return rec;
    // A daemon sets its flows up in real time, possibly just past their start.
    this.p.engine.at(Math.max(startUs, this.p.engine.now()), (now) => {
      const h = this.host(src);
      const cfg: Partial<TcpConfig> = {
        ...common,
        congestion: spec.variant,
        // CUBIC offers SACK as Linux does, and recovers by RFC 6675 when the sink agrees.
        sack: spec.variant === 'sack' || spec.variant === 'cubic',
        sendBufferBytes: t.sendBufferBytes,
        receiveBufferBytes: 65535,
        delayedAckMs: t.delayedAckMs,
      };
      rec.sender = h.stack.connect(this.ip(dst), spec.port, now, cfg, localPort);
      if (!this.flowByConn.has(rec.sender)) this.flowByConn.set(rec.sender, rec);
      this.pump(h, src, now);
    });
    // The flow stops at its end: like an FTP killed mid-transfer, the source
    // resets the connection, whatever its buffer still held.
    this.p.engine.at(Math.max(endUs, this.p.engine.now()), (now) => {
      const c = rec.sender;
      if (!c || c.state === 'CLOSED') return;
      c.abort(now);
      rec.stoppedAtUs = now;
      this.pump(this.host(src), src, now);
    });
    return rec;
  }

  private listenFor(dst: NodeAddr, spec: TcpFlowSpec, common: Partial<TcpConfig>): void {
    const t = spec.tcp;
    const sinkCfg: Partial<TcpConfig> = {
      ...common,
      sack: true,
      receiveBufferBytes: t.receiveBufferBytes,
      sendBufferBytes: 4096,
      delayedAckMs: t.delayedAckMs,
    };
    if (this.listening.has(`${dst}:${spec.port}`)) return;
    this.listening.add(`${dst}:${spec.port}`);
    this.host(dst).stack.listen(spec.port, (conn) => this.accepted(dst, conn), sinkCfg);
  }

  /** Sinks listening, by "router:port" (flows to one sink port share the first flow's sink settings). */
  private readonly listening = new Set<string>();

  private accepted(at: NodeAddr, conn: TcpConnection): void {
    for (const [flow, rec] of this.flows) {
      const spec = this.specs.get(flow)!;
      if (rec.dst === at && spec.port === conn.localPort && 10000 + flow === conn.remotePort) {
        rec.receiver = conn;
        if (!this.flowByConn.has(conn)) this.flowByConn.set(conn, rec);
      }
    }
  }

  /** A tcp data packet arrived at router `at`. */
  deliver(at: NodeAddr, header: DataHeader, payload: Uint8Array, now: Micros): void {
    const h = this.hosts[at];
    if (!h) return;
    const rec = this.flowAt[header.flow];
    if (rec && header.src === rec.src && payload.length >= 20 && now <= rec.endUs)
      rec.arrivedBytes += Math.max(0, payload.length - ((payload[12] ?? 0x50) >> 4) * 4);
    h.stack.input(this.ip(header.src), payload, now);
    this.pump(h, at, now);
  }

  /** A packet of a TCP flow was lost in the mesh. */
  dropped(header: DataHeader, reason: string): void {
    const rec = this.flowAt[header.flow];
    if (!rec) return;
    if (header.src === rec.src) rec.dataDrops++;
    else rec.ackDrops++;
    rec.dropReasons[reason] = (rec.dropReasons[reason] ?? 0) + 1;
  }

  /** Samples every sender's congestion window (called on a fixed period). */
  sampleCwnd(now: Micros): void {
    for (const rec of this.flows.values()) {
      const c = rec.sender;
      if (!c || c.state === 'CLOSED' || c.state === 'SYN-SENT' || now > rec.endUs) continue;
      const seg = c.cwnd / Math.max(1, c.sendMss);
      rec.cwndSamples++;
      rec.cwndSumSegments += seg;
      rec.cwndMaxSegments = Math.max(rec.cwndMaxSegments, seg);
    }
  }

  /** Moves what a stack produced onto the mesh and to its applications, and re-arms its timer. */
  private pump(h: Host, addr: NodeAddr, now: Micros): void {
    for (let round = 0; round < 64; round++) {
      const { packets, events } = h.stack.poll();
      if (packets.length === 0 && events.length === 0) break;
      for (let i = 0; i < packets.length; i++) {
        const pkt = packets[i]!;
        const to = meshAddr(pkt.dst);
        const srcPort = ((pkt.bytes[0] ?? 0) << 8) | (pkt.bytes[1] ?? 0);
        const dstPort = ((pkt.bytes[2] ?? 0) << 8) | (pkt.bytes[3] ?? 0);
        const ports = pairKey(srcPort, dstPort);
        let flow = h.lastFlow;
        if (to !== h.lastTo || ports !== h.lastPorts) {
          flow = this.flowByPorts.get(pairKey(addr, to))?.get(ports) ?? 0xffff;
          h.lastTo = to;
          h.lastPorts = ports;
          h.lastFlow = flow;
        }
        const rec = this.flowAt[flow];
        if (rec) {
          if (addr === rec.src) rec.dataPackets++;
          else rec.ackPackets++;
        }
        this.p.originate(addr, to, flow, h.seq++ >>> 0, pkt.bytes, now, pkt.room);
      }
      for (let i = 0; i < events.length; i++) this.onEvent(events[i]!, now);
    }
    this.p.observer?.(addr, now);
    this.arm(h);
  }

  private setFlowOf(from: NodeAddr, fromPort: number, to: NodeAddr, toPort: number, flow: number): void {
    const k = pairKey(from, to);
    let ports = this.flowByPorts.get(k);
    if (!ports) this.flowByPorts.set(k, (ports = new Map()));
    ports.set(pairKey(fromPort, toPort), flow);
    // The routers' last flows are looked up again.
    for (const h of this.hosts) if (h) h.lastTo = -1;
  }

  private onEvent(e: TcpStackEvent, now: Micros): void {
    const rec = this.flowOfConn(e.conn);
    if (!rec) return;
    const spec = this.specs.get(rec.flow)!;
    if (e.conn === rec.sender) {
      switch (e.event) {
        case 'connected':
          rec.connectedAtUs ??= now;
          this.fill(rec, spec, e.conn, now);
          break;
        case 'writable':
          this.fill(rec, spec, e.conn, now);
          break;
        case 'eof':
          break;
        case 'closed':
          rec.closedAtUs ??= now;
          break;
        default:
          rec.failure ??= e.event;
          rec.closedAtUs ??= now;
      }
    } else {
      switch (e.event) {
        case 'readable': {
          // Checked and counted here and now: a view, not a copy.
          const data = e.conn.readView(Infinity, now);
          rec.corruptBytes += streamMismatches(data, rec.readBytes);
          rec.readBytes += data.length;
          if (now <= rec.endUs) rec.goodputBytes += data.length;
          break;
        }
        case 'eof':
          e.conn.close(now);
          break;
        default:
          break;
      }
    }
  }

  /** The bulk source keeps its send buffer full until its byte count is written, then closes. */
  private fill(rec: TcpFlowRecord, spec: TcpFlowSpec, conn: TcpConnection, now: Micros): void {
    let written = this.written.get(rec.flow) ?? 0;
    const limit = spec.bytes > 0 ? spec.bytes : Number.MAX_SAFE_INTEGER;
    if (now >= rec.endUs) return;
    while (written < limit && conn.writable > 0 && (conn.state === 'ESTABLISHED' || conn.state === 'CLOSE-WAIT')) {
      const n = Math.min(conn.writable, limit - written, 64 * 1024);
      const took = conn.write(streamBytes(written, n), now);
      written += took;
      if (took === 0) break;
    }
    this.written.set(rec.flow, written);
    if (written >= limit && (conn.state === 'ESTABLISHED' || conn.state === 'CLOSE-WAIT')) conn.close(now);
  }

  private arm(h: Host): void {
    h.alarm.set(h.stack.nextDeadline(), h.tick);
  }

  private flowOfConn(conn: TcpConnection): TcpFlowRecord | undefined {
    return this.flowByConn.get(conn);
  }

  /** Every flow's record. */
  records(): TcpFlowRecord[] {
    return [...this.flows.values()];
  }
}

export const CWND_SAMPLE_US = 10 * US_PER_MS;
