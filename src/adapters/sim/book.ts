import type { Candle } from '../../domain/candle.ts';
import type { Quote } from '../../domain/conversion.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { LedgerOrder, LedgerTrade } from '../../domain/ledger.ts';
import { nextRollover } from '../../domain/new-york.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import type { ClientExtensions, Transaction } from '../../domain/v20/index.ts';
import {
  limitLikeOf,
  resolveTrigger,
  triggers,
  WorkingOrder,
  type OrderEnv,
  type SimOrder,
  type SimOrderType,
} from './orders.ts';
import { ratchet, restingFillPrice } from './pricing.ts';

/**
 * The order book and matching: per instrument, the market orders waiting for their next price and
 * the resting orders in creation order, and what triggers when at one price point. The prices a
 * triggered order fills at come from pricing.ts; what a fill does comes back through `MatchSink` (execute.ts, wired by broker.ts).
 */

/** A market order waiting for the first price at or after `activeFrom` (its arrival: latency.ts). */
export interface QueuedMarket {
  readonly clientID: string | undefined;
  readonly request: MarketRequest;
  readonly activeFrom: UnixMs;
}

/** The body of a MARKET_ORDER transaction before the simulator stamps it. */
export interface MarketRequest {
  readonly instrument: string;
  readonly units: string;
  readonly timeInForce: string;
  readonly positionFill: string;
  readonly reason: 'CLIENT_ORDER' | 'TRADE_CLOSE' | 'POSITION_CLOSEOUT' | 'MARGIN_CLOSEOUT';
  readonly priceBound?: string;
  readonly tradeClose?: { tradeID: string; clientTradeID?: string; units: string };
  readonly longPositionCloseout?: { instrument: string; units: string };
  readonly shortPositionCloseout?: { instrument: string; units: string };
  readonly clientExtensions?: ClientExtensions;
  readonly takeProfitOnFill?: Record<string, unknown>;
  readonly stopLossOnFill?: Record<string, unknown>;
  readonly trailingStopLossOnFill?: Record<string, unknown>;
  readonly guaranteedStopLossOnFill?: Record<string, unknown>;
  readonly tradeClientExtensions?: ClientExtensions;
}

/** One instrument's book. */
export interface Book {
  readonly instrument: Instrument;
  readonly market: QueuedMarket[];
  readonly orders: SimOrder[];
  driver: string | undefined;
  /** Time of the last tick seen for the instrument (the exact path model). */
  lastTick: UnixMs;
}

/** What matching asks the rest of the simulator to do (execute.ts, cancels.ts). */
export interface MatchSink {
  /** A queued market order meets its price point. */
  fillMarket(book: Book, q: QueuedMarket, bid: number, ask: number, t: UnixMs): void;
  /** A resting order triggered and fills at `px` (pricing.ts, before slippage). */
  fillResting(book: Book, o: SimOrder, px: number, bid: number, ask: number, t: UnixMs): void;
  /** A FOK/IOC order whose first price did not fill it. */
  expireImmediate(o: SimOrder): void;
}

/**
 * One price point: queued market orders first (those that have arrived), then resting orders in
 * creation order. The orders of this point are copied into `snapshot` (reused: matching never
 * re-enters), so orders created by a fill at this point wait for the next one.
 */
export function match(
  book: Book,
  bid: number,
  ask: number,
  t: UnixMs,
  gap: boolean,
  snapshot: (SimOrder | undefined)[],
  sink: MatchSink,
): void {
  if (book.market.length > 0) {
    const queue = book.market.splice(0);
    for (const q of queue) {
      if (q.activeFrom > t) {
        book.market.push(q);
        continue;
      }
      sink.fillMarket(book, q, bid, ask, t);
    }
  }
  if (book.orders.length === 0) return;
  const n = book.orders.length;
  for (let i = 0; i < n; i++) snapshot[i] = book.orders[i]!;
  for (let i = 0; i < n; i++) {
    const o = snapshot[i]!;
    if (o.activeFrom > t || !o.live) continue;
    if (o.expiresAt <= t) continue; // expiry is handled by clock.ts at the right time
    if (triggers(o, bid, ask)) {
      const px = restingFillPrice(o, bid, ask, gap);
      if (px === px) {
        sink.fillResting(book, o, px, bid, ask, t);
        continue;
      }
    } else if (o.type === 'TRAILING_STOP_LOSS') ratchet(o, bid, ask);
    if (o.immediate) sink.expireImmediate(o);
  }
  // Emptied slot by slot, not by `length = 0`, which would free the array's storage and make the
  // next point allocate it again (hundreds of bytes a fill).
  for (let i = 0; i < n; i++) snapshot[i] = undefined;
}

