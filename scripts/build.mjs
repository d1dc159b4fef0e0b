// `npm run build` (also `prepare`: after `npm ci` in a clone and before `npm pack`): compiles src/
// into dist/ (JavaScript and .d.ts, tsconfig.build.json), copies the files TypeScript does not emit
// (the worker's and the resolver's .mjs, the report page's scripts and styles), and stamps the build
// with its inputs (scripts/build-stamp.mjs). A build that is already current is not redone
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
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', tmp], {
    cwd: root,
    stdio: ['ignore', 2, 2],
  });
} catch {
  rmSync(tmp, { recursive: true, force: true });
  console.error('fxflow build: tsc failed (above); dist/ was left as it was');
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
