import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ControlClient } from '../../src/control/client.js';
import { spawnCogmesh, stopAll } from '../support/cli.js';

/**
 * `ctl set` with `persist` against a real `cogmesh node` process: the
 * values go to the configuration file the node was started from, atomically
 * with the previous version kept as FILE.bak, and a restarted node comes up
 * with them; without `persist` the answer says the change lasts until
 * restart and the file is untouched; a set the file cannot take, or a write
 * that fails, changes neither the file nor the running router.
 */
describe('a remote change that survives a restart', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-persist-'));
  const file = join(dir, 'node.json');
  const endpoint = `ipc://${join(dir, 'ctl')}`;
  const procs: ChildProcess[] = [];
  const clients: ControlClient[] = [];
  after(async () => {
    for (const c of clients) c.close();
    await stopAll(procs);
    rmSync(dir, { recursive: true, force: true });
  });

  // The user's own layout and a field at its default left out: persisting must not rewrite either.
  const original = `{
  "node": { "id": 3, "name": "roof-3" },
  "radios": { "R1": { "frontend": "sim" }, "R2": { "frontend": "sim" }, "R3": { "frontend": "sim", "channel": 1 } },
  "sensing": { "durationMs": 70, "periodMs": 1000 },
  "control": { "endpoint": "${endpoint}" },
  "log": { "format": "json" }
}
`;
  writeFileSync(file, original);
  chmodSync(file, 0o640);

  async function startNode(): Promise<{ proc: ChildProcess; ctl: ControlClient }> {
    const proc = spawnCogmesh(['node', '--config', file], ['ignore', 'ignore', 'inherit']);
    procs.push(proc);
    const ctl = new ControlClient(endpoint);
    clients.push(ctl);
    const end = Date.now() + 60_000;
    for (;;) {
      const r = await ctl.request('status', {}, 2000).catch(() => undefined);
      if (r?.ok) return { proc, ctl };
      if (Date.now() > end) assert.fail('the node never answered');
    }
  }
  const get = async (ctl: ControlClient, path: string): Promise<unknown> => {
    const r = await ctl.request('get', { path });
    assert.ok(r.ok, JSON.stringify(r));
    return (r.result as { value: unknown }).value;
  };
  const onDisk = (): Record<string, Record<string, unknown>> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;

  test('set --persist writes the file and a restarted node runs with it; a plain set lasts until restart', async () => {
    let { proc, ctl } = await startNode();

    const plain = await ctl.request('set', { values: { 'sensing.periodMs': 1500 } });
    assert.ok(plain.ok, JSON.stringify(plain));
    assert.equal((plain.result as { lasts: string }).lasts, 'until-restart');
    assert.equal(readFileSync(file, 'utf8'), original, 'a plain set does not touch the file');

    const kept = await ctl.request('set', { values: { 'sensing.durationMs': 33, 'channel.hysteresis': 0.2 }, persist: true });
    assert.ok(kept.ok, JSON.stringify(kept));
    assert.deepEqual((kept.result as { lasts: string; persisted: unknown }).persisted, { file, backup: `${file}.bak` });
    assert.equal((kept.result as { lasts: string }).lasts, 'across-restarts');
    assert.equal(await get(ctl, 'sensing.durationMs'), 33, 'it is live too');
    const written = onDisk();
    assert.equal(written.sensing!.durationMs, 33);
    assert.deepEqual(written.channel, { hysteresis: 0.2 }, 'a section absent from the file is created with only the value set');
    assert.equal(written.sensing!.periodMs, 1000, 'the earlier plain set is not written');
    assert.equal(written.switching, undefined, 'defaults stay out of the file');
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), original, 'the previous version is the backup');
    assert.equal(statSync(file).mode & 0o777, 0o640, 'the file keeps its permissions');
    assert.equal(statSync(`${file}.bak`).mode & 0o777, 0o640, 'so does the backup');

    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    ({ proc, ctl } = await startNode());
    assert.equal(await get(ctl, 'sensing.durationMs'), 33, 'the persisted value survived the restart');
    assert.equal(await get(ctl, 'channel.hysteresis'), 0.2);
    assert.equal(await get(ctl, 'sensing.periodMs'), 1000, 'the plain set did not');
  });

  test('a persisted set the file cannot take, or whose write fails, changes neither the file nor the router', async () => {
    const ctl = clients.at(-1)!;
    const before = readFileSync(file, 'utf8');

    const invalid = await ctl.request('set', { values: { 'sensing.durationMs': -5 }, persist: true });
    assert.ok(!invalid.ok);
    assert.equal(invalid.error.code, 'CONFIG_INVALID');
    assert.equal(readFileSync(file, 'utf8'), before);

    // The backup cannot be written (a directory stands in its place): the live change is undone.
    rmSync(`${file}.bak`);
    mkdirSync(`${file}.bak`);
    const failed = await ctl.request('set', { values: { 'sensing.durationMs': 44 }, persist: true });
    assert.ok(!failed.ok, JSON.stringify(failed));
    assert.equal(failed.error.code, 'CONTROL_PERSIST_FAILED');
    assert.match(failed.error.message, /could not write .*node\.json.*the change was undone/);
    assert.equal(await get(ctl, 'sensing.durationMs'), 33, 'the router runs as before');
    assert.equal(readFileSync(file, 'utf8'), before, 'the file is as before');
    rmSync(`${file}.bak`, { recursive: true });

    // A file the operator broke since the start refuses the persisted set, naming the file.
    writeFileSync(file, '{ "node": ');
    const broken = await ctl.request('set', { values: { 'sensing.durationMs': 45 }, persist: true });
    assert.ok(!broken.ok);
    assert.equal(broken.error.code, 'CONFIG_INVALID');
    assert.match(broken.error.message, /node\.json/);
    assert.equal(await get(ctl, 'sensing.durationMs'), 33);
  });
});
