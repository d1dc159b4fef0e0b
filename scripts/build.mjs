// `npm run build` (also `prepare`: after `npm ci` in a clone and before `npm pack`): type-checks
// src/ and writes its declarations into dist/ (.d.ts, tsconfig.build.json), bundles it with esbuild
// into dist/bundle/ (below), copies the files that are not compiled to their place under dist/ (the
// resolver's .mjs, the report page's scripts and styles), and stamps the build with its inputs
// (scripts/build-stamp.mjs).
//
// The bundle is the JavaScript fxflow runs: one ES-module entry per use, sharing chunks (code
// splitting), so each use loads its own code and nothing else:
//   cli.js        the command line (bin/fxflow.js); each command's code is a chunk of its own,
//                 loaded by the command's `import()` in src/cli/main.ts;
//   v8-tuning.js  fxflow's V8 settings, applied by bin/fxflow.js before anything else loads;
//   index.js      `import 'fxflow'` (package.json `exports`), also a strategy's, which is given
//                 this very file (src/domain/package-root.ts `ownEntry`): the same modules, the
//                 same classes as the command that runs it;
//   library.js    `import 'fxflow/backtest'`;
//   worker.js     a sweep's worker thread (src/research/pool.ts).
// Packages are bundled too (yargs' many small modules were most of a start), except those that
// find their own files from their own place or load only on demand (EXTERNAL). A build that is already current is not redone
// (`--force` redoes it). dist/ is replaced by renames, so a run never sees half a build. It reports
// on stderr: stdout is npm's (`npm pack --json`).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP, buildInputs, buildState, stampOf } from './build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');

/**
 * Packages left out of the bundle: loaded only on demand by name (tsx, esbuild and TypeScript for
 * a strategy's first compile and type check; technicalindicators on a strategy's first indicator of
 * its kinds; lightweight-charts is read as a file, never imported), or finding files from their own
 * folder (BullMQ's Lua scripts), or large and used only by the live commands (undici).
 */
const EXTERNAL = [
  'tsx',
  'esbuild',
  'typescript',
  'technicalindicators',
  'lightweight-charts',
  'bullmq',
  'ioredis',
  'undici',
];

/**
 * yargs' platform shim (node_modules/yargs/lib/platform-shims/esm.mjs) is bundled with three of its
 * imports given by fxflow instead:
 * - cliui and string-width are loaded on their first call, from yargs' own folder: only help text
 *   calls them, and their module-level Unicode tables (string-width's regular expressions, an
 *   Intl.Segmenter) cost every start;
 * - y18n is pointed at yargs' own locales/: the shim finds them from its own place, which the
 *   bundle moves (the messages would fall back to their keys, and no other language would load).
 */
const fromYargs = `import { createRequire } from 'node:module';
const fromYargs = () => createRequire(createRequire(import.meta.url).resolve('yargs/package.json'));`;
const yargsShim = {
  name: 'fxflow-yargs-shim',
  setup(build) {
    build.onResolve({ filter: /^(cliui|string-width|y18n)$/ }, (args) =>
      /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]/.test(args.importer)
        ? { path: args.path, namespace: 'fxflow-yargs-shim', pluginData: args.resolveDir }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'fxflow-yargs-shim' }, (args) => ({
      resolveDir: args.pluginData,
      loader: 'js',
      contents:
        args.path === 'y18n'
          ? `import y18n from 'y18n';
import { dirname, join } from 'node:path';
${fromYargs}
export default (opts) => y18n({ ...opts, directory: join(dirname(fromYargs().resolve('yargs/package.json')), 'locales') });`
          : `${fromYargs}
let real;
export default function lazy(...args) {
  // require() of an ES module: its namespace, or what it exports as 'module.exports' (cliui).
  if (real === undefined) {
    const m = fromYargs()(${JSON.stringify(args.path)});
    real = typeof m === 'function' ? m : m.default;
  }
  return real(...args);
}`,
    }));
  },
};

async function bundle(outdir) {
  const esbuild = await import('esbuild');
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: {
      cli: 'src/cli/main.ts',
      'v8-tuning': 'src/cli/v8-tuning.ts',
      index: 'src/index.ts',
      library: 'src/app/library.ts',
      worker: 'src/research/worker.ts',
    },
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node's own `require` for the CommonJS packages bundled in (their require() of Node's modules).
    banner: {
      js: "import { createRequire as __fxflowCreateRequire } from 'node:module';\nconst require = __fxflowCreateRequire(import.meta.url);",
    },
    // src/domain/package-root.ts: the code knows it runs from the bundle.
    define: { FXFLOW_BUNDLE: 'true' },
    external: EXTERNAL.flatMap((p) => [p, `${p}/*`]),
    // Class and function names as in the sources (errors, stack traces, `constructor.name`).
    keepNames: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [yargsShim],
  });
}

// An installed package (no src/: npm runs `prepare` when a project links it with a `file:`
// dependency, as `fxflow init` projects do) ships its build: nothing to do.
if (!existsSync(join(root, 'src'))) {
  console.error('fxflow build: no src/ here (an installed package): dist/ is its build');
  process.exit(0);
}

if (!force && buildState(root).current) {
  console.error('fxflow build: dist/ is current');
  process.exit(0);
}

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  console.error('fxflow build: TypeScript is not installed (run `npm ci` first)');
  process.exit(1);
}

// The inputs as they are before compiling: an edit made during the build leaves the stamp
// describing older sources, so the next check finds the build stale rather than current.
const stamp = stampOf(root);
const tmp = join(root, `dist.tmp-${process.pid}`);
rmSync(tmp, { recursive: true, force: true });
const t0 = Date.now();
try {
  execFileSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', tmp, '--emitDeclarationOnly'],
    {
      cwd: root,
      stdio: ['ignore', 2, 2],
    },
  );
} catch {
  rmSync(tmp, { recursive: true, force: true });
  console.error('fxflow build: tsc failed (above); dist/ was left as it was');
  process.exit(1);
}
try {
  await bundle(join(tmp, 'bundle'));
} catch (e) {
  rmSync(tmp, { recursive: true, force: true });
  console.error(
    `fxflow build: esbuild failed: ${e instanceof Error ? e.message : e}; dist/ was left as it was`,
  );
  process.exit(1);
}
for (const rel of buildInputs(root)) {
  if (!rel.startsWith('src/') || rel.endsWith('.ts')) continue;
  const to = join(tmp, relative('src', rel));
  mkdirSync(dirname(to), { recursive: true });
  cpSync(join(root, rel), to);
}
writeFileSync(join(tmp, STAMP), `${JSON.stringify(stamp)}\n`);
// The old build is moved aside in one rename and deleted after the new one is in place: a run
// starting meanwhile finds either a whole build or none (and then runs the sources).
const dist = join(root, 'dist');
const old = join(root, `dist.old-${process.pid}`);
if (existsSync(dist)) renameSync(dist, old);
try {
  renameSync(tmp, dist);
} catch (e) {
  // Another build finished first: its dist/ stands.
  rmSync(tmp, { recursive: true, force: true });
  if (!existsSync(dist)) throw e;
}
rmSync(old, { recursive: true, force: true });
const files = readdirSync(dist, { recursive: true }).length;
console.error(`fxflow build: dist/ (${files} files) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
