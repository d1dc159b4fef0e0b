import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../shared.ts';
import { formatViolations, OpenApiValidator } from './openapi.ts';

warnIfNoShared('OpenAPI response validator (contract)');

const FIXTURES = join(OANDA, 'fixtures/oandapyV20');
const ACCOUNT = '101-004-1435156-001';
const A = `/v3/accounts/${ACCOUNT}`;

/**
 * The oandapyV20 fixtures do not say the method or status, and some `url`s are wrong (`instuments`,
 * `/details`, trades' `close` for every trade call): the operation each one recorded, by its key.
 */
const RECORDED: readonly [file: string, key: string, method: string, path: string, status: number][] = [
  ['accounts', '_v3_accounts', 'GET', '/v3/accounts', 200],
  ['accounts', '_v3_account_by_accountID', 'GET', A, 200],
  ['accounts', '_v3_account_by_accountID_summary', 'GET', `${A}/summary`, 200],
  ['accounts', '_v3_account_by_accountID_instruments', 'GET', `${A}/instruments`, 200],
  ['accounts', '_v3_accounts_accountID_account_config', 'PATCH', `${A}/configuration`, 200],
  ['accounts', '_v3_accounts_accountID_account_changes', 'GET', `${A}/changes?sinceTransactionID=2308`, 200],
  ['instruments', '_v3_instruments_instrument_orderbook', 'GET', '/v3/instruments/EUR_USD/orderBook', 200],
  [
    'instruments',
    '_v3_instruments_instrument_positionbook',
    'GET',
    '/v3/instruments/EUR_USD/positionBook',
    200,
  ],
  [
    'instruments',
    '_v3_instruments_instrument_candles',
    'GET',
    '/v3/instruments/DE30_EUR/candles?count=5&granularity=M5',
    200,
  ],
  ['orders', '_v3_accounts_accountID_orders_create', 'POST', `${A}/orders`, 201],
  ['orders', '_v3_accounts_accountID_orders_pending', 'GET', `${A}/pendingOrders`, 200],
  ['orders', '_v3_accounts_accountID_order_cancel', 'PUT', `${A}/orders/2307/cancel`, 200],
  ['orders', '_v3_accounts_accountID_orders_list', 'GET', `${A}/orders`, 200],
  ['orders', '_v3_accounts_accountID_order_details', 'GET', `${A}/orders/2309`, 200],
  ['orders', '_v3_accounts_accountID_order_replace', 'PUT', `${A}/orders/2304`, 201],
  [
    'orders',
    '_v3_accounts_accountID_order_clientextensions',
    'PUT',
    `${A}/orders/2304/clientExtensions`,
    200,
  ],
  ['positions', '_v3_accounts_accountID_positions', 'GET', `${A}/positions`, 200],
  ['positions', '_v3_accounts_accountID_openpositions', 'GET', `${A}/openPositions`, 200],
  ['positions', '_v3_accounts_accountID_positiondetails', 'GET', `${A}/positions/EUR_USD`, 200],
  ['positions', '_v3_accounts_accountID_position_close', 'PUT', `${A}/positions/EUR_USD/close`, 200],
  ['pricing', '_v3_accounts_accountID_pricing', 'GET', `${A}/pricing?instruments=EUR_USD,EUR_JPY`, 200],
  ['trades', '_v3_accounts_accountID_trades', 'GET', `${A}/trades`, 200],
  ['trades', '_v3_accounts_accountID_opentrades', 'GET', `${A}/openTrades`, 200],
  ['trades', '_v3_account_accountID_trades_details', 'GET', `${A}/trades/2315`, 200],
  ['trades', '_v3_account_accountID_trades_close', 'PUT', `${A}/trades/2315/close`, 200],
  ['trades', '_v3_account_accountID_trades_cltext', 'PUT', `${A}/trades/2315/clientExtensions`, 200],
  ['trades', '_v3_account_accountID_trades_crcdo', 'PUT', `${A}/trades/2315/orders`, 200],
  ['transactions', '_v3_accounts_accountID_transactions', 'GET', `${A}/transactions?pageSize=200`, 200],
  ['transactions', '_v3_accounts_transaction_details', 'GET', `${A}/transactions/2304`, 200],
  [
    'transactions',
    '_v3_accounts_transaction_idrange',
    'GET',
    `${A}/transactions/idrange?from=2304&to=2306`,
    200,
  ],
  ['transactions', '_v3_accounts_transaction_sinceid', 'GET', `${A}/transactions/sinceid?id=2306`, 200],
];

