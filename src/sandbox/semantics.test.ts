import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/**
 * The sandbox answers as OANDA does: request bodies OANDA takes, the recorded answer to an unknown
 * instrument, prices that say when the market is closed, lifetime financing on positions, and the
 * fields of transactions and orders as the v20 definitions have them. Each case was a deviation.
 */

const WEDNESDAY = '2024-01-03T10:00:00Z';
let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function open(opts: Parameters<typeof startSandbox>[0] = {}): Promise<{ sb: Sandbox; A: string }> {
  sb = await startSandbox({ feed: false, start: WEDNESDAY, heartbeatMs: 50, ...opts });
  sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  return { sb, A: `${sb.url}/v3/accounts/${sb.accountIDs[0]}` };
}

describe('request bodies OANDA takes', () => {
  it('units and prices as JSON numbers: the order fills and every answer carries strings', async () => {
    const { A } = await open();
    const r = await call('POST', `${A}/orders`, {
      order: {
        type: 'MARKET',
        instrument: 'EUR_USD',
        units: 100,
        takeProfitOnFill: { price: '1.11000' },
        stopLossOnFill: { distance: 0.005 },
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.orderCreateTransaction.units).toBe('100');
    expect(r.body.orderCreateTransaction.stopLossOnFill.distance).toBe('0.005');
    expect(r.body.orderFillTransaction.units).toBe('100');
    const limit = await call('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: -250, price: 1.105 },
    });
    expect(limit.status).toBe(201);
    expect([limit.body.orderCreateTransaction.units, limit.body.orderCreateTransaction.price]).toEqual([
      '-250',
      '1.10500',
    ]);
  });

  it('PUT /trades/{id}/close with {"units": 100}, as the request recorded against OANDA (oandapyV20 trades.json), closes 100 units', async () => {
    const { A } = await open();
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '300' },
    });
    const tradeID = m.body.orderFillTransaction.tradeOpened.tradeID as string;
    const c = await call('PUT', `${A}/trades/${tradeID}/close`, { units: 100 });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(c.body.orderCreateTransaction.tradeClose.units).toBe('100');
    expect(c.body.orderFillTransaction.tradeReduced.units).toBe('-100');
    const p = await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 50 });
    expect(p.status).toBe(200);
    expect(p.body.longOrderFillTransaction.units).toBe('-50');
    const dep = await call('PUT', `${A}/trades/${tradeID}/orders`, {
      takeProfit: { price: 1.2 },
      trailingStopLoss: { distance: 0.001 },
    });
    expect(dep.status, JSON.stringify(dep.body)).toBe(200);
    expect(dep.body.takeProfitOrderTransaction.price).toBe('1.20000');
    expect(dep.body.trailingStopLossOrderTransaction.distance).toBe('0.001');
  });

  it('a wrong value is refused naming the field as OANDA does', async () => {
    const { A } = await open();
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: true },
    });
    expect(r.status).toBe(400);
    expect(r.body.errorMessage).toMatch(/^Invalid value specified for 'order\.units'/);
    const tp = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '10', takeProfitOnFill: { price: '1.105001' } },
    });
    expect(tp.status).toBe(400);
    expect(tp.body.errorCode).toBe('TAKE_PROFIT_ON_FILL_PRICE_PRECISION_EXCEEDED');
    expect(tp.body.errorMessage).toMatch(
      /^Invalid value specified for 'order\.takeProfitOnFill\.price': more decimal places/,
    );
    const u = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '0.5' },
    });
    expect(u.body.errorMessage).toMatch(/^Invalid value specified for 'order\.units'/);
  });
});

