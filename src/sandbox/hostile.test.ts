import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call, rawHttp } from './testkit.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOKEN = 'hostile-test-token';

/** A v20 error body: a JSON object with a string errorMessage (and a string errorCode when present). */
function expectV20Error(body: string): Record<string, unknown> {
  const o = JSON.parse(body) as Record<string, unknown>;
  expect(typeof o.errorMessage).toBe('string');
  if (o.errorCode !== undefined) expect(typeof o.errorCode).toBe('string');
  return o;
}

describe('sandbox: hostile input (real process, raw sockets)', () => {
  it('GET //[ and GET http://[ get a 400 and the process, with --require-token, keeps serving', async () => {
    const child = spawn(
      process.execPath,
      ['bin/fxflow.js', 'sandbox', '--port', '0', '--manual', '--require-token'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FXFLOW_SANDBOX_TOKEN: TOKEN },
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let exitCode: number | null | undefined;
    const exited = new Promise<void>((done) =>
      child.on('exit', (code) => {
        exitCode = code;
        done();
      }),
    );
    try {
      const url = await new Promise<string>((done, fail) => {
        const t = setTimeout(() => fail(new Error(`no listening line within 30 s; stdout: ${out}`)), 30_000);
        child.stdout.on('data', () => {
          const m = /fxflow sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(t);
            done(m[1]!);
          }
        });
      });
      // '//[' is a path (404 with the token, 401 without); 'http://[' is no URL at all (400).
      for (const [target, status] of [
        ['//[', 404],
        ['//[::1', 404],
        ['http://[', 400],
        ['http://%zz/', 400],
        ['*', 400],
      ] as const) {
        const r = await rawHttp(
          url,
          `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`,
        );
        expect(r.status, target).toBe(status);
        expect(expectV20Error(r.body).errorMessage).toMatch(
          status === 400 ? /Invalid request URL/ : /No such endpoint/,
        );
        const anonymous = await rawHttp(
          url,
          `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
        expect(anonymous.status, target).toBe(status === 400 ? 400 : 401);
      }
      // Still up, and still guarded.
      expect((await call('GET', `${url}/v3/accounts`)).status).toBe(401);
      expect(
        (await call('GET', `${url}/v3/accounts`, undefined, { Authorization: `Bearer ${TOKEN}` })).status,
      ).toBe(200);
      expect(exitCode).toBeUndefined();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 40_000);
});

describe('sandbox: hostile input (in process)', () => {
  let sb: Sandbox;
  let A: string;
  beforeAll(async () => {
    sb = await startSandbox();
    A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
  });
  afterAll(() => sb.close());

  const post = (path: string, body: string) => call('POST', `${A}${path}`, body);

  it('"__proto__" in an order, its client extensions or the body is a 400 naming where', async () => {
    for (const [body, at] of [
      [
        '{"order":{"__proto__":{"type":"MARKET"},"type":"MARKET","instrument":"EUR_USD","units":"100"}}',
        'order.__proto__',
      ],
      [
        '{"order":{"type":"MARKET","instrument":"EUR_USD","units":"100","clientExtensions":{"__proto__":{"id":"x"}}}}',
        'order.clientExtensions.__proto__',
      ],
      ['{"__proto__":{"order":{}}}', '__proto__'],
    ] as const) {
      const r = await post('/orders', body);
      expect(r.status, body).toBe(400);
      expect(r.body.errorMessage).toContain(`'__proto__' (at ${at})`);
    }
    // Nothing was created.
    expect((await call('GET', `${A}/orders?state=ALL`)).body.orders).toEqual([]);
  });

  it('deeply nested JSON is a 400, not a stack overflow', async () => {
    for (const body of [
      '{"order":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}',
      '{"order":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5000) + '}',
    ]) {
      const r = await post('/orders', body);
      expect(r.status).toBe(400);
      expect(r.body.errorMessage).toMatch(/nested \d+ levels deep \(at most 64\)/);
    }
  });

  it('bad percent-encoding in a path segment is a 400', async () => {
    for (const path of [`${A}/orders/%E0%A4%A`, `${sb.url}/v3/accounts/%zz`, `${A}/trades/%`]) {
      const r = await call('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.body.errorMessage).toMatch(/Invalid percent-encoding/);
    }
    // A client ID holding '%' is decoded once, not twice: the order is found.
    const made = await post(
      '/orders',
      JSON.stringify({
        order: {
          type: 'LIMIT',
          instrument: 'EUR_USD',
          units: '100',
          price: '0.5',
          clientExtensions: { id: '50%off' },
        },
      }),
    );
    expect(made.status).toBe(201);
    const got = await call('GET', `${A}/orders/${encodeURIComponent('@50%off')}`);
    expect(got.status).toBe(200);
    expect(got.body.order.clientExtensions.id).toBe('50%off');
  });

  it('a 10 MB body gets a 413 answer, not a reset connection', async () => {
    const body = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const head = `POST /v3/accounts/${sb.accountIDs[0]}/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const r = await rawHttp(sb.url, Buffer.concat([Buffer.from(head), body]));
    expect(r.status).toBe(413);
    expect(expectV20Error(r.body).errorMessage).toMatch(/too large/);
    // And with Expect: 100-continue the 413 comes before the body is sent.
    const r2 = await rawHttp(
      sb.url,
      `POST /v3/accounts/${sb.accountIDs[0]}/orders HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    expect(r2.status).toBe(413);
  });

  it('a long URL is a 414, long headers a 431, an unknown method a 405, garbage a 400: all v20 bodies', async () => {
    const long = `GET /v3/accounts?x=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    expect((await rawHttp(sb.url, long)).status).toBe(414);
    const longer = `GET /v3/accounts?x=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    const r414 = await rawHttp(sb.url, longer);
    expect(r414.status).toBe(414);
    expectV20Error(r414.body);
    const headers = `GET /v3/accounts HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(100_000)}\r\nConnection: close\r\n\r\n`;
    const r431 = await rawHttp(sb.url, headers);
    expect(r431.status).toBe(431);
    expectV20Error(r431.body);
    const method = await rawHttp(
      sb.url,
      'FROB /v3/accounts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(method.status).toBe(405);
    expectV20Error(method.body);
    const garbage = await rawHttp(sb.url, 'GET /v3/accounts HTTP/1.1\r\nHost x\r\nbroken\r\n\r\n');
    expect(garbage.status).toBe(400);
    expectV20Error(garbage.body);
    // The server is still up.
    expect((await call('GET', `${sb.url}/v3/accounts`)).status).toBe(200);
  });

  it('a known path with the wrong method is a 405, an unknown path a 404', async () => {
    const r405 = await call('DELETE', `${A}/orders`);
    expect(r405.status).toBe(405);
    expect(r405.body.errorMessage).toMatch(/not allowed .*\(use GET or POST\)/);
    expect(r405.headers.get('allow')).toBe('GET, POST');
    const r404 = await call('GET', `${sb.url}/v3/nothing-here`);
    expect(r404.status).toBe(404);
    expect(r404.body.errorMessage).toMatch(/No such endpoint/);
  });
});

describe('sandbox: a long clock jump never blocks other requests', () => {
  it('years of simulated time are walked a day at a time, the event loop turning between days; past 2200 is a 400', async () => {
    const sb = await startSandbox();
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      expect(
        (
          await call('POST', `${A}/orders`, {
            order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
          })
        ).status,
      ).toBe(201);
      const start = sb.time();
      const target = start + 20 * 365 * 86_400_000;
      // Count event-loop turns that see the clock between start and target: a jump done in one
      // blocking call shows none; one walked a day at a time with yields shows about one per day.
      let midway = 0;
      let done = false;
      const turn = (): void => {
        const t = sb.time();
        if (t > start && t < target) midway++;
        if (!done) setImmediate(turn);
      };
      setImmediate(turn);
      const jump = call('POST', `${sb.url}/sandbox/time`, { time: target }).then((r) => {
        done = true;
        return r;
      });
      await jump;
      expect(midway).toBeGreaterThan(1000);
      expect((await jump).status).toBe(200);
      expect(Date.parse((await call('GET', `${sb.url}/sandbox/stats`)).body.time)).toBe(target);
      const far = await call('POST', `${sb.url}/sandbox/time`, { time: 8.64e15 });
      expect(far.status).toBe(400);
      expect(far.body.errorMessage).toMatch(/past 2200-01-01/);
    } finally {
      await sb.close();
    }
  }, 60_000);
});

describe('sandbox: --require-token guards every route', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ requireToken: TOKEN });
  });
  afterAll(() => sb.close());

  it('the OAuth routes issue no token without it (the bypass the issue reports)', async () => {
    const authorize = await fetch(
      `${sb.url}/v1/oauth2/authorize?response_type=token&client_id=x&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&scope=trade`,
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(401);
    expect(authorize.headers.get('location')).toBeNull();
    const exchange = await fetch(`${sb.url}/v1/oauth2/access_token`, {
      method: 'POST',
      body: 'grant_type=authorization_code&code=c&client_id=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(exchange.status).toBe(401);
    // And no order can be placed by anyone without the token.
    const order = await call('POST', `${sb.url}/v3/accounts/${sb.accountIDs[0]}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '1' },
    });
    expect(order.status).toBe(401);
  });

  it('a token issued through OAuth by a caller holding the token is accepted', async () => {
    const authorize = await fetch(
      `${sb.url}/v1/oauth2/authorize?response_type=token&client_id=x&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&scope=trade`,
      { redirect: 'manual', headers: { Authorization: `Bearer ${TOKEN}` } },
    );
    expect(authorize.status).toBe(302);
    const issued = new URLSearchParams(new URL(authorize.headers.get('location')!).hash.slice(1)).get(
      'access_token',
    )!;
    expect(
      (await call('GET', `${sb.url}/v3/accounts`, undefined, { Authorization: `Bearer ${issued}` })).status,
    ).toBe(200);
  });

  it('the control routes that move time, prices and faults need it too', async () => {
    for (const [path, body] of [
      ['/sandbox/time', { time: '2024-01-03T00:00:00Z' }],
      ['/sandbox/advance', { ms: 1000 }],
      ['/sandbox/prices', { instrument: 'EUR_USD', bid: 1.1, ask: 1.1001 }],
      ['/sandbox/faults', { errorRate: 1 }],
    ] as const) {
      const r = await call('POST', `${sb.url}${path}`, body);
      expect(r.status, path).toBe(401);
    }
    expect(
      (await call('POST', `${sb.url}/sandbox/advance`, { ms: 1000 }, { Authorization: `Bearer ${TOKEN}` }))
        .status,
    ).toBe(200);
  });
});
