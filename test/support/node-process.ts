import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCogmesh } from './cli.js';

/**
 * Starts `cogmesh node` from source on a configuration written to `dir`
 * (`monitor.listen` on port 0 and JSON logs added), and resolves with its
 * monitor's URL once the node logs it. The caller stops it (stopAll).
 */
export async function startNodeWithMonitor(dir: string, cfg: Record<string, unknown>): Promise<{ proc: ChildProcess; url: string; log: () => string }> {
  const path = join(dir, 'node.json');
  const monitor = { ...((cfg.monitor as Record<string, unknown> | undefined) ?? {}), listen: '127.0.0.1:0' };
  writeFileSync(path, JSON.stringify({ ...cfg, monitor, log: { format: 'json' } }));
  const proc = spawnCogmesh(['node', '--config', path], ['ignore', 'pipe', 'pipe']);
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      log += String(c);
      const m = /"event":"monitor-start","url":"([^"]+)"/.exec(log);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`the node exited (${code}) before its monitor started:\n${log}`)));
  });
  return { proc, url, log: () => log };
}
