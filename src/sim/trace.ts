import type { Micros } from '../core/time.js';
import type { R2Observer } from '../router/router.js';
import type { TcpConnection } from '../tcp/connection.js';
import type { TcpFlowRecord } from '../traffic/bulk-tcp.js';
import type { TcpAccObserver } from '../vnf/tcp-acc.js';
import { dataHeaderBytes } from '../wire/codec.js';
import { TCP_ACK, TCP_SYN } from '../wire/tcp.js';
import { R2Timeline } from './r2-timeline.js';

/**
 * The per-leg TCP trace of one simulator run (`cogmesh sim --trace`).
 *
 * Every TCP connection that carries a tcp-bulk flow's data is watched: the
 * source's, the sink's, and both legs of each TCP-ACC split. A leg is one
 * TCP connection: its data sender (the source, or an accelerator's
 * downstream side) and its receiver (an accelerator's upstream side, or the
 * sink). Legs are paired by sequence space: an accelerator's upstream side
 * was opened by a SYN whose sequence number is its sender's ISS; the sink
 * pairs with the one sender left.
 *
 * Sampled every `intervalUs` (a multiple of the run's 10 ms sampling
 * period): each end's congestion state and buffers. As they happen:
 * retransmission timeouts and retransmissions (from each connection's
 * counters, read each time it ran). For each of a leg's segments R2 hands
 * to its MAC at any router: its time in R2's channel queue, split by what R2
 * did meanwhile (r2-timeline.ts). A segment is told to its leg by the
 * sequence space of the leg's receiver: its data carries the receiver's ISS
 * plus one or two in its ACK field, and the receiver's own segments carry
 * it in their sequence field; only a SYN is told by its sender's ISS.
 *
 * Observation only: nothing here changes what the run does (the results
 * are byte-identical with and without a trace).
 */

export type EndRole = 'source' | 'sink' | 'acc-up' | 'acc-down';

/** A tcp-bulk flow as the trace sees it: its routers, congestion control and active time. */
export type TraceFlow = Pick<TcpFlowRecord, 'flow' | 'src' | 'dst' | 'variant' | 'startUs' | 'endUs'>;

export interface TraceLeg {
  leg: number;
  flow: number;
  /** Its place on the flow's path, from the source (0). */
  index: number;
  /** Routers of its sender and receiver. */
  from: number;
  to: number | null;
  sender: EndRole;
  receiver: EndRole | null;
}

/** One leg at one sampling time; waits are those of its segments R2 handed out in the interval ending at t. */
export interface TraceSample {
  type: 'sample';
  t: number;
  leg: number;
  state: string;
  cwnd: number;
  ssthresh: number | null;
  srttMs: number | null;
  rtoMs: number;
  inFlight: number;
  sndWnd: number;
  sndBuf: number;
  rcvWnd: number | null;
  rcvBuf: number | null;
  relay: number | null;
  relayBack: number | null;
  timeouts: number;
  retransSegs: number;
  sentSegs: number;
  dupBytes: number | null;
  dataSegs: number;
  dataWaitMs: number;
  dataSensingMs: number;
  dataSwitchingMs: number;
  ackSegs: number;
  ackWaitMs: number;
  ackSensingMs: number;
  ackSwitchingMs: number;
}

export interface TraceEvent {
  type: 'event';
  t: number;
  leg: number | null;
  end: 'sender' | 'receiver';
  router: number;
  kind: 'rto' | 'retransmit';
  /** Segments retransmitted since the connection last ran (retransmit); 1 for an RTO. */
  segments: number;
  /** Of those, sent by fast retransmit. */
  fast: number;
  rtoMs: number;
  cwnd: number;
  ssthresh: number | null;
  inFlight: number;
  /** rto: how long until the sender's SND.UNA next moved (null: never). */
  ackedAfterMs?: number | null;
  /**
   * rto: bytes the leg's receiver had already taken in order beyond the
   * sender's SND.UNA when the timer fired (null: receiver not known). Above
   * zero, the segment the timeout resends had arrived and only its ACK was
   * late: a spurious timeout.
   */
  receiverAhead?: number | null;
  spurious?: boolean | null;
}