type Recorded = { method: string; path: string; status: number; response: unknown; where: string };

/** Every recorded REST response: the oandapyV20 table above plus the Jupyter entries, which carry `request` and `status`. */
function recordedResponses(): Recorded[] {
  type Entry = { response?: unknown; request?: string; status?: number };
  const files = new Map<string, Record<string, Entry>>();
  const load = (f: string): Record<string, Entry> => {
    const got =
      files.get(f) ??
      (JSON.parse(readFileSync(join(FIXTURES, `${f}.json`), 'utf8')) as Record<string, Entry>);
    files.set(f, got);
    return got;
  };
  const out: Recorded[] = RECORDED.map(([file, key, method, path, status]) => {
    const e = load(file)[key];
    if (!e)
      throw new Error(`${file}.json has no entry ${key}: the fixture table of this test is out of date`);
    return { method, path, status, response: e.response, where: `${file}.json ${key}` };
  });
  for (const [key, e] of Object.entries(load('jupyter_recorded'))) {
    if (
      typeof e !== 'object' ||
      e.response === undefined ||
      typeof e.request !== 'string' ||
      e.status === undefined
    )
      continue;
    const [method = '', path = ''] = e.request.split(' ');
    out.push({
      method,
      path: path.replace('{accountID}', ACCOUNT),
      status: e.status,
      response: e.response,
      where: `jupyter_recorded.json ${key}`,
    });
  }
  return out;
}

/** Stream lines: oandapyV20 stream responses and the Jupyter stream recordings. */
function recordedLines(): { stream: 'pricing' | 'transaction'; line: unknown; where: string }[] {
  const out: { stream: 'pricing' | 'transaction'; line: unknown; where: string }[] = [];
  const read = (f: string) =>
    JSON.parse(readFileSync(join(FIXTURES, `${f}.json`), 'utf8')) as Record<
      string,
      { response?: unknown[]; lines?: unknown[]; request?: string }
    >;
  for (const l of read('pricing')._v3_accounts_accountID_pricing_stream?.response ?? [])
    out.push({ stream: 'pricing', line: l, where: 'pricing.json stream' });
  for (const l of read('transactions')._v3_accounts_transactions_stream?.response ?? [])
    out.push({ stream: 'transaction', line: l, where: 'transactions.json stream' });
  for (const [key, e] of Object.entries(read('jupyter_recorded'))) {
    if (!Array.isArray(e.lines) || typeof e.request !== 'string') continue;
    for (const l of e.lines)
      out.push({
        stream: e.request.includes('pricing') ? 'pricing' : 'transaction',
        line: l,
        where: `jupyter_recorded.json ${key}`,
      });
  }
  return out;
}

/**
 * The fixtures predate v20 GA in places (see the reference README): `TRIGGER_DEFAULT`, `POSITION_DEFAULT`,
 * a `partialFill` field, an instrument written `DE30/EUR`, and anonymised `<ACCOUNT>`/`<USERID>`. This
 * rewrites those to today's wire form and returns the JSON paths it touched, so a test can check that
 * exactly these, and nothing else, were what the validator reported.
 */
function modernise(
  value: unknown,
  path = '$',
  touched: string[] = [],
): { value: unknown; touched: string[] } {
  if (Array.isArray(value))
    return { value: value.map((v, i) => modernise(v, `${path}[${i}]`, touched).value), touched };
  if (typeof value !== 'object' || value === null) return { value, touched };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = `${path}.${k}`;
    if (k === 'partialFill') {
      touched.push(p);
      continue;
    }
    if (
      (k === 'triggerCondition' && v === 'TRIGGER_DEFAULT') ||
      (k === 'positionFill' && v === 'POSITION_DEFAULT')
    ) {
      touched.push(p);
      out[k] = 'DEFAULT';
    } else if (k === 'instrument' && v === 'DE30/EUR') {
      touched.push(p);
      out[k] = 'DE30_EUR';
    } else if (v === '<ACCOUNT>') {
      touched.push(p);
      out[k] = ACCOUNT;
    } else if (v === '<USERID>') {
      touched.push(p);
      out[k] = 1435156;
    } else out[k] = modernise(v, p, touched).value;
  }
  return { value: out, touched };
}

