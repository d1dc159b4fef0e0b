import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { MINUTE, T0, candle, f, harness, instruments, market, pending, type Harness } from './testkit.ts';
import { checkOrder, requestAsRead } from './validate.ts';

/**
 * One validation for every way an order reaches the simulator: an order created with the order call,
 * one replaced by ID, a trade's dependent orders set with the trade-orders call, and the on-fill
 * details of an entry order. A dependent order names a trade, not an instrument: the trade's
 * instrument is what it is checked against, on every path.
 */

const EU = 'EUR_USD';
const flat = (time: number, bid = 1.1): Candle => candle(EU, time, [bid, bid, bid, bid]);
const kinds = (out: readonly Transaction[]): unknown[][] =>
  out.map((t) => [t.type, f(t, 'rejectReason') ?? f(t, 'reason')]);
const order = (request: Record<string, unknown>): OrderIntent => ({
  kind: 'order',
  id: 'o',
  request: request as never,
});
const replace = (orderSpecifier: string, request: Record<string, unknown>): OrderIntent => ({
  kind: 'replace',
  id: 'r',
  orderSpecifier,
  request: request as never,
});

/** A broker with one open long EUR_USD trade of 1000 at 1.10020; returns the trade's ID. */
function withTrade(): { h: Harness; tradeID: string } {
  const h = harness();
  h.feed(flat(T0 - MINUTE));
  h.submit(market(EU, '1000'));
  h.feed(flat(T0));
  const tradeID = [...h.sim.ledger.trades.keys()][0]!;
  return { h, tradeID };
}

/** The four ways a dependent order reaches the simulator, each answering its transactions. */
const PATHS: Record<
  string,
  (h: Harness, tradeID: string, details: Record<string, unknown>, type: string) => Transaction[]
> = {
  'order create': (h, tradeID, d, type) => h.submit(order({ type, tradeID, ...d })),
  'order replace': (h, tradeID, d, type) => {
    // A valid order of the type first, then the replacement under test.
    const valid = type === 'TAKE_PROFIT' ? { price: '1.20000' } : { distance: '0.00500' };
    const [created] = h.submit(order({ type, tradeID, ...valid }));
    return h.submit(replace(created!.id, { type, tradeID, ...d }));
  },
  'trade orders': (h, tradeID, d, type) =>
    h.submit({
      kind: 'tradeOrders',
      id: 't',
      tradeSpecifier: tradeID,
      ...(type === 'TAKE_PROFIT' ? { takeProfit: d } : { trailingStopLoss: d }),
    } as never),
};

describe('dependent orders are checked against their trade instrument on every path', () => {
  for (const [path, send] of Object.entries(PATHS)) {
    it(`${path}: a trailing stop distance below EUR_USD's minimum (0.00050) is rejected PRICE_DISTANCE_MINIMUM_NOT_MET`, () => {
      const { h, tradeID } = withTrade();
      const out = send(h, tradeID, { distance: '0.00001' }, 'TRAILING_STOP_LOSS');
      const reject = out.find((t) => t.type.endsWith('_REJECT'));
      expect(kinds(out)).toContainEqual([
        'TRAILING_STOP_LOSS_ORDER_REJECT',
        'PRICE_DISTANCE_MINIMUM_NOT_MET',
      ]);
      expect(f(reject, 'tradeID')).toBe(tradeID);
      expect(f(reject, 'distance')).toBe('0.00001');
      // And it never fills on a one-pipette move: the trade stays open.
      h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1, 1.09999, 1.09999]));
      expect(h.sim.ledger.trades.has(tradeID)).toBe(true);
    });

    it(`${path}: a take profit price with six decimals on EUR_USD (displayPrecision 5) is rejected PRICE_PRECISION_EXCEEDED`, () => {
      const { h, tradeID } = withTrade();
      const out = send(h, tradeID, { price: '1.105001' }, 'TAKE_PROFIT');
      expect(kinds(out)).toContainEqual(['TAKE_PROFIT_ORDER_REJECT', 'PRICE_PRECISION_EXCEEDED']);
    });

    it(`${path}: a valid trailing stop is created with the distance as given`, () => {
      const { h, tradeID } = withTrade();
      const out = send(h, tradeID, { distance: '0.00100' }, 'TRAILING_STOP_LOSS');
      const created = out.filter((t) => t.type === 'TRAILING_STOP_LOSS_ORDER');
      expect(created).toHaveLength(1);
      expect(f(created[0], 'distance')).toBe('0.00100');
    });
  }

  it('a stop loss distance with more decimals than the instrument has is rejected PRICE_DISTANCE_PRECISION_EXCEEDED', () => {
    const { h, tradeID } = withTrade();
    expect(kinds(h.submit(order({ type: 'STOP_LOSS', tradeID, distance: '0.001001' })))).toEqual([
      ['STOP_LOSS_ORDER_REJECT', 'PRICE_DISTANCE_PRECISION_EXCEEDED'],
    ]);
  });

  it('a dependent order for a trade that does not exist is TRADE_DOESNT_EXIST on the order call and the trade-orders call', () => {
    const { h } = withTrade();
    expect(kinds(h.submit(order({ type: 'TAKE_PROFIT', tradeID: '999', price: '1.20000' })))).toEqual([
      ['TAKE_PROFIT_ORDER_REJECT', 'TRADE_DOESNT_EXIST'],
    ]);
    expect(
      kinds(
        h.submit({
          kind: 'tradeOrders',
          id: 't',
          tradeSpecifier: '999',
          takeProfit: { price: '1.20000' },
        } as never),
      ),
    ).toEqual([['TAKE_PROFIT_ORDER_REJECT', 'TRADE_DOESNT_EXIST']]);
  });

  it('a take profit created by ID has its price written at the instrument precision, as on the trade-orders path', () => {
    const { h, tradeID } = withTrade();
    const [tp] = h.submit(order({ type: 'TAKE_PROFIT', tradeID, price: '1.2' }));
    expect(f(tp, 'price')).toBe('1.20000');
  });
});

