import { readFile } from 'node:fs/promises';
import { UsageError } from '../core/errors.js';
import { encodeDot11Data } from '../wire/dot11.js';
import { BROADCAST } from '../wire/mesh.js';
import { numberArg } from './usage.js';

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

/** Most payload bytes a test frame takes: the PSDU's 4095 less the MAC header (24), LLC/SNAP (8) and the FCS (4). */
const MAX_TEST_PAYLOAD = 4095 - 36;

/** The test frames' payload: `--payload FILE`'s bytes, or a pattern of `--bytes` bytes. */
export async function testPayload(o: { payload?: string; bytes: string }): Promise<{ payload: Uint8Array | undefined; bytes: number }> {
  if (o.payload === undefined) {
    return {
      payload: undefined,
      bytes: numberArg('--bytes', o.bytes, (n) => Number.isInteger(n) && n >= 4 && n <= 2304, 'a payload of whole bytes in [4, 2304]'),
    };
  }
  const payload = new Uint8Array(
    await readFile(o.payload).catch((e: NodeJS.ErrnoException) => Promise.reject(new UsageError(`--payload: ${o.payload}: ${e.message}`))),
  );
  if (payload.length > MAX_TEST_PAYLOAD) {
    throw new UsageError(`--payload: ${payload.length} bytes do not fit in one PSDU (at most ${MAX_TEST_PAYLOAD} with the MAC and LLC headers and the FCS)`);
  }
  return { payload, bytes: payload.length };
}
