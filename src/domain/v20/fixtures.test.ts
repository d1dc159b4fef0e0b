import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../../../test/shared.ts';
import {
  parseAccount,
  parseCandlesResponse,
  parseInstrument,
  parseOrder,
  parseOrderRequest,
  parsePosition,
  parseTrade,
  parsePricingStreamLine,
  parseResponse,
  parseTransaction,
  parseTransactionStreamLine,
  V20ParseError,
} from './parse.ts';
import type { Result } from '../result.ts';

warnIfNoShared('recorded real v20 responses (fixtures)');

const FIXTURES = join(OANDA, 'fixtures/oandapyV20');

function must<T>(r: Result<T, V20ParseError>, where: string): T {
  if (!r.ok) throw new Error(`${where}: ${r.error.message}`);
  return r.value;
}

describe.skipIf(!HAS_SHARED)('every recorded real v20 response parses', () => {
  it('parses all responses, stream lines and order request bodies of the oandapyV20 fixtures', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && f !== 'forexlabs.json');
    let responses = 0;
    let lines = 0;
    let bodies = 0;
    let transactions = 0;
    for (const file of files) {
      const entries = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Record<string, unknown>;
      for (const [key, value] of Object.entries(entries)) {
        if (key.startsWith('_source') || typeof value !== 'object' || value === null) continue;
        const e = value as {
          response?: unknown;
          lines?: unknown[];
          body?: { order?: unknown };
          order?: unknown;
          url?: string;
          request?: string;
        };
        const where = `${file} ${key}`;
        if (Array.isArray(e.response)) {
          // A recorded stream: one element per wire line.
          for (const l of e.response) {
            if (key.includes('pricing')) must(parsePricingStreamLine(l), where);
            else must(parseTransactionStreamLine(l), where);
            lines++;
          }
        } else if (e.response !== undefined) {
          must(parseResponse(e.response), where);
          responses++;
          const r = e.response as Record<string, unknown>;
          if (Array.isArray(r.candles) && r.granularity !== undefined) must(parseCandlesResponse(r), where);
          if (r.account !== undefined) must(parseAccount(r.account), where);
          for (const [k, v] of Object.entries(r)) {
            if (k.endsWith('Transaction')) {
              must(parseTransaction(v, k), where);
              transactions++;
            }
          }
          for (const t of (r.transactions as unknown[] | undefined) ?? []) {
            must(parseTransaction(t), where);
            transactions++;
          }
          for (const o of (r.orders as unknown[] | undefined) ?? []) must(parseOrder(o), where);
          for (const t of (r.trades as unknown[] | undefined) ?? []) must(parseTrade(t), where);
          if (r.trade !== undefined) must(parseTrade(r.trade), where);
          for (const p of (r.positions as unknown[] | undefined) ?? []) must(parsePosition(p), where);
          if (r.position !== undefined) must(parsePosition(r.position), where);
          for (const i of (r.instruments as unknown[] | undefined) ?? []) must(parseInstrument(i), where);
        }
        if (Array.isArray(e.lines)) {
          const url = `${e.url ?? ''} ${e.request ?? ''}`;
          for (const l of e.lines) {
            if (typeof l === 'string' && !l.trimStart().startsWith('{')) continue; // log text, not wire lines
            if (url.includes('pricing')) must(parsePricingStreamLine(l), where);
            else must(parseTransactionStreamLine(l), where);
            lines++;
          }
        }
        // Order create/replace request bodies: {order: OrderRequest}.
        const body = e.body ?? (key.endsWith('request_body') ? (value as { order?: unknown }) : undefined);
        if (body && typeof body === 'object' && 'order' in body && body.order !== undefined) {
          must(parseOrderRequest(body.order), where);
          bodies++;
        }
      }
    }
    // Pinned counts (counted independently from the files): a routing change that skips fixtures fails here.
    expect({ responses, lines, bodies, transactions }).toEqual({
      responses: 45,
      lines: 17,
      bodies: 4,
      transactions: 29,
    });
  });
});

describe('parse errors name the field', () => {
  const fill = {
    id: '7579',
    time: '2017-03-09T13:22:13.832587780Z',
    batchID: '7578',
    accountID: '101-004-1435156-001',
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
  };

  it('accepts a valid ORDER_FILL and keeps decimals as strings', () => {
    const r = parseTransaction(fill);
    expect(r.ok).toBe(true);
    if (r.ok) expect((r.value as { units: string }).units).toBe('10000');
  });

  it.each([
    [
      { ...fill, tradeOpened: { tradeID: '7579', units: 10000 } },
      'transaction.tradeOpened.units',
      /decimal string/,
    ],
    [{ ...fill, accountBalance: undefined }, 'transaction.accountBalance', /required in ORDER_FILL/],
    [{ ...fill, time: 'yesterday' }, 'transaction.time', /RFC 3339/],
    [{ ...fill, type: 'ORDER_FILLED' }, 'transaction.type', /one of/],
    [
      { ...fill, tradesClosed: [{ tradeID: '1' }] },
      'transaction.tradesClosed[0].units',
      /required in TradeReduce/,
    ],
  ])('%#: names %s', (bad, path, message) => {
    const r = parseTransaction(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBeInstanceOf(V20ParseError);
      expect(r.error.path).toBe(path);
      expect(r.error.message).toMatch(message);
      expect(r.error.message.startsWith(path)).toBe(true);
    }
  });

  it('a malformed stream line is an error value, not an exception', () => {
    const r = parsePricingStreamLine('{"type":"PRICE","bids":[');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/one JSON object per line/);
  });
});
