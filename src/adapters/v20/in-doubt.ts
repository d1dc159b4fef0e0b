import type { Observable } from 'rxjs';
import { assertNever, type OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { V20Error } from './errors.ts';
import type { V20Rest } from './rest.ts';

/**
 * The in-doubt rule, once, for both places that need it: a request that got no answer while it may
 * still be on its way to OANDA (a timeout, a cut connection, a gateway's 504) counts as never
 * received only once its whole window has passed with no sign of it. `V20Execution.send` uses it
 * for a request of this run (live), `OrderLifecycle.settle` for an intent a restart finds journaled
 * and sent but never answered. `applied` is the look-up both make (and the later look-ups of an
 * outcome given up as unknown). Nothing here sends anything: whether a request goes again is decided
 * at the send point, `V20Execution.send`, which asks first whether the run is halted.
 *
 * (It lives beside the v20 adapter, not in src/runner/, because the adapter uses it and adapters
 * import only the domain and the ports.)
 */

/** What a wait for a request in doubt needs. */
export interface AwaitWindowOptions {
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly intent: OrderIntent;
  /** The last transaction before the request: its effect comes after it. */
  readonly mark: string;
  /** Epoch ms after which, with no sign of it, the request counts as never received. */
  readonly until: number;
  /** Longest pause between scans of the account (ms; from 250 ms, or this if less, doubling). */
  readonly scanMs: number;
  /** Transactions as the stream brings them: one that may be the request's sign ends a pause early. */
  readonly signs?: Observable<Transaction>;
  /** A scan that failed before the window ended (it is tried again). */
  readonly onScanError?: (e: unknown) => void;
}

/**
 * Waits while the request of `intent` may still reach the broker, scanning the account (`applied`)
 * at once, then after pauses doubling to `scanMs` and after each transaction the stream brings.
 * Resolves true as soon as it shows, false once `until` has passed with no sign of it (conclusive:
 * it was never received). A scan that fails is tried again; when even the scan after the window
 * fails, it rejects with that scan's error (the outcome is still unknown).
 */
export async function awaitWindow(o: AwaitWindowOptions): Promise<boolean> {
  let wake: () => void = () => undefined;
  const sub = o.signs?.subscribe((t) => {
    if (clientIDOf(t) === o.intent.id || o.intent.kind !== 'order') wake();
  });
  try {
    for (let scan = 0; ; scan++) {
      const last = Date.now() >= o.until;
      try {
        if (await applied(o.rest, o.accountID, o.intent, o.mark)) return true;
        if (last) return false;
      } catch (e) {
        if (last) throw e;
        o.onScanError?.(e);
      }
      const first = Math.min(250, o.scanMs);
      const pause = Math.max(0, Math.min(first * 2 ** Math.min(scan, 20), o.scanMs, o.until - Date.now()));
      await new Promise<void>((res) => {
        const timer = setTimeout(res, pause);
        wake = () => {
          clearTimeout(timer);
          res();
        };
      });
      wake = () => undefined;
    }
  } finally {
    sub?.unsubscribe();
  }
}

/**
 * Whether the request of `intent` took effect at v20 after the transaction `mark`: a transaction
 * since then carrying its client ID or doing what it asked, or (an order) an order under its client
 * ID. Reads are retried by the HTTP layer; when even they fail, this rejects (outcome unknown).
 */
export async function applied(
  rest: V20Rest,
  acc: string,
  intent: OrderIntent,
  mark: string,
): Promise<boolean> {
  const since = (await rest.transactionsSinceId(acc, mark || '0')).transactions;
  const byClientID = (t: Transaction) => clientIDOf(t) === intent.id;
  switch (intent.kind) {
    case 'order':
    case 'replace': {
      // A reject leaves no order behind but does leave a transaction carrying the client ID.
      if (since.some(byClientID)) return true;
      try {
        await rest.order(acc, `@${intent.id}`);
        return true;
      } catch (e) {
        if (e instanceof V20Error && e.status === 404) return false;
        throw e;
      }
    }
    case 'cancel': {
      if (since.some((t) => t.type === 'ORDER_CANCEL' && matchesOrder(t, intent.orderSpecifier))) return true;
      try {
        const o = await rest.order(acc, intent.orderSpecifier);
        return o.state !== 'PENDING';
      } catch (e) {
        if (e instanceof V20Error && e.status === 404) return true; // nothing left to cancel
        throw e;
      }
    }
    case 'closeTrade':
      return (
        since.some((t) => t.type === 'MARKET_ORDER' && closesTrade(t, intent.tradeSpecifier)) ||
        (intent.units === 'ALL' && (await tradeClosed(rest, acc, intent.tradeSpecifier)))
      );
    case 'closePosition':
      return since.some((t) => t.type === 'MARKET_ORDER' && positionCloseoutOf(t) === intent.instrument);
    case 'tradeOrders': {
      const tradeID = await resolveTrade(rest, acc, intent.tradeSpecifier);
      if (
        since.some(
          (t) =>
            /^(TAKE_PROFIT|STOP_LOSS|TRAILING_STOP_LOSS|GUARANTEED_STOP_LOSS)_ORDER(_REJECT)?$/.test(
              t.type,
            ) && relatesToTrade(t, intent.tradeSpecifier, tradeID),
        )
      )
        return true;
      // A request that only cancels leaves ORDER_CANCELs of the trade's dependent orders.
      for (const t of since) {
        if (t.type !== 'ORDER_CANCEL') continue;
        const o = await rest.order(acc, (t as { orderID: string }).orderID).catch(() => undefined);
        if (o !== undefined && (o as { tradeID?: string }).tradeID === tradeID) return true;
      }
      return false;
    }
    case 'clientExtensions':
      return since.some((t) =>
        intent.orderSpecifier !== undefined
          ? (t.type === 'ORDER_CLIENT_EXTENSIONS_MODIFY' ||
              t.type === 'ORDER_CLIENT_EXTENSIONS_MODIFY_REJECT') &&
            matchesOrder(t, intent.orderSpecifier)
          : (t.type === 'TRADE_CLIENT_EXTENSIONS_MODIFY' ||
              t.type === 'TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT') &&
            relatesToTrade(t, intent.tradeSpecifier ?? '', undefined),
      );
    default:
      return assertNever(intent, 'intent');
  }
}

/** The client ID a transaction carries, if any. */
export const clientIDOf = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

/** Whether a transaction names the order `spec` (an ID, or `@clientID` before or after a client-extensions change). */
function matchesOrder(t: Transaction, spec: string): boolean {
  const x = t as { orderID?: string; clientOrderID?: string; clientExtensionsModify?: { id?: string } };
  if (!spec.startsWith('@')) return x.orderID === spec;
  const cid = spec.slice(1);
  return x.clientOrderID === cid || x.clientExtensionsModify?.id === cid;
}

function closesTrade(t: Transaction, spec: string): boolean {
  const c = (t as { tradeClose?: { tradeID?: string; clientTradeID?: string } }).tradeClose;
  if (c === undefined) return false;
  return spec.startsWith('@') ? c.clientTradeID === spec.slice(1) : c.tradeID === spec;
}

function positionCloseoutOf(t: Transaction): string | undefined {
  const x = t as {
    longPositionCloseout?: { instrument?: string };
    shortPositionCloseout?: { instrument?: string };
  };
  return x.longPositionCloseout?.instrument ?? x.shortPositionCloseout?.instrument;
}

/** Whether a transaction names the trade `spec` (an ID or `@clientID`), or the already resolved `tradeID`. */
function relatesToTrade(t: Transaction, spec: string, tradeID: string | undefined): boolean {
  const x = t as { tradeID?: string; clientTradeID?: string; tradeClientExtensionsModify?: { id?: string } };
  if (tradeID !== undefined && x.tradeID === tradeID) return true;
  if (!spec.startsWith('@')) return x.tradeID === spec;
  const cid = spec.slice(1);
  return x.clientTradeID === cid || x.tradeClientExtensionsModify?.id === cid;
}

/** The numeric ID of a trade specifier, or undefined when v20 does not know it (any more). */
async function resolveTrade(rest: V20Rest, acc: string, spec: string): Promise<string | undefined> {
  if (!spec.startsWith('@')) return spec;
  try {
    return (await rest.trade(acc, spec)).id;
  } catch (e) {
    if (e instanceof V20Error && e.status === 404) return undefined;
    throw e;
  }
}

async function tradeClosed(rest: V20Rest, acc: string, spec: string): Promise<boolean> {
  try {
    return (await rest.trade(acc, spec)).state === 'CLOSED';
  } catch (e) {
    if (e instanceof V20Error && e.status === 404) return false;
    throw e;
  }
}
