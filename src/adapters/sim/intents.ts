import type { Instrument } from '../../domain/instrument.ts';
import { assertNever, type OrderIntent } from '../../domain/intents.ts';
import type { LedgerTrade } from '../../domain/ledger.ts';
import { formatTime, parseRequestTime, type UnixMs } from '../../domain/time.ts';
import type {
  ClientExtensions,
  MarketOrderRequest,
  OrderRequest,
  Transaction,
  TransactionRejectReason,
} from '../../domain/v20/index.ts';
import type { MarketRequest } from './book.ts';
import { cancelFill, cancelOrder, reject } from './cancels.ts';
import { NO_LATENCY } from './latency.ts';
import type { SimOrder } from './orders.ts';
import type { SimState } from './state.ts';
import { copyFields, type Draft } from './transactions.ts';
import { checkOrder, valuePlaces } from './validate.ts';

/**
 * Intents into orders: an order created or replaced (checked by validate.ts `checkOrder`, then
 * queued as a market order for its next price or filed as a resting order), cancels, trade and
 * position closes (market orders of reason TRADE_CLOSE / POSITION_CLOSEOUT), a trade's dependent
 * orders, client extensions. When an order decided now reaches the server is the latency model's
 * (`arrival`); a market order submitted while its market is closed is halted (`queueMarket`).
 */

