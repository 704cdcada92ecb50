import { RangeArgumentError } from '../../core/errors.js';
import { err, ok, type Result } from '../../core/result.js';
import type { FlowModCommand, FlowRemovedReason } from './actions.js';
import { get16, get32, isUint } from '../bytes.js';
import { fail, Reader, roundUp8, Writer } from './buffer.js';
import {
  OFP_HEADER_BYTES,
  OFP_MAX_MESSAGE_BYTES,
  OFP_VERSION,
  OFPBAC,
  OFPBRC,
  OFPET,
  OFPFMFC,
  OFPHET_VERSIONBITMAP,
  OFPHFC,
  OFPRRFC,
  OFPT,
} from './constants.js';
import { OfParseError, type OfErrorAnswer } from './errors.js';
import { readActions, readInstructions, writeActions, writeInstructions } from './instructions.js';
import { multipartTypeOf, PORT_BYTES, readPort, readReplyBody, readRequestBody, writePort, writeReplyBody, writeRequestBody } from './multipart.js';
import { readMatch, writeMatch } from './oxm.js';
import { readPacketQueues, writePacketQueues } from './queue.js';
import type { AsyncConfig, ControllerRole, HelloElement, OfMessage, PacketInReason, PortReason } from './types.js';

/**
 * OpenFlow 1.3 messages (`types.ts`) to bytes and back (OpenFlow Switch
 * Specification 1.3.5, section 7). Big-endian. Every message starts with
 * ofp_header:
 *
 *   0  version  u8   0x04 (HELLO: any; the agent negotiates)
 *   1  type     u8   OFPT_*
 *   2  length   u16  of the whole message, header included
 *   4  xid      u32
 *
 * then the body (offsets from the start of the message):
 *
 *   HELLO (0)              8  elements: type u16, length u16 (without
 *                             padding), body, zeros to a multiple of 8;
 *                             VERSIONBITMAP (1): u32 bitmaps
 *   ERROR (1)              8  type u16, code u16, data
 *                             (type 0xffff: exp_code u16, experimenter u32, data)
 *   ECHO_REQUEST/REPLY     8  data
 *   EXPERIMENTER (4)       8  experimenter u32, exp_type u32, data
 *   FEATURES_REPLY (6)     8  datapath_id u64, n_buffers u32, n_tables u8,
 *                             auxiliary_id u8, pad 2, capabilities u32, reserved u32 (0)
 *   GET_CONFIG_REPLY (8),  8  flags u16, miss_send_len u16
 *   SET_CONFIG (9)
 *   PACKET_IN (10)         8  buffer_id u32, total_len u16, reason u8, table_id u8,
 *                             cookie u64, match, pad 2, data
 *   FLOW_REMOVED (11)      8  cookie u64, priority u16, reason u8, table_id u8,
 *                             duration_sec u32, duration_nsec u32, idle_timeout u16,
 *                             hard_timeout u16, packet_count u64, byte_count u64, match
 *   PORT_STATUS (12)       8  reason u8, pad 7, ofp_port (64)
 *   PACKET_OUT (13)        8  buffer_id u32, in_port u32, actions_len u16, pad 6,
 *                             actions (actions_len bytes), data
 *   FLOW_MOD (14)          8  cookie u64, cookie_mask u64, table_id u8, command u8,
 *                             idle_timeout u16, hard_timeout u16, priority u16,
 *                             buffer_id u32, out_port u32, out_group u32, flags u16,
 *                             pad 2, match, instructions
 *   MULTIPART_REQUEST (18) 8  type u16, flags u16, pad 4, body (multipart.ts)
 *   MULTIPART_REPLY (19)
 *   QUEUE_GET_CONFIG_      8  port u32, pad 4
 *     REQUEST (22)
 *   QUEUE_GET_CONFIG_      8  port u32, pad 4, ofp_packet_queue list (queue.ts)
 *     REPLY (23)
 *   ROLE_REQUEST (24),     8  role u32, pad 4, generation_id u64
 *   ROLE_REPLY (25)
 *   GET_ASYNC_REPLY (27),  8  packet_in_mask u32 x2, port_status_mask u32 x2,
 *   SET_ASYNC (28)            flow_removed_mask u32 x2
 *   FEATURES_REQUEST, GET_CONFIG_REQUEST, BARRIER_REQUEST/REPLY,
 *   GET_ASYNC_REQUEST: header only.
 *
 * Matches, actions and instructions: `oxm.ts`, `instructions.ts`.
 *
 * `parseOf` takes exactly one message (what `OfFramer` hands out) and never
 * throws. It checks, in order: 8 header bytes (OF_TRUNCATED), the length
 * field against the bytes (OF_TRUNCATED if fewer, OF_BAD_LENGTH if more or
 * if below 8), the version, then the body: fixed fields, lengths of nested
 * structures, values, padding (zero), then that the body is used up. Any
 * proper prefix of a valid message is therefore OF_TRUNCATED. Padding and
 * reserved fields must be zero, so an accepted message re-encodes to the
 * same bytes, with one exception: OXM TLVs are re-encoded in the canonical
 * order (`oxm.ts`). A message type the codec does not read parses to
 * `{ type: 'unknown' }`; a multipart type it does not read, to a body of
 * type 'unsupported'; an action or instruction type, to 'unsupported'.
 *
 * `encodeOf` throws RangeArgumentError naming the field that cannot be
 * encoded (out of range, wrong type, a message over 65535 bytes).
 */

