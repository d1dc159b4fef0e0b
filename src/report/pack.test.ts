import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packRun, unpackRun } from './pack.ts';
import type { RunModel } from './run-model.ts';

const money = fc.integer({ min: -10_000_000, max: 10_000_000 }).map((x) => x / 10_000);
const price = fc.integer({ min: 1, max: 20_000_000 }).map((x) => x / 100_000);

describe('packRun / unpackRun', () => {
  it('the page gets back exactly the trades, fills and levels of the model', () => {
    const trade = fc
      .record({
        id: fc.integer({ min: 1, max: 1e7 }).map(String),
        instrument: fc.constantFrom('EUR_USD', 'USD_JPY', 'XAU_USD'),
        units: fc.integer({ min: -1e6, max: 1e6 }),
        openTime: fc.integer({ min: 1.5e9, max: 1.8e9 }),
        closeTime: fc.option(fc.integer({ min: 0, max: 1e7 }), { nil: null }),
        openPrice: price,
        closePrice: price,
        pl: money,
        financing: money,
        spreadCost: money,
        commission: money,
        closeReason: fc.constantFrom('STOP_LOSS_ORDER', 'MARKET_ORDER', ''),
        // MAE, MFE, run-up %: present (from trades.csv) or not (an older run folder).
        x: fc.option(
          fc.tuple(
            money,
            money,
            fc.integer({ min: 0, max: 1e6 }).map((v) => v / 1e4),
          ),
          { nil: undefined },
        ),
      })
      .map(({ x, ...t }) => ({
        ...t,
        closeTime: t.closeTime === null ? null : t.openTime + t.closeTime,
        closePrice: t.closeTime === null ? null : t.closePrice,
        ...(x ? { mae: x[0], mfe: x[1], runUp: x[2] } : {}),
      }));
    const fill = fc.record({
      id: fc.integer({ min: 1, max: 1e7 }).map(String),
      time: fc.integer({ min: 1.5e9, max: 1.8e9 }),
      instrument: fc.constantFrom('EUR_USD', 'GBP_USD'),
      units: fc.integer({ min: -1e6, max: 1e6 }),
      price,
      reason: fc.constantFrom('MARKET_ORDER', 'TAKE_PROFIT_ORDER'),
      tradeID: fc.option(fc.integer({ min: 1, max: 1e7 }).map(String), { nil: '' }),
    });
    const pairs = fc.array(fc.tuple(fc.integer({ min: 1.5e9, max: 1.8e9 }), price), { maxLength: 3 });
    const levels = fc.dictionary(
      fc.integer({ min: 1, max: 1e7 }).map(String),
      fc.record({ sl: pairs, tp: pairs, ts: pairs }),
    );
    fc.assert(
      fc.property(
        fc.array(trade, { maxLength: 50 }),
        fc.array(fill, { maxLength: 50 }),
        levels,
        (trades, fills, lv) => {
          // Levels come in time order per trade and kind, as transactions create them.
          for (const x of Object.values(lv))
            for (const k of ['sl', 'tp', 'ts'] as const) x[k].sort((a, b) => a[0] - b[0]);
          const model = { trades, fills, levels: lv } as unknown as RunModel;
          const back = unpackRun(JSON.parse(JSON.stringify(packRun(model))));
          expect(back.trades).toEqual(trades);
          expect(back.fills).toEqual(fills);
          expect(back.levels).toEqual(
            Object.fromEntries(
              Object.entries(lv).filter(([, x]) => x.sl.length + x.tp.length + x.ts.length > 0),
            ),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("keeps the trade a fill opens, whose ID is the fill's own (it was read back as no trade)", () => {
    const fills = [
      {
        id: '9',
        time: 1.5e9,
        instrument: 'EUR_USD',
        units: 1000,
        price: 1.1,
        reason: 'MARKET_ORDER',
        tradeID: '9',
      },
      {
        id: '12',
        time: 1.5e9 + 60,
        instrument: 'EUR_USD',
        units: -1000,
        price: 1.2,
        reason: 'TAKE_PROFIT_ORDER',
        tradeID: '9',
      },
      {
        id: '14',
        time: 1.5e9 + 120,
        instrument: 'EUR_USD',
        units: 0,
        price: 1.2,
        reason: 'MARKET_ORDER',
        tradeID: '',
      },
    ];
    const back = unpackRun(
      JSON.parse(JSON.stringify(packRun({ trades: [], fills, levels: {} } as unknown as RunModel))),
    );
    expect(back.fills.map((f) => f.tradeID)).toEqual(['9', '9', '']);
  });
});
