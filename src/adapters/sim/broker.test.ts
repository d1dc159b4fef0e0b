import { describe, expect, it } from 'vitest';
import { Decimal } from '../../domain/decimal.ts';
import { formatAmount } from '../../domain/money.ts';
import { MINUTE, T0, candle, f, harness, instruments, market, pending } from './testkit.ts';

const EU = 'EUR_USD';

describe('market orders', () => {
  it('fill at the next candle open on the ask, with TP and SL created in the same batch (v20 numbering)', () => {
    const h = harness();
    expect(h.txs.map((t) => t.type)).toEqual(['CREATE', 'TRANSFER_FUNDS']);
    expect(
      h.submit(
        market(EU, '10000', { takeProfitOnFill: { price: '1.10000' }, stopLossOnFill: { price: '1.05000' } }),
      ),
    ).toEqual([]);
    const out = h.feed(candle(EU, T0, [1.05543, 1.056, 1.055, 1.0556]));
    expect(out.map((t) => [t.type, t.id, t.batchID])).toEqual([
      ['MARKET_ORDER', '3', '3'],
      ['ORDER_FILL', '4', '3'],
      ['TAKE_PROFIT_ORDER', '5', '3'],
      ['STOP_LOSS_ORDER', '6', '3'],
    ]);
    const fill = out[1]!;
    expect(f(fill, 'price')).toBe('1.05563');
    expect(f(fill, 'reason')).toBe('MARKET_ORDER');
    expect(f(fill, 'tradeOpened')).toMatchObject({
      tradeID: '4',
      units: '10000',
      price: '1.05563',
      halfSpreadCost: '1.0000',
    });
    expect(f(fill, 'pl')).toBe('0.0000');
    expect(f(fill, 'accountBalance')).toBe('100000.0000');
    expect(f(out[2], 'tradeID')).toBe('4');
    expect(f(out[2], 'reason')).toBe('ON_FILL');
    expect(f(out[3], 'price')).toBe('1.05000');
    expect(f(fill, 'time')).toBe(new Date(T0).toISOString().replace('Z', '000000Z'));
  });

  it('sells fill on the bid', () => {
    const h = harness();
    h.submit(market(EU, '-1000'));
    const out = h.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    expect(f(out[1], 'price')).toBe('1.10000');
    expect(f(out[1], 'units')).toBe('-1000');
  });

  it('never fill on a price seen before the order existed', () => {
    const h = harness({}, T0);
    h.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    h.submit(market(EU, '1000'));
    expect(h.sim.now).toBe(T0 + MINUTE);
    const out = h.feed(candle(EU, T0 + MINUTE, [1.101, 1.1015, 1.1005, 1.1012]));
    expect(f(out[1], 'price')).toBe('1.10120');
  });

  it('is cancelled with STOP_LOSS_ON_FILL_LOSS when the stop is beyond the market (recorded real response)', () => {
    const h = harness();
    h.submit(
      market(EU, '10000', { takeProfitOnFill: { price: '1.10000' }, stopLossOnFill: { price: '1.07000' } }),
    );
    const out = h.feed(candle(EU, T0, [1.0555, 1.056, 1.055, 1.0556]));
    expect(out.map((t) => t.type)).toEqual(['MARKET_ORDER', 'ORDER_CANCEL']);
    expect(f(out[1], 'reason')).toBe('STOP_LOSS_ON_FILL_LOSS');
    expect(f(out[1], 'orderID')).toBe(out[0]!.id);
    expect(out[1]!.batchID).toBe(out[0]!.id);
  });

  it('is cancelled with TAKE_PROFIT_ON_FILL_LOSS when the take profit is not beyond the fill', () => {
    const h = harness();
    h.submit(market(EU, '1000', { takeProfitOnFill: { price: '1.05500' } }));
    const out = h.feed(candle(EU, T0, [1.0555, 1.056, 1.055, 1.0556]));
    expect(f(out[1], 'reason')).toBe('TAKE_PROFIT_ON_FILL_LOSS');
  });

  it('is cancelled with INSUFFICIENT_MARGIN beyond the account NAV (stricter of account and instrument rate)', () => {
    const h = harness();
    const rate = Math.max(0.02, instruments().get(EU).marginRate);
    const max = 100000 / (1.1001 * rate);
    h.submit(market(EU, String(Math.ceil(max * 1.05))));
    const out = h.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    expect(out.map((t) => t.type)).toEqual(['MARKET_ORDER', 'ORDER_CANCEL']);
    expect(f(out[1], 'reason')).toBe('INSUFFICIENT_MARGIN');
    h.submit(market(EU, String(Math.floor(max * 0.95))));
    expect(h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1005, 1.0995, 1.1002]))[1]!.type).toBe('ORDER_FILL');
  });

  it('is cancelled with BOUNDS_VIOLATION when the fill would be worse than priceBound', () => {
    const h = harness();
    h.submit(market(EU, '1000', { priceBound: '1.10010' }));
    const out = h.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    expect(f(out[1], 'reason')).toBe('BOUNDS_VIOLATION');
  });
});

