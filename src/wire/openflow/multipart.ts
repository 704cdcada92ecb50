import { RangeArgumentError } from '../../core/errors.js';
import { isUint } from '../bytes.js';
import { fail, type Reader, roundUp8, type Writer } from './buffer.js';
import { DESC_STR_LEN, OFP_MAX_PORT_NAME_LEN, OFP_MAX_TABLE_NAME_LEN, OFPBRC, OFPET, OFPMP, OFPTFFC, OFPTFPT, SERIAL_NUM_LEN } from './constants.js';
import type { OfErrorAnswer } from './errors.js';
import { readActions, readInstructions, writeActions, writeInstructions } from './instructions.js';
import { readMatch, readOxmId, writeMatch, writeOxmId } from './oxm.js';
import type {
  Bucket,
  FeatureId,
  FlowStats,
  FlowStatsRequest,
  GroupDesc,
  MultipartReplyBody,
  MultipartRequestBody,
  OfPort,
  PortStats,
  QueueStats,
  TableFeatureProp,
  TableFeatures,
  TableStats,
} from './types.js';

/**
 * Multipart bodies (OpenFlow 1.3.5 section 7.3.5), ofp_port and the table
 * features. Layouts (offsets within each structure):
 *
 *   FLOW / AGGREGATE request (ofp_flow_stats_request), 32 + match:
 *     table_id u8, pad 3, out_port u32, out_group u32, pad 4, cookie u64,
 *     cookie_mask u64, match
 *   ofp_flow_stats, 48 + match + instructions:
 *     length u16, table_id u8, pad 1, duration_sec u32, duration_nsec u32,
 *     priority u16, idle_timeout u16, hard_timeout u16, flags u16, pad 4,
 *     cookie u64, packet_count u64, byte_count u64, match, instructions
 *   ofp_aggregate_stats_reply, 24: packet_count u64, byte_count u64, flow_count u32, pad 4
 *   ofp_table_stats, 24: table_id u8, pad 3, active_count u32, lookup_count u64, matched_count u64
 *   PORT_STATS request, 8: port_no u32, pad 4
 *   ofp_port_stats, 112: port_no u32, pad 4, 12 x u64 counters, duration_sec u32, duration_nsec u32
 *   QUEUE request, 8: port_no u32, queue_id u32
 *   ofp_queue_stats, 40: port_no u32, queue_id u32, tx_bytes, tx_packets, tx_errors u64, duration_sec u32, duration_nsec u32
 *   ofp_desc, 1056: mfr_desc 256, hw_desc 256, sw_desc 256, serial_num 32, dp_desc 256
 *   ofp_port, 64: port_no u32, pad 4, hw_addr 6, pad 2, name 16, config, state,
 *     curr, advertised, supported, peer, curr_speed, max_speed (u32 each)
 *   ofp_group_desc, 8 + buckets: length u16, type u8, pad 1, group_id u32
 *   ofp_bucket, 16 + actions: len u16, weight u16, watch_port u32, watch_group u32, pad 4
 *   ofp_meter_features, 16: max_meter u32, band_types u32, capabilities u32, max_bands u8, max_color u8, pad 2
 *   ofp_table_features, 64 + properties: length u16, table_id u8, pad 5,
 *     name 32, metadata_match u64, metadata_write u64, config u32, max_entries u32
 *   table-feature property: type u16, length u16 (without padding), body,
 *     zeros to a multiple of 8. Instruction and action ids are 4 bytes
 *     (type, len = 4), experimenter ids (type 0xffff) 8 + n (type, len,
 *     experimenter u32, n bytes); next-table ids 1 byte; OXM ids 4 bytes
 *     (8 for class 0xffff)
 *   EXPERIMENTER body: experimenter u32, exp_type u32, data
 *
 * Request bodies that must be empty (DESC, TABLE, PORT_DESC, GROUP_DESC,
 * METER_FEATURES) and fixed-size ones must have exactly their size
 * (OFPBRC_BAD_LEN); lists must be whole entries. Length problems inside a
 * table-features body answer OFPET_TABLE_FEATURES_FAILED / OFPTFFC_BAD_LEN,
 * an unknown property type OFPTFFC_BAD_TYPE.
 */

