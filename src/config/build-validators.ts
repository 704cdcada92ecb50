/**
 * Part of the build (`npm run build`): compiles the validator of every JSON
 * Schema cogmesh checks documents against (node configuration, scenario,
 * hardware profile) ahead of time, next to the schema module of the build,
 * with V8's code cache of it, so that no command compiles a schema or the
 * validators' code when it starts.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeStandaloneValidators } from '../core/schema.js';
import { checkNodeConfigInPlace, configFilePath, LIVE_SECTIONS, loadNodeConfig } from './load.js';
import { loadScenario } from './scenario.js';
import { loadHwProfiles } from '../hw/profiles.js';

// Each of the modules above makes its schema checker when loaded; this compiles them all.
const writeCodeCache = writeStandaloneValidators();

// The shipped documents, checked as the commands check them: their validators are then compiled, and cached.
const json = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f));
for (const f of json(configFilePath('examples'))) {
  const cfg = await loadNodeConfig(f);
  // As a live set checks them: the live sections alone, on a configuration that passed.
  checkNodeConfigInPlace(structuredClone(cfg), f, { changedSections: LIVE_SECTIONS });
}
for (const f of json(configFilePath('scenarios'))) await loadScenario(f);
loadHwProfiles();
writeCodeCache();
