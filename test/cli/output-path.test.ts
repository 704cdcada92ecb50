import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkOutputFile, ensureOutputDir } from '../../src/cli/output-path.js';
import { UsageError } from '../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-outpath-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The usage error `p` ends with, which must name `flag`. */
async function usage(p: Promise<void>, flag: string): Promise<string> {
  const e = await p.then(
    () => assert.fail('not refused'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof UsageError, String(e));
  assert.ok(e.message.startsWith(`${flag}: `), e.message);
  return e.message;
}

test('a folder is made with its parents, and one that is there is taken as it is', async () => {
  const out = join(dir, 'a', 'b', 'c');
  await ensureOutputDir('--out', out);
  assert.ok(existsSync(out));
  await ensureOutputDir('--out', out);
});

test('a folder under a dangling symbolic link is refused, not tried for ever (where a recursive mkdir loops)', async () => {
  const link = join(dir, 'dangling');
  symlinkSync(join(dir, 'gone'), link);
  assert.match(await usage(ensureOutputDir('--out', join(link, 'results')), '--out'), /dangling/);
});

test('a file where a folder should be is refused', async () => {
  const file = join(dir, 'file');
  writeFileSync(file, 'x');
  assert.match(await usage(ensureOutputDir('--out', file), '--out'), /is not a folder/);
  assert.match(await usage(ensureOutputDir('--out', join(file, 'below')), '--out'), /not a folder/);
});

test('an output file: a new one leaves nothing behind, an existing one needs force and is not truncated, a folder is refused', async () => {
  const fresh = join(dir, 'fresh.json');
  await checkOutputFile('--trace', fresh);
  assert.ok(!existsSync(fresh), 'the file made to try is removed');
  const old = join(dir, 'old.json');
  writeFileSync(old, 'kept');
  assert.match(await usage(checkOutputFile('--trace', old), '--trace'), /exists \(--force overwrites it\)/);
  await checkOutputFile('--trace', old, { force: true });
  assert.equal(readFileSync(old, 'utf8'), 'kept');
  assert.match(await usage(checkOutputFile('--trace', dir), '--trace'), /is a folder/);
  assert.match(await usage(checkOutputFile('--trace', join(dir, 'nope', 'x.json')), '--trace'), /does not exist/);
});
