import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V20Error } from '../../src/adapters/v20/errors.ts';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';

// Every endpoint group of V20Rest, over real HTTP against the local v20 sandbox (manual clock).
describe('V20Rest against the sandbox', () => {
  let sb: Sandbox;
  let http: V20Http;
  let rest: V20Rest;
  let A: string;

  beforeAll(async () => {
    // The 3rd of January: the candles asked for below (the 2nd, 10:00 to 15:00 UTC) are in the past, and the
    // sample has none on New Year's Day (closed, as at OANDA).
    sb = await startSandbox({ heartbeatMs: 200, start: '2024-01-03T00:00:00Z' });
    A = sb.accountIDs[0]!;
    http = new V20Http({ baseUrl: sb.url, retryBaseMs: 5 });
    rest = new V20Rest(http);
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  });
  afterAll(async () => {
    await http.close();
    await sb.close();
  });

  it('accounts, account, summary, instruments, configure, changes', async () => {
    const list = await rest.accounts();
    expect(list.map((a) => a.id)).toEqual([A]);
    const { account, lastTransactionID } = await rest.account(A);
    expect(account.id).toBe(A);
    expect(account.currency).toBe('USD');
    const s = await rest.summary(A);
    expect(s.account.balance).toBe(account.balance);
    const inst = await rest.instruments(A, ['EUR_USD', 'USD_JPY']);
    expect(inst.map((i) => i.name)).toEqual(['EUR_USD', 'USD_JPY']);
    expect(inst[1]!.pipLocation).toBe(-2);
    const conf = await rest.configure(A, { alias: 'fxflow test' });
    expect(conf.clientConfigureTransaction.type).toBe('CLIENT_CONFIGURE');
    expect((await rest.summary(A)).account.alias).toBe('fxflow test');
    const ch = await rest.changes(A, lastTransactionID);
    expect(ch.changes.transactions?.map((t) => t.type)).toEqual(['CLIENT_CONFIGURE']);
    expect(Number(ch.lastTransactionID)).toBe(Number(lastTransactionID) + 1);
  });

  it('market order with TP/SL on fill, then the trade closed', async () => {
    const r = await rest.createOrder(A, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '1000',
      takeProfitOnFill: { price: '1.11000' },
      stopLossOnFill: { price: '1.09000' },
    });
    expect(r.orderCreateTransaction?.type).toBe('MARKET_ORDER');
    const fill = r.orderFillTransaction as { type: string; price: string; tradeOpened: { tradeID: string } };
    expect(fill.type).toBe('ORDER_FILL');
    expect(fill.price).toBe('1.10020');
    const trade = await rest.trade(A, fill.tradeOpened.tradeID);
    expect((trade.takeProfitOrder as { price?: string } | undefined)?.price).toBe('1.11000');
    expect((trade.stopLossOrder as { price?: string } | undefined)?.price).toBe('1.09000');
    expect((await rest.openTrades(A)).map((t) => t.id)).toContain(trade.id);
    const closed = await rest.closeTrade(A, trade.id);
    expect((closed.orderFillTransaction as { price: string }).price).toBe('1.10000');
    expect((await rest.trade(A, trade.id)).state).toBe('CLOSED');
  });

  it('limit order: create, find by @clientID, replace, cancel', async () => {
    const r = await rest.createOrder(A, {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '100',
      price: '1.05000',
      clientExtensions: { id: 'rest-limit-1' },
    });
    const id = r.orderCreateTransaction!.id;
    expect((await rest.order(A, '@rest-limit-1')).id).toBe(id);
    expect((await rest.pendingOrders(A)).map((o) => o.id)).toContain(id);
    const rep = await rest.replaceOrder(A, '@rest-limit-1', {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '200',
      price: '1.04000',
      clientExtensions: { id: 'rest-limit-1' },
    });
    expect((rep.orderCancelTransaction as { orderID: string }).orderID).toBe(id);
    // v20 (OpenAPI 3.0.25): the replacing order is the response's orderCreateTransaction
    const newID = rep.orderCreateTransaction!.id;
    expect((rep.orderCreateTransaction as { replacesOrderID?: string }).replacesOrderID).toBe(id);
    expect((await rest.order(A, id)).state).toBe('CANCELLED');
    const ext = await rest.orderClientExtensions(A, newID, {
      clientExtensions: { id: 'rest-limit-1', comment: 'moved' },
    });
    expect((ext.orderClientExtensionsModifyTransaction as { type: string }).type).toBe(
      'ORDER_CLIENT_EXTENSIONS_MODIFY',
    );
    const c = await rest.cancelOrder(A, newID);
    expect((c.orderCancelTransaction as { reason: string }).reason).toBe('CLIENT_REQUEST');
    const again = (await rest.cancelOrder(A, newID).catch((e: unknown) => e)) as V20Error;
    expect(again.status).toBe(404);
    expect(again.errorCode).toBe('ORDER_DOESNT_EXIST');
    expect(again.retryable).toBe(false);
  });

  it('trade dependent orders and client extensions; position close', async () => {
    const r = await rest.createOrder(A, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '-300',
      tradeClientExtensions: { id: 'rest-short-1' },
    });
    const tradeID = (r.orderFillTransaction as { tradeOpened: { tradeID: string } }).tradeOpened.tradeID;
    const set = await rest.setTradeOrders(A, '@rest-short-1', {
      takeProfit: { price: '1.08000' },
      stopLoss: { distance: '0.01000' },
    });
    expect(set.takeProfitOrderTransaction).toBeDefined();
    expect(set.stopLossOrderTransaction).toBeDefined();
    const unset = await rest.setTradeOrders(A, tradeID, { takeProfit: null });
    expect(unset.takeProfitOrderCancelTransaction).toBeDefined();
    const te = await rest.tradeClientExtensions(A, tradeID, { id: 'rest-short-1', comment: 'kept' });
    expect(te.tradeClientExtensionsModifyTransaction).toBeDefined();
    expect((await rest.trade(A, '@rest-short-1')).clientExtensions?.comment).toBe('kept');
    const pos = await rest.position(A, 'EUR_USD');
    expect(pos.short.units).toBe('-300');
    expect((await rest.openPositions(A)).map((p) => p.instrument)).toContain('EUR_USD');
    const closed = await rest.closePosition(A, 'EUR_USD', { shortUnits: 'ALL' });
    expect((closed.shortOrderFillTransaction as { units: string }).units).toBe('300');
    expect((await rest.positions(A)).find((p) => p.instrument === 'EUR_USD')?.short.units).toBe('0');
  });

  it('a 400 reject becomes a V20Error with errorCode and the reject transaction, not retryable, and is not retried', async () => {
    const before = http.stats.requests;
    const e = (await rest
      .createOrder(A, { type: 'TAKE_PROFIT', tradeID: '99999', price: '1.20000' })
      .catch((x: unknown) => x)) as V20Error;
    expect(e).toBeInstanceOf(V20Error);
    expect(e.code).toBe('V20_HTTP');
    expect(e.status).toBe(400);
    expect(e.errorCode).toBe('TRADE_DOESNT_EXIST');
    expect(e.rejectTransaction?.type).toBe('TAKE_PROFIT_ORDER_REJECT');
    expect(e.retryable).toBe(false);
    expect(e.requestID).toMatch(/^\d+$/);
    expect(http.stats.requests - before).toBe(1);
  });

  it('candles (RFC 3339 from/to) and pricing', async () => {
    // 2 January: the sandbox's sample has no candles in New Year's Day's closure, as OANDA has none.
    const c = await rest.candles('EUR_USD', {
      granularity: 'H1',
      price: 'BA',
      from: '2024-01-02T10:00:00Z',
      to: Date.parse('2024-01-02T15:00:00Z'),
    });
    expect(c.candles.map((x) => x.time.slice(11, 13))).toEqual(['10', '11', '12', '13', '14']);
    expect(c.candles[0]!.bid).toBeDefined();
    expect(c.candles[0]!.ask).toBeDefined();
    const p = await rest.pricing(A, ['EUR_USD'], { includeHomeConversions: true });
    expect(p.prices[0]!.closeoutBid).toBe('1.10000');
    expect(Array.isArray(p.homeConversions)).toBe(true);
  });

  it('transactions: pages, one by ID, idrange and sinceid agree', async () => {
    const last = (await rest.summary(A)).lastTransactionID;
    const pages: string[][] = [];
    for await (const page of rest.transactionPages(A, { pageSize: 5 })) pages.push(page.map((t) => t.id));
    const all = pages.flat();
    expect(pages.length).toBe(Math.ceil(Number(last) / 5));
    expect(all).toEqual(Array.from({ length: Number(last) }, (_, i) => String(i + 1)));
    const range = await rest.transactionsIdRange(A, '2', '6');
    expect(range.transactions.map((t) => t.id)).toEqual(['2', '3', '4', '5', '6']);
    const since = await rest.transactionsSinceId(A, String(Number(last) - 3));
    expect(since.transactions.map((t) => t.id)).toEqual(all.slice(-3));
    expect(await rest.transaction(A, '2')).toEqual(range.transactions[0]);
  });

  it('orders and trades lists follow Link rel="next" through every page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (
          await rest.createOrder(A, {
            type: 'LIMIT',
            instrument: 'EUR_USD',
            units: '10',
            price: (1.01 + i / 1000).toFixed(5),
          })
        ).orderCreateTransaction!.id,
      );
    const before = http.stats.requests;
    const orders = await rest.orders(A, { count: 2, state: 'PENDING' });
    expect(http.stats.requests - before).toBe(4); // 2 + 2 + 2 + 1
    expect(orders.length).toBe(7);
    expect(orders.map((o) => o.id).sort()).toEqual(ids.slice().sort());
    for (const id of ids) await rest.cancelOrder(A, id);
    const trades = await rest.trades(A, { state: 'CLOSED', count: 1 });
    expect(trades.length).toBeGreaterThanOrEqual(2);
    expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);
  });

  it('UNIX datetime format: times come back as UNIX seconds and queries are sent in UNIX', async () => {
    const h = new V20Http({ baseUrl: sb.url, datetimeFormat: 'UNIX' });
    const r = new V20Rest(h);
    try {
      const t = await r.transaction(A, '1');
      expect(t.time).toMatch(/^\d+\.\d{9}$/);
      const c = await r.candles('EUR_USD', {
        granularity: 'H1',
        from: Date.parse('2024-01-02T10:00:00Z'),
        count: 2,
      });
      expect(c.candles.map((x) => x.time)).toEqual(['1704189600.000000000', '1704193200.000000000']);
    } finally {
      await h.close();
    }
  });
});
