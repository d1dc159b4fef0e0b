// Where the simulator's account starts: a new account (`start`: CREATE and the deposit), or an
// existing one (`seedAccount`, `SimBroker.seed`) restored from v20's Account form, and that form
// taken back (`snapshot`, `trailingStopValues`). The account-state restore itself is
// src/domain/account-state.ts, which the live runner's portfolio uses too (one code path restores
// an account into a ledger); the names below are the simulator's for it.
import {
  AccountStateError,
  orderOf,
  restoreAccount,
  tradeSummaryOf,
  type AccountState,
  type AccountTrade,
} from '../../domain/account-state.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import { add, amount, formatAmount } from '../../domain/money.ts';
import { nextRollover } from '../../domain/new-york.ts';
import { formatTime, parseTime, type UnixMs } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { cancelFill } from './cancels.ts';
import { limitLikeOf, triggers, type SimOrder, type WorkingOrder } from './orders.ts';
import type { SimState } from './state.ts';

export {
  orderCreateOf,
  orderOf,
  restoreAccount,
  type Restored,
  tradeSummaryOf,
} from '../../domain/account-state.ts';

/** An open trade as v20 lists it (TradeSummary or Trade): see `AccountTrade`. */
export type SeedTrade = AccountTrade;

/** An account state a simulator can start from, and `SimBroker.snapshot()`'s form: see `AccountState`. */
export type SimAccountState = AccountState;

/** An account state that cannot be restored (a broken field): `AccountStateError`, the same class. */
export const SimSeedError = AccountStateError;
export type SimSeedError = AccountStateError;

/** What `SimBroker.seed` takes beside the state: the transactions that followed it, its time, trailing levels. */
export interface SeedOptions {
  readonly transactions?: readonly Transaction[];
  readonly time?: UnixMs;
  readonly trailing?: Readonly<Record<string, string>>;
}

/** Opens the account at `at` (once): a CREATE and the initial deposit, or a seeded account resumed. */
export function start(s: SimState, at: UnixMs): void {
  if (s.started) return;
  s.started = true;
  s.now = at;
  if (s.seeded) {
    resume(s, at);
    return;
  }
  s.tx.begin();
  s.tx.emit({
    type: 'CREATE',
    divisionID: 1,
    siteID: 101,
    accountUserID: 1,
    accountNumber: 1,
    homeCurrency: s.opts.currency,
  });
  const deposit = amount(s.opts.initialBalance);
  if (deposit !== 0) {
    s.tx.begin();
    s.tx.emit({
      type: 'TRANSFER_FUNDS',
      amount: formatAmount(deposit),
      fundingReason: 'CLIENT_FUNDING',
      accountBalance: formatAmount(add(s.ledger.balance, deposit)),
    });
  }
  if (s.opts.financing !== false) s.nextRollover = nextRollover(at);
}

/** Restores `state` (and the transactions after it) into a new simulator: see `SimBroker.seed`. */
export function seedAccount(s: SimState, state: SimAccountState, o: SeedOptions): void {
  if (s.started || s.seeded || s.ledger.applied > 0)
    throw new SimSeedError('seed: call it once, on a new simulator, before its first event or intent');
  const { trailing } = restoreAccount(s.ledger, state, s.instruments, s.accountID);
  for (const [i, q] of (state.quotes ?? []).entries()) {
    if (!s.instruments.has(q.instrument) || !(q.bid > 0 && q.ask >= q.bid))
      throw new SimSeedError(
        `account state.quotes[${i}]: ${JSON.stringify(q)} is not a price of a known instrument (bid > 0, ask >= bid)`,
      );
    s.setQuote(q.instrument, q.bid, q.ask);
  }
  let lastTime = '';
  for (const t of o.transactions ?? []) if (s.ledger.apply(t)) lastTime = t.time;
  for (const lo of s.ledger.pendingOrders.values()) {
    if (lo.type === 'MARKET' || lo.type === 'FIXED_PRICE') {
      s.unfilled.push(lo.id);
      continue;
    }
    // Filed as when it was created: its expiry (GFD: the rollover after its creation) and its
    // activity from its creation time.
    const created = parseTime(lo.created.time);
    s.now = Number.isFinite(created) ? created : -Infinity;
    const so = s.track(lo.created, s.now);
    if (so.type === 'MARKET_IF_TOUCHED' && !('initialMarketPrice' in lo.created)) faceAwayFromQuote(s, so);
    // The working order becomes the ledger's pending order (the same key: its place in the
    // creation order is kept), with the ledger's current client extensions.
    so.clientExtensions = lo.clientExtensions;
    s.ledger.pendingOrders.set(lo.id, so);
    const level = trailing.get(lo.id);
    if (level !== undefined) so.level = level;
    const cid = lo.clientExtensions?.id;
    if (so.clientID !== cid) {
      // Client extensions modified since the order was created: the ledger has the current ones.
      if (so.clientID !== undefined && s.byClientID.get(so.clientID) === so.id)
        s.byClientID.delete(so.clientID);
      so.clientID = cid;
      if (cid !== undefined) s.byClientID.set(cid, so.id);
    }
  }
  // Trailing levels known from elsewhere (a journal's `trailingStopValues()`): a level is a price
  // the order's ratchet reached, so it is kept where it is in the trade's favour of the one filed.
  for (const id in o.trailing) {
    const so = s.order(id);
    const level = Number(o.trailing[id]);
    if (
      so !== undefined &&
      so.type === 'TRAILING_STOP_LOSS' &&
      (so.side === -1 ? level > so.level : level < so.level)
    )
      so.level = level;
  }
  s.lastBook = undefined;
  s.tx.nextID = Number(s.ledger.lastTransactionID) + 1;
  s.marginCall = s.ledger.marginCall;
  const stateTime = state.time !== undefined ? parseTime(state.time) : Number.NaN;
  s.seedTime = o.time ?? (lastTime !== '' ? parseTime(lastTime) : stateTime);
  // The clock until the first price: the latest time the state shows (an intent submitted before
  // any price starts the simulator there, never at the epoch).
  let floor = Number.isFinite(s.seedTime) ? s.seedTime : -Infinity;
  for (const t of s.ledger.trades.values()) if (t.openMs > floor) floor = t.openMs;
  for (const so of s.liveOrders()) if (so.activeFrom > floor) floor = so.activeFrom;
  s.now = floor;
  s.seeded = true;
}

