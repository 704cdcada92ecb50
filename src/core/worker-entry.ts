/**
 * The entry URL of a worker thread whose module is `file` (a base name,
 * e.g. 'seed-worker') next to the module at `here` (its import.meta.url).
 * Built, it is the JavaScript file. Under tsx (tests, development) a worker
 * does not inherit tsx's loader, so the entry is a small module that
 * registers it first and then imports the TypeScript worker.
 */
export function workerEntry(here: string, file: string): URL {
  if (!here.endsWith('.ts')) return new URL(`./${file}.js`, here);
  const tsx = import.meta.resolve('tsx/esm/api');
  const worker = new URL(`./${file}.ts`, here).href;
  const code = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(worker)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