const BAD_LEN: OfErrorAnswer = { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_LEN };
const TF_LEN: OfErrorAnswer = { type: OFPET.TABLE_FEATURES_FAILED, code: OFPTFFC.BAD_LEN };

export const FLOW_STATS_REQUEST_FIXED = 32;
export const FLOW_STATS_FIXED = 48;
export const AGGREGATE_REPLY_BYTES = 24;
export const TABLE_STATS_BYTES = 24;
export const PORT_STATS_BYTES = 112;
export const QUEUE_STATS_BYTES = 40;
export const DESC_BYTES = 1056;
export const PORT_BYTES = 64;
export const METER_FEATURES_BYTES = 16;
export const TABLE_FEATURES_FIXED = 64;
export const GROUP_DESC_FIXED = 8;
export const BUCKET_FIXED = 16;

const MP_TYPES: Record<Exclude<MultipartRequestBody['type'], 'unsupported'>, number> = {
  desc: OFPMP.DESC,
  flow: OFPMP.FLOW,
  aggregate: OFPMP.AGGREGATE,
  table: OFPMP.TABLE,
  'port-stats': OFPMP.PORT_STATS,
  queue: OFPMP.QUEUE,
  'group-desc': OFPMP.GROUP_DESC,
  'meter-features': OFPMP.METER_FEATURES,
  'table-features': OFPMP.TABLE_FEATURES,
  'port-desc': OFPMP.PORT_DESC,
  experimenter: OFPMP.EXPERIMENTER,
};

/** The OFPMP_* number of a body. */
export function multipartTypeOf(body: MultipartRequestBody | MultipartReplyBody, field: string): number {
  if (body === null || typeof body !== 'object') throw new RangeArgumentError(field, body, 'a multipart body');
  if (body.type === 'unsupported') {
    if (!isUint(body.mpType, 0xffff) || Object.values(MP_TYPES).includes(body.mpType)) {
      throw new RangeArgumentError(`${field}.mpType`, body.mpType, 'a u16 multipart type the codec does not read');
    }
    return body.mpType;
  }
  const t = Object.hasOwn(MP_TYPES, body.type) ? MP_TYPES[body.type] : undefined;
  if (t === undefined) throw new RangeArgumentError(`${field}.type`, (body as { type?: unknown }).type, 'a multipart body type');
  return t;
}

// ---------------------------------------------------------------------------
// Requests

export function writeRequestBody(w: Writer, body: MultipartRequestBody, field: string): void {
  switch (body.type) {
    case 'desc':
    case 'table':
    case 'group-desc':
    case 'meter-features':
    case 'port-desc':
      return;
    case 'flow':
    case 'aggregate':
      writeFlowStatsRequest(w, body.request, `${field}.request`);
      return;
    case 'port-stats':
      w.u32(body.portNo, `${field}.portNo`);
      w.zeros(4);
      return;
    case 'queue':
      w.u32(body.portNo, `${field}.portNo`);
      w.u32(body.queueId, `${field}.queueId`);
      return;
    case 'table-features':
      writeList(body.tables, `${field}.tables`, (t, f) => writeTableFeatures(w, t, f));
      return;
    case 'experimenter':
      writeExperimenterBody(w, body, field);
      return;
    case 'unsupported':
      w.bytes(body.data, `${field}.data`);
      return;
  }
}

export function readRequestBody(mpType: number, r: Reader): MultipartRequestBody {
  switch (mpType) {
    case OFPMP.DESC:
      r.done();
      return { type: 'desc' };
    case OFPMP.FLOW:
    case OFPMP.AGGREGATE: {
      const request = readFlowStatsRequest(r);
      r.done();
      return mpType === OFPMP.FLOW ? { type: 'flow', request } : { type: 'aggregate', request };
    }
    case OFPMP.TABLE:
      r.done();
      return { type: 'table' };
    case OFPMP.PORT_STATS: {
      const portNo = r.u32();
      r.pad(4);
      r.done();
      return { type: 'port-stats', portNo };
    }
    case OFPMP.QUEUE: {
      const portNo = r.u32();
      const queueId = r.u32();
      r.done();
      return { type: 'queue', portNo, queueId };
    }
    case OFPMP.GROUP_DESC:
      r.done();
      return { type: 'group-desc' };
    case OFPMP.METER_FEATURES:
      r.done();
      return { type: 'meter-features' };
    case OFPMP.TABLE_FEATURES:
      return { type: 'table-features', tables: readTableFeaturesList(r) };
    case OFPMP.PORT_DESC:
      r.done();
      return { type: 'port-desc' };
    case OFPMP.EXPERIMENTER:
      return { type: 'experimenter', experimenter: r.u32(), expType: r.u32(), data: r.rest() };
    default:
      return { type: 'unsupported', mpType, data: r.rest() };
  }
}

