/**
 * `bench/ip.ts --profile DIR`: the environment that loads
 * profile-preload.mjs into a testbed's processes, and a summary of the
 * .cpuprofile files they write: per process, where the main thread's
 * samples fell (self time), by source file and by function.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a testbed's processes need in their environment to be profiled into `dir`. */
export function profileEnv(dir: string): Record<string, string> {
  const preload = fileURLToPath(new URL('./profile-preload.mjs', import.meta.url));
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim(), COGMESH_BENCH_PROFILE_DIR: dir };
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** Sends SIGUSR2 to each process (starts, then stops and writes, its profile). */
export function toggleProfiles(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGUSR2');
    } catch {
      // gone
    }
  }
}

const where = (url: string): string => {
  if (url === '') return '(native/V8)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const rel = relative(ROOT, path);
  return rel.startsWith('node_modules/')
    ? rel
        .split('/')
        .slice(0, rel.startsWith('node_modules/@') ? 3 : 2)
        .join('/')
    : rel.startsWith('..')
      ? path
      : rel;
};

/** Lines summing up the profiles in `dir` whose names start with `prefix`: the top files and functions by self time. */
export function summarizeProfiles(dir: string, prefix = '', top = 8): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.cpuprofile') && n.startsWith(prefix))
    .sort()) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    // A sample's place: its JavaScript function; a native function (the profiler names them poorly) counts for the JavaScript that called it.
    // Samples under the preload's own calls (the profile being taken) are left out.
    const placeOf = new Map<number, { file: string; fn: string } | null>();
    const place = (id: number): { file: string; fn: string } | null => {
      const known = placeOf.get(id);
      if (known !== undefined) return known;
      let q: number | undefined = id;
      let nativeCall = false;
      let found: { file: string; fn: string } | null = null;
      while (q !== undefined) {
        const cf = byId.get(q)!.callFrame;
        if (cf.url.endsWith('profile-preload.mjs')) return (placeOf.set(id, null), null);
        if (found === null) {
          if (cf.functionName.startsWith('(') && q === id) found = { file: cf.functionName, fn: cf.functionName };
          else if (cf.url !== '') {
            const file = where(cf.url);
            found = {
              file: nativeCall ? `${file} (native calls)` : file,
              fn: `${nativeCall ? 'native call in ' : ''}${cf.functionName || '(anonymous)'} (${file})`,
            };
          } else nativeCall = true;
        }
        q = parent.get(q);
      }
      found ??= { file: '(native/V8)', fn: '(native/V8)' };
      placeOf.set(id, found);
      return found;
    };
    const files = new Map<string, number>();
    const fns = new Map<string, number>();
    let total = 0;
    p.samples.forEach((id, i) => {
      const us = p.timeDeltas[i] ?? 0;
      if (byId.get(id)?.callFrame.functionName === '(idle)') return;
      const at = place(id);
      if (at === null) return;
      total += us;
      files.set(at.file, (files.get(at.file) ?? 0) + us);
      fns.set(at.fn, (fns.get(at.fn) ?? 0) + us);
    });
    const pct = (us: number): string => `${((100 * us) / Math.max(1, total)).toFixed(1)}%`;
    const list = (m: Map<string, number>): string =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, v]) => `${pct(v)} ${k}`)
        .join('; ');
    out.push(`  ${f}: ${(total / 1e6).toFixed(2)} s busy on the main thread`, `    files: ${list(files)}`, `    functions: ${list(fns)}`);
  }
  return out;
}