describe('rejects', () => {
  it.each([
    [{ instrument: 'EUR_UDS', units: '100' }, 'INSTRUMENT_UNKNOWN'],
    [{ instrument: EU, units: '10.5' }, 'UNITS_PRECISION_EXCEEDED'],
    [{ instrument: EU, units: '0' }, 'UNITS_INVALID'],
    [{ instrument: EU, units: 'abc' }, 'UNITS_INVALID'],
    [{ instrument: EU, units: '100', timeInForce: 'GTC' }, 'TIME_IN_FORCE_INVALID'],
    [
      { instrument: EU, units: '100', stopLossOnFill: { price: '1.1', distance: '0.01' } },
      'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_SPECIFIED',
    ],
    [
      { instrument: EU, units: '100', takeProfitOnFill: { price: '1.123456' } },
      'TAKE_PROFIT_ON_FILL_PRICE_PRECISION_EXCEEDED',
    ],
    [
      { instrument: EU, units: '100', trailingStopLossOnFill: { distance: '0.00001' } },
      'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MINIMUM_NOT_MET',
    ],
  ])('an invalid market order %j gives MARKET_ORDER_REJECT %s', (req, reason) => {
    const h = harness();
    const out = h.submit({ kind: 'order', id: 'x', request: { type: 'MARKET', ...req } as never });
    expect(out.map((t) => t.type)).toEqual(['MARKET_ORDER_REJECT']);
    expect(f(out[0], 'rejectReason')).toBe(reason);
  });

  it('a limit order with too many decimals gives LIMIT_ORDER_REJECT PRICE_PRECISION_EXCEEDED', () => {
    const h = harness();
    const out = h.submit(pending('LIMIT', EU, '100', '1.100001'));
    expect(out.map((t) => [t.type, f(t, 'rejectReason')])).toEqual([
      ['LIMIT_ORDER_REJECT', 'PRICE_PRECISION_EXCEEDED'],
    ]);
  });

  it('cancelling an unknown order gives ORDER_CANCEL_REJECT ORDER_DOESNT_EXIST', () => {
    const h = harness();
    const out = h.submit({ kind: 'cancel', id: 'c', orderSpecifier: '999' });
    expect(out.map((t) => [t.type, f(t, 'rejectReason')])).toEqual([
      ['ORDER_CANCEL_REJECT', 'ORDER_DOESNT_EXIST'],
    ]);
  });
});

