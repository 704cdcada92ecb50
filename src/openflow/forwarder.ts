import type { Micros } from '../core/time.js';
import { meshIp, meshIp6, meshIpv4 } from '../wire/addresses.js';
import { internetChecksum, tcpChecksum } from '../wire/tcp.js';
import { get32 } from '../wire/bytes.js';
import { parseIp } from '../wire/ip.js';
import type { DataHeader, NodeAddr } from '../wire/mesh.js';
import { OFPP, type OfAction, type OfInstruction } from '../wire/openflow/actions.js';
import type { FlowEntry } from './flow-table.js';
import type { FlowTables } from './pipeline.js';
import type { PacketFields } from '../wire/openflow/match.js';
import { neighbourOfPort, portOfNeighbour } from './ports.js';

/** What a flow table decides for a data packet ahead of AODV. */
export type ForwardDecision =
  /** `queue`: the QoS queue an OpenFlow set_queue put it in (absent: its flow label's class). */
  { kind: 'next-hop'; nextHop: NodeAddr; queue?: number } | { kind: 'deliver' } | { kind: 'drop' };

export interface Forwarder {
  /** `inFrom`: the neighbour it came from (undefined: originated here). Undefined: no entry, AODV routes it. */
  decide(header: DataHeader, payload: Uint8Array, inFrom: NodeAddr | undefined, now: Micros): ForwardDecision | undefined;
}

/** A packet the flow table sends to the controller (an output to CONTROLLER, or a table-miss entry doing so). */
export interface PacketToController {
  reason: 'no-match' | 'action';
  tableId: number;
  cookie: bigint;
  inPort: number;
  fields: PacketFields;
  maxLen: number;
  header: DataHeader;
  payload: Uint8Array;
}

/**
 * A mesh data packet as the Ethernet frame a controller expects in a
 * PACKET_IN: Ethernet (locally administered addresses 02:00:00:00:hi:lo of
 * the two routers), then the IP header between the routers' addresses,
 * then the TCP segment as carried, or a UDP header (ports 0) before a UDP
 * payload (mesh UDP packets carry no header of their own). An unlabelled
 * packet is IPv4 (TTL from the mesh header, header checksum computed, no
 * UDP checksum); a labelled one is IPv6 with its flow label (hop limit
 * from the mesh header; the UDP checksum computed, as IPv6 requires, and
 * the TCP one computed again over the IPv6 pseudo-header).
 */
export function meshFrame(h: DataHeader, payload: Uint8Array): Uint8Array {
  if (h.proto === 'ip4' || h.proto === 'ip6') return ipFrame(h, payload);
  const udp = h.proto === 'udp';
  const v6 = (h.label ?? 0) !== 0;
  const l4 = udp ? 8 + payload.length : payload.length;
  const ipBytes = v6 ? 40 : 20;
  const frame = new Uint8Array(14 + ipBytes + l4);
  const mac = (a: number, at: number): void => frame.set([0x02, 0, 0, 0, (a >> 8) & 0xff, a & 0xff], at);
  mac(h.dst, 0);
  mac(h.src, 6);
  const ip = frame.subarray(14, 14 + ipBytes);
  const next = udp ? 17 : 6;
  const hop = Math.min(255, h.ttl);
  if (v6) {
    frame.set([0x86, 0xdd], 12);
    const label = h.label!;
    ip.set([0x60, (label >> 16) & 0x0f, (label >> 8) & 0xff, label & 0xff, (l4 >> 8) & 0xff, l4 & 0xff, next, hop]);
    ip.set(meshIp6(h.src), 8);
    ip.set(meshIp6(h.dst), 24);
  } else {
    frame.set([0x08, 0x00], 12);
    const total = 20 + l4;
    ip.set([0x45, 0, (total >> 8) & 0xff, total & 0xff, (h.seq >> 8) & 0xff, h.seq & 0xff, 0x40, 0, hop, next, 0, 0]);
    ip.set(meshIp(h.src), 12);
    ip.set(meshIp(h.dst), 16);
    const ck = internetChecksum(ip);
    ip[10] = ck >> 8;
    ip[11] = ck & 0xff;
  }
  const at = 14 + ipBytes;
  if (udp) {
    frame.set([0, 0, 0, 0, (l4 >> 8) & 0xff, l4 & 0xff, 0, 0], at);
    frame.set(payload, at + 8);
    if (v6) {
      // Pseudo-header (RFC 8200 8.1): addresses, upper-layer length (u32), three zeros, next header.
      const ck = internetChecksum(ip.subarray(8, 40), Uint8Array.of(0, 0, l4 >> 8, l4 & 0xff, 0, 0, 0, 17), frame.subarray(at)) || 0xffff;
      frame[at + 6] = ck >> 8;
      frame[at + 7] = ck & 0xff;
    }
  } else {
    frame.set(payload, at);
    // The segment's checksum covers the IPv4 pseudo-header it was sent with: over IPv6 it is computed again.
    if (v6 && payload.length >= 20) {
      const seg = frame.subarray(at);
      seg[16] = 0;
      seg[17] = 0;
      const ck = tcpChecksum(seg, { src: meshIp6(h.src), dst: meshIp6(h.dst) });
      seg[16] = ck >> 8;
      seg[17] = ck & 0xff;
    }
  }
  return frame;
}