export interface TraceLegSummary {
  type: 'summary';
  leg: number;
  /** The flow's active time (start to end), over which the means and stall shares are taken. */
  activeMs: number;
  meanCwnd: number;
  meanSrttMs: number | null;
  meanRtoMs: number;
  meanInFlight: number;
  meanSndWnd: number;
  meanRcvWnd: number | null;
  timeouts: number;
  /** RTOs that resent what the receiver already had (see TraceEvent.receiverAhead). */
  spuriousTimeouts: number;
  sentSegs: number;
  retransSegs: number;
  retransPct: number;
  retransBytes: number;
  /** Bytes the receiver got twice: retransmissions whose first copy had arrived after all. */
  dupBytes: number | null;
  meanRelay: number | null;
  maxRelay: number | null;
  dataSegs: number;
  ackSegs: number;
  /** Sums over the leg's segments (data and ACKs). */
  waitMs: number;
  sensingMs: number;
  switchingMs: number;
  /** Share of the active time during which at least one of its segments waited on sensing (on switching). */
  sensingStallPct: number;
  switchingStallPct: number;
}

export interface TraceR2Summary {
  type: 'r2';
  router: number;
  sensingPct: number;
  tuningPct: number;
  untunedPct: number;
  retunes: number;
}

export interface TraceHeader {
  type: 'header';
  format: 'cogmesh-trace';
  version: 1;
  scenario: string;
  seed: number;
  durationS: number;
  intervalMs: number;
  flows: Array<Omit<TraceFlow, 'startUs' | 'endUs'> & { startMs: number; endMs: number }>;
  legs: TraceLeg[];
  /** Segments of a traced flow R2 handed out that matched no leg (a SYN before its connection was seen, a RST). */
  unattributedSegments: number;
}

export interface TraceResult {
  header: TraceHeader;
  samples: TraceSample[];
  events: TraceEvent[];
  summaries: TraceLegSummary[];
  r2: TraceR2Summary[];
}

interface EndSample {
  t: Micros;
  state: string;
  cwnd: number;
  ssthresh: number | null;
  srttUs: number | null;
  rtoUs: number;
  inFlight: number;
  sndWnd: number;
  sndBuf: number;
  rcvWnd: number;
  rcvBuf: number;
  relay: number | null;
  relayBack: number | null;
  timeouts: number;
  retransSegs: number;
  retransBytes: number;
  sentSegs: number;
  dupBytes: number;
}

interface End {
  conn: TcpConnection;
  router: number;
  flow: number;
  role: EndRole;
  /** An accelerator's other side. */
  partner?: End;
  /** acc-up: the SYN that opened it (its sender's ISS). */
  synSeq?: number;
  timeouts: number;
  retrans: number;
  fast: number;
  /** RTOs whose SND.UNA has not moved since, and where it was. */
  openRtos: RawEvent[];
  rtoUna: number;
  samples: EndSample[];
}

interface RawEvent {
  t: Micros;
  end: End;
  kind: 'rto' | 'retransmit';
  segments: number;
  fast: number;
  rtoUs: number;
  cwnd: number;
  ssthresh: number | null;
  inFlight: number;
  ackedAfterUs?: Micros;
  receiverAhead?: number | null;
}

/** A segment R2 handed to its MAC, before it is told to its leg. */
interface RawSegment {
  t: Micros;
  flow: number;
  data: boolean;
  seq: number;
  ack: number;
  flags: number;
  waitUs: Micros;
  sensingUs: Micros;
  switchingUs: Micros;
  /** Its pieces of waiting on sensing or switching, [from, to) in `pieces`. */
  piecesFrom: number;
  piecesTo: number;
}

/** ssthresh before the first loss is "infinite" in every congestion control. */
const finiteOrNull = (v: number): number | null => (v >= 2 ** 31 ? null : v);
const toMs = (us: number): number => Math.round(us) / 1000;
const SENDING_STATES = new Set(['ESTABLISHED', 'CLOSE-WAIT', 'FIN-WAIT-1', 'CLOSING', 'LAST-ACK']);

