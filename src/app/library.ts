/// <reference types="node" preserve="true" />
import { runGiven, runParams, type ParamSources, type RunGiven } from './run-choices.ts';
import { join, resolve } from 'node:path';
import { DataError } from '../adapters/catalog/index.ts';
import type { Candle } from '../domain/candle.ts';
import type { Alignment, Granularity } from '../domain/granularity.ts';
import { loadInstruments, type InstrumentRegistry } from '../domain/instrument.ts';
import type { Tick } from '../domain/tick.ts';
import { StrategyError, subscriptionsOf } from '../engine/engine.ts';
import { formatSummary } from '../engine/report.ts';
import { humanTime } from '../report/human-time.ts';
import { gateTicks, openTicks } from '../adapters/catalog/index.ts';
import { catalogLabs } from '../adapters/catalog/labs-store.ts';
import type { ParamValue, Params, Strategy, StrategyLogger } from '../strategy/api.ts';
import {
  runBacktest,
  type BacktestResult,
  type CandleSourceFactory,
  type DataHole,
  type SeriesOrigin,
} from './backtest.ts';
import { ConfigError, loadConfig, type BacktestConfig } from './config.ts';
import { configCatalog, withCatalogResolved } from '../adapters/catalog/location.ts';
import { dropRunDir, makeRunDir } from './line-file.ts';
import { applyParams, loadStrategy, strategyFromObject, type LoadedStrategy } from './load-strategy.ts';
import { dataCatalog, fileSource } from './sources.ts';
import { loadPortfolio, type PortfolioEntry } from './portfolio.ts';

export { readPortfolioFile, type PortfolioEntry } from './portfolio.ts';

export {
  runBacktest,
  withSpread,
  tradesCsv,
  equityCsv,
  type BacktestOptions,
  type BacktestResult,
  type CandleSourceFactory,
  type StrategyTrade,
} from './backtest.ts';
export { StrategyLoadError, type LoadedStrategy } from './load-strategy.ts';
export { ConfigError, type BacktestConfig } from './config.ts';

/** A strategy module's path, or the strategy object itself (what `defineStrategy` returns). */
/**
 * A strategy module's path, a strategy object, or a portfolio: several strategies on one account
 * (docs/portfolios.md), each entry a module with its name, params and own limits.
 */
export type StrategyInput =
  string | Strategy<any, any> | { readonly portfolio: readonly PortfolioEntry[]; readonly label?: string };

/** Param overrides by name (`{ fast: 10 }`), or `name=value` strings as `--param` takes them. */
export type ParamsInput = Readonly<Record<string, ParamValue>> | readonly string[];

/**
 * Where the candles come from: a catalog folder (a string, or `{ catalog }` with the alignment of the
 * D/W/M candles it builds from finer ones), one file or folder in a supported format (`{ file }`, as
 * `--data`), or the candles themselves (any order of series; each series in time order). Default:
 * the config's `data.catalog`.
 */
export type DataInput =
  | string
  | { readonly catalog: string; readonly alignment?: Alignment }
  | {
      readonly file: string;
      readonly format?: string;
      readonly timezone?: string;
      readonly side?: 'bid' | 'ask' | 'mid';
    }
  | readonly Candle[];

type Section = Readonly<Record<string, string | number | boolean | readonly number[] | null>>;

/**
 * The configuration: a JSON file's path (merged over config/default.json, as `--config`), or
 * sections merged over the defaults (`{ run: { from: '2024-01-01' }, account: { initialBalance: '5000' } }`),
 * optionally over a file (`extends`). A full `BacktestConfig` is accepted as it is.
 */
export type ConfigInput =
  string | (Readonly<Record<string, Section | undefined>> & { readonly extends?: string }) | BacktestConfig;

