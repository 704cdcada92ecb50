#!/usr/bin/env node
// The cogmesh command: runs the compiled CLI (npm ci builds it; `npm run build` after changes).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('cogmesh: not built yet: run `npm run build` in the package folder\n');
  process.exit(1);
}
await import(main);
