/**
 * Part of the build (`npm run build`): compiles the validator of every JSON
 * Schema cogmesh checks documents against (node configuration, scenario,
 * hardware profile) ahead of time into `dist/src/core/schema-validators.cjs`,
 * so that no command compiles a schema when it starts.
 */
import { writeFileSync } from 'node:fs';
import { standaloneValidators, standaloneValidatorsPath } from '../core/schema.js';
// Each of these makes its schema checker when loaded; standaloneValidators compiles them all.
import './load.js';
import './scenario.js';
import '../hw/profiles.js';

writeFileSync(standaloneValidatorsPath, standaloneValidators());
