import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SimBroker, SimStats } from '../adapters/sim/broker.ts';
import type { Candle } from '../domain/candle.ts';
import type { Tick } from '../domain/tick.ts';
import { conversionInstruments } from '../domain/conversion.ts';
import type { CalendarEvent, CotEvent, MarketEvent, SignalEvent, SpreadEvent } from '../domain/events.ts';
import { granularityMs, type Granularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { transactionJson } from '../domain/v20/transaction-json.ts';
import { parseCandleSeries, subscriptionsOf, type EngineStats } from '../engine/engine.ts';
import type { IndicatorMemo } from '../engine/indicator-memo.ts';
import { fromBatches, mergeBatches } from '../engine/merge.ts';
import { Portfolio, type ClosedTrade, type EquityPoint } from '../engine/portfolio.ts';
import { OrderStats } from '../engine/order-stats.ts';
import { activeLimits } from '../engine/risk.ts';
import {
  summarize,
  type DataHole,
  type DataReport,
  type SeriesOrigin,
  type Summary,
} from '../engine/report.ts';

export type { DataHole, DataReport, SeriesOrigin };
import { toUnits } from '../domain/money.ts';
import { formatIsoMs } from '../domain/time.ts';
import { VirtualClock } from '../ports/clock.ts';
import type { Params, Strategy, StrategyLogger } from '../strategy/api.ts';
import { assemble, type AssemblyMode } from './assembly.ts';
import { ConfigError, fillModelNames, ROOT, type BacktestConfig } from './config.ts';
import { financingHistory } from '../adapters/catalog/financing-store.ts';
import type { FinancingRates } from '../domain/instrument.ts';
import { SeriesWatch, dataReport } from './series-watch.ts';
import { LineFile, makeRunDir } from './line-file.ts';
import { PlotFile } from './plot-file.ts';
import { parseDate } from './config.ts';
import { StrategyLoadError, type LoadedStrategy } from './load-strategy.ts';
import { CandleRecorder } from '../report/candle-recorder.ts';
import { RunTransactionFold, type TxRecord } from '../report/run-folder.ts';
import { writeRunReport } from '../report/run-report.ts';
import { isPortfolio } from './portfolio.ts';
import { PortfolioRun, type StrategyTrade } from './portfolio-run.ts';
import { keepBatches, timeBatches, withSpread } from './backtest-batches.ts';
import {
  currencyDigits,
  EQUITY_CSV_HEADER,
  equityCsvRow,
  TRADES_CSV_HEADER,
  tradeCsvRow,
} from './backtest-csv.ts';

export type { StrategyTrade };
export { withSpread } from './backtest-batches.ts';
export { currencyDigits, equityCsv, tradesCsv } from './backtest-csv.ts';

/** Where a backtest gets the candles of one (instrument, granularity). */
export type CandleSourceFactory = (req: {
  instrument: string;
  granularity: Granularity;
  from: number;
  to: number;
}) => AsyncIterable<readonly Candle[]>;

export interface BacktestOptions {
  /** Which mode runs this backtest: a backtest (default), a sweep's trial or a walk-forward fold (src/app/assembly.ts). */
  readonly mode?: Extract<AssemblyMode, 'backtest' | 'optimize' | 'walkforward'>;
  readonly loaded: LoadedStrategy;
  readonly config: BacktestConfig;
  readonly instruments: InstrumentRegistry;
  readonly candles: CandleSourceFactory;
  /** Where tick subscriptions get their ticks (required when the strategy subscribes to ticks). */
  readonly ticks?: (req: { instrument: string; from: number; to: number }) => AsyncIterable<readonly Tick[]>;
  /**
   * Where `signals` / `calendar` subscriptions get their recorded labs events, each at the time it
   * became known (docs/labs.md). Without it such subscriptions get nothing.
   */
  readonly labs?: {
    calendar(req: {
      currencies: readonly string[];
      from: number;
      to: number;
    }): AsyncIterable<readonly CalendarEvent[]>;
    signals(req: {
      instruments: readonly string[];
      from: number;
      to: number;
    }): AsyncIterable<readonly SignalEvent[]>;
    /** Recorded labs spreads of an instrument (for `data.spread: 'labs'`): the average spread in pips by interval start. */
    spreads?(instrument: string, from: number, to: number): Promise<(time: number) => number>;
    /** Recorded labs spread intervals as events (`spreads` subscriptions). */
    spreadEvents?(req: {
      instruments: readonly string[];
      from: number;
      to: number;
    }): AsyncIterable<readonly SpreadEvent[]>;
    /** Recorded COT reports as events (`cot` subscriptions). */
    cot?(req: {
      instruments: readonly string[];
      from: number;
      to: number;
    }): AsyncIterable<readonly CotEvent[]>;
  };
  /** Whether data exists for a series (used to choose conversion instruments); default: assume it does. */
  readonly available?: (instrument: string, granularity: Granularity) => boolean;
  readonly log: StrategyLogger;
  /** Keep every transaction in memory for the result (for --json and tests). */
  readonly keepTransactions?: boolean;
  /**
   * Keep every closed trade in memory for the result's `trades` (default: as keepTransactions). The
   * summary counts them either way and the run folder's trades.csv is written as they close, so a
   * long backtest does not hold them.
   */
  readonly keepTrades?: boolean;
  /** Save a run folder here (summary.json, transactions.jsonl, equity.csv, report.txt, config.json). */
  readonly runDir?: string;
  readonly onProgress?: (fraction: number, events: number) => void;
  /** What the source knows of each series (sides, synthetic, where from); unknown sides are read from the data. */
  readonly origin?: (instrument: string, granularity: Granularity) => SeriesOrigin;
  /** Stop at the first hole in the data beyond weekends and holidays (default: list them and run on). */
  readonly strictData?: boolean;
  /** Called for each hole as the run meets it. */
  readonly onHole?: (h: DataHole) => void;
  /**
   * Runs that read the very same candles (a sweep's trials, on one decoded series) can share what
   * watching them found: a finished watch of a series over the same period, spread model and
   * strictness is reused (the series is not watched again: its holes, coverage and sides are the
   * first run's), and a run adds the watches it completes. Only for sources that give every run the
   * same candles.
   */
  readonly watches?: Map<string, SeriesWatch>;
  /**
   * Shares `ctx.indicator` values between runs that read the very same candles (a sweep's trials on
   * one decoded series; see IndicatorMemo): the first run that creates an indicator records it, the
   * next ones with the same period, data options and point of creation replay it.
   */
  readonly indicatorMemo?: IndicatorMemo;
  /**
   * Keeps each series' candles as the run fed them (read, watched and priced by the spread model),
   * by `INSTRUMENT:GRANULARITY`, for the next run on the very same candles (a sweep's trials in one
   * worker): a run whose period, data options (the spread model) and the series' sides match the
   * kept ones feeds those batches as they are and does not call `candles` for that series. One
   * entry a series: the first run keeps what it read; a run with other options keeps nothing and
   * marks its options, and the next run with the same options keeps its candles in place of the
   * old ones. So options that change from run to run (a swept spread model) are read and priced by
   * every run, as without this option, and a new period (a walk-forward fold) is kept from its
   * second run on. Only for sources that give every run the same candles; with `watches`.
   */
  readonly priced?: Map<string, PricedSeries>;
  /**
   * At most this many candles are kept in `priced` (all its series together; default 1,000,000,
   * about 115 MB of candle objects): a run whose series would pass it keeps none of them, and every
   * run reads and prices them, as without `priced`.
   */
  readonly pricedMaxCandles?: number;
}

/** BacktestOptions.pricedMaxCandles by default. */
export const PRICED_MAX_CANDLES = 1_000_000;

/** A series' candles as one run fed them, for the next run with the same `key` (BacktestOptions.priced). */
export interface PricedSeries {
  /** The period, the data options and the series' sides they were priced for. */
  readonly key: string;
  /** Undefined: a run had these options after a run with others, and kept nothing; the next run with them keeps its candles. */
  readonly batches?: readonly (readonly Candle[])[];
  /** The run that would have kept them found more candles than pricedMaxCandles: runs with this key keep none. */
  readonly over?: true;
}

export interface BacktestResult {
  readonly summary: Summary;
  readonly transactions: Transaction[];
  /** Every trade closed in full, in closing order (with keepTrades; empty otherwise). */
  readonly trades: readonly ClosedTrade[];
  /** The trades still open at the end, marked at the last prices (exit reason END_OF_RUN). */
  readonly openAtEnd: readonly ClosedTrade[];
  readonly equity: readonly EquityPoint[];
  /** A portfolio's: each strategy's own equity curve, by name (its figures are summary.strategies). */
  readonly strategyEquity?: Readonly<Record<string, readonly EquityPoint[]>>;
  /**
   * A portfolio's: each strategy's own trades (its book's, as trades.csv lists them), each with its
   * `strategy`: `closed` in closing order (with keepTrades; empty otherwise), then `open`, those the
   * books hold at the end, marked at the last prices (END_OF_RUN). `trades` and `openAtEnd` are the
   * account's (the same trades as the books' unless the account nets across strategies).
   */
  readonly strategyTrades?: {
    readonly closed: readonly StrategyTrade[];
    readonly open: readonly StrategyTrade[];
  };
  /** A portfolio's: each member's module and params, by name (summary.json's `params`). */
  readonly memberParams?: Readonly<Record<string, unknown>>;
  readonly engine: EngineStats;
  readonly sim: SimStats;
  /** The fill models the simulator used, by name (path, slippage, latency, commission). */
  readonly models: SimBroker['models'];
  readonly intents: number;
  readonly wallMs: number;
  /**
   * With `priced`: the part of wallMs spent getting the candles (building them from the source,
   * watching them and applying the spread model, or handing over the kept batches).
   */
  readonly candleMs?: number;
  readonly runDir?: string;
  /** Which data and spread model produced the numbers, and what the data covered. */
  readonly data: DataReport;
}

/**
 * Runs one backtest: the strategy's subscriptions become catalog sources merged in time order,
 * the simulated broker sees every event before the engine does, and the engine drives the
 * strategy. The same Engine, Portfolio and strategy code run live with other adapters.
 */
export async function runBacktest(o: BacktestOptions): Promise<BacktestResult> {
  const { loaded, config, instruments } = o;
  const from = parseDate(config.run.from);
  const to = parseDate(config.run.to);
  const subs = subscriptionsOf(loaded.strategy, loaded.params, loaded.name);
  const tickInstruments = subs.ticks ?? [];
  if ((subs.candles ?? []).length === 0 && tickInstruments.length === 0) {
    throw new StrategyLoadError(
      loaded.file,
      "the strategy subscribes to no candles and no ticks; a backtest replays what it subscribes to (e.g. subscribe: { candles: ['EUR_USD:H1'] })",
    );
  }
  if (config.fill.path === 'exact' && !o.ticks) {
    throw new ConfigError(
      'configuration',
      'fill.path',
      '"exact" replays the ticks inside each candle: give a tick file or folder with --ticks, or use "adaptive" or "worst"',
    );
  }
  if (tickInstruments.length > 0 && !o.ticks) {
    throw new StrategyLoadError(
      loaded.file,
      `the strategy subscribes to ticks (${tickInstruments.join(', ')}): give a tick file with --ticks <file or folder>`,
    );
  }
  // One source per (instrument, granularity), finest first so ties resolve to the finer candle.
  const wanted = new Map<string, { instrument: string; granularity: Granularity }>();
  for (const spec of subs.candles ?? []) {
    const s = parseCandleSeries(spec, instruments);
    wanted.set(`${s.instrument}:${s.granularity}`, { instrument: s.instrument, granularity: s.granularity });
  }
  // Conversion prices: a non-USD account trading GBP_USD needs EUR_USD too. They reach the
  // simulator and the portfolio, not the strategy (it did not subscribe to them).
  // The report charts the finest subscribed series of each instrument (not the conversion prices).
  const charted = new Set<string>();
  for (const s of [...wanted.values()].sort(
    (a, b) => granularityMs(a.granularity) - granularityMs(b.granularity),
  )) {
    if (![...charted].some((k) => k.startsWith(`${s.instrument}:`)))
      charted.add(`${s.instrument}:${s.granularity}`);
  }
  const recorder = o.runDir ? new CandleRecorder() : undefined;
  const finest =
    wanted.size === 0
      ? 'M1'
      : [...wanted.values()].reduce((a, b) =>
          granularityMs(b.granularity) < granularityMs(a.granularity) ? b : a,
        ).granularity;
  const traded = [...new Set([...tickInstruments, ...[...wanted.values()].map((s) => s.instrument)])];
  const available = o.available ?? (() => true);
  for (const name of conversionInstruments(
    traded,
    config.account.currency,
    (n) => instruments.has(n),
    (n) => available(n, finest),
  )) {
    wanted.set(`${name}:${finest}`, { instrument: name, granularity: finest });
  }
  const series = [...wanted.values()].sort(
    (a, b) => granularityMs(a.granularity) - granularityMs(b.granularity),
  );
  // --spread labs: each instrument's recorded labs spreads (the spread of the interval a candle starts in).
  const labsSpreads = new Map<string, (time: number) => number>();
  if (config.data.spread === 'labs') {
    if (!o.labs?.spreads)
      throw new ConfigError(
        'configuration',
        'data.spread',
        '"labs" uses the recorded labs spreads of the catalog: record them with fxflow record --instruments ... --labs spreads',
      );
    for (const s of series)
      if (!labsSpreads.has(s.instrument))
        labsSpreads.set(s.instrument, await o.labs.spreads(s.instrument, from, to));
  }
  // Each series is watched as it streams: its coverage and holes, and (when its source does not
  // know) whether it is one-sided. One-sided data never gets a free spread.
  const watchKey = (s: { instrument: string; granularity: string }): string =>
    `${s.instrument}:${s.granularity}:${from}:${to}:${config.data.spread}:${o.strictData === true}`;
  const reused = series.map((s) => o.watches?.get(watchKey(s)));
  const watched = series.map(
    (s, k) =>
      reused[k] ??
      new SeriesWatch(
        s.instrument,
        s.granularity,
        o.origin?.(s.instrument, s.granularity) ?? { source: 'unknown', sides: 'unknown', synthetic: false },
        from,
        to,
        config.data.spread,
        o.strictData === true,
        o.onHole,
      ),
  );
  for (const w of watched) w.requireSpreadModel();
  // Ticks first: at an instant shared with a candle close, the tick is seen first, and ticks (the
  // finest prices) drive the simulator's matching for their instrument.
  // The exact path model matches each candle on its own ticks: every traded instrument gets a tick
  // source, which reaches the simulator only (the engine delivers ticks to tick subscribers alone).
  const tickSources = config.fill.path === 'exact' ? traded : tickInstruments;
  // Spreads and COT: a subscription with nowhere to read them from is an error, not a silent run without them.
  const labsSource = <E>(
    kind: 'spreads' | 'cot',
    wanted: readonly string[] | undefined,
    read:
      | ((req: { instruments: readonly string[]; from: number; to: number }) => AsyncIterable<readonly E[]>)
      | undefined,
  ): AsyncIterable<readonly E[]>[] => {
    if (wanted === undefined || wanted.length === 0) return [];
    if (read === undefined)
      throw new ConfigError(
        'strategy',
        `subscribe.${kind}`,
        `needs recorded labs ${kind}, and this run has no labs source (sweeps and walk-forward do not read labs): backtest it with fxflow backtest on a catalog that holds them (fxflow record --labs spreads,cot --instruments ${wanted.join(',')})`,
      );
    return [read({ instruments: wanted, from, to })];
  };
  // Candles kept by an earlier run on the same data (o.priced): fed as they are. Otherwise read,
  // watched and priced, and (with o.priced) kept as they pass for the next run.
  const pricedKey = (k: number): string =>
    `${from}:${to}:${JSON.stringify(config.data)}:${watched[k]!.origin.sides}`;
  const keeping: ((readonly Candle[])[] | undefined)[] = [];
  const marks: boolean[] = [];
  // The room left for candles kept by this run: the limit less what the map keeps of other series.
  const room = { left: o.pricedMaxCandles ?? PRICED_MAX_CANDLES };
  if (o.priced) {
    const here = new Set(series.map((s) => `${s.instrument}:${s.granularity}`));
    for (const [name, p] of o.priced)
      if (!here.has(name)) for (const b of p.batches ?? []) room.left -= b.length;
  }
  const candleTime = { ms: 0 };
  const sources = [
    ...tickSources.map((instrument) => o.ticks!({ instrument, from, to })),
    ...series.map((s, k) => {
      const inst = instruments.get(s.instrument);
      const name = `${s.instrument}:${s.granularity}`;
      const kept = o.priced && reused[k] && !labsSpreads.has(s.instrument) ? o.priced.get(name) : undefined;
      let source: AsyncIterable<readonly Candle[]>;
      if (kept?.batches && kept.key === pricedKey(k)) {
        source = fromBatches(kept.batches);
        for (const b of kept.batches) room.left -= b.length;
      } else {
        const candles = o.candles({ ...s, from, to });
        source = withSpread(
          reused[k] ? candles : watched[k]!.read(candles),
          config.data,
          inst.pip,
          (x) => inst.snap(x),
          watched[k]!.origin.sides,
          labsSpreads.get(s.instrument),
        );
        // Kept when nothing is (the first run), or when the run before had these data options too
        // (its key is marked without batches): data options that change from run to run (a swept
        // spread model) are never kept, and their candles die young as without this option.
        if (o.priced && !labsSpreads.has(s.instrument)) {
          if (!kept || (kept.batches === undefined && !kept.over && kept.key === pricedKey(k)))
            source = keepBatches(source, (keeping[k] = []), room);
          else if (kept.key !== pricedKey(k)) marks[k] = true;
        }
      }
      if (o.priced) source = timeBatches(source, candleTime);
      return recorder && charted.has(`${s.instrument}:${s.granularity}`)
        ? recorder.tap(
            source,
            s.instrument,
            s.granularity,
            inst.displayPrecision,
            granularityMs(s.granularity),
          )
        : source;
    }),
    // Labs last: an item known at the instant a candle closes is seen after that candle.
    ...(o.labs && (subs.calendar ?? []).length > 0
      ? [o.labs.calendar({ currencies: subs.calendar!, from, to })]
      : []),
    ...(o.labs && (subs.signals ?? []).length > 0
      ? [o.labs.signals({ instruments: subs.signals!, from, to })]
      : []),
    ...labsSource('spreads', subs.spreads, o.labs?.spreadEvents),
    ...labsSource('cot', subs.cot, o.labs?.cot),
  ] as AsyncIterable<readonly MarketEvent[]>[];

  // Financing: today's rates (data/instruments.json), or the rates recorded for each day.
  let financingRates: FinancingRates | undefined;
  let financingText = config.costs.financing ? "today's rates (data/instruments.json)" : 'off';
  if (config.costs.financing && config.costs.financingHistory !== undefined) {
    const h = financingHistory(
      resolve(ROOT, config.costs.financingHistory),
      traded,
      from,
      config.costs.financingBeforeHistory ?? 'error',
    );
    financingRates = h.rates;
    financingText = h.text;
  }
  // The one assembly (src/app/assembly.ts): the simulator from its factory, the portfolio sharing
  // its ledger (the simulator folds each transaction before it hands it on, so the one fold serves
  // both; live, the portfolio folds what the stream delivers), the risk gate between the engine and
  // the simulator, on the engine's clock (market time), as live, so the same strategy and limits are
  // refused at the same decisions (its refusals reach the strategy as rejects and are counted by
  // limit in the summary; without limits there is no gate), and the engine.
  const clock = new VirtualClock(from);
  let simNow = (): number => from;
  const log = withEngineTime(o.log, () => simNow());
  let intents = 0;
  let intentsOut: LineFile | undefined;
  // ctx.plot's values (plots.csv, made at the first plot); without a run folder ctx.plot does nothing.
  const plots = o.runDir ? new PlotFile(o.runDir) : undefined;
  // A portfolio: one engine per strategy, each on its own book (app/portfolio-run.ts), driven by
  // the assembly as one engine is.
  let many: PortfolioRun | undefined;
  const assembly = await assemble({
    mode: o.mode ?? 'backtest',
    ...(isPortfolio(loaded)
      ? {
          host: ({ execution, portfolio }) =>
            (many = new PortfolioRun({
              loaded,
              config,
              execution,
              account: portfolio,
              instruments,
              clock,
              log,
              keepClosedTrades: o.keepTrades ?? o.keepTransactions === true,
              ...(plots ? { plots } : {}),
              onIntent: (name, intent) => {
                intents++;
                intentsOut?.line(
                  `{"time":"${formatIsoMs(sim.now)}","at":${sim.now},"strategy":${JSON.stringify(name)},"intent":${JSON.stringify(intent)}}`,
                );
              },
              ...(o.onProgress
                ? {
                    onProgress: (at: number, n: number) =>
                      o.onProgress!(Math.min(1, Math.max(0, (at - from) / (to - from))), n),
                  }
                : {}),
            })).host,
        }
      : {}),
    strategies: isPortfolio(loaded)
      ? []
      : [
          {
            strategy: loaded.strategy as Strategy<Params, unknown>,
            name: loaded.name,
            params: loaded.params,
            ...(plots ? { onPlot: plots.plot } : {}),
            // The candles a run's series see depend on the period and the data options (the spread model) too.
            ...(o.indicatorMemo
              ? {
                  indicatorMemo: {
                    memo: o.indicatorMemo,
                    scope: `${from}:${to}:${JSON.stringify(config.data)}`,
                  },
                }
              : {}),
          },
        ],
    broker: {
      kind: 'sim',
      settings: {
        instruments,
        account: {
          currency: config.account.currency,
          balance: config.account.initialBalance,
          marginRate: config.account.marginRate,
          hedging: config.account.hedging,
          fifo: config.account.fifo,
        },
        financing: config.costs.financing,
        ...(financingRates !== undefined ? { financingRates } : {}),
        commissionPerMillion: config.costs.commissionPerMillion,
        path: config.fill.path,
        // The swappable models (src/adapters/sim/) and market hours, as the config names them (validated there).
        models: fillModelNames(config),
        // A portfolio's account nets each strategy's orders against its own trades (docs/portfolios.md),
        // unless account.portfolioNetting "account" asks for a real netting account's (across
        // strategies). A hedging account keeps it: its strategies' trades never net, and a
        // strategy's close of its position (REDUCE_ONLY) stays on its own trades.
        ...(isPortfolio(loaded) && (config.account.hedging || config.account.portfolioNetting !== 'account')
          ? { netByTag: true }
          : {}),
      },
    },
    portfolio: (simulator) =>
      new Portfolio({
        currency: config.account.currency,
        instruments,
        initialBalance: config.account.initialBalance,
        ledger: simulator!.ledger,
        shared: true,
        keepClosedTrades: o.keepTrades ?? o.keepTransactions === true,
      }),
    risk: {
      limits: config.risk,
      hedging: config.account.hedging,
      log,
      keepBreaches: false,
    },
    instruments,
    clock,
    log,
    marginRate: Number(config.account.marginRate),
    onIntent: (intent: OrderIntent) => {
      intents++;
      intentsOut?.line(
        `{"time":"${formatIsoMs(sim.now)}","at":${sim.now},"intent":${JSON.stringify(intent)}}`,
      );
    },
    ...(o.onProgress
      ? {
          onProgress: (at: number, n: number) =>
            o.onProgress!(Math.min(1, Math.max(0, (at - from) / (to - from))), n),
        }
      : {}),
  });
  const sim = assembly.sim!;
  simNow = () => sim.now;
  const { portfolio, driven: engine, execution } = assembly;
  const gate = assembly.risk;
  const limits = activeLimits(config.risk);

  const transactions: Transaction[] = [];
  let txOut: LineFile | undefined;
  let tradesOut: LineFile | undefined;
  let equityOut: LineFile | undefined;
  if (o.runDir) {
    makeRunDir(o.runDir);
    // The run folder's files are written as their lines come, each through one bounded buffer.
    const eq = (equityOut = new LineFile(join(o.runDir, 'equity.csv')));
    const digits = currencyDigits(config.account.currency);
    eq.line(EQUITY_CSV_HEADER);
    portfolio.onEquityPoint = (p) => eq.line(equityCsvRow(p, digits));
    txOut = new LineFile(join(o.runDir, 'transactions.jsonl'));
    intentsOut = new LineFile(join(o.runDir, 'intents.jsonl'));
    const out = (tradesOut = new LineFile(join(o.runDir, 'trades.csv')));
    // A portfolio's trades.csv has each strategy's own trades, with a strategy column (portfolio-run.ts).
    out.line(isPortfolio(loaded) ? `${TRADES_CSV_HEADER},strategy` : TRADES_CSV_HEADER);
    if (many) many.tradesTo({ out, row: tradeCsvRow });
    else portfolio.onClosedTrade = (t) => out.line(tradeCsvRow(t));
  }
  // Orders placed, filled, cancelled and rejected, counted as their transactions pass (counters).
  const orderStats = new OrderStats();
  // Notes, not objects: counting needs no fill's object (domain/transaction-note.ts).
  const stopCounting = sim.listenNotes(orderStats.onTransaction);
  // A listener only when someone keeps or writes the transactions (one call less per transaction).
  // report.html's rows are folded from the transactions as they are written (not parsed back from
  // transactions.jsonl afterwards: that was a third of a 1M-bar run's report time).
  const reportFold = o.runDir ? new RunTransactionFold() : undefined;
  const stopKeeping =
    o.keepTransactions || txOut
      ? execution.listen!((tx) => {
          if (o.keepTransactions) transactions.push(tx);
          if (txOut) {
            txOut.line(transactionJson(tx));
            reportFold!.add(tx as unknown as TxRecord);
          }
        })
      : undefined;
  let openAtEnd: ClosedTrade[] = [];
  const t0 = performance.now();
  // The engine folds transactions from the start, so the account's CREATE and deposit reach the
  // portfolio. Then each merged batch goes through one plain loop: the simulator sees every event
  // before the engine (fills land before the strategy sees the price), with no operator per event.
  assembly.attach();
  // The gate rolls its trading day (the daily-loss limit) on every event, before the engine marks it, as the runner does.
  const simOnEvent =
    gate === undefined
      ? (ev: MarketEvent): void => sim.onEvent(ev)
      : (ev: MarketEvent): void => {
          sim.onEvent(ev);
          gate.observe(ev.at);
        };
  try {
    sim.start(from);
    for await (const batch of mergeBatches(sources)) assembly.feed(batch, simOnEvent);
    assembly.stop();
    // The trades still open are listed after the closed ones, marked at the last prices (END_OF_RUN).
    openAtEnd = portfolio.openAtEnd();
    if (many) many.openAtEnd();
    else if (tradesOut) for (const t of openAtEnd) tradesOut.line(tradeCsvRow(t));
  } finally {
    assembly.detach();
    stopCounting();
    stopKeeping?.();
    try {
      txOut?.close();
    } finally {
      try {
        intentsOut?.close();
      } finally {
        try {
          tradesOut?.close();
        } finally {
          try {
            equityOut?.close();
          } finally {
            plots?.close();
          }
        }
      }
    }
  }
  const wallMs = performance.now() - t0;
  // Every series was read to the end: its watch is complete, for the next run on the same candles.
  if (o.watches)
    for (let k = 0; k < series.length; k++) if (!reused[k]) o.watches.set(watchKey(series[k]!), watched[k]!);
  // Every series was fed in full: what was kept is the next run's (its sides are known by now).
  if (o.priced) {
    for (let k = 0; k < series.length; k++) {
      const name = `${series[k]!.instrument}:${series[k]!.granularity}`;
      if (keeping[k] && room.left >= 0) o.priced.set(name, { key: pricedKey(k), batches: keeping[k]! });
      else if (keeping[k]) o.priced.set(name, { key: pricedKey(k), over: true });
      else if (marks[k]) o.priced.set(name, { key: pricedKey(k) });
    }
  }
  const data: DataReport = {
    ...dataReport(
      watched,
      subs.candles?.length ? parseCandleSeries(subs.candles[0]!, instruments) : undefined,
      config.data,
    ),
    financing: {
      source: !config.costs.financing ? 'off' : financingRates !== undefined ? 'recorded' : 'static',
      text: financingText,
    },
  };
  const summary = summarize(portfolio, {
    ambiguousCandles: sim.stats.ambiguousCandles,
    ambiguousPL: toUnits(sim.stats.ambiguousPL),
    marketHalted: sim.stats.halted,
    from,
    to,
    orders: (orderStats.finish(), orderStats),
    data,
    risk: { limits, refused: gate?.refused ?? {} },
  });
  // A portfolio's summary has each strategy's figures beside the account's.
  const strategies = many?.summaries({ from, to, data });
  if (strategies) (summary as { strategies?: Summary['strategies'] }).strategies = strategies;
  if (o.runDir) {
    writeFileSync(
      join(o.runDir, 'summary.json'),
      `${JSON.stringify({ strategy: loaded.name, params: many?.params() ?? loaded.params, summary, engine: engine.stats, wallMs }, null, 2)}\n`,
    );
    many?.writeFiles(o.runDir);
    writeFileSync(join(o.runDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
    recorder?.write(o.runDir);
    writeRunReport(o.runDir, reportFold);
  }
  return {
    summary,
    transactions,
    trades: portfolio.closedTrades,
    openAtEnd,
    equity: portfolio.equity,
    ...(many
      ? {
          strategyEquity: many.equities(),
          strategyTrades: { closed: many.closedTrades(), open: many.openTrades() },
          memberParams: many.params(),
        }
      : {}),
    engine: engine.stats,
    sim: sim.stats,
    models: sim.models,
    intents,
    wallMs,
    ...(o.priced ? { candleMs: candleTime.ms } : {}),
    data,
    ...(o.runDir ? { runDir: resolve(o.runDir) } : {}),
  };
}

/**
 * The strategy's logger with the engine time on every line (`engineTime`, RFC 3339): a backtest's
 * log.jsonl says when in the replayed period each line was written, not only the wall time.
 */
function withEngineTime(log: StrategyLogger, now: () => number): StrategyLogger {
  const stamp = (obj: object): object => ({ engineTime: formatIsoMs(now()), ...obj });
  return {
    debug: (obj, msg) => log.debug(stamp(obj), msg),
    info: (obj, msg) => log.info(stamp(obj), msg),
    warn: (obj, msg) => log.warn(stamp(obj), msg),
    error: (obj, msg) => log.error(stamp(obj), msg),
  };
}
