import { add, amount, formatAmount, type Amount } from './money.ts';
import { parseTime, type UnixMs } from './time.ts';
import type { FillNumbers } from './transaction-note.ts';
import type {
  ClientExtensions,
  DailyFinancingTransaction,
  OrderCancelTransaction,
  OrderFillTransaction,
  Transaction,
  TradeReduce,
} from './v20/index.ts';

/**
 * An open trade as the ledger keeps it: exact decimals for money, numbers for the hot path.
 * `units` is signed (negative = short) and is the trade's current size.
 */
export interface LedgerTrade {
  readonly id: string;
  readonly instrument: string;
  readonly price: string;
  readonly priceNum: number;
  readonly openTime: string;
  readonly openMs: UnixMs;
  readonly initialUnits: string;
  /** Signed current units. */
  unitsNum: number;
  /** Account amounts in 1/10,000 units (see money.ts). */
  realizedPL: Amount;
  financing: Amount;
  /** Half-spread cost of the fills that opened and reduced it (the v20 fields of those fills). */
  halfSpreadCost: Amount;
  /** Its share of the commission of the fills that opened and reduced it (by units). */
  commission: Amount;
  takeProfitOrderID?: string;
  stopLossOrderID?: string;
  trailingStopLossOrderID?: string;
  guaranteedStopLossOrderID?: string;
  clientExtensions?: ClientExtensions;
}

/**
 * Links dependent order `id` of order type `type` to its trade's slot (takeProfitOrderID, ...), or
 * clears the slot when `id` is undefined and the slot holds `current`. A switch with named
 * properties: a computed key (`trade[slot]`) costs a generic keyed access on every order.
 */
function setSlot(
  trade: LedgerTrade,
  type: string,
  id: string | undefined,
  current: string | undefined,
): void {
  switch (type) {
    case 'TAKE_PROFIT':
      if (id !== undefined || trade.takeProfitOrderID === current) trade.takeProfitOrderID = id;
      return;
    case 'STOP_LOSS':
      if (id !== undefined || trade.stopLossOrderID === current) trade.stopLossOrderID = id;
      return;
    case 'TRAILING_STOP_LOSS':
      if (id !== undefined || trade.trailingStopLossOrderID === current) trade.trailingStopLossOrderID = id;
      return;
    case 'GUARANTEED_STOP_LOSS':
      if (id !== undefined || trade.guaranteedStopLossOrderID === current)
        trade.guaranteedStopLossOrderID = id;
      return;
    default:
      return;
  }
}

/**
 * A pending order: the transaction that created it, and its order type. A simulator's ledger files
 * the simulator's working orders here (`apply(tx, order)`): objects with these fields and its own.
 */
export interface LedgerOrder {
  readonly id: string;
  /** v20 OrderType: MARKET, LIMIT, STOP, MARKET_IF_TOUCHED, TAKE_PROFIT, ... */
  readonly type: string;
  readonly created: Transaction;
  readonly instrument?: string;
  readonly tradeID?: string;
  clientExtensions?: ClientExtensions;
}

/** Thrown when a transaction contradicts the ledger (a broken invariant, never user input). */
export class LedgerError extends Error {
  readonly code = 'LEDGER' as const;
  constructor(
    message: string,
    readonly transactionID: string,
  ) {
    super(`transaction ${transactionID}: ${message}`);
    this.name = 'LedgerError';
  }
}

export interface LedgerOptions {
  readonly currency: string;
  /**
   * Strict (the simulator and backtests): a transaction whose `accountBalance` differs from the
   * balance the ledger computed throws. Lenient (live): the broker's figure is adopted and the
   * difference is recorded in `discrepancies`.
   */
  readonly strict?: boolean;
}

/** Order-creating transaction types and the order type each creates. */
export const ORDER_CREATE_TYPES: Readonly<Record<string, string>> = {
  MARKET_ORDER: 'MARKET',
  FIXED_PRICE_ORDER: 'FIXED_PRICE',
  LIMIT_ORDER: 'LIMIT',
  STOP_ORDER: 'STOP',
  MARKET_IF_TOUCHED_ORDER: 'MARKET_IF_TOUCHED',
  TAKE_PROFIT_ORDER: 'TAKE_PROFIT',
  STOP_LOSS_ORDER: 'STOP_LOSS',
  TRAILING_STOP_LOSS_ORDER: 'TRAILING_STOP_LOSS',
  GUARANTEED_STOP_LOSS_ORDER: 'GUARANTEED_STOP_LOSS',
};

