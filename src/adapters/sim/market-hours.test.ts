import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { MINUTE, candle, f, harness, market } from './testkit.ts';

/** Market orders against each instrument's own trading hours, and the switch that turns them off. */

const kinds = (out: readonly Transaction[]): unknown[][] => out.map((t) => [t.type, f(t, 'reason')]);
const WED_1730_NY = Date.UTC(2024, 0, 3, 22, 30); // Wednesday 17:30 New York (EST): gold's daily break
const SAT_NOON = Date.UTC(2024, 0, 6, 12, 0);

describe('market hours per instrument', () => {
  it("gold's daily 17:00-18:00 New York break halts a gold market order while EUR_USD fills", () => {
    const h = harness({}, WED_1730_NY - 2 * MINUTE);
    h.feed(candle('XAU_USD', WED_1730_NY - MINUTE, [2030, 2030, 2030, 2030], 0.3));
    h.feed(candle('EUR_USD', WED_1730_NY - MINUTE, [1.1, 1.1, 1.1, 1.1]));
    const gold = h.submit(market('XAU_USD', '1'));
    expect(kinds(gold)).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'MARKET_HALTED'],
    ]);
    expect(h.sim.stats.halted).toBe(1);
    expect(h.submit(market('EUR_USD', '100'))).toEqual([]); // waits for the next price
    expect(kinds(h.feed(candle('EUR_USD', WED_1730_NY, [1.1, 1.1, 1.1, 1.1]))).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
    ]);
  });

  it('the holidays of the market calendar halt: a market order decided on 25 December or 1 January is MARKET_HALTED, the day after fills', () => {
    for (const [eve, day] of [
      [Date.UTC(2019, 11, 24, 21, 58), Date.UTC(2019, 11, 25, 12)],
      [Date.UTC(2019, 11, 31, 21, 58), Date.UTC(2020, 0, 1, 12)],
    ] as const) {
      const h = harness({}, eve - MINUTE);
      h.feed(candle('EUR_USD', eve, [1.1, 1.1, 1.1, 1.1]));
      const n = h.txs.length;
      h.sim.submit(market('EUR_USD', '100'), day);
      expect(kinds(h.txs.slice(n)), new Date(day).toISOString()).toEqual([
        ['MARKET_ORDER', 'CLIENT_ORDER'],
        ['ORDER_CANCEL', 'MARKET_HALTED'],
      ]);
      h.sim.submit(market('EUR_USD', '100'), day + 10 * 60 * MINUTE); // 22:00 UTC: 17:00 New York, open again
      expect(
        kinds(h.feed(candle('EUR_USD', day + 10 * 60 * MINUTE, [1.1, 1.1, 1.1, 1.1]))).map((k) => k[0]),
      ).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
    }
  });

  it('an early close halts: a market order decided after 14:00 New York on 24 December 2013 is MARKET_HALTED until the reopen on the 25th; in 2019 (no early close) it fills', () => {
    const eve = Date.UTC(2013, 11, 24, 18, 58);
    const h = harness({}, eve - MINUTE);
    h.feed(candle('EUR_USD', eve, [1.37, 1.37, 1.37, 1.37]));
    for (const at of [Date.UTC(2013, 11, 24, 19, 30), Date.UTC(2013, 11, 25, 21, 59)]) {
      const n = h.txs.length;
      h.sim.submit(market('EUR_USD', '100'), at);
      expect(kinds(h.txs.slice(n)), new Date(at).toISOString()).toEqual([
        ['MARKET_ORDER', 'CLIENT_ORDER'],
        ['ORDER_CANCEL', 'MARKET_HALTED'],
      ]);
    }
    const reopen = Date.UTC(2013, 11, 25, 22);
    h.sim.submit(market('EUR_USD', '100'), reopen);
    expect(kinds(h.feed(candle('EUR_USD', reopen, [1.37, 1.37, 1.37, 1.37]))).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
    ]);
    const late = Date.UTC(2019, 11, 24, 19, 30);
    const g = harness({}, late - 2 * MINUTE);
    g.feed(candle('EUR_USD', late - MINUTE, [1.1, 1.1, 1.1, 1.1]));
    g.sim.submit(market('EUR_USD', '100'), late);
    expect(kinds(g.feed(candle('EUR_USD', late, [1.1, 1.1, 1.1, 1.1]))).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
    ]);
  });

  it('marketHours: false turns the halt off: on 24/7 data a Saturday order fills at the next price', () => {
    for (const marketHours of [true, false]) {
      const h = harness({ marketHours }, SAT_NOON - 2 * MINUTE);
      h.feed(candle('EUR_USD', SAT_NOON - MINUTE, [1.1, 1.1, 1.1, 1.1]));
      const out = [
        ...h.submit(market('EUR_USD', '100')),
        ...h.feed(candle('EUR_USD', SAT_NOON, [1.1, 1.1, 1.1, 1.1])),
      ];
      expect(
        kinds(out).map((k) => k[1]),
        `marketHours ${marketHours}`,
      ).toEqual(marketHours ? ['CLIENT_ORDER', 'MARKET_HALTED'] : ['CLIENT_ORDER', 'MARKET_ORDER']);
      expect(h.sim.stats.halted).toBe(marketHours ? 1 : 0);
    }
  });
});
