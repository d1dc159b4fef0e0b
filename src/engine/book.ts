import { add, amount, convertProduct, formatAmount, type Amount } from '../domain/money.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { ORDER_CREATE_TYPES, type LedgerTrade } from '../domain/ledger.ts';
import type {
  ClientExtensions,
  DailyFinancingTransaction,
  OpenTradeFinancing,
  OrderFillTransaction,
  PositionFinancing,
  TradeOpen,
  TradeReduce,
  Transaction,
} from '../domain/v20/index.ts';
import { Portfolio } from './portfolio.ts';

/**
 * The books of a portfolio: one per strategy, each a Portfolio of its own (its own ledger, marks,
 * closed trades and equity curve) folded from the account's transactions. A pure fold of the
 * tagged transactions (what `route` is given, in order): a backtest feeds it the simulator's, a live
 * runner could feed it the account's stream or a journal's replay and get the same books.
 *
 * Who owns what (docs/portfolios.md, "The books"):
 * - an order: the strategy its client extensions' `tag` names; else the owner of the trade it is on
 *   (a take profit, stop loss, trailing stop, a trade close); else the strategy whose name prefixes
 *   its client ID (`<name>-<n>`); else nobody (the account's own: a margin closeout, a kill switch);
 * - an account trade: the owner of the order whose fill opened it;
 * - a fill: the owner of its order. Its units and price go to that book whole, and the book applies
 *   them to its own trades: first the trades the fill closed at the account that the book holds,
 *   then (on a netting or FIFO account, or when the account's fill reduced something) its own
 *   opposite trades oldest first, then it opens what is left as a trade whose ID is the fill's.
 *   The book's realized P/L is that of its own trades at the fill's price and conversion factors,
 *   rounded as the simulator rounds. When the account's fill did to the book's trades exactly what
 *   it did at the account (always, on a hedging account and on a simulated account that nets each
 *   strategy apart), the book gets the account's fill as it is: the same figures to the unit.
 * - a fill of nobody's order: if it leaves the account without a trade in its instrument, it
 *   flattens every book in that instrument at its price; otherwise its units close the books'
 *   opposite trades book by book, in the order the books were given.
 * - financing: each open trade's financing goes to the book that owns the account trade (to that
 *   trade when the book holds it); a rounding residual of the day's total goes to the first book
 *   paid that day.
 * - deposits and withdrawals: every book gets each in full (each strategy's returns are on the
 *   account's capital, as its solo backtest's). The P/L, costs and financing of the books add up to
 *   the account's; the balances add up to the account's plus (books − 1) × the deposits.
 *
 * So every unit filled at the account is in exactly one book: per instrument the books' net units
 * add up to the account's, and their realized plus unrealized P/L to the account's (exactly when the
 * conversion factors do not move between fills; the property tests check it on netting, hedging
 * and FIFO accounts).
 */
export class Books {
  readonly names: readonly string[];
  readonly #books = new Map<string, Book>();
  readonly #orderOwner = new Map<string, string>();
  readonly #tradeOwner = new Map<string, string>();
  readonly #byPrefix: readonly string[];
  /** Open account trades per instrument, counted from the fills (whether a fill left it flat). */
  readonly #open = new Map<string, number>();

