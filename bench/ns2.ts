/**
 * cogmesh's simulator next to a real peer, Debian's ns-2 (package ns2,
 * ns-2.35), on a plain chain: 802.11 at 2 Mbps, routers 200 m apart, AODV,
 * one TCP Reno FTP flow of 1000-byte segments, 1-4 hops.
 *
 *   node --import tsx bench/ns2.ts [--hops 1,2,3,4] [--duration 100] [--seeds 3] [--seed 1]
 *                                  [--window 20] [--jobs 1] [--warmup 100] [--warmup-runs 20] [--rounds 3]
 *                                  [--set PATH=VALUE]... [--pin on|off]
 *                                  [--json] [--check]
 *
 * ns-2 runs bench/peers/ns2-chain.tcl (`ns ns2-chain.tcl HOPS DURATION SEED
 * WINDOW`, one process per seed, one after another); cogmesh runs
 * config/scenarios/urbanx-chain.json with the cognitive layer and the PNs off
 * (--cognitive off --pn off), every radio of every router on channel 6 (an
 * ns-2 node has one radio, so AODV shares the data channel), and the flow
 * made TCP Reno, over the same seeds. Prints a Markdown table of
 * both goodputs (payload delivered in order to the sink, over the flow's
 * active time; mean and 95% confidence half-width over the seeds), their ratio,
 * whether it is within 25%, and the wall time of each side. --check makes the
 * exit code nonzero when a hop count is outside 25%. Wall times are given
 * twice for cogmesh: its simulations in this process (the simulator against
 * ns-2), and whole `cogmesh sim` processes, one per seed as ns-2 runs, with
 * start-up (each must give the in-process goodput). Both run the build (`npm run build`). --set passes overrides to
 * the cogmesh runs, as `cogmesh sim --set`. --window is the TCP receive window
 * (packets) of both sides; cogmesh's sink gets window x 1000 bytes of receive
 * buffer. --jobs is cogmesh's worker threads:
 * 1 by default, so that both wall times are one core's (ns-2 is single-threaded).
 * Before the timed simulations in this process, --warmup-runs untimed
 * simulations (20 by default, one after another, seeds from --seed) of
 * --warmup simulated seconds each (0: none) at the first hop count: V8
 * compiles the simulator's code during its first runs, and without it the
 * first hop count's time would hold that compilation and the others' not.
 * It takes runs rather than simulated time: each new run's objects send V8
 * back to compile some code again, for the first few runs of a process (one
 * warm-up run of 300 s left the first timed row a third slower than the same
 * row timed again; six of 20 s, within a tenth). And it takes simulated
 * time: V8's young generation starts small and grows with what a process
 * allocates, and until it has grown each run pays for more scavenges (after
 * six warm-up runs of 20 s, the first three timed 3-seed runs of 100 s at 1
 * hop took 70, 48 and 35 scavenges, 39, 45 and 26 ms; after six of 100 s,
 * 44, 35 and 35, and 35 from then on). Six of 100 s were the default
 * until a process's main-thread CPU per warm 3-seed 1-hop run was followed
 * run by run: after one seed, 0.46, 0.38, 0.37, 0.38, 0.43 and 0.37 s,
 * then 0.345-0.366 s from the seventh run (the 19th seed) on, and V8's
 * compiler threads still busy in the early runs. Six seeds left the first
 * row's runs inside that curve, the other rows past it: paired, five times
 * each, the 1-hop row's wall ratio was 0.94-1.09x after six and
 * 0.83-1.00x after twenty, its CPU ratio 1.19-1.50x against 1.03-1.14x;
 * the row timed twice in one run (--hops 1,1) gave the same twice after
 * twenty (CPU 1.14 and 1.18x, 1.10 and 1.14x), and a first row dearer
 * than the second after six (1.27 and 1.13x). Twenty of 100 s (the
 * default) cost about 2.5 s. The process
 * columns keep it (each process starts cold), as ns-2's processes keep their
 * start-up.
 * --rounds (3 by default): each hop count's ns-2 seeds and cogmesh's
 * in-process simulation of them run that many times, in turn, and the wall
 * and CPU columns give the median round: other work on a shared machine moves
 * a single run by up to half, on either side. Goodputs come from the first
 * round; every round of cogmesh must give the same, to the last digit.
 * --pin (on by default, with --jobs 1 on Linux with util-linux's taskset):
 * each round runs on one core, the next round on the next: this process's
 * main thread, which runs cogmesh's simulations and starts ns-2's
 * processes (a child inherits the affinity of the thread that starts it),
 * is bound to it for the round (V8's compiler and collector threads are
 * left free, as they are unpinned; the whole `cogmesh sim` processes run
 * after the rounds, unpinned). Two simulations compared
 * must run on the same core: on a VM one core can run the same process 1.4x
 * slower than another for minutes, and unpinned the two sides land where
 * the scheduler puts them. Without taskset the rounds run unpinned, and the
 * report says so.
 * CPU times are given too, as other work on the machine moves them less than
 * wall times: ns-2's processes' (from this process's children times in
 * /proc/self/stat, to 10 ms; Linux only) against the simulations' in this
 * process (every thread of it, V8's compiler and collector threads included).
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { builtSimulate } from './built.js';
import { progress, progressWanted } from '../src/cli/progress.js';
import { median, spread, type SimResult, type Spread } from '../src/sim/report.js';
import type { ScenarioOverrides } from '../src/config/scenario.js';

const TOLERANCE = 0.25;
/** ns-2's packetSize_: TCP payload bytes per segment, on both sides. */
const SEGMENT_BYTES = 1000;
/** The one channel of the cogmesh side: data and control, every router. */
const CHANNEL = 6;

