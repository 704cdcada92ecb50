import { Command, Option } from 'commander';
import { BandHub } from '../../radio/sim/hub.js';
import { bandHubEndpointProblem } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { createLogger } from '../core/log.js';
import { supervisorGone } from '../testbed/supervisor.js';
import { LISTED } from './listed.js';
import { listeningAs } from './usage.js';

interface BandOpts {
  bind: string;
  idleMs: string;
  statsInterval: string;
  logFormat: 'pretty' | 'json';
}

/** `cogmesh band`: the band hub, through which the emulated bands of node processes on one machine share their IQ bursts. */
export function bandCommand(): Command {
  return new Command('band')
    .description(LISTED.band.about)
    .option(
      '--bind <endpoint>',
      'endpoint to listen on: tcp://127.0.0.1:PORT (loopback) or ipc://PATH; the nodes name it in sim.band.hub',
      'tcp://127.0.0.1:7700',
    )
    .option('--idle-ms <ms>', 'a band not heard from for this long is forgotten (bands say hello every second)', '5000')
    .option('--stats-interval <seconds>', "every so often, a 'band-stats' log line with the hub's counters when any changed since the last; 0: none", '60')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']).default('pretty'))
    .action(async (o: BandOpts) => {
      const problem = bandHubEndpointProblem(o.bind);
      if (problem !== undefined) throw new UsageError(`--bind: "${o.bind}" is not ${problem}`);
      const idleMs = Number(o.idleMs);
      if (!Number.isSafeInteger(idleMs) || idleMs < 100 || idleMs > 3_600_000) throw new UsageError(`--idle-ms: "${o.idleMs}" is not 100..3600000 ms`);
      const statsS = Number(o.statsInterval);
      if (!(o.statsInterval.trim() !== '' && Number.isFinite(statsS) && statsS >= 0 && statsS <= 86_400)) {
        throw new UsageError(`--stats-interval: "${o.statsInterval}" is not 0..86400 seconds`);
      }
      // Every band's IQ goes through this hub: it never waits on its log's reader (a testbed busy relaying, a stopped terminal).
      const log = createLogger({ level: 'info', format: o.logFormat, background: true });
      const hub = await listeningAs('--bind', o.bind, () => BandHub.listen(o.bind, { idleMs }));
      log.info({ event: 'band-listening', endpoint: o.bind }, `band hub listening on ${o.bind}`);
      let last = '';
      const report = (): void => {
        const now = JSON.stringify(hub.counters);
        if (now === last) return;
        last = now;
        log.info(
          { event: 'band-stats', peers: hub.peerCount, counters: hub.counters },
          `band hub: ${hub.peerCount} bands, ${hub.counters.bursts} bursts, ${hub.counters.forwarded} forwarded, ${hub.counters.malformed} malformed`,
        );
      };
      const stats = statsS > 0 ? setInterval(report, statsS * 1000) : undefined;
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
        void supervisorGone()?.then(() => resolve());
      });
      clearInterval(stats);
      report();
      await hub.close();
      process.exit(0);
    });
}
