import { RangeArgumentError } from '../../core/errors.js';
import { get16 } from '../bytes.js';
import { fail, type Reader, type Writer } from './buffer.js';
import { OFPBRC, OFPET, OFPQT } from './constants.js';
import type { OfErrorAnswer } from './errors.js';
import type { OfPacketQueue, QueueProp } from './types.js';

/**
 * The queue list of QUEUE_GET_CONFIG_REPLY (OpenFlow 1.3.5 sections 7.3.6
 * and A.3.6). Layouts (offsets within each structure):
 *
 *   ofp_packet_queue, 16 + properties: queue_id u32, port u32, len u16 (of
 *     the whole queue, properties included), pad 6
 *   ofp_queue_prop_header, 8: property u16, len u16 (of the whole property,
 *     header included), pad 4
 *   MIN_RATE (1), MAX_RATE (2), 16: header, rate u16, pad 6
 *   EXPERIMENTER (0xffff), 16 + data: header, experimenter u32, pad 4, data
 *
 * A queue's len must be a multiple of 8 in [16, what is left of the
 * message]; a property's a multiple of 8 in [8, what is left of its queue],
 * and exactly 16 for the rates, at least 16 for an experimenter property.
 * Length problems answer OFPET_BAD_REQUEST / OFPBRC_BAD_LEN (as Open
 * vSwitch does). An unknown property type is refused, as an unknown
 * table-feature property is (OF_UNSUPPORTED); OpenFlow 1.3 has no error
 * code for a bad queue property (OFPET_QUEUE_OP_FAILED has none for types),
 * so it answers OFPET_BAD_REQUEST / OFPBRC_EPERM, the codec's answer for a
 * value the peer should never send.
 */

const BAD_LEN: OfErrorAnswer = { type: OFPET.BAD_REQUEST, code: OFPBRC.BAD_LEN };
const BAD_PROP: OfErrorAnswer = { type: OFPET.BAD_REQUEST, code: OFPBRC.EPERM };

export const PACKET_QUEUE_FIXED = 16;
export const QUEUE_PROP_HEADER_BYTES = 8;
export const QUEUE_PROP_RATE_BYTES = 16;
export const QUEUE_PROP_EXPERIMENTER_FIXED = 16;

const RATE_TYPES: Record<'min-rate' | 'max-rate', number> = { 'min-rate': OFPQT.MIN_RATE, 'max-rate': OFPQT.MAX_RATE };

// ---------------------------------------------------------------------------
// Encode

export function writePacketQueues(w: Writer, queues: readonly OfPacketQueue[], field: string): void {
  if (!Array.isArray(queues)) throw new RangeArgumentError(field, queues, 'an array of OfPacketQueue');
  queues.forEach((q, i) => writePacketQueue(w, q, `${field}[${i}]`));
}

function writePacketQueue(w: Writer, q: OfPacketQueue, field: string): void {
  if (q === null || typeof q !== 'object') throw new RangeArgumentError(field, q, 'an OfPacketQueue');
  if (!Array.isArray(q.properties)) throw new RangeArgumentError(`${field}.properties`, q.properties, 'an array of QueueProp');
  const start = w.length;
  w.u32(q.queueId, `${field}.queueId`);
  w.u32(q.portNo, `${field}.portNo`);
  w.u16(0, `${field}.len`);
  w.zeros(6);
  q.properties.forEach((p, i) => writeQueueProp(w, p, `${field}.properties[${i}]`));
  w.set16(start + 8, w.length - start, `${field}.len`);
}

