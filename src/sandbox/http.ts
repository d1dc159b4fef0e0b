/** The sandbox's HTTP loop: the /v3 route table, one request from its bytes to its answer (token, faults, body, routes), and the Node server around it. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { retiredCall } from '../domain/v20/retired.ts';
import type { Faults } from './faults.ts';
import {
  clientErrorResponse,
  decodeSegment,
  InputError,
  MAX_BODY_BYTES,
  parseJsonBody,
  readBody,
  requestTarget,
} from './http-input.ts';
import { legacyReplacement } from './legacy/routes.ts';
import { toJSON, type SandboxReply, type SandboxRoute } from './route.ts';
import { HttpError, type Handler } from './v3/context.ts';

/** The /v3 and /sandbox handlers by method and path template (`{name}` matches one segment), in the order they were added. */
export class RouteTable {
  readonly #routes: [string, RegExp, Handler][] = [];

  /** Adds a handler (the `On` every route family mounts itself with). */
  on = (method: string, path: string, h: Handler): void => {
    const re = new RegExp(`^${path.replace(/\{[a-zA-Z]+\}/g, '([^/]+)')}$`);
    this.#routes.push([method, re, h]);
  };

  /** The first handler of this method and path with its decoded segments, or else the methods the path has (empty: no such path). */
  find(method: string, path: string): { handler: Handler; params: string[] } | { allowed: string[] } {
    const allowed: string[] = [];
    for (const [m, re, h] of this.#routes) {
      const match = re.exec(path);
      if (!match) continue;
      if (m !== method) {
        allowed.push(m);
        continue;
      }
      return { handler: h, params: match.slice(1).map(decodeSegment) };
    }
    return { allowed: allowed.sort() };
  }
}

/** RequestID headers, one sequence for answers and streams. */
export function requestIDs(): () => string {
  let n = 0;
  return () => String(++n + 1_000_000_000);
}

/** Writes a reply: JSON (times as UNIX seconds when `unix`) or its raw bytes, with a RequestID and the Content-Length. */
export function sendReply(
  res: ServerResponse,
  reply: SandboxReply,
  unix: boolean,
  requestID: string,
  extra?: Record<string, string>,
): void {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    RequestID: requestID,
    ...reply.headers,
    ...extra,
  };
  const data = reply.raw ?? (reply.body === undefined ? '' : toJSON(reply.body, unix));
  headers['Content-Length'] = String(Buffer.byteLength(data));
  res.writeHead(reply.status, headers);
  res.end(data);
}

/**
 * Whether a request carries the required token (or one the OAuth endpoints issued); every request
 * does when no token is required.
 */
export function tokenCheck(
  required: string | undefined,
  issued: ReadonlySet<string>,
): (req: IncomingMessage) => boolean {
  return (req) => {
    if (required === undefined) return true;
    // The scheme is case-insensitive (RFC 9110 11.1): 'bearer' is 'Bearer'.
    const auth = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    const token = auth?.[1];
    return token !== undefined && (token === required || issued.has(token));
  };
}

/**
 * A request body as the routes get it: text for OAuth's token endpoint (RFC 6749 4.1.3) and the
 * legacy /v1 form bodies; otherwise JSON whatever its Content-Type (curl -d sends JSON labelled as a
 * form), and a body that is not JSON is a 400 saying what to send.
 */
export function requestBody(path: string, text: string, contentType: string | undefined): unknown {
  const form = path.startsWith('/v1/') && (contentType ?? '').startsWith('application/x-www-form-urlencoded');
  if (form) return text;
  if (text.trim() === '') return undefined;
  try {
    return parseJsonBody(text);
  } catch (e) {
    if (e instanceof InputError && contentType !== undefined && !/json/i.test(contentType)) {
      throw new InputError(
        400,
        `${e.message}. The body is read as JSON whatever its Content-Type (it was '${contentType}'): send a JSON object, with Content-Type: application/json`,
      );
    }
    throw e;
  }
}

