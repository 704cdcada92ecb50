// Loaded into every process of a testbed by `bench/ip.ts --profile DIR` (NODE_OPTIONS=--import=<this file>,
// COGMESH_BENCH_PROFILE_DIR=DIR): the first SIGUSR2 starts V8's CPU profiler on the main thread, the next
// writes DIR/<role>-<pid>.cpuprofile (role: medium, r<i>, or the command), so that a profile covers the
// measurement window and not the start-up. Plain JavaScript: it is loaded before tsx.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.COGMESH_BENCH_PROFILE_DIR;
if (dir && isMainThread) {
  const args = process.argv.slice(2).join(' ');
  const router = /\/(r\d+)\.json\b/.exec(args);
  const role = / medium /.test(` ${args} `) ? 'medium' : router ? router[1] : (process.argv[2] ?? 'node').replace(/\W+/g, '_').slice(-40);
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 250 }, () => session.post('Profiler.start')));
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, r) => {
      if (!err && r) writeFileSync(join(dir, `${role}-${process.pid}.cpuprofile`), JSON.stringify(r.profile));
    });
  });
}
