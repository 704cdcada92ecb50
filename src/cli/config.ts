import { Command } from 'commander';
import { configVersion, defaultNodeConfig, loadNodeConfig, schemaPath } from '../config/load.js';
import type { NodeConfig } from '../config/types.js';
import { loadHwProfiles } from '../hw/profiles.js';
import { hardwareWarnings, parseHwOption, profilesByRadio, RADIO_NAMES } from '../config/hardware.js';
import { readFile } from 'node:fs/promises';
import { UsageError } from '../core/errors.js';
import { LISTED } from './listed.js';

export function configCommand(): Command {
  const cmd = new Command('config').description(LISTED.config.about);
  cmd
    .command('check')
    .description('validate a node configuration file; prints its version hash, or every problem found')
    .argument('<file>', 'node configuration (JSON)')
    .option('--print', 'print the configuration with every default filled in')
    .option(
      '--hw <profile>',
      'also check it against a hardware profile (hw/profiles/): PROFILE for every radio, or R1=PROFILE,R2=PROFILE,R3=PROFILE; warnings do not change the exit code',
    )
    .action(async (file: string, o: { print?: boolean; hw?: string }) => {
      const cfg = await loadNodeConfig(file);
      const hw = o.hw === undefined ? undefined : parseHwOption(o.hw, loadHwProfiles());
      if (o.print) process.stdout.write(`${JSON.stringify(cfg, null, 2)}\n`);
      else process.stdout.write(`${file}: valid, version ${configVersion(cfg)}\n`);
      // With --print stdout is the configuration alone, so the hardware report goes to stderr.
      if (hw) (o.print ? process.stderr : process.stdout).write(hardwareReport(cfg, hw));
    });
  cmd
    .command('defaults')
    .description('print the default configuration of a node')
    .option('--id <n>', 'node id', '1')
    .action((o: { id: string }) => {
      // Number() would make "abc" NaN, which the schema check could only show as null.
      if (!/^\d{1,5}$/.test(o.id) || Number(o.id) > 65535) throw new UsageError(`--id: "${o.id}" is not a node id (an integer from 0 to 65535)`);
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

/** The `--hw` report: which profile each radio was checked against, then every warning or `no hardware warnings`. */
function hardwareReport(cfg: NodeConfig, hw: ReturnType<typeof parseHwOption>): string {
  const byRadio = profilesByRadio(hw);
  const names = [...new Set(RADIO_NAMES.flatMap((r) => (byRadio[r] ? [byRadio[r].profile] : [])))];
  const against =
    names.length === 1
      ? names[0]!
      : RADIO_NAMES.filter((r) => byRadio[r])
          .map((r) => `${r}=${byRadio[r]!.profile}`)
          .join(', ');
  const sim = RADIO_NAMES.filter((r) => byRadio[r] && cfg.radios[r].frontend === 'sim');
  const lines = [
    `hardware ${against}${sim.length > 0 ? ` (${sim.join(', ')} ${sim.length === 1 ? 'names' : 'name'} the sim front-end: checked as if on this hardware)` : ''}:`,
  ];
  const warnings = hardwareWarnings(cfg, hw);
  if (warnings.length === 0) lines.push('  no hardware warnings');
  for (const w of warnings) lines.push(`  warning ${w.code}${w.radio ? ` ${w.radio}` : ''} ${w.path}: ${w.message}`);
  return `${lines.join('\n')}\n`;
}
