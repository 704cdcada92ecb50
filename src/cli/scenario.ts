import { Command } from 'commander';
import { flowDst, loadScenario, nodeCount, scenarioVersion, type FlowSpec, type Scenario, type Topology } from '../config/scenario.js';
import { LISTED } from './listed.js';

export function scenarioCommand(): Command {
  const cmd = new Command('scenario').description(LISTED.scenario.about);
  cmd
    .command('check')
    .description('validate a scenario file with the loader `sim` uses; prints its version hash and a summary, or every problem found')
    .argument('<file>', 'scenario file (JSON, see config/scenario.schema.json)')
    .option(
      '--set <path=value>',
      'override one scenario field before the check, as `sim --set` does (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .action(async (file: string, o: { set: string[] }) => {
      const sc = await loadScenario(file, { set: o.set });
      process.stdout.write(`${file}: valid, version ${scenarioVersion(sc)}\n${scenarioSummary(sc)}\n`);
    });
  return cmd;
}

/** One paragraph on what a scenario runs: routers and topology, hosts, flows, duration, seeds, R3 authentication. */
export function scenarioSummary(sc: Scenario): string {
  const n = nodeCount(sc.topology);
  const hosts = sc.hosts.length > 0 ? ` and ${sc.hosts.length} wired host(s) (${sc.hosts.map((h) => `${h.name} behind r${h.router}`).join(', ')})` : '';
  const flows = sc.flows.length === 0 ? 'no flows' : `${sc.flows.length} flow(s): ${sc.flows.map((f) => flowText(f, n)).join('; ')}`;
  const seeds = sc.seeds === 1 ? `seed ${sc.seed}` : `seeds ${sc.seed}-${sc.seed + sc.seeds - 1}`;
  const extras = [
    ...(sc.controller.enabled ? ['the CETT controller places the flows'] : []),
    ...(sc.acc.placement !== 'none'
      ? [`TCP-ACC ${sc.acc.placement === 'nodes' ? `on routers ${sc.acc.nodes.join(', ')}` : sc.acc.placement} (${sc.acc.mode})`]
      : []),
  ];
  return (
    `scenario ${sc.name}: ${n} routers, ${topologyText(sc.topology)}${hosts}; ${flows}; ${sc.durationS} s a run, ${seeds}; ` +
    `R3 authentication ${sc.auth.enabled ? 'on' : 'off'}${extras.map((e) => `; ${e}`).join('')}.`
  );
}

function topologyText(t: Topology): string {
  switch (t.kind) {
    case 'chain':
      return `a chain ${t.spacingM} m apart`;
    case 'dumbbell':
      return `a dumbbell ${t.spacingM} m apart`;
    case 'grid':
      return `a ${t.rows} x ${t.cols} grid ${t.spacingM} m apart`;
    case 'random':
      return `placed at random in ${t.widthM} x ${t.heightM} m`;
    case 'positions':
      return 'at given positions';
  }
}

function flowText(f: FlowSpec, routers: number): string {
  const what = f.kind === 'udp-cbr' ? `udp-cbr ${f.rateMbps} Mbps` : `tcp-bulk ${f.variant}${f.bytes > 0 ? ` ${f.bytes} bytes` : ''}`;
  return `${what} ${f.src} -> ${flowDst(f, routers)} from ${f.startS} s${f.stopS > 0 ? ` to ${f.stopS} s` : ''}`;
}
