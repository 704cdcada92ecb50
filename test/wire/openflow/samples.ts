import { OFP_NO_BUFFER, OFPCML_NO_BUFFER, OFPG_ANY, OFPP, OFPQ_ALL, OFPTT_ALL, type FlowMod } from '../../../src/wire/openflow/actions.js';
import type { OfMatch } from '../../../src/wire/openflow/match.js';
import { OFPC, OFPMPF_REPLY_MORE, OFPMPF_REQ_MORE, OFPPF, OFPPS } from '../../../src/wire/openflow/constants.js';
import type { MultipartReplyBody, MultipartRequestBody, OfMessage, OfPacketQueue, OfPort } from '../../../src/wire/openflow/types.js';
import { sampleQueues, sampleTableFeatures } from './fake-switch.js';

/** Test values for the OpenFlow codec: at least one of every message type and multipart body. */

export const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/[\s:]+/g, ''), 'hex'));
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const bytes = (...v: number[]): Uint8Array => Uint8Array.from(v);

/** An ARP request from 02:00:00:00:00:01 (10.0.0.1) for 10.0.0.2: a 42-byte Ethernet frame. */
export const ARP_REQUEST = hex('ffffffffffff020000000001080600010800060400010200000000010a0000010000000000000a000002');

export const MAC_A = bytes(0x02, 0x00, 0x00, 0x00, 0x00, 0x01);
export const MAC_B = bytes(0x02, 0x00, 0x00, 0x00, 0x00, 0x02);
export const V6_A = hex('20010db8000000000000000000000001');
export const V6_B = hex('20010db8000000000000000000000002');
export const V6_MASK32 = hex('ffffffff000000000000000000000000');

/** Every OfMatch field at once, the maskable ones masked (two matches: IPv4 and IPv6 flavours). */
export const FULL_MATCH_V4: OfMatch = {
  inPort: 7,
  ethSrc: { value: hex('020000000000'), mask: hex('ffffffffff00') },
  ethDst: { value: MAC_B },
  ethType: 0x0800,
  vlanVid: { value: 0x1005, mask: 0x1fff },
  ipv4Src: { value: 0x0a000000, mask: 0xff000000 },
  ipv4Dst: { value: 0x0a000002 },
  ipDscp: 46,
  ipProto: 6,
  tcpSrc: 1234,
  tcpDst: 80,
};

export const FULL_MATCH_V6: OfMatch = {
  ethType: 0x86dd,
  ipv6Src: { value: hex('20010db8000000000000000000000000'), mask: V6_MASK32 },
  ipv6Dst: { value: V6_B },
  ipv6Flabel: { value: 0x12345, mask: 0xfffff },
  ipProto: 17,
  udpSrc: 53,
  udpDst: 5353,
};

export const FLOW_MOD: FlowMod = {
  cookie: 0x1234_5678_9abc_def0n,
  cookieMask: 0n,
  tableId: 0,
  command: 'add',
  idleTimeout: 30,
  hardTimeout: 600,
  priority: 1000,
  bufferId: OFP_NO_BUFFER,
  outPort: OFPP.ANY,
  outGroup: OFPG_ANY,
  flags: 1,
  match: FULL_MATCH_V4,
  instructions: [
    { type: 'meter', meterId: 3 },
    {
      type: 'apply-actions',
      actions: [
        { type: 'set-field', field: { ipDscp: 10 } },
        { type: 'set-field', field: { ethDst: { value: MAC_A } } },
        { type: 'set-field', field: { ipv4Dst: { value: 0x0a000009 } } },
        { type: 'dec-nw-ttl' },
        { type: 'set-queue', queueId: 2 },
        { type: 'output', port: 3, maxLen: 0 },
        { type: 'output', port: OFPP.CONTROLLER, maxLen: OFPCML_NO_BUFFER },
      ],
    },
    { type: 'clear-actions' },
    {
      type: 'write-actions',
      actions: [
        { type: 'group', groupId: 9 },
        { type: 'unsupported', actionType: 17, body: bytes(0x81, 0x00, 0, 0) },
      ],
    },
    { type: 'write-metadata', metadata: 0xffn, mask: 0xffff_ffff_ffff_ffffn },
    { type: 'goto-table', tableId: 1 },
  ],
};

/** A FLOW_MOD with an instruction type cogmesh does not know (and Open vSwitch refuses). */
export const ODD_FLOW_MOD: FlowMod = {
  ...FLOW_MOD,
  instructions: [
    { type: 'unsupported', instructionType: 0xffff, body: bytes(0, 0, 0x23, 0x20) },
    { type: 'apply-actions', actions: [{ type: 'unsupported', actionType: 0xffff, body: bytes(0, 0, 0x23, 0x20, 0, 0, 0, 0, 0, 0, 0, 0) }] },
  ],
};

