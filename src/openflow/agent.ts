import type { Micros } from '../core/time.js';
import {
  encodeOf,
  errorReply,
  errorReplyFor,
  OFPAT,
  OFPBAC,
  OFPBIC,
  OFPBRC,
  OFPC,
  OFPET,
  OFPFMFC,
  OFPHFC,
  OFPIT,
  OFPMPF_REQ_MORE,
  OFPQOFC,
  QUEUE_RATE_MAX,
  OFPRRFC,
  OFPPF,
  OFPPS,
  OFPTFFC,
  isMaskable,
  oxmIdOf,
  parseOf,
  splitMultipartReply,
  type FeatureId,
  type MultipartReplyBody,
  type MultipartRequestBody,
  type OfMessage,
  type OfPort,
  type PortStats,
  type QueueStats,
  type TableFeatures,
} from '../wire/openflow/index.js';
import { OFP_NO_BUFFER, OFPP, OFPQ_ALL, type OfAction, type OfInstruction } from '../wire/openflow/actions.js';
import { ofErrorNumbers } from './errors.js';
import type { FlowRemoved } from './flow-table.js';
import type { FlowTables } from './pipeline.js';
import { OXM_FIELDS, type OfMatch } from '../wire/openflow/match.js';
import { meshFrame, type PacketToController } from './forwarder.js';
import { CETT_EXP_START_VNF, CETT_EXP_STOP_VNF, CETT_VNF_EXPERIMENTER } from './controller.js';
import { utf8Prefix, type LinkPort, type PortChange } from './ports.js';

/** Traffic counters of one port (a neighbour link, or LOCAL). */
export interface PortCounters {
  rxPackets: number;
  rxBytes: number;
  txPackets: number;
  txBytes: number;
  txDropped: number;
  /** A link port's counters per QoS queue id (absent on LOCAL, which has no R2 queue). */
  queues?: ReadonlyMap<number, { txPackets: number; txBytes: number; txErrors: number }>;
}

/** A QoS queue of every link port: its id and its guaranteed rate (0: none, best effort). */
export interface AgentQueue {
  queue: number;
  minKbps: number;
}

/** What the agent reads of its router. */
export interface AgentRouter {
  /** The ports now (LOCAL and one per live neighbour link). */
  ports(): LinkPort[];
  counters(portNo: number): PortCounters | undefined;
  /** The QoS queues of each link port, highest priority first, best effort (0) among them. */
  queues(): AgentQueue[];
}

/** What the agent asks of the router's VNF manager when the controller places VNFs (the experimenter message of controller.ts). */
export interface AgentVnfs {
  /** Starts an instance for the controller's flow `ref` (one per type and ref); rejects with a reason. */
  start(type: string, flow: string, params: unknown, ref: number): Promise<void>;
  /** Stops the instances of `ref` (none: not an error). */
  stop(type: string, ref: number): Promise<void>;
}

export interface AgentOptions {
  /** The router's VNFs, for the controller's placement messages; absent: they are refused. */
  vnfs?: AgentVnfs;
  datapathId: bigint;
  tables: FlowTables;
  router: AgentRouter;
  node: { id: number; name: string };
  /** The software description (DESC). */
  version: string;
  startUs: Micros;
}

/** One connection's protocol state. */
export interface AgentSession {
  readonly id: number;
  helloDone: boolean;
  /** SET_CONFIG. */
  flags: number;
  missSendLen: number;
  role: 'equal' | 'master' | 'slave';
  /** Bytes to write to this connection. */
  out: Uint8Array[];
  /** The connection must close after `out` is written (a failed HELLO, a framing error). */
  closing: boolean;
  /** Counters for the log and the tests. */
  received: number;
  errorsSent: number;
}

const OF13 = 0x04;

/** Actions and instructions cogmesh carries out; anything else is refused with the spec's error. */
const SUPPORTED_INSTRUCTIONS: ReadonlySet<OfInstruction['type']> = new Set(['goto-table', 'apply-actions', 'write-actions', 'clear-actions']);
const SUPPORTED_ACTIONS: ReadonlySet<OfAction['type']> = new Set(['output', 'set-queue']);

