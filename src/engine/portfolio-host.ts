// Observable alone, from its own module: 'rxjs' itself loads all of rxjs, which a backtest does
// not otherwise need.
import { Observable } from 'rxjs/internal/Observable';
import type { MarketEvent } from '../domain/events.ts';
import { formatAmount } from '../domain/money.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { withTag, type OrderIntent } from '../domain/intents.ts';
import type { LedgerTrade } from '../domain/ledger.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { Clock } from '../ports/clock.ts';
import type { Execution } from '../ports/execution.ts';
import type { Params, Strategy, StrategyLogger } from '../strategy/api.ts';
import { Books, type Book } from './book.ts';
import type { PlotSink } from './context.ts';
import { Engine, type EngineStats } from './engine.ts';
import type { Portfolio } from './portfolio.ts';
import { activeLimits, RiskExecution, type RiskLimits, type RiskLogger } from './risk.ts';

/** One strategy of a portfolio. */
export interface PortfolioMember {
  readonly strategy: Strategy<Params, unknown>;
  /** Its name: its book's, its orders' tag and its client IDs' prefix (unique in the portfolio). */
  readonly name: string;
  readonly params: Params;
  /** Client IDs are `<prefix>-<n>` (default the name; a live run adds its run identity after it). */
  readonly clientIdPrefix?: string;
}

/**
 * A member's execution: what its engine submits goes to the account tagged with its name
 * (domain/intents.ts withTag); what comes back is its book's transactions (book.ts), which its
 * engine folds into the book's portfolio. So `ctx.position`, `ctx.trades` and `ctx.orders` read the
 * strategy's own book.
 */
export class BookExecution implements Execution {
  readonly transactions$: Observable<Transaction>;
  readonly #listeners: ((tx: Transaction) => void)[] = [];

  /**
   * `trades`: the account's open trades now (its ledger's), which a close of the book's position
   * closes by ID where they are the book's; `hedging`: the account's kind (for what cannot be).
   */
  constructor(
    private readonly account: Execution,
    readonly book: Book,
    private readonly trades: () => ReadonlyMap<string, LedgerTrade> = () => new Map(),
    private readonly hedging = false,
  ) {
    book.receive = (tx) => {
      const ls = this.#listeners;
      if (ls.length === 0) book.portfolio.apply(tx);
      else for (let i = 0; i < ls.length; i++) ls[i]!(tx);
    };
    this.transactions$ = new Observable<Transaction>((sub) => this.listen((tx) => sub.next(tx)));
  }

  submit(intent: OrderIntent, decidedAt?: number): void {
    if (intent.kind === 'closePosition') {
      for (const order of this.#ownClose(intent)) this.account.submit(order, decidedAt);
      return;
    }
    this.account.submit(withTag(intent, this.book.name), decidedAt);
  }

  /**
   * A strategy's close of its position closes its own book's, not the account's (which holds the
   * others' too), for the units its book holds on each side it names ('ALL') or those given, its
   * oldest trades first. Each of its trades the account holds under the same ID (on a hedging
   * account, and a netting account whose orders did not cross another strategy's) is closed by ID,
   * so no other strategy's trade is touched; the units left (a netting account where another
   * strategy's order reduced the account's trade) go as one tagged market order per side, which
   * the account nets as it nets every order. The first keeps the intent's client ID, the others
   * have `-2`, `-3`… after it.
   */
  #ownClose(intent: Extract<OrderIntent, { kind: 'closePosition' }>): OrderIntent[] {
    const pos = this.book.portfolio.ledger.position(intent.instrument);
    const budget = (spec: string | undefined, held: number): number =>
      spec === undefined || spec === 'NONE' || held === 0
        ? 0
        : spec === 'ALL'
          ? held
          : Math.max(0, Math.min(held, Number(spec) || 0));
    const left = { long: budget(intent.longUnits, pos.long), short: budget(intent.shortUnits, -pos.short) };
    const rest = { long: 0, short: 0 };
    const out: OrderIntent[] = [];
    const id = (): string => (out.length === 0 ? intent.id : `${intent.id}-${out.length + 1}`);
    const account = this.trades();
    for (const t of this.book.portfolio.ledger.trades.values()) {
      if (t.instrument !== intent.instrument || t.unitsNum === 0) continue;
      const side = t.unitsNum > 0 ? 'long' : 'short';
      const units = Math.min(Math.abs(t.unitsNum), left[side]);
      if (units === 0) continue;
      left[side] -= units;
      const at = account.get(t.id);
      if (
        at !== undefined &&
        at.instrument === t.instrument &&
        Math.sign(at.unitsNum) === Math.sign(t.unitsNum) &&
        Math.abs(at.unitsNum) >= units
      )
        out.push({
          kind: 'closeTrade',
          id: id(),
          tradeSpecifier: t.id,
          units: units === Math.abs(at.unitsNum) ? 'ALL' : String(units),
        });
      else rest[side] += units;
    }
    for (const [side, sign] of [
      ['long', -1],
      ['short', 1],
    ] as const) {
      if (rest[side] === 0) continue;
      const cid = id();
      const request = {
        type: 'MARKET',
        instrument: intent.instrument,
        units: String(sign * rest[side]),
        positionFill: this.hedging ? 'REDUCE_ONLY' : 'DEFAULT',
        clientExtensions: { id: cid },
      };
      out.push(withTag({ kind: 'order', id: cid, request: request as never }, this.book.name));
    }
    return out;
  }

