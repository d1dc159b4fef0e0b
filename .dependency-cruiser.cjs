// The import rules of docs/architecture.md, checked by `npm run lint:deps` (dependency-cruiser).
// Imports point down: domain <- ports <- strategy <- engine <- runner <- app <- research <- cli;
// the adapters on domain and ports only; report beside the runner; the sandbox beside the CLI.
// No circular imports, type-only ones included. A rule's exceptions are named one by one, each
// with its reason, never by switching the rule off.

/** A path under src/ in one of the named folders. */
const under = (...dirs) => `^src/(${dirs.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No circular imports (type-only ones included): a circle makes the load order matter and the parts impossible to name apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-nothing-above',
      severity: 'error',
      comment: 'src/domain is the bottom: values and rules with no I/O import nothing else of fxflow.',
      from: { path: under('domain') },
      to: { path: '^src/', pathNot: under('domain') },
    },
    {
      name: 'ports-on-domain-only',
      severity: 'error',
      comment: 'src/ports: the interfaces, over the domain only.',
      from: { path: under('ports') },
      to: { path: '^src/', pathNot: under('domain', 'ports') },
    },
    {
      name: 'strategy-on-domain-and-ports',
      severity: 'error',
      comment: 'src/strategy/api.ts is all a strategy imports: the domain and the ports, nothing that runs.',
      from: { path: under('strategy') },
      to: { path: '^src/', pathNot: under('domain', 'ports', 'strategy') },
    },
    {
      name: 'engine-below-the-compositions',
      severity: 'error',
      comment: 'The engine does not know which mode it runs in: domain, ports and the strategy API only.',
      from: { path: under('engine') },
      to: { path: '^src/', pathNot: under('domain', 'ports', 'strategy', 'engine') },
    },
    {
      name: 'adapters-on-domain-and-ports',
      severity: 'error',
      comment: 'An adapter depends on the domain and the ports only, and on no other adapter.',
      from: {
        path: '^src/adapters/([^/]+)/',
        pathNot: ['^src/adapters/catalog/labs-items\\.ts$', '^src/adapters/v20/download\\.ts$'],
      },
      to: { path: '^src/', pathNot: [under('domain', 'ports'), '^src/adapters/$1/'] },
    },
    {
      name: 'adapters-exception-labs-items',
      severity: 'error',
      comment:
        'Named exception to adapters-on-domain-and-ports: the catalog stores recorded labs items as the v20 labs adapter converts them ' +
        '(one converter, not two); catalog/labs-items.ts reaches v20/labs.ts and no other part of another adapter.',
      from: { path: '^src/adapters/catalog/labs-items\\.ts$' },
      to: {
        path: '^src/',
        pathNot: [under('domain', 'ports', 'adapters/catalog'), '^src/adapters/v20/labs\\.ts$'],
      },
    },
    {
      name: 'adapters-exception-download',
      severity: 'error',
      comment:
        'Named exception to adapters-on-domain-and-ports: the historical download writes into the catalog; v20/download.ts reaches ' +
        'catalog/catalog.ts (a type) and catalog/gate.ts (every page passes the one price gate before it is written), and no ' +
        'other part of another adapter.',
      from: { path: '^src/adapters/v20/download\\.ts$' },
      to: {
        path: '^src/',
        pathNot: [
          under('domain', 'ports', 'adapters/v20'),
          '^src/adapters/catalog/catalog\\.ts$',
          '^src/adapters/catalog/gate\\.ts$',
        ],
      },
    },
    {
      name: 'runner-below-app',
      severity: 'error',
      comment:
        'src/runner (the live composition) sits below src/app, src/research, the report pages, the CLI and the sandbox.',
      from: { path: under('runner') },
      to: { path: under('app', 'research', 'report', 'cli', 'sandbox') },
    },
    {
      name: 'report-below-app',
      severity: 'error',
      comment:
        'src/report (the pages) reads the engine, the domain and the run folders; it does not compose runs.',
      from: { path: under('report'), pathNot: '^src/report/sweep-model\\.ts$' },
      to: { path: under('app', 'research', 'runner', 'cli', 'sandbox') },
    },
    {
      name: 'report-sweep-page-names-the-trial-command',
      severity: 'error',
      comment:
        'Named exception: the sweep page (report/sweep-model.ts) shows the command that reruns a trial, built by research/trial-command.ts (one builder of it); ' +
        'it imports nothing else of research, app or the runner.',
      from: { path: '^src/report/sweep-model\\.ts$' },
      to: {
        path: under('app', 'research', 'runner', 'cli', 'sandbox'),
        pathNot: '^src/research/trial-command\\.ts$',
      },
    },
    {
      name: 'app-below-research',
      severity: 'error',
      comment:
        'src/app (the composition roots) is composed by src/research and the CLI, never the other way.',
      from: { path: under('app') },
      to: { path: under('research', 'cli', 'sandbox') },
    },
    {
      name: 'research-below-cli',
      severity: 'error',
      comment: 'src/research composes src/app; the CLI and the sandbox are above it.',
      from: { path: under('research') },
      to: { path: under('cli', 'sandbox') },
    },
    {
      name: 'sandbox-on-adapters',
      severity: 'error',
      comment:
        'The sandbox composes the simulator and the catalog as the CLI does: nothing of the runner, app, research, report or CLI.',
      from: { path: under('sandbox') },
      to: { path: under('runner', 'app', 'research', 'report', 'cli') },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      comment: 'src/cli is the top: no other part imports it.',
      from: { path: '^src/', pathNot: under('cli') },
      to: { path: under('cli') },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.test\\.ts$', '\\.testkit\\.ts$', '^src/.*/testkit\\.ts$'] },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['fxflow-source', 'import', 'default'],
      extensions: ['.ts', '.mjs', '.js'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
