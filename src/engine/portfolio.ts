import { nextRollover } from '../domain/new-york.ts';
import { amount, toUnits, type Amount } from '../domain/money.ts';
import type { MarketEvent } from '../domain/events.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { Ledger, type LedgerTrade } from '../domain/ledger.ts';
import { parseTime, type UnixMs } from '../domain/time.ts';
import type { TransactionNote } from '../domain/transaction-note.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { HomeConversion, type Quote } from '../domain/conversion.ts';

/** One point of the equity curve (home currency). */
export interface EquityPoint {
  readonly time: UnixMs;
  readonly balance: number;
  readonly nav: number;
}

/** A trade that was closed in full, with its total realized P/L. */
export interface ClosedTrade {
  readonly id: string;
  readonly instrument: string;
  readonly units: number;
  readonly openPrice: number;
  readonly closePrice: number;
  readonly openTime: UnixMs;
  readonly closeTime: UnixMs;
  readonly realizedPL: number;
  readonly financing: number;
  /** Why it closed (what the closing fill's `reason` says), or END_OF_RUN for a trade still open at the end. */
  readonly exitReason: ExitReason;
  /** Half-spread cost of its opening and closing fills (account currency, a cost > 0). */
  readonly spreadCost: number;
  /** Its share of the commission of those fills (account currency). */
  readonly commission: number;
  /**
   * Maximum adverse excursion: the lowest P/L the trade showed while open (account currency, ≤ 0),
   * from the bid/ask highs and lows of the candles (or the ticks) marked while it was open, and its exit.
   */
  readonly mae: number;
  /** Maximum favourable excursion: the highest P/L it showed while open (account currency, ≥ 0), likewise. */
  readonly mfe: number;
  /** Run-up: the largest move of the price in the trade's favour from its entry, in % of the entry price (≥ 0). */
  readonly runUpPct: number;
}

/**
 * Why a trade closed: its take profit, stop loss, guaranteed stop loss or trailing stop triggered; the
 * strategy closed it (closeTrade or closePosition); an order of the strategy in the other direction
 * reduced it to nothing (netting); a margin closeout; or the run ended with it open (END_OF_RUN: marked
 * at the last price, not closed).
 */
export type ExitReason =
  | 'TAKE_PROFIT'
  | 'STOP_LOSS'
  | 'GUARANTEED_STOP_LOSS'
  | 'TRAILING_STOP'
  | 'STRATEGY_CLOSE'
  | 'STRATEGY_ORDER'
  | 'MARGIN_CLOSEOUT'
  | 'END_OF_RUN';

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** The exit reason of a fill's `reason` (v20 OrderFillReason). */
export function exitReasonOf(fillReason: string): ExitReason {
  switch (fillReason) {
    case 'TAKE_PROFIT_ORDER':
      return 'TAKE_PROFIT';
    case 'STOP_LOSS_ORDER':
      return 'STOP_LOSS';
    case 'GUARANTEED_STOP_LOSS_ORDER':
      return 'GUARANTEED_STOP_LOSS';
    case 'TRAILING_STOP_LOSS_ORDER':
      return 'TRAILING_STOP';
    case 'MARKET_ORDER_MARGIN_CLOSEOUT':
      return 'MARGIN_CLOSEOUT';
    case 'MARKET_ORDER_TRADE_CLOSE':
    case 'MARKET_ORDER_POSITION_CLOSEOUT':
    case 'MARKET_ORDER_DELAYED_TRADE_CLOSE':
      return 'STRATEGY_CLOSE';
    default:
      return 'STRATEGY_ORDER';
  }
}

/** Closed-trade figures of one group (an instrument, a direction). */
export interface GroupStats {
  trades: number;
  wins: number;
  losses: number;
  /** Realized P/L, financing included (account currency). */
  pl: number;
  grossProfit: number;
  grossLoss: number;
  spreadCost: number;
  financing: number;
  commission: number;
}

const newGroup = (): GroupStats => ({
  trades: 0,
  wins: 0,
  losses: 0,
  pl: 0,
  grossProfit: 0,
  grossLoss: 0,
  spreadCost: 0,
  financing: 0,
  commission: 0,
});