  listen(listener: (tx: Transaction) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
    };
  }
}

/** A member's own gate between its engine and its book's execution (its own risk limits). */
export interface MemberGate extends Execution {
  observe?(at: number): unknown;
}

export interface PortfolioHostOptions {
  readonly members: readonly PortfolioMember[];
  /** The account's execution (the simulator, or the account's risk gate before it). */
  readonly execution: Execution;
  /** The account's portfolio (in a backtest it shares the simulator's ledger). */
  readonly account: Portfolio;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly log: (name: string) => StrategyLogger;
  readonly marginRate: number;
  readonly hedging: boolean;
  readonly keepClosedTrades?: boolean;
  /** The books start with the account's balance (a live account: see `Books`' option). */
  readonly funded?: boolean;
  readonly onIntent?: (name: string, intent: OrderIntent) => void;
  readonly onProgress?: (at: number, events: number) => void;
  readonly onPlot?: (name: string) => PlotSink | undefined;
  /** Puts a member's own gate (its risk limits, on its book) between its engine and its execution. */
  readonly gate?: (name: string, execution: Execution, book: Portfolio) => MemberGate | undefined;
  /** Every transaction of the account, once the account and every book have folded it (a live run's journal bookkeeping). */
  readonly onTransaction?: (tx: Transaction) => void;
}

/**
 * A member's own risk gate: its limits (`activeLimits` of them: none set, no gate) checked on its
 * book, before its orders reach the account's gate. The same in a portfolio backtest and a live run.
 */
export function bookGate(o: {
  readonly inner: Execution;
  readonly book: Portfolio;
  readonly limits: RiskLimits | undefined;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly hedging: boolean;
  readonly log: RiskLogger;
}): RiskExecution | undefined {
  if (o.limits === undefined) return undefined;
  const limits = activeLimits(o.limits);
  if (Object.keys(limits).length === 0) return undefined;
  return new RiskExecution({
    inner: o.inner,
    limits,
    portfolio: o.book,
    instruments: o.instruments,
    clock: o.clock,
    accountID: 'book',
    hedging: o.hedging,
    log: o.log,
    lastTransactionID: '0',
    keepBreaches: false,
  });
}

/**
 * Several strategies on one account: one engine per strategy, each with its own book (book.ts),
 * driven event by event as one engine is (`attach`, `feed`, `stop`): every engine's due timers, the
 * broker, the account's mark, then each engine in the order the members were given. The account's
 * transactions are folded into the account's portfolio and then routed to the books.
 */
export class PortfolioHost {
  readonly books: Books;
  readonly engines: readonly Engine<Params, unknown>[];
  readonly gates: readonly (MemberGate | undefined)[];
  /** Each member's execution on its book (what its orders go through, tagged), by name. */
  readonly executions: ReadonlyMap<string, BookExecution>;
  readonly #o: PortfolioHostOptions;

