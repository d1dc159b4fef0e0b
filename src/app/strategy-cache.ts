import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { userCacheDir } from '../adapters/catalog/location.ts';
import { exportedFile } from '../domain/package-root.ts';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The compiled-strategy cache: a strategy module and the local files it imports (its relative
 * import graph) are compiled once by esbuild, the compiler tsx uses, into one plain JavaScript file,
 * which later runs import with `import()`: no TypeScript loader, no module-hooks thread (about 0.17 s
 * of CPU a run), no esbuild.
 *
 * **Bare imports** are resolved when the file is compiled and written into the output as absolute
 * file URLs (paths in CommonJS output): the compiled strategy imports the very modules the running
 * fxflow loaded. `fxflow` and its subpaths are the running fxflow's own entry (its bundle, or its
 * sources when it runs from them: src/domain/package-root.ts), wherever the strategy lives; other
 * packages (`technicalindicators`, one in the strategy's own node_modules) as Node resolves them at
 * run time (the importer's folder first, then fxflow's package, as src/app/resolve-fallback.mjs does).
 *
 * **Format**, as tsx chooses it: `.mts` is an ES module, `.cts` CommonJS, and `.ts` follows the
 * `type` of the nearest package.json (CommonJS when it is not `module`, or there is none).
 *
 * **Where.** `<FXFLOW_DATA_CACHE>/strategies/` when that variable names a folder (`off` turns this
 * cache off too), else `$XDG_CACHE_HOME/fxflow/strategies` (`~/.cache/fxflow/strategies`).
 *
 * **Keyed** by the strategy's path, fxflow's version and folder, whether fxflow runs from its
 * sources, Node's version (the compile target) and this compiler's version: one file per key. Its
 * last line (after the code, so that the code's source map still starts at its first line) records
 * every file the output depends on with its SHA-256: each local module compiled into it, the
 * package.json and tsconfig.json that decide its format and options, the package.json of each
 * package it imports, and, as absent, each node_modules folder that would shadow a package if it
 * appeared; and the SHA-256 of the code before it.
 *
 * **Checked on every use**: every recorded file is read and hashed (a strategy's files are a few
 * KB) and the code hashed; any difference and the strategy is compiled again, never the old code
 * run. **Written** to a temporary file and renamed into place: a write cut short by `kill -9` is
 * never at the cache's name, and a truncated file fails its code hash anyway.
 */

/** Bumped when what this file writes changes: every older cache file is compiled again. */
export const COMPILER_VERSION = 2;

/** The cache folder, or undefined when `FXFLOW_DATA_CACHE=off`. */
export function strategyCacheDir(): string | undefined {
  const env = process.env.FXFLOW_DATA_CACHE;
  if (env === 'off' || env === '0') return undefined;
  if (env !== undefined && env !== '') return join(resolve(env), 'strategies');
  return join(userCacheDir(), 'strategies');
}

/** Who compiles: fxflow's package.json, and whether it runs from its sources (`fxflow-source`). */
export interface Compiler {
  readonly packageJson: string;
  readonly fromSource: boolean;
}

/** A file the compiled code depends on: its SHA-256, or null for a path that must stay absent. */
interface Input {
  readonly path: string;
  readonly sha256: string | null;
}

/** The first line of a cache file. */
interface Manifest {
  readonly key: string;
  readonly format: 'esm' | 'cjs';
  readonly inputs: readonly Input[];
  readonly code: string;
}

/** A cache file found valid: import `file` (its code's format is `format`). */
export interface Compiled {
  readonly file: string;
  readonly format: 'esm' | 'cjs';
}

/** How the last lookup went (for the tests and the bench). */
export const strategyCacheStats = { hits: 0, builds: 0, rebuilds: 0 };

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

function hashOf(path: string): string | null {
  try {
    return sha256(readFileSync(path));
  } catch {
    return null;
  }
}

/** The identity of a compile of `file` by this fxflow: the cache file's name and its manifest's key. */
function keyOf(file: string, c: Compiler): string {
  let version = '';
  try {
    version = (JSON.parse(readFileSync(c.packageJson, 'utf8')) as { version?: string }).version ?? '';
  } catch {
    // no version: the folder and the rest still tell builds apart
  }
  return sha256(
    [COMPILER_VERSION, version, c.packageJson, c.fromSource, process.versions.node, file].join('\0'),
  ).slice(0, 32);
}

/** The cache file of `file`, found valid, or undefined (missing, stale, damaged: compile again). */
export function cachedStrategy(dir: string, file: string, c: Compiler): Compiled | undefined {
  const key = keyOf(file, c);
  for (const format of ['esm', 'cjs'] as const) {
    const path = join(dir, `${key}.${format === 'esm' ? 'mjs' : 'cjs'}`);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    if (valid(text, key)) {
      strategyCacheStats.hits++;
      return { file: path, format };
    }
    strategyCacheStats.rebuilds++;
    return undefined;
  }
  return undefined;
}

function valid(text: string, key: string): boolean {
  // The manifest is the last line: `// {...}\n`, written after the code.
  const at = text.lastIndexOf('\n// {', text.length - 2);
  if (at < 0 || !text.endsWith('}\n')) return false;
  let m: Manifest;
  try {
    m = JSON.parse(text.slice(at + 4, -1)) as Manifest;
  } catch {
    return false;
  }
  if (m.key !== key || !Array.isArray(m.inputs) || m.code !== sha256(text.slice(0, at + 1))) return false;
  for (const i of m.inputs) {
    if (i.sha256 === null ? existsSync(i.path) : hashOf(i.path) !== i.sha256) return false;
  }
  return true;
}

/** Where a compile failed: esbuild's messages, each with its place (file, 1-based line, 0-based column). */
export class CompileError extends Error {
  constructor(readonly located: string) {
    super(located);
    this.name = 'CompileError';
  }
}

/** A bare specifier ('fxflow', 'technicalindicators/lib/x'), not a path, URL or builtin. */
const isBare = (s: string): boolean =>
  !s.startsWith('.') &&
  !s.startsWith('/') &&
  !/^[a-zA-Z][a-zA-Z+.-]*:/.test(s) &&
  !/^[a-zA-Z]:[\\/]/.test(s) &&
  !isBuiltin(s);
/** The package a bare specifier names: 'a', '@s/a'. */
const packageOf = (s: string): string =>
  s
    .split('/')
    .slice(0, s.startsWith('@') ? 2 : 1)
    .join('/');

/** The nearest `name` at or above `from`: the paths looked at that do not exist, then the one found. */
function nearest(from: string, name: string): Input[] {
  const out: Input[] = [];
  for (let d = from; ; d = dirname(d)) {
    const p = join(d, name);
    const h = hashOf(p);
    out.push({ path: p, sha256: h });
    if (h !== null || dirname(d) === d) return out;
  }
}

/** The format tsx gives `file`: by its extension, else its package's `type`. */
function formatOf(file: string, scope: readonly Input[]): 'esm' | 'cjs' {
  const ext = extname(file);
  if (ext === '.mts' || ext === '.mjs') return 'esm';
  if (ext === '.cts' || ext === '.cjs') return 'cjs';
  const pkg = scope.at(-1);
  if (pkg?.sha256 == null) return 'cjs';
  try {
    return (JSON.parse(readFileSync(pkg.path, 'utf8')) as { type?: string }).type === 'module'
      ? 'esm'
      : 'cjs';
  } catch {
    return 'cjs';
  }
}

const LOADERS: Record<string, import('esbuild').Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
};

/** A module's source with its own place written in for `import.meta.url` and kin (same lines, so errors keep their line). */
function placed(source: string, path: string, format: 'esm' | 'cjs'): string {
  const at = {
    url: JSON.stringify(pathToFileURL(path).href),
    filename: JSON.stringify(path),
    dirname: JSON.stringify(dirname(path)),
  };
  let out = source.replace(/\bimport\.meta\.(url|filename|dirname)\b/g, (_, k: keyof typeof at) => at[k]);
  if (format === 'cjs')
    out = out.replace(/(?<![.\w$])__(filename|dirname)(?![\w$])/g, (_, k: keyof typeof at) => at[k]);
  return out;
}

/**
 * Compiles `file` and its local imports into one module in `dir` (see the module's TSDoc) and
 * returns it. A module that does not compile throws a CompileError; a folder that cannot be written
 * returns undefined (the caller loads the strategy as before).
 */
export async function compileStrategy(dir: string, file: string, c: Compiler): Promise<Compiled | undefined> {
  strategyCacheStats.builds++;
  // Loaded only now: a run whose strategy is cached never loads esbuild.
  const esbuild = await import('esbuild');
  const fxflowRoot = dirname(c.packageJson);
  const scope = nearest(dirname(file), 'package.json');
  const format = formatOf(file, scope);
  const inputs: Input[] = [...scope, ...nearest(dirname(file), 'tsconfig.json')];
  const loaded = new Map<string, string>();
  const conditions = ['module-sync', ...(c.fromSource ? ['fxflow-source'] : [])];
  const external: import('esbuild').Plugin = {
    name: 'fxflow-bare-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === 'fxflow-inner' || !isBare(args.path))
          return undefined;
        // `fxflow` is the fxflow that compiles it (package-root.ts `ownEntry`), wherever the strategy
        // lives: one copy of its modules in the process. Its package.json's exports decide the file.
        const own = exportedFile(c.packageJson, args.path, c.fromSource ? 'source' : 'bundle');
        if (own !== undefined) {
          inputs.push({ path: c.packageJson, sha256: hashOf(c.packageJson) });
          return { path: format === 'esm' ? pathToFileURL(own).href : own, external: true };
        }
        const pkg = packageOf(args.path);
        // The importer's folder first, then fxflow's package (a strategy outside the repository).
        for (const resolveDir of [args.resolveDir, fxflowRoot]) {
          const r = await build.resolve(args.path, {
            kind: args.kind,
            resolveDir,
            importer: args.importer,
            pluginData: 'fxflow-inner',
          });
          if (r.errors.length > 0 || r.path === '') continue;
          // The node_modules/<pkg> Node looks in first: the one there (often a link: its path is
          // not the file's) must keep its package.json, and those below it that were absent, stay so.
          for (let d = args.resolveDir; ; d = dirname(d)) {
            const there = join(d, 'node_modules', pkg);
            if (existsSync(there)) {
              inputs.push({ path: join(there, 'package.json'), sha256: hashOf(join(there, 'package.json')) });
              break;
            }
            inputs.push({ path: there, sha256: null });
            if (dirname(d) === d) break;
          }
          inputs.push(...nearest(dirname(r.path), 'package.json').filter((i) => i.sha256 !== null));
          return { path: format === 'esm' ? pathToFileURL(r.path).href : r.path, external: true };
        }
        return {
          errors: [
            {
              text: `Cannot find package '${pkg}': it is not installed beside the strategy, nor with fxflow (npm install it in the strategy's folder)`,
            },
          ],
        };
      });
      // Each local module is read here, so the hash recorded is of the very bytes compiled. Its
      // place, which the output no longer has, is written in: `import.meta.url` (and `__dirname`,
      // `__filename` in CommonJS) are the source's, as they are when tsx runs the file.
      build.onLoad({ filter: /.*/, namespace: 'file' }, (args) => {
        const loader = LOADERS[extname(args.path)];
        if (loader === undefined) return undefined;
        const bytes = readFileSync(args.path);
        loaded.set(args.path, sha256(bytes));
        return {
          contents: loader === 'json' ? bytes : placed(bytes.toString('utf8'), args.path, format),
          loader,
        };
      });
    },
  };
  const key = keyOf(file, c);
  const path = join(dir, `${key}.${format === 'esm' ? 'mjs' : 'cjs'}`);
  let result: import('esbuild').BuildResult<{ metafile: true; write: false }>;
  try {
    result = await esbuild.build({
      entryPoints: [file],
      absWorkingDir: dirname(file),
      // Where the output will be, so that its source map names the sources from there.
      outfile: path,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      // Node reads a package's `main`, never `module`.
      mainFields: ['main'],
      format,
      conditions,
      // As tsx compiles: for this Node, with the names of functions and classes kept.
      target: `node${process.versions.node}`,
      keepNames: true,
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [external],
    });
  } catch (e) {
    const errors = (e as { errors?: import('esbuild').Message[] }).errors;
    if (errors === undefined) throw e;
    throw new CompileError(
      errors
        .map((m) =>
          m.location
            ? `${resolve(dirname(file), m.location.file)}:${m.location.line}:${m.location.column}: ERROR: ${m.text}`
            : `${file}:1:0: ERROR: ${m.text}`,
        )
        .join('\n'),
    );
  }
  for (const p of Object.keys(result.metafile.inputs)) {
    const path = resolve(dirname(file), p);
    inputs.push({ path, sha256: loaded.get(path) ?? hashOf(path) });
  }
  const code = result.outputFiles[0]!.text;
  const seen = new Set<string>();
  const manifest: Manifest = {
    key,
    format,
    inputs: inputs.filter((i) => !seen.has(i.path) && seen.add(i.path)),
    code: sha256(code),
  };
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, `${code}// ${JSON.stringify(manifest)}\n`);
    renameSync(tmp, path);
    // The other format's file, if the package's type changed: it would be found first next time.
    rmSync(join(dir, `${key}.${format === 'esm' ? 'cjs' : 'mjs'}`), { force: true });
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // no folder to remove it from
    }
    return undefined;
  }
  return { file: path, format };
}