/**
 * A MARKET_IF_TOUCHED order rebuilt from its create transaction, which has no initialMarketPrice:
 * `track` decided its direction against the quote now, not the one it was created against (a
 * journal's quotes are the latest). An order still pending has not been touched, so it faces away
 * from the price it triggers on: when the direction taken would trigger it at the quote now and the
 * other would not, the other is the one it was created with.
 */
function faceAwayFromQuote(s: SimState, so: SimOrder): void {
  const q = s.quotes.get(so.inst.name);
  if (q === undefined || !triggers(so, q.bid, q.ask)) return;
  const px = so.trigger === 'BID' ? q.bid : so.trigger === 'ASK' ? q.ask : (q.bid + q.ask) / 2;
  if (px === so.level) return; // touched whichever way it faces: created at this very price
  // `track` builds a WorkingOrder (one class for every working order); its fields are set once, here again.
  const w = so as WorkingOrder;
  w.direction = px < so.level ? 1 : -1;
  w.limitLike = limitLikeOf(so.type, so.side, w.direction);
  w.initialMarketPrice = px;
}

/** `start` of a seeded simulator: the clock, the financing schedule, and unfilled market orders cancelled. */
function resume(s: SimState, at: UnixMs): void {
  const from = Number.isFinite(s.seedTime) && s.seedTime < at ? s.seedTime : at;
  if (s.opts.financing !== false) s.nextRollover = nextRollover(from);
  for (const id of s.unfilled) {
    s.tx.begin();
    cancelFill(s, id, s.ledger.pendingOrders.get(id)?.clientExtensions?.id, 'INTERNAL_SERVER_ERROR');
  }
  s.unfilled = [];
}

/** The simulated account in v20's Account form: see `SimBroker.snapshot`. */
export function snapshot(s: SimState): SimAccountState {
  const l = s.ledger;
  const orders = [];
  for (const lo of l.pendingOrders.values()) {
    if (lo.type === 'MARKET' || lo.type === 'FIXED_PRICE') continue;
    const so = s.order(lo.id);
    const o = orderOf(
      lo,
      so !== undefined && so.type === 'TRAILING_STOP_LOSS' ? so.inst.price(so.level) : undefined,
    );
    // A restored MIT must face the way it did: its reference price travels with the snapshot
    // (the MARKET_IF_TOUCHED_ORDER transaction has no initialMarketPrice to rebuild it from).
    orders.push(
      so?.initialMarketPrice !== undefined
        ? ({ ...o, initialMarketPrice: so.inst.price(so.initialMarketPrice) } as typeof o)
        : o,
    );
  }
  const positions = [];
  for (const [instrument, pl] of l.instrumentPL) positions.push({ instrument, pl: formatAmount(pl) });
  const quotes = [];
  for (const [instrument, q] of s.quotes) quotes.push({ instrument, bid: q.bid, ask: q.ask });
  return {
    lastTransactionID: l.lastTransactionID,
    balance: formatAmount(l.balance),
    pl: formatAmount(l.pl),
    financing: formatAmount(l.financing),
    commission: formatAmount(l.commission),
    guaranteedExecutionFees: formatAmount(l.guaranteedExecutionFees),
    trades: [...l.trades.values()].map(tradeSummaryOf),
    orders,
    positions,
    ...(Number.isFinite(s.now) ? { time: formatTime(s.now) } : {}),
    quotes,
  };
}

/** The current level of every pending trailing stop (order ID → price text), or undefined when there is none. */
export function trailingStopValues(s: SimState): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const so of s.liveOrders()) {
    if (so.type !== 'TRAILING_STOP_LOSS') continue;
    out ??= {};
    out[so.id] = so.inst.price(so.level);
  }
  return out;
}

/**
 * The part of an account a simulator can hold: trades and pending orders in instruments of the
 * registry (the others, and their dependent orders, are listed in `leftOut`: the simulator could not
 * trade them, and nothing the strategy does there can be compared).
 */
export function knownPart(
  a: SimAccountState,
  instruments: InstrumentRegistry,
): { state: SimAccountState; leftOut: string[] } {
  const leftOut: string[] = [];
  const trades = (a.trades ?? []).filter((t) => {
    const ok = instruments.has(t.instrument);
    if (!ok) leftOut.push(`trade ${t.id} (${t.instrument})`);
    return ok;
  });
  const open = new Set(trades.map((t) => t.id));
  const orders = (a.orders ?? []).filter((o) => {
    const x = o as { instrument?: string; tradeID?: string };
    const ok =
      x.tradeID !== undefined
        ? open.has(x.tradeID)
        : x.instrument !== undefined && instruments.has(x.instrument);
    if (!ok) leftOut.push(`order ${o.id} (${x.instrument ?? `of trade ${x.tradeID ?? '?'}`})`);
    return ok;
  });
  return { state: leftOut.length === 0 ? a : { ...a, trades, orders }, leftOut };
}
