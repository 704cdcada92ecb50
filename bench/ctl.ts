/**
 * What a `ctl set` costs, end to end over the control API of a running
 * router daemon (an idle standalone node: config/examples/demo.json with a
 * control endpoint on a free port), against a bare ZeroMQ echo (a ROUTER
 * that sends every request back, in a process of its own) measured in the
 * same run. Each `set` toggles a live field (sensing.periodMs between 1000
 * and 1001 ms) with the version it expects, as an operator's tool would.
 *
 *   node --import tsx bench/ctl.ts [--requests 2000]
 *
 * The router is the built command (bin/cogmesh.js): run `npm run build` first. Its log goes
 * to a file in a temporary folder, as a service's would, not through this process.
 *
 * Prints key=value lines: p50 and p99 latency of each, their ratio, and the
 * goal (p99 of set under 5 ms). 2000 sets by default: a p99 is the 1% slowest,
 * and of 400 sets that is the 4 slowest, where one scheduling hiccup of the
 * machine moves it by a millisecond; of 2000, the 20 slowest. The p99 of the
 * first 400 is printed too (`ctl_set_first400_p99_ms`, what earlier versions
 * of this bench reported): it also holds most of the time V8's optimising
 * compiler takes to settle on the set's code (its jobs go on, on background
 * threads, for the first thousand sets or so). A probe in the router's process
 * (bench/ctl-probe.mjs) adds where a set's time goes: in (from the client's
 * send until the router takes the request off its socket), router (until its
 * reply is ready), out (until the client has it), each as p50 and p99 and as
 * the mean over the slowest 1% of sets; the router's event-loop delay (p50,
 * p99, max) and its collector's pauses over the run. Last, the same sets handed to a control
 * server in this process (no sockets, no radios): what the router's own code costs a set
 * (inprocess_set_p50_us, p99), without waiting for a core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Writable } from 'node:stream';
import { Dealer } from 'zeromq';
import { parseNodeConfig } from '../src/config/load.js';
import type { NodeConfig } from '../src/config/types.js';
import { ControlClient } from '../src/control/client.js';
import { ControlServer } from '../src/control/server.js';
import { createLogger } from '../src/core/log.js';
import { LiveConfigView } from '../src/daemon/live-view.js';
import type { RouterView } from '../src/router/view.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '2000' } } });
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
/** What bench/ctl-probe.mjs reports from the router's process (epoch ms per request: received, replied, sent). */
interface ProbeReport {
  loopDelayMs: { p50: number; p99: number; max: number };
  gc: { count: number; ms: number; maxMs: number };
  requests: Array<[number, number, number]>;
}
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'cm-bench-ctl-'));
const stop = (): void => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', stop);

/** Resolves once `child` prints `marker`; rejects if it exits first. Its output is drained after, not kept. */
const ready = (child: ChildProcess, marker: RegExp, what: string): Promise<void> =>
  new Promise((resolve, reject) => {
    let said = '';
    let up = false;
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 60 s: ${said.slice(-500)}`)), 60_000);
    const take = (d: Buffer): void => {
      if (up) return;
      said += d.toString();
      if (marker.test(said)) {
        up = true;
        said = '';
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${said.slice(-500)}`)));
  });

/**
 * The live-configuration side of a daemon alone, in this process: no radios and no sockets,
 * and the cores' part of a change (applyLive) does nothing.
 */
class BareLiveView extends LiveConfigView {
  readonly id = 1;
  readonly name = 'bench';
  protected readonly startedUs = 0;
  now(): number {
    return 0;
  }
  protected applyLive(_next: NodeConfig): void {}
}

/**
 * What the router's own code costs a set, without waiting for a core: the same sets handed to
 * a control server's `handle` in this process (parse, set, log lines to a sink, reply), in µs.
 */
async function inProcessSetUs(doc: unknown, count: number): Promise<number[]> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const log = createLogger({ level: 'info', format: 'json', destination: sink });
  const cfg = parseNodeConfig(doc, 'config/examples/demo.json');
  const view = new BareLiveView(cfg, log);
  const server = new ControlServer(view as unknown as RouterView, cfg.control, log);
  let version = view.configVersion();
  const us: number[] = [];
  // A longer warm-up than over the sockets: these are cheap, and the compiler takes a few hundred to settle.
  const warmUp = 500;
  for (let i = 0; i < count + warmUp; i++) {
    const frame = Buffer.from(JSON.stringify({ id: i, cmd: 'set', values: { 'sensing.periodMs': 1000 + ((i + 1) % 2) }, expect: version }));
    const t = performance.now();
    const r = await server.handle(frame);
    if (i >= warmUp) us.push((performance.now() - t) * 1000);
    if (!r.ok) throw new Error(`in-process set refused: ${JSON.stringify(r.error)}`);
    version = (r.result as { version: string }).version;
    // Let the collector and the log sink run between sets, as a router's idle loop would.
    if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return us;
}

/**
 * Resolves once `child`, whose output goes to the file at `path`, has written `marker` there;
 * rejects if it exits first. A file, as a service's log would be: the router's lines never
 * wake this process while it measures.
 */