const BAD_LEN: OfErrorAnswer = { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_LEN };
const HELLO_BAD: OfErrorAnswer = { type: OFPET.HELLO_FAILED, code: OFPHFC.INCOMPATIBLE };

const TYPE_NUMBERS: Record<Exclude<OfMessage['type'], 'unknown'>, number> = {
  hello: OFPT.HELLO,
  error: OFPT.ERROR,
  'error-experimenter': OFPT.ERROR,
  'echo-request': OFPT.ECHO_REQUEST,
  'echo-reply': OFPT.ECHO_REPLY,
  experimenter: OFPT.EXPERIMENTER,
  'features-request': OFPT.FEATURES_REQUEST,
  'features-reply': OFPT.FEATURES_REPLY,
  'get-config-request': OFPT.GET_CONFIG_REQUEST,
  'get-config-reply': OFPT.GET_CONFIG_REPLY,
  'set-config': OFPT.SET_CONFIG,
  'packet-in': OFPT.PACKET_IN,
  'flow-removed': OFPT.FLOW_REMOVED,
  'port-status': OFPT.PORT_STATUS,
  'packet-out': OFPT.PACKET_OUT,
  'flow-mod': OFPT.FLOW_MOD,
  'multipart-request': OFPT.MULTIPART_REQUEST,
  'multipart-reply': OFPT.MULTIPART_REPLY,
  'barrier-request': OFPT.BARRIER_REQUEST,
  'barrier-reply': OFPT.BARRIER_REPLY,
  'queue-get-config-request': OFPT.QUEUE_GET_CONFIG_REQUEST,
  'queue-get-config-reply': OFPT.QUEUE_GET_CONFIG_REPLY,
  'role-request': OFPT.ROLE_REQUEST,
  'role-reply': OFPT.ROLE_REPLY,
  'get-async-request': OFPT.GET_ASYNC_REQUEST,
  'get-async-reply': OFPT.GET_ASYNC_REPLY,
  'set-async': OFPT.SET_ASYNC,
};

/** The OFPT_* numbers `parseOf` reads into a typed message (the rest become `unknown`). */
export const KNOWN_TYPES: ReadonlySet<number> = new Set(Object.values(TYPE_NUMBERS));

