import { Command, Help } from 'commander';
import { LISTED, type SubcommandName } from './listed.js';
import { commanderAsUsage } from './usage.js';

/**
 * Each subcommand and the module that defines it. A run loads only the one
 * it names: `cogmesh sim` never loads ZeroMQ, WebSockets, the logger or the
 * daemon, which the other subcommands need, and `cogmesh --version` or
 * `cogmesh --help` loads none.
 */
const SUBCOMMANDS: Readonly<Record<SubcommandName, () => Promise<Command>>> = {
  node: async () => (await import('./node.js')).nodeCommand(),
  sense: async () => (await import('./sense.js')).senseCommand(),
  record: async () => (await import('./record.js')).recordCommand(),
  phy: async () => (await import('./phy.js')).phyCommand(),
  sim: async () => (await import('./sim.js')).simCommand(),
  config: async () => (await import('./config.js')).configCommand(),
  scenario: async () => (await import('./scenario.js')).scenarioCommand(),
  devices: async () => (await import('./devices.js')).devicesCommand(),
  ctl: async () => (await import('./ctl.js')).ctlCommand(),
  keygen: async () => (await import('./keygen.js')).keygenCommand(),
  medium: async () => (await import('./medium.js')).mediumCommand(),
  band: async () => (await import('./band.js')).bandCommand(),
  testbed: async () => (await import('./testbed.js')).testbedCommand(),
  controller: async () => (await import('./controller.js')).controllerCommand(),
  gateway: async () => (await import('./gateway.js')).gatewayCommand(),
};

const isSubcommand = (name: string): name is SubcommandName => Object.hasOwn(SUBCOMMANDS, name);

/**
 * The subcommand a command line runs or asks help for (`cogmesh sim ...`,
 * `cogmesh help sim`), if it names one: the one that `cli` must load.
 */
export function namedSubcommand(args: readonly string[]): string | undefined {
  return args[0] === 'help' ? args[1] : args[0];
}

/**
 * The `cogmesh` command line: one subcommand per job, each with its own
 * --help. The subcommands named in `load` are the modules' whole commands;
 * every other one is only its name and what the overall help says of it
 * (LISTED), enough for that help, `--version` and the suggestion for a
 * misspelt name, and never run.
 */
export async function cli(load: readonly string[]): Promise<Command> {
  const listed = new WeakSet<Command>();
  const program = new Command('cogmesh')
    .description('cognitive wireless mesh router stack (Urban-X): sensing, channel decision, routing, OpenFlow and VNFs')
    .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
    .configureHelp({
      sortSubcommands: true,
      subcommandTerm: (cmd) => (listed.has(cmd) ? `${cmd.name()} ${LISTED[cmd.name() as SubcommandName].term}`.trimEnd() : new Help().subcommandTerm(cmd)),
    });
  const loaded = await Promise.all(load.filter(isSubcommand).map((name) => SUBCOMMANDS[name]()));
  for (const name of Object.keys(SUBCOMMANDS) as SubcommandName[]) {
    const full = loaded.find((cmd) => cmd.name() === name);
    if (full) {
      program.addCommand(full);
    } else {
      const stub = new Command(name).description(LISTED[name].about);
      listed.add(stub);
      program.addCommand(stub);
    }
  }
  return commanderAsUsage(program);
}
