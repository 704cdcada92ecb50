import { RangeArgumentError } from '../../core/errors.js';
import type { OfAction, OfInstruction } from './actions.js';
import { fail, Reader, type Writer } from './buffer.js';
import { OFPAT, OFPBAC, OFPBIC, OFPET, OFPIT } from './constants.js';
import type { OfErrorAnswer } from './errors.js';
import { readSetFieldTlv, writeSetFieldTlv } from './oxm.js';

/**
 * Actions and instructions (OpenFlow 1.3.5 sections 7.2.4 and 7.2.5).
 *
 * Every action and instruction starts with type u16, len u16; len counts
 * the header and is a multiple of 8 (OFPBAC_BAD_LEN / OFPBIC_BAD_LEN
 * otherwise, also when it runs past the list).
 *
 *   OUTPUT (0)          16  port u32, max_len u16, pad 6
 *   SET_QUEUE (21)       8  queue_id u32
 *   GROUP (22)           8  group_id u32
 *   DEC_NW_TTL (24)      8  pad 4
 *   SET_FIELD (25)   8k     one OXM TLV (exact), zeros to a multiple of 8
 *   any other type  8k     kept as `unsupported` with the bytes after the
 *                          header, for the agent to refuse (OFPBAC_BAD_TYPE)
 *
 *   GOTO_TABLE (1)       8  table_id u8, pad 3
 *   WRITE_METADATA (2)  24  pad 4, metadata u64, metadata_mask u64
 *   WRITE_ACTIONS (3) 8+n  pad 4, actions
 *   APPLY_ACTIONS (4) 8+n  pad 4, actions
 *   CLEAR_ACTIONS (5)    8  pad 4
 *   METER (6)            8  meter_id u32
 *   any other type  8k     kept as `unsupported` (the agent answers OFPBIC_UNKNOWN_INST)
 *
 * A known action or instruction of the wrong length is refused rather than
 * kept, since its fields cannot be read.
 */

const ba = (code: number): OfErrorAnswer => ({ type: OFPET.BAD_ACTION, code });
const bi = (code: number): OfErrorAnswer => ({ type: OFPET.BAD_INSTRUCTION, code });
const ACTION_LEN = ba(OFPBAC.BAD_LEN);
const INSTRUCTION_LEN = bi(OFPBIC.BAD_LEN);

// ---------------------------------------------------------------------------
// Actions

export function writeActions(w: Writer, actions: readonly OfAction[], field: string): void {
  if (!Array.isArray(actions)) throw new RangeArgumentError(field, actions, 'an array of actions');
  actions.forEach((a, i) => writeAction(w, a, `${field}[${i}]`));
}

