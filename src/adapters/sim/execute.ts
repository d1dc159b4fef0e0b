import { add } from '../../domain/money.ts';
import type { LedgerTrade } from '../../domain/ledger.ts';
import { formatTime, parseRequestTime, parseTime, type UnixMs } from '../../domain/time.ts';
import { nextRollover } from '../../domain/new-york.ts';
import type { Quote } from '../../domain/conversion.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { ClientExtensions, OrderCancelReason, Transaction } from '../../domain/v20/index.ts';
import { onFillWorkingOrder, type Book, type QueuedMarket } from './book.ts';
import { cancelFill, cancelOrder, reject } from './cancels.ts';
import { roundUnits, setFill, type FillArgs } from './fill.ts';
import type { SimOrder, SimOrderType } from './orders.ts';
import { canSlip, NO_SLIPPAGE } from './slippage.ts';
import type { SimState } from './state.ts';
import { MarketOrderEntry } from './order-notes.ts';
import type { Draft } from './transactions.ts';

/**
 * Executing an order that met its price: a queued market order (`fillMarket`: its MARKET_ORDER,
 * liquidity), a triggered resting order (`fillResting`), then `execute`: the fill price after
 * slippage (slippage.ts) and its bound, what the fill reduces and opens (positionFill, FIFO), the
 * on-fill checks (take profit and stop loss on the right side, guaranteed distance, margin), the
 * ORDER_FILL and its money (fill.ts), the closed trades' dependent orders cancelled and the new
 * trade's on-fill orders created, in one batch.
 */

/** A queued market order meets its price point: its MARKET_ORDER (or a reject), liquidity, then `execute`. */
export function fillMarket(
  s: SimState,
  book: Book,
  q: QueuedMarket,
  bid: number,
  ask: number,
  t: UnixMs,
): void {
  s.tx.begin();
  const r = q.request;
  // A close whose trade disappeared meanwhile (its TP or SL filled first) is rejected, not filled.
  if (r.tradeClose && !s.ledger.trades.has(r.tradeClose.tradeID)) {
    reject(s, 'MARKET_ORDER_REJECT', { ...r }, 'TRADE_DOESNT_EXIST');
    return;
  }
  let units = Number(r.units);
  if (r.longPositionCloseout || r.shortPositionCloseout) {
    const pos = s.ledger.position(r.instrument);
    const have = r.longPositionCloseout ? pos.long : -pos.short;
    if (have === 0) {
      reject(s, 'MARKET_ORDER_REJECT', { ...r }, 'CLOSEOUT_POSITION_DOESNT_EXIST');
      return;
    }
    if (Math.abs(units) > have) units = r.longPositionCloseout ? -have : have;
  }
  // The MARKET_ORDER as values: its pending order builds the transaction if a reader asks
  // (order-notes.ts); stamped as `emit` stamps (the next ID, the time, the batch).
  const log = s.tx;
  const idNum = log.nextID;
  const orderID = log.takeID();
  const time = log.timeText();
  const entry = new MarketOrderEntry(
    orderID,
    r.instrument,
    r.clientExtensions,
    r,
    units,
    time,
    s.accountID,
    log.batchOr(orderID),
    s.stats,
  );
  log.publishCreate('MARKET_ORDER', orderID, idNum, time, r.reason, r.clientExtensions?.id, entry);
  // Liquidity, when the price carries it (ticks with bucket liquidity): FOK fills all or nothing,
  // IOC fills what is there and cancels the rest.
  const available = units > 0 ? s.liquidity.ask : s.liquidity.bid;
  let fillUnits = units;
  if (Math.abs(units) > available) {
    if (r.timeInForce !== 'IOC' || available <= 0) {
      cancelFill(s, orderID, q.clientID, 'INSUFFICIENT_LIQUIDITY');
      return;
    }
    fillUnits = units > 0 ? available : -available;
  }
  execute(s, book, {
    orderID,
    clientOrderID: q.clientID,
    type: 'MARKET',
    units: fillUnits,
    positionFill: r.positionFill,
    priceBound: r.priceBound !== undefined ? Number(r.priceBound) : Number.NaN,
    bid,
    ask,
    px: units < 0 ? bid : ask,
    t,
    created: r as unknown as Record<string, unknown>,
    tradeClose: r.tradeClose,
    closeout: r.longPositionCloseout ? 1 : r.shortPositionCloseout ? -1 : 0,
    order: undefined,
  });
  if (fillUnits !== units) cancelFill(s, orderID, q.clientID, 'INSUFFICIENT_LIQUIDITY');
}

