import type {
  Account,
  AccountChanges,
  AccountSummary,
  Candlestick,
  CandlestickGranularity,
  ClientExtensions,
  ClientPrice,
  GuaranteedStopLossDetails,
  Instrument,
  Order,
  OrderRequest,
  Position,
  StopLossDetails,
  TakeProfitDetails,
  Trade,
  TrailingStopLossDetails,
  Transaction,
} from '../../domain/v20/index.ts';
import { parseResponse } from '../../domain/v20/parse.ts';
import { formatTime, formatUnixTime, parseTime } from '../../domain/time.ts';
import { V20Error } from './errors.ts';
import type { V20CallOptions, V20Http, V20Query } from './http.ts';

/** The body of an order-changing response: whatever transactions v20 produced, by field name. */
export interface OrderResponse {
  readonly orderCreateTransaction?: Transaction;
  readonly orderFillTransaction?: Transaction;
  readonly orderCancelTransaction?: Transaction;
  readonly orderReissueTransaction?: Transaction;
  readonly orderReissueRejectTransaction?: Transaction;
  readonly replacingOrderCancelTransaction?: Transaction;
  readonly relatedTransactionIDs?: string[];
  readonly lastTransactionID?: string;
  readonly [field: string]: unknown;
}

/** An entry of GET /v3/accounts. */
export interface AccountProperties {
  readonly id: string;
  readonly mt4AccountID?: number;
  readonly tags?: string[];
}

/** Query of GET /v3/instruments/{instrument}/candles; times are epoch ms or v20 time strings, sent in the client's datetime format. */
export interface CandlesQuery {
  /** Components: any of M, B, A (default M). */
  readonly price?: string;
  readonly granularity: CandlestickGranularity;
  readonly count?: number;
  /** Epoch ms or a v20 time string. */
  readonly from?: number | string;
  readonly to?: number | string;
  readonly smooth?: boolean;
  readonly includeFirst?: boolean;
  readonly dailyAlignment?: number;
  readonly alignmentTimezone?: string;
  readonly weeklyAlignment?:
    'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday' | 'Sunday';
}

/** Filter of the orders and trades lists. */
export interface ListFilter {
  readonly ids?: readonly string[];
  readonly state?: string;
  readonly instrument?: string;
  /** Page size (v20: at most 500). Every page is fetched through `Link rel="next"`. */
  readonly count?: number;
  readonly beforeID?: string;
}

/** Query of GET /v3/accounts/{id}/transactions (time range, page size, types). */
export interface TransactionPagesQuery {
  readonly from?: number | string;
  readonly to?: number | string;
  readonly pageSize?: number;
  readonly type?: readonly string[];
}

/** Encodes a path segment; `@` stays, as v20 writes client-ID specifiers (`@my-id`). */
const seg = (s: string): string => encodeURIComponent(s).replace(/%40/g, '@');

/**
 * Typed v20 endpoints over `V20Http`. Every body is checked with the validating parsers of
 * `src/domain/v20/parse.ts`; a body that does not match the v20 definitions rejects with a
 * `V20Error` of code `V20_PARSE` naming the field.
 *
 * Use it for everything but streams (`stream.ts`) and order submission with idempotency
 * (`execution.ts`, which calls `createOrder` and looks orders up by `@clientID`). Methods that
 * change state are never retried (see `V20Http`).
 */
export class V20Rest {
  constructor(readonly http: V20Http) {}

  /** A time for a query in the client's datetime format. */
  time(t: number | string): string {
    const ms = typeof t === 'number' ? t : parseTime(t);
    if (Number.isNaN(ms))
      throw new V20Error({
        code: 'V20_UNSUPPORTED',
        method: '-',
        path: '-',
        message: `time "${t}" is neither epoch ms nor an RFC 3339/UNIX time`,
      });
    return this.http.datetimeFormat === 'UNIX' ? formatUnixTime(ms) : formatTime(ms);
  }