function writeFlowStatsRequest(w: Writer, q: FlowStatsRequest, field: string): void {
  if (q === null || typeof q !== 'object') throw new RangeArgumentError(field, q, 'a FlowStatsRequest');
  w.u8(q.tableId, `${field}.tableId`);
  w.zeros(3);
  w.u32(q.outPort, `${field}.outPort`);
  w.u32(q.outGroup, `${field}.outGroup`);
  w.zeros(4);
  w.u64(q.cookie, `${field}.cookie`);
  w.u64(q.cookieMask, `${field}.cookieMask`);
  writeMatch(w, q.match, `${field}.match`);
}

function readFlowStatsRequest(r: Reader): FlowStatsRequest {
  const tableId = r.u8();
  r.pad(3);
  const outPort = r.u32();
  const outGroup = r.u32();
  r.pad(4);
  const cookie = r.u64();
  const cookieMask = r.u64();
  const match = readMatch(r);
  return { tableId, outPort, outGroup, cookie, cookieMask, match };
}

function writeExperimenterBody(w: Writer, body: { experimenter: number; expType: number; data: Uint8Array }, field: string): void {
  w.u32(body.experimenter, `${field}.experimenter`);
  w.u32(body.expType, `${field}.expType`);
  w.bytes(body.data, `${field}.data`);
}

// ---------------------------------------------------------------------------
// Replies

export function writeReplyBody(w: Writer, body: MultipartReplyBody, field: string): void {
  switch (body.type) {
    case 'desc': {
      const d = body.desc;
      if (d === null || typeof d !== 'object') throw new RangeArgumentError(`${field}.desc`, d, 'a SwitchDesc');
      w.fixedString(d.mfrDesc, DESC_STR_LEN, `${field}.desc.mfrDesc`);
      w.fixedString(d.hwDesc, DESC_STR_LEN, `${field}.desc.hwDesc`);
      w.fixedString(d.swDesc, DESC_STR_LEN, `${field}.desc.swDesc`);
      w.fixedString(d.serialNum, SERIAL_NUM_LEN, `${field}.desc.serialNum`);
      w.fixedString(d.dpDesc, DESC_STR_LEN, `${field}.desc.dpDesc`);
      return;
    }
    case 'flow':
      writeList(body.stats, `${field}.stats`, (s, f) => writeFlowStats(w, s, f));
      return;
    case 'aggregate':
      w.u64(body.stats.packetCount, `${field}.stats.packetCount`);
      w.u64(body.stats.byteCount, `${field}.stats.byteCount`);
      w.u32(body.stats.flowCount, `${field}.stats.flowCount`);
      w.zeros(4);
      return;
    case 'table':
      writeList(body.stats, `${field}.stats`, (s, f) => writeTableStats(w, s, f));
      return;
    case 'port-stats':
      writeList(body.stats, `${field}.stats`, (s, f) => writePortStats(w, s, f));
      return;
    case 'queue':
      writeList(body.stats, `${field}.stats`, (s, f) => writeQueueStats(w, s, f));
      return;
    case 'group-desc':
      writeList(body.groups, `${field}.groups`, (g, f) => writeGroupDesc(w, g, f));
      return;
    case 'meter-features': {
      const m = body.features;
      w.u32(m.maxMeter, `${field}.features.maxMeter`);
      w.u32(m.bandTypes, `${field}.features.bandTypes`);
      w.u32(m.capabilities, `${field}.features.capabilities`);
      w.u8(m.maxBands, `${field}.features.maxBands`);
      w.u8(m.maxColor, `${field}.features.maxColor`);
      w.zeros(2);
      return;
    }
    case 'table-features':
      writeList(body.tables, `${field}.tables`, (t, f) => writeTableFeatures(w, t, f));
      return;
    case 'port-desc':
      writeList(body.ports, `${field}.ports`, (p, f) => writePort(w, p, f));
      return;
    case 'experimenter':
      writeExperimenterBody(w, body, field);
      return;
    case 'unsupported':
      w.bytes(body.data, `${field}.data`);
      return;
  }
}