function addToGroup(
  g: GroupStats,
  pl: number,
  spreadCost: number,
  financing: number,
  commission: number,
): void {
  g.trades++;
  if (pl > 0) {
    g.wins++;
    g.grossProfit += pl;
  } else {
    g.losses++;
    g.grossLoss += pl;
  }
  g.pl += pl;
  g.spreadCost += spreadCost;
  g.financing += financing;
  g.commission += commission;
}

/** What the report needs of the closed trades, kept as they close (the list itself is optional). */
export interface ClosedTradeStats {
  count: number;
  wins: number;
  losses: number;
  grossProfit: number;
  grossLoss: number;
  largestWin: number;
  largestLoss: number;
  /** Sum of the trades' holding times. */
  heldMs: number;
  /** By direction of the trade (initial units > 0: long). */
  readonly long: GroupStats;
  readonly short: GroupStats;
  /** By instrument, in the order they first closed a trade. */
  readonly byInstrument: Map<string, GroupStats>;
  /** How many trades closed for each exit reason. */
  readonly exitReasons: Map<ExitReason, number>;
}

/** The price at which an ORDER_FILL closed trade `id` (its TradeReduce's, else the fill's). */
function closePriceOf(tx: Extract<Transaction, { type: 'ORDER_FILL' }>, id: string): string {
  const closed = tx.tradesClosed;
  if (closed !== undefined)
    for (let i = 0; i < closed.length; i++)
      if (closed[i]!.tradeID === id) return closed[i]!.price ?? tx.price ?? '';
  if (tx.tradeReduced?.tradeID === id) return tx.tradeReduced.price ?? tx.price ?? '';
  return tx.price ?? '';
}

/** The time of a transaction's text, or a note's. */
const timeOf = (time: string | TransactionNote): UnixMs =>
  typeof time === 'string' ? parseTime(time) : time.at;

/**
 * The engine's account view: the transaction fold (`Ledger`) plus marks to market.
 *
 * Money comes only from transactions (exact decimals in the ledger). Marks are numbers: on every
 * price the portfolio updates its quote, the NAV, the running peak and the maximum drawdown. The
 * equity curve keeps one point per FX trading day (the last NAV of the day ending 17:00 New York,
 * as OANDA's daily candles and financing; daily returns, Sharpe, Sortino, the deflated Sharpe and
 * PBO are computed on them) plus the first and last marks, so its
 * size grows with the length of the period, never with the number of candles.
 */
export class Portfolio {
  readonly ledger: Ledger;
  /** The initial deposit (exact, 1/10,000 units). */
  readonly initialBalance: Amount;
  readonly #quotes = new Map<string, Quote>();
  readonly #conversion: HomeConversion;
  readonly #instruments: InstrumentRegistry;
  readonly #quoteCurrency = new Map<string, string>();
  readonly equity: EquityPoint[] = [];
  /** Every trade closed in full, in closing order; empty when the portfolio keeps only `tradeStats`. */
  readonly closedTrades: ClosedTrade[] = [];
  /** The closed trades' figures for the report, whether or not the list is kept. */
  readonly tradeStats: ClosedTradeStats = {
    count: 0,
    wins: 0,
    losses: 0,
    grossProfit: 0,
    grossLoss: 0,
    largestWin: 0,
    largestLoss: 0,
    heldMs: 0,
    long: newGroup(),
    short: newGroup(),
    byInstrument: new Map(),
    exitReasons: new Map(),
  };
  /** Called with each trade as it closes (a backtest writes trades.csv from it). */
  onClosedTrade: ((t: ClosedTrade) => void) | undefined = undefined;
  /** Market events marked so far: a view computed from the quotes holds until this moves (ctx.position caches by it). */
  marks = 0;
  /** Called with each point as it joins the equity curve (the run folder writes equity.csv as they come). */
  onEquityPoint: ((p: EquityPoint) => void) | undefined = undefined;
  readonly #keepClosedTrades: boolean;
  #balance = 0;
  #lastName = '';
  #lastQuote: Quote | undefined = undefined;
  #lastQuoteOfName = '';
  #lastQuoteOf = '';
  #trades: LedgerTrade[] = [];
  #tradesVersion = -1;
  #nav = 0;
  #peak = -Infinity;
  maxDrawdown = 0;
  maxDrawdownPct = 0;
  #dayEnd = -Infinity;
  #lastTime: UnixMs = Number.NaN;
  #firstTime: UnixMs = Number.NaN;
  #exposedSince: UnixMs = Number.NaN;
  exposureMs = 0;
  readonly #shared: boolean;
  /** The last transaction ID seen (shared mode: the ledger's own check cannot tell). */
  #seenID: number;
  /** Whether no trade was open after the last transaction. */
  #flat: boolean;
  /** Per open trade: [lowest P/L, highest P/L (account currency), best favourable price move], updated on every mark. */
  readonly #excursions = new Map<string, Float64Array>();

