import type { Logger } from 'pino';
import pino from 'pino';
import { Pool, buildConnector } from 'undici';
import { retiredCall } from '../../domain/v20/retired.ts';
import { V20Error, httpError } from './errors.ts';
import { RateLimiter, backoffDelay, sleep } from './rate-limit.ts';

/** How to reach one v20 environment. Only `baseUrl` is required; the defaults follow OANDA's published limits. */
export interface V20HttpOptions {
  /** REST base, e.g. `https://api-fxpractice.oanda.com` (the `/v3` prefix is part of each path). */
  readonly baseUrl: string;
  /** Streaming base, e.g. `https://stream-fxpractice.oanda.com`; default `baseUrl`. */
  readonly streamUrl?: string;
  /** Bearer token. Never logged, never in an error. Absent: no Authorization header (sandbox). */
  readonly token?: string;
  /** Times in responses: RFC 3339 strings (default) or UNIX seconds as decimal strings. */
  readonly datetimeFormat?: 'RFC3339' | 'UNIX';
  readonly log?: Logger;
  /** Request budget per host. Default 100/s, burst 100 (OANDA's published limit). */
  readonly rate?: { readonly perSecond: number; readonly burst: number };
  /** New connections per second (default 2, OANDA's limit). */
  readonly connectionsPerSecond?: number;
  /** How many times a retryable request is repeated (default 5). */
  readonly retries?: number;
  /** First backoff step in ms (default 250); doubles per attempt, full jitter, capped at 10 s. */
  readonly retryBaseMs?: number;
  /** Per-request timeout for headers and body (default 30 s). Streams use their watchdog instead. */
  readonly timeoutMs?: number;
  /** Connections per pool (default 8). */
  readonly connections?: number;
}

/** A 2xx answer: status, parsed JSON body, v20's `RequestID`, and the response headers (never the request's). */
export interface V20Response<T> {
  readonly status: number;
  readonly body: T;
  readonly requestID?: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** Query parameters; `undefined` values are left out. */
export type V20Query = Record<string, string | number | boolean | undefined>;

/**
 * Per-call options of a v20 REST call (`V20Http.request`, `V20Rest.candles`). Leaving them out keeps
 * the transport's defaults.
 */
export interface V20CallOptions {
  /**
   * Cancels the call: a request in flight is aborted and its connection closed (undici destroys
   * the socket, so nothing keeps running on the server's answer); a wait for the rate budget or
   * before a retry ends at once. The call then rejects with a `V20AbortError`, never with an HTTP
   * error. Already aborted: rejects without sending anything.
   */
  readonly signal?: AbortSignal;
  /**
   * Repeat on 5xx/429/network errors. Default: true for GET, false otherwise (orders are never
   * retried blindly). `false` for a GET whose caller retries on its own terms: exactly one
   * request is sent and its error (e.g. a 503, `retryable: true`) comes back as it is.
   */
  readonly retry?: boolean;
}

/** One request for `V20Http.request`. */
export interface V20Request extends V20CallOptions {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  readonly path: string;
  readonly query?: V20Query;
  readonly body?: unknown;
}

/**
 * A call cancelled through its `signal` (`V20CallOptions.signal`): not an HTTP answer, not a network
 * failure. Tell it apart with `instanceof V20AbortError` (or `aborted === true`); `status` is never
 * set, `retryable` is false (the caller asked to stop). `reason` is the signal's reason;
 * `timedOut` is true when that reason is a `TimeoutError` (e.g. `AbortSignal.timeout(ms)`).
 *
 * Its `code` stays `V20_NETWORK`, the code an aborted request always had, so handlers written
 * against `V20Error` codes keep working.
 */
export class V20AbortError extends V20Error {
  readonly aborted = true as const;
  readonly reason: unknown;
  readonly timedOut: boolean;

