import type { Transaction } from '../../domain/v20/index.ts';

/** What went wrong talking to v20. Each code says where to look. */
export type V20ErrorCode =
  'V20_HTTP' | 'V20_NETWORK' | 'V20_TIMEOUT' | 'V20_PARSE' | 'V20_TLS' | 'V20_UNSUPPORTED';

/** Fields of a V20Error; `message` must already name the method, path and how to fix the problem. */
export interface V20ErrorInit {
  readonly code: V20ErrorCode;
  readonly method: string;
  readonly path: string;
  readonly message: string;
  readonly status?: number;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly rejectTransaction?: Transaction;
  readonly retryable?: boolean;
  readonly requestID?: string;
  /** Milliseconds the server asked us to wait (`Retry-After` of a 429 or 503). */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

/**
 * The one error class of the v20 boundary: a failed HTTP exchange, a broken connection, a timeout,
 * a body that is not v20, or a URL that would send the token in clear text.
 *
 * Use `retryable` to decide whether repeating the same request can help (5xx, 429, network errors
 * and timeouts: yes; 4xx rejects, parse errors, TLS refusals: no). `rejectTransaction` carries the
 * `*_REJECT` transaction of a 400/404 order response, so a caller can see the `rejectReason`.
 *
 * Invariant: an error never holds the token or any request header; `path` is the request path
 * with its query, which v20 never uses for credentials.
 */
export class V20Error extends Error {
  readonly code: V20ErrorCode;
  readonly status?: number;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly rejectTransaction?: Transaction;
  readonly retryable: boolean;
  readonly requestID?: string;
  readonly retryAfterMs?: number;
  readonly method: string;
  readonly path: string;

  constructor(i: V20ErrorInit) {
    super(i.message, i.cause === undefined ? undefined : { cause: i.cause });
    this.name = 'V20Error';
    this.code = i.code;
    this.method = i.method;
    this.path = i.path;
    this.retryable = i.retryable ?? false;
    if (i.status !== undefined) this.status = i.status;
    if (i.errorCode !== undefined) this.errorCode = i.errorCode;
    if (i.errorMessage !== undefined) this.errorMessage = i.errorMessage;
    if (i.rejectTransaction !== undefined) this.rejectTransaction = i.rejectTransaction;
    if (i.requestID !== undefined) this.requestID = i.requestID;
    if (i.retryAfterMs !== undefined) this.retryAfterMs = i.retryAfterMs;
  }
}

/** Whether an HTTP status is worth repeating the request for (server trouble or rate limiting). */
export const isRetryableStatus = (status: number): boolean => status >= 500 || status === 429;

/**
 * Builds the error of a non-2xx response from its parsed body (or raw text when it was not JSON).
 * Picks `errorCode`, `errorMessage` and the first `*RejectTransaction` field v20 put in the body.
 */
export function httpError(
  method: string,
  path: string,
  status: number,
  body: unknown,
  requestID: string | undefined,
  retryAfterMs?: number,
): V20Error {
  let errorCode: string | undefined;
  let errorMessage: string | undefined;
  let reject: Transaction | undefined;
  if (typeof body === 'object' && body !== null) {
    const o = body as Record<string, unknown>;
    if (typeof o.errorCode === 'string') errorCode = o.errorCode;
    if (typeof o.errorMessage === 'string') errorMessage = o.errorMessage;
    for (const k in o) {
      const v = o[k];
      if (k.endsWith('RejectTransaction') && typeof v === 'object' && v !== null) {
        reject = v as Transaction;
        break;
      }
    }
    if (errorCode === undefined && reject !== undefined) {
      const reason = (reject as { rejectReason?: unknown }).rejectReason;
      if (typeof reason === 'string') errorCode = reason;
    }
  } else if (typeof body === 'string' && body.length > 0) {
    errorMessage = body.length > 200 ? `${body.slice(0, 197)}...` : body;
  }
  const retryable = isRetryableStatus(status);
  const what = [errorCode, errorMessage].filter((x) => x !== undefined).join(': ');
  const hint =
    status === 401
      ? ' (check the access token: fxflow auth, or the token in your config; the practice and live environments have different tokens)'
      : status === 403
        ? ' (the token has no access to this account)'
        : status === 429
          ? ' (rate limited by v20; fxflow keeps under 100 requests/s, another client may share the token)'
          : status >= 500
            ? ' (v20 server error; reads are retried, orders are looked up before any resubmission)'
            : '';
  return new V20Error({
    code: 'V20_HTTP',
    method,
    path,
    status,
    message: `${method} ${path}: HTTP ${status}${what ? ` ${what}` : ''}${requestID ? ` (RequestID ${requestID})` : ''}${hint}`,
    retryable,
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(errorMessage !== undefined ? { errorMessage } : {}),
    ...(reject !== undefined ? { rejectTransaction: reject } : {}),
    ...(requestID !== undefined ? { requestID } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}