/** How the call runs (all optional). */
export interface BacktestCallOptions {
  /** A tick file or folder, for strategies that subscribe to ticks or for `fill.path` "exact". */
  readonly ticks?: string;
  /** Save a run folder (summary.json, transactions.jsonl, trades.csv, equity.csv, report.html…): `true` for a new folder under `run.runsDir`, or the folder. Default: nothing is written. */
  readonly save?: boolean | string;
  /** Keep every transaction and closed trade in the result (default true; false for long runs, whose summary counts them anyway). */
  readonly keepTransactions?: boolean;
  /** The strategy's logger, or a function given the run folder (when saving) and the strategy's name that makes one. Default: warnings and errors on stderr. */
  readonly log?: StrategyLogger | ((runDir: string | undefined, name: string) => StrategyLogger);
  /** Stop at the first hole in the data beyond weekends and holidays (default: list them in `data` and run on). */
  readonly strictData?: boolean;
  readonly onHole?: (h: DataHole) => void;
  readonly onProgress?: (fraction: number, events: number) => void;
  /** Who gave the config's run.instrument and run.granularity (the CLI's flags and --config file); default: read from `config`. */
  readonly runGiven?: RunGiven;
  /** Called once the strategy is loaded and its params are known, before the run (the CLI names its progress bar). */
  readonly onStart?: (loaded: LoadedStrategy) => void;
}

/** What a backtest returns: the CLI prints this (as text, or as JSON with `--json`). */
export interface BacktestRun extends BacktestResult {
  /** The strategy's name. */
  readonly strategy: string;
  readonly params: Params;
  /** Where the strategy's `instrument` and `granularity` came from (`the strategy's default`, `--granularity`, `config file …`, `--param`). */
  readonly paramSources: ParamSources;
  /** The configuration it ran with, every default filled in. */
  readonly config: BacktestConfig;
}

/**
 * Runs one backtest: the library's core call, which `fxflow backtest`, the optimiser's trials and
 * scripts all compose.
 *
 * ```ts
 * import { backtest } from 'fxflow';
 * const run = await backtest('strategies/sma-cross.ts', { fast: 10 }, 'data/catalog', { run: { from: '2024-01-01', to: '2024-07-01' } });
 * console.log(run.summary.netPL, run.summary.trades);
 * ```
 *
 * The strategy's `instrument` and `granularity` params, when it declares them, are its own unless
 * `params` or the config given sets them (`run.instrument`, `run.granularity`; config/default.json's
 * values are for strategies that declare neither), as with the CLI.
 * Errors are the CLI's: a StrategyLoadError, ConfigError or DataError naming the file, field or
 * param and how to fix it.
 */
