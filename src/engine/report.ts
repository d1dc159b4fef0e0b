import { toUnits } from '../domain/money.ts';
import type { Portfolio } from './portfolio.ts';

/** The figures of one run, as printed and saved. Money is in the account currency. */
export interface Summary {
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

/** Computes the summary of a finished run from its portfolio. */
export function summarize(p: Portfolio, extra: { ambiguousCandles?: number; ambiguousPL?: number; marketHalted?: number; from?: number; to?: number } = {}): Summary {
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
  const iso = (t: number | undefined): string | null => (t === undefined || !Number.isFinite(t) ? null : new Date(t).toISOString());
  return {
    currency: p.currency,
    from: iso(extra.from ?? p.equity[0]?.time),
    to: iso(extra.to ?? p.equity[p.equity.length - 1]?.time),
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
    exposurePct: span > 0 ? round((p.exposureMs / span) * 100, 2) : 0,
    spreadCost: toUnits(p.ledger.halfSpreadCost),
    financing: toUnits(p.ledger.financing),
    commission: toUnits(p.ledger.commission),
    ambiguousCandles: extra.ambiguousCandles ?? 0,
    ambiguousPL: round(extra.ambiguousPL ?? 0, 4),
    marketHalted: extra.marketHalted ?? 0,
  };
}

/** Human-readable summary (fixed-width lines, for the terminal and report.txt). */
export function formatSummary(s: Summary, title: string): string {
  const money = (x: number): string => `${x < 0 ? '-' : ''}${Math.abs(x).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${s.currency}`;
  const pct = (x: number): string => `${x.toFixed(2)}%`;
  const rows: [string, string][] = [
    ['Period', `${s.from ?? '-'} → ${s.to ?? '-'}`],
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
  if (s.marketHalted > 0) rows.push(['Market-halted orders', `${s.marketHalted}  (cancelled MARKET_HALTED while the market was closed; fill.marketHours false for 24/7 data)`]);
  const w = Math.max(...rows.map((r) => r[0].length));
  return [title, '-'.repeat(Math.max(title.length, 40)), ...rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`)].join('\n');
}
