import type { Granularity } from '../domain/granularity.ts';
import { toUnits } from '../domain/money.ts';
import type { OrderCounts, OrderStats } from './order-stats.ts';
import type { ExitReason, GroupStats, Portfolio } from './portfolio.ts';
import { describeLimits, type RiskLimit, type RiskLimits } from './risk.ts';

/** Orders of one kind as the report gives them: counts, and the reasons with their counts, most frequent first. */
export interface OrderSummary {
  readonly placed: number;
  readonly filled: number;
  readonly cancelled: number;
  readonly rejected: number;
  readonly pending: number;
  readonly cancelReasons: readonly { readonly reason: string; readonly count: number }[];
  readonly rejectReasons: readonly { readonly reason: string; readonly count: number }[];
}

/** What became of the run's orders, and a warning when most of the strategy's orders did not fill. */
export interface OrdersReport extends OrderSummary {
  /** The dependent orders of its trades (take profit, stop loss, trailing stop, guaranteed stop). */
  readonly dependent: OrderSummary;
  /** Set when most of the strategy's orders did not fill (the leading reasons named), else null. */
  readonly warning: string | null;
}

/** Closed-trade figures of one group (an instrument, long or short trades), money rounded to 1/10,000. */
export interface GroupSummary {
  readonly trades: number;
  readonly wins: number;
  readonly losses: number;
  readonly winRate: number;
  /** Realized P/L plus financing minus commission: what the group's trades added to the balance. */
  readonly netPL: number;
  readonly profitFactor: number | null;
  readonly spreadCost: number;
  readonly financing: number;
  readonly commission: number;
}

/**
 * The data a run was computed on, as the data layer reports it (set by the backtest when known):
 * where it came from, the price sides it holds, whether it is synthetic, the spread model applied,
 * and the period it really covered with its holes.
 */
/** What a backtest's data source knows of a series: where it came from, its price sides, synthetic or real. */
export interface SeriesOrigin {
  readonly source: string;
  readonly sides: string;
  readonly synthetic: boolean;
}

/**
 * What produced a backtest's numbers (summary.json `data`): the traded series' source, price sides
 * and whether synthetic; the spread model; the period the data really covered and its holes beyond
 * weekends and holidays (every series, conversion series included, in `series`).
 */
export interface DataReport {
  readonly source: string;
  readonly sides: string;
  readonly synthetic: boolean;
  readonly spreadModel: {
    readonly kind: 'native' | 'mid' | 'fixed' | 'hourly' | 'labs';
    readonly pips?: number;
    readonly pipsByHour?: readonly number[];
    readonly text: string;
  };
  readonly coverage: {
    readonly from: string | null;
    readonly to: string | null;
    readonly holes: readonly DataHole[];
  };
  readonly series: readonly {
    readonly instrument: string;
    readonly granularity: Granularity;
    readonly source: string;
    readonly sides: string;
    readonly synthetic: boolean;
    readonly rows: number;
    readonly from: string | null;
    readonly to: string | null;
  }[];
  /** Where the daily financing rates came from: none charged, today's (data/instruments.json), or recorded per day (`--financing-history`). */
  readonly financing?: { readonly source: 'off' | 'static' | 'recorded'; readonly text: string };
}

export interface DataHole {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly from: string;
  readonly to: string;
  readonly openHours: number;
}