/** The fill's stamp, filled in for each fill and read by setFill at once (no object per fill). */
const STAMP: { at: UnixMs; time: string; accountID: string; batchID: string } = {
  at: 0,
  time: '',
  accountID: '',
  batchID: '',
};

/** The order details of a fill that opens nothing (a dependent order's): none. */
const NO_DETAILS: Record<string, unknown> = Object.freeze({});

/** A resting order triggered at `px` (pricing.ts): a dependent order closes its trade (or is cancelled with it), an entry order fills its units. */
export function fillResting(
  s: SimState,
  book: Book,
  o: SimOrder,
  px: number,
  bid: number,
  ask: number,
  t: UnixMs,
): void {
  s.tx.begin();
  if (o.tradeID !== undefined) {
    const trade = s.ledger.trades.get(o.tradeID);
    if (!trade) {
      cancelOrder(s, o, 'LINKED_TRADE_CLOSED');
      return;
    }
    s.untrack(o);
    execute(s, book, {
      orderID: o.id,
      clientOrderID: o.clientID,
      type: o.type,
      units: -trade.unitsNum,
      positionFill: 'REDUCE_ONLY',
      priceBound: Number.NaN,
      bid,
      ask,
      px,
      t,
      // A dependent order opens nothing: none of its create transaction's fields is read (it is
      // not built for this).
      created: NO_DETAILS,
      tradeClose: { tradeID: trade.id, units: 'ALL' },
      closeout: 0,
      order: o,
    });
    return;
  }
  s.untrack(o);
  const created = o.created as Transaction & Record<string, unknown>;
  execute(s, book, {
    orderID: o.id,
    clientOrderID: o.clientID,
    type: o.type,
    units: o.units!,
    positionFill: (created.positionFill as string | undefined) ?? 'DEFAULT',
    priceBound: o.priceBound,
    bid,
    ask,
    px,
    t,
    created,
    tradeClose: undefined,
    closeout: 0,
    order: o,
  });
}

/** Whether an open trade that this fill does not close in full holds the client trade ID `id`. */
function clientTradeIDTaken(
  s: SimState,
  id: string,
  chunks: readonly { trade: LedgerTrade; units: number }[],
): boolean {
  const t = s.findTrade(`@${id}`);
  if (t === undefined) return false;
  for (const ch of chunks) if (ch.trade === t && ch.units >= Math.abs(t.unitsNum)) return false;
  return true;
}

/**
 * Fills (or cancels) one order at price `px`: plans the trade reductions (FIFO), the opening
 * remainder, checks bounds, margin and on-fill targets, then emits ORDER_FILL, the cancels of the
 * closed trades' dependent orders, and the new trade's on-fill orders, in one batch.
 */
