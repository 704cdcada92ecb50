#!/usr/bin/env node
import { Command } from 'commander';
import { CogmeshError } from '../core/errors.js';
import { commanderAsUsage } from './usage.js';

/**
 * Each subcommand and the module that defines it. A run loads only the one
 * it names: `cogmesh sim` never loads ZeroMQ, WebSockets, the logger or the
 * daemon, which the other subcommands need.
 */
const SUBCOMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  node: async () => (await import('./node.js')).nodeCommand(),
  sense: async () => (await import('./sense.js')).senseCommand(),
  record: async () => (await import('./record.js')).recordCommand(),
  sim: async () => (await import('./sim.js')).simCommand(),
  config: async () => (await import('./config.js')).configCommand(),
  scenario: async () => (await import('./scenario.js')).scenarioCommand(),
  devices: async () => (await import('./devices.js')).devicesCommand(),
  ctl: async () => (await import('./ctl.js')).ctlCommand(),
  keygen: async () => (await import('./keygen.js')).keygenCommand(),
  medium: async () => (await import('./medium.js')).mediumCommand(),
  testbed: async () => (await import('./testbed.js')).testbedCommand(),
  controller: async () => (await import('./controller.js')).controllerCommand(),
};

/**
 * The `cogmesh` command line: one subcommand per job, each with its own
 * --help. With `only` (a subcommand's name), that subcommand alone; without,
 * every one (for the overall help, `help <command>` and a name that needs
 * suggestions).
 */
export async function cli(only?: string): Promise<Command> {
  const program = new Command('cogmesh')
    .description('cognitive wireless mesh router stack (Urban-X): sensing, channel decision, routing, OpenFlow and VNFs')
    .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
    .configureHelp({ sortSubcommands: true });
  const names = only !== undefined && Object.hasOwn(SUBCOMMANDS, only) ? [only] : Object.keys(SUBCOMMANDS);
  for (const cmd of await Promise.all(names.map((n) => SUBCOMMANDS[n]!()))) program.addCommand(cmd);
  return commanderAsUsage(program);
}

async function main(): Promise<void> {
  try {
    await (await cli(process.argv[2])).parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CogmeshError) {
      process.stderr.write(`cogmesh: ${e.message} [${e.code}]\n`);
      process.exit(2);
    }
    throw e;
  }
}

await main();
