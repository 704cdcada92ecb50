import { RangeArgumentError } from '../../core/errors.js';
import { encodeOf } from './codec.js';
import { OFP_MAX_MESSAGE_BYTES, OFPMPF_REPLY_MORE } from './constants.js';
import type { OfErrorAnswer, OfParseError } from './errors.js';
import type { MultipartReplyBody, OfMessage } from './types.js';

/**
 * Two replies every agent builds the same way: the ERROR for bytes the codec
 * refused, and a multipart reply too big for one message.
 */

/**
 * How much of the offending message an ERROR carries at most. OpenFlow
 * 1.3.5 section 7.4.4 asks for at least 64 bytes; the whole message (as
 * Open vSwitch sends it, up to what fits in one ERROR) lets a peer's
 * dissector read the request back whole instead of flagging a cut one.
 */
export const ERROR_DATA_BYTES = OFP_MAX_MESSAGE_BYTES - 12;

/**
 * The ERROR answering `offending`: `answer` (by default the parse error's),
 * the offending message's xid (0 when its header was unreadable), and the
 * offending message (all of it that fits) as data.
 */
export function errorReply(offending: Uint8Array, answer: OfErrorAnswer, xid: number | undefined): OfMessage {
  return {
    type: 'error',
    xid: xid ?? 0,
    errType: answer.type,
    code: answer.code,
    data: offending.slice(0, ERROR_DATA_BYTES),
  };
}

/** `errorReply` for a parse error: its answer and xid. */
export function errorReplyFor(e: OfParseError, offending: Uint8Array): OfMessage {
  return errorReply(offending, e.answer, e.xid);
}

type ListKey = 'stats' | 'groups' | 'tables' | 'ports';
const LIST_KEY: Partial<Record<MultipartReplyBody['type'], ListKey>> = {
  flow: 'stats',
  table: 'stats',
  'port-stats': 'stats',
  queue: 'stats',
  'group-desc': 'groups',
  'table-features': 'tables',
  'port-desc': 'ports',
};

const MULTIPART_HEADER_BYTES = 16;

/**
 * `body` as one or more MULTIPART_REPLY messages of at most `maxBytes`
 * bytes each (OFPMPF_REPLY_MORE on all but the last), for list bodies that
 * may not fit in one message: the entries are packed in order, as many per
 * message as fit. Other bodies, and lists that fit, give one message. Throws
 * RangeArgumentError when a single entry cannot fit, or as encodeOf does.
 */
export function splitMultipartReply(xid: number, body: MultipartReplyBody, maxBytes = OFP_MAX_MESSAGE_BYTES): OfMessage[] {
  if (!Number.isInteger(maxBytes) || maxBytes < MULTIPART_HEADER_BYTES || maxBytes > OFP_MAX_MESSAGE_BYTES) {
    throw new RangeArgumentError('maxBytes', maxBytes, `an integer in [${MULTIPART_HEADER_BYTES}, ${OFP_MAX_MESSAGE_BYTES}]`);
  }
  const key = LIST_KEY[body.type];
  const one = (b: MultipartReplyBody, more: boolean): OfMessage => ({ type: 'multipart-reply', xid, flags: more ? OFPMPF_REPLY_MORE : 0, body: b });
  const list = key === undefined ? undefined : ((body as unknown as Record<ListKey, unknown>)[key] as unknown[]);
  if (key === undefined || !Array.isArray(list)) {
    const m = one(body, false);
    checkFits(encodeOf(m).length, maxBytes, 'body');
    return [m];
  }
  const withItems = (items: unknown[]): MultipartReplyBody => ({ ...body, [key]: items }) as MultipartReplyBody;
  const out: OfMessage[] = [];
  let current: unknown[] = [];
  let size = MULTIPART_HEADER_BYTES;
  list.forEach((item, i) => {
    const n = encodeOf(one(withItems([item]), false)).length - MULTIPART_HEADER_BYTES;
    checkFits(MULTIPART_HEADER_BYTES + n, maxBytes, `body.${key}[${i}]`);
    if (size + n > maxBytes) {
      out.push(one(withItems(current), true));
      current = [];
      size = MULTIPART_HEADER_BYTES;
    }
    current.push(item);
    size += n;
  });
  out.push(one(withItems(current), false));
  return out;
}

function checkFits(n: number, maxBytes: number, field: string): void {
  if (n > maxBytes) throw new RangeArgumentError(field, `${n} bytes`, `at most ${maxBytes} bytes in one MULTIPART_REPLY`);
}