/** Executes one intent (the simulator has started). */
export function submit(s: SimState, intent: OrderIntent): void {
  switch (intent.kind) {
    case 'order':
      submitOrder(s, intent.request, undefined);
      return;
    case 'replace': {
      const old = findOrder(s, intent.orderSpecifier);
      if (!old) {
        s.tx.begin();
        reject(s, 'ORDER_CANCEL_REJECT', cancelRejectFields(intent.orderSpecifier), 'ORDER_DOESNT_EXIST');
        return;
      }
      submitOrder(s, intent.request, old);
      return;
    }
    case 'cancel': {
      const o = findOrder(s, intent.orderSpecifier);
      s.tx.begin();
      if (!o)
        reject(s, 'ORDER_CANCEL_REJECT', cancelRejectFields(intent.orderSpecifier), 'ORDER_DOESNT_EXIST');
      else cancelOrder(s, o, 'CLIENT_REQUEST');
      return;
    }
    case 'closeTrade': {
      const trade = s.findTrade(intent.tradeSpecifier);
      if (!trade) {
        s.tx.begin();
        reject(
          s,
          'MARKET_ORDER_REJECT',
          { tradeClose: { tradeID: intent.tradeSpecifier, units: intent.units }, reason: 'TRADE_CLOSE' },
          'TRADE_DOESNT_EXIST',
        );
        return;
      }
      const size = Math.abs(trade.unitsNum);
      const units = intent.units === 'ALL' ? size : Number(intent.units);
      if (intent.units !== 'ALL' && unitsTooPrecise(intent.units, s.instruments.get(trade.instrument))) {
        s.tx.begin();
        reject(
          s,
          'MARKET_ORDER_REJECT',
          {
            instrument: trade.instrument,
            tradeClose: { tradeID: trade.id, units: intent.units },
            reason: 'TRADE_CLOSE',
          },
          'UNITS_PRECISION_EXCEEDED',
        );
        return;
      }
      if (!(units <= size && units > 0)) {
        s.tx.begin();
        reject(
          s,
          'MARKET_ORDER_REJECT',
          {
            instrument: trade.instrument,
            tradeClose: { tradeID: trade.id, units: intent.units },
            reason: 'TRADE_CLOSE',
          },
          'CLOSE_TRADE_UNITS_EXCEED_TRADE_SIZE',
        );
        return;
      }
      const signed = trade.unitsNum > 0 ? -units : units;
      const tradeClose: { tradeID: string; clientTradeID?: string; units: string } = {
        tradeID: trade.id,
        units: intent.units === 'ALL' ? 'ALL' : String(units),
      };
      if (trade.clientExtensions?.id) tradeClose.clientTradeID = trade.clientExtensions.id;
      queueMarket(
        s,
        trade.instrument,
        {
          instrument: trade.instrument,
          units: String(signed),
          timeInForce: 'FOK',
          positionFill: 'REDUCE_ONLY',
          reason: 'TRADE_CLOSE',
          tradeClose,
        },
        undefined,
      );
      return;
    }
    case 'closePosition': {
      const { long, short } = s.ledger.position(intent.instrument);
      const inst = s.instruments.get(intent.instrument);
      // Each side asked for is checked on its own; a bad side is rejected by name (its
      // longPositionCloseout / shortPositionCloseout), and nothing is closed when any side is bad.
      const want = (spec: string | undefined, have: number): number | undefined | TransactionRejectReason => {
        if (spec === undefined || spec === 'NONE') return undefined;
        if (have === 0) return 'CLOSEOUT_POSITION_DOESNT_EXIST';
        const abs = Math.abs(have);
        if (spec === 'ALL') return abs;
        const d = Number(spec);
        if (!(d > 0)) return 'CLOSEOUT_POSITION_REJECT';
        if (unitsTooPrecise(spec, inst)) return 'UNITS_PRECISION_EXCEEDED';
        return d > abs ? 'CLOSEOUT_POSITION_UNITS_EXCEED_POSITION_SIZE' : d;
      };
      // A request that names neither side closes both (v20's default for each is ALL): the sides the
      // position holds; with no position at all, the long side's CLOSEOUT_POSITION_DOESNT_EXIST.
      let longUnits = intent.longUnits;
      let shortUnits = intent.shortUnits;
      if (longUnits === undefined && shortUnits === undefined) {
        if (long !== 0) longUnits = 'ALL';
        if (short !== 0) shortUnits = 'ALL';
        if (long === 0 && short === 0) longUnits = 'ALL';
      }
      const lo = want(longUnits, long);
      const sh = want(shortUnits, short);
      if (lo === undefined && sh === undefined) {
        s.tx.begin();
        reject(
          s,
          'MARKET_ORDER_REJECT',
          { instrument: intent.instrument, reason: 'POSITION_CLOSEOUT' },
          'CLOSEOUT_POSITION_INCOMPLETE_SPECIFICATION',
        );
        return;
      }
      if (typeof lo === 'string' || typeof sh === 'string') {
        s.tx.begin();
        if (typeof lo === 'string')
          reject(
            s,
            'MARKET_ORDER_REJECT',
            {
              instrument: intent.instrument,
              longPositionCloseout: { instrument: intent.instrument, units: longUnits },
              reason: 'POSITION_CLOSEOUT',
            },
            lo,
          );
        if (typeof sh === 'string')
          reject(
            s,
            'MARKET_ORDER_REJECT',
            {
              instrument: intent.instrument,
              shortPositionCloseout: { instrument: intent.instrument, units: shortUnits },
              reason: 'POSITION_CLOSEOUT',
            },
            sh,
          );
        return;
      }
      if (lo) {
        queueMarket(
          s,
          intent.instrument,
          {
            instrument: intent.instrument,
            units: String(-lo),
            timeInForce: 'FOK',
            positionFill: 'REDUCE_ONLY',
            reason: 'POSITION_CLOSEOUT',
            longPositionCloseout: { instrument: intent.instrument, units: longUnits ?? 'ALL' },
          },
          undefined,
        );
      }
      if (sh) {
        queueMarket(
          s,
          intent.instrument,
          {
            instrument: intent.instrument,
            units: String(sh),
            timeInForce: 'FOK',
            positionFill: 'REDUCE_ONLY',
            reason: 'POSITION_CLOSEOUT',
            shortPositionCloseout: { instrument: intent.instrument, units: shortUnits ?? 'ALL' },
          },
          undefined,
        );
      }
      return;
    }
    case 'tradeOrders':
      tradeOrders(s, intent);
      return;
    case 'clientExtensions': {
      s.tx.begin();
      if (intent.orderSpecifier !== undefined) {
        const o = findOrder(s, intent.orderSpecifier);
        if (!o) {
          reject(
            s,
            'ORDER_CLIENT_EXTENSIONS_MODIFY_REJECT',
            { orderID: intent.orderSpecifier },
            'ORDER_DOESNT_EXIST',
          );
          return;
        }
        const d: Draft = { type: 'ORDER_CLIENT_EXTENSIONS_MODIFY', orderID: o.id };
        if (intent.clientExtensions) d.clientExtensionsModify = intent.clientExtensions;
        if (intent.tradeClientExtensions) d.tradeClientExtensionsModify = intent.tradeClientExtensions;
        if (intent.clientExtensions) {
          // The new extensions replace the old: later fills and cancels carry the new client ID,
          // and only the new one finds the order.
          if (o.clientID !== undefined && s.byClientID.get(o.clientID) === o.id)
            s.byClientID.delete(o.clientID);
          o.clientID = intent.clientExtensions.id;
          if (o.clientID !== undefined) s.byClientID.set(o.clientID, o.id);
        }
        s.tx.emit(d);
      } else if (intent.tradeSpecifier !== undefined) {
        const t = s.findTrade(intent.tradeSpecifier);
        if (!t) {
          reject(
            s,
            'TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT',
            { tradeID: intent.tradeSpecifier },
            'TRADE_DOESNT_EXIST',
          );
          return;
        }
        const ext = intent.tradeClientExtensions ?? intent.clientExtensions ?? {};
        const holder = ext.id !== undefined ? s.findTrade(`@${ext.id}`) : undefined;
        if (holder !== undefined && holder !== t) {
          reject(
            s,
            'TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT',
            { tradeID: t.id, tradeClientExtensionsModify: ext },
            'CLIENT_TRADE_ID_ALREADY_EXISTS',
          );
          return;
        }
        s.tx.emit({
          type: 'TRADE_CLIENT_EXTENSIONS_MODIFY',
          tradeID: t.id,
          tradeClientExtensionsModify: ext,
        });
      }
      return;
    }
    default:
      assertNever(intent, 'intent');
  }
}

