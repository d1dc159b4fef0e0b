/**
 * The legacy REST generation (`/v1`) served by the sandbox, beside `/v3`, on the same simulated
 * accounts: a legacy order goes through the same `SimBroker` (and its single validation path,
 * `checkOrder`) as a v20 order, so both generations see one account. Legacy objects are views of the
 * v20 state (see shapes.ts); legacy transactions are views of the v20 log with the same IDs.
 *
 * Mount the route before the v20 routes; it answers every `/v1/...` path except `/v1/oauth2/`.
 */
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { formatTime, parseRequestTime } from '../../domain/time.ts';
import { parseOrderRequest } from '../../domain/v20/parse.ts';
import type { OrderRequest, Transaction } from '../../domain/v20/index.ts';
import { retiredCall } from '../../domain/v20/retired.ts';
import type { SandboxAccount } from '../account.ts';
import { rejectMessage } from '../reject-messages.ts';
import type { SandboxReply, SandboxRoute } from '../route.ts';
import { LEGACY_ENDPOINTS, LegacyCallLog, type LegacyEndpoint } from './migration.ts';
import { CANCEL_REASONS, LEGACY_ORDER_TYPES, LegacyOrderIDs, isLegacyOrder, legacyAccount, legacyAccountID, legacyAccountItem, legacyOrder, legacyTrade, legacyTransaction, num, type LegacyTxContext } from './shapes.ts';
import { zip } from './zip.ts';

type Obj = Record<string, unknown>;

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

/** The legacy route, and the calls it served (for the migration report). */
export interface Legacy {
  readonly route: SandboxRoute;
  readonly calls: LegacyCallLog;
}

/** count: default and maximum; ids: at most this many. */
const DEFAULT_COUNT = 50;
const MAX_COUNT = 500;
const MAX_IDS = 50;
/** Transaction listings with `count`: one per this many ms per account. */
export const LEGACY_RATE_WINDOW_MS = 60_000;
/** History files kept (the oldest is dropped beyond this). */
const KEEP_FILES = 16;
/**
 * v20 transactions one listing looks at, at most: a filter that matches rarely (an instrument
 * traded once in 100,000 transactions) answers a short page with a Link to go on, instead of
 * holding the event loop for the whole log.
 */
const MAX_SCAN = 5000;
/** Transactions mapped per turn of the event loop while a history file is built. */
const HISTORY_SLICE = 2000;
const MORE_INFO = 'docs/legacy-v1.md';

class LegacyError extends Error {
  constructor(readonly status: number, message: string, readonly errorCode?: string, readonly headers?: Record<string, string>) {
    super(message);
  }
}

/**
 * Error bodies: the specification does not show the legacy error body. The sandbox gives the
 * current generation's `errorMessage` / `errorCode` and, for clients written against the legacy
 * API, `code` (the HTTP status), `message` and `moreInfo`.
 */
function errorReply(e: LegacyError): SandboxReply {
  const body: Obj = { code: e.status, message: e.message, moreInfo: MORE_INFO, errorMessage: e.message };
  if (e.errorCode !== undefined) body.errorCode = e.errorCode;
  return e.headers ? { status: e.status, body, headers: e.headers } : { status: e.status, body };
}

/** A compiled endpoint template: its regex and the endpoint. */
const COMPILED = LEGACY_ENDPOINTS.map((e) => ({ e, re: new RegExp(`^${e.template.replace(/:[a-z_]+/g, '([^/]+)')}/?$`) }));

/** The fields of a form-encoded (or JSON) body. */
function formFields(body: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (body === undefined || body === null) return out;
  if (typeof body === 'string') {
    for (const [k, v] of new URLSearchParams(body)) out.set(k, v);
    return out;
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw new LegacyError(400, 'Invalid request body: send form-encoded fields (application/x-www-form-urlencoded), e.g. instrument=EUR_USD&units=100&side=buy&type=market');
  for (const [k, v] of Object.entries(body as Obj)) if (v !== undefined && v !== null) out.set(k, String(v));
  return out;
}

const number = (f: Map<string, string>, k: string, opts: { min?: number; integer?: boolean } = {}): number | undefined => {
  const v = f.get(k);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || (opts.integer === true && !Number.isInteger(n)) || n < (opts.min ?? 0)) {
    throw new LegacyError(400, `Invalid or malformed argument: ${k}=${v} (give ${opts.integer === true ? 'a whole number' : 'a number'} >= ${opts.min ?? 0})`, 'INVALID_ARGUMENT');
  }
  return n;
};