const PACKET_IN_REASONS: readonly PacketInReason[] = ['no-match', 'action', 'invalid-ttl'];
const FLOW_REMOVED_REASONS: readonly FlowRemovedReason[] = ['idle-timeout', 'hard-timeout', 'delete', 'group-delete'];
const PORT_REASONS: readonly PortReason[] = ['add', 'delete', 'modify'];
const ROLES: readonly ControllerRole[] = ['nochange', 'equal', 'master', 'slave'];
const COMMANDS: readonly FlowModCommand[] = ['add', 'modify', 'modify-strict', 'delete', 'delete-strict'];

// ---------------------------------------------------------------------------
// Encode

/** `msg` as one message's bytes. Throws RangeArgumentError naming the field that cannot be encoded. */
export function encodeOf(msg: OfMessage): Uint8Array {
  if (msg === null || typeof msg !== 'object') throw new RangeArgumentError('message', msg, 'an OfMessage');
  let type: number;
  if (msg.type === 'unknown') {
    if (!isUint(msg.msgType, 0xff) || KNOWN_TYPES.has(msg.msgType)) {
      throw new RangeArgumentError('msgType', msg.msgType, 'a message type (0-255) the codec does not read');
    }
    type = msg.msgType;
  } else {
    const t = Object.hasOwn(TYPE_NUMBERS, msg.type) ? TYPE_NUMBERS[msg.type] : undefined;
    if (t === undefined) throw new RangeArgumentError('type', (msg as { type?: unknown }).type, 'an OfMessage type');
    type = t;
  }
  const w = new Writer();
  w.u8(msg.type === 'hello' ? msg.version : OFP_VERSION, 'version');
  w.u8(type, 'type');
  w.u16(0, 'length');
  w.u32(msg.xid, 'xid');
  writeBody(w, msg);
  if (w.length > OFP_MAX_MESSAGE_BYTES) {
    throw new RangeArgumentError('length', w.length, `a message of at most ${OFP_MAX_MESSAGE_BYTES} bytes`);
  }
  w.set16(2, w.length, 'length');
  return w.finish();
}

