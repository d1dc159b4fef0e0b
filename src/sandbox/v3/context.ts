/**
 * What the sandbox's /v3 route families (accounts, pricing, orders, trades and positions,
 * transactions, control) share: the request a handler sees, the error it throws, the running
 * sandbox's state it reads (`V3Context`) and the small reply helpers. `server.ts` builds one
 * context and mounts every family on it; each family is one file in this folder.
 */
import type { ServerResponse } from 'node:http';
import type { IntervalHistogram } from 'node:perf_hooks';
import type { Catalog } from '../../adapters/catalog/index.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { UnixMs } from '../../domain/time.ts';
import { decimalsAsStrings } from '../../domain/v20/request.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';
import type { FaultOptions, Faults, StreamConn } from '../faults.ts';
import type { SandboxReply } from '../route.ts';

/** A request as a /v3 handler sees it (the body parsed, the response kept for streams). */
export interface Req {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string | undefined>;
  readonly body: unknown;
  readonly unix: boolean;
  readonly res: ServerResponse;
}

/** A reply, or 'stream' when the handler took the response over (a stream). */
export type Reply = SandboxReply | 'stream';
/** A handler gets the request and the path's `{…}` segments, decoded, in order. */
export type Handler = (r: Req, m: string[]) => Reply | Promise<Reply>;
/** Registers a handler for a method and a path template (`{name}` matches one segment). */
export type On = (method: string, path: string, h: Handler) => void;

/** An answer other than 2xx, v20-shaped: `{errorMessage, errorCode?}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
  }
}

/** The path of one account's routes. */
export const A = '/v3/accounts/{accountID}';

/** A price stream or a transaction stream the sandbox writes to. */
export interface PriceStream {
  conn: StreamConn;
  account: SandboxAccount;
  instruments: Set<string>;
  unix: boolean;
}
export interface TxStream {
  conn: StreamConn;
  account: SandboxAccount;
  unix: boolean;
  off: () => void;
}

/** The counters of `Sandbox.stats()` (and of GET /sandbox/stats). */
export interface SandboxStats {
  requests: number;
  streamConnections: number;
  droppedStreams: number;
  linesWritten: number;
  delayedOrders: number;
  /** Streams closed because their reader stopped reading (SandboxOptions.streams). */
  slowStreamsClosed: number;
  /** Streams open now, and the bytes waiting in the process for their sockets. */
  openStreams: number;
  streamQueuedBytes: number;
}

/** The running sandbox, as its routes read and move it. */
export interface V3Context {
  readonly accounts: ReadonlyMap<string, SandboxAccount>;
  readonly instruments: InstrumentRegistry;
  readonly catalog: Catalog;
  readonly faults: Faults;
  /** The sandbox clock, epoch ms. */
  now(): UnixMs;
  baseUrl(): string;
  /** The account of a path's ID; a 404 INVALID_ACCOUNT_ID naming the served ones when unknown. */
  account(id: string | undefined): SandboxAccount;
  /** Financing rates set through the control, over data/instruments.json's. */
  readonly financing: ReadonlyMap<string, { longRate: string; shortRate: string }>;
  setFinancing(name: string, rates: { longRate: string; shortRate: string }): void;
  setFaults(f: FaultOptions, quiet: boolean): void;
  /** The time of an instrument's last price, if it has one. */
  quoteTime(instrument: string): UnixMs | undefined;
  /** An instrument's PRICE object for an account (undefined before its first price). */
  priceJSON(account: SandboxAccount, instrument: string): Record<string, unknown> | undefined;
  /** A price pushed through the control: matches orders, feeds the streams. */
  tick(p: { instrument: string; bid: number; ask: number; liquidity?: number }): void;
  /** Moves the sandbox clock (never back): expiries, financing, delayed orders. */
  setTime(ms: number): void;
  /** Starts a stream on a response (headers sent). */
  openStream(res: ServerResponse): StreamConn;
  /** Writes one line; false when the stream is gone (or was cut by a fault). */
  streamWrite(conn: StreamConn, body: unknown, unix: boolean): boolean;
  readonly priceStreams: Set<PriceStream>;
  readonly txStreams: Set<TxStream>;
  /** Submits an intent at the sandbox clock; the transactions it made. */
  submit(a: SandboxAccount, intent: OrderIntent): Transaction[];
  /** Submits an intent whose answer carries its fill, waiting out the latency fault (504 past the timeout). */
  submitAndWait(a: SandboxAccount, intent: OrderIntent): Promise<Transaction[]>;
  /** A fresh intent ID. */
  intentID(): string;
  /** The counters of GET /sandbox/stats. */
  stats(): SandboxStats;
  readonly loopDelay: IntervalHistogram;
  /** The slowest request handler since the last reset (wall and CPU ms). */
  readonly slowest: { ms: number; cpuMs: number; request: string };
}

export const ok = (body: unknown, status = 200, headers?: Record<string, string>): SandboxReply =>
  headers ? { status, body, headers } : { status, body };

/** A JSON object body (an absent one is `{}`), its decimals as strings as OANDA reads them. */
export const objectBody = (b: unknown, what: string): Record<string, unknown> => {
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b))
    throw new HttpError(400, `Invalid request body: ${what} must be a JSON object`);
  // Decimals as OANDA reads them: a JSON number where v20 defines a decimal string is taken.
  return decimalsAsStrings(b as Record<string, unknown>);
};

/** A units field of a close: 'ALL', 'NONE' where allowed, or a positive decimal string. */
export const units = (v: unknown, field: string, allowNone: boolean): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v === 'string' && (v === 'ALL' || (allowNone && v === 'NONE') || /^\d+(\.\d+)?$/.test(v)))
    return v;
  throw new HttpError(
    400,
    `Invalid value specified for '${field}': ${JSON.stringify(v)} (give 'ALL'${allowNone ? ", 'NONE'" : ''} or a positive decimal string)`,
    'INVALID_UNITS',
  );
};

export const ids = (txs: readonly Transaction[]): string[] => txs.map((t) => t.id);
export const isReject = (t: Transaction): boolean => t.type.endsWith('_REJECT');

/** One page of a list newest first (`count`, `beforeID`), with v20's Link to the next. */
export const pageOf = <T extends { id: string }>(
  list: T[],
  url: URL,
  maxCount: number,
  defCount: number,
): { items: T[]; link?: string } => {
  const countText = url.searchParams.get('count');
  const count = countText === null ? defCount : Number(countText);
  if (!Number.isInteger(count) || count < 1 || count > maxCount)
    throw new HttpError(
      400,
      `Invalid value specified for 'count': ${countText} (1 to ${maxCount})`,
      'INVALID_COUNT',
    );
  const before = url.searchParams.get('beforeID');
  let items = before !== null ? list.filter((x) => Number(x.id) < Number(before)) : list;
  const more = items.length > count;
  items = items.slice(0, count);
  if (!more) return { items };
  const next = new URL(url.href);
  next.searchParams.set('beforeID', items[items.length - 1]!.id);
  return { items, link: `<${next.href}>; rel="next"` };
};

/** The items whose ID is in the `ids` query (all without it). */
export const filterByIds = <T extends { id: string }>(list: T[], url: URL): T[] => {
  const idsText = url.searchParams.get('ids');
  if (idsText === null) return list;
  const want = new Set(idsText.split(','));
  return list.filter((x) => want.has(x.id));
};