const { values } = parseArgs({
  options: {
    hops: { type: 'string', default: '1,2,3,4' },
    duration: { type: 'string', default: '100' },
    seeds: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    window: { type: 'string', default: '20' },
    jobs: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '100' },
    'warmup-runs': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    set: { type: 'string', multiple: true, default: [] },
    pin: { type: 'string', default: 'on' },
    json: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
  },
});

function usage(msg: string): never {
  process.stderr.write(`bench/ns2.ts: ${msg}\n`);
  process.exit(2);
}
const intFlag = (name: string, v: string | undefined, min: number, max: number): number => {
  const n = Number(v);
  if (v === undefined || !/^\s*\d+\s*$/.test(v) || n < min || n > max) usage(`--${name}: "${v}" is not an integer from ${min} to ${max}`);
  return n;
};
const hopsList = (values.hops ?? '').split(',').map((h) => intFlag('hops', h, 1, 64));
const durationS = Number(values.duration);
if (!(Number.isFinite(durationS) && durationS > 10)) usage(`--duration: "${values.duration}" is not a number of seconds > 10`);
const seeds = intFlag('seeds', values.seeds, 1, 1000);
// ns-2 takes seed 0 as "seed from the clock".
const warmupRuns = intFlag('warmup-runs', values['warmup-runs'], 1, 1000);
const rounds = intFlag('rounds', values.rounds, 1, 100);
const seed0 = intFlag('seed', values.seed, 1, 2 ** 31 - 1 - Math.max(seeds, warmupRuns));
const window = intFlag('window', values.window, 1, 1_000_000);
const jobs = intFlag('jobs', values.jobs, 1, 256);
const warmupS = intFlag('warmup', values.warmup, 0, 100_000);
const seedList = Array.from({ length: seeds }, (_, k) => seed0 + k);
if (values.pin !== 'on' && values.pin !== 'off') usage(`--pin: "${values.pin}" is not on or off`);

/**
 * Binds this process's main thread (its thread id is the process id; the
 * other threads keep their cores) to `cpu`, or lets it run anywhere again
 * (`undefined`); false where taskset cannot.
 */
function pinMainThread(cpu: number | undefined): boolean {
  const cpus = cpu === undefined ? allowed.join(',') : String(cpu);
  return spawnSync('taskset', ['-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' }).status === 0;
}
/** The cores this process may run on at its start (Linux's Cpus_allowed_list, e.g. "0-3,6"); empty where it cannot tell. */
function allowedCpus(): number[] {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
    return list.split(',').flatMap((part) => {
      const [a, b = a] = part.split('-').map(Number);
      return Number.isInteger(a) && Number.isInteger(b) ? Array.from({ length: b! - a! + 1 }, (_, k) => a! + k) : [];
    });
  } catch {
    return [];
  }
}
const allowed = allowedCpus();
/** Whether the rounds run pinned: asked, one thread of simulation, more than one core, and taskset works here. */
const pinned = values.pin === 'on' && jobs === 1 && allowed.length > 1 && pinMainThread(undefined);
/** The core of round `round` (pinned runs). */
const roundCpu = (round: number): number => allowed[round % allowed.length]!;