export function readReplyBody(mpType: number, r: Reader): MultipartReplyBody {
  switch (mpType) {
    case OFPMP.DESC: {
      const s = (width: number, name: string): string => r.fixedString(width, name, BAD_LEN);
      const desc = {
        mfrDesc: s(DESC_STR_LEN, 'mfr_desc'),
        hwDesc: s(DESC_STR_LEN, 'hw_desc'),
        swDesc: s(DESC_STR_LEN, 'sw_desc'),
        serialNum: s(SERIAL_NUM_LEN, 'serial_num'),
        dpDesc: s(DESC_STR_LEN, 'dp_desc'),
      };
      r.done();
      return { type: 'desc', desc };
    }
    case OFPMP.FLOW: {
      const stats: FlowStats[] = [];
      while (r.remaining > 0) stats.push(readFlowStats(r));
      return { type: 'flow', stats };
    }
    case OFPMP.AGGREGATE: {
      const packetCount = r.u64();
      const byteCount = r.u64();
      const flowCount = r.u32();
      r.pad(4);
      r.done();
      return { type: 'aggregate', stats: { packetCount, byteCount, flowCount } };
    }
    case OFPMP.TABLE:
      return { type: 'table', stats: readFixedList(r, TABLE_STATS_BYTES, 'table stats', readTableStats) };
    case OFPMP.PORT_STATS:
      return { type: 'port-stats', stats: readFixedList(r, PORT_STATS_BYTES, 'port stats', readPortStats) };
    case OFPMP.QUEUE:
      return { type: 'queue', stats: readFixedList(r, QUEUE_STATS_BYTES, 'queue stats', readQueueStats) };
    case OFPMP.GROUP_DESC: {
      const groups: GroupDesc[] = [];
      while (r.remaining > 0) groups.push(readGroupDesc(r));
      return { type: 'group-desc', groups };
    }
    case OFPMP.METER_FEATURES: {
      const maxMeter = r.u32();
      const bandTypes = r.u32();
      const capabilities = r.u32();
      const maxBands = r.u8();
      const maxColor = r.u8();
      r.pad(2);
      r.done();
      return { type: 'meter-features', features: { maxMeter, bandTypes, capabilities, maxBands, maxColor } };
    }
    case OFPMP.TABLE_FEATURES:
      return { type: 'table-features', tables: readTableFeaturesList(r) };
    case OFPMP.PORT_DESC:
      return { type: 'port-desc', ports: readFixedList(r, PORT_BYTES, 'port', readPort) };
    case OFPMP.EXPERIMENTER:
      return { type: 'experimenter', experimenter: r.u32(), expType: r.u32(), data: r.rest() };
    default:
      return { type: 'unsupported', mpType, data: r.rest() };
  }
}

function writeList<T>(list: readonly T[], field: string, each: (item: T, field: string) => void): void {
  if (!Array.isArray(list)) throw new RangeArgumentError(field, list, 'an array');
  list.forEach((item, i) => {
    if (item === null || typeof item !== 'object') throw new RangeArgumentError(`${field}[${i}]`, item, 'an object');
    each(item, `${field}[${i}]`);
  });
}

function readFixedList<T>(r: Reader, size: number, what: string, read: (r: Reader) => T): T[] {
  if (r.remaining % size !== 0) {
    fail('OF_BAD_LENGTH', r.what, `${r.what}: ${r.remaining} bytes of ${what}, not a multiple of ${size}`, r.lenAnswer);
  }
  const out: T[] = [];
  while (r.remaining > 0) out.push(read(r.sub(size, what, r.lenAnswer)));
  return out;
}

