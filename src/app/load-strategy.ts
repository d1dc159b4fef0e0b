import { existsSync, readFileSync } from 'node:fs';
import Module, { createRequire, register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeFile, LAYOUT, ownEntry, PACKAGE_JSON } from '../domain/package-root.ts';
import { isReservedClientID, RUNNER_ID_PREFIX } from '../domain/intents.ts';
import { HANDLER_NAMES, type ParamValue, type Params, type Strategy } from '../strategy/api.ts';
import { cachedStrategy, compileStrategy, CompileError, strategyCacheDir } from './strategy-cache.ts';

/** A strategy module that cannot be used: names the file and the problem. */
export class StrategyLoadError extends Error {
  readonly code = 'STRATEGY' as const;
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'StrategyLoadError';
  }
}

export interface LoadedStrategy {
  readonly file: string;
  readonly name: string;
  readonly strategy: Strategy<Params, unknown>;
  readonly params: Params;
}

/**
 * fxflow runs from its TypeScript sources (vitest, or bin/fxflow.js when the build is missing or
 * stale), not from the build's bundle. Then a strategy's `import 'fxflow'` reaches the same sources
 * (src/domain/package-root.ts `ownEntry`), which only a TypeScript loader can load.
 */
const FROM_SOURCE = LAYOUT === 'source';
let fallbackRegistered = false;

/**
 * Lets strategies outside the repository import `fxflow` and the packages fxflow installs: `fxflow`
 * is the running fxflow itself (`ownEntry`), and any other bare import their own folder cannot
 * resolve is resolved from fxflow's package (src/app/resolve-fallback.mjs). Registered once per
 * process, before the first strategy is imported.
 */