/** What the request loop needs of the running sandbox. */
export interface HttpParts {
  routes: RouteTable;
  /** Tried in order before the route table (legacy /v1, labs, OAuth). */
  mounted: readonly SandboxRoute[];
  faults: Faults;
  counters: { requests: number };
  authorized: (req: IncomingMessage) => boolean;
  baseUrl: () => string;
  requestID: () => string;
  /** The slowest /v3 handler (wall and CPU ms), what GET /sandbox/stats reports. */
  slowest: { ms: number; cpuMs: number; request: string };
  log?: Logger | undefined;
}

/** One request to its answer: every error is answered v20-shaped (a 500 for a bug, logged). */
export function requestHandler(p: HttpParts): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const send = (
    res: ServerResponse,
    reply: SandboxReply,
    unix: boolean,
    extra?: Record<string, string>,
  ): void => sendReply(res, reply, unix, p.requestID(), extra);
  return async (req, res) => {
    p.counters.requests++;
    const method = req.method ?? 'GET';
    const unix = (req.headers['accept-datetime-format'] ?? '').toString().toUpperCase() === 'UNIX';
    let path = '';
    try {
      const url = requestTarget(req.url ?? '/', p.baseUrl());
      path = url.pathname;
      // With --require-token every route is guarded: the API, labs, the OAuth endpoints (which issue
      // tokens) and the control routes (which move time and prices).
      if (!p.authorized(req)) {
        await readBody(req).catch(() => '');
        const replacement = legacyReplacement(method, path);
        send(
          res,
          { status: 401, body: { errorMessage: 'Insufficient authorization to perform request.' } },
          unix,
          replacement !== undefined ? { 'X-V3-Replacement': replacement } : undefined,
        );
        return;
      }
      if (path.startsWith('/v3/') || path.startsWith('/labs/')) {
        const fault = p.faults.rest();
        if (fault) {
          await readBody(req).catch(() => '');
          send(res, fault, unix);
          return;
        }
      }
      const text = await readBody(req);
      // /v1 is served by the legacy route; only the labs endpoints OANDA removed are retired here.
      const retired = path.startsWith('/v1') ? undefined : retiredCall(method, path);
      if (retired) {
        // v20's errorMessage, and the legacy API's code/message for a /v1 client that reads those.
        send(
          res,
          {
            status: 404,
            body: {
              errorMessage: retired.message,
              errorCode: 'RETIRED_ENDPOINT',
              code: 404,
              message: retired.message,
              moreInfo: 'https://developer.oanda.com/rest-live-v20/introduction/',
            },
          },
          unix,
        );
        return;
      }
      const body = requestBody(path, text, req.headers['content-type']?.toString());
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      for (const route of p.mounted) {
        const reply = await route({ method, url, headers, body });
        if (reply) {
          send(res, reply, unix);
          return;
        }
      }
      const found = p.routes.find(method, path);
      if ('handler' in found) {
        // The synchronous part of a handler (the call, up to its first await) and the send are timed:
        // the slowest is in /sandbox/stats, what a load run checks against "never blocks".
        // Wall time counts time the process was not scheduled on a busy machine; CPU time does not.
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const pending = found.handler({ method, url, headers, body, unix, res }, found.params);
        let took = performance.now() - t0;
        const cpu = process.cpuUsage(c0);
        const reply = await pending;
        const t1 = performance.now();
        const c1 = process.cpuUsage();
        if (reply !== 'stream') send(res, reply, unix);
        took += performance.now() - t1;
        const c2 = process.cpuUsage(c1);
        const cpuMs = (cpu.user + cpu.system + c2.user + c2.system) / 1000;
        if (!path.startsWith('/sandbox/')) {
          if (took > p.slowest.ms) {
            p.slowest.ms = took;
            p.slowest.request = `${method} ${path}`;
          }
          if (cpuMs > p.slowest.cpuMs) p.slowest.cpuMs = cpuMs;
        }
        return;
      }
      if (found.allowed.length > 0) {
        send(
          res,
          {
            status: 405,
            body: {
              errorMessage: `Method ${method} is not allowed on ${path} (use ${found.allowed.join(' or ')})`,
            },
          },
          unix,
          { Allow: found.allowed.join(', ') },
        );
        return;
      }
      throw new HttpError(
        404,
        `No such endpoint: ${method} ${path} (the sandbox serves OANDA's v20 /v3 endpoints and /sandbox control)`,
      );
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError || e instanceof InputError) {
        const body = e.errorCode
          ? { errorMessage: e.message, errorCode: e.errorCode }
          : { errorMessage: e.message };
        send(
          res,
          { status: e.status, body },
          unix,
          e.status === 413 || e.status === 414 ? { Connection: 'close' } : undefined,
        );
        return;
      }
      const err = e as Error & { code?: string };
      if (err.code === 'INSTRUMENT') {
        send(
          res,
          { status: 400, body: { errorMessage: err.message, errorCode: 'INVALID_INSTRUMENT' } },
          unix,
        );
        return;
      }
      p.log?.error({ err: err.message, stack: err.stack, method, path }, 'sandbox request failed');
      send(res, { status: 500, body: { errorMessage: `Internal sandbox error: ${err.message}` } }, unix);
    }
  };
}

