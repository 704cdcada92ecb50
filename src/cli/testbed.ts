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
import { DEFAULT_TESTBED_PORTS, planTestbed, type NetnsPlan, type TestbedPlan, type TestbedPorts } from '../testbed/plan.js';
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
    .action(async (file: string, o: TestbedOpts, cmd: Command) => {
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
      const host = '127.0.0.1';
      const given = {
        ...DEFAULT_TESTBED_PORTS,
        medium: o.medium,
        host,
        controlBase: port('--control-base', o.controlBase),
        monitorBase: port('--monitor-base', o.monitorBase),
        openflowBase: port('--openflow-base', o.openflowBase),
      };
      const explicit = new Set(PORT_FLAGS.filter(([, key]) => cmd.getOptionValueSource(key) === 'cli').map(([flag]) => flag));
      const log = createLogger({ level: 'info', format: o.logFormat });
      // Ctrl-C or SIGTERM from here on stops the testbed cleanly, even while it still starts (namespaces, processes).
      let signalled: string | undefined;
      let onSignal: (why: string) => void = (why) => void (signalled ??= why);
      process.once('SIGINT', () => onSignal('SIGINT'));
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      // A closed terminal (SIGHUP) stops it too: unlike a router under systemd, where SIGHUP reloads R3's keys, a testbed has nothing to reload.
      process.once('SIGHUP', () => onSignal('SIGHUP'));
      const ns = o.netns ? await netnsUp(nodeCount(sc.topology), log) : undefined;
      let plan: TestbedPlan;
      let ports = given;
      try {
        if (ns) plan = planTestbed(sc, seed, ports, ns.plan);
        else ({ plan, ports } = await freePorts((p) => planTestbed(sc, seed, p), given, explicit, log));
      } catch (e) {
        await ns?.down();
        throw e;
      }
      const sup = new Supervisor(plan, { log, verbose: o.verbose === true });
      log.info(
        {
          event: 'testbed-start',
          scenario: sc.name,
          seed,
          medium: plan.mediumEndpoint,
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
      // A process that exits before it is up (a port taken since the check) stops the run at once, saying which port and flag.
      let lost: string | undefined;
      let gone: (why: string) => void = () => undefined;
      const failed = (why: string): void => {
        lost ??= why;
        gone(why);
      };
      sup.onExit = (name, code, signal, restarting, starting) => {
        if (starting) {
          void startFailure(plan, ports, name, signal ?? `code ${code}`, sup.lastError(name)).then((line) => {
            log.error({ event: 'testbed-start-failed', proc: name }, line);
            return failed(`${name} did not start`);
          });
          return;
        }
        if (name === 'medium' && !restarting) void failed('the medium exited');
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
        gone = resolve;
        if (lost !== undefined) resolve(lost);
      });
      log.info({ event: 'testbed-stop', why }, `stopping every process (${why})`);
      await sup.stop();
      if (ns) await ns.down();
      process.exit(why === lost ? 1 : 0);
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
  // A machine that has not run a testbed since it booted has no run directory yet (/run is a tmpfs).
  await mkdir(DEFAULT_RUN_DIR, { recursive: true, mode: 0o700 });
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

/** The options that place a testbed's ports, with the keys commander gives them. */
const PORT_FLAGS = [
  ['--medium', 'medium'],
  ['--control-base', 'controlBase'],
  ['--monitor-base', 'monitorBase'],
  ['--openflow-base', 'openflowBase'],
] as const;
type PortFlag = (typeof PORT_FLAGS)[number][0];

/** How many sets of ports upward from the defaults a testbed tries when another testbed (or anything) holds them. */
export const PORT_TRIES = 20;

/** The error of a port the testbed would use that is taken, with the option its number comes from. */
class PortTaken extends UsageError {
  constructor(
    readonly flag: PortFlag,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The plan of a testbed whose every port is free. Ports an option gave are
 * used as given (a taken one is refused, naming it); the others move up
 * together, one set of ports at a time (the medium's port by 1, the
 * control base by 10 per router, the monitor and OpenFlow bases by 1 per
 * router), so that a second testbed on this machine runs beside the first.
 */
async function freePorts(
  plan: (ports: TestbedPorts) => TestbedPlan,
  given: TestbedPorts,
  explicit: ReadonlySet<string>,
  log: Logger,
): Promise<{ plan: TestbedPlan; ports: TestbedPorts }> {
  const n = plan(given).routers.length;
  let last: PortTaken | undefined;
  for (let k = 0; k < PORT_TRIES; k++) {
    const ports = shifted(given, explicit, k, n);
    if (k > 0 && ports === undefined) break;
    const p = plan(ports ?? given);
    if (k === 0) samePortTwice(p, given);
    else if (!tryOk(() => samePortTwice(p, ports!))) continue; // moved defaults onto a port given explicitly: the next set
    try {
      await probePorts(p, ports ?? given);
    } catch (e) {
      if (!(e instanceof PortTaken) || explicit.has(e.flag)) throw e;
      last = e;
      continue;
    }
    if (k > 0) {
      const moved = PORT_FLAGS.filter(([flag]) => !explicit.has(flag)).map(([flag, key]) => `${flag} ${String(ports![key])}`);
      log.warn({ event: 'testbed-ports-moved', taken: last?.message }, `${last?.message ?? 'a port is taken'}: using ${moved.join(' ')} instead`);
    }
    return { plan: p, ports: ports ?? given };
  }
  throw new UsageError(
    `${last?.message ?? 'a port is taken'}; the next ${PORT_TRIES - 1} sets of ports up are taken too: give free ones with ${PORT_FLAGS.map(([f]) => f).join(', ')}`,
  );
}

/** Whether `f` returns without throwing. */
function tryOk(f: () => void): boolean {
  try {
    f();
    return true;
  } catch {
    return false;
  }
}

/** The k-th set of ports up from `given`, moving only what no option gave; undefined when nothing can move. */
function shifted(given: TestbedPorts, explicit: ReadonlySet<string>, k: number, routers: number): TestbedPorts | undefined {
  const up = (flag: PortFlag, base: number, step: number): number => (explicit.has(flag) ? base : base + k * step);
  const m = /^tcp:\/\/(.+):(\d+)$/.exec(given.medium);
  const medium = m && !explicit.has('--medium') ? `tcp://${m[1]}:${Number(m[2]) + k}` : given.medium;
  const ports = {
    ...given,
    medium,
    controlBase: up('--control-base', given.controlBase, 10 * routers),
    monitorBase: up('--monitor-base', given.monitorBase, routers),
    openflowBase: up('--openflow-base', given.openflowBase, routers),
  };
  const top = Math.max(ports.controlBase + 10 * routers, ports.monitorBase + routers, ports.openflowBase + routers, m ? Number(m[2]) + k : 0);
  return top > 65535 ? undefined : ports;
}

/** The ports of a plan, each with the option its number comes from. */
function planPorts(plan: TestbedPlan, ports: TestbedPorts, only?: string): Array<{ flag: PortFlag; what: string; at: string }> {
  const out: Array<{ flag: PortFlag; what: string; at: string }> = [];
  if (only === undefined || only === 'medium') out.push({ flag: '--medium', what: "the medium's endpoint", at: plan.mediumEndpoint });
  for (const r of plan.routers) {
    if (only !== undefined && only !== r.name) continue;
    const openflow = r.config.openflow.mode === 'passive' ? `tcp://${ports.host}:${ports.openflowBase + r.index}` : '';
    out.push(
      { flag: '--control-base', what: `${r.name}'s control`, at: r.control },
      { flag: '--control-base', what: `${r.name}'s telemetry`, at: r.telemetry },
      { flag: '--monitor-base', what: `${r.name}'s monitor`, at: r.monitor },
      { flag: '--openflow-base', what: `${r.name}'s OpenFlow agent`, at: openflow },
    );
  }
  return out.filter((p) => p.at !== '');
}

/** A TCP port of `at` (tcp:// or http://), or undefined. */
function tcpPort(at: string): { host: string; port: number } | undefined {
  const m = /^(?:tcp|http):\/\/([^/:]+):(\d+)/.exec(at);
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

/** Refuses a plan that gives one port to two listeners (bases too close together): one of them could never start. */
function samePortTwice(plan: TestbedPlan, ports: TestbedPorts): void {
  const seen = new Map<number, { flag: PortFlag; what: string }>();
  for (const p of planPorts(plan, ports)) {
    const t = tcpPort(p.at);
    if (!t) continue;
    const first = seen.get(t.port);
    if (first) throw new UsageError(`${p.flag}: port ${t.port} would be both ${first.what} (${first.flag}) and ${p.what}: move one of the two`);
    seen.set(t.port, p);
  }
}

/**
 * Whether the medium and each router will be able to listen on the ports
 * the testbed gives them: one that cannot would exit alone while the others
 * run. A port taken is named by the option its number comes from.
 */
async function probePorts(plan: TestbedPlan, ports: TestbedPorts, only?: string): Promise<void> {
  for (const p of planPorts(plan, ports, only)) {
    const t = tcpPort(p.at);
    const e: LinkEndpoint | undefined = p.flag === '--medium' ? parseLinkEndpoint(p.at, '--medium') : t && { kind: 'tcp', ...t };
    if (!e) continue;
    try {
      await listeningAs(p.flag, p.flag === '--medium' ? p.at : `${p.at} (${p.what})`, () => probeListen(e));
    } catch (err) {
      throw err instanceof UsageError ? new PortTaken(p.flag, err.message) : err;
    }
  }
}

/** The settings a process names when it cannot listen, and the testbed's option that gives each. */
const FLAG_OF_SETTING: ReadonlyArray<readonly [RegExp, PortFlag]> = [
  [/\bcontrol\.(?:endpoint|telemetry)\b/, '--control-base'],
  [/\bmonitor\.listen\b/, '--monitor-base'],
  [/\bopenflow\.listen\b/, '--openflow-base'],
  [/--bind\b/, '--medium'],
];

/**
 * The one line that says why a process of the testbed exited before it was
 * up: the port of its that is taken now, and the option that moves it; or
 * what it said last, with the option when it names a setting the testbed
 * gives; or else its exit and where to look.
 */
async function startFailure(plan: TestbedPlan, ports: TestbedPorts, name: string, exit: string, said: string | undefined): Promise<string> {
  try {
    await probePorts(plan, ports, name);
  } catch (e) {
    if (e instanceof PortTaken) return `${name} could not start (${exit}): ${e.message}; ${e.flag} moves it`;
  }
  const flag = said === undefined ? undefined : FLAG_OF_SETTING.find(([re]) => re.test(said))?.[1];
  if (said !== undefined && flag !== undefined) return `${name} could not start (${exit}): ${said.replace(/^cogmesh: /, '')}; ${flag} moves it`;
  return `${name} exited (${exit}) before it was up${said === undefined ? '' : `: ${said.replace(/^cogmesh: /, '')}`}; stopping the testbed`;
}