export function execute(s: SimState, book: Book, a: FillArgs): void {
  const inst = book.instrument;
  const buy = a.units > 0;
  // Slippage (slippage.ts) on the fills that can slip, against the trader; snapped after.
  const slipping = s.slippage !== NO_SLIPPAGE && canSlip(a.type);
  const pxNum = inst.snap(slipping ? s.slippage.slip(a.px, buy ? 1 : -1, a.bid, a.ask, inst) : a.px);
  if (!Number.isNaN(a.priceBound) && (buy ? pxNum > a.priceBound : pxNum < a.priceBound)) {
    cancelFill(s, a.orderID, a.clientOrderID, 'BOUNDS_VIOLATION');
    return;
  }

  // Plan reductions: a named trade, or the opposite trades oldest first.
  const chunks: { trade: LedgerTrade; units: number }[] = [];
  let remaining = Math.abs(a.units);
  if (a.tradeClose) {
    const trade = s.ledger.trades.get(a.tradeClose.tradeID)!;
    if (s.opts.fifo === true && s.account.olderTwin(trade)) {
      cancelFill(s, a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
      return;
    }
    chunks.push({ trade, units: remaining });
    remaining = 0;
  } else {
    const pf = a.positionFill === 'POSITION_DEFAULT' ? 'DEFAULT' : a.positionFill;
    const reduce =
      a.closeout !== 0 || pf === 'REDUCE_FIRST' || pf === 'REDUCE_ONLY' || (pf === 'DEFAULT' && !s.hedging);
    if (reduce) {
      const tag =
        s.opts.netByTag === true && a.closeout === 0
          ? (a.created.clientExtensions as { tag?: string } | undefined)?.tag
          : undefined;
      for (const t of s.ledger.trades.values()) {
        if (remaining === 0) break;
        if (t.instrument !== inst.name || t.unitsNum > 0 === buy) continue;
        if (tag !== undefined && t.clientExtensions?.tag !== tag) continue;
        const take = Math.min(remaining, Math.abs(t.unitsNum));
        chunks.push({ trade: t, units: take });
        remaining = roundUnits(remaining - take);
      }
    }
    if (
      pf === 'REDUCE_ONLY' &&
      a.closeout === 0 &&
      remaining > 0 &&
      chunks.length > 0 &&
      a.created.timeInForce === 'FOK'
    ) {
      // Fill or kill: a REDUCE_ONLY order larger than what it can reduce would fill in part, which
      // FOK forbids (IOC fills the part that reduces). v20 names no reason; the one of a REDUCE_ONLY
      // order with nothing to reduce, below.
      cancelFill(s, a.orderID, a.clientOrderID, 'POSITION_CLOSEOUT_FAILED' as OrderCancelReason);
      return;
    }
    if (pf === 'REDUCE_ONLY' || a.closeout !== 0) remaining = 0;
    if (pf === 'OPEN_ONLY' && !s.hedging && remaining > 0 && s.account.hasOpposite(inst.name, buy)) {
      // OPEN_ONLY only opens or extends a position; on an account without hedging (netting or
      // FIFO) a trade against an open position would hold a long and a short at once: cancelled,
      // with the reason v20 gives for a hedge where hedging is not allowed.
      cancelFill(s, a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
      return;
    }
  }
  const opening = remaining;
  if (chunks.length === 0 && opening === 0) {
    cancelFill(s, a.orderID, a.clientOrderID, 'POSITION_CLOSEOUT_FAILED' as OrderCancelReason);
    return;
  }
  const factors = s.conversion.factors(inst.quote);

  // Checks that apply to the opening part.
  const c = a.created;
  let tpPrice: number | undefined;
  let slPrice: number | undefined;
  let gslPrice: number | undefined;
  if (opening > 0) {
    const tp = c.takeProfitOnFill as { price?: string; distance?: string } | undefined;
    const sl = c.stopLossOnFill as { price?: string; distance?: string } | undefined;
    const gsl = c.guaranteedStopLossOnFill as { price?: string; distance?: string } | undefined;
    if (tp)
      tpPrice =
        tp.price !== undefined
          ? Number(tp.price)
          : inst.snap(buy ? pxNum + Number(tp.distance) : pxNum - Number(tp.distance));
    if (sl)
      slPrice =
        sl.price !== undefined
          ? Number(sl.price)
          : inst.snap(buy ? pxNum - Number(sl.distance) : pxNum + Number(sl.distance));
    if (gsl)
      gslPrice =
        gsl.price !== undefined
          ? Number(gsl.price)
          : inst.snap(buy ? pxNum - Number(gsl.distance) : pxNum + Number(gsl.distance));
    const closing = buy ? a.bid : a.ask;
    if (tpPrice !== undefined && (buy ? tpPrice <= pxNum : tpPrice >= pxNum)) {
      cancelFill(s, a.orderID, a.clientOrderID, 'TAKE_PROFIT_ON_FILL_LOSS');
      return;
    }
    if (
      (slPrice !== undefined && (buy ? slPrice >= closing : slPrice <= closing)) ||
      (gslPrice !== undefined && (buy ? gslPrice >= closing : gslPrice <= closing))
    ) {
      cancelFill(s, a.orderID, a.clientOrderID, 'STOP_LOSS_ON_FILL_LOSS');
      return;
    }
    if (
      s.opts.fifo === true &&
      (tp !== undefined || sl !== undefined || gsl !== undefined || c.trailingStopLossOnFill !== undefined) &&
      s.account.sizeTaken(inst.name, opening, chunks)
    ) {
      cancelFill(s, a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
      return;
    }
    const tradeCid = (c.tradeClientExtensions as { id?: string } | undefined)?.id;
    if (tradeCid !== undefined && clientTradeIDTaken(s, tradeCid, chunks)) {
      cancelFill(s, a.orderID, a.clientOrderID, 'CLIENT_TRADE_ID_ALREADY_EXISTS');
      return;
    }
    if (
      gslPrice !== undefined &&
      Math.abs(pxNum - gslPrice) < inst.guaranteedStopLoss.minimumDistance - 1e-12
    ) {
      cancelFill(s, a.orderID, a.clientOrderID, 'STOP_LOSS_ON_FILL_GUARANTEED_MINIMUM_DISTANCE_NOT_MET');
      return;
    }
    if (!s.account.marginOk(inst, buy ? opening : -opening, chunks, a.bid, a.ask)) {
      cancelFill(s, a.orderID, a.clientOrderID, 'INSUFFICIENT_MARGIN');
      return;
    }
  }

  // The ORDER_FILL and its money (fill.ts): exact, one rounding per amount, as numbers; the
  // ledger folds them, and the transaction object is built only if a listener reads it.
  const log = s.tx;
  const idNum = log.nextID;
  const fillID = log.peekID();
  const margin =
    opening > 0 ? s.account.initialMargin(inst, opening, a.bid, a.ask, factors.gain, factors.loss) : 0;
  const closedTrades: LedgerTrade[] = [];
  // The stamp in a scratch object: setFill copies it into the note at once.
  const stamp = STAMP;
  stamp.at = s.now;
  stamp.time = log.timeText();
  stamp.accountID = s.accountID;
  stamp.batchID = log.batchOr(fillID);
  const fill = log.fillNote();
  setFill(
    fill,
    a,
    inst,
    chunks,
    opening,
    buy,
    pxNum,
    factors,
    fillID,
    idNum,
    margin,
    s.commission,
    s.ledger.balance,
    c.tradeClientExtensions as ClientExtensions | undefined,
    closedTrades,
    stamp,
  );
  const opened = opening > 0;
  log.takeID();
  // Read before the delivery: a listener's own fills reuse notes only at deeper levels, but the
  // figures are this fill's whatever the listeners do.
  const fillPL = fill.pl;
  log.publishFill(fill);
  s.stats.fills++;
  if (s.inAmbiguous) s.stats.ambiguousPL = add(s.stats.ambiguousPL, fillPL);

  // The closed trades' remaining dependent orders.
  for (let i = 0; i < closedTrades.length; i++) {
    const t = closedTrades[i]!;
    cancelLinked(s, t.takeProfitOrderID, a.orderID);
    cancelLinked(s, t.stopLossOrderID, a.orderID);
    cancelLinked(s, t.trailingStopLossOrderID, a.orderID);
    cancelLinked(s, t.guaranteedStopLossOrderID, a.orderID);
  }

  // The new trade's on-fill orders, their working orders built from the numbers at hand (the
  // trade, its side, the levels, the quote), not parsed back from their transactions.
  if (opened) {
    const clientTradeID = (c.tradeClientExtensions as ClientExtensions | undefined)?.id;
    const trade = s.ledger.trades.get(fillID)!;
    const q = inst.name === s.lastQuoteName ? s.lastQuote : s.quotes.get(inst.name);
    if (tpPrice !== undefined)
      onFillOrder(
        s,
        'TAKE_PROFIT_ORDER',
        'TAKE_PROFIT',
        inst,
        trade,
        q,
        clientTradeID,
        c.takeProfitOnFill,
        tpPrice,
        false,
        undefined,
        a.t,
      );
    if (slPrice !== undefined)
      onFillOrder(
        s,
        'STOP_LOSS_ORDER',
        'STOP_LOSS',
        inst,
        trade,
        q,
        clientTradeID,
        c.stopLossOnFill,
        slPrice,
        true,
        undefined,
        a.t,
      );
    if (gslPrice !== undefined) {
      onFillOrder(
        s,
        'GUARANTEED_STOP_LOSS_ORDER',
        'GUARANTEED_STOP_LOSS',
        inst,
        trade,
        q,
        clientTradeID,
        c.guaranteedStopLossOnFill,
        gslPrice,
        true,
        inst.guaranteedStopLoss.premium,
        a.t,
      );
    }
    if (c.trailingStopLossOnFill !== undefined) {
      onFillOrder(
        s,
        'TRAILING_STOP_LOSS_ORDER',
        'TRAILING_STOP_LOSS',
        inst,
        trade,
        q,
        clientTradeID,
        c.trailingStopLossOnFill,
        Number.NaN,
        true,
        undefined,
        a.t,
      );
    }
  }
}

/** Cancels a closed trade's dependent order `id` (LINKED_TRADE_CLOSED), unless it is the order that just filled. */
function cancelLinked(s: SimState, id: string | undefined, filledID: string): void {
  if (id === undefined || id === filledID) return;
  const o = s.order(id);
  if (o) cancelOrder(s, o, 'LINKED_TRADE_CLOSED');
}

/**
 * Creates one on-fill dependent order (reason ON_FILL) of the trade the fill opened, `trade` (of `inst`): its
 * transaction field by field (no spreads on the fill path; timeInForce GTC by default, gtdTime in
 * v20's form), then its working order from the numbers (`level`, NaN for a trailing stop; the
 * trailing distance; the expiry), filed in its book.
 */
function onFillOrder(
  s: SimState,
  type: string,
  orderType: SimOrderType,
  inst: Instrument,
  trade: LedgerTrade,
  q: Quote | undefined,
  clientTradeID: string | undefined,
  x: unknown,
  level: number,
  keepDistance: boolean,
  premium: string | undefined,
  at: UnixMs,
): void {
  const d = x as {
    distance?: string;
    timeInForce?: string;
    gtdTime?: string;
    clientExtensions?: ClientExtensions;
  };
  const fillID = trade.id;
  const timeInForce = d.timeInForce ?? 'GTC';
  let expiresAt = Infinity;
  const log = s.tx;
  if (
    clientTradeID === undefined &&
    d.gtdTime === undefined &&
    d.clientExtensions === undefined &&
    premium === undefined
  ) {
    // The common on-fill order (no client IDs, no GTD time, no premium), three per fill with
    // TP/SL/trailing: its transaction kept as the values it is made of (orders.ts `WorkingOrder`),
    // stamped as `stamp` would (the next ID, the time, the batch), built only if a reader asks.
    const idNum = log.nextID;
    const id = log.takeID();
    const time = log.timeText();
    if (timeInForce === 'GFD') expiresAt = nextRollover(s.now);
    const o = onFillWorkingOrder(
      id,
      orderType,
      inst,
      trade,
      trade.unitsNum > 0 ? -1 : 1,
      level,
      orderType === 'TRAILING_STOP_LOSS' ? Number(d.distance) : 0,
      q,
      expiresAt,
      at,
      undefined,
      timeInForce === 'FOK' || timeInForce === 'IOC',
      s,
    ).setOnFill(timeInForce, keepDistance ? d.distance : undefined, time, log.batchOr(id));
    s.file(o);
    log.publishCreate(type, id, idNum, time, 'ON_FILL', undefined, o);
    return;
  }
  const price = level === level ? inst.price(level) : undefined;
  const tx: Draft = { type, tradeID: fillID, reason: 'ON_FILL', orderFillTransactionID: fillID };
  if (clientTradeID !== undefined) tx.clientTradeID = clientTradeID;
  tx.timeInForce = timeInForce;
  if (d.gtdTime !== undefined) tx.gtdTime = formatTime(parseRequestTime(d.gtdTime));
  if (d.clientExtensions !== undefined) tx.clientExtensions = d.clientExtensions;
  if (d.distance !== undefined && keepDistance) tx.distance = d.distance;
  if (price !== undefined) tx.price = price;
  if (premium !== undefined) tx.guaranteedExecutionPremium = premium;
  tx.triggerCondition = 'DEFAULT';
  log.stamp(tx);
  if (timeInForce === 'GTD' && tx.gtdTime !== undefined) expiresAt = parseTime(tx.gtdTime as string);
  if (timeInForce === 'GFD') expiresAt = nextRollover(s.now);
  const immediate = timeInForce === 'FOK' || timeInForce === 'IOC';
  const o = onFillWorkingOrder(
    tx.id as string,
    orderType,
    inst,
    trade,
    trade.unitsNum > 0 ? -1 : 1,
    level,
    orderType === 'TRAILING_STOP_LOSS' ? Number(d.distance) : 0,
    q,
    expiresAt,
    at,
    d.clientExtensions,
    immediate,
    s,
  ).setCreated(tx as unknown as Transaction);
  s.file(o);
  // Published with its working order: the ledger files `o` itself as the pending order.
  s.tx.publish(tx, o);
}
