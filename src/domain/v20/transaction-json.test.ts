import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transactionJson, transactionJsonFast } from './transaction-json.ts';

/**
 * transactions.jsonl's serialiser writes exactly JSON.stringify's text: for the simulator's fill
 * and cancel shapes from its templates, for anything else (another key order, a string JSON
 * escapes, a value of another kind, a toJSON) by JSON.stringify itself.
 */

const digits = fc.stringMatching(/^[1-9]\d{0,6}$/);
const amount = fc.stringMatching(/^-?\d{1,6}\.\d{4}$/);
/** Any text, escapes and lone surrogates included, or a plain one. */
const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.stringMatching(/^[A-Z_]{1,12}$/));
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const reduce = fc.record(
  {
    tradeID: digits,
    units: fc.stringMatching(/^-?\d{1,6}$/),
    price: amount,
    realizedPL: amount,
    financing: amount,
    halfSpreadCost: amount,
    guaranteedExecutionFee: amount,
  },
  { requiredKeys: ['tradeID', 'units', 'price', 'realizedPL', 'financing', 'halfSpreadCost'] },
);
const extensions = fc.record({ id: text, tag: text, comment: text }, { requiredKeys: [] });
const fill = fc
  .record({
    orderID: digits,
    instrument: fc.constantFrom('EUR_USD', 'USD_JPY', 'DE30_EUR'),
    units: fc.stringMatching(/^-?\d{1,6}$/),
    price: amount,
    bid: amount,
    ask: amount,
    reason: text,
    pl: amount,
    clientOrderID: maybe(text),
    opened: maybe(
      fc.record({
        tradeID: digits,
        units: fc.stringMatching(/^-?\d{1,6}$/),
        halfSpreadCost: amount,
        initialMarginRequired: amount,
        clientExtensions: maybe(extensions),
      }),
    ),
    closed: maybe(fc.array(reduce, { minLength: 1, maxLength: 3 })),
    reduced: maybe(reduce),
    id: digits,
    time: fc.constantFrom('2024-01-02T03:04:05.000000000Z', '2024-01-02T03:04:05.123000000Z'),
    userID: fc.oneof(fc.constant(1), fc.double()),
    accountID: fc.oneof(fc.constant('101-001-1-1'), text),
  })
  .map((f) => {
    const tx: Record<string, unknown> = {
      type: 'ORDER_FILL',
      orderID: f.orderID,
      instrument: f.instrument,
      units: f.units,
      requestedUnits: f.units,
      price: f.price,
      fullVWAP: f.price,
      fullPrice: {
        type: 'PRICE',
        bids: [{ price: f.bid, liquidity: 10000000 }],
        asks: [{ price: f.ask, liquidity: 10000000 }],
        closeoutBid: f.bid,
        closeoutAsk: f.ask,
        timestamp: f.time,
      },
      reason: f.reason,
      pl: f.pl,
      financing: '0.0000',
      commission: '0.0000',
      guaranteedExecutionFee: '0.0000',
      accountBalance: f.pl,
      gainQuoteHomeConversionFactor: '1',
      lossQuoteHomeConversionFactor: '1',
      halfSpreadCost: f.pl,
    };
    if (f.clientOrderID !== undefined) tx.clientOrderID = f.clientOrderID;
    if (f.opened) tx.tradeOpened = { ...f.opened, price: f.price };
    if (f.closed) tx.tradesClosed = f.closed;
    if (f.reduced) tx.tradeReduced = f.reduced;
    Object.assign(tx, { id: f.id, time: f.time, userID: f.userID, accountID: f.accountID, batchID: f.id });
    return tx;
  });
const cancel = fc
  .record({
    orderID: digits,
    reason: text,
    id: digits,
    time: text,
    userID: fc.oneof(fc.constant(1), fc.double()),
    accountID: text,
    batchID: digits,
  })
  .map((c) => ({
    type: 'ORDER_CANCEL',
    orderID: c.orderID,
    reason: c.reason,
    id: c.id,
    time: c.time,
    userID: c.userID,
    accountID: c.accountID,
    batchID: c.batchID,
  }));

const stamp = {
  id: digits,
  time: fc.constantFrom('2024-01-02T03:04:05.000000000Z', '2024-01-02T03:04:05.123000000Z'),
  userID: fc.oneof(fc.constant(1), fc.double()),
  accountID: fc.oneof(fc.constant('101-001-1-1'), text),
};
/** Client extensions as plain objects (fast-check's records have no prototype: written by JSON.stringify inside a template). */
const plainExtensions = extensions.map((e) => ({ ...e }));
const withStamp = (tx: Record<string, unknown>, s: Record<string, unknown>): Record<string, unknown> =>
  Object.assign(tx, { id: s.id, time: s.time, userID: s.userID, accountID: s.accountID, batchID: s.id });
