import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { writeFileAtomic } from '../core/files.js';
import { parseJsonFileText, setPaths } from '../core/schema.js';
import { parseNodeConfig, withoutSecretValues } from './load.js';

/**
 * A router's configuration file, as `ctl set --persist` writes to it: the
 * file as it is on disk now (the operator may have edited it since the
 * router started) with the set's values applied, checked whole as a node
 * configuration before anything runs or is written. Only the paths the set
 * names change in the file; fields it left to their defaults stay absent,
 * and the start's `--set` overrides stay out of it.
 *
 * The write is atomic: the new text goes to a temporary file beside the
 * target, which is flushed to disk (fsync) and renamed over it, and the
 * directory is flushed so the rename survives a crash. The file as it was
 * is kept as `FILE.bak`, written the same way first. Both keep the file's
 * permissions: it may hold the monitor token or CURVE keys.
 */
export class ConfigFile {
  constructor(readonly path: string) {}

  /** The backup of the previous version. */
  get backup(): string {
    return `${this.path}.bak`;
  }

  /** The file's next text, with `values` (dotted path -> value) applied; a ConfigError naming the file when the result is not a valid configuration. */
  async prepare(values: Record<string, unknown>): Promise<PreparedConfigWrite> {
    let text: string;
    let mode: number;
    try {
      text = await readFile(this.path, 'utf8');
      mode = (await stat(this.path)).mode & 0o777;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError([{ path: '/', value: this.path, expected: `the router's configuration file, readable (found ${code})` }], this.path);
    }
    const { doc, issues } = setPaths(parseJsonFileText(text, this.path), Object.entries(values), { create: true });
    if (issues.length > 0) throw new ConfigError(withoutSecretValues(issues), this.path);
    parseNodeConfig(doc, this.path);
    return { previous: text, next: `${JSON.stringify(doc, null, 2)}\n`, mode };
  }

  /** Writes `w`: the backup first, then the file, each atomically. */
  async commit(w: PreparedConfigWrite): Promise<void> {
    await writeFileAtomic(this.backup, w.previous, w.mode);
    await writeFileAtomic(this.path, w.next, w.mode);
  }
}

export interface PreparedConfigWrite {
  /** The file's text before the change (what the backup gets). */
  previous: string;
  next: string;
  /** The file's permission bits, which both writes keep. */
  mode: number;
}