export class RunTrace {
  private flows = new Map<number, TraceFlow>();
  private scenario = '';
  private seed = 0;
  private durationUs: Micros = 0;
  private readonly ends: End[] = [];
  private readonly endOf = new Map<TcpConnection, End>();
  private readonly events: RawEvent[] = [];
  private readonly segments: RawSegment[] = [];
  /** Pieces of segments' waits: cause (0 sensing, 1 switching), from, to. */
  private readonly pieceCause: number[] = [];
  private readonly pieceFrom: Micros[] = [];
  private readonly pieceTo: Micros[] = [];
  private readonly timelines = new Map<number, R2Timeline>();
  /** Until when a packet's wait is attributed (a packet the MAC gave back is attributed again from there). */
  private readonly attributedUntil = new WeakMap<object, Micros>();
  private sampleTimes: Micros[] = [];

  /** `intervalUs`: the sampling interval of the time series. */
  constructor(readonly intervalUs: Micros) {
    if (!Number.isSafeInteger(intervalUs) || intervalUs <= 0) throw new RangeError(`trace interval: ${intervalUs} us is not a positive integer`);
  }

  /** The run starts: what it is and its tcp-bulk flows. */
  begin(run: { scenario: string; seed: number; durationUs: Micros; flows: TraceFlow[] }): void {
    this.scenario = run.scenario;
    this.seed = run.seed;
    this.durationUs = run.durationUs;
    this.flows = new Map(run.flows.map((f) => [f.flow, f]));
  }

  /** The observer of router `router`'s R2. */
  r2(router: number): R2Observer {
    const tl = new R2Timeline();
    this.timelines.set(router, tl);
    return {
      tuned: (channel, readyUs, now) => tl.tuned(channel, readyUs, now),
      paused: (now) => tl.paused(now),
      resumed: (now) => tl.resumed(now),
      handedOut: (packet, channel, now) => {
        const h = packet.item.header;
        const f = this.flows.get(h.flow);
        if (h.proto !== 'tcp' || !f) return;
        const from = this.attributedUntil.get(packet.item) ?? packet.enqueuedUs;
        this.attributedUntil.set(packet.item, now);
        const b = packet.item.bytes;
        const o = dataHeaderBytes(h);
        if (b.length < o + 20) return;
        const word = (at: number): number => ((b[o + at]! << 24) | (b[o + at + 1]! << 16) | (b[o + at + 2]! << 8) | b[o + at + 3]!) >>> 0;
        const piecesFrom = this.pieceFrom.length;
        const w = tl.split(channel, from, now, (cause, a, z) => {
          this.pieceCause.push(cause === 'sensing' ? 0 : 1);
          this.pieceFrom.push(a);
          this.pieceTo.push(z);
        });
        this.segments.push({
          t: now,
          flow: h.flow,
          data: h.src === f.src,
          seq: word(4),
          ack: word(8),
          flags: b[o + 13]!,
          waitUs: now - from,
          sensingUs: w.sensingUs,
          switchingUs: w.switchingUs,
          piecesFrom,
          piecesTo: this.pieceFrom.length,
        });
      },
    };
  }

  /** The observer of router `router`'s TCP-ACC instances. */
  acc(router: number): TcpAccObserver {
    return {
      split: ({ up, down, synSeq, tag }, now) => {
        if (tag === undefined || !this.flows.has(tag)) return;
        const u = this.add(up, router, tag, 'acc-up', now);
        const d = this.add(down, router, tag, 'acc-down', now);
        u.synSeq = synSeq;
        u.partner = d;
        d.partner = u;
      },
      acted: (up, down, now) => {
        const u = this.endOf.get(up);
        const d = this.endOf.get(down);
        if (u) this.check(u, now);
        if (d) this.check(d, now);
      },
    };
  }

  /** The observer of the bulk TCP ends (`records`: the flows' records, whose sender and receiver appear as they open). */
  bulk(records: () => readonly TcpFlowRecord[]): (router: number, now: Micros) => void {
    return (router, now) => {
      for (const rec of records()) {
        if (!this.flows.has(rec.flow)) continue;
        if (rec.src === router && rec.sender) this.check(this.endOf.get(rec.sender) ?? this.add(rec.sender, router, rec.flow, 'source', now), now);
        if (rec.dst === router && rec.receiver) this.check(this.endOf.get(rec.receiver) ?? this.add(rec.receiver, router, rec.flow, 'sink', now), now);
      }
    };
  }

