#!/usr/bin/env node
import { Command } from 'commander';
import { CogmeshError } from '../core/errors.js';
import { configCommand } from './config.js';
import { controllerCommand } from './controller.js';
import { ctlCommand } from './ctl.js';
import { devicesCommand } from './devices.js';
import { keygenCommand } from './keygen.js';
import { mediumCommand } from './medium.js';
import { nodeCommand } from './node.js';
import { recordCommand } from './record.js';
import { senseCommand } from './sense.js';
import { simCommand } from './sim.js';
import { testbedCommand } from './testbed.js';

/** The `cogmesh` command line: one subcommand per job, each with its own --help. */
export function cli(): Command {
  const program = new Command('cogmesh')
    .description('cognitive wireless mesh router stack (Urban-X): sensing, channel decision, routing, OpenFlow and VNFs')
    .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ sortSubcommands: true });
  program.addCommand(nodeCommand());
  program.addCommand(senseCommand());
  program.addCommand(recordCommand());
  program.addCommand(simCommand());
  program.addCommand(configCommand());
  program.addCommand(devicesCommand());
  program.addCommand(ctlCommand());
  program.addCommand(keygenCommand());
  program.addCommand(mediumCommand());
  program.addCommand(testbedCommand());
  program.addCommand(controllerCommand());
  return program;
}

async function main(): Promise<void> {
  try {
    await cli().parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CogmeshError) {
      process.stderr.write(`cogmesh: ${e.message} [${e.code}]\n`);
      process.exit(2);
    }
    throw e;
  }
}

await main();
