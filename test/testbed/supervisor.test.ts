import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { loadScenario } from '../../src/config/scenario.js';
import { createLogger } from '../../src/core/log.js';
import { planTestbed } from '../../src/testbed/plan.js';
import { RESTART_GIVE_UP, RUN_DIR_PREFIX, Supervisor, sweepRunDirs } from '../../src/testbed/supervisor.js';
import { root } from '../support/cli.js';

const quiet = () => createLogger({ level: 'info', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

test('a medium that dies at once each time is started again, later each time, and given up after RESTART_GIVE_UP deaths in a row; routers are not restarted', async () => {
  const sc = await loadScenario(join(root, 'config/scenarios/testbed-chain.json'), { hops: 1, set: ['flows=[]'] });
  // Every process of this testbed exits at once with code 3 (the endpoints are never used).
  const sup = new Supervisor(planTestbed(sc, 1), { log: quiet(), command: { execPath: process.execPath, args: ['-e', 'process.exit(3)'] } });
  const exits: Array<{ name: string; code: number | null; restarting: boolean; atMs: number }> = [];
  const gaveUp = new Promise<void>((resolve) => {
    sup.onExit = (name, code, _signal, restarting) => {
      exits.push({ name, code, restarting, atMs: Date.now() });
      if (name === 'medium' && !restarting) resolve();
    };
  });
  try {
    await sup.start();
    await gaveUp;
    const medium = exits.filter((e) => e.name === 'medium');
    assert.deepEqual(
      medium.map((e) => e.restarting),
      [...Array<boolean>(RESTART_GIVE_UP).fill(true), false],
      'started again after each death but the last',
    );
    assert.ok(
      medium.every((e) => e.code === 3),
      'each exit reported with its code',
    );
    // The waits grow: each gap at least the one before it (the delay doubles).
    const gaps = medium.slice(1).map((e, i) => e.atMs - medium[i]!.atMs);
    for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! > gaps[i - 1]!, `gaps between restarts grow: ${gaps.join(', ')} ms`);
    assert.deepEqual(
      exits
        .filter((e) => e.name !== 'medium')
        .map((e) => [e.name, e.restarting])
        .sort(),
      [
        ['r0', false],
        ['r1', false],
      ],
    );
    const procs = sup.processes();
    assert.equal(procs.find((p) => p.name === 'medium')?.restarts, RESTART_GIVE_UP);
    assert.ok(procs.every((p) => p.state === 'exited'));
  } finally {
    await sup.stop();
  }
});

test('restart: a router process is killed and started again as it was; a stopped testbed starts nothing', async () => {
  const sc = await loadScenario(join(root, 'config/scenarios/testbed-chain.json'), { hops: 1, set: ['flows=[]'] });
  // Every process runs until killed.
  const sup = new Supervisor(planTestbed(sc, 1), { log: quiet(), command: { execPath: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } });
  const exits: string[] = [];
  sup.onExit = (name) => exits.push(name);
  try {
    await sup.start();
    const before = sup.pid('r1');
    await sup.restart('r1');
    assert.notEqual(sup.pid('r1'), before);
    const r1 = sup.processes().find((p) => p.name === 'r1')!;
    assert.deepEqual([r1.state, r1.restarts], ['running', 1]);
    assert.deepEqual(exits, [], 'a restart asked for is not a death to report');
    await assert.rejects(sup.restart('r9'), /no process "r9"/);
  } finally {
    await sup.stop();
  }
  assert.ok(sup.processes().every((p) => p.state === 'exited'));
  await sup.restart('r0');
  assert.equal(sup.processes().find((p) => p.name === 'r0')?.state, 'exited', 'nothing starts once stopped');
});

test('sweepRunDirs removes the folders of runs whose supervisor is gone, and leaves a live one, one without a pid file and others', async () => {
  const parent = await mkdtemp(join(tmpdir(), 'sweep-'));
  try {
    // A pid that was a process and is one no more: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const make = async (name: string, pid?: number): Promise<void> => {
      await mkdir(join(parent, name));
      if (pid !== undefined) await writeFile(join(parent, name, 'supervisor.pid'), `${pid}\n`);
    };
    await make(`${RUN_DIR_PREFIX}dead`, dead);
    await make(`${RUN_DIR_PREFIX}live`, process.pid);
    await make(`${RUN_DIR_PREFIX}new`);
    await make('someone-else', dead);
    assert.deepEqual(await sweepRunDirs(parent), [`${RUN_DIR_PREFIX}dead`]);
    assert.deepEqual((await readdir(parent)).sort(), [`${RUN_DIR_PREFIX}live`, `${RUN_DIR_PREFIX}new`, 'someone-else']);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});

test('the run folder holds its supervisor pid while it runs and is gone after stop', async () => {
  const sc = await loadScenario(join(root, 'config/scenarios/testbed-chain.json'), { hops: 1, set: ['flows=[]'] });
  const sup = new Supervisor(planTestbed(sc, 1), { log: quiet(), command: { execPath: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } });
  try {
    await sup.start();
    const dir = sup.folder()!;
    assert.equal((await readFile(join(dir, 'supervisor.pid'), 'utf8')).trim(), String(process.pid));
    await sup.stop();
    await assert.rejects(readdir(dir), { code: 'ENOENT' });
  } finally {
    await sup.stop();
  }
});
