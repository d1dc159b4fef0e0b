import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call, jsonLines, readLines } from './testkit.ts';

const START = Date.parse('2024-01-02T00:00:00Z');

describe('sandbox: orders, trades, positions', () => {
  let sb: Sandbox;
  let A: string;
  beforeAll(async () => {
    sb = await startSandbox({ heartbeatMs: 50 });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  });
  afterAll(() => sb.close());

  it('fills a market order with TP/SL at once: 201, create + fill + TP + SL in one batch, sequential IDs, buy at the ask', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: {
        type: 'MARKET',
        instrument: 'EUR_USD',
        units: '1000',
        takeProfitOnFill: { price: '1.11000' },
        stopLossOnFill: { price: '1.09000' },
      },
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('requestid')).toMatch(/^\d+$/);
    const create = r.body.orderCreateTransaction;
    const fill = r.body.orderFillTransaction;
    expect(create.type).toBe('MARKET_ORDER');
    expect(fill.type).toBe('ORDER_FILL');
    expect(fill.orderID).toBe(create.id);
    expect(fill.price).toBe('1.10020');
    expect(r.headers.get('location')).toBe(`${A}/orders/${create.id}`);
    const related: string[] = r.body.relatedTransactionIDs;
    expect(related.length).toBe(4);
    for (let i = 1; i < related.length; i++) expect(Number(related[i])).toBe(Number(related[i - 1]) + 1);
    expect(r.body.lastTransactionID).toBe(related[related.length - 1]);
    const txs = await Promise.all(related.map((id) => call('GET', `${A}/transactions/${id}`)));
    expect(txs.map((t) => t.body.transaction.type)).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
      'TAKE_PROFIT_ORDER',
      'STOP_LOSS_ORDER',
    ]);
    expect(new Set(txs.map((t) => t.body.transaction.batchID))).toEqual(new Set([create.id]));
    const trade = await call('GET', `${A}/trades/${fill.tradeOpened.tradeID}`);
    expect(trade.body.trade.takeProfitOrder.price).toBe('1.11000');
    expect(trade.body.trade.stopLossOrder.price).toBe('1.09000');
    // Close it again so later tests start flat.
    const closed = await call('PUT', `${A}/trades/${fill.tradeOpened.tradeID}/close`, {});
    expect(closed.status).toBe(200);
    expect(closed.body.orderFillTransaction.tradesClosed[0].tradeID).toBe(fill.tradeOpened.tradeID);
    expect(closed.body.orderFillTransaction.price).toBe('1.10000'); // a sell fills at the bid
  });

  it('rests a limit order, then fills it on a pushed price', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '500', price: '1.09500' },
    });
    expect(r.status).toBe(201);
    expect(r.body.orderFillTransaction).toBeUndefined();
    const id = r.body.orderCreateTransaction.id as string;
    const pending = await call('GET', `${A}/pendingOrders`);
    expect(pending.body.orders.map((o: { id: string }) => o.id)).toContain(id);
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.0948, ask: 1.0949 });
    const o = await call('GET', `${A}/orders/${id}`);
    expect(o.body.order.state).toBe('FILLED');
    const fillID = o.body.order.fillingTransactionID as string;
    const fill = await call('GET', `${A}/transactions/${fillID}`);
    expect(Number(fill.body.transaction.price)).toBeLessThanOrEqual(1.095);
    const pos = await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
    expect(pos.status).toBe(200);
    expect(pos.body.longOrderFillTransaction.units).toBe('-500');
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  });

  it('answers a rejected order with 400, orderRejectTransaction and errorCode', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'TAKE_PROFIT', tradeID: '99999', price: '1.20000' },
    });
    expect(r.status).toBe(400);
    expect(r.body.orderRejectTransaction.type).toBe('TAKE_PROFIT_ORDER_REJECT');
    expect(r.body.errorCode).toBe('TRADE_DOESNT_EXIST');
    expect(typeof r.body.errorMessage).toBe('string');
    expect(r.headers.get('requestid')).toMatch(/^\d+$/);
  });

  it('answers an order that cannot fill (stop loss beyond the market) with 201 and orderCancelTransaction', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100', stopLossOnFill: { price: '1.20000' } },
    });
    expect(r.status).toBe(201);
    expect(r.body.orderCancelTransaction.reason).toBe('STOP_LOSS_ON_FILL_LOSS');
    expect(r.body.orderFillTransaction).toBeUndefined();
  });

  it('rejects a malformed body with 400 naming the field', async () => {
    // (A JSON number is a valid value, as at OANDA: see semantics.test.ts.)
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: [12] },
    });
    expect(r.status).toBe(400);
    expect(r.body.errorMessage).toContain("'order.units'");
    const missing = await call('POST', `${A}/orders`, { nothing: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.errorMessage).toContain("'order'");
    const json = await call('POST', `${A}/orders`, '{not json');
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toBe('application/json');
  });

  it('finds orders by @clientID, replaces and cancels them', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '100',
        price: '1.05000',
        clientExtensions: { id: 'my-order-1' },
      },
    });
    const id = r.body.orderCreateTransaction.id as string;
    const byClient = await call('GET', `${A}/orders/@my-order-1`);
    expect(byClient.body.order.id).toBe(id);
    const rep = await call('PUT', `${A}/orders/@my-order-1`, {
      order: {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '200',
        price: '1.04000',
        clientExtensions: { id: 'my-order-1' },
      },
    });
    expect(rep.status).toBe(201);
    expect(rep.body.orderCancelTransaction.orderID).toBe(id);
    const newID = rep.body.orderCreateTransaction.id as string;
    expect(rep.body.orderCreateTransaction.replacesOrderID).toBe(id);
    expect((await call('GET', `${A}/orders/${id}`)).body.order.state).toBe('CANCELLED');
    expect((await call('GET', `${A}/orders/@my-order-1`)).body.order.id).toBe(newID);
    const cancel = await call('PUT', `${A}/orders/${newID}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.orderCancelTransaction.reason).toBe('CLIENT_REQUEST');
    const again = await call('PUT', `${A}/orders/${newID}/cancel`);
    expect(again.status).toBe(404);
    expect(again.body.errorCode).toBe('ORDER_DOESNT_EXIST');
    const unknown = await call('GET', `${A}/orders/@nobody`);
    expect(unknown.status).toBe(404);
  });

  it('closes part of a trade, sets and cancels its dependent orders, and closes the position', async () => {
    const r = await call('POST', `${A}/orders`, {
      order: {
        type: 'MARKET',
        instrument: 'EUR_USD',
        units: '-300',
        tradeClientExtensions: { id: 'short-1' },
      },
    });
    const tradeID = r.body.orderFillTransaction.tradeOpened.tradeID as string;
    expect(r.body.orderFillTransaction.price).toBe('1.10000');
    const set = await call('PUT', `${A}/trades/@short-1/orders`, {
      takeProfit: { price: '1.08000' },
      stopLoss: { distance: '0.01000' },
    });
    expect(set.status).toBe(200);
    expect(set.body.takeProfitOrderTransaction.type).toBe('TAKE_PROFIT_ORDER');
    expect(set.body.stopLossOrderTransaction.type).toBe('STOP_LOSS_ORDER');
    const cancel = await call('PUT', `${A}/trades/${tradeID}/orders`, { takeProfit: null });
    expect(cancel.body.takeProfitOrderCancelTransaction.orderID).toBe(set.body.takeProfitOrderTransaction.id);
    const t = await call('GET', `${A}/trades/${tradeID}`);
    expect(t.body.trade.takeProfitOrder).toBeUndefined();
    expect(t.body.trade.stopLossOrder.id).toBe(set.body.stopLossOrderTransaction.id);
    const part = await call('PUT', `${A}/trades/${tradeID}/close`, { units: '100' });
    expect(part.body.orderFillTransaction.tradeReduced.units).toBe('100');
    expect((await call('GET', `${A}/trades/${tradeID}`)).body.trade.currentUnits).toBe('-200');
    const tooMany = await call('PUT', `${A}/trades/${tradeID}/close`, { units: '1000' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errorCode).toBe('CLOSE_TRADE_UNITS_EXCEED_TRADE_SIZE');
    const pos = await call('PUT', `${A}/positions/EUR_USD/close`, { shortUnits: 'ALL' });
    expect(pos.body.shortOrderFillTransaction.units).toBe('200');
    const open = await call('GET', `${A}/openPositions`);
    expect(open.body.positions).toEqual([]);
    const closed = await call('GET', `${A}/trades?state=CLOSED&ids=${tradeID}`);
    expect(closed.body.trades[0].state).toBe('CLOSED');
    const nothing = await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
    expect(nothing.status).toBe(400);
  });

  it('reports a trailing stop value that follows the market', async () => {
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    const r = await call('POST', `${A}/orders`, {
      order: {
        type: 'MARKET',
        instrument: 'EUR_USD',
        units: '100',
        trailingStopLossOnFill: { distance: '0.00500' },
      },
    });
    const tradeID = r.body.orderFillTransaction.tradeOpened.tradeID as string;
    const before = (await call('GET', `${A}/trades/${tradeID}`)).body.trade.trailingStopLossOrder;
    expect(before.trailingStopValue).toBe('1.09500');
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.102, ask: 1.1022 });
    const after = (await call('GET', `${A}/orders/${before.id}`)).body.order;
    expect(after.trailingStopValue).toBe('1.09700');
    const ch = await call('GET', `${A}/changes?sinceTransactionID=${r.body.lastTransactionID}`);
    expect(ch.body.state.orders).toEqual([
      {
        id: before.id,
        trailingStopValue: '1.09700',
        triggerDistance: '0.00500',
        isTriggerDistanceExact: true,
      },
    ]);
    await call('PUT', `${A}/trades/${tradeID}/close`);
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  });

  it('paginates GET /orders with Link rel="next"', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call('POST', `${A}/orders`, {
        order: { type: 'LIMIT', instrument: 'EUR_USD', units: '10', price: `1.0${i}000` },
      });
      ids.push(r.body.orderCreateTransaction.id);
    }
    const first = await call('GET', `${A}/orders?count=2`);
    expect(first.body.orders.map((o: { id: string }) => o.id)).toEqual([ids[4], ids[3]]);
    const link = first.headers.get('link')!;
    expect(link).toMatch(/rel="next"$/);
    const next = link.slice(1, link.indexOf('>'));
    expect(new URL(next).searchParams.get('beforeID')).toBe(ids[3]);
    const second = await call('GET', next);
    expect(second.body.orders.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    const tooBig = await call('GET', `${A}/orders?count=501`);
    expect(tooBig.status).toBe(400);
    for (const id of ids) await call('PUT', `${A}/orders/${id}/cancel`);
    const last = await call('GET', `${A}/orders?count=500`);
    expect(last.headers.get('link')).toBeNull();
  });

  it('serves /transactions pages, idrange and sinceid', async () => {
    const summary = await call('GET', `${A}/summary`);
    const last = Number(summary.body.lastTransactionID);
    const t = await call('GET', `${A}/transactions?pageSize=10`);
    expect(t.body.count).toBe(last);
    expect(t.body.pages.length).toBe(Math.ceil(last / 10));
    const page = await call('GET', t.body.pages[0]);
    expect(page.body.transactions.map((x: { id: string }) => x.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => String(i + 1)),
    );
    const since = await call('GET', `${A}/transactions/sinceid?id=${last - 3}`);
    expect(since.body.transactions.map((x: { id: string }) => Number(x.id))).toEqual([
      last - 2,
      last - 1,
      last,
    ]);
    const fills = await call('GET', `${A}/transactions/idrange?from=1&to=${last}&type=ORDER_FILL`);
    expect(fills.body.transactions.length).toBeGreaterThan(0);
    expect(fills.body.transactions.every((x: { type: string }) => x.type === 'ORDER_FILL')).toBe(true);
    expect((await call('GET', `${A}/transactions?pageSize=1001`)).status).toBe(400);
    expect((await call('GET', `${A}/transactions/${last + 100}`)).status).toBe(404);
  });

  it('reports /changes since a transaction ID, with state', async () => {
    const before = (await call('GET', `${A}/summary`)).body.lastTransactionID as string;
    const r = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
    });
    const ch = await call('GET', `${A}/changes?sinceTransactionID=${before}`);
    expect(ch.body.lastTransactionID).toBe(r.body.lastTransactionID);
    expect(ch.body.changes.tradesOpened[0].id).toBe(r.body.orderFillTransaction.tradeOpened.tradeID);
    expect(ch.body.changes.ordersFilled[0].id).toBe(r.body.orderCreateTransaction.id);
    expect(ch.body.changes.transactions.length).toBe(2);
    expect(ch.body.state.trades.length).toBe(1);
    expect(ch.body.state.NAV).toMatch(/^\d+\.\d{4}$/);
    await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
  });

  it('renders times as UNIX seconds with Accept-Datetime-Format: UNIX', async () => {
    const r = await call('GET', `${A}/transactions/1`, undefined, { 'Accept-Datetime-Format': 'UNIX' });
    expect(r.body.transaction.time).toBe(`${START / 1000}.000000000`);
    const rfc = await call('GET', `${A}/transactions/1`);
    expect(rfc.body.transaction.time).toBe('2024-01-02T00:00:00.000000000Z');
  });

  it('serves accounts, summary, instruments, pricing and configuration', async () => {
    const list = await call('GET', `${sb.url}/v3/accounts`);
    expect(list.body.accounts).toEqual([{ id: sb.accountIDs[0], tags: [] }]);
    const acc = await call('GET', A);
    expect(acc.body.account.currency).toBe('USD');
    expect(Array.isArray(acc.body.account.orders)).toBe(true);
    const inst = await call('GET', `${A}/instruments?instruments=EUR_USD,USD_JPY`);
    expect(inst.body.instruments.map((i: { name: string }) => i.name)).toEqual(['EUR_USD', 'USD_JPY']);
    const price = await call('GET', `${A}/pricing?instruments=EUR_USD&includeHomeConversions=true`);
    expect(price.body.prices[0].bids[0].price).toBe('1.10000');
    expect(price.body.prices[0].asks[0].price).toBe('1.10020');
    expect(
      price.body.homeConversions.find((h: { currency: string }) => h.currency === 'USD').accountGain,
    ).toBe('1');
    const conf = await call('PATCH', `${A}/configuration`, { alias: 'Test', marginRate: '0.05' });
    expect(conf.body.clientConfigureTransaction.type).toBe('CLIENT_CONFIGURE');
    const s = await call('GET', `${A}/summary`);
    expect(s.body.account.alias).toBe('Test');
    expect(s.body.account.marginRate).toBe('0.05');
    const noAccount = await call('GET', `${sb.url}/v3/accounts/999/summary`);
    expect(noAccount.status).toBe(404);
    expect(noAccount.headers.get('requestid')).toMatch(/^\d+$/);
    expect(noAccount.headers.get('content-type')).toBe('application/json');
    const noRoute = await call('DELETE', `${A}/orders`);
    expect(noRoute.status).toBe(405);
  });

  it('applies a PATCHed margin rate: the next order needing more margin than the account has is cancelled INSUFFICIENT_MARGIN', async () => {
    const conf = await call('PATCH', `${A}/configuration`, { marginRate: '0.02' });
    expect(conf.status).toBe(200);
    const before = await call('GET', `${A}/summary`);
    const nav = Number(before.body.account.NAV);
    const instRate = Number(
      (await call('GET', `${A}/instruments?instruments=EUR_USD`)).body.instruments[0].marginRate,
    );
    expect(instRate).toBeLessThan(0.5);
    // Units whose margin is half the NAV at the stricter of 2% and the instrument's rate, and twice
    // the NAV or more at 50%.
    const units = String(Math.floor((nav * 0.5) / (1.1001 * Math.max(0.02, instRate))));
    const fits = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units },
    });
    expect(fits.body.orderFillTransaction?.type).toBe('ORDER_FILL');
    await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
    await call('PATCH', `${A}/configuration`, { marginRate: '0.5' });
    const refused = await call('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units },
    });
    expect(refused.status).toBe(201);
    expect(refused.body.orderCancelTransaction.reason).toBe('INSUFFICIENT_MARGIN');
    expect((await call('GET', `${A}/summary`)).body.account.marginRate).toBe('0.5');
    await call('PATCH', `${A}/configuration`, { marginRate: '0.05' });
  });

  it('gives increasing RequestIDs', async () => {
    const a = await call('GET', `${sb.url}/v3/accounts`);
    const b = await call('GET', `${sb.url}/v3/accounts/nope`);
    expect(Number(b.headers.get('requestid'))).toBeGreaterThan(Number(a.headers.get('requestid')));
  });
});

describe('sandbox: control and clock', () => {
  it('moves time and prices over HTTP control endpoints; GTD orders expire', async () => {
    const sb = await startSandbox({});
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      await call('POST', `${sb.url}/sandbox/prices`, [{ instrument: 'EUR_USD', bid: 1.2, ask: 1.2001 }]);
      const p = await call('GET', `${A}/pricing?instruments=EUR_USD`);
      expect(p.body.prices[0].closeoutBid).toBe('1.20000');
      const o = await call('POST', `${A}/orders`, {
        order: {
          type: 'LIMIT',
          instrument: 'EUR_USD',
          units: '10',
          price: '1.10000',
          timeInForce: 'GTD',
          gtdTime: '2024-01-02T01:00:00Z',
        },
      });
      const id = o.body.orderCreateTransaction.id as string;
      await call('POST', `${sb.url}/sandbox/advance`, { ms: 2 * 3_600_000 });
      expect((await call('GET', `${A}/orders/${id}`)).body.order.state).toBe('CANCELLED');
      const t = await call('POST', `${sb.url}/sandbox/time`, { time: '2024-01-03T00:00:00Z' });
      expect(t.body.time).toBe('2024-01-03T00:00:00.000000000Z');
      const bad = await call('POST', `${sb.url}/sandbox/prices`, { instrument: 'EUR_USD', bid: 'x', ask: 1 });
      expect(bad.status).toBe(400);
      expect(bad.body.errorMessage).toContain("'bid'");
      const stats = await call('GET', `${sb.url}/sandbox/stats`);
      expect(stats.body.requests).toBeGreaterThan(5);
    } finally {
      await sb.close();
    }
  });

  it('serves several accounts, each its own broker, with pricing since and stream snapshot=false', async () => {
    const sb = await startSandbox({
      accounts: [
        { id: '101-001-0000001-001' },
        { id: '101-001-0000001-002', currency: 'EUR', balance: '5000', hedging: true },
      ],
    });
    try {
      expect(sb.accountIDs).toEqual(['101-001-0000001-001', '101-001-0000001-002']);
      const B = `${sb.url}/v3/accounts/101-001-0000001-002`;
      const s = await call('GET', `${B}/summary`);
      expect(s.body.account.currency).toBe('EUR');
      expect(s.body.account.balance).toBe('5000.0000');
      expect(s.body.account.hedgingEnabled).toBe(true);
      await call('POST', `${B}/orders`, { order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' } });
      await call('POST', `${B}/orders`, { order: { type: 'MARKET', instrument: 'EUR_USD', units: '-100' } });
      expect((await call('GET', `${B}/openTrades`)).body.trades.length).toBe(2); // hedged: both sides open
      expect(
        (await call('GET', `${sb.url}/v3/accounts/101-001-0000001-001/openTrades`)).body.trades.length,
      ).toBe(0);
      sb.setTime(Date.parse('2024-01-02T01:00:00Z'));
      sb.pushPrice({ instrument: 'USD_JPY', bid: 141, ask: 141.02 });
      const since = await call('GET', `${B}/pricing?instruments=EUR_USD,USD_JPY&since=2024-01-02T00:30:00Z`);
      expect(since.body.prices.map((p: { instrument: string }) => p.instrument)).toEqual(['USD_JPY']);
      const st = await readLines(`${B}/pricing/stream?instruments=USD_JPY&snapshot=false`);
      sb.pushPrice({ instrument: 'USD_JPY', bid: 141.1, ask: 141.12 });
      await st.until(() => st.lines.length >= 1);
      st.close();
      expect(JSON.parse(st.lines[0]!).closeoutBid).toBe('141.100');
    } finally {
      await sb.close();
    }
  });

  it('refuses a non-loopback host', async () => {
    await expect(startSandbox({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  it('requires the bearer token when requireToken is set, without echoing it', async () => {
    const sb = await startSandbox({ requireToken: 'sekret-token-123' });
    try {
      const none = await call('GET', `${sb.url}/v3/accounts`);
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ errorMessage: 'Insufficient authorization to perform request.' });
      const wrong = await call('GET', `${sb.url}/v3/accounts`, undefined, { Authorization: 'Bearer nope' });
      expect(wrong.status).toBe(401);
      expect(JSON.stringify(wrong.body)).not.toContain('sekret');
      const right = await call('GET', `${sb.url}/v3/accounts`, undefined, {
        Authorization: 'Bearer sekret-token-123',
      });
      expect(right.status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});

describe('sandbox: candles from the catalog', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ start: '2024-03-06T10:30:00Z' });
  });
  afterAll(() => sb.close());

  it('aggregates H4 candles on UTC multiples, the last one incomplete at sandbox time', async () => {
    const r = await call('GET', `${sb.url}/v3/instruments/EUR_USD/candles?granularity=H4&count=6&price=MBA`);
    expect(r.status).toBe(200);
    const cs = r.body.candles as {
      time: string;
      complete: boolean;
      mid: { o: string };
      bid: { h: string };
      ask: { h: string };
    }[];
    expect(cs.length).toBe(6);
    for (const c of cs) expect(Date.parse(c.time) % (4 * 3_600_000)).toBe(0);
    expect(cs[cs.length - 1]!.time).toBe('2024-03-06T08:00:00.000000000Z');
    expect(cs[cs.length - 1]!.complete).toBe(false);
    expect(cs.slice(0, -1).every((c) => c.complete)).toBe(true);
    expect(Number(cs[0]!.ask.h)).toBeGreaterThanOrEqual(Number(cs[0]!.bid.h));
  });

  it('aligns D candles to 17:00 New York by default and to dailyAlignment in the given zone', async () => {
    const d = await call('GET', `${sb.url}/v3/instruments/EUR_USD/candles?granularity=D&count=3`);
    expect(d.body.candles.map((c: { time: string }) => c.time.slice(11, 13))).toEqual(['22', '22', '22']); // 17:00 EST = 22:00Z
    const utc = await call(
      'GET',
      `${sb.url}/v3/instruments/EUR_USD/candles?granularity=D&count=2&dailyAlignment=0&alignmentTimezone=UTC`,
    );
    expect(utc.body.candles.map((c: { time: string }) => c.time.slice(11, 19))).toEqual([
      '00:00:00',
      '00:00:00',
    ]);
  });

  it('serves from/to ranges, includeFirst and the account-scoped path', async () => {
    const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
    const r = await call(
      'GET',
      `${A}/instruments/EUR_USD/candles?granularity=M15&from=2024-03-05T10:00:00Z&to=2024-03-05T11:00:00Z&price=B`,
    );
    expect(r.body.candles.map((c: { time: string }) => c.time.slice(11, 16))).toEqual([
      '10:00',
      '10:15',
      '10:30',
      '10:45',
    ]); // [from, to)
    expect(r.body.candles[0].mid).toBeUndefined();
    const nf = await call(
      'GET',
      `${sb.url}/v3/instruments/EUR_USD/candles?granularity=M15&from=2024-03-05T10:00:00Z&count=2&includeFirst=false`,
    );
    expect(nf.body.candles.map((c: { time: string }) => c.time.slice(11, 16))).toEqual(['10:15', '10:30']);
  });

  it('refuses count above 5000 and unknown granularities with 400', async () => {
    const big = await call('GET', `${sb.url}/v3/instruments/EUR_USD/candles?granularity=M1&count=5001`);
    expect(big.status).toBe(400);
    expect(big.body.errorMessage).toContain('count');
    const g = await call('GET', `${sb.url}/v3/instruments/EUR_USD/candles?granularity=M3`);
    expect(g.status).toBe(400);
    expect(g.body.errorMessage).toContain('granularity');
  });
});

describe('sandbox: streams', () => {
  let sb: Sandbox;
  let A: string;
  beforeAll(async () => {
    sb = await startSandbox({ heartbeatMs: 40 });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  });
  afterEach(() => sb.setFaults({}));
  afterAll(() => sb.close());

  it('delivers every transaction once, in order, plus heartbeats with lastTransactionID', async () => {
    const s = await readLines(`${A}/transactions/stream`);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('application/octet-stream');
    expect(s.headers.get('requestid')).toMatch(/^\d+$/);
    const start = Number((await call('GET', `${A}/summary`)).body.lastTransactionID);
    for (let i = 0; i < 3; i++)
      await call('POST', `${A}/orders`, { order: { type: 'MARKET', instrument: 'USD_JPY', units: '100' } });
    await call('PUT', `${A}/positions/USD_JPY/close`, { longUnits: 'ALL' });
    const end = Number((await call('GET', `${A}/summary`)).body.lastTransactionID);
    await s.until(
      () => jsonLines(s.lines).some((l) => l.type === 'HEARTBEAT' && Number(l.lastTransactionID) === end),
      3000,
      'a heartbeat after the orders',
    );
    s.close();
    const txIDs = jsonLines(s.lines)
      .filter((l) => l.type !== 'HEARTBEAT')
      .map((l) => Number(l.id));
    expect(txIDs).toEqual(Array.from({ length: end - start }, (_, i) => start + 1 + i));
    expect(jsonLines(s.lines).filter((l) => l.type === 'HEARTBEAT')[0]!.time).toMatch(/Z$/);
  });

  it('streams prices: the current price first, then pushed ticks and heartbeats', async () => {
    sb.pushPrice({ instrument: 'GBP_USD', bid: 1.25, ask: 1.2502 });
    const s = await readLines(`${A}/pricing/stream?instruments=GBP_USD`);
    await s.until(() => s.lines.length >= 1);
    expect(JSON.parse(s.lines[0]!).closeoutBid).toBe('1.25000');
    sb.pushPrice({ instrument: 'GBP_USD', bid: 1.251, ask: 1.2512 });
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1001 });
    await s.until(
      () =>
        jsonLines(s.lines).some((l) => l.type === 'HEARTBEAT') &&
        jsonLines(s.lines).some((l) => l.closeoutBid === '1.25100'),
    );
    s.close();
    expect(jsonLines(s.lines).every((l) => l.type === 'HEARTBEAT' || l.instrument === 'GBP_USD')).toBe(true);
  });

  it('fault dropStreamAfterLines closes each connection after N lines, dropStreams times', async () => {
    sb.setFaults({ dropStreamAfterLines: 3, dropStreams: 1 });
    const s = await readLines(`${A}/transactions/stream`);
    await s.until(() => s.ended, 3000, 'the dropped stream to end');
    expect(s.lines.length).toBe(3);
    const s2 = await readLines(`${A}/transactions/stream`);
    await s2.until(() => s2.lines.length >= 5, 3000, 'five heartbeats on the second connection');
    expect(s2.ended).toBe(false);
    s2.close();
    expect(sb.stats().droppedStreams).toBe(1);
  });

  it('fault errorRate answers about that share of REST requests with 500/503 and a v20 error body', async () => {
    sb.setFaults({ errorRate: 0.5, seed: 7 });
    let failed = 0;
    for (let i = 0; i < 100; i++) {
      const r = await call('GET', `${A}/summary`);
      if (r.status >= 500) {
        failed++;
        expect([500, 503]).toContain(r.status);
        expect(typeof r.body.errorMessage).toBe('string');
        expect(r.headers.get('requestid')).toMatch(/^\d+$/);
      } else expect(r.status).toBe(200);
    }
    expect(failed).toBeGreaterThan(30);
    expect(failed).toBeLessThan(70);
    // The control endpoints are never faulted.
    expect((await call('GET', `${sb.url}/sandbox/stats`)).status).toBe(200);
  });

  it('fault rateLimitBurst gives the next N requests 429 with Retry-After: 1', async () => {
    sb.setFaults({ rateLimitBurst: 3 });
    const got: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call('GET', `${sb.url}/v3/accounts`);
      got.push(r.status);
      if (r.status === 429) expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(got).toEqual([429, 429, 429, 200, 200]);
  });

  it("fault splitLines 'byte' writes each byte as its own chunk; the lines still reassemble", async () => {
    sb.setFaults({ splitLines: 'byte' });
    const s = await readLines(`${A}/transactions/stream`);
    await s.until(() => s.lines.length >= 2, 5000, 'two heartbeats');
    s.close();
    const bytes = s.lines.slice(0, 2).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    // Chunks can coalesce in the socket now and then; with byte writes there are far more chunks than lines.
    expect(s.chunks.length).toBeGreaterThan(bytes / 4);
    expect(JSON.parse(s.lines[0]!).type).toBe('HEARTBEAT');
  });

  it('fault corruptLineRate precedes lines with malformed ones', async () => {
    sb.setFaults({ corruptLineRate: 1 });
    const s = await readLines(`${A}/transactions/stream`);
    await s.until(() => s.lines.length >= 6);
    s.close();
    const bad = s.lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(bad.length).toBeGreaterThanOrEqual(3);
    expect(jsonLines(s.lines).length).toBeGreaterThanOrEqual(2);
    expect(s.lines.slice(0, 6).map((l, i) => (i % 2 === 0) === bad.includes(l))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('fault stallHeartbeats stops heartbeats and prices while set', async () => {
    const s = await readLines(`${A}/pricing/stream?instruments=EUR_USD`);
    await s.until(() => jsonLines(s.lines).some((l) => l.type === 'HEARTBEAT'));
    sb.setFaults({ stallHeartbeats: true });
    await new Promise((r) => setTimeout(r, 60));
    const n = s.lines.length;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.3, ask: 1.3001 });
    await new Promise((r) => setTimeout(r, 300)); // more than 7 heartbeat intervals
    expect(s.lines.length).toBe(n);
    sb.setFaults({});
    await s.until(() => s.lines.length > n, 3000, 'heartbeats to resume');
    s.close();
  });

  it('close() ends open streams cleanly', async () => {
    const own = await startSandbox({ heartbeatMs: 1000 });
    const s = await readLines(`${own.url}/v3/accounts/${own.accountIDs[0]}/transactions/stream`);
    await own.close();
    await s.until(() => s.ended, 3000, 'the stream to end');
    expect(s.ended).toBe(true);
  });
});
