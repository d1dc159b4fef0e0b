/**
 * A small legacy (/v1) client, written from the service specification's legacy sections alone
 * (form-encoded bodies, numbers as JSON numbers, descending pages with Link / maxId), drives a whole
 * flow against a real sandbox over HTTP.
 */
import { execFileSync } from 'node:child_process';
import { inflateRawSync, crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../server.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** The legacy client: paths and bodies as the specification gives them. */
class LegacyClient {
  constructor(
    readonly base: string,
    readonly token?: string,
  ) {}

  async send(method: string, path: string, fields?: Record<string, string | number>): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.token !== undefined) headers.Authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (fields) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(
        Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
    }
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === '' ? {} : JSON.parse(text) };
  }

  accounts = () => this.send('GET', '/v1/accounts');
  account = (id: number) => this.send('GET', `/v1/accounts/${id}`);
  order = (id: number, f: Record<string, string | number>) =>
    this.send('POST', `/v1/accounts/${id}/orders`, f);
  orders = (id: number, q = '') => this.send('GET', `/v1/accounts/${id}/orders${q}`);
  patchOrder = (id: number, o: number, f: Record<string, string | number>) =>
    this.send('PATCH', `/v1/accounts/${id}/orders/${o}`, f);
  cancel = (id: number, o: number) => this.send('DELETE', `/v1/accounts/${id}/orders/${o}`);
  trades = (id: number, q = '') => this.send('GET', `/v1/accounts/${id}/trades${q}`);
  trade = (id: number, t: number) => this.send('GET', `/v1/accounts/${id}/trades/${t}`);
  patchTrade = (id: number, t: number, f: Record<string, string | number>) =>
    this.send('PATCH', `/v1/accounts/${id}/trades/${t}`, f);
  closeTrade = (id: number, t: number) => this.send('DELETE', `/v1/accounts/${id}/trades/${t}`);
  transactions = (id: number, q = '') => this.send('GET', `/v1/accounts/${id}/transactions${q}`);
}

/** The one file of a zip, read from its central directory (an independent reader of the container). */
function unzipOne(buf: Buffer): { name: string; data: Buffer } {
  const end = buf.length - 22;
  expect(buf.readUInt32LE(end)).toBe(0x06054b50);
  expect(buf.readUInt16LE(end + 10)).toBe(1);
  const dir = buf.readUInt32LE(end + 16);
  expect(buf.readUInt32LE(dir)).toBe(0x02014b50);
  const method = buf.readUInt16LE(dir + 10);
  const crc = buf.readUInt32LE(dir + 16);
  const size = buf.readUInt32LE(dir + 20);
  const usize = buf.readUInt32LE(dir + 24);
  const nameLen = buf.readUInt16LE(dir + 28);
  const local = buf.readUInt32LE(dir + 42);
  expect(buf.readUInt32LE(local)).toBe(0x04034b50);
  const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
  expect(method).toBe(8);
  const data = inflateRawSync(buf.subarray(start, start + size));
  expect(data.length).toBe(usize);
  expect(crc32(data) >>> 0).toBe(crc);
  return { name: buf.toString('utf8', dir + 46, dir + 46 + nameLen), data };
}

const BID = 1.1;
const ASK = 1.1002;

