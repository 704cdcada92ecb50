// The test files, as `npm test` runs them (after the page's build, the type check and the
// linters): Node's test runner through tsx, in two groups.
//
//   node scripts/test.js [--list]
//
// - Files that run in real time against their own processes (testbeds, router daemons, the
//   CLI, the control API, the monitor in a browser, peer tools: `SERIAL_DIRS` and
//   `SERIAL_TEXT` below) run one at a time, as they would on a quiet machine: what they
//   measure (a flow's rate, a class's delivery) is behaviour, but behaviour that a core
//   taken by another test can move.
// - The others run in-process with no clock of the machine's (virtual time, codecs, cores,
//   the simulator) and run two files at a time. Each file is a process of its own that
//   loads tsx and its modules (close to a second of CPU): with over a hundred such files
//   that start-up is a large part of the run, and it uses both cores this way.
//
// Both groups always run; the exit code is the first nonzero one. `--list` prints each
// file with its group and runs nothing.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Folders whose every test runs real processes or sockets in real time. */
const SERIAL_DIRS = ['test/testbed/', 'test/daemon/', 'test/cli/', 'test/control/', 'test/monitor/', 'test/bench/'];
/** What in a file's text makes it real-time: processes, sockets, peers, browsers, worker threads, the machine's clock. */
const SERIAL_TEXT =
  /child_process|spawn\(|execFile|IpTestbed|startTestbed|netns|iperf3|chromium|ovs-|tshark|zeromq|node:net'|node:dgram'|WebSocket|new Worker\(|VnfSandbox|cliPath|runCli|performance\.now\(|Date\.now\(|setTimeout\(/;

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [relative(root, p)] : [];
  });
}

const files = testFiles(join(root, 'test')).sort();
const serial = (f) => SERIAL_DIRS.some((d) => f.startsWith(d)) || SERIAL_TEXT.test(readFileSync(join(root, f), 'utf8'));
const groups = [
  { name: 'in-process, two files at a time', concurrency: 2, files: files.filter((f) => !serial(f)) },
  { name: 'real time, one file at a time', concurrency: 1, files: files.filter(serial) },
];

if (process.argv.includes('--list')) {
  for (const g of groups) for (const f of g.files) process.stdout.write(`${g.concurrency === 1 ? 'serial  ' : 'parallel'} ${f}\n`);
  process.exit(0);
}

let code = 0;
for (const g of groups) {
  if (g.files.length === 0) continue;
  process.stdout.write(`\n# ${g.files.length} test files, ${g.name}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${g.concurrency}`, ...g.files], {
    cwd: root,
    stdio: 'inherit',
  });
  const c = r.status ?? 1;
  if (c !== 0 && code === 0) code = c;
}
process.exit(code);
