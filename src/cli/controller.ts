import { Command, Option } from 'commander';
import { ConfigError, UsageError } from '../core/errors.js';
import { RealClock } from '../core/time.js';
import { createLogger } from '../core/log.js';
import type { FlowSpec } from '../openflow/flow-spec.js';
import { ControllerService, ListenError } from '../daemon/controller-service.js';
import { parseAccText, parseFlowText } from '../openflow/flow-spec.js';
import { MAX_FOR_S } from './node.js';
import { LISTED } from './listed.js';

interface ControllerOpts {
  listen?: string;
  connect: string[];
  privateKey?: string;
  certificate?: string;
  caCert?: string;
  flow: string[];
  acc?: string;
  accMode: 'split' | 'e2e' | 'as';
  hysteresis: string;
  for?: string;
  logFormat: 'pretty' | 'json';
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

/** A controller flow from the command line; a UsageError names what is wrong. */
export function parseFlowArg(text: string, id: number, acc: FlowSpec['acc']): FlowSpec {
  const r = parseFlowText(text, id, acc);
  if (!r.ok) throw new UsageError(`--flow: ${r.error}`);
  return r.value;
}

/** The command line's option for each field of a ConfigError the service throws. */
const OPTION_OF: ReadonlyArray<[RegExp, string]> = [
  [/^\/controller\/listen$/, '--listen'],
  [/^\/controller\/connect\/\d+$/, '--connect'],
  [/^\/controller\/tls\/privateKey$/, '--private-key'],
  [/^\/controller\/tls\/certificate$/, '--certificate'],
  [/^\/controller\/tls\/caCert$/, '--ca-cert'],
];

/** A ConfigError of the service as the command line's words: one line per problem, naming the option. */
function usageOf(e: ConfigError): UsageError {
  const lines = e.issues.map((i) => {
    const option = OPTION_OF.find(([re]) => re.test(i.path))?.[1] ?? i.path;
    return `${option}: ${JSON.stringify(i.value)}: expected ${i.expected}`;
  });
  return new UsageError(lines.join('\n'));
}

/**
 * `cogmesh controller`: the CETT controller / VIM on TCP or TLS. Routers whose
 * agents are in active mode connect to it (--listen), and it connects to
 * routers whose agents are passive (--connect); it learns the links' RC from
 * their ports, installs each flow along its minimum-CETT path, moves it when
 * RC changes enough, and places TCP-ACC VNFs on the path's relays.
 */
export function controllerCommand(): Command {
  return new Command('controller')
    .description(LISTED.controller.about)
    .option(
      '--listen <endpoint>',
      'where routers connect: pssl:PORT[:HOST] (TLS), ptcp:PORT[:HOST] or HOST:PORT; default 127.0.0.1:6653, none with --connect alone',
    )
    .option('--connect <endpoint>', "a router's passive agent to connect to: ssl:HOST:PORT (TLS) or tcp:HOST:PORT (repeatable)", collect, [])
    .option('--private-key <file>', "the controller's private key, PEM, for pssl: and ssl: (ovs-pki: NAME-privkey.pem)")
    .option('--certificate <file>', "the controller's certificate, PEM (ovs-pki: NAME-cert.pem)")
    .option('--ca-cert <file>', "the CA certificate of the routers' certificates, PEM (ovs-pki: switchca/cacert.pem)")
    .option('--flow <proto:src-dst[:port][,label=L][,queue=Q]>', 'a flow to place, e.g. tcp:0-4:5001 or udp:0-4,label=0x100 (repeatable)', collect, [])
    .option('--acc <none|every|every-K>', 'TCP-ACC on the relays of TCP flows')
    .addOption(new Option('--acc-mode <mode>', 'TCP-ACC mode').choices(['split', 'e2e', 'as']).default('split'))
    .option('--hysteresis <fraction>', 'move a flow when its CETT is this much above the best', '0.2')
    .option('--for <seconds>', 'stop after this many seconds')
    .addOption(new Option('--log-format <format>', 'log lines for people or one JSON object a line').choices(['pretty', 'json']).default('pretty'))
    .action(async (o: ControllerOpts) => {
      const hysteresis = Number(o.hysteresis);
      if (!(hysteresis >= 0 && hysteresis <= 10)) throw new UsageError(`--hysteresis: "${o.hysteresis}" is not a fraction in [0, 10]`);
      const forS = o.for === undefined ? undefined : Number(o.for);
      if (forS !== undefined && !(forS > 0 && forS <= MAX_FOR_S)) throw new UsageError(`--for: "${o.for}" is not a number of seconds in (0, ${MAX_FOR_S}]`);
      let acc: FlowSpec['acc'];
      if (o.acc !== undefined && o.acc !== 'none') {
        const r = parseAccText(o.acc, o.accMode);
        if (!r.ok) throw new UsageError(`--acc: ${r.error}`);
        acc = r.value;
      }
      const flows = o.flow.map((f, i) => parseFlowArg(f, i + 1, acc));
      const log = createLogger({ level: 'info', format: o.logFormat });
      const clock = new RealClock();
      const service = new ControllerService({
        hysteresis,
        log,
        now: () => clock.now(),
        tls: { privateKey: o.privateKey ?? '', certificate: o.certificate ?? '', caCert: o.caCert ?? '' },
      });
      for (const f of flows) {
        const r = service.addFlow(f);
        if (!r.ok) throw new UsageError(`--flow ${f.id}: ${r.error}`);
      }
      const listen = o.listen ?? (o.connect.length > 0 ? '' : '127.0.0.1:6653');
      try {
        await service.start(listen, o.connect);
      } catch (e) {
        if (e instanceof ListenError) throw new UsageError(`--listen: cannot listen on ${listen} (${e.reason})`);
        if (e instanceof ConfigError) throw usageOf(e);
        throw e;
      }
      const why = await new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
        if (forS !== undefined) setTimeout(() => resolve(`--for ${forS} s elapsed`), forS * 1000);
      });
      log.info({ event: 'controller-stop', why, paths: service.flows() }, `controller stopping (${why})`);
      await service.stop();
      process.exit(0);
    });
}
