/**
 * OpenFlow 1.3 numbers (OpenFlow Switch Specification 1.3.5, section 7 and
 * appendix A) that the codec and the agent use. Reserved port numbers,
 * buffer and group sentinels and the flow-mod flags live with the action and
 * instruction types in `actions.ts` (OFPP, OFP_NO_BUFFER, ...).
 */

/** wire protocol version of OpenFlow 1.3. */
export const OFP_VERSION = 0x04;
/** ofp_header: version, type, length, xid. */
export const OFP_HEADER_BYTES = 8;
/** The most bytes one message can have (the header's length field is 16 bits). */
export const OFP_MAX_MESSAGE_BYTES = 0xffff;
/** The default miss_send_len. */
export const OFPCML_DEFAULT = 128;

/** ofp_type. */
export const OFPT = Object.freeze({
  HELLO: 0,
  ERROR: 1,
  ECHO_REQUEST: 2,
  ECHO_REPLY: 3,
  EXPERIMENTER: 4,
  FEATURES_REQUEST: 5,
  FEATURES_REPLY: 6,
  GET_CONFIG_REQUEST: 7,
  GET_CONFIG_REPLY: 8,
  SET_CONFIG: 9,
  PACKET_IN: 10,
  FLOW_REMOVED: 11,
  PORT_STATUS: 12,
  PACKET_OUT: 13,
  FLOW_MOD: 14,
  GROUP_MOD: 15,
  PORT_MOD: 16,
  TABLE_MOD: 17,
  MULTIPART_REQUEST: 18,
  MULTIPART_REPLY: 19,
  BARRIER_REQUEST: 20,
  BARRIER_REPLY: 21,
  QUEUE_GET_CONFIG_REQUEST: 22,
  QUEUE_GET_CONFIG_REPLY: 23,
  ROLE_REQUEST: 24,
  ROLE_REPLY: 25,
  GET_ASYNC_REQUEST: 26,
  GET_ASYNC_REPLY: 27,
  SET_ASYNC: 28,
  METER_MOD: 29,
});

/** ofp_hello_elem_type. */
export const OFPHET_VERSIONBITMAP = 1;

/** ofp_error_type. */
export const OFPET = Object.freeze({
  HELLO_FAILED: 0,
  BAD_REQUEST: 1,
  BAD_ACTION: 2,
  BAD_INSTRUCTION: 3,
  BAD_MATCH: 4,
  FLOW_MOD_FAILED: 5,
  GROUP_MOD_FAILED: 6,
  PORT_MOD_FAILED: 7,
  TABLE_MOD_FAILED: 8,
  QUEUE_OP_FAILED: 9,
  SWITCH_CONFIG_FAILED: 10,
  ROLE_REQUEST_FAILED: 11,
  METER_MOD_FAILED: 12,
  TABLE_FEATURES_FAILED: 13,
  EXPERIMENTER: 0xffff,
});

/** ofp_hello_failed_code. */
export const OFPHFC = Object.freeze({ INCOMPATIBLE: 0, EPERM: 1 });

/** ofp_bad_request_code. */
export const OFPBRC = Object.freeze({
  BAD_VERSION: 0,
  BAD_TYPE: 1,
  BAD_MULTIPART: 2,
  BAD_EXPERIMENTER: 3,
  BAD_EXP_TYPE: 4,
  EPERM: 5,
  BAD_LEN: 6,
  BUFFER_EMPTY: 7,
  BUFFER_UNKNOWN: 8,
  BAD_TABLE_ID: 9,
  IS_SLAVE: 10,
  BAD_PORT: 11,
  BAD_PACKET: 12,
  MULTIPART_BUFFER_OVERFLOW: 13,
});

/** ofp_bad_action_code. */
export const OFPBAC = Object.freeze({
  BAD_TYPE: 0,
  BAD_LEN: 1,
  BAD_EXPERIMENTER: 2,
  BAD_EXP_TYPE: 3,
  BAD_OUT_PORT: 4,
  BAD_ARGUMENT: 5,
  EPERM: 6,
  TOO_MANY: 7,
  BAD_QUEUE: 8,
  BAD_OUT_GROUP: 9,
  MATCH_INCONSISTENT: 10,
  UNSUPPORTED_ORDER: 11,
  BAD_TAG: 12,
  BAD_SET_TYPE: 13,
  BAD_SET_LEN: 14,
  BAD_SET_ARGUMENT: 15,
});

