import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backtest, runText } from '../src/app/library.ts';
import { loadConfig } from '../src/app/config.ts';
import { runGiven } from '../src/app/run-choices.ts';

/**
 * Issue 25, item 3: the strategy's declared instrument and granularity are its defaults in every
 * mode; config and flags override them only when given, and the report says where each came from.
 */
const ROOT = resolve(import.meta.dirname, '..');
const STRATEGY = join(ROOT, 'strategies/calendar-stand-aside.ts');
const PERIOD = { run: { from: '2024-01-08', to: '2024-01-13' } };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("a strategy's declared granularity", () => {
  it('calendar-stand-aside backtests on M15 with no flags (config/default.json says H1)', async () => {
    const run = await backtest(STRATEGY, {}, undefined, PERIOD, { log: quiet });
    expect(run.params.granularity).toBe('M15');
    expect(run.params.instrument).toBe('EUR_USD');
    // Five trading days of M15 candles, not H1's 120.
    expect(run.engine.candles).toBeGreaterThan(400);
    expect(run.paramSources).toEqual({
      instrument: "the strategy's default",
      granularity: "the strategy's default",
    });
    expect(runText(run)).toContain(
      "Run params: instrument EUR_USD from the strategy's default; granularity M15 from the strategy's default",
    );
  });

  it('a flag or a config file overrides it, and the report names which', async () => {
    // As `fxflow backtest --granularity H1`: the flags are a config fragment; runGiven labels them.
    const flags = { ...PERIOD, run: { ...PERIOD.run, granularity: 'H1' } };
    const viaFlag = await backtest(STRATEGY, {}, undefined, loadConfig(undefined, flags as never), {
      log: quiet,
      runGiven: runGiven(undefined, flags),
    });
    expect(viaFlag.params.granularity).toBe('H1');
    expect(viaFlag.paramSources.granularity).toBe('--granularity');
    const file = join(mkdtempSync(join(tmpdir(), 'fxflow-choices-')), 'm30.json');
    writeFileSync(
      file,
      JSON.stringify({ run: { granularity: 'M30', from: '2024-01-08', to: '2024-01-13' } }),
    );
    const viaFile = await backtest(STRATEGY, {}, undefined, file, { log: quiet });
    expect(viaFile.params.granularity).toBe('M30');
    expect(viaFile.paramSources.granularity).toBe(`config file ${file}`);
    expect(viaFile.paramSources.instrument).toBe("the strategy's default");
    const viaParam = await backtest(STRATEGY, { granularity: 'H1' }, undefined, PERIOD, { log: quiet });
    expect(viaParam.paramSources.granularity).toBe('--param');
  });
});
