// Observable alone, from its own module: 'rxjs' itself loads all of rxjs (about 220 CommonJS files,
// 0.1-0.2 s of a backtest's start-up); the same file, so the same class, as 'rxjs' exports.
import { Observable } from 'rxjs/internal/Observable';
import type { Subscriber } from 'rxjs';
import type { MarketEvent } from '../../domain/events.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Ledger } from '../../domain/ledger.ts';
import { nextRollover, weekendClosure } from '../../domain/new-york.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { TransactionNote } from '../../domain/transaction-note.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { Execution } from '../../ports/execution.ts';
import type { Quote } from '../../domain/conversion.ts';
import type { QueuedMarket } from './book.ts';
import { SimState } from './state.ts';
import { advance } from './clock.ts';
import { candle, tick } from './feed.ts';
import { submit } from './intents.ts';
import { fillMarket, fillResting } from './execute.ts';
import { cancelOrder } from './cancels.ts';
import {
  seedAccount,
  snapshot,
  start,
  trailingStopValues,
  type SeedOptions,
  type SimAccountState,
} from './seed.ts';
import type { SimBrokerOptions, SimStats } from './types.ts';

// The simulated broker, composed of parts with one job each (docs/fills.md lists which file decides what):
//   feed.ts      what a price does: the driving series, the quick path, a candle's path points, ticks
//   book.ts      the books and matching: what triggers at one price point (orders.ts: the trigger test)
//   pricing.ts   the path models and the price of a triggered order; slippage.ts, latency.ts,
//                commission.ts the models a user can swap
//   intents.ts   intents into orders: create, replace, cancel, closes, dependent orders (validate.ts checks)
//   execute.ts   executing an order that met its price: reductions, opening, on-fill checks and orders
//   fill.ts      the money of a fill (the ORDER_FILL)
//   cancels.ts   cancels and rejects
//   account.ts   the account rules (margin, margin call, closeout, FIFO); closeout.ts acts on them
//   clock.ts     rollovers (financing.ts) and expiries
//   seed.ts      a new or seeded account, and its snapshot
//   transactions.ts the v20 transaction log; state.ts the state they all share

// The options and the figures live in types.ts (the parts read them without importing this file).
export type { SimBrokerOptions, SimStats };