/** The listening server: its URL, and `close()` that ends idle connections and, after 200 ms, the rest. */
export interface HttpServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The Node HTTP server around `handle`, listening on `host:port`: requests Node's parser refuses,
 * CONNECT, Expect headers and oversized 100-continue bodies are answered v20-shaped too. A port it
 * cannot listen on rejects with `listenError(message)`.
 */
export async function serveHttp(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  o: {
    host: string;
    port: number;
    requestID: () => string;
    log?: Logger | undefined;
    listenError: (message: string) => Error;
  },
): Promise<HttpServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const t0 = Date.now();
    res.on('finish', () =>
      o.log?.debug(
        {
          method: req.method,
          path: (req.url ?? '').split('?')[0],
          status: res.statusCode,
          ms: Date.now() - t0,
        },
        'request',
      ),
    );
    // handle answers every error itself; this catch is the last guard that keeps the server up.
    handle(req, res).catch((e: unknown) => {
      o.log?.error({ err: (e as Error).message }, 'sandbox request handler failed');
      res.destroy();
    });
  });
  // A request Node's HTTP parser refuses never reaches handle: answer it here, v20-shaped.
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err, o.requestID()));
  });
  // Expect: 100-continue with a body over the limit: 413 at once, before the client sends it.
  server.on('checkContinue', (req, res) => {
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
      sendReply(
        res,
        {
          status: 413,
          body: { errorMessage: `Request body too large (at most ${MAX_BODY_BYTES} bytes, 1 MiB)` },
        },
        false,
        o.requestID(),
        { Connection: 'close' },
      );
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });
  // CONNECT (a proxy tunnel) is no v20 method: Node would close the connection without an answer.
  server.on('connect', (_req, socket: Duplex) => {
    socket.end(
      clientErrorResponse(Object.assign(new Error('CONNECT'), { code: 'HPE_INVALID_METHOD' }), o.requestID()),
    );
  });
  // An Expect header other than 100-continue: Node would answer 417 with no body.
  server.on('checkExpectation', (req, res) => {
    sendReply(
      res,
      {
        status: 417,
        body: {
          errorMessage: `Expectation failed: the sandbox only honours 'Expect: 100-continue' (got '${String(req.headers.expect)}')`,
        },
      },
      false,
      o.requestID(),
      { Connection: 'close' },
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (e) =>
      fail(o.listenError(`sandbox cannot listen on ${o.host}:${o.port}: ${e.message}`)),
    );
    server.listen(o.port, o.host, () => done());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeIdleConnections();
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 200).unref();
      }),
  };
}
