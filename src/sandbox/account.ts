import { HomeConversion, formatFactor, type Quote } from '../domain/conversion.ts';
import type { FinancingRates, InstrumentRegistry } from '../domain/instrument.ts';
import type { OrderIntent } from '../domain/intents.ts';
import { ORDER_CREATE_TYPES, type LedgerTrade } from '../domain/ledger.ts';
import { add, amount, formatAmount, type Amount } from '../domain/money.ts';
import { formatTime, type UnixMs } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { simBroker } from '../adapters/sim/factory.ts';
import { SandboxSim } from '../adapters/sim/sandbox-control.ts';
import { SwappableLatency, SwappableSlippage } from './fill-models.ts';
import {
  DEFAULT_KEEP_TRANSACTIONS,
  FinishedCache,
  KEEP_FINISHED,
  TransactionLog,
} from './transaction-log.ts';

type Obj = Record<string, unknown>;

/** Fields of v20's Order definitions that an order create transaction carries over to the order. */
const ORDER_FIELDS = new Set([
  'instrument',
  'units',
  'timeInForce',
  'priceBound',
  'positionFill',
  'tradeClose',
  'longPositionCloseout',
  'shortPositionCloseout',
  'marginCloseout',
  'delayedTradeClose',
  'clientExtensions',
  'takeProfitOnFill',
  'stopLossOnFill',
  'trailingStopLossOnFill',
  'guaranteedStopLossOnFill',
  'tradeClientExtensions',
  'price',
  'gtdTime',
  'triggerCondition',
  'initialMarketPrice',
  'tradeID',
  'clientTradeID',
  'distance',
  'guaranteed',
  'guaranteedExecutionPremium',
  'replacesOrderID',
]);

/** An order as GET /orders renders it, kept for every state (pending, filled, cancelled). */
interface OrderView extends Obj {
  id: string;
  type: string;
  state: string;
  createTime: string;
  instrument?: string;
  tradeID?: string;
  clientExtensions?: { id?: string; tag?: string; comment?: string };
}

/** A closed trade as GET /trades?state=CLOSED renders it. */
interface ClosedTrade extends Obj {
  id: string;
  instrument: string;
}

/**
 * An order the latency fault holds back: it reaches the simulator at `due` (sandbox time). A market
 * order collects its fill batch in `txs` and wakes whoever waits for it; a resting order (limit,
 * stop, a trade's TP/SL) only needs the price of its arrival time fed once the clock gets there.
 */
interface Delayed {
  readonly instrument: string;
  readonly due: UnixMs;
  readonly market: boolean;
  readonly txs: Transaction[];
  batch: string | undefined;
  wake: (() => void) | undefined;
}

/** The reasons of the MARKET_ORDERs a client's intent makes (not a margin closeout's). */
const CLIENT_MARKET_REASONS = new Set(['CLIENT_ORDER', 'TRADE_CLOSE', 'POSITION_CLOSEOUT']);

/** Whether the simulator queues the intent as market orders (order or replace of type MARKET, trade close, position close). */
function isMarketIntent(intent: OrderIntent): boolean {
  switch (intent.kind) {
    case 'order':
    case 'replace':
      return (intent.request as { type?: string }).type === 'MARKET';
    case 'closeTrade':
    case 'closePosition':
      return true;
    default:
      return false;
  }
}

const f4 = (x: number): string => (Object.is(x, -0) || Math.abs(x) < 5e-5 ? '0.0000' : x.toFixed(4));

/**
 * One sandbox account: a `SandboxSim` (the broker plus the sandbox's own controls) and the views
 * v20's REST interface needs that the broker's ledger does not keep (orders in every state, closed
 * trades, the full transaction log). Use it from
 * the sandbox server; everything it renders is built from the transactions the broker emitted.
 */
