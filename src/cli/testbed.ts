import { Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';
import { createLogger } from '../core/log.js';
import { isLocalEndpoint } from '../config/load.js';
import { loadScenario } from '../config/scenario.js';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import { nodeCount } from '../config/scenario.js';
import { hasNetAdmin } from '../daemon/tun.js';
import { createNetns, DEFAULT_RUN_DIR, destroyNetns, netnsAvailable, netnsLayout, newTag, sweepStale, type NetnsLayout } from '../testbed/netns.js';
import { DEFAULT_TESTBED_PORTS, planTestbed, type NetnsPlan, type TestbedPlan } from '../testbed/plan.js';
import { testbedExecCommand } from './testbed-exec.js';
import { listeningAs } from './usage.js';
import { listenLink, parseLinkEndpoint, type LinkEndpoint } from '../../radio/medium/transport.js';
import { Supervisor } from '../testbed/supervisor.js';
import { MAX_FOR_S } from './node.js';
import { CC_NAMES, type CcName } from '../tcp/cc/types.js';
import { LISTED } from './listed.js';

interface TestbedOpts {
  seed?: string;
  set: string[];
  hops?: string;
  tcp?: CcName;
  acc?: string;
  accMode?: 'split' | 'e2e' | 'as';
  for?: string;
  medium: string;
  controlBase: string;
  monitorBase: string;
  openflowBase: string;
  verbose?: boolean;
  netns?: boolean;
  logFormat: 'pretty' | 'json';
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

function port(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`${flag}: "${v}" is not a port (1..65535)`);
  return n;
}

/** `cogmesh testbed`: a scenario as real processes on this machine, in real time. */
export function testbedCommand(): Command {
  return new Command('testbed')
    .addCommand(testbedExecCommand())
    .description(LISTED.testbed.about)
    .argument('<scenario>', 'scenario file (see config/scenarios/)')
    .option('--seed <n>', "seed of the PN processes, the MAC and the routers (default: the scenario's)")
    .option('--set <path=value>', 'override one scenario field (repeatable)', collect, [])
    .option('--hops <n>', 'for a chain scenario: its number of hops')
    .addOption(new Option('--tcp <variant>', 'make every flow a bulk TCP flow of this variant').choices([...CC_NAMES]))
    .option('--acc <placement>', 'TCP-ACC VNFs (each in its sandbox): none, every, every-K, or a list of routers')
    .addOption(new Option('--acc-mode <mode>', 'TCP-ACC mode').choices(['split', 'e2e', 'as']))
    .option('--for <seconds>', 'stop after this many seconds (default: run until Ctrl-C)')
    .option('--medium <endpoint>', "the medium's link endpoint (tcp://HOST:PORT or ipc://PATH)", DEFAULT_TESTBED_PORTS.medium)
    .option('--control-base <port>', "router 0's control API port (telemetry on the next; +10 per router)", String(DEFAULT_TESTBED_PORTS.controlBase))
    .option('--monitor-base <port>', "router 0's monitor port (+1 per router)", String(DEFAULT_TESTBED_PORTS.monitorBase))
    .option(
      '--openflow-base <port>',
      "router 0's passive OpenFlow agent port, when node.openflow.mode is passive (+1 per router)",
      String(DEFAULT_TESTBED_PORTS.openflowBase),
    )
    .option(
      '--netns',
      "real IP: each router in a network namespace of its own with its TUN, and a client host namespace behind it (needs root; see docs/ip.md); `cogmesh testbed exec r0 -- CMD` runs CMD in router 0's client host",
    )
    .option('--verbose', 'relay every line the routers log (each sensing round, too)')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']).default('pretty'))
    .action(async (file: string, o: TestbedOpts) => {
      const forS = o.for === undefined ? undefined : Number(o.for);
      if (forS !== undefined && !(forS > 0 && forS <= MAX_FOR_S)) throw new UsageError(`--for: "${o.for}" is not a number of seconds in (0, ${MAX_FOR_S}]`);
      const hops = o.hops === undefined ? undefined : Number(o.hops);
      const sc = await loadScenario(file, {
        set: o.set,
        ...(hops !== undefined ? { hops } : {}),
        ...(o.tcp ? { tcp: o.tcp } : {}),
        ...(o.acc !== undefined ? { acc: o.acc } : {}),
        ...(o.accMode ? { accMode: o.accMode } : {}),
        ...(o.netns ? { hostsTcp: true } : {}),
      });
      const seed = o.seed === undefined ? sc.seed : Number(o.seed);
      if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`--seed: "${o.seed}" is not a seed (an integer >= 0)`);
      // Every process of a testbed runs on this machine: a medium beyond loopback would need CURVE keys it does not make.
      if (!isLocalEndpoint(o.medium))
        throw new UsageError(`--medium: "${o.medium}" is not on this machine (a loopback tcp or an ipc endpoint): the testbed's processes all run here`);
      // The medium process would only exit on an address already taken, and be started again and again: say so now.
      if (!o.netns) await listeningAs('--medium', o.medium, () => probeListen(parseLinkEndpoint(o.medium, '--medium')));
      const host = '127.0.0.1';
      const ports = {
        ...DEFAULT_TESTBED_PORTS,
        medium: o.medium,
        host,
        controlBase: port('--control-base', o.controlBase),
        monitorBase: port('--monitor-base', o.monitorBase),
        openflowBase: port('--openflow-base', o.openflowBase),
      };
      const log = createLogger({ level: 'info', format: o.logFormat });
      // Ctrl-C or SIGTERM from here on stops the testbed cleanly, even while it still starts (namespaces, processes).
      let signalled: string | undefined;
      let onSignal: (why: string) => void = (why) => void (signalled ??= why);
      process.once('SIGINT', () => onSignal('SIGINT'));
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      const ns = o.netns ? await netnsUp(nodeCount(sc.topology), log) : undefined;
      let plan: TestbedPlan;
      try {
        plan = planTestbed(sc, seed, ports, ns?.plan);
      } catch (e) {
        await ns?.down();
        throw e;
      }
      if (!ns) await probeRouterPorts(plan);
      const sup = new Supervisor(plan, { log, verbose: o.verbose === true });
      log.info(
        {
          event: 'testbed-start',
          scenario: sc.name,
          seed,
          ...(ns ? { tag: ns.layout.tag } : {}),
          routers: plan.routers.map((r) => ({ name: r.name, control: r.control, telemetry: r.telemetry, monitor: r.monitor, netns: r.netns })),
        },
        [
          `testbed ${sc.name} (seed ${seed}): the medium at ${plan.mediumEndpoint} and ${plan.routers.length} routers`,
          ...plan.routers.map((r) => `  ${r.name}: ${r.monitor ? `monitor ${r.monitor}  ` : ''}control ${r.control}  telemetry ${r.telemetry}`),
          ...(ns
            ? [
                `  network namespaces (tag ${ns.layout.tag}): router ri in ${ns.layout.routers[0]?.routerNs.replace(/0$/, 'i')}, its client host in ${ns.layout.routers[0]?.hostNs.replace(/0$/, 'i')}`,
                ...ns.layout.routers.map((r) => `  host behind ${r.name}: ${r.host4} and ${r.host6} (gateway ${r.gw4}, ${r.gw6})`),
                `  try: cogmesh testbed exec r0 -- ping ${ns.layout.routers.at(-1)?.host4}`,
              ]
            : []),
          `  try: cogmesh ctl --node ${plan.routers[0]?.control} status`,
        ].join('\n'),
      );
      // A medium that dies is started again; the testbed ends only when it gives up on it.
      let mediumLost = false;
      let mediumGone: () => void = () => undefined;
      sup.onExit = (name, _code, _signal, restarting) => {
        if (name !== 'medium' || restarting) return;
        mediumLost = true;
        mediumGone();
      };
      try {
        await sup.start();
      } catch (e) {
        await sup.stop();
        if (ns) await ns.down();
        throw e;
      }
      const why = await new Promise<string>((resolve) => {
        if (signalled !== undefined) resolve(signalled);
        onSignal = resolve;
        if (forS !== undefined) setTimeout(() => resolve(`--for ${forS} s elapsed`), forS * 1000);
        mediumGone = () => resolve('the medium exited');
        if (mediumLost) resolve('the medium exited');
      });
      log.info({ event: 'testbed-stop', why }, `stopping every process (${why})`);
      await sup.stop();
      if (ns) await ns.down();
      process.exit(why === 'the medium exited' ? 1 : 0);
    });
}

