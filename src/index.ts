/// <reference types="node" preserve="true" />
/**
 * The `fxflow` package: the strategy API (what a strategy module imports) and the library call
 * that runs a backtest. The backtest machinery is loaded on the first call, so a strategy that
 * imports `defineStrategy` from here loads the strategy API alone.
 */
import type * as Library from './app/library.ts';

export * from './strategy/api.ts';
export type {
  BacktestCallOptions,
  BacktestRun,
  ConfigInput,
  DataInput,
  ParamsInput,
  StrategyInput,
} from './app/library.ts';
export type { BacktestConfig } from './app/config.ts';
export type { BacktestResult, DataReport, DataHole } from './app/backtest.ts';
export type { Summary } from './engine/report.ts';

/** Runs one backtest and returns what `fxflow backtest` prints (see src/app/library.ts). */
export async function backtest(
  ...args: Parameters<typeof Library.backtest>
): ReturnType<typeof Library.backtest> {
  return (await import('./app/library.ts')).backtest(...args);
}

/** The run as the JSON document `fxflow backtest --json` prints. */
export async function runJson(run: Library.BacktestRun): Promise<Record<string, unknown>> {
  return (await import('./app/library.ts')).runJson(run);
}