const fillResponse = () => ({
  orderCreateTransaction: {
    id: '7578',
    time: '2017-03-09T13:22:13.832587780Z',
    userID: 1435156,
    accountID: ACCOUNT,
    batchID: '7578',
    requestID: '42',
    type: 'MARKET_ORDER',
    instrument: 'EUR_USD',
    units: '10000',
    timeInForce: 'FOK',
    positionFill: 'DEFAULT',
    reason: 'CLIENT_ORDER',
  },
  orderFillTransaction: {
    id: '7579',
    time: '2017-03-09T13:22:13.832587780Z',
    userID: 1435156,
    accountID: ACCOUNT,
    batchID: '7578',
    requestID: '42',
    type: 'ORDER_FILL',
    orderID: '7578',
    instrument: 'EUR_USD',
    units: '10000',
    price: '1.05563',
    pl: '0.0000',
    financing: '0.0000',
    accountBalance: '102107.4442',
    reason: 'MARKET_ORDER',
    tradeOpened: { tradeID: '7579', units: '10000' },
  },
  relatedTransactionIDs: ['7578', '7579'],
  lastTransactionID: '7579',
});

describe.skipIf(!HAS_SHARED)('OpenAPI validator: recorded real v20 responses', () => {
  let v: OpenApiValidator;
  beforeAll(() => {
    v = OpenApiValidator.load();
  });

  it('every recorded REST response validates, once the documented pre-GA values are modernised', () => {
    const recorded = recordedResponses();
    const problems: string[] = [];
    for (const r of recorded) {
      if (!v.findOperation(r.method, r.path))
        problems.push(`${r.where}: no operation for ${r.method} ${r.path}`);
      const viol = v.validateResponse(r.method, r.path, r.status, modernise(r.response).value);
      problems.push(...formatViolations(`${r.where} ${r.method} ${r.path} ${r.status}`, viol));
    }
    expect(problems).toEqual([]);
    // 31 oandapyV20 entries + 14 Jupyter responses: a table change that drops fixtures fails here.
    expect(recorded.length).toBe(45);
  });

  it('without modernising, it reports exactly the pre-GA values and nothing else', () => {
    let reported = 0;
    for (const r of recordedResponses()) {
      const { touched } = modernise(r.response);
      const paths = v.validateResponse(r.method, r.path, r.status, r.response).map((x) => x.path);
      // `<USERID>` is reported once (wrong type), `<ACCOUNT>` once (bad format): one violation per touched field.
      expect(paths.sort(), r.where).toEqual([...touched].sort());
      reported += paths.length;
    }
    expect(reported).toBeGreaterThan(30); // the fixtures carry dozens of pre-GA values; all of them are caught
  });

  it('every recorded stream line validates as a Transaction, TransactionHeartbeat, ClientPrice or PricingHeartbeat', () => {
    const lines = recordedLines();
    const problems = lines.flatMap((l) => formatViolations(l.where, v.validateStreamLine(l.stream, l.line)));
    expect(problems).toEqual([]);
    expect(lines.length).toBe(17);
  });

  it('recorded order request bodies validate as OrderRequest; a zone-less gtdTime is caught', () => {
    const orders = JSON.parse(readFileSync(join(FIXTURES, 'orders.json'), 'utf8')) as Record<
      string,
      { body?: { order?: unknown } }
    >;
    const jupyter = JSON.parse(readFileSync(join(FIXTURES, 'jupyter_recorded.json'), 'utf8')) as Record<
      string,
      { order?: unknown }
    >;
    for (const key of ['_v3_accounts_accountID_orders_create', '_v3_accounts_accountID_order_replace']) {
      expect(v.validateDefinition('OrderRequest', orders[key]?.body?.order), key).toEqual([]);
    }
    expect(v.validateDefinition('OrderRequest', jupyter.order_create_market_request_body?.order)).toEqual([]);
    // OANDA accepted '2018-07-02T00:00:00' (read as New York time), but the definitions ask for RFC 3339.
    const gtd = v.validateDefinition('OrderRequest', jupyter.order_create_limit_gtd_request_body?.order);
    expect(gtd.map((x) => [x.path, x.schema])).toEqual([['$.gtdTime', 'LimitOrderRequest.gtdTime']]);
  });
});

