import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto';
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

/** A key's DER: its prefix, then its 32 bytes (node:crypto's types take a Buffer here: a view of the same bytes). */
const der = (prefix: Uint8Array, key: Uint8Array): Buffer => {
  const out = new Uint8Array(prefix.length + key.length);
  out.set(prefix);
  out.set(key, prefix.length);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
};

/** The Z85 public key of a Z85 secret key; undefined when the text is no key (40 characters of Z85). */
export function curvePublicKey(secretKey: string): string | undefined {
  const secret = secretKey.length === 40 ? z85Decode(secretKey) : undefined;
  if (secret === undefined) return undefined;
  const key = createPrivateKey({ key: der(PKCS8_X25519_PREFIX, secret), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return z85Encode(new Uint8Array(spki.subarray(spki.length - 32)));
}

/** SubjectPublicKeyInfo of an X25519 key, up to its 32 bytes (RFC 8410 section 4). */
const SPKI_X25519_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00]);

/**
 * The X25519 shared secret of a CURVE secret key and another party's
 * public key (RFC 7748 section 6.1: both sides of a pair compute the same
 * 32 bytes, and only they can); undefined when either text is no key. It
 * lets one party prove to the other that it holds the secret half of its
 * public key, without a signature scheme CURVE keys do not have.
 */
export function curveSharedSecret(secretKey: string, publicKey: string): Uint8Array | undefined {
  const secret = secretKey.length === 40 ? z85Decode(secretKey) : undefined;
  const pub = publicKey.length === 40 ? z85Decode(publicKey) : undefined;
  if (secret === undefined || pub === undefined) return undefined;
  const privateKey = createPrivateKey({ key: der(PKCS8_X25519_PREFIX, secret), format: 'der', type: 'pkcs8' });
  try {
    return new Uint8Array(diffieHellman({ privateKey, publicKey: createPublicKey({ key: der(SPKI_X25519_PREFIX, pub), format: 'der', type: 'spki' }) }));
  } catch {
    // A public key of low order gives an all-zero secret, which node:crypto refuses: no proof can rest on it.
    return undefined;
  }
}
