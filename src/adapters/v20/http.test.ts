import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V20Error } from './errors.ts';
import { LineSplitter, V20Http, checkBaseUrl, nextLink, retryAfterMs, withQuery } from './http.ts';

describe('LineSplitter', () => {
  it('gives the same lines however the UTF-8 bytes are cut into chunks', () => {
    const line = fc
      .string({
        unit: fc.oneof(
          fc.constantFrom('a', '{', '"', ' ', '€', '日', '😀', 'é'),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        ),
        maxLength: 30,
      })
      .map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (lines, cuts, crlf) => {
          const text = lines.map((l) => l + (crlf ? '\r\n' : '\n')).join('');
          const bytes = new TextEncoder().encode(text);
          const split = new LineSplitter();
          const out: string[] = [];
          let i = 0;
          let k = 0;
          while (i < bytes.length) {
            const n = cuts[k++ % cuts.length]!;
            out.push(...split.push(bytes.subarray(i, i + n)));
            i += n;
          }
          out.push(...split.end());
          expect(out).toEqual(lines.filter((l) => l.length > 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns an unterminated last line at the end', () => {
    const s = new LineSplitter();
    expect(s.push(new TextEncoder().encode('{"a":1}\n{"b"'))).toEqual(['{"a":1}']);
    expect(s.push(new TextEncoder().encode(':2}'))).toEqual([]);
    expect(s.end()).toEqual(['{"b":2}']);
  });
});

describe('URL rules', () => {
  it('refuses http:// to a host that is not loopback (V20_TLS), allows loopback and https', () => {
    for (const bad of [
      'http://api-fxpractice.oanda.com',
      'http://10.0.0.1:8080',
      'http://128.0.0.1',
      'http://localhost.evil.com',
    ]) {
      let err: unknown;
      try {
        checkBaseUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(V20Error);
      expect((err as V20Error).code).toBe('V20_TLS');
      expect((err as V20Error).message).toMatch(/https:\/\//);
    }
    for (const good of [
      'https://api-fxpractice.oanda.com',
      'http://127.0.0.1:1234',
      'http://127.5.6.7',
      'http://localhost:9',
      'http://[::1]:80',
    ]) {
      expect(checkBaseUrl(good).origin).toBeTruthy();
    }
    expect(() => new V20Http({ baseUrl: 'https://x.test', streamUrl: 'http://stream.x.test' })).toThrow(
      /streamUrl/,
    );
    expect(() => checkBaseUrl('ftp://x')).toThrow(/not supported/);
  });

  it('builds queries, reads Link rel="next" and Retry-After', () => {
    expect(withQuery('/v3/x', { a: 1, b: undefined, c: 'E,F', d: true })).toBe('/v3/x?a=1&c=E%2CF&d=true');
    expect(nextLink('<https://api-fxtrade.oanda.com/v3/accounts/1/trades?beforeID=6>; rel="next"')).toBe(
      '/v3/accounts/1/trades?beforeID=6',
    );
    expect(nextLink('<https://h/v3/a?x=1>; rel="prev", <https://h/v3/a?x=2>; rel="next"')).toBe('/v3/a?x=2');
    expect(nextLink('<https://h/v3/a?x=1>; rel="prev"')).toBeUndefined();
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

// A real server on 127.0.0.1 whose behaviour each test sets.
let server: Server;
let base = '';
let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void = (_q, res) => res.end();
const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const TOKEN = 'secret-token-0123456789abcdef-fedcba9876543210';

function logged(): { log: pino.Logger; text: () => string } {
  let buf = '';
  const log = pino({ level: 'debug' }, { write: (s: string) => void (buf += s) });
  return { log, text: () => buf };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', requestid: `req-${seen.length}`, ...headers });
  res.end(JSON.stringify(body));
};

describe('V20Http against a real server', () => {
  it('sends the bearer token and the datetime format, logs each RequestID, never the token', async () => {
    seen.length = 0;
    handler = (_q, res) => json(res, 200, { ok: true });
    const { log, text } = logged();
    const http = new V20Http({ baseUrl: base, token: TOKEN, datetimeFormat: 'UNIX', log });
    const r = await http.request<{ ok: boolean }>({ method: 'GET', path: '/v3/accounts' });
    await http.close();
    expect(r.body.ok).toBe(true);
    expect(r.requestID).toBe('req-1');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]!.headers['accept-datetime-format']).toBe('UNIX');
    expect(text()).toContain('"requestID":"req-1"');
    expect(text()).toContain('"component":"v20"');
    expect(text()).not.toContain(TOKEN);
  });

  it('retries a GET on 503 and on 429 (honouring Retry-After), never a POST', async () => {
    seen.length = 0;
    let n = 0;
    handler = (_q, res) => {
      n++;
      if (n === 1) return json(res, 503, { errorMessage: 'busy' });
      if (n === 2) return json(res, 429, { errorMessage: 'slow down' }, { 'retry-after': '0' });
      json(res, 200, { n });
    };
    const http = new V20Http({ baseUrl: base, retryBaseMs: 1 });
    const r = await http.request<{ n: number }>({ method: 'GET', path: '/v3/x' });
    expect(r.body.n).toBe(3);
    expect(http.stats.retries).toBe(2);
    expect(http.stats.rateLimited).toBe(1);

    n = 0;
    const err = await http
      .request({ method: 'POST', path: '/v3/accounts/1/orders', body: { order: {} } })
      .catch((e: unknown) => e);
    await http.close();
    expect(n).toBe(1);
    expect(err).toBeInstanceOf(V20Error);
    expect((err as V20Error).status).toBe(503);
    expect((err as V20Error).retryable).toBe(true);
  });

  it('turns a 400 into a V20Error with errorCode, errorMessage and the reject transaction; the token is in none of it', async () => {
    const reject = {
      id: '7',
      time: '2024-01-01T00:00:00.000000000Z',
      type: 'MARKET_ORDER_REJECT',
      rejectReason: 'UNITS_INVALID',
    };
    handler = (_q, res) =>
      json(res, 400, {
        orderRejectTransaction: reject,
        errorCode: 'UNITS_INVALID',
        errorMessage: 'Order units specified are invalid',
        lastTransactionID: '7',
      });
    const { log, text } = logged();
    const http = new V20Http({ baseUrl: base, token: TOKEN, log });
    const err = (await http
      .request({ method: 'POST', path: '/v3/accounts/1/orders', body: { order: { units: 'x' } } })
      .catch((e: unknown) => e)) as V20Error;
    log.error({ err }, 'failed');
    await http.close();
    expect(err.code).toBe('V20_HTTP');
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe('UNITS_INVALID');
    expect(err.errorMessage).toBe('Order units specified are invalid');
    expect(err.rejectTransaction).toEqual(reject);
    expect(err.retryable).toBe(false);
    expect(err.method).toBe('POST');
    expect(err.path).toBe('/v3/accounts/1/orders');
    const everything = [
      err.message,
      err.stack,
      JSON.stringify(err),
      JSON.stringify(Object.entries(err)),
      text(),
    ].join('\n');
    expect(everything).not.toContain(TOKEN);
    expect(text()).toContain('UNITS_INVALID');
  });

  it('a network error on a GET is retried; the final error is V20_NETWORK without the token', async () => {
    const http = new V20Http({ baseUrl: 'http://127.0.0.1:1', token: TOKEN, retries: 2, retryBaseMs: 1 });
    const err = (await http
      .request({ method: 'GET', path: '/v3/accounts' })
      .catch((e: unknown) => e)) as V20Error;
    await http.close();
    expect(err.code).toBe('V20_NETWORK');
    expect(err.retryable).toBe(true);
    expect(http.stats.retries).toBe(2);
    expect(`${err.message}${JSON.stringify(err)}`).not.toContain(TOKEN);
  });

  it('times out (V20_TIMEOUT) when headers never come', async () => {
    handler = () => undefined; // never answers
    const http = new V20Http({ baseUrl: base, timeoutMs: 100, retries: 0 });
    const err = (await http
      .request({ method: 'GET', path: '/v3/slow' })
      .catch((e: unknown) => e)) as V20Error;
    await http.close().catch(() => undefined);
    expect(err.code).toBe('V20_TIMEOUT');
    expect(err.retryable).toBe(true);
  });

  it('follows Link rel="next" through every page', async () => {
    handler = (req, res) => {
      const u = new URL(req.url!, base);
      const before = Number(u.searchParams.get('beforeID') ?? '10');
      const ids = [before - 1, before - 2, before - 3].filter((x) => x > 0).map(String);
      const last = ids.at(-1);
      const link: Record<string, string> =
        last !== undefined && Number(last) > 1
          ? { link: `<${base}/v3/accounts/1/trades?count=3&beforeID=${last}>; rel="next"` }
          : {};
      json(res, 200, { trades: ids.map((id) => ({ id })) }, link);
    };
    const http = new V20Http({ baseUrl: base });
    const pages: string[][] = [];
    for await (const p of http.paginate(
      '/v3/accounts/1/trades',
      { count: 3 },
      (b: { trades: { id: string }[] }) => b.trades.map((t) => t.id),
    ))
      pages.push(p);
    await http.close();
    expect(pages).toEqual([
      ['9', '8', '7'],
      ['6', '5', '4'],
      ['3', '2', '1'],
    ]);
  });

  it('openStream yields whole lines from a body sent byte by byte, and aborting ends it', async () => {
    const lines = ['{"type":"HEARTBEAT","time":"1"}', '{"x":"€ 日本 😀"}', '{"y":2}'];
    handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
      let i = 0;
      const tick = () => {
        if (i < bytes.length) {
          res.write(bytes.subarray(i, i + 1));
          i++;
          setImmediate(tick);
        } // then stays open
      };
      tick();
    };
    const http = new V20Http({ baseUrl: base });
    const ac = new AbortController();
    const got: string[] = [];
    for await (const l of await http.openStream(
      '/v3/accounts/1/pricing/stream',
      { instruments: 'EUR_USD' },
      ac.signal,
    )) {
      got.push(l);
      if (got.length === lines.length) ac.abort();
    }
    await http.close();
    expect(got).toEqual(lines);
  });

  it('openStream rejects with a typed error on 401 (not retryable)', async () => {
    handler = (_q, res) => json(res, 401, { errorMessage: 'Insufficient authorization to perform request.' });
    const http = new V20Http({ baseUrl: base, token: TOKEN });
    const err = (await http
      .openStream('/v3/accounts/1/transactions/stream', {}, new AbortController().signal)
      .catch((e: unknown) => e)) as V20Error;
    await http.close();
    expect(err.status).toBe(401);
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/access token/);
    expect(err.message).not.toContain(TOKEN);
  });
});
