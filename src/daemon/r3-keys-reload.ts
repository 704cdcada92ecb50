import { loadR3Keys } from '../config/r3-keys.js';
import type { RoutingConfig } from '../config/types.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { keysShown, type R3Auth, type R3Keys } from '../wire/r3-auth.js';

/**
 * A running router's key reload (SIGHUP), so that a key rotation
 * (docs/wire.md) needs no restart: the key file `routing.auth.keyFile` names
 * is read again and put in force whole, or refused whole. A file that cannot
 * be read, does not parse, holds a bad key or lacks the key to sign with
 * changes nothing: the keys in force stay, and one log line names the
 * problem (never a key: loadR3Keys quotes none). The index, the packet
 * counter and the replay state stay as they were (R3Auth.setKeys), so
 * neighbours see no break in the counters.
 */

/** The problems of a refused key file on one line: each field with what it should be. */
export function keyProblems(e: ConfigError): string {
  return e.issues.map((i) => `${i.path.slice(1).replaceAll('/', '.')} ${JSON.stringify(i.value)}: expected ${i.expected}`).join('; ');
}

/** `ids` and the send key as a log line shows them: "key 2 of 1, 2". */
export const describeKeys = (k: { sendKeyId: number; ids: readonly number[] }): string => `key ${k.sendKeyId} of ${k.ids.join(', ')}`;

/**
 * Reads the key file of `settings` again and hands its keys to `apply`
 * (which puts them in force on `auth`, at the router's time), logging one
 * line either way. Returns whether the new keys were taken.
 */
export function reloadR3Keys(settings: RoutingConfig['auth'], auth: R3Auth, log: Logger, apply: (keys: R3Keys) => void, why: string): boolean {
  const was = auth.keysInForce;
  let keys: R3Keys;
  try {
    keys = loadR3Keys(settings);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    log.error(
      { event: 'r3-keys-refused', why, keyFile: settings.keyFile, issues: e.issues, inForce: was },
      `${why}: the R3 key file was refused whole, the keys in force stay (signing with ${describeKeys(was)}): ${keyProblems(e)}`,
    );
    return false;
  }
  apply(keys);
  const now = keysShown(keys);
  log.info(
    { event: 'r3-keys-reloaded', why, keyFile: settings.keyFile, inForce: now, was },
    `${why}: R3 keys reloaded from ${settings.keyFile}: signing with ${describeKeys(now)} (was ${describeKeys(was)})`,
  );
  return true;
}