describe('request bodies as OANDA reads them', () => {
  it('units and prices given as JSON numbers are read as decimal strings, and the transactions carry strings', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const out = h.submit(
      order({
        type: 'MARKET',
        instrument: EU,
        units: 100,
        takeProfitOnFill: { price: 1.2 },
        stopLossOnFill: { distance: 0.005 },
      }),
    );
    expect(kinds(out)).toEqual([]); // waits for the next price
    const fill = h.feed(flat(T0));
    const created = fill.find((t) => t.type === 'MARKET_ORDER');
    expect(f(created, 'units')).toBe('100');
    expect(f(f(created, 'takeProfitOnFill') as Transaction, 'price')).toBe('1.20000');
    expect(f(f(created, 'stopLossOnFill') as Transaction, 'distance')).toBe('0.005');
    expect(kinds(fill).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
      'TAKE_PROFIT_ORDER',
      'STOP_LOSS_ORDER',
    ]);
    const [limit] = h.submit(pending('LIMIT', EU, -250 as never, 1.105 as never));
    expect([f(limit, 'units'), f(limit, 'price')]).toEqual(['-250', '1.10500']);
  });

  it('a number that is not a valid amount is still refused, with the reason v20 gives', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    expect(kinds(h.submit(order({ type: 'MARKET', instrument: EU, units: 0.5 })))).toEqual([
      ['MARKET_ORDER_REJECT', 'UNITS_PRECISION_EXCEEDED'],
    ]);
    expect(kinds(h.submit(order({ type: 'LIMIT', instrument: EU, units: 100, price: 1.1000001 })))).toEqual([
      ['LIMIT_ORDER_REJECT', 'PRICE_PRECISION_EXCEEDED'],
    ]);
  });

  it('a LIMIT order ignores priceBound, which v20 does not define for it: not recorded, not enforced', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const [created] = h.submit(pending('LIMIT', EU, '100', '1.09900', { priceBound: '1.09000' }));
    expect(created!.type).toBe('LIMIT_ORDER');
    expect(created).not.toHaveProperty('priceBound');
    // A gap down to 1.08000: the limit fills at the (better) open, which a bound of 1.09000 would have refused.
    const out = h.feed(candle(EU, T0, [1.08, 1.08, 1.08, 1.08]));
    expect(kinds(out)).toEqual([['ORDER_FILL', 'LIMIT_ORDER']]);
    expect(f(out[0], 'price')).toBe('1.08020');
  });

  it('requestAsRead keeps the request as it is when there is nothing to change (no copy on the backtest order path)', () => {
    const req = { type: 'MARKET', instrument: EU, units: '100' } as never;
    expect(requestAsRead(req)).toBe(req);
    const stop = { type: 'STOP', instrument: EU, units: '100', price: '1.2', priceBound: '1.21' } as never;
    expect(requestAsRead(stop)).toBe(stop);
    expect(
      requestAsRead({
        type: 'LIMIT',
        instrument: EU,
        units: '100',
        price: '1.2',
        priceBound: '1.21',
      } as never),
    ).toEqual({ type: 'LIMIT', instrument: EU, units: '100', price: '1.2' });
  });

  it('checkOrder names the instrument of a dependent order after its trade', () => {
    const { h, tradeID } = withTrade();
    const env = { instruments: instruments(), now: T0, trade: (s: string) => h.sim.ledger.trades.get(s) };
    const c = checkOrder({ type: 'TRAILING_STOP_LOSS', tradeID, distance: '0.00100' } as never, env);
    expect(c.ok && c.instrument.name).toBe(EU);
  });
});

describe('order types a client cannot request', () => {
  it('FIXED_PRICE (and a made-up type) is an error to the caller with no transaction, never a FIXED_PRICE_ORDER_REJECT', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const last = h.sim.ledger.lastTransactionID;
    for (const type of ['FIXED_PRICE', 'BOGUS']) {
      expect(() => h.submit(order({ type, instrument: EU, units: '100', price: '1.10000' }))).toThrow(
        new RegExp(`order type "${type}" cannot be requested: give one of MARKET, LIMIT`),
      );
    }
    expect(h.sim.ledger.lastTransactionID).toBe(last);
  });
});

describe('ORDER_CANCEL_REJECT names the order as v20 defines it', () => {
  it('an unknown @clientID goes in clientOrderID, never in orderID', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const [rej] = h.submit({ kind: 'cancel', id: 'c', orderSpecifier: '@nobody' });
    expect(rej!.type).toBe('ORDER_CANCEL_REJECT');
    expect(f(rej, 'clientOrderID')).toBe('nobody');
    expect(rej).not.toHaveProperty('orderID');
    const [byID] = h.submit({ kind: 'cancel', id: 'c', orderSpecifier: '777' });
    expect(f(byID, 'orderID')).toBe('777');
    const [replaced] = h.submit(
      replace('@ghost', { type: 'LIMIT', instrument: EU, units: '1', price: '1.1' }),
    );
    expect(f(replaced, 'clientOrderID')).toBe('ghost');
    expect(replaced).not.toHaveProperty('orderID');
  });
});
