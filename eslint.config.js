// ESLint for cogmesh (`npm run lint`, part of `npm test`): the recommended rules of
// ESLint and typescript-eslint, Node's globals, and the browser's for the monitor page.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', '.bench-build/', 'test-artifacts/', 'docs/figures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // An unused binding is dead code or a bug; a leading underscore says "unused on purpose".
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Cores take randomness as an input (DESIGN.md, principle 2): Math.random only where a comment says why.
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'take an injected seeded Rng (src/core/rng.ts)' }],
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error',
      'no-var': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['src/monitor/page/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
