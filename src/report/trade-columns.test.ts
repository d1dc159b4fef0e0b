import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TradeRow } from './metrics.ts';
import type { TxRecord } from './rows.ts';
import { TradeView } from './trade-columns.ts';
import { TransactionFold } from './transaction-fold.ts';

/**
 * The fold as it was before the columns (an object per trade in a Map by ID, sorted for the page):
 * the reference the columns must give back exactly, row for row.
 */
function objectFold(txs: readonly TxRecord[]): TradeRow[] {
  const num = (x: unknown): number => (typeof x === 'string' || typeof x === 'number' ? Number(x) : 0);
  const trades = new Map<string, { -readonly [K in keyof TradeRow]: TradeRow[K] }>();
  for (const tx of txs) {
    const t = Date.parse(tx.time) / 1000;
    if (tx.type === 'DAILY_FINANCING') {
      for (const p of tx.positionFinancings as {
        openTradeFinancings: { tradeID: string; financing: string }[];
      }[]) {
        for (const f of p.openTradeFinancings) {
          const tr = trades.get(f.tradeID);
          if (tr) tr.financing += num(f.financing);
        }
      }
      continue;
    }
    const opened = tx.tradeOpened as { tradeID: string; units: string; halfSpreadCost?: string } | undefined;
    const closed =
      (tx.tradesClosed as
        { tradeID: string; realizedPL: string; financing: string; halfSpreadCost: string }[] | undefined) ??
      [];
    const reduced = tx.tradeReduced as
      { tradeID: string; realizedPL: string; financing: string; halfSpreadCost: string } | undefined;
    const legs = closed.length + (reduced ? 1 : 0) + (opened ? 1 : 0);
    const commission = num(tx.commission);
    for (const c of reduced ? [...closed, reduced] : closed) {
      const tr = trades.get(c.tradeID);
      if (!tr) continue;
      tr.pl += num(c.realizedPL);
      tr.financing += num(c.financing);
      tr.spreadCost += num(c.halfSpreadCost);
      tr.commission += legs > 0 ? commission / legs : 0;
      if (c !== reduced)
        Object.assign(tr, { closeTime: t, closePrice: num(tx.price), closeReason: String(tx.reason) });
    }
    if (opened) {
      trades.set(opened.tradeID, {
        id: opened.tradeID,
        instrument: String(tx.instrument),
        units: num(opened.units),
        openTime: t,
        closeTime: null,
        openPrice: num(tx.price),
        closePrice: null,
        pl: 0,
        financing: 0,
        spreadCost: num(opened.halfSpreadCost),
        commission: legs > 0 ? commission / legs : 0,
        closeReason: '',
      });
    }
  }
  const all = [...trades.values()];
  return all
    .filter((t) => t.closeTime !== null)
    .sort((a, b) => a.closeTime! - b.closeTime! || Number(a.id) - Number(b.id))
    .concat(all.filter((t) => t.closeTime === null));
}

/**
 * A run's transactions as v20 writes them: fills that open a trade, close or reduce open ones (a
 * fill may close several, at the same second as another), and daily financing of the open trades.
 */
