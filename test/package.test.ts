import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { backtest } from '../src/app/library.ts';

/**
 * fxflow as an npm package, used as a stranger would: `npm pack` (whose `prepare` builds dist/) in a
 * copy of the repository that has no build, `npm install <tarball>` into an empty folder, then the
 * `fxflow` command, plain `node` scripts (ES module and CommonJS) importing it with no loader, its
 * types, and `fxflow init`. All offline: the tarball's dependencies come from the npm cache that the
 * repository's own `npm ci` filled, at the versions of its package-lock.json (the empty folder's
 * lockfile starts with those entries, so npm needs no registry to resolve them).
 */

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const OFFLINE = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

async function sh(cwd: string, command: string, ...args: string[]): Promise<Out> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: OFFLINE, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number | string; stdout?: string; stderr?: string; message?: string };
    return {
      code: typeof x.code === 'number' ? x.code : 1,
      stdout: x.stdout ?? '',
      stderr: x.stderr || (x.message ?? ''),
    };
  }
}

const ok = (what: string, r: Out): Out => {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r;
};

/** The package's files as a fresh clone has them: no dist/, no node_modules of its own (linked). */
function copyRepository(to: string): void {
  for (const f of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'README.md',
    'LICENSE',
    'bin',
    'scripts',
    'src',
    'config',
    'strategies',
    'data/instruments.json',
    'data/market-calendar.json',
    'data/README.md',
  ]) {
    cpSync(join(ROOT, f), join(to, f), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'), 'junction');
}

/** The repository's locked runtime dependencies, as the lockfile of a project that has none yet. */
function seedLockfile(dir: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  const packages: Record<string, unknown> = { '': { name: 'app' } };
  for (const [path, entry] of Object.entries(lock.packages))
    if (path !== '' && entry.dev !== true && entry.link !== true) packages[path] = entry;
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
}

const STRATEGY = `defineStrategy({
  params: { fast: 5, slow: 20 },
  subscribe: { candles: ['EUR_USD:H1'] },
  init: () => ({ side: 0 }),
  onCandle(ctx, s) {
    const f = ctx.sma(ctx.params.fast), sl = ctx.sma(ctx.params.slow);
    if (f === undefined || sl === undefined) return;
    const side = f > sl ? 1 : -1;
    if (side === s.side) return;
    return { state: { side }, intents: [ctx.market('EUR_USD', side * 10_000 - ctx.position('EUR_USD').net)] };
  },
})`;
const PERIOD = { run: { from: '2024-01-01', to: '2024-03-01' } };

let work = '';
let app = '';
let tarball = '';
let packedFiles: string[] = [];
let skipped: string | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fxflow-package-'));
  const clone = join(work, 'clone');
  app = join(work, 'app');
  mkdirSync(clone);
  mkdirSync(app);
  copyRepository(clone);
  const npm = await sh(clone, 'npm', '--version');
  if (npm.code !== 0) {
    skipped = `npm is not on PATH (${npm.stderr.trim()})`;
    return;
  }
  const pack = ok('npm pack', await sh(clone, 'npm', 'pack', '--json', '--pack-destination', work));
  const packed = (JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
  packedFiles = packed.files.map((f) => f.path);
  tarball = join(work, packed.filename);
  expect(existsSync(tarball), pack.stdout).toBe(true);
  // prepare built dist/ in the copy, which had none.
  expect(packed.files.map((f) => f.path)).toContain('dist/bundle/index.js');
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'app', private: true, type: 'module' })}\n`,
  );
  seedLockfile(app);
  const install = await sh(app, 'npm', 'install', '--offline', '--no-audit', '--no-fund', tarball);
  if (install.code !== 0 && /ENOTCACHED/.test(install.stderr)) {
    skipped = `the npm cache lacks a dependency of the package (run \`npm ci\` in ${ROOT} first): ${install.stderr.split('\n')[1] ?? ''}`;
    return;
  }
  ok('npm install <tarball>', install);
}, 300_000);

/** Says out loud why the package tests did not run, and skips. */
function skipIfImpossible(ctx: { skip: () => void }): void {
  if (skipped === undefined) return;
  console.warn(`[skip] package tests: ${skipped}`);
  ctx.skip();
}