describe('limit and stop orders', () => {
  it('a buy limit crossed inside a candle fills at its price; a gap through it fills at the (better) open', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    const created = h.submit(pending('LIMIT', EU, '1000', '1.05000'));
    expect(created.map((t) => t.type)).toEqual(['LIMIT_ORDER']);
    const out = h.feed(candle(EU, T0, [1.052, 1.0525, 1.0495, 1.0502]));
    expect(out.map((t) => t.type)).toEqual(['ORDER_FILL']);
    expect(f(out[0], 'price')).toBe('1.05000');
    expect(f(out[0], 'reason')).toBe('LIMIT_ORDER');
    expect(f(out[0], 'orderID')).toBe(created[0]!.id);

    h.submit(pending('LIMIT', EU, '1000', '1.04000'));
    const gap = h.feed(candle(EU, T0 + MINUTE, [1.0385, 1.039, 1.038, 1.0388]));
    expect(f(gap[0], 'price')).toBe('1.03870');
  });

  it('a buy stop that gaps fills at the open, worse than its price', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    h.submit(pending('STOP', EU, '1000', '1.06000'));
    const out = h.feed(candle(EU, T0, [1.061, 1.062, 1.0605, 1.0615]));
    expect(f(out[0], 'price')).toBe('1.06120');
    expect(f(out[0], 'reason')).toBe('STOP_ORDER');
  });

  it('a sell stop crossed inside a candle fills at its price on the bid', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    h.submit(pending('STOP', EU, '-1000', '1.05400'));
    const out = h.feed(candle(EU, T0, [1.0551, 1.0553, 1.0535, 1.054]));
    expect(f(out[0], 'price')).toBe('1.05400');
    expect(f(out[0], 'units')).toBe('-1000');
  });

  it('a GTD order expires with TIME_IN_FORCE_EXPIRED', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    h.submit(
      pending('LIMIT', EU, '1000', '1.04000', {
        timeInForce: 'GTD',
        gtdTime: new Date(T0 + 2 * MINUTE).toISOString(),
      }),
    );
    h.feed(candle(EU, T0, [1.055, 1.0555, 1.0548, 1.0552]));
    const out = h.feed(candle(EU, T0 + 2 * MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([['ORDER_CANCEL', 'TIME_IN_FORCE_EXPIRED']]);
  });

  it('cancel and replace follow v20: ORDER_CANCEL CLIENT_REQUEST_REPLACED, then the new order with replacesOrderID', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    const [limit] = h.submit(pending('LIMIT', EU, '-100', '1.20000', { clientExtensions: { id: 'myID' } }));
    const out = h.submit({
      kind: 'replace',
      id: 'r',
      orderSpecifier: '@myID',
      request: { type: 'LIMIT', instrument: EU, units: '-500000', price: '1.25000' } as never,
    });
    expect(out.map((t) => t.type)).toEqual(['ORDER_CANCEL', 'LIMIT_ORDER']);
    expect(f(out[0], 'reason')).toBe('CLIENT_REQUEST_REPLACED');
    expect(f(out[0], 'orderID')).toBe(limit!.id);
    expect(f(out[0], 'replacedByOrderID')).toBe(out[1]!.id);
    expect(f(out[1], 'replacesOrderID')).toBe(limit!.id);
    expect(f(out[1], 'reason')).toBe('REPLACEMENT');
    expect(out[1]!.batchID).toBe(out[0]!.id);
    const cancel = h.submit({ kind: 'cancel', id: 'c', orderSpecifier: out[1]!.id });
    expect(cancel.map((t) => [t.type, f(t, 'reason')])).toEqual([['ORDER_CANCEL', 'CLIENT_REQUEST']]);
    expect(h.sim.ledger.pendingOrders.size).toBe(0);
  });
});

describe('client extensions', () => {
  it('a modify replaces the client ID: later cancels and fills carry the new one, and only the new one finds the order', () => {
    const h = harness();
    h.feed(candle(EU, T0 - MINUTE, [1.055, 1.0555, 1.0548, 1.0552]));
    h.submit(pending('LIMIT', EU, '100', '1.05000', { clientExtensions: { id: 'old', comment: 'first' } }));
    h.submit(pending('LIMIT', EU, '100', '1.05100', { clientExtensions: { id: 'second' } }));
    const mod = h.submit({
      kind: 'clientExtensions',
      id: 'm',
      orderSpecifier: '@old',
      clientExtensions: { id: 'new', comment: 'renamed' },
    });
    expect(mod.map((t) => t.type)).toEqual(['ORDER_CLIENT_EXTENSIONS_MODIFY']);
    expect(
      h
        .submit({ kind: 'cancel', id: 'c1', orderSpecifier: '@old' })
        .map((t) => [t.type, f(t, 'rejectReason')]),
    ).toEqual([['ORDER_CANCEL_REJECT', 'ORDER_DOESNT_EXIST']]);
    // Both limits trigger at the candle's low, matched in creation order: the renamed one first.
    const fills = h.feed(candle(EU, T0, [1.0552, 1.0553, 1.0495, 1.0499]));
    expect(fills.filter((t) => t.type === 'ORDER_FILL').map((t) => f(t, 'clientOrderID'))).toEqual([
      'new',
      'second',
    ]);
    h.submit(pending('LIMIT', EU, '100', '1.04000', { clientExtensions: { id: 'third' } }));
    h.submit({
      kind: 'clientExtensions',
      id: 'm2',
      orderSpecifier: '@third',
      clientExtensions: { id: 'fourth' },
    });
    const cancel = h.submit({ kind: 'cancel', id: 'c2', orderSpecifier: '@fourth' });
    expect(cancel.map((t) => [t.type, f(t, 'reason'), f(t, 'clientOrderID')])).toEqual([
      ['ORDER_CANCEL', 'CLIENT_REQUEST', 'fourth'],
    ]);
  });
});

