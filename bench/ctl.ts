/**
 * What a `ctl set` costs, end to end over the control API of a running
 * router daemon (an idle standalone node: config/examples/demo.json with a
 * control endpoint on a free port), against a bare ZeroMQ echo (a ROUTER
 * that sends every request back, in a process of its own) measured in the
 * same run. Each `set` toggles a live field (sensing.periodMs between 1000
 * and 1001 ms) with the version it expects, as an operator's tool would.
 *
 *   node --import tsx bench/ctl.ts [--requests 400]
 *
 * The router is the built command (bin/cogmesh.js): run `npm run build` first.
 *
 * Prints key=value lines: p50 and p99 latency of each, their ratio, and the
 * goal (p99 of set under 5 ms).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Dealer } from 'zeromq';
import { ControlClient } from '../src/control/client.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '400' } } });
const n = Number(values.requests);
if (!Number.isInteger(n) || n < 50) {
  process.stderr.write(`bench/ctl.ts: --requests: "${values.requests}" is not an integer >= 50\n`);
  process.exit(2);
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'cm-bench-ctl-'));
const stop = (): void => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', stop);

/** Resolves once `child` prints `marker`; rejects if it exits first. */
const ready = (child: ChildProcess, marker: RegExp, what: string): Promise<void> =>
  new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 60 s: ${said.slice(-500)}`)), 60_000);
    const take = (d: Buffer): void => {
      said += d.toString();
      if (marker.test(said)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${said.slice(-500)}`)));
  });

try {
  // The reference: a bare ZeroMQ echo in a process of its own.
  const echoPort = await freePort();
  const echoSrc =
    "const z=require('zeromq');(async()=>{const s=new z.Router();await s.bind(process.argv[1]);console.log('echo ready');for await(const m of s)await s.send(m)})()";
  const echo = spawn(process.execPath, ['-e', echoSrc, `tcp://127.0.0.1:${echoPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(echo);
  await ready(echo, /echo ready/, 'the echo');
  const d = new Dealer({ linger: 0 });
  d.connect(`tcp://127.0.0.1:${echoPort}`);
  const body = Buffer.from(JSON.stringify({ id: 1, cmd: 'set', args: { values: { 'sensing.periodMs': 1000 }, expect: '0123456789abcdef' } }));
  const echoMs: number[] = [];
  for (let i = 0; i < n + 50; i++) {
    const t = performance.now();
    await d.send([Buffer.alloc(0), body]);
    await d.receive();
    if (i >= 50) echoMs.push(performance.now() - t);
  }
  d.close();

  // The router: an idle standalone node with its control API.
  const port = await freePort();
  const cfg = JSON.parse(readFileSync('config/examples/demo.json', 'utf8')) as Record<string, Record<string, unknown>>;
  cfg.control = { ...(cfg.control ?? {}), endpoint: `tcp://127.0.0.1:${port}`, telemetry: '' };
  cfg.monitor = { ...(cfg.monitor ?? {}), listen: '' };
  const file = join(dir, 'node.json');
  writeFileSync(file, JSON.stringify(cfg));
  // The router as users run it: the built command (npm run build).
  const node = spawn(process.execPath, [fileURLToPath(new URL('../bin/cogmesh.js', import.meta.url)), 'node', '--config', file, '--log-format', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(node);
  await ready(node, /control-start|control API/, 'the router');
  const c = new ControlClient(`tcp://127.0.0.1:${port}`);
  const setMs: number[] = [];
  let version = ((await c.request('status')) as { result: { configVersion: string } }).result.configVersion;
  for (let i = 0; i < n + 50; i++) {
    const t = performance.now();
    const r = (await c.request('set', { values: { 'sensing.periodMs': 1000 + ((i + 1) % 2) }, expect: version })) as {
      ok: boolean;
      result?: { version: string };
      error?: unknown;
    };
    if (i >= 50) setMs.push(performance.now() - t);
    if (!r.ok || !r.result) throw new Error(`set refused: ${JSON.stringify(r.error)}`);
    version = r.result.version;
  }
  c.close();

  const f = (x: number): string => x.toFixed(3);
  const [e50, e99, s50, s99] = [quantile(echoMs, 0.5), quantile(echoMs, 0.99), quantile(setMs, 0.5), quantile(setMs, 0.99)];
  process.stdout.write(
    [
      `requests=${n}`,
      `zmq_echo_p50_ms=${f(e50)}`,
      `zmq_echo_p99_ms=${f(e99)}`,
      `ctl_set_p50_ms=${f(s50)}`,
      `ctl_set_p99_ms=${f(s99)}`,
      `ratio_p50_vs_echo=${(s50 / e50).toFixed(1)}`,
      `ratio_p99_vs_echo=${(s99 / e99).toFixed(1)}`,
      `goal_set_p99_under_5ms=${s99 < 5 ? 'met' : 'not met'}`,
    ].join('\n') + '\n',
  );
} finally {
  stop();
}