const tclPath = fileURLToPath(new URL('peers/ns2-chain.tcl', import.meta.url));
const scenarioPath = fileURLToPath(new URL('../config/scenarios/urbanx-chain.json', import.meta.url));

// ---- ns-2 ------------------------------------------------------------------------

/** One ns-2 run's RESULT line, as numbers, and the wall time of its process. */
interface Ns2Run {
  seed: number;
  goodputMbps: number;
  startS: number;
  stopS: number;
  fields: Record<string, number>;
  wallS: number;
  /** CPU time of the process (user + system); undefined where the children's times cannot be read. */
  cpuS: number | undefined;
}

/** User + system CPU of this process's waited-for children so far, s (Linux: /proc/self/stat, in USER_HZ ticks of 10 ms); undefined elsewhere. */
function childrenCpuS(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, cutime 16, cstime 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[13]) + Number(f[14]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/** User + system CPU of this process so far, every thread, s. */
function selfCpuS(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

class Ns2Error extends Error {}

/** One seed of ns-2 (started by this process's main thread, it runs on the cores that thread may). */
function runNs2(hops: number, seed: number): Promise<Ns2Run> {
  const args = [tclPath, String(hops), String(durationS), String(seed), String(window)];
  const cmd = `ns ${args.join(' ')}`;
  const t0 = performance.now();
  const c0 = childrenCpuS();
  return new Promise((resolve, reject) => {
    execFile('ns', args, { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const wallS = (performance.now() - t0) / 1000;
      const c1 = childrenCpuS();
      const cpuS = c0 === undefined || c1 === undefined ? undefined : c1 - c0;
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Ns2Error("ns-2 is not installed: no `ns` on PATH (Debian's package ns2: apt-get install ns2)"));
        return;
      }
      const tail = `${stderr}${stdout}`.trim().split('\n').slice(-12).join('\n');
      if (err) {
        reject(new Ns2Error(`ns-2 failed (${cmd}): ${err.message.split('\n')[0]}\n${tail}`));
        return;
      }
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) {
        reject(new Ns2Error(`ns-2 printed no RESULT line (${cmd}):\n${tail}`));
        return;
      }
      const fields: Record<string, number> = {};
      for (const kv of line.slice('RESULT '.length).trim().split(/\s+/)) {
        const eq = kv.indexOf('=');
        if (eq > 0) fields[kv.slice(0, eq)] = Number(kv.slice(eq + 1));
      }
      const { goodput_mbps: goodputMbps, start: startS, stop: stopS } = fields;
      if (goodputMbps === undefined || startS === undefined || stopS === undefined || ![goodputMbps, startS, stopS].every(Number.isFinite)) {
        reject(new Ns2Error(`ns-2's RESULT line lacks goodput_mbps, start or stop (${cmd}): ${line}`));
        return;
      }
      resolve({ seed, goodputMbps, startS, stopS, fields, wallS, cpuS });
    });
  });
}

// ---- cogmesh ----------------------------------------------------------------------

/** A TCP flow's goodput (in-order payload to the sink app over its active time) over the seeds. */
const goodputSpread = (r: SimResult): Spread | null => r.summary[0]?.goodputMbps ?? null;

/** The overrides that make urbanx-chain the ns-2 script's chain (see the file comment). */
function chainSets(startS: number): string[] {
  return [
    // The ns-2 script's FTP: 1000-byte segments from its start to the end of
    // the run, a window of `window` packets (the sink's receive buffer), every
    // segment acknowledged, an initial window of 2 (ns-2's defaults).
    `flows.0.tcp.mss=${SEGMENT_BYTES}`,
    // ns-2's window_ caps the segments in flight; cogmesh's sink acknowledges a
    // segment before its application reads it, so its buffer holds one more.
    `flows.0.tcp.receiveBufferBytes=${(window + 1) * SEGMENT_BYTES}`,
    'flows.0.tcp.delayedAckMs=0',
    'flows.0.tcp.initialWindowSegments=2',
    `flows.0.startS=${startS}`,
    'flows.0.stopS=0',
    // An ns-2 node has one radio: AODV's HELLOs and route discovery share
    // the data channel. cogmesh's R3 joins R1 and R2 on the fixed channel,
    // where a router's co-channel radios act as one half-duplex transceiver.
    `node.radios.R3.channel=${CHANNEL}`,
    `node.channel.initialChannel=${CHANNEL}`,
    ...(values.set ?? []),
  ];
}

