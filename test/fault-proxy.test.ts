// The fault proxy itself (test/fault-proxy.ts), over real loopback sockets: a node:http server
// upstream that counts what it handled, an undici client with one keep-alive connection, so every
// fault is shown acting on one request of a connection that carries others.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy, v20 } from './fault-proxy.ts';
import { HttpFramer } from './http-framing.ts';

interface Upstream {
  server: Server;
  url: string;
  /** Requests handled, in order: method, path, body. */
  handled: { method: string; path: string; body: string }[];
  /** Streams open: write more lines to them. */
  streams: ServerResponse[];
}

/**
 * An upstream that answers `POST /echo` with its body (Content-Length), `GET /chunks` with three
 * chunked parts, `GET /stream` with a first line and keeps the stream open, anything else `{"ok":n}`.
 */
async function upstream(): Promise<Upstream> {
  const u: Upstream = { server: undefined as never, url: '', handled: [], streams: [] };
  u.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      u.handled.push({ method: req.method!, path: req.url!, body });
      if (req.url === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else if (req.url === '/chunks') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('one,');
        res.write('two,');
        res.end('three');
      } else if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write('line 1\n');
        u.streams.push(res);
      } else {
        const b = JSON.stringify({ ok: u.handled.length });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': b.length });
        res.end(b);
      }
    });
  });
  u.server.listen(0, '127.0.0.1');
  await once(u.server, 'listening');
  u.url = `http://127.0.0.1:${(u.server.address() as AddressInfo).port}`;
  return u;
}

let proxy: FaultProxy | undefined;
let up: Upstream | undefined;
let pool: Pool | undefined;

afterEach(async () => {
  await pool?.destroy();
  await proxy?.close();
  for (const s of up?.streams ?? []) s.destroy();
  up?.server.closeAllConnections();
  await new Promise((r) => up?.server.close(r) ?? r(undefined));
  proxy = undefined;
  up = undefined;
  pool = undefined;
});

async function setup(): Promise<{ proxy: FaultProxy; up: Upstream; pool: Pool }> {
  up = await upstream();
  proxy = await startFaultProxy(up.url);
  pool = new Pool(proxy.url, { connections: 1, pipelining: 1 });
  return { proxy, up, pool };
}

