import type { FlowMod, FlowRemovedReason, OfAction, OfInstruction } from './actions.js';
import type { OfMatch } from './match.js';

/**
 * The OpenFlow 1.3 messages cogmesh's agent sends and receives, as typed
 * values (OpenFlow Switch Specification 1.3.5, section 7). `codec.ts` turns
 * them into bytes and back. Every message carries its header's xid; only
 * HELLO carries a version (the agent negotiates with it), every other
 * message is version 0x04.
 *
 * Conventions: 64-bit fields (datapath id, cookies, counters, metadata) are
 * bigint; everything else is number. `data` fields of parsed messages are
 * views into the parsed bytes (no copy), like the TCP codec's payload; the
 * values inside a match (MAC and IPv6 addresses) are copies, so a flow
 * table may keep them.
 */

export type { FlowMod, OfAction, OfInstruction, OfMatch };

// ---------------------------------------------------------------------------
// Parts

/** A HELLO element (ofp_hello_elem_header). */
export type HelloElement =
  /** OFPHET_VERSIONBITMAP (1): bit v of bitmaps[v >> 5] set: version v supported. */
  | { type: 'version-bitmap'; bitmaps: number[] }
  /** Any other element type: carried as is (a receiver skips elements it does not know). */
  | { type: 'unknown'; elemType: number; data: Uint8Array };

/** ofp_port (64 bytes). Speeds in kbps. */
export interface OfPort {
  portNo: number;
  /** 6 bytes. */
  hwAddr: Uint8Array;
  /** At most 15 bytes of UTF-8 (the wire field is 16 bytes, NUL-terminated). */
  name: string;
  /** OFPPC_* bits. */
  config: number;
  /** OFPPS_* bits. */
  state: number;
  /** OFPPF_* bits. */
  curr: number;
  advertised: number;
  supported: number;
  peer: number;
  currSpeed: number;
  maxSpeed: number;
}

export type PacketInReason = 'no-match' | 'action' | 'invalid-ttl';
export type PortReason = 'add' | 'delete' | 'modify';
/** ofp_controller_role. */
export type ControllerRole = 'nochange' | 'equal' | 'master' | 'slave';

/**
 * An entry of an instruction-ids or action-ids table-feature property: the
 * type alone (4 bytes on the wire), or for the experimenter type (0xffff)
 * the experimenter id and any further bytes of the id (8 + data bytes on
 * the wire). `experimenter` is required with type 0xffff and refused with
 * any other; parsing an experimenter id always sets `data` (maybe empty).
 */
export interface FeatureId {
  type: number;
  experimenter?: number;
  data?: Uint8Array;
}

/**
 * An OXM id (a match, wildcards or set-field table-feature property entry):
 * an OXM header without a value; experimenter class (0xffff) ids carry the
 * experimenter id after the header (and `length` counts its 4 bytes).
 */
export interface OxmId {
  oxmClass: number;
  field: number;
  hasMask: boolean;
  length: number;
  experimenter?: number;
}

/** A table-feature property (ofp_table_feature_prop_*). The `-miss` forms describe the table-miss flow entry. */
export type TableFeatureProp =
  | { type: 'instructions' | 'instructions-miss'; ids: FeatureId[] }
  | { type: 'next-tables' | 'next-tables-miss'; tableIds: number[] }
  | { type: 'write-actions' | 'write-actions-miss' | 'apply-actions' | 'apply-actions-miss'; ids: FeatureId[] }
  | {
      type: 'match' | 'wildcards' | 'write-setfield' | 'write-setfield-miss' | 'apply-setfield' | 'apply-setfield-miss';
      oxmIds: OxmId[];
    }
  | { type: 'experimenter' | 'experimenter-miss'; experimenter: number; expType: number; data: Uint8Array };

/** ofp_table_features. */
export interface TableFeatures {
  tableId: number;
  /** At most 31 bytes of UTF-8. */
  name: string;
  metadataMatch: bigint;
  metadataWrite: bigint;
  config: number;
  maxEntries: number;
  properties: TableFeatureProp[];
}

/** The body of a FLOW or AGGREGATE multipart request (ofp_flow_stats_request). */
export interface FlowStatsRequest {
  tableId: number;
  outPort: number;
  outGroup: number;
  cookie: bigint;
  cookieMask: bigint;
  match: OfMatch;
}

/** ofp_flow_stats. */
export interface FlowStats {
  tableId: number;
  durationSec: number;
  durationNsec: number;
  priority: number;
  idleTimeout: number;
  hardTimeout: number;
  /** OFPFF_* bits. */
  flags: number;
  cookie: bigint;
  packetCount: bigint;
  byteCount: bigint;
  match: OfMatch;
  instructions: OfInstruction[];
}