export const PORT: OfPort = {
  portNo: 1,
  hwAddr: MAC_A,
  name: 'mesh0-n3',
  config: 0,
  state: OFPPS.LIVE,
  curr: OFPPF.OTHER | OFPPF.FIBER,
  advertised: 0,
  supported: OFPPF.OTHER,
  peer: 0,
  currSpeed: 27_000,
  maxSpeed: 54_000,
};

const FLOW_REQ = {
  tableId: OFPTT_ALL,
  outPort: OFPP.ANY,
  outGroup: OFPG_ANY,
  cookie: 0x10n,
  cookieMask: 0xffn,
  match: { ethType: 0x0800, ipProto: 6, tcpDst: 80 },
};

export const REQUEST_BODIES: MultipartRequestBody[] = [
  { type: 'desc' },
  { type: 'flow', request: FLOW_REQ },
  { type: 'aggregate', request: { ...FLOW_REQ, match: {} } },
  { type: 'table' },
  { type: 'port-stats', portNo: OFPP.ANY },
  { type: 'queue', portNo: 3, queueId: OFPQ_ALL },
  { type: 'group-desc' },
  { type: 'meter-features' },
  { type: 'table-features', tables: [] },
  { type: 'table-features', tables: [sampleTableFeatures(0), sampleTableFeatures(1)] },
  { type: 'port-desc' },
  { type: 'experimenter', experimenter: 0x2320, expType: 1, data: bytes(1, 2, 3) },
  { type: 'unsupported', mpType: 6, data: bytes(0, 0, 0, 1, 0, 0, 0, 0) },
];

export const REPLY_BODIES: MultipartReplyBody[] = [
  { type: 'desc', desc: { mfrDesc: 'cogmesh project', hwDesc: 'software radio', swDesc: 'cogmesh 0.1.0', serialNum: 'SN-0001', dpDesc: 'node 3 — mesh' } },
  {
    type: 'flow',
    stats: [
      {
        tableId: 0,
        durationSec: 12,
        durationNsec: 500_000_000,
        priority: 100,
        idleTimeout: 0,
        hardTimeout: 0,
        flags: 0,
        cookie: 5n,
        packetCount: 10n,
        byteCount: 1000n,
        match: FULL_MATCH_V6,
        instructions: FLOW_MOD.instructions,
      },
      {
        tableId: 1,
        durationSec: 1,
        durationNsec: 2,
        priority: 0,
        idleTimeout: 10,
        hardTimeout: 20,
        flags: 3,
        cookie: 0n,
        packetCount: 0xffff_ffff_ffff_ffffn,
        byteCount: 0n,
        match: {},
        instructions: [],
      },
    ],
  },
  { type: 'flow', stats: [] },
  { type: 'aggregate', stats: { packetCount: 123n, byteCount: 45678n, flowCount: 9 } },
  {
    type: 'table',
    stats: [
      { tableId: 0, activeCount: 4, lookupCount: 100n, matchedCount: 90n },
      { tableId: 1, activeCount: 0, lookupCount: 10n, matchedCount: 0n },
    ],
  },
  {
    type: 'port-stats',
    stats: [
      {
        portNo: 1,
        rxPackets: 1n,
        txPackets: 2n,
        rxBytes: 3n,
        txBytes: 4n,
        rxDropped: 5n,
        txDropped: 6n,
        rxErrors: 7n,
        txErrors: 8n,
        rxFrameErr: 9n,
        rxOverErr: 10n,
        rxCrcErr: 11n,
        collisions: 0xffff_ffff_ffff_ffffn,
        durationSec: 100,
        durationNsec: 999_999_999,
      },
    ],
  },
  {
    type: 'queue',
    stats: [
      { portNo: 1, queueId: 0, txBytes: 1000n, txPackets: 10n, txErrors: 0n, durationSec: 5, durationNsec: 6 },
      { portNo: 2, queueId: 1, txBytes: 0n, txPackets: 0n, txErrors: 1n, durationSec: 0, durationNsec: 0 },
    ],
  },
  {
    type: 'group-desc',
    groups: [
      {
        groupType: 1,
        groupId: 7,
        buckets: [
          { weight: 50, watchPort: OFPP.ANY, watchGroup: OFPG_ANY, actions: [{ type: 'output', port: 2, maxLen: 0 }] },
          {
            weight: 50,
            watchPort: OFPP.ANY,
            watchGroup: OFPG_ANY,
            actions: [
              { type: 'set-queue', queueId: 1 },
              { type: 'output', port: 3, maxLen: 0 },
            ],
          },
        ],
      },
      { groupType: 0, groupId: 8, buckets: [] },
    ],
  },
  { type: 'meter-features', features: { maxMeter: 64, bandTypes: 3, capabilities: 0xf, maxBands: 2, maxColor: 0 } },
  { type: 'table-features', tables: [sampleTableFeatures(0)] },
  { type: 'port-desc', ports: [PORT, { ...PORT, portNo: OFPP.LOCAL, name: 'mesh0-local', hwAddr: MAC_B, config: 1, state: 1 }] },
  { type: 'port-desc', ports: [] },
  { type: 'experimenter', experimenter: 0x2320, expType: 2, data: new Uint8Array(0) },
  // OFPMP_METER: one ofp_meter_stats (meter 1, 40 bytes, no bands).
  { type: 'unsupported', mpType: 9, data: hex('00000001 0028 000000000000 00000002 0000000000000003 0000000000000004 00000005 00000006') },
];

