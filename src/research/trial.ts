import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { Params } from '../strategy/api.ts';
import type { StrategyLogger } from '../strategy/api.ts';
import { runBacktest, type PricedSeries } from '../app/backtest.ts';
import { IndicatorMemo } from '../engine/indicator-memo.ts';
import type { BacktestConfig } from '../app/config.ts';
import type { LoadedStrategy } from '../app/load-strategy.ts';
import { isPortfolio, withMemberParams } from '../app/portfolio.ts';
import type { SeriesWatch } from '../app/series-watch.ts';
import { dailyReturns, trialMetrics, type TrialMetrics } from './metrics.ts';
import { seriesBatches, type SharedSeries } from './shared-series.ts';

/** Which mode a trial is assembled as: a sweep's trial, or one of a walk-forward fold (its sweep's and its out-of-sample run). */
export type TrialMode = 'optimize' | 'walkforward';

/** What one trial needs: the strategy (loaded once per worker), its params, the config and the shared data. */
export interface TrialSpec {
  readonly loaded: LoadedStrategy;
  readonly params: Params;
  readonly config: BacktestConfig;
  readonly instruments: InstrumentRegistry;
  /** The sweep's decoded series by `INSTRUMENT:GRANULARITY`. */
  readonly series: ReadonlyMap<string, SharedSeries>;
  readonly log?: StrategyLogger;
  /** The mode that assembles it (src/app/assembly.ts): 'optimize' unless a walk-forward runs it. */
  readonly mode?: TrialMode;
}

export interface TrialOutcome {
  readonly metrics: TrialMetrics;
  /** Daily NAV returns (for the deflated Sharpe ratio and PBO). */
  readonly returns: number[];
  /** When each daily NAV point was marked (epoch ms): `returns[k]` runs from `times[k]` to `times[k + 1]`. */
  readonly times: number[];
  readonly wallMs: number;
  /** The part of wallMs spent getting its candles (built and priced, or the worker's kept ones handed over). */
  readonly candleMs: number;
  /**
   * The trial's set-up: all it spent besides running the strategy over its candles (building the
   * engine, simulator and portfolio, getting its candles: candleMs, the summary and the metrics).
   */
  readonly setupMs: number;
}

const SILENT: StrategyLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A series a trial asked for that the sweep did not decode. */
export class SeriesMissingError extends Error {
  readonly code = 'SERIES_MISSING' as const;
}

/**
 * What watching each shared series found (holes, coverage, sides), by series and period: the same
 * for every trial that reads it, so it is found once per worker (runBacktest's `watches`).
 */
const watchesOf = new WeakMap<ReadonlyMap<string, SharedSeries>, Map<string, SeriesWatch>>();

/** `ctx.indicator` values recorded by one trial and replayed by the next on the same shared series (IndicatorMemo). */
const memosOf = new WeakMap<ReadonlyMap<string, SharedSeries>, IndicatorMemo>();

/**
 * Each shared series' candles as built from the columns and priced by the spread model, kept by the
 * first trial and fed as they are to every later trial with the same period and data options (a
 * worker builds its candle objects once, not once a trial; runBacktest's `priced`). When the data
 * options change from trial to trial, every trial builds its own.
 */
const pricedOf = new WeakMap<ReadonlyMap<string, SharedSeries>, Map<string, PricedSeries>>();

/** Runs one backtest on the shared series and returns its figures. Throws what the strategy throws. */
export async function runTrial(spec: TrialSpec): Promise<TrialOutcome> {
  const t0 = performance.now();
  let watches = watchesOf.get(spec.series);
  if (!watches) watchesOf.set(spec.series, (watches = new Map()));
  let indicatorMemo = memosOf.get(spec.series);
  if (!indicatorMemo) memosOf.set(spec.series, (indicatorMemo = new IndicatorMemo()));
  let priced = pricedOf.get(spec.series);
  if (!priced) pricedOf.set(spec.series, (priced = new Map()));
  // A member sweep (--portfolio --member): the trial's params are the member's, the others keep theirs.
  const sweep = isPortfolio(spec.loaded) ? spec.loaded.sweep : undefined;
  const loaded =
    sweep && isPortfolio(spec.loaded)
      ? withMemberParams(spec.loaded, sweep.member, spec.params)
      : { ...spec.loaded, params: spec.params };
  const r = await runBacktest({
    // The same assembly for a sweep's trials and a walk-forward fold's; the mode names which built it.
    mode: spec.mode ?? 'optimize',
    watches,
    indicatorMemo,
    priced,
    loaded,
    config: spec.config,
    instruments: spec.instruments,
    candles: (req) => {
      const s = spec.series.get(`${req.instrument}:${req.granularity}`);
      if (!s) {
        throw new SeriesMissingError(
          `the trial needs ${req.instrument} ${req.granularity}, which the sweep did not load (it loads the series the strategy subscribes to with its default params; a swept param that changes the subscriptions is not supported)`,
        );
      }
      return (async function* () {
        yield* seriesBatches(s, req.from, req.to);
      })();
    },
    available: (instrument, granularity) => spec.series.has(`${instrument}:${granularity}`),
    origin: (instrument, granularity) =>
      spec.series.get(`${instrument}:${granularity}`)?.origin ?? {
        source: 'unknown',
        sides: 'unknown',
        synthetic: false,
      },
    log: spec.log ?? SILENT,
  });
  // The objective reads the member's own figures and equity (its book), unless --objective-of account.
  const own = sweep?.of === 'member';
  const summary = own ? r.summary.strategies?.[sweep.member] : r.summary;
  const equity = own ? r.strategyEquity?.[sweep.member] : r.equity;
  if (!summary || !equity) throw new Error(`the portfolio has no member '${sweep!.member}'`);
  const returns = dailyReturns(equity.map((e) => e.nav));
  const metrics = trialMetrics(summary, returns);
  const times = equity.map((e) => e.time);
  const candleMs = r.candleMs ?? 0;
  return {
    metrics,
    returns,
    times,
    wallMs: r.wallMs,
    candleMs,
    // runBacktest's wallMs is its loop over the candles, candles included: the rest is set-up.
    setupMs: performance.now() - t0 - (r.wallMs - candleMs),
  };
}