describe('dependent orders', () => {
  it('a take profit closes the trade at its price and cancels the stop loss (LINKED_TRADE_CLOSED)', () => {
    const h = harness();
    h.submit(
      market(EU, '10000', { takeProfitOnFill: { price: '1.05700' }, stopLossOnFill: { price: '1.05000' } }),
    );
    h.feed(candle(EU, T0, [1.05543, 1.056, 1.055, 1.0556]));
    const out = h.feed(candle(EU, T0 + MINUTE, [1.0556, 1.0575, 1.0554, 1.057]));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['ORDER_FILL', 'TAKE_PROFIT_ORDER'],
      ['ORDER_CANCEL', 'LINKED_TRADE_CLOSED'],
    ]);
    expect(f(out[0], 'price')).toBe('1.05700');
    expect(f(out[0], 'pl')).toBe('13.7000');
    expect(f(out[0], 'tradesClosed')).toEqual([
      expect.objectContaining({ tradeID: '4', units: '-10000', realizedPL: '13.7000' }),
    ]);
    expect(f(out[0], 'accountBalance')).toBe('100013.7000');
    expect(h.sim.ledger.trades.size).toBe(0);
  });

  it('a stop loss given as a distance is set from the fill price', () => {
    const h = harness();
    h.submit(market(EU, '1000', { stopLossOnFill: { distance: '0.00200' } }));
    const out = h.feed(candle(EU, T0, [1.1, 1.1005, 1.0995, 1.1002]));
    expect(f(out[2], 'type')).toBe('STOP_LOSS_ORDER');
    expect(f(out[2], 'price')).toBe('1.09820');
  });

  it("a trailing stop ratchets only in the trade's favour and fills at its level", () => {
    const h = harness();
    h.submit(market(EU, '1000', { trailingStopLossOnFill: { distance: '0.00100' } }));
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    // Rises to 1.1030: the stop follows to 1.1020.
    h.feed(candle(EU, T0 + MINUTE, [1.1, 1.103, 1.0995, 1.1025]));
    // Falls back a little, then rises less: the stop stays.
    expect(h.feed(candle(EU, T0 + 2 * MINUTE, [1.1025, 1.1028, 1.1022, 1.1024]))).toEqual([]);
    const out = h.feed(candle(EU, T0 + 3 * MINUTE, [1.1024, 1.1025, 1.101, 1.1012]));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([['ORDER_FILL', 'TRAILING_STOP_LOSS_ORDER']]);
    expect(f(out[0], 'price')).toBe('1.10200');
  });

  it('with the worst-case path, the same candle hits the stop loss first', () => {
    const h = harness({ path: 'worst' });
    h.submit(
      market(EU, '1000', { takeProfitOnFill: { price: '1.10100' }, stopLossOnFill: { price: '1.09900' } }),
    );
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    const out = h.feed(candle(EU, T0 + MINUTE, [1.1, 1.102, 1.098, 1.1]));
    expect(h.sim.stats.ambiguousCandles).toBe(1);
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['ORDER_FILL', 'STOP_LOSS_ORDER'],
      ['ORDER_CANCEL', 'LINKED_TRADE_CLOSED'],
    ]);
    expect(f(out[0], 'price')).toBe('1.09900');
  });

  it('counts a candle where both the take profit and the stop loss are in range as path-ambiguous', () => {
    const h = harness();
    h.submit(
      market(EU, '1000', { takeProfitOnFill: { price: '1.10100' }, stopLossOnFill: { price: '1.09900' } }),
    );
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    // Open 1.1000, low 1.0980 is nearer? No: high 1.1020 is 0.0020 away, low 0.0020 away: high first.
    const out = h.feed(candle(EU, T0 + MINUTE, [1.1, 1.102, 1.098, 1.1]));
    expect(h.sim.stats.ambiguousCandles).toBe(1);
    expect(f(out[0], 'reason')).toBe('TAKE_PROFIT_ORDER');
    expect(formatAmount(h.sim.stats.ambiguousPL)).toBe(f(out[0], 'pl'));
  });

  it("sets, replaces and cancels a trade's dependent orders (v20 trade orders call)", () => {
    const h = harness();
    h.submit(market(EU, '1000', { stopLossOnFill: { price: '1.09000' } }));
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    const tradeID = [...h.sim.ledger.trades.keys()][0]!;
    const out = h.submit({
      kind: 'tradeOrders',
      id: 'x',
      tradeSpecifier: tradeID,
      takeProfit: { price: '1.12000' } as never,
      stopLoss: { price: '1.09500' } as never,
    });
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['TAKE_PROFIT_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'CLIENT_REQUEST_REPLACED'],
      ['STOP_LOSS_ORDER', 'REPLACEMENT'],
    ]);
    expect(f(out[2], 'cancellingTransactionID')).toBe(out[1]!.id);
    const trade = h.sim.ledger.trades.get(tradeID)!;
    expect(trade.takeProfitOrderID).toBe(out[0]!.id);
    expect(trade.stopLossOrderID).toBe(out[2]!.id);
    const cancel = h.submit({ kind: 'tradeOrders', id: 'y', tradeSpecifier: tradeID, takeProfit: null });
    expect(cancel.map((t) => [t.type, f(t, 'reason')])).toEqual([['ORDER_CANCEL', 'CLIENT_REQUEST']]);
    expect(h.sim.ledger.trades.get(tradeID)!.takeProfitOrderID).toBeUndefined();
  });
});

