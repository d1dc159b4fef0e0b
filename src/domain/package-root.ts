import { readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where fxflow's own files are, in every form it runs in. The one place that knows: every module
 * that reads a file shipped with fxflow (data/instruments.json, data/market-calendar.json,
 * config/, the report page's scripts and styles, the sweep worker's entry, the strategy resolver)
 * asks here, never its own `import.meta.url`, because a module's own place differs between forms:
 *
 * - `source`: the TypeScript sources run as they are (vitest, or bin/fxflow.js through tsx when
 *   the build is stale); a module is `src/<folder>/<file>.ts`.
 * - `bundle`: the build (`scripts/build.mjs`): esbuild's bundle in `dist/bundle/`, one entry per
 *   use (the command line, the library, the worker thread) and chunks shared between them; a
 *   module's code sits in whichever chunk esbuild put it. The files TypeScript does not compile
 *   are copied to `dist/` at their place under `src/` (`dist/report/page/…`).
 *
 * The package root is the nearest folder above this module holding fxflow's package.json, found
 * the same way in either form (and in an installed package, where it is node_modules/fxflow).
 */

/** Set to true by the build's bundler (esbuild `define`); no such global exists otherwise. */
declare const FXFLOW_BUNDLE: boolean | undefined;

export type Layout = 'source' | 'bundle';

/** The form this process's fxflow runs in. */
export const LAYOUT: Layout =
  typeof FXFLOW_BUNDLE !== 'undefined' && FXFLOW_BUNDLE === true ? 'bundle' : 'source';

function findRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let d = here; ; d = dirname(d)) {
    try {
      const pkg = JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'fxflow') return d;
    } catch {
      // no package.json here (src/, dist/bundle/): one folder up
    }
    if (dirname(d) === d)
      throw new Error(
        `fxflow: no package.json named "fxflow" above ${here}: reinstall fxflow (its files are incomplete)`,
      );
  }
}

/** fxflow's package root: where package.json, bin/, config/, data/ and dist/ (or src/) are. */
export const PACKAGE_ROOT: string = findRoot();
/** fxflow's own package.json. */
export const PACKAGE_JSON: string = join(PACKAGE_ROOT, 'package.json');
/** The folder of fxflow's running code and of the files shipped beside it: src/, or dist/ for the build. */
export const CODE_DIR: string = join(PACKAGE_ROOT, LAYOUT === 'source' ? 'src' : 'dist');

/** A file of fxflow's package, by its path from the package root ('data/instruments.json'). */
export const packageFile = (rel: string): string => resolve(PACKAGE_ROOT, rel);

/**
 * A file that lives beside the code, by its path under src/ ('report/page', 'app/resolve-fallback.mjs'):
 * src/<rel> from the sources, dist/<rel> in the build (which copies them there).
 */
export const codeFile = (rel: string): string => join(CODE_DIR, rel);

/** Whether `file` (a path or a file: URL, as stack frames name it) is fxflow's own running code. */
export const isOwnCode = (file: string): boolean =>
  file.includes(`${CODE_DIR}${sep}`) || file.includes(`file://${CODE_DIR}${sep}`);

/**
 * The file fxflow's package.json (`packageJson`) exports for 'fxflow' or 'fxflow/<subpath>' in
 * `layout` (`fxflow-source` from the sources, `default` in the build); undefined for any other
 * specifier, or a subpath it does not export.
 */
export function exportedFile(packageJson: string, specifier: string, layout: Layout): string | undefined {
  if (specifier !== 'fxflow' && !specifier.startsWith('fxflow/')) return undefined;
  const exports =
    packageJson === PACKAGE_JSON ? (ownExports ??= exportsOf(packageJson)) : exportsOf(packageJson);
  const entry = exports?.[specifier === 'fxflow' ? '.' : `.${specifier.slice('fxflow'.length)}`];
  const target =
    typeof entry === 'string'
      ? entry
      : (entry as Record<string, unknown> | undefined)?.[layout === 'source' ? 'fxflow-source' : 'default'];
  return typeof target === 'string' ? resolve(dirname(packageJson), target) : undefined;
}
let ownExports: Record<string, unknown> | undefined;
const exportsOf = (packageJson: string): Record<string, unknown> | undefined =>
  (JSON.parse(readFileSync(packageJson, 'utf8')) as { exports?: Record<string, unknown> }).exports;

/**
 * The file the running fxflow is, for an import of 'fxflow' or 'fxflow/<subpath>' (undefined for any
 * other specifier): what its package.json exports for this form. A strategy's `import 'fxflow'`
 * is given this file wherever the strategy lives, so it shares the running fxflow's modules (one
 * copy of each class and of any state) instead of loading another fxflow beside it.
 */
export const ownEntry = (specifier: string): string | undefined =>
  exportedFile(PACKAGE_JSON, specifier, LAYOUT);