const run = fc
  .array(
    fc.record({
      kind: fc.constantFrom('open', 'open', 'close', 'closeMany', 'reduce', 'financing'),
      pick: fc.nat(),
      dt: fc.constantFrom(0, 0, 1, 60, 3600),
      money: fc.integer({ min: -50_000, max: 50_000 }).map((x) => (x / 100).toFixed(2)),
      commission: fc.constantFrom(undefined, '0.25', '1.10'),
      instrument: fc.constantFrom('EUR_USD', 'USD_JPY'),
      reason: fc.constantFrom('MARKET_ORDER', 'STOP_LOSS_ORDER', 'TAKE_PROFIT_ORDER'),
    }),
    { maxLength: 300 },
  )
  .map((steps) => {
    const txs: TxRecord[] = [];
    const open: string[] = [];
    let id = 100,
      t = Date.UTC(2024, 0, 1);
    for (const s of steps) {
      t += s.dt * 1000;
      const time = new Date(t).toISOString();
      const fill = {
        id: String(++id),
        type: 'ORDER_FILL',
        time,
        instrument: s.instrument,
        price: (1 + (s.pick % 997) / 1e4).toFixed(5),
        reason: s.reason,
        ...(s.commission ? { commission: s.commission } : {}),
      };
      const leg = (tradeID: string): Record<string, string> => ({
        tradeID,
        realizedPL: s.money,
        financing: '-0.0125',
        halfSpreadCost: '0.0400',
      });
      if (s.kind === 'open' || open.length === 0) {
        txs.push({
          ...fill,
          units: '1000',
          tradeOpened: { tradeID: fill.id, units: '1000', halfSpreadCost: '0.0500' },
        });
        open.push(fill.id);
      } else if (s.kind === 'close') {
        txs.push({ ...fill, units: '-1000', tradesClosed: [leg(open.splice(s.pick % open.length, 1)[0]!)] });
      } else if (s.kind === 'closeMany') {
        txs.push({ ...fill, units: '-2000', tradesClosed: open.splice(0, 2).map(leg) });
      } else if (s.kind === 'reduce') {
        txs.push({ ...fill, units: '-500', tradeReduced: leg(open[s.pick % open.length]!) });
      } else {
        txs.push({
          id: String(++id),
          type: 'DAILY_FINANCING',
          time,
          positionFinancings: [
            { openTradeFinancings: open.map((tradeID) => ({ tradeID, financing: s.money })) },
          ],
        });
      }
    }
    return txs;
  });

describe('TradeColumns: the fold keeps trades as columns (issue 27, bounded report memory)', () => {
  it('gives the page the trades an object per trade gave, in the same order, to the bit (property)', () => {
    fc.assert(
      fc.property(run, (txs) => {
        const fold = new TransactionFold();
        for (const tx of txs) fold.add(tx);
        const cols = fold.result().trades;
        const rows = new TradeView(cols, cols.reportOrder(), undefined).rows();
        expect(rows).toEqual(objectFold(txs));
        // Only the trades still open are in the Map by ID.
        expect(cols.open.size).toBe(rows.filter((r) => r.closeTime === null).length);
      }),
      { numRuns: 300 },
    );
  });

  it('holds a run of closed trades in about 90 bytes a trade, whatever their count: the open-trade Map stays empty', () => {
    const perTrade = [5_000, 50_000].map((n) => {
      const fold = new TransactionFold();
      let id = 0;
      for (let i = 0; i < n; i++) {
        const time = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
        const opened = String(++id);
        fold.add({
          id: opened,
          type: 'ORDER_FILL',
          time,
          instrument: 'EUR_USD',
          price: '1.1',
          units: '1000',
          reason: 'MARKET_ORDER',
          tradeOpened: { tradeID: opened, units: '1000' },
        });
        fold.add({
          id: String(++id),
          type: 'ORDER_FILL',
          time,
          instrument: 'EUR_USD',
          price: '1.2',
          units: '-1000',
          reason: 'TAKE_PROFIT_ORDER',
          tradesClosed: [{ tradeID: opened, realizedPL: '100' }],
        });
      }
      const { trades } = fold.result();
      expect(trades.length).toBe(n);
      expect(trades.open.size).toBe(0);
      // Capacity, not use: the columns double, so at most twice the trades' own bytes.
      return trades.bytes() / n;
    });
    for (const b of perTrade) expect(b).toBeLessThanOrEqual(2 * 89);
    // Ten times the trades: not more bytes a trade (nothing kept per trade besides the columns' rows).
    expect(perTrade[1]!).toBeLessThanOrEqual(perTrade[0]! * 1.01 + 1);
  });
});