/** True when some trade of `trades` has two exits (TP and SL/TSL) both reachable inside candle `c`. */
export function ambiguous(
  book: Book,
  c: Candle,
  trades: Iterable<LedgerTrade>,
  orders: ReadonlyMap<string, LedgerOrder>,
): boolean {
  if (book.orders.length < 2) return false;
  for (const t of trades) {
    if (t.instrument !== c.instrument) continue;
    const inRange =
      exitInRange(orders, t.takeProfitOrderID, c) +
      exitInRange(orders, t.stopLossOrderID, c) +
      exitInRange(orders, t.trailingStopLossOrderID, c) +
      exitInRange(orders, t.guaranteedStopLossOrderID, c);
    if (inRange >= 2) return true;
  }
  return false;
}

/** 1 when the exit order `id` (in the ledger's pending orders: a working order) is active, not already crossed at the open, and its level lies inside the candle on its side. */
function exitInRange(orders: ReadonlyMap<string, LedgerOrder>, id: string | undefined, c: Candle): number {
  if (id === undefined) return 0;
  const o = orders.get(id) as SimOrder | undefined;
  if (!o || o.live !== true || o.activeFrom > c.time || triggers(o, c.bo, c.ao)) return 0;
  const lo = o.side === 1 ? c.al : c.bl;
  const hi = o.side === 1 ? c.ah : c.bh;
  return o.level >= lo && o.level <= hi ? 1 : 0;
}

/** The order type each order-creating transaction type creates (a lookup, not a regex, per order). */
const ORDER_TX: Readonly<Record<string, SimOrderType>> = {
  MARKET_ORDER: 'MARKET',
  LIMIT_ORDER: 'LIMIT',
  STOP_ORDER: 'STOP',
  MARKET_IF_TOUCHED_ORDER: 'MARKET_IF_TOUCHED',
  TAKE_PROFIT_ORDER: 'TAKE_PROFIT',
  STOP_LOSS_ORDER: 'STOP_LOSS',
  TRAILING_STOP_LOSS_ORDER: 'TRAILING_STOP_LOSS',
  GUARANTEED_STOP_LOSS_ORDER: 'GUARANTEED_STOP_LOSS',
};

/**
 * The simulator's working order of a create transaction: its side, its level (a stop loss given
 * as a distance from the trade's open price; a trailing stop from the current quote `q`), its
 * trigger side, expiry (GTD, or GFD: the next rollover after `now`) and the time from which it acts.
 */