/** A list entry that starts with its own u16 length: at least `min`, a multiple of 8, within the list. */
function entry(r: Reader, min: number, what: string, answer: OfErrorAnswer): Reader {
  if (r.remaining < 2) fail('OF_BAD_LENGTH', what, `${what}: ${r.remaining} bytes left, needs its length`, answer);
  const len = (r.b[r.pos]! << 8) | r.b[r.pos + 1]!;
  if (len < min || len % 8 !== 0 || len > r.remaining) {
    fail('OF_BAD_LENGTH', what, `${what} at offset ${r.pos}: length ${len}, needs a multiple of 8 in [${min}, ${r.remaining}]`, answer);
  }
  return r.sub(len, what, answer);
}

function writeFlowStats(w: Writer, s: FlowStats, field: string): void {
  const start = w.length;
  w.u16(0, `${field}.length`);
  w.u8(s.tableId, `${field}.tableId`);
  w.zeros(1);
  w.u32(s.durationSec, `${field}.durationSec`);
  w.u32(s.durationNsec, `${field}.durationNsec`);
  w.u16(s.priority, `${field}.priority`);
  w.u16(s.idleTimeout, `${field}.idleTimeout`);
  w.u16(s.hardTimeout, `${field}.hardTimeout`);
  w.u16(s.flags, `${field}.flags`);
  w.zeros(4);
  w.u64(s.cookie, `${field}.cookie`);
  w.u64(s.packetCount, `${field}.packetCount`);
  w.u64(s.byteCount, `${field}.byteCount`);
  writeMatch(w, s.match, `${field}.match`);
  writeInstructions(w, s.instructions, `${field}.instructions`);
  w.set16(start, w.length - start, `${field}.length`);
}

function readFlowStats(r: Reader): FlowStats {
  const e = entry(r, FLOW_STATS_FIXED + 8, 'flow stats', BAD_LEN);
  e.pos += 2;
  const tableId = e.u8();
  e.pad(1);
  const durationSec = e.u32();
  const durationNsec = e.u32();
  const priority = e.u16();
  const idleTimeout = e.u16();
  const hardTimeout = e.u16();
  const flags = e.u16();
  e.pad(4);
  const cookie = e.u64();
  const packetCount = e.u64();
  const byteCount = e.u64();
  const match = readMatch(e);
  const instructions = readInstructions(e);
  return { tableId, durationSec, durationNsec, priority, idleTimeout, hardTimeout, flags, cookie, packetCount, byteCount, match, instructions };
}

function writeTableStats(w: Writer, s: TableStats, field: string): void {
  w.u8(s.tableId, `${field}.tableId`);
  w.zeros(3);
  w.u32(s.activeCount, `${field}.activeCount`);
  w.u64(s.lookupCount, `${field}.lookupCount`);
  w.u64(s.matchedCount, `${field}.matchedCount`);
}

function readTableStats(r: Reader): TableStats {
  const tableId = r.u8();
  r.pad(3);
  return { tableId, activeCount: r.u32(), lookupCount: r.u64(), matchedCount: r.u64() };
}

const PORT_COUNTERS = [
  'rxPackets',
  'txPackets',
  'rxBytes',
  'txBytes',
  'rxDropped',
  'txDropped',
  'rxErrors',
  'txErrors',
  'rxFrameErr',
  'rxOverErr',
  'rxCrcErr',
  'collisions',
] as const satisfies readonly (keyof PortStats)[];

function writePortStats(w: Writer, s: PortStats, field: string): void {
  w.u32(s.portNo, `${field}.portNo`);
  w.zeros(4);
  for (const k of PORT_COUNTERS) w.u64(s[k], `${field}.${k}`);
  w.u32(s.durationSec, `${field}.durationSec`);
  w.u32(s.durationNsec, `${field}.durationNsec`);
}

function readPortStats(r: Reader): PortStats {
  const portNo = r.u32();
  r.pad(4);
  const c = PORT_COUNTERS.map(() => r.u64());
  return {
    portNo,
    rxPackets: c[0]!,
    txPackets: c[1]!,
    rxBytes: c[2]!,
    txBytes: c[3]!,
    rxDropped: c[4]!,
    txDropped: c[5]!,
    rxErrors: c[6]!,
    txErrors: c[7]!,
    rxFrameErr: c[8]!,
    rxOverErr: c[9]!,
    rxCrcErr: c[10]!,
    collisions: c[11]!,
    durationSec: r.u32(),
    durationNsec: r.u32(),
  };
}

