import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { Micros } from '../core/time.js';
import { CC_NAMES, type CcName } from '../tcp/cc/types.js';
import { DEFAULT_TCP_CONFIG, checkTcpConfig, TcpConnection, type TcpConfig, type TcpEvent } from '../tcp/connection.js';
import { encodeTcp, parseTcp, TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, type TcpSegment } from '../wire/tcp.js';
import { ipText } from './flow.js';
import type { FlowPattern, Vnf, VnfPacket, VnfType } from './types.js';

/** The accelerator's modes (see TcpAccParams.mode). */
export const ACC_MODES = ['split', 'e2e', 'as'] as const;
export type AccMode = (typeof ACC_MODES)[number];

export interface TcpAccParams {
  /**
   * `split`: acknowledge upstream on receipt (seeds/000's TCP-ACC,
   * TCPSpeaker). `e2e`: acknowledge upstream only what downstream has
   * acknowledged (seeds/001's ES-TCP), keeping end-to-end semantics while
   * each leg still recovers its own losses. `as`: asymmetric, after
   * seeds/001's AS-TCP: data is acknowledged on receipt, as in split (the
   * sender's window runs on the short leg's RTT), but the connection's end
   * keeps end-to-end semantics: the ACK of an end's FIN is held at the
   * accelerator (ACKs cover everything up to the FIN, not the FIN) until the
   * other end has acknowledged the FIN passed on to it. A sender whose close
   * completes has thus every byte at the far end, as end to end.
   */
  mode: AccMode;
  /** Bytes the accelerator holds per direction of a connection (upstream receive buffer plus downstream send buffer). */
  bufferBytes: number;
  /**
   * Accelerate only connections whose SYN crossed a multiple of this many
   * hops (1: all). With an instance on every router, 2 puts one on every
   * second router of each path: a SYN an accelerator sends starts counting
   * again.
   */
  everyHops: number;
  /** TCP of both legs (congestion control, MSS, timers...): the defaults are the stack's. */
  tcp: Partial<TcpConfig>;
}

const TCP_KEYS = new Set(Object.keys(DEFAULT_TCP_CONFIG));