/** On-fill details as the simulator records them (timeInForce always: defaulted to GTC), in the template's key order. */
const details = fc
  .record(
    {
      price: amount,
      distance: fc.stringMatching(/^0\.\d{5}$/),
      timeInForce: fc.constantFrom('GTC', 'GTD', 'GFD'),
      gtdTime: text,
      clientExtensions: plainExtensions,
    },
    { requiredKeys: ['timeInForce'] },
  )
  .map((d) => ({ ...d }));
/** A MARKET_ORDER as the simulator creates it: a client's order (with on-fill details), a trade close or a position closeout. */
const market = fc
  .record({
    instrument: fc.constantFrom('EUR_USD', 'USD_JPY'),
    units: fc.stringMatching(/^-?\d{1,6}$/),
    timeInForce: fc.constantFrom('FOK', 'IOC'),
    positionFill: fc.constantFrom('DEFAULT', 'REDUCE_ONLY', 'OPEN_ONLY'),
    kind: fc.constantFrom('CLIENT_ORDER', 'TRADE_CLOSE', 'POSITION_CLOSEOUT'),
    reason: fc.oneof(fc.constant('CLIENT_ORDER'), text),
    priceBound: maybe(amount),
    clientExtensions: maybe(plainExtensions),
    takeProfitOnFill: maybe(details),
    stopLossOnFill: maybe(details),
    trailingStopLossOnFill: maybe(details),
    guaranteedStopLossOnFill: maybe(details),
    tradeClientExtensions: maybe(plainExtensions),
    tradeID: digits,
    ...stamp,
  })
  .map((m) => {
    const tx: Record<string, unknown> = {
      type: 'MARKET_ORDER',
      instrument: m.instrument,
      units: m.units,
      timeInForce: m.timeInForce,
      positionFill: m.positionFill,
      reason: m.reason,
    };
    if (m.kind === 'TRADE_CLOSE') tx.tradeClose = { tradeID: m.tradeID, units: 'ALL' };
    else if (m.kind === 'POSITION_CLOSEOUT')
      tx.longPositionCloseout = { instrument: m.instrument, units: 'ALL' };
    else {
      if (m.priceBound !== undefined) tx.priceBound = m.priceBound;
      if (m.clientExtensions !== undefined) tx.clientExtensions = m.clientExtensions;
      if (m.takeProfitOnFill !== undefined) tx.takeProfitOnFill = m.takeProfitOnFill;
      if (m.stopLossOnFill !== undefined) tx.stopLossOnFill = m.stopLossOnFill;
      if (m.trailingStopLossOnFill !== undefined) tx.trailingStopLossOnFill = m.trailingStopLossOnFill;
      if (m.guaranteedStopLossOnFill !== undefined) tx.guaranteedStopLossOnFill = m.guaranteedStopLossOnFill;
      if (m.tradeClientExtensions !== undefined) tx.tradeClientExtensions = m.tradeClientExtensions;
    }
    return withStamp(tx, m);
  });
/** A dependent order created on a fill (reason ON_FILL), the simulator's fields in its order. */
const onFill = fc
  .record({
    type: fc.constantFrom(
      'TAKE_PROFIT_ORDER',
      'STOP_LOSS_ORDER',
      'TRAILING_STOP_LOSS_ORDER',
      'GUARANTEED_STOP_LOSS_ORDER',
    ),
    tradeID: digits,
    clientTradeID: maybe(text),
    timeInForce: fc.constantFrom('GTC', 'GTD', 'GFD'),
    gtdTime: maybe(text),
    clientExtensions: maybe(plainExtensions),
    distance: maybe(fc.stringMatching(/^0\.\d{5}$/)),
    price: maybe(amount),
    guaranteedExecutionPremium: maybe(amount),
    ...stamp,
  })
  .map((o) => {
    const tx: Record<string, unknown> = {
      type: o.type,
      tradeID: o.tradeID,
      reason: 'ON_FILL',
      orderFillTransactionID: o.tradeID,
    };
    if (o.clientTradeID !== undefined) tx.clientTradeID = o.clientTradeID;
    tx.timeInForce = o.timeInForce;
    if (o.gtdTime !== undefined) tx.gtdTime = o.gtdTime;
    if (o.clientExtensions !== undefined) tx.clientExtensions = o.clientExtensions;
    if (o.distance !== undefined) tx.distance = o.distance;
    if (o.price !== undefined) tx.price = o.price;
    if (o.guaranteedExecutionPremium !== undefined)
      tx.guaranteedExecutionPremium = o.guaranteedExecutionPremium;
    tx.triggerCondition = 'DEFAULT';
    return withStamp(tx, o);
  });