const simulate = await builtSimulate('bench/ns2.ts');

async function runCogmesh(hops: number, startS: number): Promise<{ result: SimResult; wallS: number; cpuS: number }> {
  const o: ScenarioOverrides = { hops, durationS, seed: seed0, seeds, tcp: 'reno', cognitive: false, pn: false, set: chainSets(startS) };
  const c0 = selfCpuS();
  const { result, wallMs } = await simulate(scenarioPath, o, jobs);
  return { result, wallS: wallMs / 1000, cpuS: selfCpuS() - c0 };
}

const cliPath = fileURLToPath(new URL('../bin/cogmesh.js', import.meta.url));

/**
 * The same run as a whole `cogmesh sim` process per seed, as ns-2 runs
 * (start-up included): its wall time, and its goodput, which must be the
 * in-process run's to the last digit (the runs are deterministic).
 */
function runCogmeshProcess(hops: number, startS: number, seed: number): Promise<{ wallS: number; goodputMbps: number }> {
  const args = [cliPath, 'sim', scenarioPath, '--json', '--hops', String(hops), '--duration', String(durationS), '--seed', String(seed), '--seeds', '1'];
  args.push('--jobs', '1', '--tcp', 'reno', '--cognitive', 'off', '--pn', 'off', ...chainSets(startS).flatMap((v) => ['--set', v]));
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const wallS = (performance.now() - t0) / 1000;
      if (err) {
        reject(new Error(`cogmesh sim failed (is it built? npm run build): ${stderr.trim().split('\n').slice(-3).join(' / ') || err.message}`));
        return;
      }
      const goodput = (JSON.parse(stdout) as SimResult).runs[0]?.flows[0];
      const g = goodput && 'goodputMbps' in goodput ? Number(goodput.goodputMbps) : NaN;
      resolve({ wallS, goodputMbps: g });
    });
  });
}

// ---- The comparison -----------------------------------------------------------------

interface Row {
  hops: number;
  /** wallS and cpuS: medians over the rounds of the seeds' sums; runs: the first round's. */
  ns2: { goodputMbps: Spread; wallS: number; wallRoundsS: number[]; cpuS: number | undefined; runs: Ns2Run[] };
  /** wallS and cpuS: the simulations in this process, medians over the rounds; processWallS: whole `cogmesh sim` processes, one per seed. */
  cogmesh: { goodputMbps: Spread | null; wallS: number; wallRoundsS: number[]; cpuS: number; processWallS: number; result: SimResult } | { error: string };
  /** cogmesh / ns-2 mean goodput. */
  ratio: number | null;
  within: boolean;
}

if (warmupS > 0) {
  // Untimed: the flow starts at 1 s, so that even a short warm-up carries TCP.
  const o: ScenarioOverrides = {
    hops: hopsList[0]!,
    durationS: warmupS,
    seed: seed0,
    seeds: warmupRuns,
    tcp: 'reno',
    cognitive: false,
    pn: false,
    set: chainSets(1),
  };
  await simulate(scenarioPath, o, jobs);
}

const rows: Row[] = [];
/** Each seed's goodput in a result, to tell that two rounds gave the same. */
const goodputsOf = (r: SimResult): string =>
  JSON.stringify(r.runs.map((run) => (run.flows[0] && 'goodputMbps' in run.flows[0] ? run.flows[0].goodputMbps : null)));
