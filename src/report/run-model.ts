import type { EncodedSeries } from './candle-codec.ts';
import type { BenchmarkSeries } from './candle-recorder.ts';
import {
  drawdowns,
  extendedMetrics,
  monthlyPL,
  sideFigures,
  summaryMetrics,
  type Drawdown,
  type Metric,
  type SideFigure,
  type TradeRow,
} from './metrics.ts';
import { granularityMs, isGranularity } from '../domain/granularity.ts';
import type { PlotSeries } from './plots.ts';
import type { StrategyCurves } from './run-folder.ts';
import type { RunFolder } from './run-folder.ts';
import type { EquitySeries, FillRow, TradeLevels, TxRecord } from './rows.ts';
import { TradeView } from './trade-columns.ts';
import { TransactionFold, type FillColumns } from './transaction-fold.ts';

export type { FillRow, TradeLevels } from './rows.ts';

/** Folds a list of transactions (see TransactionFold; readRunFolder folds them as it reads instead). */
export function foldTransactions(txs: readonly TxRecord[]): ReturnType<TransactionFold['result']> {
  const f = new TransactionFold();
  for (const tx of txs) f.add(tx);
  return f.result();
}

/** Everything a run's page shows; serialised into the page as JSON. */
export interface RunModel {
  readonly kind: 'run';
  readonly name: string;
  readonly strategy: string;
  readonly params: Record<string, unknown>;
  readonly currency: string;
  readonly period: { from: string | null; to: string | null };
  readonly warnings: string[];
  readonly metrics: Metric[];
  /** The closed trades' figures for all, long and short (the Figures' All / Long / Short table). */
  readonly sides: SideFigure[];
  readonly equity: EquitySeries;
  readonly drawdowns: Drawdown[];
  readonly monthly: { year: number; month: number; pl: number; pct: number }[];
  /** Rows (a model built by hand), or the fold's columns in the report's order (a run folder's report). */
  readonly trades: readonly TradeRow[] | TradeView;
  readonly levels: Record<string, TradeLevels>;
  /** Rows, or the fold's columns (a run folder's report: see FillColumns). */
  readonly fills: readonly FillRow[] | FillColumns;
  readonly candles: EncodedSeries[];
  /** Buy and hold per charted instrument (from chart-candles.json; empty for older folders and live runs). */
  readonly benchmarks: BenchmarkSeries[];
  /** The strategy's own lines and markers (`ctx.plot`, from plots.csv): on its price chart or in panes below it. */
  readonly plots: PlotSeries[];
  /** A portfolio's: each strategy's equity curve beside the account's, and their daily returns' correlation. */
  readonly strategies?: StrategyCurves;
  /**
   * The report.txt lines that are not single figures, as summary.json holds them: orders placed,
   * filled and cancelled with reasons, exits by reason, long/short, per instrument, the data and its holes.
   */
  readonly breakdown: Record<string, unknown>;
  /** A live run (`fxflow run`): its environment, broker and sessions; null for a backtest. */
  readonly live: { env: string; broker: string; sessions: number } | null;
  readonly config: Record<string, unknown> | null;
  readonly initialBalance: number;
  readonly netPL: number;
  readonly finalNAV: number;
}

const sec = (iso: string): number => Date.parse(iso) / 1000;
const num = (x: unknown): number => (typeof x === 'string' || typeof x === 'number' ? Number(x) : 0);

/** Equity points a page draws at most: a daily curve of 13 years in full; a longer one is thinned (thinEquity). */
export const MAX_EQUITY_POINTS = 4800;

/**
 * The curve as a page draws it, at most `max` points: unchanged when it fits, else cut into runs of
 * days, each kept as its lowest, highest and last NAV points (in time order), so the peaks, troughs
 * and the final NAV survive. The figures, drawdowns and months are computed on the full curve.
 */
