/**
 * What every part of the legacy generation (`/v1`) shares: the context the sandbox gives it, its
 * error (and the body it is answered with), and the readers of a request's form fields.
 */
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { formatTime, parseRequestTime } from '../../domain/time.ts';
import { parseOrderRequest } from '../../domain/v20/parse.ts';
import type { OrderRequest, Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';
import { rejectMessage } from '../reject-messages.ts';
import type { SandboxReply } from '../route.ts';
import { CANCEL_REASONS } from './shapes.ts';

export type Obj = Record<string, unknown>;

/** What the legacy routes need from the sandbox. */
export interface LegacyContext {
  readonly accounts: ReadonlyMap<string, SandboxAccount>;
  readonly instruments: InstrumentRegistry;
  /** The sandbox clock, epoch ms. */
  readonly now: () => number;
  readonly baseUrl: () => string;
  /** Submits an intent to an account at the sandbox clock (the v20 routes' path). */
  readonly submit: (a: SandboxAccount, intent: OrderIntent) => Transaction[];
  /** The clock of the transaction-listing rate limit (default: the sandbox clock). */
  readonly rateClock?: () => number;
  /** v20 transactions one legacy listing looks at, at most (default MAX_SCAN, 5000). */
  readonly maxScan?: number;
}

const MORE_INFO = 'docs/legacy-v1.md';

export class LegacyError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/**
 * Error bodies: the specification does not show the legacy error body. The sandbox gives the
 * current generation's `errorMessage` / `errorCode` and, for clients written against the legacy
 * API, `code` (the HTTP status), `message` and `moreInfo`.
 */
export function errorReply(e: LegacyError): SandboxReply {
  const body: Obj = { code: e.status, message: e.message, moreInfo: MORE_INFO, errorMessage: e.message };
  if (e.errorCode !== undefined) body.errorCode = e.errorCode;
  return e.headers ? { status: e.status, body, headers: e.headers } : { status: e.status, body };
}

/** The fields of a form-encoded (or JSON) body. */
export function formFields(body: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (body === undefined || body === null) return out;
  if (typeof body === 'string') {
    for (const [k, v] of new URLSearchParams(body)) out.set(k, v);
    return out;
  }
  if (typeof body !== 'object' || Array.isArray(body))
    throw new LegacyError(
      400,
      'Invalid request body: send form-encoded fields (application/x-www-form-urlencoded), e.g. instrument=EUR_USD&units=100&side=buy&type=market',
    );
  for (const [k, v] of Object.entries(body as Obj)) if (v !== undefined && v !== null) out.set(k, String(v));
  return out;
}

export const number = (
  f: Map<string, string>,
  k: string,
  opts: { min?: number; integer?: boolean } = {},
): number | undefined => {
  const v = f.get(k);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (
    v.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.integer === true && !Number.isInteger(n)) ||
    n < (opts.min ?? 0)
  ) {
    throw new LegacyError(
      400,
      `Invalid or malformed argument: ${k}=${v} (give ${opts.integer === true ? 'a whole number' : 'a number'} >= ${opts.min ?? 0})`,
      'INVALID_ARGUMENT',
    );
  }
  return n;
};

/** expiry: RFC 3339 or UNIX seconds (the legacy API took both). */
export function expiryTime(v: string): string {
  const ms = /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : parseRequestTime(v);
  if (!Number.isFinite(ms))
    throw new LegacyError(
      400,
      `Invalid or malformed argument: expiry=${v} (give an RFC 3339 UTC time, e.g. 2024-01-03T00:00:00Z, or UNIX seconds)`,
      'INVALID_ARGUMENT',
    );
  return formatTime(ms);
}

/** Parses a built v20 order request through v20's own parser (the same as POST /v3/orders). */
export function v20Order(req: Obj): OrderRequest {
  const r = parseOrderRequest(req, 'order');
  if (!r.ok)
    throw new LegacyError(
      400,
      `Invalid or malformed argument: ${r.error.path} (expected ${r.error.expected})`,
      'INVALID_ARGUMENT',
    );
  return r.value;
}

export const isReject = (t: Transaction): boolean => t.type.endsWith('_REJECT');

/** The reject (or fill-failure cancel) of a submitted order as a legacy error. */
export function failure(txs: readonly Transaction[], orderID?: string): LegacyError | undefined {
  for (const t of txs) {
    if (isReject(t)) {
      const reason = (t as { rejectReason?: string }).rejectReason ?? 'UNKNOWN';
      return new LegacyError(400, rejectMessage(reason, 'order'), reason);
    }
    const x = t as Transaction & { orderID?: string; reason?: string };
    if (
      t.type === 'ORDER_CANCEL' &&
      orderID !== undefined &&
      x.orderID === orderID &&
      x.reason !== 'CLIENT_REQUEST_REPLACED'
    ) {
      return new LegacyError(
        400,
        `The order was not filled and is cancelled: ${CANCEL_REASONS[x.reason ?? ''] ?? x.reason ?? 'UNKNOWN'} (v20 reason ${x.reason ?? 'UNKNOWN'}; the ORDER_CANCEL transaction records it)`,
        x.reason,
      );
    }
  }
  return undefined;
}
