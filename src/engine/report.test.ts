import { describe, expect, it } from 'vitest';
import type { Transaction } from '../domain/v20/index.ts';
import { OrderStats } from './order-stats.ts';
import { formatSummary, ordersReport, type Summary } from './report.ts';

const tx = (o: Record<string, unknown>): Transaction => o as unknown as Transaction;

/** Feeds `n` market orders: `filled` fill, `cancelled` are cancelled (MARKET_HALTED), `rejected` rejected. */
function orders(filled: number, cancelled: number, rejected: number): OrderStats {
  const s = new OrderStats();
  let id = 1;
  for (let i = 0; i < filled; i++) {
    const o = String(id++);
    s.onTransaction(tx({ id: o, type: 'MARKET_ORDER' }));
    s.onTransaction(tx({ id: String(id++), type: 'ORDER_FILL', orderID: o }));
  }
  for (let i = 0; i < cancelled; i++) {
    const o = String(id++);
    s.onTransaction(tx({ id: o, type: 'MARKET_ORDER' }));
    s.onTransaction(tx({ id: String(id++), type: 'ORDER_CANCEL', orderID: o, reason: 'MARKET_HALTED' }));
  }
  for (let i = 0; i < rejected; i++)
    s.onTransaction(
      tx({ id: String(id++), type: 'MARKET_ORDER_REJECT', rejectReason: 'UNITS_PRECISION_EXCEEDED' }),
    );
  s.finish();
  return s;
}

describe('ordersReport', () => {
  it('warns only when more than half of the orders did not fill, naming the leading reasons', () => {
    expect(ordersReport(orders(2, 1, 1)).warning).toBeNull();
    const r = ordersReport(orders(3, 1, 84_502));
    expect(r).toMatchObject({ placed: 84_506, filled: 3, cancelled: 1, rejected: 84_502, pending: 0 });
    expect(r.rejectReasons).toEqual([{ reason: 'UNITS_PRECISION_EXCEEDED', count: 84_502 }]);
    expect(r.warning).toBe(
      '84503 of 84506 orders did not fill (84502 rejected, 1 cancelled by the account); leading reasons: UNITS_PRECISION_EXCEEDED ×84502, MARKET_HALTED ×1: the figures below rest on the 3 that did',
    );
  });

  it('does not count pending orders, or those the strategy cancelled, as failures', () => {
    const s = new OrderStats();
    for (let i = 1; i <= 9; i += 2) {
      s.onTransaction(tx({ id: String(i), type: 'LIMIT_ORDER' }));
      if (i > 1)
        s.onTransaction(
          tx({
            id: String(i + 1),
            type: 'ORDER_CANCEL',
            orderID: String(i),
            reason: i > 5 ? 'CLIENT_REQUEST' : 'TIME_IN_FORCE_EXPIRED',
          }),
        );
    }
    s.finish();
    expect(ordersReport(s)).toMatchObject({ placed: 5, cancelled: 4, pending: 1, warning: null });
  });

  it('counts the dependent orders of trades apart, and what is still pending', () => {
    const s = new OrderStats();
    s.onTransaction(tx({ id: '1', type: 'LIMIT_ORDER' }));
    s.onTransaction(tx({ id: '2', type: 'STOP_LOSS_ORDER' }));
    s.onTransaction(tx({ id: '3', type: 'ORDER_CANCEL', orderID: '2', reason: 'LINKED_TRADE_CLOSED' }));
    s.onTransaction(
      tx({ id: '4', type: 'TAKE_PROFIT_ORDER_REJECT', rejectReason: 'TAKE_PROFIT_ON_FILL_LOSS' }),
    );
    s.finish();
    const r = ordersReport(s);
    expect(r).toMatchObject({ placed: 1, filled: 0, cancelled: 0, rejected: 0, pending: 1, warning: null });
    expect(r.dependent).toMatchObject({ placed: 2, cancelled: 1, rejected: 1, pending: 0 });
    expect(r.dependent.cancelReasons).toEqual([{ reason: 'LINKED_TRADE_CLOSED', count: 1 }]);
  });
});

describe('formatSummary', () => {
  const base = {
    currency: 'USD',
    from: '2024-01-01T00:00:00.000Z',
    to: '2024-02-01T00:00:00.000Z',
    initialBalance: 100000,
    finalBalance: 100000,
    finalNAV: 100000,
    netPL: 0,
    returnPct: 0,
    realizedPL: 0,
    unrealizedPL: 0,
    trades: 0,
    openTrades: 0,
    wins: 0,
    losses: 0,
    winRate: 0,
    grossProfit: 0,
    grossLoss: 0,
    profitFactor: null,
    averageWin: 0,
    averageLoss: 0,
    largestWin: 0,
    largestLoss: 0,
    averageHoldingHours: 0,
    maxDrawdown: 0,
    maxDrawdownPct: 0,
    sharpe: null,
    exposurePct: 0,
    spreadCost: 0,
    financing: 0,
    commission: 0,
    ambiguousCandles: 0,
    ambiguousPL: 0,
    marketHalted: 0,
    exitReasons: {},
    byInstrument: {},
    long: {
      trades: 0,
      wins: 0,
      losses: 0,
      winRate: 0,
      netPL: 0,
      profitFactor: null,
      spreadCost: 0,
      financing: 0,
      commission: 0,
    },
    short: {
      trades: 0,
      wins: 0,
      losses: 0,
      winRate: 0,
      netPL: 0,
      profitFactor: null,
      spreadCost: 0,
      financing: 0,
      commission: 0,
    },
  } satisfies Summary;

  it('puts the warning and the orders at the top', () => {
    const lines = formatSummary({ ...base, orders: ordersReport(orders(0, 211, 0)) }, 'run').split('\n');
    expect(lines[2]).toBe(
      'WARNING: 211 of 211 orders did not fill (0 rejected, 211 cancelled by the account); leading reasons: MARKET_HALTED ×211: the figures below rest on the 0 that did',
    );
    expect(lines[3]).toMatch(/^Orders\s+211 placed, 0 filled, 211 cancelled, 0 rejected$/);
    expect(lines[4]).toMatch(/^ {2}cancelled\s+MARKET_HALTED ×211$/);
  });

  it('says which data and spread model produced the figures when the data layer reports them, and nothing when it does not', () => {
    const hole = {
      instrument: 'EUR_USD',
      granularity: 'M1' as const,
      from: '2024-01-10T00:00:00Z',
      to: '2024-01-11T00:00:00Z',
      openHours: 24,
    };
    const text = formatSummary(
      {
        ...base,
        data: {
          source: 'EUR_USD M1: real, bid only, 1 source (histdata)',
          sides: 'bid',
          synthetic: false,
          spreadModel: { kind: 'fixed', pips: 1.2, text: 'fixed 1.2 pips' },
          coverage: { from: '2024-01-01T00:00:00Z', to: '2024-01-31T23:59:00Z', holes: [hole, hole] },
          series: [],
        },
      },
      'run',
    );
    expect(text).toMatch(/\nData\s+EUR_USD M1: real, bid only, 1 source \(histdata\)\n/);
    expect(text).toMatch(/\nSpread model\s+fixed 1\.2 pips\n/);
    expect(text).toMatch(
      /\nData covered\s+2024-01-01T00:00:00Z → 2024-01-31T23:59:00Z {2}\(2 holes beyond market closures: see summary.json data.coverage\)\n/,
    );
    const plain = formatSummary(base, 'run');
    expect(plain).not.toMatch(/Data|Spread model|WARNING|Orders/);
  });
});