export class SandboxAccount {
  readonly broker: SandboxSim;
  readonly id: string;
  readonly currency: string;
  alias: string;
  marginRate: string;
  readonly hedging: boolean;
  readonly createdTime: string;
  /** The newest transactions (`keepTransactions`, default 100,000), by ID. */
  readonly transactions: TransactionLog;
  /** Orders by ID in creation order: every pending order, and the newest finished ones (see #finished). */
  readonly #orders = new Map<string, OrderView>();
  /** Filled and cancelled orders in finishing order; the oldest is dropped from #orders past the cap. */
  readonly #finished: FinishedCache<true>;
  readonly #closedTrades: FinishedCache<ClosedTrade>;
  readonly #tradeOpenTx = new Map<string, Obj>();
  readonly #listeners = new Set<(tx: Transaction) => void>();
  readonly #instruments: InstrumentRegistry;
  readonly #quotes: ReadonlyMap<string, Quote>;
  readonly #conversion: HomeConversion;
  /**
   * Financing paid or collected over the account's life, per instrument and per `instrument:long` /
   * `instrument:short` side (v20's Position.financing and PositionSide.financing): DAILY_FINANCING
   * and any financing a fill realises, kept after the trades are closed.
   */
  readonly #financing = new Map<string, Amount>();
  /** The simulator's slippage model, swapped by the sandbox's `fill` option and `POST /sandbox/faults`. */
  readonly slippage = new SwappableSlippage();
  /** The simulator's latency model, likewise; it tells `submit` the delays the simulator drew. */
  readonly latency = new SwappableLatency();
  /** Orders the latency fault holds back, in submission order (the simulator's queue order). */
  readonly #delayed: Delayed[] = [];
  /** The delayed market order whose fill batch is being delivered. */
  #collecting: Delayed | undefined;
  /** True while the simulator takes an intent (nothing it emits then is a delayed order's fill). */
  #submitting = false;