  /** The run's periodic sampling calls this; a sample is taken on every multiple of the interval. */
  sample(now: Micros): void {
    if (now % this.intervalUs !== 0) return;
    this.sampleTimes.push(now);
    for (const e of this.ends) e.samples.push(this.snapshot(e, now));
  }

  private add(conn: TcpConnection, router: number, flow: number, role: EndRole, _now: Micros): End {
    const e: End = {
      conn,
      router,
      flow,
      role,
      timeouts: conn.stats.timeouts,
      retrans: conn.stats.retransmittedSegments,
      fast: conn.stats.fastRetransmits,
      openRtos: [],
      rtoUna: 0,
      samples: [],
    };
    this.ends.push(e);
    this.endOf.set(conn, e);
    return e;
  }

  /** The connection ran: timeouts and retransmissions since it last ran are events at `now`. */
  private check(e: End, now: Micros): void {
    const s = e.conn.stats;
    const c = e.conn;
    if (e.openRtos.length > 0 && c.seq.una > e.rtoUna) {
      for (const ev of e.openRtos) ev.ackedAfterUs = now - ev.t;
      e.openRtos = [];
    }
    if (s.timeouts === e.timeouts && s.retransmittedSegments === e.retrans) return;
    const base = { t: now, end: e, rtoUs: c.rtt.rtoUs, cwnd: c.cwnd, ssthresh: finiteOrNull(c.ssthresh), inFlight: Math.max(0, c.seq.max - c.seq.una) };
    for (let k = e.timeouts; k < s.timeouts; k++) {
      const r = this.receiverOf(e);
      const ev: RawEvent = { ...base, kind: 'rto', segments: 1, fast: 0, receiverAhead: r ? r.conn.seq.rcvNxt - c.seq.una : null };
      this.events.push(ev);
      e.openRtos.push(ev);
      e.rtoUna = c.seq.una;
    }
    if (s.retransmittedSegments > e.retrans) {
      this.events.push({ ...base, kind: 'retransmit', segments: s.retransmittedSegments - e.retrans, fast: s.fastRetransmits - e.fast });
    }
    e.timeouts = s.timeouts;
    e.retrans = s.retransmittedSegments;
    e.fast = s.fastRetransmits;
  }

  /** The receiver of sender `e`'s leg as far as known now: the accelerator side its SYN opened, else the flow's sink. */
  private receiverOf(e: End): End | undefined {
    if (e.role !== 'source' && e.role !== 'acc-down') return undefined;
    return (
      this.ends.find((x) => x.role === 'acc-up' && x.flow === e.flow && x.synSeq === e.conn.iss) ??
      this.ends.find((x) => x.role === 'sink' && x.flow === e.flow)
    );
  }

  private snapshot(e: End, t: Micros): EndSample {
    const c = e.conn;
    const q = c.seq;
    const sndBuf = c.cfg.sendBufferBytes - c.writable;
    let relay: number | null = null;
    let relayBack: number | null = null;
    // An accelerator holds, in the data direction, what its upstream side received and not yet relayed plus its downstream side's send buffer.
    const p = e.partner;
    if (p && e.role === 'acc-down') {
      relay = p.conn.readable + sndBuf;
      relayBack = c.readable + (p.conn.cfg.sendBufferBytes - p.conn.writable);
    }
    const srtt = c.rtt.srtt;
    return {
      t,
      state: c.state,
      cwnd: c.cwnd,
      ssthresh: finiteOrNull(c.ssthresh),
      srttUs: srtt === undefined ? null : srtt,
      rtoUs: c.rtt.rtoUs,
      inFlight: Math.max(0, q.max - q.una),
      sndWnd: q.wnd,
      sndBuf,
      rcvWnd: q.rcvWnd,
      rcvBuf: c.readable,
      relay,
      relayBack,
      timeouts: c.stats.timeouts,
      retransSegs: c.stats.retransmittedSegments,
      retransBytes: c.stats.retransmittedBytes,
      sentSegs: c.stats.segmentsSent,
      dupBytes: c.stats.duplicateBytes,
    };
  }