/** expiry: RFC 3339 or UNIX seconds (the legacy API took both). */
function expiryTime(v: string): string {
  const ms = /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : parseRequestTime(v);
  if (!Number.isFinite(ms)) throw new LegacyError(400, `Invalid or malformed argument: expiry=${v} (give an RFC 3339 UTC time, e.g. 2024-01-03T00:00:00Z, or UNIX seconds)`, 'INVALID_ARGUMENT');
  return formatTime(ms);
}

/** Parses a built v20 order request through v20's own parser (the same as POST /v3/orders). */
function v20Order(req: Obj): OrderRequest {
  const r = parseOrderRequest(req, 'order');
  if (!r.ok) throw new LegacyError(400, `Invalid or malformed argument: ${r.error.path} (expected ${r.error.expected})`, 'INVALID_ARGUMENT');
  return r.value;
}

const isReject = (t: Transaction): boolean => t.type.endsWith('_REJECT');

/** The reject (or fill-failure cancel) of a submitted order as a legacy error. */
function failure(txs: readonly Transaction[], orderID?: string): LegacyError | undefined {
  for (const t of txs) {
    if (isReject(t)) {
      const reason = (t as { rejectReason?: string }).rejectReason ?? 'UNKNOWN';
      return new LegacyError(400, rejectMessage(reason, 'order'), reason);
    }
    const x = t as Transaction & { orderID?: string; reason?: string };
    if (t.type === 'ORDER_CANCEL' && orderID !== undefined && x.orderID === orderID && x.reason !== 'CLIENT_REQUEST_REPLACED') {
      return new LegacyError(400, `The order was not filled and is cancelled: ${CANCEL_REASONS[x.reason ?? ''] ?? x.reason ?? 'UNKNOWN'} (v20 reason ${x.reason ?? 'UNKNOWN'}; the ORDER_CANCEL transaction records it)`, x.reason);
    }
  }
  return undefined;
}

/**
 * The /v3 call that replaces a legacy call (the X-V3-Replacement header), or undefined for a path
 * outside /v1 (and for /v1/oauth2, which is current). For answers given before the route runs (401).
 */
export function legacyReplacement(method: string, path: string): string | undefined {
  if (!(path === '/v1' || path.startsWith('/v1/')) || path.startsWith('/v1/oauth2/')) return undefined;
  const m = method.toUpperCase();
  for (const { e, re } of COMPILED) if (e.method === m && re.test(path)) return e.replacement;
  return retiredCall(m, path)?.replacement ?? 'the v20 REST API under /v3';
}