describe('a legacy client written from the specification drives a whole flow', () => {
  let sb: Sandbox;
  let c: LegacyClient;
  let acct: number;
  beforeAll(async () => {
    sb = await startSandbox({ feed: false });
    sb.pushPrice({ instrument: 'EUR_USD', bid: BID, ask: ASK });
    c = new LegacyClient(sb.url);
  });
  afterAll(() => sb.close());

  it('accounts, market order with SL and TP, limit order, modify, cancel, TP fill, close, pages, zip', async () => {
    // 1. Accounts: integers and numbers, not strings.
    const list = await c.accounts();
    expect(list.status).toBe(200);
    expect(list.body.accounts).toHaveLength(1);
    const item = list.body.accounts[0];
    expect(item).toEqual({
      accountId: expect.any(Number),
      accountName: 'Primary',
      accountCurrency: 'USD',
      marginRate: 0.02,
    });
    acct = item.accountId;
    expect(Number.isSafeInteger(acct)).toBe(true);
    const detail = await c.account(acct);
    expect(detail.body).toMatchObject({
      accountId: acct,
      balance: 100000,
      unrealizedPl: 0,
      realizedPl: 0,
      marginUsed: 0,
      marginAvail: 100000,
      openTrades: 0,
      openOrders: 0,
      marginRate: 0.02,
      accountCurrency: 'USD',
    });
    expect(detail.headers.get('x-v3-replacement')).toMatch(/GET \/v3\/accounts\/\{accountID\}/);

    // 2. Market buy with stop loss and take profit: 200, tradeOpened carries them.
    const mk = await c.order(acct, {
      instrument: 'EUR_USD',
      units: 1000,
      side: 'buy',
      type: 'market',
      stopLoss: 1.095,
      takeProfit: 1.105,
    });
    expect(mk.status).toBe(200);
    expect(mk.body).toMatchObject({ instrument: 'EUR_USD', price: ASK, tradesClosed: [], tradeReduced: {} });
    expect(mk.body.tradeOpened).toEqual({
      id: expect.any(Number),
      units: 1000,
      side: 'buy',
      takeProfit: 1.105,
      stopLoss: 1.095,
      trailingStop: 0,
    });
    const t1 = mk.body.tradeOpened.id as number;
    const tr = await c.trade(acct, t1);
    expect(tr.body).toEqual({
      id: t1,
      units: 1000,
      side: 'buy',
      instrument: 'EUR_USD',
      time: mk.body.time,
      price: ASK,
      takeProfit: 1.105,
      stopLoss: 1.095,
      trailingStop: 0,
      trailingAmount: 0,
    });
    const afterBuy = (await c.account(acct)).body;
    expect(afterBuy.openTrades).toBe(1);
    expect(afterBuy.unrealizedPl).toBeCloseTo((BID - ASK) * 1000, 4);

    // 3. Limit sell, pending: 201 with Location; TP and SL are in the trade, not the order list.
    const lim = await c.order(acct, {
      instrument: 'EUR_USD',
      units: 500,
      side: 'sell',
      type: 'limit',
      price: 1.11,
      expiry: '2024-01-09T00:00:00Z',
      takeProfit: 1.1,
    });
    expect(lim.status).toBe(201);
    const oid = lim.body.orderOpened.id as number;
    expect(lim.headers.get('location')).toBe(`${sb.url}/v1/accounts/${acct}/orders/${oid}`);
    expect(lim.body.orderOpened).toMatchObject({
      units: 500,
      side: 'sell',
      takeProfit: 1.1,
      stopLoss: 0,
      upperBound: 0,
      lowerBound: 0,
      trailingStop: 0,
    });
    const byLocation = await c.send('GET', lim.headers.get('location')!);
    expect(byLocation.body).toMatchObject({
      id: oid,
      type: 'limit',
      price: 1.11,
      units: 500,
      takeProfit: 1.1,
    });
    const orders = await c.orders(acct);
    expect(orders.body.orders.map((o: { id: number }) => o.id)).toEqual([oid]);
    expect(orders.headers.get('x-result-count')).toBe('1');

    // 4. Modify: only the given fields change; 0 removes the take profit; the ID stays.
    const mod = await c.patchOrder(acct, oid, { units: 700, takeProfit: 0, trailingStop: 15.5 });
    expect(mod.status).toBe(200);
    expect(mod.body).toMatchObject({
      id: oid,
      units: 700,
      price: 1.11,
      side: 'sell',
      takeProfit: 0,
      stopLoss: 0,
      trailingStop: 15.5,
      expiry: byLocation.body.expiry,
    });
    const bad = await c.patchOrder(acct, oid, { side: 'buy' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'side' cannot be changed/);

    // 5. Trade: add a trailing stop, remove the stop loss; the take profit stays.
    const pt = await c.patchTrade(acct, t1, { stopLoss: 0, trailingStop: 20 });
    expect(pt.body).toMatchObject({ id: t1, takeProfit: 1.105, stopLoss: 0, trailingStop: 20 });
    expect(pt.body.trailingAmount).toBeCloseTo(BID - 0.002, 5);

    // 6. Cancel the limit order: the answer is the closing transaction.
    const cancel = await c.cancel(acct, oid);
    expect(cancel.body).toMatchObject({ instrument: 'EUR_USD', units: 700, side: 'sell', price: 1.11 });
    expect((await c.orders(acct)).body.orders).toEqual([]);
    expect((await c.cancel(acct, oid)).status).toBe(404);

    // 7. A second trade (another instrument) whose take profit the market reaches: TAKE_PROFIT_FILLED.
    sb.pushPrice({ instrument: 'GBP_USD', bid: 1.27, ask: 1.2702 });
    const mk2 = await c.order(acct, {
      instrument: 'GBP_USD',
      units: 200,
      side: 'buy',
      type: 'market',
      takeProfit: 1.271,
    });
    const t2 = mk2.body.tradeOpened.id as number;
    expect(mk2.body.price).toBe(1.2702);
    sb.pushPrice({ instrument: 'GBP_USD', bid: 1.2712, ask: 1.2714 });
    expect((await c.trade(acct, t2)).status).toBe(404);

    // 8. Close the first trade.
    const before = (await c.account(acct)).body.balance as number;
    const openNow = (await c.trades(acct)).body.trades as { id: number; units: number; price: number }[];
    const first = openNow.find((t) => t.id === t1)!;
    const closed = await c.closeTrade(acct, t1);
    expect(closed.status).toBe(200);
    // The answer describes the close (its id is the TRADE_CLOSE's): a long is closed by a sell, as the history says.
    expect(closed.body).toMatchObject({ instrument: 'EUR_USD', price: BID, side: 'sell' });
    expect(closed.body.profit).toBeCloseTo((BID - first.price) * first.units, 4);
    expect((await c.account(acct)).body.balance).toBeCloseTo(before + closed.body.profit, 4);
    expect((await c.trades(acct)).body.trades).toEqual([]);

    // 9. Transactions: legacy types, descending, numbers.
    const all = await c.transactions(acct);
    const txs = all.body.transactions as { id: number; type: string; [k: string]: unknown }[];
    expect(txs.map((t) => t.id)).toEqual([...txs.map((t) => t.id)].sort((a, b) => b - a));
    const types = txs.map((t) => t.type);
    for (const want of [
      'MARKET_ORDER_CREATE',
      'LIMIT_ORDER_CREATE',
      'ORDER_UPDATE',
      'TRADE_UPDATE',
      'ORDER_CANCEL',
      'TRADE_CLOSE',
    ])
      expect(types, want).toContain(want);
    const create = txs.find(
      (t) => t.type === 'MARKET_ORDER_CREATE' && (t.tradeOpened as { id: number } | undefined)?.id === t1,
    )!;
    expect(create).toMatchObject({
      accountId: acct,
      instrument: 'EUR_USD',
      side: 'buy',
      units: 1000,
      price: ASK,
      pl: 0,
      interest: 0,
      accountBalance: 100000,
      takeProfitPrice: 1.105,
      stopLossPrice: 1.095,
      tradeOpened: { id: t1, units: 1000 },
    });
    expect(txs.find((t) => t.type === 'ORDER_UPDATE')).toMatchObject({
      orderId: oid,
      reason: 'REPLACES_ORDER',
      units: 700,
      trailingStopLossDistance: 15.5,
    });
    expect(txs.find((t) => t.type === 'ORDER_CANCEL')).toMatchObject({
      orderId: oid,
      reason: 'CLIENT_REQUEST',
      id: cancel.body.id,
    });
    expect(txs.find((t) => t.type === 'TRADE_CLOSE')).toMatchObject({
      tradeId: t1,
      id: closed.body.id,
      side: 'sell',
    });
    expect(txs.find((t) => t.type === 'TAKE_PROFIT_FILLED')).toMatchObject({
      tradeId: t2,
      instrument: 'GBP_USD',
      side: 'sell',
      units: 200,
    });
    const tp = txs.find((t) => t.type === 'TAKE_PROFIT_FILLED')!;
    // The price jumped over the take profit: filled at the bid it jumped to (never worse than 1.271).
    expect(tp.price).toBeGreaterThanOrEqual(1.271);
    expect(tp.pl as number).toBeCloseTo(((tp.price as number) - 1.2702) * 200, 4);
    const one = await c.send('GET', `/v1/accounts/${acct}/transactions/${create.id}`);
    expect(one.body).toEqual(create);

    // 10. Pages with count: Link with maxId and X-Result-Count; one listing with count per 60 s.
    const seen: number[] = [];
    let next: string | undefined = `/v1/accounts/${acct}/transactions?count=3`;
    let limited = 0;
    while (next !== undefined) {
      const p = await c.send('GET', next);
      if (p.status === 429) {
        limited++;
        expect(Number(p.headers.get('retry-after'))).toBeGreaterThan(0);
        // The sandbox clock is the rate limit's clock: move it past the window instead of waiting.
        sb.advance(60_000);
        continue;
      }
      expect(p.status).toBe(200);
      expect(Number(p.headers.get('x-result-count'))).toBe(p.body.transactions.length);
      seen.push(...p.body.transactions.map((t: { id: number }) => t.id));
      const link = p.headers.get('link');
      if (link === null) break;
      const m = /^<([^>]+)>; rel="next"$/.exec(link)!;
      const url = new URL(m[1]!);
      // maxId: the next unreturned transaction (the one after the last seen in the full listing).
      expect(Number(url.searchParams.get('maxId'))).toBe(txs[seen.length]!.id);
      next = url.pathname + url.search;
      // The next request is at once: it is refused until the clock moves.
      expect((await c.send('GET', next)).status).toBe(429);
      limited++;
      sb.advance(60_000);
    }
    expect(limited).toBeGreaterThan(0);
    expect(seen).toEqual(txs.map((t) => t.id));

    // 11. The full history as a zip: 202 with Location; the file is served once written.
    const job = await c.send('GET', `/v1/accounts/${acct}/alltransactions`);
    expect(job.status).toBe(202);
    expect(job.body).toEqual({});
    const location = job.headers.get('location')!;
    expect((await c.send('GET', location.replace(/\.zip$/, '-nope.zip'))).status).toBe(404);
    let file: Response | undefined;
    for (let i = 0; i < 1000 && file === undefined; i++) {
      const r = await fetch(location);
      if (r.status === 200) file = r;
      else {
        expect(r.status).toBe(404);
        await r.text();
      }
    }
    expect(file?.headers.get('content-type')).toBe('application/zip');
    const buf = Buffer.from(await file!.arrayBuffer());
    const entry = unzipOne(buf);
    expect(entry.name).toBe(`transactions-${acct}.json`);
    const history = JSON.parse(entry.data.toString('utf8')) as { id: number }[];
    expect(history.map((t) => t.id)).toEqual(
      (await c.transactions(acct)).body.transactions.map((t: { id: number }) => t.id),
    );
    // And the system's unzip reads it too (a real process, when installed).
    let unzipped: string | undefined;
    try {
      const path = `${process.env.TMPDIR ?? '/tmp'}/fxflow-legacy-${process.pid}.zip`;
      (await import('node:fs')).writeFileSync(path, buf);
      unzipped = execFileSync('unzip', ['-p', path], { encoding: 'utf8' });
      (await import('node:fs')).rmSync(path);
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e;
      console.warn('unzip is not installed: the zip was checked with the test reader only');
    }
    if (unzipped !== undefined) expect(JSON.parse(unzipped)).toEqual(history);
  });

  it('list parameters: ids alone and at most 50, count 1..500, unknown parameters refused', async () => {
    const ids = Array.from({ length: 51 }, (_, i) => i + 1).join(',');
    expect((await c.transactions(acct, `?ids=${ids}`)).status).toBe(400);
    expect((await c.transactions(acct, '?ids=1,2&instrument=EUR_USD')).body.message).toMatch(/ids.*alone/);
    expect((await c.trades(acct, '?count=501')).status).toBe(400);
    expect((await c.orders(acct, '?count=0')).status).toBe(400);
    expect((await c.orders(acct, '?state=PENDING')).status).toBe(400);
    const some = (await c.transactions(acct, '?maxId=6&minId=2')).body.transactions as { id: number }[];
    expect(some.every((t) => t.id >= 2 && t.id <= 6)).toBe(true);
    const picked = await c.transactions(acct, `?ids=${some.map((t) => t.id).join(',')}`);
    expect(picked.body.transactions).toEqual(some);
  });

  it('bad orders get a clear error naming the field; a fill failure is an ORDER_CANCEL with its legacy reason', async () => {
    const missing = await c.order(acct, { instrument: 'EUR_USD', units: 10, side: 'buy', type: 'limit' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/price, expiry/);
    expect(
      (await c.order(acct, { instrument: 'EUR_USD', units: 10, side: 'long', type: 'market' })).body.message,
    ).toMatch(/side=long/);
    expect(
      (await c.order(acct, { instrument: 'EUR_USD', units: 1.5, side: 'buy', type: 'market' })).body.message,
    ).toMatch(/units=1.5/);
    const last = (await c.transactions(acct)).body.transactions[0].id;
    // A stop loss on the wrong side: the simulator's own validation rejects it (the same rule as /v3).
    const wrong = await c.order(acct, {
      instrument: 'EUR_USD',
      units: 10,
      side: 'buy',
      type: 'market',
      stopLoss: 1.2,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errorCode).toBe('STOP_LOSS_ON_FILL_LOSS');
    expect(wrong.body.message).toMatch(/STOP_LOSS_VIOLATION/);
    const now = (await c.transactions(acct)).body.transactions;
    expect(now[0]).toMatchObject({ type: 'ORDER_CANCEL', reason: 'STOP_LOSS_VIOLATION' });
    expect(now[0].id).toBeGreaterThan(last);
    // A request refused before the simulator (bad field) creates no transaction at all.
    expect(
      (
        await c.order(acct, {
          instrument: 'EUR_USD',
          units: 10,
          side: 'buy',
          type: 'stop',
          price: 1.2,
          expiry: 'soon',
        })
      ).body.message,
    ).toMatch(/expiry=soon/);
    expect((await c.transactions(acct)).body.transactions[0].id).toBe(now[0].id);
  });
});

describe('--require-token guards the legacy routes too', () => {
  it('401 without the token, 200 with it', async () => {
    const sb = await startSandbox({ requireToken: 'sekrit', feed: false });
    try {
      const refused = await new LegacyClient(sb.url).accounts();
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-v3-replacement')).toBe('GET /v3/accounts');
      expect((await new LegacyClient(sb.url, 'wrong').accounts()).status).toBe(401);
      expect((await new LegacyClient(sb.url, 'sekrit').accounts()).status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});
