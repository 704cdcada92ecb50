import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command, CommanderError } from 'commander';
import { UsageError } from '../core/errors.js';

/**
 * Makes commander's own refusals (an unknown option or command, a missing
 * argument, a value outside an option's choices) usage errors like every
 * other refused command line: one `cogmesh: ...` line and exit code 2, not
 * commander's `error: ...` and 1. Applies to `cmd` and every command under
 * it; call it once the tree is whole (`addCommand` copies no settings).
 */
export function commanderAsUsage(cmd: Command): Command {
  cmd.exitOverride((err) => usageExit(err, cmd)).configureOutput({ outputError: () => {} });
  for (const sub of cmd.commands) commanderAsUsage(sub);
  return cmd;
}

function usageExit(err: CommanderError, cmd: Command): void {
  if (err.exitCode === 0) return; // --help, --version: commander exits 0
  const help = `${commandPath(cmd)} --help`;
  // A group (cogmesh, config, ctl) run without its command: commander has printed the help.
  if (err.code === 'commander.help') throw new UsageError(`${cmd.parent ? `${cmd.name()}: ` : ''}a command is needed (the list is above)`);
  // Commander's text is `error: ...`, with any suggestion on a line of its own.
  const text = err.message
    .replace(/^error: /, '')
    .split('\n')
    .join(' ');
  throw new UsageError(`${text} (see ${help})`);
}

/** `cogmesh config check`: the names from the root down. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** System error codes a user's path or address gives, in words. */
const SYSTEM_REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'a folder',
  ENOSPC: 'no space left on the device',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  EEXIST: 'something is there already (a dangling symbolic link?)',
  EADDRINUSE: 'the address is already in use by another process',
  EADDRNOTAVAIL: 'no interface of this machine has that address',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved now',
};

/** A system error's reason in words, with its code. */
export function systemReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === undefined) return (e as Error).message;
  return `${SYSTEM_REASONS[code] ?? 'refused'} (${code})`;
}

/** System error codes of binding an address: the address given, not the program, is at fault. */
const LISTEN_CODES = new Set(['EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES', 'EPERM', 'ENOTFOUND', 'EAI_AGAIN', 'EAFNOSUPPORT', 'ENOENT', 'ENOTDIR', 'EROFS']);

/**
 * Runs `start`, which binds the address an option gave (`flag` `value`),
 * and turns what is wrong with that address into a usage error naming the
 * option: a port already taken, an address not of this machine, a socket
 * path that cannot be created, or a UsageError that does not name it yet.
 */
export async function listeningAs<T>(flag: string, value: string, start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    if (e instanceof UsageError) throw e.message.startsWith(`${flag}`) ? e : new UsageError(`${flag}: ${e.message}`);
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && LISTEN_CODES.has(code)) throw new UsageError(`${flag}: cannot listen on ${value}: ${listenReason(e as NodeJS.ErrnoException)}`);
    throw e;
  }
}

/** Why a bind failed. libuv reports a Unix socket path whose folder is missing as EACCES (as Windows would): that is said as it is. */
function listenReason(e: NodeJS.ErrnoException & { address?: unknown }): string {
  if (e.code === 'EACCES' && typeof e.address === 'string' && e.address.startsWith('/') && !existsSync(dirname(e.address))) {
    return `the folder ${dirname(e.address)} does not exist`;
  }
  return systemReason(e);
}

/**
 * The number an option's text `v` gives, or UsageError naming `flag`, the
 * text and what it should be (`expected`) when it is blank, not a finite
 * number, or fails `check`.
 */
export function numberArg(flag: string, v: string, check: (n: number) => boolean, expected: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || !check(n)) throw new UsageError(`${flag}: "${v}" is not ${expected}`);
  return n;
}
