import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LAYOUT, PACKAGE_JSON, PACKAGE_ROOT as ROOT } from '../domain/package-root.ts';
import { StrategyLoadError } from '../app/load-strategy.ts';

/**
 * What a strategy's `import 'fxflow'` is checked against: the sources when fxflow runs from them,
 * else the build's declarations (an installed package has no src/).
 */
const API = join(ROOT, LAYOUT === 'source' ? 'src/strategy/api.ts' : 'dist/strategy/api.d.ts');

type Ts = typeof import('typescript');

/** TypeScript's version, read from its package.json (cheap: the compiler itself is not loaded); undefined when it is not installed. */
function typeScriptVersion(): string | undefined {
  try {
    const req = createRequire(PACKAGE_JSON);
    return (JSON.parse(readFileSync(req.resolve('typescript/package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return undefined;
  }
}

/** The TypeScript compiler (a dependency of fxflow); undefined if it cannot be loaded. */
function loadTypeScript(): Ts | undefined {
  try {
    return createRequire(PACKAGE_JSON)('typescript') as Ts;
  } catch {
    return undefined;
  }
}

/** Where a package fxflow depends on lives (beside fxflow in a clone, hoisted beside it when installed). */
function packageDir(name: string): string {
  try {
    return dirname(createRequire(PACKAGE_JSON).resolve(`${name}/package.json`));
  } catch {
    return join(ROOT, 'node_modules', name);
  }
}

/**
 * Type-checks a strategy module before it runs (tsx, which runs it, strips types without checking
 * them). A syntax error throws a StrategyLoadError; type errors are returned as a warning to print
 * (tsx would run the file anyway): each with the file, line and column, the line itself and a
 * caret. Only the strategy's own file is reported (fxflow's sources are checked by its own build).
 * The options are strict, as `fxflow init` sets up a project.
 *
 * A file that passed is remembered (its content's hash, with TypeScript's version and fxflow's
 * strategy API, in the system's temp folder), so an unchanged strategy is checked once, and
 * TypeScript's compiler is loaded only when a check is due. Returns undefined when the file passed
 * or TypeScript is not installed (nothing was checked).
 */
export function typeCheckStrategy(file: string): string | undefined {
  // The cache is consulted before the compiler is loaded (loading it costs about 0.15 s): the key
  // is TypeScript's version, the API the strategy is checked against, the file's path and text.
  const version = typeScriptVersion();
  if (version === undefined) return undefined;
  const text = readFileSync(file, 'utf8');
  let api = '';
  try {
    api = readFileSync(API, 'utf8');
  } catch {
    // No API file to check against: the check below reports the unresolved import.
  }
  const key = createHash('sha256')
    .update(version)
    .update('\0')
    .update(api)
    .update('\0')
    .update(file)
    .update('\0')
    .update(text)
    .digest('hex')
    .slice(0, 32);
  const cacheDir = join(tmpdir(), 'fxflow-typecheck');
  const stamp = join(cacheDir, key);
  if (existsSync(stamp)) return undefined;
  const ts = loadTypeScript();
  if (ts === undefined) return undefined;
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    // Bundler resolution: package exports and .ts imports, with no CommonJS/ESM split (tsx runs a
    // strategy either way).
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // As at run time (src/app/resolve-fallback.mjs): 'fxflow' and fxflow's packages resolve for a
    // strategy outside the repository.
    paths: {
      fxflow: [API],
      technicalindicators: [packageDir('technicalindicators')],
    },
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    esModuleInterop: true,
    types: [],
  });
  const source = program.getSourceFile(file);
  const only = (list: readonly import('typescript').Diagnostic[]): import('typescript').Diagnostic[] =>
    list.filter((d) => d.category === ts.DiagnosticCategory.Error);
  const syntax = source === undefined ? [] : only(program.getSyntacticDiagnostics(source));
  if (syntax.length > 0) throw new StrategyLoadError(file, describe(ts, syntax, 'syntax error'));
  const types = source === undefined ? [] : only(program.getSemanticDiagnostics(source));
  if (types.length > 0)
    return `${file}: ${describe(ts, types, 'type error')}\n  (the strategy runs anyway, as tsx runs it; fix the types, or pass --no-typecheck to skip this check)`;
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(stamp, '');
  } catch {
    // A cache that cannot be written only costs the next check.
  }
  return undefined;
}

/** Diagnostics as the user sees them: the message, file:line:column, the line and a caret (at most 5). */
function describe(ts: Ts, list: readonly import('typescript').Diagnostic[], what: string): string {
  const out: string[] = [];
  for (const d of list.slice(0, 5)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n    ');
    if (d.file === undefined || d.start === undefined) {
      out.push(`${what}: ${message}`);
      continue;
    }
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const src = d.file.text.split(/\r?\n/)[line] ?? '';
    const gutter = `  ${line + 1} | `;
    out.push(
      `${what}: ${message}`,
      `  at ${d.file.fileName}:${line + 1}:${character + 1}`,
      `${gutter}${src}`,
      `${' '.repeat(gutter.length - 2)}| ${' '.repeat(character)}^`,
    );
  }
  if (list.length > 5) out.push(`(and ${list.length - 5} more)`);
  return out.join('\n');
}