/** ofp_aggregate_stats_reply. */
export interface AggregateStats {
  packetCount: bigint;
  byteCount: bigint;
  flowCount: number;
}

/** ofp_table_stats. */
export interface TableStats {
  tableId: number;
  activeCount: number;
  lookupCount: bigint;
  matchedCount: bigint;
}

/** ofp_port_stats (all ones: counter not supported). */
export interface PortStats {
  portNo: number;
  rxPackets: bigint;
  txPackets: bigint;
  rxBytes: bigint;
  txBytes: bigint;
  rxDropped: bigint;
  txDropped: bigint;
  rxErrors: bigint;
  txErrors: bigint;
  rxFrameErr: bigint;
  rxOverErr: bigint;
  rxCrcErr: bigint;
  collisions: bigint;
  durationSec: number;
  durationNsec: number;
}

/** ofp_queue_stats. */
export interface QueueStats {
  portNo: number;
  queueId: number;
  txBytes: bigint;
  txPackets: bigint;
  txErrors: bigint;
  durationSec: number;
  durationNsec: number;
}

/**
 * A queue property (ofp_queue_prop_*, OpenFlow 1.3.5 section 7.3.6). Rates
 * are in 1/10 of a percent of the port's speed (a u16): up to 1000
 * (`QUEUE_RATE_MAX`), any higher value means that rate is disabled.
 * Experimenter data must be a multiple of 8 bytes (the property's length
 * covers it and is a multiple of 8).
 */
export type QueueProp =
  /** OFPQT_MIN_RATE (1): the guaranteed rate. */
  | { type: 'min-rate'; rate: number }
  /** OFPQT_MAX_RATE (2): the rate the queue may not exceed. */
  | { type: 'max-rate'; rate: number }
  /** OFPQT_EXPERIMENTER (0xffff). */
  | { type: 'experimenter'; experimenter: number; data: Uint8Array };

/** ofp_packet_queue: one queue of a QUEUE_GET_CONFIG_REPLY. */
export interface OfPacketQueue {
  queueId: number;
  /** The port the queue is attached to. */
  portNo: number;
  properties: QueueProp[];
}

/** ofp_desc: NUL-terminated strings (at most 255 bytes; the serial number at most 31). */
export interface SwitchDesc {
  mfrDesc: string;
  hwDesc: string;
  swDesc: string;
  serialNum: string;
  dpDesc: string;
}

/** ofp_bucket. */
export interface Bucket {
  weight: number;
  watchPort: number;
  watchGroup: number;
  actions: OfAction[];
}

/** ofp_group_desc. */
export interface GroupDesc {
  /** OFPGT_*. */
  groupType: number;
  groupId: number;
  buckets: Bucket[];
}

/** ofp_meter_features. */
export interface MeterFeatures {
  maxMeter: number;
  bandTypes: number;
  capabilities: number;
  maxBands: number;
  maxColor: number;
}

/** ofp_async_config: [master/equal, slave] bitmasks of the reasons each kind of asynchronous message is sent for. */
export interface AsyncConfig {
  packetInMask: [number, number];
  portStatusMask: [number, number];
  flowRemovedMask: [number, number];
}

// ---------------------------------------------------------------------------
// Multipart bodies

export type MultipartRequestBody =
  | { type: 'desc' }
  | { type: 'flow'; request: FlowStatsRequest }
  | { type: 'aggregate'; request: FlowStatsRequest }
  | { type: 'table' }
  | { type: 'port-stats'; portNo: number }
  | { type: 'queue'; portNo: number; queueId: number }
  | { type: 'group-desc' }
  | { type: 'meter-features' }
  /** Empty: a query; otherwise the tables the controller wants set. */
  | { type: 'table-features'; tables: TableFeatures[] }
  | { type: 'port-desc' }
  | { type: 'experimenter'; experimenter: number; expType: number; data: Uint8Array }
  /** A multipart type the codec does not read (GROUP, METER, ...): the agent answers OFPBRC_BAD_MULTIPART. */
  | { type: 'unsupported'; mpType: number; data: Uint8Array };

export type MultipartReplyBody =
  | { type: 'desc'; desc: SwitchDesc }
  | { type: 'flow'; stats: FlowStats[] }
  | { type: 'aggregate'; stats: AggregateStats }
  | { type: 'table'; stats: TableStats[] }
  | { type: 'port-stats'; stats: PortStats[] }
  | { type: 'queue'; stats: QueueStats[] }
  | { type: 'group-desc'; groups: GroupDesc[] }
  | { type: 'meter-features'; features: MeterFeatures }
  | { type: 'table-features'; tables: TableFeatures[] }
  | { type: 'port-desc'; ports: OfPort[] }
  | { type: 'experimenter'; experimenter: number; expType: number; data: Uint8Array }
  | { type: 'unsupported'; mpType: number; data: Uint8Array };

