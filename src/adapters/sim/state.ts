import { HomeConversion, type Quote } from '../../domain/conversion.ts';
import type { Instrument, InstrumentRegistry } from '../../domain/instrument.ts';
import { Ledger, type LedgerTrade } from '../../domain/ledger.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { AccountRules } from './account.ts';
import { workingOrder, removeOrder, type Book, type MatchSink } from './book.ts';
import { perMillionCommission, type CommissionModel } from './commission.ts';
import { NO_LATENCY, type LatencyModel } from './latency.ts';
import type { SimOrder } from './orders.ts';
import type { PathPoint } from './pricing.ts';
import { NO_SLIPPAGE, type SlippageModel } from './slippage.ts';
import { TransactionLog } from './transactions.ts';
import type { OrderEnv } from './validate.ts';
import type { SimBrokerOptions, SimStats } from './types.ts';

/**
 * The simulator's state, shared by the parts that act on it (feed.ts, clock.ts, intents.ts,
 * execute.ts, cancels.ts, closeout.ts, seed.ts): the clock, the latest quotes, the books and the
 * pending orders by client ID (by ID: the ledger's), the ledger, the transaction log and the models. It files
 * orders (`track`, `untrack`) and finds them; it decides nothing. Plain fields, read and written by
 * plain functions: one object, no per-event allocation.
 */
export class SimState {
  readonly opts: SimBrokerOptions;
  readonly instruments: InstrumentRegistry;
  readonly accountID: string;
  readonly ledger: Ledger;
  readonly stats: SimStats = {
    fills: 0,
    rejects: 0,
    cancels: 0,
    ambiguousCandles: 0,
    ambiguousPL: 0,
    marginCloseouts: 0,
    halted: 0,
    fillObjects: 0,
    orderObjects: 0,
  };
  /** IDs, batches, stamping and delivery of the transactions (transactions.ts). */
  readonly tx: TransactionLog;
  readonly quotes = new Map<string, Quote>();
  readonly conversion: HomeConversion;
  readonly books = new Map<string, Book>();
  /** The book of the last price (consecutive prices are mostly of one instrument). */
  lastBook: Book | undefined = undefined;
  /** Scratch for the quick path (pricing.ts `untouched`): each resting order's level after this candle's trailing ratchet. */
  trailTo = new Float64Array(16);
  /** The current point of a candle's path (reused). */
  readonly point: PathPoint = { bid: 0, ask: 0, t: 0 };
  lastQuoteName = '';
  lastQuote: Quote | undefined = undefined;
  /** Pending order IDs by client order ID (`@clientID` specifiers); by ID: `order(id)`, the ledger's index. */
  readonly byClientID = new Map<string, string>();
  /** Margin, margin call, closeout and FIFO rules (account.ts). */
  readonly account: AccountRules;
  /** The models a user can swap (commission.ts, slippage.ts, latency.ts). */
  readonly commission: CommissionModel;
  readonly slippage: SlippageModel;
  readonly latency: LatencyModel;
  /** The simulator's clock: the time of the last price it saw (transactions are stamped with it). */
  now: UnixMs = -Infinity;
  /** When the intent being submitted was decided (NaN: now); a market order decided while closed is halted. */
  decidedAt: UnixMs = Number.NaN;
  started = false;
  nextRollover = Infinity;
  nextExpiry = Infinity;
  /** Inside a path-ambiguous candle (fills count towards `stats.ambiguousPL`). */
  inAmbiguous = false;
  /** Units available at the current price point, per side (Infinity when the data carries none). */
  readonly liquidity = { bid: Infinity, ask: Infinity };
  marginCall = false;
  readonly hedging: boolean;
  /** Scratch for matching (book.ts `match`): the orders of one price point. */
  readonly snapshot: (SimOrder | undefined)[] = [];
  /** What matching (book.ts) calls back: the fills and the FOK/IOC expiry (wired by the broker). */
  readonly sink: MatchSink;
  /** What `checkOrder` reads of this account: the instruments, the clock, the open trades. */
  readonly orderEnv: OrderEnv;
  /** Started from an existing account (`seed`): `start` opens no new account. */
  seeded = false;
  /** The clock of the seeded state (NaN when unknown): rollovers after it are charged. */
  seedTime = Number.NaN;
  /** Seeded MARKET orders whose outcome was never recorded: cancelled when the simulator starts. */
  unfilled: string[] = [];

