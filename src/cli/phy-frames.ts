import { encodeDot11Data } from '../wire/dot11.js';
import { BROADCAST } from '../wire/mesh.js';

/**
 * IEEE 802 Local Experimental Ethertype 2 (IEEE Std 802-2014 9.2.2): what a
 * `phy tx` test frame's SNAP header names, so that a dissector of the mesh's
 * own packets (Ethertype 1, 0x88b5) does not take its pattern for one.
 */
export const PHY_TEST_ETHERTYPE = 0x88b6;

/**
 * The test frame number `k`: an 802.11 data frame from mesh address 1 to
 * every station, carrying `payload` or, without one, `bytes` bytes of a
 * pattern (the frame number as 4 bytes big-endian, then (k + i) mod 256).
 */
export function testFrame(k: number, bytes: number, payload?: Uint8Array): Uint8Array {
  let body = payload;
  if (!body) {
    body = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i++) body[i] = (k + i) & 0xff;
    new DataView(body.buffer).setUint32(0, k >>> 0);
  }
  return encodeDot11Data({ src: 1, dst: BROADCAST, payload: body, ethertype: PHY_TEST_ETHERTYPE });
}