function registerFallback(): void {
  if (fallbackRegistered) return;
  fallbackRegistered = true;
  const own: Record<string, string> = {};
  for (const s of ownSpecifiers()) own[s] = pathToFileURL(ownEntry(s)!).href;
  register(pathToFileURL(codeFile('app/resolve-fallback.mjs')), {
    data: { parentURL: pathToFileURL(PACKAGE_JSON).href, own },
  });
  // A strategy in a folder with no `"type": "module"` package.json is compiled to CommonJS by tsx:
  // its imports become require() calls, which the hook above does not see. The same rules for them.
  const fromFxflow = createRequire(PACKAGE_JSON);
  const M = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = M._resolveFilename;
  M._resolveFilename = function resolveWithFallback(
    this: unknown,
    request: string,
    ...rest: unknown[]
  ): string {
    const mine = ownEntry(request);
    if (mine !== undefined) return mine;
    try {
      return original.call(this, request, ...rest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' || !isBare(request)) throw e;
      try {
        return fromFxflow.resolve(request);
      } catch {
        throw e;
      }
    }
  };
}

/** The specifiers fxflow's package.json exports ('fxflow', 'fxflow/backtest'), package.json itself left out. */
function ownSpecifiers(): string[] {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { exports?: Record<string, unknown> };
  return Object.keys(pkg.exports ?? {})
    .filter((k) => k === '.' || (k.startsWith('./') && !k.endsWith('.json')))
    .map((k) => (k === '.' ? 'fxflow' : `fxflow${k.slice(1)}`))
    .filter((s) => ownEntry(s) !== undefined);
}

/** A bare import specifier ('fxflow', 'technicalindicators'), not a path, URL or builtin. */
const isBare = (s: string): boolean =>
  !s.startsWith('.') &&
  !s.startsWith('/') &&
  !s.startsWith('node:') &&
  !/^[a-zA-Z][a-zA-Z+.-]*:/.test(s) &&
  !/^[a-zA-Z]:[\\/]/.test(s);

const HANDLERS = ['init', ...HANDLER_NAMES] as const;

/**
 * Imports a strategy module (TypeScript, no build step: compiled once to the strategy cache, see
 * importStrategy) and checks its default export. `overrides` are `k=v` strings from `--param`, coerced to the type of the declared
 * default; an unknown name or a value of the wrong type is an error naming the parameter.
 */
export async function loadStrategy(path: string, overrides: readonly string[] = []): Promise<LoadedStrategy> {
  const file = resolve(path);
  if (!existsSync(file))
    throw new StrategyLoadError(path, 'file not found (give a path such as strategies/sma-cross.ts)');
  let mod: { default?: unknown };
  try {
    mod = await importStrategy(file);
  } catch (e) {
    if (e instanceof CompileError) throw new StrategyLoadError(path, compileErrors(e.located) ?? e.located);
    const msg = e instanceof Error ? e.message : String(e);
    const located = compileErrors(msg);
    if (located !== undefined) throw new StrategyLoadError(path, located);
    throw new StrategyLoadError(path, `could not be loaded: ${msg.split('\n')[0]}`);
  }
  let d = mod.default as Record<string, unknown> | undefined;
  // A module loaded as CommonJS interop wraps its exports once more.
  if (d && typeof d === 'object' && !('params' in d) && 'default' in d)
    d = d.default as Record<string, unknown> | undefined;
  return checkStrategy(path, file, d, overrides, file.replace(/^.*[\\/]/, '').replace(/\.[cm]?[jt]s$/, ''));
}

let loads = 0;

/**
 * The strategy module `file`, compiled once to plain JavaScript (src/app/strategy-cache.ts) and
 * imported with no loader: the cache file when it is valid, else compiled now. Each call evaluates
 * the strategy's own modules afresh (as tsx's tsImport did), while its bare imports are the modules
 * the running fxflow loaded. With the cache off or a folder that cannot be written, tsx loads it.
 */
async function importStrategy(file: string): Promise<{ default?: unknown }> {
  const dir = strategyCacheDir();
  if (dir !== undefined) {
    const compiler = { packageJson: PACKAGE_JSON, fromSource: FROM_SOURCE };
    const compiled = cachedStrategy(dir, file, compiler) ?? (await compileStrategy(dir, file, compiler));
    if (compiled !== undefined && FROM_SOURCE && compiled.format === 'esm') {
      // It imports fxflow's TypeScript sources, which only a TypeScript loader can load (vitest
      // has none in Node's loader; bin/fxflow.js runs them through tsx anyway): tsx, on them alone.
      const { tsImport } = await import('tsx/esm/api');
      return (await tsImport(compiled.file, import.meta.url)) as { default?: unknown };
    }
    // From the sources, a CommonJS strategy's require() of them needs tsx's CommonJS loader as the
    // strategy's own file has it (a compiled .cjs is required past it): loaded as before.
    if (compiled !== undefined && !FROM_SOURCE) {
      // A strategy's stack points into its own file, not the cache's (the code carries its source map).
      process.setSourceMapsEnabled(true);
      // A new URL is a new ES module; CommonJS is kept by file name, so its entry is dropped first.
      if (compiled.format === 'cjs') delete createRequire(import.meta.url).cache[compiled.file];
      const url = `${pathToFileURL(compiled.file).href}?load=${++loads}`;
      return (await import(url)) as { default?: unknown };
    }
  }
  registerFallback();
  // tsImport loads TypeScript with no build step wherever the file lives (also outside a
  // "type": "module" package, where a .ts file would otherwise be read as CommonJS).
  // tsx is loaded here, when a strategy module is, not when fxflow starts.
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(file, import.meta.url)) as { default?: unknown };
}

/**
 * A strategy object given directly (a script's `defineStrategy({ ... })`, not a file): the same
 * checks as a module's default export. `label` names it in errors.
 */
export function strategyFromObject(
  strategy: unknown,
  overrides: readonly string[] = [],
  label = '(strategy object)',
): LoadedStrategy {
  return checkStrategy(label, label, strategy, overrides, 'strategy');
}

