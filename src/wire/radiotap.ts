/**
 * How a mesh frame looks in a capture (docs/pcap.md): a radiotap header
 * (radiotap.org: Flags, Rate, Channel and, when known, dBm antenna signal),
 * an 802.11 data frame header between stations of an IBSS (addr1 the
 * receiver, addr2 the sender, addr3 the mesh's BSSID), an LLC/SNAP header
 * with the IEEE 802 local experimental ethertype, then the mesh packet's
 * bytes exactly as the medium carries them. The FCS is left out (the Flags
 * field says so).
 */

import { RangeArgumentError } from '../core/errors.js';
import { BROADCAST, type NodeAddr } from './mesh.js';

/** IEEE 802 "Local Experimental Ethertype 1" (IEEE Std 802-2014 section 9.2.2): what the SNAP header names. */
export const CAPTURE_ETHERTYPE = 0x88b5;
/** The mesh's BSSID in captures: locally administered, outside the routers' 02:00:00:00:hh:ll. */
export const CAPTURE_BSSID: readonly number[] = [0x02, 0x00, 0x00, 0xff, 0x00, 0x00];

/** Radiotap `it_present` bits (radiotap.org defined fields). */
const RT_FLAGS = 1 << 1;
const RT_RATE = 1 << 2;
const RT_CHANNEL = 1 << 3;
const RT_DBM_ANTSIGNAL = 1 << 5;
/** Channel flags: CCK, OFDM, 2 GHz spectrum. */
const CHAN_CCK = 0x0020;
const CHAN_OFDM = 0x0040;
const CHAN_2GHZ = 0x0080;

/** 802.11 Frame Control: type data (2), subtype 0; flags byte: Retry. */
const FC_DATA = 0x08;
const FC_RETRY = 0x08;
const DOT11_HEADER_BYTES = 24;
/** LLC (DSAP 0xaa, SSAP 0xaa, UI) and SNAP (OUI 00-00-00: an ethertype follows). */
const LLC_SNAP = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00];
const SNAP_BYTES = LLC_SNAP.length + 2;

/** How the radio saw a frame: what the radiotap header says. */
export interface RadioInfo {
  /** Centre frequency, MHz (2412 for channel 1). */
  freqMHz: number;
  /** Data rate, bits per second (a multiple of 500 kbps). */
  rateBps: number;
  /** Whether the PHY is OFDM (802.11g) rather than DSSS/CCK (802.11b). */
  ofdm: boolean;
  /** Received signal, dBm; absent for a frame the radio sent, or when the medium does not say. */
  signalDbm?: number;
  /** The frame is a retransmission (802.11 Retry flag). */
  retry?: boolean;
}

/** The locally administered MAC of mesh address `a` (02:00:00:00:hh:ll); the broadcast address for BROADCAST. */
export function meshMac(a: NodeAddr): number[] {
  if (!Number.isInteger(a) || a < 0 || a > 0xffff) throw new RangeArgumentError('address', a, 'a mesh address 0-65535');
  if (a === BROADCAST) return [0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
  return [0x02, 0x00, 0x00, 0x00, a >> 8, a & 0xff];
}

/** Radiotap Flags: the frame ends with its FCS; that FCS did not match. */
const RT_FLAG_FCS = 0x10;
const RT_FLAG_BAD_FCS = 0x40;

/** Length of the radiotap header `radiotapHeader` writes for `r`. */
function radiotapBytes(r: RadioInfo): number {
  return r.signalDbm === undefined ? 14 : 15;
}

/**
 * The radiotap header of a frame the radio saw as `r` (Flags, Rate, Channel,
 * and the antenna signal when known), to go just before the frame's bytes;
 * with `fcs`, the Flags say the frame ends with its FCS, and with `badFcs`
 * that it failed the FCS check.
 */
export function radiotapHeader(r: RadioInfo, opts: { fcs?: boolean; badFcs?: boolean } = {}): Uint8Array {
  if (!Number.isInteger(r.freqMHz) || r.freqMHz <= 0 || r.freqMHz > 0xffff) throw new RangeArgumentError('freqMHz', r.freqMHz, 'an integer 1-65535 MHz');
  const rate = r.rateBps / 500_000;
  if (!Number.isInteger(rate) || rate < 1 || rate > 255) throw new RangeArgumentError('rateBps', r.rateBps, 'a multiple of 500 kbps up to 127.5 Mbps');
  const signal = r.signalDbm === undefined ? undefined : Math.max(-128, Math.min(127, Math.round(r.signalDbm)));
  const rt = radiotapBytes(r);
  const out = new Uint8Array(rt);
  const v = new DataView(out.buffer);
  // Radiotap header: version 0, pad, length, present bits (little-endian); fields in bit order, each aligned to its size.
  v.setUint16(2, rt, true);
  v.setUint32(4, RT_FLAGS | RT_RATE | RT_CHANNEL | (signal === undefined ? 0 : RT_DBM_ANTSIGNAL), true);
  // Long preamble; the FCS at the end or not, and whether it failed.
  out[8] = (opts.fcs ? RT_FLAG_FCS : 0) | (opts.badFcs ? RT_FLAG_BAD_FCS : 0);
  out[9] = rate;
  v.setUint16(10, r.freqMHz, true);
  v.setUint16(12, CHAN_2GHZ | (r.ofdm ? CHAN_OFDM : CHAN_CCK), true);
  if (signal !== undefined) v.setInt8(14, signal);
  return out;
}

/**
 * An 802.11 data frame between stations of an IBSS (ToDS = FromDS = 0: addr1
 * the receiver, addr2 the sender, addr3 the mesh's BSSID; duration and
 * sequence 0), with an LLC/SNAP header naming `ethertype` and then `packet`;
 * no FCS.
 */
export function dot11DataFrame(src: NodeAddr, dst: NodeAddr, packet: Uint8Array, opts: { ethertype?: number; retry?: boolean } = {}): Uint8Array {
  const out = new Uint8Array(DOT11_HEADER_BYTES + SNAP_BYTES + packet.length);
  out[0] = FC_DATA;
  out[1] = opts.retry ? FC_RETRY : 0;
  out.set(meshMac(dst), 4);
  out.set(meshMac(src), 10);
  out.set(CAPTURE_BSSID, 16);
  out.set(LLC_SNAP, DOT11_HEADER_BYTES);
  new DataView(out.buffer).setUint16(DOT11_HEADER_BYTES + LLC_SNAP.length, opts.ethertype ?? CAPTURE_ETHERTYPE);
  out.set(packet, DOT11_HEADER_BYTES + SNAP_BYTES);
  return out;
}

/** The captured frame: radiotap, 802.11 data header, LLC/SNAP, then `packet` (the mesh packet as on the medium). */
export function radiotapFrame(r: RadioInfo, src: NodeAddr, dst: NodeAddr, packet: Uint8Array): Uint8Array {
  const rt = radiotapHeader(r);
  const frame = dot11DataFrame(src, dst, packet, { retry: r.retry === true });
  const out = new Uint8Array(rt.length + frame.length);
  out.set(rt);
  out.set(frame, rt.length);
  return out;
}
