/**
 * The legacy REST generation (`/v1`) served by the sandbox, beside `/v3`, on the same simulated
 * accounts: a legacy order goes through the same `SimBroker` (and its single validation path,
 * `checkOrder`) as a v20 order, so both generations see one account. Legacy objects are views of the
 * v20 state (see shapes.ts); legacy transactions are views of the v20 log with the same IDs.
 *
 * Mount the route before the v20 routes; it answers every `/v1/...` path except `/v1/oauth2/`.
 */
import type { Transaction } from '../../domain/v20/index.ts';
import { retiredCall } from '../../domain/v20/retired.ts';
import type { SandboxAccount } from '../account.ts';
import type { SandboxReply, SandboxRoute } from '../route.ts';
import { LegacyError, errorReply, failure, formFields, type LegacyContext, type Obj } from './common.ts';
import { DEFAULT_COUNT, MAX_IDS, listQuery, page, pageReply, transactionsScan } from './lists.ts';
import { LEGACY_ENDPOINTS, LegacyCallLog, type LegacyEndpoint } from './migration.ts';
import { createOrder, patchOrder, patchTrade, type LegacyEnv } from './order-forms.ts';
import {
  LegacyOrderIDs,
  isLegacyOrder,
  legacyAccount,
  legacyAccountID,
  legacyAccountItem,
  legacyOrder,
  legacyTrade,
  legacyTransaction,
  num,
  type LegacyTxContext,
} from './shapes.ts';
import { zip } from './zip.ts';

export type { LegacyContext } from './common.ts';

/** The legacy route, and the calls it served (for the migration report). */
export interface Legacy {
  readonly route: SandboxRoute;
  readonly calls: LegacyCallLog;
}

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

/** A compiled endpoint template: its regex and the endpoint. */
const COMPILED = LEGACY_ENDPOINTS.map((e) => ({
  e,
  re: new RegExp(`^${e.template.replace(/:[a-z_]+/g, '([^/]+)')}/?$`),
}));

/** A handler of one endpoint template: the account of `:account_id` (when the template has one), the decoded path segments, the request. */
type Handler = (
  a: SandboxAccount | undefined,
  seg: string[],
  r: { url: URL; body: unknown },
) => SandboxReply | Promise<SandboxReply>;
type Handlers = Record<string, Handler>;

/** The route's look-ups over the sandbox's accounts, shared by every handler family. */
interface RouteEnv extends LegacyEnv {
  /** The account of a path segment: its v20 ID or its legacy number (404 otherwise). */
  account(seg: string): SandboxAccount;
  txContext(a: SandboxAccount): LegacyTxContext;
  /** The pending legacy orders of an account, newest (highest legacy ID) first. */
  pendingOrders(a: SandboxAccount): Obj[];
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
  const env = routeEnv(ctx);
  const handlers: Handlers = {
    ...accountHandlers(env),
    ...orderHandlers(env),
    ...tradeHandlers(env),
    ...transactionHandlers(env),
    ...historyHandlers(env),
  };
  return { route: dispatch(handlers, env, calls), calls };
}

