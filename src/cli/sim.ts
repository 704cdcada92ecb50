import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { CC_NAMES, type CcName } from '../tcp/cc/types.js';
import { chooseBackend } from '../sensing/backend.js';
import { cpuBackend, type EnergyBackend } from '../sensing/energy.js';
import { flowsCsv, nodesCsv, summarize, textReport, type RunResult, type SimResult } from '../sim/report.js';
import { defaultJobs, runSeeds } from '../sim/parallel.js';
import { runScenario, sumsIq } from '../sim/run.js';
import { RunTrace, traceJsonLines } from '../sim/trace.js';
import { seconds, US_PER_MS, type Micros } from '../core/time.js';
import { loadScenario, type ScenarioOverrides } from '../config/scenario.js';
import { checkOutputFile, ensureOutputDir } from './output-path.js';
import { LISTED } from './listed.js';
import { progress, progressWanted, type Progress } from './progress.js';

export interface SimOptions {
  seed?: string;
  seeds?: string;
  duration?: string;
  hops?: string;
  set: string[];
  json?: boolean;
  out?: string;
  jobs?: string;
  tcp?: string;
  cognitive?: string;
  pn?: string;
  acc?: string;
  accMode?: string;
  controller?: boolean;
  sensingModel?: string;
  trace?: string;
  traceIntervalMs?: string;
  force?: boolean;
  pcap?: string;
  /** false with --no-progress. */
  progress: boolean;
}

const onOff = (flag: string, v: string | undefined): boolean | undefined => {
  if (v === undefined) return undefined;
  if (v === 'on') return true;
  if (v === 'off') return false;
  throw new UsageError(`${flag}: "${v}" is not on or off`);
};

const accMode = (v: string | undefined): 'split' | 'e2e' | 'as' | undefined => {
  if (v === undefined) return undefined;
  if (v === 'split' || v === 'e2e' || v === 'as') return v;
  throw new UsageError(`--acc-mode: "${v}" is not split, e2e or as`);
};

const sensingModel = (v: string | undefined): 'iq' | 'statistical' | undefined => {
  if (v === undefined) return undefined;
  if (v === 'iq' || v === 'statistical') return v;
  throw new UsageError(`--sensing-model: "${v}" is not iq or statistical`);
};

const variant = (v: string | undefined): CcName | undefined => {
  if (v === undefined) return undefined;
  if ((CC_NAMES as readonly string[]).includes(v)) return v as CcName;
  throw new UsageError(`--tcp: "${v}" is not one of ${CC_NAMES.join(', ')}`);
};

const int = (flag: string, v: string | undefined, min: number, max: number): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || n < min || n > max) throw new UsageError(`${flag}: "${v}" is not an integer from ${min} to ${max}`);
  return n;
};

/** The files `--out` writes into its folder (each replaced when it is there already). */
const OUT_FILES = ['result.json', 'flows.csv', 'nodes.csv'] as const;

/** The default sampling interval of `--trace` (a multiple of the run's 10 ms sampling period). */
export const DEFAULT_TRACE_INTERVAL_MS = 100;

/** The pcapng bytes of each router of a captured run (`--pcap`), by router index. */
export type Captures = Map<number, Uint8Array[]>;

/**
 * Runs a scenario file over one or more seeds and returns the result (also
 * used by tests and reproductions). With `trace` or `captures`, the first
 * seed runs in this thread and reports to them; the result is the same as
 * without. With `progressOf`, the runs report how far they are, in seeds, to
 * the display it makes for the run's number of seeds (and stops after it).
 */
export async function simulate(
  path: string,
  o: ScenarioOverrides,
  jobs?: number,
  trace?: RunTrace,
  captures?: Captures,
  progressOf?: (seeds: number) => Progress,
): Promise<{ result: SimResult; wallMs: number }> {
  const sc = await loadScenario(path, o);
  const seeds = Array.from({ length: sc.seeds }, (_, k) => sc.seed + k);
  const n = jobs ?? defaultJobs(seeds.length);
  // Every backend gives the same counts; the fastest one only saves wall time, and only where a detector sums IQ:
  // without (--cognitive off, or the statistical model) the probe would cost more than it saves.
  const probe = async (): Promise<EnergyBackend> => (sumsIq(sc) ? (await chooseBackend('auto')).backend : cpuBackend);
  const backend = n <= 1 ? await probe() : undefined;
  const t0 = performance.now();
  const capture = captures
    ? {
        sink: (i: number) => {
          const chunks: Uint8Array[] = [];
          captures.set(i, chunks);
          return (b: Uint8Array) => void chunks.push(b);
        },
      }
    : undefined;
  const shown = progressOf?.(seeds.length);
  const runs: RunResult[] = [];
  try {
    if (trace || capture) {
      const first = shown ? { progress: (us: Micros) => shown.update(us / seconds(sc.durationS)) } : {};
      runs.push(runScenario(sc, seeds[0]!, { backend: backend ?? (await probe()), ...(trace ? { trace } : {}), ...(capture ? { capture } : {}), ...first }));
    }
    const offset = runs.length;
    runs.push(...(await runSeeds(sc, seeds.slice(offset), n, backend, shown ? (done) => shown.update(offset + done) : undefined)));
  } finally {
    shown?.stop();
  }
  return { result: summarize(sc.name, sc.durationS, runs), wallMs: performance.now() - t0 };
}

