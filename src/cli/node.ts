import { Command, Option } from 'commander';
import { applyOverrides, loadNodeConfig } from '../config/load.js';
import { EventEngine } from '../core/engine.js';
import { UsageError } from '../core/errors.js';
import { RealTimeScheduler } from '../core/scheduler.js';
import { seconds } from '../core/time.js';
import { createLogger } from '../node/log.js';
import { startNode } from '../node/run.js';
import { runVirtual } from '../sim/pump.js';

interface NodeOpts {
  config: string;
  set: string[];
  for?: string;
  virtual?: boolean;
  logFormat?: 'pretty' | 'json';
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

export function nodeCommand(): Command {
  return new Command('node')
    .description('run one mesh router: sense the band, pick the R1 channel, log every round and decision')
    .requiredOption('-c, --config <file>', 'node configuration (JSON; see `cogmesh config schema`)')
    .option('--set <path=value>', 'override one configuration field, e.g. sensing.durationMs=20 (repeatable)', collect, [])
    .option('--for <seconds>', 'stop after this many seconds (default: run until Ctrl-C)')
    .option('--virtual', 'run in virtual time, as fast as possible and reproducibly (needs --for)')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']))
    .addOption(new Option('--log-level <level>', 'least severe level logged').choices(['trace', 'debug', 'info', 'warn', 'error']))
    .action(async (o: NodeOpts) => {
      let cfg = await loadNodeConfig(o.config);
      const sets = [...o.set];
      if (o.logFormat) sets.push(`log.format=${o.logFormat}`);
      if (o.logLevel) sets.push(`log.level=${o.logLevel}`);
      if (sets.length > 0) cfg = applyOverrides(cfg, sets);
      const forS = o.for === undefined ? undefined : Number(o.for);
      if (forS !== undefined && !(forS > 0)) throw new UsageError(`--for: "${o.for}" is not a positive number of seconds`);
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
      const scheduler = new RealTimeScheduler();
      const log = createLogger(cfg.log);
      const node = await startNode(cfg, { scheduler, log });
      await new Promise<void>((resolve) => {
        const done = (why: string) => () => {
          log.info({ event: 'node-stop', why }, `stopping (${why})`);
          resolve();
        };
        process.once('SIGINT', done('SIGINT'));
        process.once('SIGTERM', done('SIGTERM'));
        if (forS !== undefined) setTimeout(done(`--for ${forS} s elapsed`), forS * 1000);
      });
      await node.stop();
      scheduler.cancelAll();
      process.exit(0);
    });
}