function writeBody(w: Writer, m: OfMessage): void {
  switch (m.type) {
    case 'hello':
      if (!Array.isArray(m.elements)) throw new RangeArgumentError('elements', m.elements, 'an array of hello elements');
      m.elements.forEach((e, i) => writeHelloElement(w, e, `elements[${i}]`));
      return;
    case 'error':
      if (m.errType === OFPET.EXPERIMENTER) throw new RangeArgumentError('errType', m.errType, "not 0xffff (use 'error-experimenter')");
      w.u16(m.errType, 'errType');
      w.u16(m.code, 'code');
      w.bytes(m.data, 'data');
      return;
    case 'error-experimenter':
      w.u16(OFPET.EXPERIMENTER, 'errType');
      w.u16(m.expCode, 'expCode');
      w.u32(m.experimenter, 'experimenter');
      w.bytes(m.data, 'data');
      return;
    case 'echo-request':
    case 'echo-reply':
      w.bytes(m.data, 'data');
      return;
    case 'experimenter':
      w.u32(m.experimenter, 'experimenter');
      w.u32(m.expType, 'expType');
      w.bytes(m.data, 'data');
      return;
    case 'features-request':
    case 'get-config-request':
    case 'barrier-request':
    case 'barrier-reply':
    case 'get-async-request':
      return;
    case 'features-reply':
      w.u64(m.datapathId, 'datapathId');
      w.u32(m.nBuffers, 'nBuffers');
      w.u8(m.nTables, 'nTables');
      w.u8(m.auxiliaryId, 'auxiliaryId');
      w.zeros(2);
      w.u32(m.capabilities, 'capabilities');
      w.zeros(4);
      return;
    case 'get-config-reply':
    case 'set-config':
      w.u16(m.flags, 'flags');
      w.u16(m.missSendLen, 'missSendLen');
      return;
    case 'packet-in':
      w.u32(m.bufferId, 'bufferId');
      w.u16(m.totalLen, 'totalLen');
      w.u8(enumIndex(PACKET_IN_REASONS, m.reason, 'reason'), 'reason');
      w.u8(m.tableId, 'tableId');
      w.u64(m.cookie, 'cookie');
      writeMatch(w, m.match, 'match');
      w.zeros(2);
      w.bytes(m.data, 'data');
      return;
    case 'flow-removed':
      w.u64(m.cookie, 'cookie');
      w.u16(m.priority, 'priority');
      w.u8(enumIndex(FLOW_REMOVED_REASONS, m.reason, 'reason'), 'reason');
      w.u8(m.tableId, 'tableId');
      w.u32(m.durationSec, 'durationSec');
      w.u32(m.durationNsec, 'durationNsec');
      w.u16(m.idleTimeout, 'idleTimeout');
      w.u16(m.hardTimeout, 'hardTimeout');
      w.u64(m.packetCount, 'packetCount');
      w.u64(m.byteCount, 'byteCount');
      writeMatch(w, m.match, 'match');
      return;
    case 'port-status':
      w.u8(enumIndex(PORT_REASONS, m.reason, 'reason'), 'reason');
      w.zeros(7);
      writePort(w, m.port, 'port');
      return;
    case 'packet-out': {
      w.u32(m.bufferId, 'bufferId');
      w.u32(m.inPort, 'inPort');
      const at = w.length;
      w.u16(0, 'actionsLen');
      w.zeros(6);
      const start = w.length;
      writeActions(w, m.actions, 'actions');
      w.set16(at, w.length - start, 'actionsLen');
      w.bytes(m.data, 'data');
      return;
    }
    case 'flow-mod': {
      const f = m.mod;
      if (f === null || typeof f !== 'object') throw new RangeArgumentError('mod', f, 'a FlowMod');
      w.u64(f.cookie, 'mod.cookie');
      w.u64(f.cookieMask, 'mod.cookieMask');
      w.u8(f.tableId, 'mod.tableId');
      w.u8(enumIndex(COMMANDS, f.command, 'mod.command'), 'mod.command');
      w.u16(f.idleTimeout, 'mod.idleTimeout');
      w.u16(f.hardTimeout, 'mod.hardTimeout');
      w.u16(f.priority, 'mod.priority');
      w.u32(f.bufferId, 'mod.bufferId');
      w.u32(f.outPort, 'mod.outPort');
      w.u32(f.outGroup, 'mod.outGroup');
      w.u16(f.flags, 'mod.flags');
      w.zeros(2);
      writeMatch(w, f.match, 'mod.match');
      writeInstructions(w, f.instructions, 'mod.instructions');
      return;
    }
    case 'role-request':
    case 'role-reply':
      w.u32(enumIndex(ROLES, m.role, 'role'), 'role');
      w.zeros(4);
      w.u64(m.generationId, 'generationId');
      return;
    case 'get-async-reply':
    case 'set-async':
      writeAsync(w, m.config);
      return;
    case 'queue-get-config-request':
      w.u32(m.portNo, 'portNo');
      w.zeros(4);
      return;
    case 'queue-get-config-reply':
      w.u32(m.portNo, 'portNo');
      w.zeros(4);
      writePacketQueues(w, m.queues, 'queues');
      return;
    case 'multipart-request':
      w.u16(multipartTypeOf(m.body, 'body'), 'body.type');
      w.u16(m.flags, 'flags');
      w.zeros(4);
      writeRequestBody(w, m.body, 'body');
      return;
    case 'multipart-reply':
      w.u16(multipartTypeOf(m.body, 'body'), 'body.type');
      w.u16(m.flags, 'flags');
      w.zeros(4);
      writeReplyBody(w, m.body, 'body');
      return;
    case 'unknown':
      w.bytes(m.body, 'body');
      return;
  }
}

