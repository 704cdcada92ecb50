import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `text` so that a reader, or the file after a crash,
 * holds either the old text or the new one, never a part: a temporary file
 * in the same directory with `mode` (a secret is never in a file anyone else
 * may read, not even for a moment), fsync, rename over the target, then
 * fsync of the directory so that the rename itself survives a crash.
 */
export async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.chmod(mode);
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