/** A hosts' IP packet (DATA proto ip4 or ip6) as an Ethernet frame: the routers' addresses, then the packet as it is. */
function ipFrame(h: DataHeader, payload: Uint8Array): Uint8Array {
  const frame = new Uint8Array(14 + payload.length);
  frame.set([0x02, 0, 0, 0, (h.dst >> 8) & 0xff, h.dst & 0xff, 0x02, 0, 0, 0, (h.src >> 8) & 0xff, h.src & 0xff], 0);
  frame.set(h.proto === 'ip6' ? [0x86, 0xdd] : [0x08, 0x00], 12);
  frame.set(payload, 14);
  return frame;
}

/** The fields of a hosts' IP packet: its own addresses, protocol, DSCP, flow label and ports (undefined: not IP after all). */
function ipFields(payload: Uint8Array, inPort: number): PacketFields | undefined {
  const r = parseIp(payload);
  if (!r.ok) return undefined;
  const ip = r.value;
  const f: PacketFields =
    ip.version === 6
      ? {
          inPort,
          ethType: 0x86dd,
          ipProto: ip.proto,
          ipv6Src: ip.src,
          ipv6Dst: ip.dst,
          ipv6Flabel: ip.flowLabel,
          ipDscp: ((payload[0]! & 0x0f) << 2) | (payload[1]! >> 6),
        }
      : { inPort, ethType: 0x0800, ipProto: ip.proto, ipv4Src: get32(ip.src, 0), ipv4Dst: get32(ip.dst, 0), ipDscp: payload[1]! >> 2 };
  if (ip.srcPort !== undefined && ip.dstPort !== undefined) {
    if (ip.proto === 6) {
      f.tcpSrc = ip.srcPort;
      f.tcpDst = ip.dstPort;
    } else if (ip.proto === 17) {
      f.udpSrc = ip.srcPort;
      f.udpDst = ip.dstPort;
    }
  }
  return f;
}

/**
 * The fields of a mesh data packet as the flow table sees them: it came in
 * on the port of the neighbour it came from (LOCAL when originated here);
 * it is TCP or UDP between the routers' addresses, and a TCP segment's
 * ports are read from its header. An unlabelled packet is IPv4 (10.hi.lo.1);
 * a labelled one is IPv6 (fd00::10.hi.lo.1) with its flow label, the QoS
 * tag a controller matches with ipv6_flabel. Mesh packets carry no
 * Ethernet addresses or VLAN. A hosts' IP packet (proto ip4 or ip6) offers
 * its own header's fields.
 */
export function packetFields(h: DataHeader, payload: Uint8Array, inFrom: number | undefined): PacketFields {
  const inPort = inFrom === undefined ? OFPP.LOCAL : portOfNeighbour(inFrom);
  if (h.proto === 'ip4' || h.proto === 'ip6') return ipFields(payload, inPort) ?? { inPort };
  const ipProto = h.proto === 'tcp' ? 6 : 17;
  const f: PacketFields = h.label
    ? { inPort, ethType: 0x86dd, ipProto, ipv6Src: meshIp6(h.src), ipv6Dst: meshIp6(h.dst), ipv6Flabel: h.label }
    : { inPort, ethType: 0x0800, ipProto, ipv4Src: meshIpv4(h.src), ipv4Dst: meshIpv4(h.dst) };
  if (h.proto === 'tcp' && payload.length >= 4) {
    f.tcpSrc = (payload[0]! << 8) | payload[1]!;
    f.tcpDst = (payload[2]! << 8) | payload[3]!;
  }
  return f;
}

