import { type Stats } from 'node:fs';
import { mkdir, open, stat, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { systemReason } from './usage.js';

/**
 * Checks of the files and folders an option names for a command to write,
 * made before the command does any work: a path that cannot be written is
 * a usage error naming the option, not a stack trace at the end of a long
 * run. Each check tries what the write will do (creates the folder, opens
 * the file), because permission bits do not tell: root may write anywhere
 * the bits say, yet procfs refuses to create anything in /proc.
 */

/** What is at `path` (symbolic links followed), or undefined when nothing is; other faults are usage errors naming `flag`. */
async function statOrNothing(flag: string, path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`${flag}: ${path}: ${systemReason(e)}`);
  }
}

/**
 * Makes sure the folder `dir` exists, creating it and its missing parents
 * one at a time. Node's `mkdir(dir, { recursive: true })` is not used: it
 * takes ENOENT as "the parent is missing", creates the parent (EEXIST) and
 * tries again, for ever where a parent exists but cannot hold a new folder
 * (anything under /proc, a dangling symbolic link). Here ENOENT once the
 * parent exists is final.
 */
export async function ensureOutputDir(flag: string, dir: string): Promise<void> {
  const st = await statOrNothing(flag, dir);
  if (st) {
    if (!st.isDirectory()) throw new UsageError(`${flag}: ${dir} exists and is not a folder`);
    return;
  }
  const parent = dirname(resolve(dir));
  if (parent !== resolve(dir)) await ensureOutputDir(flag, parent);
  try {
    await mkdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && (await statOrNothing(flag, dir))?.isDirectory()) return;
    // ENOENT with the parent there: the file system takes no new folder in it (procfs, sysfs).
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file system does not allow it (ENOENT)' : systemReason(e);
    throw new UsageError(`${flag}: cannot create the folder ${dir}: ${why}`);
  }
}

/**
 * Checks that the file `path` can be written: its folder exists and takes a
 * new file, or (with `force`) the regular file already there opens for
 * writing. An existing file needs `force` (the name of the option that gives
 * it is `forceFlag`); a folder, a device or any other non-regular file is
 * refused. Nothing is left behind: a file created to try is removed, and an
 * existing one is not truncated.
 */
export async function checkOutputFile(flag: string, path: string, opts: { force?: boolean; forceFlag?: string } = {}): Promise<void> {
  const st = await statOrNothing(flag, path);
  if (st) {
    if (st.isDirectory()) throw new UsageError(`${flag}: ${path} is a folder, not a file`);
    if (!st.isFile()) throw new UsageError(`${flag}: ${path} exists and is not a regular file`);
    if (!opts.force) throw new UsageError(`${flag}: ${path} exists (${opts.forceFlag ?? '--force'} overwrites it)`);
    await tryOpen(flag, path, 'r+');
    return;
  }
  const parent = dirname(resolve(path));
  const pst = await statOrNothing(flag, parent);
  if (!pst) throw new UsageError(`${flag}: ${path}: the folder ${parent} does not exist`);
  if (!pst.isDirectory()) throw new UsageError(`${flag}: ${path}: ${parent} is not a folder`);
  await tryOpen(flag, path, 'wx');
  await unlink(path).catch(() => undefined);
}

async function tryOpen(flag: string, path: string, mode: 'r+' | 'wx'): Promise<void> {
  try {
    await (await open(path, mode)).close();
  } catch (e) {
    throw new UsageError(`${flag}: cannot write ${path}: ${systemReason(e)}`);
  }
}
