// `fxflow backtest`: its flags (declared when the command runs or its --help is asked) and the run.
// src/cli/main.ts imports this module only then: the backtest's graph (the engine, the simulator,
// the catalog, the report) is not loaded by `fxflow --version` or by any other command.
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Argv } from 'yargs';
import { loadConfig } from '../app/config.ts';
import { configCatalog } from '../adapters/catalog/location.ts';
import { backtest, runJson, runText } from '../app/library.ts';
import { runGiven } from '../app/run-choices.ts';
import { parseAlignment } from './data-import.ts';
import { createLogger, flushLogger } from './logger.ts';
import { ProgressBar, formatCount } from './progress.ts';
import { dataFileInput, runFlagOverrides, SIM_FLAGS, type SimFlagArgs } from './sim-flags.ts';
import { typeCheckStrategy } from './type-check.ts';
import { strategyInput } from './strategy-input.ts';
import { formatStrategies } from '../engine/report.ts';

/** Declares the options of `fxflow backtest <strategy>`. */
export function backtestOptions(y: Argv): Argv {
  return y
    .positional('strategy', {
      type: 'string',
      array: true,
      describe:
        'Path to a strategy module, e.g. strategies/sma-cross.ts; several run as a portfolio on one account (docs/portfolios.md)',
    })
    .option('portfolio', {
      type: 'string',
      describe:
        'A portfolio file: { "strategies": [ { "module", "name", "params", "risk" } ] }, several strategies (the same module twice with other params) on one account',
    })
    .option('instrument', {
      type: 'string',
      describe: 'Instrument, for strategies that take an `instrument` param (default from config: EUR_USD)',
    })
    .option('granularity', {
      type: 'string',
      describe: 'Granularity, for strategies that take a `granularity` param (default: H1)',
    })
    .option('from', { type: 'string', describe: 'Start, UTC date or RFC 3339 time (default: 2024-01-01)' })
    .option('to', { type: 'string', describe: 'End, exclusive (default: 2025-01-01)' })
    .option('param', {
      type: 'array',
      string: true,
      describe: 'Override a strategy param: --param fast=5 --param units=2000',
    })
    .option('ticks', {
      type: 'string',
      describe:
        'Tick file or folder (generic time,bid,ask; Lean ms,bid,ask; HistData ticks), or a catalog recorded with fxflow record --prices (its ticks/<INSTRUMENT>/ day files), for strategies that subscribe to ticks; ticks then drive the fills',
    })
    .option('json', {
      type: 'boolean',
      describe: 'Print one JSON document: summary, every transaction, the closed trades, the equity curve',
    })
    .option('config', {
      type: 'string',
      describe: 'A JSON file merged over config/default.json (e.g. config/classic.json)',
    })
    .option('balance', { type: 'string', describe: 'Initial balance (account.initialBalance)' })
    .option('currency', { type: 'string', describe: 'Account currency (account.currency)' })
    .option('margin-rate', {
      type: 'string',
      describe: 'Account margin rate, e.g. 0.02 for 50:1 (account.marginRate)',
    })
    .option('hedging', { type: 'boolean', describe: 'Hedging account instead of netting (account.hedging)' })
    .option('daily-alignment', {
      type: 'number',
      describe: 'Hour (0-23) where D, W, M candles built from finer data start (OANDA: 17)',
    })
    .option('alignment-timezone', {
      type: 'string',
      describe: 'Time zone of --daily-alignment (OANDA: America/New_York)',
    })
    .option('weekly-alignment', {
      type: 'string',
      describe: 'Day W candles built from finer data start (OANDA: Friday)',
    })
    .option('strict-data', {
      type: 'boolean',
      default: false,
      describe: 'Stop at the first hole in the data beyond weekends and holidays (default: warn and run on)',
    })
    .option('fifo', {
      type: 'boolean',
      describe:
        'FIFO account, as at OANDA US (account.fifo): no hedging, oldest same-size trade closes first',
    })
    .options(SIM_FLAGS)
    .option('runs-dir', {
      type: 'string',
      describe: 'Where run folders are saved (run.runsDir, default runs/)',
    })
    .option('report-timezone', {
      type: 'string',
      describe:
        "IANA time zone of the times on report.txt and report.html, e.g. America/New_York (report.timeZone, default UTC); the run's files stay in UTC",
    })
    .option('save', { type: 'boolean', default: true, describe: 'Save a run folder; --no-save to skip' })
    .option('typecheck', {
      type: 'boolean',
      default: true,
      describe:
        'Type-check the strategy file first (when TypeScript is installed): a syntax error stops the run, type errors are printed with their place; --no-typecheck to skip',
    })
    .example('$0 backtest strategies/sma-cross.ts', 'SMA crossover on the bundled EUR_USD H1 sample (2024)')
    .example(
      '$0 backtest strategies/sma-cross.ts --config config/classic.json --param longOnly=true',
      'The classic reference configuration',
    )
    .example(
      '$0 backtest strategies/sma-cross.ts strategies/breakout-tpsl.ts --config config/classic.json',
      'Two strategies on one account, each with its own book (a portfolio)',
    )
    .example(
      '$0 backtest strategies/breakout-tpsl.ts --instrument USD_JPY --json',
      'JSON report with every transaction',
    );
}

