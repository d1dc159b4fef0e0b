import { Observable, type Subscriber } from 'rxjs';
import type { Candle } from '../../domain/candle.ts';
import { add, amount, formatAmount, type Amount } from '../../domain/money.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { Instrument, InstrumentRegistry } from '../../domain/instrument.ts';
import { assertNever, type OrderIntent } from '../../domain/intents.ts';
import { Ledger, type LedgerTrade } from '../../domain/ledger.ts';
import { nextRollover, weekendClosure } from '../../domain/new-york.ts';
import type { Tick } from '../../domain/tick.ts';
import { formatTime, parseRequestTime, parseTime, type UnixMs } from '../../domain/time.ts';
import type {
  ClientExtensions,
  OrderCancelReason,
  MarketOrderRequest,
  OrderRequest,
  Transaction,
  TransactionRejectReason,
} from '../../domain/v20/index.ts';
import type { Execution } from '../../ports/execution.ts';
import { HomeConversion, type Quote } from '../../domain/conversion.ts';
import type { SimOrder } from './orders.ts';
import { checkOrder, type OrderEnv } from './validate.ts';
import { TransactionLog, type Draft } from './transactions.ts';
import { dailyFinancing, type FinancingRates } from './financing.ts';
import { AccountRules } from './account.ts';
import { perMillionCommission, type CommissionModel } from './commission.ts';
import { canSlip, NO_SLIPPAGE, type SlippageModel } from './slippage.ts';
import { NO_LATENCY, type LatencyModel } from './latency.ts';
import { ambiguous, match, removeOrder, workingOrder, type Book, type MarketRequest, type MatchSink, type QueuedMarket } from './book.ts';
import { orderFill, roundUnits, type FillArgs } from './fill.ts';
import { highFirst, pathPoint, untouched, type PathPoint } from './pricing.ts';
import { orderOf, restoreAccount, SimSeedError, tradeSummaryOf, type SimAccountState } from './seed.ts';

export interface SimBrokerOptions {
  readonly instruments: InstrumentRegistry;
  /** Account (home) currency. */
  readonly currency: string;
  /** Initial deposit, a decimal string in the home currency. */
  readonly initialBalance: string;
  /** The account's margin rate (0.02 = 50:1). Each instrument uses the stricter of this and its own. */
  readonly marginRate: string;
  /** Hedging account: DEFAULT positionFill opens new trades instead of reducing (v20 OPEN_ONLY). */
  readonly hedging?: boolean;
  /**
   * FIFO account (OANDA's US division, NFA rule 2-43b): no hedging (DEFAULT and OPEN_ONLY never open
   * against an opposite position); a trade may only be closed by name (trade close, TP/SL/trailing)
   * when no older trade of the same instrument has the same size; a trade opened with TP/SL/trailing
   * stops on fill must have a size no other open trade of the instrument has. An order that would
   * break this is cancelled with FIFO_VIOLATION when it fills. Overrides `hedging`.
   */
  readonly fifo?: boolean;
  /**
   * Market hours: a market order (client, trade close, position close) submitted while its
   * instrument's market is closed (`Instrument.hours`: the FX week from Sunday to Friday 17:00 New
   * York, metals and CFDs with their daily breaks) is created and cancelled at once with
   * MARKET_HALTED, as v20 does. Default true; false (24/7 or synthetic data) lets orders wait for
   * the next price instead.
   */
  readonly marketHours?: boolean;
  readonly accountID?: string;
  /**
   * Which series drives matching per instrument: a granularity, or 'TICK'. Unlisted instruments are
   * driven by the first series seen for them (the finest, since the merge orders ties that way).
   */
  readonly drivers?: ReadonlyMap<string, string>;
  /** Charge DAILY_FINANCING at 17:00 New York. Default true. */
  readonly financing?: boolean;
  /** The rates of each rollover (financing.ts), e.g. a recorded history; default each instrument's own. */
  readonly financingRates?: FinancingRates;
  /** Commission in home currency per million units filled. Default 0 (spread-only pricing). Ignored when `commission` is given. */
  readonly commissionPerMillion?: string;
  /** The commission model (commission.ts): per million units, or OANDA's core pricing schedule. Default: `commissionPerMillion`. */
  readonly commission?: CommissionModel;
  /** The slippage model (slippage.ts) of fills that can slip (market orders, stops). Default none, as v20. */
  readonly slippage?: SlippageModel;
  /** The latency model (latency.ts): the delay between a decision and its order reaching the server. Default none. */
  readonly latency?: LatencyModel;
  /**
   * The order of a candle's extremes. adaptive: the extreme nearer to the open first. worst: the
   * extreme adverse to the instrument's open position first (low first when net long, high first
   * when net short; adaptive when flat), so ambiguous candles resolve against the trader. exact: the
   * ticks of the instrument (fed alongside the candles) do the matching inside every candle that has
   * ticks, whatever drives the strategy; a candle without ticks falls back to adaptive.
   */
  readonly path?: 'adaptive' | 'worst' | 'exact';
  /**
   * Skip the path walk of candles in which no resting order can trigger (default true). The
   * outcome is the same either way (pinned by a property test); false walks every point.
   */
  readonly quickPath?: boolean;
}

/** Figures about the simulation itself, for the report. */
export interface SimStats {
  fills: number;
  rejects: number;
  cancels: number;
  /** Candles where the order of the intra-candle path decided an outcome (e.g. TP and SL both in range). */
  ambiguousCandles: number;
  /** Realized P/L of fills made inside ambiguous candles (home currency). */
  ambiguousPL: Amount;
  /** Margin closeouts (all positions closed because NAV fell to half the margin used). */
  marginCloseouts: number;
  /** Market orders cancelled MARKET_HALTED: submitted while their instrument's market was closed. */
  halted: number;
}


/**
 * The simulated broker: v20's order, fill and money rules applied to historical or replayed prices.
 *
 * It observes the market stream (`onEvent`, wired ahead of the engine) and executes intents
 * (`submit`). Everything it decides leaves as v20 transactions with sequential IDs and batch IDs,
 * which it also folds into its own `Ledger`: the simulator's account is the same fold the engine
 * keeps, so the two can never disagree.
 *
 * Fill rules (all pinned by tests, listed in the README "How fills work"):
 * - A market order fills at the first price observed after it was submitted: the next candle's open
 *   (never a price inside the candle that prompted it), or the next tick. Buys at the ask, sells at
 *   the bid, snapped to the instrument's displayPrecision.
 * - A candle is walked as open → nearer extreme → other extreme → close (adaptive path; or the
 *   extreme adverse to the open position first, `path: 'worst'`). A resting
 *   order that is already marketable at the open (a gap) fills at the open; one crossed inside the
 *   candle fills at its level.
 * - Nothing acts on a price seen before the order existed (`activeFrom`).
 */
