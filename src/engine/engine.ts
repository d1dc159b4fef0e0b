import type { PriceComponent } from '../domain/candle.ts';
import type { MarketEvent, TimerEvent } from '../domain/events.ts';
import { isGranularity, type Granularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { isIntent, isReservedClientID, type OrderIntent, RUNNER_ID_PREFIX } from '../domain/intents.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { TransactionNote } from '../domain/transaction-note.ts';
import type { Clock } from '../ports/clock.ts';
import type { Execution } from '../ports/execution.ts';
import type { CandleSeries, Params, Step, Strategy, StrategyLogger, Subscriptions } from '../strategy/api.ts';
import { StrategyContext, type PlotSink } from './context.ts';
import type { Portfolio } from './portfolio.ts';
import type { IndicatorMemo } from './indicator-memo.ts';
import { SeriesState } from './series.ts';

interface TimerSlot {
  readonly name: string;
  readonly everyMs: number;
  next: number;
}

/** A subscription string that does not parse, or names an unknown instrument. */
export class SubscriptionError extends Error {
  readonly code = 'SUBSCRIPTION' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SubscriptionError';
  }
}

/**
 * A strategy handler threw, or returned something that is not a step. The run stops (a backtest
 * fails, a live run stops without submitting anything more on the strategy's behalf); the message
 * names the strategy, the handler and the engine time. A thrown error is the `cause` (its stack
 * points into the strategy file).
 */
export class StrategyError extends Error {
  readonly code = 'STRATEGY' as const;
  private constructor(
    readonly strategy: string,
    readonly handler: string,
    readonly at: number,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StrategyError';
  }

  /** `handler` threw `cause`. */
  static threw(strategy: string, handler: string, at: number, cause: unknown): StrategyError {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new StrategyError(
      strategy,
      handler,
      at,
      `strategy '${strategy}' threw in ${handler}${when(at)}: ${why}`,
      cause,
    );
  }

  /** The strategy's name (its client IDs' prefix) is in the runner's reserved namespace. */
  static reservedName(strategy: string, prefix: string): StrategyError {
    return new StrategyError(
      strategy,
      'init',
      Number.NaN,
      `strategy '${strategy}': its client IDs would start '${prefix}', and client IDs starting '${RUNNER_ID_PREFIX}' are reserved for the runner's own closes and cancels (kill switch, flatten): rename the strategy (its name, or --name)`,
    );
  }

  /** `handler` returned `what`, which is not a step; `fix` says what it should be. */
  static returned(strategy: string, handler: string, at: number, what: string, fix: string): StrategyError {
    return new StrategyError(
      strategy,
      handler,
      at,
      `strategy '${strategy}': ${handler}${when(at)} returned ${what}: ${fix}`,
    );
  }
}

function when(at: number): string {
  return Number.isFinite(at) ? ` at ${new Date(at).toISOString()}` : '';
}

/** Parses `'EUR_USD:H1'` or `'EUR_USD:H1:BA'`-style candle subscriptions. */
export function parseCandleSeries(spec: string, instruments?: InstrumentRegistry): CandleSeries {
  const [instrument, granularity, component = 'M', extra] = spec.split(':');
  if (!instrument || !granularity || extra !== undefined) {
    throw new SubscriptionError(
      `candle subscription '${spec}' must look like 'EUR_USD:H1' or 'EUR_USD:H1:B' (instrument:granularity[:M|B|A])`,
    );
  }
  if (!isGranularity(granularity))
    throw new SubscriptionError(
      `candle subscription '${spec}': unknown granularity '${granularity}' (use S5…M30, H1…H12, D, W or M)`,
    );
  if (component !== 'M' && component !== 'B' && component !== 'A') {
    throw new SubscriptionError(
      `candle subscription '${spec}': price component '${component}' must be M (mid), B (bid) or A (ask)`,
    );
  }
  if (instruments && !instruments.has(instrument)) instruments.get(instrument); // throws a clear "unknown instrument"
  return {
    key: `${instrument}:${granularity}:${component}`,
    instrument,
    granularity: granularity as Granularity,
    component: component as PriceComponent,
  };
}

