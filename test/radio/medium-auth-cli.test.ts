import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { curveKeyPair } from 'zeromq';
import { RemoteMedium } from '../../radio/medium/remote.js';
import { createLogger } from '../../src/core/log.js';
import { PacedEngine } from '../../src/core/paced.js';
import { freePort } from '../openflow/pki.js';
import { loadScenario } from '../../src/config/scenario.js';
import { DEFAULT_TESTBED_PORTS, planTestbed } from '../../src/testbed/plan.js';
import { cogmesh, spawnCogmesh, stopAll } from '../support/cli.js';

const SCENARIO = 'config/scenarios/testbed-chain.json';
const quiet = () => createLogger({ level: 'warn', format: 'json', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

describe('`cogmesh medium` beyond loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cm-medium-cli-'));
  const procs: ChildProcess[] = [];
  after(async () => {
    await stopAll(procs);
    rmSync(dir, { recursive: true, force: true });
  });

  test('will not bind beyond loopback without CURVE keys, and says what to give it', async () => {
    const port = await freePort();
    const r = cogmesh('medium', '--scenario', SCENARIO, '--bind', `tcp://0.0.0.0:${port}`);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /tcp:\/\/0\.0\.0\.0:\d+ is reachable beyond this machine: give the medium CURVE keys/);
    const noKey = cogmesh('medium', '--scenario', SCENARIO, '--bind', `tcp://127.0.0.1:${port}`, '--allow', curveKeyPair().publicKey);
    assert.equal(noKey.code, 2);
    assert.match(noKey.err, /--allow needs --key-file/);
    // The testbed, whose processes all run on this machine, keeps its medium there.
    const tb = cogmesh('testbed', SCENARIO, '--medium', `tcp://0.0.0.0:${port}`);
    assert.equal(tb.code, 2);
    assert.match(tb.err, /--medium: "tcp:\/\/0\.0\.0\.0:\d+" is not on this machine/);
  });

  test('refuses a bad --allow or --stats-interval value with one line naming it', () => {
    const k = curveKeyPair().publicKey;
    for (const [value, why] of [
      ['not-a-key', /^cogmesh: --allow: "not-a-key" is not KEY or KEY=ADDR\[,ADDR\.\.\.\]/],
      [`${k}=1,x`, /^cogmesh: --allow: ".*=1,x": "x" is not a mesh address/],
    ] as const) {
      const r = cogmesh('medium', '--scenario', SCENARIO, '--key-file', join(dir, 'none.key'), '--allow', value);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, why);
      assert.equal(r.err.trim().split('\n').length, 1, r.err);
    }
    const r = cogmesh('medium', '--scenario', SCENARIO, '--stats-interval', 'soon');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--stats-interval: "soon" is not 0\.\.86400 seconds/);
  });

  /** `cogmesh medium` with a new key pair on every address, letting in `allow`; once it has started. */
  async function curveMedium(allow: string) {
    const keys = curveKeyPair();
    const keyFile = join(dir, `medium-${procs.length}.key`);
    writeFileSync(keyFile, JSON.stringify(keys), { mode: 0o600 });
    const port = await freePort();
    const p = spawnCogmesh(
      ['medium', '--scenario', SCENARIO, '--bind', `tcp://0.0.0.0:${port}`, '--key-file', keyFile, '--allow', allow, '--log-format', 'json'],
      ['ignore', 'pipe', 'pipe'],
    );
    procs.push(p);
    const log = { text: '' };
    for (const s of [p.stdout!, p.stderr!]) s.on('data', (c: Buffer) => (log.text += c.toString()));
    const end = Date.now() + 60_000;
    while (!log.text.includes('"medium-start"')) {
      if (p.exitCode !== null || Date.now() > end) assert.fail(`the medium did not start: ${log.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { p, port, publicKey: keys.publicKey, log };
  }

  test('with --key-file and --allow KEY=ADDR, the allowed router joins as its address only and a stranger is refused', async () => {
    const router = curveKeyPair();
    const stranger = curveKeyPair();
    const { p, port, publicKey, log } = await curveMedium(`${router.publicKey}=1`);
    const out = (): string => log.text;
    assert.match(out(), /CURVE, 1 router key\(s\) allowed/);
    const paced = new PacedEngine();
    paced.start();
    const joinAs = (node: number, keys: { publicKey: string; secretKey: string }, joinTimeoutMs: number) =>
      RemoteMedium.connect({
        endpoint: `tcp://127.0.0.1:${port}`,
        node,
        name: `r${node}`,
        position: { xM: 0, yM: 0 },
        paced,
        log: quiet(),
        joinTimeoutMs,
        curve: { serverKey: publicKey, ...keys },
      });
    try {
      const ok = await joinAs(1, router, 10_000);
      assert.equal(typeof ok.welcome.epochUs, 'number');
      ok.close();
      await assert.rejects(joinAs(2, router, 1500), (e: Error) => e.message.includes(`key ${router.publicKey} may join as 1, not as 2`));
      await assert.rejects(joinAs(9, stranger, 1500), (e: Error) => e.message.includes('is not on its allow-list'));
    } finally {
      paced.stop();
    }
    await stopAll([p]);
    assert.match(out(), /refused a CURVE router from .* \(key .* is not on the allow-list\)/);
    // The final stats line on a clean stop carries the refusals by reason.
    const final = out()
      .split('\n')
      .filter((l) => l.includes('"medium-stats"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .at(-1);
    assert.equal(final?.final, true);
    assert.ok((final?.['refused.key-address'] as number) >= 1, JSON.stringify(final));
    assert.ok((final?.zapDenied as number) >= 1);
  });

  test('a router daemon joins a medium beyond loopback with the keys of its sim.medium.curve', async () => {
    const router = curveKeyPair();
    const { p: m, port, publicKey, log } = await curveMedium(router.publicKey);
    const sc = await loadScenario(SCENARIO);
    const plan = planTestbed(sc, sc.seed, { ...DEFAULT_TESTBED_PORTS, medium: `tcp://127.0.0.1:${port}` });
    const cfg = plan.routers[0]!.config;
    const nodeCfg = {
      ...cfg,
      sim: { ...cfg.sim, medium: { ...cfg.sim.medium, curve: { serverKey: publicKey, ...router } } },
      control: { ...cfg.control, endpoint: '', telemetry: '' },
      monitor: { ...cfg.monitor, listen: '' },
      traffic: { flows: [] },
      vnf: { ...cfg.vnf, instances: [] },
    };
    const cfgFile = join(dir, 'r0.json');
    writeFileSync(cfgFile, JSON.stringify(nodeCfg), { mode: 0o600 });
    const n = spawnCogmesh(['node', '--config', cfgFile, '--log-format', 'json'], ['ignore', 'pipe', 'pipe']);
    procs.push(n);
    let nodeOut = '';
    for (const s of [n.stdout!, n.stderr!]) s.on('data', (c: Buffer) => (nodeOut += c.toString()));
    const end = Date.now() + 90_000;
    while (!(nodeOut.includes('"node-start"') && log.text.includes('"router-joined"'))) {
      if (n.exitCode !== null || m.exitCode !== null || Date.now() > end) assert.fail(`the router did not join: ${nodeOut}\n${log.text}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await stopAll([m, n]);
  });
});