/**
 * The account as a fold over v20 transactions: one piece of code in every mode. The simulated broker
 * folds the transactions it emits; the engine's portfolio folds the ones it receives (from the
 * simulator or from OANDA's transaction stream).
 *
 * Invariant: `balance` equals the sum of the amounts of every transaction applied (transfers, P/L,
 * financing, commission, fees), exactly. Applying a transaction whose ID is not above
 * `lastTransactionID` is a no-op, so replays and stream backfills are safe.
 */
export class Ledger {
  readonly currency: string;
  readonly strict: boolean;
  /** Account amounts in exact 1/10,000 units (see money.ts). */
  balance: Amount = 0;
  pl: Amount = 0;
  financing: Amount = 0;
  commission: Amount = 0;
  guaranteedExecutionFees: Amount = 0;
  halfSpreadCost: Amount = 0;
  lastTransactionID = '0';
  #lastID = 0;
  marginCall = false;
  /** Open trades in the order they were opened (oldest first: v20's reduction order). */
  readonly trades = new Map<string, LedgerTrade>();
  readonly pendingOrders = new Map<string, LedgerOrder>();
  /** Realized P/L per instrument. */
  readonly instrumentPL = new Map<string, Amount>();
  readonly discrepancies: { transactionID: string; expected: string; reported: string }[] = [];
  /** How many transactions were applied (duplicates excluded). */
  applied = 0;
  /** Bumped on every change of the set of trades or their sizes: lets callers cache derived views. */
  version = 0;
  /**
   * The trades the last ORDER_FILL closed (removed from `trades`), with their final realized P/L and
   * financing: what a caller that folds after the ledger needs to report them. Reused per fill.
   */
  readonly closed: LedgerTrade[] = [];

  constructor(opts: LedgerOptions) {
    this.currency = opts.currency;
    this.strict = opts.strict ?? true;
  }