/** Resolves a strategy's subscriptions for its params (what `subscribe(params)` throws is a StrategyError). */
export function subscriptionsOf<P extends Params>(
  strategy: Strategy<P, unknown>,
  params: P,
  name = strategy.name ?? 'strategy',
): Subscriptions {
  if (typeof strategy.subscribe !== 'function') return strategy.subscribe;
  try {
    return strategy.subscribe(params);
  } catch (e) {
    throw StrategyError.threw(name, 'subscribe', Number.NaN, e);
  }
}

export interface EngineOptions<P extends Params, S> {
  readonly strategy: Strategy<P, S>;
  readonly name: string;
  readonly params: P;
  readonly execution: Execution;
  readonly portfolio: Portfolio;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly log: StrategyLogger;
  /** The account margin rate, for `ctx.account.marginUsed`. */
  readonly marginRate: number;
  /** Called for every intent before it is submitted (journals, reports, risk checks later). */
  readonly onIntent?: (intent: OrderIntent) => void;
  /** Client IDs are `<prefix>-<n>` (default the strategy name; a live run adds its run identity). */
  readonly clientIdPrefix?: string;
  /** Called about every 65k events with the engine time, for progress displays. */
  readonly onProgress?: (at: number, events: number) => void;
  /** Where `ctx.plot` values go (a run folder's plots.csv); without it `ctx.plot` does nothing. */
  readonly onPlot?: PlotSink;
  /** Shares `ctx.indicator` values with other runs on the very same candles (a sweep's trials; see IndicatorMemo). */
  readonly indicatorMemo?: { readonly memo: IndicatorMemo; readonly scope: string };
}

/** What a finished run reports about the engine itself. */
export interface EngineStats {
  events: number;
  candles: number;
  handlerCalls: number;
  intents: number;
  transactions: number;
}

/**
 * The engine: delivers one time-ordered event stream to a strategy, submits the intents it
 * returns to the Execution port, and folds the transactions that come back into the portfolio.
 *
 * It does not know which mode it runs in: a backtest hands it a merged catalog stream and the
 * simulated broker, a live run the pricing stream and the v20 adapter.
 *
 * Per event: fire the timers due before it (each at its own time), advance the clock, mark the
 * portfolio, update the subscribed series and their indicators, call the handler, submit its
 * intents. Transactions that arrive while a handler runs (the simulator answers synchronously) are
 * queued and delivered to `onTransaction` right after, in ID order, so handlers are never re-entered.
 */
export class Engine<P extends Params, S> {
  readonly stats: EngineStats = { events: 0, candles: 0, handlerCalls: 0, intents: 0, transactions: 0 };
  readonly #o: EngineOptions<P, S>;
  readonly #ctx: StrategyContext<P>;
  readonly #series = new Map<string, SeriesState>();
  /** instrument → granularity → series (one per subscribed component). */
  readonly #byCandle = new Map<string, Map<string, SeriesState[]>>();
  readonly #ticks: Set<string>;
  readonly #signals: Set<string>;
  readonly #calendar: Set<string>;
  readonly #spreads: Set<string>;
  readonly #cot: Set<string>;
  readonly #timers: TimerSlot[];
  readonly #queue: Transaction[] = [];
  #lastInstrument = '';
  #lastGranularity = '';
  #lastList: SeriesState[] | undefined = undefined;
  #state: S;
  #busy = false;
  #started = false;
  #failure: { readonly error: unknown } | undefined = undefined;

