/** Z85 (ZeroMQ RFC 32): the text form of CURVE keys. */
const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const Z85_INDEX = new Map([...Z85].map((c, i) => [c, i]));

/** Z85 text of bytes (a multiple of 4 long): a 32-byte CURVE key is 40 characters. */
export function z85Encode(bytes: Uint8Array | Buffer): string {
  if (bytes.length % 4 !== 0) throw new RangeError(`z85: ${bytes.length} bytes is not a multiple of 4`);
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    let v = ((bytes[i]! << 24) >>> 0) + (bytes[i + 1]! << 16) + (bytes[i + 2]! << 8) + bytes[i + 3]!;
    let chunk = '';
    for (let j = 0; j < 5; j++) {
      chunk = Z85[v % 85]! + chunk;
      v = Math.floor(v / 85);
    }
    out += chunk;
  }
  return out;
}

/** Bytes of Z85 text, or undefined when it is not Z85 (length, alphabet, a group beyond 32 bits). */
export function z85Decode(text: string): Uint8Array | undefined {
  if (text.length % 5 !== 0) return undefined;
  const out = new Uint8Array((text.length / 5) * 4);
  for (let i = 0; i < text.length; i += 5) {
    let v = 0;
    for (let j = 0; j < 5; j++) {
      const d = Z85_INDEX.get(text[i + j]!);
      if (d === undefined) return undefined;
      v = v * 85 + d;
    }
    if (v > 0xffffffff) return undefined;
    const o = (i / 5) * 4;
    out[o] = v >>> 24;
    out[o + 1] = (v >>> 16) & 0xff;
    out[o + 2] = (v >>> 8) & 0xff;
    out[o + 3] = v & 0xff;
  }
  return out;
}

/**
 * What makes `text` no CURVE key in Z85, in words that quote none of it (a
 * secret key's text must not reach a message); undefined for a key.
 */
export function curveKeyProblem(text: string): string | undefined {
  if (text.length !== 40) return `${text.length} characters, not 40`;
  if ([...text].some((c) => !Z85_INDEX.has(c))) return 'a character outside the Z85 alphabet (0-9 a-z A-Z .-:+=^!/*?&<>()[]{}@%$#)';
  if (z85Decode(text) === undefined) return 'a group of 5 characters that decodes to more than 32 bits (not Z85 of any key)';
  return undefined;
}

/** Whether text is a CURVE key in Z85 (40 characters, 32 bytes). */
export function isCurveKey(text: string): boolean {
  return text.length === 40 && z85Decode(text) !== undefined;
}

/** The endpoint libzmq sends ZAP requests to, in the context of the socket being connected to. */