function writeQueueStats(w: Writer, s: QueueStats, field: string): void {
  w.u32(s.portNo, `${field}.portNo`);
  w.u32(s.queueId, `${field}.queueId`);
  w.u64(s.txBytes, `${field}.txBytes`);
  w.u64(s.txPackets, `${field}.txPackets`);
  w.u64(s.txErrors, `${field}.txErrors`);
  w.u32(s.durationSec, `${field}.durationSec`);
  w.u32(s.durationNsec, `${field}.durationNsec`);
}

function readQueueStats(r: Reader): QueueStats {
  return {
    portNo: r.u32(),
    queueId: r.u32(),
    txBytes: r.u64(),
    txPackets: r.u64(),
    txErrors: r.u64(),
    durationSec: r.u32(),
    durationNsec: r.u32(),
  };
}

function writeGroupDesc(w: Writer, g: GroupDesc, field: string): void {
  const start = w.length;
  w.u16(0, `${field}.length`);
  w.u8(g.groupType, `${field}.groupType`);
  w.zeros(1);
  w.u32(g.groupId, `${field}.groupId`);
  writeList(g.buckets, `${field}.buckets`, (b, f) => writeBucket(w, b, f));
  w.set16(start, w.length - start, `${field}.length`);
}

function readGroupDesc(r: Reader): GroupDesc {
  const e = entry(r, GROUP_DESC_FIXED, 'group desc', BAD_LEN);
  e.pos += 2;
  const groupType = e.u8();
  e.pad(1);
  const groupId = e.u32();
  const buckets: Bucket[] = [];
  while (e.remaining > 0) buckets.push(readBucket(e));
  return { groupType, groupId, buckets };
}

function writeBucket(w: Writer, b: Bucket, field: string): void {
  const start = w.length;
  w.u16(0, `${field}.len`);
  w.u16(b.weight, `${field}.weight`);
  w.u32(b.watchPort, `${field}.watchPort`);
  w.u32(b.watchGroup, `${field}.watchGroup`);
  w.zeros(4);
  writeActions(w, b.actions, `${field}.actions`);
  w.set16(start, w.length - start, `${field}.len`);
}

function readBucket(r: Reader): Bucket {
  const e = entry(r, BUCKET_FIXED, 'bucket', BAD_LEN);
  e.pos += 2;
  const weight = e.u16();
  const watchPort = e.u32();
  const watchGroup = e.u32();
  e.pad(4);
  return { weight, watchPort, watchGroup, actions: readActions(e) };
}

// ---------------------------------------------------------------------------
// ofp_port

export function writePort(w: Writer, p: OfPort, field: string): void {
  if (p === null || typeof p !== 'object') throw new RangeArgumentError(field, p, 'an OfPort');
  w.u32(p.portNo, `${field}.portNo`);
  w.zeros(4);
  w.fixedBytes(p.hwAddr, 6, `${field}.hwAddr`);
  w.zeros(2);
  w.fixedString(p.name, OFP_MAX_PORT_NAME_LEN, `${field}.name`);
  w.u32(p.config, `${field}.config`);
  w.u32(p.state, `${field}.state`);
  w.u32(p.curr, `${field}.curr`);
  w.u32(p.advertised, `${field}.advertised`);
  w.u32(p.supported, `${field}.supported`);
  w.u32(p.peer, `${field}.peer`);
  w.u32(p.currSpeed, `${field}.currSpeed`);
  w.u32(p.maxSpeed, `${field}.maxSpeed`);
}

export function readPort(r: Reader): OfPort {
  const portNo = r.u32();
  r.pad(4);
  const hwAddr = r.copy(6);
  r.pad(2);
  const name = r.fixedString(OFP_MAX_PORT_NAME_LEN, 'name', r.lenAnswer);
  return {
    portNo,
    hwAddr,
    name,
    config: r.u32(),
    state: r.u32(),
    curr: r.u32(),
    advertised: r.u32(),
    supported: r.u32(),
    peer: r.u32(),
    currSpeed: r.u32(),
    maxSpeed: r.u32(),
  };
}

// ---------------------------------------------------------------------------
// Table features

