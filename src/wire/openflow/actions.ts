import type { OfMatch } from './match.js';

/**
 * OpenFlow 1.3 actions and instructions as cogmesh's flow table and agent
 * use them (OpenFlow 1.3.5 sections 7.2.4-7.2.5): the codec's own value
 * types (instructions.ts turns their wire forms into these and back); an
 * action or instruction cogmesh does not support is refused by the agent
 * with the ERROR the specification names (OFPET_BAD_ACTION /
 * OFPET_BAD_INSTRUCTION), never silently dropped.
 */

/** Reserved port numbers (ofp_port_no). */
export const OFPP = Object.freeze({
  MAX: 0xffffff00,
  IN_PORT: 0xfffffff8,
  TABLE: 0xfffffff9,
  NORMAL: 0xfffffffa,
  FLOOD: 0xfffffffb,
  ALL: 0xfffffffc,
  CONTROLLER: 0xfffffffd,
  LOCAL: 0xfffffffe,
  ANY: 0xffffffff,
});

/** ofp_controller_max_len: send the whole packet to the controller, unbuffered. */
export const OFPCML_NO_BUFFER = 0xffff;
/** No buffered packet (buffer_id). */
export const OFP_NO_BUFFER = 0xffffffff;
/** Any group (out_group in deletes and stats). */
export const OFPG_ANY = 0xffffffff;
/** All tables (table_id in deletes and stats). */
export const OFPTT_ALL = 0xff;
/** All queues (queue stats). */
export const OFPQ_ALL = 0xffffffff;

export type OfAction =
  /** OFPAT_OUTPUT (0): to a port; maxLen is the bytes sent to the controller when port is CONTROLLER. */
  | { type: 'output'; port: number; maxLen: number }
  /** OFPAT_SET_QUEUE (21): the queue of the output port the packet goes to. */
  | { type: 'set-queue'; queueId: number }
  /** OFPAT_GROUP (22). */
  | { type: 'group'; groupId: number }
  /** OFPAT_DEC_NW_TTL (24). */
  | { type: 'dec-nw-ttl' }
  /** OFPAT_SET_FIELD (25): one OXM field, exact (the value's type follows OfMatch). */
  | { type: 'set-field'; field: OfMatch }
  /** An action type the codec read but cogmesh does not carry out (the agent answers OFPBAC_BAD_TYPE). */
  | { type: 'unsupported'; actionType: number; body: Uint8Array };

export type OfInstruction =
  /** OFPIT_GOTO_TABLE (1). */
  | { type: 'goto-table'; tableId: number }
  /** OFPIT_WRITE_METADATA (2). */
  | { type: 'write-metadata'; metadata: bigint; mask: bigint }
  /** OFPIT_WRITE_ACTIONS (3). */
  | { type: 'write-actions'; actions: OfAction[] }
  /** OFPIT_APPLY_ACTIONS (4). */
  | { type: 'apply-actions'; actions: OfAction[] }
  /** OFPIT_CLEAR_ACTIONS (5). */
  | { type: 'clear-actions' }
  /** OFPIT_METER (6). */
  | { type: 'meter'; meterId: number }
  /** An instruction type cogmesh does not carry out (the agent answers OFPBIC_UNKNOWN_INST). */
  | { type: 'unsupported'; instructionType: number; body: Uint8Array };

/** ofp_flow_mod_command. */
export type FlowModCommand = 'add' | 'modify' | 'modify-strict' | 'delete' | 'delete-strict';

/** ofp_flow_mod_flags. */
export const OFPFF = Object.freeze({
  SEND_FLOW_REM: 1 << 0,
  CHECK_OVERLAP: 1 << 1,
  RESET_COUNTS: 1 << 2,
  NO_PKT_COUNTS: 1 << 3,
  NO_BYT_COUNTS: 1 << 4,
});

/** ofp_flow_removed_reason. */
export type FlowRemovedReason = 'idle-timeout' | 'hard-timeout' | 'delete' | 'group-delete';

/** The body of a FLOW_MOD as the flow table takes it (after the codec). */
export interface FlowMod {
  cookie: bigint;
  cookieMask: bigint;
  tableId: number;
  command: FlowModCommand;
  /** Seconds; 0: none. */
  idleTimeout: number;
  hardTimeout: number;
  priority: number;
  bufferId: number;
  outPort: number;
  outGroup: number;
  flags: number;
  match: OfMatch;
  instructions: OfInstruction[];
}

/**
 * A FLOW_MOD with the defaults of a plain ADD: table 0, priority 0x8000 (the
 * specification's OFP_DEFAULT_PRIORITY), no cookie, no timeouts, no flags,
 * no buffer, no out_port or out_group filter, an empty match and no
 * instructions; `over` sets the rest.
 */
export function flowMod(over: Partial<FlowMod> = {}): FlowMod {
  return {
    cookie: 0n,
    cookieMask: 0n,
    tableId: 0,
    command: 'add',
    idleTimeout: 0,
    hardTimeout: 0,
    priority: 0x8000,
    bufferId: OFP_NO_BUFFER,
    outPort: OFPP.ANY,
    outGroup: OFPG_ANY,
    flags: 0,
    match: {},
    instructions: [],
    ...over,
  };
}