  constructor(method: string, path: string, signal: AbortSignal, cause?: unknown) {
    const reason: unknown = signal.reason;
    const name = (reason as { name?: unknown } | undefined)?.name;
    const timedOut = name === 'TimeoutError';
    const why = timedOut
      ? "the caller's time limit passed"
      : reason instanceof Error && reason.message !== '' && name !== 'AbortError'
        ? reason.message
        : 'by the caller';
    super({
      code: 'V20_NETWORK',
      method,
      path,
      message: `${method} ${path}: aborted (${why}); the request was cancelled`,
      retryable: false,
      cause: cause ?? reason,
    });
    this.name = 'V20AbortError';
    this.reason = reason;
    this.timedOut = timedOut;
  }
}

/** Counters for reports and tests. */
export interface V20HttpStats {
  requests: number;
  retries: number;
  /** Responses that were 429. */
  rateLimited: number;
  connections: number;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|::1)$/i;

/**
 * Checks a base URL: https anywhere, http only to loopback (the sandbox). Throws `V20_TLS` when
 * the token would otherwise travel in clear text, `V20_UNSUPPORTED` for other schemes.
 */
export function checkBaseUrl(url: string, field = 'baseUrl'): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new V20Error({
      code: 'V20_UNSUPPORTED',
      method: '-',
      path: '-',
      message: `${field} "${url}" is not a URL (expected e.g. https://api-fxpractice.oanda.com)`,
    });
  }
  if (u.username || u.password) {
    throw new V20Error({
      code: 'V20_UNSUPPORTED',
      method: '-',
      path: '-',
      message: `${field} must not carry credentials; pass the token separately`,
    });
  }
  if (u.protocol === 'https:') return u;
  if (u.protocol === 'http:') {
    if (LOOPBACK.test(u.hostname)) return u;
    throw new V20Error({
      code: 'V20_TLS',
      method: '-',
      path: '-',
      message: `${field} ${u.origin} uses http:// to a host that is not loopback; the token would travel unencrypted. Use https:// (plain http is allowed only for 127.0.0.1, ::1 and localhost, e.g. the local sandbox)`,
    });
  }
  throw new V20Error({
    code: 'V20_UNSUPPORTED',
    method: '-',
    path: '-',
    message: `${field} ${u.origin}: scheme ${u.protocol} is not supported; use https://`,
  });
}

/**
 * Throws V20_UNSUPPORTED, before anything is sent, for a call to OANDA's retired v1 REST API or a
 * removed labs endpoint: the message names the v20 call to use instead.
 */
function refuseRetired(method: string, path: string): void {
  const q = path.indexOf('?');
  const retired = retiredCall(method, q < 0 ? path : path.slice(0, q));
  if (retired)
    throw new V20Error({
      code: 'V20_UNSUPPORTED',
      method,
      path,
      message: `${retired.message}; no request was sent`,
    });
}

