/**
 * The 802.11 MAC frames cogmesh's routers exchange over a PHY (IEEE
 * 802.11-2016 9.2-9.3): data frames between stations of an IBSS (ToDS =
 * FromDS = 0: addr1 the receiver, addr2 the transmitter, addr3 the mesh's
 * BSSID) with an LLC/SNAP header naming an ethertype, and ACK control frames.
 * The FCS is not part of these bytes: the PHY appends and checks it. Mesh
 * address a is the locally administered MAC 02:00:00:00:hh:ll, broadcast is
 * ff:ff:ff:ff:ff:ff. Every multi-byte field is little-endian, as 802.11's are,
 * except the ethertype (network order, as SNAP carries it).
 */

import { RangeArgumentError } from '../core/errors.js';
import { BROADCAST, type NodeAddr } from './mesh.js';

/** IEEE 802 "Local Experimental Ethertype 1" (IEEE Std 802-2014 9.2.2): a mesh packet follows. */
export const MESH_ETHERTYPE = 0x88b5;
/** The mesh's BSSID (addr3): locally administered, outside the routers' 02:00:00:00:hh:ll. */
export const MESH_BSSID: readonly number[] = [0x02, 0x00, 0x00, 0xff, 0x00, 0x00];

/** Frame Control byte 0: protocol 0, type data (2) subtype 0; type control (1) subtype ACK (13). */
const FC_DATA = 0x08;
const FC_ACK = 0xd4;
/** Frame Control byte 1 (flags): Retry. */
const FC_RETRY = 0x08;
/** The data header: FC, duration, three addresses, sequence control. */
export const DOT11_DATA_HEADER_BYTES = 24;
/** An ACK: FC, duration, receiver address (the FCS the PHY adds makes 14). */
export const DOT11_ACK_BYTES = 10;
/** LLC (DSAP 0xaa, SSAP 0xaa, UI) and SNAP (OUI 00-00-00: an ethertype follows). */
const LLC_SNAP: readonly number[] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00];
export const SNAP_BYTES = LLC_SNAP.length + 2;
/** Largest duration field value that is a duration (bit 15 clear). */
const DURATION_MAX_US = 32767;
/** Sequence numbers count modulo 4096. */
export const SEQ_MODULO = 4096;

