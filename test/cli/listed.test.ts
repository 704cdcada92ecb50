import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LISTED } from '../../src/cli/listed.js';
import { cli, namedSubcommand } from '../../src/cli/program.js';

const names = Object.keys(LISTED);

test('the overall help from the listing alone is the help of the whole command tree', async () => {
  // Names, terms ([options], arguments) and descriptions: a subcommand that gains an argument or
  // loses its last option needs its LISTED term changed with it.
  const bare = await cli([]);
  const whole = await cli(names);
  assert.equal(bare.helpInformation(), whole.helpInformation());
});

test('each listed subcommand loads as the command of that name, with its options and arguments', async () => {
  for (const name of names) {
    const program = await cli([name]);
    const sub = program.commands.find((c) => c.name() === name)!;
    // The whole command, not the listing's stand-in: it runs something or has commands of its own.
    assert.ok(sub.options.length > 0 || sub.commands.length > 0, name);
    assert.match(sub.helpInformation(), new RegExp(`^Usage: cogmesh ${name} `), name);
  }
});

test('the subcommand a command line names, if any', () => {
  assert.equal(namedSubcommand(['sim', 'x.json', '--duration', '1']), 'sim');
  assert.equal(namedSubcommand(['help', 'ctl']), 'ctl');
  assert.equal(namedSubcommand(['help']), undefined);
  assert.equal(namedSubcommand([]), undefined);
  assert.equal(namedSubcommand(['--version']), '--version');
});
