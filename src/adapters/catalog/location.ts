import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where fxflow's data lives, decided in one place for every command and the library.
 *
 * **The catalog** a command reads or writes: `--catalog`, else the `FXFLOW_CATALOG` variable,
 * else a config file's `data.catalog` (a relative path is the config file's folder's), else
 * `data/catalog` of the working folder. Never a folder inside fxflow's package.
 *
 * **The bundled synthetic sample** is generated on first use into the user's cache
 * (`$XDG_CACHE_HOME/fxflow/sample`, or `~/.cache/fxflow/sample`). A command left at the default
 * catalog reads it when the working folder has no `data/catalog` holding anything.
 */

/** The default catalog, relative to the working folder. */
export const DEFAULT_CATALOG = 'data/catalog';
/** The environment variable naming the catalog when no `--catalog` is given. */
export const CATALOG_ENV = 'FXFLOW_CATALOG';

/** fxflow's folder in the user's cache: `$XDG_CACHE_HOME/fxflow` (an absolute path), or `~/.cache/fxflow`. */
export function userCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'fxflow');
}

/** Where the bundled synthetic sample is generated (first use) and read. */
export function sampleCatalogDir(): string {
  return join(userCacheDir(), 'sample');
}

/** `FXFLOW_CATALOG` as an absolute path, or undefined when it is not set. */
export function catalogFromEnv(): string | undefined {
  const env = process.env[CATALOG_ENV];
  return env !== undefined && env !== '' ? resolve(env) : undefined;
}

/** The catalog of a command that takes no config file (data, download, record): `--catalog`, `FXFLOW_CATALOG`, `./data/catalog`. */
export function catalogFolder(flag?: string): string {
  return flag !== undefined && flag !== '' ? resolve(flag) : (catalogFromEnv() ?? resolve(DEFAULT_CATALOG));
}

/**
 * The catalog a configuration reads (`loadConfig` has applied `--catalog`, `FXFLOW_CATALOG` and
 * the config file's folder): its `data.catalog`; left at the default, the working folder's
 * `data/catalog` when it holds anything, else the bundled sample in the user's cache.
 */
export function configCatalog(config: { readonly data: { readonly catalog: string } }): string {
  if (config.data.catalog !== DEFAULT_CATALOG) return resolve(config.data.catalog);
  const here = resolve(DEFAULT_CATALOG);
  return holdsAnything(here) ? here : sampleCatalogDir();
}

function holdsAnything(dir: string): boolean {
  if (!existsSync(dir)) return false;
  try {
    return readdirSync(dir).some((n) => !n.startsWith('.'));
  } catch {
    return true; // not a readable folder: named in the error its use gives
  }
}

/** The catalog a command that only reads it takes without a config (`data list`, `data check`): as `configCatalog`, from `--catalog` or `FXFLOW_CATALOG`. */
export function catalogToRead(flag?: string): string {
  return configCatalog({
    data: {
      catalog: flag !== undefined && flag !== '' ? resolve(flag) : (catalogFromEnv() ?? DEFAULT_CATALOG),
    },
  });
}

/**
 * The configuration with its catalog as the folder it names now (`configCatalog`): what a run or a
 * sweep records in its config.json, so that `--config <that file>` reads the same catalog from
 * any folder (a relative path there would be the run folder's).
 */
export function withCatalogResolved<T extends { readonly data: { readonly catalog: string } }>(config: T): T {
  const catalog = configCatalog(config);
  return catalog === config.data.catalog ? config : { ...config, data: { ...config.data, catalog } };
}
