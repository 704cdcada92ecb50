import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { byReasonText, MediumServer, parseMediumSetup, type MediumSetup } from '../../radio/medium/server.js';
import { parseMediumAllowed } from '../../radio/medium/curve-link.js';
import { parseLinkEndpoint } from '../../radio/medium/transport.js';
import { UsageError } from '../core/errors.js';
import { US_PER_S } from '../core/time.js';
import { readKeyFile } from './ctl.js';
import { createLogger } from '../core/log.js';
import { loadScenario } from '../config/scenario.js';
import { mediumSetup } from '../testbed/plan.js';
import { supervisorGone } from '../testbed/supervisor.js';
import { listeningAs } from './usage.js';
import { LISTED } from './listed.js';

interface MediumOpts {
  scenario?: string;
  setup?: string;
  seed?: string;
  set: string[];
  hops?: string;
  bind: string;
  aheadUs: string;
  epochUs?: string;
  keyFile?: string;
  allow: string[];
  statsInterval: string;
  logFormat: 'pretty' | 'json';
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** `cogmesh medium`: the emulated air as a process, for router daemons on one machine (or a LAN). */
export function mediumCommand(): Command {
  return new Command('medium')
    .description(LISTED.medium.about)
    .option('--scenario <file>', 'take the medium, PN load and channel plan from this scenario')
    .option('--setup <file>', 'a medium setup as `cogmesh testbed` writes it (instead of --scenario)')
    .option('--seed <n>', "seed of the PN processes and the MAC (default: the scenario's)")
    .option('--set <path=value>', 'override one scenario field (repeatable)', collect, [])
    .option('--hops <n>', 'for a chain scenario: its number of hops')
    .option('--bind <endpoint>', 'endpoint to listen on: tcp://HOST:PORT or ipc://PATH', 'tcp://127.0.0.1:7600')
    .option(
      '--ahead-us <us>',
      "how far ahead of the real clock the MAC may run (µs): a frame exchange's steps then need no timer each; 0 keeps every event at or after its real time",
      String(MediumServer.AHEAD_US),
    )
    .option(
      '--epoch-us <us>',
      "time origin of the PN processes (epoch µs, at or before now; default: now): a medium started again with its predecessor's epoch runs the PN bursts the routers already sense",
    )
    .option(
      '--key-file <file>',
      "the medium's CURVE key pair (`cogmesh keygen --out FILE`; its public key is the routers' sim.medium.curve.serverKey): the link runs over CURVE and only --allow routers join; required to bind beyond loopback",
    )
    .option(
      '--allow <key[=addr,...]>',
      "a router let join (repeatable; with --key-file): its CURVE public key (its sim.medium.curve.publicKey), and after '=' the mesh addresses it may join as; a key alone may join as any address no live router holds",
      collect,
      [],
    )
    .option(
      '--stats-interval <seconds>',
      "every so often, a 'medium-stats' log line with the medium's counters when any changed since the last (and a final one when it stops); 0: none",
      '60',
    )
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']).default('pretty'))
    .action(async (o: MediumOpts) => {
      if ((o.scenario === undefined) === (o.setup === undefined)) throw new UsageError('give one of --scenario FILE and --setup FILE');
      parseLinkEndpoint(o.bind, '--bind');
      let setup: MediumSetup;
      if (o.setup !== undefined) setup = parseMediumSetup(await readFile(o.setup, 'utf8'));
      else {
        const hops = o.hops === undefined ? undefined : Number(o.hops);
        const sc = await loadScenario(o.scenario!, { set: o.set, ...(hops !== undefined ? { hops } : {}) });
        const seed = o.seed === undefined ? sc.seed : Number(o.seed);
        if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`--seed: "${o.seed}" is not a seed (an integer >= 0)`);
        setup = mediumSetup(sc, seed);
      }
      // Every router's air goes through this process: it never waits on its log's reader (a testbed busy relaying, a stopped terminal).
      const log = createLogger({ level: 'info', format: o.logFormat, background: true });
      const aheadUs = Number(o.aheadUs);
      if (!Number.isSafeInteger(aheadUs) || aheadUs < 0 || aheadUs > 100_000) throw new UsageError(`--ahead-us: "${o.aheadUs}" is not 0..100000 µs`);
      const epochUs = o.epochUs === undefined ? undefined : Number(o.epochUs);
      if (epochUs !== undefined && !(Number.isSafeInteger(epochUs) && epochUs >= 0 && epochUs <= Date.now() * 1000)) {
        throw new UsageError(`--epoch-us: "${o.epochUs}" is not a time in epoch µs at or before now`);
      }
      if (o.allow.length > 0 && o.keyFile === undefined)
        throw new UsageError("--allow needs --key-file: the allow-list is CURVE's, and CURVE needs the medium's key pair");
      const allow = o.allow.map(parseMediumAllowed);
      const statsS = Number(o.statsInterval);
      if (!(o.statsInterval.trim() !== '' && Number.isFinite(statsS) && statsS >= 0 && statsS <= 86_400))
        throw new UsageError(`--stats-interval: "${o.statsInterval}" is not 0..86400 seconds`);
      const statsIntervalUs = Math.round(statsS * US_PER_S);
      const curve = o.keyFile === undefined ? undefined : { ...(await readKeyFile(o.keyFile)), allow };
      const server = await listeningAs(
        '--bind',
        o.bind,
        () =>
          new MediumServer(setup, {
            endpoint: o.bind,
            log,
            aheadUs,
            statsIntervalUs,
            ...(epochUs !== undefined ? { epochUs } : {}),
            ...(curve ? { curve } : {}),
          }),
      );
      await listeningAs('--bind', o.bind, () => server.start());
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
        void supervisorGone()?.then(() => resolve());
      });
      log.info(
        { event: 'medium-stop', counters: server.counters },
        `medium stopping (${server.counters.joins} joins, ${server.air.counters.frames} frames on the air, ${server.counters.faults} faults${byReasonText(server.counters.faultsByReason)}, ${server.counters.refused} refused${byReasonText(server.counters.refusedByReason)})`,
      );
      await server.stop();
      process.exit(0);
    });
}
