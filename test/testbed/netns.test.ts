import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { CogmeshError } from '../../src/core/errors.js';
import {
  createNetns,
  destroyNetns,
  findTestbed,
  inNetns,
  ipCommand,
  listNetns,
  netnsAvailable,
  netnsLayout,
  newTag,
  sweepStale,
  type NetnsLayout,
  type TestbedState,
} from '../../src/testbed/netns.js';
import { root } from '../support/cli.js';
import { until } from '../support/until.js';

/**
 * The namespaces of `cogmesh testbed --netns`, made for real with iproute2
 * (as root). State files go to a temporary directory and every test uses
 * fresh tags, so a real testbed running on the machine is never touched;
 * `after` removes every namespace of those tags whatever happened.
 */

const available = await netnsAvailable();
const needsNetns = (t: { skip(message?: string): void }): boolean => {
  if (available.ok) return false;
  t.skip(`ip netns unavailable: ${available.why}`);
  return true;
};

const tags = new Set<string>();
/** A tag no namespace on this machine uses, remembered for cleanup. */
async function freshTag(): Promise<string> {
  const used = new Set((await listNetns()).map((n) => n.split('-')[1]));
  for (;;) {
    const t = newTag();
    if (!used.has(t) && !tags.has(t)) {
      tags.add(t);
      return t;
    }
  }
}

const ours = (tag: string, names: string[]): string[] => names.filter((n) => n.startsWith(`cm-${tag}-`));

/** Runs `cmd` in namespace `ns`; its standard output, trimmed. */
function inNs(ns: string, cmd: string, ...args: string[]): string {
  const c = inNetns(ns, cmd, args);
  return execFileSync(c.execPath, c.args, { encoding: 'utf8' }).trim();
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const p = spawn('sleep', ['0']);
  await new Promise((r) => p.once('exit', r));
  return p.pid!;
}

let runDir = '';
before(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'cogmesh-netns-'));
});