describe('refusals as OANDA answers them', () => {
  it('an unknown instrument: 400 with only errorMessage "Invalid value specified for \'order.instrument\'" (the recorded answer), no transaction, no ID used', async () => {
    const { A } = await open();
    const before = (await call('GET', `${A}/summary`)).body.lastTransactionID as string;
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_UDS', units: '100' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errorMessage: "Invalid value specified for 'order.instrument'" });
    expect((await call('GET', `${A}/summary`)).body.lastTransactionID).toBe(before);
    const next = await call('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '1', price: '1.0' },
    });
    expect(next.body.orderCreateTransaction.id).toBe(String(Number(before) + 1));
  });

  it('cancelling an unknown @clientID: ORDER_CANCEL_REJECT with clientOrderID, no orderID', async () => {
    const { A } = await open();
    const r = await call('PUT', `${A}/orders/@nobody/cancel`);
    expect(r.status).toBe(404);
    const t = r.body.orderCancelRejectTransaction;
    expect(t.clientOrderID).toBe('nobody');
    expect(t).not.toHaveProperty('orderID');
  });

  it('a take profit or trailing stop created or replaced by ID is checked against its trade instrument', async () => {
    const { A } = await open();
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' },
    });
    const tradeID = m.body.orderFillTransaction.tradeOpened.tradeID as string;
    const tsl = await call('POST', `${A}/orders`, {
      order: { type: 'TRAILING_STOP_LOSS', tradeID, distance: '0.00001' },
    });
    expect(tsl.status).toBe(400);
    expect(tsl.body.errorCode).toBe('PRICE_DISTANCE_MINIMUM_NOT_MET');
    const tp = await call('POST', `${A}/orders`, {
      order: { type: 'TAKE_PROFIT', tradeID, price: '1.20000' },
    });
    expect(tp.status).toBe(201);
    const rep = await call('PUT', `${A}/orders/${tp.body.orderCreateTransaction.id}`, {
      order: { type: 'TAKE_PROFIT', tradeID, price: '1.200001' },
    });
    expect(rep.status).toBe(400);
    expect(rep.body.errorCode).toBe('PRICE_PRECISION_EXCEEDED');
    expect(rep.body.errorMessage).toMatch(/'order\.price'/);
    const viaTrade = await call('PUT', `${A}/trades/${tradeID}/orders`, {
      trailingStopLoss: { distance: '0.00001' },
    });
    expect(viaTrade.status).toBe(400);
    expect(viaTrade.body.errorCode).toBe('PRICE_DISTANCE_MINIMUM_NOT_MET');
    expect(viaTrade.body.errorMessage).toMatch(/^Invalid value specified for 'trailingStopLoss\.distance'/);
  });
});

describe('prices and market hours', () => {
  it('GET /pricing says tradeable: false, status non-tradeable on Saturday, when market orders are halted; true on Wednesday', async () => {
    const { sb: s, A } = await open();
    const wed = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect([wed.body.prices[0].tradeable, wed.body.prices[0].status]).toEqual([true, 'tradeable']);
    s.setTime('2024-01-06T12:00:00Z');
    const sat = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect([sat.body.prices[0].tradeable, sat.body.prices[0].status]).toEqual([false, 'non-tradeable']);
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(m.body.orderCancelTransaction.reason).toBe('MARKET_HALTED');
  });

  it('gold is not tradeable in its daily 17:00-18:00 New York break while EUR_USD is', async () => {
    const { sb: s, A } = await open();
    s.pushPrice({ instrument: 'XAU_USD', bid: 2030, ask: 2030.3 });
    s.setTime('2024-01-03T22:30:00Z');
    const r = await call('GET', `${A}/pricing?instruments=EUR_USD,XAU_USD`);
    expect(
      r.body.prices.map((p: { instrument: string; tradeable: boolean }) => [p.instrument, p.tradeable]),
    ).toEqual([
      ['EUR_USD', true],
      ['XAU_USD', false],
    ]);
  });

  it('marketHours: false: tradeable and filled on Saturday', async () => {
    const { sb: s, A } = await open({ marketHours: false });
    s.setTime('2024-01-06T12:00:00Z');
    const sat = await call('GET', `${A}/pricing?instruments=EUR_USD`);
    expect(sat.body.prices[0].tradeable).toBe(true);
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    expect(m.body.orderFillTransaction.units).toBe('100');
  });
});