/**
 * The OpenFlow 1.3 switch agent of a mesh router, as a sans-IO core: the
 * transport (`transport.ts`) hands it each connection's bytes and writes
 * what it answers. It negotiates the version, answers echo, features,
 * configuration, barrier, role and every multipart request the router can
 * fill (DESC, FLOW, AGGREGATE, TABLE, PORT_STATS, PORT_DESC, QUEUE,
 * TABLE_FEATURES, GROUP_DESC, METER_FEATURES), applies FLOW_MODs to the
 * flow table that forwards ahead of AODV, takes PACKET_OUTs, and sends
 * PORT_STATUS (a link's RC is its port's curr_speed), FLOW_REMOVED and
 * PACKET_IN to every connection. What it does not support gets the ERROR
 * the specification names; a malformed message gets the error its parse
 * names, and the connection goes on (a framing error closes it).
 */
export class OfAgent {
  readonly counters = {
    vnfRequests: 0,
    connections: 0,
    messages: 0,
    malformed: 0,
    errorsSent: 0,
    flowMods: 0,
    packetOuts: 0,
    packetIns: 0,
    portStatus: 0,
    flowRemoved: 0,
  };
  private readonly sessions = new Map<number, AgentSession>();
  private nextSession = 1;
  private xid = 1;
  /** The last generation id a master or slave request carried (undefined: none yet). */
  private generation: bigint | undefined;
  /** Called when bytes wait to be written to a session (the transport writes them). */
  onSend: (s: AgentSession) => void = () => undefined;

  constructor(private readonly o: AgentOptions) {}

  /** Connections open now (counters.connections counts every one ever opened). */
  get openSessions(): number {
    return this.sessions.size;
  }

  /** A new connection: the agent's HELLO is queued first. */
  open(): AgentSession {
    const s: AgentSession = {
      id: this.nextSession++,
      helloDone: false,
      flags: 0,
      missSendLen: 128,
      role: 'equal',
      out: [],
      closing: false,
      received: 0,
      errorsSent: 0,
    };
    this.sessions.set(s.id, s);
    this.counters.connections++;
    this.send(s, { type: 'hello', version: OF13, xid: this.nextXid(), elements: [{ type: 'version-bitmap', bitmaps: [1 << OF13] }] });
    return s;
  }

  close(s: AgentSession): void {
    this.sessions.delete(s.id);
  }

  /** One complete message from a connection (a frame of the transport's framer). */
  receive(s: AgentSession, bytes: Uint8Array, now: Micros): void {
    s.received++;
    this.counters.messages++;
    const version = bytes[0] ?? 0;
    const type = bytes[1] ?? 0;
    // Version negotiation (6.3.1): a HELLO of any version is read for its bitmap.
    if (!s.helloDone && type !== 0) {
      this.fail(s, bytes, OFPET.HELLO_FAILED, OFPHFC.EPERM, 'the first message must be a HELLO');
      return;
    }
    const parsed = parseOf(bytes);
    if (!parsed.ok) {
      this.counters.malformed++;
      if (!s.helloDone) {
        this.fail(s, bytes, OFPET.HELLO_FAILED, OFPHFC.INCOMPATIBLE, parsed.error.message);
        return;
      }
      this.sendError(s, errorReplyFor(parsed.error, bytes));
      return;
    }
    const m = parsed.value;
    if (m.type === 'hello') {
      const bitmap = m.elements.find((e) => e.type === 'version-bitmap');
      const speaks13 = bitmap && bitmap.type === 'version-bitmap' ? ((bitmap.bitmaps[0] ?? 0) & (1 << OF13)) !== 0 : version >= OF13;
      if (!speaks13) {
        this.fail(
          s,
          bytes,
          OFPET.HELLO_FAILED,
          OFPHFC.INCOMPATIBLE,
          `no common version: this switch speaks OpenFlow 1.3 (0x04), the peer offered 0x${version.toString(16)}`,
        );
        return;
      }
      s.helloDone = true;
      return;
    }
    this.handle(s, m, bytes, now);
  }

  /** Broadcast: what the flow table removed (timeouts) or a delete removed. */
  flowRemoved(list: readonly FlowRemoved[]): void {
    for (const r of list) {
      this.counters.flowRemoved++;
      this.broadcast({
        type: 'flow-removed',
        xid: 0,
        cookie: r.cookie,
        priority: r.priority,
        reason: r.reason,
        tableId: r.tableId,
        durationSec: r.durationSec,
        durationNsec: r.durationNsec,
        idleTimeout: r.idleTimeout,
        hardTimeout: r.hardTimeout,
        packetCount: BigInt(r.packetCount),
        byteCount: BigInt(r.byteCount),
        match: r.match,
      });
    }
  }