export async function backtest(
  strategy: StrategyInput,
  params: ParamsInput = {},
  data?: DataInput,
  config: ConfigInput = {},
  options: BacktestCallOptions = {},
): Promise<BacktestRun> {
  // The catalog as the folder it names now: the run's config.json reads the same one from anywhere.
  const cfg = withCatalogResolved(resolveConfig(config));
  const instruments = loadInstruments();
  const overrides = paramStrings(params);
  let loaded: LoadedStrategy;
  let sources: ParamSources = {};
  if (typeof strategy === 'object' && 'portfolio' in strategy) {
    // A portfolio: each entry's params are its own (the shared `params` are not applied).
    loaded = await loadPortfolio(
      strategy.portfolio,
      cfg,
      options.runGiven ?? givenIn(config),
      strategy.label ?? 'the portfolio',
    );
  } else {
    const probe =
      typeof strategy === 'string' ? await loadStrategy(strategy, []) : strategyFromObject(strategy, []);
    // The strategy's own instrument and granularity stand unless the user named others (run-choices.ts).
    const declared = probe.strategy.params;
    const chosen = runParams(declared, overrides, cfg, options.runGiven ?? givenIn(config));
    sources = chosen.sources;
    loaded = {
      ...probe,
      params: applyParams(typeof strategy === 'string' ? strategy : probe.file, declared, [
        ...chosen.implicit,
        ...overrides,
      ]),
    };
  }
  options.onStart?.(loaded);

  const source = await candleSource(data, cfg, instruments);
  const runDir =
    options.save === true
      ? join(resolve(cfg.run.runsDir), runId(loaded.name))
      : typeof options.save === 'string'
        ? resolve(options.save)
        : undefined;
  // The run folder first, so a bad folder is one clear message before anything is written.
  const made = runDir ? makeRunDir(runDir) : [];
  const log =
    typeof options.log === 'function' ? options.log(runDir, loaded.name) : (options.log ?? STDERR_LOG);
  const ticks = options.ticks;
  let result: BacktestResult;
  try {
    result = await runBacktest({
      loaded,
      config: cfg,
      instruments,
      candles: source.candles,
      available: source.available,
      origin: source.origin,
      ...(ticks !== undefined
        ? {
            // Through the gate every price source passes: the path's instrument, each price, the clock.
            ticks: (req: { instrument: string; from: number; to: number }): AsyncIterable<readonly Tick[]> =>
              gateTicks(openTicks(resolve(ticks), req), resolve(ticks), {
                instrument: req.instrument,
                instruments,
                fix: 'run',
              }),
          }
        : {}),
      // Recorded labs events come from the catalog the candles come from, or the config's.
      labs: catalogLabs(source.kind === 'catalog' ? source.where : configCatalog(cfg)),
      log,
      keepTransactions: options.keepTransactions !== false,
      strictData: options.strictData === true,
      ...(options.onHole ? { onHole: options.onHole } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(runDir ? { runDir } : {}),
    });
    if (result.engine.events === 0) {
      // Nothing to trade on: a report of zeros would hide it.
      const subs = subscriptionsOf(loaded.strategy, loaded.params, loaded.name);
      const wanted = [...(subs.candles ?? []), ...(subs.ticks ?? []).map((t) => `${t} ticks`)].join(', ');
      throw new DataError(
        source.where,
        0,
        '',
        `no data for ${wanted} between ${cfg.run.from} and ${cfg.run.to}: check --instrument, --granularity, --from and --to (run.instrument, run.granularity, run.from, run.to) against what it holds${source.kind === 'catalog' ? ' (`fxflow data list`)' : ''}`,
      );
    }
  } catch (e) {
    // A refused run (data, config, spread model, no data in the period) leaves no run folder; a
    // strategy that failed mid-run keeps its folder (its log and transactions up to the failure).
    if (!(e instanceof StrategyError)) dropRunDir(made);
    throw e;
  }
  return { ...result, strategy: loaded.name, params: loaded.params, paramSources: sources, config: cfg };
}

/** Who gave the run's instrument and granularity in a ConfigInput (a full BacktestConfig gives both). */
function givenIn(config: ConfigInput): RunGiven {
  if (typeof config === 'string') return runGiven(config, {});
  const { extends: file, ...sections } = config as Record<string, unknown> & { extends?: string };
  return runGiven(file, sections, {
    instrument: 'the config given to backtest()',
    granularity: 'the config given to backtest()',
  });
}

/** The configuration a ConfigInput describes, validated (errors name the file or field). */
export function resolveConfig(config: ConfigInput): BacktestConfig {
  if (typeof config === 'string') return loadConfig(config);
  const { extends: file, ...sections } = config as Record<string, unknown> & { extends?: string };
  if (file !== undefined && typeof file !== 'string')
    throw new ConfigError(
      'the config given to backtest()',
      'extends',
      'must be the path of a JSON config file',
    );
  return loadConfig(file, sections as Parameters<typeof loadConfig>[1], 'the config given to backtest()');
}

/**
 * The run as the JSON document `fxflow backtest --json` prints (times as RFC 3339 strings). A
 * portfolio's `trades` and `openAtEnd` are each strategy's own (its book's, as trades.csv lists
 * them), each with its `strategy`; its `params` are each member's module and params, by name, and
 * `summary.strategies` has each strategy's figures.
 */
export function runJson(run: BacktestRun): Record<string, unknown> {
  const trades = run.strategyTrades?.closed ?? run.trades;
  const open = run.strategyTrades?.open ?? run.openAtEnd;
  return {
    strategy: run.strategy,
    params: run.memberParams ?? run.params,
    config: run.config,
    summary: run.summary,
    data: run.data,
    transactions: run.transactions,
    trades: trades.map((t) => ({
      ...t,
      openTime: new Date(t.openTime).toISOString(),
      closeTime: new Date(t.closeTime).toISOString(),
    })),
    openAtEnd: open.map((t) => ({
      ...t,
      openTime: new Date(t.openTime).toISOString(),
      closeTime: Number.isFinite(t.closeTime) ? new Date(t.closeTime).toISOString() : null,
    })),
    equity: run.equity.map((e) => ({ time: new Date(e.time).toISOString(), balance: e.balance, nav: e.nav })),
    engine: run.engine,
    runDir: run.runDir ?? null,
  };
}

/** The run's report as `fxflow backtest` prints it (figures, costs, data; without the speed line). */
export function runText(run: BacktestRun): string {
  const params = Object.entries(run.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const from = Object.entries(run.paramSources)
    .map(([k, v]) => `${k} ${String(run.params[k])} from ${v}`)
    .join('; ');
  const zone = run.config.report?.timeZone;
  const human =
    zone !== undefined && zone !== 'UTC'
      ? (iso: string): string => humanTime(Date.parse(iso), zone)
      : undefined;
  return `${formatSummary(run.summary, `${run.strategy}  ${params}`, human)}${from ? `\nRun params: ${from}` : ''}`;
}

function paramStrings(params: ParamsInput): string[] {
  if (Array.isArray(params)) return params.map(String);
  return Object.entries(params as Readonly<Record<string, ParamValue>>).map(([k, v]) => `${k}=${String(v)}`);
}

function runId(name: string): string {
  const t = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${t}-${name}-${process.pid}`;
}

interface Source {
  readonly candles: CandleSourceFactory;
  readonly available: (instrument: string, granularity: Granularity) => boolean;
  readonly origin: (instrument: string, granularity: Granularity) => SeriesOrigin;
  readonly kind: 'catalog' | 'file' | 'memory';
  /** Named in errors. */
  readonly where: string;
}

async function candleSource(
  data: DataInput | undefined,
  config: BacktestConfig,
  instruments: InstrumentRegistry,
): Promise<Source> {
  if (
    data === undefined ||
    typeof data === 'string' ||
    (!Array.isArray(data) && 'catalog' in (data as object))
  ) {
    const d = data as string | { catalog: string; alignment?: Alignment } | undefined;
    // The config's catalog (location.ts: FXFLOW_CATALOG, the config file's folder, ./data/catalog or the sample); a path given here, the working folder's.
    const root = d === undefined ? configCatalog(config) : resolve(typeof d === 'string' ? d : d.catalog);
    const c = await dataCatalog(root, typeof d === 'object' ? d.alignment : undefined);
    return { ...c, kind: 'catalog', where: root };
  }
  if (!Array.isArray(data)) {
    const f = data as { file: string; format?: string; timezone?: string; side?: 'bid' | 'ask' | 'mid' };
    // A file holds one instrument, so conversion prices can only come from a catalog.
    return {
      candles: fileSource(f.file, f, config, instruments),
      available: () => false,
      origin: () => ({ source: resolve(f.file), sides: 'unknown', synthetic: false }),
      kind: 'file',
      where: resolve(f.file),
    };
  }
  return memorySource(data as readonly Candle[]);
}

/** Candles given in memory: grouped by series, each checked to be in time order. */
function memorySource(candles: readonly Candle[]): Source {
  const bySeries = new Map<string, Candle[]>();
  for (let i = 0; i < candles.length; i++) {
    const c = candles[i]!;
    const key = `${c.instrument}:${c.granularity}`;
    let list = bySeries.get(key);
    if (!list) bySeries.set(key, (list = []));
    const last = list[list.length - 1];
    if (last !== undefined && !(c.time > last.time)) {
      throw new DataError(
        '(candles given to backtest())',
        i + 1,
        'time',
        `${key} candle #${i + 1} at ${new Date(c.time).toISOString()} is not after the one before it (${new Date(last.time).toISOString()}): give each series in time order, without duplicates`,
      );
    }
    list.push(c);
  }
  return {
    candles: (req) => {
      const list = bySeries.get(`${req.instrument}:${req.granularity}`) ?? [];
      let lo = 0;
      while (lo < list.length && list[lo]!.time < req.from) lo++;
      let hi = lo;
      while (hi < list.length && list[hi]!.time < req.to) hi++;
      return (async function* () {
        for (let i = lo; i < hi; i += 4096) yield list.slice(i, Math.min(hi, i + 4096));
      })();
    },
    available: (i, g) => bySeries.has(`${i}:${g}`),
    origin: () => ({ source: '(candles given to backtest())', sides: 'unknown', synthetic: false }),
    kind: 'memory',
    where: '(candles given to backtest())',
  };
}

/** Default strategy logger: warnings and errors as JSON lines on stderr, debug and info dropped. */
const STDERR_LOG: StrategyLogger = {
  debug() {},
  info() {},
  warn: (obj, msg) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'warn', ...obj, ...(msg !== undefined ? { msg } : {}) })}\n`,
    ),
  error: (obj, msg) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'error', ...obj, ...(msg !== undefined ? { msg } : {}) })}\n`,
    ),
};