/** The legacy order IDs of every account (kept from its transactions), the route's numbering and its look-ups. */
function routeEnv(ctx: LegacyContext): RouteEnv {
  const ids = new Map<string, LegacyOrderIDs>();
  for (const a of ctx.accounts.values()) {
    const o = new LegacyOrderIDs();
    ids.set(a.id, o);
    a.onTransaction((tx) => o.observe(tx));
  }
  let seq = 0;
  const env: RouteEnv = {
    ctx,
    ids,
    nextSeq: () => ++seq,
    nextIntentID: () => `legacy-${++seq}`,
    account(seg) {
      for (const a of ctx.accounts.values())
        if (a.id === seg || String(legacyAccountID(a.id)) === seg) return a;
      throw new LegacyError(
        404,
        `The account ${seg} does not exist; the sandbox serves ${[...ctx.accounts.keys()].map((id) => `${legacyAccountID(id)} (${id})`).join(', ')}`,
        'INVALID_ACCOUNT_ID',
      );
    },
    txContext: (a) => ({ account: a, instruments: ctx.instruments, ids: ids.get(a.id)! }),
    pendingOrders: (a) =>
      a
        .pendingOrders()
        .filter(isLegacyOrder)
        .map((o) => legacyOrder(ctx.instruments, ids.get(a.id)!, o))
        .sort((x, y) => (y.id as number) - (x.id as number)),
    pendingView(a, legacyID) {
      const o = a.findOrder(ids.get(a.id)!.current(legacyID));
      if (!o || o.state !== 'PENDING' || !isLegacyOrder(o))
        throw new LegacyError(404, `Order ${legacyID} does not exist or is not pending`, 'ORDER_NOT_FOUND');
      return o;
    },
    openTrade(a, id) {
      const t = /^\d+$/.test(id) ? a.findTrade(id) : undefined;
      if (!t) throw new LegacyError(404, `Trade ${id} does not exist or is not open`, 'TRADE_NOT_FOUND');
      return a.tradeJSON(t);
    },
  };
  return env;
}

/** GET /v1/accounts, /v1/accounts/:account_id. */
function accountHandlers(env: RouteEnv): Handlers {
  const { ctx } = env;
  return {
    'GET /v1/accounts': () => ({
      status: 200,
      body: { accounts: [...ctx.accounts.values()].map(legacyAccountItem) },
    }),
    'GET /v1/accounts/:account_id': (a) => ({
      status: 200,
      body: legacyAccount(a!, env.pendingOrders(a!).length),
    }),
  };
}

/** Orders: list, get, create, change, cancel. */
function orderHandlers(env: RouteEnv): Handlers {
  const { ctx, ids } = env;
  return {
    'GET /v1/accounts/:account_id/orders': (a, _s, r) =>
      page(ctx, 'orders', env.pendingOrders(a!), r.url, ['maxId', 'count', 'instrument', 'ids']),
    'GET /v1/accounts/:account_id/orders/:order_id': (a, s) => ({
      status: 200,
      body: legacyOrder(ctx.instruments, ids.get(a!.id)!, env.pendingView(a!, s[1]!)),
    }),
    'POST /v1/accounts/:account_id/orders': (a, _s, r) => createOrder(env, a!, formFields(r.body)),
    'PATCH /v1/accounts/:account_id/orders/:order_id': (a, s, r) =>
      patchOrder(env, a!, s[1]!, formFields(r.body)),
    'DELETE /v1/accounts/:account_id/orders/:order_id': (a, s) => {
      const o = env.pendingView(a!, s[1]!);
      const txs = ctx.submit(a!, { kind: 'cancel', id: env.nextIntentID(), orderSpecifier: o.id as string });
      const cancel = txs.find((t) => t.type === 'ORDER_CANCEL') as
        (Transaction & { time: string }) | undefined;
      if (!cancel)
        throw failure(txs) ?? new LegacyError(404, `Order ${s[1]} could not be cancelled`, 'ORDER_NOT_FOUND');
      const units = Number(o.units);
      return {
        status: 200,
        body: {
          id: Number(cancel.id),
          instrument: o.instrument,
          units: Math.abs(units),
          side: units < 0 ? 'sell' : 'buy',
          price: num(o.price),
          time: cancel.time,
        },
      };
    },
  };
}