  constructor(o: PortfolioHostOptions) {
    this.#o = o;
    this.books = new Books(
      o.members.map((m) => m.name),
      {
        currency: o.account.currency,
        instruments: o.instruments,
        initialBalance: formatAmount(o.account.initialBalance),
        hedging: o.hedging,
        keepClosedTrades: o.keepClosedTrades !== false,
        ...(o.funded === true ? { funded: true } : {}),
      },
    );
    const gates: (MemberGate | undefined)[] = [];
    const executions = new Map<string, BookExecution>();
    this.executions = executions;
    this.engines = o.members.map((m, i) => {
      const book = this.books.book(m.name);
      const own = new BookExecution(o.execution, book, () => o.account.ledger.trades, o.hedging);
      executions.set(m.name, own);
      const gate = o.gate?.(m.name, own, book.portfolio);
      gates.push(gate);
      const plot = o.onPlot?.(m.name);
      return new Engine<Params, unknown>({
        strategy: m.strategy,
        name: m.name,
        params: m.params,
        execution: gate ?? own,
        portfolio: book.portfolio,
        instruments: o.instruments,
        clock: o.clock,
        log: o.log(m.name),
        marginRate: o.marginRate,
        ...(o.onIntent ? { onIntent: (intent: OrderIntent) => o.onIntent!(m.name, intent) } : {}),
        ...(i === 0 && o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(plot ? { onPlot: plot } : {}),
        ...(m.clientIdPrefix !== undefined ? { clientIdPrefix: m.clientIdPrefix } : {}),
      });
    });
    this.gates = gates;
  }

  /** What the engines did, together: events and candles once (they all see the same), the rest summed. */
  get stats(): EngineStats {
    const first = this.engines[0]!.stats;
    let handlerCalls = 0;
    let intents = 0;
    for (const e of this.engines) {
      handlerCalls += e.stats.handlerCalls;
      intents += e.stats.intents;
    }
    return { events: first.events, candles: first.candles, handlerCalls, intents, transactions: this.#txs };
  }

  #txs = 0;

  /**
   * Folds transactions into the books only, before `attach` (no strategy hears them): a live run's
   * restart gives the journal's transactions its strategies had handled, from the journal's start.
   */
  restore(txs: Iterable<Transaction>): void {
    for (const tx of txs) this.books.route(tx);
  }

  /** Folds the account's transactions (account, then books) and attaches every engine to its book; returns the stop. */
  attach(): () => void {
    const { execution, account } = this.#o;
    const after = this.#o.onTransaction;
    const fold = (tx: Transaction): void => {
      this.#txs++;
      account.apply(tx);
      this.books.route(tx);
      after?.(tx);
    };
    const stop =
      execution.listen !== undefined
        ? execution.listen(fold)
        : (
            (s) => () =>
              s.unsubscribe()
          )(execution.transactions$.subscribe({ next: fold }));
    const detach = this.engines.map((e) => e.attach());
    return () => {
      for (const d of detach) d();
      stop();
    };
  }

  /** `Engine.feed` for every engine at once (see the class). */
  feed(batch: readonly MarketEvent[], before?: (ev: MarketEvent) => void): void {
    const engines = this.engines;
    const gates = this.gates.filter((g) => g?.observe !== undefined);
    const account = this.#o.account;
    for (const e of engines) e.throwFailure();
    for (let i = 0; i < batch.length; i++) {
      const ev = batch[i]!;
      // (Without `before`, a live run's: each engine fires its due timers itself, in `step`.)
      if (before !== undefined) {
        for (let k = 0; k < engines.length; k++) engines[k]!.timersBefore(ev, before);
        before(ev);
      }
      for (let k = 0; k < gates.length; k++) gates[k]!.observe!(ev.at);
      account.mark(ev);
      for (let k = 0; k < engines.length; k++) engines[k]!.step(ev);
    }
    for (const e of engines) e.throwFailure();
  }

  /** Calls every strategy's onStop and closes the books' and the account's equity curves. */
  stop(): void {
    for (const e of this.engines) e.stop();
    this.#o.account.finish();
  }
}