function checkStrategy(
  path: string,
  file: string,
  d: unknown,
  overrides: readonly string[],
  defaultName: string,
): LoadedStrategy {
  const s = d as Partial<Strategy<Params, unknown>> | undefined;
  if (!s || typeof s !== 'object' || (s.params === undefined && s.subscribe === undefined)) {
    const found = s && typeof s === 'object' ? Object.keys(s).filter((k) => k !== 'default') : [];
    throw new StrategyLoadError(
      path,
      `has no default export that is a strategy: end the module with \`export default defineStrategy({ ... })\`${found.length ? ` (it exports: ${found.join(', ')})` : ''}`,
    );
  }
  if (!s.params || typeof s.params !== 'object')
    throw new StrategyLoadError(
      path,
      'the strategy has no `params` object (use `params: {}` when it takes none)',
    );
  if (!s.subscribe || (typeof s.subscribe !== 'object' && typeof s.subscribe !== 'function')) {
    throw new StrategyLoadError(
      path,
      "the strategy has no `subscribe` (e.g. `subscribe: { candles: ['EUR_USD:H1'] }`)",
    );
  }
  for (const h of HANDLERS) {
    const f = (s as Record<string, unknown>)[h];
    if (f !== undefined && typeof f !== 'function')
      throw new StrategyLoadError(path, `\`${h}\` must be a function`);
  }
  for (const [k, v] of Object.entries(s.params)) {
    if (typeof v !== 'number' && typeof v !== 'string' && typeof v !== 'boolean') {
      throw new StrategyLoadError(path, `param '${k}' must default to a number, string or boolean`);
    }
  }
  const params = applyParams(path, s.params as Params, overrides);
  const name = s.name ?? defaultName;
  // Its client IDs are `<name>-…`: they must stay out of the runner's own namespace (kill switch, flatten).
  if (isReservedClientID(`${name}-`))
    throw new StrategyLoadError(
      path,
      `the strategy's name '${name}' would make client IDs starting '${RUNNER_ID_PREFIX}', which are reserved for the runner's own closes and cancels (kill switch, flatten): give the strategy another \`name\``,
    );
  return { file, name, strategy: s as Strategy<Params, unknown>, params };
}

/**
 * The errors of a module that did not compile (esbuild's `file:line:column: ERROR: text` lines, as
 * tsx reports them and the strategy cache's compile writes them), each with its line of source and a caret under the column; undefined when the
 * message holds none.
 */
export function compileErrors(message: string): string | undefined {
  const out: string[] = [];
  const re = /^(.+?):(\d+):(\d+): ERROR: (.*)$/gm;
  let n = 0;
  for (let m = re.exec(message); m !== null; m = re.exec(message)) {
    if (++n > 5) break;
    const [, file, line, column, text] = m as unknown as [string, string, string, string, string];
    // An import esbuild could not resolve is no syntax error.
    const what = /^(Could not resolve|Cannot find package)/.test(text) ? 'import error' : 'syntax error';
    out.push(`${what}: ${text}`, `  at ${file}:${line}:${Number(column) + 1}`);
    let src: string | undefined;
    try {
      src = readFileSync(file, 'utf8').split(/\r?\n/)[Number(line) - 1];
    } catch {
      src = undefined;
    }
    if (src !== undefined) {
      const gutter = `  ${line} | `;
      out.push(`${gutter}${src}`, `${' '.repeat(gutter.length - 2)}| ${' '.repeat(Number(column))}^`);
    }
  }
  if (out.length === 0) return undefined;
  const total = (message.match(re) ?? []).length;
  if (total > 5) out.push(`(and ${total - 5} more)`);
  return out.join('\n');
}

/** Applies `k=v` overrides to the declared params, coercing each to its default's type. */
export function applyParams(file: string, defaults: Params, overrides: readonly string[]): Params {
  const out: Record<string, ParamValue> = { ...defaults };
  for (const o of overrides) {
    const eq = o.indexOf('=');
    if (eq <= 0) throw new StrategyLoadError(file, `--param '${o}' must look like name=value`);
    const key = o.slice(0, eq);
    const raw = o.slice(eq + 1);
    if (!(key in defaults)) {
      throw new StrategyLoadError(
        file,
        `unknown param '${key}'; this strategy declares: ${Object.keys(defaults).join(', ') || '(none)'}`,
      );
    }
    const d = defaults[key];
    if (typeof d === 'number') {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n))
        throw new StrategyLoadError(file, `param '${key}' must be a number (got '${raw}')`);
      out[key] = n;
    } else if (typeof d === 'boolean') {
      if (raw !== 'true' && raw !== 'false')
        throw new StrategyLoadError(file, `param '${key}' must be true or false (got '${raw}')`);
      out[key] = raw === 'true';
    } else out[key] = raw;
  }
  return out;
}
