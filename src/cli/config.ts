import { Command } from 'commander';
import { configVersion, defaultNodeConfig, loadNodeConfig, schemaPath } from '../config/load.js';
import { readFile } from 'node:fs/promises';

export function configCommand(): Command {
  const cmd = new Command('config').description('check, show and explain node configurations');
  cmd
    .command('check')
    .description('validate a node configuration file; prints its version hash, or every problem found')
    .argument('<file>', 'node configuration (JSON)')
    .option('--print', 'print the configuration with every default filled in')
    .action(async (file: string, o: { print?: boolean }) => {
      const cfg = await loadNodeConfig(file);
      if (o.print) process.stdout.write(`${JSON.stringify(cfg, null, 2)}\n`);
      else process.stdout.write(`${file}: valid, version ${configVersion(cfg)}\n`);
    });
  cmd
    .command('defaults')
    .description('print the default configuration of a node')
    .option('--id <n>', 'node id', '1')
    .action((o: { id: string }) => {
      process.stdout.write(`${JSON.stringify(defaultNodeConfig(Number(o.id)), null, 2)}\n`);
    });
  cmd
    .command('schema')
    .description('print the JSON Schema of a node configuration')
    .action(async () => {
      process.stdout.write(await readFile(schemaPath, 'utf8'));
    });
  return cmd;
}