describe('liquidity (ticks that carry it)', () => {
  const tick = (at: number, liquidity: number) =>
    ({
      kind: 'tick',
      instrument: EU,
      at,
      bid: 1.1,
      ask: 1.1002,
      bidLiquidity: liquidity,
      askLiquidity: liquidity,
    }) as never;

  it('FOK cancels with INSUFFICIENT_LIQUIDITY; IOC fills what is there and cancels the rest', () => {
    const h = harness();
    h.submit(market(EU, '5000000'));
    let out = h.feed(tick(T0, 1_000_000));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'INSUFFICIENT_LIQUIDITY'],
    ]);
    h.submit(market(EU, '5000000', { timeInForce: 'IOC' }));
    out = h.feed(tick(T0 + 1000, 1_000_000));
    expect(out.map((t) => [t.type, f(t, 'units') ?? f(t, 'reason')])).toEqual([
      ['MARKET_ORDER', '5000000'],
      ['ORDER_FILL', '1000000'],
      ['ORDER_CANCEL', 'INSUFFICIENT_LIQUIDITY'],
    ]);
    expect(h.sim.ledger.position(EU).long).toBe(1_000_000);
  });
});

describe('guaranteed stop loss', () => {
  it('fills at its exact level through a gap and charges the premium on the units it closes', () => {
    const h = harness();
    h.submit(market(EU, '10000', { guaranteedStopLossOnFill: { price: '1.09500' } }));
    const opened = h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    expect(opened.map((t) => t.type)).toEqual(['MARKET_ORDER', 'ORDER_FILL', 'GUARANTEED_STOP_LOSS_ORDER']);
    expect(f(opened[2], 'guaranteedExecutionPremium')).toBe(instruments().get(EU).guaranteedStopLoss.premium);
    // The market gaps from 1.1000 to 1.0900: an ordinary stop would fill at the open (1.0900).
    const out = h.feed(candle(EU, T0 + MINUTE, [1.09, 1.0905, 1.0895, 1.09]));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([['ORDER_FILL', 'GUARANTEED_STOP_LOSS_ORDER']]);
    expect(f(out[0], 'price')).toBe('1.09500');
    // Fee: 10,000 units × 0.00015 = 1.5000 USD; P/L: (1.09500 - 1.10020) × 10,000 = -52.0000.
    expect(f(out[0], 'guaranteedExecutionFee')).toBe('1.5000');
    expect(f(out[0], 'pl')).toBe('-52.0000');
    expect(f(out[0], 'accountBalance')).toBe('99946.5000');
  });

  it('is cancelled when it is nearer than the instrument minimum distance', () => {
    const h = harness();
    h.submit(market(EU, '1000', { guaranteedStopLossOnFill: { distance: '0.00050' } }));
    const out = h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    expect(out.map((t) => [t.type, f(t, 'reason')])).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'STOP_LOSS_ON_FILL_GUARANTEED_MINIMUM_DISTANCE_NOT_MET'],
    ]);
  });
});