  /**
   * Applies one transaction. Returns false (and changes nothing) for an ID already applied.
   *
   * `order`: for an order-creating transaction, the pending order to file for it, built by the
   * caller (the simulator's working order, which carries the same `id`, `type`, `created`,
   * `instrument`, `tradeID` and `clientExtensions` the ledger would give its own): the caller's
   * order and the ledger's are then one object in one index. Ignored for other transactions.
   */
  apply(tx: Transaction, order?: LedgerOrder): boolean {
    const idNum = Number(tx.id);
    if (!(idNum > this.#lastID)) return false;
    this.#lastID = idNum;
    this.lastTransactionID = tx.id;
    this.applied++;
    switch (tx.type) {
      // The commonest types first (a switch on strings compares in order).
      case 'ORDER_CANCEL':
        this.#cancel(tx);
        return true;
      case 'ORDER_FILL':
        this.#fill(tx);
        return true;
      case 'MARKET_ORDER':
        this.#createOrder(tx, 'MARKET', order);
        return true;
      case 'TAKE_PROFIT_ORDER':
        this.#createOrder(tx, 'TAKE_PROFIT', order);
        return true;
      case 'STOP_LOSS_ORDER':
        this.#createOrder(tx, 'STOP_LOSS', order);
        return true;
      case 'TRAILING_STOP_LOSS_ORDER':
        this.#createOrder(tx, 'TRAILING_STOP_LOSS', order);
        return true;
    }
    const orderType = ORDER_CREATE_TYPES[tx.type];
    if (orderType !== undefined) {
      this.#createOrder(tx, orderType, order);
      return true;
    }
    switch (tx.type) {
      case 'TRANSFER_FUNDS': {
        this.balance = add(this.balance, amount(tx.amount));
        this.#checkBalance(tx.id, tx.accountBalance);
        break;
      }
      case 'DAILY_FINANCING':
        this.#financing(tx);
        break;
      case 'ORDER_CLIENT_EXTENSIONS_MODIFY': {
        const o = this.pendingOrders.get(tx.orderID);
        if (o && tx.clientExtensionsModify) o.clientExtensions = tx.clientExtensionsModify;
        const t = tx.tradeClientExtensionsModify;
        if (o && t) {
          const created = o.created as { tradeClientExtensions?: ClientExtensions };
          created.tradeClientExtensions = t;
        }
        break;
      }
      case 'TRADE_CLIENT_EXTENSIONS_MODIFY': {
        const trade = this.trades.get(tx.tradeID);
        if (trade && tx.tradeClientExtensionsModify) trade.clientExtensions = tx.tradeClientExtensionsModify;
        break;
      }
      case 'MARGIN_CALL_ENTER':
      case 'MARGIN_CALL_EXTEND':
        this.marginCall = true;
        break;
      case 'MARGIN_CALL_EXIT':
        this.marginCall = false;
        break;
      case 'CREATE': {
        break;
      }
      case 'RESET_RESETTABLE_PL':
        break;
      default:
        // Rejects, client configuration, heartbeats and other types carry no money and no state
        // that the ledger keeps.
        break;
    }
    return true;
  }

  /** Open trades of one instrument, oldest first. */
  tradesOf(instrument: string): LedgerTrade[] {
    const out: LedgerTrade[] = [];
    for (const t of this.trades.values()) if (t.instrument === instrument) out.push(t);
    return out;
  }

  /** Signed long and short units of an instrument (short <= 0). */
  position(instrument: string): { long: number; short: number } {
    let long = 0;
    let short = 0;
    for (const t of this.trades.values()) {
      if (t.instrument !== instrument) continue;
      if (t.unitsNum > 0) long += t.unitsNum;
      else short += t.unitsNum;
    }
    return { long, short };
  }

  #createOrder(tx: Transaction, type: string, given: LedgerOrder | undefined): void {
    const t = tx as Transaction & {
      instrument?: string;
      tradeID?: string;
      clientExtensions?: ClientExtensions;
    };
    // Every field present (undefined when the transaction has none): one object shape for all
    // orders, which keeps the fold's property reads monomorphic.
    const order: LedgerOrder = given ?? {
      id: tx.id,
      type,
      created: tx,
      instrument: t.instrument,
      tradeID: t.tradeID,
      clientExtensions: t.clientExtensions,
    };
    this.pendingOrders.set(tx.id, order);
    if (t.tradeID !== undefined) {
      const trade = this.trades.get(t.tradeID);
      if (trade) setSlot(trade, type, tx.id, undefined);
    }
  }

  #unlinkOrder(orderID: string): void {
    const o = this.pendingOrders.get(orderID);
    if (!o) return;
    this.pendingOrders.delete(orderID);
    if (o.tradeID !== undefined) {
      const trade = this.trades.get(o.tradeID);
      // Cleared, not deleted: `delete` would turn the trade into a slow dictionary-mode object.
      if (trade) setSlot(trade, o.type, undefined, orderID);
    }
  }