/**
 * The OpenFlow flow table ahead of AODV (seeds/000 Fig. 4): a data packet
 * is looked up (following GOTO_TABLE through the tables); its apply-actions
 * as met, then its action set (the last output written, unless cleared),
 * and the first output among them decides: a neighbour's port sends it to that neighbour
 * (in the QoS queue of the last set_queue before that output, if any),
 * LOCAL or IN_PORT-to-self delivers it, CONTROLLER hands it to the
 * controller (and drops it here), no output drops it. A packet no entry
 * matches (and no table-miss entry) is left to AODV, so a router with an
 * empty table routes as before.
 */
export class FlowTableForwarder implements Forwarder {
  /** Packets handed to the controller; the agent sends them as PACKET_IN. */
  onController: (p: PacketToController) => void = () => undefined;
  readonly counters = { lookups: 0, matched: 0, toController: 0, dropped: 0 };

  constructor(
    private readonly tables: FlowTables,
    private readonly self: number,
  ) {}

  decide(header: DataHeader, payload: Uint8Array, inFrom: number | undefined, now: Micros): ForwardDecision | undefined {
    this.counters.lookups++;
    const fields = packetFields(header, payload, inFrom);
    const bytes = payload.length;
    let tableId = 0;
    let entry: FlowEntry | undefined;
    let matchedAny = false;
    // Apply-actions run as met; write-actions build the action set (one output: the last written),
    // which runs at the end of the pipeline. Within an entry the order is fixed (5.9):
    // apply, clear, write, goto.
    const applied: OfAction[] = [];
    let setOutput: OfAction | undefined;
    let setQueue: OfAction | undefined;
    for (let hops = 0; hops < 256; hops++) {
      entry = this.tables.lookup(tableId, fields, now, bytes);
      if (!entry) break;
      matchedAny = true;
      const of = <T extends OfInstruction['type']>(type: T): Extract<OfInstruction, { type: T }> | undefined =>
        entry!.instructions.find((i): i is Extract<OfInstruction, { type: T }> => i.type === type);
      applied.push(...(of('apply-actions')?.actions ?? []));
      if (of('clear-actions')) setOutput = setQueue = undefined;
      for (const a of of('write-actions')?.actions ?? []) {
        if (a.type === 'output') setOutput = a;
        else if (a.type === 'set-queue') setQueue = a;
      }
      const next = of('goto-table')?.tableId;
      if (next === undefined) break;
      tableId = next;
    }
    // Table 0 has nothing for it: AODV's. A miss further down the pipeline drops it, as OpenFlow does.
    if (!matchedAny) return undefined;
    this.counters.matched++;
    // The action set runs set_queue before output (5.10).
    const outputs = [...applied, ...(setQueue ? [setQueue] : []), ...(setOutput ? [setOutput] : [])];
    let queue: number | undefined;
    for (const a of outputs) {
      if (a.type === 'set-queue') queue = a.queueId;
      if (a.type !== 'output') continue;
      if (a.port === OFPP.CONTROLLER) {
        this.counters.toController++;
        this.onController({
          reason: entry?.tableMiss ? 'no-match' : 'action',
          tableId,
          cookie: entry?.cookie ?? 0n,
          inPort: fields.inPort ?? OFPP.LOCAL,
          fields,
          maxLen: a.maxLen,
          header,
          payload,
        });
        continue;
      }
      if (a.port === OFPP.LOCAL) return { kind: 'deliver' };
      // Back where it came from: to the neighbour, or delivered here when it was originated here.
      if (a.port === OFPP.IN_PORT) {
        if (inFrom === undefined) return { kind: 'deliver' };
        return queue === undefined ? { kind: 'next-hop', nextHop: inFrom } : { kind: 'next-hop', nextHop: inFrom, queue };
      }
      const n = neighbourOfPort(a.port);
      if (n !== undefined && n !== this.self) return queue === undefined ? { kind: 'next-hop', nextHop: n } : { kind: 'next-hop', nextHop: n, queue };
    }
    this.counters.dropped++;
    return { kind: 'drop' };
  }
}
