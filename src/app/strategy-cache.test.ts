import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadStrategy, StrategyLoadError } from './load-strategy.ts';
import {
  cachedStrategy,
  compileStrategy,
  CompileError,
  strategyCacheStats,
  type Compiler,
} from './strategy-cache.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const base = mkdtempSync(join(tmpdir(), 'fxflow-strategy-cache-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
// Compiled as the build would: bare imports resolve to what a run from the build loads.
const DIST: Compiler = { packageJson: join(ROOT, 'package.json'), fromSource: false };

let n = 0;
/** A fresh folder with a strategy importing a local helper (and fxflow and technicalindicators). */
function project(pkg?: object): { dir: string; strategy: string; helper: string; cache: string } {
  const dir = join(base, `p${++n}`);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  if (pkg !== undefined) writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  const helper = join(dir, 'lib/size.ts');
  writeFileSync(helper, 'export const units = (): number => 1234;\n');
  const strategy = join(dir, 'strategy.ts');
  writeFileSync(
    strategy,
    `import { defineStrategy } from 'fxflow';
import { SMA } from 'technicalindicators';
import { units } from './lib/size.ts';

export const here = import.meta.url;
export default defineStrategy({ params: { units: units() }, subscribe: { candles: ['EUR_USD:H1'] }, onCandle() { void SMA; } });
`,
  );
  return { dir, strategy, helper, cache: join(dir, '.cache') };
}

const stats = (): typeof strategyCacheStats => ({ ...strategyCacheStats });
beforeEach(() => {
  strategyCacheStats.hits = 0;
  strategyCacheStats.builds = 0;
  strategyCacheStats.rebuilds = 0;
});

describe('the compiled-strategy cache', () => {
  it('is used while nothing changed, and compiled again when an imported helper is edited', async () => {
    const p = project({ type: 'module' });
    const first = await compileStrategy(p.cache, p.strategy, DIST);
    expect(first?.format).toBe('esm');
    const code = readFileSync(first!.file, 'utf8');
    // Bare imports are the running fxflow's own files, as absolute URLs; the helper is compiled in.
    expect(code).toContain(`from "file://${ROOT}/dist/bundle/index.js"`);
    expect(code).toContain(`from "file://${ROOT}/node_modules/technicalindicators/`);
    expect(code).toContain('=> 1234');
    // Its place is the source's, not the cache's.
    expect(code).toContain(`here = "file://${p.strategy}"`);
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toEqual(first);

    writeFileSync(p.helper, 'export const units = (): number => 2500;\n');
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    expect(stats()).toEqual({ hits: 1, builds: 1, rebuilds: 1 });
    const second = await compileStrategy(p.cache, p.strategy, DIST);
    expect(readFileSync(second!.file, 'utf8')).toContain('=> 2500');
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toEqual(second);
  });

  it('stays valid for a project whose node_modules/fxflow is a link to fxflow (as `fxflow init` makes it)', async () => {
    const p = project({ type: 'module' });
    mkdirSync(join(p.dir, 'node_modules'));
    symlinkSync(ROOT, join(p.dir, 'node_modules/fxflow'));
    const c = await compileStrategy(p.cache, p.strategy, DIST);
    expect(readFileSync(c!.file, 'utf8')).toContain(`from "file://${ROOT}/dist/bundle/index.js"`);
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toEqual(c);
  });

  it('is compiled again for another fxflow (version or folder), a changed package type or a package that appears beside the strategy', async () => {
    const p = project({ type: 'module' });
    await compileStrategy(p.cache, p.strategy, DIST);
    expect(cachedStrategy(p.cache, p.strategy, { ...DIST, fromSource: true })).toBeUndefined();
    const other = join(p.dir, 'other-fxflow/package.json');
    mkdirSync(dirname(other));
    writeFileSync(other, JSON.stringify({ name: 'fxflow', version: '9.9.9' }));
    expect(cachedStrategy(p.cache, p.strategy, { ...DIST, packageJson: other })).toBeUndefined();
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeDefined();

    // A technicalindicators of the strategy's own now comes first, as it would for Node.
    mkdirSync(join(p.dir, 'node_modules/technicalindicators'), { recursive: true });
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    rmSync(join(p.dir, 'node_modules'), { recursive: true });
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeDefined();

    writeFileSync(join(p.dir, 'package.json'), '{}');
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    expect((await compileStrategy(p.cache, p.strategy, DIST))?.format).toBe('cjs');
    expect(readdirSync(p.cache).filter((f) => !f.endsWith('.tmp'))).toHaveLength(1);
  });

  it('a torn write is never used: a cut-short file fails its check, and a left-over temporary file is never read', async () => {
    const p = project({ type: 'module' });
    const c = await compileStrategy(p.cache, p.strategy, DIST);
    const whole = readFileSync(c!.file, 'utf8');
    // What a writer killed mid-write would leave, had it written in place: the start of the file.
    truncateSync(c!.file, Math.floor(whole.length * 0.6));
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    // The code without its manifest (the last line), or nothing.
    writeFileSync(c!.file, whole.slice(0, whole.lastIndexOf('\n// {') + 1));
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    writeFileSync(c!.file, '');
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    // One byte more in the code: its hash differs.
    writeFileSync(c!.file, whole);
    appendFileSync(c!.file, ';');
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    rmSync(c!.file);
    // A temporary file of a killed writer stays aside; the next compile writes its own.
    writeFileSync(`${c!.file}.12345.deadbeef.tmp`, whole.slice(0, 100));
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toBeUndefined();
    const again = await compileStrategy(p.cache, p.strategy, DIST);
    expect(readFileSync(again!.file, 'utf8')).toBe(whole);
    expect(cachedStrategy(p.cache, p.strategy, DIST)).toEqual(again);
  });

  it('a folder that cannot be written: no cache, no error', async () => {
    const p = project({ type: 'module' });
    writeFileSync(join(p.dir, 'a-file'), '');
    expect(await compileStrategy(join(p.dir, 'a-file/strategies'), p.strategy, DIST)).toBeUndefined();
  });

  it('a syntax error, in the strategy or a helper, names the file and line', async () => {
    const p = project({ type: 'module' });
    writeFileSync(p.helper, 'export const units = (): number => {\n  return 1234 +;\n};\n');
    const e = await compileStrategy(p.cache, p.strategy, DIST).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CompileError);
    expect((e as CompileError).located).toMatch(new RegExp(`^${p.helper}:2:\\d+: ERROR: `));
    expect(existsSync(p.cache)).toBe(false);
    const missing = project({ type: 'module' });
    writeFileSync(missing.helper, "export { units } from 'no-such-package';\n");
    const m = await compileStrategy(missing.cache, missing.strategy, DIST).catch((x: unknown) => x);
    expect((m as CompileError).located).toContain(
      `${missing.helper}:1:22: ERROR: Cannot find package 'no-such-package'`,
    );
  });
});