/**
 * The simulated broker: v20's order, fill and money rules applied to historical or replayed prices.
 *
 * It observes the market stream (`onEvent`, wired ahead of the engine) and executes intents
 * (`submit`). Everything it decides leaves as v20 transactions with sequential IDs and batch IDs,
 * which it also folds into its own `Ledger`: the simulator's account is the same fold the engine
 * keeps, so the two can never disagree.
 *
 * Fill rules (all pinned by tests, listed in docs/fills.md):
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
  readonly stats: SimStats;
  readonly accountID: string;
  /** Everything the parts share (state.ts). */
  readonly #s: SimState;

  constructor(opts: SimBrokerOptions) {
    // What matching (book.ts) calls back: the fills (execute.ts) and the FOK/IOC expiry.
    this.#s = new SimState(opts, (s) => ({
      fillMarket: (book, q, bid, ask, t) => fillMarket(s, book, q, bid, ask, t),
      fillResting: (book, o, px, bid, ask, t) => fillResting(s, book, o, px, bid, ask, t),
      expireImmediate: (o) => {
        // FOK / IOC: the first price after its creation did not fill it.
        s.tx.begin();
        cancelOrder(s, o, 'TIME_IN_FORCE_EXPIRED');
      },
    }));
    this.ledger = this.#s.ledger;
    this.stats = this.#s.stats;
    this.accountID = this.#s.accountID;
  }

  /** The simulator's clock: the time of the last price it saw. */
  get now(): UnixMs {
    return this.#s.now;
  }

  /**
   * The current trigger level of a pending order: its price, or a trailing stop's current value
   * (v20 `trailingStopValue`). Undefined when the order is not pending. For views and tests.
   */
  triggerLevel(orderID: string): number | undefined {
    return this.#s.order(orderID)?.level;
  }

  /** Latest quotes by instrument (shared, updated in place). */
  get quotes(): ReadonlyMap<string, Quote> {
    return this.#s.quotes;
  }

  /** Opens the account at `at`: a CREATE and the initial deposit (TRANSFER_FUNDS). Called on the first event if not before. */
  start(at: UnixMs): void {
    start(this.#s, at);
  }

  /** Feeds one market event (feed.ts). Wire it ahead of the engine so fills land before strategies see the event. */
  onEvent(ev: MarketEvent): void {
    const s = this.#s;
    if (!s.started) start(s, ev.kind === 'candle' ? ev.time : ev.at);
    switch (ev.kind) {
      case 'candle':
        candle(s, ev);
        return;
      case 'tick':
        tick(s, ev);
        return;
      default:
        advance(s, ev.at);
    }
  }

  /**
   * Executes an intent (intents.ts): its transactions now, or, for a market order, at its next
   * price. `decidedAt` (the strategy's clock) halts a market order decided while its market was
   * closed, even when the simulator has since seen the reopening price.
   */
  submit(intent: OrderIntent, decidedAt?: UnixMs): void {
    const s = this.#s;
    if (!s.started) start(s, Number.isFinite(s.now) ? s.now : 0);
    s.decidedAt = decidedAt ?? Number.NaN;
    try {
      submit(s, intent);
    } finally {
      s.decidedAt = Number.NaN;
    }
  }

  /** The models this simulator uses, by name (for the report and the run folder). */
  get models(): {
    readonly path: string;
    readonly slippage: string;
    readonly latency: string;
    readonly commission: string;
  } {
    const s = this.#s;
    return {
      path: s.opts.path ?? 'adaptive',
      slippage: s.slippage.name,
      latency: s.latency.name,
      commission: s.commission.name,
    };
  }

  /** NAV and margin used at the latest quotes (account.ts). */
  accountState(): { nav: number; marginUsed: number } {
    return this.#s.account.state();
  }

  /**
   * Calls `listener` with every transaction from now on, synchronously, in ID order, as
   * `transactions$` delivers them but without an rxjs Subscriber per delivery (the backtest's
   * engine folds about five transactions per fill through this). Returns the function that stops it.
   * A listener that throws stops the emission: the error reaches whoever fed the price or intent.
   */
  listen(listener: (tx: Transaction) => void): () => void {
    return this.#s.tx.listen(listener);
  }

  /**
   * As `listen`, with notes (domain/transaction-note.ts): a fill's v20 object is built only if some
   * listener calls `transaction()` (then once, shared by all). The note is valid during the call only.
   */
  listenNotes(listener: (note: TransactionNote) => void): () => void {
    return this.#s.tx.listenNotes(listener);
  }

  /** Ends the run: completes the transaction stream. */
  complete(): void {
    if (this.#completed) return;
    this.#completed = true;
    const subs = this.#completers;
    this.#completers = [];
    this.#s.tx.clear();
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
   * How: see `seedAccount` (seed.ts) and `restoreAccount` (src/domain/account-state.ts). Pending orders are folded as their create transactions
   * through `Ledger.apply`; trades and account totals, which no single transaction expresses, are
   * restored directly; the books are then built from the ledger's pending orders by the same code
   * that files a new order. Runs once: nothing is added to the per-price or per-fill paths.
   *
   * Throws `SimSeedError` (naming the field) on a broken state, or when called after the simulator
   * started or a second time.
   */
  seed(state: SimAccountState, o: SeedOptions = {}): void {
    seedAccount(this.#s, state, o);
  }

  /**
   * The simulated account in v20's Account form (the fields `seed` reads): open trades as
   * TradeSummaries, pending orders (trailing stops with their current `trailingStopValue`), totals,
   * the last transaction ID, the clock and the latest prices. `seed(snapshot())` on a new simulator continues exactly
   * where this one is, except for market orders still waiting for their next price (they are not
   * pending orders in v20 either: take a snapshot when `queuedMarketOrders()` is 0).
   */
  snapshot(): SimAccountState {
    return snapshot(this.#s);
  }

  /**
   * The current level of every pending trailing stop (order ID → price text, v20's
   * `trailingStopValue`), or undefined when there is none: the part of the simulator's state that
   * its transactions do not record. `seed({ ..., trailing })` takes it back.
   */
  trailingStopValues(): Record<string, string> | undefined {
    return trailingStopValues(this.#s);
  }

  /**
   * Market orders (client orders, trade and position closes) waiting for the next price of
   * `instrument`, or of any instrument. They have no transaction yet: their outcome comes with that
   * price. For callers that must know when an intent has its outcome (the runner's journal).
   */
  queuedMarketOrders(instrument?: string): number {
    const books = this.#s.books;
    if (instrument !== undefined) return books.get(instrument)?.market.length ?? 0;
    let n = 0;
    for (const b of books.values()) n += b.market.length;
    return n;
  }
  /** The market orders of `instrument` waiting for their next price, oldest first (a read-only view). */
  queuedMarket(instrument: string): readonly QueuedMarket[] {
    return this.#s.books.get(instrument)?.market ?? [];
  }

  /**
   * Withdraws queued market orders (these very entries of `queuedMarket`) before they meet a
   * price: nothing of them was ever stamped, so they leave no transaction. Returns how many were
   * still queued and withdrawn. (The runner's kill switch drops the strategy's orders this way.)
   */
  withdrawQueued(instrument: string, entries: ReadonlySet<QueuedMarket>): number {
    const market = this.#s.books.get(instrument)?.market;
    if (market === undefined) return 0;
    let kept = 0;
    for (const q of market) if (!entries.has(q)) market[kept++] = q;
    const n = market.length - kept;
    market.length = kept;
    return n;
  }

  /**
   * The state the parts share, for a subclass that adds what only one mode does to an account
   * (sandbox-control.ts: the sandbox's configuration and views); not part of the broker's API.
   */
  protected get state(): SimState {
    return this.#s;
  }
}

// The New York boundaries (weekend closure, 17:00 rollover) come from new-york.ts: integer
// arithmetic on cached zone offsets, property-checked against luxon DateTimes there.
export { nextRollover, weekendClosure };
