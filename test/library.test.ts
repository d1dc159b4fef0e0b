import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DataError } from '../src/adapters/catalog/index.ts';
import type { Candle } from '../src/domain/candle.ts';
import { ConfigError } from '../src/app/config.ts';
import { backtest, resolveConfig } from '../src/app/library.ts';
import { StrategyLoadError } from '../src/app/load-strategy.ts';
import { dataCatalog } from '../src/app/sources.ts';
import { initProject } from '../src/cli/init.ts';
import smaCross from '../strategies/sma-cross.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const CATALOG = join(ROOT, 'data/catalog');
const STRATEGY = join(ROOT, 'strategies/sma-cross.ts');

/** The script docs/research.md shows, between its ```ts fence after "A backtest as a library call". */
function readmeSnippet(): string {
  const doc = readFileSync(join(ROOT, 'docs/research.md'), 'utf8');
  const m = /## A backtest as a library call[\s\S]*?```ts\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/research.md has no ```ts script under "A backtest as a library call"');
  return m[1]!;
}

describe("import { backtest } from 'fxflow'", () => {
  it('a script outside the repository gets the summary `fxflow backtest --json` prints, and type-checks', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'fxflow-lib-')), 'research');
    initProject(dir); // package.json, tsconfig.json, node_modules/fxflow linked to this fxflow
    const snippet = readmeSnippet();
    expect(snippet.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(10);
    // The snippet's relative paths name this repository's files from the project folder.
    expect(snippet).toContain("'strategies/sma-cross.ts'");
    expect(snippet).toContain("'data/catalog'");
    writeFileSync(
      join(dir, 'backtest.ts'),
      snippet
        .replace("'strategies/sma-cross.ts'", JSON.stringify(STRATEGY))
        .replace("'data/catalog'", JSON.stringify(CATALOG)),
    );
    // The project's own type check covers the script: `backtest` and its result are typed.
    await run(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')],
      { cwd: dir },
    ).catch((e: { stdout?: string }) => {
      throw new Error(`tsc failed:\n${e.stdout ?? String(e)}`);
    });
    const tsx = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/esm/index.mjs')).href;
    // `fxflow` as this repository's sources (the package's fxflow-source condition), never its dist/ build.
    const lib = await run(process.execPath, ['--conditions=fxflow-source', '--import', tsx, 'backtest.ts'], {
      cwd: dir,
      maxBuffer: 64 << 20,
    });
    const cli = await run(
      process.execPath,
      [
        join(ROOT, 'bin/fxflow.js'),
        'backtest',
        STRATEGY,
        '--param',
        'fast=10',
        '--param',
        'slow=30',
        '--from',
        '2024-01-01',
        '--to',
        '2024-07-01',
        '--json',
        '--no-save',
      ],
      { cwd: ROOT, maxBuffer: 64 << 20 },
    );
    const fromCli = (JSON.parse(cli.stdout) as { summary: Record<string, unknown> }).summary;
    const fromLib = JSON.parse(lib.stdout.slice(lib.stdout.indexOf('{'))) as Record<string, unknown>;
    expect(fromCli.trades).toBeGreaterThan(0);
    expect(fromLib).toEqual(fromCli);
  }, 180_000);

  it('a strategy object and in-memory candles give the figures of the module and the catalog', async () => {
    const config = { run: { from: '2024-02-01', to: '2024-05-01' } };
    const byPath = await backtest(STRATEGY, { fast: 8, slow: 21 }, CATALOG, config);
    const byObject = await backtest(smaCross, ['fast=8', 'slow=21'], { catalog: CATALOG }, config);
    expect(byPath.summary.trades).toBeGreaterThan(0);
    expect(byObject.summary).toEqual(byPath.summary);
    expect(byObject.transactions.length).toBe(byPath.transactions.length);
    // The same candles, read from the catalog into memory and handed over as an array.
    const source = await dataCatalog(CATALOG);
    const candles: Candle[] = [];
    for await (const b of source.candles({
      instrument: 'EUR_USD',
      granularity: 'H1',
      from: Date.parse('2024-01-01'),
      to: Date.parse('2024-06-01'),
    }))
      candles.push(...b);
    const inMemory = await backtest(smaCross, { fast: 8, slow: 21 }, candles, config);
    const { data: _a, ...fromMemory } = inMemory.summary;
    const { data: _b, ...fromCatalog } = byPath.summary;
    expect(fromMemory).toEqual(fromCatalog);
    expect(inMemory.equity).toEqual(byPath.equity);
  }, 120_000);

  it('bad input is one clear error naming what to fix', async () => {
    const t = Date.parse('2024-03-01T10:00:00Z');
    const c = (time: number): Candle => ({
      kind: 'candle',
      instrument: 'EUR_USD',
      granularity: 'H1',
      time,
      at: time + 3_600_000,
      bo: 1.1,
      bh: 1.1,
      bl: 1.1,
      bc: 1.1,
      ao: 1.1001,
      ah: 1.1001,
      al: 1.1001,
      ac: 1.1001,
      volume: 1,
      complete: true,
    });
    await expect(backtest(smaCross, {}, [c(t), c(t + 7_200_000), c(t + 3_600_000)])).rejects.toThrow(
      DataError,
    );
    await expect(backtest(smaCross, {}, [c(t), c(t)])).rejects.toThrow(
      /EUR_USD:H1 candle #2 at 2024-03-01T10:00:00.000Z is not after the one before it/,
    );
    await expect(backtest(smaCross, { fats: 3 })).rejects.toThrow(StrategyLoadError);
    await expect(backtest(smaCross, { fats: 3 })).rejects.toThrow(
      /unknown param 'fats'; this strategy declares: instrument, granularity, component, fast, slow, units, longOnly/,
    );
    await expect(backtest({ name: 'x' } as never)).rejects.toThrow(
      /\(strategy object\): has no default export that is a strategy/,
    );
    expect(() => resolveConfig({ run: { from: 'yesterday' } })).toThrow(ConfigError);
    expect(() => resolveConfig({ run: { from: 'yesterday' } })).toThrow(
      /^the config given to backtest\(\): run\.from/,
    );
  });
});