function checkParams(input: unknown): TcpAccParams {
  const issues: ConfigIssue[] = [];
  const o = (input ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || Array.isArray(o))
    throw new ConfigError([{ path: '/', value: input, expected: 'an object { mode, bufferBytes, tcp }' }], 'tcp-acc parameters');
  for (const k of Object.keys(o))
    if (!['mode', 'bufferBytes', 'everyHops', 'tcp'].includes(k))
      issues.push({ path: `/${k}`, value: o[k], expected: 'one of mode, bufferBytes, everyHops, tcp' });
  const everyHops = o.everyHops ?? 1;
  if (!(Number.isInteger(everyHops) && (everyHops as number) >= 1 && (everyHops as number) <= 255))
    issues.push({ path: '/everyHops', value: everyHops, expected: 'an integer from 1 to 255' });
  const mode = o.mode ?? 'split';
  if (!ACC_MODES.includes(mode as AccMode)) issues.push({ path: '/mode', value: mode, expected: ACC_MODES.map((m) => `"${m}"`).join(', ') });
  const bufferBytes = o.bufferBytes ?? 64 * 1024;
  if (!(Number.isInteger(bufferBytes) && (bufferBytes as number) >= 2 && (bufferBytes as number) <= 1 << 30)) {
    issues.push({ path: '/bufferBytes', value: bufferBytes, expected: 'an integer from 2 to 2^30' });
  }
  const tcp = (o.tcp ?? {}) as Record<string, unknown>;
  if (typeof tcp !== 'object' || Array.isArray(tcp)) issues.push({ path: '/tcp', value: tcp, expected: 'an object of TCP settings' });
  else {
    for (const k of Object.keys(tcp))
      if (!TCP_KEYS.has(k)) issues.push({ path: `/tcp/${k}`, value: tcp[k], expected: `a TCP setting (${[...TCP_KEYS].join(', ')})` });
    if (tcp.congestion !== undefined && !CC_NAMES.includes(tcp.congestion as CcName))
      issues.push({ path: '/tcp/congestion', value: tcp.congestion, expected: CC_NAMES.join(', ') });
  }
  if (issues.length === 0) {
    try {
      checkTcpConfig(legConfig(tcp as Partial<TcpConfig>, bufferBytes as number));
    } catch (e) {
      issues.push({ path: '/tcp', value: tcp, expected: e instanceof Error ? e.message : String(e) });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues, 'tcp-acc parameters');
  return { mode: mode as AccMode, bufferBytes: bufferBytes as number, everyHops: everyHops as number, tcp: { ...(tcp as Partial<TcpConfig>) } };
}

/** A leg's TCP: half the accelerator's buffer on each side of it. */
function legConfig(tcp: Partial<TcpConfig>, bufferBytes: number): TcpConfig {
  const half = Math.max(1, Math.floor(bufferBytes / 2));
  return { ...DEFAULT_TCP_CONFIG, ...tcp, receiveBufferBytes: half, sendBufferBytes: half };
}

/**
 * Watches an accelerator's connections for a trace (the simulator's
 * --trace). `split` hands over both legs of a connection as it is split;
 * `acted` follows every time they ran (a segment in, a timer, a stop), once
 * the accelerator has moved what it could between them.
 */
export interface TcpAccObserver {
  /**
   * `up` faces the client and `down` the server; `synSeq` is the client's
   * SYN's sequence number (the upstream sender's ISS), `tag` the carrier's
   * tag of the flow.
   */
  split(legs: { up: TcpConnection; down: TcpConnection; synSeq: number; tag: number | undefined }, now: Micros): void;
  acted(up: TcpConnection, down: TcpConnection, now: Micros): void;
}

interface Session {
  clientIp: Uint8Array;
  serverIp: Uint8Array;
  clientPort: number;
  serverPort: number;
  /** Faces the client: the accelerator answers as the server. */
  up: TcpConnection;
  /** Faces the server: the accelerator connects as the client. */
  down: TcpConnection;
  tag: number | undefined;
  upClosed: boolean;
  downClosed: boolean;
  /**
   * Mode `as`: the sequence number (as on the wire) of the FIN each end
   * sent, once seen (`up`: the client's, `down`: the server's), and the
   * last ACK of it held back from that end, to be sent once the FIN passed
   * on is acknowledged.
   */
  fin: { up?: number; down?: number };
  heldFinAck: { up?: TcpSegment; down?: TcpSegment };
}

/**
 * TCP-ACC, the split-TCP accelerator of seeds/000 (section 5.2) as a VNF: at
 * a router on a flow's path it intercepts the connection's SYN, answers the
 * client on behalf of the server and opens its own connection to the server
 * on behalf of the client (addresses and ports preserved, so both ends see
 * one ordinary TCP connection), and relays the bytes through a bounded
 * buffer each way. It reads from one leg only what the other leg's send
 * buffer takes, so the window it advertises upstream is its free buffer
 * (backpressure, as TCPSpeaker). A FIN is carried across once the bytes
 * before it are; a RST or a failed leg resets the other. Each leg is a full
 * cogmesh TCP, recovering its losses on its own hop(s).
 *
 * A flow already running when the instance starts (no SYN seen) goes
 * through unchanged.
 */
export class TcpAcc implements Vnf {
  private readonly sessions = new Map<string, Session>();
  private readonly outbox: VnfPacket[] = [];
  private readonly rng: Rng;
  private readonly cfg: TcpConfig;
  private readonly stats = {
    sessions: 0,
    sessionsClosed: 0,
    sessionsReset: 0,
    bytesUp: 0,
    bytesDown: 0,
    maxHeldBytes: 0,
    malformed: 0,
    passedThrough: 0,
  };
  /** Mode `as`: ACKs of a FIN held back until the far end acknowledged the FIN passed on. */
  private finAcksHeld = 0;
  /** Round-trip samples of the downstream legs (this router to the next accelerator or the server). */
  private downRtt = { samples: 0, sumUs: 0 };
  private upRtt = { samples: 0, sumUs: 0 };
  private observer: TcpAccObserver | undefined;

  constructor(
    readonly params: TcpAccParams,
    seed: number,
  ) {
    this.rng = Rng.fromSeed(seed).fork('tcp-acc');
    this.cfg = legConfig(params.tcp, params.bufferBytes);
  }

  handle(pkt: VnfPacket, now: Micros): boolean {
    if (pkt.proto !== 'tcp') return false;
    const r = parseTcp(pkt.bytes, { src: pkt.src, dst: pkt.dst });
    if (!r.ok) {
      // An end host would drop it too; the leg that should have had it recovers.
      this.stats.malformed++;
      return true;
    }
    const seg = r.value;
    const fwd = this.sessions.get(key(pkt.src, seg.srcPort, pkt.dst, seg.dstPort));
    if (fwd) {
      if (this.params.mode === 'as' && seg.flags & TCP_FIN) fwd.fin.up = (seg.seq + seg.payload.length) >>> 0;
      fwd.up.handle(seg, now);
      this.drain(fwd, now);
      return true;
    }
    const back = this.sessions.get(key(pkt.dst, seg.dstPort, pkt.src, seg.srcPort));
    if (back) {
      if (this.params.mode === 'as' && seg.flags & TCP_FIN) back.fin.down = (seg.seq + seg.payload.length) >>> 0;
      back.down.handle(seg, now);
      this.drain(back, now);
      return true;
    }
    const k = this.params.everyHops;
    if ((seg.flags & (TCP_SYN | TCP_ACK | TCP_RST)) !== TCP_SYN || (k > 1 && pkt.hops !== undefined && pkt.hops % k !== 0)) {
      this.stats.passedThrough++;
      return false;
    }
    const s: Session = {
      clientIp: pkt.src,
      serverIp: pkt.dst,
      clientPort: seg.srcPort,
      serverPort: seg.dstPort,
      up: new TcpConnection(this.cfg, seg.dstPort, seg.srcPort, this.iss()),
      down: new TcpConnection(this.cfg, seg.srcPort, seg.dstPort, this.iss()),
      tag: pkt.tag,
      upClosed: false,
      downClosed: false,
      fin: {},
      heldFinAck: {},
    };
    this.sessions.set(key(pkt.src, seg.srcPort, pkt.dst, seg.dstPort), s);
    this.stats.sessions++;
    s.up.listen();
    if (this.params.mode === 'e2e') {
      s.up.setAckLimit(1, now);
      s.down.setAckLimit(1, now);
    }
    this.observer?.split({ up: s.up, down: s.down, synSeq: seg.seq, tag: s.tag }, now);
    s.up.handle(seg, now);
    s.down.connect(now);
    this.drain(s, now);
    return true;
  }

  /** Watches every connection split from now on (one observer; undefined stops watching). */
  observe(o: TcpAccObserver | undefined): void {
    this.observer = o;
  }

  private iss(): number {
    return this.rng.int(0, 0xffffffff) >>> 0;
  }

  /** Moves segments out, events through, and bytes across, until both legs are quiet. */
  private drain(s: Session, now: Micros): void {
    for (let round = 0; round < 1000; round++) {
      let busy = false;
      busy = this.collect(s, s.up, true, now) || busy;
      busy = this.collect(s, s.down, false, now) || busy;
      busy = this.relay(s.up, s.down, now, 'bytesUp') || busy;
      busy = this.relay(s.down, s.up, now, 'bytesDown') || busy;
      // A FIN crosses once every byte before it has.
      if (s.up.peerClosed && s.up.readable === 0 && !s.downClosed && canClose(s.down)) {
        s.downClosed = true;
        s.down.close(now);
        busy = true;
      }
      if (s.down.peerClosed && s.down.readable === 0 && !s.upClosed && canClose(s.up)) {
        s.upClosed = true;
        s.up.close(now);
        busy = true;
      }
      // End-to-end: each side is acknowledged only what the far side has acknowledged.
      if (this.params.mode === 'e2e') {
        const d = s.down.seq;
        const u = s.up.seq;
        s.up.setAckLimit(d.una, now);
        s.down.setAckLimit(u.una, now);
        // And never more in flight towards an end than its own window takes (held bytes cannot be acknowledged).
        if (s.down.state !== 'SYN-SENT') s.up.setWindowLimit(d.una + d.wnd, now);
        if (s.up.state !== 'SYN-RECEIVED') s.down.setWindowLimit(u.una + u.wnd, now);
      }
      if (this.params.mode === 'as') busy = this.releaseFinAcks(s) || busy;
      if (!busy) break;
    }
    const held = s.up.readable + s.down.unacknowledged + s.down.readable + s.up.unacknowledged;
    this.stats.maxHeldBytes = Math.max(this.stats.maxHeldBytes, held);
    this.observer?.acted(s.up, s.down, now);
    if (s.up.state === 'CLOSED' && s.down.state === 'CLOSED') this.finish(s);
  }

  private collect(s: Session, conn: TcpConnection, upstream: boolean, now: Micros): boolean {
    const actions = conn.poll();
    for (const a of actions) {
      if (a.kind === 'segment') this.send(s, a.seg, upstream);
      else this.onEvent(s, a.event, upstream, now);
    }
    return actions.length > 0;
  }

  private onEvent(s: Session, e: TcpEvent, upstream: boolean, now: Micros): void {
    const other = upstream ? s.down : s.up;
    if (e === 'reset' || e === 'refused' || e === 'timeout') {
      // One leg failed: the other end hears of it as a reset.
      this.stats.sessionsReset++;
      if (other.state !== 'CLOSED') other.abort(now);
    }
  }

  /** Reads from `from` only what `to` can take: `from`'s window is what the buffer has free. */
  private relay(from: TcpConnection, to: TcpConnection, now: Micros, count: 'bytesUp' | 'bytesDown'): boolean {
    if (from.readable === 0 || !writable(to)) return false;
    const n = Math.min(from.readable, to.writable);
    if (n <= 0) return false;
    // Written on at once (copied into `to`'s send buffer): a view, not a copy.
    const data = from.readView(n, now);
    to.write(data, now);
    this.stats[count] += data.length;
    return true;
  }

  /**
   * Mode `as`: an ACK from a leg that covers its end's FIN while the FIN
   * passed on over the other leg is not yet acknowledged goes out covering
   * everything but the FIN (one less); the last such ACK is kept, to be
   * sent whole once the far end has acknowledged (releaseFinAcks).
   */
  private holdFinAck(s: Session, seg: TcpSegment, upstream: boolean): TcpSegment {
    const side = upstream ? 'up' : 'down';
    const fin = s.fin[side];
    if (fin === undefined || !(seg.flags & TCP_ACK) || seg.ack !== (fin + 1) >>> 0 || finAcked(upstream ? s.down : s.up)) return seg;
    s.heldFinAck[side] = seg;
    this.finAcksHeld++;
    return { ...seg, ack: fin };
  }

  /** Mode `as`: the held ACK of a FIN goes, as a pure ACK, once the FIN passed on has been acknowledged. */
  private releaseFinAcks(s: Session): boolean {
    let sent = false;
    for (const upstream of [true, false]) {
      const side = upstream ? 'up' : 'down';
      const held = s.heldFinAck[side];
      if (!held || !finAcked(upstream ? s.down : s.up)) continue;
      s.heldFinAck[side] = undefined;
      // SND.NXT as of the held segment: nothing was sent on this leg after it, or that would have been held instead.
      const seq = (held.seq + held.payload.length + (held.flags & TCP_FIN ? 1 : 0)) >>> 0;
      const options = held.options.timestamp ? { timestamp: held.options.timestamp } : {};
      this.send(s, { ...held, seq, flags: TCP_ACK, options, payload: new Uint8Array(0) }, upstream);
      sent = true;
    }
    return sent;
  }

  private send(s: Session, segment: TcpSegment, upstream: boolean): void {
    const seg = this.params.mode === 'as' ? this.holdFinAck(s, segment, upstream) : segment;
    // Each leg speaks with the addresses of the end it stands in for.
    const src = upstream ? s.serverIp : s.clientIp;
    const dst = upstream ? s.clientIp : s.serverIp;
    const pkt: VnfPacket = { proto: 'tcp', src, dst, bytes: encodeTcp(seg, { src, dst }) };
    if (s.tag !== undefined) pkt.tag = s.tag;
    this.outbox.push(pkt);
  }

  private finish(s: Session): void {
    if (!this.sessions.delete(key(s.clientIp, s.clientPort, s.serverIp, s.serverPort))) return;
    this.stats.sessionsClosed++;
    this.addRtt(s);
  }

  private addRtt(s: Session): void {
    this.downRtt.samples += s.down.rtt.samples;
    this.downRtt.sumUs += s.down.rtt.sumUs;
    this.upRtt.samples += s.up.rtt.samples;
    this.upRtt.sumUs += s.up.rtt.sumUs;
  }

  tick(now: Micros): void {
    for (const s of [...this.sessions.values()]) {
      for (const c of [s.up, s.down]) {
        const d = c.nextDeadline();
        if (d !== undefined && d <= now) c.tick(now);
      }
      this.drain(s, now);
    }
  }

  nextDeadline(): Micros | undefined {
    let t: Micros | undefined;
    for (const s of this.sessions.values()) {
      for (const c of [s.up, s.down]) {
        const d = c.nextDeadline();
        if (d !== undefined && (t === undefined || d < t)) t = d;
      }
    }
    return t;
  }

  poll(): VnfPacket[] {
    return this.outbox.splice(0);
  }

  counters(): Record<string, number> {
    const down = { ...this.downRtt };
    const up = { ...this.upRtt };
    for (const s of this.sessions.values()) {
      down.samples += s.down.rtt.samples;
      down.sumUs += s.down.rtt.sumUs;
      up.samples += s.up.rtt.samples;
      up.sumUs += s.up.rtt.sumUs;
    }
    return {
      ...this.stats,
      ...(this.params.mode === 'as' ? { finAcksHeld: this.finAcksHeld } : {}),
      activeSessions: this.sessions.size,
      downRttMeanMs: down.samples > 0 ? down.sumUs / down.samples / 1000 : 0,
      upRttMeanMs: up.samples > 0 ? up.sumUs / up.samples / 1000 : 0,
    };
  }

  /** Both legs of every connection reset: a split connection cannot fall back to forwarding mid-stream. */
  stop(now: Micros): void {
    for (const s of [...this.sessions.values()]) {
      this.stats.sessionsReset++;
      s.up.abort(now);
      s.down.abort(now);
      // Both legs are CLOSED now: draining sends the resets and finishes the session (once).
      this.drain(s, now);
    }
  }

  /** The connections it holds, for observation: client and server, and each leg's state. */
  connections(): Array<{ client: string; server: string; up: string; down: string }> {
    return [...this.sessions.values()].map((s) => ({
      client: `${ipText(s.clientIp)}:${s.clientPort}`,
      server: `${ipText(s.serverIp)}:${s.serverPort}`,
      up: s.up.state,
      down: s.down.state,
    }));
  }
}

function writable(c: TcpConnection): boolean {
  return (c.state === 'ESTABLISHED' || c.state === 'CLOSE-WAIT' || c.state === 'SYN-SENT' || c.state === 'SYN-RECEIVED') && c.writable > 0;
}

/** Whether the FIN this accelerator sent on `c` has been acknowledged (its end has every byte before it). */
function finAcked(c: TcpConnection): boolean {
  return c.state === 'FIN-WAIT-2' || c.state === 'TIME-WAIT' || (c.state === 'CLOSED' && c.seq.una >= c.seq.max && c.seq.max > 1);
}

function canClose(c: TcpConnection): boolean {
  return c.state === 'ESTABLISHED' || c.state === 'CLOSE-WAIT' || c.state === 'SYN-RECEIVED';
}

function key(src: Uint8Array, sp: number, dst: Uint8Array, dp: number): string {
  return `${src.join('.')}:${sp}>${dst.join('.')}:${dp}`;
}

export const tcpAccType: VnfType = {
  name: 'tcp-acc',
  params: (input) => checkParams(input) as unknown as Record<string, unknown>,
  create: (params, ctx: { flow: FlowPattern; seed: number }) => new TcpAcc(params as unknown as TcpAccParams, ctx.seed),
};