/** ofp_bad_instruction_code. */
export const OFPBIC = Object.freeze({
  UNKNOWN_INST: 0,
  UNSUP_INST: 1,
  BAD_TABLE_ID: 2,
  UNSUP_METADATA: 3,
  UNSUP_METADATA_MASK: 4,
  BAD_EXPERIMENTER: 5,
  BAD_EXP_TYPE: 6,
  BAD_LEN: 7,
  EPERM: 8,
});

/** ofp_bad_match_code. */
export const OFPBMC = Object.freeze({
  BAD_TYPE: 0,
  BAD_LEN: 1,
  BAD_TAG: 2,
  BAD_DL_ADDR_MASK: 3,
  BAD_NW_ADDR_MASK: 4,
  BAD_WILDCARDS: 5,
  BAD_FIELD: 6,
  BAD_VALUE: 7,
  BAD_MASK: 8,
  BAD_PREREQ: 9,
  DUP_FIELD: 10,
  EPERM: 11,
});

/** ofp_flow_mod_failed_code. */
export const OFPFMFC = Object.freeze({
  UNKNOWN: 0,
  TABLE_FULL: 1,
  BAD_TABLE_ID: 2,
  OVERLAP: 3,
  EPERM: 4,
  BAD_TIMEOUT: 5,
  BAD_COMMAND: 6,
  BAD_FLAGS: 7,
});

/** ofp_switch_config_failed_code. */
export const OFPSCFC = Object.freeze({ BAD_FLAGS: 0, BAD_LEN: 1, EPERM: 2 });

/** ofp_role_request_failed_code. */
export const OFPRRFC = Object.freeze({ STALE: 0, UNSUP: 1, BAD_ROLE: 2 });

/** ofp_table_features_failed_code. */
export const OFPTFFC = Object.freeze({ BAD_TABLE: 0, BAD_METADATA: 1, BAD_TYPE: 2, BAD_LEN: 3, BAD_ARGUMENT: 4, EPERM: 5 });

/** ofp_queue_op_failed_code (OFPET_QUEUE_OP_FAILED). */
export const OFPQOFC = Object.freeze({ BAD_PORT: 0, BAD_QUEUE: 1, EPERM: 2 });

/** ofp_queue_properties (QUEUE_GET_CONFIG_REPLY). */
export const OFPQT = Object.freeze({ MIN_RATE: 1, MAX_RATE: 2, EXPERIMENTER: 0xffff });
/** The largest enabled queue rate (min_rate, max_rate): rates are in 1/10 of a percent of the port's speed, and any higher value means that rate is disabled. */
export const QUEUE_RATE_MAX = 1000;

/** ofp_multipart_type. */
export const OFPMP = Object.freeze({
  DESC: 0,
  FLOW: 1,
  AGGREGATE: 2,
  TABLE: 3,
  PORT_STATS: 4,
  QUEUE: 5,
  GROUP: 6,
  GROUP_DESC: 7,
  GROUP_FEATURES: 8,
  METER: 9,
  METER_CONFIG: 10,
  METER_FEATURES: 11,
  TABLE_FEATURES: 12,
  PORT_DESC: 13,
  EXPERIMENTER: 0xffff,
});

/** ofp_multipart_request_flags: more requests follow. */
export const OFPMPF_REQ_MORE = 1;
/** ofp_multipart_reply_flags: more replies follow. */
export const OFPMPF_REPLY_MORE = 1;

/** ofp_port_config. */
export const OFPPC = Object.freeze({ PORT_DOWN: 1 << 0, NO_RECV: 1 << 2, NO_FWD: 1 << 5, NO_PACKET_IN: 1 << 6 });

/** ofp_port_state. */
export const OFPPS = Object.freeze({ LINK_DOWN: 1 << 0, BLOCKED: 1 << 1, LIVE: 1 << 2 });

/** ofp_port_features. */
export const OFPPF = Object.freeze({
  '10MB_HD': 1 << 0,
  '10MB_FD': 1 << 1,
  '100MB_HD': 1 << 2,
  '100MB_FD': 1 << 3,
  '1GB_HD': 1 << 4,
  '1GB_FD': 1 << 5,
  '10GB_FD': 1 << 6,
  '40GB_FD': 1 << 7,
  '100GB_FD': 1 << 8,
  '1TB_FD': 1 << 9,
  OTHER: 1 << 10,
  COPPER: 1 << 11,
  FIBER: 1 << 12,
  AUTONEG: 1 << 13,
  PAUSE: 1 << 14,
  PAUSE_ASYM: 1 << 15,
});