function writeHelloElement(w: Writer, e: HelloElement, field: string): void {
  if (e === null || typeof e !== 'object') throw new RangeArgumentError(field, e, 'a hello element');
  const start = w.length;
  if (e.type === 'version-bitmap') {
    if (!Array.isArray(e.bitmaps)) throw new RangeArgumentError(`${field}.bitmaps`, e.bitmaps, 'an array of u32');
    w.u16(OFPHET_VERSIONBITMAP, `${field}.type`);
    w.u16(0, `${field}.length`);
    e.bitmaps.forEach((b, i) => w.u32(b, `${field}.bitmaps[${i}]`));
  } else if (e.type === 'unknown') {
    if (e.elemType === OFPHET_VERSIONBITMAP) throw new RangeArgumentError(`${field}.elemType`, e.elemType, "not 1 (use 'version-bitmap')");
    w.u16(e.elemType, `${field}.elemType`);
    w.u16(0, `${field}.length`);
    w.bytes(e.data, `${field}.data`);
  } else {
    throw new RangeArgumentError(`${field}.type`, (e as { type?: unknown }).type, "'version-bitmap' or 'unknown'");
  }
  w.set16(start + 2, w.length - start, `${field}.length`);
  w.padTo8(start);
}

function writeAsync(w: Writer, c: AsyncConfig): void {
  if (c === null || typeof c !== 'object') throw new RangeArgumentError('config', c, 'an AsyncConfig');
  for (const k of ['packetInMask', 'portStatusMask', 'flowRemovedMask'] as const) {
    const pair = c[k];
    if (!Array.isArray(pair) || pair.length !== 2) throw new RangeArgumentError(`config.${k}`, pair, 'two u32');
    w.u32(pair[0], `config.${k}[0]`);
    w.u32(pair[1], `config.${k}[1]`);
  }
}

function enumIndex<T>(values: readonly T[], v: T, field: string): number {
  const i = values.indexOf(v);
  if (i < 0) throw new RangeArgumentError(field, v, values.map((x) => `'${String(x)}'`).join(', '));
  return i;
}

// ---------------------------------------------------------------------------
// Parse

/** The message in `bytes`, which must hold exactly one. Never throws. */
export function parseOf(bytes: Uint8Array): Result<OfMessage, OfParseError> {
  const n = bytes.length;
  if (n < OFP_HEADER_BYTES) {
    return err(new OfParseError('OF_TRUNCATED', 'header', `OpenFlow header truncated: ${n} bytes, needs 8`, BAD_LEN));
  }
  const version = bytes[0]!;
  const type = bytes[1]!;
  const length = get16(bytes, 2);
  const xid = get32(bytes, 4);
  const name = typeName(type);
  if (length < OFP_HEADER_BYTES) {
    return err(new OfParseError('OF_BAD_LENGTH', name, `${name} length field: ${length}, less than the 8-byte header`, BAD_LEN, xid, type));
  }
  if (n < length) {
    return err(new OfParseError('OF_TRUNCATED', name, `${name} truncated: ${n} bytes, the header says ${length}`, BAD_LEN, xid, type));
  }
  if (n > length) {
    return err(new OfParseError('OF_BAD_LENGTH', name, `${name}: ${n} bytes, the header says ${length}`, BAD_LEN, xid, type));
  }
  if (type !== OFPT.HELLO && version !== OFP_VERSION) {
    return err(
      new OfParseError(
        'OF_BAD_VERSION',
        name,
        `${name} version: 0x${version.toString(16).padStart(2, '0')}, needs 0x04`,
        {
          type: OFPET.BAD_REQUEST,
          code: OFPBRC.BAD_VERSION,
        },
        xid,
        type,
      ),
    );
  }
  try {
    return ok(parseBody(new Reader(bytes, OFP_HEADER_BYTES, length, name, BAD_LEN), version, type, xid));
  } catch (e) {
    if (e instanceof OfParseError) return err(e.withHeader(xid, type));
    throw e;
  }
}