const PROP_TYPES: Record<TableFeatureProp['type'], number> = {
  instructions: OFPTFPT.INSTRUCTIONS,
  'instructions-miss': OFPTFPT.INSTRUCTIONS_MISS,
  'next-tables': OFPTFPT.NEXT_TABLES,
  'next-tables-miss': OFPTFPT.NEXT_TABLES_MISS,
  'write-actions': OFPTFPT.WRITE_ACTIONS,
  'write-actions-miss': OFPTFPT.WRITE_ACTIONS_MISS,
  'apply-actions': OFPTFPT.APPLY_ACTIONS,
  'apply-actions-miss': OFPTFPT.APPLY_ACTIONS_MISS,
  match: OFPTFPT.MATCH,
  wildcards: OFPTFPT.WILDCARDS,
  'write-setfield': OFPTFPT.WRITE_SETFIELD,
  'write-setfield-miss': OFPTFPT.WRITE_SETFIELD_MISS,
  'apply-setfield': OFPTFPT.APPLY_SETFIELD,
  'apply-setfield-miss': OFPTFPT.APPLY_SETFIELD_MISS,
  experimenter: OFPTFPT.EXPERIMENTER,
  'experimenter-miss': OFPTFPT.EXPERIMENTER_MISS,
};
const PROP_NAMES = new Map<number, TableFeatureProp['type']>(Object.entries(PROP_TYPES).map(([k, v]) => [v, k as TableFeatureProp['type']]));

function writeTableFeatures(w: Writer, t: TableFeatures, field: string): void {
  const start = w.length;
  w.u16(0, `${field}.length`);
  w.u8(t.tableId, `${field}.tableId`);
  w.zeros(5);
  w.fixedString(t.name, OFP_MAX_TABLE_NAME_LEN, `${field}.name`);
  w.u64(t.metadataMatch, `${field}.metadataMatch`);
  w.u64(t.metadataWrite, `${field}.metadataWrite`);
  w.u32(t.config, `${field}.config`);
  w.u32(t.maxEntries, `${field}.maxEntries`);
  writeList(t.properties, `${field}.properties`, (p, f) => writeProp(w, p, f));
  w.set16(start, w.length - start, `${field}.length`);
}

function writeProp(w: Writer, p: TableFeatureProp, field: string): void {
  const type = Object.hasOwn(PROP_TYPES, p.type) ? PROP_TYPES[p.type] : undefined;
  if (type === undefined) throw new RangeArgumentError(`${field}.type`, p.type, 'a table-feature property type');
  const start = w.length;
  w.u16(type, `${field}.type`);
  w.u16(0, `${field}.length`);
  switch (p.type) {
    case 'instructions':
    case 'instructions-miss':
    case 'write-actions':
    case 'write-actions-miss':
    case 'apply-actions':
    case 'apply-actions-miss':
      writeList(p.ids, `${field}.ids`, (id, f) => writeFeatureId(w, id, f));
      break;
    case 'next-tables':
    case 'next-tables-miss':
      if (!Array.isArray(p.tableIds)) throw new RangeArgumentError(`${field}.tableIds`, p.tableIds, 'an array of table ids');
      p.tableIds.forEach((id, i) => w.u8(id, `${field}.tableIds[${i}]`));
      break;
    case 'match':
    case 'wildcards':
    case 'write-setfield':
    case 'write-setfield-miss':
    case 'apply-setfield':
    case 'apply-setfield-miss':
      writeList(p.oxmIds, `${field}.oxmIds`, (id, f) => writeOxmId(w, id, f));
      break;
    case 'experimenter':
    case 'experimenter-miss':
      writeExperimenterBody(w, p, field);
      break;
  }
  w.set16(start + 2, w.length - start, `${field}.length`);
  w.padTo8(start);
}

function writeFeatureId(w: Writer, id: FeatureId, field: string): void {
  w.u16(id.type, `${field}.type`);
  if (id.type === 0xffff) {
    if (id.experimenter === undefined) throw new RangeArgumentError(`${field}.experimenter`, undefined, 'an experimenter id (type 0xffff)');
    const data = id.data ?? new Uint8Array(0);
    w.u16(8 + data.length, `${field}.len`);
    w.u32(id.experimenter, `${field}.experimenter`);
    w.bytes(data, `${field}.data`);
  } else {
    if (id.experimenter !== undefined || (id.data !== undefined && id.data.length > 0)) {
      throw new RangeArgumentError(`${field}.experimenter`, id.experimenter, 'absent unless type is 0xffff');
    }
    w.u16(4, `${field}.len`);
  }
}