/** Queues with every property type, several on one port, one without properties, one on a port the reply does not name. */
export const QUEUES: OfPacketQueue[] = [
  ...sampleQueues(),
  {
    queueId: 0xfffffffe,
    portNo: 3,
    properties: [
      { type: 'max-rate', rate: 0 },
      { type: 'experimenter', experimenter: 0x00c06e54, data: new Uint8Array(0) },
      { type: 'min-rate', rate: 1000 },
      { type: 'experimenter', experimenter: 1, data: hex('0102030405060708 090a0b0c0d0e0f10') },
      { type: 'max-rate', rate: 0xffff },
    ],
  },
];

/**
 * Samples Open vSwitch cannot print (so the ofp-print check skips them):
 * experimenter messages and bodies (it decodes only the experimenter ids
 * and subtypes it knows), a type OpenFlow does not define, an instruction
 * it refuses.
 */
export function ovsCannotPrint(m: OfMessage): boolean {
  if (m.type === 'experimenter' || m.type === 'unknown') return m.type === 'experimenter' || m.msgType > 29;
  if (m.type === 'flow-mod') return m.mod === ODD_FLOW_MOD;
  if (m.type === 'multipart-request' || m.type === 'multipart-reply') return m.body.type === 'experimenter';
  return false;
}

/** One or more of every message type. */
export const MESSAGES: OfMessage[] = [
  { type: 'hello', version: 4, xid: 1, elements: [{ type: 'version-bitmap', bitmaps: [0x10] }] },
  { type: 'hello', version: 4, xid: 2, elements: [] },
  { type: 'hello', version: 1, xid: 3, elements: [] },
  {
    type: 'hello',
    version: 6,
    xid: 4,
    elements: [
      { type: 'unknown', elemType: 9, data: bytes(1, 2, 3) },
      { type: 'version-bitmap', bitmaps: [0x52, 0x1] },
    ],
  },
  { type: 'error', xid: 5, errType: 1, code: 6, data: hex('0414000800000005') },
  { type: 'error', xid: 5, errType: 0, code: 0, data: new TextEncoder().encode('no common version') },
  { type: 'error-experimenter', xid: 6, expCode: 3, experimenter: 0x2320, data: hex('0414000800000006') },
  { type: 'echo-request', xid: 7, data: new Uint8Array(0) },
  { type: 'echo-request', xid: 8, data: bytes(1, 2, 3, 4, 5) },
  { type: 'echo-reply', xid: 8, data: bytes(1, 2, 3, 4, 5) },
  { type: 'experimenter', xid: 9, experimenter: 0x2320, expType: 16, data: bytes(0xde, 0xad) },
  { type: 'features-request', xid: 10 },
  {
    type: 'features-reply',
    xid: 10,
    datapathId: 0x0000_0200_0000_0003n,
    nBuffers: 256,
    nTables: 2,
    auxiliaryId: 0,
    capabilities: OFPC.FLOW_STATS | OFPC.TABLE_STATS | OFPC.PORT_STATS | OFPC.QUEUE_STATS,
  },
  { type: 'get-config-request', xid: 11 },
  { type: 'get-config-reply', xid: 11, flags: 0, missSendLen: 128 },
  { type: 'set-config', xid: 12, flags: 1, missSendLen: 0xffff },
  {
    type: 'packet-in',
    xid: 0,
    bufferId: OFP_NO_BUFFER,
    totalLen: 42,
    reason: 'no-match',
    tableId: 0,
    cookie: 0xffff_ffff_ffff_ffffn,
    match: { inPort: 3 },
    data: ARP_REQUEST,
  },
  { type: 'packet-in', xid: 0, bufferId: 17, totalLen: 1500, reason: 'action', tableId: 1, cookie: 7n, match: FULL_MATCH_V6, data: new Uint8Array(0) },
  { type: 'packet-in', xid: 0, bufferId: 18, totalLen: 64, reason: 'invalid-ttl', tableId: 2, cookie: 0n, match: {}, data: ARP_REQUEST },
  {
    type: 'flow-removed',
    xid: 0,
    cookie: 5n,
    priority: 100,
    reason: 'idle-timeout',
    tableId: 0,
    durationSec: 30,
    durationNsec: 1,
    idleTimeout: 30,
    hardTimeout: 0,
    packetCount: 12n,
    byteCount: 3400n,
    match: FULL_MATCH_V4,
  },
  {
    type: 'flow-removed',
    xid: 0,
    cookie: 0n,
    priority: 0,
    reason: 'group-delete',
    tableId: 3,
    durationSec: 0,
    durationNsec: 0,
    idleTimeout: 0,
    hardTimeout: 0,
    packetCount: 0n,
    byteCount: 0n,
    match: {},
  },
  { type: 'port-status', xid: 0, reason: 'add', port: PORT },
  { type: 'port-status', xid: 0, reason: 'modify', port: { ...PORT, currSpeed: 13_500 } },
  { type: 'port-status', xid: 0, reason: 'delete', port: { ...PORT, state: OFPPS.LINK_DOWN } },
  {
    type: 'packet-out',
    xid: 13,
    bufferId: OFP_NO_BUFFER,
    inPort: OFPP.CONTROLLER,
    actions: [{ type: 'output', port: OFPP.FLOOD, maxLen: 0 }],
    data: ARP_REQUEST,
  },
  { type: 'packet-out', xid: 14, bufferId: 17, inPort: 1, actions: [], data: new Uint8Array(0) },
  { type: 'flow-mod', xid: 15, mod: FLOW_MOD },
  { type: 'flow-mod', xid: 16, mod: { ...FLOW_MOD, command: 'delete-strict', match: FULL_MATCH_V6, instructions: [] } },
  { type: 'flow-mod', xid: 17, mod: { ...FLOW_MOD, command: 'modify', match: {}, instructions: [{ type: 'goto-table', tableId: 2 }] } },
  { type: 'flow-mod', xid: 18, mod: { ...FLOW_MOD, command: 'modify-strict' } },
  { type: 'flow-mod', xid: 19, mod: { ...FLOW_MOD, command: 'delete', tableId: OFPTT_ALL, match: {}, instructions: [] } },
  { type: 'flow-mod', xid: 27, mod: ODD_FLOW_MOD },
  { type: 'barrier-request', xid: 20 },
  { type: 'barrier-reply', xid: 20 },
  { type: 'role-request', xid: 21, role: 'master', generationId: 5n },
  { type: 'role-reply', xid: 21, role: 'master', generationId: 5n },
  { type: 'role-request', xid: 22, role: 'nochange', generationId: 0n },
  { type: 'role-reply', xid: 23, role: 'slave', generationId: 0xffff_ffff_ffff_ffffn },
  { type: 'role-reply', xid: 24, role: 'equal', generationId: 1n },
  { type: 'get-async-request', xid: 25 },
  { type: 'get-async-reply', xid: 25, config: { packetInMask: [3, 0], portStatusMask: [7, 7], flowRemovedMask: [0xf, 0] } },
  { type: 'set-async', xid: 26, config: { packetInMask: [1, 0], portStatusMask: [7, 0], flowRemovedMask: [0, 0] } },
  ...REQUEST_BODIES.map((body, i): OfMessage => ({ type: 'multipart-request', xid: 100 + i, flags: i === 1 ? OFPMPF_REQ_MORE : 0, body })),
  ...REPLY_BODIES.map((body, i): OfMessage => ({ type: 'multipart-reply', xid: 200 + i, flags: i === 1 ? OFPMPF_REPLY_MORE : 0, body })),
  { type: 'queue-get-config-request', xid: 32, portNo: 1 },
  { type: 'queue-get-config-request', xid: 33, portNo: OFPP.ANY },
  { type: 'queue-get-config-reply', xid: 32, portNo: 1, queues: QUEUES.filter((q) => q.portNo === 1) },
  { type: 'queue-get-config-reply', xid: 33, portNo: OFPP.ANY, queues: QUEUES },
  { type: 'queue-get-config-reply', xid: 34, portNo: 5, queues: [] },
  { type: 'unknown', xid: 30, msgType: 16, body: hex('00000001 00000000 020000000001 0000 00000001 00000001 00000000 00000000') },
  { type: 'unknown', xid: 31, msgType: 200, body: new Uint8Array(0) },
];