describe.skipIf(!HAS_SHARED)('OpenAPI validator: broken copies fail at the right path', () => {
  let v: OpenApiValidator;
  beforeAll(() => {
    v = OpenApiValidator.load();
  });
  const post = (body: unknown) => v.validateResponse('POST', `${A}/orders`, 201, body);

  it('accepts the intact fill response', () => {
    expect(post(fillResponse())).toEqual([]);
  });

  it('a number where v20 sends a decimal string', () => {
    const b = fillResponse();
    (b.orderFillTransaction.tradeOpened as { units: unknown }).units = 10000;
    expect(post(b)).toEqual([
      {
        path: '$.orderFillTransaction.tradeOpened.units',
        schema: 'TradeOpen.units',
        message: 'expected a string, found number 10000',
      },
    ]);
  });

  it('a decimal string that is not a decimal', () => {
    const b = fillResponse();
    b.orderFillTransaction.price = '1,05563';
    const [x, ...rest] = post(b);
    expect(rest).toEqual([]);
    expect(x).toMatchObject({ path: '$.orderFillTransaction.price', schema: 'OrderFillTransaction.price' });
    expect(x?.message).toMatch(/decimal/);
  });

  it('a value outside an enum', () => {
    const b = fillResponse();
    b.orderCreateTransaction.timeInForce = 'GOOD_TILL_FOREVER';
    const [x, ...rest] = post(b);
    expect(rest).toEqual([]);
    expect(x).toMatchObject({
      path: '$.orderCreateTransaction.timeInForce',
      schema: 'MarketOrderTransaction.timeInForce',
    });
    expect(x?.message).toBe(
      '"GOOD_TILL_FOREVER" is not one of FOK, IOC'.replace('FOK', 'GTC, GTD, GFD, FOK'),
    );
  });

  it('an unknown field, reported unless turned off or allowed by name', () => {
    const b = fillResponse();
    (b.orderFillTransaction as Record<string, unknown>).requestedUnits = '10000'; // added by OANDA after 3.0.25
    expect(post(b)).toEqual([
      {
        path: '$.orderFillTransaction.requestedUnits',
        schema: 'OrderFillTransaction',
        message: 'property "requestedUnits" is not defined in OrderFillTransaction',
      },
    ]);
    expect(v.validateResponse('POST', `${A}/orders`, 201, b, { unknownProperties: false })).toEqual([]);
    expect(
      v.validateResponse('POST', `${A}/orders`, 201, b, {
        extraProperties: { OrderFillTransaction: ['requestedUnits'] },
      }),
    ).toEqual([]);
    expect(
      v.validateResponse('POST', `${A}/orders`, 201, b, {
        extraProperties: { MarketOrderTransaction: ['requestedUnits'] },
      }),
    ).toHaveLength(1);
  });

  it('a transaction whose type does not match its fields is checked against the type it claims', () => {
    const b = fillResponse();
    b.orderCreateTransaction.type = 'TAKE_PROFIT_ORDER'; // a take profit has no instrument, units or position fill
    const paths = post(b).map((x) => `${x.path} ${x.schema}`);
    expect(paths).toEqual([
      '$.orderCreateTransaction.instrument TakeProfitOrderTransaction',
      '$.orderCreateTransaction.units TakeProfitOrderTransaction',
      '$.orderCreateTransaction.positionFill TakeProfitOrderTransaction',
    ]);
  });

  it('an unknown transaction type', () => {
    const b = fillResponse();
    b.orderFillTransaction.type = 'ORDER_FILLED';
    // orderFillTransaction is typed OrderFillTransaction directly (not the Transaction base): the enum catches it.
    expect(post(b).map((x) => x.path)).toEqual(['$.orderFillTransaction.type']);
    expect(v.validateStreamLine('transaction', { ...b.orderFillTransaction })[0]).toMatchObject({
      path: '$.type',
      schema: 'Transaction.type',
    });
  });

  it('wrong shapes: array for object, object for array, null, integer for a string ID', () => {
    const b = fillResponse() as Record<string, unknown>;
    b.relatedTransactionIDs = { 0: '7578' };
    b.lastTransactionID = 7579;
    (b.orderCreateTransaction as Record<string, unknown>).userID = '1435156';
    (b.orderFillTransaction as Record<string, unknown>).tradeOpened = null;
    expect(
      post(b)
        .map((x) => x.path)
        .sort(),
    ).toEqual([
      '$.lastTransactionID',
      '$.orderCreateTransaction.userID',
      '$.orderFillTransaction.tradeOpened',
      '$.relatedTransactionIDs',
    ]);
  });

  it('bad formats: time, account ID, instrument name, currency', () => {
    const b = fillResponse();
    b.orderFillTransaction.time = '09/03/2017 13:22';
    b.orderFillTransaction.accountID = 'primary';
    b.orderFillTransaction.instrument = 'EURUSD';
    const viol = post(b);
    expect(viol.map((x) => x.path).sort()).toEqual([
      '$.orderFillTransaction.accountID',
      '$.orderFillTransaction.instrument',
      '$.orderFillTransaction.time',
    ]);
    const acct = v.validateResponse('GET', `${A}/summary`, 200, {
      account: { currency: 'usd' },
      lastTransactionID: '1',
    });
    expect(acct).toMatchObject([{ path: '$.account.currency', schema: 'AccountSummary.currency' }]);
  });

  it('finds each violation of a broken recorded response, deep in a list', () => {
    const raw = JSON.parse(readFileSync(join(FIXTURES, 'trades.json'), 'utf8')) as Record<
      string,
      { response: { trades: Record<string, unknown>[] } }
    >;
    const body = modernise(raw._v3_accounts_accountID_trades?.response).value as {
      trades: Record<string, unknown>[];
    };
    const t = body.trades[1] as Record<string, unknown>;
    t.state = 'ACTIVE';
    t.currentUnits = -1;
    t.extra = true;
    const viol = v.validateResponse('GET', `${A}/trades`, 200, body);
    expect(viol.map((x) => `${x.path} ${x.schema}`)).toEqual([
      '$.trades[1].state Trade.state',
      '$.trades[1].currentUnits Trade.currentUnits',
      '$.trades[1].extra Trade',
    ]);
  });

  it('unknown operations and undeclared statuses are violations', () => {
    expect(v.validateResponse('GET', '/v3/nowhere', 200, {})[0]).toMatchObject({
      path: '$',
      message: 'no operation GET /v3/nowhere in the definitions',
    });
    expect(v.validateResponse('DELETE', `${A}/orders`, 200, {})[0]?.message).toMatch(/no operation DELETE/);
    expect(v.validateResponse('GET', `${A}/orders`, 201, {})[0]?.message).toMatch(
      /status 201 is not a response of listOrders/,
    );
    expect(v.validateResponse('GET', '/accounts', 200, { accounts: [] })[0]?.message).toMatch(/no operation/); // the base path /v3 is required
  });

  it('error bodies validate against the shared responses ($ref to #/responses/404)', () => {
    expect(
      v.validateResponse('GET', `${A}/trades/99`, 404, {
        errorCode: 'NO_SUCH_TRADE',
        errorMessage: 'no trade 99',
      }),
    ).toEqual([]);
    // getTrade's 404 is the shared one: errorCode and errorMessage only (createOrder's 404 has lastTransactionID).
    expect(
      v.validateResponse('GET', `${A}/trades/99`, 404, {
        errorMessage: 'no trade 99',
        lastTransactionID: '3',
      }),
    ).toMatchObject([{ path: '$.lastTransactionID', schema: 'getTrade 404' }]);
    expect(
      v.validateResponse('POST', `${A}/orders`, 404, { errorMessage: 'no account', lastTransactionID: '3' }),
    ).toEqual([]);
    expect(
      v.validateResponse('GET', `${A}/summary`, 401, { errorMessage: 'Insufficient authorization', code: 1 }),
    ).toMatchObject([{ path: '$.code' }]);
  });

  it('stream lines: a heartbeat with a number time, a price with a string liquidity, a line that is not JSON', () => {
    expect(
      v.validateStreamLine('transaction', '{"type":"HEARTBEAT","lastTransactionID":"6","time":1}'),
    ).toMatchObject([{ path: '$.time', schema: 'TransactionHeartbeat.time' }]);
    const price = {
      type: 'PRICE',
      instrument: 'EUR_USD',
      time: '2017-01-01T00:00:00.000000000Z',
      tradeable: true,
      bids: [{ price: '1.1', liquidity: '1000000' }],
      asks: [{ price: '1.2', liquidity: 1000000 }],
      closeoutBid: '1.1',
      closeoutAsk: '1.2',
    };
    expect(v.validateStreamLine('pricing', price)).toMatchObject([
      { path: '$.bids[0].liquidity', schema: 'PriceBucket.liquidity' },
    ]);
    expect(v.validateStreamLine('pricing', '{"type":"PRICE",')[0]?.message).toMatch(/not JSON/);
  });
});

