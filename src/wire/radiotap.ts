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
import { encodeDot11Data, MESH_ETHERTYPE } from './dot11.js';
import type { NodeAddr } from './mesh.js';

/** What a capture's SNAP header names: the mesh's ethertype (src/wire/dot11.ts). */
export const CAPTURE_ETHERTYPE = MESH_ETHERTYPE;
export { meshMac } from './dot11.js';

/** Radiotap `it_present` bits (radiotap.org defined fields). */
const RT_FLAGS = 1 << 1;
const RT_RATE = 1 << 2;
const RT_CHANNEL = 1 << 3;
const RT_DBM_ANTSIGNAL = 1 << 5;
/** Channel flags: CCK, OFDM, 2 GHz spectrum. */
const CHAN_CCK = 0x0020;
const CHAN_OFDM = 0x0040;
const CHAN_2GHZ = 0x0080;

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

/** The captured frame: radiotap, 802.11 data header, LLC/SNAP, then `packet` (the mesh packet as on the medium). */
export function radiotapFrame(r: RadioInfo, src: NodeAddr, dst: NodeAddr, packet: Uint8Array): Uint8Array {
  const rt = radiotapHeader(r);
  const frame = encodeDot11Data({ src, dst, payload: packet, retry: r.retry === true });
  const out = new Uint8Array(rt.length + frame.length);
  out.set(rt);
  out.set(frame, rt.length);
  return out;
}