  async #call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH',
    path: string,
    query?: V20Query,
    body?: unknown,
    o?: V20CallOptions,
  ): Promise<T> {
    // Absent fields read as undefined: the transport's defaults (exactOptionalPropertyTypes is off).
    const res = await this.http.request<unknown>({
      method,
      path,
      query,
      body,
      retry: o?.retry,
      signal: o?.signal,
    });
    return checked<T>(method, path, res.body, res.requestID);
  }

  // Accounts

  async accounts(): Promise<AccountProperties[]> {
    return (await this.#call<{ accounts: AccountProperties[] }>('GET', '/v3/accounts')).accounts;
  }
  account(id: string): Promise<{ account: Account; lastTransactionID: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}`);
  }
  summary(id: string): Promise<{ account: AccountSummary; lastTransactionID: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}/summary`);
  }
  async instruments(id: string, names?: readonly string[]): Promise<Instrument[]> {
    const q = names && names.length > 0 ? { instruments: names.join(',') } : undefined;
    return (await this.#call<{ instruments: Instrument[] }>('GET', `/v3/accounts/${seg(id)}/instruments`, q))
      .instruments;
  }
  configure(
    id: string,
    c: { alias?: string; marginRate?: string },
  ): Promise<{ clientConfigureTransaction: Transaction; lastTransactionID: string }> {
    return this.#call('PATCH', `/v3/accounts/${seg(id)}/configuration`, undefined, c);
  }
  changes(
    id: string,
    sinceTransactionID: string,
  ): Promise<{ changes: AccountChanges; state: Record<string, unknown>; lastTransactionID: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}/changes`, { sinceTransactionID });
  }

  // Market data

  /**
   * GET /v3/instruments/{instrument}/candles. `o.signal` cancels the request (rejects with a
   * `V20AbortError`); `o.retry: false` sends exactly one request, for a caller that retries itself
   * (a 5xx then rejects at once with its `V20Error`, `retryable: true`). Without `o`: the
   * transport's retries, no cancellation.
   */
  async candles(
    instrument: string,
    q: CandlesQuery,
    o?: V20CallOptions,
  ): Promise<{ instrument: string; granularity: CandlestickGranularity; candles: Candlestick[] }> {
    return this.#call(
      'GET',
      `/v3/instruments/${seg(instrument)}/candles`,
      {
        price: q.price,
        granularity: q.granularity,
        count: q.count,
        from: q.from === undefined ? undefined : this.time(q.from),
        to: q.to === undefined ? undefined : this.time(q.to),
        smooth: q.smooth,
        includeFirst: q.includeFirst,
        dailyAlignment: q.dailyAlignment,
        alignmentTimezone: q.alignmentTimezone,
        weeklyAlignment: q.weeklyAlignment,
      },
      undefined,
      o,
    );
  }
  pricing(
    id: string,
    instruments: readonly string[],
    o: { includeHomeConversions?: boolean; since?: number | string } = {},
  ): Promise<{ prices: ClientPrice[]; homeConversions?: unknown[]; time?: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}/pricing`, {
      instruments: instruments.join(','),
      includeHomeConversions: o.includeHomeConversions,
      since: o.since === undefined ? undefined : this.time(o.since),
    });
  }

  // Orders

  createOrder(id: string, request: OrderRequest): Promise<OrderResponse> {
    return this.#call('POST', `/v3/accounts/${seg(id)}/orders`, undefined, { order: request });
  }
  /** Every page of the account's orders matching the filter. */
  orders(id: string, filter: ListFilter = {}): Promise<Order[]> {
    return this.#all<Order>(`/v3/accounts/${seg(id)}/orders`, listQuery(filter), 'orders');
  }
  async pendingOrders(id: string): Promise<Order[]> {
    return (await this.#call<{ orders: Order[] }>('GET', `/v3/accounts/${seg(id)}/pendingOrders`)).orders;
  }
  /** One order by ID or `@clientID`. A missing order rejects with status 404 (`ORDER_DOESNT_EXIST`). */
  async order(id: string, spec: string): Promise<Order> {
    return (await this.#call<{ order: Order }>('GET', `/v3/accounts/${seg(id)}/orders/${seg(spec)}`)).order;
  }
  replaceOrder(id: string, spec: string, request: OrderRequest): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/orders/${seg(spec)}`, undefined, { order: request });
  }
  cancelOrder(id: string, spec: string): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/orders/${seg(spec)}/cancel`);
  }
  orderClientExtensions(
    id: string,
    spec: string,
    ext: { clientExtensions?: ClientExtensions; tradeClientExtensions?: ClientExtensions },
  ): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/orders/${seg(spec)}/clientExtensions`, undefined, ext);
  }

  // Trades

  trades(id: string, filter: ListFilter = {}): Promise<Trade[]> {
    return this.#all<Trade>(`/v3/accounts/${seg(id)}/trades`, listQuery(filter), 'trades');
  }
  async openTrades(id: string): Promise<Trade[]> {
    return (await this.#call<{ trades: Trade[] }>('GET', `/v3/accounts/${seg(id)}/openTrades`)).trades;
  }
  async trade(id: string, spec: string): Promise<Trade> {
    return (await this.#call<{ trade: Trade }>('GET', `/v3/accounts/${seg(id)}/trades/${seg(spec)}`)).trade;
  }
  /** Closes a trade: all of it, or `units` (a positive decimal string). */
  closeTrade(id: string, spec: string, units: string = 'ALL'): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/trades/${seg(spec)}/close`, undefined, { units });
  }
  tradeClientExtensions(
    id: string,
    spec: string,
    clientExtensions: ClientExtensions,
  ): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/trades/${seg(spec)}/clientExtensions`, undefined, {
      clientExtensions,
    });
  }
  /** Creates, replaces (object) or cancels (null) a trade's dependent orders; absent fields stay. */
  setTradeOrders(
    id: string,
    spec: string,
    o: {
      takeProfit?: TakeProfitDetails | null;
      stopLoss?: StopLossDetails | null;
      trailingStopLoss?: TrailingStopLossDetails | null;
      guaranteedStopLoss?: GuaranteedStopLossDetails | null;
    },
  ): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/trades/${seg(spec)}/orders`, undefined, o);
  }

  // Positions

  async positions(id: string): Promise<Position[]> {
    return (await this.#call<{ positions: Position[] }>('GET', `/v3/accounts/${seg(id)}/positions`))
      .positions;
  }
  async openPositions(id: string): Promise<Position[]> {
    return (await this.#call<{ positions: Position[] }>('GET', `/v3/accounts/${seg(id)}/openPositions`))
      .positions;
  }
  async position(id: string, instrument: string): Promise<Position> {
    return (
      await this.#call<{ position: Position }>('GET', `/v3/accounts/${seg(id)}/positions/${seg(instrument)}`)
    ).position;
  }
  /** `longUnits`/`shortUnits`: 'ALL', 'NONE' or a decimal string; absent means 'NONE' (v20's default). */
  closePosition(
    id: string,
    instrument: string,
    o: { longUnits?: string; shortUnits?: string },
  ): Promise<OrderResponse> {
    return this.#call('PUT', `/v3/accounts/${seg(id)}/positions/${seg(instrument)}/close`, undefined, o);
  }

  // Transactions

  /**
   * The transactions of a time range, page by page: GET /transactions gives the page URLs
   * (idrange queries), each page is then fetched. Yields one array per page.
   */
  async *transactionPages(id: string, q: TransactionPagesQuery = {}): AsyncIterable<Transaction[]> {
    const index = await this.#call<{ pages: string[]; count?: number }>(
      'GET',
      `/v3/accounts/${seg(id)}/transactions`,
      {
        from: q.from === undefined ? undefined : this.time(q.from),
        to: q.to === undefined ? undefined : this.time(q.to),
        pageSize: q.pageSize,
        type: q.type && q.type.length > 0 ? q.type.join(',') : undefined,
      },
    );
    for (const page of index.pages ?? []) {
      const u = new URL(page, 'http://relative.invalid');
      yield (await this.#call<{ transactions: Transaction[] }>('GET', u.pathname + u.search)).transactions;
    }
  }
  async transaction(id: string, txID: string): Promise<Transaction> {
    return (
      await this.#call<{ transaction: Transaction }>(
        'GET',
        `/v3/accounts/${seg(id)}/transactions/${seg(txID)}`,
      )
    ).transaction;
  }
  transactionsIdRange(
    id: string,
    from: string,
    to: string,
  ): Promise<{ transactions: Transaction[]; lastTransactionID: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}/transactions/idrange`, { from, to });
  }
  /** Every transaction after `sinceID` (exclusive), and the account's last transaction ID. */
  transactionsSinceId(
    id: string,
    sinceID: string,
  ): Promise<{ transactions: Transaction[]; lastTransactionID: string }> {
    return this.#call('GET', `/v3/accounts/${seg(id)}/transactions/sinceid`, { id: sinceID });
  }

  async #all<T>(path: string, query: V20Query, field: string): Promise<T[]> {
    const out: T[] = [];
    for await (const page of this.http.paginate<unknown>(path, query, (b) => {
      const r = parseResponse(b, 'response');
      if (!r.ok) throw parseError('GET', path, r.error);
      const v = (b as Record<string, unknown>)[field];
      return Array.isArray(v) ? v : [];
    })) {
      for (const x of page) out.push(x as T);
    }
    return out;
  }
}

function listQuery(f: ListFilter): V20Query {
  return {
    ids: f.ids && f.ids.length > 0 ? f.ids.join(',') : undefined,
    state: f.state,
    instrument: f.instrument,
    count: f.count,
    beforeID: f.beforeID,
  };
}

function parseError(method: string, path: string, e: Error, requestID?: string): V20Error {
  return new V20Error({
    code: 'V20_PARSE',
    method,
    path,
    message: `${method} ${path}: the response does not match the v20 definitions: ${e.message}`,
    cause: e,
    ...(requestID !== undefined ? { requestID } : {}),
  });
}

function checked<T>(method: string, path: string, body: unknown, requestID?: string): T {
  const r = parseResponse(body, 'response');
  if (!r.ok) throw parseError(method, path, r.error, requestID);
  return body as T;
}