export class SimBroker implements Execution {
  /** What `complete()` ends: the `transactions$` subscribers (a `listen` callback has no end). */
  #completers: readonly Subscriber<Transaction>[] = [];
  #completed = false;
  readonly transactions$: Observable<Transaction> = new Observable<Transaction>((sub) => {
    if (this.#completed) {
      sub.complete();
      return undefined;
    }
    const stop = this.listen((tx) => sub.next(tx));
    this.#completers = [...this.#completers, sub];
    return () => {
      stop();
      this.#completers = this.#completers.filter((s) => s !== sub);
    };
  });
  readonly ledger: Ledger;
  readonly stats: SimStats = { fills: 0, rejects: 0, cancels: 0, ambiguousCandles: 0, ambiguousPL: 0, marginCloseouts: 0, halted: 0 };
  readonly accountID: string;
  readonly #opts: SimBrokerOptions;
  /** IDs, batches, stamping and delivery of the transactions (transactions.ts). */
  readonly #tx: TransactionLog;
  readonly #instruments: InstrumentRegistry;
  readonly #quotes = new Map<string, Quote>();
  readonly #conversion: HomeConversion;
  readonly #books = new Map<string, Book>();
  #lastBook: Book | undefined = undefined;
  /** Scratch for #untouched: each resting order's level after this candle's trailing ratchet. */
  #trailTo = new Float64Array(16);
  /** The current point of a candle's path (reused). */
  readonly #point: PathPoint = { bid: 0, ask: 0, t: 0 };
  #lastQuoteName = '';
  #lastQuote: Quote | undefined = undefined;
  readonly #orders = new Map<string, SimOrder>();
  readonly #byClientID = new Map<string, string>();
  /** Margin, margin call, closeout and FIFO rules (account.ts). */
  readonly #account: AccountRules;
  /** The models a user can swap (commission.ts, slippage.ts, latency.ts). */
  readonly #commission: CommissionModel;
  readonly #slippage: SlippageModel;
  readonly #latency: LatencyModel;
  #now: UnixMs = -Infinity;
  #started = false;
  #nextRollover = Infinity;
  #nextExpiry = Infinity;
  #inAmbiguous = false;
  /** Units available at the current price point, per side (Infinity when the data carries none). */
  readonly #liquidity = { bid: Infinity, ask: Infinity };
  #marginCall = false;
  readonly #hedging: boolean;
  readonly #snapshot: SimOrder[] = [];

  /** What matching (book.ts) calls back: the fills and the FOK/IOC expiry. */
  readonly #sink: MatchSink;
  /** Started from an existing account (`seed`): `start` opens no new account. */
  #seeded = false;
  /** The clock of the seeded state (NaN when unknown): rollovers after it are charged. */
  #seedTime = Number.NaN;
  /** Seeded MARKET orders whose outcome was never recorded: cancelled when the simulator starts. */
  #unfilled: string[] = [];