  /** Pairs senders with receivers and orders each flow's legs along its path. */
  private legs(): Array<{ leg: TraceLeg; sender: End; receiver: End | undefined }> {
    const out: Array<{ leg: TraceLeg; sender: End; receiver: End | undefined }> = [];
    for (const f of this.flows.values()) {
      const senders = this.ends.filter((e) => e.flow === f.flow && (e.role === 'source' || e.role === 'acc-down'));
      const receivers = this.ends.filter((e) => e.flow === f.flow && (e.role === 'acc-up' || e.role === 'sink'));
      const receiverOf = new Map<End, End>();
      for (const r of receivers) {
        if (r.role !== 'acc-up') continue;
        const s = senders.find((x) => x.conn.iss === r.synSeq);
        if (s) receiverOf.set(s, r);
      }
      const sink = receivers.find((r) => r.role === 'sink');
      const unpaired = senders.filter((s) => !receiverOf.has(s));
      if (sink && unpaired.length === 1) receiverOf.set(unpaired[0]!, sink);
      // Along the path: from the source, each receiver's accelerator sends the next leg.
      const ordered: End[] = [];
      let s = senders.find((x) => x.role === 'source');
      while (s && !ordered.includes(s)) {
        ordered.push(s);
        s = receiverOf.get(s)?.partner;
      }
      for (const x of senders) if (!ordered.includes(x)) ordered.push(x);
      ordered.forEach((sender, index) => {
        const receiver = receiverOf.get(sender);
        out.push({
          leg: {
            leg: out.length,
            flow: f.flow,
            index,
            from: sender.router,
            to: receiver?.router ?? null,
            sender: sender.role,
            receiver: receiver?.role ?? null,
          },
          sender,
          receiver,
        });
      });
    }
    return out;
  }