describe('npm pack → npm install <tarball> → use', () => {
  it('installs compiled JavaScript and declarations, no TypeScript sources; `npx fxflow --version` works', async (ctx) => {
    skipIfImpossible(ctx);
    const pkg = join(app, 'node_modules/fxflow');
    expect(existsSync(join(pkg, 'dist/bundle/index.js'))).toBe(true);
    expect(existsSync(join(pkg, 'dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(pkg, 'src'))).toBe(false);
    const ts = readdirSync(join(pkg, 'dist'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    expect(ts).toEqual([]);
    const v = ok('npx fxflow --version', await sh(app, 'npx', 'fxflow', '--version'));
    expect(v.stdout.trim()).toBe(VERSION);
  });

  it('the tarball: a LICENSE, a repository, no test kits, tests or fixtures', async (ctx) => {
    skipIfImpossible(ctx);
    expect(packedFiles).toContain('LICENSE');
    expect(readFileSync(join(app, 'node_modules/fxflow/LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) \d{4} fxflow contributors\n/,
    );
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules/fxflow/package.json'), 'utf8')) as {
      license: string;
      repository?: { url?: string };
    };
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\//);
    expect(packedFiles.filter((f) => /testkit|\.test\.|(^|\/)fixtures\//.test(f))).toEqual([]);
    expect(packedFiles.filter((f) => f.startsWith('data/')).sort()).toEqual([
      'data/README.md',
      'data/instruments.json',
      'data/market-calendar.json',
    ]);
  });

  it('plain node scripts, ES module and CommonJS, run backtest() on the bundled sample with no loader: the figures of the sources', async (ctx) => {
    skipIfImpossible(ctx);
    writeFileSync(
      join(app, 'esm.mjs'),
      `import { backtest, defineStrategy } from 'fxflow';\nconst run = await backtest(${STRATEGY}, {}, undefined, ${JSON.stringify(PERIOD)});\nconsole.log(JSON.stringify(run.summary));\n`,
    );
    writeFileSync(
      join(app, 'cjs.cjs'),
      `const { backtest, defineStrategy } = require('fxflow');\nbacktest(${STRATEGY}, {}, undefined, ${JSON.stringify(PERIOD)}).then((run) => console.log(JSON.stringify(run.summary)));\n`,
    );
    const esm = ok('node esm.mjs', await sh(app, process.execPath, 'esm.mjs'));
    const cjs = ok('node cjs.cjs', await sh(app, process.execPath, 'cjs.cjs'));
    expect(cjs.stderr).toBe('');
    const fromEsm = JSON.parse(esm.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const fromCjs = JSON.parse(cjs.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    // The same strategy through the repository's sources, on the repository's sample (same seed).
    const { defineStrategy } = await import('../src/strategy/api.ts');
    const strategy = new Function('defineStrategy', `return ${STRATEGY};`)(defineStrategy) as Parameters<
      typeof backtest
    >[0];
    const here = (await backtest(strategy, {}, join(ROOT, 'data/catalog'), PERIOD))
      .summary as unknown as Record<string, unknown>;
    const { data: _e, ...esmFigures } = fromEsm;
    const { data: _c, ...cjsFigures } = fromCjs;
    const { data: _h, ...hereFigures } = here;
    expect(hereFigures.trades).toBeGreaterThan(0);
    expect(esmFigures).toEqual(hereFigures);
    expect(cjsFigures).toEqual(hereFigures);
    // The sample was read from the user's cache, never generated inside the package.
    expect(JSON.stringify(fromEsm.data)).toContain(
      join(process.env.XDG_CACHE_HOME ?? '', 'fxflow', 'sample'),
    );
    expect(existsSync(join(app, 'node_modules/fxflow/data/catalog'))).toBe(false);
  }, 180_000);

  it('`npx fxflow data import` then `npx fxflow backtest` of that instrument: the candles of ./data/catalog, nothing written under node_modules', async (ctx) => {
    skipIfImpossible(ctx);
    const proj = join(work, 'imports');
    mkdirSync(proj);
    symlinkSync(join(app, 'node_modules'), join(proj, 'node_modules'), 'junction');
    cpSync(join(ROOT, 'data/catalog/EUR_USD/H1/2024-01.csv'), join(proj, 'AUD_USD_H1.csv'));
    ok(
      'data import',
      await sh(
        proj,
        'npx',
        'fxflow',
        'data',
        'import',
        'AUD_USD_H1.csv',
        '--instrument',
        'AUD_USD',
        '--granularity',
        'H1',
      ),
    );
    const bt = ok(
      'backtest',
      await sh(
        proj,
        'npx',
        'fxflow',
        'backtest',
        'node_modules/fxflow/strategies/sma-cross.ts',
        '--instrument',
        'AUD_USD',
        '--granularity',
        'H1',
        '--from',
        '2024-01-01',
        '--to',
        '2024-02-01',
        '--no-save',
      ),
    );
    expect(bt.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
    expect(bt.stdout).toContain(join(proj, 'data/catalog'));
    expect(existsSync(join(app, 'node_modules/fxflow/data/catalog'))).toBe(false);
  }, 300_000);

  it("the package's types: a script that uses them right type-checks, one that misuses them does not", async (ctx) => {
    skipIfImpossible(ctx);
    // strict, and every declaration checked (no skipLibCheck): fxflow's, its dependencies', @types/node's.
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        types: [] as string[],
      },
      include: ['*.ts', '*.cts'],
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    // CommonJS TypeScript too: `require` of the ES-module package, typed.
    writeFileSync(
      join(app, 'script-cjs.cts'),
      `import fxflow = require('fxflow');\nconst run: Promise<fxflow.BacktestRun> = fxflow.backtest(fxflow.${STRATEGY}, {});\nexport = run;\n`,
    );
    writeFileSync(
      join(app, 'script.ts'),
      `import { backtest, defineStrategy, type BacktestRun } from 'fxflow';\nconst run: BacktestRun = await backtest(${STRATEGY}, { fast: 8 });\nconst trades: number = run.summary.trades;\nexport { trades };\n`,
    );
    // tsc is the TypeScript fxflow depends on, installed with it.
    ok('tsc (right)', await sh(app, join(app, 'node_modules/.bin/tsc'), '-p', 'tsconfig.json'));
    // And with the @types TypeScript finds by itself (no `types`): the installed @types/node is fxflow's, not technicalindicators' @types/node@6.
    const { types: _t, ...auto } = tsconfig.compilerOptions;
    writeFileSync(join(app, 'tsconfig.auto.json'), JSON.stringify({ ...tsconfig, compilerOptions: auto }));
    ok('tsc (default types)', await sh(app, join(app, 'node_modules/.bin/tsc'), '-p', 'tsconfig.auto.json'));
    rmSync(join(app, 'script-cjs.cts'));
    writeFileSync(
      join(app, 'script.ts'),
      `import { backtest, type BacktestRun } from 'fxflow';\nconst run: BacktestRun = await backtest('s.ts');\nconst trades: string = run.summary.trades;\nexport { trades };\n`,
    );
    const wrong = await sh(app, join(app, 'node_modules/.bin/tsc'), '-p', 'tsconfig.json');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toMatch(
      /script\.ts\(3,7\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  }, 300_000);

  it('`npx fxflow init s1 && cd s1 && npx fxflow backtest strategy.ts` and `npm run check`, in the folder and anywhere else', async (ctx) => {
    skipIfImpossible(ctx);
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'fxflow-init-')), 's2');
    for (const [cwd, target, dir] of [
      [app, 's1', join(app, 's1')],
      [app, elsewhere, elsewhere],
    ] as const) {
      const init = ok('npx fxflow init', await sh(cwd, 'npx', 'fxflow', 'init', target));
      expect(init.stdout).toContain(`Next: cd ${target} && npx fxflow backtest strategy.ts`);
      const bt = await sh(dir, 'npx', 'fxflow', 'backtest', 'strategy.ts', '--no-save', '--to', '2024-03-01');
      expect(bt.stderr).toBe('');
      expect(bt.code).toBe(0);
      expect(bt.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
      const check = await sh(dir, 'npm', 'run', 'check');
      expect(check.code, `${check.stdout}${check.stderr}`).toBe(0);
    }
  }, 180_000);

  it('an `fxflow init` project moved elsewhere: `npm install --offline` and `npx fxflow backtest` work', async (ctx) => {
    skipIfImpossible(ctx);
    const made = join(work, 'made', 's3');
    ok('npx fxflow init', await sh(app, 'npx', 'fxflow', 'init', made));
    const moved = join(mkdtempSync(join(tmpdir(), 'fxflow-moved-')), 'deeper', 'elsewhere');
    mkdirSync(join(moved, '..'), { recursive: true });
    renameSync(made, moved);
    rmSync(join(work, 'made'), { recursive: true });
    ok('npm install --offline', await sh(moved, 'npm', 'install', '--offline', '--no-audit', '--no-fund'));
    expect(existsSync(join(moved, 'node_modules/fxflow/package.json'))).toBe(true);
    // Linked, not copied: nothing was installed or built inside the fxflow it names.
    expect(existsSync(join(app, 'node_modules/fxflow/node_modules'))).toBe(false);
    expect(readdirSync(join(app, 'node_modules/fxflow')).sort()).toEqual([
      'LICENSE',
      'README.md',
      'bin',
      'config',
      'data',
      'dist',
      'package.json',
      'scripts',
      'strategies',
    ]);
    const bt = await sh(moved, 'npx', 'fxflow', 'backtest', 'strategy.ts', '--no-save', '--to', '2024-03-01');
    expect(bt.stderr).toBe('');
    expect(bt.code).toBe(0);
    expect(bt.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
  }, 180_000);
});