after(async () => {
  if (available.ok) {
    const left = (await listNetns()).filter((n) => tags.has(n.split('-')[1] ?? ''));
    for (const ns of left) spawnSync(ipCommand(), ['netns', 'del', ns]);
    // Only the namespaces of this file's tags: whatever a live testbed of the machine's has stays.
    await sweepStale(runDir, { orphans: (t) => tags.has(t) });
  }
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

describe('netnsLayout', () => {
  test('names and addresses per router, from the LAN prefixes', () => {
    const l = netnsLayout('0a1f', 3, '/tmp/x');
    assert.equal(l.stateFile, '/tmp/x/0a1f.json');
    assert.deepEqual(l.routers[0], {
      index: 0,
      name: 'r0',
      routerNs: 'cm-0a1f-r0',
      hostNs: 'cm-0a1f-h0',
      vethRouter: 'cm0a1f-0r',
      vethHost: 'cm0a1f-0h',
      gw4: '10.0.0.1',
      gw6: 'fd00:1:0:0::1',
      host4: '10.0.0.2',
      host6: 'fd00:1:0:0::2',
      prefixLen4: 24,
      prefixLen6: 64,
    });
    assert.equal(l.routers[2]!.gw4, '10.0.2.1');
    const big = netnsLayout('beef', 301).routers[300]!;
    assert.deepEqual([big.gw4, big.host4, big.gw6, big.host6], ['10.1.44.1', '10.1.44.2', 'fd00:1:0:12c::1', 'fd00:1:0:12c::2']);
    assert.ok(netnsLayout('ffff', 65536).routers.every((r) => r.vethRouter.length <= 15 && r.vethHost.length <= 15));
  });

  test('refuses a tag that is not 4 lowercase hex digits, and a router count out of range', () => {
    for (const tag of ['ABCD', 'abc', 'abcde', 'ab-d', ''])
      assert.throws(
        () => netnsLayout(tag, 2),
        (e: unknown) => e instanceof CogmeshError && e.code === 'CORE_OUT_OF_RANGE',
      );
    for (const n of [0, -1, 1.5, 65537])
      assert.throws(
        () => netnsLayout('abcd', n),
        (e: unknown) => e instanceof CogmeshError && e.code === 'CORE_OUT_OF_RANGE',
      );
  });

  test('newTag gives 4 lowercase hex digits, not always the same', () => {
    const seen = new Set(Array.from({ length: 64 }, () => newTag()));
    for (const t of seen) assert.match(t, /^[0-9a-f]{4}$/);
    assert.ok(seen.size > 1);
  });
});

describe('a 2-router testbed in namespaces', () => {
  let layout: NetnsLayout;
  let tag = '';

  before(async () => {
    if (!available.ok) return;
    tag = await freshTag();
    layout = netnsLayout(tag, 2, runDir);
    await createNetns(layout);
  });

  test('the state file lists the namespaces, the routers and this process', async (t) => {
    if (needsNetns(t)) return;
    const s = JSON.parse(await readFile(layout.stateFile, 'utf8')) as TestbedState;
    assert.equal(s.tag, tag);
    assert.equal(s.pid, process.pid);
    assert.ok(!Number.isNaN(Date.parse(s.startedAt)));
    const names = [`cm-${tag}-r0`, `cm-${tag}-h0`, `cm-${tag}-r1`, `cm-${tag}-h1`];
    assert.deepEqual(s.namespaces, names);
    assert.deepEqual(
      s.routers.map((r) => [r.name, r.routerNs, r.hostNs, r.gw4, r.host4, r.gw6, r.host6]),
      [
        ['r0', names[0], names[1], '10.0.0.1', '10.0.0.2', 'fd00:1:0:0::1', 'fd00:1:0:0::2'],
        ['r1', names[2], names[3], '10.0.1.1', '10.0.1.2', 'fd00:1:0:1::1', 'fd00:1:0:1::2'],
      ],
    );
    assert.deepEqual(ours(tag, await listNetns()).sort(), [...names].sort());
  });

  test('the router forwards, and DAD is off on both sides', (t) => {
    if (needsNetns(t)) return;
    const r0 = layout.routers[0]!;
    const sys = (ns: string, key: string) => inNs(ns, 'cat', `/proc/sys/${key}`);
    assert.equal(sys(r0.routerNs, 'net/ipv4/ip_forward'), '1');
    assert.equal(sys(r0.routerNs, 'net/ipv6/conf/all/forwarding'), '1');
    for (const ns of [r0.routerNs, r0.hostNs]) {
      assert.equal(sys(ns, 'net/ipv6/conf/all/accept_dad'), '0', ns);
      assert.equal(sys(ns, 'net/ipv6/conf/default/accept_dad'), '0', ns);
    }
    assert.equal(sys(r0.hostNs, 'net/ipv4/ip_forward'), '0');
    assert.match(inNs(r0.hostNs, 'ip', 'route', 'show', 'default'), /^default via 10\.0\.0\.1 dev cm[0-9a-f]{4}-0h/);
    assert.match(inNs(r0.hostNs, 'ip', '-6', 'route', 'show', 'default'), /^default via fd00:1::1 dev cm[0-9a-f]{4}-0h/);
  });

  test('host h0 reaches its gateway over IPv4 and IPv6 (TCP to a listener in the router namespace)', async (t) => {
    if (needsNetns(t)) return;
    const r0 = layout.routers[0]!;
    // ping is not always installed; a TCP handshake to the router's namespace shows the same reachability.
    const server = inNetns(r0.routerNs, process.execPath, [
      '-e',
      `const s = require('node:net').createServer((c) => c.end('hi from ' + c.localAddress)); s.listen(7999, '::', () => console.log('up'));`,
    ]);
    const srv = spawn(server.execPath, server.args, { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        srv.stdout!.once('data', () => resolve());
        srv.once('exit', (c) => reject(new Error(`listener exited (${c})`)));
      });
      const replies: string[] = [];
      for (const gw of [r0.gw4, r0.gw6]) {
        const client = `const c = require('node:net').connect({ host: '${gw}', port: 7999, timeout: 2000 });
          let d = ''; c.on('data', (b) => (d += b)); c.on('end', () => console.log(d)); c.on('timeout', () => process.exit(3));`;
        replies.push(inNs(r0.hostNs, process.execPath, '-e', client));
      }
      // The listener answers from the address the host reached (the kernel writes IPv6 in its shortest form).
      assert.deepEqual(replies, ['hi from ::ffff:10.0.0.1', 'hi from fd00:1::1']);
    } finally {
      srv.kill('SIGKILL');
    }
  });

  test('findTestbed finds it by tag or as the only one, and names what it cannot find', async (t) => {
    if (needsNetns(t)) return;
    assert.equal((await findTestbed(tag, runDir)).tag, tag);
    assert.equal((await findTestbed(undefined, runDir)).tag, tag);
    await assert.rejects(findTestbed('0000' === tag ? '0001' : '0000', runDir), (e: CogmeshError) => {
      assert.equal(e.code, 'TESTBED_NOT_RUNNING');
      assert.match(e.message, new RegExp(`running: ${tag}`));
      return true;
    });
    const empty = await mkdtemp(join(tmpdir(), 'cogmesh-netns-empty-'));
    try {
      await assert.rejects(findTestbed(undefined, empty), /no `cogmesh testbed --netns` is running/);
    } finally {
      await rm(empty, { recursive: true });
    }
  });

  test('cogmesh testbed exec runs a command behind a router, or in it, with its exit status', (t) => {
    if (needsNetns(t)) return;
    const driver = `import { CogmeshError } from ${JSON.stringify(pathToFileURL(join(root, 'src/core/errors.ts')).href)};
      import { testbedExecCommand } from ${JSON.stringify(pathToFileURL(join(root, 'src/cli/testbed-exec.ts')).href)};
      try { await testbedExecCommand().parseAsync(process.argv.slice(1), { from: 'user' }); }
      catch (e) { if (!(e instanceof CogmeshError)) throw e; process.stderr.write('cogmesh: ' + e.message + '\\n'); process.exit(2); }`;
    const exec = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', driver, '--', '--run-dir', runDir, ...args], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      });
    let r = exec('r1', '--', 'ip', '-4', '-o', 'addr', 'show', 'dev', `cm${tag}-1h`);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /inet 10\.0\.1\.2\/24/);
    r = exec('--tag', tag, '--router-ns', '1', '--', 'cat', '/proc/sys/net/ipv4/ip_forward');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '1');
    r = exec('r0', '--', 'sh', '-c', 'exit 7');
    assert.equal(r.status, 7);
    r = exec('r0', '--', 'sh', '-c', 'kill -TERM $$');
    assert.equal(r.status, 128 + 15);
    r = exec('r5', '--', 'true');
    assert.equal(r.status, 2);
    assert.match(r.stderr, new RegExp(`testbed ${tag} has no router "r5"; its routers are r0, r1`));
  });

  test('destroyNetns kills what runs inside, removes every namespace and the state file, and may run twice', async (t) => {
    if (needsNetns(t)) return;
    const h0 = layout.routers[0]!.hostNs;
    const c = inNetns(h0, 'sleep', ['60']);
    const sleeper = spawn(c.execPath, c.args, { detached: true, stdio: 'ignore' });
    const gone = new Promise<NodeJS.Signals | null>((r) => sleeper.once('exit', (_c, s) => r(s)));
    await until(
      'the sleeper inside the namespace',
      async () => (execFileSync(ipCommand(), ['netns', 'pids', h0], { encoding: 'utf8' }).includes(String(sleeper.pid)) ? true : undefined),
      5000,
      20,
    );
    await destroyNetns(layout);
    assert.equal(await gone, 'SIGKILL');
    assert.deepEqual(ours(tag, await listNetns()), []);
    assert.equal(existsSync(layout.stateFile), false);
    await destroyNetns(layout);
  });
});