describe('positions', () => {
  it('REDUCE_FIRST nets against the oldest trades first, then opens the remainder', () => {
    const h = harness();
    h.submit(market(EU, '100'));
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    h.submit(market(EU, '50'));
    h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1001, 1.0999, 1.1]));
    const [first, second] = [...h.sim.ledger.trades.keys()];
    h.submit(market(EU, '-120'));
    let out = h.feed(candle(EU, T0 + 2 * MINUTE, [1.101, 1.1011, 1.1009, 1.101]));
    expect(f(out[1], 'tradesClosed')).toEqual([expect.objectContaining({ tradeID: first, units: '-100' })]);
    expect(f(out[1], 'tradeReduced')).toEqual(expect.objectContaining({ tradeID: second, units: '-20' }));
    expect(f(out[1], 'tradeOpened')).toBeUndefined();
    h.submit(market(EU, '-200'));
    out = h.feed(candle(EU, T0 + 3 * MINUTE, [1.101, 1.1011, 1.1009, 1.101]));
    expect(f(out[1], 'tradesClosed')).toEqual([expect.objectContaining({ tradeID: second, units: '-30' })]);
    expect(f(out[1], 'tradeOpened')).toEqual(expect.objectContaining({ units: '-170' }));
    expect(h.sim.ledger.position(EU)).toEqual({ long: 0, short: -170 });
  });

  it('a hedging account opens a new trade with DEFAULT position fill', () => {
    const h = harness({ hedging: true });
    h.submit(market(EU, '100'));
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    h.submit(market(EU, '-100'));
    h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1001, 1.0999, 1.1]));
    expect(h.sim.ledger.position(EU)).toEqual({ long: 100, short: -100 });
  });

  it('closes a trade (MARKET_ORDER_TRADE_CLOSE) and a position (MARKET_ORDER_POSITION_CLOSEOUT)', () => {
    const h = harness();
    h.submit(market(EU, '100'));
    h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    const tradeID = [...h.sim.ledger.trades.keys()][0]!;
    h.submit({ kind: 'closeTrade', id: 'c1', tradeSpecifier: tradeID, units: '40' });
    let out = h.feed(candle(EU, T0 + MINUTE, [1.1, 1.1001, 1.0999, 1.1]));
    expect(out.map((t) => t.type)).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
    expect(f(out[0], 'reason')).toBe('TRADE_CLOSE');
    expect(f(out[0], 'positionFill')).toBe('REDUCE_ONLY');
    expect(f(out[0], 'timeInForce')).toBe('FOK');
    expect(f(out[0], 'tradeClose')).toEqual({ tradeID, units: '40' });
    expect(f(out[1], 'reason')).toBe('MARKET_ORDER_TRADE_CLOSE');
    expect(f(out[1], 'tradeReduced')).toEqual(expect.objectContaining({ tradeID, units: '-40' }));
    h.submit({ kind: 'closePosition', id: 'c2', instrument: EU, longUnits: 'ALL' });
    out = h.feed(candle(EU, T0 + 2 * MINUTE, [1.1, 1.1001, 1.0999, 1.1]));
    expect(f(out[0], 'longPositionCloseout')).toEqual({ instrument: EU, units: 'ALL' });
    expect(f(out[1], 'reason')).toBe('MARKET_ORDER_POSITION_CLOSEOUT');
    expect(f(out[1], 'units')).toBe('-60');
    expect(h.sim.ledger.trades.size).toBe(0);
  });

  it('rejects closing a trade that does not exist', () => {
    const h = harness();
    const out = h.submit({ kind: 'closeTrade', id: 'c', tradeSpecifier: '42', units: 'ALL' });
    expect(out.map((t) => [t.type, f(t, 'rejectReason')])).toEqual([
      ['MARKET_ORDER_REJECT', 'TRADE_DOESNT_EXIST'],
    ]);
  });
});

