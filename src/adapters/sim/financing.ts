import type { HomeConversion, Quote } from '../../domain/conversion.ts';
import { Decimal } from '../../domain/decimal.ts';
import type { FinancingRates, InstrumentRegistry } from '../../domain/instrument.ts';

export type { FinancingRates, FinancingTerms } from '../../domain/instrument.ts';
import type { Ledger } from '../../domain/ledger.ts';
import { add, amount, formatAmount, type Amount } from '../../domain/money.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { Draft } from './draft.ts';

/**
 * Financing: the DAILY_FINANCING transaction of a 17:00 New York rollover at `at` for the trades
 * `ledger` holds, or undefined when nothing is charged. Each trade pays (or earns) units × mid ×
 * its side's yearly rate × the days the instrument charges that weekday (three on Wednesday for FX)
 * / 365, converted to the home currency, rounded once to 4 places. Rare (once a day per trade), so
 * decimal.js is fine here.
 */
export function dailyFinancing(
  ledger: Ledger,
  at: UnixMs,
  instruments: InstrumentRegistry,
  quotes: ReadonlyMap<string, Quote>,
  conversion: HomeConversion,
  rates?: FinancingRates,
): Draft | undefined {
  if (ledger.trades.size === 0) return undefined;
  // `at` is a 17:00 New York rollover: 21:00 or 22:00 UTC of the same calendar day, so the UTC
  // weekday is New York's (0 = Sunday).
  const weekday = new Date(at).getUTCDay();
  const byInstrument = new Map<string, { total: Amount; trades: { tradeID: string; financing: string }[] }>();
  let total = 0;
  for (const t of ledger.trades.values()) {
    const inst = instruments.get(t.instrument);
    const terms = (rates !== undefined ? rates(t.instrument, at) : undefined) ?? inst.financing;
    const days = terms.daysCharged[weekday] ?? 0;
    if (days === 0) continue;
    const q = quotes.get(t.instrument);
    if (!q) continue;
    const rate = t.unitsNum > 0 ? terms.longRate : terms.shortRate;
    const mid = (q.bid + q.ask) / 2;
    const f = conversion.tryFactors(inst.quote);
    if (!f) continue;
    const quoteAmount = (Math.abs(t.unitsNum) * mid * rate * days) / 365;
    const home = amount(new Decimal(quoteAmount).times(quoteAmount >= 0 ? f.gain : f.loss).toFixed(4));
    if (home === 0) continue;
    let entry = byInstrument.get(t.instrument);
    if (!entry) {
      entry = { total: 0, trades: [] };
      byInstrument.set(t.instrument, entry);
    }
    entry.total = add(entry.total, home);
    entry.trades.push({ tradeID: t.id, financing: formatAmount(home) });
    total = add(total, home);
  }
  if (byInstrument.size === 0) return undefined;
  return {
    type: 'DAILY_FINANCING',
    financing: formatAmount(total),
    accountBalance: formatAmount(add(ledger.balance, total)),
    accountFinancingMode: 'DAILY',
    positionFinancings: [...byInstrument].map(([instrument, e]) => ({
      instrument,
      financing: formatAmount(e.total),
      openTradeFinancings: e.trades,
    })),
  };
}