const readyInFile = (child: ChildProcess, path: string, marker: RegExp, what: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const t0 = Date.now();
    const done = (e?: Error): void => {
      clearInterval(poll);
      child.off('exit', exited);
      if (e) reject(e);
      else resolve();
    };
    const poll = setInterval(() => {
      const said = readFileSync(path, 'utf8');
      if (marker.test(said)) done();
      else if (Date.now() - t0 > 60_000) done(new Error(`${what} did not start within 60 s: ${said.slice(-500)}`));
    }, 20);
    const exited = (code: number | null): void => done(new Error(`${what} exited (${code}): ${readFileSync(path, 'utf8').slice(-500)}`));
    child.once('exit', exited);
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
  // The router as users run it: the built command (npm run build), with the probe loaded ahead.
  const probe = fileURLToPath(new URL('ctl-probe.mjs', import.meta.url));
  const logPath = join(dir, 'router.log');
  const logFd = openSync(logPath, 'w');
  const node = spawn(
    process.execPath,
    ['--import', probe, fileURLToPath(new URL('../bin/cogmesh.js', import.meta.url)), 'node', '--config', file, '--log-format', 'json'],
    { stdio: ['ignore', logFd, logFd, 'ipc'] },
  );
  children.push(node);
  await readyInFile(node, logPath, /control-start|control API/, 'the router');
  const fromProbe = (): Promise<unknown> => new Promise((resolve) => node.once('message', resolve));
  const c = new ControlClient(`tcp://127.0.0.1:${port}`);
  const setMs: number[] = [];
  /** Epoch ms (both processes read the same wall clock) of each measured set: sent, and its reply in. */
  const setAt: Array<[number, number]> = [];
  let version = ((await c.request('status')) as { result: { configVersion: string } }).result.configVersion;
  const epoch = (): number => performance.timeOrigin + performance.now();
  for (let i = 0; i < n + 50; i++) {
    if (i === 50) {
      const started = fromProbe();
      node.send('start');
      await started;
    }
    const t = performance.now();
    const sent = epoch();
    const r = (await c.request('set', { values: { 'sensing.periodMs': 1000 + ((i + 1) % 2) }, expect: version })) as {
      ok: boolean;
      result?: { version: string };
      error?: unknown;
    };
    if (i >= 50) {
      setMs.push(performance.now() - t);
      setAt.push([sent, epoch()]);
    }
    if (!r.ok || !r.result) throw new Error(`set refused: ${JSON.stringify(r.error)}`);
    version = r.result.version;
  }
  c.close();
  const report = fromProbe();
  node.send('report');
  const probed = (await report) as ProbeReport;

  const inproc = await inProcessSetUs(cfg, n);
  const f = (x: number): string => x.toFixed(3);
  const [e50, e99, s50, s99] = [quantile(echoMs, 0.5), quantile(echoMs, 0.99), quantile(setMs, 0.5), quantile(setMs, 0.99)];
  // The probe saw the same sets in the same order (it was reset after the warm-up); a router built
  // before its control server published traces shows none.
  const stages = setAt.map(([sent, back], i) => {
    const [received, replied] = probed.requests[i] ?? [NaN, NaN];
    return { total: back - sent, in: received - sent, router: replied - received, out: back - replied };
  });
  const slowest = [...stages].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(stages.length / 100)));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const stageLines =
    probed.requests.length === setAt.length
      ? (['in', 'router', 'out'] as const).flatMap((k) => {
          const xs = stages.map((s) => s[k]);
          return [
            `set_${k}_p50_ms=${f(quantile(xs, 0.5))}`,
            `set_${k}_p99_ms=${f(quantile(xs, 0.99))}`,
            `set_${k}_slowest1pct_mean_ms=${f(mean(slowest.map((s) => s[k])))}`,
          ];
        })
      : [`set_stages=unknown (the router traced ${probed.requests.length} of ${setAt.length} sets: is the build older than bench/ctl.ts?)`];
  process.stdout.write(
    [
      `requests=${n}`,
      `zmq_echo_p50_ms=${f(e50)}`,
      `zmq_echo_p99_ms=${f(e99)}`,
      `ctl_set_p50_ms=${f(s50)}`,
      `ctl_set_p99_ms=${f(s99)}`,
      `ctl_set_first400_p99_ms=${f(quantile(setMs.slice(0, 400), 0.99))}`,
      `ratio_p50_vs_echo=${(s50 / e50).toFixed(1)}`,
      `ratio_p99_vs_echo=${(s99 / e99).toFixed(1)}`,
      ...stageLines,
      `inprocess_set_p50_us=${quantile(inproc, 0.5).toFixed(0)}`,
      `inprocess_set_p99_us=${quantile(inproc, 0.99).toFixed(0)}`,
      `router_loop_delay_p50_ms=${f(probed.loopDelayMs.p50)}`,
      `router_loop_delay_p99_ms=${f(probed.loopDelayMs.p99)}`,
      `router_loop_delay_max_ms=${f(probed.loopDelayMs.max)}`,
      `router_gc_pauses=${probed.gc.count}`,
      `router_gc_ms=${f(probed.gc.ms)}`,
      `router_gc_max_ms=${f(probed.gc.maxMs)}`,
      `goal_set_p99_under_5ms=${s99 < 5 ? 'met' : 'not met'}`,
    ].join('\n') + '\n',
  );
} finally {
  stop();
}