describe.skipIf(!HAS_SHARED)('OpenAPI validator: operations by concrete path', () => {
  let v: OpenApiValidator;
  beforeAll(() => {
    v = OpenApiValidator.load();
  });

  it.each([
    ['GET', `${A}/transactions/idrange?from=1&to=2`, 'getTransactionRange', {}],
    ['GET', `${A}/transactions/sinceid?id=1`, 'getTransactionsSinceId', {}],
    ['GET', `${A}/transactions/stream`, 'streamTransactions', {}],
    ['GET', `${A}/transactions/17`, 'getTransaction', { transactionID: '17' }],
    ['PUT', `${A}/orders/@my-id/cancel`, 'cancelOrder', { orderSpecifier: '@my-id' }],
    ['PUT', `${A}/orders/6`, 'replaceOrder', { orderSpecifier: '6' }],
    ['GET', `${A}/pricing/stream?instruments=EUR_USD`, 'streamPricing', {}],
    ['GET', `/v3/instruments/EUR_USD/candles`, 'getInstrumentCandles', { instrument: 'EUR_USD' }],
    ['GET', `${A}/instruments/EUR_USD/candles`, 'getInstrumentCandles', { instrument: 'EUR_USD' }],
    ['PATCH', `${A}/configuration`, 'configureAccount', {}],
  ])('%s %s → %s', (method, path, operationId, params) => {
    const op = v.findOperation(method, path);
    expect(op?.operationId).toBe(operationId);
    expect(op?.params).toMatchObject({ ...params, ...(path.startsWith(A) ? { accountID: ACCOUNT } : {}) });
  });

  it('lists the headers a response declares', () => {
    expect(v.declaredHeaders('POST', `${A}/orders`, 201)?.sort()).toEqual(['Location', 'RequestID']);
    expect(v.declaredHeaders('GET', `${A}/transactions`, 200)).toContain('RequestID');
    expect(v.declaredHeaders('GET', `${A}/trades/6`, 404)).toEqual(['RequestID']); // through #/responses/404
    expect(v.declaredHeaders('PUT', `${A}/positions/EUR_USD/close`, 200)?.sort()).toEqual([
      'Location',
      'RequestID',
    ]);
    expect(v.declaredHeaders('GET', `${A}/summary`, 404)).toBeUndefined(); // getAccountSummary declares no 404
  });

  it('maps every concrete transaction and order type of the definitions', () => {
    expect(v.concreteDefinition('Transaction', 'ORDER_FILL')).toBe('OrderFillTransaction');
    expect(v.concreteDefinition('Transaction', 'STOP_LOSS_ORDER_REJECT')).toBe(
      'StopLossOrderRejectTransaction',
    );
    expect(v.concreteDefinition('Order', 'TAKE_PROFIT')).toBe('TakeProfitOrder');
    expect(v.concreteDefinition('OrderRequest', 'TAKE_PROFIT')).toBe('TakeProfitOrderRequest');
    expect(v.concreteDefinition('Order', 'GUARANTEED_STOP_LOSS')).toBeUndefined(); // newer than 3.0.25
  });
});
