import { createSocket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { RangeArgumentError, UsageError } from '../core/errors.js';
import { parseIwScan } from '../gateway/iw-scan.js';
import { parseScanKey } from '../gateway/scan-reports.js';
import { parsePlanText, planGateway, type GatewayPlan } from '../gateway/plan.js';
import { parseRateTrace, replayRateTrace } from '../gateway/trace.js';
import { parseIpAddress } from '../wire/ip.js';
import { encodeScanReport } from '../wire/scan-report.js';
import { LISTED } from './listed.js';

interface PlanOpts {
  graph: string;
  json?: boolean;
  tolerance: string;
  frameMs: string;
  maxSets: string;
}

/** `cogmesh gateway`: ADWISER v2's planning at a gateway (docs/gateway.md). */
export function gatewayCommand(): Command {
  const cmd = new Command('gateway').description(LISTED.gateway.about);
  cmd
    .command('plan')
    .description(
      "the dependence graph of the gateway's clients (same AP, Type II from the file, Type III inferred from their scan reports) and the time slices that maximise the sum of log shares over its independent sets",
    )
    .requiredOption('--graph <file>', 'the plan (JSON): clients and their APs, interfering APs or AP positions, scan reports (docs/gateway.md)')
    .option('--json', 'print the plan as one JSON object')
    .option('--tolerance <nats>', 'stop when the certified optimality gap is at most this (1e-8: shares to about 1e-4 or better)', '1e-8')
    .option('--frame-ms <ms>', "show each set's slice in a frame of this length", '1000')
    .option('--max-sets <n>', 'refuse a graph with more maximal independent sets than this', '4096')
    .action(async (o: PlanOpts) => {
      const tolerance = Number(o.tolerance);
      if (!(Number.isFinite(tolerance) && tolerance > 0)) throw new UsageError(`--tolerance: "${o.tolerance}" is not a number > 0`);
      const frameMs = Number(o.frameMs);
      if (!(Number.isFinite(frameMs) && frameMs > 0)) throw new UsageError(`--frame-ms: "${o.frameMs}" is not a number of ms > 0`);
      if (!/^[0-9]+$/.test(o.maxSets) || Number(o.maxSets) < 1) throw new UsageError(`--max-sets: "${o.maxSets}" is not an integer >= 1`);
      const text = await readFile(o.graph, 'utf8').catch((e: NodeJS.ErrnoException) =>
        Promise.reject(new UsageError(`--graph: cannot read ${o.graph} (${e.code ?? e.message})`)),
      );
      const plan = planGateway(parsePlanText(text, o.graph), { tolerance, maxSets: Number(o.maxSets) });
      process.stdout.write(o.json ? `${JSON.stringify(planJson(plan, frameMs), null, 2)}\n` : planText(plan, frameMs));
    });
  cmd
    .command('rate')
    .description(
      "ADWISER v2's rate adaptation (Algorithm 2) over a recorded queue: each t_interval, the average queue, the service rate v_j and why (decrease, increase, hold)",
    )
    .requiredOption('--trace <file>', 'the trace (JSON): samples [seconds, queue bytes after service], optional params and untilS (docs/gateway.md)')
    .option('--json', 'print the runs as one JSON object')
    .action(async (o: { trace: string; json?: boolean }) => {
      const { params, decisions } = replayRateTrace(parseRateTrace(await readText('--trace', o.trace), o.trace));
      if (o.json) {
        process.stdout.write(
          `${JSON.stringify({ params: { ...params, maxRateMbps: Number.isFinite(params.maxRateMbps) ? params.maxRateMbps : null }, runs: decisions }, null, 2)}\n`,
        );
        return;
      }
      const lines = [
        `t_interval ${params.intervalUs / 1e6} s, q_lb ${params.queueLowBytes} B, eps ${params.epsMbps} Mbps/KB, lambda ${params.lambda}, beta ${params.beta}, v0 ${params.initialRateMbps} Mbps, v in [${params.minRateMbps}, ${params.maxRateMbps}] Mbps`,
        '    t s     q B    avg q B   v Mbps  reason',
        ...decisions.map(
          (d) =>
            `${(d.atUs / 1e6).toFixed(1).padStart(7)} ${String(d.queueBytes).padStart(7)} ${d.avgQueueBytes.toFixed(0).padStart(10)} ${d.rateMbps.toFixed(3).padStart(8)}  ${d.reason}${d.clamped ? ' (clamped)' : ''}`,
        ),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
  cmd
    .command('scan-report')
    .description(
      "a client's scan report to its gateway over UDP: the beacon strength of each AP it hears, from which the gateway infers Type III dependence (docs/gateway.md)",
    )
    .requiredOption('--to <host:port>', 'the gateway: its address and scan-report port ([v6 address]:port for IPv6)')
    .requiredOption('--client <id>', "this client's name, as the gateway's configuration lists it")
    .option('--ap <name=dBm>', 'an AP heard and its beacon strength (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--iw <file>', 'the APs and their signals from the output of `iw dev IFACE scan` (by BSSID), read again before each report; - for stdin')
    .option('--every <s>', 'send a report every so many seconds, until --count reports or a signal')
    .option('--count <n>', 'reports to send (with --every; 0: until stopped)', '0')
    .option('--key-file <file>', 'seal each report with the key in this file (hex) that the gateway shares with its clients')
    .action(async (o: ScanReportOpts) => {
      await sendScanReports(o);
    });
  return cmd;
}

interface ScanReportOpts {
  to: string;
  client: string;
  ap: string[];
  iw?: string;
  every?: string;
  count: string;
  keyFile?: string;
}

/** `host:port` or `[v6]:port`, checked. */
function parseTarget(text: string): { host: string; port: number; family: 4 | 6 } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  const port = Number(m?.[2]);
  if (!m || !(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new UsageError(`--to: "${text}" is not HOST:PORT ([ADDRESS]:PORT for IPv6) with a port of 1-65535`);
  const bytes = parseIpAddress(m[1]!);
  if (bytes === undefined) throw new UsageError(`--to: "${m[1]}" is not an IPv4 or IPv6 address`);
  return { host: m[1]!, port, family: bytes.length === 4 ? 4 : 6 };
}

/** `name=dBm`, checked. */
function parseApOption(text: string): [string, number] {
  const eq = text.lastIndexOf('=');
  const dbm = Number(text.slice(eq + 1));
  if (eq <= 0 || text.slice(eq + 1).trim() === '' || !Number.isFinite(dbm)) throw new UsageError(`--ap: "${text}" is not NAME=DBM (e.g. r1=-62.5)`);
  return [text.slice(0, eq), dbm];
}

async function sendScanReports(o: ScanReportOpts): Promise<void> {
  const target = parseTarget(o.to);
  if (o.ap.length === 0 && o.iw === undefined) throw new UsageError('give the APs heard: --ap NAME=DBM (repeatable) or --iw FILE');
  const fixed = new Map(o.ap.map(parseApOption));
  if (fixed.size !== o.ap.length) throw new UsageError('--ap: an AP is given twice');
  const everyS = o.every === undefined ? undefined : Number(o.every);
  if (everyS !== undefined && !(Number.isFinite(everyS) && everyS > 0)) throw new UsageError(`--every: "${o.every}" is not a number of seconds > 0`);
  if (!/^[0-9]+$/.test(o.count)) throw new UsageError(`--count: "${o.count}" is not an integer >= 0`);
  const count = everyS === undefined ? 1 : Number(o.count);
  const key = o.keyFile === undefined ? undefined : parseScanKey(await readText('--key-file', o.keyFile), `--key-file ${o.keyFile}`);
  const boot = Math.floor(Date.now() / 1000);
  const socket = createSocket(target.family === 4 ? 'udp4' : 'udp6');
  let stop = false;
  const onSignal = (): void => {
    stop = true;
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    for (let seq = 1; !stop && (count === 0 || seq <= count); seq++) {
      const aps = new Map(fixed);
      if (o.iw !== undefined)
        for (const [ap, dbm] of parseIwScan(o.iw === '-' ? await readStdin() : await readText('--iw', o.iw), o.iw)) if (!aps.has(ap)) aps.set(ap, dbm);
      let bytes: Uint8Array;
      try {
        bytes = encodeScanReport({ client: o.client, boot, seq, aps }, key);
      } catch (e) {
        throw e instanceof RangeArgumentError ? new UsageError(e.message) : e;
      }
      await new Promise<void>((resolve, reject) => socket.send(bytes, target.port, target.host, (e) => (e ? reject(e) : resolve())));
      process.stdout.write(
        `report ${seq} to ${o.to}: ${o.client}, ${aps.size} APs (${[...aps].map(([ap, dbm]) => `${ap} ${dbm} dBm`).join(', ')})${key ? ', sealed' : ''}\n`,
      );
      if (everyS === undefined || (count !== 0 && seq >= count)) break;
      await new Promise((r) => setTimeout(r, everyS * 1000));
    }
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    socket.close();
  }
}

async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const c of process.stdin) text += c as string;
  return text;
}

/** A file the command line names, or a usage error naming the option and the cause. */
async function readText(option: string, path: string): Promise<string> {
  return readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => Promise.reject(new UsageError(`${option}: cannot read ${path} (${e.code ?? e.message})`)));
}

/** The plan as `--json` prints it. */
export function planJson(plan: GatewayPlan, frameMs: number): unknown {
  const { graph, schedule, input } = plan;
  const name = (j: number): string => graph.clients[j]!;
  return {
    clients: input.clients.map((c, j) => ({
      id: c.id,
      ap: c.ap,
      weight: c.weight,
      share: schedule.clientShares[j],
      ...(c.rateMbps !== undefined ? { rateMbps: c.rateMbps, throughputMbps: c.rateMbps * schedule.clientShares[j]! } : {}),
    })),
    edges: graph.edges.map((e) => ({ a: name(e.a), b: name(e.b), kind: e.kind })),
    sets: schedule.sets.map((s, i) => ({ clients: s.map(name), share: schedule.setShares[i], sliceMs: schedule.setShares[i]! * frameMs })),
    utility: schedule.utility,
    ...(plan.rateUtility !== undefined ? { rateUtility: plan.rateUtility } : {}),
    gap: schedule.gap,
    iterations: schedule.iterations,
    converged: schedule.converged,
  };
}

/** Shares below this are shown as a set left out of the schedule. */
const SHOWN_SHARE = 1e-4;

/** The plan for people. */
export function planText(plan: GatewayPlan, frameMs: number): string {
  const { graph, schedule, input } = plan;
  const name = (j: number): string => graph.clients[j]!;
  const lines: string[] = [];
  const kinds = ['same-ap', 'type-ii', 'type-iii'].map((k) => `${k} ${graph.edges.filter((e) => e.kind === k).length}`).join(', ');
  lines.push(`dependence graph: ${graph.clients.length} clients, ${graph.edges.length} dependent pairs (${kinds})`);
  for (const e of graph.edges) lines.push(`  ${name(e.a)} -- ${name(e.b)}  ${e.kind}`);
  const shown = schedule.sets.map((s, i) => ({ s, share: schedule.setShares[i]! })).filter((x) => x.share >= SHOWN_SHARE);
  lines.push(`independent sets: ${schedule.sets.length} maximal, ${shown.length} in the schedule (share, slice of a ${frameMs} ms frame)`);
  for (const { s, share } of shown) lines.push(`  {${s.map(name).join(', ')}}  ${share.toFixed(4)}  ${(share * frameMs).toFixed(1)} ms`);
  lines.push('clients (share of time):');
  input.clients.forEach((c, j) => {
    const x = schedule.clientShares[j]!;
    const rate = c.rateMbps === undefined ? '' : `  ${c.rateMbps} Mbps -> ${(c.rateMbps * x).toFixed(2)} Mbps`;
    lines.push(`  ${c.id}  ap ${c.ap}  ${x.toFixed(4)}${c.weight === 1 ? '' : `  weight ${c.weight}`}${rate}`);
  });
  lines.push(
    `aggregate utility sum w log x = ${schedule.utility.toFixed(6)}${plan.rateUtility === undefined ? '' : `, sum w log(rate x) = ${plan.rateUtility.toFixed(6)}`}`,
  );
  lines.push(
    `optimality gap <= ${schedule.gap.toExponential(2)} (certified) after ${schedule.iterations} iterations${schedule.converged ? '' : ' (NOT converged to the tolerance)'}`,
  );
  return `${lines.join('\n')}\n`;
}
