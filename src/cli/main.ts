#!/usr/bin/env node
import { CogmeshError } from '../core/errors.js';
import { cli, namedSubcommand } from './program.js';

async function main(): Promise<void> {
  try {
    const named = namedSubcommand(process.argv.slice(2));
    await (await cli(named === undefined ? [] : [named])).parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CogmeshError) {
      process.stderr.write(`cogmesh: ${e.message} [${e.code}]\n`);
      process.exit(2);
    }
    throw e;
  }
}

await main();
