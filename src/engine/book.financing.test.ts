import { describe, expect, it } from 'vitest';
import type { DailyFinancingTransaction } from '../domain/v20/index.ts';
import { withTag, type OrderIntent } from '../domain/intents.ts';
import type { Ledger } from '../domain/ledger.ts';
import { amount, toUnits } from '../domain/money.ts';
import { MINUTE, T0, candle, harness, instruments } from '../adapters/sim/testkit.ts';
import { Books } from './book.ts';

/**
 * The books' financing rule (docs/portfolios.md, "The books"): an account trade its owner's book
 * holds as it is pays its financing to that trade; the financing of account trades that another
 * strategy's order reduced (a netting account across strategies) is shared over the books by their
 * units in the instrument, signed, so the books add up to the account and a book that holds units
 * over a rollover pays (or earns) for them. A buys 10,000 EUR_USD, B sells 4,000, a rollover passes.
 */
const EU = 'EUR_USD';
const HOUR = 60 * MINUTE;

const order = (name: string, n: number, units: number): OrderIntent =>
  withTag(
    {
      kind: 'order',
      id: `${name}-${n}`,
      request: { type: 'MARKET', instrument: EU, units: String(units) } as never,
    },
    name,
  );

function scenario(netByTag: boolean) {
  const h = harness({ financing: true, marketHours: false, netByTag });
  const books = new Books(['A', 'B'], {
    currency: 'USD',
    instruments: instruments(),
    initialBalance: '100000',
    hedging: false,
  });
  let routed = 0;
  const route = (): void => {
    for (; routed < h.txs.length; routed++) books.route(h.txs[routed]!);
  };
  const price = (t: number): void => {
    h.feed(candle(EU, t, [1.1, 1.1005, 1.0995, 1.1], 0.0002));
    route();
  };
  price(T0);
  h.submit(order('A', 1, 10_000));
  price(T0 + MINUTE);
  h.submit(order('B', 2, -4_000));
  price(T0 + 2 * MINUTE);
  // Tuesday 2 January 2024, 17:00 New York is 22:00 UTC (T0 is 10:00 UTC): the next price is after it.
  price(T0 + 13 * HOUR);
  const financing = h.txs.filter((t) => t.type === 'DAILY_FINANCING') as DailyFinancingTransaction[];
  expect(financing).toHaveLength(1);
  const ledger = (h.sim as unknown as { ledger: Ledger }).ledger;
  return { books, ledger, tx: financing[0]! };
}

const tradeFinancing = (books: Books, name: string): number[] =>
  [...books.book(name).portfolio.ledger.trades.values()].map((t) => toUnits(t.financing));

describe("the books' daily financing", () => {
  it('across strategies: shared by the books’ units (A holds 10,000, B −4,000, the account 6,000)', () => {
    const { books, ledger, tx } = scenario(false);
    expect([...ledger.trades.values()].map((t) => t.unitsNum)).toEqual([6000]);
    const total = amount(tx.financing);
    expect(total).toBeLessThan(0); // a long EUR_USD pays
    const a = books.book('A').portfolio.ledger.financing;
    const b = books.book('B').portfolio.ledger.financing;
    expect(a + b).toBe(total);
    expect(a).toBe(Math.round((total * 10_000) / 6_000));
    expect(b).toBe(total - a); // B, short, earns what A pays for the units it offsets
    expect(b).toBeGreaterThan(0);
    // Each book's part is on its trades.
    expect(tradeFinancing(books, 'A')).toEqual([toUnits(a)]);
    expect(tradeFinancing(books, 'B')).toEqual([toUnits(b)]);
  });

  it('each strategy apart: each account trade pays its own book’s trade, as the account charged it', () => {
    const { books, ledger, tx } = scenario(true);
    expect([...ledger.trades.values()].map((t) => t.unitsNum)).toEqual([10_000, -4_000]);
    const byTrade = new Map(
      (tx.positionFinancings ?? []).flatMap((p) =>
        (p.openTradeFinancings ?? []).map((t) => [t.tradeID, t.financing]),
      ),
    );
    for (const name of ['A', 'B']) {
      const trades = [...books.book(name).portfolio.ledger.trades.values()];
      expect(trades).toHaveLength(1);
      expect(books.book(name).portfolio.ledger.financing).toBe(amount(byTrade.get(trades[0]!.id)!));
    }
  });
});
