import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.ts';
import { HAS_SHARED, warnIfNoShared } from '../shared.ts';
import {
  type Body,
  C,
  call,
  callCount,
  Context,
  expectFaithful,
  ord,
  tx,
  until,
  type V20Context,
  validateExchanges,
} from './official-kit.ts';
import { OpenApiValidator } from './openapi.ts';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.ts';

/**
 * A trader's everyday flow through OANDA's own client (`@oanda/v20` 3.0.25), written as its users
 * write it: numbers for units, strings for prices. Accounts, instruments, prices, candles, a market
 * order with take profit and stop loss on fill, trades listed and modified, a limit order and its
 * cancel, a market-if-touched order, a partial and a full close, transactions since an ID, both
 * streams, account changes and positions. Every call must succeed, and every byte the sandbox
 * served (REST bodies and stream lines) must validate against the OpenAPI definitions.
 *
 * Against the sandbox before issue 14, 9 of these calls failed: it refused `units` as a JSON number
 * (`400 INVALID_ORDER … expected a decimal string`) where OANDA takes it.
 */

warnIfNoShared("a trader's everyday flow through the official @oanda/v20 client (contract)");

const EU = 'EUR_USD';

describe.skipIf(!HAS_SHARED)("a trader's everyday flow through the official client, units as numbers", () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let proxy: RecordingProxy;
  let ctx: V20Context;
  let validator: OpenApiValidator;
  let id = '';
  let startID = '';
  let tradeID = '';
  const streamed: Body[] = [];
  const prices: Body[] = [];
  let before = 0;

  beforeAll(async () => {
    validator = OpenApiValidator.load();
    // Wednesday 10:00 UTC: the FX market is open.
    sandbox = await startSandbox({
      port: 0,
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      heartbeatMs: 50,
    });
    sandbox.pushPrice({ instrument: EU, bid: '1.10000', ask: '1.10020' });
    proxy = await startRecordingProxy(sandbox.url);
    ctx = new Context(proxy.hostname, proxy.port, false, 'fxflow-flow-test');
    id = sandbox.accountIDs[0] ?? '';
    before = callCount();
  });

  afterAll(async () => {
    proxy?.cutOpenResponses();
    await proxy?.close();
    await sandbox?.close();
  });

  it('reads accounts, the account, its instruments, prices and candles', async () => {
    const list = await call(200, (cb) => ctx.account.list(cb));
    expect(list.body?.accounts.map((a: Body) => a.id)).toContain(id);
    const a = await call(200, (cb) => ctx.account.get(id, cb));
    startID = String(a.body?.lastTransactionID);
    expect(a.body?.account.balance).toBe('100000.0000');
    const s = await call(200, (cb) => ctx.account.summary(id, cb));
    expect(s.body?.account.openTradeCount).toBe(0);
    const i = await call(200, (cb) => ctx.account.instruments(id, { instruments: EU }, cb));
    expect(i.body?.instruments[0].displayPrecision).toBe(5);
    const p = await call(200, (cb) => ctx.pricing.get(id, { instruments: EU }, cb));
    expect([p.body?.prices[0].tradeable, p.body?.prices[0].status]).toEqual([true, 'tradeable']);
    const c = await call(200, (cb) => ctx.instrument.candles(EU, { granularity: 'M5', count: 10 }, cb));
    expect(c.body?.candles.length).toBeGreaterThan(0);
    for (const r of [list, a, s, i, p, c]) expectFaithful(validator, r);
  });

  it('opens both streams', async () => {
    ctx.transaction.stream(
      id,
      (x) => streamed.push(x),
      () => {},
    );
    get(
      {
        hostname: proxy.hostname,
        port: proxy.port,
        path: `/v3/accounts/${id}/pricing/stream?instruments=${EU}`,
      },
      (res) => {
        // (The client's own pricing stream throws in its line parser, @oanda/v20 3.0.25: read it plainly.)
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const parts = (rest + chunk).split('\n');
          rest = parts.pop() ?? '';
          for (const line of parts) if (line !== '') prices.push(JSON.parse(line) as Body);
        });
        res.on('error', () => {});
      },
    ).on('error', () => {});
    await until(
      'both streams to connect',
      () => proxy.exchanges.filter((e) => e.path.includes('/stream')).length === 2,
    );
  });

  it('places a market order of 1000 units with take profit and stop loss on fill', async () => {
    const r = await call(201, (cb) =>
      ctx.order.market(
        id,
        {
          instrument: EU,
          units: 1000,
          takeProfitOnFill: { price: '1.11000' },
          stopLossOnFill: { price: '1.09000' },
        },
        cb,
      ),
    );
    const fill = r.body?.orderFillTransaction;
    expect(fill).toBeInstanceOf(C(tx, 'OrderFillTransaction'));
    expect(fill.units).toBe('1000');
    expect(fill.price).toBe('1.10020');
    tradeID = fill.tradeOpened.tradeID;
    expectFaithful(validator, r);
  });

  it('lists and modifies the trade: a new take profit and a trailing stop', async () => {
    const open = await call(200, (cb) => ctx.trade.listOpen(id, cb));
    expect(open.body?.trades.map((t: Body) => t.id)).toEqual([tradeID]);
    const dep = await call(200, (cb) =>
      ctx.trade.setDependentOrders(
        id,
        tradeID,
        { takeProfit: { price: '1.11500' }, trailingStopLoss: { distance: '0.00100' } },
        cb,
      ),
    );
    expect(dep.body?.takeProfitOrderTransaction.price).toBe('1.11500');
    expect(dep.body?.trailingStopLossOrderTransaction.distance).toBe('0.00100');
    const t = await call(200, (cb) => ctx.trade.get(id, tradeID, cb));
    expect(t.body?.trade.takeProfitOrder.price).toBe('1.11500');
    expect(t.body?.trade.trailingStopLossOrder.trailingStopValue).toBe('1.09900');
    for (const r of [open, dep, t]) expectFaithful(validator, r);
  });

  it('places a limit order and cancels it; places a market-if-touched order', async () => {
    const l = await call(201, (cb) =>
      ctx.order.limit(id, { instrument: EU, units: 500, price: '1.09500' }, cb),
    );
    const limitID = l.body?.orderCreateTransaction.id as string;
    expect(l.body?.orderCreateTransaction.units).toBe('500');
    const pending = await call(200, (cb) => ctx.order.listPending(id, cb));
    expect(pending.body?.orders.map((o: Body) => o.id)).toContain(limitID);
    const c = await call(200, (cb) => ctx.order.cancel(id, limitID, cb));
    expect(c.body?.orderCancelTransaction.reason).toBe('CLIENT_REQUEST');
    const mit = await call(201, (cb) =>
      ctx.order.marketIfTouched(id, { instrument: EU, units: -200, price: '1.10500' }, cb),
    );
    expect(mit.body?.orderCreateTransaction).toBeInstanceOf(C(tx, 'MarketIfTouchedOrderTransaction'));
    const o = await call(200, (cb) => ctx.order.get(id, mit.body?.orderCreateTransaction.id, cb));
    expect(o.body?.order).toBeInstanceOf(C(ord, 'MarketIfTouchedOrder'));
    expect(o.body?.order.initialMarketPrice).toBe('1.10010');
    for (const r of [l, pending, c, mit, o]) expectFaithful(validator, r);
  });

  it('closes 400 units of the trade (a number), then reads positions', async () => {
    const part = await call(200, (cb) => ctx.trade.close(id, tradeID, { units: 400 }, cb));
    expect(part.body?.orderFillTransaction.tradeReduced.units).toBe('-400');
    const all = await call(200, (cb) => ctx.position.list(id, cb));
    const openPositions = await call(200, (cb) => ctx.position.listOpen(id, cb));
    expect(openPositions.body?.positions[0].long.units).toBe('600');
    const one = await call(200, (cb) => ctx.position.get(id, EU, cb));
    expect(one.body?.position.long.tradeIDs).toEqual([tradeID]);
    for (const r of [part, all, openPositions, one]) expectFaithful(validator, r);
  });

  it('reads the transactions since the start and the account changes, closes the position', async () => {
    const since = await call(200, (cb) => ctx.transaction.since(id, { id: startID }, cb));
    const ids = (since.body?.transactions as Body[]).map((t) => t.id as string);
    expect(ids.length).toBeGreaterThan(8);
    const changes = await call(200, (cb) => ctx.account.changes(id, { sinceTransactionID: startID }, cb));
    expect(changes.body?.changes.tradesOpened.map((t: Body) => t.id)).toEqual([tradeID]);
    const close = await call(200, (cb) => ctx.position.close(id, EU, { longUnits: 'ALL' }, cb));
    expect(close.body?.longOrderFillTransaction.units).toBe('-600');
    for (const r of [since, changes, close]) expectFaithful(validator, r);
    const last = close.body?.lastTransactionID as string;
    await until('the transaction stream to deliver the close', () => streamed.some((t) => t.id === last));
    const got = streamed.filter((t) => t.type !== 'HEARTBEAT').map((t) => t.id as string);
    expect(got.slice(0, ids.length)).toEqual(ids);
    await until(
      'a heartbeat on both streams',
      () => streamed.some((t) => t.type === 'HEARTBEAT') && prices.some((p) => p.type === 'HEARTBEAT'),
    );
    expect(prices.find((p) => p.type === 'PRICE')?.tradeable).toBe(true);
  });

  it('every answer and every stream line validates against the OpenAPI definitions', () => {
    proxy.cutOpenResponses();
    const { problems, rest, streams, lines } = validateExchanges(validator, proxy);
    if (problems.length > 0)
      throw new Error(`${problems.length} violations of the v20 definitions:\n${problems.join('\n')}`);
    expect(rest).toBe(callCount() - before);
    expect(rest).toBe(22); // the calls above
    expect(streams).toBe(2);
    expect(lines).toBeGreaterThan(10);
  });
});