describe('positions and orders as v20 defines them', () => {
  it('Position.financing and the side financing follow DAILY_FINANCING, and stay after the trade closes', async () => {
    const { sb: s, A } = await open();
    const m = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100000' },
    });
    const tradeID = m.body.orderFillTransaction.tradeOpened.tradeID as string;
    s.setTime('2024-01-04T12:00:00Z'); // past Wednesday's 17:00 New York rollover
    const fin = (await call('GET', `${A}/transactions?type=DAILY_FINANCING`)).body;
    expect(fin.count).toBe(1);
    const trade = (await call('GET', `${A}/trades/${tradeID}`)).body.trade;
    expect(Number(trade.financing)).not.toBe(0);
    const pos = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    expect(pos.financing).toBe(trade.financing);
    expect(pos.long.financing).toBe(trade.financing);
    expect(pos.short.financing).toBe('0.0000');
    await call('PUT', `${A}/trades/${tradeID}/close`, {});
    const after = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    expect([after.financing, after.long.financing]).toEqual([trade.financing, trade.financing]);
  });

  it('GET /instruments serves financing as OANDA does; /sandbox/financing changes what is served and what is charged', async () => {
    const { sb: s, A } = await open();
    const inst = (await call('GET', `${A}/instruments?instruments=EUR_USD`)).body.instruments[0];
    // data/instruments.json's rates, OANDA's DayOfWeek spelling (MONDAY), decimal strings.
    expect(inst.financing.longRate).toBe('-0.0412');
    expect(inst.financing.shortRate).toBe('0.0189');
    expect(inst.financing.financingDaysOfWeek).toContainEqual({ dayOfWeek: 'WEDNESDAY', daysCharged: 3 });
    expect(inst.financing.financingDaysOfWeek.map((d: { dayOfWeek: string }) => d.dayOfWeek)).toEqual([
      'MONDAY',
      'TUESDAY',
      'WEDNESDAY',
      'THURSDAY',
      'FRIDAY',
      'SATURDAY',
      'SUNDAY',
    ]);
    expect(inst.marginRate).toBe('0.05');
    const set = await call('POST', `${s.url}/sandbox/financing`, {
      instrument: 'EUR_USD',
      longRate: '-0.0500',
      shortRate: '0.0100',
    });
    expect(set.status).toBe(200);
    expect(
      (await call('GET', `${A}/instruments?instruments=EUR_USD`)).body.instruments[0].financing,
    ).toMatchObject({ longRate: '-0.0500', shortRate: '0.0100' });
    expect(
      (
        await call('POST', `${s.url}/sandbox/financing`, {
          instrument: 'EUR_USD',
          longRate: 'high',
          shortRate: '0',
        })
      ).body.errorMessage,
    ).toMatch(/'longRate': a yearly rate as a decimal string/);
    await call('POST', `${A}/orders`, { order: { type: 'MARKET', instrument: 'EUR_USD', units: '100000' } });
    s.setTime('2024-01-04T12:00:00Z'); // past Wednesday's rollover, charged 3 days
    const fin = (await call('GET', `${A}/transactions?type=DAILY_FINANCING`)).body;
    const tx = (await call('GET', `${A}/transactions/${fin.pages[0].split('from=')[1].split('&')[0]}`)).body
      .transaction;
    // 100,000 × mid 1.1001 × -0.05 × 3 / 365 = -45.20959 (the file's -0.0412 would give -37.2527).
    expect(tx.financing).toBe('-45.2096');
  });

  it('a MARKET_IF_TOUCHED_ORDER transaction has no initialMarketPrice; the MarketIfTouchedOrder has it', async () => {
    const { A } = await open();
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET_IF_TOUCHED', instrument: 'EUR_USD', units: '100', price: '1.09000' },
    });
    expect(r.status).toBe(201);
    expect(r.body.orderCreateTransaction).not.toHaveProperty('initialMarketPrice');
    const o = (await call('GET', `${A}/orders/${r.body.orderCreateTransaction.id}`)).body.order;
    expect(o.initialMarketPrice).toBe('1.10010');
  });

  it('a LIMIT order with priceBound: accepted, the field ignored (v20 does not define it for LIMIT)', async () => {
    const { A } = await open();
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '100', price: '1.09000', priceBound: '1.08000' },
    });
    expect(r.status).toBe(201);
    expect(r.body.orderCreateTransaction).not.toHaveProperty('priceBound');
    const o = (await call('GET', `${A}/orders/${r.body.orderCreateTransaction.id}`)).body.order;
    expect(o).not.toHaveProperty('priceBound');
  });
});