/** Builds the legacy generation's route over the sandbox's accounts. */
export function legacyRoute(ctx: LegacyContext): Legacy {
  const calls = new LegacyCallLog();
  const ids = new Map<string, LegacyOrderIDs>();
  for (const a of ctx.accounts.values()) {
    const o = new LegacyOrderIDs();
    ids.set(a.id, o);
    a.onTransaction((tx) => o.observe(tx));
  }
  const rateClock = ctx.rateClock ?? ctx.now;
  const lastListing = new Map<string, number>();
  const files = new Map<string, Buffer | undefined>();
  let seq = 0;

  const account = (seg: string): SandboxAccount => {
    for (const a of ctx.accounts.values()) if (a.id === seg || String(legacyAccountID(a.id)) === seg) return a;
    throw new LegacyError(404, `The account ${seg} does not exist; the sandbox serves ${[...ctx.accounts.keys()].map((id) => `${legacyAccountID(id)} (${id})`).join(', ')}`, 'INVALID_ACCOUNT_ID');
  };
  const txContext = (a: SandboxAccount): LegacyTxContext => ({ account: a, instruments: ctx.instruments, ids: ids.get(a.id)! });

  /** The pending legacy orders of an account, newest (highest legacy ID) first. */
  const pendingOrders = (a: SandboxAccount): Obj[] =>
    a.pendingOrders().filter(isLegacyOrder).map((o) => legacyOrder(ctx.instruments, ids.get(a.id)!, o)).sort((x, y) => (y.id as number) - (x.id as number));

  const pendingView = (a: SandboxAccount, legacyID: string): Obj => {
    const o = a.findOrder(ids.get(a.id)!.current(legacyID));
    if (!o || o.state !== 'PENDING' || !isLegacyOrder(o)) throw new LegacyError(404, `Order ${legacyID} does not exist or is not pending`, 'ORDER_NOT_FOUND');
    return o;
  };
  const openTrade = (a: SandboxAccount, id: string): Obj => {
    const t = /^\d+$/.test(id) ? a.findTrade(id) : undefined;
    if (!t) throw new LegacyError(404, `Trade ${id} does not exist or is not open`, 'TRADE_NOT_FOUND');
    return a.tradeJSON(t);
  };

  /** Query parameters of a list: ids alone (at most 50), else maxId / minId / count / instrument. */
  const listQuery = (url: URL, allowed: readonly string[]): { ids?: Set<number>; maxId?: number; minId?: number; count: number; instrument?: string } => {
    const q = url.searchParams;
    for (const k of q.keys()) if (!allowed.includes(k)) throw new LegacyError(400, `Invalid argument: '${k}' (this list takes ${allowed.join(', ')})`, 'INVALID_ARGUMENT');
    const idsText = q.get('ids');
    if (idsText !== null) {
      if ([...q.keys()].some((k) => k !== 'ids')) throw new LegacyError(400, "Invalid argument: 'ids' cannot be combined with other parameters (give ids alone)", 'INVALID_ARGUMENT');
      const list = idsText.split(',').filter((s) => s !== '');
      if (list.length === 0 || list.length > MAX_IDS || list.some((s) => !/^\d+$/.test(s))) throw new LegacyError(400, `Invalid argument: ids=${idsText} (1 to ${MAX_IDS} comma-separated IDs)`, 'INVALID_ARGUMENT');
      return { ids: new Set(list.map(Number)), count: MAX_IDS };
    }
    const int = (k: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
      const v = q.get(k);
      if (v === null) return undefined;
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < min || n > max) throw new LegacyError(400, `Invalid argument: ${k}=${v} (a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''})`, 'INVALID_ARGUMENT');
      return n;
    };
    const out: { maxId?: number; minId?: number; count: number; instrument?: string } = { count: int('count', 1, MAX_COUNT) ?? DEFAULT_COUNT };
    const maxId = int('maxId', 1);
    if (maxId !== undefined) out.maxId = maxId;
    const minId = int('minId', 1);
    if (minId !== undefined) out.minId = minId;
    const instrument = q.get('instrument');
    if (instrument !== null) {
      if (!ctx.instruments.has(instrument)) throw new LegacyError(400, `Invalid argument: instrument=${instrument} is not a known instrument`, 'INVALID_INSTRUMENT');
      out.instrument = instrument;
    }
    return out;
  };

  /** A descending page of a list: at most `count`, Link with the next maxId, X-Result-Count. */
  const page = (key: string, all: Obj[], url: URL, allowed: readonly string[]): SandboxReply => {
    const q = listQuery(url, allowed);
    let list = all;
    if (q.ids) list = list.filter((x) => q.ids!.has(x.id as number));
    if (q.maxId !== undefined) list = list.filter((x) => (x.id as number) <= q.maxId!);
    if (q.minId !== undefined) list = list.filter((x) => (x.id as number) >= q.minId!);
    if (q.instrument !== undefined) list = list.filter((x) => x.instrument === q.instrument);
    return pageReply(key, list.slice(0, q.count + 1), q.count, url);
  };
  /** `unscanned`: the page stopped at the scan budget; the next one starts at this ID. */
  const pageReply = (key: string, items: Obj[], count: number, url: URL, unscanned?: number): SandboxReply => {
    const headers: Record<string, string> = {};
    const more = items.length > count;
    const shown = items.slice(0, count);
    const nextID = more ? (items[count]!.id as number) : unscanned;
    if (nextID !== undefined) {
      const next = new URL(url.pathname + url.search, ctx.baseUrl());
      next.searchParams.set('maxId', String(nextID));
      headers.Link = `<${next.href}>; rel="next"`;
    }
    headers['X-Result-Count'] = String(shown.length);
    return { status: 200, body: { [key]: shown }, headers };
  };

  /**
   * Legacy transactions of an account, newest first, from `hi` down to `lo`, at most `limit`, looking
   * at no more than `scan` v20 transactions. `next` is the first ID not looked at when the scan
   * budget ran out first (a sparse filter over a long log), else undefined.
   */
  const transactionsScan = (a: SandboxAccount, hi: number, lo: number, limit: number, keep: (t: Obj) => boolean, scan = Number.MAX_SAFE_INTEGER): { list: Obj[]; next?: number } => {
    const c = txContext(a);
    const log = a.transactions;
    const out: Obj[] = [];
    const bottom = Math.max(lo, log.oldestID);
    let id = Math.min(hi, log.lastID);
    for (let seen = 0; id >= bottom && out.length < limit; id--, seen++) {
      if (seen >= scan) return { list: out, next: id };
      const t = legacyTransaction(c, log.get(id)!);
      if (t && keep(t)) out.push(t);
    }
    return { list: out };
  };
  const transactions = (a: SandboxAccount, hi: number, lo: number, limit: number, keep: (t: Obj) => boolean): Obj[] => transactionsScan(a, hi, lo, limit, keep).list;

  // ------------------------------------------------------------------------------------------
  // Handlers by template

  const handlers: Record<string, (a: SandboxAccount | undefined, seg: string[], r: { url: URL; body: unknown }) => SandboxReply | Promise<SandboxReply>> = {
    'GET /v1/accounts': () => ({ status: 200, body: { accounts: [...ctx.accounts.values()].map(legacyAccountItem) } }),
    'GET /v1/accounts/:account_id': (a) => ({ status: 200, body: legacyAccount(a!, pendingOrders(a!).length) }),

    'GET /v1/accounts/:account_id/orders': (a, _s, r) => page('orders', pendingOrders(a!), r.url, ['maxId', 'count', 'instrument', 'ids']),
    'GET /v1/accounts/:account_id/orders/:order_id': (a, s) => ({ status: 200, body: legacyOrder(ctx.instruments, ids.get(a!.id)!, pendingView(a!, s[1]!)) }),
    'POST /v1/accounts/:account_id/orders': (a, _s, r) => createOrder(a!, formFields(r.body)),
    'PATCH /v1/accounts/:account_id/orders/:order_id': (a, s, r) => patchOrder(a!, s[1]!, formFields(r.body)),
    'DELETE /v1/accounts/:account_id/orders/:order_id': (a, s) => {
      const o = pendingView(a!, s[1]!);
      const txs = ctx.submit(a!, { kind: 'cancel', id: `legacy-${++seq}`, orderSpecifier: o.id as string });
      const cancel = txs.find((t) => t.type === 'ORDER_CANCEL') as (Transaction & { time: string }) | undefined;
      if (!cancel) throw failure(txs) ?? new LegacyError(404, `Order ${s[1]} could not be cancelled`, 'ORDER_NOT_FOUND');
      const units = Number(o.units);
      return { status: 200, body: { id: Number(cancel.id), instrument: o.instrument, units: Math.abs(units), side: units < 0 ? 'sell' : 'buy', price: num(o.price), time: cancel.time } };
    },

    'GET /v1/accounts/:account_id/trades': (a, _s, r) => page('trades', a!.openTrades().map((t) => legacyTrade(ctx.instruments, t)), r.url, ['maxId', 'count', 'instrument', 'ids']),
    'GET /v1/accounts/:account_id/trades/:trade_id': (a, s) => ({ status: 200, body: legacyTrade(ctx.instruments, openTrade(a!, s[1]!)) }),
    'PATCH /v1/accounts/:account_id/trades/:trade_id': (a, s, r) => patchTrade(a!, s[1]!, formFields(r.body)),
    'DELETE /v1/accounts/:account_id/trades/:trade_id': (a, s) => {
      // The answer is the close (its id is the closing transaction's): its side is the close's, as
      // the TRADE_CLOSE in the history says (a short is closed by a buy).
      const t = openTrade(a!, s[1]!);
      const txs = ctx.submit(a!, { kind: 'closeTrade', id: `legacy-${++seq}`, tradeSpecifier: t.id as string, units: 'ALL' });
      const fill = txs.find((x) => x.type === 'ORDER_FILL') as (Transaction & Obj) | undefined;
      if (!fill) throw failure(txs, txs[0]?.id) ?? new LegacyError(400, `Trade ${s[1]} could not be closed`);
      const closed = ((fill.tradesClosed as Obj[] | undefined) ?? []).find((c) => c.tradeID === t.id);
      return { status: 200, body: { id: Number(fill.id), price: num(fill.price), instrument: t.instrument, profit: num(closed?.realizedPL), side: Number(t.currentUnits) < 0 ? 'buy' : 'sell', time: fill.time } };
    },

    'GET /v1/accounts/:account_id/transactions': (a, _s, r) => {
      const q = listQuery(r.url, ['maxId', 'minId', 'count', 'instrument', 'ids']);
      const c = txContext(a!);
      if (q.ids) {
        const list = [...q.ids].sort((x, y) => y - x).map((id) => a!.transactions.get(id)).filter((t) => t !== undefined).map((t) => legacyTransaction(c, t)).filter((t) => t !== undefined);
        return pageReply('transactions', list, MAX_IDS, r.url);
      }
      if (r.url.searchParams.has('count')) {
        // The specification: a transaction listing with `count` is limited to one per 60 seconds.
        const at = rateClock();
        const last = lastListing.get(a!.id);
        if (last !== undefined && at - last < LEGACY_RATE_WINDOW_MS) {
          const wait = Math.ceil((LEGACY_RATE_WINDOW_MS - (at - last)) / 1000);
          throw new LegacyError(429, `Rate limit: one transaction listing with 'count' per 60 seconds per account; retry in ${wait} s, or leave 'count' out (pages of ${DEFAULT_COUNT} are not limited)`, 'RATE_LIMIT', { 'Retry-After': String(wait) });
        }
        lastListing.set(a!.id, at);
      }
      const { list, next } = transactionsScan(a!, q.maxId ?? Number.MAX_SAFE_INTEGER, q.minId ?? 1, q.count + 1, (t) => q.instrument === undefined || t.instrument === q.instrument, ctx.maxScan ?? MAX_SCAN);
      return pageReply('transactions', list, q.count, r.url, next);
    },
    'GET /v1/accounts/:account_id/transactions/:transaction_id': (a, s) => {
      const id = s[1]!;
      const tx = /^\d+$/.test(id) ? a!.transactions.get(Number(id)) : undefined;
      const t = tx ? legacyTransaction(txContext(a!), tx) : undefined;
      if (!t) throw new LegacyError(404, `Transaction ${id} does not exist${tx ? ' in the legacy generation (its v20 counterpart has no legacy type; see GET /v3/accounts/{accountID}/transactions/' + id + ')' : ''}`, 'TRANSACTION_NOT_FOUND');
      return { status: 200, body: t };
    },
    'GET /v1/accounts/:account_id/alltransactions': (a) => {
      const key = `${legacyAccountID(a!.id)}-${++seq}`;
      const time = ctx.now();
      const last = a!.transactions.lastID;
      files.set(key, undefined);
      while (files.size > KEEP_FILES) files.delete(files.keys().next().value!);
      // Built off the request, in slices that yield to other requests (up to --keep-transactions
      // of them); the file answers 404 until the zip is written.
      const build = async (): Promise<Buffer> => {
        const parts: string[] = [];
        for (let hi = last; hi >= a!.transactions.oldestID; hi -= HISTORY_SLICE) {
          const slice = transactions(a!, hi, hi - HISTORY_SLICE + 1, HISTORY_SLICE, () => true);
          for (const t of slice) parts.push(JSON.stringify(t));
          await new Promise<void>((done) => setImmediate(done));
        }
        return zip([{ name: `transactions-${legacyAccountID(a!.id)}.json`, data: Buffer.from(`[${parts.join(',')}]`), time }]);
      };
      void build().then(
        (buf) => {
          if (files.has(key)) files.set(key, buf);
        },
        () => files.delete(key),
      );
      return { status: 202, headers: { Location: `${ctx.baseUrl()}/v1/history/${key}.zip` } };
    },
    'GET /v1/history/:file': (_a, s) => {
      const key = s[0]!.replace(/\.zip$/, '');
      const buf = files.get(key);
      if (!buf) throw new LegacyError(404, files.has(key) ? 'The history file is not ready yet; retry shortly' : `No history file ${s[0]} (request one with GET /v1/accounts/{account_id}/alltransactions; the sandbox keeps the last ${KEEP_FILES})`, 'FILE_NOT_READY');
      return { status: 200, raw: buf, headers: { 'Content-Type': 'application/zip', 'Content-Disposition': `attachment; filename="${s[0]}"` } };
    },
  };

  const createOrder = (a: SandboxAccount, f: Map<string, string>): SandboxReply => {
    const missing = ['instrument', 'units', 'side', 'type'].filter((k) => !f.has(k));
    const type = f.get('type') ?? '';
    const v20Type = LEGACY_ORDER_TYPES[type];
    if (f.has('type') && v20Type === undefined) throw new LegacyError(400, `Invalid or malformed argument: type=${type} (market, limit, stop or marketIfTouched)`, 'INVALID_ARGUMENT');
    if (type !== 'market') for (const k of ['price', 'expiry']) if (!f.has(k)) missing.push(k);
    if (missing.length > 0) throw new LegacyError(400, `Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`, 'MISSING_ARGUMENT');
    const side = f.get('side');
    if (side !== 'buy' && side !== 'sell') throw new LegacyError(400, `Invalid or malformed argument: side=${side} (buy or sell)`, 'INVALID_ARGUMENT');
    const instrument = f.get('instrument')!;
    if (!ctx.instruments.has(instrument)) throw new LegacyError(400, `Invalid or malformed argument: instrument=${instrument} is not a known instrument`, 'INVALID_INSTRUMENT');
    const units = number(f, 'units', { min: 1, integer: true })!;
    // The simulator would hold the order until the first price (and fill it then); a legacy client
    // waits for its answer, so the order is refused instead of left in flight.
    if (!a.broker.quotes.has(instrument)) throw new LegacyError(400, `No price for ${instrument} yet: the sandbox has not seen a tick of it (replay starts it; with --manual push one through POST /sandbox/prices)`, 'MARKET_HALTED');
    const req: Obj = { type: v20Type, instrument, units: String(side === 'sell' ? -units : units), positionFill: 'DEFAULT' };
    if (type === 'market') req.timeInForce = 'FOK';
    else {
      req.price = String(number(f, 'price', { min: 0 }));
      req.timeInForce = 'GTD';
      req.gtdTime = expiryTime(f.get('expiry')!);
      if (type !== 'limit') req.triggerCondition = 'DEFAULT';
    }
    applyOrderFields(req, instrument, side === 'sell' ? -1 : 1, f);
    const txs = ctx.submit(a, { kind: 'order', id: `legacy-${++seq}`, request: v20Order(req) });
    const created = txs.find((t) => !isReject(t) && t.type.endsWith('_ORDER')) as (Transaction & Obj) | undefined;
    const err = failure(txs, created?.id);
    if (err || !created) throw err ?? new LegacyError(400, 'The order was not accepted');
    if (type === 'market') {
      const fill = txs.find((t) => t.type === 'ORDER_FILL' && (t as { orderID?: string }).orderID === created.id) as (Transaction & Obj) | undefined;
      if (!fill) throw new LegacyError(400, 'The market order did not fill (no price for the instrument yet?)', 'ORDER_NOT_FILLED');
      const opened = fill.tradeOpened as Obj | undefined;
      const reduced = fill.tradeReduced as Obj | undefined;
      const closedSide = Number(fill.units) > 0 ? 'sell' : 'buy';
      const trade = opened ? a.findTrade(opened.tradeID as string) : undefined;
      const t = trade ? legacyTrade(ctx.instruments, a.tradeJSON(trade)) : undefined;
      return {
        status: 200,
        body: {
          instrument,
          time: fill.time,
          price: num(fill.price),
          tradeOpened: opened ? { id: Number(opened.tradeID), units: Math.abs(Number(opened.units)), side, takeProfit: t?.takeProfit ?? 0, stopLoss: t?.stopLoss ?? 0, trailingStop: t?.trailingStop ?? 0 } : {},
          tradesClosed: ((fill.tradesClosed as Obj[] | undefined) ?? []).map((c) => ({ id: Number(c.tradeID), units: Math.abs(Number(c.units)), side: closedSide })),
          tradeReduced: reduced ? { id: Number(reduced.tradeID), units: Math.abs(Number(reduced.units)), side: closedSide, pl: num(reduced.realizedPL), interest: num(reduced.financing) } : {},
        },
      };
    }
    const o = a.findOrder(created.id);
    const view = legacyOrder(ctx.instruments, ids.get(a.id)!, o ?? { ...created, createTime: created.time, type: v20Type });
    const { instrument: _i, time: _t, price: _p, type: _ty, ...opened } = view;
    return {
      status: 201,
      headers: { Location: `${ctx.baseUrl()}/v1/accounts/${legacyAccountID(a.id)}/orders/${view.id as number}` },
      body: { instrument, time: created.time, price: view.price, orderOpened: opened },
    };
  };

  /** Sets the optional order fields given (0 removes one): bounds, take profit, stop loss, trailing stop. */
  const applyOrderFields = (req: Obj, instrument: string, sign: number, f: Map<string, string>): void => {
    const inst = ctx.instruments.get(instrument);
    const bound = sign > 0 ? 'upperBound' : 'lowerBound';
    const b = number(f, bound);
    if (b !== undefined) {
      if (req.type === 'LIMIT') {
        if (b !== 0) throw new LegacyError(400, `Invalid argument: ${bound} is not supported on a limit order by the sandbox (v20 limit orders have no price bound)`, 'INVALID_ARGUMENT');
      } else if (b === 0) delete req.priceBound;
      else req.priceBound = String(b);
    }
    const other = sign > 0 ? 'lowerBound' : 'upperBound';
    if (number(f, other) !== undefined && number(f, other) !== 0) throw new LegacyError(400, `Invalid argument: ${other} does not apply to a ${sign > 0 ? 'buy' : 'sell'} (a ${sign > 0 ? 'buy' : 'sell'} is bounded by ${bound})`, 'INVALID_ARGUMENT');
    const tp = number(f, 'takeProfit');
    if (tp !== undefined) {
      if (tp === 0) delete req.takeProfitOnFill;
      else req.takeProfitOnFill = { price: String(tp) };
    }
    const sl = number(f, 'stopLoss');
    if (sl !== undefined) {
      if (sl === 0) delete req.stopLossOnFill;
      else req.stopLossOnFill = { price: String(sl) };
    }
    const ts = number(f, 'trailingStop');
    if (ts !== undefined) {
      if (Math.round(ts * 10) !== ts * 10) throw new LegacyError(400, `Invalid or malformed argument: trailingStop=${f.get('trailingStop')} (pips, at most one decimal)`, 'INVALID_ARGUMENT');
      if (ts === 0) delete req.trailingStopLossOnFill;
      else req.trailingStopLossOnFill = { distance: inst.price(ts * inst.pip) };
    }
  };

  const patchOrder = (a: SandboxAccount, legacyID: string, f: Map<string, string>): SandboxReply => {
    const allowed = ['units', 'price', 'expiry', 'lowerBound', 'upperBound', 'stopLoss', 'takeProfit', 'trailingStop'];
    for (const k of f.keys()) if (!allowed.includes(k)) throw new LegacyError(400, `Invalid argument: '${k}' cannot be changed (give ${allowed.join(', ')})`, 'INVALID_ARGUMENT');
    const o = pendingView(a, legacyID);
    const sign = Number(o.units) < 0 ? -1 : 1;
    const req: Obj = {};
    for (const k of ['type', 'instrument', 'units', 'price', 'timeInForce', 'gtdTime', 'positionFill', 'triggerCondition', 'priceBound', 'takeProfitOnFill', 'stopLossOnFill', 'trailingStopLossOnFill', 'guaranteedStopLossOnFill', 'clientExtensions', 'tradeClientExtensions']) {
      if (o[k] !== undefined) req[k] = o[k];
    }
    const units = number(f, 'units', { min: 1, integer: true });
    if (units !== undefined) req.units = String(sign * units);
    const price = number(f, 'price');
    if (price !== undefined) req.price = String(price);
    const expiry = f.get('expiry');
    if (expiry !== undefined) {
      req.timeInForce = 'GTD';
      req.gtdTime = expiryTime(expiry);
    }
    applyOrderFields(req, o.instrument as string, sign, f);
    if (f.size > 0) {
      const txs = ctx.submit(a, { kind: 'replace', id: `legacy-${++seq}`, orderSpecifier: o.id as string, request: v20Order(req) });
      const err = failure(txs);
      if (err) throw err;
    }
    return { status: 200, body: legacyOrder(ctx.instruments, ids.get(a.id)!, pendingView(a, legacyID)) };
  };

  const patchTrade = (a: SandboxAccount, id: string, f: Map<string, string>): SandboxReply => {
    const allowed = ['stopLoss', 'takeProfit', 'trailingStop'];
    for (const k of f.keys()) if (!allowed.includes(k)) throw new LegacyError(400, `Invalid argument: '${k}' cannot be changed on a trade (give ${allowed.join(', ')})`, 'INVALID_ARGUMENT');
    const t = openTrade(a, id);
    const inst = ctx.instruments.get(t.instrument as string);
    const intent: { -readonly [K in keyof Extract<OrderIntent, { kind: 'tradeOrders' }>]: Extract<OrderIntent, { kind: 'tradeOrders' }>[K] } = { kind: 'tradeOrders', id: `legacy-${++seq}`, tradeSpecifier: t.id as string };
    const tp = number(f, 'takeProfit');
    if (tp !== undefined && (tp !== 0 || t.takeProfitOrder)) intent.takeProfit = tp === 0 ? null : { price: String(tp) };
    const sl = number(f, 'stopLoss');
    if (sl !== undefined && (sl !== 0 || t.stopLossOrder)) intent.stopLoss = sl === 0 ? null : { price: String(sl) };
    const ts = number(f, 'trailingStop');
    if (ts !== undefined) {
      if (Math.round(ts * 10) !== ts * 10) throw new LegacyError(400, `Invalid or malformed argument: trailingStop=${f.get('trailingStop')} (pips, at most one decimal)`, 'INVALID_ARGUMENT');
      if (ts !== 0 || t.trailingStopLossOrder) intent.trailingStopLoss = ts === 0 ? null : { distance: inst.price(ts * inst.pip) };
    }
    if (intent.takeProfit !== undefined || intent.stopLoss !== undefined || intent.trailingStopLoss !== undefined) {
      const err = failure(ctx.submit(a, intent as OrderIntent));
      if (err) throw err;
    }
    return { status: 200, body: legacyTrade(ctx.instruments, openTrade(a, id)) };
  };

  const route: SandboxRoute = async (req) => {
    const path = req.url.pathname;
    if (!(path === '/v1' || path.startsWith('/v1/')) || path.startsWith('/v1/oauth2/')) return undefined;
    const method = req.method.toUpperCase();
    let endpoint: LegacyEndpoint | undefined;
    let seg: string[] = [];
    const allowed: string[] = [];
    for (const { e, re } of COMPILED) {
      const m = re.exec(path);
      if (!m) continue;
      if (e.method !== method) {
        allowed.push(e.method);
        continue;
      }
      endpoint = e;
      seg = m.slice(1);
      break;
    }
    let reply: SandboxReply;
    let replacement: string;
    if (!endpoint) {
      replacement = retiredCall(method, path)?.replacement ?? 'the v20 REST API under /v3';
      reply = allowed.length > 0
        ? errorReply(new LegacyError(405, `Method ${method} is not allowed on ${path} (use ${[...new Set(allowed)].sort().join(' or ')})`, undefined, { Allow: [...new Set(allowed)].sort().join(', ') }))
        : errorReply(new LegacyError(404, `${method} ${path} is not part of the legacy generation the sandbox serves (accounts, orders, trades, transactions); use ${replacement} instead`, 'RETIRED_ENDPOINT'));
    } else {
      calls.record(endpoint);
      replacement = endpoint.replacement;
      try {
        seg = seg.map((s) => {
          try {
            return decodeURIComponent(s);
          } catch {
            throw new LegacyError(400, `Invalid path segment '${s}': malformed percent-encoding`, 'INVALID_ARGUMENT');
          }
        });
        const a = endpoint.template.includes(':account_id') ? account(seg[0]!) : undefined;
        reply = await handlers[`${endpoint.method} ${endpoint.template}`]!(a, seg, { url: req.url, body: req.body });
      } catch (e) {
        if (!(e instanceof LegacyError)) throw e;
        reply = errorReply(e);
      }
    }
    reply.headers = { ...reply.headers, 'X-V3-Replacement': replacement };
    return reply;
  };
  return { route, calls };
}