export function thinEquity(e: EquitySeries, max = MAX_EQUITY_POINTS): EquitySeries {
  const n = e.t.length;
  if (n <= max) return e;
  const per = Math.ceil(n / Math.floor(max / 3));
  const out: EquitySeries = { t: [], balance: [], nav: [] };
  for (let a = 0; a < n; a += per) {
    const b = Math.min(n, a + per) - 1;
    let lo = a,
      hi = a;
    for (let i = a; i <= b; i++) {
      if (e.nav[i]! < e.nav[lo]!) lo = i;
      if (e.nav[i]! > e.nav[hi]!) hi = i;
    }
    for (const i of [...new Set([lo, hi, b])].sort((x, y) => x - y)) {
      out.t.push(e.t[i]!);
      out.balance.push(e.balance[i]!);
      out.nav.push(e.nav[i]!);
    }
  }
  return out;
}

/** The share of [from, to] (epoch seconds) with at least one trade open, in percent; null for an empty period. */
export function exposurePct(trades: readonly TradeRow[], from: number, to: number): number | null {
  if (!(to > from)) return null;
  const spans = trades
    .map((t) => [Math.max(from, t.openTime), Math.min(to, t.closeTime ?? to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0,
    end = -Infinity;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return Math.round((covered / (to - from)) * 10_000) / 100;
}

/** Builds a run page's model from a run folder read by readRunFolder. */
export function runModel(f: RunFolder): RunModel {
  const warnings = [...f.warnings];
  const folded = f.folded;
  const s = f.summary;
  const cfgAccount = (f.config?.account ?? {}) as Record<string, unknown>;
  const currency =
    typeof s.currency === 'string'
      ? s.currency
      : typeof cfgAccount.currency === 'string'
        ? cfgAccount.currency
        : '';
  const initial =
    typeof s.initialBalance === 'number'
      ? s.initialBalance
      : folded.deposit || num(cfgAccount.initialBalance);
  const equity = f.equity && f.equity.t.length > 0 ? f.equity : folded.balance;
  if (equity.t.length === 0)
    warnings.push('no equity points: the run has no transactions with a balance and no equity.csv');
  const finalNAV =
    typeof s.finalNAV === 'number' ? s.finalNAV : (equity.nav[equity.nav.length - 1] ?? initial);
  const netPL = typeof s.netPL === 'number' ? s.netPL : finalNAV - initial;
  // Closed first, in closing order (as trades.csv), then the ones still open: the fold's columns
  // in that order, never an object per trade (see TradeColumns).
  const trades = new TradeView(
    folded.trades,
    folded.trades.reportOrder(),
    f.excursions.size > 0 ? f.excursions : undefined,
  );
  if (f.transactionCount > 0 && trades.length === 0)
    warnings.push('the run made no trades: there are no fills to mark and no trade statistics');
  const maxDdPct = typeof s.maxDrawdownPct === 'number' ? s.maxDrawdownPct : null;
  // The period: summary.json's, widened to the first and last transaction read (a live run's
  // summary starts at its first equity mark, which can come after its first fill).
  const firstTx = f.firstTxTime,
    lastTx = f.lastTxTime;
  const iso = (t: number): string => new Date(t * 1000).toISOString();
  let from = typeof s.from === 'string' ? s.from : null;
  let to = typeof s.to === 'string' ? s.to : null;
  if (Number.isFinite(firstTx) && (from === null || sec(from) > firstTx)) from = iso(firstTx);
  if (Number.isFinite(lastTx) && (to === null || sec(to) < lastTx)) to = iso(lastTx);
  const periodSeconds = from !== null && to !== null ? sec(to) - sec(from) : undefined;
  const summaryFigures = summaryMetrics(s);
  if (f.live) {
    // Exposure of a live run from its trades over the period above (the runner's own figure counts
    // from its first mark, and sessions overlap it): the union of the trades' open intervals.
    const i = summaryFigures.findIndex((m) => m.key === 'exposurePct');
    const exposure = exposurePct(trades.rows(), from === null ? NaN : sec(from), to === null ? NaN : sec(to));
    if (i >= 0 && exposure !== null)
      summaryFigures[i] = {
        ...summaryFigures[i]!,
        value: exposure,
        def: "Share of the run's period (its first to its last transaction) with at least one trade open",
      };
  }
  // One tile a figure: the page's own figures that summary.json already has under another name
  // (average trade duration = average holding, best trade = largest win, worst = largest loss) are
  // left out when it has them (a folder without summary.json still gets them).
  const twins: Record<string, string> = {
    averageTradeHours: 'averageHoldingHours',
    bestTrade: 'largestWin',
    worstTrade: 'largestLoss',
  };
  // Bars of the first charted series, as the strategy recorded them (a folded series: its own granularity).
  const charted = f.candles?.series[0];
  const gran = charted ? ((charted as { recorded?: string }).recorded ?? charted.granularity) : undefined;
  const barSeconds = gran !== undefined && isGranularity(gran) ? granularityMs(gran) / 1000 : undefined;
  const extended = extendedMetrics(
    equity.t.length > 0 ? equity : undefined,
    trades.closedTrades(),
    initial,
    maxDdPct,
    periodSeconds,
    barSeconds,
  ).filter((m) => !(twins[m.key] !== undefined && twins[m.key]! in s));
  // Buy and hold as a figure, beside its line on the equity chart: the first charted instrument
  // bought at its first ask, sold at its last recorded bid (see the page's buy-and-hold note).
  const bench = f.candles?.benchmarks?.find((b) => b.t.length > 0 && b.ask > 0);
  if (bench)
    extended.push({
      key: 'buyHoldReturnPct',
      label: `Buy & hold return (${bench.instrument})`,
      value: Math.round((bench.bid[bench.bid.length - 1]! / bench.ask - 1) * 1e6) / 1e4,
      kind: 'pct',
      better: 'high',
      def: `The return of holding ${bench.instrument} over the run: bought at the first candle's ask, marked at the last day's bid, on the same candles and spread model; no financing, in the instrument's own terms`,
    });
  const metrics = [...summaryFigures, ...extended];
  if (Object.keys(s).length === 0) {
    metrics.unshift(
      {
        key: 'finalNAV',
        label: 'Final NAV (from the curve)',
        value: finalNAV,
        kind: 'money',
        def: 'The last point of the equity curve',
      },
      {
        key: 'netPL',
        label: 'Net P/L (from the curve)',
        value: netPL,
        kind: 'money',
        def: 'Last equity point − deposit',
      },
      {
        key: 'trades',
        label: 'Trades (closed)',
        value: trades.closedCount(),
        kind: 'int',
        def: 'Trades closed in full in the transactions read',
      },
    );
  }
  return {
    kind: 'run',
    name: f.name,
    strategy: f.strategy,
    params: f.params,
    currency,
    period: { from, to },
    warnings,
    metrics,
    sides: sideFigures(trades.rows(), barSeconds),
    equity: thinEquity(equity),
    drawdowns: equity.t.length > 0 ? drawdowns(equity).slice(0, 5) : [],
    monthly: equity.t.length > 0 ? monthlyPL(equity, initial) : [],
    trades,
    levels: folded.levels,
    fills: folded.fills,
    candles: f.candles?.series ?? [],
    benchmarks: f.candles?.benchmarks ?? [],
    plots: f.plots,
    ...(f.strategies ? { strategies: f.strategies } : {}),
    breakdown: Object.fromEntries(
      ['orders', 'risk', 'exitReasons', 'long', 'short', 'byInstrument', 'data']
        .filter((k) => s[k] !== undefined && s[k] !== null)
        .map((k) => [k, s[k]]),
    ),
    live: f.live ?? null,
    config: f.config ?? null,
    initialBalance: initial,
    netPL,
    finalNAV,
  };
}