function parseBody(r: Reader, version: number, type: number, xid: number): OfMessage {
  switch (type) {
    case OFPT.HELLO:
      return { type: 'hello', version, xid, elements: readHelloElements(r) };
    case OFPT.ERROR: {
      const errType = r.u16();
      if (errType === OFPET.EXPERIMENTER) {
        const expCode = r.u16();
        return { type: 'error-experimenter', xid, expCode, experimenter: r.u32(), data: r.rest() };
      }
      return { type: 'error', xid, errType, code: r.u16(), data: r.rest() };
    }
    case OFPT.ECHO_REQUEST:
      return { type: 'echo-request', xid, data: r.rest() };
    case OFPT.ECHO_REPLY:
      return { type: 'echo-reply', xid, data: r.rest() };
    case OFPT.EXPERIMENTER:
      return { type: 'experimenter', xid, experimenter: r.u32(), expType: r.u32(), data: r.rest() };
    case OFPT.FEATURES_REQUEST:
      r.done();
      return { type: 'features-request', xid };
    case OFPT.FEATURES_REPLY: {
      const datapathId = r.u64();
      const nBuffers = r.u32();
      const nTables = r.u8();
      const auxiliaryId = r.u8();
      r.pad(2);
      const capabilities = r.u32();
      r.pad(4);
      r.done();
      return { type: 'features-reply', xid, datapathId, nBuffers, nTables, auxiliaryId, capabilities };
    }
    case OFPT.GET_CONFIG_REQUEST:
      r.done();
      return { type: 'get-config-request', xid };
    case OFPT.GET_CONFIG_REPLY:
    case OFPT.SET_CONFIG: {
      const flags = r.u16();
      const missSendLen = r.u16();
      r.done();
      return { type: type === OFPT.SET_CONFIG ? 'set-config' : 'get-config-reply', xid, flags, missSendLen };
    }
    case OFPT.PACKET_IN: {
      const bufferId = r.u32();
      const totalLen = r.u16();
      const reason = enumValue(PACKET_IN_REASONS, r.u8(), 'PACKET_IN reason', BAD_REQUEST_EPERM);
      const tableId = r.u8();
      const cookie = r.u64();
      const match = readMatch(r);
      r.pad(2);
      return { type: 'packet-in', xid, bufferId, totalLen, reason, tableId, cookie, match, data: r.rest() };
    }
    case OFPT.FLOW_REMOVED: {
      const cookie = r.u64();
      const priority = r.u16();
      const reason = enumValue(FLOW_REMOVED_REASONS, r.u8(), 'FLOW_REMOVED reason', BAD_REQUEST_EPERM);
      const tableId = r.u8();
      const durationSec = r.u32();
      const durationNsec = r.u32();
      const idleTimeout = r.u16();
      const hardTimeout = r.u16();
      const packetCount = r.u64();
      const byteCount = r.u64();
      const match = readMatch(r);
      r.done();
      return {
        type: 'flow-removed',
        xid,
        cookie,
        priority,
        reason,
        tableId,
        durationSec,
        durationNsec,
        idleTimeout,
        hardTimeout,
        packetCount,
        byteCount,
        match,
      };
    }
    case OFPT.PORT_STATUS: {
      const reason = enumValue(PORT_REASONS, r.u8(), 'PORT_STATUS reason', BAD_REQUEST_EPERM);
      r.pad(7);
      const port = readPort(r.sub(PORT_BYTES, 'port', BAD_LEN));
      r.done();
      return { type: 'port-status', xid, reason, port };
    }
    case OFPT.PACKET_OUT: {
      const bufferId = r.u32();
      const inPort = r.u32();
      const actionsLen = r.u16();
      r.pad(6);
      if (actionsLen % 8 !== 0 || actionsLen > r.remaining) {
        fail('OF_BAD_LENGTH', r.what, `PACKET_OUT actions_len: ${actionsLen}, needs a multiple of 8 within the ${r.remaining} bytes left`, BAD_LEN);
      }
      const actions = readActions(r.sub(actionsLen, 'action', { type: OFPET.BAD_ACTION, code: OFPBAC.BAD_LEN }));
      return { type: 'packet-out', xid, bufferId, inPort, actions, data: r.rest() };
    }
    case OFPT.FLOW_MOD: {
      const cookie = r.u64();
      const cookieMask = r.u64();
      const tableId = r.u8();
      const command = enumValue(COMMANDS, r.u8(), 'FLOW_MOD command', { type: OFPET.FLOW_MOD_FAILED, code: OFPFMFC.BAD_COMMAND });
      const idleTimeout = r.u16();
      const hardTimeout = r.u16();
      const priority = r.u16();
      const bufferId = r.u32();
      const outPort = r.u32();
      const outGroup = r.u32();
      const flags = r.u16();
      r.pad(2);
      const match = readMatch(r);
      const instructions = readInstructions(r);
      return {
        type: 'flow-mod',
        xid,
        mod: { cookie, cookieMask, tableId, command, idleTimeout, hardTimeout, priority, bufferId, outPort, outGroup, flags, match, instructions },
      };
    }
    case OFPT.MULTIPART_REQUEST:
    case OFPT.MULTIPART_REPLY: {
      const mpType = r.u16();
      const flags = r.u16();
      r.pad(4);
      if (type === OFPT.MULTIPART_REQUEST) return { type: 'multipart-request', xid, flags, body: readRequestBody(mpType, r) };
      return { type: 'multipart-reply', xid, flags, body: readReplyBody(mpType, r) };
    }
    case OFPT.BARRIER_REQUEST:
      r.done();
      return { type: 'barrier-request', xid };
    case OFPT.BARRIER_REPLY:
      r.done();
      return { type: 'barrier-reply', xid };
    case OFPT.QUEUE_GET_CONFIG_REQUEST: {
      const portNo = r.u32();
      r.pad(4);
      r.done();
      return { type: 'queue-get-config-request', xid, portNo };
    }
    case OFPT.QUEUE_GET_CONFIG_REPLY: {
      const portNo = r.u32();
      r.pad(4);
      return { type: 'queue-get-config-reply', xid, portNo, queues: readPacketQueues(r) };
    }
    case OFPT.ROLE_REQUEST:
    case OFPT.ROLE_REPLY: {
      const role = enumValue(ROLES, r.u32(), 'role', { type: OFPET.ROLE_REQUEST_FAILED, code: OFPRRFC.BAD_ROLE });
      r.pad(4);
      const generationId = r.u64();
      r.done();
      return { type: type === OFPT.ROLE_REQUEST ? 'role-request' : 'role-reply', xid, role, generationId };
    }
    case OFPT.GET_ASYNC_REQUEST:
      r.done();
      return { type: 'get-async-request', xid };
    case OFPT.GET_ASYNC_REPLY:
    case OFPT.SET_ASYNC: {
      const config: AsyncConfig = {
        packetInMask: [r.u32(), r.u32()],
        portStatusMask: [r.u32(), r.u32()],
        flowRemovedMask: [r.u32(), r.u32()],
      };
      r.done();
      return { type: type === OFPT.SET_ASYNC ? 'set-async' : 'get-async-reply', xid, config };
    }
    default:
      return { type: 'unknown', xid, msgType: type, body: r.rest() };
  }
}