/** Trades: list, get, change, close. */
function tradeHandlers(env: RouteEnv): Handlers {
  const { ctx } = env;
  return {
    'GET /v1/accounts/:account_id/trades': (a, _s, r) =>
      page(
        ctx,
        'trades',
        a!.openTrades().map((t) => legacyTrade(ctx.instruments, t)),
        r.url,
        ['maxId', 'count', 'instrument', 'ids'],
      ),
    'GET /v1/accounts/:account_id/trades/:trade_id': (a, s) => ({
      status: 200,
      body: legacyTrade(ctx.instruments, env.openTrade(a!, s[1]!)),
    }),
    'PATCH /v1/accounts/:account_id/trades/:trade_id': (a, s, r) =>
      patchTrade(env, a!, s[1]!, formFields(r.body)),
    'DELETE /v1/accounts/:account_id/trades/:trade_id': (a, s) => {
      // The answer is the close (its id is the closing transaction's): its side is the close's, as
      // the TRADE_CLOSE in the history says (a short is closed by a buy).
      const t = env.openTrade(a!, s[1]!);
      const txs = ctx.submit(a!, {
        kind: 'closeTrade',
        id: env.nextIntentID(),
        tradeSpecifier: t.id as string,
        units: 'ALL',
      });
      const fill = txs.find((x) => x.type === 'ORDER_FILL') as (Transaction & Obj) | undefined;
      if (!fill) throw failure(txs, txs[0]?.id) ?? new LegacyError(400, `Trade ${s[1]} could not be closed`);
      const closed = ((fill.tradesClosed as Obj[] | undefined) ?? []).find((c) => c.tradeID === t.id);
      return {
        status: 200,
        body: {
          id: Number(fill.id),
          price: num(fill.price),
          instrument: t.instrument,
          profit: num(closed?.realizedPL),
          side: Number(t.currentUnits) < 0 ? 'buy' : 'sell',
          time: fill.time,
        },
      };
    },
  };
}

/** Transactions: the list (with its rate limit on `count`) and one transaction. */
function transactionHandlers(env: RouteEnv): Handlers {
  const { ctx } = env;
  const rateClock = ctx.rateClock ?? ctx.now;
  const lastListing = new Map<string, number>();
  return {
    'GET /v1/accounts/:account_id/transactions': (a, _s, r) => {
      const q = listQuery(ctx, r.url, ['maxId', 'minId', 'count', 'instrument', 'ids']);
      const c = env.txContext(a!);
      if (q.ids) {
        const list = [...q.ids]
          .sort((x, y) => y - x)
          .map((id) => a!.transactions.get(id))
          .filter((t) => t !== undefined)
          .map((t) => legacyTransaction(c, t))
          .filter((t) => t !== undefined);
        return pageReply(ctx, 'transactions', list, MAX_IDS, r.url);
      }
      if (r.url.searchParams.has('count')) {
        // The specification: a transaction listing with `count` is limited to one per 60 seconds.
        const at = rateClock();
        const last = lastListing.get(a!.id);
        if (last !== undefined && at - last < LEGACY_RATE_WINDOW_MS) {
          const wait = Math.ceil((LEGACY_RATE_WINDOW_MS - (at - last)) / 1000);
          throw new LegacyError(
            429,
            `Rate limit: one transaction listing with 'count' per 60 seconds per account; retry in ${wait} s, or leave 'count' out (pages of ${DEFAULT_COUNT} are not limited)`,
            'RATE_LIMIT',
            { 'Retry-After': String(wait) },
          );
        }
        lastListing.set(a!.id, at);
      }
      const { list, next } = transactionsScan(
        env.txContext(a!),
        q.maxId ?? Number.MAX_SAFE_INTEGER,
        q.minId ?? 1,
        q.count + 1,
        (t) => q.instrument === undefined || t.instrument === q.instrument,
        ctx.maxScan ?? MAX_SCAN,
      );
      return pageReply(ctx, 'transactions', list, q.count, r.url, next);
    },
    'GET /v1/accounts/:account_id/transactions/:transaction_id': (a, s) => {
      const id = s[1]!;
      const tx = /^\d+$/.test(id) ? a!.transactions.get(Number(id)) : undefined;
      const t = tx ? legacyTransaction(env.txContext(a!), tx) : undefined;
      if (!t)
        throw new LegacyError(
          404,
          `Transaction ${id} does not exist${tx ? ' in the legacy generation (its v20 counterpart has no legacy type; see GET /v3/accounts/{accountID}/transactions/' + id + ')' : ''}`,
          'TRANSACTION_NOT_FOUND',
        );
      return { status: 200, body: t };
    },
  };
}