function writeQueueProp(w: Writer, p: QueueProp, field: string): void {
  if (p === null || typeof p !== 'object') throw new RangeArgumentError(field, p, 'a QueueProp');
  const start = w.length;
  switch (p.type) {
    case 'min-rate':
    case 'max-rate':
      w.u16(RATE_TYPES[p.type], `${field}.type`);
      w.u16(QUEUE_PROP_RATE_BYTES, `${field}.len`);
      w.zeros(4);
      w.u16(p.rate, `${field}.rate`);
      w.zeros(6);
      return;
    case 'experimenter':
      if (!(p.data instanceof Uint8Array) || p.data.length % 8 !== 0) {
        throw new RangeArgumentError(
          `${field}.data`,
          p.data instanceof Uint8Array ? `${p.data.length} bytes` : p.data,
          'a Uint8Array of a multiple of 8 bytes',
        );
      }
      w.u16(OFPQT.EXPERIMENTER, `${field}.type`);
      w.u16(0, `${field}.len`);
      w.zeros(4);
      w.u32(p.experimenter, `${field}.experimenter`);
      w.zeros(4);
      w.bytes(p.data, `${field}.data`);
      w.set16(start + 2, w.length - start, `${field}.len`);
      return;
    default:
      throw new RangeArgumentError(`${field}.type`, (p as { type?: unknown }).type, "'min-rate', 'max-rate' or 'experimenter'");
  }
}

// ---------------------------------------------------------------------------
// Parse

/** The ofp_packet_queue list that fills `r`. Throws OfParseError. */
export function readPacketQueues(r: Reader): OfPacketQueue[] {
  const out: OfPacketQueue[] = [];
  while (r.remaining > 0) out.push(readPacketQueue(r));
  return out;
}

function readPacketQueue(r: Reader): OfPacketQueue {
  const q = lengthPrefixed(r, 'packet queue', PACKET_QUEUE_FIXED, 8);
  const queueId = q.u32();
  const portNo = q.u32();
  q.pos += 2;
  q.pad(6);
  const properties: QueueProp[] = [];
  while (q.remaining > 0) properties.push(readQueueProp(q));
  return { queueId, portNo, properties };
}

function readQueueProp(r: Reader): QueueProp {
  const at = r.pos;
  const p = lengthPrefixed(r, 'queue property', QUEUE_PROP_HEADER_BYTES, 2);
  const type = get16(p.b, at);
  const len = p.remaining;
  const wrongLength = (needs: string): never =>
    fail('OF_BAD_LENGTH', 'queue property', `queue property type ${type} at offset ${at}: len ${len}, needs ${needs}`, BAD_LEN);
  switch (type) {
    case OFPQT.MIN_RATE:
    case OFPQT.MAX_RATE: {
      if (len !== QUEUE_PROP_RATE_BYTES) wrongLength(`${QUEUE_PROP_RATE_BYTES}`);
      p.pos += 4;
      p.pad(4);
      const rate = p.u16();
      p.pad(6);
      return { type: type === OFPQT.MIN_RATE ? 'min-rate' : 'max-rate', rate };
    }
    case OFPQT.EXPERIMENTER: {
      if (len < QUEUE_PROP_EXPERIMENTER_FIXED) wrongLength(`at least ${QUEUE_PROP_EXPERIMENTER_FIXED}`);
      p.pos += 4;
      p.pad(4);
      const experimenter = p.u32();
      p.pad(4);
      return { type: 'experimenter', experimenter, data: p.rest() };
    }
    default:
      return fail('OF_UNSUPPORTED', 'queue property', `queue property type ${type} at offset ${at} is not an OpenFlow 1.3 queue property`, BAD_PROP);
  }
}

/**
 * A reader over the structure at `r.pos` whose u16 length field sits
 * `lenAt` bytes in: the length must be a multiple of 8, at least `min`, and
 * within `r`. OF_BAD_LENGTH / OFPBRC_BAD_LEN otherwise.
 */
function lengthPrefixed(r: Reader, what: string, min: number, lenAt: number): Reader {
  const at = r.pos;
  if (r.remaining < min) fail('OF_BAD_LENGTH', what, `${what} at offset ${at}: ${r.remaining} bytes left, needs at least ${min}`, BAD_LEN);
  const len = get16(r.b, at + lenAt);
  if (len < min || len % 8 !== 0 || len > r.remaining) {
    fail('OF_BAD_LENGTH', what, `${what} at offset ${at}: len ${len}, needs a multiple of 8 in [${min}, ${r.remaining}]`, BAD_LEN);
  }
  return r.sub(len, what, BAD_LEN);
}