function readTableFeaturesList(r: Reader): TableFeatures[] {
  const out: TableFeatures[] = [];
  while (r.remaining > 0) out.push(readTableFeatures(r));
  return out;
}

function readTableFeatures(r: Reader): TableFeatures {
  const e = entry(r, TABLE_FEATURES_FIXED, 'table features', TF_LEN);
  e.pos += 2;
  const tableId = e.u8();
  e.pad(5);
  const name = e.fixedString(OFP_MAX_TABLE_NAME_LEN, 'name', { type: OFPET.TABLE_FEATURES_FAILED, code: OFPTFFC.BAD_ARGUMENT });
  const metadataMatch = e.u64();
  const metadataWrite = e.u64();
  const config = e.u32();
  const maxEntries = e.u32();
  const properties: TableFeatureProp[] = [];
  while (e.remaining > 0) properties.push(readProp(e));
  return { tableId, name, metadataMatch, metadataWrite, config, maxEntries, properties };
}

function readProp(r: Reader): TableFeatureProp {
  const at = r.pos;
  if (r.remaining < 4) fail('OF_BAD_LENGTH', 'table feature property', `property at offset ${at}: ${r.remaining} bytes, a header needs 4`, TF_LEN);
  const type = (r.b[at]! << 8) | r.b[at + 1]!;
  const length = (r.b[at + 2]! << 8) | r.b[at + 3]!;
  if (length < 4 || roundUp8(length) > r.remaining) {
    fail(
      'OF_BAD_LENGTH',
      'table feature property',
      `property type ${type} at offset ${at}: length ${length} (padded ${roundUp8(length)}), ${r.remaining} bytes left`,
      TF_LEN,
    );
  }
  const name = PROP_NAMES.get(type);
  if (name === undefined) {
    fail('OF_UNSUPPORTED', 'table feature property', `property type ${type} is not an OpenFlow 1.3 table-feature property`, {
      type: OFPET.TABLE_FEATURES_FAILED,
      code: OFPTFFC.BAD_TYPE,
    });
  }
  const whole = r.sub(roundUp8(length), 'table feature property', TF_LEN);
  whole.pos += 4;
  const p = whole.sub(length - 4, `${name} property`, TF_LEN);
  whole.pad(whole.remaining);
  switch (name) {
    case 'instructions':
    case 'instructions-miss':
    case 'write-actions':
    case 'write-actions-miss':
    case 'apply-actions':
    case 'apply-actions-miss': {
      const ids: FeatureId[] = [];
      while (p.remaining > 0) ids.push(readFeatureId(p));
      return { type: name, ids };
    }
    case 'next-tables':
    case 'next-tables-miss':
      return { type: name, tableIds: Array.from(p.rest()) };
    case 'match':
    case 'wildcards':
    case 'write-setfield':
    case 'write-setfield-miss':
    case 'apply-setfield':
    case 'apply-setfield-miss': {
      const oxmIds = [];
      while (p.remaining > 0) oxmIds.push(readOxmId(p));
      return { type: name, oxmIds };
    }
    case 'experimenter':
    case 'experimenter-miss':
      return { type: name, experimenter: p.u32(), expType: p.u32(), data: p.rest() };
  }
}

function readFeatureId(r: Reader): FeatureId {
  const at = r.pos;
  const type = r.u16();
  const len = r.u16();
  if (type === 0xffff) {
    if (len < 8 || len - 4 > r.remaining) fail('OF_BAD_LENGTH', r.what, `${r.what}: experimenter id at offset ${at} has length ${len}`, TF_LEN);
    const experimenter = r.u32();
    return { type, experimenter, data: r.copy(len - 8) };
  }
  if (len !== 4) fail('OF_BAD_LENGTH', r.what, `${r.what}: id type ${type} at offset ${at} has length ${len}, needs 4`, TF_LEN);
  return { type };
}