/** Whether a close's units (a decimal string) carry more fraction digits than the instrument's tradeUnitsPrecision ("0.5" on EUR_USD). */
function unitsTooPrecise(units: string, inst: Instrument): boolean {
  return valuePlaces(units) > inst.tradeUnitsPrecision;
}

/** The pending order of an order specifier (an ID, or `@clientOrderID`). */
function findOrder(s: SimState, spec: string): SimOrder | undefined {
  const id = spec.startsWith('@') ? s.byClientID.get(spec.slice(1)) : spec;
  return id === undefined ? undefined : s.order(id);
}

/** Creates (or replaces) an order: a reject, a market order queued for its next price, or a resting order filed in its book. */
function submitOrder(s: SimState, request: OrderRequest, replaces: SimOrder | undefined): void {
  const check = checkOrder(request, s.orderEnv);
  const r = check.request as OrderRequest &
    Record<string, unknown> & { instrument?: string; tradeID?: string; clientExtensions?: ClientExtensions };
  let reason = check.ok ? undefined : check.reason;
  const inst = check.ok ? check.instrument : undefined;
  const cid = r.clientExtensions?.id;
  if (!reason && cid !== undefined && s.byClientID.has(cid) && s.byClientID.get(cid) !== replaces?.id)
    reason = 'CLIENT_ORDER_ID_ALREADY_EXISTS';
  // The client ID the order's trade would take is held by an open trade: refused, as v20 refuses it
  // (a pending order whose ID is taken while it waits is cancelled at its fill: execute.ts).
  const tradeCid = (r.tradeClientExtensions as ClientExtensions | undefined)?.id;
  if (!reason && tradeCid !== undefined && s.findTrade(`@${tradeCid}`) !== undefined)
    reason = 'CLIENT_TRADE_ID_ALREADY_EXISTS';
  let trade: LedgerTrade | undefined;
  if (!reason && check.ok && check.tradeID !== undefined) {
    trade = s.ledger.trades.get(check.tradeID)!;
    if (!replaces) {
      const slot =
        r.type === 'TAKE_PROFIT'
          ? trade.takeProfitOrderID
          : r.type === 'STOP_LOSS'
            ? trade.stopLossOrderID
            : r.type === 'TRAILING_STOP_LOSS'
              ? trade.trailingStopLossOrderID
              : trade.guaranteedStopLossOrderID;
      if (slot !== undefined) reason = `${r.type}_ORDER_ALREADY_EXISTS` as TransactionRejectReason;
    }
  }
  s.tx.begin();
  if (reason) {
    const { type, ...rest } = r;
    reject(s, `${type}_ORDER_REJECT`, { ...rest, reason: replaces ? 'REPLACEMENT' : 'CLIENT_ORDER' }, reason);
    return;
  }
  let replacement: { cancellingTransactionID: string; replacesOrderID: string } | undefined;
  if (replaces) {
    const cancelID = s.tx.peekID();
    cancelOrder(s, replaces, 'CLIENT_REQUEST_REPLACED', String(Number(cancelID) + 1));
    replacement = { cancellingTransactionID: cancelID, replacesOrderID: replaces.id };
  }
  if (r.type === 'MARKET') {
    const m = r as unknown as MarketOrderRequest;
    const q: { -readonly [K in keyof MarketRequest]: MarketRequest[K] } = {
      instrument: m.instrument,
      units: m.units,
      timeInForce: m.timeInForce ?? 'FOK',
      positionFill: m.positionFill ?? 'DEFAULT',
      reason: 'CLIENT_ORDER',
    };
    if (m.priceBound !== undefined) q.priceBound = m.priceBound;
    if (m.clientExtensions !== undefined) q.clientExtensions = m.clientExtensions;
    // On-fill details as v20 records them: timeInForce defaulted (GTC), prices at the instrument's precision.
    if (m.takeProfitOnFill !== undefined) q.takeProfitOnFill = details(m.takeProfitOnFill, inst);
    if (m.stopLossOnFill !== undefined) q.stopLossOnFill = details(m.stopLossOnFill, inst);
    if (m.trailingStopLossOnFill !== undefined)
      q.trailingStopLossOnFill = details(m.trailingStopLossOnFill, inst);
    if (m.guaranteedStopLossOnFill !== undefined)
      q.guaranteedStopLossOnFill = details(m.guaranteedStopLossOnFill, inst);
    if (m.tradeClientExtensions !== undefined) q.tradeClientExtensions = m.tradeClientExtensions;
    queueMarket(s, m.instrument, q, cid);
    return;
  }
  const { type, ...fields } = r;
  const draft: Draft = {
    type: `${type}_ORDER`,
    ...fields,
    timeInForce: (r.timeInForce as string | undefined) ?? 'GTC',
    triggerCondition: (r.triggerCondition as string | undefined) ?? 'DEFAULT',
    reason: replacement ? 'REPLACEMENT' : 'CLIENT_ORDER',
  };
  if (trade) draft.tradeID = trade.id;
  if (
    type !== 'TAKE_PROFIT' &&
    type !== 'STOP_LOSS' &&
    type !== 'TRAILING_STOP_LOSS' &&
    type !== 'GUARANTEED_STOP_LOSS'
  ) {
    draft.positionFill = (r.positionFill as string | undefined) ?? 'DEFAULT';
  }
  if (r.price !== undefined && inst) draft.price = inst.price(Number(r.price));
  if (r.gtdTime !== undefined) draft.gtdTime = formatTime(parseRequestTime(r.gtdTime as string));
  // MARKET_IF_TOUCHED: the order records its initialMarketPrice (v20's MarketIfTouchedOrder), the
  // MARKET_IF_TOUCHED_ORDER transaction does not (its definition has no such field): `track` takes it
  // from the current quote, as the sandbox's order view does.
  if (replacement) Object.assign(draft, replacement);
  // Stamped, its working order built and filed, then published with it (the ledger files that order).
  const tx = s.tx.stamp(draft);
  s.tx.publish(tx, s.track(tx as unknown as Transaction, arrival(s)));
}

