import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { parsePlanText, planGateway, type GatewayPlan } from '../gateway/plan.js';
import { parseRateTrace, replayRateTrace } from '../gateway/trace.js';
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
  return cmd;
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
