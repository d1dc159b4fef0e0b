import type { Amount } from './money.ts';
import type { ClientExtensions, Transaction } from './v20/index.ts';
import type { UnixMs } from './time.ts';

/**
 * One transaction as an in-process producer (the simulator) delivers it: the few fields its
 * commonest readers need (the engine's portfolio, the order counters), and the v20 object itself
 * only on request. A simulator that holds a fill as numbers builds its ORDER_FILL object, with its
 * two dozen strings, the first time `transaction()` is called, and hands every later caller of the
 * same delivery that one object; a run in which nobody calls it (a sweep's trial, a backtest that
 * writes no run folder) builds none.
 *
 * A note is the producer's to reuse: it is valid only while it is being delivered (the listener's
 * call). A reader that keeps the transaction keeps `transaction()`'s object, never the note.
 */
export interface TransactionNote {
  /** The v20 transaction type (ORDER_FILL, ORDER_CANCEL, MARKET_ORDER, ...). */
  readonly type: string;
  /** Its ID, as v20 writes it, and as a number. */
  readonly id: string;
  readonly idNum: number;
  /** Its time. */
  readonly at: UnixMs;
  /** ORDER_FILL, ORDER_CANCEL: the order filled or cancelled. */
  readonly orderID: string | undefined;
  /** ORDER_FILL: its OrderFillReason; ORDER_CANCEL: its cancel reason; others: their `reason`, if any. */
  readonly reason: string | undefined;
  /**
   * The transaction's own `clientExtensions.id` (an order create's or a reject's client order ID;
   * undefined for fills and cancels, which name it as `clientOrderID`).
   */
  readonly clientExtensionsID: string | undefined;
  /** A reject's `rejectReason`. */
  readonly rejectReason: string | undefined;
  /** ORDER_FILL: the price every part of it filled at (the trades it closed closed at it); NaN otherwise. */
  readonly price: number;
  /** The v20 transaction: built at the first call of a delivery, the same object after. */
  transaction(): Transaction;
}

/**
 * An ORDER_FILL as numbers: what a ledger folds (`Ledger.applyFill`) without reading a transaction
 * back. Amounts are exact (1/10,000 units, money.ts); units are signed numbers. The parts it closes
 * or reduces are in the order v20 lists them (the trades closed in full, then the one reduced).
 */
export interface FillNumbers {
  readonly id: string;
  readonly idNum: number;
  readonly orderID: string;
  readonly instrument: string;
  /** Its time, in v20's form (the opened trade's openTime). */
  readonly time: string;
  readonly at: UnixMs;
  /** Units filled, unsigned (the commission is shared among the trades by them). */
  readonly filledUnits: number;
  readonly pl: Amount;
  readonly commission: Amount;
  readonly guaranteedExecutionFee: Amount;
  readonly halfSpreadCost: Amount;
  /** How many trades it closes or reduces; part `i`'s trade, units (signed against the trade: closing a long of 100 is -100), realized P/L, half-spread cost, and whether it closes the trade in full. */
  readonly parts: number;
  readonly partTradeID: readonly string[];
  readonly partUnits: readonly number[];
  readonly partPL: readonly Amount[];
  readonly partSpread: readonly Amount[];
  readonly partFull: readonly boolean[];
  /** The trade it opens: signed units (0: none), its ID, price (text and number), half-spread cost, client extensions. */
  readonly openUnits: number;
  readonly openTradeID: string;
  readonly openPrice: string;
  readonly openPriceNum: number;
  readonly openSpread: Amount;
  readonly openClientExtensions: ClientExtensions | undefined;
}
