import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';
import { DEFAULT_RUN_DIR, findTestbed, inNetns, type TestbedState } from '../testbed/netns.js';

interface ExecOpts {
  tag?: string;
  routerNs?: boolean;
  runDir: string;
}

/** Router `r3` or `3` of a running testbed; an unknown one is refused with the list of valid names. */
export function resolveRouter(state: TestbedState, which: string): TestbedState['routers'][number] {
  const r = state.routers.find((x) => x.name === which || (/^\d+$/.test(which) && x.index === Number(which)));
  if (r) return r;
  const names = state.routers.map((x) => x.name).join(', ');
  throw new UsageError(`testbed ${state.tag} has no router "${which}"; its routers are ${names}`);
}

/** `cogmesh testbed exec`: a command inside one of a running `testbed --netns`'s namespaces. */
export function testbedExecCommand(): Command {
  return new Command('exec')
    .description(
      "run a command in the network namespace of the client host behind a router of a running `cogmesh testbed --netns` (or, with --router-ns, in the router's own); exits with the command's status",
    )
    .argument('<router>', 'the router: r0 or 0')
    .argument('<command...>', 'the command and its arguments; put them after -- (cogmesh testbed exec r0 -- ping 10.0.1.2)')
    .option('--tag <tag>', 'the testbed (its 4-hex-digit tag); needed only when several run')
    .option('--router-ns', "run in the router's namespace instead of its client host's")
    .addOption(new Option('--run-dir <dir>', "where testbeds' state files are").default(DEFAULT_RUN_DIR).hideHelp())
    .action(async (router: string, command: string[], o: ExecOpts) => {
      const state = await findTestbed(o.tag, o.runDir);
      const r = resolveRouter(state, router);
      const [file, ...args] = command;
      if (file === undefined) throw new UsageError('no command to run');
      const cmd = inNetns(o.routerNs ? r.routerNs : r.hostNs, file, args);
      const child = spawn(cmd.execPath, cmd.args, { stdio: 'inherit' });
      // A terminal's Ctrl-C reaches the command directly (same process group); this process waits for it to finish.
      const forward = (sig: NodeJS.Signals) => () => {
        if (sig !== 'SIGINT') child.kill(sig);
      };
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, forward(sig));
      const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (c, s) => resolve({ code: c, signal: s }));
      });
      process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
}