/**
 * The namespaces of a `--netns` testbed: first what a testbed killed
 * earlier left behind, then a new layout, and a directory for its ipc://
 * endpoints. `down` removes all of it.
 */
async function netnsUp(routers: number, log: Logger): Promise<{ layout: NetnsLayout; plan: NetnsPlan; down: () => Promise<void> }> {
  if (!hasNetAdmin()) throw new UsageError('--netns needs CAP_NET_ADMIN (network namespaces, veth pairs and TUN devices): run it as root');
  const can = await netnsAvailable();
  if (!can.ok) throw new UsageError(`--netns: ${can.why}`);
  const swept = await sweepStale(DEFAULT_RUN_DIR, { orphans: true });
  // The ipc:// endpoints' directory of a testbed is named by its tag: what no live testbed claims goes too.
  const live = new Set((await readdir(DEFAULT_RUN_DIR)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)));
  for (const d of await readdir(DEFAULT_RUN_DIR)) {
    const m = /^([0-9a-f]{4})\.ipc$/.exec(d);
    if (m && !live.has(m[1]!)) await rm(join(DEFAULT_RUN_DIR, d), { recursive: true, force: true });
  }
  if (swept.length > 0) log.warn({ event: 'netns-swept', tags: swept }, `removed what killed testbeds left: ${swept.join(', ')}`);
  const layout = netnsLayout(newTag(), routers);
  await createNetns(layout);
  const ipcDir = join(DEFAULT_RUN_DIR, `${layout.tag}.ipc`);
  await mkdir(ipcDir, { recursive: true, mode: 0o700 });
  const byIndex = new Map(layout.routers.map((r) => [r.index, r.routerNs]));
  return {
    layout,
    plan: { ipcDir, routerNs: (i) => byIndex.get(i)! },
    down: async () => {
      await destroyNetns(layout);
      await rm(ipcDir, { recursive: true, force: true });
    },
  };
}

/** Binds `e` and lets it go at once: whether the medium will be able to listen there. */
async function probeListen(e: LinkEndpoint): Promise<void> {
  const server = await listenLink(e, (c) => c.destroy());
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Whether each router will be able to listen on the ports the testbed gives
 * it: a router that cannot would exit alone while the others run. A port
 * taken is named by the option its number comes from.
 */
async function probeRouterPorts(plan: TestbedPlan): Promise<void> {
  for (const r of plan.routers) {
    for (const [flag, what, at] of [
      ['--control-base', 'control', r.control],
      ['--control-base', 'telemetry', r.telemetry],
      ['--monitor-base', 'monitor', r.monitor],
    ] as const) {
      const m = /^(?:tcp|http):\/\/([^/:]+):(\d+)/.exec(at);
      if (m) await listeningAs(flag, `${at} (${r.name}'s ${what})`, () => probeListen({ kind: 'tcp', host: m[1]!, port: Number(m[2]) }));
    }
  }
}