export function workingOrder(
  tx: Transaction,
  instrument: Instrument,
  trade: LedgerTrade | undefined,
  q: Quote | undefined,
  now: UnixMs,
  activeFrom: UnixMs,
): SimOrder {
  const t = tx as Transaction &
    Record<string, unknown> & {
      instrument?: string;
      units?: string;
      price?: string;
      distance?: string;
      tradeID?: string;
      timeInForce?: string;
      gtdTime?: string;
      triggerCondition?: string;
      priceBound?: string;
      initialMarketPrice?: string;
      clientExtensions?: ClientExtensions;
    };
  const type = ORDER_TX[t.type] ?? (t.type.replace(/_ORDER$/, '') as SimOrderType);
  let side: 1 | -1;
  let units: number | undefined;
  let level: number;
  let distance = 0;
  if (trade) {
    side = trade.unitsNum > 0 ? -1 : 1;
    units = undefined;
  } else {
    units = Number(t.units!);
    side = units < 0 ? -1 : 1;
  }
  if (type === 'TRAILING_STOP_LOSS') {
    distance = Number(t.distance);
    const ref = q ? (side === -1 ? q.bid : q.ask) : trade!.priceNum;
    level = instrument.snap(side === -1 ? ref - distance : ref + distance);
  } else if (t.price !== undefined) {
    level = Number(t.price);
  } else {
    distance = Number(t.distance);
    level = instrument.snap(side === -1 ? trade!.priceNum - distance : trade!.priceNum + distance);
  }
  let direction: 1 | -1 | 0 = 0;
  let initialMarketPrice: number | undefined;
  if (type === 'MARKET_IF_TOUCHED') {
    // The order records its initialMarketPrice (v20's MarketIfTouchedOrder); the transaction does
    // not (its definition has no such field): taken from the current quote, as the sandbox's view does.
    const ref =
      t.initialMarketPrice !== undefined ? Number(t.initialMarketPrice) : q ? (q.bid + q.ask) / 2 : level;
    direction = level >= ref ? 1 : -1;
    initialMarketPrice = ref;
  }
  let expiresAt = Infinity;
  if (t.timeInForce === 'GTD' && t.gtdTime !== undefined) expiresAt = parseTime(t.gtdTime);
  else if (t.timeInForce === 'GFD') expiresAt = nextRollover(now);
  // One class for every working order (orders.ts): the matching loop's reads stay monomorphic.
  const o = new WorkingOrder(instrument, undefined).setCreated(tx);
  o.id = tx.id;
  o.type = type;
  o.instrument = t.instrument;
  o.side = side;
  o.units = units;
  o.level = level;
  o.distance = distance;
  o.tradeID = trade?.id;
  o.priceBound = t.priceBound !== undefined ? Number(t.priceBound) : Number.NaN;
  o.trigger = resolveTrigger(t.triggerCondition, side);
  o.direction = direction;
  o.initialMarketPrice = initialMarketPrice;
  o.expiresAt = expiresAt;
  o.activeFrom = activeFrom;
  o.clientID = t.clientExtensions?.id;
  o.clientExtensions = t.clientExtensions;
  o.immediate = t.timeInForce === 'FOK' || t.timeInForce === 'IOC';
  o.limitLike = limitLikeOf(type, side, direction);
  return o;
}

/**
 * The working order of an on-fill dependent order (TAKE_PROFIT, STOP_LOSS, GUARANTEED_STOP_LOSS,
 * TRAILING_STOP_LOSS) from the numbers the fill already has, not parsed back from its transaction:
 * the same order `workingOrder` would build from `created` (same fields, same class). `side` closes
 * the new trade; `level` is the order's price, or NaN for a trailing stop, whose level is `distance`
 * from the current quote `q` (the trade's open price without one); `expiresAt` its GTD/GFD expiry.
 * Its create transaction is the caller's to give (`setCreated`) or to leave as values (`setOnFill`:
 * built when read, counted in `sim.stats.orderObjects`).
 */
export function onFillWorkingOrder(
  id: string,
  type: SimOrderType,
  instrument: Instrument,
  trade: LedgerTrade,
  side: 1 | -1,
  level: number,
  distance: number,
  q: Quote | undefined,
  expiresAt: number,
  activeFrom: UnixMs,
  clientExtensions: ClientExtensions | undefined,
  immediate: boolean,
  sim: OrderEnv,
): WorkingOrder {
  if (type === 'TRAILING_STOP_LOSS') {
    const ref = q ? (side === -1 ? q.bid : q.ask) : trade.priceNum;
    level = instrument.snap(side === -1 ? ref - distance : ref + distance);
  } else distance = 0;
  const o = new WorkingOrder(instrument, sim);
  o.id = id;
  o.type = type;
  o.side = side;
  o.level = level;
  o.distance = distance;
  o.tradeID = trade.id;
  o.trigger = side === 1 ? 'ASK' : 'BID';
  o.expiresAt = expiresAt;
  o.activeFrom = activeFrom;
  o.clientID = clientExtensions?.id;
  o.clientExtensions = clientExtensions;
  o.immediate = immediate;
  o.limitLike = type === 'TAKE_PROFIT';
  return o;
}

/** Removes `o` from `list` in place, keeping the creation order (splice would allocate the removed element's array). */
export function removeOrder(list: SimOrder[], o: SimOrder): void {
  const i = list.indexOf(o);
  if (i >= 0) {
    for (let k = i + 1; k < list.length; k++) list[k - 1] = list[k]!;
    list.length--;
  }
}