export type MultipartType = MultipartRequestBody['type'];

// ---------------------------------------------------------------------------
// Messages

export type OfMessage =
  /** OFPT_HELLO (0). Any version: the agent negotiates from it. */
  | { type: 'hello'; version: number; xid: number; elements: HelloElement[] }
  /** OFPT_ERROR (1): data is (at least 64 bytes of) the offending message, or text for HELLO_FAILED. */
  | { type: 'error'; xid: number; errType: number; code: number; data: Uint8Array }
  /** OFPT_ERROR with type OFPET_EXPERIMENTER (0xffff). */
  | { type: 'error-experimenter'; xid: number; expCode: number; experimenter: number; data: Uint8Array }
  | { type: 'echo-request'; xid: number; data: Uint8Array }
  | { type: 'echo-reply'; xid: number; data: Uint8Array }
  | { type: 'experimenter'; xid: number; experimenter: number; expType: number; data: Uint8Array }
  | { type: 'features-request'; xid: number }
  | {
      type: 'features-reply';
      xid: number;
      datapathId: bigint;
      nBuffers: number;
      nTables: number;
      auxiliaryId: number;
      /** OFPC_* bits. */
      capabilities: number;
    }
  | { type: 'get-config-request'; xid: number }
  | { type: 'get-config-reply'; xid: number; flags: number; missSendLen: number }
  | { type: 'set-config'; xid: number; flags: number; missSendLen: number }
  | {
      type: 'packet-in';
      xid: number;
      bufferId: number;
      totalLen: number;
      reason: PacketInReason;
      tableId: number;
      cookie: bigint;
      match: OfMatch;
      data: Uint8Array;
    }
  | {
      type: 'flow-removed';
      xid: number;
      cookie: bigint;
      priority: number;
      reason: FlowRemovedReason;
      tableId: number;
      durationSec: number;
      durationNsec: number;
      idleTimeout: number;
      hardTimeout: number;
      packetCount: bigint;
      byteCount: bigint;
      match: OfMatch;
    }
  | { type: 'port-status'; xid: number; reason: PortReason; port: OfPort }
  | { type: 'packet-out'; xid: number; bufferId: number; inPort: number; actions: OfAction[]; data: Uint8Array }
  | { type: 'flow-mod'; xid: number; mod: FlowMod }
  | { type: 'barrier-request'; xid: number }
  | { type: 'barrier-reply'; xid: number }
  | { type: 'role-request'; xid: number; role: ControllerRole; generationId: bigint }
  | { type: 'role-reply'; xid: number; role: ControllerRole; generationId: bigint }
  | { type: 'get-async-request'; xid: number }
  | { type: 'get-async-reply'; xid: number; config: AsyncConfig }
  | { type: 'set-async'; xid: number; config: AsyncConfig }
  /**
   * OFPT_QUEUE_GET_CONFIG_REQUEST (22): the queues of port `portNo` (a port
   * below OFPP_MAX, or OFPP_ANY for every port's). The codec does not check
   * the port; a switch answers one it does not have with
   * OFPET_QUEUE_OP_FAILED / OFPQOFC_BAD_PORT.
   */
  | { type: 'queue-get-config-request'; xid: number; portNo: number }
  /** OFPT_QUEUE_GET_CONFIG_REPLY (23): `portNo` is the request's; each queue names its own port. */
  | { type: 'queue-get-config-reply'; xid: number; portNo: number; queues: OfPacketQueue[] }
  /** OFPT_MULTIPART_REQUEST (18); flags: OFPMPF_REQ_MORE. */
  | { type: 'multipart-request'; xid: number; flags: number; body: MultipartRequestBody }
  /** OFPT_MULTIPART_REPLY (19); flags: OFPMPF_REPLY_MORE. */
  | { type: 'multipart-reply'; xid: number; flags: number; body: MultipartReplyBody }
  /**
   * A version-4 message of a type the codec does not read (GROUP_MOD,
   * PORT_MOD, TABLE_MOD, METER_MOD, or a number OpenFlow 1.3 does not
   * define): the agent answers OFPET_BAD_REQUEST / OFPBRC_BAD_TYPE. `body`
   * is everything after the header.
   */
  | { type: 'unknown'; xid: number; msgType: number; body: Uint8Array };

export type OfMessageType = OfMessage['type'];
/** The message of type T. */
export type OfMessageOf<T extends OfMessageType> = Extract<OfMessage, { type: T }>;
