import { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { curveKeyPair } from 'zeromq';
import { UsageError } from '../core/errors.js';
import { writeFileAtomic } from '../core/files.js';
import { newR3KeyFile } from '../config/r3-keys.js';
import { LISTED } from './listed.js';

/** A CURVE key pair as `cogmesh keygen` writes it (and `cogmesh ctl --key-file` reads it). */
export interface KeyPairFile {
  publicKey: string;
  secretKey: string;
}

/** Random bytes of a monitor token: 256 bits, twice the 128 the loader asks for. */
const TOKEN_BYTES = 32;

/** A new monitor token: random bytes in base64url (43 characters), which go into a URL as they are. */
export function newMonitorToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/**
 * `cogmesh keygen`: a CURVE key pair (Z85) for the control API: a node's
 * (control.curve.publicKey and secretKey) or a client's (its public key on
 * the node's control.curve.allow, the file for `cogmesh ctl --key-file`);
 * or for the medium link: the medium's (`cogmesh medium --key-file`) or a
 * router's (sim.medium.curve, its public key on the medium's --allow);
 * with `--token`, a monitor token (monitor.token) instead; with `--r3-key
 * ID`, a key file for R3's message authentication (routing.auth.keyFile)
 * holding one random key with that id.
 */
export function keygenCommand(): Command {
  return new Command('keygen')
    .description(LISTED.keygen.about)
    .option('--token', 'make a monitor token (monitor.token: 256 random bits, base64url) instead of a key pair')
    .option('--r3-key <id>', 'make a key file for R3 authentication (routing.auth.keyFile): one random 256-bit key with this id (1-65535)')
    .option(
      '--out <file>',
      'write the pair (or the token, or the key file) to this file (mode 0600) and print only the public key (nothing for a token or a key file)',
    )
    .option('--force', 'overwrite an existing --out file')
    .action(async (o: { token?: boolean; r3Key?: string; out?: string; force?: boolean }) => {
      let text: string;
      let shown: string;
      if (o.token && o.r3Key !== undefined) throw new UsageError('--token and --r3-key: one at a time');
      if (o.r3Key !== undefined) {
        const id = Number(o.r3Key);
        if (!/^[0-9]+$/.test(o.r3Key) || id < 1 || id > 0xffff) throw new UsageError(`--r3-key: ${JSON.stringify(o.r3Key)} is not a key id 1-65535`);
        text = newR3KeyFile(id);
        shown = '';
      } else if (o.token) {
        text = `${newMonitorToken()}\n`;
        shown = '';
      } else {
        const pair: KeyPairFile = curveKeyPair();
        text = `${JSON.stringify({ publicKey: pair.publicKey, secretKey: pair.secretKey }, null, 2)}\n`;
        shown = `${pair.publicKey}\n`;
      }
      if (o.out === undefined) {
        process.stdout.write(text);
        return;
      }
      // The secret is only ever in a file of mode 0600, and the target is whole or untouched.
      try {
        if (!o.force && existsSync(o.out)) throw Object.assign(new Error('exists'), { code: 'EEXIST' });
        await writeFileAtomic(o.out, text, 0o600);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const what = o.token ? 'a token' : o.r3Key !== undefined ? 'a key file' : 'a key pair';
        if (code === 'EEXIST') throw new UsageError(`--out: ${o.out} exists (${what} is not overwritten without --force)`);
        throw new UsageError(`--out: cannot write ${o.out} (${code ?? (e as Error).message})`);
      }
      process.stdout.write(shown);
    });
}