/** The figures of one run, as printed and saved. Money is in the account currency. */
export interface Summary {
  /**
   * A portfolio's: each strategy's own figures, from its book (engine/book.ts; docs/portfolios.md).
   * Their net P/L, costs and financing add up to the account's.
   */
  readonly strategies?: Readonly<Record<string, Summary>>;
  readonly currency: string;
  readonly from: string | null;
  readonly to: string | null;
  readonly initialBalance: number;
  readonly finalBalance: number;
  readonly finalNAV: number;
  readonly netPL: number;
  readonly returnPct: number;
  readonly realizedPL: number;
  readonly unrealizedPL: number;
  readonly trades: number;
  readonly openTrades: number;
  readonly wins: number;
  readonly losses: number;
  readonly winRate: number;
  readonly grossProfit: number;
  readonly grossLoss: number;
  readonly profitFactor: number | null;
  readonly averageWin: number;
  readonly averageLoss: number;
  readonly largestWin: number;
  readonly largestLoss: number;
  readonly averageHoldingHours: number;
  readonly maxDrawdown: number;
  readonly maxDrawdownPct: number;
  readonly sharpe: number | null;
  readonly exposurePct: number;
  readonly spreadCost: number;
  readonly financing: number;
  readonly commission: number;
  readonly ambiguousCandles: number;
  readonly ambiguousPL: number;
  /** Market orders cancelled MARKET_HALTED (submitted while their market was closed). */
  readonly marketHalted: number;
  /** Orders placed, filled, cancelled and rejected, with the reasons (absent when not counted). */
  readonly orders?: OrdersReport;
  /** Intents the risk gate refused (never sent to the broker), all limits together. */
  readonly riskRefusals?: number;
  /** The risk gate's limits and what each refused (absent when the run had no gate). */
  readonly risk?: RiskReport;
  /** Closed trades by exit reason. */
  readonly exitReasons: Readonly<Partial<Record<ExitReason, number>>>;
  readonly long: GroupSummary;
  readonly short: GroupSummary;
  readonly byInstrument: Readonly<Record<string, GroupSummary>>;
  /** The data and spread model behind the figures (when the data layer says). */
  readonly data?: DataReport;
}

const sortedReasons = (m: ReadonlyMap<string, number>): { reason: string; count: number }[] =>
  [...m]
    .map(([reason, count]) => ({ reason, count }))
    .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));

function orderSummary(c: OrderCounts): OrderSummary {
  return {
    placed: c.placed,
    filled: c.filled,
    cancelled: c.cancelled,
    rejected: c.rejected,
    pending: c.pending,
    cancelReasons: sortedReasons(c.cancelReasons),
    rejectReasons: sortedReasons(c.rejectReasons),
  };
}

/** The leading reasons of a list, as `REASON ×n` (at most three). */
const leading = (r: readonly { reason: string; count: number }[]): string =>
  r
    .slice(0, 3)
    .map((x) => `${x.reason} ×${x.count}`)
    .join(', ');

/** Cancels the strategy asked for, or that its own time in force decided: not the account refusing an order. */
const ROUTINE_CANCELS = new Set(['CLIENT_REQUEST', 'CLIENT_REQUEST_REPLACED', 'TIME_IN_FORCE_EXPIRED']);

/**
 * The orders part of the report. Warns when most of the strategy's orders that the account decided
 * on (filled, rejected, or cancelled by the account: insufficient margin, a stop on the wrong side,
 * a halted market…) did not fill. Orders still pending, and those the strategy cancelled or let
 * expire, are not failures and are left out of that count.
 */
export function ordersReport(stats: OrderStats): OrdersReport {
  const own = orderSummary(stats.strategy);
  const refusedCancels = own.cancelReasons.filter((r) => !ROUTINE_CANCELS.has(r.reason));
  const cancelledByAccount = refusedCancels.reduce((n, r) => n + r.count, 0);
  const refused = own.rejected + cancelledByAccount;
  const decided = own.filled + refused;
  let warning: string | null = null;
  if (decided > 0 && refused * 2 > decided) {
    const why = leading([...own.rejectReasons, ...refusedCancels].sort((a, b) => b.count - a.count));
    warning = `${refused} of ${decided} orders did not fill (${own.rejected} rejected, ${cancelledByAccount} cancelled by the account)${why ? `; leading reasons: ${why}` : ''}: the figures below rest on the ${own.filled} that did`;
  }
  return { ...own, dependent: orderSummary(stats.dependent), warning };
}

function groupSummary(g: GroupStats): GroupSummary {
  return {
    trades: g.trades,
    wins: g.wins,
    losses: g.losses,
    winRate: g.trades === 0 ? 0 : round((g.wins / g.trades) * 100, 2),
    netPL: round(g.pl + g.financing - g.commission, 4),
    profitFactor: g.grossLoss === 0 ? null : round(g.grossProfit / -g.grossLoss, 4),
    spreadCost: round(g.spreadCost, 4),
    financing: round(g.financing, 4),
    commission: round(g.commission, 4),
  };
}

