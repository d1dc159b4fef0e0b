import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/**
 * Fuzzing a real sandbox on loopback with raw HTTP/1.1 requests: methods (known and not), paths
 * built from the sandbox's own routes with hostile pieces mixed in, query strings, headers and
 * bodies (JSON, almost-JSON, order-shaped values, binary). Every request must get an answer that is
 * not a 5xx, every error answer must be a v20 body, and the server must stay up.
 *
 * `/sandbox/faults` is left out: turning on injected 500s is what it is for. FXFLOW_FUZZ_RUNS=20000
 * runs a deeper search (400 by default, about 2 s).
 */

const ACCOUNT = '101-001-0000001-001';

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Sends one request and reads its answer: the whole body when it has a Content-Length; only the
 * status and headers of a stream (chunked, never ending), then the connection is closed.
 */
function send(port: number, request: Buffer, head: boolean): Promise<Answer> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (a: Answer | Error): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (a instanceof Error) fail(a);
      else done(a);
    };
    const parse = (): void => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const text = buf.subarray(0, end).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (status === 100) {
        buf = buf.subarray(end + 4);
        parse();
        return;
      }
      const header = (name: string): string | undefined =>
        new RegExp(`\\r\\n${name}: *([^\\r]*)`, 'i').exec(text)?.[1];
      const length = header('content-length');
      const contentType = header('content-type') ?? '';
      if (length === undefined || head) {
        finish({ status, contentType, body: '' });
        return;
      }
      if (buf.length - end - 4 >= Number(length))
        finish({
          status,
          contentType,
          body: buf.subarray(end + 4, end + 4 + Number(length)).toString('utf8'),
        });
    };
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      parse();
    });
    socket.on('error', (e) => finish(e));
    socket.on('close', () =>
      finish(
        new Error(
          `no complete answer (${buf.length} bytes: ${JSON.stringify(buf.subarray(0, 80).toString('latin1'))})`,
        ),
      ),
    );
    socket.write(request);
  });
}

const A = `/v3/accounts/${ACCOUNT}`;
const BASES = [
  '/v3/accounts',
  A,
  `${A}/summary`,
  `${A}/instruments`,
  `${A}/configuration`,
  `${A}/changes`,
  `${A}/pricing`,
  `${A}/pricing/stream`,
  `${A}/orders`,
  `${A}/pendingOrders`,
  `${A}/orders/1`,
  `${A}/orders/@x`,
  `${A}/orders/1/cancel`,
  `${A}/orders/1/clientExtensions`,
  `${A}/trades`,
  `${A}/openTrades`,
  `${A}/trades/2`,
  `${A}/trades/2/close`,
  `${A}/trades/2/orders`,
  `${A}/trades/2/clientExtensions`,
  `${A}/positions`,
  `${A}/openPositions`,
  `${A}/positions/EUR_USD`,
  `${A}/positions/EUR_USD/close`,
  `${A}/transactions`,
  `${A}/transactions/idrange`,
  `${A}/transactions/sinceid`,
  `${A}/transactions/stream`,
  `${A}/transactions/1`,
  '/v3/instruments/EUR_USD/candles',
  `${A}/instruments/EUR_USD/candles`,
  '/labs/v1/calendar',
  '/labs/v1/spreads',
  '/labs/v1/commitments_of_traders',
  '/labs/v1/signal/autochartist',
  '/labs/v1/orderbook_data',
  '/v1/oauth2/authorize',
  '/v1/oauth2/access_token',
  '/v1/accounts',
  '/v1/prices',
  // The legacy generation (src/sandbox/legacy/), served on the same account.
  `/v1/accounts/${ACCOUNT}`,
  `/v1/accounts/${ACCOUNT}/orders`,
  `/v1/accounts/${ACCOUNT}/orders/1`,
  `/v1/accounts/${ACCOUNT}/trades`,
  `/v1/accounts/${ACCOUNT}/trades/2`,
  `/v1/accounts/${ACCOUNT}/transactions`,
  `/v1/accounts/${ACCOUNT}/transactions/1`,
  `/v1/accounts/${ACCOUNT}/alltransactions`,
  '/v1/history/x.zip',
  '/sandbox/time',
  '/sandbox/advance',
  '/sandbox/prices',
  '/sandbox/stats',
  '/',
  '//',
  '//[',
  '/v3',
  '/v3/',
];
const HOSTILE = [
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '..',
  '[',
  ']',
  '@',
  '%40x',
  '__proto__',
  'constructor',
  '€',
  ' ',
  '"',
  '\\',
  '%2F',
  'a'.repeat(300),
];