export interface BacktestArgs extends SimFlagArgs {
  /** One path (a strategy), several (a portfolio), or none with --portfolio. */
  strategy: string | string[] | undefined;
  portfolio?: string;
  instrument?: string;
  granularity?: string;
  from?: string;
  to?: string;
  param?: (string | number)[];
  data?: string;
  ticks?: string;
  format?: string;
  json?: boolean;
  config?: string;
  balance?: string;
  currency?: string;
  marginRate?: string;
  hedging?: boolean;
  fifo?: boolean;
  spread?: string;
  spreadPips?: number;
  financing?: boolean;
  financingHistory?: string;
  financingBeforeHistory?: string;
  commission?: string;
  slippage?: string;
  latency?: string;
  runsDir?: string;
  path?: string;
  marketHours?: boolean;
  save?: boolean;
  strictData?: boolean;
  dailyAlignment?: number;
  alignmentTimezone?: string;
  weeklyAlignment?: string;
  typecheck?: boolean;
}

export async function backtestCommand(a: BacktestArgs): Promise<void> {
  // The flags as a config (over --config's file), params and data; the library call does the rest.
  const overrides = runFlagOverrides(a);
  if (a.financingHistory === '') {
    // --financing-history alone: the financing recorded in the catalog the run reads.
    const { financingBeforeHistory: _b, ...costs } = overrides.costs ?? {};
    const catalog = loadConfig(a.config, { ...overrides, costs }).data.catalog;
    (overrides.costs ??= {}).financingHistory = configCatalog({ data: { catalog } });
  }
  const config = loadConfig(a.config, overrides);
  const files = a.strategy === undefined ? [] : Array.isArray(a.strategy) ? a.strategy : [a.strategy];
  const input = strategyInput(files, a.portfolio, a.param);
  // tsx runs TypeScript without checking its types: a type error is found here, with its place.
  const modules = typeof input === 'string' ? [input] : input.portfolio.map((e) => e.module);
  for (const m of modules)
    if (a.typecheck !== false && existsSync(m)) {
      const warning = typeCheckStrategy(resolve(m));
      if (warning !== undefined) process.stderr.write(`fxflow: warning: ${warning}\n`);
    }
  const data = dataFileInput(a) ?? {
    catalog: configCatalog(config),
    alignment: parseAlignment(
      a.dailyAlignment ?? 17,
      a.alignmentTimezone ?? 'America/New_York',
      a.weeklyAlignment ?? 'Friday',
    ),
  };
  let bar: ProgressBar | undefined;
  let log: Logger | undefined;
  const run = await backtest(input, (a.param ?? []).map(String), data, config, {
    runGiven: runGiven(a.config, overrides),
    ...(a.ticks !== undefined ? { ticks: a.ticks } : {}),
    save: a.save !== false,
    keepTransactions: a.json === true,
    strictData: a.strictData === true,
    onHole: (h) =>
      process.stderr.write(
        `warning: ${h.instrument} ${h.granularity} has no data from ${h.from} to ${h.to} (${h.openHours} h of open market): the backtest runs on across it (--strict-data stops instead)\n`,
      ),
    onStart: (loaded) => (bar = new ProgressBar(`backtest ${loaded.name}`)),
    onProgress: (f, n) => bar?.update(f, n),
    log: (runDir, name) => {
      log = createLogger(runDir ? { file: join(runDir, 'log.jsonl'), isoTime: true } : { level: 'warn' });
      return log.child({ component: 'strategy', strategy: name });
    },
  }).finally(async () => {
    bar?.done();
    if (log) await flushLogger(log);
  });
  if (a.json) {
    process.stdout.write(`${JSON.stringify(runJson(run))}\n`);
    return;
  }
  const text = `${runText(run)}${formatStrategies(run.summary)}`;
  const m = run.models;
  const models = `fill models: path ${m.path} · slippage ${m.slippage} · latency ${m.latency} · commission ${m.commission}`;
  const speed = `${formatCount(run.engine.events)} events in ${(run.wallMs / 1000).toFixed(2)} s (${formatCount(run.engine.events / (run.wallMs / 1000))}/s)`;
  process.stdout.write(`${text}\n${models}\n${speed}\n`);
  if (run.runDir) {
    writeFileSync(join(run.runDir, 'report.txt'), `${text}\n${models}\n${speed}\n`);
    process.stdout.write(`Run saved in ${run.runDir}\n`);
    const page = join(run.runDir, 'report.html');
    if (existsSync(page))
      process.stdout.write(
        `Report: ${page} (open it in a browser, or: fxflow report ${run.runDir} --open)\n`,
      );
  }
}