describe('money', () => {
  it('converts through the inverse pair with the rate worse for the client (EUR account, EUR_GBP)', () => {
    const h = harness({ currency: 'EUR' });
    h.submit(market('EUR_GBP', '534'));
    const out = h.feed(candle('EUR_GBP', T0, [0.8889, 0.889, 0.8888, 0.8889], 0.00015));
    const fill = out[1]!;
    expect(Number(f(fill, 'gainQuoteHomeConversionFactor'))).toBeCloseTo(1.124796, 6);
    expect(Number(f(fill, 'lossQuoteHomeConversionFactor'))).toBeCloseTo(1.124986, 6);
    expect(f(fill, 'halfSpreadCost')).toBe('0.0451');
  });

  it('converts a USD_JPY profit to a USD account with 1/ask', () => {
    const h = harness();
    h.submit(market('USD_JPY', '10000'));
    h.feed(candle('USD_JPY', T0, [150, 150.05, 149.95, 150], 0.02));
    h.submit(market('USD_JPY', '-10000'));
    const out = h.feed(candle('USD_JPY', T0 + MINUTE, [151, 151.05, 150.95, 151], 0.02));
    const fill = out[1]!;
    const gain = Number(f(fill, 'gainQuoteHomeConversionFactor'));
    expect(gain).toBeCloseTo(1 / 151.02, 10);
    // (151.000 - 150.020) * 10000 JPY = 9800 JPY
    expect(f(fill, 'pl')).toBe(
      new Decimal('9800')
        .times(f(fill, 'gainQuoteHomeConversionFactor') as string)
        .toDecimalPlaces(4)
        .toFixed(4),
    );
  });

  it('charges DAILY_FINANCING at 17:00 New York with the Wednesday triple', () => {
    const h = harness({ financing: true }, Date.UTC(2024, 0, 3, 21, 0));
    h.submit(market(EU, '100000'));
    h.feed(candle(EU, Date.UTC(2024, 0, 3, 21, 0), [1.1, 1.1001, 1.0999, 1.1], 0.0002, 'H1', 3_600_000));
    // Wednesday 2024-01-03 17:00 New York = 22:00 UTC.
    h.feed(candle(EU, Date.UTC(2024, 0, 3, 22, 0), [1.1, 1.1001, 1.0999, 1.1], 0.0002, 'H1', 3_600_000));
    const fin = h.txs.find((t) => t.type === 'DAILY_FINANCING');
    expect(f(fin, 'time')).toBe('2024-01-03T22:00:00.000000000Z');
    expect(fin).toBeDefined();
    // 100,000 units × 1.1001 × longRate / 365 × 3 days (USD quote: no conversion).
    const inst = instruments().get(EU);
    const expected = new Decimal((100000 * 1.1001 * inst.financing.longRate * 3) / 365)
      .toDecimalPlaces(4)
      .toFixed(4);
    expect(inst.financing.daysCharged[3]).toBe(3);
    expect(f(fin, 'financing')).toBe(expected);
    expect(f(fin, 'positionFinancings')).toEqual([expect.objectContaining({ instrument: EU })]);
    expect(f(fin, 'accountBalance')).toBe(formatAmount(h.sim.ledger.balance));
  });

  it('charges commission per million units on every fill, exactly, and the balance pays it', () => {
    const h = harness({ commissionPerMillion: '50' });
    h.submit(market(EU, '123457'));
    const out = h.feed(candle(EU, T0, [1.1, 1.1001, 1.0999, 1.1]));
    // 123,457 / 1,000,000 × 50 = 6.17285 → 6.1729 (half away from zero).
    expect(f(out[1], 'commission')).toBe('6.1729');
    expect(f(out[1], 'accountBalance')).toBe('99993.8271');
  });

  it('the balance equals the sum of the amounts of its transactions, exactly', () => {
    const h = harness({ financing: true }, Date.UTC(2024, 0, 2, 0, 0));
    const times = Array.from({ length: 60 }, (_, i) => Date.UTC(2024, 0, 2, 0, 0) + i * 3_600_000);
    let px = 1.1;
    for (const [i, t] of times.entries()) {
      if (i % 5 === 0) h.submit(market(EU, String((i % 2 ? -1 : 1) * (1000 + i * 137))));
      const c = px + Math.sin(i) * 0.002;
      h.feed(
        candle(EU, t, [px, Math.max(px, c) + 0.0004, Math.min(px, c) - 0.0004, c], 0.00015, 'H1', 3_600_000),
      );
      px = c;
    }
    let sum = new Decimal(0);
    for (const t of h.txs) {
      const x = t as unknown as Record<string, string>;
      if (t.type === 'TRANSFER_FUNDS') sum = sum.plus(x.amount!);
      if (t.type === 'ORDER_FILL')
        sum = sum.plus(x.pl!).plus(x.financing!).minus(x.commission!).minus(x.guaranteedExecutionFee!);
      if (t.type === 'DAILY_FINANCING') sum = sum.plus(x.financing!);
    }
    expect(h.txs.some((t) => t.type === 'DAILY_FINANCING')).toBe(true);
    expect(sum.toFixed(4)).toBe(formatAmount(h.sim.ledger.balance));
    const last = [...h.txs].reverse().find((t) => 'accountBalance' in t) as unknown as Record<string, string>;
    expect(last.accountBalance).toBe(sum.toFixed(4));
  });
});

