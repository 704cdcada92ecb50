import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { liveChange } from '../../src/config/live.js';
import { parseNodeConfig } from '../../src/config/load.js';
import { reloadR3Keys } from '../../src/daemon/r3-keys-reload.js';
import { encodeControl } from '../../src/wire/codec.js';
import { BROADCAST, type Hello } from '../../src/wire/mesh.js';
import { R3Auth, type R3Keys } from '../../src/wire/r3-auth.js';
import { loadR3Keys } from '../../src/config/r3-keys.js';
import { spawnCogmesh } from '../support/cli.js';
import { memoryLogger } from '../support/control-view.js';

/**
 * A running router's key reload (SIGHUP, src/daemon/r3-keys-reload.ts): a
 * good file is put in force whole with the counters and replay state kept,
 * a bad one is refused whole with one line naming the problem; and the
 * rotation of docs/wire.md, done by reloads alone, never drops a message.
 */

const dir = mkdtempSync(join(tmpdir(), 'cm-r3-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const KEY = (n: number): string => n.toString(16).padStart(2, '0').repeat(32);
let files = 0;
/** A key file holding keys of these ids (key i's bytes are all i), or this text. */
function keyFile(content: number[] | string): string {
  const file = join(dir, `keys-${files++}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify({ keys: content.map((id) => ({ id, hex: KEY(id) })) }), { mode: 0o600 });
  return file;
}

const hello: Hello = { type: 'hello', src: 1, seq: 1, r1Channel: 6, workload: [], neighbours: [] };
const body = encodeControl(hello);

/** A router's R3Auth with the keys of `file`, its reload, and what it logged. */
function router(file: string, sendKeyId: number, index: number) {
  const settings = { keyFile: file, sendKeyId };
  const auth = new R3Auth(loadR3Keys(settings), index);
  const { log, lines } = memoryLogger();
  const reload = (s: Partial<typeof settings> = {}): boolean => {
    Object.assign(settings, s);
    return reloadR3Keys(settings, auth, log, (k: R3Keys) => auth.setKeys(k), 'SIGHUP');
  };
  return { auth, lines, reload, settings };
}

describe('R3 key reload', () => {
  test('a good file is put in force, logged with the key ids and never a key', () => {
    const file = keyFile([1]);
    const r = router(file, 1, 10);
    writeFileSync(file, JSON.stringify({ keys: [1, 2].map((id) => ({ id, hex: KEY(id) })) }));
    assert.equal(r.reload(), true);
    assert.deepEqual(r.auth.keysInForce, { sendKeyId: 1, ids: [1, 2] });
    assert.equal(r.lines.length, 1);
    assert.equal(r.lines[0]!.event, 'r3-keys-reloaded');
    assert.match(String(r.lines[0]!.msg), /^SIGHUP: R3 keys reloaded from .*: signing with key 1 of 1, 2 \(was key 1 of 1\)$/);
    assert.doesNotMatch(JSON.stringify(r.lines), new RegExp(KEY(1)));
  });

  test('a bad file is refused whole: one line naming the problem, and the keys in force stay', () => {
    const file = keyFile([1, 2]);
    const r = router(file, 1, 10);
    const cases: Array<[() => void, RegExp]> = [
      [() => rmSync(file), /routing\.auth\.keyFile ".*": expected a readable key file \(ENOENT\)/],
      [() => writeFileSync(file, '{"keys": [{"id": 1, "hex": '), /expected a JSON key file/],
      [
        () =>
          writeFileSync(
            file,
            JSON.stringify({
              keys: [
                { id: 1, hex: KEY(1) },
                { id: 2, hex: 'ab' },
              ],
            }),
          ),
        /keys\[1\]\.hex: 32 to 64 bytes \(it has 1\)/,
      ],
      // The send key (1) is not in the new file: nothing of it is taken, key 3 included.
      [
        () => writeFileSync(file, JSON.stringify({ keys: [{ id: 3, hex: KEY(3) }] })),
        /routing\.auth\.sendKeyId 1: expected the id of a key in the key file \(it holds 3\)/,
      ],
    ];
    if (process.getuid?.() !== 0) {
      cases.push([
        () => {
          writeFileSync(file, JSON.stringify({ keys: [{ id: 1, hex: KEY(1) }] }));
          chmodSync(file, 0o000);
        },
        /expected a readable key file \(EACCES\)/,
      ]);
    }
    for (const [spoil, problem] of cases) {
      spoil();
      const before = r.lines.length;
      assert.equal(r.reload(), false);
      assert.equal(r.lines.length, before + 1, 'one line');
      const line = r.lines.at(-1)!;
      assert.equal(line.event, 'r3-keys-refused');
      assert.equal(line.level, 50, 'an error');
      assert.match(String(line.msg), /^SIGHUP: the R3 key file was refused whole, the keys in force stay \(signing with key 1 of 1, 2\): /);
      assert.match(String(line.msg), problem);
      assert.deepEqual(r.auth.keysInForce, { sendKeyId: 1, ids: [1, 2] });
    }
    assert.doesNotMatch(JSON.stringify(r.lines), new RegExp(KEY(1)));
  });

  test('a reload keeps the index, the counter and the replay state', () => {
    const file = keyFile([1]);
    const tx = router(file, 1, 10);
    const rx = router(file, 1, 20);
    const first = tx.auth.seal(body, 1, BROADCAST);
    const second = tx.auth.seal(body, 1, BROADCAST);
    assert.ok(rx.auth.open(second, 1, BROADCAST).ok);
    writeFileSync(file, JSON.stringify({ keys: [1, 2].map((id) => ({ id, hex: KEY(id) })) }));
    assert.equal(tx.reload(), true);
    assert.equal(rx.reload(), true);
    assert.deepEqual(rx.auth.open(first, 1, BROADCAST), { ok: false, error: 'replay' }, 'what was older before the reload is older after it');
    const third = tx.auth.seal(body, 1, BROADCAST);
    const t = new DataView(third.buffer, third.byteOffset + third.length - 43, 43);
    assert.deepEqual([t.getUint32(2), t.getUint32(6)], [10, 3], 'the sender goes on from its counter');
    assert.ok(rx.auth.open(third, 1, BROADCAST).ok);
  });

  test('the rotation of docs/wire.md by reloads alone: every message verifies, none is dropped', () => {
    // Three routers sharing one key file, each sending to the others between the steps.
    const file = keyFile([1]);
    const routers = [0, 1, 2].map((i) => router(file, 1, 100 + i));
    const exchange = (): void => {
      for (const [i, tx] of routers.entries()) {
        const packet = tx.auth.seal(body, i + 1, BROADCAST);
        for (const rx of routers) if (rx !== tx) assert.ok(rx.auth.open(packet, i + 1, BROADCAST).ok, JSON.stringify(rx.auth.counters));
      }
    };
    exchange();
    // 1. The new key (2) in every router's file, reloaded one router at a time.
    writeFileSync(file, JSON.stringify({ keys: [1, 2].map((id) => ({ id, hex: KEY(id) })) }));
    for (const r of routers) {
      assert.equal(r.reload(), true);
      exchange();
    }
    // 2. Signing with the new key, one router at a time (ctl set routing.auth.sendKeyId=2 does the same).
    for (const r of routers) {
      assert.equal(r.reload({ sendKeyId: 2 }), true);
      exchange();
    }
    // 3. The old key out of the file, reloaded.
    writeFileSync(file, JSON.stringify({ keys: [{ id: 2, hex: KEY(2) }] }));
    for (const r of routers) {
      assert.equal(r.reload(), true);
      exchange();
    }
    for (const r of routers) {
      assert.deepEqual(r.auth.keysInForce, { sendKeyId: 2, ids: [2] });
      const c = r.auth.counters;
      assert.deepEqual([c.badMac, c.unknownKey, c.replay, c.malformedTrailer, c.noTrailer], [0, 0, 0, 0, 0]);
      assert.equal(c.verified, 2 * 10);
    }
  });
});

describe('R3 authentication as a live setting', () => {
  const base = parseNodeConfig({ node: { id: 1 }, routing: { auth: { keyFile: '/etc/cogmesh/r3-keys.json', sendKeyId: 1 } } }, 'test');
  const set = (auth: Record<string, unknown>) => liveChange(base, { ...base, routing: { ...base.routing, auth: { ...base.routing.auth, ...auth } } });

  test('the send key id and another key file are taken live', () => {
    assert.deepEqual(set({ sendKeyId: 2 }).restartOnly, []);
    assert.deepEqual(set({ keyFile: '/etc/cogmesh/r3-keys-new.json' }).restartOnly, []);
  });

  test('turning authentication on or off takes a restart', () => {
    const off = set({ keyFile: '' }).restartOnly;
    assert.equal(off.length, 1);
    assert.equal(off[0]!.path, '/routing/auth/keyFile');
    assert.match(off[0]!.expected, /turns R3 authentication off only at restart/);
    const plain = parseNodeConfig({ node: { id: 1 } }, 'test');
    const on = liveChange(plain, { ...plain, routing: { ...plain.routing, auth: { keyFile: '/etc/cogmesh/r3-keys.json', sendKeyId: 0 } } }).restartOnly;
    assert.match(on[0]?.expected ?? '', /turns R3 authentication on only at restart/);
  });
});

test('SIGHUP to a router without R3 (sensing only) is logged, and the router goes on', { timeout: 120_000 }, async () => {
  const child = spawnCogmesh(
    ['node', '--config', 'config/examples/node.json', '--for', '100', '--log-format', 'json', '--set', 'control.endpoint=', '--set', 'control.telemetry='],
    ['ignore', 'pipe', 'pipe'],
  );
  const lines: Array<Record<string, unknown>> = [];
  let rest = '';
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (rest + d.toString('utf8')).split('\n');
    rest = parts.pop()!;
    for (const l of parts) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const seen = async (event: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const l = lines.find((x) => x.event === event);
      if (l) return l;
      if (child.exitCode !== null) assert.fail(`the node exited before ${event}: ${JSON.stringify(lines.slice(-5))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await seen('sensing-round');
    child.kill('SIGHUP');
    const hup = await seen('r3-keys-refused');
    assert.equal(hup.msg, 'SIGHUP: this router runs no R3 (sensing only, no medium): no keys to reload');
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.equal((await seen('node-stop')).why, 'SIGINT');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