  constructor(
    names: readonly string[],
    readonly opts: {
      readonly currency: string;
      readonly instruments: InstrumentRegistry;
      readonly initialBalance: string;
      readonly hedging: boolean;
      readonly keepClosedTrades?: boolean;
      /**
       * Each book's balance starts at `initialBalance` (a live account's books: the deposit is in the
       * account they start from, not in a transaction they fold); else the books get the deposits' transactions.
       */
      readonly funded?: boolean;
    },
  ) {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n))
        throw new Error(`two strategies of the portfolio are named '${n}': give each its own name`);
      seen.add(n);
      const portfolio = new Portfolio({
        currency: opts.currency,
        instruments: opts.instruments,
        initialBalance: opts.initialBalance,
        strict: false,
        keepClosedTrades: opts.keepClosedTrades !== false,
      });
      if (opts.funded === true) portfolio.ledger.balance = amount(opts.initialBalance);
      this.#books.set(n, new Book(n, portfolio));
    }
    this.names = [...names];
    // Longest first: 'a-b-3' is 'a-b''s before it is 'a''s.
    this.#byPrefix = [...names].sort((a, b) => b.length - a.length);
  }

  book(name: string): Book {
    const b = this.#books.get(name);
    if (b === undefined) throw new Error(`no book named '${name}' (books: ${this.names.join(', ')})`);
    return b;
  }

  get books(): readonly Book[] {
    return [...this.#books.values()];
  }

  /** The strategy that owns account trade `id` (undefined: none, or not seen). */
  tradeOwner(id: string): string | undefined {
    return this.#tradeOwner.get(id);
  }

  /** The strategy that owns account order `id`. */
  orderOwner(id: string): string | undefined {
    return this.#orderOwner.get(id);
  }

  /** Folds one account transaction into the books (the account's transactions in order, each once). */
  route(tx: Transaction): void {
    const t = tx as Transaction & {
      clientExtensions?: ClientExtensions;
      tradeID?: string;
      tradeClose?: { tradeID?: string };
      orderID?: string;
    };
    if (ORDER_CREATE_TYPES[tx.type] !== undefined) {
      const owner = this.#ownerOfOrder(t);
      if (owner === undefined) return;
      this.#orderOwner.set(tx.id, owner);
      this.book(owner).give(withoutBalance(tx));
      return;
    }
    switch (tx.type) {
      case 'ORDER_FILL': {
        const open =
          (this.#open.get(tx.instrument) ?? 0) + (tx.tradeOpened ? 1 : 0) - (tx.tradesClosed?.length ?? 0);
        this.#open.set(tx.instrument, open);
        const owner = this.#orderOwner.get(tx.orderID);
        this.#orderOwner.delete(tx.orderID);
        if (owner !== undefined) {
          if (tx.tradeOpened) this.#tradeOwner.set(tx.tradeOpened.tradeID, owner);
          this.#fill(this.book(owner), tx);
        } else this.#unowned(tx, open === 0);
        for (const c of tx.tradesClosed ?? []) this.#tradeOwner.delete(c.tradeID);
        return;
      }
      case 'ORDER_CANCEL': {
        const owner = this.#orderOwner.get(tx.orderID);
        this.#orderOwner.delete(tx.orderID);
        if (owner !== undefined) this.book(owner).give(withoutBalance(tx));
        return;
      }
      case 'DAILY_FINANCING':
        this.#financing(tx);
        return;
      case 'TRANSFER_FUNDS':
        for (const b of this.#books.values()) b.give(withoutBalance(tx));
        return;
      default: {
        // Rejects and the rest: to the strategy they concern (its onTransaction), folded as the ledger folds them.
        const owner =
          this.#tagOwner(t.clientExtensions) ??
          (t.orderID !== undefined ? this.#orderOwner.get(t.orderID) : undefined) ??
          (t.tradeID !== undefined ? this.#tradeOwner.get(t.tradeID) : undefined) ??
          this.#prefixOwner(t.clientExtensions?.id);
        if (owner !== undefined) this.book(owner).give(withoutBalance(tx));
      }
    }
  }

  #tagOwner(ext: ClientExtensions | undefined): string | undefined {
    const tag = ext?.tag;
    return tag !== undefined && this.#books.has(tag) ? tag : undefined;
  }

  #prefixOwner(clientID: string | undefined): string | undefined {
    if (clientID === undefined) return undefined;
    for (const n of this.#byPrefix) if (clientID.startsWith(`${n}-`)) return n;
    return undefined;
  }

  #ownerOfOrder(t: {
    clientExtensions?: ClientExtensions;
    tradeID?: string;
    tradeClose?: { tradeID?: string };
  }): string | undefined {
    return (
      this.#tagOwner(t.clientExtensions) ??
      (t.tradeID !== undefined ? this.#tradeOwner.get(t.tradeID) : undefined) ??
      (t.tradeClose?.tradeID !== undefined ? this.#tradeOwner.get(t.tradeClose.tradeID) : undefined) ??
      this.#prefixOwner(t.clientExtensions?.id)
    );
  }

  /** A fill of `book`'s order: the account's fill when it fits the book, else the book's own (see the class). */
  #fill(book: Book, tx: OrderFillTransaction): void {
    const trades = book.portfolio.ledger.trades;
    if (fits(tx, trades, this.opts.hedging)) {
      book.give(withoutBalance(tx));
      return;
    }
    const units = Number(tx.units);
    const accountReduced = (tx.tradesClosed?.length ?? 0) > 0 || tx.tradeReduced !== undefined;
    const plan: { trade: LedgerTrade; units: number }[] = [];
    let left = Math.abs(units);
    const take = (t: LedgerTrade): void => {
      if (left <= 0 || t.instrument !== tx.instrument || t.unitsNum > 0 === units > 0) return;
      if (plan.some((p) => p.trade === t)) return;
      const n = Math.min(left, Math.abs(t.unitsNum));
      plan.push({ trade: t, units: n });
      left -= n;
    };
    for (const c of tx.tradesClosed ?? []) {
      const t = trades.get(c.tradeID);
      if (t) take(t);
    }
    if (tx.tradeReduced) {
      const t = trades.get(tx.tradeReduced.tradeID);
      if (t) take(t);
    }
    if (!this.opts.hedging || accountReduced) for (const t of trades.values()) take(t);
    book.give(this.#bookFill(tx, plan, units > 0 ? left : -left, tx.halfSpreadCost, tx.tradeOpened, true));
  }

  /**
   * The book's ORDER_FILL: `tx`'s order at its price, closing `plan` and opening `open` units (signed),
   * its realized P/L computed on the book's trades (as the simulator's fill path computes it).
   */
  #bookFill(
    tx: OrderFillTransaction,
    plan: readonly { trade: LedgerTrade; units: number }[],
    open: number,
    spread: string | undefined,
    opened: TradeOpen | undefined,
    costs: boolean,
  ): OrderFillTransaction {
    const inst = this.opts.instruments.get(tx.instrument);
    const price = tx.price ?? tx.fullVWAP ?? '0';
    const pxInt = Math.round(Number(price) * inst.priceScale);
    const places = inst.displayPrecision + inst.tradeUnitsPrecision;
    const gain = tx.gainQuoteHomeConversionFactor ?? '1';
    const loss = tx.lossQuoteHomeConversionFactor ?? '1';
    let pl: Amount = 0;
    let filled = Math.abs(open);
    const closed: TradeReduce[] = [];
    let reduced: TradeReduce | undefined;
    for (const p of plan) filled += p.units;
    // The fill's half-spread cost, shared by units over the parts (the last takes the rounding).
    const spreadTotal = spread !== undefined ? amount(spread) : 0;
    let spreadLeft = spreadTotal;
    const share = (n: number, last: boolean): Amount => {
      if (last) return spreadLeft;
      const s = filled > 0 ? Math.round((spreadTotal * n) / filled) : 0;
      spreadLeft -= s;
      return s;
    };
    for (let i = 0; i < plan.length; i++) {
      const { trade, units } = plan[i]!;
      const closedUnits = trade.unitsNum > 0 ? units : -units;
      const unitsInt = Math.round(closedUnits * inst.unitsScale);
      const move = pxInt - Math.round(trade.priceNum * inst.priceScale);
      const realized = convertProduct(move, unitsInt, places, move * unitsInt < 0 ? loss : gain);
      pl = add(pl, realized);
      const part: TradeReduce = {
        tradeID: trade.id,
        units: String(-closedUnits),
        price,
        realizedPL: formatAmount(realized),
        financing: '0.0000',
        halfSpreadCost: formatAmount(share(units, open === 0 && i === plan.length - 1)),
      };
      if (units === Math.abs(trade.unitsNum)) closed.push(part);
      else reduced = part;
    }
    const out: Record<string, unknown> = {
      ...tx,
      units: String(plan.reduce((s, p) => s + (p.trade.unitsNum > 0 ? -p.units : p.units), 0) + open),
      pl: formatAmount(pl),
      tradesClosed: closed.length > 0 ? closed : undefined,
      tradeReduced: reduced,
      tradeOpened:
        open !== 0
          ? {
              tradeID: tx.id,
              units: String(open),
              price,
              halfSpreadCost: formatAmount(share(Math.abs(open), true)),
              ...(opened?.clientExtensions ? { clientExtensions: opened.clientExtensions } : {}),
            }
          : undefined,
      accountBalance: undefined,
    };
    if (!costs) {
      out.commission = '0.0000';
      out.guaranteedExecutionFee = '0.0000';
      out.halfSpreadCost = '0.0000';
      out.financing = '0.0000';
    }
    return out as unknown as OrderFillTransaction;
  }

  /** A fill of nobody's order (a margin closeout, a kill switch): see the class. */
  #unowned(tx: OrderFillTransaction, flat: boolean): void {
    const units = Number(tx.units);
    let left = Math.abs(units);
    let costs = true;
    for (const b of this.#books.values()) {
      const plan: { trade: LedgerTrade; units: number }[] = [];
      for (const t of b.portfolio.ledger.trades.values()) {
        if (t.instrument !== tx.instrument) continue;
        if (flat) plan.push({ trade: t, units: Math.abs(t.unitsNum) });
        else if (left > 0 && t.unitsNum > 0 !== units > 0) {
          const n = Math.min(left, Math.abs(t.unitsNum));
          plan.push({ trade: t, units: n });
          left -= n;
        }
      }
      if (plan.length === 0) continue;
      // Commission and fees stay with the account's fill: given to the first book that takes part.
      b.give(this.#bookFill(tx, plan, 0, costs ? tx.halfSpreadCost : undefined, undefined, costs));
      costs = false;
    }
  }

  #financing(tx: DailyFinancingTransaction): void {
    const parts = new Map<string, { total: Amount; positions: PositionFinancing[] }>();
    let sum: Amount = 0;
    for (const pf of tx.positionFinancings ?? []) {
      const byBook = new Map<string, OpenTradeFinancing[]>();
      for (const tf of pf.openTradeFinancings ?? []) {
        const owner = this.#tradeOwner.get(tf.tradeID);
        if (owner === undefined) continue;
        let list = byBook.get(owner);
        if (!list) byBook.set(owner, (list = []));
        list.push(tf);
      }
      for (const [owner, list] of byBook) {
        let p = parts.get(owner);
        if (!p) parts.set(owner, (p = { total: 0, positions: [] }));
        let total: Amount = 0;
        for (const tf of list) total = add(total, amount(tf.financing));
        p.total = add(p.total, total);
        sum = add(sum, total);
        // Only the book's own trades carry it to a trade; the rest is the book's all the same.
        const own = list.filter((tf) => this.book(owner).portfolio.ledger.trades.has(tf.tradeID));
        p.positions.push({ ...pf, financing: formatAmount(total), openTradeFinancings: own });
      }
    }
    const residual = add(amount(tx.financing), -sum);
    let first = true;
    for (const [owner, p] of parts) {
      const total = first ? add(p.total, residual) : p.total;
      first = false;
      this.book(owner).give({
        ...tx,
        financing: formatAmount(total),
        positionFinancings: p.positions,
        accountBalance: undefined,
      } as unknown as Transaction);
    }
  }
}

/** One strategy's book: its Portfolio, and where its transactions go (by default folded into it). */
export class Book {
  /** Where the book's transactions go: its portfolio's fold, or an engine that folds them and tells its strategy. */
  receive: (tx: Transaction) => void;
  constructor(
    readonly name: string,
    readonly portfolio: Portfolio,
  ) {
    this.receive = (tx) => {
      portfolio.apply(tx);
    };
  }

  give(tx: Transaction): void {
    this.receive(tx);
  }
}

/** The transaction without the account's balance (a book's balance is its own). */
function withoutBalance(tx: Transaction): Transaction {
  if ((tx as { accountBalance?: string }).accountBalance === undefined) return tx;
  return { ...tx, accountBalance: undefined } as unknown as Transaction;
}

/** Whether the account's fill did to trades the book holds exactly what it did at the account. */
function fits(tx: OrderFillTransaction, trades: ReadonlyMap<string, LedgerTrade>, hedging: boolean): boolean {
  for (const c of tx.tradesClosed ?? []) {
    const t = trades.get(c.tradeID);
    if (t === undefined || Math.abs(t.unitsNum) !== Math.abs(Number(c.units))) return false;
  }
  const r = tx.tradeReduced;
  if (r !== undefined) {
    const t = trades.get(r.tradeID);
    if (t === undefined || Math.abs(t.unitsNum) <= Math.abs(Number(r.units))) return false;
  }
  // On netting the book must hold no opposite trade the account left alone (it reduced others').
  if (tx.tradeOpened !== undefined && !hedging) {
    const buy = Number(tx.tradeOpened.units) > 0;
    const touched = new Set<string>();
    for (const c of tx.tradesClosed ?? []) touched.add(c.tradeID);
    if (r) touched.add(r.tradeID);
    for (const t of trades.values())
      if (t.instrument === tx.instrument && t.unitsNum > 0 !== buy && !touched.has(t.id)) return false;
  }
  return true;
}