export function simCommand(): Command {
  return new Command('sim')
    .description(LISTED.sim.about)
    .argument('<scenario>', 'scenario file (JSON, see config/scenario.schema.json)')
    .option('--seed <n>', "seed of the first run (default: the scenario's)")
    .option('--seeds <k>', 'runs with consecutive seeds; the report gives mean and spread')
    .option('--duration <s>', 'simulated seconds per run')
    .option('--hops <n>', 'chain length in hops (chain scenarios)')
    .option(
      '--set <path=value>',
      'override any scenario field, e.g. medium.rtsCts=true or node.switching.intervalMs=40 (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--json', 'print the whole result as JSON')
    .option('--out <dir>', 'also write result.json, flows.csv and nodes.csv into this directory')
    .option('--jobs <n>', 'worker threads for several seeds (default: one per core); results do not depend on it')
    .option('--tcp <variant>', `every flow becomes a bulk TCP flow with this congestion control: ${CC_NAMES.join(', ')}`)
    .option('--cognitive <on|off>', 'off: no sensing, every R1 on one fixed channel (channel.initialChannel, else 6); PNs stay')
    .option('--pn <on|off>', 'off: no primary-node traffic at all')
    .option('--acc <placement>', "TCP-ACC on the TCP flows' paths: none, every, every-K (every K-th router), or a list of routers (1,3)")
    .option('--controller', 'the CETT controller places every flow on its minimum-CETT path over OpenFlow, and the TCP-ACCs of --acc on its relays')
    .option(
      '--acc-mode <mode>',
      'TCP-ACC mode: split (acknowledge on receipt), e2e (acknowledge what downstream acknowledged) or as (data on receipt, the FIN once the far end acknowledged it)',
    )
    .option(
      '--sensing-model <model>',
      'how the energy detectors see the band: statistical (window energies drawn from their exact distribution; the default) or iq (synthesised samples, as on a real node: slower, and the results of versions before the statistical model, number for number)',
    )
    .option('--trace <file>', "write a per-leg TCP trace of the first seed's run into this file (JSON Lines, see docs/simulator.md)")
    .option('--trace-interval-ms <ms>', `sampling interval of --trace, a multiple of 10 ms (default ${DEFAULT_TRACE_INTERVAL_MS})`)
    .option('--force', 'overwrite an existing --trace file')
    .option('--pcap <dir>', "write the first seed's radio traffic into this directory, one pcapng file per router (rN.pcapng, see docs/pcap.md)")
    .option(
      '--no-progress',
      'no progress display on stderr (a bar on a terminal; elsewhere a line every 10 s of a longer run); COGMESH_PROGRESS=0 does the same',
    )
    .action(async (path: string, opts: SimOptions) => {
      const duration = opts.duration === undefined ? undefined : Number(opts.duration);
      if (duration !== undefined && !(duration > 0 && Number.isFinite(duration)))
        throw new UsageError(`--duration: "${opts.duration}" is not a number of seconds > 0`);
      const o: ScenarioOverrides = {
        set: opts.set,
        seed: int('--seed', opts.seed, 0, 2 ** 32 - 1),
        seeds: int('--seeds', opts.seeds, 1, 1000),
        hops: int('--hops', opts.hops, 1, 999),
        durationS: duration,
        tcp: variant(opts.tcp),
        cognitive: onOff('--cognitive', opts.cognitive),
        pn: onOff('--pn', opts.pn),
        acc: opts.acc,
        accMode: accMode(opts.accMode),
        sensingModel: sensingModel(opts.sensingModel),
        ...(opts.controller ? { controller: true } : {}),
      };
      const intervalMs = int('--trace-interval-ms', opts.traceIntervalMs, 10, 3_600_000) ?? DEFAULT_TRACE_INTERVAL_MS;
      if (intervalMs % 10 !== 0) throw new UsageError(`--trace-interval-ms: "${opts.traceIntervalMs}" is not a multiple of 10`);
      if (opts.traceIntervalMs !== undefined && !opts.trace) throw new UsageError('--trace-interval-ms: needs --trace');
      const trace = opts.trace ? new RunTrace(intervalMs * US_PER_MS) : undefined;
      // Where the results go is checked before the run, so a path that cannot be written costs no simulation.
      if (opts.trace) await checkOutputFile('--trace', opts.trace, { force: opts.force });
      if (opts.out) {
        await ensureOutputDir('--out', opts.out);
        for (const name of OUT_FILES) await checkOutputFile('--out', join(opts.out, name), { force: true });
      }
      if (opts.pcap) await ensureOutputDir('--pcap', opts.pcap);
      const captures: Captures | undefined = opts.pcap ? new Map() : undefined;
      // A single seed off a terminal shows nothing: its stderr stays the one closing line, however slow the machine.
      const shown = (seeds: number): boolean => opts.progress && progressWanted() && (seeds > 1 || process.stderr.isTTY === true);
      const progressOf = (seeds: number): Progress => progress({ total: seeds, label: 'sim', unit: seeds === 1 ? 'seed' : 'seeds', enabled: shown(seeds) });
      const { result, wallMs } = await simulate(path, o, int('--jobs', opts.jobs, 1, 256), trace, captures, progressOf);
      if (opts.pcap && captures) {
        for (const [i, chunks] of captures) await writeFile(join(opts.pcap, `r${i}.pcapng`), chunks);
      }
      if (opts.trace && trace) await writeFile(opts.trace, traceJsonLines(trace.result()));
      const json = `${JSON.stringify(result, null, 2)}\n`;
      if (opts.out) {
        await writeFile(join(opts.out, 'result.json'), json);
        await writeFile(join(opts.out, 'flows.csv'), flowsCsv(result));
        await writeFile(join(opts.out, 'nodes.csv'), nodesCsv(result));
      }
      if (opts.json) process.stdout.write(json);
      else process.stdout.write(textReport(result, wallMs));
      // Wall time goes to stderr with --json, so the JSON stays byte-identical for a seed.
      if (opts.json) process.stderr.write(`simulated ${result.runs.length} x ${result.durationS} s in ${(wallMs / 1000).toFixed(2)} s wall\n`);
    });
}
