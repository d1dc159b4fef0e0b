import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../../../test/shared.ts';
import { T0, candle, f, harness, market } from './testkit.ts';

/**
 * Recorded real v20 responses (../shared/reference/oanda/fixtures) reproduced by the simulator where
 * their inputs are known: the request, and the price it met (a buy fills at the ask, so a recorded
 * buy fill price is the ask of its moment). IDs are compared relative to the batch, since the
 * simulator's account starts at transaction 1.
 */
type Rec = Record<string, unknown>;
const fixture = (name: string): Rec =>
  HAS_SHARED ? (JSON.parse(readFileSync(resolve(OANDA, 'fixtures/oandapyV20', name), 'utf8')) as Rec) : {};
const rel = (t: Rec | Transaction, base: string | number): Rec => {
  const x = t as Rec;
  const out: Rec = {
    type: x.type,
    id: Number(x.id) - Number(base),
    batchID: Number(x.batchID) - Number(base),
  };
  for (const k of ['orderID', 'replacesOrderID', 'replacedByOrderID', 'cancellingTransactionID'])
    if (x[k] !== undefined) out[k] = Number(x[k]) - Number(base);
  return out;
};
const EU = 'EUR_USD';

warnIfNoShared('recorded v20 fills');
describe.skipIf(!HAS_SHARED)('recorded real v20 responses, reproduced', () => {
  const jupyter = fixture('jupyter_recorded.json');
  const trades = fixture('trades.json');

  it('market order filled with TP and SL: order → fill (trade ID = fill ID) → TP → SL in one batch, at the recorded price and balance', () => {
    const rec = (jupyter.order_create_market_filled_with_TP_SL as Rec).response as Rec;
    const fill = rec.orderFillTransaction as Rec;
    const h = harness({ initialBalance: fill.accountBalance as string });
    h.submit(
      market(EU, fill.units as string, {
        takeProfitOnFill: { price: '1.10000' },
        stopLossOnFill: { price: '1.05000' },
      }),
    );
    // The recorded fill price is the ask met by the buy; the bid a typical 1.4 pips below.
    const ask = Number(fill.price);
    const out = h.feed(candle(EU, T0, [ask - 0.00014, ask - 0.00014, ask - 0.00014, ask - 0.00014], 0.00014));
    const base = out[0]!.id;
    // The recording's note: 7578 MARKET_ORDER, 7579 ORDER_FILL (tradeID == fill txn id), 7580 TAKE_PROFIT_ORDER, 7581 STOP_LOSS_ORDER.
    const recorded = [
      { type: 'MARKET_ORDER', id: 0, batchID: 0 },
      { type: 'ORDER_FILL', id: 1, batchID: 0, orderID: 0 },
      { type: 'TAKE_PROFIT_ORDER', id: 2, batchID: 0 },
      { type: 'STOP_LOSS_ORDER', id: 3, batchID: 0 },
    ];
    expect(rel(fill, fill.batchID as string)).toEqual(recorded[1]);
    expect(out.map((t) => rel(t, base))).toEqual(recorded);
    const sim = out[1] as unknown as Rec;
    for (const k of ['type', 'instrument', 'units', 'price', 'pl', 'financing', 'reason', 'accountBalance'])
      expect([k, sim[k]]).toEqual([k, fill[k]]);
    expect(Number((sim.tradeOpened as Rec).tradeID) - Number(base)).toBe(
      Number((fill.tradeOpened as Rec).tradeID) - Number(fill.batchID),
    );
    expect((sim.tradeOpened as Rec).units).toBe((fill.tradeOpened as Rec).units);
    expect(f(out[2], 'tradeID')).toBe(sim.id);
  });

  it('STOP_LOSS_ON_FILL_LOSS: the order is created and cancelled in one batch, with the recorded fields', () => {
    const rec = (jupyter.order_create_market_STOP_LOSS_ON_FILL_LOSS as Rec).response as Rec;
    const created = rec.orderCreateTransaction as Rec;
    const cancel = rec.orderCancelTransaction as Rec;
    const h = harness();
    h.submit({
      kind: 'order',
      id: 'x',
      request: {
        type: 'MARKET',
        instrument: created.instrument,
        units: created.units,
        takeProfitOnFill: { price: '1.10' },
        stopLossOnFill: { price: '1.07' },
      } as never,
    });
    // "SL 1.07 above market ~1.0556".
    const out = h.feed(candle(EU, T0, [1.0555, 1.0556, 1.0554, 1.0555], 0.00014));
    expect(out.map((t) => rel(t, out[0]!.id))).toEqual([
      rel(created, created.id as string),
      rel(cancel, created.id as string),
    ]);
    const sim = out[0] as unknown as Rec;
    for (const k of [
      'type',
      'instrument',
      'units',
      'timeInForce',
      'positionFill',
      'takeProfitOnFill',
      'stopLossOnFill',
      'reason',
    ])
      expect([k, sim[k]]).toEqual([k, created[k]]);
    expect(f(out[1], 'reason')).toBe(cancel.reason);
    expect(h.sim.ledger.trades.size).toBe(0);
  });

  it('trade orders call: a new take profit, then the stop loss cancelled (replacedByOrderID) and replaced (replacesOrderID), in one batch', () => {
    const call = trades._v3_account_accountID_trades_crcdo as Rec;
    const body = call.body as Rec;
    const rec = call.response as Rec;
    const tp = rec.takeProfitOrderTransaction as Rec;
    const slCancel = rec.stopLossOrderCancelTransaction as Rec;
    const sl = rec.stopLossOrderTransaction as Rec;
    // The recorded trade is short (take profit 1.05 below, stop loss 1.10 above) with a stop loss already set.
    const h = harness();
    h.submit(market(EU, '-100', { stopLossOnFill: { price: '1.11000' } }));
    h.feed(candle(EU, T0, [1.08, 1.08, 1.08, 1.08]));
    const tradeID = [...h.sim.ledger.trades.keys()][0]!;
    const oldSL = h.sim.ledger.trades.get(tradeID)!.stopLossOrderID!;
    const out = h.submit({
      kind: 'tradeOrders',
      id: 'x',
      tradeSpecifier: tradeID,
      takeProfit: body.takeProfit as never,
      stopLoss: body.stopLoss as never,
    });
    const base = tp.batchID as string;
    // The replaced order's ID, recorded as 2324 (the batch less one), is the trade's old stop loss here.
    const recorded = [rel(tp, base), rel(slCancel, base), rel(sl, base)];
    const simulated = out.map((t) => rel(t, out[0]!.id));
    expect(simulated.map((x) => ({ ...x, orderID: undefined, replacesOrderID: undefined }))).toEqual(
      recorded.map((x) => ({ ...x, orderID: undefined, replacesOrderID: undefined })),
    );
    expect(f(out[1], 'orderID')).toBe(oldSL);
    expect(f(out[2], 'replacesOrderID')).toBe(oldSL);
    for (const [s, r] of [
      [out[0], tp],
      [out[1], slCancel],
      [out[2], sl],
    ] as const) {
      const x = s as unknown as Rec;
      for (const k of ['type', 'timeInForce', 'price', 'reason']) expect([k, x[k]]).toEqual([k, r[k]]);
      if (r.tradeID !== undefined) expect(x.tradeID).toBe(tradeID);
    }
  });
});
