// The run folder's trades.csv and equity.csv: their headers, rows and the account currency's digits.
import type { ClosedTrade, EquityPoint } from '../engine/portfolio.ts';
import { formatIsoMs } from '../domain/time.ts';

export const TRADES_CSV_HEADER =
  'id,instrument,side,units,openTime,closeTime,openPrice,closePrice,realizedPL,financing,spreadCost,commission,exitReason,openEpochMs,closeEpochMs,mae,mfe,runUpPct';

/**
 * One trade as a trades.csv row: times RFC 3339 (UTC, ms) with the epoch ms as extra columns, money
 * in the account currency (realizedPL includes neither financing nor commission; spreadCost is what
 * the half spreads of its fills cost, already inside realizedPL); mae and mfe are the lowest and highest
 * P/L it showed while open (account currency), runUpPct its best price move in its favour (% of entry).
 */
export function tradeCsvRow(t: ClosedTrade): string {
  const close = Number.isFinite(t.closeTime) ? formatIsoMs(t.closeTime) : '';
  return `${t.id},${t.instrument},${t.units > 0 ? 'long' : 'short'},${t.units},${formatIsoMs(t.openTime)},${close},${t.openPrice},${Number.isFinite(t.closePrice) ? t.closePrice : ''},${t.realizedPL},${t.financing},${t.spreadCost},${t.commission},${t.exitReason},${t.openTime},${Number.isFinite(t.closeTime) ? t.closeTime : ''},${t.mae},${t.mfe},${t.runUpPct}`;
}

/**
 * The trades as CSV, as the run folder's trades.csv holds them: one row per closed trade in closing
 * order, then (`openAtEnd`) the trades still open at the end, marked at the last prices (END_OF_RUN).
 */
export function tradesCsv(trades: readonly ClosedTrade[], openAtEnd: readonly ClosedTrade[] = []): string {
  return `${[TRADES_CSV_HEADER, ...trades.map(tradeCsvRow), ...openAtEnd.map(tradeCsvRow)].join('\n')}\n`;
}

/** Minor units of the account currencies that have none or three (ISO 4217); two for the rest. */
const CURRENCY_DIGITS: Readonly<Record<string, number>> = {
  JPY: 0,
  HUF: 0,
  KRW: 0,
  CLP: 0,
  ISK: 0,
  BHD: 3,
  KWD: 3,
  OMR: 3,
  JOD: 3,
  TND: 3,
};

/** Digits an amount of `currency` is shown with (2 unless ISO 4217 says otherwise). */
export function currencyDigits(currency: string): number {
  return CURRENCY_DIGITS[currency] ?? 2;
}

/**
 * The equity curve as the run folder's equity.csv: RFC 3339 time, balance and NAV rounded to the
 * account currency's minor unit, and the epoch ms as an extra column.
 */
export function equityCsv(equity: readonly EquityPoint[], currency: string): string {
  const d = currencyDigits(currency);
  const rows = [EQUITY_CSV_HEADER];
  for (const e of equity) rows.push(equityCsvRow(e, d));
  return `${rows.join('\n')}\n`;
}

export const EQUITY_CSV_HEADER = 'time,balance,nav,epochMs';

/** One point of the equity curve as an equity.csv row, amounts with `digits` decimals. */
export function equityCsvRow(e: EquityPoint, digits: number): string {
  return `${formatIsoMs(e.time)},${e.balance.toFixed(digits)},${e.nav.toFixed(digits)},${e.time}`;
}
