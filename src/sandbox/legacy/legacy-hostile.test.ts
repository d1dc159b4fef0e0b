/**
 * The legacy routes under hostile input, and the migration table against the routes: random paths,
 * methods, queries and form bodies never crash the sandbox (no 500), every answer is JSON (or the
 * zip) with the /v3 replacement named, and the account is unchanged by refused requests.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../server.ts';
import { LEGACY_ENDPOINTS, formatLegacyReport, LegacyCallLog } from './migration.ts';

describe('legacy routes under hostile input', () => {
  let sb: Sandbox;
  let acct: number;
  beforeAll(async () => {
    sb = await startSandbox({ feed: false });
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    acct = ((await (await fetch(`${sb.url}/v1/accounts`)).json()) as { accounts: { accountId: number }[] })
      .accounts[0]!.accountId;
  });
  afterAll(() => sb.close());

  it('every endpoint of the migration table is served (no RETIRED answer) and names a /v3 call', async () => {
    for (const e of LEGACY_ENDPOINTS) {
      expect(e.replacement).toMatch(/\/v3\//);
      const path = e.template.replace(':account_id', String(acct)).replace(/:[a-z_]+/g, '999999');
      const r = await fetch(`${sb.url}${path}`, { method: e.method });
      const text = await r.text();
      const body = (text === '' ? {} : JSON.parse(text)) as { errorCode?: string };
      expect(body.errorCode, `${e.method} ${path}`).not.toBe('RETIRED_ENDPOINT');
      expect(r.status, `${e.method} ${path}`).toBeLessThan(500);
      expect(r.headers.get('x-v3-replacement')).toBe(e.replacement);
    }
  });

  it('random paths, queries and form bodies: never a 500, always a JSON body with a message, the account intact', async () => {
    const lastID = async (): Promise<string> =>
      (
        (await (await fetch(`${sb.url}/v3/accounts/${sb.accountIDs[0]}/summary`)).json()) as {
          account: { lastTransactionID: string };
        }
      ).account.lastTransactionID;
    /** Refusals made before the simulator is asked: they must leave no transaction. */
    const early = new Set([
      'INVALID_ARGUMENT',
      'MISSING_ARGUMENT',
      'INVALID_INSTRUMENT',
      'RETIRED_ENDPOINT',
      'INVALID_ACCOUNT_ID',
      'ORDER_NOT_FOUND',
      'TRADE_NOT_FOUND',
      'TRANSACTION_NOT_FOUND',
      'FILE_NOT_READY',
      'RATE_LIMIT',
    ]);
    let refused = 0;
    const segment = fc.oneof(
      fc.constantFrom(
        'accounts',
        String(acct),
        'orders',
        'trades',
        'transactions',
        'alltransactions',
        '0',
        '-1',
        '%E0%A4%A',
        '1e3',
        'history',
      ),
      fc
        .string({ maxLength: 6 })
        .filter((x) => x !== '.' && x !== '..')
        .map(encodeURIComponent),
    );
    const field = fc.constantFrom(
      'instrument',
      'units',
      'side',
      'type',
      'price',
      'expiry',
      'stopLoss',
      'takeProfit',
      'trailingStop',
      'upperBound',
      'lowerBound',
      'maxId',
      'minId',
      'count',
      'ids',
    );
    const value = fc.oneof(
      fc.constantFrom(
        'EUR_USD',
        'XXX_YYY',
        'buy',
        'sell',
        'market',
        'limit',
        '0',
        '-5',
        '1.5',
        '1e400',
        'NaN',
        '',
        '501',
        '1,2,3',
        '2024-01-09T00:00:00Z',
      ),
      fc.string({ maxLength: 8 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(field, value), { maxLength: 4 }),
        fc.array(fc.tuple(field, value), { maxLength: 6 }),
        async (method, segs, query, form) => {
          const q = new URLSearchParams(query).toString();
          const url = `${sb.url}/v1/${segs.join('/')}${q ? `?${q}` : ''}`;
          const last = await lastID();
          const withBody = method !== 'GET' && method !== 'DELETE';
          const r = await fetch(
            url,
            withBody
              ? {
                  method,
                  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
                  body: new URLSearchParams(form).toString(),
                }
              : { method },
          );
          expect(r.status, `${method} ${url}`).toBeLessThan(500);
          const text = await r.text();
          if (r.headers.get('content-type') === 'application/json' && text !== '') {
            const body = JSON.parse(text) as { message?: string };
            if (r.status >= 400) expect(typeof body.message).toBe('string');
            const code = (body as { errorCode?: string }).errorCode;
            if (r.status === 405 || (code !== undefined && early.has(code))) {
              refused++;
              expect(await lastID(), `${method} ${url} refused (${code}) but made a transaction`).toBe(last);
            }
          }
          expect(r.headers.get('x-v3-replacement') ?? '').toMatch(/v3|v20/);
        },
      ),
      { numRuns: 300 },
    );
    expect(refused).toBeGreaterThan(50);
  }, 120_000);

  it('the Markdown report is a checklist with the field mapping', () => {
    const log = new LegacyCallLog();
    log.record(LEGACY_ENDPOINTS[3]!);
    log.record(LEGACY_ENDPOINTS[3]!);
    log.record(LEGACY_ENDPOINTS[0]!);
    const md = formatLegacyReport(log.entries(), false);
    expect(md).toContain('## POST /v1/accounts/:account_id/orders (2 calls)');
    expect(md).toContain('- [ ] Replace with: POST /v3/accounts/{accountID}/orders');
    expect(md).toContain('| side | sign of order.units');
    expect(md.indexOf('POST /v1')).toBeLessThan(md.indexOf('## GET /v1/accounts (1 call)'));
    expect(formatLegacyReport([], false)).toContain('No legacy call was made.');
  });
});