const segment = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
  fc.string({ unit: fc.constantFrom('%', 'a', '/', '.', '@', '_', '-', '[', ':'), maxLength: 8 }),
);
const path = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...BASES) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...BASES), segment).map(([b, s]) => `${b}/${s}`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...BASES), fc.nat({ max: 12 }), segment)
      .map(([b, n, s]) => b.slice(0, Math.max(1, b.length - n)) + s),
  },
  { weight: 1, arbitrary: fc.constantFrom('http://[', 'http://x/v3/accounts', '*', 'http://%zz/') },
);
const queryValue = fc.oneof(
  fc.constantFrom(
    'EUR_USD',
    'EUR_USD,USD_JPY',
    'XXX',
    '',
    '0',
    '-1',
    '1e400',
    'NaN',
    '5001',
    'true',
    '%zz',
    '2024-01-02T00:00:00Z',
    'M1',
    'S5',
    'ALL',
  ),
  fc.string({ maxLength: 10 }).map(encodeURIComponent),
);
const queryKey = fc.constantFrom(
  'maxId',
  'minId',
  'instruments',
  'instrument',
  'count',
  'from',
  'to',
  'granularity',
  'price',
  'since',
  'sinceTransactionID',
  'id',
  'ids',
  'state',
  'beforeID',
  'type',
  'pageSize',
  'period',
  'snapshot',
  'includeHomeConversions',
  'smooth',
  'dailyAlignment',
  'alignmentTimezone',
  'weeklyAlignment',
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'x',
);
const query = fc
  .array(fc.tuple(queryKey, queryValue), { maxLength: 4 })
  .map((kv) => (kv.length === 0 ? '' : `?${kv.map(([k, v]) => `${k}=${v}`).join('&')}`));

const order = fc.record(
  {
    type: fc.constantFrom(
      'MARKET',
      'LIMIT',
      'STOP',
      'MARKET_IF_TOUCHED',
      'TAKE_PROFIT',
      'STOP_LOSS',
      'TRAILING_STOP_LOSS',
      'GUARANTEED_STOP_LOSS',
      'FIXED_PRICE',
      'BOGUS',
    ),
    instrument: fc.constantFrom('EUR_USD', 'USD_JPY', 'XAU_USD', 'NOPE', ''),
    units: fc.oneof(
      fc.constantFrom('100', '-100', '0', 'ALL', '1e3', '0.5', '-', ''),
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.double(),
    ),
    price: fc.oneof(fc.constantFrom('1.1', '0.5', '2', '1.123456789', '-1', 'x'), fc.double()),
    distance: fc.constantFrom('0.00001', '0.001', '1', '-1'),
    tradeID: fc.constantFrom('1', '2', '3', '@x', '999999'),
    timeInForce: fc.constantFrom('GTC', 'GTD', 'GFD', 'FOK', 'IOC', 'NOPE'),
    gtdTime: fc.constantFrom('2024-01-03T00:00:00Z', 'yesterday', '0'),
    priceBound: fc.constantFrom('1.2', '0', 'x'),
    triggerCondition: fc.constantFrom('DEFAULT', 'INVERSE', 'BID', 'ASK', 'MID', 'X'),
    positionFill: fc.constantFrom('DEFAULT', 'REDUCE_FIRST', 'REDUCE_ONLY', 'OPEN_ONLY', 'X'),
    clientExtensions: fc.oneof(
      fc.record({ id: fc.string({ maxLength: 6 }), tag: fc.string({ maxLength: 4 }) }),
      fc.constant(null),
      fc.constant([]),
    ),
    takeProfitOnFill: fc.oneof(fc.record({ price: fc.constantFrom('2', '0.1', 'x') }), fc.constant(1)),
    stopLossOnFill: fc.oneof(fc.record({ distance: fc.constantFrom('0.01', '0', '-1') }), fc.constant('x')),
  },
  { requiredKeys: [] },
);
const jsonBody = fc.oneof(
  { weight: 4, arbitrary: order.map((o) => JSON.stringify({ order: o })) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          units: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
          longUnits: fc.constantFrom('ALL', 'NONE', '5', 'x'),
          shortUnits: fc.constantFrom('ALL', 'NONE', 'x'),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          time: fc.oneof(fc.string({ maxLength: 25 }), fc.integer()),
          ms: fc.oneof(fc.integer(), fc.double()),
          instrument: fc.constantFrom('EUR_USD', 'X'),
          bid: fc.oneof(fc.double(), fc.string({ maxLength: 4 })),
          ask: fc.oneof(fc.double(), fc.string({ maxLength: 4 })),
          alias: fc.oneof(fc.string({ maxLength: 4 }), fc.integer()),
          marginRate: fc.constantFrom('0.05', '2', 'x', '0'),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"order":{"__proto__":{"type":"MARKET"}}}',
      '{"order":{"constructor":1,"type":"MARKET","instrument":"EUR_USD","units":"1"}}',
      '[[[[[[[[[[]]]]]]]]]]',
      '{',
      '{"order":',
      'null',
      '"x"',
      '1e999999',
      `{"order":${'['.repeat(200)}${']'.repeat(200)}}`,
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);
/** Legacy form bodies (sent with any Content-Type the header arbitrary picks, often not the form one). */
const formBody = fc
  .array(
    fc.tuple(
      fc.constantFrom(
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
      ),
      fc.oneof(
        fc.constantFrom(
          'EUR_USD',
          'buy',
          'sell',
          'market',
          'limit',
          'stop',
          '100',
          '0',
          '1.1',
          '15.55',
          '2030-01-01T00:00:00Z',
        ),
        fc.string({ maxLength: 6 }),
      ),
    ),
    { maxLength: 6 },
  )
  .map((kv) => new URLSearchParams(kv).toString());
