import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../core/errors.js';
import { parseJsonText } from '../core/json.js';
import { isObject } from '../core/schema.js';
import type { R3Keys } from '../wire/r3-auth.js';
import type { RoutingConfig } from './types.js';

/**
 * The key file of R3's message authentication (`routing.auth.keyFile`,
 * docs/wire.md): JSON, `{"keys": [{"id": 1, "hex": "..."}, {"id": 2,
 * "base64": "..."}]}`, each key 32 to 64 bytes (HMAC-SHA-256's output and
 * block sizes: RFC 2104 section 3 advises against shorter ones). Every key in
 * the file is accepted; `routing.auth.sendKeyId` names the one the router
 * signs with, so that a rotation holds the old and the new key at once.
 * No message here quotes the file's content: a key never reaches an error
 * or a log.
 */

const KEY_MIN_BYTES = 32;
const KEY_MAX_BYTES = 64;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The keys `auth.keyFile` holds, with the one `auth.sendKeyId` names (0: the file's only key) to sign with; a ConfigError naming each problem otherwise. */
export function loadR3Keys(auth: RoutingConfig['auth']): R3Keys {
  const at = '/routing/auth/keyFile';
  let text: string;
  try {
    text = readFileSync(auth.keyFile, 'utf8');
  } catch (e) {
    throw new ConfigError([{ path: at, value: auth.keyFile, expected: `a readable key file (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})` }]);
  }
  const r = parseR3Keys(text, auth.sendKeyId);
  if (!r.ok)
    throw new ConfigError(
      r.problems.map((p) => ({ path: p.sendKeyId ? '/routing/auth/sendKeyId' : at, value: p.sendKeyId ? auth.sendKeyId : auth.keyFile, expected: p.expected })),
    );
  return r.keys;
}

type Parsed = { ok: true; keys: R3Keys } | { ok: false; problems: Array<{ expected: string; sendKeyId?: boolean }> };

/** The text of a key file as keys, or what is wrong with it (naming entries by position, quoting no key). */
export function parseR3Keys(text: string, sendKeyId: number): Parsed {
  const problems: Array<{ expected: string; sendKeyId?: boolean }> = [];
  const doc = parseJsonText(text);
  if (!doc.ok) return { ok: false, problems: [{ expected: `a JSON key file (${doc.error.message})` }] };
  const list = isObject(doc.value) ? doc.value.keys : undefined;
  if (!Array.isArray(list) || list.length === 0) return { ok: false, problems: [{ expected: 'a JSON object whose "keys" is a list of one or more keys' }] };
  const keys = new Map<number, Uint8Array>();
  list.forEach((entry: unknown, i) => {
    const where = `keys[${i}]`;
    if (!isObject(entry)) return void problems.push({ expected: `${where}: an object with "id" and "hex" or "base64"` });
    const id = entry.id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > 0xffff) return void problems.push({ expected: `${where}.id: an integer 1-65535` });
    if (keys.has(id)) return void problems.push({ expected: `${where}.id: ${id} only once` });
    const named = ['hex', 'base64'].filter((k) => k in entry);
    const unknown = Object.keys(entry).filter((k) => k !== 'id' && k !== 'hex' && k !== 'base64');
    if (unknown.length > 0 || named.length !== 1) return void problems.push({ expected: `${where}: "id" and exactly one of "hex" or "base64", nothing else` });
    const bytes = keyBytes(entry[named[0]!], named[0] as 'hex' | 'base64');
    if (typeof bytes === 'string') return void problems.push({ expected: `${where}.${named[0]}: ${bytes}` });
    keys.set(id, bytes);
  });
  if (problems.length > 0) return { ok: false, problems };
  const send = sendKeyId === 0 && keys.size === 1 ? [...keys.keys()][0]! : sendKeyId;
  if (!keys.has(send))
    return {
      ok: false,
      problems: [
        {
          sendKeyId: true,
          expected:
            sendKeyId === 0
              ? `the id of the key to sign with (the file holds ${keys.size})`
              : `the id of a key in the key file (it holds ${[...keys.keys()].join(', ')})`,
        },
      ],
    };
  return { ok: true, keys: { keys, sendKeyId: send } };
}

/** A key's bytes, or what is wrong with its text (its length only, never its characters). */
function keyBytes(v: unknown, as: 'hex' | 'base64'): Uint8Array | string {
  if (typeof v !== 'string') return 'a string';
  if (!(as === 'hex' ? HEX : BASE64).test(v)) return as === 'hex' ? 'an even number of hex digits' : 'base64 (RFC 4648 section 4)';
  const b = Buffer.from(v, as);
  if (b.length < KEY_MIN_BYTES || b.length > KEY_MAX_BYTES) return `${KEY_MIN_BYTES} to ${KEY_MAX_BYTES} bytes (it has ${b.length})`;
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Random bytes of a new key: 256 bits, HMAC-SHA-256's output size. */
const NEW_KEY_BYTES = 32;

/** The text of a new key file: one random key with id `id` (the caller checked it is 1-65535). */
export function newR3KeyFile(id: number): string {
  return `${JSON.stringify({ keys: [{ id, hex: randomBytes(NEW_KEY_BYTES).toString('hex') }] })}\n`;
}