/** Queues a market order for the first price after its arrival, or halts it (MARKET_HALTED) when its market is closed. */
function queueMarket(
  s: SimState,
  instrument: string,
  request: MarketRequest,
  clientID: string | undefined,
): void {
  // Closed when the strategy decided (a weekend timer fires as Sunday's first price arrives), or now.
  if (halted(s, s.decidedAt === s.decidedAt ? s.decidedAt : s.now, s.book(instrument).instrument)) {
    // v20 creates the order and cancels it in the same batch: there is no price to fill at.
    s.tx.begin();
    const created = s.tx.emit({ type: 'MARKET_ORDER', ...request });
    s.stats.halted++;
    cancelFill(s, created.id, clientID, 'MARKET_HALTED');
    return;
  }
  s.book(instrument).market.push({ clientID, request, activeFrom: arrival(s) });
}

/** Set, replace (object) or cancel (null) a trade's dependent orders: v20's "trade orders" call. */
function tradeOrders(s: SimState, intent: Extract<OrderIntent, { kind: 'tradeOrders' }>): void {
  const trade = s.findTrade(intent.tradeSpecifier);
  s.tx.begin();
  if (!trade) {
    const spec = intent.tradeSpecifier;
    reject(
      s,
      'TAKE_PROFIT_ORDER_REJECT',
      {
        ...(spec.startsWith('@') ? { clientTradeID: spec.slice(1) } : { tradeID: spec }),
        reason: 'CLIENT_ORDER',
      },
      'TRADE_DOESNT_EXIST',
    );
    return;
  }
  const slots = [
    ['TAKE_PROFIT', intent.takeProfit, trade.takeProfitOrderID],
    ['STOP_LOSS', intent.stopLoss, trade.stopLossOrderID],
    ['TRAILING_STOP_LOSS', intent.trailingStopLoss, trade.trailingStopLossOrderID],
    ['GUARANTEED_STOP_LOSS', intent.guaranteedStopLoss, trade.guaranteedStopLossOrderID],
  ] as const;
  const inst = s.instruments.get(trade.instrument);
  for (const [type, details, existingID] of slots) {
    if (details === undefined) continue;
    const existing = existingID !== undefined ? s.order(existingID) : undefined;
    if (details === null) {
      if (existing) cancelOrder(s, existing, 'CLIENT_REQUEST');
      continue;
    }
    // The same check as an order created or replaced by ID: the trade's instrument decides.
    const check = checkOrder({ ...details, type, tradeID: trade.id } as unknown as OrderRequest, s.orderEnv);
    if (!check.ok) {
      const { type: _t, ...fields } = check.request as OrderRequest & Record<string, unknown>;
      reject(
        s,
        `${type}_ORDER_REJECT`,
        { ...fields, reason: existing ? 'REPLACEMENT' : 'CLIENT_ORDER' },
        check.reason,
      );
      continue;
    }
    let replacement: Record<string, string> = {};
    if (existing) {
      const cancelID = s.tx.peekID();
      cancelOrder(s, existing, 'CLIENT_REQUEST_REPLACED', String(Number(cancelID) + 1));
      replacement = { replacesOrderID: existing.id, cancellingTransactionID: cancelID };
    }
    const d = check.request as unknown as Record<string, unknown>;
    const draft: Draft = {
      type: `${type}_ORDER`,
      tradeID: trade.id,
      timeInForce: (d.timeInForce as string | undefined) ?? 'GTC',
      triggerCondition: (d.triggerCondition as string | undefined) ?? 'DEFAULT',
      reason: existing ? 'REPLACEMENT' : 'CLIENT_ORDER',
      ...replacement,
    };
    if (d.price !== undefined) draft.price = inst.price(Number(d.price));
    if (d.distance !== undefined) draft.distance = d.distance;
    if (d.gtdTime !== undefined) draft.gtdTime = formatTime(parseRequestTime(d.gtdTime as string));
    if (d.clientExtensions !== undefined) draft.clientExtensions = d.clientExtensions;
    const tx = s.tx.stamp(draft);
    s.tx.publish(tx, s.track(tx as unknown as Transaction, arrival(s)));
  }
}

