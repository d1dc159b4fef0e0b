import type {
  ClientExtensions,
  GuaranteedStopLossDetails,
  OrderRequest,
  StopLossDetails,
  TakeProfitDetails,
  TrailingStopLossDetails,
} from './v20/index.ts';

/**
 * What a strategy asks for. An intent is a request, never a result: the answer comes back as v20
 * transactions (fill, cancel, reject) through the Execution port. Every intent carries the client ID
 * that makes it idempotent: live, an order is looked up by `@clientID` before any resubmission.
 *
 * Order intents carry the exact v20 `OrderRequest` body, so the live adapter posts it as it is and
 * the simulated broker applies v20's rules to the same object.
 */
export type OrderIntent =
  | { readonly kind: 'order'; readonly id: string; readonly request: OrderRequest }
  | {
      readonly kind: 'replace';
      readonly id: string;
      readonly orderSpecifier: string;
      readonly request: OrderRequest;
    }
  | { readonly kind: 'cancel'; readonly id: string; readonly orderSpecifier: string }
  | {
      readonly kind: 'closeTrade';
      readonly id: string;
      readonly tradeSpecifier: string;
      /** 'ALL' or a positive decimal string of units to close. */
      readonly units: string;
    }
  | {
      readonly kind: 'closePosition';
      readonly id: string;
      readonly instrument: string;
      /** 'ALL', 'NONE' or a positive decimal string. Absent means 'NONE'. */
      readonly longUnits?: string;
      readonly shortUnits?: string;
    }
  | {
      readonly kind: 'tradeOrders';
      readonly id: string;
      readonly tradeSpecifier: string;
      /** Absent: leave as is. null: cancel. Object: create or replace (v20 "set dependent orders"). */
      readonly takeProfit?: TakeProfitDetails | null;
      readonly stopLoss?: StopLossDetails | null;
      readonly trailingStopLoss?: TrailingStopLossDetails | null;
      readonly guaranteedStopLoss?: GuaranteedStopLossDetails | null;
    }
  | {
      readonly kind: 'clientExtensions';
      readonly id: string;
      readonly orderSpecifier?: string;
      readonly tradeSpecifier?: string;
      readonly clientExtensions?: ClientExtensions;
      readonly tradeClientExtensions?: ClientExtensions;
    };

export type IntentKind = OrderIntent['kind'];

const KINDS: ReadonlySet<string> = new Set<IntentKind>([
  'order',
  'replace',
  'cancel',
  'closeTrade',
  'closePosition',
  'tradeOrders',
  'clientExtensions',
]);

/**
 * Whether `x` has the form of an intent, as strategies build them with ctx's helpers: an object
 * with a known `kind`, an `id`, and for orders a `request` object. (What is in the request is the
 * broker's to judge: an invalid one gets a v20 reject.)
 */
/**
 * Client IDs starting with this are the runner's own intents (the kill switch's and a flatten's
 * closes and cancels: `fxflow-kill-…`, `fxflow-flat-…`, `fxflow-exit-…`). The strategy API refuses
 * them (a strategy name or a `clientId` starting so is a StrategyError), so no strategy intent can
 * pass for one: the kill switch drops every intent of the strategy and keeps only these.
 */
export const RUNNER_ID_PREFIX = 'fxflow-';

/** Whether a client ID is in the runner's reserved namespace (`RUNNER_ID_PREFIX`). */
export function isReservedClientID(id: string): boolean {
  return id.startsWith(RUNNER_ID_PREFIX);
}

export function isIntent(x: unknown): x is OrderIntent {
  if (typeof x !== 'object' || x === null) return false;
  const { kind, id, request } = x as { kind?: unknown; id?: unknown; request?: unknown };
  if (!KINDS.has(kind as string) || typeof id !== 'string') return false;
  return (kind !== 'order' && kind !== 'replace') || (typeof request === 'object' && request !== null);
}

/** Exhaustiveness guard for `switch (x.kind)`. */
export function assertNever(x: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(x)}`);
}

/**
 * The intent with its ID as the order's client ID (`clientExtensions.id`, the other extension fields
 * kept), as v20 gets it, so that every broker (the simulator too) echoes the client ID on the
 * transactions it produces. Intents that carry no order request are returned as they are.
 */
export function withClientID<I extends OrderIntent>(intent: I): I {
  if (intent.kind !== 'order' && intent.kind !== 'replace') return intent;
  const ext = (intent.request as { clientExtensions?: Record<string, unknown> }).clientExtensions;
  if (ext?.id === intent.id) return intent;
  return { ...intent, request: { ...intent.request, clientExtensions: { ...ext, id: intent.id } } };
}

/**
 * The intent with `tag` as its order's client extensions tag, and its opened trade's (portfolios:
 * the strategy's name, so every order, fill and trade at the account says whose it is; a tag the
 * strategy set itself is replaced, its `id` and `comment` kept). Intents that carry no order request
 * are returned as they are (their transactions are attributed through the trade or order they name).
 */
export function withTag<I extends OrderIntent>(intent: I, tag: string): I {
  if (intent.kind !== 'order' && intent.kind !== 'replace') return intent;
  const req = intent.request as {
    clientExtensions?: Record<string, unknown>;
    tradeClientExtensions?: Record<string, unknown>;
  };
  if (req.clientExtensions?.tag === tag && req.tradeClientExtensions?.tag === tag) return intent;
  return {
    ...intent,
    request: {
      ...intent.request,
      clientExtensions: { ...req.clientExtensions, id: req.clientExtensions?.id ?? intent.id, tag },
      tradeClientExtensions: { ...req.tradeClientExtensions, tag },
    },
  };
}