/** The locally administered MAC of mesh address `a` (02:00:00:00:hh:ll); the broadcast address for BROADCAST. */
export function meshMac(a: NodeAddr): number[] {
  if (!Number.isInteger(a) || a < 0 || a > 0xffff) throw new RangeArgumentError('address', a, 'a mesh address 0-65535');
  if (a === BROADCAST) return [0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
  return [0x02, 0x00, 0x00, 0x00, a >> 8, a & 0xff];
}

/** The mesh address of the MAC at `bytes[at..at+6)`, or undefined when it is none of the mesh's. */
function meshAddrAt(bytes: Uint8Array, at: number): NodeAddr | undefined {
  let ones = true;
  for (let i = 0; i < 6; i++) if (bytes[at + i] !== 0xff) ones = false;
  if (ones) return BROADCAST;
  if (bytes[at] !== 0x02 || bytes[at + 1] !== 0 || bytes[at + 2] !== 0 || bytes[at + 3] !== 0) return undefined;
  const a = (bytes[at + 4]! << 8) | bytes[at + 5]!;
  return a === BROADCAST ? undefined : a;
}

export interface Dot11DataFields {
  src: NodeAddr;
  dst: NodeAddr;
  payload: Uint8Array;
  /** Sequence number, 0-4095 (default 0). */
  seq?: number;
  retry?: boolean;
  /** The duration field, µs (the NAV it sets), 0-32767 (default 0). */
  durationUs?: number;
  /** The SNAP header's ethertype (default MESH_ETHERTYPE). */
  ethertype?: number;
}

function checkDuration(us: number): void {
  if (!Number.isInteger(us) || us < 0 || us > DURATION_MAX_US) throw new RangeArgumentError('durationUs', us, `an integer 0-${DURATION_MAX_US}`);
}

/** An 802.11 data frame carrying `payload` behind LLC/SNAP; no FCS. */
export function encodeDot11Data(f: Dot11DataFields): Uint8Array {
  const seq = f.seq ?? 0;
  if (!Number.isInteger(seq) || seq < 0 || seq >= SEQ_MODULO) throw new RangeArgumentError('seq', seq, `an integer 0-${SEQ_MODULO - 1}`);
  const durationUs = f.durationUs ?? 0;
  checkDuration(durationUs);
  const ethertype = f.ethertype ?? MESH_ETHERTYPE;
  if (!Number.isInteger(ethertype) || ethertype < 0x600 || ethertype > 0xffff)
    throw new RangeArgumentError('ethertype', ethertype, 'an ethertype 0x0600-0xffff');
  const out = new Uint8Array(DOT11_DATA_HEADER_BYTES + SNAP_BYTES + f.payload.length);
  const v = new DataView(out.buffer);
  out[0] = FC_DATA;
  out[1] = f.retry ? FC_RETRY : 0;
  v.setUint16(2, durationUs, true);
  out.set(meshMac(f.dst), 4);
  out.set(meshMac(f.src), 10);
  out.set(MESH_BSSID, 16);
  // Sequence control: fragment number 0 in the low 4 bits, the sequence number above.
  v.setUint16(22, seq << 4, true);
  out.set(LLC_SNAP, DOT11_DATA_HEADER_BYTES);
  v.setUint16(DOT11_DATA_HEADER_BYTES + LLC_SNAP.length, ethertype);
  out.set(f.payload, DOT11_DATA_HEADER_BYTES + SNAP_BYTES);
  return out;
}

/** An 802.11 ACK to `ra`; no FCS. */
export function encodeDot11Ack(ra: NodeAddr, durationUs = 0): Uint8Array {
  checkDuration(durationUs);
  const out = new Uint8Array(DOT11_ACK_BYTES);
  out[0] = FC_ACK;
  new DataView(out.buffer).setUint16(2, durationUs, true);
  out.set(meshMac(ra), 4);
  return out;
}

/** Why a frame was not one of the mesh's. */
export type Dot11Fault =
  /** Shorter than its header. */
  | 'short'
  /** Another frame type or subtype, or a protocol version other than 0. */
  | 'type'
  /** ToDS/FromDS set, fragmented or from outside the mesh's addresses or BSSID. */
  | 'foreign'
  /** No LLC/SNAP header, or another ethertype. */
  | 'ethertype';

export type Dot11Frame =
  | { kind: 'data'; src: NodeAddr; dst: NodeAddr; seq: number; retry: boolean; durationUs: number; payload: Uint8Array }
  | { kind: 'ack'; ra: NodeAddr; durationUs: number };

/** Reads a frame (FCS stripped) as one of the mesh's data frames or an ACK; the payload is a view into `bytes`. */
export function parseDot11(bytes: Uint8Array, ethertype = MESH_ETHERTYPE): { ok: true; frame: Dot11Frame } | { ok: false; fault: Dot11Fault } {
  if (bytes.length < DOT11_ACK_BYTES) return { ok: false, fault: 'short' };
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const durationUs = v.getUint16(2, true) & 0x7fff;
  if (bytes[0] === FC_ACK) {
    const ra = meshAddrAt(bytes, 4);
    if (ra === undefined || ra === BROADCAST) return { ok: false, fault: 'foreign' };
    return { ok: true, frame: { kind: 'ack', ra, durationUs } };
  }
  if (bytes[0] !== FC_DATA) return { ok: false, fault: 'type' };
  if (bytes.length < DOT11_DATA_HEADER_BYTES + SNAP_BYTES) return { ok: false, fault: 'short' };
  // Flags: ToDS, FromDS, More Fragments must be clear between stations of the mesh.
  if ((bytes[1]! & 0x07) !== 0) return { ok: false, fault: 'foreign' };
  const dst = meshAddrAt(bytes, 4);
  const src = meshAddrAt(bytes, 10);
  if (dst === undefined || src === undefined || src === BROADCAST) return { ok: false, fault: 'foreign' };
  for (let i = 0; i < 6; i++) if (bytes[16 + i] !== MESH_BSSID[i]) return { ok: false, fault: 'foreign' };
  const sc = v.getUint16(22, true);
  if ((sc & 0x0f) !== 0) return { ok: false, fault: 'foreign' };
  for (let i = 0; i < LLC_SNAP.length; i++) if (bytes[DOT11_DATA_HEADER_BYTES + i] !== LLC_SNAP[i]) return { ok: false, fault: 'ethertype' };
  if (v.getUint16(DOT11_DATA_HEADER_BYTES + LLC_SNAP.length) !== ethertype) return { ok: false, fault: 'ethertype' };
  return {
    ok: true,
    frame: {
      kind: 'data',
      src,
      dst,
      seq: sc >> 4,
      retry: (bytes[1]! & FC_RETRY) !== 0,
      durationUs,
      payload: bytes.subarray(DOT11_DATA_HEADER_BYTES + SNAP_BYTES),
    },
  };
}
