import { describe, expect, it } from 'vitest';
import type { Ledger } from '../domain/ledger.ts';
import { MINUTE, T0, candle, harness, instruments } from '../adapters/sim/testkit.ts';
import { Books } from './book.ts';
import { BookExecution } from './portfolio-host.ts';

/**
 * A strategy of a portfolio closes its own position, not the account's: its closePosition closes
 * its own trades by ID (or, for units the account holds under no trade of its, sends a tagged market
 * order), and the other strategy's trades stay open.
 */
describe('BookExecution', () => {
  it.each([
    ['netting, each strategy netted apart', {}],
    ['hedging', { hedging: true }],
  ])("closePosition closes the strategy's own book only (%s)", (_name, opts) => {
    const h = harness({ ...opts, netByTag: true, marketHours: false });
    const ledger = (h.sim as unknown as { ledger: Ledger }).ledger;
    const books = new Books(['A', 'B'], {
      currency: 'USD',
      instruments: instruments(),
      initialBalance: '100000',
      hedging: (opts as { hedging?: boolean }).hedging === true,
    });
    h.sim.listen((tx) => books.route(tx));
    const hedging = (opts as { hedging?: boolean }).hedging === true;
    const a = new BookExecution(h.sim, books.book('A'), () => ledger.trades, hedging);
    const b = new BookExecution(h.sim, books.book('B'), () => ledger.trades, hedging);
    const market = (id: string, units: number) => ({
      kind: 'order' as const,
      id,
      request: { type: 'MARKET', instrument: 'EUR_USD', units: String(units) } as never,
    });
    let t = T0;
    const tick = (): void => {
      h.feed(candle('EUR_USD', t, [1.1, 1.1005, 1.0995, 1.1], 0.0001));
      t += MINUTE;
    };
    tick();
    a.submit(market('A-1', 1000));
    b.submit(market('B-1', 500));
    b.submit(market('B-2', -200));
    tick();
    const units = (l: Ledger): number => {
      const p = l.position('EUR_USD');
      return p.long + p.short;
    };
    expect(units(books.book('A').portfolio.ledger)).toBe(1000);
    expect(units(books.book('B').portfolio.ledger)).toBe(300);
    a.submit({
      kind: 'closePosition',
      id: 'A-2',
      instrument: 'EUR_USD',
      longUnits: 'ALL',
      shortUnits: 'ALL',
    });
    tick();
    expect(units(books.book('A').portfolio.ledger)).toBe(0);
    expect(units(books.book('B').portfolio.ledger)).toBe(300);
    expect(units(ledger)).toBe(300);
    // Every order at the account carried its strategy's tag.
    const orders = h.txs.filter((x) => x.type === 'MARKET_ORDER') as unknown as {
      clientExtensions?: { tag?: string; id?: string };
      tradeClose?: { tradeID: string };
    }[];
    // Every order at the account carried its strategy's tag, but A's close: a close of A's own trade by ID.
    const aTrade = h.txs.find(
      (x) => x.type === 'ORDER_FILL' && (x as { tradeOpened?: unknown }).tradeOpened !== undefined,
    ) as unknown as { tradeOpened: { tradeID: string } };
    expect(
      orders.map((o) =>
        o.tradeClose !== undefined
          ? `close ${o.tradeClose.tradeID}`
          : `${o.clientExtensions?.id}:${o.clientExtensions?.tag}`,
      ),
    ).toEqual(['A-1:A', 'B-1:B', 'B-2:B', `close ${aTrade.tradeOpened.tradeID}`]);
  });
});