/** A reason or role the switch would never send: the agent has no better answer than EPERM. */
const BAD_REQUEST_EPERM: OfErrorAnswer = { type: OFPET.BAD_REQUEST, code: OFPBRC.EPERM };

function enumValue<T>(values: readonly T[], v: number, what: string, answer: OfErrorAnswer): T {
  const x = values[v];
  if (x === undefined) fail('OF_BAD_FIELD', what, `${what}: ${v}, needs 0-${values.length - 1}`, answer);
  return x;
}

function readHelloElements(r: Reader): HelloElement[] {
  const out: HelloElement[] = [];
  while (r.remaining > 0) {
    const at = r.pos;
    if (r.remaining < 4) fail('OF_BAD_LENGTH', 'HELLO', `HELLO element at offset ${at}: ${r.remaining} bytes, a header needs 4`, HELLO_BAD);
    const type = get16(r.b, at);
    const length = get16(r.b, at + 2);
    if (length < 4 || roundUp8(length) > r.remaining) {
      fail(
        'OF_BAD_LENGTH',
        'HELLO',
        `HELLO element type ${type} at offset ${at}: length ${length} (padded ${roundUp8(length)}), ${r.remaining} bytes left`,
        HELLO_BAD,
      );
    }
    const e = r.sub(roundUp8(length), 'HELLO element', HELLO_BAD);
    e.pos += 4;
    const body = e.sub(length - 4, 'HELLO element', HELLO_BAD);
    e.pad(e.remaining);
    if (type === OFPHET_VERSIONBITMAP) {
      if (body.remaining % 4 !== 0) {
        fail('OF_BAD_LENGTH', 'HELLO', `HELLO version bitmap: ${body.remaining} bytes, not a multiple of 4`, HELLO_BAD);
      }
      const bitmaps: number[] = [];
      while (body.remaining > 0) bitmaps.push(body.u32());
      out.push({ type: 'version-bitmap', bitmaps });
    } else {
      out.push({ type: 'unknown', elemType: type, data: body.rest() });
    }
  }
  return out;
}

