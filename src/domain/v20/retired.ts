/**
 * OANDA's retired interfaces and their v20 replacements: the legacy REST API (`/v1`, retired for
 * every account since 2018; v20 accounts only ever answered on `/v3`) and the labs endpoints OANDA
 * disabled (historical position ratios, order book data). The v20 adapter refuses to send such a
 * call; the sandbox serves the legacy generation (src/sandbox/legacy/) and answers the rest (removed
 * labs endpoints, /v1 paths outside the legacy generation) with an error naming the replacement.
 *
 * `/v1/oauth2/*` is not retired: OANDA's OAuth endpoints still live under that prefix.
 */

/** A call to a retired endpoint: the v20 call to use instead, and a message saying so. */
export interface RetiredCall {
  /** e.g. `GET /v3/instruments/{instrument}/candles`. */
  readonly replacement: string;
  /** One sentence naming the retired call and its replacement. */
  readonly message: string;
}

const A = '/v3/accounts/{accountID}';

/** [method or '*', legacy path pattern, replacement]. The first match wins. */
const LEGACY: readonly (readonly [string, RegExp, string])[] = [
  ['GET', /^\/v1\/accounts\/?$/, 'GET /v3/accounts'],
  [
    '*',
    /^\/v1\/accounts\/?$/,
    'GET /v3/accounts (v20 accounts are opened on the OANDA platform, not through the API)',
  ],
  ['GET', /^\/v1\/accounts\/[^/]+\/?$/, `GET ${A} (or ${A}/summary)`],
  ['PATCH', /^\/v1\/accounts\/[^/]+\/?$/, `PATCH ${A}/configuration`],
  ['GET', /^\/v1\/accounts\/[^/]+\/orders\/?$/, `GET ${A}/orders (or ${A}/pendingOrders)`],
  [
    'POST',
    /^\/v1\/accounts\/[^/]+\/orders\/?$/,
    `POST ${A}/orders with a JSON body {"order": {...}} and signed units (negative to sell) instead of side`,
  ],
  ['GET', /^\/v1\/accounts\/[^/]+\/orders\/[^/]+\/?$/, `GET ${A}/orders/{orderSpecifier}`],
  [
    'PATCH',
    /^\/v1\/accounts\/[^/]+\/orders\/[^/]+\/?$/,
    `PUT ${A}/orders/{orderSpecifier} (a replacing order)`,
  ],
  ['DELETE', /^\/v1\/accounts\/[^/]+\/orders\/[^/]+\/?$/, `PUT ${A}/orders/{orderSpecifier}/cancel`],
  ['GET', /^\/v1\/accounts\/[^/]+\/trades\/?$/, `GET ${A}/trades (or ${A}/openTrades)`],
  ['GET', /^\/v1\/accounts\/[^/]+\/trades\/[^/]+\/?$/, `GET ${A}/trades/{tradeSpecifier}`],
  [
    'PATCH',
    /^\/v1\/accounts\/[^/]+\/trades\/[^/]+\/?$/,
    `PUT ${A}/trades/{tradeSpecifier}/orders (take profit, stop loss, trailing stop)`,
  ],
  ['DELETE', /^\/v1\/accounts\/[^/]+\/trades\/[^/]+\/?$/, `PUT ${A}/trades/{tradeSpecifier}/close`],
  ['GET', /^\/v1\/accounts\/[^/]+\/positions\/?$/, `GET ${A}/positions (or ${A}/openPositions)`],
  ['GET', /^\/v1\/accounts\/[^/]+\/positions\/[^/]+\/?$/, `GET ${A}/positions/{instrument}`],
  ['DELETE', /^\/v1\/accounts\/[^/]+\/positions\/[^/]+\/?$/, `PUT ${A}/positions/{instrument}/close`],
  [
    'GET',
    /^\/v1\/accounts\/[^/]+\/transactions\/?$/,
    `GET ${A}/transactions/idrange?from=&to= (or ${A}/transactions for the pages, ${A}/transactions/sinceid?id=)`,
  ],
  ['GET', /^\/v1\/accounts\/[^/]+\/transactions\/[^/]+\/?$/, `GET ${A}/transactions/{transactionID}`],
  ['GET', /^\/v1\/accounts\/[^/]+\/alltransactions\/?$/, `GET ${A}/transactions (pages of idrange URLs)`],
  ['GET', /^\/v1\/prices\/?$/, `GET ${A}/pricing?instruments= (streaming: GET ${A}/pricing/stream)`],
  ['GET', /^\/v1\/candles\/?$/, 'GET /v3/instruments/{instrument}/candles'],
  ['GET', /^\/v1\/instruments\/?$/, `GET ${A}/instruments`],
  ['GET', /^\/v1\/events\/?$/, `GET ${A}/transactions/stream`],
];

const LABS: Readonly<Record<string, string>> = {
  '/labs/v1/historical_position_ratios': 'GET /v3/instruments/{instrument}/positionBook',
  '/labs/v1/orderbook_data': 'GET /v3/instruments/{instrument}/orderBook',
};

/**
 * The replacement of a call to a retired endpoint, or undefined when the call is not to one.
 * `path` is the request path without its query.
 *
 * @example retiredCall('GET', '/v1/candles')?.replacement // 'GET /v3/instruments/{instrument}/candles'
 */
export function retiredCall(method: string, path: string): RetiredCall | undefined {
  const labs = LABS[path.endsWith('/') ? path.slice(0, -1) : path];
  if (labs !== undefined) {
    return {
      replacement: labs,
      message: `${method} ${path} was removed by OANDA and is not served any more; use ${labs} instead`,
    };
  }
  if (!(path === '/v1' || path.startsWith('/v1/')) || path.startsWith('/v1/oauth2/')) return undefined;
  const m = method.toUpperCase();
  let replacement = 'the v20 REST API under /v3 (developer.oanda.com/rest-live-v20)';
  for (const [verb, re, to] of LEGACY) {
    if ((verb === m || verb === '*') && re.test(path)) {
      replacement = to;
      break;
    }
  }
  return {
    replacement,
    message: `${m} ${path} is OANDA's legacy v1 REST API, which OANDA retired (v20 accounts are served on /v3 only); use ${replacement} instead`,
  };
}