  /**
   * `ledger`: fold into this ledger (the default: a new one). `shared`: the ledger is folded by its
   * owner, which hands each transaction to the portfolio after folding it (the simulated broker in a
   * backtest: the account it keeps is the same fold, so it is not done twice); the portfolio then
   * only keeps its own views (closed trades, exposure, balance) and ignores IDs it has seen.
   */
  constructor(opts: {
    currency: string;
    instruments: InstrumentRegistry;
    initialBalance: string;
    strict?: boolean;
    ledger?: Ledger;
    shared?: boolean;
    keepClosedTrades?: boolean;
  }) {
    if (opts.shared === true && opts.ledger === undefined)
      throw new Error('Portfolio: shared needs the ledger it shares');
    this.ledger = opts.ledger ?? new Ledger({ currency: opts.currency, strict: opts.strict ?? true });
    this.#shared = opts.shared === true;
    // A long backtest closes trades by the hundred thousand: kept as objects they are most of what
    // the run holds, and V8 sizes its heap at a few times that (peak memory would grow with the run).
    this.#keepClosedTrades = opts.keepClosedTrades !== false;
    this.#seenID = Number(this.ledger.lastTransactionID);
    this.#flat = this.ledger.trades.size === 0;
    this.initialBalance = amount(opts.initialBalance);
    this.#instruments = opts.instruments;
    this.#conversion = new HomeConversion(opts.currency, this.#quotes);
  }

  get currency(): string {
    return this.ledger.currency;
  }

  /** Latest quote of an instrument. */
  quote(instrument: string): Quote | undefined {
    return this.#quotes.get(instrument);
  }