  /**
   * `keepTransactions` bounds the memory of a long run: the log keeps that many of the newest
   * transactions, and up to as many (at most KEEP_FINISHED, 10,000) finished (filled or cancelled)
   * orders and closed trades. Pending orders and open trades are always kept.
   */
  constructor(o: {
    id: string;
    currency: string;
    balance: string;
    marginRate: string;
    hedging: boolean;
    instruments: InstrumentRegistry;
    start: UnixMs;
    marketHours?: boolean;
    keepTransactions?: number;
    financingRates?: FinancingRates;
  }) {
    const keep = o.keepTransactions ?? DEFAULT_KEEP_TRANSACTIONS;
    this.transactions = new TransactionLog(keep);
    // Lists of orders and trades in every state are built per request: at most KEEP_FINISHED
    // finished ones keep each list within a few milliseconds.
    const finished = Math.min(keep, KEEP_FINISHED);
    this.#finished = new FinishedCache<true>(finished, (id) => this.#orders.delete(id));
    this.#closedTrades = new FinishedCache<ClosedTrade>(finished);
    this.id = o.id;
    this.currency = o.currency;
    this.alias = 'Primary';
    this.marginRate = o.marginRate;
    this.hedging = o.hedging;
    this.#instruments = o.instruments;
    const drivers = new Map<string, string>();
    for (const i of o.instruments.list()) drivers.set(i.name, 'TICK');
    this.broker = simBroker(
      {
        instruments: o.instruments,
        account: {
          currency: o.currency,
          balance: o.balance,
          marginRate: o.marginRate,
          hedging: o.hedging,
          id: o.id,
        },
        drivers,
        ...(o.financingRates !== undefined ? { financingRates: o.financingRates } : {}),
        // The sandbox's swappable models (POST /sandbox/faults changes them while it runs).
        models: { slippage: this.slippage, latency: this.latency, marketHours: o.marketHours !== false },
      },
      SandboxSim,
    );
    this.#quotes = this.broker.quotes;
    this.#conversion = new HomeConversion(o.currency, this.#quotes);
    this.broker.transactions$.subscribe((tx) => this.#fold(tx));
    this.createdTime = formatTime(o.start);
    this.broker.start(o.start);
  }

  /** Calls `fn` for every transaction from now on; returns the unsubscribe function. */
  onTransaction(fn: (tx: Transaction) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Submits an intent. `txs`: the transactions it produced at once (including fills from the re-fed
   * quote). `arriving`: with the latency fault on, the market orders of this intent (an order, a
   * trade close, a position close) reach the simulator later; it resolves with their transactions
   * once the sandbox clock has passed their arrival (`release`) and they met a price.
   */
  submit(
    intent: OrderIntent,
    now: UnixMs,
  ): { txs: Transaction[]; arriving?: Promise<Transaction[]>; arrivesAt?: UnixMs } {
    const out: Transaction[] = [];
    const fn = (tx: Transaction): void => {
      out.push(tx);
    };
    this.#listeners.add(fn);
    const decided = this.broker.now;
    const drawn = this.latency.drawn;
    drawn.length = 0;
    let arriving: Delayed[] | undefined;
    try {
      this.#submitting = true;
      try {
        // Decided now on the sandbox clock: a market order while the market is closed is halted.
        this.broker.submit(intent, now);
      } finally {
        this.#submitting = false;
      }
      const instrument = this.#intentInstrument(intent);
      if (drawn.length > 0 && instrument !== undefined) {
        // Each delay the simulator drew is one order of this intent reaching it at decided + delay
        // (a position close may queue two market orders). Market orders of every latency are
        // listed, in the simulator's queue order, so that their fill batches are told apart.
        const market = isMarketIntent(intent);
        for (const d of drawn) {
          const e: Delayed = {
            instrument,
            due: decided + d,
            market,
            txs: [],
            batch: undefined,
            wake: undefined,
          };
          this.#delayed.push(e);
          if (market && d > 0) (arriving ??= []).push(e);
        }
      }
      drawn.length = 0;
      // A market order fills at the next price: feed the current quote again at the current time.
      const q = instrument !== undefined ? this.#quotes.get(instrument) : undefined;
      if (q && instrument !== undefined)
        this.broker.onEvent({
          kind: 'tick',
          instrument,
          at: Math.max(now, this.broker.now),
          bid: q.bid,
          ask: q.ask,
        });
    } finally {
      this.#listeners.delete(fn);
    }
    if (arriving === undefined) return { txs: out };
    const waits = arriving.map(
      (e) =>
        new Promise<Transaction[]>((done) => {
          // Filled already (its transactions are in `txs`): nothing more to wait for.
          if (e.batch !== undefined) done([]);
          else e.wake = () => done(e.txs);
        }),
    );
    return {
      txs: out,
      arriving: Promise.all(waits).then((lists) => lists.flat()),
      arrivesAt: Math.max(...arriving.map((e) => e.due)),
    };
  }

  /** Orders the latency fault holds back, not yet at the simulator (market orders) or not yet released (resting ones). */
  get delayed(): number {
    return this.#delayed.length;
  }

  /**
   * The sandbox clock is about to move to `to`: every order the latency fault held back that arrives
   * by then meets the price of its arrival time, the instrument's quote in force then, fed to the
   * simulator at exactly that time (so the fill is stamped with it). An order arriving exactly at
   * `to` is left to the price that comes at `to` when that price is of its instrument (`pricing`).
   * `quote` gives the sandbox's current quote (with its liquidity); an instrument without one waits
   * for its first price. Call before the clock moves (the simulator's time never goes back).
   */
  release(
    to: UnixMs,
    quote: (instrument: string) => { bid: number; ask: number; liquidity?: number } | undefined,
    pricing?: string,
  ): void {
    if (this.#delayed.length === 0) return;
    for (;;) {
      let next: Delayed | undefined;
      for (const e of this.#delayed) {
        if (e.due > to || (e.due === to && e.instrument === pricing) || e.due < this.broker.now) continue;
        if ((next === undefined || e.due < next.due) && quote(e.instrument) !== undefined) next = e;
      }
      if (next === undefined) return;
      const q = quote(next.instrument)!;
      const at = next.due;
      const instrument = next.instrument;
      // Resting orders released at this time need nothing more: they act on prices from now on.
      this.#dropResting(instrument, at);
      this.broker.onEvent(
        q.liquidity !== undefined
          ? {
              kind: 'tick',
              instrument,
              at,
              bid: q.bid,
              ask: q.ask,
              bidLiquidity: q.liquidity,
              askLiquidity: q.liquidity,
            }
          : { kind: 'tick', instrument, at, bid: q.bid, ask: q.ask },
      );
      // The price fills every market order of the instrument that has arrived (#collect files each
      // batch); one still listed would be released again and again: let it go, and wake its waiter.
      const left = this.#delayed.indexOf(next);
      if (left >= 0) {
        this.#delayed.splice(left, 1);
        next.wake?.();
      }
    }
  }

  /** A price of `instrument` at `at` reached the simulator: the resting orders that arrived by then are active. */
  priced(instrument: string, at: UnixMs): void {
    if (this.#delayed.length > 0) this.#dropResting(instrument, at);
  }

  #dropResting(instrument: string, at: UnixMs): void {
    for (let i = this.#delayed.length - 1; i >= 0; i--) {
      const e = this.#delayed[i]!;
      if (!e.market && e.instrument === instrument && e.due <= at) this.#delayed.splice(i, 1);
    }
  }

  /**
   * Files a transaction under the delayed market order it belongs to. A delayed market order's
   * batch starts with its MARKET_ORDER (or MARKET_ORDER_REJECT) at the first price at or after its
   * arrival; the simulator fills its queue in order, so the batch is the first listed order of that
   * instrument that has arrived. Every later transaction of the batch (fill, on-fill orders, cancel)
   * joins it.
   */
  #collect(tx: Transaction): void {
    const t = tx as Transaction & { batchID?: string; instrument?: string; reason?: string };
    const current = this.#collecting;
    if (current !== undefined && t.batchID === current.batch) {
      current.txs.push(tx);
      return;
    }
    this.#collecting = undefined;
    if (
      this.#submitting ||
      t.batchID !== t.id ||
      (t.type !== 'MARKET_ORDER' && t.type !== 'MARKET_ORDER_REJECT') ||
      !CLIENT_MARKET_REASONS.has(t.reason ?? '')
    )
      return;
    const now = this.broker.now;
    const i = this.#delayed.findIndex((e) => e.market && e.instrument === t.instrument && e.due <= now);
    if (i < 0) return;
    const e = this.#delayed.splice(i, 1)[0]!;
    e.batch = t.batchID;
    e.txs.push(tx);
    this.#collecting = e;
    // Resolved now, read after this synchronous price has been handled: the rest of the batch lands first.
    e.wake?.();
  }

  /** Emits a CLIENT_CONFIGURE transaction for an alias / margin rate change. */
  configure(fields: { alias?: string; marginRate?: string }): Transaction[] {
    const out: Transaction[] = [];
    const fn = (tx: Transaction): void => {
      out.push(tx);
    };
    this.#listeners.add(fn);
    try {
      if (fields.alias !== undefined) this.alias = fields.alias;
      if (fields.marginRate !== undefined) this.marginRate = fields.marginRate;
      this.broker.configure(fields);
    } finally {
      this.#listeners.delete(fn);
    }
    return out;
  }

  #intentInstrument(intent: OrderIntent): string | undefined {
    switch (intent.kind) {
      case 'order':
      case 'replace': {
        const r = intent.request as { instrument?: string; tradeID?: string };
        if (r.instrument !== undefined) return r.instrument;
        return r.tradeID !== undefined ? this.#tradeInstrument(r.tradeID) : undefined;
      }
      case 'closeTrade':
        return this.#tradeInstrument(intent.tradeSpecifier);
      case 'tradeOrders':
        return this.#tradeInstrument(intent.tradeSpecifier);
      case 'closePosition':
        return intent.instrument;
      default:
        return undefined;
    }
  }

  #tradeInstrument(spec: string): string | undefined {
    return this.findTrade(spec)?.instrument;
  }

