/**
 * The layer rules of cogmesh (docs/architecture.md), checked by `npm run lint:deps`
 * and by `npm test`. A module may import its own layer and the layers below it,
 * never a layer above; no two modules and no two folders import each other,
 * type imports included; the hosts that run a router are siblings and none
 * imports another.
 */

/** Bottom to top. Each entry: the layer's name and the paths (regular expressions) it holds. */
const LAYERS = [
  ['core', ['^src/core/']],
  ['wire', ['^src/wire/']],
  ['protocol cores and radio', ['^src/(sensing|channel|sched|routing|tcp|vnf|openflow|hw|gateway)/', '^radio/']],
  ['configuration', ['^src/config/']],
  ['router composition', ['^src/(router|traffic)/']],
  ['hosts', ['^src/(daemon|sim|testbed|control|monitor)/']],
  ['cli', ['^src/cli/']],
];

/**
 * Where the product starts: the CLI, the worker threads it spawns by URL, the
 * monitor page's script, the udev rules generator run by hand (hw/README.md)
 * and the build's compiler of the schema validators.
 */
const ENTRY_POINTS = [
  '^src/cli/main\\.ts$',
  '^src/vnf/sandbox-worker\\.ts$',
  '^src/sim/seed-worker\\.ts$',
  '^src/monitor/page/main\\.ts$',
  '^src/hw/udev\\.ts$',
  '^src/config/build-validators\\.ts$',
];

/** The hosts that run a router, and the control plane's servers: siblings over the router. */
const HOSTS = ['daemon', 'sim', 'testbed', 'control', 'monitor'];

const upward = LAYERS.slice(0, -1).map(([name, paths], i) => ({
  name: `layer-${name.replaceAll(' ', '-')}`,
  comment: `${name} imports only its own layer and the layers below it (docs/architecture.md)`,
  severity: 'error',
  from: { path: paths },
  to: { path: LAYERS.slice(i + 1).flatMap(([, p]) => p) },
}));

const siblings = HOSTS.map((host) => ({
  name: `host-${host}-alone`,
  comment: 'the hosts are siblings over the router: the simulator, the daemon, the testbed and the control plane import none of each other',
  severity: 'error',
  from: { path: `^src/${host}/` },
  to: { path: HOSTS.filter((h) => h !== host).map((h) => `^src/${h}/`) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'two modules that import each other (type imports count): untie them',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'two folders that import each other (type imports count): one of them is in the wrong layer',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    ...upward,
    ...siblings,
    {
      name: 'no-unreachable',
      comment: 'a module none of the entry points reaches (an unused barrel, a leftover): remove it, or use it',
      severity: 'error',
      from: { path: ENTRY_POINTS },
      to: { path: ['^src/', '^radio/'], pathNot: ENTRY_POINTS, reachable: false },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'the product does not import a development dependency (it is not there after npm ci --omit=dev)',
      severity: 'error',
      from: { path: ['^src/', '^radio/'], pathNot: ['^src/monitor/browser/'] },
      to: { dependencyTypes: ['npm-dev'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