  /**
   * Folds one transaction (duplicates are ignored). Returns false for a transaction already seen.
   * Closed trades are recorded after the fold, from the trades the ledger removed.
   */
  apply(tx: Transaction): boolean {
    const ledger = this.ledger;
    if (this.#shared) {
      const id = Number(tx.id);
      if (!(id > this.#seenID)) return false;
      this.#seenID = id;
    } else {
      this.#flat = ledger.trades.size === 0;
      if (!ledger.apply(tx)) return false;
    }
    if (tx.type === 'ORDER_FILL' && ledger.closed.length > 0)
      this.#recordClosures(parseTime(tx.time), tx.reason, Number.NaN, tx);
    this.#afterFold(tx.time);
    return true;
  }

  /**
   * `apply` of a note (domain/transaction-note.ts). Sharing its owner's ledger, the portfolio reads
   * only the note's numbers (the simulator's fills need no object); folding its own, it folds the
   * note's transaction.
   */
  applyNote(n: TransactionNote): boolean {
    if (!this.#shared) return this.apply(n.transaction());
    const id = n.idNum;
    if (!(id > this.#seenID)) return false;
    this.#seenID = id;
    if (n.type === 'ORDER_FILL' && this.ledger.closed.length > 0)
      this.#recordClosures(n.at, n.reason!, n.price, undefined);
    this.#afterFold(n);
    return true;
  }

  /** The balance and the exposure after a transaction at `time` (its text, or a note whose `at` it is: read only when the exposure changes). */
  #afterFold(time: string | TransactionNote): void {
    const ledger = this.ledger;
    this.#balance = toUnits(ledger.balance);
    const flat = ledger.trades.size === 0;
    if (this.#flat && !flat) this.#exposedSince = timeOf(time);
    else if (!this.#flat && flat && !Number.isNaN(this.#exposedSince)) {
      this.exposureMs += Math.max(0, timeOf(time) - this.#exposedSince);
      this.#exposedSince = Number.NaN;
    }
    this.#flat = flat;
  }

  /**
   * The trades the fill closed, as the ledger left them (final realized P/L and financing): closed
   * at `closeTime`, for the fill's `reason`, at `price` (a note's), or at the prices fill `tx` gives.
   */
  #recordClosures(
    closeTime: UnixMs,
    reason: string,
    price: number,
    tx: Extract<Transaction, { type: 'ORDER_FILL' }> | undefined,
  ): void {
    const trades = this.ledger.closed;
    const stats = this.tradeStats;
    for (let i = 0; i < trades.length; i++) {
      const t = trades[i]!;
      const realizedPL = toUnits(t.realizedPL);
      stats.count++;
      if (realizedPL > 0) {
        stats.wins++;
        stats.grossProfit += realizedPL;
        if (realizedPL > stats.largestWin) stats.largestWin = realizedPL;
      } else {
        stats.losses++;
        stats.grossLoss += realizedPL;
        if (realizedPL < stats.largestLoss) stats.largestLoss = realizedPL;
      }
      stats.heldMs += closeTime - t.openMs;
      const spreadCost = toUnits(t.halfSpreadCost);
      const financing = toUnits(t.financing);
      const commission = toUnits(t.commission);
      const exitReason = exitReasonOf(reason);
      const long = Number(t.initialUnits) > 0;
      const x = this.#excursions.get(t.id);
      this.#excursions.delete(t.id);
      addToGroup(long ? stats.long : stats.short, realizedPL, spreadCost, financing, commission);
      let g = stats.byInstrument.get(t.instrument);
      if (g === undefined) stats.byInstrument.set(t.instrument, (g = newGroup()));
      addToGroup(g, realizedPL, spreadCost, financing, commission);
      stats.exitReasons.set(exitReason, (stats.exitReasons.get(exitReason) ?? 0) + 1);
      if (!this.#keepClosedTrades && this.onClosedTrade === undefined) continue;
      const closePrice = tx !== undefined ? Number(closePriceOf(tx, t.id)) : price;
      const exitMove = long ? closePrice - t.priceNum : t.priceNum - closePrice;
      const closed: ClosedTrade = {
        id: t.id,
        instrument: t.instrument,
        units: Number(t.initialUnits),
        openPrice: t.priceNum,
        closePrice,
        openTime: t.openMs,
        closeTime,
        realizedPL,
        financing,
        exitReason,
        spreadCost,
        commission,
        // The exit is a price the trade saw too: its P/L bounds the excursions.
        mae: round4(Math.min(x?.[0] ?? 0, realizedPL)),
        mfe: round4(Math.max(x?.[1] ?? 0, realizedPL)),
        runUpPct: round4((Math.max(x?.[2] ?? 0, exitMove) / t.priceNum) * 100),
      };
      if (this.#keepClosedTrades) this.closedTrades.push(closed);
      this.onClosedTrade?.(closed);
    }
  }

  /** Marks to a market event: updates the quote, the NAV, drawdown and the daily equity curve. */
  mark(ev: MarketEvent): void {
    this.marks++;
    if (ev.kind === 'candle') {
      if (!ev.complete) return;
      this.#setQuote(ev.instrument, ev.bc, ev.ac);
      if (this.ledger.trades.size > 0) this.#excurse(ev.instrument, ev.bh, ev.bl, ev.ah, ev.al);
    } else if (ev.kind === 'tick') {
      this.#setQuote(ev.instrument, ev.bid, ev.ask);
      if (this.ledger.trades.size > 0) this.#excurse(ev.instrument, ev.bid, ev.bid, ev.ask, ev.ask);
    }
    const at = ev.at;
    if (Number.isNaN(this.#firstTime)) {
      this.#firstTime = at;
      this.#balance = toUnits(this.ledger.balance);
    }
    // Trading days end at 17:00 New York (OANDA's daily candles and financing): a mark at 17:00 is
    // the day's last, and Sunday evening's prices belong to Monday's day.
    if (at > this.#dayEnd) {
      // The day's last mark, unless it is the first point already (a run whose first mark ends a day).
      if (Number.isFinite(this.#dayEnd)) {
        if (this.equity[this.equity.length - 1]?.time !== this.#lastTime)
          this.#point({ time: this.#lastTime, balance: this.#balance, nav: this.#nav });
      } else this.#point({ time: at, balance: this.#balance, nav: this.#navNow() });
      this.#dayEnd = nextRollover(at - 1);
    }
    const nav = this.#navNow();
    this.#nav = nav;
    this.#lastTime = at;
    if (nav > this.#peak) this.#peak = nav;
    else {
      const dd = this.#peak - nav;
      if (dd > this.maxDrawdown) this.maxDrawdown = dd;
      const pct = dd / this.#peak;
      if (pct > this.maxDrawdownPct) this.maxDrawdownPct = pct;
    }
  }

  /**
   * The excursions of the open trades of `name` over a candle (or a tick): a long one closes on the
   * bid, a short one on the ask. No allocation per event (one array per trade, made at its first mark).
   * The candle a trade opened in counts whole (an entry inside a candle sees its whole range).
   */
  #excurse(name: string, bidHigh: number, bidLow: number, askHigh: number, askLow: number): void {
    const trades = this.openTrades();
    for (let i = 0; i < trades.length; i++) {
      const t = trades[i]!;
      if (t.instrument !== name) continue;
      let x = this.#excursions.get(t.id);
      if (x === undefined) this.#excursions.set(t.id, (x = new Float64Array(3)));
      const long = t.unitsNum > 0;
      let best = ((long ? bidHigh : askLow) - t.priceNum) * t.unitsNum;
      let worst = ((long ? bidLow : askHigh) - t.priceNum) * t.unitsNum;
      const ccy = this.#quoteOf(name);
      if (ccy !== this.ledger.currency) {
        const f = this.#conversion.tryFactors(ccy);
        if (f === undefined) continue;
        best *= best < 0 ? f.loss : f.gain;
        worst *= worst < 0 ? f.loss : f.gain;
      }
      if (worst < x[0]!) x[0] = worst;
      if (best > x[1]!) x[1] = best;
      const move = long ? bidHigh - t.priceNum : t.priceNum - askLow;
      if (move > x[2]!) x[2] = move;
    }
  }

  #point(p: EquityPoint): void {
    this.equity.push(p);
    this.onEquityPoint?.(p);
  }

  #setQuote(name: string, bid: number, ask: number): void {
    // One instrument per event: the last one's quote object is kept to skip the map lookup.
    let q = name === this.#lastName ? this.#lastQuote : this.#quotes.get(name);
    if (q === undefined) this.#quotes.set(name, (q = { bid, ask }));
    else {
      q.bid = bid;
      q.ask = ask;
    }
    this.#lastName = name;
    this.#lastQuote = q;
  }

  /** Adds the last mark to the equity curve and closes the exposure interval. Call once at the end. */
  finish(): void {
    if (Number.isNaN(this.#lastTime)) return;
    const last = this.equity[this.equity.length - 1];
    if (!last || last.time !== this.#lastTime)
      this.#point({ time: this.#lastTime, balance: this.#balance, nav: this.#nav });
    if (!Number.isNaN(this.#exposedSince)) {
      this.exposureMs += Math.max(0, this.#lastTime - this.#exposedSince);
      this.#exposedSince = Number.NaN;
    }
  }

  /**
   * The trades still open, as closed trades marked at the last prices (exit reason END_OF_RUN,
   * close time the last mark, close price the closing side, realizedPL the unrealized P/L). They are
   * not counted in `tradeStats`: nothing closed them.
   */
  openAtEnd(): ClosedTrade[] {
    const out: ClosedTrade[] = [];
    for (const t of this.openTrades()) {
      const q = this.#quotes.get(t.instrument);
      const x = this.#excursions.get(t.id);
      const pl = Math.round((toUnits(t.realizedPL) + this.unrealized(t)) * 10_000) / 10_000;
      const mark = q === undefined ? t.priceNum : t.unitsNum > 0 ? q.bid - t.priceNum : t.priceNum - q.ask;
      out.push({
        id: t.id,
        instrument: t.instrument,
        units: Number(t.initialUnits),
        openPrice: t.priceNum,
        closePrice: q === undefined ? Number.NaN : t.unitsNum > 0 ? q.bid : q.ask,
        openTime: t.openMs,
        closeTime: this.#lastTime,
        realizedPL: pl,
        financing: toUnits(t.financing),
        exitReason: 'END_OF_RUN',
        spreadCost: toUnits(t.halfSpreadCost),
        commission: toUnits(t.commission),
        mae: round4(Math.min(x?.[0] ?? 0, pl)),
        mfe: round4(Math.max(x?.[1] ?? 0, pl)),
        runUpPct: round4((Math.max(x?.[2] ?? 0, q === undefined ? 0 : mark) / t.priceNum) * 100),
      });
    }
    return out;
  }

  /** Time span covered by the marks, in ms. */
  get spanMs(): number {
    return Number.isNaN(this.#firstTime) ? 0 : this.#lastTime - this.#firstTime;
  }

  get balance(): number {
    return this.#balance;
  }

  get nav(): number {
    return this.#navNow();
  }

  /** Open trades, oldest first (cached between fills). */
  openTrades(): readonly LedgerTrade[] {
    if (this.#tradesVersion !== this.ledger.version) {
      this.#trades = [...this.ledger.trades.values()];
      this.#tradesVersion = this.ledger.version;
    }
    return this.#trades;
  }

  /** Unrealized P/L of one trade at the latest quote, on its closing side, in home currency. */
  unrealized(t: LedgerTrade): number {
    const q = t.instrument === this.#lastName ? this.#lastQuote : this.#quotes.get(t.instrument);
    if (q === undefined) return 0;
    const quotePL = ((t.unitsNum > 0 ? q.bid : q.ask) - t.priceNum) * t.unitsNum;
    const ccy = this.#quoteOf(t.instrument);
    if (ccy === this.ledger.currency) return quotePL;
    const f = this.#conversion.tryFactors(ccy);
    return f === undefined ? 0 : quotePL * (quotePL < 0 ? f.loss : f.gain);
  }

  unrealizedTotal(): number {
    const trades = this.openTrades();
    let u = 0;
    for (let i = 0; i < trades.length; i++) u += this.unrealized(trades[i]!);
    return u;
  }

  /** Margin used: per instrument the net units (hedged: the larger side) × mid × quote→home × rate. */
  marginUsed(accountMarginRate: number, hedging = false): number {
    const byInstrument = new Map<string, { long: number; short: number }>();
    for (const t of this.openTrades()) {
      let e = byInstrument.get(t.instrument);
      if (!e) byInstrument.set(t.instrument, (e = { long: 0, short: 0 }));
      if (t.unitsNum > 0) e.long += t.unitsNum;
      else e.short -= t.unitsNum;
    }
    let used = 0;
    for (const [name, e] of byInstrument) {
      const q = this.#quotes.get(name);
      if (!q) continue;
      const inst = this.#instruments.get(name);
      const units = hedging ? Math.max(e.long, e.short) : Math.abs(e.long - e.short);
      const f = this.#conversion.tryFactors(inst.quote);
      if (!f) continue;
      used +=
        units *
        ((q.bid + q.ask) / 2) *
        ((f.gain + f.loss) / 2) *
        Math.max(accountMarginRate, inst.marginRate);
    }
    return used;
  }

  #navNow(): number {
    if (this.ledger.trades.size === 0) return this.#balance;
    return this.#balance + this.unrealizedTotal();
  }

  #quoteOf(instrument: string): string {
    if (instrument === this.#lastQuoteOfName) return this.#lastQuoteOf;
    let q = this.#quoteCurrency.get(instrument);
    if (q === undefined) {
      q = this.#instruments.get(instrument).quote;
      this.#quoteCurrency.set(instrument, q);
    }
    this.#lastQuoteOfName = instrument;
    this.#lastQuoteOf = q;
    return q;
  }

  /** Realized P/L so far (exact, 1/10,000 units). */
  get realizedPL(): Amount {
    return this.ledger.pl;
  }
}