  #cancel(tx: OrderCancelTransaction): void {
    this.#unlinkOrder(tx.orderID);
  }

  #fill(tx: OrderFillTransaction): void {
    this.#unlinkOrder(tx.orderID);
    // Emptied by pop, not `length = 0` (which frees the array's storage, allocated again at the next push).
    while (this.closed.length > 0) this.closed.pop();
    // A fill's commission is shared among the trades it opened and reduced, by units (whole 1/10,000s).
    const commission = tx.commission !== undefined ? amount(tx.commission) : 0;
    this.#fillCommission = commission;
    this.#fillUnits = commission === 0 ? 0 : Math.abs(Number(tx.units));
    const closed = tx.tradesClosed;
    if (closed !== undefined)
      for (let i = 0; i < closed.length; i++) this.#reduceParsed(tx.id, closed[i]!, true);
    if (tx.tradeReduced) this.#reduceParsed(tx.id, tx.tradeReduced, false);
    if (tx.tradeOpened) {
      const o = tx.tradeOpened;
      const price = o.price ?? tx.price ?? tx.fullVWAP;
      if (price === undefined) throw new LedgerError('ORDER_FILL opens a trade but carries no price', tx.id);
      const unitsNum = Number(o.units);
      this.#open(
        o.tradeID,
        tx.instrument,
        price,
        Number(price),
        tx.time,
        o.units,
        unitsNum,
        o.halfSpreadCost !== undefined ? amount(o.halfSpreadCost) : 0,
        o.clientExtensions,
      );
    }
    const spread = tx.halfSpreadCost;
    this.#fillTotals(
      tx.instrument,
      tx.pl !== undefined ? amount(tx.pl) : 0,
      tx.financing !== undefined ? amount(tx.financing) : 0,
      commission,
      tx.guaranteedExecutionFee !== undefined ? amount(tx.guaranteedExecutionFee) : 0,
      spread !== undefined ? amount(spread) : 0,
    );
    this.#checkBalance(tx.id, tx.accountBalance);
  }

  /**
   * Applies an ORDER_FILL given as numbers (the simulator's fill path, which has every figure at
   * hand): the same fold as `apply` of its transaction, without building or parsing one. Its
   * balance is the one the fold computes (the simulator writes that figure into the transaction).
   * Returns false (and changes nothing) for an ID already applied.
   */
  applyFill(f: FillNumbers): boolean {
    const idNum = f.idNum;
    if (!(idNum > this.#lastID)) return false;
    this.#lastID = idNum;
    this.lastTransactionID = f.id;
    this.applied++;
    this.#unlinkOrder(f.orderID);
    while (this.closed.length > 0) this.closed.pop();
    this.#fillCommission = f.commission;
    this.#fillUnits = f.commission === 0 ? 0 : f.filledUnits;
    const n = f.parts;
    for (let i = 0; i < n; i++)
      this.#reduce(
        f.id,
        f.partTradeID[i]!,
        f.partUnits[i]!,
        f.partPL[i]!,
        0,
        f.partSpread[i]!,
        f.partFull[i]!,
      );
    if (f.openUnits !== 0)
      this.#open(
        f.openTradeID,
        f.instrument,
        f.openPrice,
        f.openPriceNum,
        f.time,
        String(f.openUnits),
        f.openUnits,
        f.openSpread,
        f.openClientExtensions,
      );
    this.#fillTotals(f.instrument, f.pl, 0, f.commission, f.guaranteedExecutionFee, f.halfSpreadCost);
    return true;
  }

  /**
   * Applies an order-creating transaction given by its ID (`id`, its number `idNum`) and the
   * pending order it creates (`order`: its `type` is the order type, its `created` the
   * transaction, which the ledger does not read): the fold of `apply(tx, order)`, for a caller that
   * has not built the transaction. False for an ID already applied.
   */
  applyOrder(id: string, idNum: number, order: LedgerOrder): boolean {
    if (!(idNum > this.#lastID)) return false;
    this.#lastID = idNum;
    this.lastTransactionID = id;
    this.applied++;
    this.pendingOrders.set(id, order);
    const tradeID = order.tradeID;
    if (tradeID !== undefined) {
      const trade = this.trades.get(tradeID);
      if (trade) setSlot(trade, order.type, id, undefined);
    }
    return true;
  }

  /**
   * Applies an ORDER_CANCEL of order `orderID` given by its ID (`id`, its number `idNum`): the
   * fold of `apply` of the transaction, for a caller that has not built it. False for an ID
   * already applied.
   */
  applyCancel(id: string, idNum: number, orderID: string): boolean {
    if (!(idNum > this.#lastID)) return false;
    this.#lastID = idNum;
    this.lastTransactionID = id;
    this.applied++;
    this.#unlinkOrder(orderID);
    return true;
  }

  #open(
    id: string,
    instrument: string,
    price: string,
    priceNum: number,
    time: string,
    initialUnits: string,
    unitsNum: number,
    spread: Amount,
    clientExtensions: ClientExtensions | undefined,
  ): void {
    const trade: LedgerTrade = {
      id,
      instrument,
      price,
      priceNum,
      openTime: time,
      // parseTime caches the last text: a batch's fill is parsed once for both ledgers and the portfolio.
      openMs: parseTime(time),
      initialUnits,
      unitsNum,
      realizedPL: 0,
      financing: 0,
      halfSpreadCost: spread,
      commission: this.#commissionShare(unitsNum),
      // The dependent-order slots exist from the start (filled in as orders are created): the
      // trade keeps one shape instead of growing a property per order.
      takeProfitOrderID: undefined,
      stopLossOrderID: undefined,
      trailingStopLossOrderID: undefined,
      guaranteedStopLossOrderID: undefined,
      clientExtensions: clientExtensions || undefined,
    };
    this.trades.set(id, trade);
  }

  /** A fill's account totals: its P/L (also per instrument), financing, commission, fees and half-spread cost, and the balance. */
  #fillTotals(
    instrument: string,
    pl: Amount,
    financing: Amount,
    commission: Amount,
    fee: Amount,
    spread: Amount,
  ): void {
    if (pl !== 0) {
      this.pl = add(this.pl, pl);
      this.instrumentPL.set(instrument, add(this.instrumentPL.get(instrument) ?? 0, pl));
    }
    if (financing !== 0) this.financing = add(this.financing, financing);
    if (commission !== 0) this.commission = add(this.commission, commission);
    if (fee !== 0) this.guaranteedExecutionFees = add(this.guaranteedExecutionFees, fee);
    if (spread !== 0) this.halfSpreadCost = add(this.halfSpreadCost, spread);
    this.balance = add(this.balance, pl + financing - commission - fee);
    this.version++;
  }

  #reduceParsed(txID: string, r: TradeReduce, full: boolean): void {
    this.#reduce(
      txID,
      r.tradeID,
      Number(r.units),
      r.realizedPL !== undefined ? amount(r.realizedPL) : 0,
      r.financing !== undefined ? amount(r.financing) : 0,
      r.halfSpreadCost !== undefined ? amount(r.halfSpreadCost) : 0,
      full,
    );
  }

  /** Reduces trade `tradeID` by `units` (signed against it), with that part's realized P/L, financing and half-spread cost; `full`: it closes. */
  #reduce(
    txID: string,
    tradeID: string,
    units: number,
    realized: Amount,
    financing: Amount,
    spread: Amount,
    full: boolean,
  ): void {
    const trade = this.trades.get(tradeID);
    if (!trade) {
      if (this.strict) throw new LedgerError(`reduces unknown trade ${tradeID}`, txID);
      return;
    }
    // Units are signed against the trade: closing a long of 100 is -100. Rounded to 1e-6 so that
    // fractional CFD units never accumulate binary noise.
    trade.unitsNum = Math.round((trade.unitsNum + units) * 1e6) / 1e6;
    if (realized !== 0) trade.realizedPL = add(trade.realizedPL, realized);
    if (financing !== 0) trade.financing = add(trade.financing, financing);
    if (spread !== 0) trade.halfSpreadCost = add(trade.halfSpreadCost, spread);
    if (this.#fillCommission !== 0) trade.commission = add(trade.commission, this.#commissionShare(units));
    if (full || trade.unitsNum === 0) {
      if (this.strict && trade.unitsNum !== 0) {
        throw new LedgerError(
          `closes trade ${tradeID} with ${units} units but ${trade.unitsNum} remain`,
          txID,
        );
      }
      this.trades.delete(tradeID);
      this.closed.push(trade);
    }
  }

  #fillCommission: Amount = 0;
  #fillUnits = 0;

  /** The share of the current fill's commission that `units` of it carry. */
  #commissionShare(units: number): Amount {
    if (this.#fillCommission === 0 || !(this.#fillUnits > 0)) return 0;
    return Math.round((this.#fillCommission * Math.abs(units)) / this.#fillUnits);
  }

  #financing(tx: DailyFinancingTransaction): void {
    const x = amount(tx.financing);
    this.financing = add(this.financing, x);
    this.balance = add(this.balance, x);
    for (const pf of tx.positionFinancings ?? []) {
      for (const tf of pf.openTradeFinancings ?? []) {
        const trade = this.trades.get(tf.tradeID);
        if (trade) trade.financing = add(trade.financing, amount(tf.financing));
      }
    }
    this.#checkBalance(tx.id, tx.accountBalance);
  }

  #checkBalance(id: string, reported: string | undefined): void {
    if (reported === undefined) return;
    const r = amount(reported);
    if (r === this.balance) return;
    const expected = formatAmount(this.balance);
    if (this.strict)
      throw new LedgerError(`accountBalance ${reported} but the ledger computes ${expected}`, id);
    this.discrepancies.push({ transactionID: id, expected, reported });
    this.balance = r;
  }
}