  /** The whole trace, assembled at the end of the run. */
  result(): TraceResult {
    const legs = this.legs();
    const legOfEnd = new Map<End, number>();
    for (const l of legs) {
      legOfEnd.set(l.sender, l.leg.leg);
      if (l.receiver) legOfEnd.set(l.receiver, l.leg.leg);
    }
    // Segments to legs, by the receiver's sequence space (see the file comment).
    const byReceiverSeq = new Map<number, End>();
    const byReceiverAck = new Map<number, End>();
    const bySenderIss = new Map<number, End>();
    for (const l of legs) {
      bySenderIss.set(l.sender.conn.iss, l.sender);
      if (!l.receiver) continue;
      const iss = l.receiver.conn.iss;
      for (const k of [0, 1, 2]) byReceiverSeq.set((iss + k) >>> 0, l.receiver);
      for (const k of [1, 2]) byReceiverAck.set((iss + k) >>> 0, l.receiver);
    }
    const interval = this.intervalUs;
    const waits = legs.map(() => new Map<number, { dataSegs: number; data: number[]; ackSegs: number; ack: number[] }>());
    const stalls = legs.map(() => [[], []] as [Array<[number, number]>, Array<[number, number]>]);
    const totals = legs.map(() => ({ dataSegs: 0, ackSegs: 0, waitUs: 0, sensingUs: 0, switchingUs: 0 }));
    let unattributed = 0;
    for (const seg of this.segments) {
      let end: End | undefined;
      if (seg.data) end = seg.flags & TCP_ACK ? byReceiverAck.get(seg.ack) : seg.flags & TCP_SYN ? bySenderIss.get(seg.seq) : undefined;
      else end = byReceiverSeq.get(seg.seq);
      const leg = end && end.flow === seg.flow ? legOfEnd.get(end) : undefined;
      if (leg === undefined) {
        unattributed++;
        continue;
      }
      const k = Math.ceil(seg.t / interval);
      let w = waits[leg]!.get(k);
      if (!w) waits[leg]!.set(k, (w = { dataSegs: 0, data: [0, 0, 0], ackSegs: 0, ack: [0, 0, 0] }));
      const v = seg.data ? w.data : w.ack;
      if (seg.data) w.dataSegs++;
      else w.ackSegs++;
      v[0] = v[0]! + seg.waitUs;
      v[1] = v[1]! + seg.sensingUs;
      v[2] = v[2]! + seg.switchingUs;
      const tot = totals[leg]!;
      if (seg.data) tot.dataSegs++;
      else tot.ackSegs++;
      tot.waitUs += seg.waitUs;
      tot.sensingUs += seg.sensingUs;
      tot.switchingUs += seg.switchingUs;
      for (let i = seg.piecesFrom; i < seg.piecesTo; i++) stalls[leg]![this.pieceCause[i]!]!.push([this.pieceFrom[i]!, this.pieceTo[i]!]);
    }

    const samples: TraceSample[] = [];
    for (const l of legs) {
      const rs = l.receiver?.samples ?? [];
      const rAt = new Map(rs.map((s) => [s.t, s]));
      for (const s of l.sender.samples) {
        const r = rAt.get(s.t);
        const w = waits[l.leg.leg]!.get(s.t / interval);
        samples.push({
          type: 'sample',
          t: toMs(s.t),
          leg: l.leg.leg,
          state: s.state,
          cwnd: s.cwnd,
          ssthresh: s.ssthresh,
          srttMs: s.srttUs === null ? null : toMs(s.srttUs),
          rtoMs: toMs(s.rtoUs),
          inFlight: s.inFlight,
          sndWnd: s.sndWnd,
          sndBuf: s.sndBuf,
          rcvWnd: r ? r.rcvWnd : null,
          rcvBuf: r ? r.rcvBuf : null,
          relay: s.relay,
          relayBack: s.relayBack,
          timeouts: s.timeouts,
          retransSegs: s.retransSegs,
          sentSegs: s.sentSegs,
          dupBytes: r ? r.dupBytes : null,
          dataSegs: w?.dataSegs ?? 0,
          dataWaitMs: toMs(w?.data[0] ?? 0),
          dataSensingMs: toMs(w?.data[1] ?? 0),
          dataSwitchingMs: toMs(w?.data[2] ?? 0),
          ackSegs: w?.ackSegs ?? 0,
          ackWaitMs: toMs(w?.ack[0] ?? 0),
          ackSensingMs: toMs(w?.ack[1] ?? 0),
          ackSwitchingMs: toMs(w?.ack[2] ?? 0),
        });
      }
    }
    samples.sort((a, b) => a.t - b.t || a.leg - b.leg);

    const events: TraceEvent[] = this.events.map((e) => ({
      type: 'event',
      t: toMs(e.t),
      leg: legOfEnd.get(e.end) ?? null,
      end: e.end.role === 'source' || e.end.role === 'acc-down' ? 'sender' : 'receiver',
      router: e.end.router,
      kind: e.kind,
      segments: e.segments,
      fast: e.fast,
      rtoMs: toMs(e.rtoUs),
      cwnd: e.cwnd,
      ssthresh: e.ssthresh,
      inFlight: e.inFlight,
      ...(e.kind === 'rto'
        ? {
            ackedAfterMs: e.ackedAfterUs === undefined ? null : toMs(e.ackedAfterUs),
            receiverAhead: e.receiverAhead ?? null,
            spurious: e.receiverAhead === undefined || e.receiverAhead === null ? null : e.receiverAhead > 0,
          }
        : {}),
    }));

    const summaries = legs.map((l) => this.summary(l, totals[l.leg.leg]!, stalls[l.leg.leg]!));
    const r2 = [...this.timelines.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([router, tl]): TraceR2Summary => {
        const t = tl.totals(this.durationUs);
        const pct = (us: number): number => round3((100 * us) / Math.max(1, this.durationUs));
        return { type: 'r2', router, sensingPct: pct(t.sensingUs), tuningPct: pct(t.tuningUs), untunedPct: pct(t.untunedUs), retunes: t.tunes };
      });
    return {
      header: {
        type: 'header',
        format: 'cogmesh-trace',
        version: 1,
        scenario: this.scenario,
        seed: this.seed,
        durationS: this.durationUs / 1e6,
        intervalMs: toMs(this.intervalUs),
        flows: [...this.flows.values()].map(({ startUs, endUs, ...f }) => ({ ...f, startMs: toMs(startUs), endMs: toMs(endUs) })),
        legs: legs.map((l) => l.leg),
        unattributedSegments: unattributed,
      },
      samples,
      events,
      summaries,
      r2,
    };
  }