/** ofp_capabilities (FEATURES_REPLY). */
export const OFPC = Object.freeze({
  FLOW_STATS: 1 << 0,
  TABLE_STATS: 1 << 1,
  PORT_STATS: 1 << 2,
  GROUP_STATS: 1 << 3,
  IP_REASM: 1 << 5,
  QUEUE_STATS: 1 << 6,
  PORT_BLOCKED: 1 << 8,
});

/** ofp_config_flags (GET_CONFIG_REPLY, SET_CONFIG). */
export const OFPC_FRAG = Object.freeze({ NORMAL: 0, DROP: 1, REASM: 2, MASK: 3 });

/** ofp_packet_in_reason. */
export const OFPR = Object.freeze({ NO_MATCH: 0, ACTION: 1, INVALID_TTL: 2 });
/** ofp_flow_removed_reason. */
export const OFPRR = Object.freeze({ IDLE_TIMEOUT: 0, HARD_TIMEOUT: 1, DELETE: 2, GROUP_DELETE: 3 });
/** ofp_port_reason. */
export const OFPPR = Object.freeze({ ADD: 0, DELETE: 1, MODIFY: 2 });
/** ofp_controller_role. */
export const OFPCR_ROLE = Object.freeze({ NOCHANGE: 0, EQUAL: 1, MASTER: 2, SLAVE: 3 });
/** ofp_flow_mod_command. */
export const OFPFC = Object.freeze({ ADD: 0, MODIFY: 1, MODIFY_STRICT: 2, DELETE: 3, DELETE_STRICT: 4 });

/** ofp_match_type: the only one OpenFlow 1.3 defines besides the deprecated STANDARD (0). */
export const OFPMT_OXM = 1;
/** ofp_oxm_class. */
export const OFPXMC = Object.freeze({ NXM_0: 0x0000, NXM_1: 0x0001, OPENFLOW_BASIC: 0x8000, EXPERIMENTER: 0xffff });
/** ofp_vlan_id: the VID field is set (OXM_OF_VLAN_VID); OFPVID_NONE: no VLAN tag. */
export const OFPVID_PRESENT = 0x1000;
export const OFPVID_NONE = 0x0000;

/** ofp_instruction_type. */
export const OFPIT = Object.freeze({
  GOTO_TABLE: 1,
  WRITE_METADATA: 2,
  WRITE_ACTIONS: 3,
  APPLY_ACTIONS: 4,
  CLEAR_ACTIONS: 5,
  METER: 6,
  EXPERIMENTER: 0xffff,
});

/** ofp_action_type (the ones the codec reads; the rest are kept as `unsupported`). */
export const OFPAT = Object.freeze({
  OUTPUT: 0,
  COPY_TTL_OUT: 11,
  COPY_TTL_IN: 12,
  SET_MPLS_TTL: 15,
  DEC_MPLS_TTL: 16,
  PUSH_VLAN: 17,
  POP_VLAN: 18,
  PUSH_MPLS: 19,
  POP_MPLS: 20,
  SET_QUEUE: 21,
  GROUP: 22,
  SET_NW_TTL: 23,
  DEC_NW_TTL: 24,
  SET_FIELD: 25,
  PUSH_PBB: 26,
  POP_PBB: 27,
  EXPERIMENTER: 0xffff,
});

/** ofp_table_feature_prop_type. */
export const OFPTFPT = Object.freeze({
  INSTRUCTIONS: 0,
  INSTRUCTIONS_MISS: 1,
  NEXT_TABLES: 2,
  NEXT_TABLES_MISS: 3,
  WRITE_ACTIONS: 4,
  WRITE_ACTIONS_MISS: 5,
  APPLY_ACTIONS: 6,
  APPLY_ACTIONS_MISS: 7,
  MATCH: 8,
  WILDCARDS: 10,
  WRITE_SETFIELD: 12,
  WRITE_SETFIELD_MISS: 13,
  APPLY_SETFIELD: 14,
  APPLY_SETFIELD_MISS: 15,
  EXPERIMENTER: 0xfffe,
  EXPERIMENTER_MISS: 0xffff,
});

/** ofp_group_type. */
export const OFPGT = Object.freeze({ ALL: 0, SELECT: 1, INDIRECT: 2, FF: 3 });

/** Fixed sizes. */
export const OFP_MAX_PORT_NAME_LEN = 16;
export const OFP_MAX_TABLE_NAME_LEN = 32;
export const DESC_STR_LEN = 256;
export const SERIAL_NUM_LEN = 32;