describe('loadStrategy through the cache', () => {
  const env = process.env.FXFLOW_DATA_CACHE;
  afterAll(() => {
    if (env === undefined) delete process.env.FXFLOW_DATA_CACHE;
    else process.env.FXFLOW_DATA_CACHE = env;
  });

  it('loads a strategy and its helper, compiled once, each load a fresh module; an edit is seen at the next load', async () => {
    const p = project({ type: 'module' });
    process.env.FXFLOW_DATA_CACHE = p.cache;
    const a = await loadStrategy(p.strategy);
    const b = await loadStrategy(p.strategy);
    expect(a.params).toEqual({ units: 1234 });
    expect(a.strategy).not.toBe(b.strategy);
    expect(stats()).toEqual({ hits: 1, builds: 1, rebuilds: 0 });
    writeFileSync(p.helper, 'export const units = (): number => 2500;\n');
    expect((await loadStrategy(p.strategy)).params).toEqual({ units: 2500 });
    expect(stats()).toEqual({ hits: 1, builds: 2, rebuilds: 1 });
  });

  it('a syntax error is reported with its file, line and caret', async () => {
    const p = project({ type: 'module' });
    process.env.FXFLOW_DATA_CACHE = p.cache;
    writeFileSync(p.helper, 'export const units = (): number => {\n  return 1234 +;\n};\n');
    const e = await loadStrategy(p.strategy).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StrategyLoadError);
    expect((e as Error).message).toContain(
      `syntax error: Unexpected ";"\n  at ${p.helper}:2:16\n  2 |   return 1234 +;\n    |                ^`,
    );
  });

  it('an import that resolves nowhere is reported as such, at its place', async () => {
    const p = project({ type: 'module' });
    process.env.FXFLOW_DATA_CACHE = p.cache;
    writeFileSync(p.helper, "export { units } from 'no-such-package';\n");
    const e = await loadStrategy(p.strategy).catch((x: unknown) => x);
    expect((e as Error).message).toContain(
      `import error: Cannot find package 'no-such-package': it is not installed beside the strategy, nor with fxflow (npm install it in the strategy's folder)\n  at ${p.helper}:1:23`,
    );
  });

  it('with a cache folder that cannot be written, loads the strategy as before', async () => {
    const p = project({ type: 'module' });
    writeFileSync(join(p.dir, 'a-file'), '');
    process.env.FXFLOW_DATA_CACHE = join(p.dir, 'a-file');
    expect((await loadStrategy(p.strategy)).params).toEqual({ units: 1234 });
    expect(stats()).toEqual({ hits: 0, builds: 1, rebuilds: 0 });
  });
});