/**
 * Sharpe ratio of daily NAV returns, annualised with √252, risk-free rate 0.
 * Null with fewer than two daily returns or a flat curve.
 */
export function sharpeOf(navs: readonly number[]): number | null {
  if (navs.length < 3) return null;
  const r: number[] = [];
  for (let i = 1; i < navs.length; i++) r.push(navs[i]! / navs[i - 1]! - 1);
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1);
  if (!(variance > 0)) return null;
  return (mean / Math.sqrt(variance)) * Math.sqrt(252);
}

const round = (x: number, places: number): number => {
  const f = 10 ** places;
  return Math.round(x * f) / f;
};

/**
 * The share of [from, to] (epoch ms) with at least one trade open, in percent (2 decimals): the
 * union of the trades' open intervals, each clipped to the period. 0 for an empty period.
 */
export function exposureOver(
  trades: Iterable<{ readonly openTime: number; readonly closeTime: number }>,
  from: number,
  to: number,
): number {
  if (!(to > from)) return 0;
  const spans: [number, number][] = [];
  for (const t of trades) {
    const a = Math.max(from, t.openTime);
    const b = Math.min(to, t.closeTime);
    if (b > a) spans.push([a, b]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let end = -Infinity;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return round((covered / (to - from)) * 100, 2);
}

/**
 * Computes the summary of a finished run from its portfolio. `from`/`to` set the period (default:
 * the equity curve's first and last points). `exposureFromTrades` (a live run, whose trades may
 * open before its first mark or in an earlier session): exposure is the union of the trades' open
 * intervals (closed ones and those still open at the last mark) over that period, never above 100%.
 */
/** The risk gate of a run: the limits it applied and the intents each refused. */
export interface RiskReport {
  readonly limits: RiskLimits;
  readonly refused: Readonly<Partial<Record<RiskLimit, number>>>;
}

export function summarize(
  p: Portfolio,
  extra: {
    ambiguousCandles?: number;
    ambiguousPL?: number;
    marketHalted?: number;
    from?: number;
    to?: number;
    orders?: OrderStats;
    data?: DataReport;
    exposureFromTrades?: boolean;
    risk?: RiskReport;
  } = {},
): Summary {
  const initial = toUnits(p.initialBalance);
  // Kept as the trades closed (the portfolio need not keep the list itself).
  const { count, wins, losses, grossProfit, grossLoss, largestWin, largestLoss, heldMs } = p.tradeStats;
  const unrealizedPL = p.unrealizedTotal();
  const finalBalance = toUnits(p.ledger.balance);
  const finalNAV = finalBalance + unrealizedPL;
  const netPL = finalNAV - initial;
  const daily = p.equity.map((e) => e.nav);
  const sharpe = sharpeOf(daily);
  const span = p.spanMs;
  const iso = (t: number | undefined): string | null =>
    t === undefined || !Number.isFinite(t) ? null : new Date(t).toISOString();
  const from = extra.from ?? p.equity[0]?.time;
  const to = extra.to ?? p.equity[p.equity.length - 1]?.time;
  return {
    currency: p.currency,
    from: iso(from),
    to: iso(to),
    initialBalance: initial,
    finalBalance: round(finalBalance, 4),
    finalNAV: round(finalNAV, 4),
    netPL: round(netPL, 4),
    returnPct: round((netPL / initial) * 100, 4),
    realizedPL: toUnits(p.ledger.pl),
    unrealizedPL: round(unrealizedPL, 4),
    trades: count,
    openTrades: p.ledger.trades.size,
    wins,
    losses,
    winRate: count === 0 ? 0 : round((wins / count) * 100, 2),
    grossProfit: round(grossProfit, 4),
    grossLoss: round(grossLoss, 4),
    profitFactor: grossLoss === 0 ? null : round(grossProfit / -grossLoss, 4),
    averageWin: wins === 0 ? 0 : round(grossProfit / wins, 4),
    averageLoss: losses === 0 ? 0 : round(grossLoss / losses, 4),
    largestWin: round(largestWin, 4),
    largestLoss: round(largestLoss, 4),
    averageHoldingHours: count === 0 ? 0 : round(heldMs / count / 3_600_000, 2),
    maxDrawdown: round(p.maxDrawdown, 4),
    maxDrawdownPct: round(p.maxDrawdownPct * 100, 4),
    sharpe: sharpe === null ? null : round(sharpe, 4),
    exposurePct:
      extra.exposureFromTrades === true
        ? from !== undefined && to !== undefined
          ? exposureOver(tradeSpans(p, to), from, to)
          : 0
        : span > 0
          ? round((p.exposureMs / span) * 100, 2)
          : 0,
    spreadCost: toUnits(p.ledger.halfSpreadCost),
    financing: toUnits(p.ledger.financing),
    commission: toUnits(p.ledger.commission),
    ambiguousCandles: extra.ambiguousCandles ?? 0,
    ambiguousPL: round(extra.ambiguousPL ?? 0, 4),
    marketHalted: extra.marketHalted ?? 0,
    ...(extra.orders ? { orders: ordersReport(extra.orders) } : {}),
    riskRefusals: extra.risk ? Object.values(extra.risk.refused).reduce((a, b) => a + (b ?? 0), 0) : 0,
    ...(extra.risk ? { risk: { limits: extra.risk.limits, refused: { ...extra.risk.refused } } } : {}),
    exitReasons: Object.fromEntries([...p.tradeStats.exitReasons].sort((a, b) => b[1] - a[1])),
    long: groupSummary(p.tradeStats.long),
    short: groupSummary(p.tradeStats.short),
    byInstrument: Object.fromEntries([...p.tradeStats.byInstrument].map(([k, g]) => [k, groupSummary(g)])),
    ...(extra.data ? { data: extra.data } : {}),
  };
}

/**
 * Human-readable summary (fixed-width lines, for the terminal and report.txt). `human`: the times
 * again as people read them in the report's zone (report.timeZone), beside the exact UTC ones.
 */
export function formatSummary(s: Summary, title: string, human?: (iso: string) => string): string {
  const inZone = (a: string | null, b: string | null): string =>
    human && a !== null && b !== null ? `  (${human(a)} → ${human(b)})` : '';
  const money = (x: number): string =>
    `${x < 0 ? '-' : ''}${Math.abs(x).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${s.currency}`;
  const pct = (x: number): string => `${x.toFixed(2)}%`;
  const rows: [string, string][] = [
    ['Period', `${s.from ?? '-'} → ${s.to ?? '-'}${inZone(s.from, s.to)}`],
    ['Initial balance', money(s.initialBalance)],
    ['Final NAV', money(s.finalNAV)],
    ['Net P/L', `${money(s.netPL)} (${pct(s.returnPct)})`],
    ['Trades (closed)', `${s.trades}  (open at end: ${s.openTrades})`],
    ['Win rate', `${pct(s.winRate)}  (${s.wins} won / ${s.losses} lost)`],
    ['Profit factor', s.profitFactor === null ? 'n/a' : s.profitFactor.toFixed(2)],
    ['Average win / loss', `${money(s.averageWin)} / ${money(s.averageLoss)}`],
    ['Max drawdown', `${money(-s.maxDrawdown)} (${pct(-s.maxDrawdownPct)})`],
    ['Sharpe (daily, √252)', s.sharpe === null ? 'n/a' : s.sharpe.toFixed(2)],
    ['Exposure', pct(s.exposurePct)],
    ['Spread cost', money(s.spreadCost)],
    ['Financing', money(s.financing)],
    ['Commission', money(s.commission)],
    ['Path-ambiguous candles', `${s.ambiguousCandles}  (P/L resting on them: ${money(s.ambiguousPL)})`],
  ];
  // Orders decided while the market was closed: many on data that trades around the clock.
  if (s.marketHalted > 0)
    rows.push([
      'Market-halted orders',
      `${s.marketHalted}  (cancelled MARKET_HALTED while the market was closed; fill.marketHours false for 24/7 data)`,
    ]);
  const top: [string, string][] = [];
  const o = s.orders;
  if (o) {
    top.push([
      'Orders',
      `${o.placed} placed, ${o.filled} filled, ${o.cancelled} cancelled, ${o.rejected} rejected${o.pending ? `, ${o.pending} pending at end` : ''}`,
    ]);
    if (o.rejectReasons.length) top.push(['  rejected', leading(o.rejectReasons)]);
    if (o.cancelReasons.length) top.push(['  cancelled', leading(o.cancelReasons)]);
    const d = o.dependent;
    if (d.placed > 0)
      top.push([
        'Exit orders (TP/SL/trailing)',
        `${d.placed} placed, ${d.filled} filled, ${d.cancelled} cancelled${d.rejected ? `, ${d.rejected} rejected (${leading(d.rejectReasons)})` : ''}`,
      ]);
  }
  const risk = s.risk;
  if (risk) {
    top.push(['Risk limits', describeLimits(risk.limits)]);
    const refused = Object.entries(risk.refused).filter(([, n]) => (n ?? 0) > 0);
    if (refused.length > 0)
      top.push([
        'Risk refusals',
        `${s.riskRefusals} intents refused, never sent (${refused.map(([k, n]) => `${k} ${n}`).join(', ')})`,
      ]);
  }
  const data = s.data;
  if (data) {
    top.push([
      'Data',
      `${data.source}${data.synthetic && !/synthetic/i.test(data.source) ? ' (synthetic)' : ''}`,
    ]);
    top.push(['Spread model', data.spreadModel.text]);
    if (data.financing) top.push(['Financing rates', data.financing.text]);
    const cov = data.coverage;
    const holes = cov.holes.length;
    top.push([
      'Data covered',
      `${cov.from ?? '-'} → ${cov.to ?? '-'}${inZone(cov.from ?? null, cov.to ?? null)}${holes ? `  (${holes} hole${holes === 1 ? '' : 's'} beyond market closures: see summary.json data.coverage)` : ''}`,
    ]);
  }
  const side = (g: GroupSummary): string =>
    `${g.trades} trades, ${pct(g.winRate)} won, net ${money(g.netPL)}`;
  const tail: [string, string][] = [];
  if (s.trades > 0) {
    tail.push(['Long', side(s.long)], ['Short', side(s.short)]);
    const reasons = Object.entries(s.exitReasons)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    if (reasons) tail.push(['Exits', reasons]);
    const names = Object.keys(s.byInstrument);
    for (const n of names) tail.push([`Instrument ${n}`, side(s.byInstrument[n]!)]);
  }
  const all = [...top, ...rows, ...tail];
  const w = Math.max(...all.map((r) => r[0].length));
  const line = ([k, v]: [string, string]): string => `${k.padEnd(w)}  ${v}`;
  const head = [title, '-'.repeat(Math.max(title.length, 40))];
  if (o?.warning) head.push(`WARNING: ${o.warning}`);
  return [...head, ...top.map(line), ...rows.map(line), ...tail.map(line)].join('\n');
}

/** The open intervals of the portfolio's trades: the closed ones, and those still open until `end`. */
function* tradeSpans(p: Portfolio, end: number): Iterable<{ openTime: number; closeTime: number }> {
  yield* p.closedTrades;
  for (const t of p.openTrades()) yield { openTime: t.openMs, closeTime: end };
}

/** A portfolio's per-strategy lines under the account's report (nothing for one strategy). */
export function formatStrategies(summary: Summary): string {
  const s = summary.strategies;
  if (s === undefined) return '';
  const names = Object.keys(s);
  const w = Math.max(8, ...names.map((n) => n.length));
  const rows = names.map((n) => {
    const x = s[n]!;
    return `  ${n.padEnd(w)}  ${x.netPL.toFixed(2).padStart(12)}  ${String(x.trades).padStart(6)}  ${(x.maxDrawdown ?? 0).toFixed(2).padStart(12)}`;
  });
  return `\n\nStrategies (each its own book; net P/L adds up to the account's):\n  ${'strategy'.padEnd(w)}  ${'net P/L'.padStart(12)}  ${'trades'.padStart(6)}  ${'max drawdown'.padStart(12)}\n${rows.join('\n')}`;
}