  /** Broadcast: ports that appeared, went or whose RC moved. */
  portStatus(changes: readonly PortChange[]): void {
    for (const c of changes) {
      this.counters.portStatus++;
      this.broadcast({ type: 'port-status', xid: 0, reason: c.reason, port: this.ofPort(c.port) });
    }
  }

  /** Broadcast: a packet the flow table sends to the controller, as the Ethernet frame a controller parses (cut to max_len). */
  packetIn(p: PacketToController): void {
    this.counters.packetIns++;
    const frame = meshFrame(p.header, p.payload);
    const data = frame.subarray(0, Math.min(frame.length, p.maxLen));
    this.broadcast({
      type: 'packet-in',
      xid: 0,
      bufferId: OFP_NO_BUFFER,
      totalLen: frame.length,
      reason: p.reason,
      tableId: p.tableId,
      cookie: p.cookie,
      match: { inPort: p.inPort },
      data,
    });
  }

  /** Takes what a connection has to write. */
  drain(s: AgentSession): Uint8Array[] {
    return s.out.splice(0);
  }

  // ---------------------------------------------------------------------------

  private handle(s: AgentSession, m: OfMessage, bytes: Uint8Array, now: Micros): void {
    switch (m.type) {
      case 'echo-request':
        this.send(s, { type: 'echo-reply', xid: m.xid, data: m.data });
        return;
      case 'echo-reply':
      case 'error':
      case 'error-experimenter':
        return;
      case 'features-request':
        this.send(s, {
          type: 'features-reply',
          xid: m.xid,
          datapathId: this.o.datapathId,
          nBuffers: 0,
          nTables: this.o.tables.count,
          auxiliaryId: 0,
          capabilities: OFPC.FLOW_STATS | OFPC.TABLE_STATS | OFPC.PORT_STATS | OFPC.QUEUE_STATS,
        });
        return;
      case 'get-config-request':
        this.send(s, { type: 'get-config-reply', xid: m.xid, flags: s.flags, missSendLen: s.missSendLen });
        return;
      case 'set-config':
        s.flags = m.flags;
        s.missSendLen = m.missSendLen;
        return;
      case 'barrier-request':
        // Every message is carried out before the next is read: the barrier holds by construction.
        this.send(s, { type: 'barrier-reply', xid: m.xid });
        return;
      case 'role-request': {
        // 6.3.5: a master or slave request carries a generation id that must not go back; a new master demotes the others.
        if (m.role === 'master' || m.role === 'slave') {
          const g = BigInt.asIntN(64, m.generationId);
          if (this.generation !== undefined && BigInt.asIntN(64, g - this.generation) < 0n) {
            this.sendError(s, errorReply(bytes, { type: OFPET.ROLE_REQUEST_FAILED, code: OFPRRFC.STALE }, m.xid));
            return;
          }
          this.generation = g;
          if (m.role === 'master') for (const o of this.sessions.values()) if (o !== s && o.role === 'master') o.role = 'slave';
        }
        if (m.role !== 'nochange') s.role = m.role;
        this.send(s, { type: 'role-reply', xid: m.xid, role: s.role, generationId: BigInt.asUintN(64, this.generation ?? 0n) });
        return;
      }
      case 'flow-mod':
        this.flowMod(s, m.mod, bytes, now);
        return;
      case 'packet-out':
        this.packetOut(s, m.bufferId, m.inPort, m.actions, bytes);
        return;
      case 'multipart-request':
        this.multipart(s, m.xid, m.flags, m.body, bytes, now);
        return;
      case 'queue-get-config-request': {
        // The QoS queues of the link ports (LOCAL has none); a guarantee as min_rate, in 1/10 % of the link's C.
        const links = this.o.router.ports().filter((p) => p.portNo !== OFPP.LOCAL && (m.portNo === OFPP.ANY || p.portNo === m.portNo));
        if (m.portNo !== OFPP.ANY && links.length === 0)
          return this.sendError(s, errorReply(bytes, { type: OFPET.QUEUE_OP_FAILED, code: OFPQOFC.BAD_PORT }, m.xid));
        const queues = this.o.router.queues();
        const permille = (kbps: number, p: LinkPort): number => Math.min(QUEUE_RATE_MAX, Math.max(1, Math.round((kbps / Math.max(1, p.maxKbps)) * 1000)));
        this.send(s, {
          type: 'queue-get-config-reply',
          xid: m.xid,
          portNo: m.portNo,
          queues: links.flatMap((p) =>
            queues.map((q) => ({
              queueId: q.queue,
              portNo: p.portNo,
              properties: q.minKbps > 0 ? [{ type: 'min-rate' as const, rate: permille(q.minKbps, p) }] : [],
            })),
          ),
        });
        return;
      }
      case 'experimenter':
        this.experimenter(s, m.experimenter, m.expType, m.data, bytes, m.xid);
        return;
      default:
        // A message a switch does not take (GROUP_MOD, PORT_MOD, TABLE_MOD, METER_MOD, replies, ...).
        this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_TYPE }, m.xid));
    }
  }

  /**
   * The controller's VNF placement (experimenter 0x00c06e54, controller.ts):
   * exp_type 1 starts a VNF for a flow, 2 stops it; data is JSON. A refusal
   * (bad JSON, an unknown type, bad parameters, a failed start) is an ERROR
   * OFPBRC_EPERM carrying the request, sent when the answer is known.
   */
  private experimenter(s: AgentSession, experimenter: number, expType: number, data: Uint8Array, bytes: Uint8Array, xid: number): void {
    const vnfs = this.o.vnfs;
    if (experimenter !== CETT_VNF_EXPERIMENTER || !vnfs)
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_EXPERIMENTER }, xid));
    if (expType !== CETT_EXP_START_VNF && expType !== CETT_EXP_STOP_VNF)
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_EXP_TYPE }, xid));
    if (s.role === 'slave') return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.IS_SLAVE }, xid));
    let req: { type?: unknown; flow?: unknown; params?: unknown; ref?: unknown };
    try {
      req = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data)) as typeof req;
    } catch {
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.EPERM }, xid));
    }
    if (
      typeof req !== 'object' ||
      req === null ||
      typeof req.type !== 'string' ||
      !Number.isSafeInteger(req.ref) ||
      (expType === CETT_EXP_START_VNF && typeof req.flow !== 'string')
    ) {
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.EPERM }, xid));
    }
    const done =
      expType === CETT_EXP_START_VNF ? vnfs.start(req.type, req.flow as string, req.params ?? {}, req.ref as number) : vnfs.stop(req.type, req.ref as number);
    this.counters.vnfRequests++;
    done.catch(() => {
      if (this.sessions.has(s.id)) this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.EPERM }, xid));
    });
  }

  private flowMod(s: AgentSession, mod: Extract<OfMessage, { type: 'flow-mod' }>['mod'], bytes: Uint8Array, now: Micros): void {
    const xid = xidOf(bytes);
    // Its flow-stats entry is 16 bytes longer than the FLOW_MOD: one that could not be reported is not taken.
    if (bytes.length > 65535 - 16) return this.sendError(s, errorReply(bytes, { type: OFPET.FLOW_MOD_FAILED, code: OFPFMFC.UNKNOWN }, xid));
    if (s.role === 'slave') return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.IS_SLAVE }, xid));
    const refusal = this.checkInstructions(mod.instructions);
    if (refusal) return this.sendError(s, errorReply(bytes, refusal, xid));
    if (mod.bufferId !== OFP_NO_BUFFER && (mod.command === 'add' || mod.command === 'modify' || mod.command === 'modify-strict')) {
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BUFFER_UNKNOWN }, xid));
    }
    const r = this.o.tables.apply(mod, now);
    if (!r.ok) return this.sendError(s, errorReply(bytes, ofErrorNumbers(r.error), xid));
    this.counters.flowMods++;
    if (r.value.command === 'delete' || r.value.command === 'delete-strict') this.flowRemoved(r.value.flowRemoved);
  }

  private packetOut(s: AgentSession, bufferId: number, inPort: number, actions: OfAction[], bytes: Uint8Array): void {
    const xid = xidOf(bytes);
    if (s.role === 'slave') return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.IS_SLAVE }, xid));
    if (bufferId !== OFP_NO_BUFFER) return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BUFFER_UNKNOWN }, xid));
    if (!this.portExists(inPort) && inPort !== OFPP.CONTROLLER)
      return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_PORT }, xid));
    const refusal = this.checkActions(actions, true);
    if (refusal) return this.sendError(s, errorReply(bytes, refusal, xid));
    // A mesh router has no Ethernet to put the frame on: the packet is taken, counted and not forwarded.
    this.counters.packetOuts++;
  }

  private checkInstructions(list: readonly OfInstruction[]): { type: number; code: number } | undefined {
    const seen = new Set<string>();
    for (const ins of list) {
      if (ins.type === 'unsupported' || !SUPPORTED_INSTRUCTIONS.has(ins.type))
        return { type: OFPET.BAD_INSTRUCTION, code: ins.type === 'unsupported' ? OFPBIC.UNKNOWN_INST : OFPBIC.UNSUP_INST };
      // Each instruction type at most once (7.2.4); 1.3 has no code of its own for a repeat.
      if (seen.has(ins.type)) return { type: OFPET.BAD_INSTRUCTION, code: OFPBIC.UNSUP_INST };
      seen.add(ins.type);
      if (ins.type === 'apply-actions' || ins.type === 'write-actions') {
        const r = this.checkActions(ins.actions);
        if (r) return r;
      }
    }
    return undefined;
  }

  private checkActions(list: readonly OfAction[], packetOut = false): { type: number; code: number } | undefined {
    for (const a of list) {
      if (a.type === 'unsupported' || !SUPPORTED_ACTIONS.has(a.type)) return { type: OFPET.BAD_ACTION, code: OFPBAC.BAD_TYPE };
      if (a.type === 'output') {
        const flood = a.port === OFPP.ALL || a.port === OFPP.FLOOD || a.port === OFPP.TABLE;
        const reservedOk = a.port === OFPP.CONTROLLER || a.port === OFPP.LOCAL || a.port === OFPP.IN_PORT || (packetOut && flood);
        if (!reservedOk && !this.portExists(a.port)) return { type: OFPET.BAD_ACTION, code: OFPBAC.BAD_OUT_PORT };
      }
    }
    return undefined;
  }

  /** A link port that exists now, or any neighbour port number (links come and go; an entry may wait for one). */
  private portExists(port: number): boolean {
    return port === OFPP.LOCAL || (port >= 1 && port <= 0xffff);
  }

  private multipart(s: AgentSession, xid: number, flags: number, body: MultipartRequestBody, bytes: Uint8Array, now: Micros): void {
    if (flags & OFPMPF_REQ_MORE) return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.MULTIPART_BUFFER_OVERFLOW }, xid));
    let reply: MultipartReplyBody;
    switch (body.type) {
      case 'desc':
        reply = {
          type: 'desc',
          desc: {
            mfrDesc: 'cogmesh',
            hwDesc: 'Urban-X cognitive mesh router',
            swDesc: `cogmesh ${this.o.version}`,
            serialNum: `node-${this.o.node.id}`,
            dpDesc: utf8Prefix(`${this.o.node.name} (mesh address ${this.o.node.id})`, 255),
          },
        };
        break;
      case 'flow': {
        const r = this.o.tables.flowStats(body.request, now);
        if (!r.ok) return this.sendError(s, errorReply(bytes, ofErrorNumbers(r.error), xid));
        reply = {
          type: 'flow',
          stats: r.value.map((f) => ({ ...f, packetCount: BigInt(f.packetCount), byteCount: BigInt(f.byteCount), instructions: [...f.instructions] })),
        };
        break;
      }
      case 'aggregate': {
        const r = this.o.tables.aggregate(body.request, now);
        if (!r.ok) return this.sendError(s, errorReply(bytes, ofErrorNumbers(r.error), xid));
        reply = { type: 'aggregate', stats: { packetCount: BigInt(r.value.packetCount), byteCount: BigInt(r.value.byteCount), flowCount: r.value.flowCount } };
        break;
      }
      case 'table':
        reply = {
          type: 'table',
          stats: this.o.tables
            .tableStats()
            .map((t) => ({ tableId: t.tableId, activeCount: t.activeCount, lookupCount: BigInt(t.lookupCount), matchedCount: BigInt(t.matchedCount) })),
        };
        break;
      case 'port-stats': {
        const ports = this.o.router.ports().filter((p) => body.portNo === OFPP.ANY || p.portNo === body.portNo);
        if (body.portNo !== OFPP.ANY && ports.length === 0)
          return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_PORT }, xid));
        reply = { type: 'port-stats', stats: ports.map((p) => this.portStats(p, now)) };
        break;
      }
      case 'queue': {
        // Every link port has the QoS queues (the classes inside R2's channel queues); LOCAL has none.
        const links = this.o.router.ports().filter((p) => p.portNo !== OFPP.LOCAL);
        const ports = links.filter((p) => body.portNo === OFPP.ANY || p.portNo === body.portNo);
        if (body.portNo !== OFPP.ANY && ports.length === 0)
          return this.sendError(s, errorReply(bytes, { type: OFPET.QUEUE_OP_FAILED, code: OFPQOFC.BAD_PORT }, xid));
        const queues = this.o.router.queues().filter((q) => body.queueId === OFPQ_ALL || q.queue === body.queueId);
        if (body.queueId !== OFPQ_ALL && queues.length === 0)
          return this.sendError(s, errorReply(bytes, { type: OFPET.QUEUE_OP_FAILED, code: OFPQOFC.BAD_QUEUE }, xid));
        const stats: QueueStats[] = [];
        for (const p of ports) for (const q of queues) stats.push(this.queueStats(p, q.queue, now));
        reply = { type: 'queue', stats };
        break;
      }
      case 'port-desc':
        reply = { type: 'port-desc', ports: this.o.router.ports().map((p) => this.ofPort(p)) };
        break;
      case 'table-features':
        if (body.tables.length > 0) return this.sendError(s, errorReply(bytes, { type: OFPET.TABLE_FEATURES_FAILED, code: OFPTFFC.EPERM }, xid));
        reply = { type: 'table-features', tables: this.tableFeatures() };
        break;
      case 'group-desc':
        reply = { type: 'group-desc', groups: [] };
        break;
      case 'meter-features':
        reply = { type: 'meter-features', features: { maxMeter: 0, bandTypes: 0, capabilities: 0, maxBands: 0, maxColor: 0 } };
        break;
      case 'experimenter':
        return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_EXPERIMENTER }, xid));
      default:
        return this.sendError(s, errorReply(bytes, { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_MULTIPART }, xid));
    }
    for (const msg of splitMultipartReply(xid, reply)) this.send(s, msg);
  }

  private portStats(p: LinkPort, now: Micros): PortStats {
    const c = this.o.router.counters(p.portNo);
    const big = (n: number | undefined): bigint => BigInt(Math.max(0, Math.round(n ?? 0)));
    const none = 0xffffffffffffffffn; // all ones: not counted
    const d = this.duration(now);
    return {
      portNo: p.portNo,
      rxPackets: big(c?.rxPackets),
      txPackets: big(c?.txPackets),
      rxBytes: big(c?.rxBytes),
      txBytes: big(c?.txBytes),
      rxDropped: none,
      txDropped: big(c?.txDropped),
      rxErrors: none,
      txErrors: none,
      rxFrameErr: none,
      rxOverErr: none,
      rxCrcErr: none,
      collisions: none,
      ...d,
    };
  }

  private queueStats(p: LinkPort, queueId: number, now: Micros): QueueStats {
    const c = this.o.router.counters(p.portNo)?.queues?.get(queueId);
    const big = (n: number | undefined): bigint => BigInt(Math.max(0, Math.round(n ?? 0)));
    return { portNo: p.portNo, queueId, txBytes: big(c?.txBytes), txPackets: big(c?.txPackets), txErrors: big(c?.txErrors), ...this.duration(now) };
  }

  private duration(now: Micros): { durationSec: number; durationNsec: number } {
    const us = Math.max(0, now - this.o.startUs);
    return { durationSec: Math.floor(us / 1e6), durationNsec: (us % 1e6) * 1000 };
  }

  /** A link port as ofp_port: the link's RC as curr_speed, C as max_speed, in kbps. */
  ofPort(p: LinkPort): OfPort {
    const id = this.o.node.id;
    const hw = Uint8Array.of(0x02, 0x00, (id >> 8) & 0xff, id & 0xff, (p.portNo >> 8) & 0xff, p.portNo & 0xff);
    return {
      portNo: p.portNo,
      hwAddr: hw,
      name: p.name,
      config: 0,
      state: p.up ? OFPPS.LIVE : OFPPS.LINK_DOWN,
      curr: OFPPF.OTHER,
      advertised: 0,
      supported: OFPPF.OTHER,
      peer: 0,
      currSpeed: p.rcKbps,
      maxSpeed: p.maxKbps,
    };
  }

  /** What each table takes: every field of OfMatch, the instructions and actions carried out. */
  private tableFeatures(): TableFeatures[] {
    const n = this.o.tables.count;
    const keys = Object.keys(OXM_FIELDS) as Array<keyof OfMatch>;
    const wildcards = keys.map((k) => oxmIdOf(k, false));
    // MATCH lists each field once, with its mask where the field takes one.
    const match = keys.map((k) => oxmIdOf(k, isMaskable(k)));
    const ins: FeatureId[] = [OFPIT.GOTO_TABLE, OFPIT.WRITE_ACTIONS, OFPIT.APPLY_ACTIONS, OFPIT.CLEAR_ACTIONS].map((type) => ({ type }));
    const acts: FeatureId[] = [OFPAT.OUTPUT, OFPAT.SET_QUEUE].map((type) => ({ type }));
    return Array.from({ length: n }, (_, tableId) => {
      const next = Array.from({ length: n - tableId - 1 }, (_, i) => tableId + 1 + i);
      const insHere = tableId === n - 1 ? ins.filter((i) => i.type !== OFPIT.GOTO_TABLE) : ins;
      return {
        tableId,
        name: tableId === 0 ? 'mesh' : `mesh-${tableId}`,
        metadataMatch: 0n,
        metadataWrite: 0n,
        config: 0,
        maxEntries: this.o.tables.table(tableId)?.capacity ?? 0,
        properties: [
          { type: 'instructions', ids: insHere },
          { type: 'instructions-miss', ids: insHere },
          { type: 'next-tables', tableIds: next },
          { type: 'next-tables-miss', tableIds: next },
          { type: 'write-actions', ids: acts },
          { type: 'write-actions-miss', ids: acts },
          { type: 'apply-actions', ids: acts },
          { type: 'apply-actions-miss', ids: acts },
          { type: 'match', oxmIds: match },
          { type: 'wildcards', oxmIds: wildcards },
          { type: 'write-setfield', oxmIds: [] },
          { type: 'write-setfield-miss', oxmIds: [] },
          { type: 'apply-setfield', oxmIds: [] },
          { type: 'apply-setfield-miss', oxmIds: [] },
        ],
      } satisfies TableFeatures;
    });
  }

  private fail(s: AgentSession, bytes: Uint8Array, type: number, code: number, why: string): void {
    const err = errorReply(bytes, { type, code }, xidOf(bytes));
    // An ERROR of HELLO_FAILED carries an ASCII explanation, as the spec asks.
    this.sendError(s, err.type === 'error' ? { ...err, data: new TextEncoder().encode(why) } : err);
    s.closing = true;
  }

  private sendError(s: AgentSession, m: OfMessage): void {
    s.errorsSent++;
    this.counters.errorsSent++;
    this.send(s, m);
  }

  private send(s: AgentSession, m: OfMessage): void {
    s.out.push(encodeOf(m));
    this.onSend(s);
  }

  /** An ECHO_REQUEST to a silent peer (keep-alive). */
  echo(s: AgentSession): void {
    if (s.helloDone) this.send(s, { type: 'echo-request', xid: this.nextXid(), data: new Uint8Array(0) });
  }

  /**
   * Asynchronous messages go to every connection past its HELLO, but not to
   * slaves (PORT_STATUS goes to all). They carry xid 0, as Open vSwitch's do:
   * they answer no request, and an xid of the switch's own count could equal
   * that of a request a tool such as ovs-ofctl is waiting on, which then
   * takes the message for its reply ("received bad reply").
   */
  private broadcast(m: OfMessage): void {
    // The same bytes for every session (nothing writes into what a session sends).
    let bytes: Uint8Array | undefined;
    for (const s of this.sessions.values()) {
      if (!s.helloDone) continue;
      if (s.role === 'slave' && m.type !== 'port-status') continue;
      s.out.push((bytes ??= encodeOf(m)));
      this.onSend(s);
    }
  }

  private nextXid(): number {
    const x = this.xid;
    this.xid = (this.xid + 1) >>> 0 || 1;
    return x;
  }
}

function xidOf(bytes: Uint8Array): number {
  return bytes.length >= 8 ? ((bytes[4]! << 24) | (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!) >>> 0 : 0;
}
