import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { call, type Answer } from '../../src/sandbox/testkit.ts';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../shared.ts';
import { formatViolations, OpenApiValidator } from './openapi.ts';

/**
 * What v20 refuses, the sandbox refuses, over real HTTP, each answer checked against OANDA's
 * definitions (status and body) or its recorded answer: closes finer than the instrument's units,
 * a second open trade with a client trade ID already held, a FIXED_PRICE order from a client, a
 * replace of an order no longer pending, and an empty position-close body (both sides ALL, per the
 * service specification).
 */

warnIfNoShared('sandbox refusals against the v20 definitions and recorded answers (contract)');

const WEDNESDAY = '2024-01-03T10:00:00Z';

describe.skipIf(!HAS_SHARED)('units and IDs refused as v20 refuses them', () => {
  let sb: Sandbox;
  let validator: OpenApiValidator;
  let A = '';
  const path = (url: string): string => new URL(url).pathname;

  /** A call whose answer must be one the definitions declare for it, with a body they allow. */
  const v20 = async (method: string, url: string, body?: unknown): Promise<Answer<Record<string, any>>> => {
    const r = await call(method, url, body);
    // The service specification's error body carries relatedTransactionIDs and lastTransactionID
    // wherever the account exists; 3.0.25 omits them from a few 400s (closeTrade's): allowed there.
    const bad = validator
      .validateResponse(method, path(url), r.status, r.body, {
        extraProperties: { OrderFillTransaction: ['requestedUnits'], ClientPrice: ['timestamp'] },
      })
      .filter(
        (v) =>
          !(r.status >= 400 && (v.path === '$.relatedTransactionIDs' || v.path === '$.lastTransactionID')),
      );
    expect(bad, formatViolations(`${method} ${path(url)} ${r.status}`, bad).join('\n')).toEqual([]);
    return r;
  };

  const flat = async (): Promise<void> => {
    const p = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    if (Number(p.long.units) !== 0) await call('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
    if (Number(p.short.units) !== 0) await call('PUT', `${A}/positions/EUR_USD/close`, { shortUnits: 'ALL' });
  };
  const open = async (units: string, tradeClientID?: string): Promise<Answer<Record<string, any>>> => {
    const order: Record<string, unknown> = { type: 'MARKET', instrument: 'EUR_USD', units };
    if (tradeClientID !== undefined) order.tradeClientExtensions = { id: tradeClientID };
    return v20('POST', `${A}/orders`, { order });
  };

  beforeAll(async () => {
    validator = OpenApiValidator.load();
    sb = await startSandbox({ feed: false, start: WEDNESDAY });
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('a trade close finer than whole units (EUR_USD) is UNITS_PRECISION_EXCEEDED and leaves the trade whole', async () => {
    await flat();
    const t = await open('100');
    const tradeID = t.body.orderFillTransaction.tradeOpened.tradeID as string;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 1, max: 999_999 }).map((f) => String(f).padStart(6, '0').replace(/0+$/, '')),
        async (whole, frac) => {
          const units = `${whole}.${frac}`;
          const r = await v20('PUT', `${A}/trades/${tradeID}/close`, { units });
          expect(r.status).toBe(400);
          expect(r.body.errorCode).toBe('UNITS_PRECISION_EXCEEDED');
          expect(r.body.orderRejectTransaction).toMatchObject({
            type: 'MARKET_ORDER_REJECT',
            rejectReason: 'UNITS_PRECISION_EXCEEDED',
            tradeClose: { tradeID, units },
          });
          const after = (await call('GET', `${A}/trades/${tradeID}`)).body.trade;
          expect(after.currentUnits).toBe('100');
        },
      ),
      { numRuns: 15 },
    );
    // A whole number written with a zero fraction is whole (checked by value, as an order's units).
    const whole = await v20('PUT', `${A}/trades/${tradeID}/close`, { units: '40.0' });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect((await call('GET', `${A}/trades/${tradeID}`)).body.trade.currentUnits).toBe('60');
  });

  it('a position close of longUnits "0.5" or shortUnits "0.123456789" is refused under its side', async () => {
    await flat();
    await open('100');
    const long = await v20('PUT', `${A}/positions/EUR_USD/close`, { longUnits: '0.5' });
    expect(long.status).toBe(400);
    expect(long.body.errorCode).toBe('UNITS_PRECISION_EXCEEDED');
    expect(long.body.longOrderRejectTransaction).toMatchObject({
      rejectReason: 'UNITS_PRECISION_EXCEEDED',
      longPositionCloseout: { units: '0.5' },
    });
    await flat();
    await open('-100');
    const short = await v20('PUT', `${A}/positions/EUR_USD/close`, { shortUnits: '0.123456789' });
    expect(short.status).toBe(400);
    expect(short.body.shortOrderRejectTransaction).toMatchObject({
      rejectReason: 'UNITS_PRECISION_EXCEEDED',
    });
    const p = (await call('GET', `${A}/positions/EUR_USD`)).body.position;
    expect(p.short.units).toBe('-100');
  });

  it('a second trade with the client trade ID of an open trade is refused CLIENT_TRADE_ID_ALREADY_EXISTS', async () => {
    await flat();
    const first = await open('100', 'my-trade');
    expect(first.status).toBe(201);
    const firstID = first.body.orderFillTransaction.tradeOpened.tradeID as string;
    const before = (await call('GET', `${A}`)).body.account.lastTransactionID;
    const second = await open('200', 'my-trade');
    expect(second.status).toBe(400);
    expect(second.body.errorCode).toBe('CLIENT_TRADE_ID_ALREADY_EXISTS');
    expect(second.body.orderRejectTransaction).toMatchObject({
      type: 'MARKET_ORDER_REJECT',
      rejectReason: 'CLIENT_TRADE_ID_ALREADY_EXISTS',
    });
    expect(Number(second.body.lastTransactionID)).toBe(Number(before) + 1);
    // @my-trade is the one trade: the first.
    expect((await call('GET', `${A}/trades/@my-trade`)).body.trade.id).toBe(firstID);
    expect((await call('GET', `${A}/openTrades`)).body.trades).toHaveLength(1);
    // Giving another open trade the ID through its client extensions is refused the same way.
    const other = await open('50', 'other');
    expect(other.status).toBe(201);
    const rename = await v20('PUT', `${A}/trades/@other/clientExtensions`, {
      clientExtensions: { id: 'my-trade' },
    });
    expect(rename.status).toBe(404);
    expect(rename.body.tradeClientExtensionsModifyRejectTransaction).toMatchObject({
      rejectReason: 'CLIENT_TRADE_ID_ALREADY_EXISTS',
    });
    // Once the first trade is closed, its client ID is free again.
    await v20('PUT', `${A}/trades/${firstID}/close`, {});
    const again = await open('10', 'my-trade');
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });

  it('a limit order whose client trade ID is taken while it waits is cancelled at its fill (CLIENT_TRADE_ID_ALREADY_EXISTS)', async () => {
    await flat();
    const limit = await v20('POST', `${A}/orders`, {
      order: {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '100',
        price: '1.09000',
        tradeClientExtensions: { id: 'waiting' },
      },
    });
    expect(limit.status).toBe(201);
    // A long trade takes the ID; the limit buy would add a second long trade under it.
    expect((await open('100', 'waiting')).status).toBe(201);
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.0898, ask: 1.09 });
    const orders = (await call('GET', `${A}/orders?state=ALL&count=500`)).body.orders as Record<
      string,
      any
    >[];
    const o = orders.find((x) => x.id === limit.body.orderCreateTransaction.id)!;
    expect(o.state).toBe('CANCELLED');
    const cancel = (await call('GET', `${A}/transactions/${o.cancellingTransactionID}`)).body.transaction;
    expect(cancel.reason).toBe('CLIENT_TRADE_ID_ALREADY_EXISTS');
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  });

  it('a client FIXED_PRICE order is a 400 naming order.type, as OANDA answers a field it refuses: no transaction', async () => {
    const recorded = JSON.parse(
      readFileSync(resolve(OANDA, 'fixtures/oandapyV20/jupyter_recorded.json'), 'utf8'),
    ).error_invalid_instrument_order_create;
    const before = (await call('GET', `${A}`)).body.account.lastTransactionID;
    const r = await v20('POST', `${A}/orders`, {
      order: { type: 'FIXED_PRICE', instrument: 'EUR_USD', units: '100', price: '1.10000' },
    });
    expect(r.status).toBe(recorded.status);
    expect(Object.keys(r.body)).toEqual(Object.keys(recorded.response));
    expect(r.body.errorMessage).toMatch(/^Invalid value specified for 'order\.type'/);
    expect((await call('GET', `${A}`)).body.account.lastTransactionID).toBe(before);
    const txs = (await call('GET', `${A}/transactions/sinceid?id=0`)).body.transactions as { type: string }[];
    expect(txs.filter((t) => t.type.startsWith('FIXED_PRICE'))).toEqual([]);
  });

  it('a replace of a filled order is a 404 with orderCancelRejectTransaction', async () => {
    await flat();
    const limit = await v20('POST', `${A}/orders`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '100', price: '1.10100' },
    });
    const id = limit.body.orderCreateTransaction.id as string;
    expect(limit.body.orderFillTransaction?.orderID).toBe(id);
    const r = await v20('PUT', `${A}/orders/${id}`, {
      order: { type: 'LIMIT', instrument: 'EUR_USD', units: '100', price: '1.09000' },
    });
    expect(r.status).toBe(404);
    expect(r.body.orderCancelRejectTransaction).toMatchObject({
      type: 'ORDER_CANCEL_REJECT',
      rejectReason: 'ORDER_DOESNT_EXIST',
    });
    expect(r.body.orderRejectTransaction).toBeUndefined();
  });

  it('an empty position-close body closes both sides (each defaults to ALL); with no position it is CLOSEOUT_POSITION_DOESNT_EXIST', async () => {
    const spec = readFileSync(resolve(OANDA, 'service-specification.md'), 'utf8');
    expect(spec).toMatch(/positions\/\{instrument\}\/close` \| body: `longUnits` \(string, default `ALL`/);
    await flat();
    await open('300');
    const long = await v20('PUT', `${A}/positions/EUR_USD/close`, {});
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    expect(long.body.longOrderFillTransaction.units).toBe('-300');
    expect(long.body.longOrderCreateTransaction.longPositionCloseout).toEqual({
      instrument: 'EUR_USD',
      units: 'ALL',
    });
    expect(long.body.shortOrderCreateTransaction).toBeUndefined();
    await open('-200');
    const short = await v20('PUT', `${A}/positions/EUR_USD/close`);
    expect(short.status, JSON.stringify(short.body)).toBe(200);
    expect(short.body.shortOrderFillTransaction.units).toBe('200');
    const none = await v20('PUT', `${A}/positions/EUR_USD/close`, {});
    expect(none.status).toBe(400);
    expect(none.body.longOrderRejectTransaction).toMatchObject({
      rejectReason: 'CLOSEOUT_POSITION_DOESNT_EXIST',
    });
  });
});
