import { createPrivateKey, createPublicKey } from 'node:crypto';
import { z85Decode, z85Encode } from './z85.js';

/**
 * The public key of a CURVE secret key. CURVE (ZeroMQ RFC 26) keys are
 * Curve25519 keys, the public key being X25519 of the secret key and the
 * base point (RFC 7748 section 6.1), which node:crypto computes: the
 * secret goes in as a PKCS #8 X25519 private key (RFC 8410 section 7), and
 * the public key comes out as the last 32 bytes of its SubjectPublicKeyInfo.
 * (zeromq.js makes pairs, `curveKeyPair`, but offers no way to derive one
 * half from the other.)
 */

/** PKCS #8 PrivateKeyInfo of an X25519 key, up to its 32 bytes (RFC 8410 section 10.3). */
const PKCS8_X25519_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20]);

/** The Z85 public key of a Z85 secret key; undefined when the text is no key (40 characters of Z85). */
export function curvePublicKey(secretKey: string): string | undefined {
  const secret = secretKey.length === 40 ? z85Decode(secretKey) : undefined;
  if (secret === undefined) return undefined;
  const der = new Uint8Array(PKCS8_X25519_PREFIX.length + 32);
  der.set(PKCS8_X25519_PREFIX);
  der.set(secret, PKCS8_X25519_PREFIX.length);
  // node:crypto's types take a Buffer here: a view of the same bytes.
  const key = createPrivateKey({ key: Buffer.from(der.buffer, der.byteOffset, der.byteLength), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return z85Encode(new Uint8Array(spki.subarray(spki.length - 32)));
}