// Per hop count, each seed runs in ns-2 and in this process once a round, and once as a `cogmesh sim` process. On stderr; COGMESH_PROGRESS=0 turns it off.
const shown = progress({ total: hopsList.length * seeds * (2 * rounds + 1), label: 'bench ns2', unit: 'runs', enabled: progressWanted() });
for (const hops of hopsList) {
  // Rounds of ns-2's seeds and cogmesh's, in turn, so that other work on the machine falls on both sides alike; each time is the median over the rounds.
  const ns2Rounds: Ns2Run[][] = [];
  const cogmeshRounds: Array<{ result: SimResult; wallS: number; cpuS: number }> = [];
  let failed: string | undefined;
  for (let round = 0; round < rounds; round++) {
    const cpu = pinned ? roundCpu(round) : undefined;
    if (cpu !== undefined && !pinMainThread(cpu)) {
      process.stderr.write(`bench/ns2.ts: taskset could not bind this process to core ${cpu}\n`);
      process.exit(1);
    }
    const ns2Runs: Ns2Run[] = [];
    try {
      for (const s of seedList) {
        ns2Runs.push(await runNs2(hops, s));
        shown.tick();
      }
    } catch (e) {
      process.stderr.write(`bench/ns2.ts: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    }
    ns2Rounds.push(ns2Runs);
    if (failed !== undefined) continue;
    try {
      const r = await runCogmesh(hops, ns2Rounds[0]![0]!.startS);
      const first = cogmeshRounds[0];
      if (first && goodputsOf(r.result) !== goodputsOf(first.result)) {
        throw new Error(`round ${round + 1} gave goodputs ${goodputsOf(r.result)}, round 1 ${goodputsOf(first.result)}: the runs are not deterministic`);
      }
      cogmeshRounds.push(r);
      shown.tick(seeds);
    } catch (e) {
      failed = e instanceof Error ? e.message : String(e);
    }
  }
  if (pinned) pinMainThread(undefined);
  const ns2Runs = ns2Rounds[0]!;
  const ns2Goodput = spread(ns2Runs.map((r) => r.goodputMbps))!;
  const ns2WallRounds = ns2Rounds.map((runs) => runs.reduce((a, r) => a + r.wallS, 0));
  const ns2CpuRounds = ns2Rounds.every((runs) => runs.every((r) => r.cpuS !== undefined))
    ? ns2Rounds.map((runs) => runs.reduce((a, r) => a + r.cpuS!, 0))
    : undefined;
  const ns2Wall = median(ns2WallRounds);
  const ns2Cpu = ns2CpuRounds && median(ns2CpuRounds);
  const startS = ns2Runs[0]!.startS;

  let cogmesh: Row['cogmesh'];
  try {
    if (failed !== undefined) throw new Error(failed);
    const result = cogmeshRounds[0]!.result;
    const wallRoundsS = cogmeshRounds.map((r) => r.wallS);
    const cpuS = median(cogmeshRounds.map((r) => r.cpuS));
    let processWallS = 0;
    for (const [k, s] of seedList.entries()) {
      const p = await runCogmeshProcess(hops, startS, s);
      shown.tick();
      const inProcess = result.runs[k]?.flows[0];
      const g = inProcess && 'goodputMbps' in inProcess ? Number(inProcess.goodputMbps) : NaN;
      if (p.goodputMbps !== g)
        throw new Error(`seed ${s}: the cogmesh process gave ${p.goodputMbps} Mbps, the in-process run ${g} (is dist/ older than the sources? npm run build)`);
      processWallS += p.wallS;
    }
    cogmesh = { goodputMbps: goodputSpread(result), wallS: median(wallRoundsS), wallRoundsS, cpuS, processWallS, result };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    process.stderr.write(`bench/ns2.ts: the cogmesh side failed at ${hops} hop(s): ${msg}\n`);
    cogmesh = { error: msg };
  }
  // A failed cogmesh side skips its remaining runs.
  shown.update((rows.length + 1) * seeds * (2 * rounds + 1));
  const cg = 'error' in cogmesh ? null : cogmesh.goodputMbps;
  const ratio = cg && ns2Goodput.mean > 0 ? cg.mean / ns2Goodput.mean : null;
  rows.push({
    hops,
    ns2: { goodputMbps: ns2Goodput, wallS: ns2Wall, wallRoundsS: ns2WallRounds, cpuS: ns2Cpu, runs: ns2Runs },
    cogmesh,
    ratio,
    within: ratio !== null && Math.abs(ratio - 1) <= TOLERANCE,
  });
}

shown.stop();

if (values.json) {
  const out = rows.map((r) => ({
    hops: r.hops,
    ratio: r.ratio,
    within: r.within,
    ns2: {
      goodputMbps: r.ns2.goodputMbps,
      wallS: r.ns2.wallS,
      wallRoundsS: r.ns2.wallRoundsS,
      cpuS: r.ns2.cpuS ?? null,
      runs: r.ns2.runs.map(({ seed, goodputMbps, wallS, cpuS, fields }) => ({ seed, goodputMbps, wallS, cpuS: cpuS ?? null, ...fields })),
    },
    cogmesh:
      'error' in r.cogmesh
        ? { error: r.cogmesh.error }
        : {
            goodputMbps: r.cogmesh.goodputMbps,
            wallS: r.cogmesh.wallS,
            wallRoundsS: r.cogmesh.wallRoundsS,
            cpuS: r.cogmesh.cpuS,
            processWallS: r.cogmesh.processWallS,
            summary: r.cogmesh.result.summary[0],
          },
  }));
  process.stdout.write(
    `${JSON.stringify({ durationS, seeds: seedList, window, warmupS, warmupRuns, rounds, pinned, tolerance: TOLERANCE, rows: out }, null, 2)}\n`,
  );
} else {
  const cell = (s: Spread | null | undefined, digits = 3): string => (s ? `${s.mean.toFixed(digits)} ± ${s.ci95.toFixed(digits)}` : 'n/a');
  const secs = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toFixed(2));
  const times = (a: number | undefined, b: number | undefined): string => (a === undefined || b === undefined || !(b > 0) ? 'n/a' : `${(a / b).toFixed(2)}x`);
  const lines = [
    '| hops | ns-2 goodput (Mbps) | cogmesh goodput (Mbps) | cogmesh/ns-2 | within 25%? | ns-2 wall (s) | cogmesh wall (s) | cogmesh/ns-2 wall | ns-2 CPU (s) | cogmesh CPU (s) | cogmesh/ns-2 CPU | cogmesh process wall (s) | process/ns-2 wall |',
    '| ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => {
      const c = 'error' in r.cogmesh ? undefined : r.cogmesh;
      const ratio = r.ratio === null ? 'n/a' : r.ratio.toFixed(3);
      const walls = `${secs(r.ns2.wallS)} | ${secs(c?.wallS)} | ${times(c?.wallS, r.ns2.wallS)}`;
      const cpus = `${secs(r.ns2.cpuS)} | ${secs(c?.cpuS)} | ${times(c?.cpuS, r.ns2.cpuS)}`;
      return `| ${r.hops} | ${cell(r.ns2.goodputMbps)} | ${cell(c?.goodputMbps)} | ${ratio} | ${r.within ? 'yes' : 'no'} | ${walls} | ${cpus} | ${secs(c?.processWallS)} | ${times(c?.processWallS, r.ns2.wallS)} |`;
    }),
  ];
  const startS = rows[0]?.ns2.runs[0]?.startS ?? 1;
  process.stdout.write(
    `${lines.join('\n')}\n\n` +
      `TCP Reno, window ${window} packets, 1000-byte segments, FTP from ${startS} s to ${durationS} s; seeds ${seedList.join(', ')}; ` +
      `goodput = payload delivered in order to the sink over the FTP's active time. ` +
      `Wall and CPU times: the seeds' sum, the median over ${rounds} round(s) of ns-2's seeds and cogmesh's in turn (process wall: one round), ` +
      `${pinned ? `each round's ns-2 processes and this process's main thread on one core, the cores in turn` : 'unpinned (--pin off, --jobs above 1, or no taskset)'}. ` +
      `Wall times: ns-2 processes one after another; cogmesh's simulations in this process on ${jobs} worker thread(s) ` +
      `(cogmesh wall; ${warmupS > 0 ? `after ${warmupRuns} untimed warm-up simulation(s) of ${warmupS} s` : 'no warm-up'}), and whole \`cogmesh sim\` processes one after another, start-up included (process wall). ` +
      `CPU times: ns-2's processes, and every thread of this process during its simulations.\n`,
  );
}

const outside = rows.filter((r) => !r.within);
if (outside.length > 0) {
  const which = outside.map((r) => `${r.hops} hop(s) (${r.ratio === null ? 'no cogmesh result' : `ratio ${r.ratio.toFixed(3)}`})`).join(', ');
  process.stderr.write(`bench/ns2.ts: cogmesh's goodput is not within ${TOLERANCE * 100}% of ns-2's at ${which}\n`);
  if (values.check) process.exitCode = 1;
}