  constructor(opts: SimBrokerOptions) {
    this.#opts = opts;
    this.#instruments = opts.instruments;
    this.accountID = opts.accountID ?? '101-001-0000001-001';
    this.ledger = new Ledger({ currency: opts.currency, strict: true });
    this.#tx = new TransactionLog(this.ledger, this.accountID, this);
    this.#conversion = new HomeConversion(opts.currency, this.#quotes);
    this.#commission = opts.commission ?? perMillionCommission(opts.commissionPerMillion ?? '0');
    this.#slippage = opts.slippage ?? NO_SLIPPAGE;
    this.#latency = opts.latency ?? NO_LATENCY;
    this.#hedging = opts.hedging === true && opts.fifo !== true;
    this.#account = new AccountRules(this.ledger, opts.instruments, this.#quotes, this.#conversion, opts.currency, Number(opts.marginRate), this.#hedging);
    this.#sink = {
      fillMarket: (book, q, bid, ask, t) => this.#fillMarket(book, q, bid, ask, t),
      fillResting: (book, o, px, bid, ask, t) => this.#fillResting(book, o, px, bid, ask, t),
      expireImmediate: (o) => {
        // FOK / IOC: the first price after its creation did not fill it.
        this.#tx.begin();
        this.#cancelOrder(o, 'TIME_IN_FORCE_EXPIRED');
      },
    };
    const broker = this;
    this.#orderEnv = {
      instruments: opts.instruments,
      get now(): number {
        return broker.#now;
      },
      trade: (spec) => this.#findTrade(spec),
    };
  }

  /** Whether `instrument`'s market is closed at `t` (its trading hours; never with `marketHours: false`). */
  #halted(t: UnixMs, instrument: Instrument): boolean {
    if (this.#opts.marketHours === false || !Number.isFinite(t)) return false;
    return !instrument.hours.isOpen(t);
  }

  /** The simulator's clock: the time of the last price it saw. */
  get now(): UnixMs {
    return this.#now;
  }

  /**
   * The current trigger level of a pending order: its price, or a trailing stop's current value
   * (v20 `trailingStopValue`). Undefined when the order is not pending. For views and tests.
   */
  triggerLevel(orderID: string): number | undefined {
    return this.#orders.get(orderID)?.level;
  }

  /** Latest quotes by instrument (shared, updated in place). */
  get quotes(): ReadonlyMap<string, Quote> {
    return this.#quotes;
  }

  /** Opens the account at `at`: a CREATE and the initial deposit (TRANSFER_FUNDS). Called on the first event if not before. */
  start(at: UnixMs): void {
    if (this.#started) return;
    this.#started = true;
    this.#now = at;
    if (this.#seeded) {
      this.#resume(at);
      return;
    }
    this.#tx.begin();
    this.#tx.emit({ type: 'CREATE', divisionID: 1, siteID: 101, accountUserID: 1, accountNumber: 1, homeCurrency: this.#opts.currency });
    const deposit = amount(this.#opts.initialBalance);
    if (deposit !== 0) {
      this.#tx.begin();
      this.#tx.emit({
        type: 'TRANSFER_FUNDS',
        amount: formatAmount(deposit),
        fundingReason: 'CLIENT_FUNDING',
        accountBalance: formatAmount(add(this.ledger.balance, deposit)),
      });
    }
    if (this.#opts.financing !== false) this.#nextRollover = nextRollover(at);
  }

  // ---------------------------------------------------------------------------------------------
  // Market data

  /** Feeds one market event. Wire it ahead of the engine so fills land before strategies see the event. */
  onEvent(ev: MarketEvent): void {
    if (!this.#started) this.start(ev.kind === 'candle' ? ev.time : ev.at);
    switch (ev.kind) {
      case 'candle':
        this.#candle(ev);
        return;
      case 'tick':
        this.#tick(ev);
        return;
      default:
        this.#advance(ev.at);
    }
  }

  #book(name: string): Book {
    let b = this.#books.get(name);
    if (b === undefined) {
      b = { instrument: this.#instruments.get(name), market: [], orders: [], driver: this.#opts.drivers?.get(name), lastTick: -Infinity };
      this.#books.set(name, b);
    }
    return b;
  }

  #setQuote(name: string, bid: number, ask: number): void {
    // Consecutive prices are mostly of one instrument: its quote object is kept to skip the lookup.
    let q = name === this.#lastQuoteName ? this.#lastQuote : this.#quotes.get(name);
    if (q === undefined) this.#quotes.set(name, (q = { bid, ask }));
    else {
      q.bid = bid;
      q.ask = ask;
    }
    this.#lastQuoteName = name;
    this.#lastQuote = q;
  }

  /** The book of an instrument the simulator can trade; undefined (after moving the clock) for others. */
  #bookOf(instrument: string, at: UnixMs): Book | undefined {
    const last = this.#lastBook;
    if (last !== undefined && last.instrument.name === instrument) return last;
    const book = this.#books.get(instrument);
    if (book !== undefined) return (this.#lastBook = book);
    if (this.#instruments.has(instrument)) return this.#book(instrument);
    this.#advance(at);
    return undefined;
  }

  #candle(c: Candle): void {
    const book = this.#bookOf(c.instrument, c.at);
    if (book === undefined) return;
    if (book.driver === undefined) book.driver = c.granularity;
    if (book.driver !== c.granularity || !c.complete) {
      this.#advance(c.at);
      return;
    }
    this.#advance(c.time);
    if (book.lastTick >= c.time && this.#opts.path === 'exact') {
      // Exact replay: the ticks inside this candle already did the matching, price by price.
      this.#now = c.at;
      this.#advance(c.at);
      return;
    }
    const watchMargin = this.ledger.trades.size > 0 && (this.#marginCall || this.#account.mayCall(c, book.instrument));
    if (book.market.length === 0 && !watchMargin && (book.orders.length === 0 || (this.#opts.quickPath !== false && this.#untouched(book, c)))) {
      // Nothing can fill and the margin is safe at this candle's worst prices: only the quote moves
      // (and trailing stops follow, in #untouched).
      this.#setQuote(c.instrument, c.bc, c.ac);
      this.#now = c.at;
      this.#advance(c.at);
      return;
    }
    const high = highFirst(c, this.#opts.path, this.#opts.path === 'worst' ? this.#net(c.instrument) : 0);
    this.#inAmbiguous = ambiguous(book, c, this.ledger.trades.values(), this.#orders);
    if (this.#inAmbiguous) this.stats.ambiguousCandles++;
    const pt = this.#point;
    for (let p = 0; p < 4; p++) {
      pathPoint(c, p, high, pt);
      const { bid, ask, t } = pt;
      this.#now = t;
      this.#setQuote(c.instrument, bid, ask);
      this.#match(book, bid, ask, t, p === 0);
      if (watchMargin) this.#checkMargin(book.instrument.name);
    }
    this.#inAmbiguous = false;
    this.#advance(c.at);
  }

  #tick(k: Tick): void {
    const book = this.#bookOf(k.instrument, k.at);
    if (book === undefined) return;
    if (book.driver === undefined) book.driver = 'TICK';
    this.#advance(k.at);
    this.#now = k.at;
    this.#setQuote(k.instrument, k.bid, k.ask);
    book.lastTick = k.at;
    if (book.driver !== 'TICK' && this.#opts.path !== 'exact') return;
    this.#liquidity.bid = k.bidLiquidity ?? Infinity;
    this.#liquidity.ask = k.askLiquidity ?? Infinity;
    if (book.market.length > 0 || book.orders.length > 0) this.#match(book, k.bid, k.ask, k.at, true);
    this.#liquidity.bid = Infinity;
    this.#liquidity.ask = Infinity;
    if (this.ledger.trades.size > 0) this.#checkMargin(k.instrument);
  }

  /** True when some trade has two exits (TP and SL/TSL) both reachable inside this candle. */
  /** Whether no resting order of `book` can trigger in candle `c` (pricing.ts `untouched`). */
  #untouched(book: Book, c: Candle): boolean {
    if (this.#trailTo.length < book.orders.length) this.#trailTo = new Float64Array(book.orders.length * 2);
    return untouched(book.orders, c, this.#trailTo);
  }

  /** The net units of `instrument`'s position (the worst path model's side). */
  #net(instrument: string): number {
    const { long, short } = this.ledger.position(instrument);
    return long + short;
  }

  #match(book: Book, bid: number, ask: number, t: UnixMs, gap: boolean): void {
    match(book, bid, ask, t, gap, this.#snapshot, this.#sink);
  }

  // ---------------------------------------------------------------------------------------------
  // Time: financing and expiry

  #advance(t: UnixMs): void {
    // Rollovers and expiries are stamped with their own time, then the clock moves on to t.
    while (t >= this.#nextRollover) {
      const at = this.#nextRollover;
      this.#nextRollover = nextRollover(at);
      this.#rollover(at);
    }
    if (t >= this.#nextExpiry) this.#expire(t);
    if (t > this.#now) this.#now = t;
  }

  #expire(t: UnixMs): void {
    let next = Infinity;
    for (const o of [...this.#orders.values()]) {
      if (o.expiresAt <= t) {
        const saved = this.#now;
        this.#now = Math.max(saved, o.expiresAt);
        this.#tx.begin();
        this.#cancelOrder(o, 'TIME_IN_FORCE_EXPIRED');
        this.#now = saved;
      } else if (o.expiresAt < next) next = o.expiresAt;
    }
    this.#nextExpiry = next;
  }

  /** DAILY_FINANCING for the trades held at a 17:00 New York rollover (financing.ts). */
  #rollover(at: UnixMs): void {
    const draft = dailyFinancing(this.ledger, at, this.#instruments, this.#quotes, this.#conversion, this.#opts.financingRates);
    if (draft === undefined) return;
    const saved = this.#now;
    this.#now = at;
    this.#tx.begin();
    this.#tx.emit(draft);
    this.#now = Math.max(saved, at);
  }

  // ---------------------------------------------------------------------------------------------
  // Intents

  submit(intent: OrderIntent): void {
    if (!this.#started) this.start(Number.isFinite(this.#now) ? this.#now : 0);
    switch (intent.kind) {
      case 'order':
        this.#submitOrder(intent.request, undefined);
        return;
      case 'replace': {
        const old = this.#findOrder(intent.orderSpecifier);
        if (!old) {
          this.#tx.begin();
          this.#reject('ORDER_CANCEL_REJECT', cancelRejectFields(intent.orderSpecifier), 'ORDER_DOESNT_EXIST');
          return;
        }
        this.#submitOrder(intent.request, old);
        return;
      }
      case 'cancel': {
        const o = this.#findOrder(intent.orderSpecifier);
        this.#tx.begin();
        if (!o) this.#reject('ORDER_CANCEL_REJECT', cancelRejectFields(intent.orderSpecifier), 'ORDER_DOESNT_EXIST');
        else this.#cancelOrder(o, 'CLIENT_REQUEST');
        return;
      }
      case 'closeTrade': {
        const trade = this.#findTrade(intent.tradeSpecifier);
        if (!trade) {
          this.#tx.begin();
          this.#reject('MARKET_ORDER_REJECT', { tradeClose: { tradeID: intent.tradeSpecifier, units: intent.units }, reason: 'TRADE_CLOSE' }, 'TRADE_DOESNT_EXIST');
          return;
        }
        const size = Math.abs(trade.unitsNum);
        const units = intent.units === 'ALL' ? size : Number(intent.units);
        if (!(units <= size && units > 0)) {
          this.#tx.begin();
          this.#reject('MARKET_ORDER_REJECT', { instrument: trade.instrument, tradeClose: { tradeID: trade.id, units: intent.units }, reason: 'TRADE_CLOSE' }, 'CLOSE_TRADE_UNITS_EXCEED_TRADE_SIZE');
          return;
        }
        const signed = trade.unitsNum > 0 ? -units : units;
        const tradeClose: { tradeID: string; clientTradeID?: string; units: string } = { tradeID: trade.id, units: intent.units === 'ALL' ? 'ALL' : String(units) };
        if (trade.clientExtensions?.id) tradeClose.clientTradeID = trade.clientExtensions.id;
        this.#queueMarket(trade.instrument, {
          instrument: trade.instrument,
          units: String(signed),
          timeInForce: 'FOK',
          positionFill: 'REDUCE_ONLY',
          reason: 'TRADE_CLOSE',
          tradeClose,
        }, undefined);
        return;
      }
      case 'closePosition': {
        const { long, short } = this.ledger.position(intent.instrument);
        const want = (spec: string | undefined, have: number): number | undefined | 'reject' => {
          if (spec === undefined || spec === 'NONE') return undefined;
          if (have === 0) return 'reject';
          const abs = Math.abs(have);
          if (spec === 'ALL') return abs;
          const d = Number(spec);
          return !(d <= abs && d > 0) ? 'reject' : d;
        };
        const l = want(intent.longUnits, long);
        const s = want(intent.shortUnits, short);
        if (l === 'reject' || s === 'reject' || (l === undefined && s === undefined)) {
          this.#tx.begin();
          this.#reject('MARKET_ORDER_REJECT', { instrument: intent.instrument, reason: 'POSITION_CLOSEOUT' }, l === undefined && s === undefined ? 'CLOSEOUT_POSITION_INCOMPLETE_SPECIFICATION' : 'CLOSEOUT_POSITION_DOESNT_EXIST');
          return;
        }
        if (l) {
          this.#queueMarket(intent.instrument, {
            instrument: intent.instrument,
            units: String(-l),
            timeInForce: 'FOK',
            positionFill: 'REDUCE_ONLY',
            reason: 'POSITION_CLOSEOUT',
            longPositionCloseout: { instrument: intent.instrument, units: intent.longUnits ?? 'ALL' },
          }, undefined);
        }
        if (s) {
          this.#queueMarket(intent.instrument, {
            instrument: intent.instrument,
            units: String(s),
            timeInForce: 'FOK',
            positionFill: 'REDUCE_ONLY',
            reason: 'POSITION_CLOSEOUT',
            shortPositionCloseout: { instrument: intent.instrument, units: intent.shortUnits ?? 'ALL' },
          }, undefined);
        }
        return;
      }
      case 'tradeOrders':
        this.#tradeOrders(intent);
        return;
      case 'clientExtensions': {
        this.#tx.begin();
        if (intent.orderSpecifier !== undefined) {
          const o = this.#findOrder(intent.orderSpecifier);
          if (!o) {
            this.#reject('ORDER_CLIENT_EXTENSIONS_MODIFY_REJECT', { orderID: intent.orderSpecifier }, 'ORDER_DOESNT_EXIST');
            return;
          }
          const d: Draft = { type: 'ORDER_CLIENT_EXTENSIONS_MODIFY', orderID: o.id };
          if (intent.clientExtensions) d.clientExtensionsModify = intent.clientExtensions;
          if (intent.tradeClientExtensions) d.tradeClientExtensionsModify = intent.tradeClientExtensions;
          if (intent.clientExtensions) {
            // The new extensions replace the old: later fills and cancels carry the new client ID,
            // and only the new one finds the order.
            if (o.clientID !== undefined && this.#byClientID.get(o.clientID) === o.id) this.#byClientID.delete(o.clientID);
            o.clientID = intent.clientExtensions.id;
            if (o.clientID !== undefined) this.#byClientID.set(o.clientID, o.id);
          }
          this.#tx.emit(d);
        } else if (intent.tradeSpecifier !== undefined) {
          const t = this.#findTrade(intent.tradeSpecifier);
          if (!t) {
            this.#reject('TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT', { tradeID: intent.tradeSpecifier }, 'TRADE_DOESNT_EXIST');
            return;
          }
          this.#tx.emit({ type: 'TRADE_CLIENT_EXTENSIONS_MODIFY', tradeID: t.id, tradeClientExtensionsModify: intent.tradeClientExtensions ?? intent.clientExtensions ?? {} });
        }
        return;
      }
      default:
        assertNever(intent, 'intent');
    }
  }

  /** What `checkOrder` reads of this account: the instruments, the clock, the open trades. */
  readonly #orderEnv: OrderEnv;

  #findOrder(spec: string): SimOrder | undefined {
    const id = spec.startsWith('@') ? this.#byClientID.get(spec.slice(1)) : spec;
    return id === undefined ? undefined : this.#orders.get(id);
  }

  #findTrade(spec: string): LedgerTrade | undefined {
    if (!spec.startsWith('@')) return this.ledger.trades.get(spec);
    const cid = spec.slice(1);
    for (const t of this.ledger.trades.values()) if (t.clientExtensions?.id === cid) return t;
    return undefined;
  }

  #submitOrder(request: OrderRequest, replaces: SimOrder | undefined): void {
    const check = checkOrder(request, this.#orderEnv);
    const r = check.request as OrderRequest & Record<string, unknown> & { instrument?: string; tradeID?: string; clientExtensions?: ClientExtensions };
    let reason = check.ok ? undefined : check.reason;
    const inst = check.ok ? check.instrument : undefined;
    const cid = r.clientExtensions?.id;
    if (!reason && cid !== undefined && this.#byClientID.has(cid) && this.#byClientID.get(cid) !== replaces?.id) reason = 'CLIENT_ORDER_ID_ALREADY_EXISTS';
    let trade: LedgerTrade | undefined;
    if (!reason && check.ok && check.tradeID !== undefined) {
      trade = this.ledger.trades.get(check.tradeID)!;
      if (!replaces) {
        const slot = r.type === 'TAKE_PROFIT' ? trade.takeProfitOrderID : r.type === 'STOP_LOSS' ? trade.stopLossOrderID : r.type === 'TRAILING_STOP_LOSS' ? trade.trailingStopLossOrderID : trade.guaranteedStopLossOrderID;
        if (slot !== undefined) reason = `${r.type}_ORDER_ALREADY_EXISTS` as TransactionRejectReason;
      }
    }
    this.#tx.begin();
    if (reason) {
      const { type, ...rest } = r;
      this.#reject(`${type}_ORDER_REJECT`, { ...rest, reason: replaces ? 'REPLACEMENT' : 'CLIENT_ORDER' }, reason);
      return;
    }
    let replacement: { cancellingTransactionID: string; replacesOrderID: string } | undefined;
    if (replaces) {
      const cancelID = this.#tx.peekID();
      this.#cancelOrder(replaces, 'CLIENT_REQUEST_REPLACED', String(Number(cancelID) + 1));
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
      if (m.trailingStopLossOnFill !== undefined) q.trailingStopLossOnFill = details(m.trailingStopLossOnFill, inst);
      if (m.guaranteedStopLossOnFill !== undefined) q.guaranteedStopLossOnFill = details(m.guaranteedStopLossOnFill, inst);
      if (m.tradeClientExtensions !== undefined) q.tradeClientExtensions = m.tradeClientExtensions;
      this.#queueMarket(m.instrument, q, cid);
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
    if (type !== 'TAKE_PROFIT' && type !== 'STOP_LOSS' && type !== 'TRAILING_STOP_LOSS' && type !== 'GUARANTEED_STOP_LOSS') {
      draft.positionFill = (r.positionFill as string | undefined) ?? 'DEFAULT';
    }
    if (r.price !== undefined && inst) draft.price = inst.price(Number(r.price));
    if (r.gtdTime !== undefined) draft.gtdTime = formatTime(parseRequestTime(r.gtdTime as string));
    // MARKET_IF_TOUCHED: the order records its initialMarketPrice (v20's MarketIfTouchedOrder), the
    // MARKET_IF_TOUCHED_ORDER transaction does not (its definition has no such field): #track takes it
    // from the current quote, as the sandbox's order view does.
    if (replacement) Object.assign(draft, replacement);
    const tx = this.#tx.emit(draft);
    this.#track(tx, this.#arrival());
  }

  #queueMarket(instrument: string, request: MarketRequest, clientID: string | undefined): void {
    if (this.#halted(this.#now, this.#book(instrument).instrument)) {
      // v20 creates the order and cancels it in the same batch: there is no price to fill at.
      this.#tx.begin();
      const created = this.#tx.emit({ type: 'MARKET_ORDER', ...request });
      this.stats.halted++;
      this.#cancelFill(created.id, clientID, 'MARKET_HALTED');
      return;
    }
    this.#book(instrument).market.push({ clientID, request, activeFrom: this.#arrival() });
  }

  /** Set, replace (object) or cancel (null) a trade's dependent orders: v20's "trade orders" call. */
  #tradeOrders(intent: Extract<OrderIntent, { kind: 'tradeOrders' }>): void {
    const trade = this.#findTrade(intent.tradeSpecifier);
    this.#tx.begin();
    if (!trade) {
      const spec = intent.tradeSpecifier;
      this.#reject('TAKE_PROFIT_ORDER_REJECT', { ...(spec.startsWith('@') ? { clientTradeID: spec.slice(1) } : { tradeID: spec }), reason: 'CLIENT_ORDER' }, 'TRADE_DOESNT_EXIST');
      return;
    }
    const slots = [
      ['TAKE_PROFIT', intent.takeProfit, trade.takeProfitOrderID],
      ['STOP_LOSS', intent.stopLoss, trade.stopLossOrderID],
      ['TRAILING_STOP_LOSS', intent.trailingStopLoss, trade.trailingStopLossOrderID],
      ['GUARANTEED_STOP_LOSS', intent.guaranteedStopLoss, trade.guaranteedStopLossOrderID],
    ] as const;
    const inst = this.#instruments.get(trade.instrument);
    for (const [type, details, existingID] of slots) {
      if (details === undefined) continue;
      const existing = existingID !== undefined ? this.#orders.get(existingID) : undefined;
      if (details === null) {
        if (existing) this.#cancelOrder(existing, 'CLIENT_REQUEST');
        continue;
      }
      // The same check as an order created or replaced by ID: the trade's instrument decides.
      const check = checkOrder({ ...details, type, tradeID: trade.id } as unknown as OrderRequest, this.#orderEnv);
      if (!check.ok) {
        const { type: _t, ...fields } = check.request as OrderRequest & Record<string, unknown>;
        this.#reject(`${type}_ORDER_REJECT`, { ...fields, reason: existing ? 'REPLACEMENT' : 'CLIENT_ORDER' }, check.reason);
        continue;
      }
      let replacement: Record<string, string> = {};
      if (existing) {
        const cancelID = this.#tx.peekID();
        this.#cancelOrder(existing, 'CLIENT_REQUEST_REPLACED', String(Number(cancelID) + 1));
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
      const tx = this.#tx.emit(draft);
      this.#track(tx, this.#arrival());
    }
  }

  /** When an order decided now reaches the server (latency.ts): the prices it may act on start there. */
  #arrival(): UnixMs {
    return this.#latency === NO_LATENCY ? this.#now : this.#now + this.#latency.next();
  }

  /** The models this simulator uses, by name (for the report and the run folder). */
  get models(): { readonly path: string; readonly slippage: string; readonly latency: string; readonly commission: string } {
    return { path: this.#opts.path ?? 'adaptive', slippage: this.#slippage.name, latency: this.#latency.name, commission: this.#commission.name };
  }

  /** Builds the simulator's working order from a create transaction (book.ts) and files it in its book. */
  #track(tx: Transaction, activeFrom: UnixMs): void {
    const tradeID = (tx as { tradeID?: string }).tradeID;
    const trade = tradeID !== undefined ? this.ledger.trades.get(tradeID) : undefined;
    const last = this.#lastBook;
    const name = trade ? trade.instrument : (tx as { instrument?: string }).instrument!;
    // The instrument of the last price is nearly always the order's: its quote and book are kept.
    const instrument = last !== undefined && last.instrument.name === name ? last.instrument : this.#instruments.get(name);
    const q = instrument.name === this.#lastQuoteName ? this.#lastQuote : this.#quotes.get(instrument.name);
    const o = workingOrder(tx, instrument, trade, q, this.#now, activeFrom);
    this.#orders.set(o.id, o);
    if (o.clientID !== undefined) this.#byClientID.set(o.clientID, o.id);
    (last !== undefined && last.instrument === instrument ? last : this.#book(instrument.name)).orders.push(o);
    if (o.expiresAt < this.#nextExpiry) this.#nextExpiry = o.expiresAt;
  }

  #untrack(o: SimOrder): void {
    o.live = false;
    this.#orders.delete(o.id);
    if (o.clientID !== undefined && this.#byClientID.get(o.clientID) === o.id) this.#byClientID.delete(o.clientID);
    const last = this.#lastBook;
    const list = last !== undefined && last.instrument === o.instrument ? last.orders : this.#books.get(o.instrument.name)?.orders;
    if (list) removeOrder(list, o);
  }

  #cancelOrder(o: SimOrder, reason: OrderCancelReason, replacedBy?: string): void {
    this.#untrack(o);
    if (o.clientID === undefined && replacedBy === undefined) {
      // The common cancel as one literal, #emit's stamp included (same fields, same order): one
      // object shape, no property added afterwards.
      this.stats.cancels++;
      const id = this.#tx.takeID();
      this.#tx.publish({ type: 'ORDER_CANCEL', orderID: o.id, reason, id, time: this.#tx.timeText(), userID: 1, accountID: this.accountID, batchID: this.#tx.batchOr(id) });
      return;
    }
    const d: Draft = { type: 'ORDER_CANCEL', orderID: o.id, reason };
    if (o.clientID !== undefined) d.clientOrderID = o.clientID;
    if (replacedBy !== undefined) d.replacedByOrderID = replacedBy;
    this.stats.cancels++;
    this.#tx.emit(d);
  }

  // ---------------------------------------------------------------------------------------------
  // Fills

  #fillMarket(book: Book, q: QueuedMarket, bid: number, ask: number, t: UnixMs): void {
    this.#tx.begin();
    const r = q.request;
    // A close whose trade disappeared meanwhile (its TP or SL filled first) is rejected, not filled.
    if (r.tradeClose && !this.ledger.trades.has(r.tradeClose.tradeID)) {
      this.#reject('MARKET_ORDER_REJECT', { ...r }, 'TRADE_DOESNT_EXIST');
      return;
    }
    let units = Number(r.units);
    if (r.longPositionCloseout || r.shortPositionCloseout) {
      const pos = this.ledger.position(r.instrument);
      const have = r.longPositionCloseout ? pos.long : -pos.short;
      if (have === 0) {
        this.#reject('MARKET_ORDER_REJECT', { ...r }, 'CLOSEOUT_POSITION_DOESNT_EXIST');
        return;
      }
      if (Math.abs(units) > have) units = r.longPositionCloseout ? -have : have;
    }
    const created = this.#tx.emit(copyFields<Draft>({ type: 'MARKET_ORDER' }, r as unknown as Record<string, unknown>, 'units', String(units)));
    // Liquidity, when the price carries it (ticks with bucket liquidity): FOK fills all or nothing,
    // IOC fills what is there and cancels the rest.
    const available = units > 0 ? this.#liquidity.ask : this.#liquidity.bid;
    let fillUnits = units;
    if (Math.abs(units) > available) {
      if (r.timeInForce !== 'IOC' || available <= 0) {
        this.#cancelFill(created.id, q.clientID, 'INSUFFICIENT_LIQUIDITY');
        return;
      }
      fillUnits = units > 0 ? available : -available;
    }
    this.#execute(book, {
      orderID: created.id,
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
    if (fillUnits !== units) this.#cancelFill(created.id, q.clientID, 'INSUFFICIENT_LIQUIDITY');
  }

  #fillResting(book: Book, o: SimOrder, px: number, bid: number, ask: number, t: UnixMs): void {
    this.#tx.begin();
    const created = o.created as Transaction & Record<string, unknown>;
    if (o.tradeID !== undefined) {
      const trade = this.ledger.trades.get(o.tradeID);
      if (!trade) {
        this.#cancelOrder(o, 'LINKED_TRADE_CLOSED');
        return;
      }
      this.#untrack(o);
      this.#execute(book, {
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
        created,
        tradeClose: { tradeID: trade.id, units: 'ALL' },
        closeout: 0,
        order: o,
      });
      return;
    }
    this.#untrack(o);
    this.#execute(book, {
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

  /**
   * Fills (or cancels) one order at price `px`: plans the trade reductions (FIFO), the opening
   * remainder, checks bounds, margin and on-fill targets, then emits ORDER_FILL, the cancels of the
   * closed trades' dependent orders, and the new trade's on-fill orders, in one batch.
   */
  #execute(
    book: Book,
    a: FillArgs,
  ): void {
    const inst = book.instrument;
    const buy = a.units > 0;
    // Slippage (slippage.ts) on the fills that can slip, against the trader; snapped after.
    const slipping = this.#slippage !== NO_SLIPPAGE && canSlip(a.type);
    const pxNum = inst.snap(slipping ? this.#slippage.slip(a.px, buy ? 1 : -1, a.bid, a.ask, inst) : a.px);
    const price = inst.price(pxNum);
    if (!Number.isNaN(a.priceBound) && (buy ? pxNum > a.priceBound : pxNum < a.priceBound)) {
      this.#cancelFill(a.orderID, a.clientOrderID, 'BOUNDS_VIOLATION');
      return;
    }

    // Plan reductions: a named trade, or the opposite trades oldest first.
    const chunks: { trade: LedgerTrade; units: number }[] = [];
    let remaining = Math.abs(a.units);
    if (a.tradeClose) {
      const trade = this.ledger.trades.get(a.tradeClose.tradeID)!;
      if (this.#opts.fifo === true && this.#account.olderTwin(trade)) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
        return;
      }
      chunks.push({ trade, units: remaining });
      remaining = 0;
    } else {
      const pf = a.positionFill === 'POSITION_DEFAULT' ? 'DEFAULT' : a.positionFill;
      const reduce = a.closeout !== 0 || pf === 'REDUCE_FIRST' || pf === 'REDUCE_ONLY' || (pf === 'DEFAULT' && !this.#hedging);
      if (reduce) {
        for (const t of this.ledger.trades.values()) {
          if (remaining === 0) break;
          if (t.instrument !== inst.name || t.unitsNum > 0 === buy) continue;
          const take = Math.min(remaining, Math.abs(t.unitsNum));
          chunks.push({ trade: t, units: take });
          remaining = roundUnits(remaining - take);
        }
      }
      if (pf === 'REDUCE_ONLY' || a.closeout !== 0) remaining = 0;
      if (this.#opts.fifo === true && pf === 'OPEN_ONLY' && remaining > 0 && this.#account.hasOpposite(inst.name, buy)) {
        // No hedging in a FIFO account: opening against an opposite position is not allowed.
        this.#cancelFill(a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
        return;
      }
    }
    const opening = remaining;
    if (chunks.length === 0 && opening === 0) {
      this.#cancelFill(a.orderID, a.clientOrderID, 'POSITION_CLOSEOUT_FAILED' as OrderCancelReason);
      return;
    }
    const factors = this.#conversion.factors(inst.quote);

    // Checks that apply to the opening part.
    const c = a.created;
    let tpPrice: number | undefined;
    let slPrice: number | undefined;
    let gslPrice: number | undefined;
    if (opening > 0) {
      const tp = c.takeProfitOnFill as { price?: string; distance?: string } | undefined;
      const sl = c.stopLossOnFill as { price?: string; distance?: string } | undefined;
      const gsl = c.guaranteedStopLossOnFill as { price?: string; distance?: string } | undefined;
      if (tp) tpPrice = tp.price !== undefined ? Number(tp.price) : inst.snap(buy ? pxNum + Number(tp.distance) : pxNum - Number(tp.distance));
      if (sl) slPrice = sl.price !== undefined ? Number(sl.price) : inst.snap(buy ? pxNum - Number(sl.distance) : pxNum + Number(sl.distance));
      if (gsl) gslPrice = gsl.price !== undefined ? Number(gsl.price) : inst.snap(buy ? pxNum - Number(gsl.distance) : pxNum + Number(gsl.distance));
      const closing = buy ? a.bid : a.ask;
      if (tpPrice !== undefined && (buy ? tpPrice <= pxNum : tpPrice >= pxNum)) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'TAKE_PROFIT_ON_FILL_LOSS');
        return;
      }
      if ((slPrice !== undefined && (buy ? slPrice >= closing : slPrice <= closing)) || (gslPrice !== undefined && (buy ? gslPrice >= closing : gslPrice <= closing))) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'STOP_LOSS_ON_FILL_LOSS');
        return;
      }
      if (
        this.#opts.fifo === true &&
        (tp !== undefined || sl !== undefined || gsl !== undefined || c.trailingStopLossOnFill !== undefined) &&
        this.#account.sizeTaken(inst.name, opening, chunks)
      ) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'FIFO_VIOLATION');
        return;
      }
      if (gslPrice !== undefined && Math.abs(pxNum - gslPrice) < inst.guaranteedStopLoss.minimumDistance - 1e-12) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'STOP_LOSS_ON_FILL_GUARANTEED_MINIMUM_DISTANCE_NOT_MET');
        return;
      }
      if (!this.#account.marginOk(inst, buy ? opening : -opening, chunks, a.bid, a.ask)) {
        this.#cancelFill(a.orderID, a.clientOrderID, 'INSUFFICIENT_MARGIN');
        return;
      }
    }

    // The ORDER_FILL and its money (fill.ts): exact, one rounding per amount.
    const fillID = this.#tx.peekID();
    const margin = opening > 0 ? this.#account.initialMargin(inst, opening, a.bid, a.ask, factors.gain, factors.loss) : 0;
    const closedTrades: LedgerTrade[] = [];
    const fill = orderFill(a, inst, chunks, opening, buy, pxNum, price, factors, fillID, margin, this.#commission, this.ledger.balance, c.tradeClientExtensions as ClientExtensions | undefined, closedTrades);
    const opened = fill.tradeOpened !== undefined;
    this.#tx.emit(fill);
    this.stats.fills++;
    if (this.#inAmbiguous) this.stats.ambiguousPL = add(this.stats.ambiguousPL, amount(fill.pl as string));

    // The closed trades' remaining dependent orders.
    for (let i = 0; i < closedTrades.length; i++) {
      const t = closedTrades[i]!;
      this.#cancelLinked(t.takeProfitOrderID, a.orderID);
      this.#cancelLinked(t.stopLossOrderID, a.orderID);
      this.#cancelLinked(t.trailingStopLossOrderID, a.orderID);
      this.#cancelLinked(t.guaranteedStopLossOrderID, a.orderID);
    }

    // The new trade's on-fill orders.
    if (opened) {
      const clientTradeID = (c.tradeClientExtensions as ClientExtensions | undefined)?.id;
      if (tpPrice !== undefined) this.#onFillOrder('TAKE_PROFIT_ORDER', fillID, clientTradeID, c.takeProfitOnFill, inst.price(tpPrice), false, undefined, a.t);
      if (slPrice !== undefined) this.#onFillOrder('STOP_LOSS_ORDER', fillID, clientTradeID, c.stopLossOnFill, inst.price(slPrice), true, undefined, a.t);
      if (gslPrice !== undefined) {
        this.#onFillOrder('GUARANTEED_STOP_LOSS_ORDER', fillID, clientTradeID, c.guaranteedStopLossOnFill, inst.price(gslPrice), true, inst.guaranteedStopLoss.premium, a.t);
      }
      if (c.trailingStopLossOnFill !== undefined) this.#onFillOrder('TRAILING_STOP_LOSS_ORDER', fillID, clientTradeID, c.trailingStopLossOnFill, undefined, true, undefined, a.t);
    }
  }

  /** Cancels a closed trade's dependent order `id` (LINKED_TRADE_CLOSED), unless it is the order that just filled. */
  #cancelLinked(id: string | undefined, filledID: string): void {
    if (id === undefined || id === filledID) return;
    const o = this.#orders.get(id);
    if (o) this.#cancelOrder(o, 'LINKED_TRADE_CLOSED');
  }

  /**
   * Creates one on-fill dependent order (reason ON_FILL) from its details, field by field (no
   * spreads on the fill path): timeInForce GTC by default, gtdTime in v20's form.
   */
  #onFillOrder(
    type: string,
    fillID: string,
    clientTradeID: string | undefined,
    x: unknown,
    price: string | undefined,
    keepDistance: boolean,
    premium: string | undefined,
    at: UnixMs,
  ): void {
    const d = x as { distance?: string; timeInForce?: string; gtdTime?: string; clientExtensions?: ClientExtensions };
    const draft: Draft = { type, tradeID: fillID, reason: 'ON_FILL', orderFillTransactionID: fillID };
    if (clientTradeID !== undefined) draft.clientTradeID = clientTradeID;
    draft.timeInForce = d.timeInForce ?? 'GTC';
    if (d.gtdTime !== undefined) draft.gtdTime = formatTime(parseRequestTime(d.gtdTime));
    if (d.clientExtensions !== undefined) draft.clientExtensions = d.clientExtensions;
    if (d.distance !== undefined && keepDistance) draft.distance = d.distance;
    if (price !== undefined) draft.price = price;
    if (premium !== undefined) draft.guaranteedExecutionPremium = premium;
    draft.triggerCondition = 'DEFAULT';
    this.#track(this.#tx.emit(draft), at);
  }

  /** NAV and margin used at the latest quotes (account.ts). */
  accountState(): { nav: number; marginUsed: number } {
    return this.#account.state();
  }

  /** Margin call enter/exit, and the margin closeout when NAV reaches half the margin used. */
  #checkMargin(instrument: string): void {
    const verdict = this.#account.check();
    if (verdict === undefined) return;
    if (verdict === 'closeout') {
      this.#closeout(instrument);
      return;
    }
    if (verdict === 'call' && !this.#marginCall) {
      this.#marginCall = true;
      this.#tx.begin();
      this.#tx.emit({ type: 'MARGIN_CALL_ENTER' });
    } else if (verdict === 'ok' && this.#marginCall) {
      this.#marginCall = false;
      this.#tx.begin();
      this.#tx.emit({ type: 'MARGIN_CALL_EXIT' });
    }
  }

  /**
   * Margin closeout: every position is closed at the current prices with market orders of reason
   * MARGIN_CLOSEOUT (fills MARKET_ORDER_MARGIN_CLOSEOUT), long and short sides separately.
   */
  #closeout(trigger: string): void {
    this.stats.marginCloseouts++;
    const instruments = [...new Set([...this.ledger.trades.values()].map((t) => t.instrument))];
    // The instrument whose price triggered it first, then the others in the order of their trades.
    instruments.sort((a, b) => (a === trigger ? -1 : b === trigger ? 1 : 0));
    for (const name of instruments) {
      const q = this.#quotes.get(name);
      if (!q) continue;
      const book = this.#book(name);
      const { long, short } = this.ledger.position(name);
      for (const side of [1, -1] as const) {
        const have = side === 1 ? long : -short;
        if (have === 0) continue;
        this.#tx.begin();
        const units = side === 1 ? -have : have;
        const created = this.#tx.emit({
          type: 'MARKET_ORDER',
          instrument: name,
          units: String(units),
          timeInForce: 'FOK',
          positionFill: 'REDUCE_ONLY',
          reason: 'MARGIN_CLOSEOUT',
          marginCloseout: { reason: 'MARGIN_CHECK_VIOLATION' },
        });
        this.#execute(book, {
          orderID: created.id,
          clientOrderID: undefined,
          type: 'MARKET',
          units,
          positionFill: 'REDUCE_ONLY',
          priceBound: Number.NaN,
          bid: q.bid,
          ask: q.ask,
          px: units < 0 ? q.bid : q.ask,
          t: this.#now,
          created: {},
          tradeClose: undefined,
          closeout: side,
          order: undefined,
          marginCloseout: true,
        });
      }
    }
    if (this.#marginCall) {
      this.#marginCall = false;
      this.#tx.begin();
      this.#tx.emit({ type: 'MARGIN_CALL_EXIT' });
    }
  }

  /** Cancels an order at fill time (bounds, margin, on-fill checks): the order existed, it cannot fill. */
  #cancelFill(orderID: string, clientOrderID: string | undefined, reason: OrderCancelReason): void {
    const d: Draft = { type: 'ORDER_CANCEL', orderID, reason };
    if (clientOrderID !== undefined) d.clientOrderID = clientOrderID;
    this.stats.cancels++;
    this.#tx.emit(d);
  }

  // ---------------------------------------------------------------------------------------------
  // Transactions (built by transactions.ts)

  #reject(type: string, fields: Record<string, unknown>, rejectReason: TransactionRejectReason): void {
    this.stats.rejects++;
    this.#tx.emit({ ...fields, type, rejectReason });
  }

  /**
   * Calls `listener` with every transaction from now on, synchronously, in ID order, as
   * `transactions$` delivers them but without an rxjs Subscriber per delivery (the backtest's
   * engine folds about five transactions per fill through this). Returns the function that stops it.
   * A listener that throws stops the emission: the error reaches whoever fed the price or intent.
   */
  listen(listener: (tx: Transaction) => void): () => void {
    return this.#tx.listen(listener);
  }

  /** Ends the run: completes the transaction stream. */
  complete(): void {
    if (this.#completed) return;
    this.#completed = true;
    const subs = this.#completers;
    this.#completers = [];
    this.#tx.clear();
    for (const sub of subs) sub.complete();
  }

  // ---------------------------------------------------------------------------------------------
  // Seeding: an existing account instead of an empty one (once, before the first event)

  /**
   * Starts the simulator from an existing account rather than an empty one: its open trades
   * (signed units, price, open time, realized P/L, financing, client extensions), their dependent
   * TP/SL/trailing/guaranteed stops, its pending orders and its balance, as v20 reports them
   * (`GET /accounts/{id}`, or a `snapshot()` of a simulator), then, optionally, the transactions
   * that followed that state (a journal's), folded in order.
   *
   * v20 semantics are kept: trades and orders keep their IDs (later transactions and intents name
   * them), dependent and pending orders rest in the books and trigger like any other (trailing
   * stops from their `trailingStopValue` when given), and the simulator's transaction IDs continue
   * after the account's last one, so they never collide with the account's. `start` then opens no
   * new account (no CREATE, no deposit); financing is charged from the first 17:00 New York
   * rollover after `time` (default: the last folded transaction's time, else the state's `time`,
   * else the first price). A folded MARKET order whose fill was never recorded (a crash between the
   * two) is cancelled at start (INTERNAL_SERVER_ERROR): v20 never leaves one pending. Transactions do
   * not record a trailing stop's ratchet: `trailing` (from `trailingStopValues()`) restores the
   * levels; without it, a trailing stop created by a folded transaction starts again from its
   * trade's open price (or the latest price given in `state.quotes`) and ratchets from there.
   *
   * How: see `restoreAccount` (seed.ts). Pending orders are folded as their create transactions
   * through `Ledger.apply`; trades and account totals, which no single transaction expresses, are
   * restored directly; the books are then built from the ledger's pending orders by the same code
   * that files a new order. Runs once: nothing is added to the per-price or per-fill paths.
   *
   * Throws `SimSeedError` (naming the field) on a broken state, or when called after the simulator
   * started or a second time.
   */
  seed(state: SimAccountState, o: { readonly transactions?: readonly Transaction[]; readonly time?: UnixMs; readonly trailing?: Readonly<Record<string, string>> } = {}): void {
    if (this.#started || this.#seeded || this.ledger.applied > 0) throw new SimSeedError('seed: call it once, on a new simulator, before its first event or intent');
    const { trailing } = restoreAccount(this.ledger, state, this.#instruments, this.accountID);
    for (const [i, q] of (state.quotes ?? []).entries()) {
      if (!this.#instruments.has(q.instrument) || !(q.bid > 0 && q.ask >= q.bid)) throw new SimSeedError(`account state.quotes[${i}]: ${JSON.stringify(q)} is not a price of a known instrument (bid > 0, ask >= bid)`);
      this.#setQuote(q.instrument, q.bid, q.ask);
    }
    let lastTime = '';
    for (const t of o.transactions ?? []) if (this.ledger.apply(t)) lastTime = t.time;
    for (const lo of this.ledger.pendingOrders.values()) {
      if (lo.type === 'MARKET' || lo.type === 'FIXED_PRICE') {
        this.#unfilled.push(lo.id);
        continue;
      }
      // Filed as when it was created: its expiry (GFD: the rollover after its creation) and its
      // activity from its creation time.
      const created = parseTime(lo.created.time);
      this.#now = Number.isFinite(created) ? created : -Infinity;
      this.#track(lo.created, this.#now);
      const so = this.#orders.get(lo.id)!;
      const level = trailing.get(lo.id);
      if (level !== undefined) so.level = level;
      const cid = lo.clientExtensions?.id;
      if (so.clientID !== cid) {
        // Client extensions modified since the order was created: the ledger has the current ones.
        if (so.clientID !== undefined && this.#byClientID.get(so.clientID) === so.id) this.#byClientID.delete(so.clientID);
        so.clientID = cid;
        if (cid !== undefined) this.#byClientID.set(cid, so.id);
      }
    }
    // Trailing levels known from elsewhere (a journal's `trailingStopValues()`): a level is a price
    // the order's ratchet reached, so it is kept where it is in the trade's favour of the one filed.
    for (const id in o.trailing) {
      const so = this.#orders.get(id);
      const level = Number(o.trailing[id]);
      if (so !== undefined && so.type === 'TRAILING_STOP_LOSS' && (so.side === -1 ? level > so.level : level < so.level)) so.level = level;
    }
    this.#lastBook = undefined;
    this.#tx.nextID = Number(this.ledger.lastTransactionID) + 1;
    this.#marginCall = this.ledger.marginCall;
    const stateTime = state.time !== undefined ? parseTime(state.time) : Number.NaN;
    this.#seedTime = o.time ?? (lastTime !== '' ? parseTime(lastTime) : stateTime);
    // The clock until the first price: the latest time the state shows (an intent submitted before
    // any price starts the simulator there, never at the epoch).
    let floor = Number.isFinite(this.#seedTime) ? this.#seedTime : -Infinity;
    for (const t of this.ledger.trades.values()) if (t.openMs > floor) floor = t.openMs;
    for (const so of this.#orders.values()) if (so.activeFrom > floor) floor = so.activeFrom;
    this.#now = floor;
    this.#seeded = true;
  }

  /** `start` of a seeded simulator: the clock, the financing schedule, and unfilled market orders cancelled. */
  #resume(at: UnixMs): void {
    const from = Number.isFinite(this.#seedTime) && this.#seedTime < at ? this.#seedTime : at;
    if (this.#opts.financing !== false) this.#nextRollover = nextRollover(from);
    for (const id of this.#unfilled) {
      this.#tx.begin();
      this.#cancelFill(id, this.ledger.pendingOrders.get(id)?.clientExtensions?.id, 'INTERNAL_SERVER_ERROR');
    }
    this.#unfilled = [];
  }

  /**
   * The simulated account in v20's Account form (the fields `seed` reads): open trades as
   * TradeSummaries, pending orders (trailing stops with their current `trailingStopValue`), totals,
   * the last transaction ID, the clock and the latest prices. `seed(snapshot())` on a new simulator continues exactly
   * where this one is, except for market orders still waiting for their next price (they are not
   * pending orders in v20 either: take a snapshot when `queuedMarketOrders()` is 0).
   */
  snapshot(): SimAccountState {
    const l = this.ledger;
    const orders = [];
    for (const lo of l.pendingOrders.values()) {
      if (lo.type === 'MARKET' || lo.type === 'FIXED_PRICE') continue;
      const so = this.#orders.get(lo.id);
      const o = orderOf(lo, so !== undefined && so.type === 'TRAILING_STOP_LOSS' ? so.instrument.price(so.level) : undefined);
      // A restored MIT must face the way it did: its reference price travels with the snapshot
      // (the MARKET_IF_TOUCHED_ORDER transaction has no initialMarketPrice to rebuild it from).
      orders.push(so?.initialMarketPrice !== undefined ? ({ ...o, initialMarketPrice: so.instrument.price(so.initialMarketPrice) } as typeof o) : o);
    }
    const positions = [];
    for (const [instrument, pl] of l.instrumentPL) positions.push({ instrument, pl: formatAmount(pl) });
    const quotes = [];
    for (const [instrument, q] of this.#quotes) quotes.push({ instrument, bid: q.bid, ask: q.ask });
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
      ...(Number.isFinite(this.#now) ? { time: formatTime(this.#now) } : {}),
      quotes,
    };
  }

  /**
   * The current level of every pending trailing stop (order ID → price text, v20's
   * `trailingStopValue`), or undefined when there is none: the part of the simulator's state that
   * its transactions do not record. `seed({ ..., trailing })` takes it back.
   */
  trailingStopValues(): Record<string, string> | undefined {
    let out: Record<string, string> | undefined;
    for (const so of this.#orders.values()) {
      if (so.type !== 'TRAILING_STOP_LOSS') continue;
      out ??= {};
      out[so.id] = so.instrument.price(so.level);
    }
    return out;
  }

  /**
   * Market orders (client orders, trade and position closes) waiting for the next price of
   * `instrument`, or of any instrument. They have no transaction yet: their outcome comes with that
   * price. For callers that must know when an intent has its outcome (the runner's journal).
   */
  queuedMarketOrders(instrument?: string): number {
    if (instrument !== undefined) return this.#books.get(instrument)?.market.length ?? 0;
    let n = 0;
    for (const b of this.#books.values()) n += b.market.length;
    return n;
  }

  // ---- Read views for the sandbox (owned by the sandbox)
  /** The sandbox's PATCH /configuration: one CLIENT_CONFIGURE transaction; a new margin rate applies at once. */
  sandboxConfigure(fields: { alias?: string; marginRate?: string }): void {
    if (!this.#started) this.start(Number.isFinite(this.#now) ? this.#now : 0);
    this.#tx.begin();
    const d: Draft = { type: 'CLIENT_CONFIGURE' };
    if (fields.alias !== undefined) d.alias = fields.alias;
    if (fields.marginRate !== undefined) {
      const rate = Number(fields.marginRate);
      if (!(rate > 0 && rate <= 1)) throw new RangeError(`marginRate must be a decimal in (0, 1], got '${fields.marginRate}'`);
      d.marginRate = fields.marginRate;
      // As at OANDA: margin used, margin available, the margin check of later fills, margin calls
      // and the closeout all use the new rate from now on (the stricter of it and the instrument's).
      this.#account.marginRate = rate;
    }
    this.#tx.emit(d);
    // The account is checked at once (margin call, or closeout at half): the check is account-wide.
    const first = fields.marginRate !== undefined ? this.ledger.trades.values().next().value : undefined;
    if (first !== undefined) this.#checkMargin(first.instrument);
  }

  /** The current level of a pending trailing stop loss (v20 trailingStopValue), or undefined. */
  sandboxTrailingStopValue(orderID: string): string | undefined {
    const o = this.#orders.get(orderID);
    return o && o.type === 'TRAILING_STOP_LOSS' ? o.instrument.price(o.level) : undefined;
  }
  // ---- end of the sandbox's block
}

/** On-fill details as a dependent order's fields: GTC by default, gtdTime in v20's form, price at the instrument's precision. */
/** The v20 `ORDER_CANCEL_REJECT` fields of an order specifier: `orderID`, or `clientOrderID` for `@clientID`. */
function cancelRejectFields(spec: string): Record<string, unknown> {
  return spec.startsWith('@') ? { clientOrderID: spec.slice(1) } : { orderID: spec };
}

function details(x: unknown, inst?: Instrument): Record<string, unknown> {
  // Field by field, in the request's order: a spread followed by an added field costs ~20× more here.
  const d = copyFields<Record<string, unknown>>({}, x as Record<string, unknown>);
  if (d.timeInForce === undefined) d.timeInForce = 'GTC';
  if (typeof d.gtdTime === 'string') d.gtdTime = formatTime(parseRequestTime(d.gtdTime));
  if (inst !== undefined && typeof d.price === 'string') d.price = inst.price(Number(d.price));
  return d;
}

/**
 * Copies `src`'s own fields into `into`, in their order, as a spread would (`{ ...into, ...src }`),
 * optionally replacing field `key` by `value` in place (or appending it). Used on the fill path,
 * where spreads into a literal that is then extended are slow; Object.assign is V8's fast copy.
 */
function copyFields<T extends Record<string, unknown>>(into: T, src: Record<string, unknown>, key?: string, value?: unknown): T {
  const out = Object.assign(into, src) as Record<string, unknown>;
  if (key !== undefined) out[key] = value;
  return into;
}


// The New York boundaries (weekend closure, 17:00 rollover) come from new-york.ts: integer
// arithmetic on cached zone offsets, property-checked against luxon DateTimes there.
export { nextRollover, weekendClosure };
