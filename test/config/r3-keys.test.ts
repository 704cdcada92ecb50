import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadR3Keys, newR3KeyFile, parseR3Keys } from '../../src/config/r3-keys.js';
import { ConfigError } from '../../src/core/errors.js';
import { cogmesh } from '../support/cli.js';

const HEX_KEY = 'a1'.repeat(32);
const B64_KEY = Buffer.alloc(48, 7).toString('base64');

describe('R3 key file', () => {
  test('hex and base64 keys, the send key named or the only one', () => {
    const two = parseR3Keys(
      JSON.stringify({
        keys: [
          { id: 1, hex: HEX_KEY },
          { id: 2, base64: B64_KEY },
        ],
      }),
      2,
    );
    assert.ok(two.ok);
    assert.equal(two.keys.sendKeyId, 2);
    assert.deepEqual([...two.keys.keys.keys()], [1, 2]);
    assert.equal(two.keys.keys.get(2)!.length, 48);
    const one = parseR3Keys(JSON.stringify({ keys: [{ id: 9, hex: HEX_KEY }] }), 0);
    assert.ok(one.ok);
    assert.equal(one.keys.sendKeyId, 9);
  });

  test('each problem is named by its place, and no problem quotes a key', () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ keys: [{ id: 1, hex: HEX_KEY.slice(0, 40) }] }, 0, /keys\[0\]\.hex: 32 to 64 bytes \(it has 20\)/],
      [{ keys: [{ id: 1, hex: HEX_KEY.slice(0, 63) }] }, 0, /keys\[0\]\.hex: an even number of hex digits/],
      [{ keys: [{ id: 1, base64: `${B64_KEY}!` }] }, 0, /keys\[0\]\.base64: base64/],
      [{ keys: [{ id: 1, hex: HEX_KEY, base64: B64_KEY }] }, 0, /exactly one of "hex" or "base64"/],
      [{ keys: [{ id: 1, hex: HEX_KEY, secret: HEX_KEY }] }, 0, /nothing else/],
      [{ keys: [{ id: 0, hex: HEX_KEY }] }, 0, /keys\[0\]\.id: an integer 1-65535/],
      [
        {
          keys: [
            { id: 1, hex: HEX_KEY },
            { id: 1, hex: HEX_KEY },
          ],
        },
        0,
        /keys\[1\]\.id: 1 only once/,
      ],
      [{ keys: [] }, 0, /one or more keys/],
      [
        {
          keys: [
            { id: 1, hex: HEX_KEY },
            { id: 2, hex: HEX_KEY },
          ],
        },
        0,
        /the id of the key to sign with \(the file holds 2\)/,
      ],
      [{ keys: [{ id: 1, hex: HEX_KEY }] }, 4, /a key in the key file \(it holds 1\)/],
    ];
    for (const [doc, send, want] of cases) {
      const r = parseR3Keys(JSON.stringify(doc), send);
      assert.ok(!r.ok, JSON.stringify(want.source));
      const text = r.problems.map((p) => p.expected).join('\n');
      assert.match(text, want);
      for (const secret of [HEX_KEY, HEX_KEY.slice(0, 40), B64_KEY]) assert.ok(!text.includes(secret), `no key in: ${text}`);
    }
    const broken = parseR3Keys(`{"keys": [{"id": 1, "hex": "${HEX_KEY}"`, 0);
    assert.ok(!broken.ok);
    assert.ok(!broken.problems[0]!.expected.includes(HEX_KEY), broken.problems[0]!.expected);
  });

  test('loading: a missing or bad file is a ConfigError at routing.auth that shows the path, never the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'r3-keys-'));
    try {
      const file = join(dir, 'keys.json');
      assert.throws(
        () => loadR3Keys({ keyFile: file, sendKeyId: 0 }),
        (e: unknown) => e instanceof ConfigError && e.issues[0]!.path === '/routing/auth/keyFile' && /ENOENT/.test(e.message),
      );
      writeFileSync(file, JSON.stringify({ keys: [{ id: 3, hex: HEX_KEY.slice(0, 62) }] }));
      assert.throws(
        () => loadR3Keys({ keyFile: file, sendKeyId: 0 }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(file) && !e.message.includes(HEX_KEY.slice(0, 62)) && /it has 31\)/.test(e.message),
      );
      writeFileSync(file, JSON.stringify({ keys: [{ id: 3, hex: HEX_KEY }] }));
      assert.throws(
        () => loadR3Keys({ keyFile: file, sendKeyId: 4 }),
        (e: unknown) => e instanceof ConfigError && e.issues[0]!.path === '/routing/auth/sendKeyId' && e.issues[0]!.value === 4,
      );
      assert.equal(loadR3Keys({ keyFile: file, sendKeyId: 3 }).keys.get(3)!.length, 32);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  test('a router daemon with a bad key file stops before it joins the medium, naming the file and what is wrong, never the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'r3-keys-'));
    try {
      const keyFile = join(dir, 'keys.json');
      const short = 'c3'.repeat(20);
      writeFileSync(keyFile, JSON.stringify({ keys: [{ id: 1, hex: short }] }));
      const config = join(dir, 'node.json');
      // The medium's endpoint names no medium: the router must not get as far as dialling it.
      writeFileSync(config, JSON.stringify({ node: { id: 1 }, sim: { medium: { endpoint: 'ipc:///nonexistent/medium' } }, routing: { auth: { keyFile } } }));
      const r = cogmesh('node', '--config', config);
      assert.notEqual(r.code, 0);
      assert.match(r.err, /\/routing\/auth\/keyFile/);
      assert.match(r.err, /keys\[0\]\.hex: 32 to 64 bytes \(it has 20\)/);
      assert.ok(!`${r.out}${r.err}`.includes(short), 'the key is shown');
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  test('cogmesh keygen --r3-key makes a key file the loader takes: one random 256-bit key, mode 0600, nothing printed', () => {
    const a = parseR3Keys(newR3KeyFile(7), 0);
    const b = parseR3Keys(newR3KeyFile(7), 0);
    assert.ok(a.ok && b.ok);
    assert.equal(a.keys.sendKeyId, 7);
    assert.equal(a.keys.keys.get(7)!.length, 32);
    assert.notDeepEqual(a.keys.keys.get(7), b.keys.keys.get(7), 'each key is new');
    const dir = mkdtempSync(join(tmpdir(), 'r3-keys-'));
    try {
      const file = join(dir, 'r3.json');
      const w = cogmesh('keygen', '--r3-key', '3', '--out', file);
      assert.equal(w.code, 0, w.err);
      assert.equal(w.out, '', 'nothing printed');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(loadR3Keys({ keyFile: file, sendKeyId: 0 }).sendKeyId, 3);
      assert.match(readFileSync(file, 'utf8'), /^\{"keys":\[\{"id":3,"hex":"[0-9a-f]{64}"\}\]\}\n$/);
      const bad = cogmesh('keygen', '--r3-key', '0');
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--r3-key: "0" is not a key id 1-65535/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