/** A change that may take a transaction off the templates: a key moved, dropped, added, a value of another kind, or none. */
const twist = fc.oneof(
  fc.constant((t: Record<string, unknown>) => t),
  fc.constant((t: Record<string, unknown>) => {
    const { orderID, ...rest } = t;
    return { ...rest, orderID };
  }),
  fc.constant((t: Record<string, unknown>) => {
    const { time: _time, ...rest } = t;
    return rest;
  }),
  fc.constant((t: Record<string, unknown>) => ({ ...t, extra: 'x' })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, orderID: 7 })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, reason: undefined })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, pl: null })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, reason: 'REPLACEMENT' })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, clientExtensions: { tag: 'x', id: 'y' } })),
  fc.constant((t: Record<string, unknown>) => ({
    ...t,
    takeProfitOnFill: { timeInForce: 'GTC', distance: '0.00100' },
  })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, stopLossOnFill: { distance: 1e-3 } })),
  fc.constant((t: Record<string, unknown>) => ({ ...t, price: undefined, distance: ['1'] })),
  fc.constant((t: Record<string, unknown>) => ({
    ...t,
    fullPrice: { ...(t.fullPrice as object), bids: [] },
  })),
  fc.constant((t: Record<string, unknown>) =>
    Object.defineProperty({ ...t }, 'toJSON', { value: () => ({ replaced: true }), enumerable: false }),
  ),
  fc.constant((t: Record<string, unknown>) =>
    Object.defineProperty({ ...t }, 'clientOrderID', { value: 'hidden', enumerable: false }),
  ),
);

describe('transactionJson', () => {
  it('writes JSON.stringify’s text for fills, cancels, market orders and on-fill orders of any content, as built or twisted', () => {
    fc.assert(
      fc.property(fc.oneof(fill, cancel, market, onFill), twist, (tx, f) => {
        const t = f(tx);
        expect(transactionJson(t)).toBe(JSON.stringify(t));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes JSON.stringify’s text for any other object', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.object(),
          fc
            .record({
              type: fc.constantFrom(
                'ORDER_FILL',
                'ORDER_CANCEL',
                'MARKET_ORDER',
                'TAKE_PROFIT_ORDER',
                'STOP_LOSS_ORDER',
              ),
            })
            .chain((r) => fc.object().map((o) => ({ ...r, ...o }))),
        ),
        (o) => {
          expect(transactionJson(o)).toBe(JSON.stringify(o));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('takes the templates for the plain shapes, and leaves them for a string JSON escapes, a surrogate or a number that is not finite', () => {
    fc.assert(
      fc.property(fill, (tx) => {
        const { tradeOpened, ...rest } = tx as { tradeOpened?: { clientExtensions?: unknown } };
        // Client extensions are written by JSON.stringify inside the template: escapes there keep it.
        const outside = JSON.stringify({
          ...rest,
          tradeOpened: tradeOpened && { ...tradeOpened, clientExtensions: undefined },
        });
        const templated = !/[\\\ud800-\udfff]/.test(outside) && Number.isFinite(tx.userID);
        expect(transactionJsonFast(tx) !== undefined).toBe(templated);
      }),
      { numRuns: 1000 },
    );
  });

  it('takes the templates for plain market and on-fill orders, and leaves them for a string JSON escapes or a number that is not finite', () => {
    fc.assert(
      fc.property(fc.oneof(market, onFill), (tx) => {
        // Client extensions (any text: JSON.stringify's escapes), trade closes and closeouts are
        // written inside the template as JSON.stringify writes them; every other string must be plain.
        const outside = JSON.stringify(tx, (k, v: unknown) =>
          ['clientExtensions', 'tradeClientExtensions', 'tradeClose', 'longPositionCloseout'].includes(k)
            ? undefined
            : v,
        );
        const templated = !/[\\\ud800-\udfff]/.test(outside) && Number.isFinite(tx.userID);
        expect(transactionJsonFast(tx) !== undefined).toBe(templated);
        if (templated) expect(transactionJsonFast(tx)).toBe(JSON.stringify(tx));
      }),
      { numRuns: 1000 },
    );
  });
});
