import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V20Error } from '../adapters/v20/errors.ts';
import { V20Http } from '../adapters/v20/http.ts';
import { retiredCall } from '../domain/v20/retired.ts';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/** [method, retired path, what the answer must name]. */
const CASES: readonly (readonly [string, string, RegExp])[] = [
  ['GET', '/v1/accounts', /GET \/v3\/accounts\b/],
  ['GET', '/v1/accounts/12345/orders', /GET \/v3\/accounts\/\{accountID\}\/(orders|pendingOrders)/],
  ['POST', '/v1/accounts/12345/orders', /POST \/v3\/accounts\/\{accountID\}\/orders/],
  [
    'PATCH',
    '/v1/accounts/12345/trades/7',
    /PUT \/v3\/accounts\/\{accountID\}\/trades\/\{tradeSpecifier\}\/orders/,
  ],
  [
    'DELETE',
    '/v1/accounts/12345/trades/7',
    /PUT \/v3\/accounts\/\{accountID\}\/trades\/\{tradeSpecifier\}\/close/,
  ],
  [
    'DELETE',
    '/v1/accounts/12345/orders/9',
    /PUT \/v3\/accounts\/\{accountID\}\/orders\/\{orderSpecifier\}\/cancel/,
  ],
  ['GET', '/v1/prices', /GET \/v3\/accounts\/\{accountID\}\/pricing/],
  ['GET', '/v1/candles', /GET \/v3\/instruments\/\{instrument\}\/candles/],
  ['GET', '/v1/events', /GET \/v3\/accounts\/\{accountID\}\/transactions\/stream/],
  ['GET', '/v1/something-else', /\/v3/],
  ['GET', '/labs/v1/historical_position_ratios', /GET \/v3\/instruments\/\{instrument\}\/positionBook/],
  ['GET', '/labs/v1/orderbook_data', /GET \/v3\/instruments\/\{instrument\}\/orderBook/],
];

describe('retired OANDA endpoints', () => {
  it('every legacy v1 call and removed labs call maps to a v20 replacement; OAuth and /v3 are not retired', () => {
    for (const [m, p, want] of CASES) expect(retiredCall(m, p)?.message, `${m} ${p}`).toMatch(want);
    expect(retiredCall('GET', '/v1/oauth2/authorize')).toBeUndefined();
    expect(retiredCall('GET', '/v3/accounts')).toBeUndefined();
    expect(retiredCall('GET', '/labs/v1/calendar')).toBeUndefined();
  });

  describe('the sandbox serves the legacy generation; every answer names the /v3 replacement', () => {
    let sb: Sandbox;
    beforeAll(async () => {
      sb = await startSandbox();
    });
    afterAll(() => sb.close());

    it('X-V3-Replacement on every /v1 answer; calls outside the legacy generation it serves, and removed labs calls, are 404 naming the replacement', async () => {
      /** Served by the legacy route (see src/sandbox/legacy/), the others are not. */
      const served = /^\/v1\/accounts/;
      for (const [m, p, want] of CASES) {
        const r = await call(m, `${sb.url}${p}?instrument=EUR_USD`);
        if (p.startsWith('/v1/')) expect(r.headers.get('x-v3-replacement'), `${m} ${p}`).toMatch(want);
        if (served.test(p)) {
          // Account 12345 does not exist: a 404 that names the accounts served, not a retired endpoint.
          if (p !== '/v1/accounts') {
            expect(r.status, `${m} ${p}`).toBe(404);
            expect(r.body.errorCode).toBe('INVALID_ACCOUNT_ID');
          } else expect(r.status).toBe(200);
          continue;
        }
        expect(r.status, `${m} ${p}`).toBe(404);
        expect(r.body.errorMessage).toMatch(want);
        expect(r.body.errorCode).toBe('RETIRED_ENDPOINT');
        if (p.startsWith('/v1/')) expect(r.body.message).toBe(r.body.errorMessage);
      }
    });
  });

  describe('the v20 adapter refuses them without sending a request', () => {
    it('request and openStream throw V20_UNSUPPORTED naming the /v3 call; the server sees nothing', async () => {
      const sb = await startSandbox();
      const http = new V20Http({ baseUrl: sb.url, log: pino({ level: 'silent' }), retries: 0 });
      try {
        const before = sb.stats().requests;
        const e1 = await http
          .request({ method: 'GET', path: '/v1/candles', query: { instrument: 'EUR_USD' } })
          .catch((e: unknown) => e);
        expect(e1).toBeInstanceOf(V20Error);
        expect((e1 as V20Error).code).toBe('V20_UNSUPPORTED');
        expect((e1 as V20Error).message).toMatch(
          /GET \/v3\/instruments\/\{instrument\}\/candles.*no request was sent/,
        );
        const e2 = await http
          .request({ method: 'POST', path: '/v1/accounts/1/orders', body: {} })
          .catch((e: unknown) => e);
        expect((e2 as V20Error).message).toMatch(/POST \/v3\/accounts\/\{accountID\}\/orders/);
        const e3 = await http
          .openStream('/v1/prices', { instruments: 'EUR_USD' }, new AbortController().signal)
          .catch((e: unknown) => e);
        expect((e3 as V20Error).code).toBe('V20_UNSUPPORTED');
        expect((e3 as V20Error).message).toMatch(/pricing\/stream/);
        expect(sb.stats().requests).toBe(before);
        // A v20 call through the same client still works.
        expect(
          (await http.request<{ accounts: unknown[] }>({ method: 'GET', path: '/v3/accounts' })).body.accounts
            .length,
        ).toBe(1);
      } finally {
        await http.close();
        await sb.close();
      }
    });
  });
});