/** Appends a query (undefined values skipped) to a path. */
export function withQuery(path: string, query?: V20Query): string {
  if (query === undefined) return path;
  const q = new URLSearchParams();
  for (const k in query) {
    const v = query[k];
    if (v !== undefined) q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

/** The `rel="next"` target of a `Link` header, as a path with query, or undefined. */
export function nextLink(link: string | string[] | undefined): string | undefined {
  if (link === undefined) return undefined;
  for (const part of (Array.isArray(link) ? link.join(',') : link).split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel="?next"?/i.test(m[2]!)) {
      const u = new URL(m[1]!, 'http://relative.invalid');
      return u.pathname + u.search;
    }
  }
  return undefined;
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds. */
export function retryAfterMs(h: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  if (v === undefined || v === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/**
 * Splits a byte stream into lines. UTF-8 safe: a character split across chunks is decoded once
 * both halves arrived (TextDecoder in streaming mode). `\r\n` and `\n` end a line; empty lines are
 * dropped (v20 sends none, proxies may).
 */
export class LineSplitter {
  readonly #decoder = new TextDecoder('utf-8');
  #rest = '';

  /** Feeds one chunk; returns the lines it completed. */
  push(chunk: Uint8Array): string[] {
    const text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    const out: string[] = [];
    let start = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
      const end = i > start && text.charCodeAt(i - 1) === 13 ? i - 1 : i;
      if (end > start) out.push(text.slice(start, end));
      start = i + 1;
    }
    this.#rest = text.slice(start);
    return out;
  }

  /** At end of stream: the unterminated last line, if any. */
  end(): string[] {
    const text = this.#rest + this.#decoder.decode();
    this.#rest = '';
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    return line.length > 0 ? [line] : [];
  }
}

/** The undici error codes of a timeout. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * HTTP transport for v20: one undici `Pool` per host with keep-alive, the token, the datetime
 * format, the rate limits, retries of reads, typed errors and a debug log line per response with
 * its `RequestID`.
 *
 * Use one instance per environment (practice or live) and `close()` it at shutdown. Retry rules:
 * a request with `retry` (default for GET) is repeated on 5xx, 429 (after `Retry-After`) and
 * network errors/timeouts with jittered exponential backoff; POST/PUT/PATCH are never repeated
 * here: `V20Execution` makes order submissions idempotent through the client ID.
 */
export class V20Http {
  readonly datetimeFormat: 'RFC3339' | 'UNIX';
  readonly stats: V20HttpStats = { requests: 0, retries: 0, rateLimited: 0, connections: 0 };
  readonly log: Logger;
  readonly #rest: Pool;
  readonly #stream: Pool;
  readonly #headers: Record<string, string>;
  readonly #limiter: RateLimiter;
  readonly #connLimiter: RateLimiter;
  readonly #retries: number;
  readonly #retryBaseMs: number;
  readonly #timeoutMs: number;
  readonly #closing = new AbortController();

  constructor(o: V20HttpOptions) {
    const base = checkBaseUrl(o.baseUrl, 'baseUrl');
    const stream = checkBaseUrl(o.streamUrl ?? o.baseUrl, 'streamUrl');
    this.datetimeFormat = o.datetimeFormat ?? 'RFC3339';
    this.log = (o.log ?? pino({ level: 'silent' })).child({ component: 'v20' });
    this.#limiter = new RateLimiter(o.rate ?? { perSecond: 100, burst: 100 });
    const cps = o.connectionsPerSecond ?? 2;
    this.#connLimiter = new RateLimiter({ perSecond: cps, burst: cps });
    this.#retries = o.retries ?? 5;
    this.#retryBaseMs = o.retryBaseMs ?? 250;
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    // Built once and kept out of every log and error; the object is never serialised.
    this.#headers = {
      'accept-datetime-format': this.datetimeFormat,
      'content-type': 'application/json',
      ...(o.token !== undefined && o.token !== '' ? { authorization: `Bearer ${o.token}` } : {}),
    };
    const connections = o.connections ?? 8;
    this.#rest = new Pool(base.origin, {
      connections,
      keepAliveTimeout: 30_000,
      pipelining: 1,
      connect: this.#connector(),
    });
    this.#stream = new Pool(stream.origin, {
      connections,
      keepAliveTimeout: 30_000,
      pipelining: 1,
      connect: this.#connector(),
    });
  }

  /** Wraps undici's connector so that new connections wait for the connection budget. */
  #connector(): buildConnector.connector {
    const base = buildConnector({});
    return (opts, cb) => {
      this.#connLimiter.acquire(this.#closing.signal).then(
        () => {
          this.stats.connections++;
          base(opts, cb);
        },
        (e: unknown) => cb(e instanceof Error ? e : new Error(String(e)), null),
      );
    };
  }

  /**
   * One v20 request. Resolves with the parsed body on 2xx; rejects with a `V20Error` otherwise
   * (after retries when allowed), or with a `V20AbortError` once `r.signal` cancelled it (see
   * `V20CallOptions`). An answer fully read before the abort is still returned (or its HTTP error).
   */
  async request<T = unknown>(r: V20Request): Promise<V20Response<T>> {
    const retry = r.retry ?? r.method === 'GET';
    const path = withQuery(r.path, r.query);
    refuseRetired(r.method, path);
    const signal = r.signal;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once<T>(r.method, path, r.body, signal);
      } catch (e) {
        if (
          !(e instanceof V20Error) ||
          !retry ||
          !e.retryable ||
          attempt >= this.#retries ||
          this.#closing.signal.aborted ||
          signal?.aborted
        )
          throw e;
        const delay = e.retryAfterMs ?? backoffDelay(attempt, this.#retryBaseMs, 10_000);
        this.stats.retries++;
        this.log.debug(
          {
            method: r.method,
            path,
            attempt: attempt + 1,
            delayMs: Math.round(delay),
            code: e.code,
            status: e.status,
          },
          'retrying',
        );
        if (signal === undefined) await sleep(delay);
        else {
          try {
            await sleep(delay, signal);
          } catch (w) {
            throw this.#aborted(r.method, path, signal, w, 'waiting to retry');
          }
        }
      }
    }
  }

  /** The error of a call its signal cancelled, logged once. */
  #aborted(method: string, path: string, signal: AbortSignal, cause: unknown, when: string): V20AbortError {
    const e = new V20AbortError(method, path, signal, cause);
    this.log.debug({ method, path, when, timedOut: e.timedOut }, 'aborted');
    return e;
  }

  async #once<T>(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<V20Response<T>> {
    if (signal === undefined) await this.#limiter.acquire();
    else {
      try {
        await this.#limiter.acquire(signal);
      } catch (e) {
        throw this.#aborted(method, path, signal, e, 'before sending');
      }
    }
    this.stats.requests++;
    const started = Date.now();
    let res;
    try {
      res = await this.#rest.request({
        method: method as 'GET',
        path,
        headers: this.#headers,
        body: body === undefined ? null : JSON.stringify(body),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      // An aborted request rejects with the signal's reason, whatever it is: the signal decides.
      throw signal?.aborted
        ? this.#aborted(method, path, signal, e, 'waiting for the answer')
        : this.#transportError(method, path, e);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (e) {
      throw signal?.aborted
        ? this.#aborted(method, path, signal, e, 'reading the body')
        : this.#transportError(method, path, e);
    }
    const requestID = headerValue(res.headers.requestid);
    if (res.statusCode === 429) this.stats.rateLimited++;
    this.log.debug({ method, path, status: res.statusCode, requestID, ms: Date.now() - started }, 'response');
    let parsed: unknown = text;
    let parseFailed = false;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parseFailed = true;
      }
    } else parsed = {};
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw httpError(
        method,
        path,
        res.statusCode,
        parsed,
        requestID,
        retryAfterMs(res.headers['retry-after']),
      );
    }
    if (parseFailed) {
      throw new V20Error({
        code: 'V20_PARSE',
        method,
        path,
        status: res.statusCode,
        message: `${method} ${path}: the response body is not JSON (${text.slice(0, 60)}); is baseUrl a v20 server?`,
        ...(requestID !== undefined ? { requestID } : {}),
      });
    }
    return {
      status: res.statusCode,
      body: parsed as T,
      headers: res.headers,
      ...(requestID !== undefined ? { requestID } : {}),
    };
  }

  #transportError(method: string, path: string, e: unknown): V20Error {
    if (e instanceof V20Error) return e;
    const code = (e as { code?: unknown })?.code;
    const name = (e as { name?: unknown })?.name;
    if (name === 'AbortError' || code === 'UND_ERR_ABORTED') {
      return new V20Error({
        code: 'V20_NETWORK',
        method,
        path,
        message: `${method} ${path}: aborted`,
        retryable: false,
        cause: e,
      });
    }
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
      return new V20Error({
        code: 'V20_TIMEOUT',
        method,
        path,
        message: `${method} ${path}: no answer within ${this.#timeoutMs} ms`,
        retryable: true,
        cause: e,
      });
    }
    const what = e instanceof Error ? e.message : String(e);
    return new V20Error({
      code: 'V20_NETWORK',
      method,
      path,
      message: `${method} ${path}: network error: ${what} (check the connection and the environment's host)`,
      retryable: !this.#closing.signal.aborted,
      cause: e,
    });
  }

  /**
   * Every page of a list that v20 paginates with `Link: <…>; rel="next"` (orders, trades).
   * Yields the items `pick` takes from each page's body, page by page.
   */
  async *paginate<T>(path: string, query: V20Query, pick: (body: any) => T[]): AsyncIterable<T[]> {
    let next: string | undefined = withQuery(path, query);
    while (next !== undefined) {
      const res: V20Response<unknown> = await this.request({ method: 'GET', path: next });
      yield pick(res.body);
      next = nextLink(res.headers.link);
    }
  }

  /**
   * Opens a v20 stream (`/v3/accounts/{id}/pricing/stream`, `/transactions/stream`) and yields its
   * lines, whole and decoded, as they arrive. Aborting `signal` ends the iteration and closes the
   * connection. A non-2xx answer rejects with a `V20Error`. No retry here: the watchdog in
   * `stream.ts` decides when to reconnect.
   */
  async openStream(path: string, query: V20Query, signal: AbortSignal): Promise<AsyncIterable<string>> {
    const full = withQuery(path, query);
    refuseRetired('GET', full);
    await this.#limiter.acquire(signal);
    this.stats.requests++;
    let res;
    try {
      res = await this.#stream.request({
        method: 'GET',
        path: full,
        headers: this.#headers,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: 0,
        signal,
      });
    } catch (e) {
      throw this.#transportError('GET', full, e);
    }
    const requestID = headerValue(res.headers.requestid);
    if (res.statusCode === 429) this.stats.rateLimited++;
    this.log.debug({ method: 'GET', path: full, status: res.statusCode, requestID }, 'stream opened');
    if (res.statusCode < 200 || res.statusCode >= 300) {
      let text = '';
      try {
        text = await res.body.text();
      } catch {
        // the status alone says enough
      }
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // keep the text
      }
      throw httpError(
        'GET',
        full,
        res.statusCode,
        parsed,
        requestID,
        retryAfterMs(res.headers['retry-after']),
      );
    }
    const body = res.body;
    const transportError = (e: unknown) => this.#transportError('GET', full, e);
    return {
      async *[Symbol.asyncIterator]() {
        const split = new LineSplitter();
        try {
          for await (const chunk of body) {
            for (const line of split.push(chunk as Uint8Array)) yield line;
          }
          for (const line of split.end()) yield line;
        } catch (e) {
          if (signal.aborted) return;
          throw transportError(e);
        } finally {
          if (!body.destroyed) body.destroy();
        }
      },
    };
  }

  /** True once `close()` was called: streams stop reconnecting. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Closes both pools; requests in flight finish or fail, waiting retries stop. */
  async close(): Promise<void> {
    this.#closing.abort(
      new V20Error({ code: 'V20_NETWORK', method: '-', path: '-', message: 'the v20 client was closed' }),
    );
    await Promise.all([this.#rest.close(), this.#stream.destroy()]);
  }
}

function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
