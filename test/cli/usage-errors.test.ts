import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cogmesh } from '../support/cli.js';

/**
 * A user's mistake on the command line ends with one line on stderr,
 * `cogmesh: ...` naming the option or the file at fault, and exit code 2:
 * no stack trace, nothing on stdout. Each case runs the CLI as a process.
 */

const dir = mkdtempSync(join(tmpdir(), 'cogmesh-usage-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const scenario = 'config/scenarios/urbanx-chain.json';

/** Runs `cogmesh ARGS...` and checks the one usage line, which must hold every one of `names`. */
function refused(args: string[], ...names: string[]): string {
  const r = cogmesh(...args);
  const what = `cogmesh ${args.join(' ')}`;
  assert.equal(r.code, 2, `${what}: exit code\n${r.err}`);
  assert.match(r.err, /^cogmesh: [^\n]+\n$/, `${what}: one line on stderr`);
  assert.doesNotMatch(r.err, /\n\s+at |node:internal/, `${what}: no stack trace`);
  for (const n of names) assert.ok(r.err.includes(n), `${what}: names ${n}: ${r.err}`);
  assert.equal(r.out, '', `${what}: nothing on stdout`);
  return r.err;
}

test('record --out in a folder that does not exist names --out and the folder', () => {
  refused(['record', '--out', '/nope/dir/band', '--seconds', '0.01'], '--out', '/nope/dir');
});

test('sim --out naming an existing file (not a folder) names --out and the file', () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'kept\n');
  refused(['sim', scenario, '--duration', '1', '--out', file], '--out', file);
});

test('sim --out under /proc fails at once (a recursive mkdir there never returns) and names --out', { skip: !existsSync('/proc/self') }, () => {
  refused(['sim', scenario, '--duration', '1', '--out', '/proc/cogmesh-nope'], '--out', '/proc/cogmesh-nope');
  refused(['sim', scenario, '--duration', '1', '--out', '/proc/cogmesh-nope/deeper'], '--out', '/proc/cogmesh-nope');
});

test('sim --trace over an existing file needs --force, and a folder is refused, naming --trace', () => {
  const file = join(dir, 'trace.jsonl');
  writeFileSync(file, 'kept\n');
  refused(['sim', scenario, '--duration', '1', '--tcp', 'reno', '--trace', file], '--trace', file, '--force');
  refused(['sim', scenario, '--duration', '1', '--tcp', 'reno', '--trace', dir], '--trace', dir);
});

test('medium --bind that is not an endpoint names --bind', () => {
  refused(['medium', '--scenario', 'config/scenarios/testbed-chain.json', '--bind', 'nope'], '--bind', '"nope"');
});

test('band --bind that is not an endpoint, or is beyond this machine, or is taken, names --bind', async () => {
  refused(['band', '--bind', 'nope'], '--bind', '"nope"', 'tcp://HOST:PORT');
  refused(['band', '--bind', 'tcp://0.0.0.0:7700'], '--bind', 'loopback or ipc');
  refused(['band', '--idle-ms', '5'], '--idle-ms');
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = taken.address() as { port: number };
    assert.match(refused(['band', '--bind', `tcp://127.0.0.1:${port}`], '--bind'), /already in use/);
  } finally {
    await new Promise((r) => taken.close(r));
  }
});

test('a port already taken names the option that set it: medium --bind, testbed --medium and --control-base', async () => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = taken.address() as { port: number };
    const endpoint = `tcp://127.0.0.1:${port}`;
    const medium = refused(['medium', '--scenario', 'config/scenarios/testbed-chain.json', '--bind', endpoint], '--bind', endpoint);
    assert.match(medium, /already in use/);
    refused(['testbed', 'config/scenarios/testbed-chain.json', '--medium', endpoint, '--for', '1'], '--medium', endpoint);
    // Router 0's control port: checked before any process starts, with the medium on a free socket.
    const medium2 = `ipc://${join(dir, 'medium.sock')}`;
    refused(
      ['testbed', 'config/scenarios/testbed-chain.json', '--medium', medium2, '--control-base', String(port), '--for', '1'],
      '--control-base',
      `${port}`,
      'r0',
    );
  } finally {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  }
});

test('an unknown option names it and the help to read', () => {
  refused(['sim', '--bogus'], "'--bogus'", 'cogmesh sim --help');
  refused(['--bogus'], "'--bogus'", 'cogmesh --help');
});

test('an unknown subcommand names it', () => {
  refused(['bogus'], "'bogus'");
  refused(['config', 'bogus'], "'bogus'", 'cogmesh config --help');
});

test('a missing argument or required option names it', () => {
  refused(['sim'], "'scenario'");
  refused(['record'], '--out');
});

test('--log-format xml names the option, the value and the choices', () => {
  refused(['medium', '--log-format', 'xml'], '--log-format', "'xml'", 'pretty, json');
});

test('a group without its command prints the list of commands, then one usage line', () => {
  const r = cogmesh('config');
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^Usage: cogmesh config/);
  assert.match(r.err, /\ncogmesh: config: a command is needed \(the list is above\) \[CLI_USAGE\]\n$/);
});

test('config defaults --id that is not a number names --id and the value given', () => {
  refused(['config', 'defaults', '--id', 'abc'], '--id', '"abc"');
});

test('sim --acc of the wrong form says the forms it takes, not "a string"', () => {
  const r = cogmesh('sim', scenario, '--duration', '1', '--tcp', 'reno', '--acc', 'everyX');
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /\/acc\/placement: "everyX" — expected "none", "every", "every-K" \(every K-th router, K from 1 to 999\) or "nodes"/);
  assert.doesNotMatch(r.err, /expected a string/);
});

test('--help and --version still exit 0', () => {
  for (const args of [['--help'], ['--version'], ['sim', '--help'], ['config', 'defaults', '--help']]) {
    const r = cogmesh(...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    assert.equal(r.err, '');
  }
});

test('a folder made for sim --out is made with its parents', () => {
  const out = join(dir, 'made', 'for', 'results');
  mkdirSync(join(dir, 'made'));
  const r = cogmesh('sim', scenario, '--duration', '1', '--out', out);
  assert.equal(r.code, 0, r.err);
  for (const f of ['result.json', 'flows.csv', 'nodes.csv']) assert.ok(existsSync(join(out, f)), f);
});