const body = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: jsonBody },
  { weight: 2, arbitrary: formBody },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')) },
);

const headerName = fc.constantFrom(
  'Accept-Datetime-Format',
  'Content-Type',
  'Authorization',
  'Accept',
  'X-Custom',
  'Expect',
  'Accept-Encoding',
);
const headerValue = fc.oneof(
  fc.constantFrom(
    'UNIX',
    'RFC3339',
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'Bearer x',
    'Bearer',
    '100-continue',
    'gzip',
  ),
  fc.string({ unit: fc.constantFrom('a', ' ', ';', '=', ',', '"', 'é', '\t'), maxLength: 20 }),
);
const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 });
const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') },
  { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'FROB', 'get', 'PROPFIND') },
);

describe('sandbox fuzz: random requests over raw HTTP', () => {
  let sb: Sandbox;
  let port: number;
  beforeAll(async () => {
    sb = await startSandbox();
    port = Number(new URL(sb.url).port);
  });
  afterAll(() => sb.close());

  it('answers every request, never with a 5xx, errors as v20 bodies, and stays up', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(method, path, query, headers, body, fc.boolean(), async (m, p, q, hs, b, chunked) => {
        const target = p.startsWith('/') || p === '*' ? `${p}${q}` : p;
        if (target.includes('/sandbox/faults')) return;
        // Expect: 100-continue only with a body (a server waits for it otherwise).
        const hdrs = hs.filter(([k]) => k !== 'Expect' || b !== '');
        const payload = Buffer.from(b, 'latin1');
        let head = `${m} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${hdrs.map(([k, v]) => `${k}: ${v}\r\n`).join('')}`;
        let wire: Buffer;
        if (payload.length > 0 && chunked) {
          head += 'Transfer-Encoding: chunked\r\n\r\n';
          wire = Buffer.concat([
            Buffer.from(head, 'latin1'),
            Buffer.from(`${payload.length.toString(16)}\r\n`),
            payload,
            Buffer.from('\r\n0\r\n\r\n'),
          ]);
        } else {
          head += `Content-Length: ${payload.length}\r\n\r\n`;
          wire = Buffer.concat([Buffer.from(head, 'latin1'), payload]);
        }
        const a = await send(port, wire, m === 'HEAD');
        seen.set(a.status, (seen.get(a.status) ?? 0) + 1);
        expect(a.status, `${m} ${target} ${b.slice(0, 200)} -> ${a.body.slice(0, 300)}`).toBeLessThan(500);
        if (a.status >= 400 && m !== 'HEAD') {
          const parsed = JSON.parse(a.body) as { errorMessage?: unknown; error?: unknown };
          // The OAuth endpoints answer as RFC 6749 says ({error, error_description}); everything else as v20.
          const oauth = /^\/v1\/oauth2\/(authorize|access_token)(\?|$)/.test(target);
          const shaped =
            typeof parsed.errorMessage === 'string' || (oauth && typeof parsed.error === 'string');
          expect(shaped, `${m} ${target}: ${a.body.slice(0, 200)}`).toBe(true);
        }
      }),
      { numRuns: Number(process.env.FXFLOW_FUZZ_RUNS ?? 400) },
    );
    // Still up, and still serving the account.
    expect((await call('GET', `${sb.url}/v3/accounts`)).status).toBe(200);
    expect((await call('GET', `${sb.url}${A}/summary`)).status).toBe(200);
    // The run reached handlers, not only the parser's refusals.
    expect([...seen.keys()].some((s) => s < 300)).toBe(true);
    expect([...seen.keys()].some((s) => s === 400)).toBe(true);
  }, 60_000);
});