  #fold(tx: Transaction): void {
    this.transactions.push(tx);
    if (this.#delayed.length > 0 || this.#collecting !== undefined) this.#collect(tx);
    const t = tx as unknown as Obj & { type: string; id: string; time: string };
    const orderType = ORDER_CREATE_TYPES[t.type];
    if (orderType !== undefined) {
      const view: OrderView = { id: t.id, createTime: t.time, type: orderType, state: 'PENDING' };
      for (const k of Object.keys(t)) if (ORDER_FIELDS.has(k)) view[k] = t[k];
      if (orderType === 'MARKET_IF_TOUCHED' && view.initialMarketPrice === undefined) {
        // v20's MarketIfTouchedOrder (not its transaction) records the market price at creation: the
        // mid of the quote the simulator compared the order's price with.
        const q = this.#quotes.get(t.instrument as string);
        if (q && this.#instruments.has(t.instrument as string))
          view.initialMarketPrice = this.#instruments.get(t.instrument as string).price((q.bid + q.ask) / 2);
      }
      this.#orders.set(t.id, view);
    } else if (t.type === 'ORDER_FILL') {
      const o = this.#orders.get(t.orderID as string);
      if (o) {
        o.state = 'FILLED';
        o.fillingTransactionID = t.id;
        o.filledTime = t.time;
        const opened = t.tradeOpened as Obj | undefined;
        if (opened) o.tradeOpenedID = opened.tradeID;
        const reduced = t.tradeReduced as Obj | undefined;
        if (reduced) o.tradeReducedID = reduced.tradeID;
        const closed = t.tradesClosed as Obj[] | undefined;
        if (closed && closed.length > 0) o.tradeClosedIDs = closed.map((c) => c.tradeID);
        this.#finished.set(o.id, true);
      }
      const opened = t.tradeOpened as Obj | undefined;
      if (opened) this.#tradeOpenTx.set(opened.tradeID as string, t);
      // Financing a fill realises belongs to the side the reduced trade was on (the fill's opposite).
      const side = Number(t.units) > 0 ? 'short' : 'long';
      const reduced = t.tradeReduced as Obj | undefined;
      if (reduced?.financing !== undefined)
        this.#addFinancing(t.instrument as string, side, reduced.financing as string);
      for (const c of (t.tradesClosed as Obj[] | undefined) ?? []) {
        if (c.financing !== undefined)
          this.#addFinancing(t.instrument as string, side, c.financing as string);
        this.#closeTrade(c.tradeID as string, t);
      }
    } else if (t.type === 'DAILY_FINANCING') {
      for (const pf of (t.positionFinancings as Obj[] | undefined) ?? []) {
        const instrument = pf.instrument as string;
        for (const tf of (pf.openTradeFinancings as Obj[] | undefined) ?? []) {
          const trade = this.broker.ledger.trades.get(tf.tradeID as string);
          this.#addFinancing(
            instrument,
            trade !== undefined && trade.unitsNum < 0 ? 'short' : 'long',
            tf.financing as string,
          );
        }
      }
    } else if (t.type === 'ORDER_CANCEL') {
      const o = this.#orders.get(t.orderID as string);
      if (o) {
        o.state = 'CANCELLED';
        o.cancellingTransactionID = t.id;
        o.cancelledTime = t.time;
        if (t.replacedByOrderID !== undefined) o.replacedByOrderID = t.replacedByOrderID;
        this.#finished.set(o.id, true);
      }
    } else if (t.type === 'ORDER_CLIENT_EXTENSIONS_MODIFY') {
      const o = this.#orders.get(t.orderID as string);
      if (o && t.clientExtensionsModify)
        o.clientExtensions = t.clientExtensionsModify as OrderView['clientExtensions'];
      if (o && t.tradeClientExtensionsModify) o.tradeClientExtensions = t.tradeClientExtensionsModify;
    }
    for (const fn of this.#listeners) fn(tx);
  }

  #addFinancing(instrument: string, side: 'long' | 'short', text: string): void {
    const x = amount(text);
    if (x === 0) return;
    this.#financing.set(instrument, add(this.#financing.get(instrument) ?? 0, x));
    const k = `${instrument}:${side}`;
    this.#financing.set(k, add(this.#financing.get(k) ?? 0, x));
  }

