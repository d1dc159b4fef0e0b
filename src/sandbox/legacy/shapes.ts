/**
 * The legacy (`/v1`) generation's objects, built from the sandbox's v20 state: accounts, pending
 * orders, open trades and transactions as the specification describes them (numbers as JSON
 * numbers, take-profit and stop-loss inside the trade with 0 for none, trailing stops in pips).
 * Nothing here holds state of its own except the order aliases (a legacy order keeps its ID across
 * PATCHes, which v20 answers with a new order): see `LegacyOrderIDs`.
 */
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import { parseTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';

type Obj = Record<string, unknown>;

/** The legacy order types and their v20 names. */
export const LEGACY_ORDER_TYPES: Readonly<Record<string, string>> = {
  market: 'MARKET',
  limit: 'LIMIT',
  stop: 'STOP',
  marketIfTouched: 'MARKET_IF_TOUCHED',
};
const V20_TO_LEGACY_TYPE: Readonly<Record<string, string>> = {
  MARKET: 'market',
  LIMIT: 'limit',
  STOP: 'stop',
  MARKET_IF_TOUCHED: 'marketIfTouched',
};

/** A v20 decimal string (or absent) as a legacy JSON number, 0 when absent. */
export const num = (v: unknown): number => (v === undefined || v === null || v === '' ? 0 : Number(v));

/**
 * The legacy integer account ID of a v20 account ID: its digits (101-001-0000001-001 ->
 * 1010010000001001, below 2^53). Legacy paths take either form.
 */
export function legacyAccountID(id: string): number {
  const digits = id.replace(/\D/g, '');
  const n = Number(digits === '' ? '0' : digits);
  return Number.isSafeInteger(n) ? n : Number(digits.slice(-15));
}

/**
 * Legacy order IDs across replacements: a legacy PATCH keeps the order's ID, where v20 cancels the
 * order and creates a replacing one with a new ID. The legacy ID is the ID of the first order of
 * the chain; `current` gives the v20 order that stands for it now.
 */
export class LegacyOrderIDs {
  readonly #root = new Map<string, string>();
  readonly #current = new Map<string, string>();

  /** Follows one transaction: a replacing order joins the chain of the order it replaces. */
  observe(tx: Transaction): void {
    const t = tx as Transaction & { replacesOrderID?: string };
    if (t.replacesOrderID === undefined || !t.type.endsWith('_ORDER')) return;
    const root = this.legacyID(t.replacesOrderID);
    this.#root.set(t.id, root);
    this.#current.set(root, t.id);
  }

  /** The legacy ID of a v20 order ID. */
  legacyID(v20ID: string): string {
    return this.#root.get(v20ID) ?? v20ID;
  }

  /** The v20 order that a legacy order ID stands for now. */
  current(legacyID: string): string {
    return this.#current.get(legacyID) ?? legacyID;
  }
}

/** Trailing stop distance (price units) in pips, one decimal, as the legacy generation gives it. */
export function pips(instruments: InstrumentRegistry, instrument: string, distance: unknown): number {
  if (distance === undefined || distance === null) return 0;
  const inst = instruments.get(instrument);
  return Math.round((Number(distance) / inst.pip) * 10) / 10;
}

/** A legacy account list item. */
export function legacyAccountItem(a: SandboxAccount): Obj {
  return {
    accountId: legacyAccountID(a.id),
    accountName: a.alias,
    accountCurrency: a.currency,
    marginRate: Number(a.marginRate),
  };
}

/** The legacy account detail. */
export function legacyAccount(a: SandboxAccount, openOrders: number): Obj {
  const s = a.summary();
  return {
    accountId: legacyAccountID(a.id),
    accountName: a.alias,
    balance: num(s.balance),
    unrealizedPl: num(s.unrealizedPL),
    realizedPl: num(s.pl),
    marginUsed: num(s.marginUsed),
    marginAvail: num(s.marginAvailable),
    openTrades: a.broker.ledger.trades.size,
    openOrders,
    marginRate: Number(a.marginRate),
    accountCurrency: a.currency,
  };
}

/** Whether a v20 order is one the legacy generation lists as a pending order (not a trade's TP/SL). */
export const isLegacyOrder = (o: Obj): boolean => V20_TO_LEGACY_TYPE[o.type as string] !== undefined;

/** A legacy pending order from a v20 order view. */
export function legacyOrder(instruments: InstrumentRegistry, ids: LegacyOrderIDs, o: Obj): Obj {
  const units = Number(o.units);
  const bound = num(o.priceBound);
  const tp = o.takeProfitOnFill as Obj | undefined;
  const sl = (o.stopLossOnFill ?? o.guaranteedStopLossOnFill) as Obj | undefined;
  const ts = o.trailingStopLossOnFill as Obj | undefined;
  return {
    id: Number(ids.legacyID(o.id as string)),
    instrument: o.instrument,
    units: Math.abs(units),
    side: units < 0 ? 'sell' : 'buy',
    type: V20_TO_LEGACY_TYPE[o.type as string],
    time: o.createTime,
    price: num(o.price),
    takeProfit: num(tp?.price),
    stopLoss: num(sl?.price),
    // A GTC order placed through /v3 has no expiry: null (the legacy generation always had one).
    expiry: o.timeInForce === 'GTD' ? o.gtdTime : null,
    upperBound: units > 0 ? bound : 0,
    lowerBound: units < 0 ? bound : 0,
    trailingStop: ts ? pips(instruments, o.instrument as string, ts.distance) : 0,
  };
}

/** A legacy open trade from a v20 Trade. */
export function legacyTrade(instruments: InstrumentRegistry, t: Obj): Obj {
  const units = Number(t.currentUnits);
  const tp = t.takeProfitOrder as Obj | undefined;
  const sl = (t.stopLossOrder ?? t.guaranteedStopLossOrder) as Obj | undefined;
  const ts = t.trailingStopLossOrder as Obj | undefined;
  return {
    id: Number(t.id),
    units: Math.abs(units),
    side: units < 0 ? 'sell' : 'buy',
    instrument: t.instrument,
    time: t.openTime,
    price: num(t.price),
    takeProfit: num(tp?.price),
    stopLoss: num(sl?.price),
    trailingStop: ts ? pips(instruments, t.instrument as string, ts.distance) : 0,
    trailingAmount: ts ? num(ts.trailingStopValue) : 0,
  };
}

/** v20 ORDER_CANCEL reasons and their legacy names (fill failures and closings). */
export const CANCEL_REASONS: Readonly<Record<string, string>> = {
  CLIENT_REQUEST: 'CLIENT_REQUEST',
  TIME_IN_FORCE_EXPIRED: 'TIME_IN_FORCE_EXPIRED',
  MIGRATION: 'MIGRATION',
  INSUFFICIENT_MARGIN: 'INSUFFICIENT_MARGIN',
  BOUNDS_VIOLATION: 'BOUNDS_VIOLATION',
  STOP_LOSS_ON_FILL_LOSS: 'STOP_LOSS_VIOLATION',
  STOP_LOSS_ON_FILL_PRICE_PRECISION_EXCEEDED: 'STOP_LOSS_VIOLATION',
  TAKE_PROFIT_ON_FILL_LOSS: 'TAKE_PROFIT_VIOLATION',
  TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MINIMUM_NOT_MET: 'TRAILING_STOP_VIOLATION',
  TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED: 'TRAILING_STOP_VIOLATION',
  MARKET_HALTED: 'MARKET_HALTED',
  ACCOUNT_LOCKED: 'ACCOUNT_NON_TRADABLE',
  ACCOUNT_ORDER_FILL_LOCKED: 'ACCOUNT_NON_TRADABLE',
  ACCOUNT_NEW_POSITIONS_LOCKED: 'NO_NEW_POSITION_ALLOWED',
  POSITION_CLOSEOUT_FAILED: 'NO_NEW_POSITION_ALLOWED',
  INSUFFICIENT_LIQUIDITY: 'INSUFFICIENT_LIQUIDITY',
  FIFO_VIOLATION: 'UNITS_VIOLATION',
  OPEN_TRADES_ALLOWED_EXCEEDED: 'UNITS_VIOLATION',
  PENDING_ORDERS_ALLOWED_EXCEEDED: 'UNITS_VIOLATION',
};

/** The legacy type of an ORDER_FILL by its v20 reason. */
const FILL_TYPES: Readonly<Record<string, string>> = {
  MARKET_ORDER: 'MARKET_ORDER_CREATE',
  MARKET_ORDER_TRADE_CLOSE: 'TRADE_CLOSE',
  MARKET_ORDER_POSITION_CLOSEOUT: 'TRADE_CLOSE',
  MARKET_ORDER_MARGIN_CLOSEOUT: 'MARGIN_CLOSEOUT',
  MARKET_ORDER_DELAYED_TRADE_CLOSE: 'TRADE_CLOSE',
  LIMIT_ORDER: 'ORDER_FILLED',
  STOP_ORDER: 'ORDER_FILLED',
  MARKET_IF_TOUCHED_ORDER: 'ORDER_FILLED',
  TAKE_PROFIT_ORDER: 'TAKE_PROFIT_FILLED',
  STOP_LOSS_ORDER: 'STOP_LOSS_FILLED',
  GUARANTEED_STOP_LOSS_ORDER: 'STOP_LOSS_FILLED',
  TRAILING_STOP_LOSS_ORDER: 'TRAILING_STOP_FILLED',
};

/** The v20 transaction types that each legacy type comes from (the docs' table, and the tests). */
export const LEGACY_TX_SOURCES: Readonly<Record<string, readonly string[]>> = {
  MARKET_ORDER_CREATE: ['ORDER_FILL'],
  TRADE_CLOSE: ['ORDER_FILL'],
  MARGIN_CLOSEOUT: ['ORDER_FILL'],
  ORDER_FILLED: ['ORDER_FILL'],
  TAKE_PROFIT_FILLED: ['ORDER_FILL'],
  STOP_LOSS_FILLED: ['ORDER_FILL'],
  TRAILING_STOP_FILLED: ['ORDER_FILL'],
  LIMIT_ORDER_CREATE: ['LIMIT_ORDER'],
  STOP_ORDER_CREATE: ['STOP_ORDER'],
  MARKET_IF_TOUCHED_ORDER_CREATE: ['MARKET_IF_TOUCHED_ORDER'],
  ORDER_UPDATE: ['LIMIT_ORDER', 'STOP_ORDER', 'MARKET_IF_TOUCHED_ORDER'],
  TRADE_UPDATE: [
    'TAKE_PROFIT_ORDER',
    'STOP_LOSS_ORDER',
    'TRAILING_STOP_LOSS_ORDER',
    'GUARANTEED_STOP_LOSS_ORDER',
    'ORDER_CANCEL',
  ],
  ORDER_CANCEL: ['ORDER_CANCEL'],
  DAILY_INTEREST: ['DAILY_FINANCING'],
  TRANSFER_FUNDS: ['TRANSFER_FUNDS'],
  SET_MARGIN_RATE: ['CLIENT_CONFIGURE'],
  MARGIN_CALL_ENTER: ['MARGIN_CALL_ENTER'],
  MARGIN_CALL_EXIT: ['MARGIN_CALL_EXIT'],
};

const DEPENDENT = /^(TAKE_PROFIT|STOP_LOSS|TRAILING_STOP_LOSS|GUARANTEED_STOP_LOSS)(_ORDER)?$/;

/** What the transaction mapping needs from the account besides the transaction. */
export interface LegacyTxContext {
  readonly account: SandboxAccount;
  readonly instruments: InstrumentRegistry;
  readonly ids: LegacyOrderIDs;
}

/** The order (any state) a transaction names, from the log or the account's order views. */
function orderOf(c: LegacyTxContext, id: string | undefined): Obj | undefined {
  if (id === undefined) return undefined;
  return (c.account.transactions.get(Number(id)) as unknown as Obj | undefined) ?? c.account.findOrder(id);
}

const sideOf = (units: number): string => (units < 0 ? 'sell' : 'buy');

/** The on-fill details of an order create as legacy take-profit / stop-loss / trailing fields. */
function onFillFields(c: LegacyTxContext, o: Obj, out: Obj): void {
  const tp = o.takeProfitOnFill as Obj | undefined;
  const sl = (o.stopLossOnFill ?? o.guaranteedStopLossOnFill) as Obj | undefined;
  const ts = o.trailingStopLossOnFill as Obj | undefined;
  if (tp) out.takeProfitPrice = num(tp.price);
  if (sl) out.stopLossPrice = num(sl.price);
  if (ts) out.trailingStopLossDistance = pips(c.instruments, o.instrument as string, ts.distance);
  const bound = o.priceBound;
  if (bound !== undefined) {
    if (Number(o.units) > 0) out.upperBound = num(bound);
    else out.lowerBound = num(bound);
  }
}

/**
 * The legacy transaction that stands for a v20 transaction, with the same ID, or undefined when
 * the legacy generation has no counterpart (the order half of a market order, on-fill dependent
 * orders, rejects, the account's CREATE, a replaced order's cancel, client extensions).
 */
export function legacyTransaction(c: LegacyTxContext, tx: Transaction): Obj | undefined {
  const t = tx as unknown as Obj & { id: string; type: string; time: string };
  const base: Obj = { id: Number(t.id), accountId: legacyAccountID(c.account.id), time: t.time, type: '' };
  switch (t.type) {
    case 'ORDER_FILL': {
      const type = FILL_TYPES[t.reason as string] ?? 'ORDER_FILLED';
      const units = Number(t.units);
      base.type = type;
      base.instrument = t.instrument;
      base.side = sideOf(units);
      base.units = Math.abs(units);
      base.price = num(t.price);
      base.pl = num(t.pl);
      base.interest = num(t.financing);
      base.accountBalance = num(t.accountBalance);
      const opened = t.tradeOpened as Obj | undefined;
      const closed = (t.tradesClosed as Obj[] | undefined) ?? [];
      const reduced = (t.tradeReduced as Obj | undefined) ?? closed[0];
      const trade = closed[0] ?? reduced;
      if (type === 'ORDER_FILLED') base.orderId = Number(c.ids.legacyID(t.orderID as string));
      if (type !== 'MARKET_ORDER_CREATE' && type !== 'ORDER_FILLED' && trade)
        base.tradeId = Number(trade.tradeID);
      if (type === 'MARKET_ORDER_CREATE' || type === 'ORDER_FILLED') {
        const o = orderOf(c, t.orderID as string);
        if (o) onFillFields(c, o, base);
      }
      if (opened) base.tradeOpened = { id: Number(opened.tradeID), units: Math.abs(Number(opened.units)) };
      if (reduced)
        base.tradeReduced = {
          id: Number(reduced.tradeID),
          units: Math.abs(Number(reduced.units)),
          pl: num(reduced.realizedPL),
          interest: num(reduced.financing),
        };
      return base;
    }
    case 'LIMIT_ORDER':
    case 'STOP_ORDER':
    case 'MARKET_IF_TOUCHED_ORDER': {
      const units = Number(t.units);
      base.instrument = t.instrument;
      base.units = Math.abs(units);
      base.price = num(t.price);
      if (t.reason === 'REPLACEMENT') {
        base.type = 'ORDER_UPDATE';
        base.orderId = Number(c.ids.legacyID(t.id));
        base.reason = 'REPLACES_ORDER';
      } else {
        base.type = `${t.type}_CREATE`;
        base.side = sideOf(units);
        base.reason = 'CLIENT_REQUEST';
      }
      // The examples give expiry as UNIX seconds; a GTC order (placed through /v3) has none: 0.
      base.expiry = t.gtdTime !== undefined ? Math.floor(parseTime(t.gtdTime as string) / 1000) : 0;
      onFillFields(c, t, base);
      return base;
    }
    case 'TAKE_PROFIT_ORDER':
    case 'STOP_LOSS_ORDER':
    case 'GUARANTEED_STOP_LOSS_ORDER':
    case 'TRAILING_STOP_LOSS_ORDER': {
      // On-fill dependents belong to the order that opened the trade (its legacy transaction has them).
      if (t.reason === 'ON_FILL') return undefined;
      return tradeUpdate(
        c,
        base,
        t.tradeID as string,
        t.type,
        t.type === 'TRAILING_STOP_LOSS_ORDER' ? t.distance : t.price,
      );
    }
    case 'ORDER_CANCEL': {
      const reason = t.reason as string;
      if (reason === 'CLIENT_REQUEST_REPLACED' || reason === 'LINKED_TRADE_CLOSED') return undefined;
      const o = orderOf(c, t.orderID as string);
      const otype = (o?.type as string | undefined) ?? '';
      if (DEPENDENT.test(otype)) {
        // A take-profit / stop-loss / trailing stop removed from its trade: a TRADE_UPDATE with 0.
        if (reason !== 'CLIENT_REQUEST' || o?.tradeID === undefined) return undefined;
        return tradeUpdate(
          c,
          base,
          o.tradeID as string,
          otype.endsWith('_ORDER') ? otype : `${otype}_ORDER`,
          0,
        );
      }
      base.type = 'ORDER_CANCEL';
      base.orderId = Number(c.ids.legacyID(t.orderID as string));
      base.reason = CANCEL_REASONS[reason] ?? reason;
      return base;
    }
    case 'DAILY_FINANCING': {
      base.type = 'DAILY_INTEREST';
      const first = ((t.positionFinancings as Obj[] | undefined) ?? [])[0];
      if (first) base.instrument = first.instrument;
      base.interest = num(t.financing);
      base.accountBalance = num(t.accountBalance);
      return base;
    }
    case 'TRANSFER_FUNDS':
      base.type = 'TRANSFER_FUNDS';
      base.amount = num(t.amount);
      base.accountBalance = num(t.accountBalance);
      base.reason = 'CLIENT_REQUEST';
      return base;
    case 'CLIENT_CONFIGURE':
      if (t.marginRate === undefined) return undefined;
      base.type = 'SET_MARGIN_RATE';
      base.marginRate = num(t.marginRate);
      // The specification's example names the value `rate`: both are given.
      base.rate = num(t.marginRate);
      return base;
    case 'MARGIN_CALL_ENTER':
    case 'MARGIN_CALL_EXIT':
      base.type = t.type;
      return base;
    default:
      return undefined;
  }
}

/** A TRADE_UPDATE for a dependent order set (value) or removed (0) on a trade. */
function tradeUpdate(c: LegacyTxContext, base: Obj, tradeID: string, orderType: string, value: unknown): Obj {
  const trade = c.account.tradeBySpec(tradeID);
  // A trade closed since has currentUnits 0: its units are the ones it was opened with.
  const current = Number(trade?.currentUnits ?? 0);
  const units = current !== 0 ? current : Number(trade?.initialUnits ?? 0);
  const instrument = trade?.instrument as string | undefined;
  base.type = 'TRADE_UPDATE';
  if (instrument !== undefined) base.instrument = instrument;
  base.units = Math.abs(units);
  // The specification: an empty side occurs on TRADE_UPDATE. The sandbox gives the trade's side when it knows it.
  base.side = trade ? sideOf(units) : '';
  base.tradeId = Number(tradeID);
  if (orderType === 'TAKE_PROFIT_ORDER') base.takeProfitPrice = num(value);
  else if (orderType === 'TRAILING_STOP_LOSS_ORDER')
    base.trailingStopLossDistance =
      instrument !== undefined && value !== 0 ? pips(c.instruments, instrument, value) : 0;
  else base.stopLossPrice = num(value);
  return base;
}