const TYPE_NAMES = new Map<number, string>(Object.entries(OFPT).map(([k, v]) => [v, k]));

/** OFPT_* name of a type number ('FLOW_MOD'), or 'type N'. */
export function typeName(type: number): string {
  return TYPE_NAMES.get(type) ?? `type ${type}`;
}

// ---------------------------------------------------------------------------
// Framing

/**
 * Splits a TCP byte stream into OpenFlow messages by the header's length
 * field. `push` the bytes as they arrive; `next` returns the next complete
 * message (a new array, owned by the caller), undefined when more bytes
 * are needed, or the framing error. A length field below 8 cannot be
 * skipped over, so it is fatal: OF_BAD_LENGTH (with the xid of that
 * header, answer OFPBRC_BAD_LEN), returned by every later `next`; the
 * connection must be closed. Nothing else about a message is checked here.
 */
export class OfFramer {
  private buf = new Uint8Array(4096);
  private head = 0;
  private tail = 0;
  private error: OfParseError | undefined;

  /** Bytes received and not yet handed out. */
  get buffered(): number {
    return this.tail - this.head;
  }

  /** The fatal framing error, once there is one. */
  get failed(): OfParseError | undefined {
    return this.error;
  }

  push(chunk: Uint8Array): void {
    if (this.error !== undefined || chunk.length === 0) return;
    const have = this.tail - this.head;
    if (this.tail + chunk.length > this.buf.length) {
      if (have + chunk.length <= this.buf.length) {
        this.buf.copyWithin(0, this.head, this.tail);
      } else {
        let size = this.buf.length * 2;
        while (size < have + chunk.length) size *= 2;
        const nb = new Uint8Array(size);
        nb.set(this.buf.subarray(this.head, this.tail));
        this.buf = nb;
      }
      this.head = 0;
      this.tail = have;
    }
    this.buf.set(chunk, this.tail);
    this.tail += chunk.length;
  }

  next(): Result<Uint8Array, OfParseError> | undefined {
    if (this.error !== undefined) return err(this.error);
    const have = this.tail - this.head;
    if (have < OFP_HEADER_BYTES) return undefined;
    const length = get16(this.buf, this.head + 2);
    if (length < OFP_HEADER_BYTES) {
      const type = this.buf[this.head + 1]!;
      this.error = new OfParseError(
        'OF_BAD_LENGTH',
        'framing',
        `${typeName(type)} length field: ${length}, less than the 8-byte header; the stream cannot be framed`,
        BAD_LEN,
        get32(this.buf, this.head + 4),
        type,
      );
      return err(this.error);
    }
    if (have < length) return undefined;
    const frame = this.buf.slice(this.head, this.head + length);
    this.head += length;
    if (this.head === this.tail) this.head = this.tail = 0;
    return ok(frame);
  }
}