async function call(
  p: Pool,
  method: 'GET' | 'POST',
  path: string,
  body?: string,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const r = await p.request({
    method,
    path,
    ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: r.statusCode, text: await r.body.text(), headers: r.headers };
}

describe('fault proxy', () => {
  it('passes requests and replies unchanged over one keep-alive connection: Content-Length and chunked replies, in order', async () => {
    const { proxy, up, pool } = await setup();
    expect(await call(pool, 'POST', '/echo', '{"order":{"units":"1000"}}')).toMatchObject({
      status: 201,
      text: '{"order":{"units":"1000"}}',
    });
    expect(await call(pool, 'GET', '/chunks')).toMatchObject({ status: 200, text: 'one,two,three' });
    expect(await call(pool, 'GET', '/x')).toMatchObject({ status: 200, text: '{"ok":3}' });
    expect(up.handled.map((h) => h.path)).toEqual(['/echo', '/chunks', '/x']);
    expect(
      proxy.requests.map((r) => [r.connection, r.method, r.path, r.action, r.at.replied !== undefined]),
    ).toEqual([
      [1, 'POST', '/echo', 'pass', true],
      [1, 'GET', '/chunks', 'pass', true],
      [1, 'GET', '/x', 'pass', true],
    ]);
    expect(proxy.requests[0]!.body).toBe('{"order":{"units":"1000"}}');
  });

  it('answers 503 and 429 (with Retry-After) without forwarding, for the first N matching requests only; the same connection then forwards', async () => {
    const { proxy, up, pool } = await setup();
    const rule = proxy.rule(
      (r) => r.method === 'POST',
      { kind: 'answer', status: 429, headers: { 'Retry-After': '1' } },
      2,
    );
    proxy.rule((r) => r.path === '/down', { kind: 'answer', status: 503 });
    const a = await call(pool, 'POST', '/echo', '{"a":1}');
    expect(a).toMatchObject({ status: 429 });
    expect(a.headers['retry-after']).toBe('1');
    expect((await call(pool, 'POST', '/echo', '{"a":2}')).status).toBe(429);
    expect(await call(pool, 'POST', '/echo', '{"a":3}')).toMatchObject({ status: 201, text: '{"a":3}' });
    expect((await call(pool, 'GET', '/down')).status).toBe(503);
    expect(rule.hits).toBe(2);
    expect(up.handled.map((h) => h.body)).toEqual(['{"a":3}']); // nothing answered by the proxy reached the server
    expect(new Set(proxy.requests.map((r) => r.connection))).toEqual(new Set([1]));
  });

  it('holds a request until release(): the server has not seen it while held, sees it once released', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule(v20.write, { kind: 'hold', ms: 600_000 }, 1);
    const answer = call(pool, 'POST', '/echo', '{"held":true}');
    await proxy.reached('held', (r) => r.path === '/echo');
    expect(up.handled).toEqual([]);
    proxy.release();
    expect(await answer).toMatchObject({ status: 201, text: '{"held":true}' });
    expect(up.handled).toHaveLength(1);
  });

  it('a held request is forwarded at the end of its hold, at least `ms` after it arrived', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule(() => true, { kind: 'hold', ms: 300 }, 1);
    await call(pool, 'GET', '/x');
    const r = proxy.requests[0]!;
    expect(r.at.forwarded! - r.at.held!).toBeGreaterThanOrEqual(299); // timers never fire early (1 ms of clock rounding)
    expect(up.handled).toHaveLength(1);
  });

  it('a held request whose client gave up is still forwarded: bytes in transit arrive whatever the sender does', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule(v20.write, { kind: 'hold', ms: 600_000 }, 1);
    const answer = call(pool, 'POST', '/echo', '{"late":1}').catch((e: unknown) => e);
    await proxy.reached('held');
    await pool.destroy(); // the client is gone (as a process killed with -9)
    await answer;
    await proxy.reached('abandoned');
    expect(up.handled).toEqual([]);
    proxy.release();
    const rec = await proxy.reached('replied');
    expect(rec.clientGoneAtForward).toBe(true);
    expect(up.handled.map((h) => h.body)).toEqual(['{"late":1}']);
  });

  it("a request held past the server's keep-alive timeout is forwarded on a new server connection; the client's connection stays", async () => {
    const { proxy, up, pool } = await setup();
    const firstSocket = once(up.server, 'connection');
    expect((await call(pool, 'GET', '/x')).text).toBe('{"ok":1}');
    const [serverSide] = (await firstSocket) as [import('node:net').Socket];
    proxy.rule(v20.write, { kind: 'hold', ms: 600_000 }, 1);
    const answer = call(pool, 'POST', '/echo', '{"after":"idle"}');
    await proxy.reached('held');
    // The server drops its idle connection to the proxy (its keep-alive timeout) while the request is held.
    serverSide.destroy();
    while (proxy.serverConnections() > 0) await new Promise((res) => setTimeout(res, 1)); // the close reaches the proxy's side
    proxy.release();
    expect(await answer).toMatchObject({ status: 201, text: '{"after":"idle"}' });
    expect(proxy.requests.map((r) => r.connection)).toEqual([1, 1]);
  });

  it('delays a reply by `ms` after the server answered', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule((r) => r.path === '/x', { kind: 'delay', ms: 300 });
    const t0 = performance.now();
    const res = await call(pool, 'GET', '/x');
    expect(res.text).toBe('{"ok":1}');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(299);
    const r = proxy.requests[0]!;
    expect(r.at.replied! - r.at.forwarded!).toBeGreaterThanOrEqual(299);
    expect(up.handled).toHaveLength(1);
  });

  it('cuts the connection after forwarding: the server applied the request, the client gets a socket error and no byte of the reply', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule(v20.write, { kind: 'cut' }, 1);
    const err = await call(pool, 'POST', '/echo', '{"cut":1}').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toMatch(/UND_ERR_SOCKET|ECONNRESET/);
    expect(up.handled.map((h) => h.body)).toEqual(['{"cut":1}']);
    expect(proxy.requests[0]).toMatchObject({ action: 'cut', bytesDown: 0 });
    // A new connection is served normally.
    expect((await call(pool, 'POST', '/echo', '{"after":1}')).text).toBe('{"after":1}');
    expect(proxy.requests.map((r) => r.connection)).toEqual([1, 2]);
  });

  it('stalls a stream after its first line and resumes it at release(); stallOpen() stalls one already flowing', async () => {
    const { proxy, up, pool } = await setup();
    proxy.rule((r) => r.path === '/stream', { kind: 'stall', afterBytes: 'line 1\n'.length }, 1);
    const res = await pool.request({ method: 'GET', path: '/stream' });
    let got = '';
    const lines = new EventTarget();
    res.body.on('data', (d: Buffer) => {
      got += d.toString();
      lines.dispatchEvent(new Event('data'));
    });
    const seen = (text: string): Promise<void> =>
      got.includes(text)
        ? Promise.resolve()
        : new Promise((r) => lines.addEventListener('data', () => got.includes(text) && r(), {}));
    await seen('line 1\n');
    up.streams[0]!.write('line 2\n');
    await proxy.reached('withheld');
    expect(got).toBe('line 1\n');
    proxy.release();
    await seen('line 2\n');
    // Stall it again while it flows.
    expect(proxy.stallOpen((r) => r.path === '/stream')).toBe(1);
    up.streams[0]!.write('line 3\n');
    await proxy.reached('withheld', (r) => r.keptBytes > 0);
    expect(got).toBe('line 1\nline 2\n');
    proxy.release();
    await seen('line 3\n');
    expect(got).toBe('line 1\nline 2\nline 3\n');
  });
});

describe('HTTP framing', () => {
  it('splits any byte-wise cut of keep-alive messages (Content-Length, chunked with trailers, bodyless) into the same messages', () => {
    const msgs = [
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=1\r\ndefg\r\n0\r\nX-T: 1\r\n\r\n',
      'HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
    ];
    const all = Buffer.from(msgs.join(''), 'latin1');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: all.length - 1 }), { maxLength: 12 }), (cuts) => {
        const out: Buffer[][] = [];
        let cur: Buffer[] = [];
        const f = new HttpFramer(
          'response',
          { head: (_h, b) => (cur = [b]), body: (b) => void cur.push(b), end: () => void out.push(cur) },
          (h) => h.startLine.includes(' 204 '),
        );
        const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), all.length];
        for (let i = 1; i < at.length; i++) f.feed(all.subarray(at[i - 1], at[i]));
        expect(out.map((m) => Buffer.concat(m).toString('latin1'))).toEqual(msgs);
      }),
    );
  });
});