  constructor(opts: SimBrokerOptions, sink: (s: SimState) => MatchSink) {
    this.opts = opts;
    this.instruments = opts.instruments;
    this.accountID = opts.accountID ?? '101-001-0000001-001';
    this.ledger = new Ledger({ currency: opts.currency, strict: true });
    this.tx = new TransactionLog(this.ledger, this.accountID, this, this.stats);
    this.conversion = new HomeConversion(opts.currency, this.quotes);
    this.commission = opts.commission ?? perMillionCommission(opts.commissionPerMillion ?? '0');
    this.slippage = opts.slippage ?? NO_SLIPPAGE;
    this.latency = opts.latency ?? NO_LATENCY;
    this.hedging = opts.hedging === true && opts.fifo !== true;
    this.account = new AccountRules(
      this.ledger,
      opts.instruments,
      this.quotes,
      this.conversion,
      opts.currency,
      Number(opts.marginRate),
      this.hedging,
    );
    const s = this;
    this.orderEnv = {
      instruments: opts.instruments,
      get now(): number {
        return s.now;
      },
      trade: (spec) => this.findTrade(spec),
    };
    this.sink = sink(this);
  }

  /** The book of `name`, made on first use. */
  book(name: string): Book {
    let b = this.books.get(name);
    if (b === undefined) {
      b = {
        instrument: this.instruments.get(name),
        market: [],
        orders: [],
        driver: this.opts.drivers?.get(name),
        lastTick: -Infinity,
      };
      this.books.set(name, b);
    }
    return b;
  }

  /** Sets the latest quote of `name` (its object is updated in place). */
  setQuote(name: string, bid: number, ask: number): void {
    // Consecutive prices are mostly of one instrument: its quote object is kept to skip the lookup.
    let q = name === this.lastQuoteName ? this.lastQuote : this.quotes.get(name);
    if (q === undefined) this.quotes.set(name, (q = { bid, ask }));
    else {
      q.bid = bid;
      q.ask = ask;
    }
    this.lastQuoteName = name;
    this.lastQuote = q;
  }

  /** The open trade of a trade specifier (an ID, or `@clientTradeID`). */
  findTrade(spec: string): LedgerTrade | undefined {
    if (!spec.startsWith('@')) return this.ledger.trades.get(spec);
    const cid = spec.slice(1);
    for (const t of this.ledger.trades.values()) if (t.clientExtensions?.id === cid) return t;
    return undefined;
  }

  /**
   * The pending (live) working order `id`, from the one index of pending orders: the ledger's
   * (`SimOrder`). Undefined for a market order (the ledger's own entry until its fill) and for an
   * order already taken out of its book whose fill or cancel the ledger has not folded yet.
   */
  order(id: string): SimOrder | undefined {
    const o = this.ledger.pendingOrders.get(id) as SimOrder | undefined;
    return o !== undefined && o.live === true ? o : undefined;
  }

  /** The live working orders, in creation order (the ledger's pending orders that are working orders). */
  liveOrders(): SimOrder[] {
    const out: SimOrder[] = [];
    for (const o of this.ledger.pendingOrders.values())
      if ((o as SimOrder).live === true) out.push(o as SimOrder);
    return out;
  }

  /**
   * The simulator's working order of a create transaction `tx` (book.ts), stamped but not yet
   * published, filed in its book: the caller publishes `tx` with it (`TransactionLog.publish(tx, o)`),
   * and the ledger files it as the pending order.
   */
  track(tx: Transaction, activeFrom: UnixMs): SimOrder {
    const tradeID = (tx as { tradeID?: string }).tradeID;
    const trade = tradeID !== undefined ? this.ledger.trades.get(tradeID) : undefined;
    const last = this.lastBook;
    const name = trade ? trade.instrument : (tx as { instrument?: string }).instrument!;
    // The instrument of the last price is nearly always the order's: its quote and book are kept.
    const instrument: Instrument =
      last !== undefined && last.instrument.name === name ? last.instrument : this.instruments.get(name);
    const q = instrument.name === this.lastQuoteName ? this.lastQuote : this.quotes.get(instrument.name);
    const o = workingOrder(tx, instrument, trade, q, this.now, activeFrom);
    this.file(o);
    return o;
  }

  /**
   * Files working order `o` in its book and the client-ID index (built by `track`, or from numbers:
   * execute.ts). The ID index is the ledger's, which files `o` when its transaction is published.
   */
  file(o: SimOrder): void {
    const instrument = o.inst;
    const last = this.lastBook;
    if (o.clientID !== undefined) this.byClientID.set(o.clientID, o.id);
    (last !== undefined && last.instrument === instrument ? last : this.book(instrument.name)).orders.push(o);
    if (o.expiresAt < this.nextExpiry) this.nextExpiry = o.expiresAt;
  }

  /**
   * Takes a filled or cancelled order out of its book and the client-ID index; the ledger drops it
   * from the pending orders when it folds the fill or cancel (in the same batch; `live` is false meanwhile).
   */
  untrack(o: SimOrder): void {
    o.live = false;
    if (o.clientID !== undefined && this.byClientID.get(o.clientID) === o.id)
      this.byClientID.delete(o.clientID);
    const last = this.lastBook;
    const list =
      last !== undefined && last.instrument === o.inst ? last.orders : this.books.get(o.inst.name)?.orders;
    if (list) removeOrder(list, o);
  }
}