  private summary(
    l: { leg: TraceLeg; sender: End; receiver: End | undefined },
    tot: { dataSegs: number; ackSegs: number; waitUs: number; sensingUs: number; switchingUs: number },
    stalls: [Array<[number, number]>, Array<[number, number]>],
  ): TraceLegSummary {
    const f = this.flows.get(l.leg.flow)!;
    const active = l.sender.samples.filter((s) => s.t > f.startUs && s.t <= f.endUs && SENDING_STATES.has(s.state));
    const mean = (xs: number[]): number => (xs.length === 0 ? 0 : round3(xs.reduce((a, b) => a + b, 0) / xs.length));
    const srtts = active.map((s) => s.srttUs).filter((v): v is number => v !== null);
    const last = l.sender.conn.stats;
    const rLast = l.receiver?.conn.stats;
    const rAt = new Map((l.receiver?.samples ?? []).map((s) => [s.t, s]));
    const rcv = active.map((s) => rAt.get(s.t)?.rcvWnd).filter((v): v is number => v !== undefined);
    const relays = active.map((s) => s.relay).filter((v): v is number => v !== null);
    const activeUs = Math.max(1, f.endUs - f.startUs);
    const pct = (us: number): number => round3((100 * us) / activeUs);
    return {
      type: 'summary',
      leg: l.leg.leg,
      activeMs: toMs(f.endUs - f.startUs),
      meanCwnd: mean(active.map((s) => s.cwnd)),
      meanSrttMs: srtts.length === 0 ? null : round3(mean(srtts) / 1000),
      meanRtoMs: round3(mean(active.map((s) => s.rtoUs)) / 1000),
      meanInFlight: mean(active.map((s) => s.inFlight)),
      meanSndWnd: mean(active.map((s) => s.sndWnd)),
      meanRcvWnd: rcv.length === 0 ? null : mean(rcv),
      timeouts: last.timeouts,
      spuriousTimeouts: this.events.filter((e) => e.end === l.sender && e.kind === 'rto' && (e.receiverAhead ?? 0) > 0).length,
      sentSegs: last.segmentsSent,
      retransSegs: last.retransmittedSegments,
      retransPct: round3((100 * last.retransmittedSegments) / Math.max(1, last.segmentsSent)),
      retransBytes: last.retransmittedBytes,
      dupBytes: rLast ? rLast.duplicateBytes : null,
      meanRelay: relays.length === 0 ? null : mean(relays),
      maxRelay: relays.length === 0 ? null : Math.max(...relays),
      dataSegs: tot.dataSegs,
      ackSegs: tot.ackSegs,
      waitMs: toMs(tot.waitUs),
      sensingMs: toMs(tot.sensingUs),
      switchingMs: toMs(tot.switchingUs),
      sensingStallPct: pct(unionUs(stalls[0], f.startUs, f.endUs)),
      switchingStallPct: pct(unionUs(stalls[1], f.startUs, f.endUs)),
    };
  }
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** The length of the union of intervals, within [from, to]. */
function unionUs(pieces: Array<[number, number]>, from: Micros, to: Micros): Micros {
  const xs = pieces.map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)]).filter(([a, b]) => b > a);
  xs.sort((p, q) => p[0] - q[0]);
  let total = 0;
  let curA = -1;
  let curB = -1;
  for (const [a, b] of xs) {
    if (a > curB) {
      if (curB > curA) total += curB - curA;
      curA = a;
      curB = b;
    } else if (b > curB) curB = b;
  }
  if (curB > curA) total += curB - curA;
  return total;
}

/** The trace as JSON Lines: the header, samples and events in time order, then the legs' and R2s' summaries. */
export function traceJsonLines(r: TraceResult): string {
  const lines = [JSON.stringify(r.header)];
  let i = 0;
  let j = 0;
  while (i < r.samples.length || j < r.events.length) {
    const s = r.samples[i];
    const e = r.events[j];
    if (s && (!e || s.t <= e.t)) {
      lines.push(JSON.stringify(s));
      i++;
    } else {
      lines.push(JSON.stringify(e));
      j++;
    }
  }
  for (const s of r.summaries) lines.push(JSON.stringify(s));
  for (const s of r.r2) lines.push(JSON.stringify(s));
  return `${lines.join('\n')}\n`;
}