  constructor(opts: EngineOptions<P, S>) {
    this.#o = opts;
    const subs = subscriptionsOf(opts.strategy as Strategy<P, unknown>, opts.params, opts.name);
    const history = opts.strategy.history ?? 500;
    for (const spec of subs.candles ?? []) {
      const s = parseCandleSeries(spec, opts.instruments);
      if (this.#series.has(s.key)) continue;
      const state = new SeriesState(s.instrument, s.granularity, s.component, history, opts.indicatorMemo);
      this.#series.set(s.key, state);
      let byGran = this.#byCandle.get(s.instrument);
      if (!byGran) this.#byCandle.set(s.instrument, (byGran = new Map()));
      const list = byGran.get(s.granularity) ?? [];
      list.push(state);
      byGran.set(s.granularity, list);
    }
    this.#ticks = new Set(subs.ticks ?? []);
    this.#signals = new Set(subs.signals ?? []);
    this.#calendar = new Set(subs.calendar ?? []);
    this.#spreads = new Set(subs.spreads ?? []);
    this.#cot = new Set(subs.cot ?? []);
    this.#timers = (subs.timers ?? []).map((t) => {
      if (!(t.everyMs >= 1000))
        throw new SubscriptionError(`timer '${t.name}': everyMs must be at least 1000, got ${t.everyMs}`);
      return { name: t.name, everyMs: t.everyMs, next: Number.NaN };
    });
    this.#ctx = new StrategyContext<P>(
      opts.name,
      opts.params,
      opts.log,
      opts.portfolio,
      opts.instruments,
      this.#series,
      opts.marginRate,
    );
    if (opts.clientIdPrefix !== undefined) this.#ctx.idPrefix = opts.clientIdPrefix;
    this.#ctx.plotSink = opts.onPlot;
    if (isReservedClientID(`${this.#ctx.idPrefix}-`))
      throw StrategyError.reservedName(opts.name, this.#ctx.idPrefix);
    try {
      this.#state = (opts.strategy.init ? opts.strategy.init(opts.params) : undefined) as S;
    } catch (e) {
      throw StrategyError.threw(opts.name, 'init', Number.NaN, e);
    }
    if (isThenable(this.#state))
      throw StrategyError.returned(opts.name, 'init', Number.NaN, 'a Promise', ASYNC_FIX);
  }

  /** The strategy's current state (for snapshots and tests). */
  get state(): S {
    return this.#state;
  }

  /** Client IDs are `<prefix>-<n>` (a replay follows a live run's restarts, each with its own run identity). */
  get clientIdPrefix(): string {
    return this.#ctx.idPrefix;
  }
  set clientIdPrefix(p: string) {
    this.#ctx.idPrefix = p;
  }

  /** The client-ID sequence, persisted by journals so a restarted run never reuses an ID. */
  get sequence(): number {
    return this.#ctx.sequence;
  }
  set sequence(n: number) {
    this.#ctx.sequence = n;
  }

  /**
   * Starts folding the execution's transactions into the portfolio (and delivering them to
   * `onTransaction`); returns the function that stops it. Every mode drives the engine the same way:
   * `attach`, then `feed` batch after batch (a backtest: each merged catalog batch; a live run: each
   * event as it arrives), then `stop`. Uses the execution's `listenNotes` or `listen` when it has one
   * (the simulator: no Subscriber per transaction; with notes, no fill object unless the strategy has
   * `onTransaction` or the portfolio folds objects); their deliveries happen inside `feed` (or inside
   * a handler's submit), so what a handler throws there is thrown by `feed`.
   *
   * An execution that delivers on its own (the v20 transaction stream, between two events) reports
   * what a handler throws to `onFailure` at once when one is given (a live run stops on it then, not
   * at the next price); without one it is thrown by the next `feed`. After a failure the engine
   * handles nothing more.
   */
  attach(onFailure?: (error: unknown) => void): () => void {
    const execution = this.#o.execution;
    if (execution.listenNotes !== undefined) return execution.listenNotes((n) => this.#onNote(n));
    if (execution.listen !== undefined) return execution.listen((tx) => this.#onTransaction(tx));
    const failed = (e: unknown): void => {
      if (this.#failure !== undefined) return;
      this.#failure = { error: e };
      onFailure?.(e);
    };
    const sub = execution.transactions$.subscribe({
      next: (tx) => {
        if (this.#failure !== undefined) return;
        try {
          this.#onTransaction(tx);
        } catch (e) {
          failed(e);
        }
      },
      error: failed,
    });
    return () => sub.unsubscribe();
  }

  /**
   * Feeds one batch of time-ordered events, in order: `before` sees each event first (the simulated
   * broker, so fills land before the strategy sees the price), then the engine. Timers due before an
   * event's first price reach `before` too, as timer events at their own times, ahead of it. The one
   * way to drive the engine, between `attach` and `stop`: a backtest calls it once per catalog batch,
   * a live run once per event (src/app/assembly.ts). Throws what a handler throws, or an error of the
   * transaction stream.
   */
  feed(batch: readonly MarketEvent[], before?: (ev: MarketEvent) => void): void {
    this.#throwFailure();
    if (before === undefined) {
      for (let i = 0; i < batch.length; i++) this.#onEvent(batch[i]!);
    } else {
      const timers = this.#timers.length > 0;
      for (let i = 0; i < batch.length; i++) {
        const ev = batch[i]!;
        if (timers) this.#timersBefore(ev, before);
        before(ev);
        this.#onEvent(ev);
      }
    }
    this.#throwFailure();
  }

  /**
   * One event of `feed` for a driver that runs several engines on one broker (a portfolio,
   * portfolio-host.ts): `timersBefore` for every engine, the broker, then `step` for every engine.
   */
  timersBefore(ev: MarketEvent, before: (ev: MarketEvent) => void): void {
    if (this.#timers.length > 0) this.#timersBefore(ev, before);
  }

  /** See `timersBefore`. */
  step(ev: MarketEvent): void {
    this.#onEvent(ev);
  }

  /** Throws what a handler or the transaction stream failed with since the last call (see `feed`). */
  throwFailure(): void {
    this.#throwFailure();
  }

  #throwFailure(): void {
    const f = this.#failure;
    if (f !== undefined) throw f.error;
  }

  /** Calls onStop once, at the end of the events (the driver calls it). */
  stop(): void {
    const h = this.#o.strategy.onStop;
    if (h) this.#call(h, 'onStop');
    this.#o.portfolio.finish();
    for (const s of this.#series.values()) s.finish();
  }

  #start(at: number): void {
    this.#started = true;
    this.#ctx.now = at;
    for (const t of this.#timers) t.next = Math.floor(at / t.everyMs) * t.everyMs + t.everyMs;
    const h = this.#o.strategy.onStart;
    if (h) this.#call(h, 'onStart');
  }

  #onEvent(ev: MarketEvent): void {
    const at = ev.at;
    const o = this.#o;
    if (!this.#started) this.#start(at);
    // The timers due up to this event first, each at its own time (the clock moves to it), then the event.
    if (this.#timers.length > 0) this.#fireTimers(at);
    o.clock.advance(at);
    o.portfolio.mark(ev);
    const n = ++this.stats.events;
    if ((n & 0xffff) === 0 && o.onProgress) o.onProgress(at, n);
    const ctx = this.#ctx;
    ctx.now = at;
    switch (ev.kind) {
      case 'candle': {
        if (!ev.complete) return;
        this.stats.candles++;
        // Consecutive candles are mostly of one series: the last lookup is kept.
        let list: SeriesState[] | undefined;
        if (ev.instrument === this.#lastInstrument && ev.granularity === this.#lastGranularity)
          list = this.#lastList;
        else {
          list = this.#byCandle.get(ev.instrument)?.get(ev.granularity);
          this.#lastInstrument = ev.instrument;
          this.#lastGranularity = ev.granularity;
          this.#lastList = list;
        }
        if (list === undefined) return;
        const h = o.strategy.onCandle;
        for (let i = 0; i < list.length; i++) {
          const s = list[i]!;
          s.push(ev);
          if (h === undefined) continue;
          ctx.candle = ev;
          ctx.current = s;
          ctx.series = s;
          this.#call(h, 'onCandle');
        }
        return;
      }
      case 'tick': {
        const h = o.strategy.onTick;
        if (h && this.#ticks.has(ev.instrument)) {
          ctx.tick = ev;
          this.#call(h, 'onTick');
        }
        return;
      }
      case 'signal': {
        const h = o.strategy.onSignal;
        if (h && this.#signals.has(ev.instrument)) {
          ctx.signal = ev;
          this.#call(h, 'onSignal');
        }
        return;
      }
      case 'calendar': {
        const h = o.strategy.onCalendar;
        if (h && this.#calendar.has(ev.currency)) {
          ctx.calendar = ev;
          this.#call(h, 'onCalendar');
        }
        return;
      }
      case 'spread': {
        const h = o.strategy.onSpread;
        if (h && this.#spreads.has(ev.instrument)) {
          ctx.spread = ev;
          this.#call(h, 'onSpread');
        }
        return;
      }
      case 'cot': {
        const h = o.strategy.onCot;
        if (h && this.#cot.has(ev.instrument)) {
          ctx.cot = ev;
          this.#call(h, 'onCot');
        }
        return;
      }
      case 'timer':
        this.#timer(ev);
        return;
    }
  }

  /**
   * The timers due at or before `ev`'s first price (a candle's open, another event's time), fired
   * before `before` (the simulated broker) sees `ev`, each announced to it first as a timer event
   * so its clock stands at the timer's time. What a timer decides in a data gap (a weekend, a
   * holiday, a quiet hour) is then stamped at its own time, halted then if the market is closed,
   * and otherwise fills at the first price after it: the next candle's open, not its close. Timers
   * inside a candle's span (after its open) still fire after the broker saw the candle: its prices
   * inside are not placed in time, so their orders wait for the next one.
   */
  #timersBefore(ev: MarketEvent, before: (ev: MarketEvent) => void): void {
    // Timers start counting at the first event (#start, after the broker has seen it): none is due before it.
    if (!this.#started) return;
    this.#fireTimers(ev.kind === 'candle' ? ev.time : ev.at, before);
  }

  #fireTimers(at: number, before?: (ev: MarketEvent) => void): void {
    for (;;) {
      let due: TimerSlot | undefined;
      for (const t of this.#timers) if (t.next <= at && (due === undefined || t.next < due.next)) due = t;
      if (due === undefined) return;
      const ev: TimerEvent = { kind: 'timer', at: due.next, name: due.name };
      due.next += due.everyMs;
      before?.(ev);
      this.#o.clock.advance(ev.at);
      this.#ctx.now = ev.at;
      this.#timer(ev);
    }
  }

  #timer(ev: TimerEvent): void {
    const h = this.#o.strategy.onTimer;
    if (!h) return;
    this.#ctx.timer = ev;
    this.#call(h, 'onTimer');
  }

  /** `#onTransaction` of a note: its object is asked for only when someone reads it. */
  #onNote(n: TransactionNote): void {
    this.stats.transactions++;
    if (!this.#o.portfolio.applyNote(n)) return; // already seen (replay or backfill)
    if (this.#o.strategy.onTransaction === undefined) return; // nobody to deliver it to
    // The object, not the note: the note is the execution's again once this call returns.
    this.#queue.push(n.transaction());
    if (!this.#busy) this.#drain();
  }

  #onTransaction(tx: Transaction): void {
    this.stats.transactions++;
    if (!this.#o.portfolio.apply(tx)) return; // already seen (replay or backfill)
    if (this.#o.strategy.onTransaction === undefined) return; // nobody to deliver it to
    this.#queue.push(tx);
    if (!this.#busy) this.#drain();
  }

  #drain(): void {
    const h = this.#o.strategy.onTransaction;
    while (this.#queue.length > 0) {
      const tx = this.#queue.shift()!;
      if (!h) continue;
      const ctx = this.#ctx;
      const keepNow = ctx.now;
      this.#busy = true;
      try {
        ctx.transaction = tx;
        let step: Step<S>;
        try {
          step = h(ctx, this.#state);
        } catch (e) {
          throw StrategyError.threw(this.#o.name, 'onTransaction', ctx.now, e);
        }
        this.#apply(step, 'onTransaction');
      } finally {
        ctx.reset();
        ctx.now = keepNow;
        this.#busy = false;
      }
    }
  }

  /**
   * Runs one handler, applies its step, then delivers the transactions its intents produced. What
   * the handler throws becomes a StrategyError; what submitting its intents throws (a run folder
   * that cannot be written, say) is not the strategy's and passes as it is.
   */
  #call(handler: (ctx: StrategyContext<P>, state: S) => Step<S>, name: string): void {
    this.#busy = true;
    try {
      this.stats.handlerCalls++;
      let step: Step<S>;
      try {
        step = handler(this.#ctx, this.#state);
      } catch (e) {
        throw StrategyError.threw(this.#o.name, name, this.#ctx.now, e);
      }
      this.#apply(step, name);
    } finally {
      const now = this.#ctx.now;
      this.#ctx.reset();
      this.#ctx.now = now;
      this.#busy = false;
    }
    if (this.#queue.length > 0) this.#drain();
  }

  /**
   * Takes a handler's step: the new state, then its intents, submitted in order. A step or an
   * intent of another form is the strategy's error (StrategyError), found before anything of the
   * step is taken.
   */
  #apply(step: Step<S>, handler: string): void {
    if (step === undefined) return;
    if (isThenable(step)) throw this.#badStep(handler, 'a Promise', ASYNC_FIX);
    let intents: readonly OrderIntent[] | undefined;
    if (Array.isArray(step)) intents = step as readonly OrderIntent[];
    else if (typeof step === 'object' && step !== null) {
      const s = step as { readonly state?: S; readonly intents?: readonly OrderIntent[] };
      if (s.intents !== undefined && !Array.isArray(s.intents))
        throw this.#badStep(handler, `intents ${show(s.intents)}`, 'intents must be a list');
      intents = s.intents;
      if (intents !== undefined) this.#checkIntents(intents, handler);
      if ('state' in s) this.#state = s.state as S;
    } else
      throw this.#badStep(
        handler,
        show(step),
        'a handler returns nothing, a list of intents, or { state, intents }',
      );
    if (intents === undefined || intents.length === 0) return;
    if (Array.isArray(step)) this.#checkIntents(intents, handler);
    const o = this.#o;
    for (const intent of intents) {
      this.stats.intents++;
      o.onIntent?.(intent);
      o.execution.submit(intent, this.#ctx.now);
    }
  }

  #checkIntents(intents: readonly unknown[], handler: string): void {
    for (let i = 0; i < intents.length; i++) {
      const intent = intents[i];
      if (!isIntent(intent))
        throw this.#badStep(
          handler,
          `intent ${show(intent)}`,
          'make intents with the ctx helpers (ctx.market, ctx.limit, ctx.cancel, ctx.closeTrade…)',
        );
      if (isReservedClientID(intent.id))
        throw this.#badStep(
          handler,
          `an intent with client ID '${intent.id}'`,
          `client IDs starting '${RUNNER_ID_PREFIX}' are reserved for the runner's own closes and cancels (kill switch, flatten): choose another clientId`,
        );
    }
  }

  #badStep(handler: string, what: string, fix: string): StrategyError {
    return StrategyError.returned(this.#o.name, handler, this.#ctx.now, what, fix);
  }
}

const ASYNC_FIX =
  'handlers are synchronous (an async handler would act after the price it saw has gone): remove `async` and `await`, and return the step itself';

/**
 * Whether a handler returned a Promise (an `async` handler). Its outcome is dropped and its
 * rejection silenced: the run stops on the StrategyError instead.
 */
function isThenable(x: unknown): boolean {
  if (typeof x !== 'object' || x === null || typeof (x as { then?: unknown }).then !== 'function')
    return false;
  (x as Promise<unknown>).then(undefined, () => undefined);
  return true;
}

/** A value as a strategy's error message shows it (at most 200 characters). */
function show(x: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(x) ?? String(x);
  } catch {
    text = String(x);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