describe('failures and sweeping', () => {
  test('a failure half-way removes what was made and names the command and what ip said', async (t) => {
    if (needsNetns(t)) return;
    const tag = await freshTag();
    const layout = netnsLayout(tag, 2, runDir);
    layout.routers[1]!.gw4 = '10.0.1.300';
    await assert.rejects(createNetns(layout), (e: CogmeshError) => {
      assert.equal(e.code, 'TESTBED_NETNS_COMMAND');
      assert.match(e.message, new RegExp(`^\`ip -n cm-${tag}-r1 addr add 10\\.0\\.1\\.300/24 dev cm${tag}-1r\` failed: .+`));
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
    assert.deepEqual(ours(tag, await listNetns()), []);
    assert.equal(existsSync(layout.stateFile), false);
  });

  test('a tag whose namespace exists already is refused, and that namespace is left alone', async (t) => {
    if (needsNetns(t)) return;
    const tag = await freshTag();
    execFileSync(ipCommand(), ['netns', 'add', `cm-${tag}-h0`]);
    try {
      const layout = netnsLayout(tag, 1, runDir);
      await assert.rejects(createNetns(layout), (e: CogmeshError) => e.code === 'TESTBED_TAG_IN_USE');
      assert.deepEqual(ours(tag, await listNetns()), [`cm-${tag}-h0`]);
      assert.equal(existsSync(layout.stateFile), false);
    } finally {
      execFileSync(ipCommand(), ['netns', 'del', `cm-${tag}-h0`]);
    }
  });

  test('sweepStale removes a killed testbed, an unreadable state file, and leaves a live one', async (t) => {
    if (needsNetns(t)) return;
    const [deadTag, liveTag, junkTag, orphanTag] = [await freshTag(), await freshTag(), await freshTag(), await freshTag()];
    const dead = netnsLayout(deadTag, 2, runDir);
    const live = netnsLayout(liveTag, 1, runDir);
    await createNetns(dead, await deadPid());
    await createNetns(live);
    // A testbed killed while writing its first state file, after making one namespace.
    await writeFile(join(runDir, `${junkTag}.json`), '{"tag": "');
    execFileSync(ipCommand(), ['netns', 'add', `cm-${junkTag}-r0`]);
    // A namespace no state file claims: swept only when orphans are asked for.
    execFileSync(ipCommand(), ['netns', 'add', `cm-${orphanTag}-h3`]);
    try {
      assert.deepEqual(await sweepStale(runDir), [deadTag, junkTag].sort());
      const left = await listNetns();
      assert.deepEqual(ours(deadTag, left), []);
      assert.deepEqual(ours(junkTag, left), []);
      assert.equal(existsSync(dead.stateFile), false);
      assert.equal(existsSync(join(runDir, `${junkTag}.json`)), false);
      assert.deepEqual(ours(liveTag, left).sort(), [`cm-${liveTag}-h0`, `cm-${liveTag}-r0`]);
      assert.equal(existsSync(live.stateFile), true);
      assert.deepEqual(ours(orphanTag, left), [`cm-${orphanTag}-h3`]);

      assert.deepEqual(await sweepStale(runDir, { orphans: (tg) => tags.has(tg) }), [orphanTag]);
      assert.deepEqual(ours(orphanTag, await listNetns()), []);
      assert.equal(ours(liveTag, await listNetns()).length, 2);
      assert.deepEqual(await sweepStale(runDir), []);
    } finally {
      await destroyNetns(live);
    }
  });
});