function writeAction(w: Writer, a: OfAction, field: string): void {
  if (a === null || typeof a !== 'object') throw new RangeArgumentError(field, a, 'an OfAction');
  switch (a.type) {
    case 'output':
      w.u16(OFPAT.OUTPUT, `${field}.type`);
      w.u16(16, `${field}.len`);
      w.u32(a.port, `${field}.port`);
      w.u16(a.maxLen, `${field}.maxLen`);
      w.zeros(6);
      return;
    case 'set-queue':
      w.u16(OFPAT.SET_QUEUE, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.u32(a.queueId, `${field}.queueId`);
      return;
    case 'group':
      w.u16(OFPAT.GROUP, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.u32(a.groupId, `${field}.groupId`);
      return;
    case 'dec-nw-ttl':
      w.u16(OFPAT.DEC_NW_TTL, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.zeros(4);
      return;
    case 'set-field': {
      const start = w.length;
      w.u16(OFPAT.SET_FIELD, `${field}.type`);
      w.u16(0, `${field}.len`);
      writeSetFieldTlv(w, a.field, `${field}.field`);
      w.padTo8(start);
      w.set16(start + 2, w.length - start, `${field}.len`);
      return;
    }
    case 'unsupported':
      writeOpaque(w, a.actionType, a.body, field, 'actionType');
      return;
    default:
      throw new RangeArgumentError(`${field}.type`, (a as { type?: unknown }).type, 'an OfAction type');
  }
}

/** A type, a length and `body` (4 + body bytes, a multiple of 8). */
function writeOpaque(w: Writer, type: number, body: Uint8Array, field: string, typeName: string): void {
  if (!(body instanceof Uint8Array) || (body.length + 4) % 8 !== 0) {
    throw new RangeArgumentError(`${field}.body`, body instanceof Uint8Array ? `${body.length} bytes` : body, 'a Uint8Array of 8k + 4 bytes');
  }
  w.u16(type, `${field}.${typeName}`);
  w.u16(body.length + 4, `${field}.len`);
  w.bytes(body, `${field}.body`);
}

/** All of `r` as a list of actions. */
export function readActions(r: Reader): OfAction[] {
  const out: OfAction[] = [];
  while (r.remaining > 0) out.push(readAction(r));
  return out;
}

function readAction(r: Reader): OfAction {
  const at = r.pos;
  if (r.remaining < 4) fail('OF_BAD_LENGTH', 'action', `action at offset ${at}: ${r.remaining} bytes, a header needs 4`, ACTION_LEN);
  const type = (r.b[at]! << 8) | r.b[at + 1]!;
  const len = (r.b[at + 2]! << 8) | r.b[at + 3]!;
  if (len < 8 || len % 8 !== 0)
    fail('OF_BAD_LENGTH', 'action', `action type ${type} at offset ${at}: length ${len}, needs a multiple of 8, at least 8`, ACTION_LEN);
  if (len > r.remaining) fail('OF_BAD_LENGTH', 'action', `action type ${type} at offset ${at}: length ${len}, only ${r.remaining} bytes left`, ACTION_LEN);
  const a = r.sub(len, 'action', ACTION_LEN);
  a.pos += 4;
  const exact = (n: number): void => {
    if (len !== n) fail('OF_BAD_LENGTH', 'action', `action type ${type}: length ${len}, needs ${n}`, ACTION_LEN);
  };
  switch (type) {
    case OFPAT.OUTPUT: {
      exact(16);
      const port = a.u32();
      const maxLen = a.u16();
      a.pad(6, ba(OFPBAC.BAD_ARGUMENT));
      return { type: 'output', port, maxLen };
    }
    case OFPAT.SET_QUEUE:
      exact(8);
      return { type: 'set-queue', queueId: a.u32() };
    case OFPAT.GROUP:
      exact(8);
      return { type: 'group', groupId: a.u32() };
    case OFPAT.DEC_NW_TTL:
      exact(8);
      a.pad(4, ba(OFPBAC.BAD_ARGUMENT));
      return { type: 'dec-nw-ttl' };
    case OFPAT.SET_FIELD:
      return { type: 'set-field', field: readSetFieldTlv(a) };
    default:
      return { type: 'unsupported', actionType: type, body: a.copy(len - 4) };
  }
}

// ---------------------------------------------------------------------------
// Instructions

export function writeInstructions(w: Writer, list: readonly OfInstruction[], field: string): void {
  if (!Array.isArray(list)) throw new RangeArgumentError(field, list, 'an array of instructions');
  list.forEach((ins, i) => writeInstruction(w, ins, `${field}[${i}]`));
}

function writeInstruction(w: Writer, ins: OfInstruction, field: string): void {
  if (ins === null || typeof ins !== 'object') throw new RangeArgumentError(field, ins, 'an OfInstruction');
  switch (ins.type) {
    case 'goto-table':
      w.u16(OFPIT.GOTO_TABLE, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.u8(ins.tableId, `${field}.tableId`);
      w.zeros(3);
      return;
    case 'write-metadata':
      w.u16(OFPIT.WRITE_METADATA, `${field}.type`);
      w.u16(24, `${field}.len`);
      w.zeros(4);
      w.u64(ins.metadata, `${field}.metadata`);
      w.u64(ins.mask, `${field}.mask`);
      return;
    case 'write-actions':
    case 'apply-actions': {
      const start = w.length;
      w.u16(ins.type === 'write-actions' ? OFPIT.WRITE_ACTIONS : OFPIT.APPLY_ACTIONS, `${field}.type`);
      w.u16(0, `${field}.len`);
      w.zeros(4);
      writeActions(w, ins.actions, `${field}.actions`);
      w.set16(start + 2, w.length - start, `${field}.len`);
      return;
    }
    case 'clear-actions':
      w.u16(OFPIT.CLEAR_ACTIONS, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.zeros(4);
      return;
    case 'meter':
      w.u16(OFPIT.METER, `${field}.type`);
      w.u16(8, `${field}.len`);
      w.u32(ins.meterId, `${field}.meterId`);
      return;
    case 'unsupported':
      writeOpaque(w, ins.instructionType, ins.body, field, 'instructionType');
      return;
    default:
      throw new RangeArgumentError(`${field}.type`, (ins as { type?: unknown }).type, 'an OfInstruction type');
  }
}

/** All of `r` as a list of instructions. */
export function readInstructions(r: Reader): OfInstruction[] {
  const out: OfInstruction[] = [];
  while (r.remaining > 0) out.push(readInstruction(r));
  return out;
}

function readInstruction(r: Reader): OfInstruction {
  const at = r.pos;
  if (r.remaining < 4) fail('OF_BAD_LENGTH', 'instruction', `instruction at offset ${at}: ${r.remaining} bytes, a header needs 4`, INSTRUCTION_LEN);
  const type = (r.b[at]! << 8) | r.b[at + 1]!;
  const len = (r.b[at + 2]! << 8) | r.b[at + 3]!;
  if (len < 8 || len % 8 !== 0) {
    fail('OF_BAD_LENGTH', 'instruction', `instruction type ${type} at offset ${at}: length ${len}, needs a multiple of 8, at least 8`, INSTRUCTION_LEN);
  }
  if (len > r.remaining)
    fail('OF_BAD_LENGTH', 'instruction', `instruction type ${type} at offset ${at}: length ${len}, only ${r.remaining} bytes left`, INSTRUCTION_LEN);
  const ir = r.sub(len, 'instruction', INSTRUCTION_LEN);
  ir.pos += 4;
  const exact = (n: number): void => {
    if (len !== n) fail('OF_BAD_LENGTH', 'instruction', `instruction type ${type}: length ${len}, needs ${n}`, INSTRUCTION_LEN);
  };
  switch (type) {
    case OFPIT.GOTO_TABLE: {
      exact(8);
      const tableId = ir.u8();
      ir.pad(3);
      return { type: 'goto-table', tableId };
    }
    case OFPIT.WRITE_METADATA: {
      exact(24);
      ir.pad(4);
      const metadata = ir.u64();
      return { type: 'write-metadata', metadata, mask: ir.u64() };
    }
    case OFPIT.WRITE_ACTIONS:
    case OFPIT.APPLY_ACTIONS: {
      ir.pad(4);
      const actions = readActions(new Reader(ir.b, ir.pos, ir.end, 'action', ACTION_LEN));
      return { type: type === OFPIT.WRITE_ACTIONS ? 'write-actions' : 'apply-actions', actions };
    }
    case OFPIT.CLEAR_ACTIONS:
      exact(8);
      ir.pad(4);
      return { type: 'clear-actions' };
    case OFPIT.METER:
      exact(8);
      return { type: 'meter', meterId: ir.u32() };
    default:
      return { type: 'unsupported', instructionType: type, body: ir.copy(len - 4) };
  }
}