describe('transaction delivery', () => {
  it('listen and transactions$ deliver the same transactions in the same order; each stops on its own, complete ends both', () => {
    const h = harness();
    const heard: string[] = [];
    const stop = h.sim.listen((tx) => heard.push(`${tx.id}:${tx.type}`));
    const seen: string[] = [];
    let completed = false;
    const sub = h.sim.transactions$.subscribe({
      next: (tx) => seen.push(`${tx.id}:${tx.type}`),
      complete: () => (completed = true),
    });
    h.submit(
      market(EU, '10000', { takeProfitOnFill: { price: '1.10000' }, stopLossOnFill: { price: '1.05000' } }),
    );
    h.feed(candle(EU, T0, [1.05543, 1.056, 1.055, 1.0556]));
    expect(heard).toEqual(['3:MARKET_ORDER', '4:ORDER_FILL', '5:TAKE_PROFIT_ORDER', '6:STOP_LOSS_ORDER']);
    expect(seen).toEqual(heard);
    // Stopping one leaves the other (and the harness's own subscriber) in place.
    stop();
    h.submit(market(EU, '-10000'));
    h.feed(candle(EU, T0 + MINUTE, [1.0556, 1.0561, 1.0551, 1.0557]));
    expect(heard).toHaveLength(4);
    expect(seen.slice(4).map((s) => s.split(':')[1])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
      'ORDER_CANCEL',
      'ORDER_CANCEL',
    ]);
    expect(h.txs.map((t) => `${t.id}:${t.type}`).slice(2)).toEqual(seen);
    // complete() ends transactions$ (its subscribers see complete) and drops the listeners.
    const late: string[] = [];
    h.sim.listen((tx) => late.push(tx.id));
    h.sim.complete();
    expect(completed).toBe(true);
    const before = h.sim.ledger.applied;
    h.submit(market(EU, '1000'));
    h.feed(candle(EU, T0 + 2 * MINUTE, [1.0557, 1.0562, 1.0552, 1.0558]));
    expect(h.sim.ledger.applied).toBe(before + 2); // the order and its fill happened...
    expect(late).toEqual([]); // ...and reached nobody
    sub.unsubscribe();
  });
});