/** When an order decided now reaches the server (latency.ts): the prices it may act on start there. */
function arrival(s: SimState): UnixMs {
  return s.latency === NO_LATENCY ? s.now : s.now + s.latency.next();
}

/** Whether `instrument`'s market is closed at `t` (its trading hours; never with `marketHours: false`). */
function halted(s: SimState, t: UnixMs, instrument: Instrument): boolean {
  if (s.opts.marketHours === false || !Number.isFinite(t)) return false;
  return !instrument.hours.isOpen(t);
}

/** The v20 `ORDER_CANCEL_REJECT` fields of an order specifier: `orderID`, or `clientOrderID` for `@clientID`. */
function cancelRejectFields(spec: string): Record<string, unknown> {
  return spec.startsWith('@') ? { clientOrderID: spec.slice(1) } : { orderID: spec };
}

/** On-fill details as a dependent order's fields: GTC by default, gtdTime in v20's form, price at the instrument's precision. */
function details(x: unknown, inst?: Instrument): Record<string, unknown> {
  // Field by field, in the request's order: a spread followed by an added field costs ~20× more here.
  const d = copyFields<Record<string, unknown>>({}, x as Record<string, unknown>);
  if (d.timeInForce === undefined) d.timeInForce = 'GTC';
  if (typeof d.gtdTime === 'string') d.gtdTime = formatTime(parseRequestTime(d.gtdTime));
  if (inst !== undefined && typeof d.price === 'string') d.price = inst.price(Number(d.price));
  return d;
}
