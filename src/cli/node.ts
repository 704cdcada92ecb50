import { createWriteStream } from 'node:fs';
import { Command, Option } from 'commander';
import { checkOutputFile } from './output-path.js';
import { applyOverrides, loadNodeConfig } from '../config/load.js';
import { EventEngine } from '../core/engine.js';
import { UsageError } from '../core/errors.js';
import { RealTimeScheduler } from '../core/scheduler.js';
import { seconds } from '../core/time.js';
import { createLogger } from '../core/log.js';
import { startNode } from '../daemon/node.js';
import { runVirtual } from '../core/pump.js';
import { ControlServer } from '../control/server.js';
import type { NodeConfig } from '../config/types.js';
import { MeshNode } from '../daemon/mesh.js';
import { supervisorGone } from '../testbed/supervisor.js';
import { StandaloneNode } from '../daemon/standalone.js';
import type { RouterView } from '../router/view.js';
import type { Logger } from '../core/log.js';
import { MonitorServer } from '../monitor/server.js';
import type { MetricsSources } from '../monitor/metrics.js';
import type { OpenFlowSide } from '../daemon/openflow.js';
import { ConfigFile } from '../config/persist.js';
import { LISTED } from './listed.js';

interface NodeOpts {
  config: string;
  set: string[];
  for?: string;
  virtual?: boolean;
  logFormat?: 'pretty' | 'json';
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  pcap?: string;
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** The longest --for a Node timer can wait (2^31 - 1 ms), in seconds. */
export const MAX_FOR_S = Math.floor((2 ** 31 - 1) / 1000);

export function nodeCommand(): Command {
  return new Command('node')
    .description(LISTED.node.about)
    .requiredOption('-c, --config <file>', 'node configuration (JSON; see `cogmesh config schema`)')
    .option('--set <path=value>', 'override one configuration field, e.g. sensing.durationMs=20 (repeatable)', collect, [])
    .option('--for <seconds>', 'stop after this many seconds (default: run until Ctrl-C)')
    .option('--virtual', 'run in virtual time, as fast as possible and reproducibly (needs --for)')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']))
    .addOption(new Option('--log-level <level>', 'least severe level logged').choices(['trace', 'debug', 'info', 'warn', 'error']))
    .option('--pcap <file>', "a router on the air medium: write its radios' traffic into this pcapng file (replaced if there; see docs/pcap.md)")
    .action(async (o: NodeOpts) => {
      let cfg = await loadNodeConfig(o.config);
      const sets = [...o.set];
      if (o.logFormat) sets.push(`log.format=${o.logFormat}`);
      if (o.logLevel) sets.push(`log.level=${o.logLevel}`);
      if (sets.length > 0) cfg = applyOverrides(cfg, sets);
      const forS = o.for === undefined ? undefined : Number(o.for);
      if (forS !== undefined && !(forS > 0 && forS <= MAX_FOR_S)) throw new UsageError(`--for: "${o.for}" is not a number of seconds in (0, ${MAX_FOR_S}]`);
      if (o.virtual && (cfg.sim.medium.endpoint !== '' || cfg.phy.enabled)) {
        throw new UsageError(
          `--virtual: a router ${cfg.phy.enabled ? "over its radios' PHY" : 'on the air medium process'} runs in real time (\`cogmesh sim\` runs a whole mesh in virtual time)`,
        );
      }
      if (o.virtual) {
        if (forS === undefined) throw new UsageError('--virtual needs --for SECONDS: virtual time runs as fast as it can and must know when to stop');
        const engine = new EventEngine();
        const log = createLogger({ ...cfg.log, virtualClock: engine.clock });
        const node = await startNode(cfg, { scheduler: engine, log, reproducible: true });
        await runVirtual(engine, seconds(forS));
        await node.stop();
        log.info({ event: 'node-stop' }, `node stopped after ${forS} s of virtual time`);
        return;
      }
      if (o.pcap !== undefined && cfg.sim.medium.endpoint === '') {
        throw new UsageError('--pcap: only a router on the air medium (sim.medium.endpoint) is captured; `cogmesh sim --pcap DIR` captures a simulated mesh');
      }
      if (cfg.sim.medium.endpoint !== '' || cfg.phy.enabled) {
        await runMeshNode(cfg, o.config, forS, o.pcap);
        return;
      }
      const scheduler = new RealTimeScheduler();
      // In real time the event loop serves the radios and the control API: it never waits on the log's reader.
      const log = createLogger({ ...cfg.log, background: true });
      const node = await StandaloneNode.start(cfg, scheduler, log);
      await serve(node, cfg, o.config, log, forS);
      scheduler.cancelAll();
      process.exit(0);
    });
}

/** A router on the air medium process, with its control API and monitor, until SIGINT, SIGTERM or `forS` seconds. */
async function runMeshNode(cfg: NodeConfig, configPath: string, forS: number | undefined, pcapPath: string | undefined): Promise<void> {
  if (pcapPath !== undefined) await checkOutputFile('--pcap', pcapPath, { force: true });
  const log = createLogger({ ...cfg.log, background: true });
  const pcap = pcapPath === undefined ? undefined : createWriteStream(pcapPath);
  const node = await MeshNode.start(cfg, log, pcap ? { pcap: (b) => void pcap.write(b) } : {});
  await serve(node, cfg, configPath, log, forS);
  if (pcap) await new Promise<void>((resolve) => pcap.end(resolve));
  process.exit(0);
}

/**
 * Serves a running node's control API and monitor (when configured) until
 * SIGINT, SIGTERM or `forS` seconds; then stops it all. `configPath` is the
 * file `ctl set --persist` writes. SIGHUP reads R3's key file again (a key
 * rotation without a restart, `systemctl reload`); a node without R3
 * (sensing only) logs that it has nothing to reload, rather than die of the
 * signal's default action.
 */
async function serve(
  node: RouterView & { stop(): Promise<void>; reloadKeys?(why: string): boolean; openflow?: OpenFlowSide | undefined },
  cfg: NodeConfig,
  configPath: string,
  log: Logger,
  forS: number | undefined,
): Promise<void> {
  const reload = (): void => {
    if (node.reloadKeys) node.reloadKeys('SIGHUP');
    else log.warn({ event: 'r3-keys-refused', why: 'SIGHUP' }, 'SIGHUP: this router runs no R3 (sensing only, no medium): no keys to reload');
  };
  process.on('SIGHUP', reload);
  const control =
    cfg.control.endpoint !== '' || cfg.control.telemetry !== '' ? new ControlServer(node, cfg.control, log, new ConfigFile(configPath)) : undefined;
  const metrics: MetricsSources = {
    version: process.env.npm_package_version ?? '0.1.0',
    ...(control ? { control } : {}),
    ...(cfg.openflow.mode !== 'off' ? { openflow: () => openFlowCounts(node.openflow) } : {}),
  };
  const monitor = cfg.monitor.listen !== '' ? new MonitorServer(node, cfg.monitor, log, {}, metrics) : undefined;
  try {
    await control?.start();
    const m = await monitor?.start();
    if (m) log.info({ event: 'monitor-start', url: m.url }, `monitor at ${m.url}`);
  } catch (e) {
    process.off('SIGHUP', reload);
    await Promise.allSettled([control?.stop(), monitor?.stop(), node.stop()]);
    throw e;
  }
  const why = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    if (forS !== undefined) setTimeout(() => resolve(`--for ${forS} s elapsed`), forS * 1000);
    void supervisorGone()?.then(resolve);
  });
  process.off('SIGHUP', reload);
  log.info({ event: 'node-stop', why, status: node.status() }, `stopping (${why})`);
  await Promise.allSettled([control?.stop(), monitor?.stop()]);
  await node.stop();
}

/** What the monitor's metrics read of a running OpenFlow side (undefined before it runs). */
function openFlowCounts(of: OpenFlowSide | undefined): ReturnType<NonNullable<MetricsSources['openflow']>> {
  if (!of) return undefined;
  return { sessions: of.agent.openSessions, agent: { ...of.agent.counters }, transport: { ...of.transport.counters, ...of.transport.dials } };
}