  #closeTrade(id: string, fill: Obj): void {
    const open = this.#tradeOpenTx.get(id);
    const opened = open?.tradeOpened as Obj | undefined;
    const closedBy = (fill.tradesClosed as Obj[]).find((c) => c.tradeID === id);
    this.#closedTrades.set(id, {
      id,
      instrument: fill.instrument as string,
      price: (opened?.price ?? open?.price ?? '0') as string,
      openTime: (open?.time ?? '') as string,
      state: 'CLOSED',
      initialUnits: (opened?.units ?? '0') as string,
      initialMarginRequired: '0.0000',
      currentUnits: '0',
      realizedPL: (closedBy?.realizedPL ?? '0.0000') as string,
      financing: (closedBy?.financing ?? '0.0000') as string,
      closingTransactionIDs: [fill.id],
      closeTime: fill.time,
      averageClosePrice: closedBy?.price ?? fill.price,
      ...(opened?.clientExtensions ? { clientExtensions: opened.clientExtensions } : {}),
    });
    this.#tradeOpenTx.delete(id);
  }

  /** An order (any state) by ID or `@clientID`. */
  findOrder(spec: string): OrderView | undefined {
    let found: OrderView | undefined;
    if (!spec.startsWith('@')) found = this.#orders.get(spec);
    else {
      const cid = spec.slice(1);
      for (const o of this.#orders.values()) if (o.clientExtensions?.id === cid) found = o;
    }
    return found ? this.#live(found) : undefined;
  }

  /** A pending trailing stop's view with its current trailingStopValue. */
  #live(o: OrderView): OrderView {
    if (o.type === 'TRAILING_STOP_LOSS' && o.state === 'PENDING') {
      const v = this.broker.trailingStopValue(o.id);
      if (v !== undefined) o.trailingStopValue = v;
    }
    return o;
  }

  /** An open trade by ID or `@clientID`. */
  findTrade(spec: string): LedgerTrade | undefined {
    const trades = this.broker.ledger.trades;
    if (!spec.startsWith('@')) return trades.get(spec);
    const cid = spec.slice(1);
    for (const t of trades.values()) if (t.clientExtensions?.id === cid) return t;
    return undefined;
  }

  /** Orders newest first. */
  orders(): OrderView[] {
    return [...this.#orders.values()].reverse().map((o) => this.#live(o));
  }

  pendingOrders(): OrderView[] {
    const out: OrderView[] = [];
    for (const id of this.broker.ledger.pendingOrders.keys()) {
      const o = this.#orders.get(id);
      if (o) out.push(this.#live(o));
    }
    return out.sort((a, b) => Number(b.id) - Number(a.id));
  }

  /** Open and closed trades as v20 Trade objects, newest first. */
  allTrades(): Obj[] {
    const open = [...this.broker.ledger.trades.values()].map((t) => this.tradeJSON(t));
    const closed = [...this.#closedTrades.values()];
    return [...open, ...closed].sort((a, b) => Number(b.id) - Number(a.id));
  }

  openTrades(): Obj[] {
    return [...this.broker.ledger.trades.values()]
      .map((t) => this.tradeJSON(t))
      .sort((a, b) => Number(b.id) - Number(a.id));
  }

  tradeBySpec(spec: string): Obj | undefined {
    const t = this.findTrade(spec);
    if (t) return this.tradeJSON(t);
    if (!spec.startsWith('@')) return this.#closedTrades.get(spec);
    const cid = spec.slice(1);
    for (const c of this.#closedTrades.values())
      if ((c.clientExtensions as { id?: string } | undefined)?.id === cid) return c;
    return undefined;
  }

  #unrealized(t: LedgerTrade): number {
    const q = this.#quotes.get(t.instrument);
    if (!q) return 0;
    const px = t.unitsNum > 0 ? q.bid : q.ask;
    const quotePL = (px - t.priceNum) * t.unitsNum;
    const f = this.#conversion.tryFactors(this.#instruments.get(t.instrument).quote);
    if (!f) return 0;
    return quotePL * (quotePL < 0 ? f.loss : f.gain);
  }

  #margin(instrument: string, units: number): number {
    const q = this.#quotes.get(instrument);
    if (!q) return 0;
    const inst = this.#instruments.get(instrument);
    const f = this.#conversion.tryFactors(inst.quote);
    if (!f) return 0;
    return (
      Math.abs(units) *
      ((q.bid + q.ask) / 2) *
      ((f.gain + f.loss) / 2) *
      Math.max(Number(this.marginRate), inst.marginRate)
    );
  }

  tradeJSON(t: LedgerTrade): Obj {
    const out: Obj = {
      id: t.id,
      instrument: t.instrument,
      price: t.price,
      openTime: t.openTime,
      state: 'OPEN',
      initialUnits: t.initialUnits,
      initialMarginRequired: f4(this.#margin(t.instrument, Number(t.initialUnits))),
      currentUnits: String(t.unitsNum),
      realizedPL: formatAmount(t.realizedPL),
      unrealizedPL: f4(this.#unrealized(t)),
      marginUsed: f4(this.#margin(t.instrument, t.unitsNum)),
      financing: formatAmount(t.financing),
    };
    if (t.clientExtensions) out.clientExtensions = t.clientExtensions;
    const dep = (id: string | undefined): Obj | undefined =>
      id !== undefined ? this.findOrder(id) : undefined;
    const tp = dep(t.takeProfitOrderID);
    if (tp) out.takeProfitOrder = tp;
    const sl = dep(t.stopLossOrderID);
    if (sl) out.stopLossOrder = sl;
    const tsl = dep(t.trailingStopLossOrderID);
    if (tsl) out.trailingStopLossOrder = tsl;
    const gsl = dep(t.guaranteedStopLossOrderID);
    if (gsl) out.guaranteedStopLossOrder = gsl;
    return out;
  }

  /** Positions of every instrument ever traded (open or not), as v20 Position objects. */
  positions(openOnly: boolean): Obj[] {
    const names = new Set<string>(this.broker.ledger.instrumentPL.keys());
    for (const t of this.broker.ledger.trades.values()) names.add(t.instrument);
    const out: Obj[] = [];
    for (const n of [...names].sort()) {
      const p = this.position(n);
      const open = p.long as Obj;
      const short = p.short as Obj;
      if (openOnly && open.units === '0' && short.units === '0') continue;
      out.push(p);
    }
    return out;
  }

  position(instrument: string): Obj {
    const side = (long: boolean): Obj & { upl: number; margin: number } => {
      let units = 0;
      let cost = 0;
      let upl = 0;
      const ids: string[] = [];
      for (const t of this.broker.ledger.trades.values()) {
        if (t.instrument !== instrument || t.unitsNum > 0 !== long) continue;
        units += t.unitsNum;
        cost += t.unitsNum * t.priceNum;
        upl += this.#unrealized(t);
        ids.push(t.id);
      }
      units = Math.round(units * 1e6) / 1e6;
      const s: Obj & { upl: number; margin: number } = {
        units: String(units),
        pl: '0.0000',
        resettablePL: '0.0000',
        financing: formatAmount(this.#financing.get(`${instrument}:${long ? 'long' : 'short'}`) ?? 0),
        guaranteedExecutionFees: '0.0000',
        unrealizedPL: f4(upl),
        upl,
        margin: this.#margin(instrument, units),
      };
      if (units !== 0) {
        s.averagePrice = this.#instruments.has(instrument)
          ? this.#instruments.get(instrument).price(cost / units)
          : String(cost / units);
        s.tradeIDs = ids;
      }
      return s;
    };
    const long = side(true);
    const short = side(false);
    const pl = formatAmount(this.broker.ledger.instrumentPL.get(instrument) ?? 0);
    const hedged = this.hedging;
    const margin = hedged ? Math.max(long.margin, short.margin) : Math.abs(long.margin - short.margin);
    const strip = (s: Obj & { upl: number; margin: number }): Obj => {
      const { upl: _u, margin: _m, ...rest } = s;
      return rest;
    };
    return {
      instrument,
      pl,
      unrealizedPL: f4(long.upl + short.upl),
      marginUsed: f4(margin),
      resettablePL: pl,
      financing: formatAmount(this.#financing.get(instrument) ?? 0),
      commission: '0.0000',
      guaranteedExecutionFees: '0.0000',
      long: strip(long),
      short: strip(short),
    };
  }

  /** The account's state figures (the fields of AccountSummary that change with prices). */
  state(): Obj {
    const ledger = this.broker.ledger;
    let upl = 0;
    let positionValue = 0;
    let marginUsed = 0;
    for (const t of ledger.trades.values()) {
      upl += this.#unrealized(t);
      const q = this.#quotes.get(t.instrument);
      if (q) {
        const f = this.#conversion.tryFactors(this.#instruments.get(t.instrument).quote);
        if (f) positionValue += Math.abs(t.unitsNum) * ((q.bid + q.ask) / 2) * ((f.gain + f.loss) / 2);
      }
    }
    for (const p of this.positions(true)) marginUsed += Number(p.marginUsed);
    const nav = ledger.balance / 10_000 + upl;
    const available = Math.max(0, nav - marginUsed);
    return {
      unrealizedPL: f4(upl),
      NAV: f4(nav),
      marginUsed: f4(marginUsed),
      marginAvailable: f4(available),
      positionValue: f4(positionValue),
      marginCloseoutUnrealizedPL: f4(upl),
      marginCloseoutNAV: f4(nav),
      marginCloseoutMarginUsed: f4(marginUsed),
      marginCloseoutPercent: nav > 0 ? (marginUsed / 2 / nav).toFixed(5) : '0.00000',
      marginCloseoutPositionValue: f4(positionValue),
      withdrawalLimit: f4(available),
      marginCallMarginUsed: f4(marginUsed),
      marginCallPercent: nav > 0 ? (marginUsed / nav).toFixed(5) : '0.00000',
    };
  }

  summary(): Obj {
    const ledger = this.broker.ledger;
    let openPositions = 0;
    for (const p of this.positions(true)) if (p) openPositions++;
    return {
      id: this.id,
      alias: this.alias,
      currency: this.currency,
      balance: formatAmount(ledger.balance),
      createdByUserID: 1,
      createdTime: this.createdTime,
      guaranteedStopLossOrderMode: 'ALLOWED',
      pl: formatAmount(ledger.pl),
      resettablePL: formatAmount(ledger.pl),
      // As the live service is reported to send for an account never reset: "0", which is also the
      // UNIX form of a v20 DateTime (the epoch). Kept (docs/sandbox.md, differences).
      resettablePLTime: '0',
      financing: formatAmount(ledger.financing),
      commission: formatAmount(ledger.commission),
      guaranteedExecutionFees: formatAmount(ledger.guaranteedExecutionFees),
      marginRate: this.marginRate,
      openTradeCount: ledger.trades.size,
      openPositionCount: openPositions,
      pendingOrderCount: ledger.pendingOrders.size,
      hedgingEnabled: this.hedging,
      ...this.state(),
      lastTransactionID: ledger.lastTransactionID,
    };
  }

  full(): Obj {
    return {
      ...this.summary(),
      trades: this.openTrades().map(tradeSummary),
      positions: this.positions(false),
      orders: this.pendingOrders(),
    };
  }

  /** Home conversion factors of a currency, v20's HomeConversions object. */
  homeConversion(currency: string): Obj | undefined {
    const f = this.#conversion.tryFactors(currency);
    if (!f) return undefined;
    return {
      currency,
      accountGain: formatFactor(f.gain),
      accountLoss: formatFactor(f.loss),
      positionValue: formatFactor((f.gain + f.loss) / 2),
    };
  }

  quoteHomeConversionFactors(instrument: string): Obj | undefined {
    if (!this.#instruments.has(instrument)) return undefined;
    const f = this.#conversion.tryFactors(this.#instruments.get(instrument).quote);
    if (!f) return undefined;
    return { positiveUnits: formatFactor(f.gain), negativeUnits: formatFactor(f.loss) };
  }
}

/** A v20 TradeSummary from a Trade: dependent orders by ID instead of whole. */
export function tradeSummary(t: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(t)) {
    if (
      k === 'takeProfitOrder' ||
      k === 'stopLossOrder' ||
      k === 'trailingStopLossOrder' ||
      k === 'guaranteedStopLossOrder'
    )
      out[`${k}ID`] = (v as Obj).id;
    else out[k] = v;
  }
  return out;
}
