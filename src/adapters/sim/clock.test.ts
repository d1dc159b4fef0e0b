import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { MINUTE, T0, candle, f, harness, market, pending, type Harness } from './testkit.ts';

/**
 * Timed events (GTD and GFD expiries, the 17:00 New York financing) happen in the order of their
 * times whatever the clock's step: one step over a day gives the transactions of many small steps.
 */

const EU = 'EUR_USD';
const HOUR = 3_600_000;
const timer = (at: number) => ({ kind: 'timer' as const, at, name: 'test' });

/** An account with a long EUR_USD trade (so a rollover charges financing) and `orders` resting. */
function setup(orders: { gtdHours?: number; gfd?: boolean; units: number }[]): Harness {
  const h = harness({ financing: true });
  h.submit(market(EU, '10000'));
  h.feed(candle(EU, T0, [1.1, 1.1, 1.1, 1.1]));
  for (const o of orders) {
    // Far from the market: they only ever expire.
    const price = o.units > 0 ? '1.00000' : '1.20000';
    const tif =
      o.gfd === true
        ? { timeInForce: 'GFD' }
        : { timeInForce: 'GTD', gtdTime: formatTime(T0 + MINUTE + (o.gtdHours ?? 1) * HOUR) };
    h.submit(pending('LIMIT', EU, String(o.units), price, tif));
  }
  return h;
}

const text = (txs: readonly Transaction[]): string[] => txs.map((t) => JSON.stringify(t));

describe('timed events in time order, whatever the step', () => {
  it('a GTD order due 12:00Z is cancelled stamped 12:00Z, before the 22:00Z financing, in one step', () => {
    // T0 is Tuesday 2024-01-02 10:00Z; 17:00 New York (EST) is 22:00Z.
    const h = setup([{ gtdHours: 2 - 1 / 60, units: 100 }]);
    const out = h.feed(timer(Date.UTC(2024, 0, 2, 23, 0)) as never);
    expect(out.map((t) => [t.type, t.time])).toEqual([
      ['ORDER_CANCEL', '2024-01-02T12:00:00.000000000Z'],
      ['DAILY_FINANCING', '2024-01-02T22:00:00.000000000Z'],
    ]);
    expect(f(out[0], 'reason')).toBe('TIME_IN_FORCE_EXPIRED');
  });

  it('two GTD orders filed latest-first expire earliest-first in one step', () => {
    const h = setup([
      { gtdHours: 5, units: 100 },
      { gtdHours: 3, units: -100 },
    ]);
    const ids = h.txs.filter((t) => t.type === 'LIMIT_ORDER').map((t) => t.id);
    const out = h.feed(timer(T0 + 8 * HOUR) as never);
    expect(out.map((t) => f(t, 'orderID'))).toEqual([ids[1], ids[0]]);
  });

  it('an order due inside a candle expires there: it never fills at a later point of that candle', () => {
    const h = harness();
    h.feed(candle(EU, T0, [1.1, 1.1, 1.1, 1.1]));
    const at = T0 + 2 * MINUTE;
    // Due 30 s into the next candle, whose low (at its 40 s point: the high is nearer the open) reaches the limit.
    h.submit(
      pending('LIMIT', EU, '100', '1.09900', { timeInForce: 'GTD', gtdTime: formatTime(at + 30_000) }),
    );
    h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1, 1.1, 1.1]));
    const out = h.feed(candle(EU, at, [1.1, 1.1001, 1.0985, 1.0995]));
    expect(out.map((t) => [t.type, f(t, 'reason'), t.time])).toEqual([
      ['ORDER_CANCEL', 'TIME_IN_FORCE_EXPIRED', formatTime(at + 30_000)],
    ]);
    expect(h.sim.ledger.trades.size).toBe(0);
  });

  it('an order due inside a candle that cannot touch it is stamped at its due time, not the candle close', () => {
    const h = harness();
    h.feed(candle(EU, T0, [1.1, 1.1, 1.1, 1.1]));
    const due = T0 + MINUTE + 25_000;
    h.submit(pending('LIMIT', EU, '100', '1.00000', { timeInForce: 'GTD', gtdTime: formatTime(due) }));
    const out = h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1001, 1.0999, 1.1]));
    expect(out.map((t) => [t.type, t.time])).toEqual([['ORDER_CANCEL', formatTime(due)]]);
  });

  it('property: splitting a clock step into smaller steps never changes a single transaction', () => {
    const orderArb = fc.record({
      gtdHours: fc.integer({ min: 1, max: 24 * 9 }).map((m) => m / 4),
      gfd: fc.boolean(),
      units: fc.constantFrom(100, -100, 250),
    });
    fc.assert(
      fc.property(
        fc.array(orderArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 24 * 10 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 12 }),
        (orders, stepHours, cuts) => {
          const end = T0 + MINUTE + stepHours * HOUR;
          const one = setup(orders);
          const n1 = one.txs.length;
          one.feed(timer(end) as never);
          const many = setup(orders);
          const n2 = many.txs.length;
          // The same span, cut at random points (sorted, within it).
          const points = [
            ...new Set(cuts.map((c) => T0 + MINUTE + Math.floor(((end - T0 - MINUTE) * c) / 1000))),
          ].sort((a, b) => a - b);
          for (const p of points) many.feed(timer(p) as never);
          many.feed(timer(end) as never);
          expect(text(many.txs.slice(n2))).toEqual(text(one.txs.slice(n1)));
          // And the log is in time order.
          const times = one.txs.slice(n1).map((t) => t.time);
          expect([...times].sort()).toEqual(times);
        },
      ),
      { numRuns: 120 },
    );
  });
});