/** The whole history as a zip file: requested (202 and its Location), then fetched once built. */
function historyHandlers(env: RouteEnv): Handlers {
  const { ctx } = env;
  const files = new Map<string, Buffer | undefined>();
  return {
    'GET /v1/accounts/:account_id/alltransactions': (a) => {
      const key = `${legacyAccountID(a!.id)}-${env.nextSeq()}`;
      const time = ctx.now();
      const last = a!.transactions.lastID;
      files.set(key, undefined);
      while (files.size > KEEP_FILES) files.delete(files.keys().next().value!);
      // Built off the request, in slices that yield to other requests (up to --keep-transactions
      // of them); the file answers 404 until the zip is written.
      const build = async (): Promise<Buffer> => {
        const parts: string[] = [];
        for (let hi = last; hi >= a!.transactions.oldestID; hi -= HISTORY_SLICE) {
          const slice = transactionsScan(
            env.txContext(a!),
            hi,
            hi - HISTORY_SLICE + 1,
            HISTORY_SLICE,
            () => true,
          ).list;
          for (const t of slice) parts.push(JSON.stringify(t));
          await new Promise<void>((done) => setImmediate(done));
        }
        return zip([
          {
            name: `transactions-${legacyAccountID(a!.id)}.json`,
            data: Buffer.from(`[${parts.join(',')}]`),
            time,
          },
        ]);
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
      if (!buf)
        throw new LegacyError(
          404,
          files.has(key)
            ? 'The history file is not ready yet; retry shortly'
            : `No history file ${s[0]} (request one with GET /v1/accounts/{account_id}/alltransactions; the sandbox keeps the last ${KEEP_FILES})`,
          'FILE_NOT_READY',
        );
      return {
        status: 200,
        raw: buf,
        headers: {
          'Content-Type': 'application/zip',
          'Content-Disposition': `attachment; filename="${s[0]}"`,
        },
      };
    },
  };
}

/** The route: finds the endpoint of a /v1 path (405 or a 404 naming the v3 call otherwise), runs its handler, answers errors as legacy bodies, and names the v3 replacement. */
function dispatch(handlers: Handlers, env: RouteEnv, calls: LegacyCallLog): SandboxRoute {
  return async (req) => {
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
      reply =
        allowed.length > 0
          ? errorReply(
              new LegacyError(
                405,
                `Method ${method} is not allowed on ${path} (use ${[...new Set(allowed)].sort().join(' or ')})`,
                undefined,
                { Allow: [...new Set(allowed)].sort().join(', ') },
              ),
            )
          : errorReply(
              new LegacyError(
                404,
                `${method} ${path} is not part of the legacy generation the sandbox serves (accounts, orders, trades, transactions); use ${replacement} instead`,
                'RETIRED_ENDPOINT',
              ),
            );
    } else {
      calls.record(endpoint);
      replacement = endpoint.replacement;
      try {
        seg = seg.map((s) => {
          try {
            return decodeURIComponent(s);
          } catch {
            throw new LegacyError(
              400,
              `Invalid path segment '${s}': malformed percent-encoding`,
              'INVALID_ARGUMENT',
            );
          }
        });
        const a = endpoint.template.includes(':account_id') ? env.account(seg[0]!) : undefined;
        reply = await handlers[`${endpoint.method} ${endpoint.template}`]!(a, seg, {
          url: req.url,
          body: req.body,
        });
      } catch (e) {
        if (!(e instanceof LegacyError)) throw e;
        reply = errorReply(e);
      }
    }
    reply.headers = { ...reply.headers, 'X-V3-Replacement': replacement };
    return reply;
  };
}
